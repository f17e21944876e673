//===- Threads.cpp - the library calls' worker threads -------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). onThreads (LibCall.h) runs its
// parts on workers that live as long as the process, not on threads started
// for each call: starting and joining a thread cost 30-60 us here, and each
// new thread built its own per-thread state (a vqsort Sorter) again. A sort
// of 10^5 keys on two threads took 0.57 ms, against 0.34 ms on one.
//
// The caller and the workers claim a job's parts as they come, so a worker
// that wakes late (an idle vCPU) costs no wait: the caller runs what it
// finds unclaimed. After a job a worker spins for a moment (back-to-back
// calls, a sort's rounds, find it awake), then sleeps on a condition
// variable, so idle workers never hold a core that the kernels' OpenMP
// threads want.
// One job runs on the workers at a time; a call made while they are busy
// (from inside a part, or from a second thread) starts threads of its own.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Threads.h"
#include "LibCall.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <pthread.h>

namespace {
/// Spins this long for the next job before sleeping.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// One worker: woken by a post of the caller.
struct Worker {
  std::atomic<uint64_t> posted{0};
  std::mutex m;
  std::condition_variable wake;
};

struct Pool {
  std::mutex busy; // held by the caller whose job the workers run
  std::vector<std::unique_ptr<Worker>> workers;
  /// The job's parts are claimed, by the caller and the workers alike, from
  /// one word: its generation (high 32 bits), its part count (16 bits) and
  /// the next unclaimed part (low 16 bits). A worker that wakes late (an
  /// idle vCPU's wake-up took 50-400 us here) finds the parts taken and the
  /// caller not waiting for it; a claim of a finished job's word fails.
  std::atomic<uint64_t> claim{0};
  uint32_t generation = 0;
  void (*fn)(void *, int64_t) = nullptr; // the job's, stable while it runs
  void *ctx = nullptr;
  std::atomic<int64_t> remaining{0}; // parts not finished

  static constexpr uint64_t kPartMask = 0xffff;

  /// Runs parts of job `gen` while any is unclaimed.
  void drain(uint32_t gen) {
    uint64_t v = claim.load(std::memory_order_acquire);
    for (;;) {
      if (uint32_t(v >> 32) != gen ||
          (v & kPartMask) >= ((v >> 16) & kPartMask))
        return;
      if (!claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        continue;
      // Claimed: the job is the current one until this part finishes.
      fn(ctx, int64_t(v & kPartMask));
      remaining.fetch_sub(1, std::memory_order_acq_rel);
      v = claim.load(std::memory_order_acquire);
    }
  }

  void work(Worker &w) {
    uint64_t seen = 0;
    for (;;) {
      auto until = std::chrono::steady_clock::now() + kSpin;
      uint64_t g;
      while ((g = w.posted.load(std::memory_order_acquire)) == seen &&
             std::chrono::steady_clock::now() < until)
        for (int i = 0; i < 64; ++i)
          relax();
      if (g == seen) {
        std::unique_lock<std::mutex> lock(w.m);
        w.wake.wait(lock, [&] {
          return (g = w.posted.load(std::memory_order_acquire)) != seen;
        });
      }
      seen = g;
      drain(uint32_t(g)); // the post is the job's generation
    }
  }

  void run(int64_t n, void (*f)(void *, int64_t), void *c) {
    while (int64_t(workers.size()) < n - 1) { // started once, kept
      // Kept only once its thread runs (a thread that could not start must
      // not be waited for).
      auto w = std::make_unique<Worker>();
      std::thread thread([this, wp = w.get()] { work(*wp); });
      workers.push_back(std::move(w));
      thread.detach();
    }
    fn = f;
    ctx = c;
    uint32_t gen = ++generation;
    remaining.store(n, std::memory_order_relaxed);
    claim.store((uint64_t(gen) << 32) | (uint64_t(n) << 16),
                std::memory_order_release);
    for (int64_t i = 0; i + 1 < n; ++i) {
      Worker &w = *workers[i];
      {
        std::lock_guard<std::mutex> lock(w.m);
        w.posted.store(gen, std::memory_order_release);
      }
      w.wake.notify_one();
    }
    try {
      drain(gen);
    } catch (...) { // the other parts still use the caller's frame
      remaining.fetch_sub(1, std::memory_order_acq_rel); // the part that threw
      cancelUnclaimed(gen);
      waitForParts();
      throw;
    }
    waitForParts();
  }

  /// Claims the parts of job `gen` that no thread took, without running them.
  void cancelUnclaimed(uint32_t gen) {
    uint64_t v = claim.load(std::memory_order_acquire);
    while (uint32_t(v >> 32) == gen &&
           (v & kPartMask) < ((v >> 16) & kPartMask))
      if (claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        remaining.fetch_sub(1, std::memory_order_acq_rel);
  }

  /// Spins, then yields (with more ranks than cores a worker may be waiting
  /// for this core).
  void waitForParts() {
    for (int spins = 0; remaining.load(std::memory_order_acquire) != 0;)
      if (++spins < 4096)
        relax();
      else
        std::this_thread::yield();
  }
};

/// Never destroyed (workers may still sleep in it at exit); a forked child,
/// which has none of the parent's threads, starts a pool of its own.
Pool *&pool() {
  static Pool *p = [] {
    pthread_atfork(nullptr, nullptr, [] { pool() = new Pool; });
    return new Pool;
  }();
  return p;
}

/// Whether this thread is running part 0 of a pool job (it holds `busy`).
thread_local bool inPoolJob = false;

/// The team this thread's calls run on (setThreadParallelBackend), and
/// whether one of its jobs is running here (a nested call runs its parts on
/// this thread, in order: parts never wait for each other).
thread_local cpnrt::ParallelBackend threadBackend = nullptr;
thread_local bool inBackendJob = false;

void onNewThreads(int64_t n, void (*fn)(void *, int64_t), void *ctx) {
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < n; ++t)
    threads.emplace_back([fn, ctx, t] { fn(ctx, t); });
  fn(ctx, 0);
  for (std::thread &t : threads)
    t.join();
}
} // namespace

void cpnrt::lib::runOnThreads(int64_t n, void (*fn)(void *, int64_t),
                              void *ctx) {
  if (n >= int64_t(Pool::kPartMask)) { // more parts than a claim word holds
    onNewThreads(n, fn, ctx);
    return;
  }
  if (n <= 1) {
    if (n == 1)
      fn(ctx, 0);
    return;
  }
  if (threadBackend) {
    if (inBackendJob) {
      for (int64_t t = 0; t < n; ++t)
        fn(ctx, t);
      return;
    }
    inBackendJob = true;
    struct ResetBackend {
      ~ResetBackend() { inBackendJob = false; }
    } resetBackend;
    threadBackend(n, fn, ctx);
    return;
  }
  Pool *p = pool();
  std::unique_lock<std::mutex> lock(p->busy, std::defer_lock);
  if (inPoolJob || !lock.try_lock()) { // nested, or another caller's job
    onNewThreads(n, fn, ctx);
    return;
  }
  inPoolJob = true;
  struct Reset {
    ~Reset() { inPoolJob = false; }
  } reset;
  p->run(n, fn, ctx);
}

cpnrt::ParallelBackend
cpnrt::setThreadParallelBackend(ParallelBackend backend) {
  ParallelBackend old = threadBackend;
  threadBackend = backend;
  return old;
}
