//===- Engine.cpp - the Engine: recording, windows, flushes ---------------===//
//
// Part of cpnumeric.
//
// lib/Engine, its own library between the bindings and the runtime. Owns the
// process-wide Engine: recording ops into the current trace, cutting windows
// at statement ends, flushing (the memory cache, the disk cache, else a
// compile), running a window that failed to compile in parts (recoverWindow),
// @jit's capture and CapturedTrace::call, a window's stores and submission
// (submit) and np.errstate's state. The baseline tier's side (the cost model,
// runBaseline) is in Baseline.cpp, the compiler thread in
// BackgroundCompile.cpp, a window's kernel (cache keys' text, the memory
// cache, compileWindow) in Kernels.cpp, running a kernel on the task graph
// (runKernel, the OpenMP team) in RunKernel.cpp, the fp report queue in
// FpReports.cpp.
//
// Calls the compiler's public API only (Compiler.h: planDonations; Kernel.h:
// compile, openmpRuntime, cacheDirUsable, cachedEntryPresent, loadCached,
// storeCached), the runtime and the baseline runner the bindings set.
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"
#include "LoopBody.h"
#include "cpn/Compiler/Compiler.h"
#include "cpn/Compiler/Kernel.h"
#include "cpn/Trace/ViewBox.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Error.h"
#include "cpnrt/Lapack.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Store.h"
#include "cpnrt/TaskGraph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace cpn {

using namespace detail;

void Engine::setFpState(uint8_t checks, std::array<uint8_t, 3> actions) {
  fpChecks_ = checks & FpAll;
  fpActions_ = actions;
  trace_.setFpChecks(fpQuiet_ ? 0 : fpChecks_);
}

void Engine::setFpQuiet(bool quiet) {
  fpQuiet_ = quiet;
  trace_.setFpChecks(fpQuiet_ ? 0 : fpChecks_);
}

std::shared_ptr<const FpSites> Engine::fpSites() const {
  std::vector<std::string> names = trace_.fpSites();
  if (names.empty())
    return nullptr;
  auto fp = std::make_shared<FpSites>();
  fp->names = std::move(names);
  fp->locations = trace_.fpSiteLocations();
  fp->actions = fpActions_;
  return fp;
}

Engine &Engine::global() {
  static Engine *e = new Engine();
  return *e;
}

namespace {
/// The engine's gate (Engine::setGateWaiter): its owner and how many times
/// it entered.
std::mutex gateMutex;
std::condition_variable gateFree;
std::thread::id gateOwner;
int gateDepth = 0;
void (*gateWaiter)(void (*)()) = nullptr;

/// Blocks until the gate is free, then takes it (gateMutex not held).
void waitForGate() {
  std::unique_lock<std::mutex> lock(gateMutex);
  gateFree.wait(lock, [] { return gateDepth == 0; });
  gateOwner = std::this_thread::get_id();
  gateDepth = 1;
}

} // namespace

detail::EngineGate::EngineGate() {
  {
    std::lock_guard<std::mutex> lock(gateMutex);
    if (gateDepth == 0 || gateOwner == std::this_thread::get_id()) {
      gateOwner = std::this_thread::get_id();
      ++gateDepth;
      return;
    }
  }
  if (gateWaiter)
    gateWaiter(&waitForGate);
  else
    waitForGate();
}

detail::EngineGate::~EngineGate() {
  std::lock_guard<std::mutex> lock(gateMutex);
  if (--gateDepth == 0) {
    gateOwner = std::thread::id();
    gateFree.notify_all();
  }
}

namespace {
using Gate = detail::EngineGate;
} // namespace

void Engine::setGateWaiter(void (*waiter)(void (*wait)())) {
  gateWaiter = waiter;
}

NodeRef Engine::record(std::string name, const std::vector<NodeRef> &operands,
                       std::vector<int64_t> iattrs, std::string sattr,
                       std::vector<int64_t> shape, cpnrt::DType dtype) {
  Gate gate;
  ++stats_.opsRecorded;
  if (cutPending_)
    flush();
  NodeRef r = trace_.add(std::move(name), operands, std::move(iattrs),
                         std::move(sattr), std::move(shape), dtype);
  if (!capturing_) {
    if (!loopBody_)
      loopBody_ = std::make_shared<detail::LoopBody>();
    loopBody_->recorded(detail::opSignature(trace_.ops().back()));
    if (options_.partitioning())
      notePartitioned(trace_.ops().back());
  }
  // A runaway trace without statements (x = f(x) in a loop) is cut too,
  // before the next op (as a statement's cut): the Python code between the
  // two has then let go of the body's temporaries (a function's locals at
  // its last op), which are outputs if cut at once (Black-Scholes' step: 8
  // outputs and 5 loop nests against 2 and 2). Cut at a multiple of the loop's
  // body, each window then starts where the previous one did: one kernel for
  // all (a window of a fixed length drifts through a body that does not divide
  // it: a new kernel every window; Black-Scholes with a new rate each step,
  // 167 ops a step, compiled every window). See runawayCut.
  size_t limit = runawayLimit_ ? runawayLimit_ : 4 * options_.traceLimit;
  if (trace_.size() >= limit && !capturing_ && runawayCut())
    cutPending_ = true;
  return r;
}

/// At a runaway trace's limit: whether to cut it now, and the limit of the
/// windows after it. The body's length p: the one the windows before were
/// cut at while the last ops recorded are that body (a window of one body
/// cannot show its period itself; a sync point's ops may come between); else
/// the trace's own period (tailPeriod); else, for a body too long to show in
/// this window, none yet: the window grows (twice as long, up to 16 trace
/// limits) and is looked at again. Windows are then p x the bodies that fill 4
/// trace limits; when the body was found in a window that began at a sync point
/// or a statement's cut (where an iteration begins, as after every later
/// sync), the next window is cut short to end where a body ends, so that
/// windows after a sync inside the loop are the same kernel as before it.
/// The known body's largest multiple within 4 trace limits (at least one
/// body); 0 when no body is known.
size_t Engine::bodyMultipleLimit() const {
  size_t p = runawayPeriod_, full = 4 * options_.traceLimit;
  return p ? std::max(p, full / p * p) : 0;
}

bool Engine::runawayCut() {
  size_t n = trace_.size();
  size_t p = 0;
  bool known = runawayPeriod_ && loopBody_ && n >= runawayPeriod_ &&
               loopBody_->endsWith(runawayBody_);
  if (known)
    p = runawayPeriod_;
  else
    p = tailPeriod(trace_, /*whole=*/true);
  if (!p && n < 16 * options_.traceLimit) {
    runawayLimit_ = std::min(2 * n, 16 * options_.traceLimit);
    return false;
  }
  if (!p)
    p = tailPeriod(trace_, /*whole=*/false);
  runawayPeriod_ = p;
  if (p && !known && loopBody_)
    runawayBody_ = loopBody_->last(p);
  runawayLimit_ = bodyMultipleLimit();
  if (p && !known && !windowAfterRunaway_ && n % p)
    runawayLimit_ += p - n % p;
  afterRunawayCut_ = true; // read by flush()
  return true;
}

/// The length of the shortest op sequence that the trace repeats from its
/// second repetition to its end (`whole`), or that its last ops repeat (at
/// least three times), or 0: the body of the loop that is recording it.
/// Ops compare by what they compute (name, attributes, shape, dtype) and by
/// their operands: inputs are alike, and an op's result is the same operand
/// when it is as far back in both (made in the previous iteration) or is
/// the same op (made before the loop).
size_t Engine::tailPeriod(const Trace &t, bool whole) {
  const std::vector<TraceOp> &ops = t.ops();
  size_t n = ops.size();
  std::vector<uint64_t> sig(n);
  for (size_t i = 0; i < n; ++i) {
    const TraceOp &op = ops[i];
    uint64_t h = std::hash<std::string>()(op.name);
    h = hashMix(h, std::hash<std::string>()(op.sattr));
    h = hashMix(h, static_cast<uint64_t>(op.dtype) << 8 | op.fpChecks);
    for (int64_t v : op.iattrs)
      h = hashMix(h, static_cast<uint64_t>(v));
    for (int64_t d : op.shape)
      h = hashMix(h, static_cast<uint64_t>(d) ^ 0x5bd1e995u);
    sig[i] = hashMix(h, op.operands.size());
  }
  auto alike = [&](size_t i, size_t j) { // j = i - p
    if (sig[i] != sig[j])
      return false;
    for (size_t k = 0; k < ops[i].operands.size(); ++k) {
      int64_t a = ops[i].operands[k], b = ops[j].operands[k];
      if ((a < 0) != (b < 0))
        return false;
      if (a >= 0 && a != b && int64_t(i) - a != int64_t(j) - b)
        return false;
    }
    return true;
  };
  // The whole trace one body after another from its second body on (its
  // first may hold what came before the loop, and it reads the values a
  // loop carries into the window as inputs), a whole body compared at
  // least: the loop's outer body, where an inner loop's repeats only in
  // stretches (a shorter comparison took a multiple of the inner body).
  if (whole) {
    for (size_t p = 1; 3 * p <= n; ++p) {
      bool periodic = true;
      for (size_t i = n; i-- > 2 * p && periodic;)
        periodic = alike(i, i - p);
      if (periodic)
        return p;
    }
    return 0;
  }
  // Its last ops, three bodies at least (a window that began before the
  // loop).
  for (size_t p = 1; 3 * p <= n; ++p) {
    bool periodic = true;
    for (size_t i = n - 2 * p; i < n && periodic; ++i)
      periodic = alike(i, i - p);
    if (periodic)
      return p;
  }
  return 0;
}

/// Under partitioning: whether `op`'s result is each rank's partial, combined
/// over the ranks after its kernel (cpn-localize), when it is an output of its
/// window: a sum, product, min, max, any or all over the rows of a split-size
/// value, or a product that contracts them (contractsSplitRows).
bool Engine::combinedOverRanks(const TraceOp &op) const {
  if (op.name == "matmul")
    return op.operands.size() == 2 && contractsSplitRows(op);
  if (op.name != "reduce" || op.operands.size() != 1 ||
      std::find(op.iattrs.begin(), op.iattrs.end(), 0) == op.iattrs.end())
    return false;
  static const char *kinds[] = {"sum", "prod", "min", "max", "any", "all"};
  return numel(trace_.operandShape(op.operands[0])) >=
             options_.partitionThreshold &&
         std::any_of(std::begin(kinds), std::end(kinds),
                     [&](const char *k) { return op.sattr == k; });
}

/// Under partitioning: the ops before which the trace is cut into stages,
/// each run as a window of its own: the first op that reads a value combined
/// over the ranks (combinedOverRanks) made in its stage. Every rank's trace
/// is the same, so every rank cuts alike. The stages of a loop's iterations
/// are one kernel (`counts = onehot.sum(axis=0)`, then `centroids = sums /
/// counts`: the iteration's rows, its partial sums, then what reads them),
/// and what a stage makes that nothing after it reads needs no store, as in
/// one window (a window cut after the reduction instead kept the
/// iteration's temporaries that Python still held: k-means' 77 MB `diff`).
std::vector<size_t> Engine::stageCuts() const {
  const std::vector<TraceOp> &ops = trace_.ops();
  std::vector<size_t> cuts;
  std::vector<char> combined(ops.size(), 0);
  size_t start = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (int32_t r : ops[i].operands)
      if (r >= 0 && size_t(r) >= start && combined[r]) {
        cuts.push_back(i);
        start = i;
        break;
      }
    combined[i] = combinedOverRanks(ops[i]);
  }
  return cuts;
}

/// The trace recorded again stage by stage (stageCuts), each stage flushed
/// as a window: its values that a later stage reads are its outputs too.
void Engine::flushStages(const std::vector<size_t> &cuts) {
  Trace whole = trace_;
  trace_.clear();
  const std::vector<TraceOp> &ops = whole.ops();
  size_t n = ops.size();
  std::vector<NodeRef> held(n), value(n);
  std::vector<size_t> lastUse(n, 0);
  for (size_t i = 0; i < n; ++i) {
    held[i] = ops[i].result.lock();
    for (int32_t r : ops[i].operands)
      if (r >= 0)
        lastUse[r] = i;
  }
  uint8_t checks = trace_.fpChecks();
  // The op being recorded when the flush came keeps its line.
  std::string file = trace_.locationFile();
  int32_t line = trace_.locationLine();
  std::vector<size_t> bounds(cuts);
  bounds.push_back(n);
  size_t lo = 0;
  for (size_t hi : bounds) {
    for (size_t i = lo; i < hi; ++i) {
      const TraceOp &op = ops[i];
      std::vector<NodeRef> operands;
      const ValueNode *failed = nullptr;
      for (int32_t r : op.operands) {
        operands.push_back(r >= 0 ? value[r] : whole.inputs()[-r - 1]);
        const ValueNode &x = *operands.back();
        if (!x.store && x.opIndex < 0 && !x.error.empty())
          failed = &x; // an earlier stage's window could not compute it
      }
      if (failed) {
        NodeRef v = held[i] ? held[i] : std::make_shared<ValueNode>();
        v->shape = op.shape;
        v->dtype = op.dtype;
        v->opIndex = -1;
        v->error = failed->error;
        v->errorKind = failed->errorKind;
        value[i] = v;
        continue;
      }
      trace_.setFpChecks(op.fpChecks);
      trace_.setLocation(op.file, op.line);
      value[i] = trace_.add(op.name, operands, op.iattrs, op.sattr, op.shape,
                            op.dtype, held[i]);
    }
    trace_.setFpChecks(checks);
    trace_.setLocation(file, line);
    // Values used only inside this stage need no store.
    for (size_t i = lo; i < hi; ++i)
      if (!held[i] && lastUse[i] < hi)
        value[i].reset();
    if (!trace_.empty()) {
      try {
        flushWindow();
      } catch (const std::exception &e) {
        // This rank's part could not be compiled (recoverPartitioned): the
        // later stages' values that Python holds fail with it.
        for (size_t i = hi; i < n; ++i)
          if (held[i]) {
            held[i]->opIndex = -1;
            held[i]->error = e.what();
            held[i]->errorKind = cpnrt::ErrorKind::Runtime;
          }
        throw;
      }
    }
    // What no later stage reads is let go now (lower peak memory).
    for (size_t i = 0; i < hi; ++i)
      if (value[i] && lastUse[i] < hi && !held[i])
        value[i].reset();
    lo = hi;
  }
}

/// Under partitioning: whether the product `op` contracts over the rows of
/// a split-size value (`x.T @ v`: its left side a transposed view of x;
/// `y @ v`: a 1 x n view of a vector y): cpn-localize's partial products,
/// summed over the ranks, where the product is an output of its window, as
/// a reduction over rows (notePartitioned ends the window after it).
bool Engine::contractsSplitRows(const TraceOp &op) const {
  int32_t l = op.operands[0];
  const std::vector<int64_t> &rs = trace_.operandShape(op.operands[1]);
  if (l < 0 || rs.size() != 2)
    return false;
  const TraceOp &view = trace_.ops()[l];
  if (view.name != "view" || view.operands.size() != 1 ||
      view.iattrs.size() != 3 || view.iattrs[0] != 0 ||
      view.shape.size() != 2 || view.offsetArg)
    return false;
  const std::vector<int64_t> &src = trace_.operandShape(view.operands[0]);
  int64_t n = rs[0];
  bool transposed = src.size() == 2 && src[0] == n && view.shape[0] == src[1] &&
                    view.shape[1] == n && view.iattrs[1] == 1 &&
                    view.iattrs[2] == src[1];
  bool vector = src.size() == 1 && src[0] == n && view.shape[0] == 1 &&
                view.shape[1] == n && view.iattrs[1] == 0 &&
                view.iattrs[2] == 1;
  return (transposed || vector) && (numel(src) >= options_.partitionThreshold ||
                                    numel(rs) >= options_.partitionThreshold);
}

/// Under partitioning: whether `op` reads a block of rows of a value big
/// enough to be split at other rows than its whole (u[:-2, 1:-1], u[2:]):
/// a rank reads its neighbours' rows there (shiftedRows_). (A reduction
/// over the rows of such a value, whose use inside the window would make
/// every rank compute the whole value it reduces, cuts the window into
/// stages at its flush: stageCuts.)
void Engine::notePartitioned(const TraceOp &op) {
  if (op.operands.size() != 1 || op.name != "view")
    return;
  const std::vector<int64_t> &src = trace_.operandShape(op.operands[0]);
  if (src.empty() || numel(src) < options_.partitionThreshold)
    return;
  // Fewer rows at the base's row stride: a shifted block of rows (not a
  // transposed view, whose first stride is 1: `onehot.T`).
  if (src[0] == 0)
    return;
  int64_t rowStride = numel(src) / src[0];
  bool block = src.size() == op.shape.size() && op.shape[0] < src[0] &&
               op.iattrs.size() > 1 && op.iattrs[1] == rowStride;
  for (size_t k = 1; block && k < src.size(); ++k)
    block = op.shape[k] <= src[k]; // not x.T of an (n, 1) column
  if (block)
    shiftedRows_ = true;
}

void Engine::statementEnd() {
  Gate gate;
  if (capturing_)
    return;
  size_t n = trace_.size();
  if (n >= options_.traceLimit &&
      (!loopBody_ || loopBody_->cutHere(n, options_.traceLimit)))
    cutPending_ = true;
  // Several ranks, partitioned, a loop whose body reads split rows at a
  // shift (a stencil): a window per body. Two bodies in one window would
  // make each rank recompute the first body's rows that the second reads
  // from its neighbours (ghost zones, wider with each body: O(k^2) ops for
  // k bodies); one body per window exchanges its halo rows once. Every
  // rank records the same ops, so every rank cuts alike.
  else if (shiftedRows_ && options_.partitioning() && loopBody_ &&
           loopBody_->bodyEnds(n, options_.traceLimit))
    cutPending_ = true;
}

void Engine::flush() {
  Gate gate;
  cutPending_ = false;
  shiftedRows_ = false;
  // The next window begins here: after a runaway cut (mid-statement) or at
  // a sync point or a statement's cut (runawayCut). After the latter, a
  // runaway window is cut at the known body's multiple again (not at a
  // grown or realigning limit of the window before).
  windowAfterRunaway_ = afterRunawayCut_;
  afterRunawayCut_ = false;
  if (!windowAfterRunaway_)
    runawayLimit_ = bodyMultipleLimit();
  if (trace_.empty())
    return;
  if (capturing_)
    throw std::logic_error(
        "cpnumeric: a value was needed while @jit was tracing");
  ++stats_.flushes;
  if (options_.partitioning()) {
    std::vector<size_t> cuts = stageCuts();
    if (!cuts.empty()) {
      flushStages(cuts);
      return;
    }
  }
  flushWindow();
}

/// Compiles (or finds) and submits the kernel of the trace as it is: its
/// live results the outputs.
void Engine::flushWindow() {
  std::vector<int32_t> outputs = trace_.liveResults();
  stats_.deadValuesSkipped += trace_.size() - outputs.size();
  std::vector<int32_t> donors =
      planDonations(trace_, outputs, options_.partitioning());
  if (options_.simulateRanks > 1)
    simulateWindow(outputs, donors);
  std::shared_ptr<Executable> exe;
  bool baseline = false;
  // Several ranks, partitioned: this rank's program, compiled (the
  // baseline tier's choice depends on timing, which ranks do not share).
  bool local = options_.partitioning();
  const RankPlan *plan = nullptr;
  if (local) {
    // cpn-localize walks every rank's rows alike: a failure here is every
    // rank's, and every rank recovers the same way.
    try {
      plan = &rankPlan(outputs, donors);
    } catch (const std::exception &) {
      recoverWindow();
      return;
    }
  }
  // A window that reads halo rows: its interior's and border's programs,
  // so that the interior computes while the halo rows travel. Where they
  // fail to compile, the block's program runs instead (this rank's choice
  // alone: the messages are the same).
  std::shared_ptr<Executable> border;
  try {
    if (local) {
      if (failLocalCompile(options_.rank))
        throw std::runtime_error("CPN_TEST_FAIL_LOCAL_COMPILE");
      if (plan->border > 0 && options_.haloOverlap > 0 &&
          plan->blockElements >= options_.haloOverlap && !plan->partsFailed) {
        try {
          exe = obtain(outputs, donors, nullptr, true, 1);
          border = obtain(outputs, donors, nullptr, true, 2);
        } catch (const std::exception &) {
          exe = border = nullptr;
          plan->partsFailed = true;
        }
      }
      if (!border)
        exe = obtain(outputs, donors, nullptr, true);
    } else {
      exe = obtain(outputs, donors, &baseline);
    }
  } catch (const std::exception &e) {
    if (local) {
      recoverPartitioned(outputs, donors, e.what());
      return;
    }
    if (!trace_.offsetArgCount()) {
      recoverWindow();
      return;
    }
    // The kernel with offset arguments failed to compile: this code shape
    // keeps its offsets constant from now on.
    offsetFamilies_[currentFamily_].disabled = true;
    trace_.setOffsetArgs({});
    try {
      exe = obtain(outputs, donors, local ? nullptr : &baseline, local);
    } catch (const std::exception &) {
      recoverWindow();
      return;
    }
  }
  if (!baseline)
    submit(exe, outputs, donors, plan, border);
}

/// Testing only: CPN_TEST_FAIL_LOCAL_COMPILE=r makes rank r's program of
/// every partitioned window fail to compile (test_mpi.py checks that every
/// rank then ends, with the message).
bool Engine::failLocalCompile(int rank) {
  static const int failing = [] {
    const char *v = std::getenv("CPN_TEST_FAIL_LOCAL_COMPILE");
    return v && *v ? std::atoi(v) : -1;
  }();
  return failing == rank;
}

/// Under partitioning, this rank's program of the window failed to compile
/// (`why`). Where the whole program does not compile either, the window
/// itself cannot be computed, on any rank alike (every rank records the
/// same ops): recoverWindow, as in one process (its kernels compute whole
/// values from gathered inputs, on every rank in the same order). Otherwise
/// only this rank's part fails, and the other ranks go on to collectives
/// this one would never reach (a hang): the values are marked failed and
/// the error raised, which ends every rank (an uncaught error on any rank
/// aborts them all, python/cpnumeric/_ranks.py).
void Engine::recoverPartitioned(const std::vector<int32_t> &outputs,
                                const std::vector<int32_t> &donors,
                                const std::string &why) {
  bool wholeCompiles = true;
  try {
    obtain(outputs, donors, nullptr, false);
  } catch (const std::exception &) {
    wholeCompiles = false;
  }
  if (!wholeCompiles) {
    recoverWindow();
    return;
  }
  std::string msg = "cpnumeric: rank " + std::to_string(options_.rank) +
                    " of " + std::to_string(options_.ranks) +
                    " could not compile its part of a window split over the "
                    "ranks (" +
                    why +
                    "; other ranks may have failed alike); "
                    "CPN_PARTITION=off computes every array on every rank "
                    "instead. Please report this.";
  for (const TraceOp &op : trace_.ops())
    if (NodeRef node = op.result.lock()) {
      node->opIndex = -1;
      node->error = msg;
      node->errorKind = cpnrt::ErrorKind::Runtime;
    }
  trace_.clear();
  throw cpnrt::Error(cpnrt::ErrorKind::Runtime, msg);
}

/// `key` mixed with a window's outputs and donors (the per-window caches of
/// rankPlan and simulateWindow).
static uint64_t outputsKey(uint64_t key, const std::vector<int32_t> &outputs,
                           const std::vector<int32_t> &donors) {
  for (int32_t o : outputs)
    key = hashMix(key, static_cast<uint64_t>(o));
  for (int32_t d : donors)
    key = hashMix(key, 0x5c7a7c400000ull + static_cast<uint64_t>(d));
  return key;
}

const RankPlan &Engine::rankPlan(const std::vector<int32_t> &outputs,
                                 const std::vector<int32_t> &donors) {
  uint64_t key =
      outputsKey(hashMix(hashMix(hashMix(trace_.hash(), 0x91a4c0000ull),
                                 static_cast<uint64_t>(options_.ranks)),
                         static_cast<uint64_t>(options_.partitionThreshold)),
                 outputs, donors);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    if (plans_.size() >= 4096)
      plans_.clear();
    it =
        plans_
            .emplace(key, planRanks(trace_, outputs, donors, options_.ranks,
                                    options_.rank, options_.partitionThreshold))
            .first;
  }
  return it->second;
}

void Engine::simulateWindow(const std::vector<int32_t> &outputs,
                            const std::vector<int32_t> &donors) {
  uint64_t key =
      hashMix(trace_.hash(), static_cast<uint64_t>(options_.simulateRanks));
  key = outputsKey(
      hashMix(key, static_cast<uint64_t>(options_.partitionThreshold)), outputs,
      donors);
  auto it = simulated_.find(key);
  if (it == simulated_.end()) {
    if (simulated_.size() >= 4096)
      simulated_.clear();
    SimulatedComm c;
    try {
      c = simulateRanks(trace_, outputs, donors, options_.simulateRanks,
                        options_.partitionThreshold);
    } catch (const std::exception &) {
      // Counted as moving nothing: the run itself goes on as without it.
    }
    it = simulated_.emplace(key, std::move(c)).first;
  }
  const SimulatedComm &c = it->second;
  SimulatedComm &sum = stats_.simulated;
  sum.bytes += c.bytes;
  sum.operations += c.operations;
  for (const auto &[kind, b] : c.bytesByKind)
    sum.bytesByKind[kind] += b;
  for (const auto &[kind, n] : c.operationsByKind)
    sum.operationsByKind[kind] += n;
  ++stats_.simulatedRuns;
}

uint64_t Engine::chooseOffsetArgs(uint64_t shapeKey) {
  const std::vector<TraceOp> &ops = trace_.ops();
  std::vector<const TraceOp *> movable;
  std::vector<int64_t> offsets;
  for (const TraceOp &op : ops)
    if (hasViewOffset(op)) {
      movable.push_back(&op);
      offsets.push_back(op.iattrs[0]);
    }
  if (movable.empty())
    return 0;
  if (offsetFamilies_.size() >= (1u << 16))
    offsetFamilies_.clear();
  auto [it, fresh] = offsetFamilies_.try_emplace(shapeKey);
  OffsetFamily &family = it->second;
  if (fresh) {
    family.first = offsets;
    return 0;
  }
  if (family.disabled || family.first.size() != offsets.size())
    return 0;
  std::vector<size_t> moved;
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != family.first[i])
      moved.push_back(i);
  if (moved.empty())
    return 0;
  const std::vector<size_t> *args = nullptr;
  for (const std::vector<size_t> &set : family.argSets)
    if (std::includes(set.begin(), set.end(), moved.begin(), moved.end()) &&
        (!args || set.size() < args->size()))
      args = &set;
  if (!args) {
    family.argSets.push_back(moved);
    args = &family.argSets.back();
  }
  currentFamily_ = shapeKey;
  trace_.setOffsetArgs(*args);
  // The kernel's key: the code shape, which offsets are arguments and, for
  // each, whether the view is a box of its base there (the lowering's
  // choice, which must hold at every offset the kernel runs with), and the
  // constant offsets.
  uint64_t key = hashMix(shapeKey, 0x0ff5e7a59ull);
  for (size_t i = 0; i < movable.size(); ++i) {
    const TraceOp &op = *movable[i];
    if (!op.offsetArg) {
      key = hashMix(hashMix(key, static_cast<uint64_t>(offsets[i])),
                    static_cast<uint64_t>(i));
      continue;
    }
    const std::vector<int64_t> &sizes =
        op.name == "update" ? trace_.operandShape(op.operands[1]) : op.shape;
    bool box =
        decomposeView(
            trace_.operandShape(op.operands[0]), offsets[i],
            std::vector<int64_t>(op.iattrs.begin() + 1, op.iattrs.end()), sizes)
            .has_value();
    key = hashMix(hashMix(key, 0xa4600000ull + box), ~static_cast<uint64_t>(i));
  }
  return key;
}

/// A window that failed to compile runs in parts, so that one op the
/// compiler cannot handle costs only the values that depend on it: the ops
/// are recorded again into halves, each compiled alone (values crossing a cut
/// are materialized), recursively until the failing ops are alone. Their
/// results, and the results of every op reading them, keep the compiler's
/// message as their error: reading one, or recording an op on one, raises
/// it (RuntimeError; an error that carries a kind, cpnrt::Error, keeps it
/// and its message). Every other value of the window is computed as if
/// nothing failed.
void Engine::recoverWindow() {
  ++stats_.windowsRecovered;
  Trace failed = trace_;
  trace_.clear();
  const std::vector<TraceOp> &ops = failed.ops();
  size_t n = ops.size();
  // Python's nodes (strong while recovering), each op's value as recorded
  // again, and the error of each op that cannot be computed.
  std::vector<NodeRef> held(n), value(n);
  std::vector<cpnrt::Failure> error(n);
  std::vector<size_t> lastUse(n, 0);
  for (size_t i = 0; i < n; ++i) {
    held[i] = ops[i].result.lock();
    for (int32_t r : ops[i].operands)
      if (r >= 0)
        lastUse[r] = i;
  }
  uint8_t checks = trace_.fpChecks();
  std::function<void(size_t, size_t)> run = [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      const TraceOp &op = ops[i];
      std::vector<NodeRef> operands;
      for (int32_t r : op.operands) {
        if (r >= 0 && error[r]) {
          error[i] = error[r];
          break;
        }
        operands.push_back(r >= 0 ? value[r] : failed.inputs()[-r - 1]);
      }
      if (error[i])
        continue;
      trace_.setFpChecks(op.fpChecks);
      trace_.setLocation(op.file, op.line);
      value[i] = trace_.add(op.name, operands, op.iattrs, op.sattr, op.shape,
                            op.dtype, held[i]);
    }
    trace_.setFpChecks(checks);
    trace_.setLocation("", 0);
    // Values used only inside this part need no store.
    for (size_t i = lo; i < hi; ++i)
      if (!held[i] && lastUse[i] < hi)
        value[i].reset();
    if (trace_.empty())
      return;
    std::vector<int32_t> outputs = trace_.liveResults();
    // The whole program (not a rank's): donations as in one process.
    std::vector<int32_t> donors = planDonations(trace_, outputs);
    std::shared_ptr<Executable> exe;
    // Why this part cannot be compiled: the compiler's message, naming the
    // op; an error that carries a kind is the user's as it is.
    bool failed = false;
    cpnrt::Failure failure;
    try {
      exe = obtain(outputs, donors);
    } catch (const cpnrt::Error &e) {
      failed = true;
      failure = {e.kind(), e.what()};
    } catch (const std::exception &e) {
      failed = true;
      failure = {cpnrt::ErrorKind::Runtime, e.what()};
    }
    if (failed) {
      trace_.clear();
      if (hi - lo == 1) {
        if (failure.kind == cpnrt::ErrorKind::Runtime)
          failure.message = "cpnumeric: this value could not be computed: " +
                            failure.message + " (op " + ops[lo].name + ")";
        error[lo] = std::move(failure);
        return;
      }
      size_t mid = lo + (hi - lo) / 2;
      run(lo, mid);
      run(mid, hi);
      return;
    }
    submit(exe, outputs, donors);
  };
  run(0, n);
  for (size_t i = 0; i < n; ++i)
    if (held[i] && error[i]) {
      held[i]->opIndex = -1;
      held[i]->error = error[i].message;
      held[i]->errorKind = error[i].kind;
      ++stats_.valuesFailed;
    }
}

void Engine::recordCompile(const CompileResult &r) {
  stats_.compileSeconds += r.seconds;
  stats_.compileMlirSeconds += r.mlirSeconds;
  ++stats_.compilations;
  if (r.diskWritten)
    ++stats_.diskWrites;
  compileSecondsTotal_ += r.seconds;
  compileOpsTotal_ += r.ops;
  ++compileCount_;
}

std::shared_ptr<Executable> Engine::obtain(const std::vector<int32_t> &outputs,
                                           const std::vector<int32_t> &donors,
                                           bool *baseline, bool local,
                                           int64_t part) {
  auto windowKey = [&](uint64_t key) {
    if (local) // one rank's program: its rank, the ranks, the threshold
      key =
          hashMix(hashMix(hashMix(key, 0x10ca1000ull + uint64_t(options_.rank)),
                          uint64_t(options_.ranks)),
                  uint64_t(options_.partitionThreshold));
    if (local && part) // its interior's or border's program
      key = hashMix(key, 0xb0d3e0000ull + uint64_t(part));
    for (size_t j = 0; j < outputs.size(); ++j) {
      key = hashMix(key, static_cast<uint64_t>(outputs[j]));
      key =
          hashMix(key, static_cast<uint64_t>(static_cast<int64_t>(donors[j])));
    }
    for (size_t j = outputs.size(); j < donors.size(); ++j) // updated inputs
      key = hashMix(key, 0x5c7a7c400000ull + static_cast<uint64_t>(donors[j]));
    return key;
  };
  uint64_t key = windowKey(trace_.hash());
  collectCompiles();
  auto &cache = kernelCache();
  // Flushed windows (not @jit's, not the parts of a failed window) whose
  // kernel with these offsets is not known may share one that takes them
  // as arguments.
  if (baseline && !outputs.empty() && !cache.count(key))
    if (uint64_t shared = chooseOffsetArgs(windowKey(trace_.shapeHash())))
      key = shared;
  std::shared_ptr<Executable> exe;
  auto it = cache.find(key);
  if (it != cache.end()) {
    ++stats_.cacheHits;
    exe = it->second;
  } else if (!outputs.empty() && !compiling_.count(key) &&
             !options_.cacheDir.empty() && cacheDirUsable(options_.cacheDir) &&
             cachedEntryPresent(options_.cacheDir, key, options_.optLevel)) {
    auto t0 = std::chrono::steady_clock::now();
    cpnrt::ProfileScope scope("compile", "disk cache lookup " + keyHex(key));
    exe = loadCached(options_.cacheDir, key, options_.optLevel,
                     cacheText(trace_, outputs, donors));
    if (exe) {
      exe->name = "kernel " + keyHex(key);
      setCallFacts(*exe, trace_);
      ++stats_.diskHits;
      stats_.diskLoadSeconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      cache[key] = exe;
    }
  }
  if (!exe && baseline && runBaseline(key, outputs, donors)) {
    *baseline = true;
    return nullptr;
  }
  if (!exe && !outputs.empty()) {
    // The compiler thread's, if it has this window (waiting for it);
    // else compiled here. A failure throws: the caller decides what becomes
    // of the trace (flush runs it in parts, @jit drops it).
    exe = takeCompile(key);
    if (!exe) {
      CompilerOptions options = options_;
      options.partition = local;
      options.partitionPart = local ? part : 0;
      CompileResult r = compileWindow(
          trace_, outputs, donors, options, key,
          diskCacheText(trace_, outputs, donors, options_), "compile ");
      recordCompile(r);
      exe = r.exe;
    }
    cache[key] = exe;
  }
  return exe;
}

void Engine::submit(const std::shared_ptr<Executable> &exe,
                    const std::vector<int32_t> &outputs,
                    const std::vector<int32_t> &donors, const RankPlan *plan,
                    const std::shared_ptr<Executable> &border) {
  std::vector<cpnrt::StoreRef> reads, writes;
  // Byte offsets of the kernel's arguments in their stores (one rank's
  // program reads and writes rows of them).
  std::vector<size_t> offsets;
  auto rowBytes = [](const cpnrt::StoreRef &s) {
    return s->shape().empty() || s->shape()[0] == 0
               ? size_t(0)
               : s->nbytes() / size_t(s->shape()[0]);
  };
  bool ranks = options_.ranks > 1 && exe;
  size_t nInputs = trace_.inputs().size();
  cpnrt::TaskGraph &graph = cpnrt::TaskGraph::global();
  for (size_t i = 0; i < trace_.inputs().size(); ++i) {
    const cpnrt::StoreRef &s = trace_.inputs()[i]->store;
    reads.push_back(s);
    const std::vector<int64_t> *rows =
        plan && !plan->inputRows[i].empty() ? &plan->inputRows[i] : nullptr;
    if (ranks && rows)
      cpnrt::comm::exchangeRows(graph, s, *rows);
    else if (ranks)
      cpnrt::comm::gatherBlocks(graph, s);
    offsets.push_back(rows ? size_t((*rows)[2 * options_.rank]) * rowBytes(s)
                           : 0);
  }
  // The offsets the kernel takes as arguments, after its inputs.
  if (size_t n = trace_.offsetArgCount()) {
    auto offsetArgs = std::make_shared<cpnrt::Store>(
        cpnrt::DType::i64, std::vector<int64_t>{static_cast<int64_t>(n)});
    std::vector<int64_t> values = trace_.offsetArgs();
    std::copy(values.begin(), values.end(),
              static_cast<int64_t *>(offsetArgs->data()));
    reads.push_back(std::move(offsetArgs));
    ++stats_.offsetArgWindows;
  }
  offsets.resize(reads.size(), 0);
  std::vector<cpnrt::StoreRef> outArgs;
  for (size_t j = 0; j < outputs.size(); ++j) {
    NodeRef node = trace_.ops()[outputs[j]].result.lock();
    if (donors[j] >= 0) {
      node->store = trace_.inputs()[donors[j]]->store;
      ++stats_.buffersDonated;
    } else {
      node->store = std::make_shared<cpnrt::Store>(node->dtype, node->shape);
      outArgs.push_back(node->store);
      offsets.push_back(plan && plan->outputRows[j].first >= 0
                            ? size_t(plan->outputRows[j].first) *
                                  rowBytes(node->store)
                            : 0);
    }
    if (ranks)
      node->store->setDistribution(plan && plan->outputRows[j].first >= 0
                                       ? cpnrt::Distribution::BlockRows
                                       : cpnrt::Distribution::Replicated);
    node->opIndex = -1;
    writes.push_back(node->store);
    ++stats_.valuesMaterialized;
  }
  // Dead inputs the kernel updates in place: written, so ordered after the
  // tasks that still read them.
  for (size_t j = outputs.size(); j < donors.size(); ++j)
    writes.push_back(trace_.inputs()[donors[j]]->store);
  std::shared_ptr<const FpSites> fp = fpSites();
  trace_.clear();
  if (!exe)
    return;
  // Partial results of reductions over split rows, combined over the ranks.
  std::vector<std::pair<cpnrt::StoreRef, cpnrt::comm::ReduceOp>> combine;
  if (ranks && plan)
    for (size_t j = 0; j < outputs.size(); ++j) {
      const std::string &c = plan->combine[j];
      if (c.empty())
        continue;
      using R = cpnrt::comm::ReduceOp;
      R op = c == "sum"    ? R::Sum
             : c == "prod" ? R::Prod
             : c == "min"  ? R::Min
             : c == "max"  ? R::Max
             : c == "any"  ? R::LogicalOr
                           : R::LogicalAnd;
      combine.emplace_back(writes[j], op);
    }
  if (border && plan) {
    // The interior reads and writes the blocks of the split stores only
    // (its halo rounds, which write the rows beside them, run meanwhile);
    // the border reads them whole, after the rounds and after the
    // interior (both write the outputs' blocks).
    auto block = [&](const cpnrt::StoreRef &s) -> std::pair<size_t, size_t> {
      int64_t n = s->shape()[0];
      return {
          size_t(cpnrt::comm::blockRow(n, options_.rank, options_.ranks)) *
              rowBytes(s),
          size_t(cpnrt::comm::blockRow(n, options_.rank + 1, options_.ranks)) *
              rowBytes(s)};
    };
    std::vector<std::pair<size_t, size_t>> ranges(reads.size(), {0, SIZE_MAX});
    for (size_t i = 0; i < nInputs && i < reads.size(); ++i)
      if (!plan->inputRows[i].empty() && !reads[i]->shape().empty())
        ranges[i] = block(reads[i]);
    // Split outputs (a donated one's store is its input's, whose halo rows
    // the round writes) and inputs updated in place: their blocks.
    std::vector<std::pair<size_t, size_t>> writeRanges(writes.size(),
                                                       {0, SIZE_MAX});
    for (size_t j = 0; j < writes.size(); ++j) {
      bool split = j < outputs.size() ? plan->outputRows[j].first >= 0
                                      : !plan->inputRows[donors[j]].empty();
      // An output that takes the store of an input no part writes (a held
      // copy: its values are there already, RankPlan::keptInputs).
      if (j < outputs.size() && donors[j] >= 0 && plan->keptInputs[donors[j]])
        writeRanges[j] = {0, 0};
      else if (split && !writes[j]->shape().empty())
        writeRanges[j] = block(writes[j]);
    }
    ++stats_.haloOverlapWindows;
    // One report of the window's floating-point errors, from the border
    // (which runs after the interior).
    auto carry = std::make_shared<std::vector<int32_t>>();
    runKernel(exe, reads, outArgs, writes, fp, offsets, std::move(ranges),
              std::move(writeRanges), carry, /*fpReport=*/false);
    runKernel(border, std::move(reads), std::move(outArgs), std::move(writes),
              std::move(fp), std::move(offsets), {}, {}, carry);
  } else {
    runKernel(exe, std::move(reads), std::move(outArgs), std::move(writes),
              std::move(fp), plan ? std::move(offsets) : std::vector<size_t>{});
  }
  for (auto &[store, op] : combine)
    cpnrt::comm::submitAllReduce(graph, store, store, op, "combine partials");
}

void Engine::beginCapture() {
  Gate gate;
  flush();
  capturing_ = true;
  // Held until endCapture: another thread's ops must not land in the
  // captured function's trace.
  captureGate_ = std::make_shared<Gate>();
}

std::shared_ptr<CapturedTrace> Engine::endCapture(bool execute) {
  Gate gate;
  captureGate_.reset(); // this scope's gate holds it to the end
  capturing_ = false;
  cutPending_ = false;
  auto cap = std::make_shared<CapturedTrace>();
  cap->inputs = trace_.inputs();
  cap->outputs = trace_.liveResults();
  for (int32_t o : cap->outputs)
    cap->results.push_back(trace_.ops()[o].result.lock());
  // No donation: the inputs are the caller's arrays and captured constants,
  // which later calls read again.
  std::vector<int32_t> donors(cap->outputs.size(), -1);
  try {
    if (!trace_.empty())
      cap->exe = obtain(cap->outputs, donors);
  } catch (...) {
    trace_.clear();
    throw;
  }
  cap->trace = trace_;
  cap->trace.detachInputs();
  cap->fp = fpSites();
  if (execute) {
    ++stats_.flushes;
    submit(cap->exe, cap->outputs, donors);
  } else {
    trace_.clear();
  }
  return cap;
}

std::vector<NodeRef>
CapturedTrace::call(const std::vector<NodeRef> &args) const {
  if (args.size() != inputs.size())
    throw std::invalid_argument(
        "cpnumeric: a compiled function got " + std::to_string(args.size()) +
        " inputs; it was traced with " + std::to_string(inputs.size()));
  std::vector<cpnrt::StoreRef> reads, outArgs;
  for (size_t i = 0; i < args.size(); ++i) {
    const NodeRef &a = args[i];
    if (!a->store)
      throw std::invalid_argument("cpnumeric: input " + std::to_string(i) +
                                  " of a compiled function is not computed");
    if (a->shape != inputs[i]->shape || a->dtype != inputs[i]->dtype)
      throw std::invalid_argument(
          "cpnumeric: input " + std::to_string(i) +
          " of a compiled function has another shape or dtype than traced");
    detachIfLent(*a);
    reads.push_back(a->store);
  }
  std::vector<NodeRef> out;
  for (const NodeRef &r : results) {
    auto node = std::make_shared<ValueNode>();
    node->shape = r->shape;
    node->dtype = r->dtype;
    node->store = std::make_shared<cpnrt::Store>(node->dtype, node->shape);
    outArgs.push_back(node->store);
    out.push_back(node);
  }
  // A captured function's kernel reads its inputs whole.
  if (exe && cpnrt::comm::size() > 1)
    for (const cpnrt::StoreRef &s : reads)
      cpnrt::comm::gatherBlocks(cpnrt::TaskGraph::global(), s);
  if (exe)
    runKernel(exe, reads, outArgs, outArgs, fp);
  return out;
}

} // namespace cpn
