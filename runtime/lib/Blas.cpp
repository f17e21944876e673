//===- Blas.cpp - OpenBLAS gemm for compiled kernels ----------------------===//
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
      ptr = packed.data(), trans = CblasNoTrans,
      ld = std::max<int64_t>(1, cols);
    }
  }
};

/// y += op(M) x for a matrix operand `mat` (rows x cols as the product sees
/// it) and strided vectors: matrix-vector products go to gemv, which streams
/// the matrix once, instead of a gemm with one column that packs it.
template <typename T, typename Gemv>
void gemv(Gemv blas, const Operand<T> &mat, int64_t rows, int64_t cols,
          const T *x, int64_t incx, T beta, T *y, int64_t incy) {
  bool stored = mat.trans == CblasNoTrans; // stored rows x cols
  blas(CblasRowMajor, mat.trans, stored ? rows : cols, stored ? cols : rows,
       T(1), mat.ptr, mat.ld, x, incx, beta, y, incy);
}

template <typename T, typename Gemm, typename Gemv>
void gemm(Gemm blas, Gemv blasv, int64_t a, int64_t aOff, int64_t aRs,
          int64_t aCs, int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
          int64_t c, int64_t cOff, int64_t cRs, int64_t cCs, int64_t m,
          int64_t n, int64_t k, int64_t accumulate) {
  T *C = reinterpret_cast<T *>(c) + cOff;
  T beta = accumulate ? T(1) : T(0);
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // C = 0 (or unchanged): an empty sum
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          C[i * cRs + j * cCs] = T(0);
    return;
  }
  const T *Ap = reinterpret_cast<const T *>(a) + aOff;
  const T *Bp = reinterpret_cast<const T *>(b) + bOff;
  if (n == 1 && bRs > 0 && cRs > 0) { // C[:, 0] += A @ B[:, 0]
    gemv(blasv, Operand<T>(a, aOff, aRs, aCs, m, k), m, k, Bp, bRs, beta, C,
         cRs);
    return;
  }
  if (m == 1 && aCs > 0 && cCs > 0) { // C[0, :] += B^T @ A[0, :]
    Operand<T> B(b, bOff, bRs, bCs, k, n);
    B.trans = B.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
    gemv(blasv, B, n, k, Ap, aCs, beta, C, cCs);
    return;
  }
  Operand<T> A(a, aOff, aRs, aCs, m, k), B(b, bOff, bRs, bCs, k, n);
  if (cCs == 1 && cRs >= n) {
    blas(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld, B.ptr,
         B.ld, beta, C, cRs);
    return;
  }
  std::vector<T> tmp(m * n);
  if (accumulate)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        tmp[i * n + j] = C[i * cRs + j * cCs];
  blas(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld, B.ptr, B.ld,
       beta, tmp.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      C[i * cRs + j * cCs] = tmp[i * n + j];
}
} // namespace

extern "C" void cpn_gemm_f64(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k,
                             int64_t accumulate) {
  gemm<double>(cblas_dgemm, cblas_dgemv, a, aOff, aRs, aCs, b, bOff, bRs, bCs,
               c, cOff, cRs, cCs, m, n, k, accumulate);
}

extern "C" void cpn_gemm_f32(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k,
                             int64_t accumulate) {
  gemm<float>(cblas_sgemm, cblas_sgemv, a, aOff, aRs, aCs, b, bOff, bRs, bCs, c,
              cOff, cRs, cCs, m, n, k, accumulate);
}
