//===- Symmetry.cpp - is a matrix its own transpose -----------------------===//
//
// Part of cpnumeric's runtime.
//
// Comparing A with its transpose reads one side along rows and the other
// along columns. Element by element that is latency-bound (~35 ms for a
// 4000 x 4000 float64 matrix on the 2-core VMs, nine matrix-vector
// products); here the matrix is cut into panels of columns, each mirror row
// of a panel is one contiguous run, and 4 x 4 blocks are transposed in
// registers (~9 ms on two cores).
//
//===----------------------------------------------------------------------===//

#include "Symmetry.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <immintrin.h>
#include <thread>
#include <type_traits>
#include <vector>

namespace cpnrt {
namespace {
/// Columns per panel: a panel's rows stay in L1/L2 while its mirror rows
/// stream past them.
constexpr int64_t kPanel = 256;

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;

template <typename T> Bits<T> bitsAt(const T *p) {
  Bits<T> b;
  std::memcpy(&b, p, sizeof b);
  return b;
}

/// Whether a[j][i] and a[i][j] differ for some row j in [j0, j1) and column
/// i in [i0, min(i1, j)), element by element. A panel of columns [c0, c1) is
/// rows [c0 + 1, n); the block versions use it near the diagonal and past
/// the last whole block.
template <typename T>
bool rowsDiffer(const T *a, int64_t ld, int64_t j0, int64_t j1, int64_t i0,
                int64_t i1) {
  for (int64_t j = j0; j < j1; ++j) {
    Bits<T> diff = 0;
    for (int64_t i = i0, e = std::min(i1, j); i < e; ++i)
      diff |= bitsAt(a + j * ld + i) ^ bitsAt(a + i * ld + j);
    if (diff)
      return true;
  }
  return false;
}

/// The same with 4 x 4 blocks of doubles transposed in AVX registers: rows
/// i..i+3 at columns j..j+3 against rows j..j+3 at columns i..i+3.
__attribute__((target("avx"))) bool panelDiffersAvx(const double *a, int64_t n,
                                                    int64_t ld, int64_t c0,
                                                    int64_t c1) {
  __m256d acc = _mm256_setzero_pd();
  int64_t j = c0;
  for (; j + 4 <= n; j += 4) {
    int64_t i = c0;
    for (int64_t e = std::min(c1, j); i + 4 <= e; i += 4) {
      const double *r = a + i * ld + j, *m = a + j * ld + i;
      __m256d r0 = _mm256_loadu_pd(r), r1 = _mm256_loadu_pd(r + ld);
      __m256d r2 = _mm256_loadu_pd(r + 2 * ld),
              r3 = _mm256_loadu_pd(r + 3 * ld);
      __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      acc =
          _mm256_or_pd(acc, _mm256_xor_pd(_mm256_permute2f128_pd(t0, t2, 0x20),
                                          _mm256_loadu_pd(m)));
      acc =
          _mm256_or_pd(acc, _mm256_xor_pd(_mm256_permute2f128_pd(t1, t3, 0x20),
                                          _mm256_loadu_pd(m + ld)));
      acc =
          _mm256_or_pd(acc, _mm256_xor_pd(_mm256_permute2f128_pd(t0, t2, 0x31),
                                          _mm256_loadu_pd(m + 2 * ld)));
      acc =
          _mm256_or_pd(acc, _mm256_xor_pd(_mm256_permute2f128_pd(t1, t3, 0x31),
                                          _mm256_loadu_pd(m + 3 * ld)));
    }
    // The rest of the four rows (near the diagonal, or past a partial block).
    if (rowsDiffer(a, ld, j, j + 4, i, c1))
      return true;
    __m256i bits = _mm256_castpd_si256(acc);
    if (!_mm256_testz_si256(bits, bits))
      return true;
  }
  return rowsDiffer(a, ld, j, n, c0, c1);
}

/// The same for floats with SSE (4 x 4 blocks, part of x86-64's baseline).
bool panelDiffersSse(const float *a, int64_t n, int64_t ld, int64_t c0,
                     int64_t c1) {
  __m128 acc = _mm_setzero_ps();
  int64_t j = c0;
  for (; j + 4 <= n; j += 4) {
    int64_t i = c0;
    for (int64_t e = std::min(c1, j); i + 4 <= e; i += 4) {
      const float *r = a + i * ld + j, *m = a + j * ld + i;
      __m128 r0 = _mm_loadu_ps(r), r1 = _mm_loadu_ps(r + ld);
      __m128 r2 = _mm_loadu_ps(r + 2 * ld), r3 = _mm_loadu_ps(r + 3 * ld);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      acc = _mm_or_ps(acc, _mm_xor_ps(r0, _mm_loadu_ps(m)));
      acc = _mm_or_ps(acc, _mm_xor_ps(r1, _mm_loadu_ps(m + ld)));
      acc = _mm_or_ps(acc, _mm_xor_ps(r2, _mm_loadu_ps(m + 2 * ld)));
      acc = _mm_or_ps(acc, _mm_xor_ps(r3, _mm_loadu_ps(m + 3 * ld)));
    }
    if (rowsDiffer(a, ld, j, j + 4, i, c1))
      return true;
    // Bitwise: compare as integers (a NaN pattern must not compare unequal).
    __m128i bits = _mm_castps_si128(acc);
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(bits, _mm_setzero_si128())) != 0xffff)
      return true;
  }
  return rowsDiffer(a, ld, j, n, c0, c1);
}

bool panelDiffers(const double *a, int64_t n, int64_t ld, int64_t c0,
                  int64_t c1) {
  static const bool avx = __builtin_cpu_supports("avx");
  return avx ? panelDiffersAvx(a, n, ld, c0, c1)
             : rowsDiffer(a, ld, c0 + 1, n, c0, c1);
}

bool panelDiffers(const float *a, int64_t n, int64_t ld, int64_t c0,
                  int64_t c1) {
  return panelDiffersSse(a, n, ld, c0, c1);
}

/// Panels are handed out one at a time to the machine's cores (the first ones
/// are the longest); every worker stops once one finds a difference.
template <typename T> bool symmetric(const T *a, int64_t n, int64_t ld) {
  int64_t panels = (n + kPanel - 1) / kPanel;
  std::atomic<bool> differs{false};
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t p;
         !differs.load(std::memory_order_relaxed) && (p = next++) < panels;)
      if (panelDiffers(a, n, ld, p * kPanel, std::min(n, (p + 1) * kPanel)))
        differs = true;
  };
  int64_t threads = std::min<int64_t>(
      panels, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  return !differs;
}
} // namespace

bool isSymmetric(const double *a, int64_t n, int64_t ld) {
  return symmetric(a, n, ld);
}

bool isSymmetric(const float *a, int64_t n, int64_t ld) {
  return symmetric(a, n, ld);
}
} // namespace cpnrt
