//===- Lapack.h - LAPACK entry points called by compiled kernels -*- C++
//-*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// A `cpn.libcall` op becomes a call `cpn_lib_<callee>(meta, out, in0, in1,
// in2)`: `meta` points at int64 words describing the arrays and `out`, `inN`
// are their aligned base pointers (0 when absent). The words are
//
//   nArrays, then per array (the output first, then each input):
//     offset, rank, sizes[rank], strides[rank]   (in elements)
//   nArgs, args[nArgs]
//
// Inputs are batches of matrices `(..., M, N)` with any strides; the output
// is a fresh C-contiguous buffer whose layout each entry point documents.
// Errors LAPACK reports (a singular matrix, no convergence) are kept in a
// per-thread slot, with their kind (cpnrt/Error.h), that the task running
// the kernel turns into a failure (see cpnrt::takeKernelError); the output
// is then NaN.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LAPACK_H
#define CPNRT_LAPACK_H

#include "cpnrt/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
using cpn_lib_fn = void (*)(int64_t meta, int64_t out, int64_t in0, int64_t in1,
                            int64_t in2);

struct cpn_lib_entry {
  const char *name;
  cpn_lib_fn fn;
};

/// Every `cpn_lib_*` entry point, for the JIT's symbol table.
const cpn_lib_entry *cpn_lib_functions(size_t *count);

/// The error a library call on this thread reported since the last call
/// (empty: none), cleared, and its cpnrt::ErrorKind into `*kind` (when not
/// null); for code without C++ (cpnc's modules pick the exception's class by
/// the kind).
const char *cpn_lib_take_error(int *kind);
}

namespace cpnrt {
/// The error a library call on this thread reported, cleared (an empty
/// Failure if none).
Failure takeKernelError();
/// Reports an error of a library call (the first one of a kernel is kept):
/// its kind and NumPy's message, without the class's name ("Singular
/// matrix" of kind LinAlg).
void setKernelError(ErrorKind kind, std::string message);
/// The LAPACK entry points (Lapack.cpp): inv, solve, slogdet, cholesky, qr,
/// svd, eigh, eig and lstsq, float32 and float64.
std::vector<cpn_lib_entry> lapackFunctions();
/// The BLAS entry point of Blas.cpp: stacked matmul, float32 and float64.
std::vector<cpn_lib_entry> blasFunctions();
/// The entry points of Algorithms.cpp (sorting, searching), Indexing.cpp
/// (gathers, scatters) and Scans.cpp (ufunc.accumulate, ufunc.at).
std::vector<cpn_lib_entry> algorithmFunctions();
std::vector<cpn_lib_entry> fftFunctions();
/// Whether `callee` (without "cpn_lib_": "put_f8") computes its output as a
/// copy of its first input with some elements rewritten (put, ufunc.at), and
/// skips that copy when the output buffer is the first input's: the compiler
/// then marks the call in place (cpn.libcall {in_place}).
inline bool updatesFirstInput(std::string_view callee) {
  return callee.substr(0, 4) == "put_" || callee.substr(0, 3) == "at_";
}
/// Whether `callee` (without "cpn_lib_") is one of the runtime's own
/// algorithms (sorting, searching, gathers, scans, FFT: parts on the
/// runtime's threads, see cpnrt/Threads.h), not a BLAS/LAPACK call that runs
/// on OpenBLAS's threads.
bool isRuntimeAlgorithm(std::string_view callee);
/// Whether `callee` may be given its first input's buffer as its output
/// (same shape and type, row-major): the scans (cumsum, cumprod, cummax,
/// ..., Scans.cpp) read each element before they write it, on every split.
/// The compiler then marks a scan of a temporary in place (cpn.libcall
/// {in_place}; one-shot bufferization copies the temporary where another op
/// still reads it).
inline bool scanMayRunInPlace(std::string_view callee) {
  return callee.substr(0, 3) == "cum";
}
} // namespace cpnrt

#endif // CPNRT_LAPACK_H
