//===- Threads.cpp - the library calls' worker threads -------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). onThreads (LibCall.h) runs its
// parts on workers that live as long as the process, not on threads started
// for each call: starting and joining a thread cost 30-60 us here, and each
// new thread built its own per-thread state (a vqsort Sorter) again. A sort
// of 10^5 keys on two threads took 0.57 ms, against 0.34 ms on one.
//
// Worker i always runs part i of a job (its thread-local state stays warm).
// After a job a worker spins for a moment (back-to-back calls, a sort's
// rounds, find it awake), then sleeps on a condition variable, so idle
// workers never hold a core that the kernels' OpenMP threads want.
// One job runs on the workers at a time; a call made while they are busy
// (from inside a part, or from a second thread) starts threads of its own.
//
//===----------------------------------------------------------------------===//

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

/// One worker: its own job slot, posted by the caller.
struct Worker {
  std::atomic<uint64_t> posted{0};
  void (*fn)(void *, int64_t) = nullptr;
  void *ctx = nullptr;
  std::mutex m;
  std::condition_variable wake;
};

struct Pool {
  std::mutex busy; // held by the caller whose job the workers run
  std::vector<std::unique_ptr<Worker>> workers; // part i + 1 on workers[i]
  std::atomic<int64_t> remaining{0};

  void work(Worker &w, int64_t part) {
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
      w.fn(w.ctx, part);
      remaining.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  void run(int64_t n, void (*fn)(void *, int64_t), void *ctx) {
    while (int64_t(workers.size()) < n - 1) { // started once, kept
      // Kept only once its thread runs (a thread that could not start must
      // not be waited for).
      auto w = std::make_unique<Worker>();
      int64_t part = int64_t(workers.size()) + 1;
      std::thread thread([this, wp = w.get(), part] { work(*wp, part); });
      workers.push_back(std::move(w));
      thread.detach();
    }
    remaining.store(n - 1, std::memory_order_relaxed);
    for (int64_t i = 0; i + 1 < n; ++i) {
      Worker &w = *workers[i];
      w.fn = fn;   // the worker finished its last job: it reads these after
      w.ctx = ctx; // it sees the new post
      {
        std::lock_guard<std::mutex> lock(w.m);
        w.posted.fetch_add(1, std::memory_order_release);
      }
      w.wake.notify_one();
    }
    try {
      fn(ctx, 0);
    } catch (...) { // the other parts still use the caller's frame
      waitForParts();
      throw;
    }
    waitForParts();
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
  if (n <= 1) {
    if (n == 1)
      fn(ctx, 0);
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
