//===- Random.h - Philox words on the host ----------------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). The words cpn.random_bits computes
// inside kernels (convert-cpn-to-linalg emits the same rounds as MLIR), for
// the draws too small to trace (the eager path).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_RANDOM_H
#define CPNRT_RANDOM_H

#include <cstdint>

namespace cpnrt {
/// out[i] = Philox4x32-10 under `key` (two 32-bit halves, low first) of the
/// counter (counter + i mod 2^64, 0): its first output word shifted up 32
/// bits, or-ed with its second, for i < n.
void philoxWords(uint64_t key, uint64_t counter, int64_t n, uint64_t *out);
} // namespace cpnrt

#endif // CPNRT_RANDOM_H
