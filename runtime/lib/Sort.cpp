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
// share one 64-bit word, so ties are ordered by index by the sort itself.
// 64-bit keys of a row shorter than 2^32 do too, as their 32-bit prefix
// above the row's smallest key (the top 32 bits of key - min, which keep the
// order): the words are sorted, and only runs of equal prefixes, exact ties
// or keys that differ below the prefix, are ordered by their full keys
// afterwards (a stable sort of the run's indices). Longer rows are sorted as
// key-value pairs and the indices of equal keys sorted afterwards.
//
//===----------------------------------------------------------------------===//

#include "Sort.h"
#include "SortInternal.h"

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
using namespace cpnrt::sortdetail;
using cpnrt::lib::maxThreads;
using cpnrt::lib::onThreads;
using cpnrt::lib::threadsFor;

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
    if constexpr (cpnrt::simd::kHasVectorCompress<K>) {
      if (S == 1) { // two buckets: split by the vector unit's compress
        BracketScatter<K> scatter;
        blocks(c, [&](const K *b, int64_t k, int64_t m) {
          // Below, equal to and above the splitter; the unsortable last.
          scatter(b, m, sp[0], sp[0], at.data(), data);
          std::copy(b + m, b + k, data + at[3]);
          at[3] += k - m;
        });
        return;
      }
    }
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

/// As copyNaNLast, for Highway's sort, which must not see +inf either:
/// Debian's Highway 1.0.3 returns +inf as the largest finite value (its
/// padding). The infinities go behind the numbers with the NaNs; sortRow
/// then puts them before the NaNs (infinitiesBeforeNaNs).
template <typename W, typename T>
int64_t copyUnsortableLast(const T *src, int64_t stride, int64_t lo, int64_t hi,
                           W *dst) {
  return copyNumbersFirst(src, stride, lo, hi, dst, true);
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

} // namespace

template <typename T>
void cpnrt::sortdetail::sortRow(const T *src, int64_t stride, int64_t n, T *out,
                                int64_t threads) {
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

namespace {
// -- argsort ----------------------------------------------------------------

/// The unsigned integer with the same order as v under NumPy's sort (equal
/// values, -0.0 and 0.0 or two NaNs, give equal keys). Without branches, so
/// that loops of it vectorize (argsortByPrefix's).
template <typename T> auto orderKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr int top = 8 * sizeof(T) - 1;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    U u, nanBits;
    std::memcpy(&u, &v, sizeof(u));
    std::memcpy(&nanBits, &nan, sizeof(u));
    u = v == T(0) ? U(0) : u;
    u = v != v ? nanBits : u;
    // Negatives inverted, the sign bit set on the others.
    U neg = U(std::make_signed_t<U>(u) >> top);
    return U(u ^ (neg | (U(1) << top)));
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return U(U(v) ^ (U(1) << (8 * sizeof(T) - 1)));
  } else {
    return v;
  }
}

/// lo = min(lo, keys), hi = max(hi, keys) of src[from, to) (strided).
template <typename T>
CPN_CLONES void keyRange(const T *src, int64_t stride, int64_t from, int64_t to,
                         uint64_t &lo, uint64_t &hi) {
  uint64_t mn = lo, mx = hi;
  if (stride == 1) {
    for (int64_t i = from; i < to; ++i) {
      uint64_t k = orderKey(src[i]);
      mn = k < mn ? k : mn, mx = k > mx ? k : mx;
    }
  } else {
    for (int64_t i = from; i < to; ++i) {
      uint64_t k = orderKey(src[i * stride]);
      mn = k < mn ? k : mn, mx = k > mx ? k : mx;
    }
  }
  lo = mn, hi = mx;
}

/// dst[i - from] = (key(src[i]) - min) >> shift << 32 | i for i in [from, to).
template <typename T>
CPN_CLONES void prefixWords(const T *src, int64_t stride, int64_t from,
                            int64_t to, uint64_t min, int shift,
                            uint64_t *dst) {
  if (stride == 1) {
    for (int64_t i = from; i < to; ++i)
      dst[i - from] = (orderKey(src[i]) - min) >> shift << 32 | uint64_t(i);
  } else {
    for (int64_t i = from; i < to; ++i)
      dst[i - from] =
          (orderKey(src[i * stride]) - min) >> shift << 32 | uint64_t(i);
  }
}

/// Runs of equal prefixes longer than this are sorted again by prefix.
constexpr int64_t kLongPrefixRun = 64;

/// argsort of a row of 64-bit keys shorter than 2^32, through (32-bit
/// prefix of key - min) << 32 | index words (see the file comment). Sorting
/// 8-byte words instead of 16-byte pairs halves the bytes each pass of the
/// sort moves: 10^5 float64 2.0 -> 0.9 ms on 2 threads (session 37, Intel
/// Xeon, NumPy 1.3 ms).
template <typename T>
void argsortByPrefix(const T *src, int64_t stride, int64_t n, int64_t *out,
                     int64_t threads) {
  // The keys' range, per thread then together.
  int64_t t = threadsFor(n, kMinPerThread, threads);
  std::vector<uint64_t> lo(t, UINT64_MAX), hi(t, 0);
  onThreads(t, [&](int64_t c) {
    keyRange(src, stride, n * c / t, n * (c + 1) / t, lo[c], hi[c]);
  });
  uint64_t min = *std::min_element(lo.begin(), lo.end()),
           max = *std::max_element(hi.begin(), hi.end());
  uint64_t range = max - min;
  int shift = range >> 32 ? 32 - __builtin_clzll(range) : 0;
  uint64_t *packed = reinterpret_cast<uint64_t *>(out);
  parallelSort(packed, n, threads,
               [&](uint64_t *dst, int64_t from, int64_t to) {
                 prefixWords(src, stride, from, to, min, shift, dst);
                 return to - from;
               });
  // Indices out; a run of equal prefixes (shift > 0 only: else its keys are
  // equal, and its indices ascending) ordered by the full keys, stably.
  // Thread c's part starts at the first run that starts at or after n c / t
  // (found before any word is overwritten by its index).
  auto prefix = [&](int64_t i) { return packed[i] >> 32; };
  std::vector<int64_t> part(t + 1, n);
  for (int64_t c = 0; c < t; ++c) {
    int64_t from = std::max(n * c / t, c ? part[c - 1] : 0);
    while (shift && from > 0 && from < n && prefix(from) == prefix(from - 1))
      ++from;
    part[c] = from;
  }
  onThreads(t, [&](int64_t c) {
    for (int64_t i = part[c], end = part[c + 1]; i < end;) {
      int64_t j = i + 1;
      while (shift && j < end && prefix(j) == prefix(i))
        ++j;
      for (int64_t k = i; k < j; ++k)
        out[k] = int64_t(packed[k] & 0xffffffffu);
      if (j - i > kLongPrefixRun) {
        // The run's keys span less than 2^shift <= 2^32: sorted the same
        // way on their own minimum, exactly (a row of values a few ulps
        // apart and one far away is one run: 10^6 in 190 ms by compares).
        std::vector<int64_t> index(out + i, out + j);
        std::vector<T> keys(j - i);
        for (int64_t k = 0; k < j - i; ++k)
          keys[k] = src[index[k] * stride];
        argsortByPrefix(keys.data(), 1, j - i, out + i, 1);
        for (int64_t k = i; k < j; ++k)
          out[k] = index[out[k]];
      } else if (j - i > 1) {
        std::stable_sort(out + i, out + j, [&](int64_t a, int64_t b) {
          return orderKey(src[a * stride]) < orderKey(src[b * stride]);
        });
      }
      i = j;
    }
  });
}

template <typename T>
void argsortRow(const T *src, int64_t stride, int64_t n, int64_t *out,
                int64_t threads) {
  if constexpr (sizeof(T) == 8)
    if (n < int64_t(UINT32_MAX))
      return argsortByPrefix(src, stride, n, out, threads);
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

#define CPN_SORT_TYPE(T)                                                       \
  template void cpnrt::sortRows<T>(const T *, int64_t, int64_t, int64_t,       \
                                   int64_t, T *);                              \
  template void cpnrt::argsortRows<T>(const T *, int64_t, int64_t, int64_t,    \
                                      int64_t, int64_t *);                     \
  template void cpnrt::sortdetail::sortRow<T>(const T *, int64_t, int64_t,     \
                                              T *, int64_t);
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
