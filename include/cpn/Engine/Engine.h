//===- Engine.h - recording, windows, flushes, @jit -------------*- C++ -*-===//
//
// Part of cpnumeric.
//
// The process-wide Engine between the bindings and the runtime: it records
// ops into the current trace, cuts it into windows, obtains each window's
// kernel from the compiler (Compiler.h, Kernel.h) or runs it in the baseline
// tier, submits kernels to the runtime's task graph and collects np.errstate's
// reports. Defined in lib/Engine; nothing in lib/Compiler calls it.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_ENGINE_ENGINE_H
#define CPN_ENGINE_ENGINE_H

#include "cpn/Compiler/Compiler.h"
#include "cpn/Trace/Trace.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cpn {
namespace detail {
class LoopBody;
} // namespace detail

/// A compiled trace (cpn/Compiler/Kernel.h).
class Executable;
/// A window queued for the compiler thread (BackgroundCompile.cpp).
struct CompileJob;
struct CompileResult;

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
  /// Threads the runner may compute on (its runs of blocks): the kernels'
  /// count, one fewer while the compiler thread has a window.
  int threads = 1;
  /// Set by the runner when an op failed after a donated input was written
  /// in place: the window cannot be compiled instead; its values fail, with
  /// this kind (Runtime: the message names the exception's class).
  std::string error;
  cpnrt::ErrorKind errorKind = cpnrt::ErrorKind::Runtime;
};
/// Runs a window op by op (the bindings set it: NumPy's loops and the
/// runtime's library calls); false, having written nothing, when it cannot
/// (an op it does not run, or one that failed: the window is compiled).
using BaselineRunner = std::function<bool(BaselineWindow &)>;

/// The process-wide engine: the current trace, the cache of executables by
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

  /// Several threads may record and flush (Python threads: the GIL is let
  /// go inside a flush, by NumPy's loops in the baseline tier and by library
  /// calls): record and flush hold the engine's gate, which its owner may
  /// take again; another thread waits for it through `waiter`, which the
  /// bindings set to release the GIL while it waits (`wait` blocks until
  /// the gate is this thread's).
  static void setGateWaiter(void (*waiter)(void (*wait)()));

  /// Compiles (or finds in the cache) and submits the current trace; every
  /// result still referenced from Python gets a store. Returns at once: the
  /// work runs on the runtime's task graph.
  void flush();

  /// The work of the ops recorded and not yet flushed, as the baseline tier
  /// counts it (per op the elements it computes or reads): what a sync now
  /// would run.
  uint64_t pendingWork() const;

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

  /// Collects the compiler thread's finished windows into the kernel cache
  /// (and the stats); flushes do it too.
  void collectCompiles();
  /// Waits until the compiler thread has nothing queued or running (any
  /// thread; touches no Engine state).
  static void waitCompilerIdle();
  /// At exit (Python's atexit, before any static is destroyed): no compile
  /// starts any more; waits for the one running.
  static void stopCompiles();

  /// The baseline tier's runner (none: every window is compiled).
  void setBaselineRunner(BaselineRunner runner) {
    baseline_ = std::move(runner);
  }

private:
  /// The executable of the current trace: from the memory or disk cache,
  /// else compiled, unless `baseline` is given and the window runs in the
  /// baseline tier (then *baseline is set, nullptr returned, trace cleared).
  /// With `local` (CPN_PARTITION under several ranks), the kernel is this
  /// rank's program (cpn-localize).
  /// `part`: with `local`, which program of the window (CompilerOptions::
  /// partitionPart).
  std::shared_ptr<Executable> obtain(const std::vector<int32_t> &outputs,
                                     const std::vector<int32_t> &donors,
                                     bool *baseline = nullptr,
                                     bool local = false, int64_t part = 0);
  /// Kernels with offset arguments: when the current window has the code
  /// shape (`shapeKey`: its shapeHash with outputs and donors) of an earlier
  /// window but other view or update offsets, marks those offsets as kernel
  /// arguments (TraceOp::offsetArg) and returns the key of that kernel;
  /// else 0 (the window's own key: offsets are constants).
  uint64_t chooseOffsetArgs(uint64_t shapeKey);
  bool runBaseline(uint64_t key, const std::vector<int32_t> &outputs,
                   const std::vector<int32_t> &donors);
  void recordCompile(const CompileResult &r);
  // Background compiles (BackgroundCompile.cpp): queues the current window
  // for the compiler thread (false: not queued: off, full, or already
  // there); collects finished ones into the kernel cache; takes this
  // window's (waiting while it compiles; null when it was still queued or
  // failed: compile it here); the expected seconds until it is compiled.
  bool compileInBackground(uint64_t key, const std::vector<int32_t> &outputs,
                           const std::vector<int32_t> &donors,
                           bool firstSighting);
  std::shared_ptr<Executable> takeCompile(uint64_t key);
  std::shared_ptr<Executable> finishCompile(CompileJob &job);
  double compileRemaining(uint64_t key) const;
  /// Runs `exe` on the current trace's inputs. Under several ranks with
  /// `plan` (the kernel is this rank's program) the rows it reads are
  /// exchanged first and its split outputs stay split; without, every split
  /// input is gathered first (the kernel reads it whole). With `border`
  /// (the plan's border program), `exe` is the interior program: it runs
  /// reading only the inputs' blocks, beside their halo rounds, and
  /// `border` after them.
  void submit(const std::shared_ptr<Executable> &exe,
              const std::vector<int32_t> &outputs,
              const std::vector<int32_t> &donors,
              const RankPlan *plan = nullptr,
              const std::shared_ptr<Executable> &border = nullptr);
  /// This rank's plan for the current window (planRanks, kept by key).
  const RankPlan &rankPlan(const std::vector<int32_t> &outputs,
                           const std::vector<int32_t> &donors);
  void recoverWindow();
  /// CPN_SIMULATE_RANKS: adds what the window about to run would move on
  /// options_.simulateRanks ranks to stats_.simulated (each window's
  /// partition worked out once, kept in simulated_).
  void simulateWindow(const std::vector<int32_t> &outputs,
                      const std::vector<int32_t> &donors);

  bool capturing_ = false;
  Trace trace_;
  // Set at the end of a statement once the trace is long enough; the window is
  // cut before the next op, when the statement's temporaries (the right-hand
  // side of `u[...] = rhs`) are dead and need no buffer.
  static size_t tailPeriod(const Trace &t, bool whole);
  void notePartitioned(const TraceOp &op);
  bool contractsSplitRows(const TraceOp &op) const;
  bool combinedOverRanks(const TraceOp &op) const;
  std::vector<size_t> stageCuts() const;
  void flushStages(const std::vector<size_t> &cuts);
  void flushWindow();
  static bool failLocalCompile(int rank);
  void recoverPartitioned(const std::vector<int32_t> &outputs,
                          const std::vector<int32_t> &donors,
                          const std::string &why);
  bool cutPending_ = false;
  // Where a trace without statement ends is cut (0: 4 * traceLimit): a
  // multiple of the period of the last runaway window's ops, so that the
  // windows of a loop `x = f(x)` start at the same point of its body and
  // are one kernel.
  size_t runawayLimit_ = 0;
  // The body length those windows are cut at (0: none found), and its ops'
  // signatures (LoopBody).
  size_t runawayPeriod_ = 0;
  std::vector<uint64_t> runawayBody_;
  // The flush under way is a runaway cut; the current window began after
  // one (else at a sync point or a statement's cut: where an iteration
  // begins).
  bool afterRunawayCut_ = false, windowAfterRunaway_ = false;
  bool runawayCut();
  size_t bodyMultipleLimit() const;
  // The loop body the recent ops repeat, across windows (LoopBody.h): where
  // a statement end may cut the window.
  std::shared_ptr<detail::LoopBody> loopBody_;
  // Under partitioning: the window reads rows of a split-size value at an
  // offset (a stencil's shifted views); its loop body is then a window of
  // its own (statementEnd).
  bool shiftedRows_ = false;
  CompilerOptions options_;
  CompilerStats stats_;
  uint8_t fpChecks_ = 0;
  bool fpQuiet_ = false;
  std::array<uint8_t, 3> fpActions_{};
  std::shared_ptr<const FpSites> fpSites() const;
  BaselineRunner baseline_;
  /// The engine's gate, held from beginCapture to endCapture (Engine.cpp).
  std::shared_ptr<void> captureGate_;
  // Seconds the baseline tier has spent on each window (by kernel key): a
  // window is compiled once they reach what a compile costs.
  std::unordered_map<uint64_t, double> baselineSpent_;
  // Every compile so far (not reset with the stats): the expected cost of
  // a window's compile, from its op count.
  double compileSecondsTotal_ = 0;
  uint64_t compileOpsTotal_ = 0;
  uint64_t compileCount_ = 0;
  double compileEstimate(size_t ops) const;
  // The baseline tier's seconds per unit of work (windowWork), learned from
  // its runs: what running a window there is expected to cost.
  double baselinePerWork_ = 1e-9;
  double baselineEstimate(uint64_t work, size_t ops) const;
  // Windows queued or compiling on the compiler thread, by key, until
  // collected; windows whose background compile failed (they stay in the
  // baseline tier).
  std::unordered_map<uint64_t, std::shared_ptr<CompileJob>> compiling_;
  // Per code shape (chooseOffsetArgs): the offsets of its first window, the
  // sets of offset positions made arguments so far (a window uses the
  // smallest that holds every offset that moved), and whether a kernel with
  // offset arguments failed to compile (constant offsets from then on).
  struct OffsetFamily {
    std::vector<int64_t> first;
    std::vector<std::vector<size_t>> argSets;
    bool disabled = false;
  };
  std::unordered_map<uint64_t, OffsetFamily> offsetFamilies_;
  std::unordered_map<uint64_t, SimulatedComm> simulated_;
  std::unordered_map<uint64_t, RankPlan> plans_;
  uint64_t currentFamily_ = 0;
  std::unordered_set<uint64_t> compileFailed_;
};

/// At most this many windows wait for the compiler thread.
constexpr size_t kMaxQueuedCompiles = 4;

} // namespace cpn

#endif // CPN_ENGINE_ENGINE_H
