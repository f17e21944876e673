//===- Algorithms.cpp - sorting and searching for compiled kernels --------===//
//
// Part of cpnumeric's runtime (libcpnrt). Entry points `cpn_lib_<name>_<t>`
// (t: b1 i1 i2 i4 i8 u1 u2 u4 u8 f4 f8 c8 c16, the element type of the first
// input; float16 calls the f4 ones on widened values)
// with the calling convention of cpnrt/Lapack.h: sort, argsort, partition and
// searchsorted here, gathers and scatters in Indexing.cpp, scans and ufunc.at
// in Scans.cpp, listed together by algorithmFunctions(). Rows are the last
// axis of (P, N) views; orderings put NaN last, as NumPy does. Errors (an
// index out of bounds) go to the per-thread slot the kernel's task raises.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "AlgorithmsInternal.h"
#include "LibCall.h"
#include "Sort.h"
#include "SortInternal.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <type_traits>
#include <vector>

namespace {
using cpnrt::lib::Args;
using cpnrt::lib::gatherOnThreads;
using cpnrt::lib::View;

/// NumPy's order: NaN after every number.
template <typename T> bool less(T a, T b) {
  return cpnrt::sortdetail::nanLastLess(a, b);
}
/// NumPy's complex sort order: by real part, then imaginary part, with NaN
/// parts last ([R + Rj, R + nanj, nan + Rj, nan + nanj]; npysort's CLT).
template <typename F> bool less(std::complex<F> a, std::complex<F> b) {
  F ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (ar < br)
    return ai == ai || bi != bi;
  if (ar > br)
    return bi != bi && ai == ai;
  if (ar == br || (ar != ar && br != br))
    return ai < bi || (bi != bi && ai == ai);
  return br != br;
}

/// Rows of a (P, N) view, each copied out (values in order).
template <typename T> void row(const View &v, int64_t p, std::vector<T> &r) {
  int64_t n = v.size(1);
  r.resize(n);
  const T *base = v.data<const T>() + p * v.strides[0];
  for (int64_t j = 0; j < n; ++j)
    r[j] = base[j * v.strides[1]];
}

// -- entry points ----------------------------------------------------------

/// Whether Sort.cpp's vectorized sorts take T (complex values do not).
template <typename T>
constexpr bool kVectorSort =
    std::is_integral_v<T> || std::is_floating_point_v<T>;

/// sort: in0 (P, N) -> out (P, N), each row ascending (args[0] = 1: stable,
/// which gives the same values).
template <typename T> void sort(const Args &a) {
  const View &x = a.in[0];
  T *out = a.out.data<T>();
  if constexpr (kVectorSort<T>) {
    cpnrt::sortRows(x.data<const T>(), x.strides[0], x.strides[1], x.size(0),
                    x.size(1), out);
  } else {
    std::vector<T> r;
    for (int64_t p = 0; p < x.size(0); ++p) {
      row(x, p, r);
      std::sort(r.begin(), r.end(), [](T x, T y) { return less(x, y); });
      std::copy(r.begin(), r.end(), out + p * x.size(1));
    }
  }
}

/// argsort: in0 (P, N) -> out (P, N) int64, stable (ties keep their order).
template <typename T> void argsort(const Args &a) {
  const View &x = a.in[0];
  int64_t *out = a.out.data<int64_t>();
  if constexpr (kVectorSort<T>) {
    cpnrt::argsortRows(x.data<const T>(), x.strides[0], x.strides[1], x.size(0),
                       x.size(1), out);
  } else {
    std::vector<T> r;
    std::vector<int64_t> idx;
    for (int64_t p = 0; p < x.size(0); ++p) {
      row(x, p, r);
      idx.resize(r.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(),
                       [&](int64_t i, int64_t j) { return less(r[i], r[j]); });
      std::copy(idx.begin(), idx.end(), out + p * x.size(1));
    }
  }
}

/// partition: in0 (P, N) -> out (P, N), each row partitioned at the ranks
/// args (np.partition: the kth elements in sorted place; complex rows are
/// sorted whole).
template <typename T> void partition(const Args &a) {
  if constexpr (kVectorSort<T>) {
    const View &x = a.in[0];
    cpnrt::partitionRows(x.data<const T>(), x.strides[0], x.strides[1],
                         x.size(0), x.size(1), a.args.data(),
                         int64_t(a.args.size()), a.out.data<T>());
  } else {
    sort<T>(a);
  }
}

/// Where each of xs[0, K) goes in sorted[0, n), n > 0, into out[0, K): the
/// first place whose element sorts after x (`Right`: np.searchsorted's
/// side='right') or not before it (side 'left'). Binary searches without
/// branches, K in lockstep: every needle halves the same lengths, each step
/// picks its side by arithmetic (std::upper_bound's branch missed about every
/// other step on random needles), and the K chains of dependent loads overlap.
/// 2M needles in 101 edges, two threads: 30 ms with std::upper_bound, 12.
///
/// A haystack past the first-level cache is searched in two levels: among
/// every kStep-th element (`top`, which stays in cache), then in the run of
/// kStep - 1 elements that level leaves, so a needle misses the cache about
/// once rather than once per halving past the cache's size.
template <bool Right, typename T> struct Searcher {
  static constexpr int64_t kStep = 64;
  const T *sorted;
  int64_t n;
  std::vector<T> top; // sorted[j * kStep], when n is large

  Searcher(const T *sorted, int64_t n) : sorted(sorted), n(n) {
    if (n * int64_t(sizeof(T)) > (int64_t(32) << 10))
      for (int64_t j = 0; j < n; j += kStep)
        top.push_back(sorted[j]);
  }

  /// Whether a needle x goes after element e.
  static bool after(T x, T e) {
    // less() of floats with bitwise operators: `||` and `&&` compile to
    // jumps.
    if constexpr (std::is_floating_point_v<T>)
      return Right ? !((x < e) | ((e != e) & (x == x)))
                   : (e < x) | ((x != x) & (e == e));
    else
      return Right ? !less(x, e) : less(e, x);
  }

  /// at[k] += where xs[k] goes in h[at[k], at[k] + len), len > 0, of an
  /// array h of `size` elements (`Clamped`: the range may pass its end, and
  /// places past it count as after every needle).
  template <int64_t K, bool Clamped>
  static void lockstep(const T *h, int64_t size, int64_t len, const T *xs,
                       int64_t *at) {
    auto goesAfter = [&](T x, int64_t i) {
      if constexpr (Clamped)
        return (i < size) & after(x, h[std::min(i, size - 1)]);
      else
        return after(x, h[i]);
    };
    for (; len > 1;) {
      int64_t half = len / 2;
      for (int64_t k = 0; k < K; ++k)
        at[k] += half * int64_t(goesAfter(xs[k], at[k] + half));
      len -= half;
    }
    for (int64_t k = 0; k < K; ++k)
      at[k] += int64_t(goesAfter(xs[k], at[k]));
  }

  template <int64_t K> void operator()(const T *xs, int64_t *out) const {
    int64_t at[K] = {};
    if (top.empty()) {
      lockstep<K, false>(sorted, n, n, xs, at);
    } else {
      int64_t m = int64_t(top.size());
      lockstep<K, false>(top.data(), m, m, xs, at);
      // Past top[at - 1] (or from the start) and not past top[at].
      for (int64_t k = 0; k < K; ++k)
        at[k] = std::max<int64_t>(0, (at[k] - 1) * kStep + 1);
      lockstep<K, true>(sorted, n, kStep - 1, xs, at);
    }
    std::copy(at, at + K, out);
  }
};

/// searchsorted: in0 sorted (1, N), in1 values (1, M) -> out (1, M) int64;
/// args[0] = 1 for side='right'.
template <typename T> void searchsorted(const Args &a) {
  const View &hay = a.in[0], &needles = a.in[1];
  std::vector<T> copied;
  const T *sorted = hay.data<const T>();
  if (hay.strides[1] != 1) { // binary searches want the haystack contiguous
    row(hay, 0, copied);
    sorted = copied.data();
  }
  int64_t n = hay.size(1), m = needles.size(1);
  bool right = a.arg(0);
  int64_t *out = a.out.data<int64_t>();
  const T *v = needles.data<const T>();
  int64_t vs = needles.strides[1];
  if (n == 0) {
    std::fill(out, out + m, int64_t(0));
    return;
  }
  // The side's searcher (its sampled top level built once), eight needles
  // at a time on each thread's range.
  auto run = [&](auto right) {
    Searcher<decltype(right)::value, T> searcher(sorted, n);
    gatherOnThreads(m, m * 8, [&](int64_t lo, int64_t hi, auto) {
      constexpr int64_t K = 8;
      T xs[K];
      int64_t i = lo;
      for (; i + K <= hi; i += K) {
        for (int64_t k = 0; k < K; ++k)
          xs[k] = v[(i + k) * vs];
        searcher.template operator()<K>(xs, out + i);
      }
      for (; i < hi; ++i)
        searcher.template operator()<1>(v + i * vs, out + i);
    });
  };
  if (right)
    run(std::true_type());
  else
    run(std::false_type());
}

/// Whether sorted neighbours a, b are one value of np.unique's: equal, or
/// (equal_nan) both NaN, for complex values a NaN in either part.
template <typename T> bool sameValue(T a, T b, bool equalNan) {
  if constexpr (std::is_floating_point_v<T>)
    return a == b || (equalNan && a != a && b != b);
  else if constexpr (std::is_integral_v<T>)
    return a == b;
  else
    return a == b ||
           (equalNan && (a.real() != a.real() || a.imag() != a.imag()) &&
            (b.real() != b.real() || b.imag() != b.imag()));
}

/// unique_count: in0 sorted (N) -> out () int64, its distinct values
/// (args[0] = 1: equal_nan). With unique_values, np.unique(x)'s values
/// after the sort in two calls: no mask, no count reduction, no compress
/// (their ops and recording were ~45% of a unique of 10^5 float64).
template <typename T> void unique_count(const Args &a) {
  const View &x = a.in[0];
  int64_t n = x.size(0), st = x.strides[0];
  const T *p = x.data<const T>();
  bool equalNan = a.arg(0);
  int64_t k = n > 0;
  if constexpr (std::is_arithmetic_v<T>) {
    if (st == 1 && n > 0) {
      // Neighbours that differ (a vectorized loop), then, with equal_nan,
      // the NaNs sorted last as one value: NaN != NaN counted each.
      int64_t d = 0;
      for (int64_t i = 1; i < n; ++i)
        d += p[i - 1] != p[i];
      k = 1 + d;
      if constexpr (std::is_floating_point_v<T>) {
        int64_t j = n;
        while (equalNan && j > 0 && p[j - 1] != p[j - 1])
          --j;
        if (n - j >= 2)
          k -= n - j - 1;
      }
      *a.out.data<int64_t>() = k;
      return;
    }
  }
  for (int64_t i = 1; i < n; ++i)
    k += !sameValue(p[(i - 1) * st], p[i * st], equalNan);
  *a.out.data<int64_t>() = k;
}

/// unique_values: in0 sorted (N) -> out (K), the first element of each run
/// of one value (K from unique_count, args[0] as there).
template <typename T> void unique_values(const Args &a) {
  const View &x = a.in[0];
  int64_t n = x.size(0), st = x.strides[0], m = a.out.count();
  const T *p = x.data<const T>();
  T *out = a.out.data<T>();
  bool equalNan = a.arg(0);
  if (n == 0 || m == 0)
    return;
  // A branch per element (a store each element at a slot that depends on
  // the last one's comparison took 119 us for 10^5 distinct float64, the
  // branch 67): np.unique keeps the first of equal values, as here.
  int64_t k = 1;
  out[0] = p[0];
  for (int64_t i = 1; i < n && k < m; ++i)
    if (!sameValue(p[(i - 1) * st], p[i * st], equalNan))
      out[k++] = p[i * st];
}

} // namespace

// The entry points of this file, each defined for every element type.
#define CPN_SORTING(X)                                                         \
  X(sort)                                                                      \
  X(argsort) X(partition) X(searchsorted) X(unique_count) X(unique_values)
CPN_SORTING(CPN_DEFINE_ALL)

namespace cpnrt {
std::vector<cpn_lib_entry> algorithmFunctions() {
  std::vector<cpn_lib_entry> t = {CPN_SORTING(CPN_ROWS)};
  for (std::vector<cpn_lib_entry> (*part)() :
       {lib::indexingFunctions, lib::scanFunctions})
    for (const cpn_lib_entry &e : part())
      t.push_back(e);
  return t;
}
} // namespace cpnrt
#undef CPN_SORTING
