//===- Algorithms.cpp - sorting, searching, gathering for compiled kernels ===//
//
// Part of cpnumeric's runtime (libcpnrt). Entry points `cpn_lib_<name>_<t>`
// (t: b1 i1 i2 i4 i8 u1 u2 u4 u8 f4 f8 c8 c16, the element type of the first
// input; float16 calls the f4 ones on widened values)
// with the calling convention of cpnrt/Lapack.h. Rows are the last axis of
// (P, N) views; orderings put NaN last, as NumPy does. Errors (an index out
// of bounds) go to the per-thread slot the kernel's task raises.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "LibCall.h"
#include "Sort.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace {
using View = cpnrt::lib::Array;
using Args = cpnrt::lib::Call;

template <typename T> bool isNaN(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  return false;
}
/// NumPy's order: NaN after every number.
template <typename T> bool less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  return a < b;
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

/// Gathers of at least this many elements per thread are split over threads.
constexpr int64_t kGatherPerThread = int64_t(1) << 16;

/// fn(lo, hi, bad) over [0, n) split between threads when there are at
/// least `elements` x kGatherPerThread; fn reports an index out of bounds
/// through bad(i) and stops. The first bad index is returned (or nullopt) so
/// that the calling thread, whose error slot the task reads, raises it.
template <typename F>
std::optional<int64_t> gatherOnThreads(int64_t n, int64_t elements, F fn) {
  int64_t t = cpnrt::lib::threadsFor(elements, kGatherPerThread,
                                     std::min(cpnrt::lib::maxThreads(), n));
  std::atomic<bool> failed{false};
  std::atomic<int64_t> badIndex{0};
  cpnrt::lib::onThreads(t, [&](int64_t c) {
    fn(n * c / t, n * (c + 1) / t, [&](int64_t i) {
      if (!failed.exchange(true))
        badIndex = i;
    });
  });
  if (failed)
    return badIndex.load();
  return std::nullopt;
}

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
  gatherOnThreads(m, m * 8, [&](int64_t lo, int64_t hi, auto) {
    auto cmp = [](T x, T y) { return less(x, y); };
    for (int64_t i = lo; i < hi; ++i) {
      T x = v[i * vs];
      const T *it = right ? std::upper_bound(sorted, sorted + n, x, cmp)
                          : std::lower_bound(sorted, sorted + n, x, cmp);
      out[i] = it - sorted;
    }
  });
}

/// Whether index i of an axis of size n is valid under NumPy's mode, fixing
/// it (wrap, clip, negative); no error is set (see fixIndex).
inline bool indexOk(int64_t &i, int64_t n, int64_t mode) {
  if (mode == 1 && n)
    i = ((i % n) + n) % n;
  else if (mode == 2)
    i = std::clamp<int64_t>(i, 0, std::max<int64_t>(n - 1, 0));
  else if (i < -n || i >= n)
    return false;
  else if (i < 0)
    i += n;
  return true;
}

/// Calls `loop(fix)` with `fix(i)` = indexOk(i, n, mode) specialized for the
/// mode (clip, wrap, or raise with negative indices from the end), so that a
/// loop over many indices tests no mode per element.
template <typename F> auto withIndexFix(int64_t n, int64_t mode, F loop) {
  if (mode == 2 && n)
    return loop([n](int64_t &i) {
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
      return true;
    });
  if (mode == 1 && n)
    return loop([n](int64_t &i) {
      i = ((i % n) + n) % n;
      return true;
    });
  return loop([n](int64_t &i) {
    if (static_cast<uint64_t>(i + n) >= static_cast<uint64_t>(2 * n))
      return false;
    i += i < 0 ? n : 0;
    return true;
  });
}

/// Index `i` of an axis of size n under NumPy's mode (args: 0 raise, 1 wrap,
/// 2 clip); false (and the error set) when out of bounds in raise mode.
bool fixIndex(int64_t &i, int64_t n, int64_t mode, int64_t axis) {
  int64_t raw = i;
  if (indexOk(i, n, mode))
    return true;
  cpnrt::setKernelError("IndexError: index " + std::to_string(raw) +
                        " is out of bounds for axis " + std::to_string(axis) +
                        " with size " + std::to_string(n));
  return false;
}

/// take: in0 a (P, N, Q), in1 indices (K) int64 -> out (P, K, Q);
/// args = mode, axis (for messages). Split over threads by index.
template <typename T> void take(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1];
  int64_t P = x.size(0), N = x.size(1), Q = x.size(2), K = ind.count();
  int64_t mode = a.arg(0), axis = a.arg(1);
  T *out = a.out.data<T>();
  const int64_t *idx = ind.rank() == 1 && ind.strides[0] == 1
                           ? ind.data<const int64_t>()
                           : nullptr;
  if (idx && P == 1 && Q == 1) {
    // One element per index: a tight loop per mode with everything in
    // registers, so that many of its random loads are in flight at once (the
    // general loop below held about a third as many).
    const T *src = x.data<const T>();
    const int64_t step = x.strides[1];
    auto gather = [&](auto fix) {
      return gatherOnThreads(K, K, [&](int64_t lo, int64_t hi, auto fail) {
        const T *const from = src;
        const int64_t *const at = idx;
        T *const to = out;
        const int64_t s = step;
        auto fixLocal = fix;
        for (int64_t k = lo; k < hi; ++k) {
          int64_t i = at[k];
          if (!fixLocal(i)) [[unlikely]]
            return fail(at[k]);
          to[k] = from[i * s];
        }
      });
    };
    std::optional<int64_t> bad = withIndexFix(N, mode, gather);
    if (bad)
      fixIndex(*bad, N, mode, axis);
    return;
  }
  auto bad =
      gatherOnThreads(K, K * P * Q, [&](int64_t lo, int64_t hi, auto fail) {
        for (int64_t k = lo; k < hi; ++k) {
          int64_t raw = idx ? idx[k] : ind.el<int64_t>(ind.at(k)), i = raw;
          if (!indexOk(i, N, mode))
            return fail(raw);
          const T *from = x.data<const T>() + i * x.strides[1];
          if (P == 1 && Q == 1) {
            out[k] = *from;
            continue;
          }
          for (int64_t p = 0; p < P; ++p)
            for (int64_t q = 0; q < Q; ++q)
              out[(p * K + k) * Q + q] =
                  from[p * x.strides[0] + q * x.strides[2]];
        }
      });
  if (bad)
    fixIndex(*bad, N, mode, axis);
}

/// take_along: in0 a (P, N, Q), in1 indices (P, K, Q) int64 -> out (P, K, Q).
/// Split over threads by row p (or by k when there is one row).
template <typename T> void take_along(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1];
  int64_t P = ind.size(0), K = ind.size(1), Q = ind.size(2), N = x.size(1);
  int64_t axis = a.arg(0);
  T *out = a.out.data<T>();
  auto one = [&](int64_t p, int64_t k, int64_t q, auto fail) {
    int64_t raw = ind.el<int64_t>(ind.offset + p * ind.strides[0] +
                                  k * ind.strides[1] + q * ind.strides[2]),
            i = raw;
    if (!indexOk(i, N, 0)) {
      fail(raw);
      return false;
    }
    out[(p * K + k) * Q + q] = x.el<T>(x.offset + p * x.strides[0] +
                                       i * x.strides[1] + q * x.strides[2]);
    return true;
  };
  std::optional<int64_t> bad;
  if (P > 1)
    bad = gatherOnThreads(P, P * K * Q, [&](int64_t lo, int64_t hi, auto fail) {
      for (int64_t p = lo; p < hi; ++p)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t q = 0; q < Q; ++q)
            if (!one(p, k, q, fail))
              return;
    });
  else
    bad = gatherOnThreads(K, K * Q, [&](int64_t lo, int64_t hi, auto fail) {
      for (int64_t k = lo; k < hi; ++k)
        for (int64_t q = 0; q < Q; ++q)
          if (!one(0, k, q, fail))
            return;
    });
  if (bad)
    fixIndex(*bad, N, 0, axis);
}

/// The selected elements of [0, n) written in order by several threads when
/// n is large: count(lo, hi) says how many chunk [lo, hi) selects, and
/// write(lo, hi, k) writes them from output position k (the counts of the
/// chunks before it).
template <typename Count, typename Write>
void selectInChunks(int64_t n, Count count, Write write) {
  int64_t t = cpnrt::lib::threadsFor(n, 4 * kGatherPerThread);
  std::vector<int64_t> start(t + 1, 0);
  if (t > 1)
    cpnrt::lib::onThreads(t, [&](int64_t c) {
      start[c + 1] = count(n * c / t, n * (c + 1) / t);
    });
  std::partial_sum(start.begin(), start.end(), start.begin());
  cpnrt::lib::onThreads(
      t, [&](int64_t c) { write(n * c / t, n * (c + 1) / t, start[c]); });
}

/// emit(i) for each i in [lo, lo + 64 * whole blocks) where test(i), in
/// order: 64 tests make a word, then its set bits are visited (a branch per
/// element mispredicts on random data). Returns where the blocks end.
template <typename Test, typename Emit>
int64_t forEachSetIn64s(int64_t lo, int64_t hi, Test test, Emit emit) {
  for (; lo + 64 <= hi; lo += 64) {
    uint64_t bits = 0;
    for (int b = 0; b < 64; ++b)
      bits |= uint64_t(test(lo + b)) << b;
    for (; bits; bits &= bits - 1)
      emit(lo + __builtin_ctzll(bits));
  }
  return lo;
}

/// compress: in0 a (N), in1 mask (N) bool -> out (count): a where mask (the
/// count was computed before, so out has exactly that many elements).
template <typename T> void compress(const Args &a) {
  const View &x = a.in[0], &m = a.in[1];
  T *out = a.out.data<T>();
  int64_t n = x.count(), limit = a.out.count();
  bool flat = x.rank() == 1 && m.rank() == 1 && m.strides[0] == 1;
  selectInChunks(
      n,
      [&](int64_t lo, int64_t hi) {
        int64_t count = 0;
        for (int64_t i = lo; i < hi; ++i)
          count += m.el<uint8_t>(m.at(i)) != 0;
        return count;
      },
      [&](int64_t i, int64_t hi, int64_t k) {
        if (flat) {
          const uint8_t *mp = m.data<const uint8_t>();
          const T *xp = x.data<const T>();
          int64_t xs = x.strides[0];
          i = forEachSetIn64s(
              i, hi, [&](int64_t j) { return mp[j] != 0; },
              [&](int64_t j) { out[k++] = xp[j * xs]; });
        }
        for (; i < hi && k < limit; ++i)
          if (m.el<uint8_t>(m.at(i)))
            out[k++] = x.el<T>(x.at(i));
      });
}

/// nonzero: in0 a (any shape) -> out (count, ndim) int64: the multi-indices
/// of the nonzero elements in row-major order.
template <typename T> void nonzero(const Args &a) {
  const View &x = a.in[0];
  int64_t *out = a.out.data<int64_t>();
  int64_t nd = static_cast<int64_t>(x.sizes.size()), n = x.count();
  int64_t limit = a.out.size(0);
  const T *xp = x.data<const T>(); // 1-D: read through a pointer
  int64_t xs = nd == 1 ? x.strides[0] : 0;
  selectInChunks(
      n,
      [&](int64_t lo, int64_t hi) {
        int64_t count = 0;
        if (nd == 1) // a plain loop over a pointer: vectorized
          for (int64_t i = lo; i < hi; ++i)
            count += xp[i * xs] != T(0);
        else
          for (int64_t i = lo; i < hi; ++i)
            count += x.el<T>(x.at(i)) != T(0);
        return count;
      },
      [&](int64_t i, int64_t hi, int64_t k) {
        if (nd == 1)
          i = forEachSetIn64s(
              i, hi, [&](int64_t j) { return xp[j * xs] != T(0); },
              [&](int64_t j) { out[k++] = j; });
        for (; i < hi && k < limit; ++i) {
          if (x.el<T>(x.at(i)) == T(0))
            continue;
          int64_t rest = i;
          for (int64_t d = nd - 1; d >= 0; --d) {
            out[k * nd + d] = rest % x.sizes[d];
            rest /= x.sizes[d];
          }
          ++k;
        }
      });
}

/// The operations of the scans (cumsum, cumprod, and the accumulations of
/// maximum and minimum: NumPy's loops, NaN propagates, complex numbers are
/// ordered by real part, then imaginary part) and of ufunc.at (those and
/// Sub, which no scan takes: it is not associative), fmax and fmin (NaN
/// ignored unless both are), and the bitwise ones (integer types only). The
/// logical ones are maximum (or), minimum (and) and bitwise xor of bool (one
/// byte, 0 or 1).
enum class ScanOp { Sum, Prod, Max, Min, Sub, FMax, FMin, And, Or, Xor };

template <typename T> bool anyNaN(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  return false;
}
template <typename F> bool anyNaN(std::complex<F> v) {
  return v.real() != v.real() || v.imag() != v.imag();
}
/// a >= b (complex: lexicographic, as NumPy's CGE).
template <typename T> bool geq(T a, T b) { return a >= b; }
template <typename F> bool geq(std::complex<F> a, std::complex<F> b) {
  return a.real() > b.real() || (a.real() == b.real() && a.imag() >= b.imag());
}

/// a * b as NumPy's loops multiply: complex numbers by (ac - bd) + (ad + bc)i,
/// without std::complex's recovery of infinities from NaN parts.
/// Integers wrap around as NumPy's loops do (in unsigned arithmetic:
/// signed overflow is undefined in C++; UBSan found int64 cumprod's).
template <typename T> T mulLikeNumPy(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<decltype(+a)>;
    return T(U(a) * U(b));
  } else {
    return T(a * b);
  }
}
template <typename T> T addWrapping(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<decltype(+a)>;
    return T(U(a) + U(b));
  } else {
    return T(a + b);
  }
}
template <typename T> T subWrapping(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<decltype(+a)>;
    return T(U(a) - U(b));
  } else {
    return T(a - b);
  }
}
template <typename F>
std::complex<F> mulLikeNumPy(std::complex<F> a, std::complex<F> b) {
  return {a.real() * b.real() - a.imag() * b.imag(),
          a.real() * b.imag() + a.imag() * b.real()};
}

/// op(acc, x), acc being the scan so far (NumPy's loops: maximum is a >= b
/// or a is NaN ? a : b, minimum a <= b or a is NaN ? a : b, fmax a >= b or
/// b is NaN ? a : b, fmin a <= b or b is NaN ? a : b).
template <ScanOp Op, typename T> inline T combine(T acc, T x) {
  if constexpr (Op == ScanOp::Sum)
    return addWrapping(acc, x);
  else if constexpr (Op == ScanOp::Sub)
    return subWrapping(acc, x);
  else if constexpr (Op == ScanOp::Prod)
    return mulLikeNumPy(acc, x);
  else if constexpr (Op == ScanOp::Max)
    return geq(acc, x) || anyNaN(acc) ? acc : x;
  else if constexpr (Op == ScanOp::Min)
    return geq(x, acc) || anyNaN(acc) ? acc : x;
  else if constexpr (Op == ScanOp::FMax)
    return geq(acc, x) || anyNaN(x) ? acc : x;
  else if constexpr (Op == ScanOp::FMin)
    return geq(x, acc) || anyNaN(x) ? acc : x;
  else if constexpr (Op == ScanOp::And)
    return T(acc & x);
  else if constexpr (Op == ScanOp::Or)
    return T(acc | x);
  else
    return T(acc ^ x);
}

/// Elements [lo, hi) of a row's scan into out, starting from *acc (from the
/// range's first element when acc is null, as NumPy's accumulate copies it);
/// returns the last value. The range is not empty.
template <typename T, ScanOp Op>
T scanRange(const T *src, int64_t stride, int64_t lo, int64_t hi,
            const T *start, T *out) {
  T acc = start ? combine<Op>(*start, src[lo * stride]) : src[lo * stride];
  out[lo] = acc;
  if (stride == 1) // contiguous: a loop the compiler keeps tight
    for (int64_t j = lo + 1; j < hi; ++j)
      out[j] = acc = combine<Op>(acc, src[j]);
  else
    for (int64_t j = lo + 1; j < hi; ++j)
      out[j] = acc = combine<Op>(acc, src[j * stride]);
  return acc;
}

/// The total of elements [lo, hi) (no output; the range is not empty).
template <typename T, ScanOp Op>
T reduceRange(const T *src, int64_t stride, int64_t lo, int64_t hi) {
  T acc = src[lo * stride];
  for (int64_t j = lo + 1; j < hi; ++j)
    acc = combine<Op>(acc, src[j * stride]);
  return acc;
}

/// A row shorter than this per thread is scanned on one thread.
constexpr int64_t kScanPerThread = int64_t(1) << 18;

/// cumsum / cumprod / cummax / cummin / cumfmax / cumfmin (every type) and
/// cumand / cumor / cumxor (integer types): in0 (P, N) -> out (P, N) of the
/// same type. Many rows are shared out between threads; a long row is scanned in
/// two passes, each thread taking one chunk: the chunks' totals first, then
/// each chunk's scan from the total of the chunks before it. Integers (and
/// maximum and minimum) give NumPy's values exactly; float sums and products
/// differ from NumPy's one-pass loop in rounding only (each chunk's start is
/// a sum of chunk totals, as in a pairwise sum).
template <typename T, ScanOp Op> void scan(const Args &a) {
  const View &x = a.in[0];
  T *out = a.out.data<T>();
  int64_t P = x.size(0), N = x.size(1), threads = cpnrt::lib::maxThreads();
  if (N == 0)
    return;
  const T *base = x.data<const T>();
  auto row = [&](int64_t p) {
    scanRange<T, Op>(base + p * x.strides[0], x.strides[1], 0, N, nullptr,
                     out + p * N);
  };
  int64_t t = std::min(threads, N / kScanPerThread);
  if (t <= 1 || P > 1) {
    int64_t rowsT =
        cpnrt::lib::threadsFor(P * N, kScanPerThread, std::min(threads, P));
    cpnrt::lib::onThreads(rowsT, [&](int64_t c) {
      for (int64_t p = P * c / rowsT; p < P * (c + 1) / rowsT; ++p)
        row(p);
    });
    return;
  }
  std::vector<T> totals(t);
  const T *src = base;
  int64_t stride = x.strides[1];
  cpnrt::lib::onThreads(t, [&](int64_t c) {
    if (c + 1 < t) // the last chunk's total is never needed
      totals[c] = reduceRange<T, Op>(src, stride, N * c / t, N * (c + 1) / t);
  });
  cpnrt::lib::onThreads(t, [&](int64_t c) {
    T acc = totals[0];
    for (int64_t k = 1; k < c; ++k)
      acc = combine<Op>(acc, totals[k]);
    scanRange<T, Op>(src, stride, N * c / t, N * (c + 1) / t,
                     c ? &acc : nullptr, out);
  });
}
template <typename T> void cumsum(const Args &a) { scan<T, ScanOp::Sum>(a); }
template <typename T> void cumprod(const Args &a) { scan<T, ScanOp::Prod>(a); }
template <typename T> void cummax(const Args &a) { scan<T, ScanOp::Max>(a); }
template <typename T> void cummin(const Args &a) { scan<T, ScanOp::Min>(a); }
template <typename T> void cumfmax(const Args &a) { scan<T, ScanOp::FMax>(a); }
template <typename T> void cumfmin(const Args &a) { scan<T, ScanOp::FMin>(a); }
template <typename T> void cumand(const Args &a) { scan<T, ScanOp::And>(a); }
template <typename T> void cumor(const Args &a) { scan<T, ScanOp::Or>(a); }
template <typename T> void cumxor(const Args &a) { scan<T, ScanOp::Xor>(a); }

/// bincount: in0 x (N) int64 (non-negative, checked before), optionally in1
/// weights (N) of T -> out (M) of T: out[x[i]] += w[i] (or 1).
/// Counts without weights are split over threads, each with bins of its own
/// (integers: the same counts); weighted sums stay in NumPy's order.
template <typename T> void bincount(const Args &a) {
  const View &x = a.in[0];
  T *out = a.out.data<T>();
  int64_t m = a.out.count(), n = x.count();
  std::fill(out, out + m, T(0));
  int64_t t = cpnrt::lib::threadsFor(n, 4 * kGatherPerThread);
  if (a.in.size() == 1 && t > 1 && m <= n / 4) {
    std::vector<std::vector<T>> bins(t);
    cpnrt::lib::onThreads(t, [&](int64_t c) {
      std::vector<T> &mine = bins[c];
      mine.assign(m, T(0));
      T *bin = mine.data();
      const int64_t *xp = x.rank() == 1 ? x.data<const int64_t>() : nullptr;
      int64_t xs = x.rank() == 1 ? x.strides[0] : 0;
      for (int64_t i = n * c / t; i < n * (c + 1) / t; ++i) {
        int64_t b = xp ? xp[i * xs] : x.el<int64_t>(x.at(i));
        if (b >= 0 && b < m)
          bin[b] += T(1);
      }
    });
    for (const std::vector<T> &mine : bins)
      for (int64_t b = 0; b < m; ++b)
        out[b] += mine[b];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = x.el<int64_t>(x.at(i));
    if (b < 0 || b >= m)
      continue;
    out[b] += a.in.size() > 1 ? a.in[1].el<T>(a.in[1].at(i)) : T(1);
  }
}

/// out (n elements) = x, split over threads (contiguous: memcpy).
template <typename T> void copyAll(const View &x, T *out, int64_t n) {
  gatherOnThreads(n, n, [&](int64_t lo, int64_t hi, auto) {
    if (x.rank() == 1 && x.strides[0] == 1)
      std::memcpy(out + lo, x.data<const T>() + lo,
                  size_t(hi - lo) * sizeof(T));
    else
      for (int64_t i = lo; i < hi; ++i)
        out[i] = x.el<T>(x.at(i));
  });
}

/// out = in0, unless the output is in0 itself (cpn.libcall {in_place}: the
/// compiler found no later read of in0's old value and passed its buffer).
template <typename T> void startFromFirstInput(const Args &a) {
  const View &x = a.in[0];
  if (x.data<T>() == a.out.data<T>() && x.sizes == a.out.sizes &&
      x.strides == a.out.strides)
    return;
  copyAll<T>(x, a.out.data<T>(), x.count());
}

/// put: in0 a (N), in1 indices (K) int64, in2 values (K) -> out (N) = a
/// with out[indices[k]] = values[k] (later writes win); args = mode.
template <typename T> void put(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1], &v = a.in[2];
  T *out = a.out.data<T>();
  int64_t n = x.count(), k = ind.count();
  startFromFirstInput<T>(a); // the copy of the base
  // The writes in order, on one thread: later writes to an index win.
  int64_t vn = v.count();
  int64_t mode = a.arg(0);
  if (ind.rank() == 1 && v.rank() == 1 && vn >= k) {
    // Flat operands, one value per index: a tight loop per mode (random
    // stores; the loop must not stand between them and the memory system).
    const int64_t *ip = ind.data<const int64_t>();
    const T *vp = v.data<const T>();
    int64_t is = ind.strides[0], vs = v.strides[0];
    // Scatters into a destination larger than the caches are split by
    // destination: each thread reads every index and writes those in its
    // part of `out`, in order, so a repeated index still ends with its last
    // value. Into a cached destination one thread is faster (measured on 2
    // cores, 5e5 stores: 0.8 ms on one thread into 8 MB, 2.8 ms on two;
    // 5e6 into 80 MB: 35 ms on one, 24 ms on two).
    int64_t t = n * int64_t(sizeof(T)) < (int64_t(32) << 20)
                    ? 1
                    : cpnrt::lib::threadsFor(k, kGatherPerThread,
                                             cpnrt::lib::maxThreads());
    auto scatter = [&](auto fix) {
      std::atomic<int64_t> bad{-1};
      cpnrt::lib::onThreads(t, [&](int64_t c) {
        const uint64_t lo = uint64_t(n * c / t),
                       width = uint64_t(n * (c + 1) / t) - lo;
        T *const dstBase = out;
        const int64_t *const src = ip;
        const T *const vals = vp;
        const int64_t istep = is, vstep = vs, count = k;
        auto fixLocal = fix;
        // The other threads' elements land in `sink`, chosen by a mask: a
        // branch on a random index would be mispredicted half the time.
        T sink;
        const uintptr_t sinkAddr = reinterpret_cast<uintptr_t>(&sink);
        for (int64_t j = 0; j < count; ++j) {
          int64_t i = src[j * istep];
          if (!fixLocal(i)) [[unlikely]] {
            int64_t none = -1;
            bad.compare_exchange_strong(none, j);
            return;
          }
          if (t == 1) {
            dstBase[i] = vals[j * vstep];
            continue;
          }
          uintptr_t mine = -uintptr_t(uint64_t(i) - lo < width);
          uintptr_t at = reinterpret_cast<uintptr_t>(dstBase + i);
          *reinterpret_cast<T *>((at & mine) | (sinkAddr & ~mine)) =
              vals[j * vstep];
        }
      });
      if (int64_t j = bad.load(); j >= 0) {
        int64_t i = ip[j * is];
        fixIndex(i, n, mode, 0); // sets the error on the task's thread
      }
    };
    withIndexFix(n, mode, scatter);
    return;
  }
  if (ind.rank() == 1 && v.rank() == 1) { // flat operands, values cycled
    const int64_t *ip = ind.data<const int64_t>();
    const T *vp = v.data<const T>();
    int64_t is = ind.strides[0], vs = v.strides[0];
    for (int64_t j = 0, jv = 0; j < k && vn;
         ++j, jv = jv + 1 == vn ? 0 : jv + 1) {
      int64_t i = ip[j * is];
      if (!indexOk(i, n, mode)) [[unlikely]] {
        fixIndex(i, n, mode, 0); // sets the error
        return;
      }
      out[i] = vp[jv * vs];
    }
    return;
  }
  for (int64_t j = 0, jv = 0; j < k && vn;
       ++j, jv = jv + 1 == vn ? 0 : jv + 1) {
    int64_t i = ind.el<int64_t>(ind.at(j));
    if (!indexOk(i, n, mode)) [[unlikely]] {
      fixIndex(i, n, mode, 0);
      return;
    }
    out[i] = v.el<T>(v.at(jv));
  }
}

/// ufunc.at: in0 a (N), in1 indices (K) int64 in [0, N), in2 values (K) ->
/// out (N) = a with out[i_k] = op(out[i_k], v_k) for k in order, on one
/// thread (a repeated index takes each of its values in turn, as NumPy's
/// unbuffered loop).
template <typename T, ScanOp Op> void atOp(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1], &v = a.in[2];
  T *out = a.out.data<T>();
  int64_t n = x.count(), k = ind.count();
  startFromFirstInput<T>(a);
  if (ind.rank() == 1 && v.rank() == 1) { // flat operands: a tight loop
    const int64_t *ip = ind.data<const int64_t>();
    const T *vp = v.data<const T>();
    int64_t is = ind.strides[0], vs = v.strides[0];
    for (int64_t j = 0; j < k; ++j) {
      T &o = out[ip[j * is]];
      o = combine<Op>(o, vp[j * vs]);
    }
    return;
  }
  for (int64_t j = 0; j < k; ++j) {
    T &o = out[ind.el<int64_t>(ind.at(j))];
    o = combine<Op>(o, v.el<T>(v.at(j)));
  }
}
template <typename T> void at_add(const Args &a) { atOp<T, ScanOp::Sum>(a); }
template <typename T> void at_subtract(const Args &a) {
  atOp<T, ScanOp::Sub>(a);
}
template <typename T> void at_multiply(const Args &a) {
  atOp<T, ScanOp::Prod>(a);
}
template <typename T> void at_maximum(const Args &a) {
  atOp<T, ScanOp::Max>(a);
}
template <typename T> void at_minimum(const Args &a) {
  atOp<T, ScanOp::Min>(a);
}

} // namespace

// Element types by suffix (bool is one byte).
#define CPN_TYPES(X, name)                                                     \
  X(name, b1, uint8_t)                                                         \
  X(name, i1, int8_t)                                                          \
  X(name, i2, int16_t)                                                         \
  X(name, i4, int32_t)                                                         \
  X(name, i8, int64_t)                                                         \
  X(name, u1, uint8_t)                                                         \
  X(name, u2, uint16_t)                                                        \
  X(name, u4, uint32_t)                                                        \
  X(name, u8, uint64_t)                                                        \
  X(name, f4, float)                                                           \
  X(name, f8, double)                                                          \
  X(name, c8, std::complex<float>)                                             \
  X(name, c16, std::complex<double>)
// The entry points, each defined for every element type.
#define CPN_ALGORITHMS(X)                                                      \
  X(sort)                                                                      \
  X(argsort)                                                                   \
  X(partition)                                                                 \
  X(searchsorted)                                                              \
  X(take)                                                                      \
  X(take_along)                                                                \
  X(compress)                                                                  \
  X(nonzero)                                                                   \
  X(cumsum)                                                                    \
  X(cumprod)                                                                   \
  X(cummax)                                                                    \
  X(cummin)                                                                    \
  X(cumfmax)                                                                   \
  X(cumfmin)                                                                   \
  X(bincount)                                                                  \
  X(put)                                                                       \
  X(at_add)                                                                    \
  X(at_subtract)                                                               \
  X(at_multiply)                                                               \
  X(at_maximum)                                                                \
  X(at_minimum)
// The integer element types (bool included), for the bitwise scans.
#define CPN_INT_TYPES(X, name)                                                 \
  X(name, b1, uint8_t)                                                         \
  X(name, i1, int8_t)                                                          \
  X(name, i2, int16_t)                                                         \
  X(name, i4, int32_t)                                                         \
  X(name, i8, int64_t)                                                         \
  X(name, u1, uint8_t)                                                         \
  X(name, u2, uint16_t)                                                        \
  X(name, u4, uint32_t)                                                        \
  X(name, u8, uint64_t)
#define CPN_INT_ALGORITHMS(X) X(cumand) X(cumor) X(cumxor)
#define CPN_DEFINE(name, suffix, T)                                            \
  extern "C" void cpn_lib_##name##_##suffix(int64_t m, int64_t o, int64_t a,   \
                                            int64_t b, int64_t c) {            \
    name<T>(Args(m, o, a, b, c));                                              \
  }
#define CPN_DEFINE_ALL(name) CPN_TYPES(CPN_DEFINE, name)
#define CPN_DEFINE_INT(name) CPN_INT_TYPES(CPN_DEFINE, name)
CPN_ALGORITHMS(CPN_DEFINE_ALL)
CPN_INT_ALGORITHMS(CPN_DEFINE_INT)
#undef CPN_DEFINE_INT
#undef CPN_DEFINE_ALL
#undef CPN_DEFINE

#define CPN_ROW(name, suffix, T)                                               \
  {"cpn_lib_" #name "_" #suffix, &cpn_lib_##name##_##suffix},
#define CPN_ROWS(name) CPN_TYPES(CPN_ROW, name)
#define CPN_INT_ROWS(name) CPN_INT_TYPES(CPN_ROW, name)
namespace cpnrt {
std::vector<cpn_lib_entry> algorithmFunctions() {
  return {CPN_ALGORITHMS(CPN_ROWS) CPN_INT_ALGORITHMS(CPN_INT_ROWS)};
}
} // namespace cpnrt
#undef CPN_INT_ROWS
#undef CPN_ROWS
#undef CPN_ROW
#undef CPN_INT_ALGORITHMS
#undef CPN_ALGORITHMS
#undef CPN_INT_TYPES
#undef CPN_TYPES
