//===- AotSupport.cpp - what cpnc-compiled kernels call -------------------===//
//
// Part of cpnumeric's runtime. Linked, with Blas.cpp, into the static library
// libcpnrt_aot.a that `cpnc` puts inside every extension module it writes:
// the kernels there call the same entry points as JIT-compiled ones, without
// libcpnrt's store pool or task graph.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Facts.h"

#include <cstdint>
#include <cstdlib>

/// cpnc's kernels run on the caller's arrays, whose writes the runtime does not
/// see: nothing learned about them could be kept.
std::atomic<uint32_t> *cpnrt::readOnlyFacts(const void *, size_t) {
  return nullptr;
}

extern "C" {
/// Kernel temporaries: 64-byte aligned, as the pool's buffers.
void *_mlir_memref_to_llvm_alloc(uint64_t nbytes) {
  void *p = nullptr;
  if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0)
    return nullptr;
  return p;
}

void _mlir_memref_to_llvm_free(void *p) { std::free(p); }
}
