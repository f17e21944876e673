//===- Factor.h - LU and Cholesky split over the runtime's threads -*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt); internal to Lapack.cpp. See
// Factor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_FACTOR_H
#define CPNRT_LIB_FACTOR_H

#include "OpenBlas.h"

#include <cstdint>

namespace cpnrt::lib {

/// Whether an n x n LU is split over the runtime's threads (parallelGetrf)
/// rather than given to LAPACK whole: big enough to pay, and more than one
/// thread allowed.
bool parallelLu(int64_t n);

/// LAPACK's getrf of the column-major n x n matrix `a` (leading dimension
/// max(1, n)): the same factors, pivots (1-based) and info, a block column
/// at a time, each block's update of the trailing columns split over the
/// runtime's threads.
template <typename T>
lapack_int parallelGetrf(lapack_int n, T *a, lapack_int *ipiv);

/// LAPACK's getrs (`trans` 'N' or 'T') of `nrhs` columns of `b` (leading
/// dimension max(1, n)) with getrf's factors, the columns split over the
/// runtime's threads when there is enough work (never inside a batch that
/// forBatch spreads over threads: its matrices are smaller).
template <typename T>
void parallelGetrs(char trans, lapack_int n, lapack_int nrhs, const T *lu,
                   const lapack_int *ipiv, T *b);

/// Whether an n x n Cholesky factorization is split over the runtime's
/// threads (parallelPotrf).
bool parallelCholesky(int64_t n);

/// LAPACK's potrf ('L') of the column-major n x n matrix `a` (leading
/// dimension max(1, n)): the same factor and info, a block column at a
/// time, the panel's triangular solve and the trailing update split over
/// the runtime's threads.
template <typename T> lapack_int parallelPotrf(lapack_int n, T *a);

} // namespace cpnrt::lib

#endif // CPNRT_LIB_FACTOR_H
