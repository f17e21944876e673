//===- Sort.cpp - vectorized sorts split over the cores -------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). Sorting at the hardware's speed:
// Highway's vqsort (libhwy, dispatched to the widest vector unit of the CPU)
// sorts one chunk of a row per thread, and the sorted chunks are merged in
// rounds, each merge split between threads by merge path (every thread
// writes its own range of the output). Orders are NumPy's: NaN after every
// number; argsort is stable.
//
// argsort sorts (key, index) pairs: a key is the value's bits turned into an
// unsigned integer with the same order (sign flipped, negatives inverted,
// -0.0 and NaNs made one value each). Keys of up to 32 bits and their index
// share one 64-bit word, so ties are ordered by index by the sort itself;
// 64-bit keys are sorted as key-value pairs and the indices of equal keys
// sorted afterwards.
//
//===----------------------------------------------------------------------===//

#include "Sort.h"

#include "LibCall.h"

#include <hwy/contrib/sort/vqsort.h>
#include <hwy/targets.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

namespace {
using cpnrt::lib::maxThreads;
using cpnrt::lib::onThreads;
using cpnrt::lib::threadsFor;

/// Below this many elements per thread a sort stays on one thread (starting
/// a thread costs about as much as sorting this many elements).
constexpr int64_t kMinPerThread = int64_t(1) << 15;

/// One sorter per thread (a hwy::Sorter is not shared between threads).
const hwy::Sorter &sorter() {
  thread_local hwy::Sorter s;
  return s;
}

template <typename K> void vqsort(K *p, int64_t n) {
  if (n > 1)
    sorter()(p, size_t(n), hwy::SortAscending());
}

/// The order the merges use; a key-value pair compares by key only.
template <typename K> bool before(const K &a, const K &b) { return a < b; }
bool before(const hwy::K64V64 &a, const hwy::K64V64 &b) {
  return a.key < b.key;
}

/// A sort is split over threads only where each thread gets this many bytes
/// of keys: below, partitioning costs what the threads save. 2-core Zen 5,
/// one thread against two: 10^5 int32 0.23 vs 0.23-0.32 ms, 10^5 argsort
/// pairs of int64 1.2-1.3 vs 0.85-1.0 ms, 10^6 int64 4.7-4.9 vs 3.4-4.4 ms
/// (2^19 then). 2-core Intel Xeon (AVX-512), sort and sync of 10^5 keys,
/// one thread against two: float64 535 vs 410 us, float32 340 vs 303 us,
/// int32 305 vs 260 us; 5 x 10^4 float64 250 vs 220-300 us (session 26).
constexpr int64_t kMinSortBytesPerThread = int64_t(1) << 17;

/// Elements filled at a time by a partition pass (on the thread's stack).
constexpr int64_t kBlock = 1024;

/// lt += how many of b[0, m) sort before s, le += how many not after it.
template <typename K>
CPN_CLONES void countAround(const K *b, int64_t m, K s, int64_t &lt,
                            int64_t &le) {
  int64_t l = 0, e = 0;
  for (int64_t i = 0; i < m; ++i) {
    l += int64_t(before(b[i], s));
    e += int64_t(!before(s, b[i]));
  }
  lt += l;
  le += e;
}

/// rs[i] = the region of b[i] among the S sorted splitters sp: twice the
/// number it sorts after plus the number it equals (see parallelSort).
template <typename K>
CPN_CLONES void regionsOf(const K *b, int64_t m, const K *sp, int64_t S,
                          uint16_t *rs) {
  if (S == 1) { // two threads: a loop that vectorizes
    const K s = sp[0];
    for (int64_t i = 0; i < m; ++i)
      rs[i] = uint16_t(int64_t(before(s, b[i])) + int64_t(!before(b[i], s)));
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    int64_t r = 0;
    for (int64_t j = 0; j < S; ++j)
      r += int64_t(before(sp[j], b[i])) + int64_t(!before(b[i], sp[j]));
    rs[i] = uint16_t(r);
  }
}

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

/// From t threads' counts per region (counts[c * regions + r]): where each
/// region starts (start, regions + 1 entries) and where thread c writes its
/// part of region r (offset[c * regions + r]), threads in order.
void regionOffsets(const std::vector<int64_t> &counts, int64_t t,
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

/// Sorts the n elements that `fill(dst, lo, hi)` writes (elements [lo, hi)
/// of the row, into dst[0, hi - lo); it returns how many of them it put
/// first, in any order, with the rest, which sort after every other, behind
/// them) into data[0, n).
///
/// On several threads, a sample sort: splitters from a sorted sample cut the
/// keys into one bucket per thread, with a region between buckets for the
/// keys equal to each splitter (they need no sort, and many equal keys do
/// not pile up in one bucket); every thread counts its chunk's keys per
/// region, then copies them to their places in data, and each bucket is
/// sorted in place by its own thread. No merge and no temporary buffer:
/// merging two sorted halves cost about as much as sorting them did.
template <typename K, typename Fill>
void parallelSort(K *data, int64_t n, int64_t threads, Fill fill) {
  int64_t t =
      std::min(threads, n * int64_t(sizeof(K)) / kMinSortBytesPerThread);
  if (t <= 1) {
    vqsort(data, fill(data, 0, n));
    return;
  }
  // Splitters: t - 1 evenly spaced ranks of a sorted, evenly spaced sample.
  int64_t want = std::min<int64_t>(n / 16, 512 * t);
  std::vector<K> sample;
  sample.reserve(want);
  for (int64_t i = 0; i < want; ++i) {
    int64_t at = i * n / want;
    K v;
    if (fill(&v, at, at + 1) == 1)
      sample.push_back(v);
  }
  std::sort(sample.begin(), sample.end(),
            [](const K &a, const K &b) { return before(a, b); });
  std::vector<K> split;
  for (int64_t j = 1; j < t && !sample.empty(); ++j) { // distinct ones
    const K &v = sample[sample.size() * j / t];
    if (split.empty() || before(split.back(), v))
      split.push_back(v);
  }
  // Region of a key: 2 j below splitter j, 2 j + 1 equal to it, 2 S above
  // the last; region 2 S + 1 holds what sorts after every key.
  const int64_t S = int64_t(split.size()), regions = 2 * S + 2;
  const K *sp = split.data();
  // Past 16 splitters (regionsOf counts compares below that), by bisection.
  auto bisectRegion = [S, sp](const K &v) -> int64_t {
    auto less = [](const K &a, const K &b) { return before(a, b); };
    return (std::lower_bound(sp, sp + S, v, less) - sp) +
           (std::upper_bound(sp, sp + S, v, less) - sp);
  };
  // Each thread's chunk, a block at a time: fn(block, count, sortable).
  auto blocks = [&](int64_t c, auto fn) {
    K buf[kBlock];
    for (int64_t lo = n * c / t, hi = n * (c + 1) / t; lo < hi; lo += kBlock) {
      int64_t e = std::min(hi, lo + kBlock);
      fn(buf, e - lo, fill(buf, lo, e));
    }
  };
  std::vector<int64_t> counts(t * regions);
  onThreads(t, [&](int64_t c) {
    // Per splitter, how many keys are below it and how many not above it
    // (sums of compares, which vectorize; a histogram's increments of one
    // counter wait on each other), then the regions' counts from those.
    std::vector<int64_t> lt(S, 0), le(S, 0), cnt(regions, 0);
    blocks(c, [&](const K *b, int64_t k, int64_t m) {
      for (int64_t j = 0; j < S; ++j)
        countAround(b, m, sp[j], lt[j], le[j]);
      cnt[regions - 2] += m;
      cnt[regions - 1] += k - m;
    });
    for (int64_t j = 0; j < S; ++j) {
      cnt[2 * j] = lt[j] - (j ? le[j - 1] : 0);
      cnt[2 * j + 1] = le[j] - lt[j];
    }
    if (S)
      cnt[regions - 2] -= le[S - 1];
    std::copy(cnt.begin(), cnt.end(), counts.begin() + c * regions);
  });
  std::vector<int64_t> start, offset;
  regionOffsets(counts, t, regions, start, offset);
  onThreads(t, [&](int64_t c) {
    std::vector<int64_t> at(offset.begin() + c * regions,
                            offset.begin() + (c + 1) * regions);
    uint16_t rs[kBlock];
    RegionScatter<K> scatter(regions);
    blocks(c, [&](const K *b, int64_t k, int64_t m) {
      if (S <= 16)
        regionsOf(b, m, sp, S, rs);
      else
        for (int64_t i = 0; i < m; ++i)
          rs[i] = uint16_t(bisectRegion(b[i]));
      std::fill(rs + m, rs + k, uint16_t(regions - 1)); // the unsortable
      scatter(b, rs, k, at.data(), data);
    });
  });
  // Bucket c (region 2 c) on thread c (fewer buckets where splitters were
  // equal).
  onThreads(S + 1, [&](int64_t c) {
    vqsort(data + start[2 * c], start[2 * c + 1] - start[2 * c]);
  });
}

// -- sort -------------------------------------------------------------------

template <typename T>
constexpr bool kVq = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                     (std::is_integral_v<T> && sizeof(T) >= 2);

/// Values of one byte: counted, then written in order.
template <typename T>
void countingSort(const T *src, int64_t stride, int64_t n, T *out) {
  int64_t count[256] = {};
  for (int64_t i = 0; i < n; ++i)
    ++count[uint8_t(src[i * stride]) ^ (std::is_signed_v<T> ? 0x80 : 0)];
  for (int b = 0; b < 256; ++b) {
    T v = T(uint8_t(b ^ (std::is_signed_v<T> ? 0x80 : 0)));
    out = std::fill_n(out, count[b], v);
  }
}

/// Copies src[lo, hi) (strided) to dst[0, hi - lo) as W: the numbers first,
/// in order, and the NaNs from the end; returns how many numbers.
template <typename W, typename T>
int64_t copyNaNLast(const T *src, int64_t stride, int64_t lo, int64_t hi,
                    W *dst) {
  int64_t m = 0, last = hi - lo;
  for (int64_t i = lo; i < hi; ++i) {
    T v = src[i * stride];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) {
        dst[--last] = W(v);
        continue;
      }
    }
    dst[m++] = W(v);
  }
  return m;
}

/// As copyNaNLast, for Highway's sort, which must not see +inf either:
/// Debian's Highway 1.0.3 returns +inf as the largest finite value (its
/// padding). The infinities go behind the numbers with the NaNs; sortRow
/// then puts them before the NaNs (infinitiesBeforeNaNs).
template <typename W, typename T>
int64_t copyUnsortableLast(const T *src, int64_t stride, int64_t lo, int64_t hi,
                           W *dst) {
  if constexpr (!std::is_floating_point_v<T>) {
    return copyNaNLast(src, stride, lo, hi, dst);
  } else {
    int64_t m = 0, last = hi - lo;
    for (int64_t i = lo; i < hi; ++i) {
      T v = src[i * stride];
      dst[(std::isnan(v) || v == std::numeric_limits<T>::infinity()) ? --last
                                                                     : m++] =
          W(v);
    }
    return m;
  }
}

/// A sorted row whose tail holds its +infs and NaNs in any order: the
/// infinities first (they sort before NaNs in NumPy).
template <typename T> void infinitiesBeforeNaNs(T *data, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    T *tail = std::partition_point(data, data + n, [](T v) {
      return !std::isnan(v) && v != std::numeric_limits<T>::infinity();
    });
    std::partition(tail, data + n, [](T v) { return !std::isnan(v); });
  }
}

/// On AMD's Zen 4, 32-bit values are sorted widened to 64 bits (exactly,
/// order kept): there the 32-bit vqsort of Debian's Highway 1.0.3 is about
/// four times slower per element than its 64-bit one (measured: 0.58 s
/// against 0.12 s for 10^7 keys), as Zen 4 runs the compressing stores of
/// 32-bit lanes that its AVX-512 partition uses slowly. Elsewhere the 32-bit
/// sort is the faster: on AVX2 (an AMD EPYC: 6.2 ms against 16.1 ms for 10^6
/// keys) and on Zen 5's AVX-512 (2.7-3.6 ms against 4.2 ms).
bool widen32() {
  static const bool wide = [] {
    if (!(hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)))
      return false;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541) // "Auth"enticAMD
      return false;
    __get_cpuid(1, &a, &b, &c, &d);
    unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
    return family == 0x19; // Zen 3 and 4; only Zen 4 has AVX-512
#else
    return false;
#endif
  }();
  return wide;
}

template <typename T>
using Wide = std::conditional_t<
    std::is_same_v<T, float>, double,
    std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
void sortRow(const T *src, int64_t stride, int64_t n, T *out, int64_t threads) {
  if constexpr (sizeof(T) == 1) {
    countingSort(src, stride, n, out);
  } else {
    if constexpr (sizeof(T) == 4) {
      if (widen32()) {
        using W = Wide<T>;
        std::unique_ptr<W[]> wide(new W[n]);
        parallelSort(wide.get(), n, threads,
                     [&](W *dst, int64_t lo, int64_t hi) {
                       return copyUnsortableLast(src, stride, lo, hi, dst);
                     });
        infinitiesBeforeNaNs(wide.get(), n);
        int64_t t = threadsFor(n, kMinPerThread, threads);
        onThreads(t, [&](int64_t c) {
          for (int64_t i = n * c / t; i < n * (c + 1) / t; ++i)
            out[i] = T(wide[i]);
        });
        return;
      }
    }
    parallelSort(out, n, threads, [&](T *dst, int64_t lo, int64_t hi) {
      return copyUnsortableLast(src, stride, lo, hi, dst);
    });
    infinitiesBeforeNaNs(out, n);
  }
}

// -- argsort ----------------------------------------------------------------

/// The unsigned integer with the same order as v under NumPy's sort (equal
/// values, -0.0 and 0.0 or two NaNs, give equal keys).
template <typename T> auto orderKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr U sign = U(1) << (8 * sizeof(T) - 1);
    if (v == T(0))
      v = T(0);
    if (std::isnan(v))
      v = std::numeric_limits<T>::quiet_NaN();
    U u;
    std::memcpy(&u, &v, sizeof(u));
    return (u & sign) ? U(~u) : U(u | sign);
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return U(U(v) ^ (U(1) << (8 * sizeof(T) - 1)));
  } else {
    return v;
  }
}

template <typename T>
void argsortRow(const T *src, int64_t stride, int64_t n, int64_t *out,
                int64_t threads) {
  if (sizeof(T) <= 4 && n <= int64_t(UINT32_MAX)) {
    // (key << 32 | index), sorted in the output itself.
    uint64_t *packed = reinterpret_cast<uint64_t *>(out);
    parallelSort(
        packed, n, threads, [&](uint64_t *dst, int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i)
            *dst++ = uint64_t(orderKey(src[i * stride])) << 32 | uint64_t(i);
          return hi - lo;
        });
    for (int64_t i = 0; i < n; ++i)
      out[i] = int64_t(packed[i] & 0xffffffffu);
    return;
  }
  // vqsort pads with the largest key, and in Highway 1.0.3 a real pair with
  // that key can trade places with the padding: such pairs (INT64_MAX,
  // UINT64_MAX) are kept out of the sort and put last, as NaNs are.
  std::unique_ptr<hwy::K64V64[]> pairs(new hwy::K64V64[n]);
  parallelSort(pairs.get(), n, threads,
               [&](hwy::K64V64 *dst, int64_t lo, int64_t hi) {
                 int64_t m = 0, last = hi - lo;
                 for (int64_t i = lo; i < hi; ++i) {
                   uint64_t key = uint64_t(orderKey(src[i * stride]));
                   dst[key == UINT64_MAX ? --last : m++] = {uint64_t(i), key};
                 }
                 return m;
               });
  // Indices out; those of equal keys (vqsort orders them arbitrarily) put in
  // ascending order. Each thread starts at the first run that starts in its
  // range and ends the last one it started.
  const hwy::K64V64 *p = pairs.get();
  int64_t t = threadsFor(n, kMinPerThread, threads);
  onThreads(t, [&](int64_t c) {
    int64_t lo = n * c / t, hi = n * (c + 1) / t;
    while (lo > 0 && lo < n && p[lo].key == p[lo - 1].key)
      ++lo;
    while (hi < n && hi > 0 && p[hi].key == p[hi - 1].key)
      ++hi;
    for (int64_t i = lo; i < hi;) {
      int64_t j = i + 1;
      out[i] = int64_t(p[i].value);
      for (; j < hi && p[j].key == p[i].key; ++j)
        out[j] = int64_t(p[j].value);
      if (j - i > 1)
        std::sort(out + i, out + j);
      i = j;
    }
  });
}

// -- partition (selection) ----------------------------------------------------

/// NumPy's order for selections: NaN after every number.
template <typename T> bool selectLess(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  return a < b;
}

/// out[lo, hi) partitioned so that each kth in [lo, hi) (ascending) holds the
/// element a sort would put there, smaller ones before it and larger after.
template <typename T>
void selectRange(T *out, int64_t lo, int64_t hi, const int64_t *kth,
                 int64_t nk) {
  for (int64_t i = 0; i < nk; ++i) {
    int64_t k = kth[i];
    if (k < lo || k >= hi)
      continue;
    std::nth_element(out + lo, out + k, out + hi, selectLess<T>);
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
  for (int64_t i = 0; i < m; ++i) {
    uint16_t r = uint16_t(int(v[i] >= lo) + int(v[i] > hi));
    rs[i] = v[i] != v[i] ? uint16_t(3) : r;
  }
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

/// Brackets around the kth ranks, from a sorted sample: every element falls
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
  // A sample of evenly spaced elements (NaNs left out), sorted.
  int64_t want = std::clamp<int64_t>(n / 64, 1024, 8192);
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
  std::sort(sample.begin(), sample.end());
  int64_t S = int64_t(sample.size());
  // Pivots: [lo, hi] around each kth's sample rank, 3 sqrt(S) either side;
  // overlapping brackets are joined.
  int64_t margin = 3 * int64_t(std::sqrt(double(S))) + 2;
  std::vector<T> pivots; // lo0, hi0, lo1, hi1, ...
  for (int64_t k : kth) {
    int64_t j = int64_t(double(k) / double(n) * double(S));
    T lo = sample[std::clamp<int64_t>(j - margin, 0, S - 1)];
    T hi = sample[std::clamp<int64_t>(j + margin, 0, S - 1)];
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
  int64_t t = threadsFor(n, kMinPerThread, threads);
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

/// fn(p) for each of `rows` rows of n elements: rows of a big array are
/// shared out between threads, and a long row gets the threads itself
/// (`inner` says how many a row may use).
template <typename F> void forRows(int64_t rows, int64_t n, F fn) {
  int64_t threads = maxThreads();
  if (rows == 1 || n >= 2 * kMinPerThread || rows * n < 2 * kMinPerThread ||
      threads == 1) {
    for (int64_t p = 0; p < rows; ++p)
      fn(p, threads);
    return;
  }
  int64_t t = std::min(threads, rows);
  onThreads(t, [&](int64_t c) {
    for (int64_t p = rows * c / t; p < rows * (c + 1) / t; ++p)
      fn(p, int64_t(1));
  });
}
} // namespace

template <typename T>
void cpnrt::sortRows(const T *src, int64_t rowStride, int64_t stride,
                     int64_t rows, int64_t n, T *out) {
  forRows(rows, n, [&](int64_t p, int64_t threads) {
    if constexpr (kVq<T> || sizeof(T) == 1)
      sortRow(src + p * rowStride, stride, n, out + p * n, threads);
  });
}

template <typename T>
void cpnrt::argsortRows(const T *src, int64_t rowStride, int64_t stride,
                        int64_t rows, int64_t n, int64_t *out) {
  forRows(rows, n, [&](int64_t p, int64_t threads) {
    argsortRow(src + p * rowStride, stride, n, out + p * n, threads);
  });
}

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

#define CPN_SORT_TYPE(T)                                                       \
  template void cpnrt::sortRows<T>(const T *, int64_t, int64_t, int64_t,       \
                                   int64_t, T *);                              \
  template void cpnrt::argsortRows<T>(const T *, int64_t, int64_t, int64_t,    \
                                      int64_t, int64_t *);                     \
  template void cpnrt::partitionRows<T>(const T *, int64_t, int64_t, int64_t,  \
                                        int64_t, const int64_t *, int64_t,     \
                                        T *);
CPN_SORT_TYPE(uint8_t)
CPN_SORT_TYPE(int8_t)
CPN_SORT_TYPE(int16_t)
CPN_SORT_TYPE(int32_t)
CPN_SORT_TYPE(int64_t)
CPN_SORT_TYPE(uint16_t)
CPN_SORT_TYPE(uint32_t)
CPN_SORT_TYPE(uint64_t)
CPN_SORT_TYPE(float)
CPN_SORT_TYPE(double)
#undef CPN_SORT_TYPE
