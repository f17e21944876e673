//===- Lapack.cpp - LAPACK for compiled kernels (np.linalg) ---------------===//
//
// Part of cpnumeric's runtime (libcpnrt). See cpnrt/Lapack.h for the calling
// convention. Each matrix of a batch is gathered into a column-major buffer
// (LAPACK's layout, so that LAPACKE copies nothing more), factored, and its
// results scattered into the C-contiguous output. Batches of small matrices
// are spread over threads; a large matrix gets OpenBLAS's own threads.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "LibCall.h"
#include "Factor.h"
#include "OpenBlas.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <string>
#include <type_traits>
#include <vector>

namespace {
using cpnrt::lib::Array;
using cpnrt::lib::Call;
using cpnrt::lib::forBatch;

/// The first error of a call (from any of its threads), kept for the caller:
/// LAPACK's errors are LinAlgError, with NumPy's message.
struct Status {
  std::mutex mu;
  std::string error;
  void fail(const std::string &e) {
    std::lock_guard<std::mutex> lock(mu);
    if (error.empty())
      error = e;
  }
  ~Status() {
    if (!error.empty())
      cpnrt::setKernelError(cpnrt::ErrorKind::LinAlg, error);
  }
};

/// A per-thread buffer that the matrices of a batch reuse one after the
/// other (a stack of 1000 8 x 8 solves allocated three vectors per matrix);
/// when the lease ends, memory past 1 MiB is released. Slot tells apart the
/// buffers of one type that a matrix uses at once.
template <typename T, int Slot> class Scratch {
public:
  Scratch() : v_(buffer()) {}
  ~Scratch() {
    if (v_.capacity() * sizeof(T) > (size_t(1) << 20))
      std::vector<T>().swap(v_);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  std::vector<T> &operator*() { return v_; }
  std::vector<T> *operator->() { return &v_; }

private:
  static std::vector<T> &buffer() {
    thread_local std::vector<T> v;
    return v;
  }
  std::vector<T> &v_;
};

/// Matrix `b` of `a` as a column-major rows x cols buffer (leading dimension
/// max(1, rows)).
template <typename T>
void gather(const Array &a, int64_t b, std::vector<T> &buf) {
  int64_t m = a.rows(), n = a.cols(), ld = std::max<int64_t>(1, m);
  buf.assign(ld * std::max<int64_t>(1, n), T(0));
  const T *p = reinterpret_cast<const T *>(a.base) + a.batchOffset(b);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i)
      buf[i + j * ld] = p[i * a.rowStride() + j * a.colStride()];
}

/// The transpose of square matrix `b` of `a` as a column-major buffer: the
/// matrix's rows as they lie (a C-contiguous matrix is copied, not
/// transposed). getrf/getrs of the transpose serve det, solve and inv.
template <typename T>
void gatherTransposed(const Array &a, int64_t b, std::vector<T> &buf) {
  int64_t n = a.rows(), ld = std::max<int64_t>(1, n);
  buf.resize(ld * std::max<int64_t>(1, n));
  const T *p = reinterpret_cast<const T *>(a.base) + a.batchOffset(b);
  for (int64_t j = 0; j < n; ++j) {
    const T *row = p + j * a.rowStride();
    T *col = buf.data() + j * ld;
    if (a.colStride() == 1)
      std::copy(row, row + n, col);
    else
      for (int64_t i = 0; i < n; ++i)
        col[i] = row[i * a.colStride()];
  }
}

/// Writes rows x cols of a column-major buffer (leading dimension ld) to a
/// C-contiguous destination, only the elements `keep(i, j)` allows (others 0).
template <typename T, typename Keep>
void scatter(const T *src, int64_t ld, int64_t rows, int64_t cols, T *dst,
             Keep keep) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      dst[i * cols + j] = keep(i, j) ? src[i + j * ld] : T(0);
}
template <typename T>
void scatter(const T *src, int64_t ld, int64_t rows, int64_t cols, T *dst) {
  scatter(src, ld, rows, cols, dst, [](int64_t, int64_t) { return true; });
}

template <typename T> void fillNaN(T *p, int64_t n) {
  std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
}

// -- LAPACKE, by element type --------------------------------------------
#define CPN_LAPACK(name, ...)                                                  \
  if constexpr (std::is_same_v<T, double>)                                     \
    return CPN_BLAS(LAPACKE_d##name)(LAPACK_COL_MAJOR, __VA_ARGS__);           \
  else                                                                         \
    return CPN_BLAS(LAPACKE_s##name)(LAPACK_COL_MAJOR, __VA_ARGS__);

template <typename T> lapack_int getrf(lapack_int n, T *a, lapack_int *ipiv) {
  lapack_int ld = std::max<lapack_int>(1, n);
  CPN_LAPACK(getrf, n, n, a, ld, ipiv)
}
template <typename T> lapack_int potrf(lapack_int n, T *a) {
  CPN_LAPACK(potrf, 'L', n, a, std::max<lapack_int>(1, n))
}
template <typename T>
lapack_int geqrf(lapack_int m, lapack_int n, T *a, lapack_int lda, T *tau) {
  CPN_LAPACK(geqrf, m, n, a, lda, tau)
}
template <typename T>
lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, T *a, lapack_int lda,
                 const T *tau) {
  CPN_LAPACK(orgqr, m, n, k, a, lda, tau)
}
template <typename T>
lapack_int gesdd(char jobz, lapack_int m, lapack_int n, T *a, T *s, T *u,
                 lapack_int ldu, T *vt, lapack_int ldvt) {
  CPN_LAPACK(gesdd, jobz, m, n, a, std::max<lapack_int>(1, m), s, u, ldu, vt,
             ldvt)
}
template <typename T>
lapack_int syevd(char jobz, char uplo, lapack_int n, T *a, T *w) {
  CPN_LAPACK(syevd, jobz, uplo, n, a, std::max<lapack_int>(1, n), w)
}
template <typename T>
lapack_int geev(char jobvr, lapack_int n, T *a, T *wr, T *wi, T *vr) {
  lapack_int ld = std::max<lapack_int>(1, n);
  CPN_LAPACK(geev, 'N', jobvr, n, a, ld, wr, wi, nullptr, 1, vr, ld)
}
template <typename T>
lapack_int gelsd(lapack_int m, lapack_int n, lapack_int nrhs, T *a, T *b,
                 lapack_int ldb, T *s, T rcond, lapack_int *rank) {
  CPN_LAPACK(gelsd, m, n, nrhs, a, std::max<lapack_int>(1, m), b, ldb, s, rcond,
             rank)
}
#undef CPN_LAPACK

// -- small matrices, inline ------------------------------------------------
//
// A stack of small matrices (np.linalg.det / inv / solve / cholesky of
// (1000, 8, 8)) made one LAPACK call per matrix, and a call costs more than
// an 8 x 8 factorization: argument checks, OpenBLAS's buffer allocation
// under a lock, a left-looking getf2 of dot products and matrix-vector
// calls. Matrices of at most kInlineRows rows are factored here, in a
// local copy, by the unblocked right-looking algorithms (LAPACK's getf2 and
// potf2). Their rounding differs from OpenBLAS's in the last bits, which
// decides whether an exactly singular matrix (integer entries) gets an exact
// zero pivot: a matrix whose pivot is zero, tiny against its largest entry,
// subnormal or NaN is factored by LAPACK instead, as NumPy's is, so that
// singular and nearly singular matrices give NumPy's values and errors.

/// Rows up to which a square factorization runs inline.
constexpr lapack_int kInlineRows = 16;

/// Copies the n x n `a` into `w` and sets `tiny`: a pivot at most this
/// many rounding errors of the matrix's largest entry sends the matrix to
/// LAPACK. False (nothing to factor inline) when an entry is NaN or
/// infinite.
template <typename T, lapack_int n>
bool copyForInline(const T *a, T *w, T &tiny) {
  T big = T(0), nonfinite = T(0); // NaN when an entry is NaN or infinite
  for (lapack_int i = 0; i < n * n; ++i) {
    w[i] = a[i];
    big = std::max(big, std::abs(a[i]));
    nonfinite += a[i] * T(0);
  }
  tiny = T(64) * T(n) * std::numeric_limits<T>::epsilon() * big;
  return nonfinite == T(0);
}

/// Whether pivot (or Cholesky diagonal) `x` is safely nonzero: above
/// `tiny`, not subnormal, not NaN.
template <typename T> bool safePivot(T x, T tiny) {
  return x > tiny && x >= std::numeric_limits<T>::min();
}

/// LU with partial pivoting of the column-major n x n `a` (n <=
/// kInlineRows), into a only when every pivot is safely nonzero; false
/// (a and ipiv untouched) otherwise.
template <typename T, lapack_int n> bool inlineGetrfN(T *a, lapack_int *ipiv) {
  T w[n * n];
  lapack_int p[n];
  T tiny;
  if (!copyForInline<T, n>(a, w, tiny))
    return false;
  for (lapack_int j = 0; j < n; ++j) {
    T *cj = w + j * n;
    lapack_int q = j;
    T best = std::abs(cj[j]);
    for (lapack_int i = j + 1; i < n; ++i)
      if (std::abs(cj[i]) > best)
        best = std::abs(cj[i]), q = i;
    if (!safePivot(best, tiny))
      return false;
    p[j] = q + 1;
    if (q != j)
      for (lapack_int k = 0; k < n; ++k)
        std::swap(w[j + k * n], w[q + k * n]);
    T r = T(1) / cj[j];
    for (lapack_int i = j + 1; i < n; ++i)
      cj[i] *= r;
    for (lapack_int k = j + 1; k < n; ++k) {
      T *ck = w + k * n;
      T u = ck[j];
      for (lapack_int i = j + 1; i < n; ++i)
        ck[i] -= cj[i] * u;
    }
  }
  std::copy(w, w + n * n, a);
  std::copy(p, p + n, ipiv);
  return true;
}

/// getrs of an inline LU (P A = L U, column-major, n <= kInlineRows): the
/// nrhs columns of b (leading dimension n) become A^-1 b ('N') or A^-T b
/// ('T').
template <typename T, lapack_int n>
void inlineGetrsN(char trans, lapack_int nrhs, const T *lu,
                  const lapack_int *ipiv, T *b) {
  // The diagonal's reciprocals once for all columns (a division per
  // element was most of inv's time; OpenBLAS's trsm multiplies so too).
  T rd[n];
  for (lapack_int j = 0; j < n; ++j)
    rd[j] = T(1) / lu[j + j * n];
  // Up to kCols columns at a time, as rows of a local block: every step
  // updates a row of the block, contiguous, for all its columns at once
  // (column by column, each step waited on the one before).
  constexpr lapack_int kCols = 16;
  T w[n][kCols];
  for (lapack_int c0 = 0; c0 < nrhs; c0 += kCols) {
    const lapack_int m = std::min(kCols, nrhs - c0);
    for (lapack_int c = 0; c < m; ++c)
      for (lapack_int i = 0; i < n; ++i)
        w[i][c] = b[i + (c0 + c) * n];
    auto swapRows = [&](lapack_int r, lapack_int q) {
      if (r != q)
        for (lapack_int c = 0; c < m; ++c)
          std::swap(w[r][c], w[q][c]);
    };
    if (trans == 'N') {
      for (lapack_int j = 0; j < n; ++j)
        swapRows(j, ipiv[j] - 1);
      for (lapack_int j = 0; j < n; ++j) // L y = P b, L unit lower
        for (lapack_int i = j + 1; i < n; ++i) {
          T l = lu[i + j * n];
          for (lapack_int c = 0; c < m; ++c)
            w[i][c] -= l * w[j][c];
        }
      for (lapack_int j = n - 1; j >= 0; --j) { // U x = y
        for (lapack_int c = 0; c < m; ++c)
          w[j][c] *= rd[j];
        for (lapack_int i = 0; i < j; ++i) {
          T u = lu[i + j * n];
          for (lapack_int c = 0; c < m; ++c)
            w[i][c] -= u * w[j][c];
        }
      }
    } else {
      for (lapack_int i = 0; i < n; ++i) { // U^T y = b
        for (lapack_int k = 0; k < i; ++k) {
          T u = lu[k + i * n];
          for (lapack_int c = 0; c < m; ++c)
            w[i][c] -= u * w[k][c];
        }
        for (lapack_int c = 0; c < m; ++c)
          w[i][c] *= rd[i];
      }
      for (lapack_int i = n - 1; i >= 0; --i) // L^T z = y
        for (lapack_int k = i + 1; k < n; ++k) {
          T l = lu[k + i * n];
          for (lapack_int c = 0; c < m; ++c)
            w[i][c] -= l * w[k][c];
        }
      for (lapack_int j = n - 1; j >= 0; --j) // x = P^T z
        swapRows(j, ipiv[j] - 1);
    }
    for (lapack_int c = 0; c < m; ++c)
      for (lapack_int i = 0; i < n; ++i)
        b[i + (c0 + c) * n] = w[i][c];
  }
}

/// Cholesky (lower) of the column-major n x n `a` (n <= kInlineRows) into
/// a, when every diagonal stays safely positive; false (a untouched)
/// otherwise, LAPACK then deciding (and reporting a matrix that is not
/// positive definite).
template <typename T, lapack_int n> bool inlinePotrfN(T *a) {
  T w[n * n];
  T tiny;
  if (!copyForInline<T, n>(a, w, tiny))
    return false;
  for (lapack_int j = 0; j < n; ++j) {
    T d = w[j + j * n];
    for (lapack_int k = 0; k < j; ++k)
      d -= w[j + k * n] * w[j + k * n];
    if (!safePivot(d, tiny))
      return false;
    d = std::sqrt(d);
    w[j + j * n] = d;
    for (lapack_int i = j + 1; i < n; ++i) {
      T s = w[i + j * n];
      for (lapack_int k = 0; k < j; ++k)
        s -= w[i + k * n] * w[j + k * n];
      w[i + j * n] = s / d;
    }
  }
  // The lower triangle is the factor; the strict upper one keeps a's
  // entries, as LAPACK's potrf leaves them.
  for (lapack_int j = 0; j < n; ++j)
    for (lapack_int i = j; i < n; ++i)
      a[i + j * n] = w[i + j * n];
  return true;
}

/// The inline factorizations at the size n (1..kInlineRows, known to the
/// compiler: loops unrolled and vectorized); false for other sizes.
#define CPN_INLINE_SIZES(X)                                                    \
  X(1)                                                                         \
  X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)  \
      X(16)
static_assert(kInlineRows == 16, "CPN_INLINE_SIZES lists the sizes");

template <typename T> bool inlineGetrf(lapack_int n, T *a, lapack_int *ipiv) {
  switch (n) {
#define CPN_CASE(k)                                                            \
  case k:                                                                      \
    return inlineGetrfN<T, k>(a, ipiv);
    CPN_INLINE_SIZES(CPN_CASE)
#undef CPN_CASE
  default:
    return false;
  }
}
template <typename T>
void inlineGetrs(char trans, lapack_int n, lapack_int nrhs, const T *lu,
                 const lapack_int *ipiv, T *b) {
  switch (n) {
#define CPN_CASE(k)                                                            \
  case k:                                                                      \
    return inlineGetrsN<T, k>(trans, nrhs, lu, ipiv, b);
    CPN_INLINE_SIZES(CPN_CASE)
#undef CPN_CASE
  default:
    return;
  }
}
template <typename T> bool inlinePotrf(lapack_int n, T *a) {
  switch (n) {
#define CPN_CASE(k)                                                            \
  case k:                                                                      \
    return inlinePotrfN<T, k>(a);
    CPN_INLINE_SIZES(CPN_CASE)
#undef CPN_CASE
  default:
    return false;
  }
}
#undef CPN_INLINE_SIZES

/// Square matrix `b` of `a` for an LU factorization, column-major: as it
/// is when small (kInlineRows), as NumPy gives it to LAPACK, so that a
/// matrix the inline LU leaves to LAPACK is found exactly singular or not as
/// NumPy finds it; else its transpose (a copy of its rows, no transpose).
/// True when as it is.
template <typename T>
bool gatherForLu(const Array &a, int64_t b, std::vector<T> &buf) {
  if (a.rows() <= kInlineRows) {
    gather(a, b, buf);
    return true;
  }
  gatherTransposed(a, b, buf);
  return false;
}

/// getrf of an n x n matrix: inline when small (and safely nonsingular),
/// split over the runtime's threads when big enough (Factor.cpp), else
/// LAPACK's. `inlined`: set when the inline LU factored it.
template <typename T>
lapack_int luFactor(lapack_int n, T *a, lapack_int *ipiv,
                    bool *inlined = nullptr) {
  bool done = n > 0 && n <= kInlineRows && inlineGetrf<T>(n, a, ipiv);
  if (inlined)
    *inlined = done;
  if (done)
    return 0;
  if (cpnrt::lib::parallelLu(n))
    return cpnrt::lib::parallelGetrf<T>(n, a, ipiv);
  return getrf<T>(n, a, ipiv);
}

/// getrf, then getrs (`trans`: 'N' solves with the matrix factored, 'T'
/// with its transpose) of the nrhs columns of `b`; b is not written when
/// info > 0 (a singular matrix).
template <typename T>
lapack_int luSolve(char trans, lapack_int n, lapack_int nrhs, T *a,
                   lapack_int *ipiv, T *b) {
  bool inlined = false;
  lapack_int info = luFactor<T>(n, a, ipiv, &inlined);
  if (info == 0 && n > 0 && nrhs > 0) {
    if (inlined)
      inlineGetrs<T>(trans, n, nrhs, a, ipiv, b);
    else
      cpnrt::lib::parallelGetrs<T>(trans, n, nrhs, a, ipiv, b);
  }
  return info;
}

void initOnce() {
  static std::once_flag once;
  // NumPy lets NaN through LAPACK (a NaN result); LAPACKE would refuse it.
  std::call_once(once, [] { CPN_BLAS(LAPACKE_set_nancheck)(0); });
}

/// Below this many flops a factorization runs on its calling thread alone:
/// its many small inner BLAS calls (eigh's tridiagonal and svd's bidiagonal
/// reductions are mostly level-2 calls) cost more to hand to OpenBLAS's
/// pool than they gain. Measured on a 2-core Zen 5 (one thread against the
/// pool): one thread is the faster at 256 x 256 (svd 9.9 vs 11.3 ms, det
/// 0.50 vs 0.69 ms) and for getrf/potrf up to 512 (det 3.0 vs 5.2 ms,
/// cholesky 1.9 vs 2.8 ms); the pool for eigh and qr from 512 (eigh 21 vs
/// 27 ms). inv's n right-hand sides are a level-3 solve and keep
/// kOneThreadBlasFlops.
constexpr double kOneThreadLapackFlops = 2e8;

/// fn(b) for each matrix of a batch (see forBatch); a matrix of fewer flops
/// than `oneThreadBelow` is factored by its thread alone. Batches spread
/// over threads are always below it.
/// `inlineRows`: the matrices are factored inline (kInlineRows), with no
/// LAPACK call and its lock per matrix, so that a smaller stack pays for a
/// second thread (forBatch keeps 1000 8 x 8 LAPACK calls on one): 1000 x 8
/// x 8 back to back, one thread against two, det 202 -> 123 us, solve 339
/// -> 175, inv 980 -> 526, cholesky 225 -> 119 (NumPy 285, 352, 753, 215;
/// 2-vCPU Zen 5, one run).
template <typename F>
void lapackBatch(int64_t n, double flops, double oneThreadBelow, F fn,
                 bool inlineRows = false) {
  // One guard for the whole batch: a guard per matrix locked a mutex and
  // set OpenBLAS's thread count around each 8 x 8 solve.
  cpnrt::lib::OneBlasThreadIf one(flops < oneThreadBelow);
  cpnrt::lib::forBatch(n, flops, fn, inlineRows ? 1e5 : 1e6);
}
template <typename F>
void lapackBatch(int64_t n, double flops, F fn, bool inlineRows = false) {
  lapackBatch(n, flops, cpnrt::lib::kOneThreadBlasFlops, fn, inlineRows);
}

// -- entry points ----------------------------------------------------------

/// inv: out (..., n, n) = the inverse of in0 (..., n, n) (gesv against I).
/// With args[0] = 1 a singular matrix gives NaN without an error (cond).
template <typename T> void inv(const Call &c) {
  const Array &a = c.in[0];
  int64_t n = a.rows();
  bool quiet = c.arg(0);
  T *out = c.out.data<T>();
  Status status;
  lapackBatch(
      a.batch(), double(n) * n * n,
      [&](int64_t b) {
        Scratch<T, 0> lu;
        Scratch<T, 1> x;
        Scratch<lapack_int, 0> piv;
        x->assign(std::max<int64_t>(1, n * n), T(0));
        piv->assign(std::max<int64_t>(1, n), 0);
        // Column-major inv(A) of A, or inv(A^T) = inv(A)^T of the
        // transpose, which is inv(A) in C order.
        bool asIs = gatherForLu(a, b, *lu);
        for (int64_t i = 0; i < n; ++i)
          (*x)[i + i * n] = T(1);
        T *dst = out + b * n * n;
        if (luSolve<T>('N', n, n, lu->data(), piv->data(), x->data()) != 0) {
          if (!quiet)
            status.fail("Singular matrix");
          return fillNaN(dst, n * n);
        }
        if (asIs)
          scatter(x->data(), std::max<int64_t>(1, n), n, n, dst);
        else
          std::copy(x->data(), x->data() + n * n, dst);
      },
      n <= kInlineRows);
}

/// solve: out (..., n, k) = in0 (..., n, n) \ in1 (..., n, k).
template <typename T> void solve(const Call &c) {
  const Array &a = c.in[0], &rhs = c.in[1];
  int64_t n = a.rows(), k = rhs.cols();
  T *out = c.out.data<T>();
  Status status;
  lapackBatch(
      a.batch(), double(n) * n * (n + k), kOneThreadLapackFlops,
      [&](int64_t b) {
        Scratch<T, 0> lu;
        Scratch<T, 1> x;
        Scratch<lapack_int, 0> piv;
        piv->assign(std::max<int64_t>(1, n), 0);
        // A x = b, or (A^T)^T x = b with the transpose.
        bool asIs = gatherForLu(a, b, *lu);
        gather(rhs, b, *x);
        T *dst = out + b * n * k;
        if (luSolve<T>(asIs ? 'N' : 'T', n, k, lu->data(), piv->data(),
                       x->data()) != 0) {
          status.fail("Singular matrix");
          return fillNaN(dst, n * k);
        }
        scatter(x->data(), std::max<int64_t>(1, n), n, k, dst);
      },
      n <= kInlineRows);
}

/// slogdet: out (batch, 3) = sign, log|det|, det of each in0 (..., n, n).
/// A singular matrix gives 0, -inf, 0 (as NumPy: not an error).
template <typename T> void slogdet(const Call &c) {
  const Array &a = c.in[0];
  int64_t n = a.rows();
  T *out = c.out.data<T>();
  lapackBatch(
      a.batch(), double(n) * n * n, kOneThreadLapackFlops,
      [&](int64_t b) {
        Scratch<T, 0> luBuf;
        Scratch<lapack_int, 0> pivBuf;
        std::vector<T> &lu = *luBuf;
        std::vector<lapack_int> &piv = *pivBuf;
        piv.assign(std::max<int64_t>(1, n), 0);
        gatherForLu(a, b, lu); // det(A^T) = det(A)
        T *dst = out + 3 * b;
        lapack_int info = n ? luFactor<T>(n, lu.data(), piv.data()) : 0;
        if (info > 0) {
          dst[0] = T(0), dst[1] = -std::numeric_limits<T>::infinity(),
          dst[2] = T(0);
          return;
        }
        T sign = T(1), logdet = T(0), det = T(1);
        for (int64_t i = 0; i < n; ++i) {
          T d = lu[i + i * n];
          if (piv[i] != i + 1)
            sign = -sign, det = -det;
          if (d < 0)
            sign = -sign;
          logdet += std::log(std::abs(d));
          det *= d;
        }
        // NumPy's sign comes from the pivots and the diagonal's signs
        // only: a NaN in the factors leaves it +-1 (and log|det| NaN).
        dst[0] = sign, dst[1] = logdet, dst[2] = det;
      },
      n <= kInlineRows);
}

/// cholesky: out (..., n, n) = L (args[0] = 0) or L^T (args[0] = 1).
template <typename T> void cholesky(const Call &c) {
  const Array &a = c.in[0];
  int64_t n = a.rows();
  bool upper = c.arg(0);
  T *out = c.out.data<T>();
  Status status;
  lapackBatch(
      a.batch(), double(n) * n * n / 3, kOneThreadLapackFlops,
      [&](int64_t b) {
        Scratch<T, 0> lBuf;
        std::vector<T> &l = *lBuf;
        // upper reads a's upper triangle, as NumPy's (the lower one of
        // its transpose): a non-symmetric a factors its own triangle.
        if (upper)
          gatherTransposed(a, b, l);
        else
          gather(a, b, l);
        T *dst = out + b * n * n;
        if (n && !(n <= kInlineRows && inlinePotrf<T>(n, l.data())) &&
            (cpnrt::lib::parallelCholesky(n)
                 ? cpnrt::lib::parallelPotrf<T>(n, l.data())
                 : potrf<T>(n, l.data())) != 0) {
          status.fail("Matrix is not positive definite");
          return fillNaN(dst, n * n);
        }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            dst[i * n + j] = upper ? (i <= j ? l[j + i * n] : T(0))
                                   : (j <= i ? l[i + j * n] : T(0));
      },
      n <= kInlineRows);
}

/// qr: in0 (..., m, n), k = min(m, n); args[0] = mode (0 reduced, 1
/// complete, 2 r). out = [Q: batch x m x qc][R: batch x rr x n] with qc = rr
/// = k (reduced), m (complete); mode r writes R (k x n) only.
template <typename T> void qr(const Call &c) {
  const Array &a = c.in[0];
  int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  int64_t mode = c.arg(0), batch = a.batch();
  int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
  T *out = c.out.data<T>();
  T *rOut = mode == 2 ? out : out + batch * m * qc;
  lapackBatch(batch, 2.0 * m * n * k, kOneThreadLapackFlops, [&](int64_t b) {
    int64_t ld = std::max<int64_t>(1, m);
    // Q may need more columns than A has (complete mode, m > n).
    int64_t cols = std::max(n, mode == 1 ? m : int64_t(0));
    std::vector<T> h, tau(std::max<int64_t>(1, k));
    gather(a, b, h);
    h.resize(ld * std::max<int64_t>(1, cols), T(0));
    if (k)
      geqrf<T>(m, n, h.data(), ld, tau.data());
    scatter(h.data(), ld, rr, n, rOut + b * rr * n,
            [](int64_t i, int64_t j) { return i <= j; });
    if (mode == 2)
      return;
    if (qc)
      orgqr<T>(m, qc, k, h.data(), ld, tau.data());
    scatter(h.data(), ld, m, qc, out + b * m * qc);
  });
}

/// svd: in0 (..., m, n), k = min(m, n); args = compute_uv, full_matrices.
/// out = [U: batch x m x uc][S: batch x k][Vt: batch x vr x n] (uc = vr = k,
/// or m and n with full_matrices); S alone without compute_uv.
template <typename T> void svd(const Call &c) {
  const Array &a = c.in[0];
  int64_t m = a.rows(), n = a.cols(), k = std::min(m, n);
  bool uv = c.arg(0), full = c.arg(1);
  int64_t batch = a.batch(), uc = full ? m : k, vr = full ? n : k;
  T *out = c.out.data<T>();
  T *uOut = out, *sOut = uv ? out + batch * m * uc : out,
    *vOut = sOut + batch * k;
  Status status;
  lapackBatch(batch, 4.0 * m * n * k, kOneThreadLapackFlops, [&](int64_t b) {
    std::vector<T> h, s(std::max<int64_t>(1, k));
    gather(a, b, h);
    int64_t ldu = std::max<int64_t>(1, m), ldvt = std::max<int64_t>(1, vr);
    std::vector<T> u(uv ? ldu * std::max<int64_t>(1, uc) : 1),
        vt(uv ? ldvt * std::max<int64_t>(1, n) : 1);
    lapack_int info = 0;
    if (k)
      info = gesdd<T>(uv ? (full ? 'A' : 'S') : 'N', m, n, h.data(), s.data(),
                      u.data(), ldu, vt.data(), ldvt);
    else if (uv && full) { // no singular values: U and Vt are identities
      for (int64_t i = 0; i < m; ++i)
        u[i + i * ldu] = T(1);
      for (int64_t i = 0; i < n; ++i)
        vt[i + i * ldvt] = T(1);
    }
    if (info != 0) {
      status.fail("SVD did not converge");
      fillNaN(sOut + b * k, k);
      if (uv)
        fillNaN(uOut + b * m * uc, m * uc), fillNaN(vOut + b * vr * n, vr * n);
      return;
    }
    std::copy(s.begin(), s.begin() + k, sOut + b * k);
    if (uv) {
      scatter(u.data(), ldu, m, uc, uOut + b * m * uc);
      scatter(vt.data(), ldvt, vr, n, vOut + b * vr * n);
    }
  });
}

/// eigh: in0 (..., n, n) symmetric; args = compute_v, upper (which triangle
/// is read). out = [w: batch x n][V: batch x n x n] (w alone without V).
template <typename T> void eigh(const Call &c) {
  const Array &a = c.in[0];
  int64_t n = a.rows(), batch = a.batch();
  bool vecs = c.arg(0), upper = c.arg(1);
  T *out = c.out.data<T>();
  Status status;
  lapackBatch(batch, 9.0 * n * n * n, kOneThreadLapackFlops, [&](int64_t b) {
    std::vector<T> h, w(std::max<int64_t>(1, n));
    gather(a, b, h);
    lapack_int info =
        n ? syevd<T>(vecs ? 'V' : 'N', upper ? 'U' : 'L', n, h.data(), w.data())
          : 0;
    if (info != 0) {
      status.fail("Eigenvalues did not converge");
      fillNaN(out + b * n, n);
      if (vecs)
        fillNaN(out + batch * n + b * n * n, n * n);
      return;
    }
    std::copy(w.begin(), w.begin() + n, out + b * n);
    if (vecs)
      scatter(h.data(), std::max<int64_t>(1, n), n, n,
              out + batch * n + b * n * n);
  });
}

/// eig: in0 (..., n, n) real -> out complex [w: batch x n][v: batch x n x n,
/// when args[0] = 1]. geev returns a complex-conjugate pair of eigenvalues
/// (positive imaginary part first) with the real and imaginary parts of the
/// first one's eigenvector in two adjacent columns.
template <typename T> void eig(const Call &c) {
  using C = std::complex<T>;
  const Array &a = c.in[0];
  int64_t n = a.rows(), batch = a.batch();
  bool vecs = c.arg(0);
  C *out = c.out.data<C>();
  Status status;
  lapackBatch(
      batch, 25.0 * n * n * n, kOneThreadLapackFlops, [&](int64_t b) {
        int64_t n1 = std::max<int64_t>(1, n);
        std::vector<T> h, wr(n1), wi(n1), vr(vecs ? n1 * n1 : 1);
        gather(a, b, h);
        C *w = out + b * n, *v = out + batch * n + b * n * n;
        auto fail = [&](const char *message) { // NaN results and the error
          status.fail(message);
          T nan = std::numeric_limits<T>::quiet_NaN();
          std::fill(w, w + n, C(nan, nan));
          if (vecs)
            std::fill(v, v + n * n, C(nan, nan));
        };
        // geev corrupts its workspace on infinities; NumPy refuses them first.
        if (!std::all_of(h.begin(), h.end(),
                         [](T x) { return std::isfinite(x); }))
          return fail("Array must not contain infs or NaNs");
        lapack_int info = n ? geev<T>(vecs ? 'V' : 'N', n, h.data(), wr.data(),
                                      wi.data(), vr.data())
                            : 0;
        if (info != 0)
          return fail("Eigenvalues did not converge");
        for (int64_t i = 0; i < n; ++i)
          w[i] = C(wr[i], wi[i]);
        if (!vecs)
          return;
        for (int64_t j = 0; j < n; ++j) {
          if (wi[j] > 0 && j + 1 < n) {
            for (int64_t i = 0; i < n; ++i) {
              C x(vr[i + j * n], vr[i + (j + 1) * n]);
              v[i * n + j] = x;
              v[i * n + j + 1] = std::conj(x);
            }
            ++j;
          } else {
            for (int64_t i = 0; i < n; ++i)
              v[i * n + j] = C(vr[i + j * n], T(0));
          }
        }
      });
}

/// lstsq: in0 A (m, n), in1 B (m, k); args[0] = rcond (the bits of a
/// double). out = [x: n x k][residuals: k][rank][s: min(m, n)]; residuals
/// are the squared norms of B - A x when rank == n < m, else 0.
template <typename T> void lstsq(const Call &c) {
  const Array &a = c.in[0], &rhs = c.in[1];
  int64_t m = a.rows(), n = a.cols(), k = rhs.cols(), mn = std::min(m, n);
  double rcond;
  int64_t bits = c.arg(0);
  std::memcpy(&rcond, &bits, sizeof rcond);
  T *out = c.out.data<T>();
  T *x = out, *res = out + n * k, *rankOut = res + k, *s = rankOut + 1;
  std::vector<T> h, bb;
  gather(a, 0, h);
  gather(rhs, 0, bb);
  int64_t ldb = std::max<int64_t>(1, std::max(m, n));
  std::vector<T> wide(ldb * std::max<int64_t>(1, k), T(0)),
      sv(std::max<int64_t>(1, mn));
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < m; ++i)
      wide[i + j * ldb] = bb[i + j * std::max<int64_t>(1, m)];
  lapack_int rank = 0, info = 0;
  if (m && n && k)
    info = gelsd<T>(m, n, k, h.data(), wide.data(), ldb, sv.data(), T(rcond),
                    &rank);
  else if (m && n) { // no right-hand sides: the rank still counts
    std::vector<T> one(ldb, T(0));
    info = gelsd<T>(m, n, 1, h.data(), one.data(), ldb, sv.data(), T(rcond),
                    &rank);
  }
  if (info != 0) {
    Status status;
    status.fail("SVD did not converge in Linear Least Squares");
    return fillNaN(out, n * k + k + 1 + mn);
  }
  scatter(wide.data(), ldb, n, k, x);
  for (int64_t j = 0; j < k; ++j) {
    T r = T(0);
    if (rank == n && m > n)
      for (int64_t i = n; i < m; ++i)
        r += wide[i + j * ldb] * wide[i + j * ldb];
    res[j] = r;
  }
  if (!n) // x is empty and every column of B is a residual
    for (int64_t j = 0; j < k; ++j) {
      T r = T(0);
      for (int64_t i = 0; i < m; ++i)
        r += wide[i + j * ldb] * wide[i + j * ldb];
      res[j] = r;
    }
  *rankOut = T(rank);
  std::copy(sv.begin(), sv.begin() + mn, s);
}

template <void (*F32)(const Call &), void (*F64)(const Call &)> struct Entry {
  static void f32(int64_t meta, int64_t out, int64_t i0, int64_t i1,
                  int64_t i2) {
    initOnce();
    F32(Call(meta, out, i0, i1, i2));
  }
  static void f64(int64_t meta, int64_t out, int64_t i0, int64_t i1,
                  int64_t i2) {
    initOnce();
    F64(Call(meta, out, i0, i1, i2));
  }
};
} // namespace

#define CPN_LIB_ENTRY(name)                                                    \
  extern "C" void cpn_lib_##name##_f32(int64_t m, int64_t o, int64_t a,        \
                                       int64_t b, int64_t c) {                 \
    Entry<name<float>, name<double>>::f32(m, o, a, b, c);                      \
  }                                                                            \
  extern "C" void cpn_lib_##name##_f64(int64_t m, int64_t o, int64_t a,        \
                                       int64_t b, int64_t c) {                 \
    Entry<name<float>, name<double>>::f64(m, o, a, b, c);                      \
  }
CPN_LIB_ENTRY(inv)
CPN_LIB_ENTRY(solve)
CPN_LIB_ENTRY(slogdet)
CPN_LIB_ENTRY(cholesky)
CPN_LIB_ENTRY(qr)
CPN_LIB_ENTRY(svd)
CPN_LIB_ENTRY(eigh)
CPN_LIB_ENTRY(eig)
CPN_LIB_ENTRY(lstsq)
#undef CPN_LIB_ENTRY

std::vector<cpn_lib_entry> cpnrt::lapackFunctions() {
#define CPN_LIB_ROW(name)                                                      \
  {"cpn_lib_" #name "_f32", &cpn_lib_##name##_f32}, {                          \
    "cpn_lib_" #name "_f64", &cpn_lib_##name##_f64                             \
  }
  return {
      CPN_LIB_ROW(inv),      CPN_LIB_ROW(solve), CPN_LIB_ROW(slogdet),
      CPN_LIB_ROW(cholesky), CPN_LIB_ROW(qr),    CPN_LIB_ROW(svd),
      CPN_LIB_ROW(eigh),     CPN_LIB_ROW(eig),   CPN_LIB_ROW(lstsq),
  };
#undef CPN_LIB_ROW
}
