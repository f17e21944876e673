//===- Compress.cpp - loops of the vector unit's compress ----------------===//
//
// Part of cpnumeric's runtime (libcpnrt). Compiled once per vector unit by
// Highway's foreach_target (this file includes itself); the CPU's best is
// chosen at the first call.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "Compress.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <hwy/highway.h>

#include "Compress.h"

#include <cstddef>
#include <limits>
#include <type_traits>

// Compiled once, before the per-target passes: the permutations of an AVX2
// compress (below).
#ifndef CPNRT_COMPRESS_TABLES
#define CPNRT_COMPRESS_TABLES
#include <array>
namespace cpnrt::simd::detail {
/// For a mask of 8 lanes: the indices of its set lanes in order, 4 bits
/// each (lane j's at bits 4 j; the unset lanes' places hold 0).
constexpr std::array<uint32_t, 256> compressNibbles32() {
  std::array<uint32_t, 256> t{};
  for (uint32_t m = 0; m < 256; ++m) {
    uint32_t packed = 0, k = 0;
    for (uint32_t lane = 0; lane < 8; ++lane)
      if (m >> lane & 1)
        packed |= lane << (4 * k++);
    t[m] = packed;
  }
  return t;
}
/// For a mask of 4 lanes of 64 bits: the 32-bit halves of its set lanes in
/// order, as the 8 indices of a 32-bit permutation.
struct alignas(32) Pairs {
  uint32_t idx[8];
};
constexpr std::array<Pairs, 16> compressPairs64() {
  std::array<Pairs, 16> t{};
  for (uint32_t m = 0; m < 16; ++m) {
    uint32_t k = 0;
    for (uint32_t lane = 0; lane < 4; ++lane)
      if (m >> lane & 1) {
        t[m].idx[2 * k] = 2 * lane;
        t[m].idx[2 * k + 1] = 2 * lane + 1;
        ++k;
      }
  }
  return t;
}
// Namespace-scope constants: Highway 1.0's own AVX2 CompressStore keeps
// these tables as local constexpr arrays, which GCC copies to the stack on
// every call (a 512-byte or 1 KiB `rep movs` for each vector compressed).
inline constexpr std::array<uint32_t, 256> kNibbles32 = compressNibbles32();
inline constexpr std::array<Pairs, 16> kPairs64 = compressPairs64();
} // namespace cpnrt::simd::detail
#endif // CPNRT_COMPRESS_TABLES

HWY_BEFORE_NAMESPACE();
namespace cpnrt {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Stores the lanes of x in m, in order, at p; a whole vector is written.
/// With AVX-512 the compress instruction into a register (Highway 1.0's
/// Compress of 64-bit lanes copies a 2 KiB table to the stack each call,
/// and a compress straight to memory is several times slower). With AVX2 a
/// permutation from a table of namespace scope: Highway 1.0's CompressStore
/// copied its table to the stack on each call (an AMD EPYC, Zen 3: the
/// two-thread sort's split of 10^6 float64 took 9 ms, its sorts 7).
template <class D, class V, class M>
HWY_INLINE size_t compressTo(D d, V x, M m, hn::TFromD<D> *p) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  using T = hn::TFromD<D>;
  if constexpr (std::is_same_v<T, double>)
    hn::StoreU(V{_mm512_maskz_compress_pd(m.raw, x.raw)}, d, p);
  else if constexpr (std::is_same_v<T, float>)
    hn::StoreU(V{_mm512_maskz_compress_ps(m.raw, x.raw)}, d, p);
  else if constexpr (sizeof(T) == 8)
    hn::StoreU(V{_mm512_maskz_compress_epi64(m.raw, x.raw)}, d, p);
  else
    hn::StoreU(V{_mm512_maskz_compress_epi32(m.raw, x.raw)}, d, p);
  return hn::CountTrue(d, m);
#elif HWY_TARGET == HWY_AVX2
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const __m256i bits = hn::BitCast(du, x).raw;
  __m256i idx;
  unsigned keep;
  if constexpr (sizeof(T) == 4) {
    const hn::Repartition<float, D> df;
    keep = unsigned(
        _mm256_movemask_ps(hn::BitCast(df, hn::VecFromMask(d, m)).raw));
    idx = _mm256_srlv_epi32(
        _mm256_set1_epi32(int(simd::detail::kNibbles32[keep])),
        _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
  } else {
    const hn::Repartition<double, D> df;
    keep = unsigned(
        _mm256_movemask_pd(hn::BitCast(df, hn::VecFromMask(d, m)).raw));
    idx = _mm256_load_si256(
        reinterpret_cast<const __m256i *>(simd::detail::kPairs64[keep].idx));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(p),
                      _mm256_permutevar8x32_epi32(bits, idx));
  return size_t(__builtin_popcount(keep));
#else
  return hn::CompressStore(x, m, d, p);
#endif
}

/// One vector x of keys (lanes outside `valid` ignored) appended to the
/// four parts.
template <class D, class V, class M>
HWY_INLINE void splitVector(D d, V x, M valid, V vlo, V vhi,
                            hn::TFromD<D> *const o[4],
                            size_t c[4]) {
  using T = hn::TFromD<D>;
  const M below = hn::And(hn::Lt(x, vlo), valid);
  const M above = hn::And(hn::Gt(x, vhi), valid);
  // NaN compares false with everything: neither below nor above, and not
  // equal to itself (Ne is an ordered compare: false for NaN too).
  const M nan = hn::AndNot(hn::Eq(x, x), valid);
  const M inside = hn::AndNot(hn::Or(hn::Or(below, above), nan), valid);
  c[0] += compressTo(d, x, below, o[0] + c[0]);
  c[1] += compressTo(d, x, inside, o[1] + c[1]);
  c[2] += compressTo(d, x, above, o[2] + c[2]);
  if constexpr (std::is_floating_point_v<T>) {
    c[3] += compressTo(d, x, nan, o[3] + c[3]);
  }
}

template <typename T>
void splitImpl(const T *HWY_RESTRICT v, int64_t m, T lo, T hi,
               T *const out[4], int64_t count[4]) {
  const hn::ScalableTag<T> d;
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  const size_t N = hn::Lanes(d);
  size_t c[4] = {0, 0, 0, 0};
  const auto all = hn::FirstN(d, N);
  size_t i = 0, n = size_t(m);
  for (; i + N <= n; i += N)
    splitVector(d, hn::LoadU(d, v + i), all, vlo, vhi, out, c);
  if (i < n) {
    const auto valid = hn::FirstN(d, n - i);
    splitVector(d, hn::MaskedLoad(valid, d, v + i), valid, vlo, vhi, out, c);
  }
  for (int r = 0; r < 4; ++r)
    count[r] = int64_t(c[r]);
}

template <typename T>
void maskImpl(const T *HWY_RESTRICT x, const uint8_t *HWY_RESTRICT mask,
              int64_t n, T *HWY_RESTRICT out, int64_t &k, int64_t limit) {
  const hn::ScalableTag<T> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  // One mask byte per lane, widened to the lane's width.
  const hn::Rebind<uint8_t, decltype(d)> d8;
  const hn::Rebind<uint32_t, decltype(d)> d32;
  const size_t N = hn::Lanes(d);
  int64_t i = 0, at = k;
  // A whole vector is stored each step: only while it fits before limit.
  for (; i + int64_t(N) <= n && at + int64_t(N) <= limit; i += N) {
    const auto b = hn::LoadU(d8, mask + i);
    hn::Vec<decltype(du)> wide;
    if constexpr (sizeof(T) == 8) // no promotion from 8 to 64 bits at once
      wide = hn::PromoteTo(du, hn::PromoteTo(d32, b));
    else
      wide = hn::PromoteTo(du, b);
    const auto keep = hn::RebindMask(d, hn::Ne(wide, hn::Zero(du)));
    at += int64_t(compressTo(d, hn::LoadU(d, x + i), keep, out + at));
  }
  for (; i < n && at < limit; ++i)
    if (mask[i])
      out[at++] = x[i];
  k = at;
}

template <typename T>
int64_t keepImpl(const T *HWY_RESTRICT src, int64_t n, T *HWY_RESTRICT dst,
                 bool dropInf) {
  const hn::ScalableTag<T> d;
  const size_t N = hn::Lanes(d);
  const T inf = std::numeric_limits<T>::infinity();
  // +inf itself when kept: no lane differs from NaN's compare.
  const auto vinf =
      hn::Set(d, dropInf ? inf : std::numeric_limits<T>::quiet_NaN());
  int64_t i = 0, m = 0;
  // Each compress writes a whole vector at dst + m, and m <= i: within
  // dst[0, i + N) of a full vector's source.
  for (; i + int64_t(N) <= n; i += N) {
    const auto x = hn::LoadU(d, src + i);
    const auto keep = hn::AndNot(hn::Eq(x, vinf), hn::Eq(x, x));
    m += int64_t(compressTo(d, x, keep, dst + m));
  }
  for (; i < n; ++i) {
    T v = src[i];
    if (v == v && !(dropInf && v == inf))
      dst[m++] = v;
  }
  return m;
}

#define CPN_KEEP_ONE(T, NAME)                                                  \
  int64_t NAME(const T *src, int64_t n, T *dst, bool dropInf) {                \
    return keepImpl<T>(src, n, dst, dropInf);                                  \
  }
CPN_KEEP_ONE(float, KeepF32)
CPN_KEEP_ONE(double, KeepF64)
#undef CPN_KEEP_ONE

#define CPN_SPLIT_ONE(T, NAME)                                                 \
  void NAME(const T *v, int64_t m, T lo, T hi, T *const out[4],                \
            int64_t count[4]) {                                                \
    splitImpl<T>(v, m, lo, hi, out, count);                                    \
  }
CPN_SPLIT_ONE(float, SplitF32)
CPN_SPLIT_ONE(double, SplitF64)
CPN_SPLIT_ONE(int32_t, SplitI32)
CPN_SPLIT_ONE(int64_t, SplitI64)
CPN_SPLIT_ONE(uint32_t, SplitU32)
CPN_SPLIT_ONE(uint64_t, SplitU64)
#undef CPN_SPLIT_ONE

#define CPN_MASK_ONE(T, NAME)                                                  \
  void NAME(const T *x, const uint8_t *mask, int64_t n, T *out, int64_t &k,    \
            int64_t limit) {                                                   \
    maskImpl<T>(x, mask, n, out, k, limit);                                    \
  }
CPN_MASK_ONE(float, MaskF32)
CPN_MASK_ONE(double, MaskF64)
CPN_MASK_ONE(int32_t, MaskI32)
CPN_MASK_ONE(int64_t, MaskI64)
CPN_MASK_ONE(uint32_t, MaskU32)
CPN_MASK_ONE(uint64_t, MaskU64)
#undef CPN_MASK_ONE

} // namespace HWY_NAMESPACE
} // namespace cpnrt
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace cpnrt {
HWY_EXPORT(SplitF32);
HWY_EXPORT(SplitF64);
HWY_EXPORT(SplitI32);
HWY_EXPORT(SplitI64);
HWY_EXPORT(SplitU32);
HWY_EXPORT(SplitU64);

#define CPN_SPLIT_DISPATCH(T, NAME)                                            \
  void simd::splitByBracket(const T *v, int64_t m, T lo, T hi,                 \
                            T *const out[4], int64_t count[4]) {               \
    HWY_DYNAMIC_DISPATCH(NAME)(v, m, lo, hi, out, count);                      \
  }
CPN_SPLIT_DISPATCH(float, SplitF32)
CPN_SPLIT_DISPATCH(double, SplitF64)
CPN_SPLIT_DISPATCH(int32_t, SplitI32)
CPN_SPLIT_DISPATCH(int64_t, SplitI64)
CPN_SPLIT_DISPATCH(uint32_t, SplitU32)
CPN_SPLIT_DISPATCH(uint64_t, SplitU64)
#undef CPN_SPLIT_DISPATCH

HWY_EXPORT(KeepF32);
HWY_EXPORT(KeepF64);

#define CPN_KEEP_DISPATCH(T, NAME)                                             \
  int64_t simd::keepNumbers(const T *src, int64_t n, T *dst, bool dropInf) {   \
    return HWY_DYNAMIC_DISPATCH(NAME)(src, n, dst, dropInf);                   \
  }
CPN_KEEP_DISPATCH(float, KeepF32)
CPN_KEEP_DISPATCH(double, KeepF64)
#undef CPN_KEEP_DISPATCH

HWY_EXPORT(MaskF32);
HWY_EXPORT(MaskF64);
HWY_EXPORT(MaskI32);
HWY_EXPORT(MaskI64);
HWY_EXPORT(MaskU32);
HWY_EXPORT(MaskU64);

#define CPN_MASK_DISPATCH(T, NAME)                                             \
  void simd::compressByMask(const T *x, const uint8_t *mask, int64_t n,        \
                            T *out, int64_t &k, int64_t limit) {               \
    HWY_DYNAMIC_DISPATCH(NAME)(x, mask, n, out, k, limit);                     \
  }
CPN_MASK_DISPATCH(float, MaskF32)
CPN_MASK_DISPATCH(double, MaskF64)
CPN_MASK_DISPATCH(int32_t, MaskI32)
CPN_MASK_DISPATCH(int64_t, MaskI64)
CPN_MASK_DISPATCH(uint32_t, MaskU32)
CPN_MASK_DISPATCH(uint64_t, MaskU64)
#undef CPN_MASK_DISPATCH
} // namespace cpnrt
#endif // HWY_ONCE
