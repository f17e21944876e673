//===- SortInternal.h - what the sorts and selections share -----*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). Shared by Sort.cpp (sort, argsort)
// and Select.cpp (partition): the threading thresholds, the scatter of keys
// to their regions, the copy that moves NaNs last, the split of rows between
// threads, and one row's sort.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_SORTINTERNAL_H
#define CPNRT_LIB_SORTINTERNAL_H

#include "Compress.h"
#include "LibCall.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace cpnrt::sortdetail {
/// Below this many elements per thread a sort stays on one thread (starting
/// a thread costs about as much as sorting this many elements).
constexpr int64_t kMinPerThread = int64_t(1) << 15;

/// Elements filled at a time by a partition pass (on the thread's stack).
constexpr int64_t kBlock = 1024;

/// Copies keys to the write cursors of their regions (`at`, advanced), for
/// one thread. With at most four regions each key is written to all four of
/// the thread's own buffers and only its region's count moves on, then the
/// buffers are copied out: without branches (random keys mispredicted half
/// of them) and without a cursor in memory (each write waited on the last
/// one's cursor). 10^6 int64 on two threads: 3.2 ms -> 1.6 ms.
template <typename K> class RegionScatter {
public:
  explicit RegionScatter(int64_t regions)
      : buf_(regions <= 4 ? new K[4 * kBlock] : nullptr) {}
  /// b[0, m) (m <= kBlock), key i to region rs[i].
  void operator()(const K *b, const uint16_t *rs, int64_t m, int64_t *at,
                  K *data) {
    if (!buf_) {
      for (int64_t i = 0; i < m; ++i)
        data[at[rs[i]]++] = b[i];
      return;
    }
    K *p0 = buf_.get(), *p1 = p0 + kBlock, *p2 = p1 + kBlock, *p3 = p2 + kBlock;
    int64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (int64_t i = 0; i < m; ++i) {
      int64_t r = rs[i];
      p0[c0] = p1[c1] = p2[c2] = p3[c3] = b[i];
      c0 += int64_t(r == 0);
      c1 += int64_t(r == 1);
      c2 += int64_t(r == 2);
      c3 += int64_t(r == 3);
    }
    const K *from[4] = {p0, p1, p2, p3};
    const int64_t got[4] = {c0, c1, c2, c3};
    for (int r = 0; r < 4; ++r)
      if (got[r]) {
        std::copy(from[r], from[r] + got[r], data + at[r]);
        at[r] += got[r];
      }
  }

private:
  std::unique_ptr<K[]> buf_;
};

/// Copies keys to the write cursors of the four regions around a bracket
/// [lo, hi] (below, inside, above, NaN: `at`, advanced), for one thread, a
/// block at a time, with the vector unit's compress (Compress.h) into
/// buffers of its own. For keys with kHasVectorCompress.
template <typename K> class BracketScatter {
public:
  BracketScatter() : buf_(new K[4 * kCap]) {}
  /// b[0, m) (m <= kBlock).
  void operator()(const K *b, int64_t m, K lo, K hi, int64_t *at, K *data) {
    K *const parts[4] = {buf_.get(), buf_.get() + kCap, buf_.get() + 2 * kCap,
                         buf_.get() + 3 * kCap};
    int64_t got[4];
    simd::splitByBracket(b, m, lo, hi, parts, got);
    for (int r = 0; r < 4; ++r) {
      std::copy(parts[r], parts[r] + got[r], data + at[r]);
      at[r] += got[r];
    }
  }

private:
  static constexpr int64_t kCap = kBlock + simd::kSplitSlack;
  std::unique_ptr<K[]> buf_;
};

/// From t threads' counts per region (counts[c * regions + r]): where each
/// region starts (start, regions + 1 entries) and where thread c writes its
/// part of region r (offset[c * regions + r]), threads in order.
inline void regionOffsets(const std::vector<int64_t> &counts, int64_t t,
                          int64_t regions, std::vector<int64_t> &start,
                          std::vector<int64_t> &offset) {
  start.assign(regions + 1, 0);
  offset.assign(t * regions, 0);
  for (int64_t r = 0; r < regions; ++r) {
    int64_t at = start[r];
    for (int64_t c = 0; c < t; ++c) {
      offset[c * regions + r] = at;
      at += counts[c * regions + r];
    }
    start[r + 1] = at;
  }
}

/// Copies src[lo, hi) (strided) to dst[0, hi - lo) as W: the numbers first,
/// in order, and the NaNs from the end (+inf too when `dropInf`, for
/// vqsort); returns how many numbers. A contiguous row of floats is copied
/// by the vector unit's compress (a loop of data-dependent stores took
/// ~1.5 ns an element, a fifth of a two-thread sort of 10^6 float64), then
/// what it left out appended in a second pass when there is any.
template <typename W, typename T>
int64_t copyNumbersFirst(const T *src, int64_t stride, int64_t lo, int64_t hi,
                         W *dst, bool dropInf) {
  if constexpr ((std::is_same_v<T, float> ||
                 std::is_same_v<T, double>)&&std::is_same_v<W, T>) {
    if (stride == 1) {
      int64_t n = hi - lo, m = simd::keepNumbers(src + lo, n, dst, dropInf);
      const T inf = std::numeric_limits<T>::infinity();
      for (int64_t i = lo, k = m; k < n; ++i)
        if (std::isnan(src[i]) || (dropInf && src[i] == inf))
          dst[k++] = src[i];
      return m;
    }
  }
  int64_t m = 0, last = hi - lo;
  for (int64_t i = lo; i < hi; ++i) {
    T v = src[i * stride];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v) ||
          (dropInf && v == std::numeric_limits<T>::infinity())) {
        dst[--last] = W(v);
        continue;
      }
    }
    dst[m++] = W(v);
  }
  return m;
}

/// copyNumbersFirst with the NaNs alone set apart.
template <typename W, typename T>
int64_t copyNaNLast(const T *src, int64_t stride, int64_t lo, int64_t hi,
                    W *dst) {
  return copyNumbersFirst(src, stride, lo, hi, dst, false);
}

/// fn(p) for each of `rows` rows of n elements: rows of a big array are
/// shared out between threads, and a long row gets the threads itself
/// (`inner` says how many a row may use).
template <typename F> void forRows(int64_t rows, int64_t n, F fn) {
  int64_t threads = lib::maxThreads();
  if (rows == 1 || n >= 2 * kMinPerThread || rows * n < 2 * kMinPerThread ||
      threads == 1) {
    for (int64_t p = 0; p < rows; ++p)
      fn(p, threads);
    return;
  }
  int64_t t = std::min(threads, rows);
  lib::onThreads(t, [&](int64_t c) {
    for (int64_t p = rows * c / t; p < rows * (c + 1) / t; ++p)
      fn(p, int64_t(1));
  });
}

/// NumPy's order for sorts and selections: NaN after every number.
template <typename T> bool nanLastLess(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  return a < b;
}

/// Sorts one row (src[j * stride], n elements) into out on up to `threads`
/// threads (Sort.cpp; for the types of Sort.h).
template <typename T>
void sortRow(const T *src, int64_t stride, int64_t n, T *out, int64_t threads);
} // namespace cpnrt::sortdetail

#endif // CPNRT_LIB_SORTINTERNAL_H
