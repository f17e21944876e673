//===- Sort.h - vectorized parallel sorts (internal) ------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). Sorts rows in NumPy's order (NaN
// last) with Highway's vqsort on all cores; see Sort.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_SORT_H
#define CPNRT_LIB_SORT_H

#include <cstdint>

namespace cpnrt {
/// out (rows x n, C-contiguous) = each row of src sorted ascending; row p of
/// src is src[p * rowStride + j * stride]. For integer types of 1 to 8 bytes,
/// float and double.
template <typename T>
void sortRows(const T *src, int64_t rowStride, int64_t stride, int64_t rows,
              int64_t n, T *out);

/// out (rows x n) = the stable ascending order of each row's indices.
template <typename T>
void argsortRows(const T *src, int64_t rowStride, int64_t stride, int64_t rows,
                 int64_t n, int64_t *out);

/// out (rows x n) = each row partitioned at the ranks kth[0, nk) (any order,
/// in [0, n)): the element a sort would put at each kth is there, no larger
/// one before it and no smaller one after (np.partition; NaN last). Long
/// rows are split over threads around brackets from a sample.
template <typename T>
void partitionRows(const T *src, int64_t rowStride, int64_t stride,
                   int64_t rows, int64_t n, const int64_t *kth, int64_t nk,
                   T *out);
} // namespace cpnrt

#endif // CPNRT_LIB_SORT_H
