//===- BackgroundCompile.cpp - compiling windows on a thread of their own -===//
//
// Part of cpnumeric. A window that the baseline tier runs while its kernel is
// compiled (Baseline.cpp decides which) is queued here; one compiler thread
// compiles the queued windows in order, each from a copy of its trace whose
// inputs are detached from Python's arrays, and writes the disk cache. The
// Engine collects finished compiles on its own thread (collectCompiles, at
// every flush): the next time the window comes, its kernel is in the memory
// cache. Nothing here touches Python or the Engine's statistics.
//
// One compile runs at a time in the process (lockCompiler in lib/Compiler):
// a window the calling thread must compile at once waits for the thread's
// current compile, or takes its own job off the queue (takeCompile).
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"
#include "cpn/Compiler/Kernel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <mutex>
#include <pthread.h>
#include <thread>

namespace cpn {

using namespace detail;

/// A queued window and, once compiled, its kernel or the compiler's error.
struct CompileJob {
  uint64_t key = 0;
  Trace trace; // inputs detached
  std::vector<int32_t> outputs, donors;
  CompilerOptions options;
  std::string text; // the disk cache's check text, made at the flush
  std::chrono::steady_clock::time_point queued;
  // Set by the compiler thread under the worker's lock; done last.
  CompileResult result;
  std::string error;
  bool done = false;
  // Dropped at exit or at a fork before it was compiled: compiled on the
  // calling thread if it is needed (not a failure).
  bool cancelled = false;
  // Queued on its first sighting (big enough to pay at once), not because it
  // repeated: a repeating window may take its place in a full queue.
  bool firstSighting = false;
};

namespace {
/// The compiler thread and its queue. Leaked: a compile may run while static
/// destructors do; the process's exit waits for it (stopWorker, atexit).
struct Worker {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::shared_ptr<CompileJob>> queue;
  std::shared_ptr<CompileJob> running;
  std::thread thread;
  bool started = false, stopping = false;
  bool forked = false; // a fork's child: no thread, no background compiles
};

Worker *current = new Worker();
std::atomic<bool> compiling{false};
Worker &worker() { return *current; }

void workerLoop() {
  // The program goes on meanwhile (op by op, on one core): the compile
  // takes the others.
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  setCompileThreadCap(std::max(1u, cores - 1));

  Worker &w = worker();
  std::unique_lock<std::mutex> lock(w.mutex);
  for (;;) {
    w.cv.wait(lock, [&] { return w.stopping || !w.queue.empty(); });
    if (w.stopping)
      return;
    std::shared_ptr<CompileJob> job = w.queue.front();
    w.queue.pop_front();
    w.running = job;
    lock.unlock();
    CompileResult result;
    std::string error;
    compiling.store(true, std::memory_order_relaxed);
    try {
      result = compileWindow(job->trace, job->outputs, job->donors,
                             job->options, job->key, job->text,
                             "background compile ");
    } catch (const std::exception &e) {
      error = e.what();
      if (error.empty())
        error = "the compiler failed";
    } catch (...) {
      error = "the compiler failed";
    }
    compiling.store(false, std::memory_order_relaxed);
    lock.lock();
    job->result = std::move(result);
    job->error = std::move(error);
    job->done = true;
    w.running = nullptr;
    w.cv.notify_all();
  }
}

/// At exit: no new compile starts; the one running finishes (LLVM's statics
/// must outlive it: Python's atexit calls this before any is destroyed; the
/// C atexit registered with the thread is for embedders, and comes after the
/// destructors of statics first used by a compile).
void stopWorker() {
  Worker &w = worker();
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.stopping = true;
    if (!w.started || w.forked)
      return;
    for (const std::shared_ptr<CompileJob> &job : w.queue)
      job->cancelled = job->done = true;
    w.queue.clear();
  }
  w.cv.notify_all();
  if (w.thread.joinable())
    w.thread.join();
}

/// Before a fork: the compiler thread is between compiles (the compiler's
/// lock) and its queue still (the worker's lock), so that the child copies
/// a consistent state; both are held until the fork returns.
void beforeFork() {
  lockCompilerForFork();
  current->mutex.lock();
}

void afterForkInParent() {
  current->mutex.unlock();
  unlockCompilerAfterFork();
}

/// A fork's child has no compiler thread: its queued windows are compiled
/// when they are needed, on the calling thread.
void afterForkInChild() {
  Worker *old = current;
  // The parent's thread and its locks are not the child's: a fresh worker
  // without a thread (the old one is leaked), its jobs cancelled.
  for (const std::shared_ptr<CompileJob> &job : old->queue)
    job->cancelled = job->done = true;
  if (old->running)
    old->running->cancelled = old->running->done = true;
  current = new Worker();
  current->started = true;
  current->forked = true;
  resetCompilerLockAfterFork();
}
} // namespace

bool detail::backgroundCompileRunning() {
  return compiling.load(std::memory_order_relaxed);
}

bool Engine::compileInBackground(uint64_t key,
                                 const std::vector<int32_t> &outputs,
                                 const std::vector<int32_t> &donors,
                                 bool firstSighting) {
  if (!options_.backgroundCompile || compiling_.count(key))
    return false;
  Worker &w = worker();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.stopping || w.forked)
    return false;
  if (w.queue.size() >= kMaxQueuedCompiles) {
    // Full: a window that repeats takes the place of the newest one queued
    // on its first sighting (which may never come again); else not queued.
    auto it = std::find_if(w.queue.rbegin(), w.queue.rend(),
                           [](const std::shared_ptr<CompileJob> &j) {
                             return j->firstSighting;
                           });
    if (firstSighting || it == w.queue.rend())
      return false;
    compiling_.erase((*it)->key);
    w.queue.erase(std::next(it).base());
  }
  if (!w.started) {
    w.started = true;
    w.thread = std::thread(workerLoop);
    std::atexit(stopWorker);
    pthread_atfork(beforeFork, afterForkInParent, afterForkInChild);
  }
  auto job = std::make_shared<CompileJob>();
  job->key = key;
  job->trace = trace_;
  job->trace.detachInputs();
  job->outputs = outputs;
  job->donors = donors;
  job->options = options_;
  job->text = diskCacheText(trace_, outputs, donors, options_);
  job->queued = std::chrono::steady_clock::now();
  job->firstSighting = firstSighting;
  w.queue.push_back(job);
  compiling_[key] = job;
  w.cv.notify_all();
  return true;
}

void Engine::stopCompiles() { stopWorker(); }

void Engine::waitCompilerIdle() {
  Worker &w = worker();
  std::unique_lock<std::mutex> lock(w.mutex);
  w.cv.wait(lock, [&] { return w.forked || (w.queue.empty() && !w.running); });
}

double Engine::compileRemaining(uint64_t key) const {
  auto it = compiling_.find(key);
  double estimate = compileEstimate(trace_.size());
  if (it == compiling_.end())
    return estimate;
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - it->second->queued)
                       .count();
  // Past its estimate, a compile is taken to need half as long again as
  // it has run.
  return std::max(estimate - elapsed, 0.5 * elapsed);
}

void Engine::collectCompiles() {
  detail::EngineGate gate; // stats() may ask while another thread flushes
  if (compiling_.empty())
    return;
  Worker &w = worker();
  std::vector<std::shared_ptr<CompileJob>> done;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    for (auto it = compiling_.begin(); it != compiling_.end();)
      if (it->second->done) {
        done.push_back(it->second);
        it = compiling_.erase(it);
      } else {
        ++it;
      }
  }
  for (const std::shared_ptr<CompileJob> &job : done)
    finishCompile(*job);
}

std::shared_ptr<Executable> Engine::takeCompile(uint64_t key) {
  auto it = compiling_.find(key);
  if (it == compiling_.end())
    return nullptr;
  std::shared_ptr<CompileJob> job = it->second;
  compiling_.erase(it);
  Worker &w = worker();
  auto t0 = std::chrono::steady_clock::now();
  {
    std::unique_lock<std::mutex> lock(w.mutex);
    auto queued = std::find(w.queue.begin(), w.queue.end(), job);
    if (queued != w.queue.end()) {
      // Not started: compiled here, now, from the current trace.
      w.queue.erase(queued);
      return nullptr;
    }
    w.cv.wait(lock, [&] { return job->done; });
  }
  stats_.compileWaitSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return finishCompile(*job);
}

std::shared_ptr<Executable> Engine::finishCompile(CompileJob &job) {
  if (job.cancelled)
    return nullptr;
  if (!job.error.empty()) {
    // The baseline tier keeps running the window; if it cannot, a compile
    // on the calling thread reports the error (and the window runs in parts).
    compileFailed_.insert(job.key);
    return nullptr;
  }
  recordCompile(job.result);
  ++stats_.backgroundCompiles;
  kernelCache()[job.key] = job.result.exe;
  return job.result.exe;
}

} // namespace cpn
