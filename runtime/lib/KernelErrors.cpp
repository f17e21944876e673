//===- KernelErrors.cpp - a library call's error, for its kernel ----------===//
//
// Part of cpnumeric's runtime (libcpnrt and libcpnrt_aot). A library call in
// a compiled kernel cannot throw through the kernel's frames: it records its
// first error (kind and NumPy's message) for the calling thread, and the
// kernel's caller takes it after the kernel returns (the Engine's runKernel,
// the baseline tier, cpnc's wrapper through cpn_lib_take_error). See
// cpnrt/Lapack.h.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include <string>
#include <utility>

namespace {
/// The first error of a library call on this thread, until taken.
thread_local cpnrt::Failure kernelError;
} // namespace

void cpnrt::setKernelError(ErrorKind kind, std::string message) {
  if (!kernelError)
    kernelError = {kind, std::move(message)};
}

extern "C" const char *cpn_lib_take_error(int *kind) {
  static thread_local std::string last;
  cpnrt::Failure failure = cpnrt::takeKernelError();
  if (kind)
    *kind = static_cast<int>(failure.kind);
  last = std::move(failure.message);
  return last.c_str();
}

cpnrt::Failure cpnrt::takeKernelError() {
  cpnrt::Failure failure = std::move(kernelError);
  kernelError = {};
  return failure;
}
