//===- Scans.cpp - ufunc.accumulate and ufunc.at for compiled kernels -----===//
//
// Part of cpnumeric's runtime (libcpnrt). The entry points
// `cpn_lib_<name>_<t>` (see Algorithms.cpp) of the scans cumsum, cumprod,
// cummax, cummin, cumfmax, cumfmin (every element type) and cumand, cumor,
// cumxor (integer types), long rows split over threads, and of the ufunc.at
// scatters at_add, at_subtract, at_multiply, at_maximum, at_minimum, which
// combine values as NumPy's loops do.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "AlgorithmsInternal.h"
#include "LibCall.h"

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

namespace {
using cpnrt::lib::Args;
using cpnrt::lib::startFromFirstInput;
using cpnrt::lib::View;

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
/// a >= b (complex: lexicographic, as NumPy's CGE, where a NaN imaginary
/// part on either side makes `a.real > b.real` false: maximum(3, -inf+nanj)
/// is -inf+nanj).
template <typename T> bool geq(T a, T b) { return a >= b; }
template <typename F> bool geq(std::complex<F> a, std::complex<F> b) {
  return (a.real() > b.real() && a.imag() == a.imag() &&
          b.imag() == b.imag()) ||
         (a.real() == b.real() && a.imag() >= b.imag());
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
/// same type. Many rows are shared out between threads; a long row is scanned
/// in two passes, each thread taking one chunk: the chunks' totals first, then
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
/// A float16 scan on float32 values (widened exactly): NumPy's half loops
/// store every partial sum or product as float16, so each step rounds (and
/// overflows) there. Rows in parallel, each in order.
template <ScanOp Op> void scanHalf(const Args &a) {
  const View &x = a.in[0];
  float *out = a.out.data<float>();
  int64_t P = x.size(0), N = x.size(1);
  if (N == 0)
    return;
  const float *base = x.data<const float>();
  auto half = [](float v) { return static_cast<float>(static_cast<_Float16>(v)); };
  int64_t rowsT = cpnrt::lib::threadsFor(P * N, kScanPerThread,
                                         std::min(cpnrt::lib::maxThreads(), P));
  cpnrt::lib::onThreads(rowsT, [&](int64_t c) {
    for (int64_t p = P * c / rowsT; p < P * (c + 1) / rowsT; ++p) {
      const float *src = base + p * x.strides[0];
      float *o = out + p * N;
      float acc = o[0] = src[0];
      for (int64_t j = 1; j < N; ++j)
        o[j] = acc = half(combine<Op>(acc, src[j * x.strides[1]]));
    }
  });
}
void cumsum_half(const Args &a) { scanHalf<ScanOp::Sum>(a); }
void cumprod_half(const Args &a) { scanHalf<ScanOp::Prod>(a); }

template <typename T> void cumsum(const Args &a) { scan<T, ScanOp::Sum>(a); }
template <typename T> void cumprod(const Args &a) { scan<T, ScanOp::Prod>(a); }
template <typename T> void cummax(const Args &a) { scan<T, ScanOp::Max>(a); }
template <typename T> void cummin(const Args &a) { scan<T, ScanOp::Min>(a); }
template <typename T> void cumfmax(const Args &a) { scan<T, ScanOp::FMax>(a); }
template <typename T> void cumfmin(const Args &a) { scan<T, ScanOp::FMin>(a); }
template <typename T> void cumand(const Args &a) { scan<T, ScanOp::And>(a); }
template <typename T> void cumor(const Args &a) { scan<T, ScanOp::Or>(a); }
template <typename T> void cumxor(const Args &a) { scan<T, ScanOp::Xor>(a); }

/// ufunc.at: in0 a (N), in1 indices (K) int64 in [0, N), in2 values (K),
/// or one value (0-d) for every index -> out (N) = a with out[i_k] =
/// op(out[i_k], v_k) for k in order, on one thread (a repeated index takes
/// each of its values in turn, as NumPy's unbuffered loop).
template <typename T, ScanOp Op> void atOp(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1], &v = a.in[2];
  T *out = a.out.data<T>();
  int64_t n = x.count(), k = ind.count();
  startFromFirstInput<T>(a);
  if (v.rank() == 0) { // one value (`h[idx] += 1.0`), read once
    T value = v.el<T>(v.at(0));
    if (ind.rank() == 1) {
      const int64_t *ip = ind.data<const int64_t>();
      int64_t is = ind.strides[0];
      for (int64_t j = 0; j < k; ++j) {
        T &o = out[ip[j * is]];
        o = combine<Op>(o, value);
      }
      return;
    }
    for (int64_t j = 0; j < k; ++j) {
      T &o = out[ind.el<int64_t>(ind.at(j))];
      o = combine<Op>(o, value);
    }
    return;
  }
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

// The entry points of this file: the scans and ufunc.at for every element
// type, the bitwise scans for the integer ones.
#define CPN_SCANS(X)                                                           \
  X(cumsum)                                                                    \
  X(cumprod)                                                                   \
  X(cummax)                                                                    \
  X(cummin)                                                                    \
  X(cumfmax)                                                                   \
  X(cumfmin)                                                                   \
  X(at_add)                                                                    \
  X(at_subtract)                                                               \
  X(at_multiply)                                                               \
  X(at_maximum)                                                                \
  X(at_minimum)
#define CPN_INT_SCANS(X) X(cumand) X(cumor) X(cumxor)
CPN_SCANS(CPN_DEFINE_ALL)
CPN_INT_SCANS(CPN_DEFINE_INT)
extern "C" void cpn_lib_cumsum_half_f4(int64_t m, int64_t o, int64_t a,
                                       int64_t b, int64_t c) {
  cumsum_half(cpnrt::lib::Args(m, o, a, b, c));
}
extern "C" void cpn_lib_cumprod_half_f4(int64_t m, int64_t o, int64_t a,
                                        int64_t b, int64_t c) {
  cumprod_half(cpnrt::lib::Args(m, o, a, b, c));
}

std::vector<cpn_lib_entry> cpnrt::lib::scanFunctions() {
  return {CPN_SCANS(CPN_ROWS) CPN_INT_SCANS(CPN_INT_ROWS)
              CPN_ROW(cumsum_half, f4, float) CPN_ROW(cumprod_half, f4, float)};
}
#undef CPN_INT_SCANS
#undef CPN_SCANS
