//===- Kernel.h - compiled kernels, for the Engine --------------*- C++ -*-===//
//
// Part of cpnumeric.
//
// What the Engine (lib/Engine) takes from the compiler besides Compiler.h:
// the executable a compile or a disk-cache hit gives, compile itself, the disk
// cache (CPN_CACHE_DIR) and the OpenMP runtime kernels call. The bindings do
// not use it; the compiler's units share the rest through its private
// CompilerInternal.h. Defined in lib/Compiler (Compiler.cpp, KernelCache.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CPN_COMPILER_KERNEL_H
#define CPN_COMPILER_KERNEL_H

#include "cpn/Compiler/Compiler.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cpn {

/// The exact floating-point error classification of a kernel's checked loop
/// nests (the `<kernel>_fp_checkN` functions cpn-lower-fp-flags outlines),
/// compiled on first use: it runs only in blocks where the nest's cheap
/// probe saw a NaN or an infinity, which most runs never do. The kernel
/// calls `cpn_lazy_check(handle, n)`, which compiles all of them once (on
/// whichever thread gets there first; the others wait) and returns the n-th.
struct LazyChecks {
  std::string source; // their MLIR (bytecode), as cpn-lower-fp-flags left it
  std::vector<std::string> names;
  int optLevel = 3;
  std::once_flag once;
  std::vector<void *> fns;
  std::string error; // set when compiling them failed
};

/// A compiled trace: a native function taking one pointer per input and per
/// output buffer.
class Executable {
public:
  std::vector<char> object; // the object code, until written to the disk cache
  void (*fn)(void **) = nullptr;
  std::string name = "kernel";        // "kernel <key>", as its tasks are named
  std::shared_ptr<LazyChecks> checks; // null when the kernel has none
  /// A product or library call of the trace runs on threads other than
  /// OpenMP's (OpenBLAS's, the runtime's sorts and gathers): OpenMP's idle
  /// threads sleep at once in its run (setCallFacts in lib/Engine).
  bool callsLibrary = false;
  /// The trace's library calls are the runtime's algorithms (sorts, gathers,
  /// scans: cpnrt::isRuntimeAlgorithm) beside parallel loops: their parts run
  /// on the kernel's OpenMP threads (cpnrt/Threads.h), no BLAS call.
  bool callsAlgorithms = false;
  /// The kernel calls into the runtime at all (any product, matrix-vector
  /// ones included, or library call), which may wake threads of its own.
  bool callsRuntime = false;
};

namespace detail {

// -- Compiler.cpp -------------------------------------------------------------

/// Compiles a window's trace with these outputs and donors (see
/// planDonations); `key` names its CPN_DUMP_IR directory, `mlirSeconds` gets
/// the time spent in the MLIR pass pipeline. The executable keeps its object
/// code (for the disk cache). Throws when the compiler fails.
std::shared_ptr<Executable> compile(const Trace &trace,
                                    const std::vector<int32_t> &outputs,
                                    const std::vector<int32_t> &donors,
                                    const CompilerOptions &opts, uint64_t key,
                                    double &mlirSeconds);
/// The compiler works on one MLIRContext and one host TargetMachine, so one
/// thread at a time: every public entry point that builds a module (compile,
/// compileObject, stageText, traceCost, buildModuleText) holds this lock
/// until its module is gone, and the Engine holds it over a whole window's
/// compile and disk-cache write. The Engine's compiler thread and the
/// calling thread take turns through it.
std::unique_lock<std::recursive_mutex> lockCompiler();
/// Around a fork (pthread_atfork): held by the forking thread, so that no
/// compile is half done in the child; in the child, the lock as new (the
/// parent's thread that held it is not the child's).
void lockCompilerForFork();
void unlockCompilerAfterFork();
void resetCompilerLockAfterFork();
/// At most this many threads for the compiles this thread makes (0: no cap
/// of its own): the Engine's compiler thread leaves a core to the program,
/// which meanwhile runs the window op by op.
void setCompileThreadCap(unsigned threads);
/// The OpenMP runtime kernels call, loaded once (null if it is missing).
void *openmpRuntime();

// -- KernelCache.cpp ----------------------------------------------------------

bool cacheDirUsable(const std::string &dir);
/// Whether the disk cache has an entry for `key` (a stat: no checks, no
/// read; loadCached makes them).
bool cachedEntryPresent(const std::string &dir, uint64_t key, int optLevel);
std::shared_ptr<Executable> loadCached(const std::string &dir, uint64_t key,
                                       int optLevel, const std::string &text);
bool storeCached(const std::string &dir, uint64_t maxBytes, uint64_t key,
                 int optLevel, const std::string &text, llvm::StringRef object,
                 const LazyChecks *checks);

} // namespace detail
} // namespace cpn

#endif // CPN_COMPILER_KERNEL_H
