//===- RuntimeTest.cpp - libcpnrt: stores, pool, task graph ---------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Blas.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Error.h"
#include "cpnrt/Facts.h"
#include "cpnrt/Lapack.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Random.h"
#include "cpnrt/Store.h"
#include "cpnrt/TaskGraph.h"
#include "cpnrt/Threads.h"

#include "Compress.h"
#include "Factor.h"
#include "LibCall.h"
#include "Sort.h"
#include "Symmetry.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cpnrt;

namespace {
StoreRef store(int64_t n) {
  return std::make_shared<Store>(DType::f64, std::vector<int64_t>{n});
}
double *data(const StoreRef &s) { return static_cast<double *>(s->data()); }
} // namespace

TEST(Store, ShapeDtypeAndBytes) {
  Store s(DType::i32, {3, 4});
  EXPECT_EQ(s.numel(), 12);
  EXPECT_EQ(s.nbytes(), 48u);
  EXPECT_EQ(s.distribution(), Distribution::Replicated);
  EXPECT_EQ(std::string(dtypeName(parseDType("u2"))), "u2");
  EXPECT_THROW(parseDType("O8"), std::invalid_argument);
}

TEST(Store, FreedBufferIsReusedBySameSize) {
  resetPoolStats();
  void *first;
  {
    auto a = store(1 << 16);
    first = a->data();
  }
  auto b = store(1 << 16);
  EXPECT_EQ(b->data(), first);
  EXPECT_GE(poolStats().reuses, 1u);
}

TEST(Store, KernelTemporariesComeFromThePool) {
  void *p = cpn_rt_alloc(1 << 20);
  ASSERT_NE(p, nullptr);
  cpn_rt_free(p);
  resetPoolStats();
  void *q = cpn_rt_alloc(1 << 20);
  EXPECT_EQ(q, p);
  EXPECT_EQ(poolStats().reuses, 1u);
  cpn_rt_free(q);
  cpn_rt_free(nullptr);
}

TEST(TaskGraph, FinishedTaskReleasesItsStores) {
  TaskGraph g(1);
  std::weak_ptr<Store> watch;
  {
    auto a = store(8);
    watch = a;
    // Reads and writes the same store (an in-place update): the store's
    // lastWriter is this task, which must not keep the store alive.
    g.submit("inplace", [a] { data(a)[0] += 1; }, {a}, {a});
    g.waitAll();
  }
  EXPECT_TRUE(watch.expired());
}

TEST(TaskGraph, ReadAfterWriteRunsInOrder) {
  TaskGraph g(4);
  auto a = store(1), b = store(1);
  // The writer sleeps so that a graph that ignored dependencies would let the
  // reader see the old value.
  g.submit("write",
           [&] {
             std::this_thread::sleep_for(std::chrono::milliseconds(50));
             data(a)[0] = 42;
           },
           {}, {a});
  g.submit("read", [&] { data(b)[0] = data(a)[0] + 1; }, {a}, {b});
  g.waitAll();
  EXPECT_EQ(data(b)[0], 43);
}

TEST(TaskGraph, WaitFollowsRunsTheTaskOnTheWaiterAndStarvesNothing) {
  TaskGraph g(1);
  // Ready at once under WaitFollows: no worker is woken, the waiting
  // thread runs it. A worker checks the ready queue before it first sleeps
  // (and may wake spuriously), so it can take one such task: the worker is
  // given time to reach its wait, and of three tries one at least must run
  // on the waiter (a fresh clone's ctest saw the worker take it once).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  int onWaiter = 0;
  for (int attempt = 0; attempt < 3 && !onWaiter; ++attempt) {
    auto a = store(1);
    std::thread::id ranOn;
    {
      TaskGraph::WaitFollows follows(g);
      g.submit("mine", [&] { ranOn = std::this_thread::get_id(); }, {}, {a});
      g.waitStore(*a);
    }
    onWaiter += ranOn == std::this_thread::get_id();
  }
  EXPECT_EQ(onWaiter, 1);
  // A wait that needs none of what was deferred (the store has no writer)
  // and the scope's end hand the deferred task to a worker: it finishes
  // with nobody waiting for it.
  auto b = store(1), c = store(1);
  std::atomic<bool> done{false};
  {
    TaskGraph::WaitFollows follows(g);
    g.submit("deferred", [&] { done = true; }, {}, {b});
    g.waitStore(*c);
  }
  for (int i = 0; i < 2000 && !done; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(done.load());
  g.waitAll();
}

TEST(TaskGraph, ATaskWithThreadsOfItsOwnRunsAfterAPauseAndBackToBack) {
  // A task that starts threads of its own (mayDefer false) under
  // WaitFollows: after a pause a worker is told of it (the waiter may still
  // take it first); submitted within 300 us of the last task's end none is,
  // and the waiter runs it unless an awake worker takes it first. Either way
  // it runs once and the waits return.
  using Clock = std::chrono::steady_clock;
  TaskGraph g(1);
  std::thread::id ranOn;
  Clock::time_point ended, submitted;
  int runs = 0;
  auto submitAndWait = [&] {
    auto s = store(1);
    TaskGraph::WaitFollows follows(g);
    submitted = Clock::now();
    g.submit(
        "blas",
        [&] {
          ranOn = std::this_thread::get_id();
          ++runs;
          ended = Clock::now(); // the graph's own finish comes after
        },
        {}, {s}, /*mayDefer=*/false);
    g.waitStore(*s);
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  submitAndWait();
  // Which thread runs a back-to-back task is a preference, not a promise:
  // a worker that has just finished the previous task and not yet gone back
  // to sleep finds the new one in the ready queue and may take it (the
  // fresh-clone run under load did). Once the waiter has run one, the worker
  // sleeps and the next ones stay on the waiter, so of 20 back-to-back
  // submissions some run on the waiter.
  int backToBack = 0, onWaiter = 0;
  for (int i = 0; i < 20; ++i) {
    Clock::time_point before = ended;
    submitAndWait();
    if (submitted - before < std::chrono::microseconds(100)) {
      ++backToBack;
      onWaiter += ranOn == std::this_thread::get_id();
    }
  }
  g.waitAll();
  EXPECT_EQ(runs, 21);
  if (backToBack >= 10)
    EXPECT_GE(onWaiter, 1) << backToBack << " back to back";
}

TEST(Pool, StoresTakeTheirMemoryAtTheFirstAccess) {
  // A window's outputs are made when it is submitted, their memory taken
  // when its kernel first touches them.
  PoolStats before = poolStats();
  auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{300000});
  EXPECT_EQ(poolStats().bytesLive, before.bytesLive);
  void *p = s->data();
  EXPECT_GE(poolStats().bytesLive, before.bytesLive + 300000u * 8);
  EXPECT_EQ(s->data(), p);
  s.reset();
  EXPECT_EQ(poolStats().bytesLive, before.bytesLive);
  // Never touched: nothing to give back.
  { Store unused(DType::f64, std::vector<int64_t>{300000}); }
  EXPECT_EQ(poolStats().bytesLive, before.bytesLive);
}

TEST(Pool, LimitReturnsFreedBuffersToTheSystem) {
  uint64_t old = setPoolLimit(uint64_t(1) << 30);
  {
    auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{300000});
    s->data();
  }
  EXPECT_GE(poolStats().bytesCached, 300000u * 8);
  setPoolLimit(0); // what is cached above the limit goes at once
  EXPECT_EQ(poolStats().bytesCached, 0u);
  uint64_t allocations = poolStats().allocations;
  {
    auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{300000});
    s->data();
  }
  EXPECT_EQ(poolStats().bytesCached, 0u); // freed beyond the limit
  {
    auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{300000});
    s->data();
  }
  EXPECT_EQ(poolStats().allocations, allocations + 2); // none reused
  setPoolLimit(old);
}

TEST(TaskGraph, ForkWaitsForTasksAndTheChildRunsItsOwn) {
  TaskGraph &g = TaskGraph::global();
  auto a = store(1);
  g.submit("slow write",
           [&] {
             std::this_thread::sleep_for(std::chrono::milliseconds(50));
             data(a)[0] = 7;
           },
           {}, {a});
  pid_t pid = fork(); // waits for the task in flight
  if (pid == 0) {
    bool ok = data(a)[0] == 7;
    g.submit("child write", [&] { data(a)[0] = 8; }, {}, {a});
    g.waitAll(); // the child's own worker ran it
    _exit(ok && data(a)[0] == 8 ? 0 : 3);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(data(a)[0], 7);
}

TEST(TaskGraph, WriteAfterReadWaitsForReaders) {
  TaskGraph g(4);
  auto a = store(1), b = store(1);
  data(a)[0] = 1;
  g.submit("read",
           [&] {
             std::this_thread::sleep_for(std::chrono::milliseconds(50));
             data(b)[0] = data(a)[0];
           },
           {a}, {b});
  g.submit("overwrite", [&] { data(a)[0] = 2; }, {}, {a});
  g.waitAll();
  EXPECT_EQ(data(b)[0], 1);
  EXPECT_EQ(data(a)[0], 2);
}

TEST(TaskGraph, ByteRangesThatDoNotOverlapDoNotWait) {
  // A halo round writes the rows beside a block while a kernel reads the
  // block: they run at once. A task that reads the rows the round writes,
  // or the whole store, waits for it; waitStore waits for every write no
  // later write covers.
  TaskGraph g(4);
  auto a = store(8), out = store(1), late = store(1);
  size_t row = sizeof(double);
  std::atomic<bool> release{false}, interiorRan{false};
  data(a)[3] = 5;
  auto round = std::make_shared<Task>();
  round->name = "halo";
  round->fn = [&] {
    while (!release)
      std::this_thread::yield();
    data(a)[0] = 7; // the row above the block
  };
  round->writes = {a, a};
  round->writeRanges = {{0, row}, {7 * row, 8 * row}};
  round->reads = {a};
  round->readRanges = {{row, 2 * row}};
  g.submitTask(round);
  auto interior = std::make_shared<Task>();
  interior->name = "interior";
  interior->fn = [&] {
    interiorRan = true;
    data(out)[0] = data(a)[3];
  };
  interior->reads = {a};
  interior->readRanges = {{row, 7 * row}};
  interior->writes = {out};
  g.submitTask(interior);
  // Whole reads of the store wait for the round.
  g.submit("border", [&] { data(late)[0] = data(a)[0]; }, {a}, {late});
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!interiorRan && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(interiorRan.load()); // did not wait for the round
  EXPECT_FALSE(g.storeDone(*a));   // the round still writes a
  release = true;
  g.waitStore(*a);
  g.waitAll();
  EXPECT_EQ(data(out)[0], 5);
  EXPECT_EQ(data(late)[0], 7);
  EXPECT_TRUE(g.storeDone(*a));
}

TEST(TaskGraph, ARangedWriteWaitsForTheReadersAndWritersItOverlaps) {
  TaskGraph g(4);
  auto a = store(4), b = store(1);
  size_t row = sizeof(double);
  data(a)[1] = 1;
  g.submit("whole write", [&] { data(a)[2] = 2; }, {}, {a});
  auto reader = std::make_shared<Task>();
  reader->name = "reader";
  reader->fn = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    data(b)[0] = data(a)[1] + data(a)[2];
  };
  reader->reads = {a};
  reader->readRanges = {{row, 3 * row}};
  reader->writes = {b};
  g.submitTask(reader);
  auto writer = std::make_shared<Task>();
  writer->name = "ranged write";
  writer->fn = [&] { data(a)[1] = 10; };
  writer->writes = {a};
  writer->writeRanges = {{row, 2 * row}};
  g.submitTask(writer);
  g.waitAll();
  EXPECT_EQ(data(b)[0], 3); // read before the ranged write
  EXPECT_EQ(data(a)[1], 10);
  // Many ranged writes of one store: the list stays short, order holds.
  std::vector<int> order;
  std::mutex m;
  for (int i = 0; i < 40; ++i) {
    auto t = std::make_shared<Task>();
    t->name = "w";
    t->fn = [&, i] {
      std::lock_guard<std::mutex> lock(m);
      order.push_back(i);
    };
    t->writes = {a};
    t->writeRanges = {{size_t(i % 4) * row, size_t(i % 4 + 1) * row}};
    g.submitTask(t);
  }
  g.waitAll();
  ASSERT_EQ(order.size(), 40u);
  for (int i = 0; i < 40; ++i)
    for (int j = i + 4; j < 40; j += 4) // same range: in order
      EXPECT_LT(std::find(order.begin(), order.end(), i) - order.begin(),
                std::find(order.begin(), order.end(), j) - order.begin());
}

TEST(TaskGraph, WaitReadersWaitsForEveryReaderSinceTheWrite) {
  TaskGraph g(4);
  auto a = store(1), b = store(1), c = store(1);
  g.submit("write", [&] { data(a)[0] = 3; }, {}, {a});
  std::atomic<int> done{0};
  for (auto out : {b, c})
    g.submit("read",
             [&, out] {
               std::this_thread::sleep_for(std::chrono::milliseconds(40));
               data(out)[0] = data(a)[0];
               ++done;
             },
             {a}, {out});
  g.waitReaders(*a);
  EXPECT_EQ(done.load(), 2);
  EXPECT_EQ(data(b)[0], 3);
  EXPECT_EQ(data(c)[0], 3);
  g.waitReaders(*store(1)); // never read: returns at once
  g.waitAll();
}

TEST(Store, SplitStoresReserveOnlyThePagesTheyTouch) {
  // A store split by rows (each rank writes its block) of 1 GiB or more
  // maps its memory without reserving it: one of four times this machine's
  // memory and swap can be written at both ends, where a replicated one is
  // refused by the kernel's overcommit check (its default heuristic mode).
  int mode = -1;
  if (FILE *f = std::fopen("/proc/sys/vm/overcommit_memory", "r")) {
    if (std::fscanf(f, "%d", &mode) != 1)
      mode = -1;
    std::fclose(f);
  }
  if (mode == 2)
    GTEST_SKIP() << "vm.overcommit_memory is 2: every mapping is reserved";
  unsigned long long swapKb = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("SwapTotal:", 0) == 0)
      swapKb = std::strtoull(line.c_str() + 10, nullptr, 10);
  size_t total =
      size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE)) +
      size_t(swapKb) * 1024;
  int64_t cols = int64_t(1) << 17; // rows of 1 MiB
  int64_t rows = int64_t(4 * total / (size_t(cols) * 8)) + 1;
  auto split =
      std::make_shared<Store>(DType::f64, std::vector<int64_t>{rows, cols});
  split->setDistribution(Distribution::BlockRows);
  auto *p = static_cast<char *>(split->data());
  p[0] = 1;
  p[split->nbytes() - 1] = 2;
  EXPECT_EQ(p[0] + p[split->nbytes() - 1], 3);
  split.reset(); // unmapped
  if (mode == 0) {
    auto whole =
        std::make_shared<Store>(DType::f64, std::vector<int64_t>{rows, cols});
    EXPECT_THROW(whole->data(), std::bad_alloc);
  }
}

TEST(Store, LentStoresForgetTheirFactsWhenLentAndGivenBack) {
  auto a = store(4);
  EXPECT_FALSE(a->lent());
  a->facts = 5;
  a->lend();
  a->lend();
  EXPECT_TRUE(a->lent());
  EXPECT_EQ(a->facts.load(), 0u);
  a->facts = 5;
  a->giveBack();
  EXPECT_TRUE(a->lent());
  EXPECT_EQ(a->facts.load(), 5u); // another NumPy array still shares it
  a->giveBack();
  EXPECT_FALSE(a->lent());
  EXPECT_EQ(a->facts.load(), 0u);
}

TEST(Store, AdoptedMemoryIsUsedInPlaceAndReleasedWithTheLastStore) {
  std::vector<double> mem{1.0, 2.0, 3.0, 4.0};
  int released = 0;
  PoolStats before = poolStats();
  {
    std::shared_ptr<void> owner(&mem, [&](void *) { ++released; });
    auto a = std::make_shared<Store>(DType::f64, std::vector<int64_t>{4},
                                     mem.data(), owner);
    auto b = std::make_shared<Store>(DType::f64, std::vector<int64_t>{2},
                                     mem.data() + 2, owner);
    owner.reset();
    EXPECT_EQ(a->data(), mem.data());
    EXPECT_TRUE(a->external());
    EXPECT_FALSE(store(1)->external());
    static_cast<double *>(b->data())[1] = 9.0; // written as any store
    a.reset();
    EXPECT_EQ(released, 0); // b still holds the owner
  }
  EXPECT_EQ(released, 1);
  EXPECT_EQ(poolStats().bytesLive, before.bytesLive); // never the pool's
  EXPECT_EQ(mem[3], 9.0);
}

TEST(TaskGraph, IndependentTasksRunConcurrently) {
  TaskGraph g(2);
  std::atomic<int> running{0}, peak{0};
  auto body = [&] {
    int now = ++running;
    peak = std::max(peak.load(), now);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    --running;
  };
  g.submit("x", body, {}, {store(1)});
  g.submit("y", body, {}, {store(1)});
  g.waitAll();
  EXPECT_EQ(peak.load(), 2);
}

TEST(TaskGraph, ErrorPropagatesToDependents) {
  TaskGraph g(2);
  auto a = store(1), b = store(1), c = store(1);
  bool ranDependent = false;
  g.submit("fails", [] { throw std::runtime_error("boom"); }, {}, {a});
  g.submit("dependent", [&] { ranDependent = true; }, {a}, {b});
  g.submit("independent", [&] { data(c)[0] = 7; }, {}, {c});
  g.waitAll();
  EXPECT_FALSE(ranDependent);
  EXPECT_EQ(data(c)[0], 7);
  EXPECT_THROW(g.waitStore(*b), std::runtime_error);
  try {
    g.waitStore(*a);
    ADD_FAILURE() << "no error";
  } catch (const cpnrt::Error &e) {
    // Not an error of a kind: ours, naming the task.
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_STREQ(e.what(), "fails: boom");
  }
}

namespace {
/// The kind and message waiting on `s` throws (kind Runtime, "" when it
/// throws none).
Failure failureOf(TaskGraph &g, Store &s) {
  try {
    g.waitStore(s);
  } catch (const cpnrt::Error &e) {
    return {e.kind(), e.what()};
  }
  return {};
}
} // namespace

TEST(TaskGraph, AWriterAfterAFailedWriterKeepsItsFailure) {
  // A task that writes a store whose last writer failed inherits its
  // failure; that writer, finished, is owned only by the store's lastWriter,
  // which the new task replaces: its failure is copied first (it was read
  // after the writer was freed).
  TaskGraph g(2);
  auto a = store(1);
  g.submit("kernel 1",
           [] {
             throw cpnrt::Error(ErrorKind::Index, "index 9 is out of "
                                                  "bounds");
           },
           {}, {a});
  g.waitAll();
  g.submit("kernel 2", [] {}, {}, {a});
  g.waitAll();
  Failure f = failureOf(g, *a);
  EXPECT_EQ(f.kind, ErrorKind::Index);
  EXPECT_EQ(f.message, "index 9 is out of bounds");
}

TEST(TaskGraph, ErrorKindReachesDependentsAndTheWaiter) {
  // A library call's error (a LinAlgError) fails its task with its kind and
  // NumPy's message as they are: a task that depends on it while it runs
  // (failed when it finishes), one submitted after it failed (failed at
  // submission) and every waiter get both; nothing parses the message.
  TaskGraph g(2);
  auto a = store(1), b = store(1), c = store(1);
  std::atomic<bool> go{false};
  bool ranDependent = false;
  g.submit("kernel 1",
           [&] {
             while (!go)
               std::this_thread::yield();
             throw cpnrt::Error(ErrorKind::LinAlg, "Singular matrix");
           },
           {}, {a});
  g.submit("kernel 2", [&] { ranDependent = true; }, {a}, {b});
  go = true;
  g.waitAll();
  g.submit("kernel 3", [&] { ranDependent = true; }, {b}, {c});
  g.waitAll();
  EXPECT_FALSE(ranDependent);
  for (Store *s : {a.get(), b.get(), c.get()}) {
    Failure f = failureOf(g, *s);
    EXPECT_EQ(f.kind, ErrorKind::LinAlg);
    EXPECT_EQ(f.message, "Singular matrix");
  }
}

TEST(TaskGraph, BadAllocIsAMemoryError) {
  // A store the runtime could not get: kind Memory, with the message
  // MemoryError says (the task's name first).
  TaskGraph g(1);
  auto a = store(1), b = store(1);
  g.submit("kernel 1", [] { throw std::bad_alloc(); }, {}, {a});
  g.submit("kernel 2", [] {}, {a}, {b});
  g.waitAll();
  for (Store *s : {a.get(), b.get()}) {
    Failure f = failureOf(g, *s);
    EXPECT_EQ(f.kind, ErrorKind::Memory);
    EXPECT_EQ(f.message, "kernel 1: std::bad_alloc: the computation needed "
                         "more memory than the process could allocate");
  }
}

TEST(Blas, GemmOnTransposedAndStridedOperands) {
  // A is 2x3 row-major; B is given transposed (3x2 with column stride 3).
  double A[6] = {1, 2, 3, 4, 5, 6};
  double Bt[6] = {1, 0, 1, 0, 1, 1}; // B^T rows: B = [[1,0],[0,1],[1,1]]
  double C[4] = {0, 0, 0, 0};
  cpn_gemm_f64(reinterpret_cast<int64_t>(A), 0, 3, 1,
               reinterpret_cast<int64_t>(Bt), 0, 1, 3,
               reinterpret_cast<int64_t>(C), 0, 2, 1, 2, 2, 3,
               /*accumulate=*/1);
  EXPECT_EQ(C[0], 4);  // 1*1 + 2*0 + 3*1
  EXPECT_EQ(C[1], 5);  // 1*0 + 2*1 + 3*1
  EXPECT_EQ(C[2], 10); // 4 + 0 + 6
  EXPECT_EQ(C[3], 11); // 0 + 5 + 6
  // Without accumulate C is overwritten (garbage in C is never read), also
  // through a strided C (the packed path) and for matrix-vector products.
  double D[8] = {7, 7, 7, 7, 7, 7, 7, 7};
  cpn_gemm_f64(reinterpret_cast<int64_t>(A), 0, 3, 1,
               reinterpret_cast<int64_t>(Bt), 0, 1, 3,
               reinterpret_cast<int64_t>(D), 0, 1, 4, 2, 2, 3,
               /*accumulate=*/0);
  EXPECT_EQ(D[0], 4);
  EXPECT_EQ(D[4], 5);
  EXPECT_EQ(D[1], 10);
  EXPECT_EQ(D[5], 11);
  EXPECT_EQ(D[2], 7);
  double x[3] = {1, 1, 1}, y[2] = {9, 9};
  cpn_gemm_f64(reinterpret_cast<int64_t>(A), 0, 3, 1,
               reinterpret_cast<int64_t>(x), 0, 1, 1,
               reinterpret_cast<int64_t>(y), 0, 1, 1, 2, 1, 3,
               /*accumulate=*/0);
  EXPECT_EQ(y[0], 6);
  EXPECT_EQ(y[1], 15);
}

namespace {
/// A random symmetric n x n matrix in row-major order.
template <typename T> std::vector<T> symmetricMatrix(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j)
      a[i * n + j] = a[j * n + i] = dist(gen);
  return a;
}

template <typename T> void checkSymmetryTest() {
  // Sizes around the 4 x 4 blocks and the 256-column panels.
  for (int64_t n : {1, 2, 5, 37, 255, 256, 257, 600, 1003}) {
    std::vector<T> a = symmetricMatrix<T>(n, unsigned(n));
    EXPECT_TRUE(isSymmetric(a.data(), n, n)) << n;
    if (n == 1)
      continue;
    // Any single element changed is found: near the diagonal, in blocks, in
    // the tails, above or below the diagonal.
    std::mt19937 gen(unsigned(n) + 1);
    for (int trial = 0; trial < 200; ++trial) {
      int64_t i = gen() % n, j = gen() % n;
      if (i == j)
        continue;
      T old = a[i * n + j];
      a[i * n + j] = std::nextafter(old, T(2));
      EXPECT_FALSE(isSymmetric(a.data(), n, n)) << n << " " << i << " " << j;
      a[i * n + j] = old;
    }
    // Bit for bit: -0.0 is not 0.0; equal NaNs are.
    a[1] = T(0), a[n] = -T(0);
    EXPECT_FALSE(isSymmetric(a.data(), n, n));
    a[1] = a[n] = std::numeric_limits<T>::quiet_NaN();
    EXPECT_TRUE(isSymmetric(a.data(), n, n));
  }
  // A leading dimension wider than n: the columns past n are not compared.
  int64_t n = 300, ld = 310;
  std::vector<T> wide(n * ld, T(5));
  std::vector<T> sym = symmetricMatrix<T>(n, 7);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      wide[i * ld + j] = sym[i * n + j];
  EXPECT_TRUE(isSymmetric(wide.data(), n, ld));
}
} // namespace

TEST(Symmetry, EveryDifferenceIsFoundFloat64) { checkSymmetryTest<double>(); }
TEST(Symmetry, EveryDifferenceIsFoundFloat32) { checkSymmetryTest<float>(); }

TEST(Blas, SymmetricMatrixVectorProductsAndTheirFacts) {
  // y = A @ x in tasks that read A, as a compiled kernel runs them: the second
  // product checks A, later ones use one triangle (symv), and a task that
  // writes A makes the runtime forget.
  TaskGraph g(1);
  const int64_t n = 600;
  auto a = std::make_shared<Store>(DType::f64, std::vector<int64_t>{n, n});
  auto x = store(n), y = store(n);
  std::vector<double> host = symmetricMatrix<double>(n, 3);
  std::memcpy(a->data(), host.data(), host.size() * sizeof(double));
  for (int64_t i = 0; i < n; ++i)
    data(x)[i] = std::sin(double(i));
  auto product = [&](bool writesA) {
    std::vector<StoreRef> readOnly;
    if (!writesA)
      readOnly = {a, x};
    g.submit(
        "kernel",
        [&, readOnly] {
          ReadOnlyInputs scope(readOnly);
          cpn_gemm_f64(reinterpret_cast<int64_t>(a->data()), 0, n, 1,
                       reinterpret_cast<int64_t>(x->data()), 0, 1, 1,
                       reinterpret_cast<int64_t>(y->data()), 0, 1, 1, n, 1, n,
                       /*accumulate=*/0);
        },
        {a, x},
        writesA ? std::vector<StoreRef>{y, a} : std::vector<StoreRef>{y});
    g.waitAll();
    double worst = 0;
    const double *m = static_cast<const double *>(a->data());
    for (int64_t i = 0; i < n; ++i) {
      double ref = 0;
      for (int64_t j = 0; j < n; ++j)
        ref += m[i * n + j] * data(x)[j];
      worst = std::max(worst, std::abs(ref - data(y)[i]));
    }
    return worst;
  };
  EXPECT_LT(product(false), 1e-12);
  EXPECT_EQ(a->facts.load(), kFactMatvecSeen);
  EXPECT_LT(product(false), 1e-12);
  EXPECT_EQ(a->facts.load(), kFactMatvecSeen | kFactSymmetric);
  EXPECT_LT(product(false), 1e-12);
  // A writer clears what was learned; the product sees the new elements.
  g.submit("write", [&] { static_cast<double *>(a->data())[1] += 1; }, {}, {a});
  g.waitAll();
  EXPECT_EQ(a->facts.load(), 0u);
  EXPECT_LT(product(false), 1e-12);
  EXPECT_LT(product(false), 1e-12);
  EXPECT_EQ(a->facts.load(), kFactMatvecSeen | kFactNotSymmetric);
  // A kernel that also writes A learns nothing about it.
  static_cast<double *>(a->data())[1] -= 1;
  a->facts = 0;
  EXPECT_LT(product(true), 1e-12);
  EXPECT_LT(product(true), 1e-12);
  EXPECT_EQ(a->facts.load(), 0u);
}

TEST(Lapack, InverseOfATransposedViewAndSingularError) {
  // in0: the 2x2 matrix [[4, 7], [2, 6]] stored transposed (strides 1, 2).
  double At[4] = {4, 2, 7, 6};
  double out[4] = {0, 0, 0, 0};
  // nArrays, out (offset, rank, sizes, strides), in0, nArgs.
  int64_t meta[] = {2, 0, 2, 2, 2, 2, 1, 0, 2, 2, 2, 1, 2, 0};
  size_t n = 0;
  const cpn_lib_entry *table = cpn_lib_functions(&n);
  cpn_lib_fn inv = nullptr;
  for (size_t i = 0; i < n; ++i)
    if (std::string(table[i].name) == "cpn_lib_inv_f64")
      inv = table[i].fn;
  ASSERT_NE(inv, nullptr);
  inv(reinterpret_cast<int64_t>(meta), reinterpret_cast<int64_t>(out),
      reinterpret_cast<int64_t>(At), 0, 0);
  EXPECT_FALSE(cpnrt::takeKernelError());
  // inverse of [[4, 7], [2, 6]] = [[0.6, -0.7], [-0.2, 0.4]]
  EXPECT_NEAR(out[0], 0.6, 1e-12);
  EXPECT_NEAR(out[1], -0.7, 1e-12);
  EXPECT_NEAR(out[2], -0.2, 1e-12);
  EXPECT_NEAR(out[3], 0.4, 1e-12);
  // A singular matrix: NaN results and an error for the task to raise, once.
  double S[4] = {1, 2, 2, 4};
  inv(reinterpret_cast<int64_t>(meta), reinterpret_cast<int64_t>(out),
      reinterpret_cast<int64_t>(S), 0, 0);
  EXPECT_TRUE(std::isnan(out[0]));
  // Its kind travels beside NumPy's message (no "LinAlgError: " to parse),
  // through the C entry point cpnc's modules call too.
  Failure error = cpnrt::takeKernelError();
  EXPECT_EQ(error.kind, ErrorKind::LinAlg);
  EXPECT_EQ(error.message, "Singular matrix");
  EXPECT_FALSE(cpnrt::takeKernelError());
  inv(reinterpret_cast<int64_t>(meta), reinterpret_cast<int64_t>(out),
      reinterpret_cast<int64_t>(S), 0, 0);
  int kind = -1;
  EXPECT_STREQ(cpn_lib_take_error(&kind), "Singular matrix");
  EXPECT_EQ(kind, static_cast<int>(ErrorKind::LinAlg));
  EXPECT_STREQ(cpn_lib_take_error(&kind), "");
}

TEST(Scatter, UfuncAtWithOneValueForEveryIndex) {
  // at_add(a (5), indices (4), one 0-d value): a[i_k] += v in order, the
  // value read once (np.add.at(h, idx, 1.5)); then at_maximum.
  double a[5] = {0, 1, 2, 3, 4}, out[5] = {0, 0, 0, 0, 0}, v = 1.5;
  int64_t idx[4] = {3, 0, 3, 4};
  // nArrays, out (offset, rank, size, stride), a, indices, value (rank 0),
  // nArgs.
  int64_t meta[] = {4, 0, 1, 5, 1, 0, 1, 5, 1, 0, 1, 4, 1, 0, 0, 0};
  size_t n = 0;
  const cpn_lib_entry *table = cpn_lib_functions(&n);
  auto find = [&](const std::string &name) {
    for (size_t i = 0; i < n; ++i)
      if (table[i].name == name)
        return table[i].fn;
    return cpn_lib_fn(nullptr);
  };
  cpn_lib_fn add = find("cpn_lib_at_add_f8"),
             mx = find("cpn_lib_at_maximum_f8");
  ASSERT_NE(add, nullptr);
  ASSERT_NE(mx, nullptr);
  add(reinterpret_cast<int64_t>(meta), reinterpret_cast<int64_t>(out),
      reinterpret_cast<int64_t>(a), reinterpret_cast<int64_t>(idx),
      reinterpret_cast<int64_t>(&v));
  EXPECT_EQ(std::vector<double>(out, out + 5),
            (std::vector<double>{1.5, 1, 2, 6, 5.5}));
  v = 5.0;
  mx(reinterpret_cast<int64_t>(meta), reinterpret_cast<int64_t>(out),
     reinterpret_cast<int64_t>(out), reinterpret_cast<int64_t>(idx),
     reinterpret_cast<int64_t>(&v));
  EXPECT_EQ(std::vector<double>(out, out + 5),
            (std::vector<double>{5, 1, 2, 6, 5.5}));
}

TEST(LibCalls, CompressAndNonzeroNeverWritePastTheirOutput) {
  // Outputs sized for 2 selected elements, inputs that select 100: a mask
  // or an array changed after its count was taken must not overflow.
  constexpr int64_t n = 128;
  std::vector<int16_t> a(n), out(2 + 8, int16_t(-7));
  std::vector<uint8_t> mask(n, 0);
  std::vector<int64_t> where(2 + 8, -7);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = int16_t(i);
    mask[i] = i % 4 != 3;
  }
  size_t count = 0;
  const cpn_lib_entry *table = cpn_lib_functions(&count);
  auto find = [&](const std::string &name) {
    for (size_t i = 0; i < count; ++i)
      if (table[i].name == name)
        return table[i].fn;
    return cpn_lib_fn(nullptr);
  };
  cpn_lib_fn compress = find("cpn_lib_compress_i2"),
             nonzero = find("cpn_lib_nonzero_u1");
  ASSERT_NE(compress, nullptr);
  ASSERT_NE(nonzero, nullptr);
  // nArrays, out (offset, rank, sizes, strides), a, mask, nArgs.
  int64_t cmeta[] = {3, 0, 1, 2, 1, 0, 1, n, 1, 0, 1, n, 1, 0};
  compress(reinterpret_cast<int64_t>(cmeta),
           reinterpret_cast<int64_t>(out.data()),
           reinterpret_cast<int64_t>(a.data()),
           reinterpret_cast<int64_t>(mask.data()), 0);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 1);
  for (size_t i = 2; i < out.size(); ++i)
    EXPECT_EQ(out[i], -7) << i;
  // out (2, 1) int64, a (n) u1, one argument: 0 (count-major).
  int64_t nmeta[] = {2, 0, 2, 2, 1, 1, 1, 0, 1, n, 1, 1, 0};
  nonzero(reinterpret_cast<int64_t>(nmeta),
          reinterpret_cast<int64_t>(where.data()),
          reinterpret_cast<int64_t>(mask.data()), 0, 0);
  EXPECT_EQ(where[0], 0);
  EXPECT_EQ(where[1], 1);
  for (size_t i = 2; i < where.size(); ++i)
    EXPECT_EQ(where[i], -7) << i;
  int kind = 0;
  cpn_lib_take_error(&kind);
}

namespace {
/// max |P L U - A| / max |A| of getrf's factors `lu` and pivots of `a`
/// (column-major n x n).
template <typename T>
double luResidual(int64_t n, const std::vector<T> &a, const std::vector<T> &lu,
                  const std::vector<lapack_int> &piv) {
  std::vector<double> r(n * n, 0.0); // L U
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k <= j; ++k) {
      double u = lu[k + j * n];
      for (int64_t i = 0; i < n; ++i) {
        double l = i == k ? 1.0 : i > k ? double(lu[i + k * n]) : 0.0;
        r[i + j * n] += l * u;
      }
    }
  for (int64_t k = n - 1; k >= 0; --k) // P (L U): the interchanges undone
    if (piv[k] - 1 != k)
      for (int64_t j = 0; j < n; ++j)
        std::swap(r[k + j * n], r[piv[k] - 1 + j * n]);
  double err = 0, scale = 0;
  for (int64_t i = 0; i < n * n; ++i) {
    err = std::max(err, std::abs(r[i] - double(a[i])));
    scale = std::max(scale, std::abs(double(a[i])));
  }
  return err / scale;
}

template <typename T> void checkParallelLu(double tol) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t n : {384, 389, 700}) { // whole blocks, a ragged last block
    ASSERT_TRUE(cpnrt::lib::parallelLu(n) || cpnrt::lib::maxThreads() == 1);
    std::vector<T> a(n * n);
    for (T &x : a)
      x = T(u(rng));
    std::vector<T> lu = a;
    std::vector<lapack_int> piv(n);
    EXPECT_EQ(cpnrt::lib::parallelGetrf<T>(n, lu.data(), piv.data()), 0);
    EXPECT_LT(luResidual(n, a, lu, piv), tol) << n;
    for (int64_t i = 0; i < n; ++i) { // partial pivoting: |L| <= 1
      EXPECT_TRUE(piv[i] >= i + 1 && piv[i] <= n);
      for (int64_t k = 0; k < i; ++k)
        ASSERT_LE(std::abs(lu[i + k * n]), T(1)) << i << " " << k;
    }
    // Solve with the factors, 3 right-hand sides, and with the transpose.
    for (char trans : {'N', 'T'}) {
      std::vector<T> x(3 * n), b(3 * n, T(0));
      for (T &v : x)
        v = T(u(rng));
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t k = 0; k < n; ++k)
            b[i + c * n] +=
                (trans == 'N' ? a[i + k * n] : a[k + i * n]) * x[k + c * n];
      cpnrt::lib::parallelGetrs<T>(trans, n, 3, lu.data(), piv.data(),
                                   b.data());
      double err = 0;
      for (int64_t i = 0; i < 3 * n; ++i)
        err = std::max(err, std::abs(double(b[i]) - double(x[i])));
      EXPECT_LT(err, 1e3 * tol) << trans;
    }
  }
  // A zero column (the 100th of 400): info 100, as LAPACK's getrf says.
  int64_t n = 400;
  std::vector<T> a(n * n);
  for (T &x : a)
    x = T(u(rng));
  std::fill(a.begin() + 99 * n, a.begin() + 100 * n, T(0));
  std::vector<lapack_int> piv(n);
  EXPECT_EQ(cpnrt::lib::parallelGetrf<T>(n, a.data(), piv.data()), 100);
}
} // namespace

template <typename T> void checkParallelCholesky(double tol) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t n : {384, 389, 600}) {
    std::vector<double> m(n * n), a(n * n, 0.0);
    for (double &x : m)
      x = u(rng);
    for (int64_t i = 0; i < n; ++i) // a = m m^T + n I: positive definite
      for (int64_t j = 0; j < n; ++j) {
        double s = i == j ? double(n) : 0.0;
        for (int64_t k = 0; k < n; ++k)
          s += m[i + k * n] * m[j + k * n];
        a[i + j * n] = s;
      }
    std::vector<T> l(a.begin(), a.end());
    ASSERT_EQ(cpnrt::lib::parallelPotrf<T>(n, l.data()), 0);
    double err = 0, scale = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) { // (L L^T)[i, j], lower triangle
        double s = 0;
        for (int64_t k = 0; k <= j; ++k)
          s += double(l[i + k * n]) * double(l[j + k * n]);
        err = std::max(err, std::abs(s - a[i + j * n]));
        scale = std::max(scale, std::abs(a[i + j * n]));
      }
    EXPECT_LT(err / scale, tol) << n;
  }
  // Not positive definite at row 300 (of 400): info 301, as LAPACK's potrf.
  int64_t n = 400;
  std::vector<T> a(n * n, T(0));
  for (int64_t i = 0; i < n; ++i)
    a[i + i * n] = T(i == 300 ? -1 : 2);
  EXPECT_EQ(cpnrt::lib::parallelPotrf<T>(n, a.data()), 301);
}

TEST(Lapack, ParallelCholeskyFactorsAsPotrfFloat64) {
  checkParallelCholesky<double>(1e-13);
}
TEST(Lapack, ParallelCholeskyFactorsAsPotrfFloat32) {
  checkParallelCholesky<float>(1e-5);
}

TEST(Lapack, ParallelLuFactorsAndSolvesAsGetrfFloat64) {
  checkParallelLu<double>(1e-13);
}
TEST(Lapack, ParallelLuFactorsAndSolvesAsGetrfFloat32) {
  checkParallelLu<float>(1e-4);
}

namespace {
std::string readFile(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}
} // namespace

TEST(Profiler, OneEventPerTaskOnlyWhileASessionIsOpen) {
  cpnrt::TaskGraph g(2);
  cpnrt::Profiler &p = cpnrt::Profiler::global();
  g.submit("before", [] {}, {}, {});
  g.waitAll();
  size_t first = p.begin();
  for (int i = 0; i < 3; ++i)
    g.submit("kernel k" + std::to_string(i), [] {}, {}, {});
  g.submit("other \"quoted\"", [] {}, {}, {});
  g.waitAll();
  std::string path = ::testing::TempDir() + "cpnrt-profile.json";
  ASSERT_TRUE(p.end(first, path));
  EXPECT_FALSE(p.enabled());
  std::string json = readFile(path);
  EXPECT_EQ(count(json, "\"cat\": \"kernel\""), 3u);
  EXPECT_EQ(count(json, "\"cat\": \"task\""), 1u);
  EXPECT_EQ(count(json, "other \\\"quoted\\\""), 1u);
  EXPECT_EQ(count(json, "before"), 0u);
  EXPECT_NE(json.find("\"thread_name\""), std::string::npos);
  g.submit("after", [] {}, {}, {});
  g.waitAll();
  EXPECT_EQ(p.eventCount(), 0u);
  std::remove(path.c_str());
}

namespace {
/// Runs the sorts on four threads (two merge rounds) whatever the machine,
/// unless CPN_THREADS is set; read once, at the first sort.
void fourSortThreads() { setenv("CPN_THREADS", "4", /*overwrite=*/0); }

/// Rows long enough to be split over threads, with ties, NaNs, -0.0 and
/// infinities (Highway's sort alone turns +inf into the largest finite
/// value).
template <typename T> std::vector<T> sortInput(int64_t n, uint64_t seed) {
  std::vector<T> v(n);
  uint64_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = T(int64_t(x >> 33) % 5000 - 2500);
    if constexpr (std::is_floating_point_v<T>) {
      if (i % 997 == 0)
        v[i] = std::numeric_limits<T>::quiet_NaN();
      if (i % 991 == 0)
        v[i] = T(-0.0);
      if (i % 983 == 0)
        v[i] = std::numeric_limits<T>::infinity();
      if (i % 977 == 0)
        v[i] = -std::numeric_limits<T>::infinity();
      v[i] /= T(7);
    }
  }
  return v;
}

template <typename T> bool numpyLess(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (std::isnan(b) && !std::isnan(a));
  return a < b;
}

template <typename T> void checkSortRows() {
  fourSortThreads();
  const int64_t n = 300001, rows = 2;
  std::vector<T> in = sortInput<T>(rows * n * 2, 7);
  std::vector<T> out(rows * n);
  std::vector<int64_t> idx(rows * n);
  // Every other element of each row: a strided view.
  cpnrt::sortRows(in.data(), 2 * n, 2, rows, n, out.data());
  cpnrt::argsortRows(in.data(), 2 * n, 2, rows, n, idx.data());
  for (int64_t p = 0; p < rows; ++p) {
    std::vector<T> row(n);
    for (int64_t j = 0; j < n; ++j)
      row[j] = in[p * 2 * n + 2 * j];
    std::vector<int64_t> want(n);
    std::iota(want.begin(), want.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
      return numpyLess(row[a], row[b]);
    });
    for (int64_t j = 0; j < n; ++j) {
      T got = out[p * n + j], expect = row[want[j]];
      bool same = got == expect || (got != got && expect != expect);
      ASSERT_TRUE(same) << "row " << p << " position " << j;
      ASSERT_EQ(idx[p * n + j], want[j]) << "row " << p << " position " << j;
    }
  }
}
} // namespace

TEST(Sort, RowsSortedAndArgsortStableFloat64) { checkSortRows<double>(); }
TEST(Sort, RowsSortedAndArgsortStableFloat32) { checkSortRows<float>(); }
TEST(Sort, RowsSortedAndArgsortStableInt64) { checkSortRows<int64_t>(); }
TEST(Sort, RowsSortedAndArgsortStableInt32) { checkSortRows<int32_t>(); }
TEST(Sort, RowsSortedAndArgsortStableInt16) { checkSortRows<int16_t>(); }
TEST(Sort, RowsSortedAndArgsortStableInt8) { checkSortRows<int8_t>(); }
TEST(Sort, RowsSortedAndArgsortStableUint64) { checkSortRows<uint64_t>(); }

namespace {
/// argsort of 64-bit keys against a stable sort of the indices.
template <typename T> void expectArgsortStable(const std::vector<T> &v) {
  int64_t n = int64_t(v.size());
  std::vector<int64_t> idx(n), want(n);
  cpnrt::argsortRows(v.data(), n, 1, 1, n, idx.data());
  std::iota(want.begin(), want.end(), 0);
  std::stable_sort(want.begin(), want.end(),
                   [&](int64_t a, int64_t b) { return numpyLess(v[a], v[b]); });
  for (int64_t j = 0; j < n; ++j)
    ASSERT_EQ(idx[j], want[j]) << "position " << j;
}
} // namespace

TEST(Sort, ArgsortOf64BitKeysThatShareTheirPrefix) {
  // 64-bit keys are sorted by their 32-bit prefix above the row's minimum
  // and the index; keys that differ only below the prefix (a wide range and
  // values one ulp apart: runs sorted by prefix again) and exact ties (short
  // runs: by compares) must still come out in order, runs across the
  // threads' parts included.
  fourSortThreads();
  const int64_t n = 200003;
  std::vector<double> d(n);
  std::vector<int64_t> i64(n);
  std::vector<uint64_t> u64(n);
  uint64_t x = 11;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int64_t k = int64_t(x >> 33) % 1000;
    d[i] = 1.0 + double(k) * std::numeric_limits<double>::epsilon();
    i64[i] = (int64_t(x >> 40) % 3 - 1) * (int64_t(1) << 40) + k;
    u64[i] = ~uint64_t(0) - uint64_t(k) * 3 - (i % 2 ? 0 : (uint64_t(1) << 63));
  }
  d[5] = -1e300, d[77] = std::numeric_limits<double>::quiet_NaN();
  d[78] = std::numeric_limits<double>::infinity(), d[79] = -0.0, d[80] = 0.0;
  expectArgsortStable(d);
  expectArgsortStable(i64);
  expectArgsortStable(u64);
  std::vector<double> constant(n, 2.5);
  expectArgsortStable(constant);
  // Short runs: 64-bit random keys, each about four times.
  std::vector<uint64_t> pool(n / 4), few(n);
  for (uint64_t &p : pool)
    x = x * 6364136223846793005ull + 1442695040888963407ull, p = x;
  for (int64_t i = 0; i < n; ++i)
    few[i] =
        pool[(uint64_t(i) * 2654435761u) % pool.size()] >> (i % 7 ? 0 : 20);
  expectArgsortStable(few);
}

TEST(Sort, ManyShortRowsAreSharedOutBetweenThreads) {
  fourSortThreads();
  const int64_t rows = 5000, n = 37;
  std::vector<double> in = sortInput<double>(rows * n, 3);
  std::vector<double> out(rows * n);
  std::vector<int64_t> idx(rows * n);
  cpnrt::sortRows(in.data(), n, 1, rows, n, out.data());
  cpnrt::argsortRows(in.data(), n, 1, rows, n, idx.data());
  for (int64_t p = 0; p < rows; ++p) {
    std::vector<double> row(in.begin() + p * n, in.begin() + (p + 1) * n);
    std::stable_sort(row.begin(), row.end(), numpyLess<double>);
    for (int64_t j = 0; j < n; ++j) {
      double got = out[p * n + j];
      ASSERT_TRUE(got == row[j] || (got != got && row[j] != row[j]));
      double byIndex = in[p * n + idx[p * n + j]];
      ASSERT_TRUE(byIndex == row[j] ||
                  (byIndex != byIndex && row[j] != row[j]));
    }
  }
}

namespace {
/// out is a partition of in at every kth: the sorted element at each kth,
/// none larger before it, none smaller after, the same elements.
template <typename T>
void expectPartitioned(std::vector<T> in, const std::vector<T> &out,
                       const std::vector<int64_t> &kth) {
  std::stable_sort(in.begin(), in.end(), numpyLess<T>);
  std::vector<T> sortedOut(out);
  std::stable_sort(sortedOut.begin(), sortedOut.end(), numpyLess<T>);
  auto same = [](T a, T b) { return a == b || (a != a && b != b); };
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_TRUE(same(in[i], sortedOut[i])) << "not the same elements at " << i;
  for (int64_t k : kth) {
    ASSERT_TRUE(same(out[k], in[k])) << "kth " << k;
    for (int64_t i = 0; i < k; ++i)
      ASSERT_FALSE(numpyLess(out[k], out[i])) << "kth " << k << " before " << i;
    for (size_t i = k + 1; i < out.size(); ++i)
      ASSERT_FALSE(numpyLess(out[i], out[k])) << "kth " << k << " after " << i;
  }
}

template <typename T> void checkPartition(std::vector<T> in) {
  fourSortThreads();
  int64_t n = int64_t(in.size());
  std::vector<std::vector<int64_t>> kths = {
      {0}, {n / 2}, {n / 2, n / 2 + 1}, {10, 1000, n / 3, n - 1}, {n - 1}};
  for (const auto &kth : kths) {
    std::vector<T> out(n);
    cpnrt::partitionRows(in.data(), n, 1, 1, n, kth.data(), int64_t(kth.size()),
                         out.data());
    expectPartitioned(in, out, kth);
  }
}
} // namespace

TEST(Partition, KthInPlaceFloat64WithNaN) {
  checkPartition(sortInput<double>(300001, 11));
}
TEST(Partition, KthInPlaceInt64AndInt8Ties) {
  checkPartition(sortInput<int64_t>(300001, 12));
  checkPartition(sortInput<int8_t>(200003, 13));
}
TEST(Partition, KthInPlaceSortedAndConstantRows) {
  std::vector<double> up(250000), flat(250000, 1.5);
  std::iota(up.begin(), up.end(), -1000.0);
  checkPartition(up);
  std::reverse(up.begin(), up.end());
  checkPartition(up);
  checkPartition(flat);
  checkPartition(sortInput<float>(5000, 14)); // one thread, nth_element
  // One thread, through brackets (2^14 elements or more, below 2 x 2^15).
  checkPartition(sortInput<double>(20000, 15));
  checkPartition(sortInput<int32_t>(40000, 16));
}

namespace {
/// splitByBracket against a scalar loop: every length up to a few vectors
/// (the masked tail), NaNs, keys at the bracket's ends.
template <typename T> void checkBracketSplit() {
  const T lo = T(10), hi = T(20);
  std::mt19937_64 rng(21);
  for (int64_t m = 0; m <= 70; ++m) {
    std::vector<T> v(m);
    for (auto &x : v) {
      x = T(rng() % 31);
      if constexpr (std::is_floating_point_v<T>)
        if (rng() % 7 == 0)
          x = std::numeric_limits<T>::quiet_NaN();
    }
    std::vector<std::vector<T>> want(4),
        got(4, std::vector<T>(m + cpnrt::simd::kSplitSlack));
    for (T x : v)
      want[x != x ? 3 : x < lo ? 0 : x > hi ? 2 : 1].push_back(x);
    T *const parts[4] = {got[0].data(), got[1].data(), got[2].data(),
                         got[3].data()};
    int64_t count[4];
    cpnrt::simd::splitByBracket(v.data(), m, lo, hi, parts, count);
    for (int r = 0; r < 4; ++r) {
      ASSERT_EQ(count[r], int64_t(want[r].size()))
          << "m " << m << " part " << r;
      for (int64_t i = 0; i < count[r]; ++i)
        ASSERT_TRUE(got[r][i] == want[r][i] ||
                    (r == 3 && got[r][i] != got[r][i]))
            << "m " << m << " part " << r << " at " << i;
    }
  }
}
} // namespace

namespace {
/// check() once for each vector unit of this CPU that the runtime's Highway
/// code is compiled for (AVX2 and SSE4 on an AVX-512 machine too: each has
/// its own compress, Compress.cpp).
template <typename F> void onEachVectorUnit(F check) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    check();
  }
  hwy::SetSupportedTargetsForTest(0);
}
} // namespace

TEST(Partition, BracketSplitMatchesAScalarLoop) {
  onEachVectorUnit([] {
    checkBracketSplit<double>();
    checkBracketSplit<float>();
    checkBracketSplit<int32_t>();
    checkBracketSplit<int64_t>();
    checkBracketSplit<uint32_t>();
    checkBracketSplit<uint64_t>();
  });
}

namespace {
/// compressByMask against a scalar loop: lengths up to a few vectors, mask
/// bytes other than 1, and outputs that end before the selected elements
/// do (nothing written past the limit).
template <typename T> void checkMaskCompress() {
  std::mt19937_64 rng(22);
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<T> x(n);
    std::vector<uint8_t> mask(n);
    std::vector<T> want;
    for (int64_t i = 0; i < n; ++i) {
      x[i] = T(i + 1);
      mask[i] = uint8_t(rng() % 3 == 0 ? 0 : rng() % 255 + 1);
      if (mask[i])
        want.push_back(x[i]);
    }
    for (int64_t limit : {int64_t(want.size()), int64_t(want.size()) / 2}) {
      std::vector<T> out(limit + 16, T(-7));
      int64_t k = 0;
      cpnrt::simd::compressByMask(x.data(), mask.data(), n, out.data(), k,
                                  limit);
      ASSERT_EQ(k, limit) << "n " << n;
      for (int64_t i = 0; i < limit; ++i)
        ASSERT_EQ(out[i], want[i]) << "n " << n << " at " << i;
      for (int64_t i = limit; i < limit + 16; ++i)
        ASSERT_EQ(out[i], T(-7)) << "written past the limit, n " << n;
    }
  }
}
} // namespace

namespace {
/// keepNumbers against a scalar loop: lengths up to a few vectors, NaNs and
/// infinities of both signs, with and without +inf dropped.
template <typename T> void checkKeepNumbers() {
  std::mt19937_64 rng(23);
  const T inf = std::numeric_limits<T>::infinity();
  for (int64_t n = 0; n <= 70; ++n)
    for (bool dropInf : {false, true}) {
      std::vector<T> x(n), want;
      for (auto &v : x) {
        int r = int(rng() % 10);
        v = r == 0   ? std::numeric_limits<T>::quiet_NaN()
            : r == 1 ? inf
            : r == 2 ? -inf
                     : T(int(rng() % 100) - 50);
        if (v == v && !(dropInf && v == inf))
          want.push_back(v);
      }
      std::vector<T> out(n, T(-7));
      int64_t m = cpnrt::simd::keepNumbers(x.data(), n, out.data(), dropInf);
      ASSERT_EQ(m, int64_t(want.size())) << "n " << n;
      for (int64_t i = 0; i < m; ++i)
        ASSERT_EQ(out[i], want[i]) << "n " << n << " at " << i;
    }
}
} // namespace

TEST(Sort, KeepNumbersMatchesAScalarLoop) {
  onEachVectorUnit([] {
    checkKeepNumbers<double>();
    checkKeepNumbers<float>();
  });
}

TEST(Indexing, MaskCompressMatchesAScalarLoop) {
  onEachVectorUnit([] {
    checkMaskCompress<double>();
    checkMaskCompress<float>();
    checkMaskCompress<int32_t>();
    checkMaskCompress<int64_t>();
    checkMaskCompress<uint32_t>();
    checkMaskCompress<uint64_t>();
  });
}

// A sample sort's splitters all equal (one distinct key, or two): the
// buckets collapse into the regions of equal keys, and the sort still
// covers every element.
TEST(Sort, FewDistinctKeysOnManyThreads) {
  fourSortThreads();
  const int64_t n = 400003;
  for (int64_t distinct : {1, 2, 3}) {
    std::vector<int64_t> in(n), out(n), idx(n);
    for (int64_t i = 0; i < n; ++i)
      in[i] = (i * 7919) % distinct;
    cpnrt::sortRows(in.data(), n, 1, 1, n, out.data());
    cpnrt::argsortRows(in.data(), n, 1, 1, n, idx.data());
    std::vector<int64_t> want(in);
    std::sort(want.begin(), want.end());
    ASSERT_EQ(out, want) << distinct << " distinct keys";
    for (int64_t j = 1; j < n; ++j) {
      ASSERT_LE(in[idx[j - 1]], in[idx[j]]) << "position " << j;
      if (in[idx[j - 1]] == in[idx[j]]) {
        ASSERT_LT(idx[j - 1], idx[j]) << "stable at " << j;
      }
    }
  }
}

TEST(Blas, SmallProductsOnManyThreadsLeaveThePoolAsFound) {
  // Small matrix-vector products run with OpenBLAS set to one thread, a
  // process-wide setting: products on several threads at once must restore
  // it (matrix-matrix products keep OpenBLAS's own choice).
  int before = cpnrt::blasConfig().threads;
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([t] {
      std::vector<double> a(16 * 16, 1.0 + t), b(16, 2.0), c(16);
      for (int rep = 0; rep < 2000; ++rep) {
        cpn_gemm_f64(reinterpret_cast<int64_t>(a.data()), 0, 16, 1,
                     reinterpret_cast<int64_t>(b.data()), 0, 1, 1,
                     reinterpret_cast<int64_t>(c.data()), 0, 1, 1, 16, 1, 16,
                     0);
        ASSERT_EQ(c[7], 32.0 * (1.0 + t));
      }
    });
  for (std::thread &t : pool)
    t.join();
  EXPECT_EQ(cpnrt::blasConfig().threads, before);
}

// Random123's known answer for philox4x32-10 (counter 0, key 0: the first
// two output words 0x6627e8d5 0xe169c58d); the counter wraps modulo 2^64.
TEST(Random, PhiloxKnownAnswerAndCounterWrap) {
  uint64_t w[3];
  cpnrt::philoxWords(0, 0, 1, w);
  EXPECT_EQ(w[0], 0x6627E8D5E169C58Dull);
  uint64_t key = 0x243F6A8885A308D3ull, first[2], wrapped[3];
  cpnrt::philoxWords(key, 0, 2, first);
  cpnrt::philoxWords(key, ~uint64_t(0), 3, wrapped);
  EXPECT_EQ(wrapped[1], first[0]);
  EXPECT_EQ(wrapped[2], first[1]);
  EXPECT_NE(wrapped[0], wrapped[1]);
}

// The runtime's worker threads (Threads.cpp): every part of a job runs once,
// whatever the part count (the pool grows), from inside a part (a nested job
// gets threads of its own) and from two callers at once.
TEST(Threads, EveryPartRunsOnceNestedAndFromTwoCallers) {
  for (int64_t n : {1, 2, 3, 5, 8, 2}) {
    std::vector<std::atomic<int>> hits(n);
    cpnrt::lib::onThreads(n, [&](int64_t t) { ++hits[t]; });
    for (int64_t t = 0; t < n; ++t)
      ASSERT_EQ(hits[t].load(), 1) << n << " parts, part " << t;
  }
  std::atomic<int> inner{0};
  cpnrt::lib::onThreads(
      3, [&](int64_t) { cpnrt::lib::onThreads(4, [&](int64_t) { ++inner; }); });
  EXPECT_EQ(inner.load(), 12);
  std::atomic<int64_t> sum{0};
  auto caller = [&] {
    for (int i = 0; i < 300; ++i)
      cpnrt::lib::onThreads(4, [&](int64_t t) { sum += t + 1; });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 2 * 300 * (1 + 2 + 3 + 4));
}

// Parts are claimed as they come: a caller whose workers are slow to wake
// runs the parts itself (many short jobs, each part run exactly once); a
// part that throws on the calling thread cancels the parts nobody claimed
// and the next job runs normally.
TEST(Threads, PartsAreClaimedAndAThrowCancelsTheRest) {
  for (int job = 0; job < 2000; ++job) {
    std::array<std::atomic<int>, 4> hits{};
    cpnrt::lib::onThreads(4, [&](int64_t t) { ++hits[t]; });
    for (int t = 0; t < 4; ++t)
      ASSERT_EQ(hits[t].load(), 1) << "job " << job << " part " << t;
    if (job % 500 == 0) // the workers fall asleep
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto caller = std::this_thread::get_id();
  std::atomic<int> ran{0};
  EXPECT_THROW(cpnrt::lib::onThreads(4,
                                     [&](int64_t) {
                                       ++ran;
                                       if (std::this_thread::get_id() == caller)
                                         throw std::runtime_error("part");
                                     }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
  EXPECT_LE(ran.load(), 4);
  std::atomic<int> after{0};
  cpnrt::lib::onThreads(4, [&](int64_t) { ++after; });
  EXPECT_EQ(after.load(), 4);
}

// A thread may name the team its library calls run on (a compiled kernel
// names its OpenMP threads): its jobs go there, a job started inside one of
// its parts runs in order on that thread, other threads keep the runtime's
// workers, and null restores them.
namespace {
std::atomic<int> backendJobs{0};
void twoThreadTeam(int64_t n, void (*fn)(void *, int64_t), void *ctx) {
  ++backendJobs;
  std::atomic<int64_t> next{0};
  auto parts = [&] {
    for (int64_t t; (t = next.fetch_add(1)) < n;)
      fn(ctx, t);
  };
  std::thread other(parts);
  parts();
  other.join();
}
} // namespace

TEST(Threads, ABackendTakesThisThreadsJobs) {
  backendJobs = 0;
  EXPECT_EQ(cpnrt::setThreadParallelBackend(&twoThreadTeam), nullptr);
  std::array<std::atomic<int>, 5> hits{};
  cpnrt::lib::onThreads(5, [&](int64_t t) { ++hits[t]; });
  for (int t = 0; t < 5; ++t)
    EXPECT_EQ(hits[t].load(), 1) << "part " << t;
  EXPECT_EQ(backendJobs.load(), 1);
  std::atomic<int> inner{0};
  cpnrt::lib::onThreads(
      3, [&](int64_t) { cpnrt::lib::onThreads(4, [&](int64_t) { ++inner; }); });
  EXPECT_EQ(inner.load(), 12);
  EXPECT_EQ(backendJobs.load(), 2); // the nested jobs ran where they were made
  std::atomic<int> elsewhere{0};
  std::thread([&] {
    cpnrt::lib::onThreads(4, [&](int64_t) { ++elsewhere; });
  }).join();
  EXPECT_EQ(elsewhere.load(), 4);
  EXPECT_EQ(backendJobs.load(), 2);
  EXPECT_EQ(cpnrt::setThreadParallelBackend(nullptr), &twoThreadTeam);
  cpnrt::lib::onThreads(4, [&](int64_t) { ++elsewhere; });
  EXPECT_EQ(backendJobs.load(), 2);
  EXPECT_EQ(elsewhere.load(), 8);
}

// Matrix-vector products past the one-thread size (OpenBLAS's threads):
// stored and transposed matrices, an offset operand, strided vectors and
// accumulation give the plain loop's values.
TEST(Blas, LargeMatrixVectorProducts) {
  const int64_t m = 333, k = 301;
  std::vector<double> A(m * k + 5), x(2 * k), y(3 * m), want(m);
  for (size_t i = 0; i < A.size(); ++i)
    A[i] = std::sin(double(i)) + 0.25;
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::cos(double(i));
  for (int trans = 0; trans < 2; ++trans)
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      // The matrix at offset 5: rows x cols m x k, stored (rs k, cs 1) or
      // as the transpose of a stored k x m one (rs 1, cs m).
      int64_t rs = trans ? 1 : k, cs = trans ? m : 1;
      for (int64_t i = 0; i < 3 * m; ++i)
        y[i] = 0.5;
      for (int64_t i = 0; i < m; ++i) {
        double s = accumulate ? 0.5 : 0.0;
        for (int64_t l = 0; l < k; ++l)
          s += A[5 + i * rs + l * cs] * x[2 * l];
        want[i] = s;
      }
      cpn_gemm_f64(reinterpret_cast<int64_t>(A.data()), 5, rs, cs,
                   reinterpret_cast<int64_t>(x.data()), 0, 2, 1,
                   reinterpret_cast<int64_t>(y.data()), 0, 3, 1, m, 1, k,
                   accumulate);
      for (int64_t i = 0; i < m; ++i)
        ASSERT_NEAR(y[3 * i], want[i], 1e-12 * (1 + std::abs(want[i])))
            << "trans " << trans << " accumulate " << accumulate << " row "
            << i;
      EXPECT_EQ(y[1], 0.5); // the elements between the strided ones
    }
}

// Without an MPI launcher (these tests run plainly), the ranks are one
// process that never calls MPI: rank 0 of 1, collectives do nothing.
TEST(Comm, APlainProcessIsRankZeroOfOneWithoutMpi) {
  if (cpnrt::comm::launchedByMpi())
    GTEST_SKIP() << "started by an MPI launcher";
  EXPECT_FALSE(cpnrt::comm::start());
  EXPECT_FALSE(cpnrt::comm::active());
  EXPECT_EQ(cpnrt::comm::rank(), 0);
  EXPECT_EQ(cpnrt::comm::size(), 1);
  EXPECT_EQ(cpnrt::comm::localSize(), 1);
  EXPECT_EQ(cpnrt::comm::threadLevel(), -1);
  cpnrt::comm::barrier();
  uint64_t v = 42;
  cpnrt::comm::broadcast(&v, sizeof v, 0);
  EXPECT_EQ(v, 42u);
  for (int64_t x : {int64_t(-7), INT64_MIN, INT64_MAX}) {
    int64_t lo = 0, hi = 0;
    cpnrt::comm::minMax(x, lo, hi);
    EXPECT_EQ(lo, x);
    EXPECT_EQ(hi, x);
  }
  cpnrt::comm::finish(1.0); // nothing started: nothing to end
  EXPECT_FALSE(cpnrt::comm::active());
}

// Borrowed NumPy buffers (Guard.cpp): a store over memory another library
// still writes, write-protected; the first write copies the elements for
// the store after the tasks reading the old memory have finished.
namespace {
/// A buffer of `n` doubles that glibc maps for itself (above its largest
/// mmap threshold, 32 MiB): as a big NumPy array's.
struct MappedDoubles {
  size_t n;
  double *p;
  explicit MappedDoubles(size_t count)
      : n(count), p(static_cast<double *>(std::malloc(count * 8))) {
    for (size_t i = 0; i < n; ++i)
      p[i] = double(i % 1000);
  }
  std::shared_ptr<void> owner() { return std::shared_ptr<void>(p, std::free); }
};
} // namespace

TEST(Guard, AWriteCopiesForTheStoreAfterItsRunningReaders) {
  if (!cpnrt::borrowingAvailable())
    GTEST_SKIP() << "userfaultfd's write protection is not allowed here";
  MappedDoubles m(5 << 20); // 40 MiB
  cpnrt::resetGuardStats();
  auto s = cpnrt::Store::borrow(cpnrt::DType::f64, {int64_t(m.n)}, m.p,
                                m.owner(), m.p, m.n * 8);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->guarded());
  EXPECT_EQ(s->data(), m.p);
  std::atomic<bool> started{false};
  double sum = -1;
  auto task = cpnrt::TaskGraph::global().submit(
      "read",
      [&] {
        started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const double *d = static_cast<const double *>(s->data());
        double t = 0;
        for (size_t i = 0; i < m.n; ++i)
          t += d[i];
        sum = t;
      },
      {s}, {}, false);
  while (!started)
    std::this_thread::yield();
  m.p[0] = -1e9; // waits for the task, which sums the old elements
  m.p[m.n - 1] = -1e9;
  cpnrt::TaskGraph::global().wait(task);
  double want = 0;
  for (size_t i = 0; i < m.n; ++i)
    want += double(i % 1000);
  EXPECT_EQ(sum, want);
  EXPECT_FALSE(s->guarded());
  EXPECT_NE(s->data(), m.p);
  EXPECT_EQ(static_cast<double *>(s->data())[0], 0.0);
  EXPECT_EQ(static_cast<double *>(s->data())[m.n - 1],
            double((m.n - 1) % 1000));
  EXPECT_EQ(m.p[0], -1e9);
  EXPECT_EQ(cpnrt::guardStats().copies, 1u);
  EXPECT_EQ(cpnrt::guardStats().copyBytes, m.n * 8);
}

TEST(Guard, ReleaseLiftsTheProtectionAndOverlapsAreRefused) {
  if (!cpnrt::borrowingAvailable())
    GTEST_SKIP() << "userfaultfd's write protection is not allowed here";
  MappedDoubles m(5 << 20);
  auto keep = m.owner();
  cpnrt::resetGuardStats();
  auto s = cpnrt::Store::borrow(cpnrt::DType::f64, {int64_t(m.n)}, m.p, keep,
                                m.p, m.n * 8);
  ASSERT_TRUE(s);
  // The same elements again share the store; other elements on its pages
  // are refused (the caller copies them).
  auto same = cpnrt::Store::borrow(cpnrt::DType::f64, {int64_t(m.n)}, m.p, keep,
                                   m.p, m.n * 8);
  EXPECT_EQ(same, s);
  EXPECT_TRUE(s->borrowShared());
  EXPECT_FALSE(cpnrt::Store::borrow(cpnrt::DType::f64, {100}, m.p + 10, keep,
                                    m.p, m.n * 8));
  same.reset();
  s.reset();
  m.p[7] = 3.0; // no fault: nothing guards it now
  EXPECT_EQ(cpnrt::guardStats().copies, 0u);
  EXPECT_EQ(cpnrt::guardStats().borrowed, 1u);
}

TEST(Guard, HeapMemoryIsNotBorrowed) {
  std::vector<double> small(1 << 12); // on malloc's heap
  std::shared_ptr<void> noOwner(small.data(), [](void *) {});
  EXPECT_FALSE(cpnrt::Store::borrow(cpnrt::DType::f64, {int64_t(small.size())},
                                    small.data(), noOwner, small.data(),
                                    small.size() * 8));
}

// Pages for NumPy's big arrays (Pages.cpp): page-aligned, whole pages,
// zeroed when asked, resized with their contents kept, and borrowable
// wherever malloc put them.
TEST(Pages, TakeGiveResize) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  auto before = cpnrt::pages::stats();
  auto *p = static_cast<double *>(cpnrt::pages::take(300000, false));
  ASSERT_TRUE(p);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % page, 0u);
  EXPECT_TRUE(cpnrt::pages::owns(p, 300000));
  EXPECT_TRUE(cpnrt::pages::owns(p, 300000 + page - 300000 % page));
  EXPECT_FALSE(cpnrt::pages::owns(p + 1, 0));
  EXPECT_EQ(cpnrt::pages::stats().allocations, before.allocations + 1);
  for (size_t i = 0; i < 300000 / 8; ++i)
    p[i] = 1.5;
  EXPECT_TRUE(cpnrt::pages::give(p));
  EXPECT_FALSE(cpnrt::pages::owns(p, 0));
  EXPECT_FALSE(cpnrt::pages::give(p)); // not live any more
  // Zeroed when asked, whether malloc reuses memory or maps it.
  for (size_t n : {size_t(290000), size_t(40) << 20}) {
    auto *z = static_cast<double *>(cpnrt::pages::take(n, true));
    ASSERT_TRUE(z);
    for (size_t i = 0; i < n / 8; ++i)
      ASSERT_EQ(z[i], 0.0) << i;
    for (size_t i = 0; i < n / 8; ++i)
      z[i] = 2.0;
    EXPECT_TRUE(cpnrt::pages::give(z));
  }
  // Grown and shrunk, the elements stay.
  auto *q = static_cast<double *>(cpnrt::pages::take(290000, false));
  for (size_t i = 0; i < 290000 / 8; ++i)
    q[i] = double(i);
  auto *r = static_cast<double *>(cpnrt::pages::resize(q, 8 << 20));
  ASSERT_TRUE(r);
  EXPECT_TRUE(cpnrt::pages::owns(r, 8 << 20));
  for (size_t i = 0; i < 290000 / 8; ++i)
    ASSERT_EQ(r[i], double(i)) << i;
  r[(8 << 17) - 1] = 7.0; // the new tail is writable
  auto *s = static_cast<double *>(cpnrt::pages::resize(r, 400000));
  ASSERT_TRUE(s);
  EXPECT_EQ(s[1000], 1000.0);
  EXPECT_TRUE(cpnrt::pages::give(s));
  EXPECT_EQ(cpnrt::pages::stats().bytesLive, before.bytesLive);
  // Memory that is not take's is left alone.
  std::vector<double> other(1 << 16);
  EXPECT_FALSE(cpnrt::pages::give(other.data()));
}

TEST(Guard, PagesOfTheirOwnOnTheHeapAreBorrowed) {
  if (!cpnrt::borrowingAvailable())
    GTEST_SKIP() << "userfaultfd's write protection is not allowed here";
  // 1 MiB, after a free that raised glibc's mmap threshold: on the heap.
  std::free(std::malloc(size_t(8) << 20));
  size_t n = 1 << 17;
  auto *p = static_cast<double *>(cpnrt::pages::take(n * 8, true));
  ASSERT_TRUE(p);
  for (size_t i = 0; i < n; ++i)
    p[i] = double(i);
  std::shared_ptr<void> owner(p, [](void *q) { cpnrt::pages::give(q); });
  auto s =
      cpnrt::Store::borrow(cpnrt::DType::f64, {int64_t(n)}, p, owner, p, n * 8);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data(), p);
  p[5] = -1.0; // copies for the store first
  EXPECT_FALSE(s->guarded());
  EXPECT_EQ(static_cast<double *>(s->data())[5], 5.0);
  EXPECT_EQ(p[5], -1.0);
}
