//===- Fft.cpp - discrete Fourier transforms for compiled kernels ---------===//
//
// Part of cpnumeric's runtime (libcpnrt). FFTW computes one-dimensional
// transforms along the last axis of (P, N) views, with the calling convention
// of cpnrt/Lapack.h:
//   cpn_lib_fft_c8/c16    in0 (P, N) complex -> out (P, N) complex;
//                         args: inverse (0/1), norm
//   cpn_lib_rfft_f4/f8    in0 (P, N) real -> out (P, N/2 + 1) complex; args:
//   norm cpn_lib_irfft_c8/c16  in0 (P, N/2 + 1) complex -> out (P, N) real;
//                         args: N, norm
// norm is NumPy's: 0 "backward" (1/N on the inverse), 1 "ortho" (1/sqrt(N)
// both ways), 2 "forward" (1/N on the forward transform). Rows are copied
// into aligned buffers, so inputs may have any strides; plans (FFTW_ESTIMATE,
// made once per length under a lock, as FFTW's planner is not thread-safe)
// are executed on several threads' rows at once.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "LibCall.h"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace {
using cpnrt::lib::Array;
using cpnrt::lib::Call;

enum class Kind { C2C, R2C, C2R };

/// FFTW's API in one precision.
template <typename F> struct Fftw;
template <> struct Fftw<double> {
  using Plan = fftw_plan;
  using Cpx = fftw_complex;
  static void *alloc(size_t n) { return fftw_malloc(n); }
  static void free(void *p) { fftw_free(p); }
  static Plan plan(Kind k, int n, int sign, void *in, void *out) {
    unsigned flags = FFTW_ESTIMATE;
    if (k == Kind::C2C)
      return fftw_plan_dft_1d(n, (Cpx *)in, (Cpx *)out, sign, flags);
    if (k == Kind::R2C)
      return fftw_plan_dft_r2c_1d(n, (double *)in, (Cpx *)out, flags);
    return fftw_plan_dft_c2r_1d(n, (Cpx *)in, (double *)out, flags);
  }
  static void run(Kind k, Plan p, void *in, void *out) {
    if (k == Kind::C2C)
      fftw_execute_dft(p, (Cpx *)in, (Cpx *)out);
    else if (k == Kind::R2C)
      fftw_execute_dft_r2c(p, (double *)in, (Cpx *)out);
    else
      fftw_execute_dft_c2r(p, (Cpx *)in, (double *)out);
  }
};
template <> struct Fftw<float> {
  using Plan = fftwf_plan;
  using Cpx = fftwf_complex;
  static void *alloc(size_t n) { return fftwf_malloc(n); }
  static void free(void *p) { fftwf_free(p); }
  static Plan plan(Kind k, int n, int sign, void *in, void *out) {
    unsigned flags = FFTW_ESTIMATE;
    if (k == Kind::C2C)
      return fftwf_plan_dft_1d(n, (Cpx *)in, (Cpx *)out, sign, flags);
    if (k == Kind::R2C)
      return fftwf_plan_dft_r2c_1d(n, (float *)in, (Cpx *)out, flags);
    return fftwf_plan_dft_c2r_1d(n, (Cpx *)in, (float *)out, flags);
  }
  static void run(Kind k, Plan p, void *in, void *out) {
    if (k == Kind::C2C)
      fftwf_execute_dft(p, (Cpx *)in, (Cpx *)out);
    else if (k == Kind::R2C)
      fftwf_execute_dft_r2c(p, (float *)in, (Cpx *)out);
    else
      fftwf_execute_dft_c2r(p, (Cpx *)in, (float *)out);
  }
};

/// An FFTW-aligned buffer.
template <typename F> struct Buffer {
  void *p;
  explicit Buffer(size_t bytes)
      : p(Fftw<F>::alloc(std::max<size_t>(bytes, 16))) {}
  ~Buffer() { Fftw<F>::free(p); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

std::mutex planLock; // FFTW's planner is not thread-safe

/// The plan of a length-n transform, made once (plans live as long as the
/// process: a handful of lengths per program).
template <typename F> typename Fftw<F>::Plan planFor(Kind k, int n, int sign) {
  static std::map<std::tuple<Kind, int, int>, typename Fftw<F>::Plan> plans;
  std::lock_guard<std::mutex> guard(planLock);
  auto key = std::make_tuple(k, n, sign);
  auto it = plans.find(key);
  if (it != plans.end())
    return it->second;
  size_t cpx = sizeof(F) * 2 * (n + 1);
  Buffer<F> in(cpx), out(cpx);
  auto plan = Fftw<F>::plan(k, n, sign, in.p, out.p);
  plans.emplace(key, plan);
  return plan;
}

/// NumPy's scale factor of a transform of logical length n.
double scale(int64_t norm, int64_t n, bool inverse) {
  if (norm == 1)
    return 1.0 / std::sqrt(double(n));
  return (norm == 2) != inverse ? 1.0 / double(n) : 1.0;
}

/// Transforms each row of `x` into the matching row of `c.out`: In and Out
/// are the element types (float, double or their std::complex), n the
/// logical length.
template <typename F, typename In, typename Out>
void transform(const Call &c, Kind kind, int64_t n, bool inverse,
               int64_t norm) {
  const Array &x = c.in[0];
  int64_t rows = x.size(0), inLen = x.size(1), outLen = c.out.size(1);
  Out *out = c.out.data<Out>();
  F s = F(scale(norm, n, inverse));
  auto plan = planFor<F>(kind, int(n), inverse ? FFTW_BACKWARD : FFTW_FORWARD);
  double work = 5.0 * double(n) * std::log2(double(std::max<int64_t>(n, 2)));
  // FFTW runs one thread per row: only rows are spread over threads.
  cpnrt::lib::forBatch(rows, std::min(work, 1e6), [&](int64_t p) {
    Buffer<F> inBuf(sizeof(In) * std::max(inLen, n) + 2 * sizeof(F)),
        outBuf(sizeof(F) * 2 * (n / 2 + 1) + sizeof(Out) * n);
    In *src = static_cast<In *>(inBuf.p);
    for (int64_t j = 0; j < inLen; ++j)
      src[j] = x.el<In>(x.offset + p * x.strides[0] + j * x.strides[1]);
    Fftw<F>::run(kind, plan, inBuf.p, outBuf.p);
    const Out *dst = static_cast<const Out *>(outBuf.p);
    for (int64_t j = 0; j < outLen; ++j)
      out[p * outLen + j] = dst[j] * s;
  });
}

template <typename F> void fft(const Call &c) {
  using C = std::complex<F>;
  transform<F, C, C>(c, Kind::C2C, c.in[0].size(1), c.arg(0) != 0, c.arg(1));
}
template <typename F> void rfft(const Call &c) {
  transform<F, F, std::complex<F>>(c, Kind::R2C, c.in[0].size(1), false,
                                   c.arg(0));
}
template <typename F> void irfft(const Call &c) {
  transform<F, std::complex<F>, F>(c, Kind::C2R, c.arg(0), true, c.arg(1));
}
} // namespace

#define CPN_FFT_ENTRY(name, suffix, F)                                         \
  extern "C" void cpn_lib_##name##_##suffix(int64_t m, int64_t o, int64_t a,   \
                                            int64_t b, int64_t c) {            \
    name<F>(Call(m, o, a, b, c));                                              \
  }
CPN_FFT_ENTRY(fft, c8, float)
CPN_FFT_ENTRY(fft, c16, double)
CPN_FFT_ENTRY(rfft, f4, float)
CPN_FFT_ENTRY(rfft, f8, double)
CPN_FFT_ENTRY(irfft, c8, float)
CPN_FFT_ENTRY(irfft, c16, double)
#undef CPN_FFT_ENTRY

namespace cpnrt {
std::vector<cpn_lib_entry> fftFunctions() {
  return {{"cpn_lib_fft_c8", &cpn_lib_fft_c8},
          {"cpn_lib_fft_c16", &cpn_lib_fft_c16},
          {"cpn_lib_rfft_f4", &cpn_lib_rfft_f4},
          {"cpn_lib_rfft_f8", &cpn_lib_rfft_f8},
          {"cpn_lib_irfft_c8", &cpn_lib_irfft_c8},
          {"cpn_lib_irfft_c16", &cpn_lib_irfft_c16}};
}
} // namespace cpnrt
