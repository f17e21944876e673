//===- RunKernel.cpp - a compiled kernel on the task graph ----------------===//
//
// Part of cpnumeric.
//
// Owns running a window's kernel (runKernel): a task on the runtime's task
// graph that passes the stores' pointers and the fp status words, lets
// OpenMP's idle threads sleep around library calls, runs the runtime's
// algorithms on the kernel's own OpenMP team (ompTeam over libomp's
// __kmpc_fork_call) and turns what the kernel reports (fp errors, a library
// call's error) into reports and exceptions; at most kMaxWindowsAhead windows
// are submitted ahead of execution.
//
// Calls the runtime (task graph, threads, stores), libomp through
// openmpRuntime (Kernel.h) and FpReports.cpp.
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"
#include "cpn/Compiler/Kernel.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Error.h"
#include "cpnrt/Lapack.h"
#include "cpnrt/Store.h"
#include "cpnrt/TaskGraph.h"
#include "cpnrt/Threads.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <exception>
#include <mutex>
#include <pthread.h>
#include <stdexcept>
#include <thread>

namespace cpn::detail {

/// How many windows the Engine may submit before their kernels have run.
constexpr uint64_t kMaxWindowsAhead = 2;

namespace {

/// This process's threads that are running or runnable now (state R in
/// /proc/self/task/*/stat): their ids added to `running`.
void ownRunningThreads(std::vector<long> &running) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return;
  while (dirent *e = readdir(dir)) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], buf[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = std::fopen(path, "r");
    if (!f)
      continue;
    size_t len = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[len] = 0;
    // "tid (comm) S ...": the state follows the last ')'.
    const char *close = std::strrchr(buf, ')');
    if (close && close[1] == ' ' && close[2] == 'R')
      running.push_back(std::atol(e->d_name));
  }
  closedir(dir);
}

/// Whether other processes want the cores a kernel's team would use: the
/// machine's running threads (/proc/loadavg) less this process's, plus the
/// team, above the cores. Idle OpenMP threads must not spin then, and the
/// loops run on one thread: a 50-window loop that takes 55 ms alone took
/// 0.6-1.8 s beside a fuzzer's two processes, its threads yielding ~10^6
/// times a run (NumPy: 60-140 ms); with this, 58-110 ms. Our own threads
/// are those running in a scan before or after the machine's count (a
/// thread that went to sleep between the two reads was counted by one and
/// not the other: on a thread of its own, beside the kernels, one sample
/// in ten said "crowded" on an idle machine).
bool sampleOversubscribed() {
  static const long cores = std::max(1u, std::thread::hardware_concurrency());
  bool over = false;
  std::vector<long> own;
  ownRunningThreads(own);
  if (FILE *f = std::fopen("/proc/loadavg", "r")) {
    double l1, l5, l15;
    long running = 0, total = 0;
    int got = std::fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running,
                          &total);
    std::fclose(f);
    if (got == 5) {
      ownRunningThreads(own);
      std::sort(own.begin(), own.end());
      long mine = std::unique(own.begin(), own.end()) - own.begin();
      long others = std::max(0L, running - mine);
      over = others + std::min<long>(cores, kernelThreads()) > cores;
    }
  }
  return over;
}

/// The sample's thread: reading /proc (a file per thread of this process)
/// took 150-250 us on this project's VMs, on the path of the first kernel
/// after each pause of more than the sampling interval (an elementwise op
/// of 10^5 float64 after a 0.15 s pause: 350 us against NumPy's 100). The
/// thread samples every 50 ms while kernels run (once per interval in
/// which one started) and parks after a second without one; a kernel only
/// notes its time, and wakes the thread (a futex call) when it is parked.
/// Leaked: its detached thread may wait on it while static destructors run.
struct LoadSampler {
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> started{false}, parked{false};
  int64_t nextTry = 0; // without a thread: the next try and inline sample
};
LoadSampler *loadSampler = new LoadSampler();
std::atomic<bool> crowdedNow{false};
std::atomic<int64_t> lastKernelMs{0};
constexpr int64_t kLoadSampleMs = 50, kLoadParkMs = 1000;

int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void loadSamplerLoop(LoadSampler *s) {
  int64_t sampledFor = -1;
  bool lastOver = false;
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    int64_t last = lastKernelMs.load();
    if (last != sampledFor) { // a kernel started since the last sample
      sampledFor = last;
      lock.unlock();
      // Crowded after two samples in a row (50 ms apart) that say so.
      bool over = sampleOversubscribed();
      crowdedNow.store(over && lastOver, std::memory_order_relaxed);
      lastOver = over;
      lock.lock();
    }
    if (steadyMs() - last < kLoadParkMs) {
      s->cv.wait_for(lock, std::chrono::milliseconds(kLoadSampleMs));
      continue;
    }
    // Parked until a kernel wakes it. Its time is read again after the
    // flag is set (both sequentially consistent, as the kernel's store and
    // read): a kernel that did not see the flag is seen here.
    s->parked.store(true);
    if (lastKernelMs.load() == last)
      s->cv.wait(lock, [&] { return lastKernelMs.load() != last; });
    s->parked.store(false);
  }
}

/// A fork's child has no sampler thread (and the parent's lock may be
/// held): a fresh sampler, started at the child's first kernel.
void loadSamplerAfterForkInChild() { loadSampler = new LoadSampler(); }

/// The last sample: at most ~50 ms old while kernels run; for the first
/// kernel after a second without one, the one from before it.
bool machineOversubscribed() {
  int64_t now = steadyMs();
  LoadSampler *s = loadSampler;
  if (lastKernelMs.load(std::memory_order_relaxed) != now)
    lastKernelMs.store(now);
  if (s->parked.load() || !s->started.load(std::memory_order_relaxed)) {
    bool inline_ = false;
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      if (!s->started.load(std::memory_order_relaxed) && now >= s->nextTry) {
        static bool forkHandler =
            pthread_atfork(nullptr, nullptr, loadSamplerAfterForkInChild) == 0;
        (void)forkHandler;
        try {
          std::thread(loadSamplerLoop, s).detach();
          s->started.store(true, std::memory_order_relaxed);
        } catch (...) {
          // No thread to be had (a process limit, memory): sampled here,
          // and tried again, at most every 50 ms.
          s->nextTry = now + kLoadSampleMs;
          inline_ = true;
        }
      }
    }
    if (inline_)
      crowdedNow.store(sampleOversubscribed(), std::memory_order_relaxed);
    else
      s->cv.notify_one();
  }
  return crowdedNow.load(std::memory_order_relaxed);
}

/// libomp's source location record (ident_t), as compiled kernels pass it.
struct OmpIdent {
  int32_t reserved1, flags, reserved2, reserved3;
  const char *psource;
};
OmpIdent ompLoc{0, 2 /* KMP_IDENT_KMPC */, 0, 0, ";cpnumeric;library;0;0;;"};

/// One library job on OpenMP's threads: its parts claimed as they come (a
/// thread that joins late finds them taken), an exception kept for the
/// caller.
struct OmpJob {
  int64_t n;
  void (*fn)(void *, int64_t);
  void *ctx;
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex errorMutex;
};

void ompParts(int32_t *, int32_t *, OmpJob *job) {
  for (int64_t t; (t = job->next.fetch_add(1)) < job->n;) {
    try {
      job->fn(job->ctx, t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job->errorMutex);
      if (!job->error)
        job->error = std::current_exception();
      job->next.store(job->n); // the rest is not run
    }
  }
}

/// The libomp entry points ompTeam calls, found once (all null without
/// libomp).
struct OmpEntries {
  void (*fork)(OmpIdent *, int32_t, void *, ...) = nullptr;
  void (*pushThreads)(OmpIdent *, int32_t, int32_t) = nullptr;
  int32_t (*threadNum)(OmpIdent *) = nullptr;
  bool ok = false;
  OmpEntries() {
    void *omp = openmpRuntime();
    if (!omp)
      return;
    fork = reinterpret_cast<decltype(fork)>(dlsym(omp, "__kmpc_fork_call"));
    pushThreads = reinterpret_cast<decltype(pushThreads)>(
        dlsym(omp, "__kmpc_push_num_threads"));
    threadNum = reinterpret_cast<decltype(threadNum)>(
        dlsym(omp, "__kmpc_global_thread_num"));
    ok = fork && pushThreads && threadNum;
  }
};
const OmpEntries &ompEntries() {
  static const OmpEntries entries;
  return entries;
}

/// cpnrt::ParallelBackend on libomp's threads (those of the running kernel's
/// parallel loops: awake between its loops, so a library call in the kernel
/// neither wakes a second pool nor competes with spinning OpenMP threads).
void ompTeam(int64_t n, void (*fn)(void *, int64_t), void *ctx) {
  const OmpEntries &omp = ompEntries();
  OmpJob job{n, fn, ctx};
  omp.pushThreads(&ompLoc, omp.threadNum(&ompLoc),
                  int32_t(std::min<int64_t>(n, std::max(1, kernelThreads()))));
  omp.fork(&ompLoc, 1, reinterpret_cast<void *>(&ompParts), &job);
  if (job.error)
    std::rethrow_exception(job.error);
}

} // namespace

void runKernel(const std::shared_ptr<Executable> &exe,
               std::vector<cpnrt::StoreRef> reads,
               std::vector<cpnrt::StoreRef> outArgs,
               std::vector<cpnrt::StoreRef> writes,
               std::shared_ptr<const FpSites> fp,
               std::vector<size_t> byteOffsets,
               std::vector<std::pair<size_t, size_t>> readRanges,
               std::vector<std::pair<size_t, size_t>> writeRanges,
               std::shared_ptr<std::vector<int32_t>> fpCarry, bool fpReport) {
  // The inputs it does not write in place: what a library call learns about
  // their elements (a symmetric matrix) holds for the whole run.
  std::vector<cpnrt::StoreRef> readOnly;
  for (const cpnrt::StoreRef &s : reads)
    if (!llvm::is_contained(writes, s) && !llvm::is_contained(readOnly, s))
      readOnly.push_back(s);
  auto task = std::make_shared<cpnrt::Task>();
  task->name = exe->name;
  task->reads = reads;
  task->readRanges = std::move(readRanges);
  task->writeRanges = std::move(writeRanges);
  task->writes = std::move(writes);
  task->fn =
      [exe, reads, outArgs, fp, readOnly = std::move(readOnly),
       byteOffsets = std::move(byteOffsets), fpCarry, fpReport] {
        cpnrt::ReadOnlyInputs readOnlyScope(readOnly);
        std::vector<void *> ptrs;
        ptrs.reserve(reads.size() + outArgs.size() + 1);
        for (auto &s : reads)
          ptrs.push_back(s->data());
        for (auto &s : outArgs)
          ptrs.push_back(s->data());
        // One rank's program: its rows of the stores.
        for (size_t i = 0; i < byteOffsets.size() && i < ptrs.size(); ++i)
          ptrs[i] = static_cast<char *>(ptrs[i]) + byteOffsets[i];
        // The status words the kernel ORs its checked ops' errors into.
        std::vector<int32_t> status;
        if (fp) {
          status.assign((fp->names.size() + ::cpn::kFpSitesPerWord - 1) /
                            ::cpn::kFpSitesPerWord,
                        0);
          ptrs.push_back(status.data());
        }
        std::vector<void *> args;
        for (void *&p : ptrs)
          args.push_back(&p);
        // libomp's idle threads spin 200 ms after each parallel region (what
        // back-to-back loop kernels want); around BLAS and library calls,
        // which run on threads of their own, they would take a core from
        // them: in a kernel with such calls they sleep at once. So they do
        // while a background compile runs: on 2 cores a spinning thread
        // beside the compile made the windows run op by op meanwhile 3-4x
        // slower (a periodic stencil's second run: 300 -> 140 ms). And so
        // they do while other processes want the cores.
        static auto *setBlocktime = reinterpret_cast<void (*)(int)>(
            openmpRuntime() ? dlsym(openmpRuntime(), "kmp_set_blocktime")
                            : nullptr);
        static auto *getBlocktime = reinterpret_cast<int (*)()>(
            openmpRuntime() ? dlsym(openmpRuntime(), "kmp_get_blocktime")
                            : nullptr);
        int blocktime = -1;
        bool crowded = machineOversubscribed();
        if ((exe->callsLibrary || backgroundCompileRunning() || crowded) &&
            setBlocktime && getBlocktime) {
          blocktime = getBlocktime();
          setBlocktime(0);
        }
        // On a machine whose cores other processes want, a team's threads
        // wait for a time slice at every region: the loops run on this
        // thread alone.
        static auto *setThreads = reinterpret_cast<void (*)(int)>(
            openmpRuntime() ? dlsym(openmpRuntime(), "omp_set_num_threads")
                            : nullptr);
        // Not under several MPI ranks: replicated ranks keep one thread
        // count, whatever each node's load.
        bool alone = crowded && setThreads && kernelThreads() > 1 &&
                     cpnrt::comm::size() == 1;
        if (alone)
          setThreads(1);
        // The runtime's algorithms in a kernel of loops run their parts on
        // the loops' OpenMP threads (callsAlgorithms; one pool, awake).
        bool team = exe->callsAlgorithms && ompEntries().ok;
        cpnrt::ParallelBackend before =
            team ? cpnrt::setThreadParallelBackend(&ompTeam) : nullptr;
        struct RestoreBackend {
          bool team;
          cpnrt::ParallelBackend before;
          ~RestoreBackend() {
            if (team)
              cpnrt::setThreadParallelBackend(before);
          }
        } restoreBackend{team, before};
        exe->fn(args.data());
        if (alone)
          setThreads(kernelThreads());
        if (blocktime >= 0)
          setBlocktime(blocktime);
        // A library call (LAPACK, a gather) that failed left its error for
        // this thread; its kind (LinAlg, Index) travels with it to the wait.
        // Taken first, so that it never reaches a later kernel of this
        // thread.
        cpnrt::Failure error = cpnrt::takeKernelError();
        if (exe->checks && !exe->checks->error.empty())
          throw std::runtime_error(exe->checks->error);
        if (fp && fpCarry) {
          fpCarry->resize(status.size(), 0);
          for (size_t w = 0; w < status.size(); ++w)
            status[w] = (*fpCarry)[w] |= status[w];
        }
        if (fp && fpReport &&
            llvm::any_of(status, [](int32_t w) { return w != 0; }))
          reportFpErrors(*fp, status);
        if (error)
          throw cpnrt::Error(error);
      };
  cpnrt::TaskGraph::global().submitTask(std::move(task),
                                        /*mayDefer=*/!exe->callsRuntime);
  // At most a few windows ahead of execution.
  cpnrt::TaskGraph::global().waitInFlightAtMost(kMaxWindowsAhead);
}

} // namespace cpn::detail
