//===- Blas.cpp - OpenBLAS gemm for compiled kernels ----------------------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Blas.h"
#include "cpnrt/Facts.h"

#include "cpnrt/Lapack.h"

#include "LibCall.h"
#include "OpenBlas.h"
#include "Symmetry.h"

#include <cfenv>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
std::atomic<uint64_t> symmetryChecks{0}, symmetricProducts{0};

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

/// Matrix-vector products of fewer matrix elements than this (128 KiB of
/// float64) run on the calling thread alone, about where OpenBLAS's own gemv
/// stops splitting. It was 2^21 while OpenBLAS's pool slept at once
/// (OPENBLAS_THREAD_TIMEOUT=4, waking it cost more than a one-core pass);
/// with the pool spinning ~0.3 ms (20) two threads win from here on: matvec
/// 512 x 512 126 -> 60 us, 1000 x 1000 330 -> 245 us back to back, no worse
/// after a 0.15 s pause (session 26, Intel Xeon, 2 vCPUs).
constexpr double kOneThreadMatvecElements = double(1 << 14);

/// Square matrices at least this big are checked for symmetry when a kernel
/// multiplies the same stored one by a vector a second time.
constexpr int64_t kSymvMinRows = 512;

/// Whether matrix-vector products may use a symmetric matrix's one triangle
/// (CPN_DETECT_SYMMETRY=0: never).
bool detectSymmetry() {
  static const bool on = [] {
    const char *v = std::getenv("CPN_DETECT_SYMMETRY");
    return !v || std::strcmp(v, "0") != 0;
  }();
  return on;
}

/// Whether the n x n matrix operand `mat` is known symmetric. A matrix-vector
/// product reads the whole matrix; symv reads one triangle and uses each
/// element twice, halving the bytes of a memory-bound product. Deciding costs
/// one read of the matrix, so it is done on the second product with the same
/// store (a matrix written before each product is never checked) and the
/// answer kept on the store until something writes it.
template <typename T> bool knownSymmetric(const Operand<T> &mat, int64_t n) {
  if (n < kSymvMinRows || mat.ld != n || !mat.packed.empty() ||
      !detectSymmetry())
    return false;
  std::atomic<uint32_t> *facts =
      cpnrt::readOnlyFacts(mat.ptr, size_t(n) * size_t(n) * sizeof(T));
  if (!facts)
    return false;
  uint32_t f = facts->fetch_or(cpnrt::kFactMatvecSeen);
  if (f & (cpnrt::kFactSymmetric | cpnrt::kFactNotSymmetric))
    return f & cpnrt::kFactSymmetric;
  if (!(f & cpnrt::kFactMatvecSeen))
    return false;
  ++symmetryChecks;
  bool sym = cpnrt::isSymmetric(mat.ptr, n, n);
  facts->fetch_or(sym ? cpnrt::kFactSymmetric : cpnrt::kFactNotSymmetric);
  return sym;
}

/// y += op(M) x for a matrix operand `mat` (rows x cols as the product sees
/// it) and strided vectors: matrix-vector products go to gemv, which streams
/// the matrix once, instead of a gemm with one column that packs it; a square
/// matrix known to be symmetric goes to symv, which streams half of it.
template <typename T, typename Blas>
void gemv(Blas blas, const Operand<T> &mat, int64_t rows, int64_t cols,
          const T *x, int64_t incx, T beta, T *y, int64_t incy) {
  if (rows == cols && knownSymmetric(mat, rows)) {
    ++symmetricProducts;
    blas.symv(CblasRowMajor, CblasLower, rows, T(1), mat.ptr, mat.ld, x, incx,
              beta, y, incy);
    return;
  }
  bool stored = mat.trans == CblasNoTrans; // stored rows x cols
  blas.gemv(CblasRowMajor, mat.trans, stored ? rows : cols,
            stored ? cols : rows, T(1), mat.ptr, mat.ld, x, incx, beta, y,
            incy);
}

/// The BLAS routines of one element type.
template <typename Gemm, typename Gemv, typename Symv> struct Routines {
  Gemm gemm;
  Gemv gemv;
  Symv symv;
};
template <typename G, typename V, typename S>
Routines(G, V, S) -> Routines<G, V, S>;

template <typename T, typename Blas>
void gemm(Blas blas, int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
          int64_t b, int64_t bOff, int64_t bRs, int64_t bCs, int64_t c,
          int64_t cOff, int64_t cRs, int64_t cCs, int64_t m, int64_t n,
          int64_t k, int64_t accumulate) {
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
  // A matrix-vector product is bound by the matrix's bytes, which two
  // threads read faster as soon as it leaves the cache. A matrix-matrix
  // product keeps OpenBLAS's own choice of threads, as NumPy's calls do (it
  // runs products up to 64^3 multiply-adds on the calling thread): with its
  // pool spinning ~0.3 ms after a call (OPENBLAS_THREAD_TIMEOUT=20) two
  // threads win from ~100^3 on, even after a pause (256^3 back to back 0.49
  // -> 0.30 ms, NumPy 0.27; session 37). Before session 37 products below
  // 4e7 flops were forced onto one thread, a rule from when the pool slept
  // at once.
  bool vector = n == 1 || m == 1;
  cpnrt::lib::OneBlasThreadIf small(
      vector && double(m) * double(n) * double(k) < kOneThreadMatvecElements);
  const T *Ap = reinterpret_cast<const T *>(a) + aOff;
  const T *Bp = reinterpret_cast<const T *>(b) + bOff;
  if (n == 1 && bRs > 0 && cRs > 0) { // C[:, 0] += A @ B[:, 0]
    gemv(blas, Operand<T>(a, aOff, aRs, aCs, m, k), m, k, Bp, bRs, beta, C,
         cRs);
    return;
  }
  if (m == 1 && aCs > 0 && cCs > 0) { // C[0, :] += B^T @ A[0, :]
    Operand<T> B(b, bOff, bRs, bCs, k, n);
    B.trans = B.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
    gemv(blas, B, n, k, Ap, aCs, beta, C, cCs);
    return;
  }
  Operand<T> A(a, aOff, aRs, aCs, m, k), B(b, bOff, bRs, bCs, k, n);
  if (cCs == 1 && cRs >= n) {
    blas.gemm(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld,
              B.ptr, B.ld, beta, C, cRs);
    return;
  }
  std::vector<T> tmp(m * n);
  if (accumulate)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        tmp[i * n + j] = C[i * cRs + j * cCs];
  blas.gemm(CblasRowMajor, A.trans, B.trans, m, n, k, T(1), A.ptr, A.ld, B.ptr,
            B.ld, beta, tmp.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      C[i * cRs + j * cCs] = tmp[i * n + j];
}
} // namespace

cpnrt::BlasStats cpnrt::blasStats() {
  return {symmetryChecks.load(), symmetricProducts.load()};
}

void cpnrt::resetBlasStats() { symmetryChecks = symmetricProducts = 0; }

cpnrt::BlasConfig cpnrt::blasConfig() {
  BlasConfig c;
  c.library = "scipy-openblas64";
  c.config = CPN_BLAS(openblas_get_config)();
  c.coreName = CPN_BLAS(openblas_get_corename)();
  c.threads = CPN_BLAS(openblas_get_num_threads)();
  return c;
}

extern "C" void cpn_gemm_f64(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k,
                             int64_t accumulate) {
  gemm<double>(Routines{CPN_BLAS(cblas_dgemm), CPN_BLAS(cblas_dgemv),
                        CPN_BLAS(cblas_dsymv)},
               a, aOff, aRs, aCs, b, bOff, bRs, bCs, c, cOff, cRs, cCs, m, n, k,
               accumulate);
}

extern "C" void cpn_gemm_f32(int64_t a, int64_t aOff, int64_t aRs, int64_t aCs,
                             int64_t b, int64_t bOff, int64_t bRs, int64_t bCs,
                             int64_t c, int64_t cOff, int64_t cRs, int64_t cCs,
                             int64_t m, int64_t n, int64_t k,
                             int64_t accumulate) {
  gemm<float>(Routines{CPN_BLAS(cblas_sgemm), CPN_BLAS(cblas_sgemv),
                       CPN_BLAS(cblas_ssymv)},
              a, aOff, aRs, aCs, b, bOff, bRs, bCs, c, cOff, cRs, cCs, m, n, k,
              accumulate);
}

bool cpnrt::gemmNow(bool f64, const void *a, int64_t aRs, int64_t aCs,
                    const void *b, int64_t bRs, int64_t bCs, void *c,
                    int64_t ldc, int64_t m, int64_t n, int64_t k) {
  cpnrt::lib::OneBlasThreadIf one(true);
  std::feclearexcept(FE_ALL_EXCEPT);
  auto gemm = f64 ? cpn_gemm_f64 : cpn_gemm_f32;
  gemm(reinterpret_cast<int64_t>(a), 0, aRs, aCs, reinterpret_cast<int64_t>(b),
       0, bRs, bCs, reinterpret_cast<int64_t>(c), 0, ldc, 1, m, n, k,
       /*accumulate=*/0);
  return !std::fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO |
                            FE_UNDERFLOW);
}

namespace {
/// matmul: in0 (B, n, k), in1 (B, k, m) -> out (B, n, m): one gemm (or
/// gemv) per product of the stack, read with the operands' strides. A stack
/// of small products is shared out between threads, each product on its
/// thread alone; bigger products run one after another on OpenBLAS's choice
/// of threads, as a single product does.
template <typename T>
void matmulStack(int64_t meta, int64_t out, int64_t i0, int64_t i1,
                 int64_t i2) {
  cpnrt::lib::Call c(meta, out, i0, i1, i2);
  const cpnrt::lib::Array &a = c.in[0], &b = c.in[1];
  int64_t B = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  int64_t o = reinterpret_cast<int64_t>(c.out.data<T>());
  auto ptr = [](const cpnrt::lib::Array &x) {
    return reinterpret_cast<int64_t>(x.base);
  };
  double flops = 2.0 * double(n) * double(k) * double(m);
  cpnrt::lib::OneBlasThreadIf one(flops < cpnrt::lib::kBatchSpreadBelowFlops);
  auto gemm = std::is_same_v<T, double> ? cpn_gemm_f64 : cpn_gemm_f32;
  cpnrt::lib::forBatch(B, flops, [&](int64_t i) {
    gemm(ptr(a), a.offset + i * a.strides[0], a.strides[1], a.strides[2],
         ptr(b), b.offset + i * b.strides[0], b.strides[1], b.strides[2], o,
         i * n * m, m, 1, n, m, k, /*accumulate=*/0);
  });
}
} // namespace

extern "C" void cpn_lib_matmul_f32(int64_t m, int64_t o, int64_t a, int64_t b,
                                   int64_t c) {
  matmulStack<float>(m, o, a, b, c);
}
extern "C" void cpn_lib_matmul_f64(int64_t m, int64_t o, int64_t a, int64_t b,
                                   int64_t c) {
  matmulStack<double>(m, o, a, b, c);
}

std::vector<cpn_lib_entry> cpnrt::blasFunctions() {
  return {{"cpn_lib_matmul_f32", &cpn_lib_matmul_f32},
          {"cpn_lib_matmul_f64", &cpn_lib_matmul_f64}};
}
