//===- Blas.h - BLAS entry points called by compiled kernels ----*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_BLAS_H
#define CPNRT_BLAS_H

#include <cstdint>
#include <string>

namespace cpnrt {
/// Matrix-vector products that took the symmetric path (for tests and
/// cpnumeric.stats()).
struct BlasStats {
  uint64_t symmetryChecks = 0;    // matrices checked (one read each)
  uint64_t symmetricProducts = 0; // products that read one triangle
};
BlasStats blasStats();
void resetBlasStats();

/// The BLAS/LAPACK library the runtime calls, as it describes itself
/// (cpnumeric.show_config()).
struct BlasConfig {
  std::string library;  // the package it comes from
  std::string config;   // its build: version, integer size, options
  std::string coreName; // the CPU kernels it chose at load time
  int threads = 0;      // its thread pool
};
BlasConfig blasConfig();

/// C = A @ B (C row-major, m x n, with row stride ldc), as cpn_gemm_f64/f32
/// compute it, on the calling thread alone and with the floating-point
/// exception flags cleared first: false when the product raised overflow,
/// invalid, division by zero or underflow (C is then written but the caller
/// computes the product again where such exceptions are reported, as
/// NumPy's matmul reports them). For small products run at once (the eager
/// path of `@`): nothing is queued, no thread is woken.
bool gemmNow(bool f64, const void *a, int64_t aRs, int64_t aCs, const void *b,
             int64_t bRs, int64_t bCs, void *c, int64_t ldc, int64_t m,
             int64_t n, int64_t k);
} // namespace cpnrt

extern "C" {
/// C = A @ B (C += A @ B with `accumulate`) for strided row/column views given
/// as (aligned pointer as an integer, element offset, row stride, column
/// stride), with A M×K, B K×N.
/// Called by JIT-compiled code (see the cpn-matmul-to-blas pass).
void cpn_gemm_f64(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs, int64_t b,
                  int64_t bOff, int64_t bRs, int64_t bCs, int64_t c,
                  int64_t cOff, int64_t cRs, int64_t cCs, int64_t m, int64_t n,
                  int64_t k, int64_t accumulate);
void cpn_gemm_f32(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs, int64_t b,
                  int64_t bOff, int64_t bRs, int64_t bCs, int64_t c,
                  int64_t cOff, int64_t cRs, int64_t cCs, int64_t m, int64_t n,
                  int64_t k, int64_t accumulate);
}

#endif // CPNRT_BLAS_H
