//===- Select.cpp - partition (selection) split over the cores -----------===//
//
// Part of cpnumeric's runtime (libcpnrt). np.partition's rows: long rows are
// cut around brackets taken from a sample (every thread counts and
// scatters its chunk by region at once), and only the brackets are selected
// in; short rows and many ranks use std::nth_element or a sort. NaN last,
// as NumPy's.
//
//===----------------------------------------------------------------------===//

#include "Sort.h"
#include "SortInternal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace {
using namespace cpnrt::sortdetail;
using cpnrt::lib::onThreads;
using cpnrt::lib::threadsFor;

// -- partition (selection) ----------------------------------------------------

/// out[lo, hi) partitioned so that each kth in [lo, hi) (ascending) holds the
/// element a sort would put there, smaller ones before it and larger after.
template <typename T>
void selectRange(T *out, int64_t lo, int64_t hi, const int64_t *kth,
                 int64_t nk) {
  for (int64_t i = 0; i < nk; ++i) {
    int64_t k = kth[i];
    if (k < lo || k >= hi)
      continue;
    std::nth_element(out + lo, out + k, out + hi, nanLastLess<T>);
    lo = k + 1;
  }
}

/// fn(v, m) for each block of m <= kBlock of src's elements [lo, hi), in
/// order, v pointing at them contiguously: into src itself when stride
/// is 1, else into a copy on the stack.
template <typename T, typename F>
void forContiguousBlocks(const T *src, int64_t stride, int64_t lo, int64_t hi,
                         F fn) {
  T buf[kBlock];
  for (int64_t b = lo; b < hi; b += kBlock) {
    int64_t m = std::min(hi - b, kBlock);
    const T *v = src + b * stride;
    if (stride != 1) {
      for (int64_t i = 0; i < m; ++i)
        buf[i] = src[(b + i) * stride];
      v = buf;
    }
    fn(v, m);
  }
}

/// How many of v[0, m) are above p (strict) or at least p; NaNs neither.
template <typename T>
CPN_CLONES int64_t countPassing(const T *v, int64_t m, T p, bool strict) {
  int64_t k = 0;
  if (strict)
    for (int64_t i = 0; i < m; ++i)
      k += int64_t(v[i] > p);
  else
    for (int64_t i = 0; i < m; ++i)
      k += int64_t(v[i] >= p);
  return k;
}

/// rs[i] = the region of v[i] around one bracket [lo, hi]: 0 below it, 1
/// inside, 2 above, 3 NaN.
template <typename T>
CPN_CLONES void bracketRegions(const T *v, int64_t m, T lo, T hi,
                               uint16_t *rs) {
  // Without a branch, so that the loop vectorizes: a NaN fails both
  // comparisons (0) and gets 3 added.
  for (int64_t i = 0; i < m; ++i)
    rs[i] = uint16_t(int(v[i] >= lo) + int(v[i] > hi) + 3 * int(v[i] != v[i]));
}

template <typename T> CPN_CLONES int64_t countNaN(const T *v, int64_t m) {
  int64_t k = 0;
  for (int64_t i = 0; i < m; ++i)
    k += int64_t(v[i] != v[i]);
  return k;
}

/// Rows at least this long are selected around brackets from a sample (on
/// one thread too: two vectorized passes and a selection inside a small
/// bracket beat std::nth_element over the whole row).
constexpr int64_t kSelectBrackets = int64_t(1) << 14;

/// Below this many elements per thread a selection stays on one thread: its
/// two passes are short, and two wake-ups of a second thread cost more than
/// it saves (2-core Xeon, 10^5 float64 after a pause: 182-190 us on one
/// thread, 200-470 us on two; 10^6: 1.6 ms on one, 1.2 ms on two).
constexpr int64_t kMinSelectPerThread = int64_t(1) << 17;

/// Brackets around the kth ranks, from a sample: every element falls
/// in one region (below the first pivot, inside a bracket [lo, hi], between
/// brackets, above the last), counted per thread, then copied to its region
/// by every thread at once; only the brackets are then selected in. False
/// when a kth does not land inside its bracket (a sample that misled), and
/// nothing is written.
template <typename T>
bool selectByBrackets(const T *src, int64_t stride, int64_t n, T *out,
                      const std::vector<int64_t> &kth, int64_t threads) {
  if (kth.empty()) // no pivots to count against
    return false;
  // A sample of evenly spaced elements (NaNs left out). Its size balances
  // the selections in the sample (~S) against the selection inside the
  // brackets (~n / sqrt(S)): S ~ 1.5 n^(2/3).
  int64_t want = std::clamp<int64_t>(
      int64_t(1.5 * std::cbrt(double(n) * double(n))), 1024, int64_t(1) << 17);
  want = std::min(want, n);
  std::vector<T> sample;
  sample.reserve(want);
  for (int64_t i = 0; i < want; ++i) {
    T v = src[(i * n / want) * stride];
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(v))
        continue;
    sample.push_back(v);
  }
  if (sample.size() < 64)
    return false;
  int64_t S = int64_t(sample.size());
  // Brackets [lo, hi] around each kth's rank in the sample, 3.5 standard
  // deviations of that rank either side (binomial: sqrt(S p (1 - p))), so a
  // sample misleads about once in 2000 rows; overlapping brackets are
  // joined. The sample's elements at the bracket ranks are selected in
  // ascending order, each in what the last selection left after it.
  std::vector<int64_t> ranks;
  for (int64_t k : kth) {
    double p = (double(k) + 0.5) / double(n);
    int64_t j = int64_t(p * double(S));
    int64_t margin = int64_t(3.5 * std::sqrt(double(S) * p * (1 - p))) + 4;
    ranks.push_back(std::clamp<int64_t>(j - margin, 0, S - 1));
    ranks.push_back(std::clamp<int64_t>(j + margin, 0, S - 1));
  }
  // Both ends ascending (a margin can shrink faster than the rank grows
  // near the ends), widening brackets where needed: pivots in order.
  for (size_t i = 2; i < ranks.size(); i += 2)
    ranks[i + 1] = std::max(ranks[i + 1], ranks[i - 1]);
  for (size_t i = ranks.size() - 2; i >= 2; i -= 2)
    ranks[i - 2] = std::min(ranks[i - 2], ranks[i]);
  std::vector<int64_t> picked(ranks);
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  int64_t from = 0;
  for (int64_t r : picked) {
    std::nth_element(sample.begin() + from, sample.begin() + r, sample.end());
    from = r + 1;
  }
  std::vector<T> pivots; // lo0, hi0, lo1, hi1, ...
  for (size_t i = 0; i < ranks.size(); i += 2) {
    T lo = sample[ranks[i]], hi = sample[ranks[i + 1]];
    if (!pivots.empty() && !(pivots.back() < lo)) {
      pivots.back() = std::max(pivots.back(), hi);
      continue;
    }
    pivots.push_back(lo);
    pivots.push_back(hi);
  }
  int64_t P = int64_t(pivots.size()), regions = P + 2; // + above, + NaN
  // Below pivots[0]: 0; in [p0, p1]: 1; (p1, p2): 2; ... NaN: P + 1. The
  // pivots are sorted, so the region is a count of comparisons, without a
  // branch (random data made a loop of branches cost ~10 ns per element).
  const T *piv = pivots.data();
  auto region = [P, piv](T v) -> int64_t {
    int64_t r = 0;
    for (int64_t j = 0; j < P; j += 2)
      r += int64_t(!(v < piv[j])) + int64_t(v > piv[j + 1]);
    if constexpr (std::is_floating_point_v<T>)
      r = std::isnan(v) ? P + 1 : r;
    return r;
  };
  int64_t t = threadsFor(n, kMinSelectPerThread, threads);
  std::vector<int64_t> counts(t * regions, 0);
  // Per pivot, how many elements pass it (sums of compares, which
  // vectorize; a histogram's increments of one counter wait on each other):
  // an element in region r passed pivots 0 .. r - 1, so region r holds
  // passed[r - 1] - passed[r] of them. NaNs pass none.
  onThreads(t, [&](int64_t c) {
    std::vector<int64_t> passed(P, 0), cnt(regions, 0);
    int64_t lo = n * c / t, hi = n * (c + 1) / t, nans = 0;
    forContiguousBlocks(src, stride, lo, hi, [&](const T *v, int64_t m) {
      for (int64_t j = 0; j < P; ++j)
        passed[j] += countPassing(v, m, piv[j], j % 2 == 1);
      if constexpr (std::is_floating_point_v<T>)
        nans += countNaN(v, m);
    });
    cnt[0] = (hi - lo) - nans - passed[0];
    for (int64_t r = 1; r < P; ++r)
      cnt[r] = passed[r - 1] - passed[r];
    cnt[P] = passed[P - 1];
    cnt[P + 1] = nans;
    std::copy(cnt.begin(), cnt.end(), counts.begin() + c * regions);
  });
  // Region starts, and each thread's offset inside each region.
  std::vector<int64_t> start, offset;
  regionOffsets(counts, t, regions, start, offset);
  // Every kth inside a bracket (odd regions) or in the NaN tail.
  for (int64_t k : kth) {
    bool inside = k >= start[P + 1];
    for (int64_t r = 1; r < P && !inside; r += 2)
      inside = k >= start[r] && k < start[r + 1];
    if (!inside)
      return false;
  }
  onThreads(t, [&](int64_t c) {
    std::vector<int64_t> at(offset.begin() + c * regions,
                            offset.begin() + (c + 1) * regions);
    if constexpr (cpnrt::simd::kHasVectorCompress<T>) {
      if (P == 2) { // one bracket: split by the vector unit's compress
        BracketScatter<T> scatter;
        forContiguousBlocks(src, stride, n * c / t, n * (c + 1) / t,
                            [&](const T *v, int64_t m) {
                              scatter(v, m, piv[0], piv[1], at.data(), out);
                            });
        return;
      }
    }
    RegionScatter<T> scatter(regions);
    uint16_t rs[kBlock];
    forContiguousBlocks(src, stride, n * c / t, n * (c + 1) / t,
                        [&](const T *v, int64_t m) {
                          if (P == 2)
                            bracketRegions(v, m, piv[0], piv[1], rs);
                          else
                            for (int64_t i = 0; i < m; ++i)
                              rs[i] = uint16_t(region(v[i]));
                          scatter(v, rs, m, at.data(), out);
                        });
  });
  for (int64_t r = 1; r < P; r += 2)
    selectRange(out, start[r], start[r + 1], kth.data(), int64_t(kth.size()));
  return true;
}

template <typename T>
void partitionRow(const T *src, int64_t stride, int64_t n, T *out,
                  const std::vector<int64_t> &kth, int64_t threads) {
  if (kth.size() > 16) { // many ranks (percentiles): a sort is cheaper
    sortRow(src, stride, n, out, threads);
    return;
  }
  if (n >= kSelectBrackets && kth.size() <= 8 &&
      selectByBrackets(src, stride, n, out, kth, threads))
    return;
  // One thread: NaNs to the end, then selections among the numbers.
  int64_t m = copyNaNLast(src, stride, 0, n, out);
  selectRange(out, 0, m, kth.data(), int64_t(kth.size()));
}

} // namespace

template <typename T>
void cpnrt::partitionRows(const T *src, int64_t rowStride, int64_t stride,
                          int64_t rows, int64_t n, const int64_t *kth,
                          int64_t nk, T *out) {
  std::vector<int64_t> ks(kth, kth + nk);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  forRows(rows, n, [&](int64_t p, int64_t threads) {
    partitionRow(src + p * rowStride, stride, n, out + p * n, ks, threads);
  });
}

#define CPN_SELECT_TYPE(T)                                                     \
  template void cpnrt::partitionRows<T>(const T *, int64_t, int64_t, int64_t,  \
                                        int64_t, const int64_t *, int64_t,     \
                                        T *);
CPN_SELECT_TYPE(uint8_t)
CPN_SELECT_TYPE(int8_t)
CPN_SELECT_TYPE(int16_t)
CPN_SELECT_TYPE(int32_t)
CPN_SELECT_TYPE(int64_t)
CPN_SELECT_TYPE(uint16_t)
CPN_SELECT_TYPE(uint32_t)
CPN_SELECT_TYPE(uint64_t)
CPN_SELECT_TYPE(float)
CPN_SELECT_TYPE(double)
#undef CPN_SELECT_TYPE
