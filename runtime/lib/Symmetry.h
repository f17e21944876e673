//===- Symmetry.h - is a matrix its own transpose (internal) ----*- C++ -*-===//
//
// Part of cpnumeric's runtime. Used by Blas.cpp (symmetric matrix-vector
// products) and tested by test/runtime.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_SYMMETRY_H
#define CPNRT_LIB_SYMMETRY_H

#include <cstdint>

namespace cpnrt {
/// Whether the n x n row-major matrix at `a` (leading dimension `ld`) equals
/// its transpose bit for bit: NaNs and the signs of zeros must match too, so
/// that one triangle stands for the whole matrix in any product. Runs on the
/// machine's cores and stops early where a difference is found.
bool isSymmetric(const double *a, int64_t n, int64_t ld);
bool isSymmetric(const float *a, int64_t n, int64_t ld);
} // namespace cpnrt

#endif // CPNRT_LIB_SYMMETRY_H
