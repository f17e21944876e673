//===- OpenBlas.h - the BLAS and LAPACK the runtime calls (internal) -*- C++
//-*-===//
//
// Part of cpnumeric's runtime (libcpnrt). The runtime calls NumPy's own
// OpenBLAS build: PyPI's scipy-openblas64 (ILP64, every kernel built in and
// chosen for the CPU at load time). Its symbols are prefixed `scipy_` and
// suffixed `64_` so that they never clash with another BLAS in the process;
// CPN_BLAS(cblas_dgemm) names scipy_cblas_dgemm64_. docs/architecture.md says
// why ILP64.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_OPENBLAS_H
#define CPNRT_LIB_OPENBLAS_H

// LAPACKE's integers are 64-bit only when asked for; every lapack_int the
// runtime passes (sizes, pivots, ranks) must match the library's.
#ifndef LAPACK_ILP64
#define LAPACK_ILP64
#endif
#include <cblas.h>
#include <lapacke.h>

#ifndef OPENBLAS_USE64BITINT
#error "cpnumeric's runtime expects the ILP64 OpenBLAS of scipy-openblas64"
#endif

static_assert(sizeof(lapack_int) == 8 && sizeof(blasint) == 8,
              "scipy-openblas64 takes 64-bit integers");

#define CPN_BLAS_CAT(prefix, name, suffix) prefix##name##suffix
#define CPN_BLAS(name) CPN_BLAS_CAT(scipy_, name, 64_)

#endif // CPNRT_LIB_OPENBLAS_H
