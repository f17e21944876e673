//===- Blas.cpp - OpenBLAS gemm for compiled kernels -----------------------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Blas.h"

#include <cblas.h>
#include <vector>

namespace {
/// A strided matrix operand as BLAS wants it: row-major with a leading
/// dimension, possibly transposed; other layouts are packed first.
template <typename T> struct Operand {
  const T *ptr;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
  std::vector<T> packed;

  Operand(int64_t base, int64_t off, int64_t rs, int64_t cs, int64_t rows,
          int64_t cols) {
    const T *p = reinterpret_cast<const T *>(base) + off;
    if (cs == 1 && rs >= std::max<int64_t>(1, cols)) {
      ptr = p, trans = CblasNoTrans, ld = rs;
    } else if (rs == 1 && cs >= std::max<int64_t>(1, rows)) {
      ptr = p, trans = CblasTrans, ld = cs;
    } else {
      packed.resize(std::max<int64_t>(1, rows * cols));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          packed[i * cols + j] = p[i * rs + j * cs];
      ptr = packed.data(), trans = CblasNoTrans, ld = std::max<int64_t>(1, cols);
    }
  }
};

template <typename T, typename Gemm>
void gemm(Gemm blas, int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
          int64_t b, int64_t bOff, int64_t bRs, int64_t bCs, int64_t c,
          int64_t cOff, int64_t cRs, int64_t cCs, int64_t m, int64_t n,
          int64_t k) {
  if (m == 0 || n == 0 || k == 0)
    return;
  Operand<T> A(a, aOff, aRs, aCs, m, k), B(b, bOff, bRs, bCs, k, n);
  T *C = reinterpret_cast<T *>(c) + cOff;
  if (cCs == 1 && cRs >= n) {
    blas(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld, B.ptr,
         B.ld, T(1), C, cRs);
    return;
  }
  std::vector<T> tmp(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      tmp[i * n + j] = C[i * cRs + j * cCs];
  blas(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld, B.ptr,
       B.ld, T(1), tmp.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      C[i * cRs + j * cCs] = tmp[i * n + j];
}
} // namespace

extern "C" void cpn_gemm_f64(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k) {
  gemm<double>(cblas_dgemm, a, aOff, aRs, aCs, b, bOff, bRs, bCs, c, cOff, cRs,
               cCs, m, n, k);
}

extern "C" void cpn_gemm_f32(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k) {
  gemm<float>(cblas_sgemm, a, aOff, aRs, aCs, b, bOff, bRs, bCs, c, cOff, cRs,
              cCs, m, n, k);
}
