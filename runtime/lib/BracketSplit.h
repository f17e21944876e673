//===- BracketSplit.h - a block split around a bracket, vectorized -*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). The inner loop of a selection
// (Select.cpp): one block of keys split, in order, into those below a
// bracket [lo, hi], inside it, above it and NaN, with the vector unit's
// compress-store (Highway, dispatched to the CPU's widest unit).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_BRACKETSPLIT_H
#define CPNRT_LIB_BRACKETSPLIT_H

#include <cstdint>
#include <type_traits>

namespace cpnrt::simd {
/// Elements a split buffer holds beyond its block: a compress-store may
/// write a whole vector (up to 64 bytes) past the last element it keeps.
constexpr int64_t kSplitSlack = 64;

/// Whether splitByBracket has a vector path for T (32- and 64-bit keys).
template <typename T>
constexpr bool kHasBracketSplit =
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
} // namespace cpnrt::simd

#endif // CPNRT_LIB_BRACKETSPLIT_H
