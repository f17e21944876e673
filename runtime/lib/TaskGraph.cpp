//===- TaskGraph.cpp - asynchronous tasks over stores ---------------------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/TaskGraph.h"
#include "cpnrt/Profile.h"

#include <pthread.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace cpnrt {

namespace {
/// WaitFollows scopes alive on this thread.
thread_local int waitFollows = 0;
/// Whether this thread runs a task for helpUntil: it polls what the task
/// leaves in flight as soon as the task returns.
thread_local bool waiterRuns = false;
} // namespace

TaskGraph::TaskGraph(unsigned workers) {
  if (workers == 0)
    workers = 1;
  maxRunning_ = workers;
  for (unsigned i = 0; i < workers; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

TaskGraph::~TaskGraph() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    doneCv_.wait(lock, [&] { return inFlight_ == 0; });
    stopping_ = true;
  }
  readyCv_.notify_all();
  pollingCv_.notify_all();
  for (auto &t : workers_)
    t.join();
  if (progress_.joinable())
    progress_.join();
}

TaskGraph &TaskGraph::global() {
  // Leaked on purpose: worker threads must not be joined during static
  // destruction, after Python may have torn down what tasks refer to.
  static TaskGraph *g = [] {
    const char *w = std::getenv("CPN_RT_WORKERS");
    auto *graph = new TaskGraph(w ? std::max(1, std::atoi(w)) : 1);
    pthread_atfork([] { global().beforeFork(); },
                   [] { global().afterForkInParent(); },
                   [] { global().afterForkInChild(); });
    return graph;
  }();
  return *g;
}

void TaskGraph::beforeFork() {
  std::unique_lock<std::mutex> lock(mu_);
  doneCv_.wait(lock, [&] { return inFlight_ == 0; });
  lock.release(); // held across the fork
}

void TaskGraph::afterForkInParent() { mu_.unlock(); }

void TaskGraph::afterForkInChild() {
  // Nothing was in flight (beforeFork); the parent's threads and the lock
  // held for the fork are not the child's: new ones (the old thread objects
  // are leaked, as joining or destroying them would abort).
  new (&mu_) std::mutex();
  new (&readyCv_) std::condition_variable();
  new (&doneCv_) std::condition_variable();
  new (&pollingCv_) std::condition_variable();
  new (&pollMu_) std::mutex();
  new (&progress_) std::thread();
  polling_.clear();
  lastInOrder_.reset();
  waiters_ = 0;
  size_t n = workers_.size();
  running_ = 0;
  new (&workers_) std::vector<std::thread>();
  for (size_t i = 0; i < n; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

TaskRef TaskGraph::submit(std::string name, std::function<void()> fn,
                          std::vector<StoreRef> reads,
                          std::vector<StoreRef> writes, bool mayDefer,
                          std::function<bool()> poll, bool inOrder) {
  auto task = std::make_shared<Task>();
  task->name = std::move(name);
  task->fn = std::move(fn);
  task->poll = std::move(poll);
  task->reads = std::move(reads);
  task->writes = std::move(writes);
  return submitTask(std::move(task), mayDefer, inOrder);
}

TaskRef TaskGraph::submitTask(TaskRef task, bool mayDefer, bool inOrder) {
  std::unique_lock<std::mutex> lock(mu_);
  // Copied at once: a finished predecessor may be owned only by the
  // lastWriter this submit replaces below.
  std::optional<Failure> upstream;
  auto dependOn = [&](const TaskRef &pred) {
    if (!pred || pred == task)
      return;
    if (pred->done_) {
      if (pred->failed_ && !upstream)
        upstream = pred->failure_;
      return;
    }
    for (auto &s : pred->successors_)
      if (s == task)
        return;
    pred->successors_.push_back(task);
    ++task->pendingDeps_;
  };
  auto rangeOf = [](const std::vector<std::pair<size_t, size_t>> &ranges,
                    size_t i) {
    Store::Access a;
    if (i < ranges.size())
      std::tie(a.begin, a.end) = ranges[i];
    return a;
  };
  auto overlap = [](const Store::Access &a, const Store::Access &b) {
    return a.begin < b.end && b.begin < a.end;
  };
  auto isWhole = [](const Store::Access &a) {
    return a.begin == 0 && a.end == SIZE_MAX;
  };
  // Finished tasks need no edge: their entries go (a store read with a
  // halo every window but never written again would gather them). A
  // failed one stays: its failure is its successors' (a failed reader's
  // too, as before: a later writer of its store fails with it).
  auto prune = [](Store &s) {
    s.writers.erase(std::remove_if(s.writers.begin(), s.writers.end(),
                                   [](const Store::Write &w) {
                                     return w.task->done_ && !w.task->failed_;
                                   }),
                    s.writers.end());
    s.readersSinceWrite.erase(std::remove_if(s.readersSinceWrite.begin(),
                                             s.readersSinceWrite.end(),
                                             [](const Store::Read &r) {
                                               TaskRef t = r.task.lock();
                                               return !t ||
                                                      (t->done_ && !t->failed_);
                                             }),
                              s.readersSinceWrite.end());
  };
  for (auto &s : task->reads)
    prune(*s);
  for (auto &s : task->writes)
    prune(*s);
  for (size_t i = 0; i < task->reads.size(); ++i) {
    Store::Access r = rangeOf(task->readRanges, i);
    for (auto &w : task->reads[i]->writers)
      if (overlap(w, r))
        dependOn(w.task);
  }
  // A store written in many ranges no later write covers (a long run of
  // halo rounds into one store): the next ranged write waits for all of
  // them and counts as whole, so that the lists stay short.
  std::vector<Store::Access> writeRanges;
  for (size_t i = 0; i < task->writes.size(); ++i) {
    Store &s = *task->writes[i];
    Store::Access w = rangeOf(task->writeRanges, i);
    if (s.writers.size() >= kMaxRangedWriters)
      w = Store::Access{};
    writeRanges.push_back(w);
    for (auto &x : s.writers)
      if (overlap(x, w))
        dependOn(x.task);
    for (auto &r : s.readersSinceWrite)
      if (overlap(r, w))
        dependOn(r.task.lock());
  }
  if (inOrder) {
    if (lastInOrder_ && !lastInOrder_->done_) {
      lastInOrder_->followers_.push_back(task);
      ++task->pendingDeps_;
    }
    lastInOrder_ = task;
  }
  for (size_t i = 0; i < task->reads.size(); ++i) {
    Store::Read r;
    static_cast<Store::Access &>(r) = rangeOf(task->readRanges, i);
    r.task = task;
    task->reads[i]->readersSinceWrite.push_back(std::move(r));
  }
  for (size_t i = 0; i < task->writes.size(); ++i) {
    Store &s = *task->writes[i];
    const Store::Access &w = writeRanges[i];
    // What this write covers, it now stands for: a later task that
    // overlaps it waits for it, and it waited for them.
    auto covered = [&](const Store::Access &a) {
      return w.begin <= a.begin && a.end <= w.end;
    };
    if (isWhole(w)) {
      s.writers.clear();
      s.readersSinceWrite.clear();
    } else {
      s.writers.erase(
          std::remove_if(s.writers.begin(), s.writers.end(),
                         [&](const Store::Write &x) { return covered(x); }),
          s.writers.end());
      s.readersSinceWrite.erase(
          std::remove_if(s.readersSinceWrite.begin(), s.readersSinceWrite.end(),
                         [&](const Store::Read &x) { return covered(x); }),
          s.readersSinceWrite.end());
    }
    Store::Write x;
    static_cast<Store::Access &>(x) = w;
    x.task = task;
    s.writers.push_back(std::move(x));
  }
  ++inFlight_;
  if (upstream) {
    task->failed_ = true;
    task->failure_ = *upstream;
  }
  if (task->pendingDeps_ == 0) {
    ready_.push_back(task);
    if (waitFollows > 0 && (mayDefer || threadsAwake())) {
      wakesDeferred_ = true;
      return task;
    }
    lock.unlock();
    readyCv_.notify_one();
  }
  return task;
}

TaskGraph::WaitFollows::WaitFollows(TaskGraph &graph) : graph_(graph) {
  ++waitFollows;
}

TaskGraph::WaitFollows::~WaitFollows() {
  --waitFollows;
  std::lock_guard<std::mutex> lock(graph_.mu_);
  graph_.wakeDeferred(0);
}

bool TaskGraph::threadsAwake() const {
  return std::chrono::steady_clock::now() - lastFinish_ < kThreadsAwakeFor;
}

void TaskGraph::wakeDeferred(size_t mine) {
  if (!wakesDeferred_)
    return;
  wakesDeferred_ = false;
  if (ready_.size() > mine)
    readyCv_.notify_all();
}

void TaskGraph::workerLoop() {
  pthread_setname_np(pthread_self(), "cpn-worker");
  for (;;) {
    TaskRef task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      readyCv_.wait(lock, [&] { return stopping_ || canStart(); });
      if (ready_.empty())
        return;
      task = ready_.front();
      ready_.pop_front();
      ++running_;
    }
    run(task);
  }
}

namespace {
/// The failure a task's exception makes.
Failure failureOf(const std::string &name, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error &e) {
    // NumPy's message ("Singular matrix") is the user's as it is; an
    // error of kind Runtime is ours, and names the task, as below.
    return {e.kind(), e.kind() == ErrorKind::Runtime ? name + ": " + e.what()
                                                     : std::string(e.what())};
  } catch (const std::bad_alloc &e) {
    // A store the runtime could not get (Store::data).
    return {ErrorKind::Memory,
            name + ": " + e.what() +
                ": the computation needed more memory than the process "
                "could allocate"};
  } catch (const std::exception &e) {
    return {ErrorKind::Runtime, name + ": " + e.what()};
  } catch (...) {
    return {ErrorKind::Runtime, name + ": unknown error"};
  }
}
} // namespace

void TaskGraph::run(const TaskRef &task) {
  bool failed = task->failed_;
  Failure failure = task->failure_;
  // What readers learned about the old elements no longer holds.
  for (auto &s : task->writes)
    s->facts.store(0, std::memory_order_relaxed);
  if (failed && task->onSkipped)
    task->onSkipped(failure);
  if (!failed) {
    try {
      ProfileScope scope(task->name.compare(0, 6, "kernel") == 0 ? "kernel"
                                                                 : "task",
                         task->name);
      if (task->fn) {
        // Guarded inputs (borrowed NumPy buffers): a NumPy write meanwhile
        // waits for this task before it lands (Guard.cpp).
        GuardedReads reading(task->reads);
        task->fn();
      }
      if (task->poll) {
        // In flight: a waiting thread or the progress thread finishes it.
        // Its thread is free.
        std::lock_guard<std::mutex> lock(mu_);
        if (!progress_.joinable()) // first, so that a throw changes nothing
          progress_ = std::thread([this] { progressLoop(); });
        --running_;
        polling_.push_back(task);
        // A waiting thread polls it (this one, if it runs the task for a
        // wait); the progress thread when none waits.
        if (waiters_ == 0 && !waiterRuns)
          pollingCv_.notify_one();
        // A ready task that waited for a free slot may start now.
        if (!ready_.empty())
          readyCv_.notify_one();
        doneCv_.notify_all();
        return;
      }
    } catch (...) {
      failed = true;
      failure = failureOf(task->name, std::current_exception());
    }
  }
  finish(task, failed, failure);
}

size_t TaskGraph::polling() {
  std::lock_guard<std::mutex> lock(mu_);
  return polling_.size();
}

void TaskGraph::progressLoop() {
  pthread_setname_np(pthread_self(), "cpn-progress");
  // Its short sleeps end when asked, not 50 us later (the default slack).
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  // Polls every ~20 us while anything is in flight and no waiter polls (a
  // core spinning on MPI_Test would take the cycles of the kernels
  // computing meanwhile), and sleeps while nothing is in flight.
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      pollingCv_.wait(lock, [&] { return stopping_ || !polling_.empty(); });
      if (polling_.empty())
        return;
    }
    if (!pollOnce())
      std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool TaskGraph::pollOnce() {
  std::unique_lock<std::mutex> polling(pollMu_, std::try_to_lock);
  if (!polling.owns_lock())
    return false;
  std::vector<TaskRef> tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks = polling_;
  }
  bool any = false;
  for (const TaskRef &task : tasks) {
    bool done = false, failed = false;
    Failure failure;
    try {
      done = task->poll();
    } catch (...) {
      done = failed = true;
      failure = failureOf(task->name, std::current_exception());
    }
    if (!done)
      continue;
    any = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      polling_.erase(std::find(polling_.begin(), polling_.end(), task));
      ++running_; // finish() counts it out, as a task run on a thread
    }
    finish(task, failed, failure);
  }
  return any;
}

template <typename Done>
void TaskGraph::helpUntil(std::unique_lock<std::mutex> &lock, Done done,
                          bool settleDeferred) {
  // Ready tasks that a WaitFollows submission told no worker of: this
  // thread runs one now; the rest may start on workers beside it (their
  // wake-up costs only where there is more than one to run). A
  // backpressure wait (settleDeferred false) leaves them to the wait that
  // follows; what a wait did not need goes to the workers when the
  // WaitFollows scope ends.
  if (settleDeferred)
    wakeDeferred(!done() && canStart() ? 1 : 0);
  // While this thread waits with nothing to run it polls the messages in
  // flight (counted in waiters_; the progress thread's wake-up and the
  // wake-up back would cost two futex round trips, ~100 us a round on a
  // 2-vCPU VM, measured with cpn-comm-bench). While it runs a task, or once
  // it leaves, the progress thread polls them.
  auto stopPolling = [&] {
    if (--waiters_ == 0 && !polling_.empty())
      pollingCv_.notify_one();
  };
  ++waiters_;
  std::chrono::steady_clock::time_point spinSince{};
  while (!done()) {
    if (canStart()) {
      TaskRef task = ready_.front();
      ready_.pop_front();
      ++running_;
      stopPolling();
      lock.unlock();
      waiterRuns = true;
      run(task);
      waiterRuns = false;
      lock.lock();
      ++waiters_;
      spinSince = {};
      continue;
    }
    if (!polling_.empty()) {
      lock.unlock();
      bool any = pollOnce();
      lock.lock();
      if (any) {
        spinSince = {};
        continue;
      }
      // The first ~100 us by yielding (a halo arrives in a few us), then
      // in short sleeps, so that a long wait does not take a core from
      // the tasks running meanwhile.
      auto now = std::chrono::steady_clock::now();
      if (spinSince == std::chrono::steady_clock::time_point{})
        spinSince = now;
      if (now - spinSince < std::chrono::microseconds(100)) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      } else {
        doneCv_.wait_for(lock, std::chrono::microseconds(50));
      }
      continue;
    }
    // finish() wakes every waiter: a task done, or its successors ready.
    doneCv_.wait(lock);
  }
  stopPolling();
}

void TaskGraph::finish(const TaskRef &task, bool failed,
                       const Failure &failure) {
  // A finished task lets go of its stores (and of its closure, which holds
  // some too), else store -> lastWriter -> task -> store is a cycle and no
  // written store is ever freed. They are dropped outside the lock (a store's
  // destructor may drop the last reference to a task) but before the task
  // counts as finished, so that a waiter sees them gone.
  {
    std::function<void()> fn;
    std::function<bool()> poll;
    std::vector<StoreRef> reads, writes;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn = std::move(task->fn);
      poll = std::move(task->poll);
      task->poll = nullptr;
      task->onSkipped = nullptr;
      reads = std::move(task->reads);
      writes = std::move(task->writes);
      task->fn = nullptr;
      task->reads.clear();
      task->writes.clear();
    }
  }
  std::vector<TaskRef> nowReady;
  {
    std::lock_guard<std::mutex> lock(mu_);
    task->done_ = true;
    task->failed_ = failed;
    task->failure_ = failure;
    for (auto &s : task->successors_) {
      if (failed && !s->failed_) {
        s->failed_ = true;
        s->failure_ = failure;
      }
      if (--s->pendingDeps_ == 0)
        nowReady.push_back(s);
    }
    task->successors_.clear();
    for (auto &s : task->followers_)
      if (--s->pendingDeps_ == 0)
        nowReady.push_back(s);
    task->followers_.clear();
    if (lastInOrder_ == task)
      lastInOrder_.reset();
    for (auto &s : nowReady)
      ready_.push_back(s);
    --inFlight_;
    --running_;
    ++tasksRun_;
    lastFinish_ = std::chrono::steady_clock::now();
    // A task that waited for a free slot (a waiter ran one) may start now.
    if (nowReady.empty() && !ready_.empty())
      nowReady.push_back(nullptr);
  }
  for (size_t i = 0; i < nowReady.size(); ++i)
    readyCv_.notify_one();
  doneCv_.notify_all();
}

void TaskGraph::wait(const TaskRef &task) {
  std::unique_lock<std::mutex> lock(mu_);
  helpUntil(lock, [&] { return task->done_; });
}

void TaskGraph::waitStore(Store &store) {
  std::vector<TaskRef> writers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Store::Write &w : store.writers)
      writers.push_back(w.task);
  }
  for (const TaskRef &writer : writers)
    wait(writer);
  for (const TaskRef &writer : writers)
    if (writer->failed_)
      throw Error(writer->failure_);
}

void TaskGraph::waitReaders(Store &store) {
  std::vector<TaskRef> readers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Store::Read &r : store.readersSinceWrite)
      if (TaskRef t = r.task.lock())
        readers.push_back(std::move(t));
  }
  for (const TaskRef &t : readers)
    wait(t);
}

bool TaskGraph::readersDone(const Store &store) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Store::Read &r : store.readersSinceWrite)
    if (TaskRef t = r.task.lock())
      if (!t->done_)
        return false;
  return true;
}

bool TaskGraph::storeDone(const Store &store) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Store::Write &w : store.writers)
    if (!w.task->done_ || w.task->failed_)
      return false;
  return true;
}

void TaskGraph::waitAll() {
  std::unique_lock<std::mutex> lock(mu_);
  helpUntil(lock, [&] { return inFlight_ == 0; });
}

bool TaskGraph::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return inFlight_ == 0;
}

void TaskGraph::waitInFlightAtMost(uint64_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  helpUntil(
      lock, [&] { return inFlight_ <= n; }, false);
}

} // namespace cpnrt
