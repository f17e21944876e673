//===- Compress.h - loops of the vector unit's compress ---------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). Loops that keep some lanes of a
// vector, in order, with the vector unit's compress (Highway, dispatched to
// the CPU's widest unit): the split of a block around a bracket (the inner
// loop of a selection, Select.cpp, and of the two-thread sample sort),
// np.compress's copy of the elements a mask selects (Indexing.cpp), and the
// sorts' copy of a row with its NaNs set apart (SortInternal.h).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_COMPRESS_H
#define CPNRT_LIB_COMPRESS_H

#include <cstdint>
#include <type_traits>

namespace cpnrt::simd {
/// Elements a split buffer holds beyond its block: a compress-store may
/// write a whole vector (up to 64 bytes) past the last element it keeps.
constexpr int64_t kSplitSlack = 64;

/// Whether splitByBracket and compressByMask take T (32- and 64-bit keys).
template <typename T>
constexpr bool kHasVectorCompress =
    (std::is_integral_v<T> || std::is_floating_point_v<T>) &&
    (sizeof(T) == 4 || sizeof(T) == 8);

/// v[0, m) into out[0] (below lo), out[1] (in [lo, hi]), out[2] (above hi)
/// and out[3] (NaN), each in v's order, count[r] of them in out[r]. Every
/// out[r] holds m + kSplitSlack elements.
#define CPN_BRACKET_SPLIT(T)                                                   \
  void splitByBracket(const T *v, int64_t m, T lo, T hi, T *const out[4],      \
                      int64_t count[4]);
CPN_BRACKET_SPLIT(float)
CPN_BRACKET_SPLIT(double)
CPN_BRACKET_SPLIT(int32_t)
CPN_BRACKET_SPLIT(int64_t)
CPN_BRACKET_SPLIT(uint32_t)
CPN_BRACKET_SPLIT(uint64_t)
#undef CPN_BRACKET_SPLIT

/// The numbers of src[0, n) (not NaN, and not +inf when `dropInf`), in
/// order, to dst[0, m); returns m. dst[m, n) is left with any values (the
/// caller writes the rest there). src and dst do not overlap.
#define CPN_KEEP_NUMBERS(T)                                                    \
  int64_t keepNumbers(const T *src, int64_t n, T *dst, bool dropInf);
CPN_KEEP_NUMBERS(float)
CPN_KEEP_NUMBERS(double)
#undef CPN_KEEP_NUMBERS

/// x[i] for each i in [0, n) with mask[i] != 0, in order, to out[k, limit)
/// (k advanced); stops where out is full. Writes nothing past limit.
#define CPN_MASK_COMPRESS(T)                                                   \
  void compressByMask(const T *x, const uint8_t *mask, int64_t n, T *out,      \
                      int64_t &k, int64_t limit);
CPN_MASK_COMPRESS(float)
CPN_MASK_COMPRESS(double)
CPN_MASK_COMPRESS(int32_t)
CPN_MASK_COMPRESS(int64_t)
CPN_MASK_COMPRESS(uint32_t)
CPN_MASK_COMPRESS(uint64_t)
#undef CPN_MASK_COMPRESS
} // namespace cpnrt::simd

#endif // CPNRT_LIB_COMPRESS_H
