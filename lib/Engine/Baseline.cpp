//===- Baseline.cpp - the Engine's baseline tier and its cost model -------===//
//
// Part of cpnumeric. Whether a window runs in the baseline tier (op by op,
// through the runner the bindings set) or is compiled: windowWork and the
// ski rental of Engine::runBaseline (docs/tuning.md, "When cpnumeric
// compiles"). Calls the runtime's task graph and stores and the runner.
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Store.h"
#include "cpnrt/TaskGraph.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace cpn {

using namespace detail;

/// The work of a window for the baseline tier's cost model: per op the
/// elements it computes or reads, whichever is more (an update: those it
/// writes; a library call: its inputs and its output; a product: its
/// multiply-adds); views compute nothing.
static uint64_t windowWork(const Trace &trace) {
  uint64_t work = 0;
  auto numel = [](const std::vector<int64_t> &shape) {
    return static_cast<uint64_t>(cpn::numel(shape));
  };
  for (const TraceOp &op : trace.ops()) {
    if (op.name == "view")
      continue;
    uint64_t n = numel(op.shape);
    if (op.name == "update") {
      n = numel(trace.operandShape(op.operands[1]));
    } else if (op.name == "libcall") {
      for (int32_t r : op.operands)
        n += numel(trace.operandShape(r));
    } else if (op.name == "matmul" && op.shape.size() == 2) {
      const std::vector<int64_t> &a = trace.operandShape(op.operands[0]);
      n *= a.size() == 2 ? static_cast<uint64_t>(a[1]) : 1;
    } else {
      // A reduction reads more elements than it writes.
      for (int32_t r : op.operands)
        n = std::max(n, numel(trace.operandShape(r)));
    }
    work += n;
  }
  return work;
}

uint64_t Engine::pendingWork() const { return windowWork(trace_); }

/// What a window's compile is expected to cost: this process's compiles so
/// far, seconds per op (4 ms per op before the first: a 64-op window
/// 0.25 s), within 20 ms and 2 s.
double Engine::compileEstimate(size_t ops) const {
  double perOp = compileOpsTotal_ ? compileSecondsTotal_ / compileOpsTotal_
                                  : 0.004;
  return std::min(2.0, std::max(0.02, perOp * static_cast<double>(ops)));
}

/// What running a window in the baseline tier is expected to cost: a few
/// microseconds per op (NumPy's call) and the learned time per unit of work.
double Engine::baselineEstimate(uint64_t work, size_t ops) const {
  return 3e-6 * static_cast<double>(ops) +
         baselinePerWork_ * static_cast<double>(work);
}

/// The baseline tier (docs/tuning.md, "When cpnumeric compiles"): a window
/// whose kernel is in neither cache runs op by op (NumPy's loops) when that
/// is expected to take less than waiting for its compile. Meanwhile the
/// compiler thread compiles it once it repeats (or at once when running it
/// so costs an eighth of the compile or more), and the next time it comes
/// its kernel runs: a loop never waits for the compiler, a window seen once
/// is never compiled. Without the compiler thread (CPN_BACKGROUND_COMPILE=0)
/// it is a ski rental: the window runs op by op until the time spent on it
/// reaches the compile's expected cost, then it is compiled (never more than
/// about twice the better choice made in hindsight).
bool Engine::runBaseline(uint64_t key, const std::vector<int32_t> &outputs,
                         const std::vector<int32_t> &donors) {
  if (!baseline_ || options_.baselineWork == 0 || outputs.empty())
    return false;
  uint64_t work = windowWork(trace_);
  if (work >= options_.baselineWork)
    return false;
  size_t ops = trace_.size();
  double expected = baselineEstimate(work, ops);
  auto spent = baselineSpent_.find(key);
  bool seen = spent != baselineSpent_.end();
  // A window whose background compile failed stays here; if the runner
  // cannot run it, the compile on this thread reports the error.
  if (!compileFailed_.count(key)) {
    if (expected >= compileRemaining(key))
      return false; // waiting for the compile costs less
    if (!compiling_.count(key)) {
      bool queued = options_.backgroundCompile &&
                    (seen || 8 * expected >= compileEstimate(ops)) &&
                    compileInBackground(key, outputs, donors, !seen);
      // Without the compiler thread (off, stopped at exit, in a fork's
      // child, its queue full): the ski rental.
      if (!queued && seen && spent->second >= compileEstimate(ops))
        return false;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  // The inputs computed, and every task that reads a donated store done
  // (the runner writes it at once).
  cpnrt::TaskGraph::global().waitAll();
  for (const NodeRef &in : trace_.inputs()) {
    try {
      cpnrt::comm::gatherBlocks(cpnrt::TaskGraph::global(), in->store);
      in->store->wait();
    } catch (const std::exception &) {
      return false; // the compiled window fails with the same error
    }
  }
  std::vector<cpnrt::StoreRef> dests;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const TraceOp &op = trace_.ops()[outputs[j]];
    dests.push_back(donors[j] >= 0
                        ? trace_.inputs()[donors[j]]->store
                        : std::make_shared<cpnrt::Store>(op.dtype, op.shape));
  }
  std::shared_ptr<const FpSites> fp = fpSites();
  std::vector<int32_t> status;
  if (fp)
    status.assign((fp->names.size() + ::cpn::kFpSitesPerWord - 1) /
                      ::cpn::kFpSitesPerWord,
                  0);
  {
    cpnrt::ProfileScope scope("baseline", "baseline " + keyHex(key),
                              "{\"ops\": " + std::to_string(trace_.size()) +
                                  "}");
    BaselineWindow w{trace_, outputs, donors, dests, fp.get(), status};
    // The compiler thread, while it has a window, takes a core.
    w.threads = std::max(1, kernelThreads() - (compiling_.empty() ? 0 : 1));
    try {
      if (!baseline_(w))
        return false;
    } catch (const std::exception &) {
      return false; // compiled instead, which reports the error if it recurs
    }
    if (!w.error.empty()) {
      // A donated input was already written: the values fail, as those of
      // a window that cannot be compiled (see recoverWindow); an error of a
      // kind (a LinAlgError) keeps it and NumPy's message.
      for (int32_t o : outputs)
        if (NodeRef node = trace_.ops()[o].result.lock()) {
          node->opIndex = -1;
          node->store = nullptr;
          node->error =
              w.errorKind == cpnrt::ErrorKind::Runtime
                  ? "cpnumeric: this value could not be computed: " + w.error
                  : w.error;
          node->errorKind = w.errorKind;
          ++stats_.valuesFailed;
        }
      trace_.clear();
      return true;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    NodeRef node = trace_.ops()[outputs[j]].result.lock();
    if (!node)
      continue; // released while the runner ran (a garbage collection)
    node->store = dests[j];
    node->opIndex = -1;
    if (donors[j] >= 0)
      ++stats_.buffersDonated;
    ++stats_.valuesMaterialized;
  }
  if (fp && llvm::any_of(status, [](int32_t w) { return w != 0; }))
    reportFpErrors(*fp, status);
  trace_.clear();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ++stats_.baselineWindows;
  stats_.baselineSeconds += seconds;
  // Seconds per unit of work, from windows big enough for the per-op
  // overhead not to dominate (a moving average; within 0.1 and 50 ns).
  if (work >= 100000) {
    double perWork = std::max(0.0, seconds - 3e-6 * ops) / work;
    baselinePerWork_ = std::min(
        5e-8, std::max(1e-10, 0.8 * baselinePerWork_ + 0.2 * perWork));
  }
  if (baselineSpent_.size() >= (1u << 16))
    baselineSpent_.clear();
  baselineSpent_[key] += seconds;
  return true;
}

} // namespace cpn
