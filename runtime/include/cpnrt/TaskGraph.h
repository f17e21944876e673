//===- TaskGraph.h - asynchronous tasks over stores -------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_TASKGRAPH_H
#define CPNRT_TASKGRAPH_H

#include "cpnrt/Error.h"
#include "cpnrt/Store.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <string>
#include <thread>

namespace cpnrt {

/// One unit of work: a function and the stores it reads and writes.
class Task {
public:
  std::string name;
  std::function<void()> fn;
  /// For work that goes on after fn returns (messages in flight: fn starts
  /// them): called without blocking, from the graph's progress thread, until
  /// it returns true; the task finishes then (its writers' successors start,
  /// its stores can be read). Meanwhile it holds no thread: the tasks that do
  /// not depend on it run. Exceptions fail it as fn's do.
  std::function<bool()> poll;
  std::vector<StoreRef> reads, writes;
  /// The bytes [first, second) of each store in reads (writes) that the task
  /// reads (writes): empty, every store whole. A store may be listed more
  /// than once with different ranges. Tasks whose ranges do not overlap do
  /// not wait for each other: a stencil's interior computes while a halo
  /// round writes the rows beside its block.
  std::vector<std::pair<size_t, size_t>> readRanges, writeRanges;
  /// Called instead of fn when the task fails because a task it depends on
  /// failed (fn never runs): a collective that the other MPI ranks start
  /// ends them all here rather than leave them waiting for this rank.
  std::function<void(const Failure &)> onSkipped;

  bool done() const { return done_; }
  /// Why it failed (its own exception's, or that of a task it depends on).
  const std::string &error() const { return failure_.message; }
  ErrorKind errorKind() const { return failure_.kind; }

private:
  friend class TaskGraph;
  friend class Store;
  std::vector<std::shared_ptr<Task>> successors_;
  // Tasks submitted in order after it (submit's inOrder): they start after
  // it finishes, and its failure is not theirs.
  std::vector<std::shared_ptr<Task>> followers_;
  int pendingDeps_ = 0;
  bool done_ = false;
  bool failed_ = false;
  Failure failure_;
};

using TaskRef = std::shared_ptr<Task>;

/// Runs tasks asynchronously on worker threads. Dependencies come from the
/// stores: a task runs after the last writer of every store it reads
/// (read-after-write) and after the last writer and the readers of every store
/// it writes (write-after-write, write-after-read); where tasks name byte
/// ranges (Task::readRanges, writeRanges), only those whose ranges overlap. A
/// failed task fails its successors with the same kind and message; waiting on
/// any store they write throws cpnrt::Error with them. A task's exception
/// becomes its failure: a cpnrt::Error keeps its kind (and, unless of kind
/// Runtime, its message as it is: NumPy's), std::bad_alloc is of kind Memory,
/// anything else of kind Runtime, prefixed with the task's name.
///
/// A thread that waits runs ready tasks itself while fewer than `workers`
/// tasks run: a window submitted and waited for at once (a sync after each
/// small op) then costs no wake-up of a worker and no wake-up back (two
/// futex round trips, ~35 us each on a 2-vCPU VM), and no more tasks run at
/// once than there are workers.
class TaskGraph {
public:
  explicit TaskGraph(unsigned workers = 1);
  ~TaskGraph();

  /// The process-wide graph (CPN_RT_WORKERS workers, default 1).
  static TaskGraph &global();

  /// Adds a task; returns at once. The task may start immediately.
  /// `mayDefer`: under WaitFollows, it wakes no worker (see there).
  /// `poll`: the task's Task::poll (work that goes on after fn returns).
  /// `inOrder`: the task also starts after the previous task submitted
  /// inOrder has finished (successfully or not: its failure is not
  /// passed on), so that such tasks start in submission order (MPI
  /// collectives, which every rank must start in one order).
  TaskRef submit(std::string name, std::function<void()> fn,
                 std::vector<StoreRef> reads, std::vector<StoreRef> writes,
                 bool mayDefer = true, std::function<bool()> poll = {},
                 bool inOrder = false);
  /// Submits a task made by the caller (its name, fn, poll, onSkipped,
  /// reads and writes set, nothing else), as submit does.
  TaskRef submitTask(TaskRef task, bool mayDefer = true, bool inOrder = false);

  /// While alive, tasks this thread submits that are ready at once wake no
  /// worker: the thread is about to wait and runs them itself (a sync after
  /// each op: the wake-up of a worker that then finds nothing to do, or that
  /// takes the task and is waited for, is a futex round trip, 10-35 us on a
  /// 2-vCPU VM). Tasks that start threads of their own (a kernel with BLAS
  /// or library calls: submit's mayDefer false) go to a worker all the same
  /// when no task finished in the last kThreadsAwakeFor: after a pause, with
  /// the caller running the task, OpenBLAS's thread waited for the idle
  /// vCPU (matvec 1000 x 1000 after 0.15 s: 0.3 -> 1.5 ms a call, measured),
  /// while with the caller asleep it takes the caller's. Back to back (a
  /// task finished within it) the caller runs them too: matvec 256 x 256
  /// and a sync 17-20 -> 10.5 us, 1000 x 1000 200 -> 151 us (NumPy 7 and
  /// 150; session 37).
  /// The first wait after it wakes the workers for whatever it
  /// left ready, and so does its end (the wait needed none of it), so that
  /// no task waits on a thread that does not wait: keep the wait inside.
  class WaitFollows {
  public:
    explicit WaitFollows(TaskGraph &graph = TaskGraph::global());
    ~WaitFollows();
    WaitFollows(const WaitFollows &) = delete;
    WaitFollows &operator=(const WaitFollows &) = delete;

  private:
    TaskGraph &graph_;
  };

  /// Blocks until `task` has finished (successfully or not).
  void wait(const TaskRef &task);
  /// Blocks until the last writer of `store` has finished; throws
  /// cpnrt::Error with its kind and message if it failed.
  void waitStore(Store &store);
  /// Blocks until the tasks that read `store` since its last write have
  /// finished (their failures are theirs to report).
  void waitReaders(Store &store);
  /// Whether the last task that writes `store` has finished successfully
  /// (or none was submitted): its elements can be read now, without waiting.
  bool storeDone(const Store &store);
  /// Whether every task that read `store` since its last write has finished
  /// (waitReaders would return at once).
  bool readersDone(const Store &store);
  /// Blocks until every submitted task has finished.
  void waitAll();
  /// Whether every submitted task has finished (waitAll would return at
  /// once).
  bool idle();
  /// Blocks until at most `n` submitted tasks are unfinished (backpressure:
  /// a producer that runs far ahead would hold every queued task's buffers).
  void waitInFlightAtMost(uint64_t n);

  uint64_t tasksRun() const { return tasksRun_; }
  /// Tasks whose fn returned and whose poll has not yet said done.
  size_t polling();

private:
  void workerLoop();
  /// Runs `task` (popped from ready_, counted in running_) on this thread.
  void run(const TaskRef &task);
  /// Whether a ready task may start now (under mu_).
  bool canStart() const { return !ready_.empty() && running_ < maxRunning_; }
  /// Waits (holding `lock` on mu_ between checks) until `done()`, running
  /// ready tasks meanwhile; `settleDeferred`: hands the tasks a WaitFollows
  /// submission told no worker of to this thread and the workers.
  template <typename Done>
  void helpUntil(std::unique_lock<std::mutex> &lock, Done done,
                 bool settleDeferred = true);
  void finish(const TaskRef &task, bool failed, const Failure &failure);
  /// The progress thread: polls the tasks in polling_ until they are done.
  void progressLoop();
  /// Polls each task in polling_ once and finishes those done; returns
  /// whether any did. One thread at a time (pollMu_: MPI's requests are
  /// not to be tested by two threads at once); false if another polls now.
  bool pollOnce();
  /// Under mu_: if a WaitFollows submission left ready tasks no worker was
  /// told of, wakes the workers when there are more than `mine` (those the
  /// calling thread runs itself).
  void wakeDeferred(size_t mine);
  // fork() (pthread_atfork, for the global graph): the parent waits for
  // every task and holds the lock across the fork; the child, which has
  // none of the parent's threads, starts workers of its own.
  void beforeFork();
  void afterForkInParent();
  void afterForkInChild();

  std::mutex mu_;
  std::condition_variable readyCv_, doneCv_;
  std::deque<TaskRef> ready_;
  std::vector<std::thread> workers_;
  // Tasks in flight after their fn (Task::poll), and the thread that polls
  // them: started with the first such task (a program without messages
  // never has it).
  std::vector<TaskRef> polling_;
  TaskRef lastInOrder_; // the last task submitted inOrder (under mu_)
  std::condition_variable pollingCv_;
  std::mutex pollMu_;
  size_t waiters_ = 0; // threads in helpUntil, which poll (under mu_)
  std::thread progress_;
  uint64_t inFlight_ = 0;
  size_t running_ = 0;    // tasks running now, on workers or waiters
  size_t maxRunning_ = 1; // the number of workers
  std::atomic<uint64_t> tasksRun_{0};
  bool wakesDeferred_ = false; // ready tasks no worker was told of (under mu_)
  // When the last task finished (under mu_), and how long after it the
  // threads of a library call are taken to be still awake (see WaitFollows):
  // about as long as OpenBLAS's pool spins (OPENBLAS_THREAD_TIMEOUT=20).
  std::chrono::steady_clock::time_point lastFinish_;
  static constexpr std::chrono::microseconds kThreadsAwakeFor{300};
  /// Under mu_: whether a task finished within kThreadsAwakeFor.
  bool threadsAwake() const;
  bool stopping_ = false;
  /// Ranged writes a store keeps apart before the next one counts as whole.
  static constexpr size_t kMaxRangedWriters = 16;
};

} // namespace cpnrt

#endif // CPNRT_TASKGRAPH_H
