//===- Compiler.h - trace to native code, and the flush --------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_COMPILER_COMPILER_H
#define CPN_COMPILER_COMPILER_H

#include "cpn/Trace/Trace.h"

#include <cstdint>
#include <memory>
#include <string>

namespace cpn {

/// Settings that the Python registry of CPN_* variables passes down.
struct CompilerOptions {
  std::string dumpDir;      // CPN_DUMP_IR: write every stage of each compile
  size_t traceLimit = 64;   // CPN_TRACE_LIMIT: cut windows at this many ops
  int optLevel = 3;         // CPN_OPT_LEVEL
  int threads = 0;          // CPN_THREADS: OpenMP threads of kernels, 0 = all
  std::string cacheDir;     // CPN_CACHE_DIR: compiled kernels on disk ("" = off)
};

struct CompilerStats {
  uint64_t flushes = 0;
  uint64_t compilations = 0;
  uint64_t cacheHits = 0;
  uint64_t opsRecorded = 0;
  uint64_t valuesMaterialized = 0;
  uint64_t deadValuesSkipped = 0;
  uint64_t buffersDonated = 0; // outputs written into a dead input's store
  double compileSeconds = 0;
  double compileMlirSeconds = 0; // of which the MLIR pass pipeline
  uint64_t diskHits = 0;         // kernels loaded from CPN_CACHE_DIR
  uint64_t diskWrites = 0;       // kernels written to CPN_CACHE_DIR
  double diskLoadSeconds = 0;
};

/// A compiled trace: a native function taking one pointer per input and per
/// output buffer.
class Executable;

/// Builds the cpn module of a trace whose outputs are `outputs` (op indices)
/// and returns its text (the `cpn` stage).
std::string buildModuleText(const Trace &trace,
                            const std::vector<int32_t> &outputs);

/// Sets the number of OpenMP threads kernels run on (0: all cores) and
/// returns it; loads the OpenMP runtime the kernels call.
int setKernelThreads(int threads);
int kernelThreads();

/// For each output, the input whose store it may be written into (or -1): an
/// input is donatable when nothing but the trace refers to it (its Python
/// handles died, as the old value of `u` after `u[1:-1] = f(u)`). An update
/// chain's root input goes to the chain's result, so the update can be done in
/// place; other outputs take any remaining donatable input of their type.
std::vector<int32_t> planDonations(const Trace &trace,
                                   const std::vector<int32_t> &outputs);

/// The process-wide compiler: the current trace, the cache of executables by
/// trace hash, and flushing.
class Engine {
public:
  static Engine &global();

  Trace &trace() { return trace_; }
  CompilerOptions &options() { return options_; }
  const CompilerStats &stats() const { return stats_; }
  void resetStats() { stats_ = CompilerStats(); }

  NodeRef record(std::string name, const std::vector<NodeRef> &operands,
                 std::vector<int64_t> iattrs, std::string sattr,
                 std::vector<int64_t> shape, cpnrt::DType dtype);

  /// Compiles (or finds in the cache) and submits the current trace; every
  /// result still referenced from Python gets a store. Returns at once: the
  /// work runs on the runtime's task graph.
  void flush();

  /// Called at the end of a statement that wrote an array; flushes when the
  /// trace has reached the window limit, so windows start at statement
  /// boundaries and identical loop iterations give identical windows.
  void statementEnd();

private:
  Trace trace_;
  // Set at the end of a statement once the trace is long enough; the window is
  // cut before the next op, when the statement's temporaries (the right-hand
  // side of `u[...] = rhs`) are dead and need no buffer.
  bool cutPending_ = false;
  CompilerOptions options_;
  CompilerStats stats_;
};

} // namespace cpn

#endif // CPN_COMPILER_COMPILER_H
