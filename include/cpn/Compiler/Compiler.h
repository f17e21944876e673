//===- Compiler.h - trace to native code, and the flush --------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_COMPILER_COMPILER_H
#define CPN_COMPILER_COMPILER_H

#include "cpn/Trace/Trace.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace cpn {

/// Shape-generic kernels (cpnc signatures with `:` dimensions): the trace was
/// recorded with a distinct representative size for each dynamic dimension
/// (keys; values number the dimensions). Every dimension of that size is
/// dynamic in the compiled code. Empty: all dimensions are static.
using ShapeSymbols = std::map<int64_t, int>;

/// Settings that the Python registry of CPN_* variables passes down.
struct CompilerOptions {
  std::string dumpDir;    // CPN_DUMP_IR: write every stage of each compile
  size_t traceLimit = 64; // CPN_TRACE_LIMIT: cut windows at this many ops
  int optLevel = 3;       // CPN_OPT_LEVEL
  std::string cacheDir;   // CPN_CACHE_DIR: compiled kernels on disk ("" = off)
  // CPN_CACHE_MAX_BYTES: the disk cache's bound (0: none)
  uint64_t cacheMaxBytes = uint64_t(1) << 30;
  // CPN_BASELINE_WORK: a window whose work (elements computed,
  // multiply-adds of products) is below this runs in the baseline tier
  // instead of waiting for a compile, until the time spent on it there
  // reaches what a compile costs; then it is compiled. 0: always compile.
  uint64_t baselineWork = uint64_t(1) << 22;
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
  uint64_t windowsRecovered = 0; // windows that failed whole, run in parts
  uint64_t valuesFailed = 0;     // values left uncomputed by such failures
  uint64_t baselineWindows = 0;  // windows run op by op, not compiled
  double baselineSeconds = 0;
};

/// The exact classification of np.errstate checks, compiled only when a run
/// needs it (on the thread that runs the kernel): how often, and how long.
struct CheckCompileStats {
  uint64_t compilations = 0;
  double seconds = 0;
};
CheckCompileStats checkCompileStats();
void resetCheckCompileStats();

/// A compiled trace: a native function taking one pointer per input and per
/// output buffer.
class Executable;

/// Builds the cpn module of a trace whose outputs are `outputs` (op indices)
/// and returns its text (the `cpn` stage).
std::string buildModuleText(const Trace &trace,
                            const std::vector<int32_t> &outputs);

/// The text of a trace with these outputs at a stage: "trace", "cpn", a
/// lowering stage ("linalg", "fused", "bufferized", "loops", "llvm-dialect")
/// or "llvm" (the LLVM IR as optimized for this machine).
std::string stageText(const Trace &trace, const std::vector<int32_t> &outputs,
                      const std::string &stage, int optLevel,
                      const ShapeSymbols &symbols = {});

/// How `compileObject` builds an ahead-of-time object (cpnc).
struct ObjectOptions {
  std::string symbol;   // the entry point: void symbol(void **args)
  int optLevel = 3;     // LLVM's -O level
  bool openmp = true;   // false: sequential loop nests (cpnc --target cpu)
  std::string dumpDir;  // numbered files of every pass under dumpDir/symbol
  ShapeSymbols symbols; // dynamic dimensions (then memref descriptors)
};

/// Compiles a trace with these outputs into a position-independent ELF object
/// for this machine that exports one function, `opts.symbol`, taking one
/// pointer per slot: slot i points to the data pointer of input i, then of
/// each output, as the JIT's entry points. With `symbols`, each input and
/// output takes 3 + 2 * rank slots instead (a memref descriptor: allocated
/// and aligned pointer, offset, sizes, strides in elements). The object needs
/// at link time: libomp (unless !openmp), libmvec, libm,
/// `_mlir_memref_to_llvm_alloc/free` and, for matmuls, `cpn_gemm_f32/f64` (see
/// cpnrt/Blas.h).
std::vector<char> compileObject(const Trace &trace,
                                const std::vector<int32_t> &outputs,
                                const ObjectOptions &opts);

/// What a trace costs once fused and bufferized, read off its bufferized IR.
struct TraceCost {
  int64_t values = 0;        // ops in the trace
  int64_t outputs = 0;       // values that get a store
  int64_t kernels = 0;       // loop nests, copies and BLAS calls
  int64_t temporaries = 0;   // buffers allocated inside the kernel
  int64_t bytesMoved = 0;    // bytes the loop nests and calls read and write
  int64_t argumentBytes = 0; // the inputs' and outputs' stores
  int64_t peakBytes = 0;     // arguments + the most temporaries live at once
};
TraceCost traceCost(const Trace &trace, const std::vector<int32_t> &outputs);

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

/// np.errstate for compiled kernels: the checked ops of a trace (site order,
/// see Trace.h) and what errstate said to do for each category (divide,
/// over, invalid: 0 ignore, 1 warn, 2 raise, 3 call, 4 print, 5 log) when it
/// was flushed.
struct FpSites {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, int32_t>> locations; // per name
  std::array<uint8_t, 3> actions{};
};

/// One checked op of a finished kernel run that found errors: its FpError
/// bits and the actions of its FpSites.
struct FpReport {
  std::string op;
  uint8_t bits = 0;
  std::array<uint8_t, 3> actions{};
  std::string file; // where the op was recorded ("" if unknown)
  int32_t line = 0;
};

/// Takes the reports of the kernel runs finished so far (in the order they
/// finished). Python turns them into warnings or FloatingPointError.
std::vector<FpReport> takeFpReports();
/// Whether takeFpReports would return any.
bool hasFpReports();

/// A whole function's trace, recorded by @jit in one window and compiled
/// once: later calls run it on new inputs without tracing.
struct CapturedTrace {
  /// The trace's inputs as recorded: the caller's arrays and the constants
  /// the function captured (its scalars, closed-over arrays).
  std::vector<NodeRef> inputs;
  /// The ops whose results were alive at the end (returned, written into an
  /// argument, or kept elsewhere), in the executable's output order, and
  /// those results as recorded.
  std::vector<int32_t> outputs;
  std::vector<NodeRef> results;
  /// The trace itself (inputs detached from their stores), for
  /// `lower().as_text()` and `cost()`.
  Trace trace;
  /// Set by cpnc for shape-generic kernels (see ShapeSymbols).
  ShapeSymbols shapeSymbols;
  std::shared_ptr<Executable> exe;   // null when the trace is empty
  std::shared_ptr<const FpSites> fp; // null when no op is checked
  /// Runs on `args` (materialized, shaped and typed as `inputs`) and returns
  /// new values for `results`, computed asynchronously.
  std::vector<NodeRef> call(const std::vector<NodeRef> &args) const;
};

/// A window for the baseline tier: the trace, the ops whose values are
/// wanted and the stores to write them into (fresh, or a donated input's:
/// the runner may then also update that input in place),
/// the fp sites of checked ops (null: none) and their status words to set as
/// a kernel would (see kFpSitesPerWord).
struct BaselineWindow {
  const Trace &trace;
  const std::vector<int32_t> &outputs;
  const std::vector<int32_t> &donors; // per output: its donor input, or -1
  const std::vector<cpnrt::StoreRef> &dests;
  const FpSites *fp;
  std::vector<int32_t> &status;
};
/// Runs a window op by op (the bindings set it: NumPy's loops and the
/// runtime's library calls); false, having written nothing, when it cannot.
using BaselineRunner = std::function<bool(BaselineWindow &)>;

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

  /// np.errstate: the FpError bits checked in ops recorded from now on
  /// (those whose action is not 'ignore') and each category's action (see
  /// FpSites). `quiet` turns checking off for ops recorded while it is set
  /// (library code whose NaNs or infinities NumPy does not report).
  void setFpState(uint8_t checks, std::array<uint8_t, 3> actions);
  void setFpQuiet(bool quiet);

  /// @jit: flushes, then records the function's whole trace as one window
  /// (no cuts; a flush while capturing is an error).
  void beginCapture();
  bool capturing() const { return capturing_; }
  /// Compiles the captured trace (memory and disk cache as for windows);
  /// with `execute` also runs it, giving every live result a store.
  /// Without, the trace is dropped: its pending values must not be read.
  std::shared_ptr<CapturedTrace> endCapture(bool execute);

  /// The baseline tier's runner (none: every window is compiled).
  void setBaselineRunner(BaselineRunner runner) {
    baseline_ = std::move(runner);
  }

private:
  /// The executable of the current trace: from the memory or disk cache,
  /// else compiled, unless `baseline` is given and the window runs in the
  /// baseline tier (then *baseline is set, nullptr returned, trace cleared).
  std::shared_ptr<Executable> obtain(const std::vector<int32_t> &outputs,
                                     const std::vector<int32_t> &donors,
                                     bool *baseline = nullptr);
  bool runBaseline(uint64_t key, const std::vector<int32_t> &outputs,
                   const std::vector<int32_t> &donors);
  std::string cacheText(const std::vector<int32_t> &outputs,
                        const std::vector<int32_t> &donors) const;
  void submit(const std::shared_ptr<Executable> &exe,
              const std::vector<int32_t> &outputs,
              const std::vector<int32_t> &donors);
  void recoverWindow();

  bool capturing_ = false;
  Trace trace_;
  // Set at the end of a statement once the trace is long enough; the window is
  // cut before the next op, when the statement's temporaries (the right-hand
  // side of `u[...] = rhs`) are dead and need no buffer.
  bool cutPending_ = false;
  CompilerOptions options_;
  CompilerStats stats_;
  uint8_t fpChecks_ = 0;
  bool fpQuiet_ = false;
  std::array<uint8_t, 3> fpActions_{};
  std::shared_ptr<const FpSites> fpSites() const;
  BaselineRunner baseline_;
  // Seconds the baseline tier has spent on each window (by kernel key): a
  // window is compiled once they reach what a compile costs.
  std::unordered_map<uint64_t, double> baselineSpent_;
  // Every compile so far (not reset with the stats): its expected cost.
  double compileSecondsTotal_ = 0;
  uint64_t compileCount_ = 0;
  double compileEstimate() const;
};

} // namespace cpn

#endif // CPN_COMPILER_COMPILER_H
