//===- Facts.h - what library calls learn about their inputs ----*- C++ -*-===//
//
// Part of cpnumeric's runtime. A library call that finds its operand to be a
// whole store that the running kernel only reads may record what it learned
// about the elements (a matrix is symmetric) on the store, for later calls to
// use until the store is written again. Declared apart from Store.h because
// libcpnrt_aot.a (cpnc's kernels, no stores) links the same calls and answers
// "no store" there.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_FACTS_H
#define CPNRT_FACTS_H

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cpnrt {

/// Bits of Store::facts.
enum Fact : uint32_t {
  /// A matrix-vector product has read the store as a square matrix.
  kFactMatvecSeen = 1u << 0,
  /// The elements, as a square matrix, equal their transpose bit for bit.
  kFactSymmetric = 1u << 1,
  /// ... and they do not.
  kFactNotSymmetric = 1u << 2,
};

/// The facts word of the store whose buffer starts at `data` and holds
/// exactly `nbytes`, if the kernel running on this thread reads that store and
/// does not write it; nullptr otherwise (and always in libcpnrt_aot.a).
std::atomic<uint32_t> *readOnlyFacts(const void *data, size_t nbytes);

} // namespace cpnrt

#endif // CPNRT_FACTS_H
