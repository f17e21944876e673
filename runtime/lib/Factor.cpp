//===- Factor.cpp - LU and Cholesky split over the runtime's threads ------===//
//
// Part of cpnumeric's runtime (libcpnrt). A right-looking blocked LU with
// partial pivoting, as LAPACK's getrf computes it, over OpenBLAS's
// single-threaded kernels: each block column (the panel) is factored by
// LAPACK's getrf on one thread, and its row interchanges, the triangular
// solve of its block row and the product that updates the trailing matrix
// are split by columns over the runtime's threads (Threads.cpp).
//
// Why not OpenBLAS's own threads: with OPENBLAS_THREAD_TIMEOUT=20 (set at
// import so that its idle threads leave the cores to the OpenMP loops; see
// docs/architecture.md) its pool falls asleep between the many small
// parallel calls of its recursive getrf, and waking it each time made a
// 1000 x 1000 getrf take 34-40 ms on two threads against 18-20 ms on one
// (NumPy's OpenBLAS, whose pool spins, 14-16 ms). The runtime's workers
// take one wake-up per block column. Cholesky (potrf, lower) the same way:
// OpenBLAS's took 23-33 ms for 1000 x 1000 after a pause, NumPy's 13 ms.
//
//===----------------------------------------------------------------------===//

#include "Factor.h"

#include "LibCall.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <type_traits>

namespace cpnrt::lib {
namespace {

/// Columns of a block (the panel's width): wide enough that the trailing
/// update is a matrix-matrix product at full speed, narrow enough that the
/// panel, factored on one thread, stays a small part of the work.
constexpr lapack_int kBlock = 128;

/// Matrices of fewer rows are factored by LAPACK on one thread: measured
/// on a 2-vCPU Xeon (AVX-512), one thread against two at n = 256: 0.55 ms
/// against 0.5 ms (the workers' wake-ups eat the gain below).
constexpr int64_t kMinParallelRows = 384;

/// A triangular solve of fewer flops than this stays on one thread.
constexpr double kMinSplitSolveFlops = 8e6;

template <typename T>
lapack_int getrfRect(lapack_int m, lapack_int n, T *a, lapack_int ld,
                     lapack_int *ipiv) {
  if constexpr (std::is_same_v<T, double>)
    return CPN_BLAS(LAPACKE_dgetrf_work)(LAPACK_COL_MAJOR, m, n, a, ld, ipiv);
  else
    return CPN_BLAS(LAPACKE_sgetrf_work)(LAPACK_COL_MAJOR, m, n, a, ld, ipiv);
}

/// Rows k1..k2 (1-based) interchanged as ipiv says, in `cols` columns.
template <typename T>
void laswp(lapack_int cols, T *a, lapack_int ld, lapack_int k1, lapack_int k2,
           const lapack_int *ipiv) {
  if (cols <= 0)
    return;
  if constexpr (std::is_same_v<T, double>)
    CPN_BLAS(LAPACKE_dlaswp_work)(LAPACK_COL_MAJOR, cols, a, ld, k1, k2, ipiv, 1);
  else
    CPN_BLAS(LAPACKE_slaswp_work)(LAPACK_COL_MAJOR, cols, a, ld, k1, k2, ipiv, 1);
}

template <typename T>
void trsmLowerUnit(lapack_int m, lapack_int n, const T *l, lapack_int ldl, T *b,
                   lapack_int ldb) {
  if constexpr (std::is_same_v<T, double>)
    CPN_BLAS(cblas_dtrsm)(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
                          CblasUnit, m, n, 1.0, l, ldl, b, ldb);
  else
    CPN_BLAS(cblas_strsm)(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
                          CblasUnit, m, n, 1.0f, l, ldl, b, ldb);
}

/// c -= a * b (m x k times k x n, column-major).
template <typename T>
void gemmSub(lapack_int m, lapack_int n, lapack_int k, const T *a,
             lapack_int lda, const T *b, lapack_int ldb, T *c, lapack_int ldc) {
  if constexpr (std::is_same_v<T, double>)
    CPN_BLAS(cblas_dgemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                          -1.0, a, lda, b, ldb, 1.0, c, ldc);
  else
    CPN_BLAS(cblas_sgemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                          -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}

/// Columns [lo, hi) of `cols` cut into `t` parts of whole blocks of 8: part c.
inline void share(lapack_int cols, int64_t t, int64_t c, lapack_int &lo,
                  lapack_int &hi) {
  lapack_int units = (cols + 7) / 8;
  lo = std::min<lapack_int>(cols, units * c / t * 8);
  hi = std::min<lapack_int>(cols, units * (c + 1) / t * 8);
}

} // namespace

bool parallelLu(int64_t n) {
  return n >= kMinParallelRows && maxThreads() > 1;
}

template <typename T>
lapack_int parallelGetrf(lapack_int n, T *a, lapack_int *ipiv) {
  const lapack_int ld = std::max<lapack_int>(1, n);
  const int64_t threads = maxThreads();
  // Every BLAS call of ours on one thread (and OpenBLAS's pool idle).
  OneBlasThreadIf one(true);
  // getrf of the panel at column j (its pivots made absolute); its info.
  auto factor = [&](lapack_int j) {
    lapack_int jb = std::min(kBlock, n - j);
    lapack_int info = getrfRect(n - j, jb, a + j + j * ld, ld, ipiv + j);
    for (lapack_int i = j; i < j + jb; ++i)
      ipiv[i] += j;
    return info;
  };
  lapack_int info = 0, pinfo = factor(0);
  for (lapack_int j = 0; j < n; j += kBlock) {
    const lapack_int jb = std::min(kBlock, n - j), next = j + jb,
                     nextb = std::min(kBlock, n - next);
    if (pinfo > 0 && info == 0)
      info = pinfo + j;
    const T *panel = a + j + j * ld;
    // Columns [c0, c0 + cols) right of the panel: its interchanges, U's
    // block row (L11 \ A12) and A22 -= L21 U12.
    auto update = [&](lapack_int c0, lapack_int cols) {
      T *col = a + c0 * ld;
      laswp(cols, col, ld, j + 1, j + jb, ipiv);
      trsmLowerUnit(jb, cols, panel, ld, col + j, ld);
      if (n - next > 0)
        gemmSub(n - next, cols, jb, panel + jb, ld, col + j, ld, col + next,
                ld);
    };
    // One thread updates the next panel's columns and factors it (look
    // ahead), while the others, then it too, take the rest in chunks: the
    // interchanges in the columns left of the panel, the update right of
    // the next one.
    const lapack_int rightStart = next + nextb, right = n - rightStart;
    const lapack_int leftChunk = 512, rightChunk = 96;
    const int64_t leftChunks = (j + leftChunk - 1) / leftChunk,
                  chunks = leftChunks + (right + rightChunk - 1) / rightChunk;
    int64_t t = std::min<int64_t>(threads, 1 + chunks);
    std::atomic<int64_t> claimed{0};
    lapack_int nextInfo = 0;
    onThreads(t, [&](int64_t c) {
      if (c == 0 && nextb > 0) {
        update(next, nextb);
        nextInfo = factor(next);
      }
      for (int64_t k; (k = claimed++) < chunks;) {
        if (k < leftChunks) {
          lapack_int lo = lapack_int(k) * leftChunk;
          laswp(std::min(leftChunk, j - lo), a + lo * ld, ld, j + 1, j + jb,
                ipiv);
        } else {
          lapack_int lo = rightStart + lapack_int(k - leftChunks) * rightChunk;
          update(lo, std::min(rightChunk, n - lo));
        }
      }
    });
    pinfo = nextInfo;
  }
  return info;
}

template <typename T>
void parallelGetrs(char trans, lapack_int n, lapack_int nrhs, const T *lu,
                   const lapack_int *ipiv, T *b) {
  const lapack_int ld = std::max<lapack_int>(1, n);
  // Split where each part is a matrix-matrix solve worth a wake-up (and
  // each matrix of forBatch's spread batches is below 2e6 flops).
  double flops = 2.0 * double(n) * double(n) * double(nrhs);
  int64_t t = flops < kMinSplitSolveFlops
                  ? 1
                  : std::min<int64_t>(maxThreads(), (nrhs + 31) / 32);
  std::optional<OneBlasThreadIf> one;
  if (t > 1)
    one.emplace(true);
  onThreads(t, [&](int64_t c) {
    lapack_int lo, hi;
    share(nrhs, t, c, lo, hi);
    if (hi <= lo)
      return;
    if constexpr (std::is_same_v<T, double>)
      CPN_BLAS(LAPACKE_dgetrs_work)(LAPACK_COL_MAJOR, trans, n, hi - lo, lu, ld,
                                    ipiv, b + lo * ld, ld);
    else
      CPN_BLAS(LAPACKE_sgetrs_work)(LAPACK_COL_MAJOR, trans, n, hi - lo, lu, ld,
                                    ipiv, b + lo * ld, ld);
  });
}

bool parallelCholesky(int64_t n) {
  return n >= kMinParallelRows && maxThreads() > 1;
}

template <typename T> lapack_int parallelPotrf(lapack_int n, T *a) {
  const lapack_int ld = std::max<lapack_int>(1, n);
  const int64_t threads = maxThreads();
  OneBlasThreadIf one(true);
  auto potrfBlock = [&](lapack_int j) {
    lapack_int jb = std::min(kBlock, n - j);
    if constexpr (std::is_same_v<T, double>)
      return CPN_BLAS(LAPACKE_dpotrf_work)(LAPACK_COL_MAJOR, 'L', jb,
                                           a + j + j * ld, ld);
    else
      return CPN_BLAS(LAPACKE_spotrf_work)(LAPACK_COL_MAJOR, 'L', jb,
                                           a + j + j * ld, ld);
  };
  lapack_int info = potrfBlock(0);
  for (lapack_int j = 0; j < n && info == 0; j += kBlock) {
    const lapack_int jb = std::min(kBlock, n - j), next = j + jb,
                     rest = n - next;
    if (rest == 0)
      break;
    const T *l11 = a + j + j * ld;
    T *l21 = a + next + j * ld; // rest x jb, below the diagonal block
    // L21 = A21 L11^-T, by rows.
    const lapack_int rowChunk = 128;
    int64_t rowChunks = (rest + rowChunk - 1) / rowChunk;
    std::atomic<int64_t> claimed{0};
    onThreads(std::min<int64_t>(threads, rowChunks), [&](int64_t) {
      for (int64_t k; (k = claimed++) < rowChunks;) {
        lapack_int r0 = lapack_int(k) * rowChunk,
                   rows = std::min(rowChunk, rest - r0);
        if constexpr (std::is_same_v<T, double>)
          CPN_BLAS(cblas_dtrsm)(CblasColMajor, CblasRight, CblasLower,
                                CblasTrans, CblasNonUnit, rows, jb, 1.0, l11,
                                ld, l21 + r0, ld);
        else
          CPN_BLAS(cblas_strsm)(CblasColMajor, CblasRight, CblasLower,
                                CblasTrans, CblasNonUnit, rows, jb, 1.0f, l11,
                                ld, l21 + r0, ld);
      }
    });
    // A22 -= L21 L21^T (its lower triangle), by column blocks; one thread
    // first updates the next panel's block and factors its diagonal block
    // (look ahead).
    auto update = [&](lapack_int c0, lapack_int cols) { // of A22, from 0
      T *diag = a + (next + c0) + (next + c0) * ld;
      const T *lc = l21 + c0; // the rows of L21 matching the columns
      if constexpr (std::is_same_v<T, double>) {
        CPN_BLAS(cblas_dsyrk)(CblasColMajor, CblasLower, CblasNoTrans, cols,
                              jb, -1.0, lc, ld, 1.0, diag, ld);
        if (rest - c0 - cols > 0)
          CPN_BLAS(cblas_dgemm)(CblasColMajor, CblasNoTrans, CblasTrans,
                                rest - c0 - cols, cols, jb, -1.0, lc + cols, ld,
                                lc, ld, 1.0, diag + cols, ld);
      } else {
        CPN_BLAS(cblas_ssyrk)(CblasColMajor, CblasLower, CblasNoTrans, cols,
                              jb, -1.0f, lc, ld, 1.0f, diag, ld);
        if (rest - c0 - cols > 0)
          CPN_BLAS(cblas_sgemm)(CblasColMajor, CblasNoTrans, CblasTrans,
                                rest - c0 - cols, cols, jb, -1.0f, lc + cols,
                                ld, lc, ld, 1.0f, diag + cols, ld);
      }
    };
    const lapack_int nextb = std::min(kBlock, rest), colChunk = 96;
    const int64_t chunks = (rest - nextb + colChunk - 1) / colChunk;
    claimed = 0;
    lapack_int nextInfo = 0;
    onThreads(std::min<int64_t>(threads, 1 + chunks), [&](int64_t c) {
      if (c == 0) {
        update(0, nextb);
        nextInfo = potrfBlock(next);
      }
      for (int64_t k; (k = claimed++) < chunks;) {
        lapack_int c0 = nextb + lapack_int(k) * colChunk;
        update(c0, std::min(colChunk, rest - c0));
      }
    });
    if (nextInfo > 0)
      info = nextInfo + next;
  }
  return info;
}

template lapack_int parallelPotrf<float>(lapack_int, float *);
template lapack_int parallelPotrf<double>(lapack_int, double *);
template lapack_int parallelGetrf<float>(lapack_int, float *, lapack_int *);
template lapack_int parallelGetrf<double>(lapack_int, double *, lapack_int *);
template void parallelGetrs<float>(char, lapack_int, lapack_int,
                                   const float *, const lapack_int *, float *);
template void parallelGetrs<double>(char, lapack_int, lapack_int,
                                    const double *, const lapack_int *,
                                    double *);

} // namespace cpnrt::lib
