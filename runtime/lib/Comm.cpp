//===- Comm.cpp - the ranks of an MPI launch ------------------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). See cpnrt/Comm.h.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Comm.h"
#include "cpnrt/Profile.h"

// The C API only: OpenMPI's and MPICH's mpi.h bring their deprecated C++
// bindings into C++ code, which would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

#include <unistd.h>

namespace {
struct State {
  bool started = false;  // start() found a launcher and MPI running
  bool ours = false;     // ... and called MPI_Init_thread itself
  bool finished = false; // finish() ran (or MPI is not ours to end)
  int rank = 0, size = 1, localRank = 0, localSize = 1;
  int threadLevel = -1;
  pid_t pid = 0;                 // the process that started MPI
  MPI_Comm world = MPI_COMM_NULL; // cpnumeric's collectives: never matched
                                  // with the program's own (mpi4py)
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm exit = MPI_COMM_NULL; // the exit handshake
  MPI_Comm messages =
      MPI_COMM_NULL; // the task graph's messages and collectives
};

State &state() {
  static State s;
  return s;
}

std::mutex &startMutex() {
  static std::mutex m;
  return m;
}

bool envSet(const char *name) {
  const char *v = std::getenv(name);
  return v && *v;
}

bool finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done;
}

// Set by start() in the environment: a process started by a rank
// (multiprocessing, subprocess) inherits the launcher's variables but is
// not a rank.
constexpr const char *kRankPid = "CPN_MPI_RANK_PID";
} // namespace

bool cpnrt::comm::launchedByMpi() {
  if (const char *pid = std::getenv(kRankPid))
    if (*pid && std::atol(pid) != static_cast<long>(getpid()))
      return false;
  return envSet("OMPI_COMM_WORLD_SIZE") || envSet("PMIX_RANK") ||
         envSet("PMI_SIZE") || envSet("PMI_RANK");
}

bool cpnrt::comm::start() {
  std::lock_guard<std::mutex> lock(startMutex());
  State &s = state();
  if (s.started || !launchedByMpi())
    return active();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized && finalized())
    return false; // the program ended MPI already
  if (initialized) {
    // The program (mpi4py) started MPI: cpnumeric uses it and leaves
    // MPI_Finalize, and so the exit handshake, to it.
    MPI_Query_thread(&s.threadLevel);
  } else {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &s.threadLevel);
    s.ours = true;
  }
  s.started = true;
  s.finished = !s.ours;
  s.pid = getpid();
  setenv(kRankPid, std::to_string(static_cast<long>(s.pid)).c_str(), 1);
  MPI_Comm_dup(MPI_COMM_WORLD, &s.world);
  MPI_Comm_rank(s.world, &s.rank);
  MPI_Comm_size(s.world, &s.size);
  MPI_Comm_split_type(s.world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &s.node);
  MPI_Comm_rank(s.node, &s.localRank);
  MPI_Comm_size(s.node, &s.localSize);
  MPI_Comm_dup(s.world, &s.exit);
  MPI_Comm_dup(s.world, &s.messages);
  return true;
}

bool cpnrt::comm::active() {
  const State &s = state();
  // Not in a forked child of a rank (its copy of MPI is not a rank's).
  return s.started && s.pid == getpid() && !finalized();
}

int cpnrt::comm::rank() { return active() ? state().rank : 0; }
int cpnrt::comm::size() { return active() ? state().size : 1; }
int cpnrt::comm::localRank() { return active() ? state().localRank : 0; }
int cpnrt::comm::localSize() { return active() ? state().localSize : 1; }
int cpnrt::comm::threadLevel() { return active() ? state().threadLevel : -1; }

std::string cpnrt::comm::libraryVersion() {
  if (!active())
    return "";
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string v(text, length);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\0'))
    v.pop_back();
  return v;
}

void cpnrt::comm::barrier() {
  if (active())
    MPI_Barrier(state().world);
}

void cpnrt::comm::broadcast(void *data, size_t bytes, int root) {
  if (!active())
    return;
  auto *p = static_cast<char *>(data);
  // MPI counts are int: large buffers go in pieces.
  while (bytes) {
    int n = static_cast<int>(bytes < size_t(INT_MAX) ? bytes : size_t(INT_MAX));
    MPI_Bcast(p, n, MPI_BYTE, root, state().world);
    p += n;
    bytes -= n;
  }
}

void cpnrt::comm::minMax(int64_t value, int64_t &min, int64_t &max) {
  if (!active()) {
    min = max = value;
    return;
  }
  // One reduction: the maximum of (value, ~value) is (max, ~min).
  int64_t in[2] = {value, ~value};
  int64_t out[2];
  MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, state().world);
  max = out[0];
  min = ~out[1];
}

void cpnrt::comm::abortAll(const std::string &message, int code) {
  if (!message.empty()) {
    if (active())
      std::fprintf(stderr, "cpnumeric: rank %d of %d: %s\n", rank(), size(),
                   message.c_str());
    else
      std::fprintf(stderr, "cpnumeric: %s\n", message.c_str());
  }
  std::fflush(stderr);
  std::fflush(stdout);
  if (active())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void cpnrt::comm::finish(double waitSeconds) {
  std::unique_lock<std::mutex> lock(startMutex());
  State &s = state();
  if (!s.started || s.finished || s.pid != getpid())
    return;
  if (finalized()) { // the program ended MPI itself
    s.finished = true;
    return;
  }
  if (s.size > 1) {
    // MPI_Finalize waits for every rank: a rank that ends while the others
    // still wait in a collective for it would hang them all. Each rank
    // waits for the others here instead, for `waitSeconds` at most.
    MPI_Request request;
    MPI_Ibarrier(s.exit, &request);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(waitSeconds);
    int done = 0;
    for (;;) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        break;
      if (waitSeconds > 0 && std::chrono::steady_clock::now() > deadline) {
        lock.unlock();
        abortAll("this rank reached the end of the program and the others "
                 "did not within " +
                     std::to_string(static_cast<long>(waitSeconds)) +
                     " s (CPN_EXIT_WAIT): ending every rank",
                 1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  s.finished = true;
  MPI_Comm_free(&s.exit);
  MPI_Comm_free(&s.messages);
  MPI_Comm_free(&s.node);
  MPI_Comm_free(&s.world);
  MPI_Finalize();
}

// -- Exchange -------------------------------------------------------------

struct cpnrt::comm::Exchange::Requests {
  std::vector<MPI_Request> all;
};

namespace {
/// Exchanges made so far in this process (the same count on every rank).
std::atomic<int64_t> exchangesMade{0};
/// How many exchanges' tags MPI's tag range holds side by side (each gets
/// 2^15 tags); ids wrap around beyond.
int64_t exchangeTagRanges() {
  int *ub = nullptr, found = 0;
  MPI_Comm_get_attr(state().messages, MPI_TAG_UB, &ub, &found);
  int64_t top = found && ub ? *ub : 32767; // the standard's least upper bound
  return std::max<int64_t>(1, (top + 1) >> 15);
}
} // namespace

cpnrt::comm::Exchange::Exchange(bool persistent)
    : requests_(std::make_unique<Requests>()), persistent_(persistent),
      id_(exchangesMade++),
      token_(std::make_shared<Store>(DType::u8, std::vector<int64_t>{1})) {}

cpnrt::comm::Exchange::~Exchange() {
  if (finalized())
    return; // MPI is gone, and its requests with it
  if (started_)
    wait();
  for (MPI_Request &r : requests_->all)
    if (r != MPI_REQUEST_NULL)
      MPI_Request_free(&r);
}

namespace {
void checkPart(const cpnrt::StoreRef &store, size_t offset, size_t bytes,
               int peer, int tag) {
  if (!store || offset + bytes > store->nbytes())
    throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                       "Exchange: a message outside its store");
  if (peer < 0 || peer >= cpnrt::comm::size())
    throw cpnrt::Error(cpnrt::ErrorKind::Runtime, "Exchange: rank " +
                                                      std::to_string(peer) +
                                                      " does not exist");
  if (tag < 0 || tag >= (1 << 15) || bytes > size_t(INT_MAX))
    throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                       "Exchange: a tag outside [0, 2^15) or a message of "
                       "2 GB or more");
}
} // namespace

void cpnrt::comm::Exchange::add(bool isSend, StoreRef store, size_t offset,
                                size_t bytes, int peer, int tag) {
  checkPart(store, offset, bytes, peer, tag);
  if (!requests_->all.empty() || started_)
    throw Error(ErrorKind::Runtime,
                "Exchange: messages are added before the first start");
  parts_.push_back({isSend, std::move(store), offset, bytes, peer, tag});
}

void cpnrt::comm::Exchange::send(StoreRef store, size_t offset, size_t bytes,
                                 int peer, int tag) {
  add(true, std::move(store), offset, bytes, peer, tag);
}

void cpnrt::comm::Exchange::receive(StoreRef store, size_t offset, size_t bytes,
                                    int peer, int tag) {
  add(false, std::move(store), offset, bytes, peer, tag);
}

void cpnrt::comm::Exchange::start() {
  if (started_)
    throw Error(ErrorKind::Runtime,
                "Exchange: started again before its round completed");
  if (!persistent_ && rounds_++)
    throw Error(ErrorKind::Runtime,
                "Exchange: a one-round exchange started a second time");
  if (state().started && (state().pid != getpid() || finalized()))
    throw Error(ErrorKind::Runtime,
                "Exchange: MPI has ended in this process (or it is a forked "
                "child of a rank): no messages can be sent");
  if (!active() || size() == 1) {
    // One rank: each receive copies the send of its tag (to rank 0), with
    // no MPI call (MPI may run below MPI_THREAD_MULTIPLE).
    for (const Part &r : parts_) {
      if (r.isSend)
        continue;
      const Part *match = nullptr;
      for (const Part &s : parts_)
        if (s.isSend && s.tag == r.tag)
          match = &s;
      if (!match || match->bytes != r.bytes)
        throw Error(ErrorKind::Runtime,
                    "Exchange: a receive with no send of its tag and size");
      std::memcpy(static_cast<char *>(r.store->data()) + r.offset,
                  static_cast<const char *>(match->store->data()) +
                      match->offset,
                  r.bytes);
    }
    return;
  }
  std::vector<MPI_Request> &all = requests_->all;
  if (all.empty() && !parts_.empty()) {
    // Bound once: the stores' buffers stay where they are. Every buffer
    // first (data() may throw bad_alloc), then the requests.
    std::vector<char *> at;
    for (Part &p : parts_)
      at.push_back(static_cast<char *>(p.store->data()) + p.offset);
    static const int64_t ranges = exchangeTagRanges();
    int base = static_cast<int>((id_ % ranges) << 15);
    std::vector<MPI_Request> bound(parts_.size(), MPI_REQUEST_NULL);
    for (size_t i = 0; i < parts_.size(); ++i) {
      Part &p = parts_[i];
      int n = static_cast<int>(p.bytes);
      if (!persistent_ && p.isSend)
        MPI_Isend(at[i], n, MPI_BYTE, p.peer, base + p.tag, state().messages,
                  &bound[i]);
      else if (!persistent_)
        MPI_Irecv(at[i], n, MPI_BYTE, p.peer, base + p.tag, state().messages,
                  &bound[i]);
      else if (p.isSend)
        MPI_Send_init(at[i], n, MPI_BYTE, p.peer, base + p.tag,
                      state().messages, &bound[i]);
      else
        MPI_Recv_init(at[i], n, MPI_BYTE, p.peer, base + p.tag,
                      state().messages, &bound[i]);
    }
    all.swap(bound);
    if (!persistent_) { // posted: nothing to start
      started_ = true;
      return;
    }
  }
  if (!all.empty())
    MPI_Startall(static_cast<int>(all.size()), all.data());
  started_ = true;
}

bool cpnrt::comm::Exchange::test() {
  if (!started_)
    return true;
  int done = 0;
  MPI_Testall(static_cast<int>(requests_->all.size()), requests_->all.data(),
              &done, MPI_STATUSES_IGNORE);
  if (done)
    started_ = false;
  return done;
}

void cpnrt::comm::Exchange::wait() {
  if (!started_)
    return;
  MPI_Waitall(static_cast<int>(requests_->all.size()), requests_->all.data(),
              MPI_STATUSES_IGNORE);
  started_ = false;
}

size_t cpnrt::comm::Exchange::bytes(bool isSend) const {
  size_t n = 0;
  for (const Part &p : parts_)
    n += p.isSend == isSend ? p.bytes : 0;
  return n;
}

size_t cpnrt::comm::Exchange::receives() const {
  return size_t(std::count_if(parts_.begin(), parts_.end(),
                              [](const Part &p) { return !p.isSend; }));
}

void cpnrt::comm::Exchange::addStores(bool isSend,
                                      std::vector<StoreRef> &v) const {
  for (const Part &p : parts_)
    if (p.isSend == isSend && std::find(v.begin(), v.end(), p.store) == v.end())
      v.push_back(p.store);
}

std::vector<cpnrt::StoreRef> cpnrt::comm::Exchange::reads() const {
  std::vector<StoreRef> v;
  addStores(true, v);
  return v;
}

std::vector<cpnrt::StoreRef> cpnrt::comm::Exchange::writes() const {
  std::vector<StoreRef> v{token_};
  addStores(false, v);
  return v;
}

void cpnrt::comm::Exchange::ranges(
    std::vector<StoreRef> &reads,
    std::vector<std::pair<size_t, size_t>> &readRanges,
    std::vector<StoreRef> &writes,
    std::vector<std::pair<size_t, size_t>> &writeRanges) const {
  writes.push_back(token_);
  writeRanges.push_back({0, SIZE_MAX});
  for (const Part &p : parts_) {
    (p.isSend ? reads : writes).push_back(p.store);
    (p.isSend ? readRanges : writeRanges)
        .push_back({p.offset, p.offset + p.bytes});
  }
}

namespace {
/// A message round or collective that will not start on this rank (a task
/// it depends on failed) while the other ranks start theirs: they would
/// wait for it forever, so every rank ends here, with the error (an error
/// on any rank ends all ranks, docs/mpi.md).
void abortIfOthersWait(const cpnrt::Failure &failure) {
  if (cpnrt::comm::active() && cpnrt::comm::size() > 1)
    cpnrt::comm::abortAll(failure.message, 1);
}
} // namespace

namespace {
std::atomic<uint64_t> receivedBytes{0}, receivedMessages{0}, collectives{0};

/// Counts a submitted round or collective (under several ranks only).
void countTraffic(uint64_t bytes, uint64_t messages, uint64_t collective) {
  if (!cpnrt::comm::active() || cpnrt::comm::size() <= 1)
    return;
  receivedBytes.fetch_add(bytes, std::memory_order_relaxed);
  receivedMessages.fetch_add(messages, std::memory_order_relaxed);
  collectives.fetch_add(collective, std::memory_order_relaxed);
}
} // namespace

cpnrt::comm::Traffic cpnrt::comm::traffic() {
  return {receivedBytes.load(std::memory_order_relaxed),
          receivedMessages.load(std::memory_order_relaxed),
          collectives.load(std::memory_order_relaxed)};
}

void cpnrt::comm::resetTraffic() {
  receivedBytes = 0;
  receivedMessages = 0;
  collectives = 0;
}

cpnrt::TaskRef cpnrt::comm::submitExchange(TaskGraph &graph,
                                           std::shared_ptr<Exchange> exchange,
                                           std::string name, bool inOrder) {
  if (active() && size() > 1 && threadLevel() < MPI_THREAD_MULTIPLE)
    throw Error(ErrorKind::Runtime,
                "Exchange: MPI runs without MPI_THREAD_MULTIPLE (the program "
                "started MPI itself at a lower level?): messages cannot be "
                "tasks");
  // Each message's bytes: a block's border rows out are read, the rows
  // beside it in are written, and a kernel that reads the block alone (a
  // stencil's interior) runs while the round travels.
  std::vector<StoreRef> reads, writes;
  std::vector<std::pair<size_t, size_t>> readRanges, writeRanges;
  exchange->ranges(reads, readRanges, writes, writeRanges);
  // The profile shows each round as one event ("message", from its start
  // to its last message's arrival, on the thread that saw it arrive) with
  // its bytes, besides the task's own event (the start).
  auto startUs = std::make_shared<double>(0.0);
  std::string label = name;
  countTraffic(exchange->bytesReceived(), exchange->receives(), 0);
  auto task = std::make_shared<Task>();
  task->name = std::move(name);
  task->reads = std::move(reads);
  task->writes = std::move(writes);
  task->readRanges = std::move(readRanges);
  task->writeRanges = std::move(writeRanges);
  task->onSkipped = abortIfOthersWait;
  task->fn = [exchange, startUs] {
    *startUs = Profiler::nowUs();
    exchange->start();
  };
  task->poll =
      [exchange, startUs, label] {
        if (!exchange->test())
          return false;
        Profiler &p = Profiler::global();
        if (p.enabled())
          p.complete(
              label, "message", *startUs,
              "{\"messages\": " + std::to_string(exchange->messages()) +
                  ", \"bytes_sent\": " + std::to_string(exchange->bytesSent()) +
                  ", \"bytes_received\": " +
                  std::to_string(exchange->bytesReceived()) + "}");
        return true;
      };
  return graph.submitTask(std::move(task), /*mayDefer=*/true, inOrder);
}

// -- collectives as tasks ---------------------------------------------------

namespace {
void requireThreads() {
  using namespace cpnrt;
  if (comm::active() && comm::size() > 1 &&
      comm::threadLevel() < MPI_THREAD_MULTIPLE)
    throw Error(ErrorKind::Runtime,
                "MPI runs without MPI_THREAD_MULTIPLE (the program started "
                "MPI itself at a lower level?): collectives cannot be tasks");
}

/// An MPI request shared by a collective task's start and its polls.
struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
};

/// Submits a task that starts a collective with `start` (which sets the
/// request) and polls it, or runs `alone` when MPI is not active.
cpnrt::TaskRef submitCollective(cpnrt::TaskGraph &graph, std::string name,
                                std::vector<cpnrt::StoreRef> reads,
                                std::vector<cpnrt::StoreRef> writes,
                                std::function<void(MPI_Request *)> start,
                                std::function<void()> alone,
                                size_t receivedBytes) {
  using namespace cpnrt;
  requireThreads();
  countTraffic(receivedBytes, 0, 1);
  auto task = std::make_shared<Task>();
  task->name = std::move(name);
  task->reads = std::move(reads);
  task->writes = std::move(writes);
  if (!comm::active() || comm::size() == 1) { // no MPI call on one rank
    task->fn = std::move(alone);
    return graph.submitTask(std::move(task), true, /*inOrder=*/true);
  }
  auto pending = std::make_shared<Pending>();
  task->onSkipped = abortIfOthersWait;
  task->fn = [pending, start = std::move(start)] { start(&pending->request); };
  task->poll = [pending] {
    int done = 0;
    MPI_Test(&pending->request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  };
  // In submission order (the same on every rank), whatever else they
  // depend on: MPI matches collectives by their order.
  return graph.submitTask(std::move(task), true, /*inOrder=*/true);
}

MPI_Datatype mpiType(cpnrt::DType t) {
  using cpnrt::DType;
  switch (t) {
  case DType::b1:
    return MPI_C_BOOL;
  case DType::i8:
    return MPI_INT8_T;
  case DType::i16:
    return MPI_INT16_T;
  case DType::i32:
    return MPI_INT32_T;
  case DType::i64:
    return MPI_INT64_T;
  case DType::u8:
    return MPI_UINT8_T;
  case DType::u16:
    return MPI_UINT16_T;
  case DType::u32:
    return MPI_UINT32_T;
  case DType::u64:
    return MPI_UINT64_T;
  case DType::f32:
    return MPI_FLOAT;
  case DType::f64:
    return MPI_DOUBLE;
  case DType::c64:
    return MPI_C_FLOAT_COMPLEX;
  case DType::c128:
    return MPI_C_DOUBLE_COMPLEX;
  case DType::f16:
    break;
  }
  throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                     "all_reduce: float16 has no MPI type (reduce in float32)");
}

/// NumPy's maximum and minimum of floats: a NaN on either side is the
/// result (MPI_MAX and MPI_MIN compare, and a NaN compares false: one rank's
/// NaN partial would be lost). Equal zeros give +0.0 for max and -0.0 for
/// min whatever order MPI combines the ranks in, so every rank holds the
/// same bits (1 / x.max() takes one branch everywhere).
template <typename T, bool Max>
void nanPropagating(void *in, void *inout, int *len, MPI_Datatype *) {
  const T *a = static_cast<const T *>(in);
  T *b = static_cast<T *>(inout);
  for (int i = 0; i < *len; ++i) {
    if (std::isnan(b[i]))
      continue;
    if (std::isnan(a[i]) || (Max ? a[i] > b[i] : a[i] < b[i]) ||
        (a[i] == b[i] && std::signbit(a[i]) != std::signbit(b[i]) &&
         std::signbit(a[i]) != Max))
      b[i] = a[i];
  }
}

/// The MPI_Op of a NaN-propagating float min or max, made once MPI runs
/// (MPI_Op_create needs it); MPI's own op before (one process copies).
MPI_Op floatMinMax(cpnrt::DType t, bool max) {
  if (!cpnrt::comm::active())
    return max ? MPI_MAX : MPI_MIN;
  static std::once_flag once;
  static MPI_Op ops[2][2]; // [double][max]
  std::call_once(once, [] {
    MPI_Op_create(&nanPropagating<float, false>, 1, &ops[0][0]);
    MPI_Op_create(&nanPropagating<float, true>, 1, &ops[0][1]);
    MPI_Op_create(&nanPropagating<double, false>, 1, &ops[1][0]);
    MPI_Op_create(&nanPropagating<double, true>, 1, &ops[1][1]);
  });
  return ops[t == cpnrt::DType::f64][max];
}

/// A sum of 8- or 16-bit integers that wraps, as NumPy's does. Open MPI
/// 4.1's `op/avx` component (Debian 12's 4.1.4) adds these types with
/// saturating vector instructions: two ranks' uint8 partials 200 + 200 gave
/// 255, not 144, for every element in a run of 16 or more (the scalar tail
/// wrapped), so `x.sum(axis=0, dtype=np.uint8)` over split rows came out
/// clamped. Wider integers and products wrap there.
template <typename T>
void wrappingSum(void *in, void *inout, int *len, MPI_Datatype *) {
  const T *a = static_cast<const T *>(in);
  T *b = static_cast<T *>(inout);
  using U = std::make_unsigned_t<T>;
  for (int i = 0; i < *len; ++i)
    b[i] = static_cast<T>(static_cast<U>(U(a[i]) + U(b[i])));
}

/// The MPI_Op of wrappingSum for `t` (int8, uint8, int16, uint16), made
/// once MPI runs; MPI_SUM before (one process copies).
MPI_Op smallIntSum(cpnrt::DType t) {
  if (!cpnrt::comm::active())
    return MPI_SUM;
  static std::once_flag once;
  static MPI_Op ops[4]; // i8, u8, i16, u16
  std::call_once(once, [] {
    MPI_Op_create(&wrappingSum<int8_t>, 1, &ops[0]);
    MPI_Op_create(&wrappingSum<uint8_t>, 1, &ops[1]);
    MPI_Op_create(&wrappingSum<int16_t>, 1, &ops[2]);
    MPI_Op_create(&wrappingSum<uint16_t>, 1, &ops[3]);
  });
  using cpnrt::DType;
  return ops[t == DType::i8 ? 0 : t == DType::u8 ? 1 : t == DType::i16 ? 2 : 3];
}

MPI_Op mpiOp(cpnrt::comm::ReduceOp op, cpnrt::DType t) {
  using cpnrt::DType;
  using cpnrt::comm::ReduceOp;
  bool logical = op == ReduceOp::LogicalAnd || op == ReduceOp::LogicalOr;
  if (t == DType::b1) {
    // NumPy's bool arithmetic: + and maximum are or, * and minimum and.
    if (op == ReduceOp::Sum || op == ReduceOp::Max)
      op = ReduceOp::LogicalOr;
    else if (op == ReduceOp::Prod || op == ReduceOp::Min)
      op = ReduceOp::LogicalAnd;
  } else if (logical || ((t == DType::c64 || t == DType::c128) &&
                         (op == ReduceOp::Min || op == ReduceOp::Max))) {
    throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                       std::string("all_reduce: no such reduction of ") +
                           cpnrt::dtypeName(t));
  }
  if ((t == DType::f32 || t == DType::f64) &&
      (op == ReduceOp::Min || op == ReduceOp::Max))
    return floatMinMax(t, op == ReduceOp::Max);
  if (op == ReduceOp::Sum &&
      (t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16))
    return smallIntSum(t);
  switch (op) {
  case ReduceOp::Sum:
    return MPI_SUM;
  case ReduceOp::Prod:
    return MPI_PROD;
  case ReduceOp::Min:
    return MPI_MIN;
  case ReduceOp::Max:
    return MPI_MAX;
  case ReduceOp::LogicalAnd:
    return MPI_LAND;
  case ReduceOp::LogicalOr:
    return MPI_LOR;
  }
  return MPI_SUM;
}

int checkedCount(size_t n, const char *what) {
  if (n > size_t(INT_MAX))
    throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                       std::string(what) + ": 2^31 elements or more at once");
  return static_cast<int>(n);
}
} // namespace

cpnrt::TaskRef cpnrt::comm::submitAllReduce(TaskGraph &graph, StoreRef in,
                                            StoreRef out, ReduceOp op,
                                            std::string name) {
  if (!in || !out || in->dtype() != out->dtype() || in->numel() != out->numel())
    throw Error(ErrorKind::Runtime,
                "all_reduce: the input and output differ in dtype or size");
  // Checked on one process too (the handles exist before MPI starts).
  MPI_Datatype type = mpiType(in->dtype());
  MPI_Op mop = mpiOp(op, in->dtype());
  int count = checkedCount(size_t(in->numel()), "all_reduce");
  std::vector<StoreRef> reads;
  if (in != out)
    reads.push_back(in);
  return submitCollective(
      graph, std::move(name), std::move(reads), {out},
      [in, out, count, type, mop](MPI_Request *r) {
        const void *send = in == out ? MPI_IN_PLACE : in->data();
        MPI_Iallreduce(send, out->data(), count, type, mop, state().messages,
                       r);
      },
      [in, out] {
        if (in != out)
          std::memcpy(out->data(), in->data(), in->nbytes());
      },
      out->nbytes());
}

namespace {
/// MPI's int counts and displacements of blocks of `bytes` in rank order;
/// false if they do not fit a store of `capacity` bytes.
bool blocksOf(const std::vector<size_t> &bytes, size_t capacity,
              std::vector<int> &counts, std::vector<int> &displs,
              const char *what) {
  size_t at = 0;
  for (size_t b : bytes) {
    counts.push_back(checkedCount(b, what));
    displs.push_back(checkedCount(at, what));
    at += b;
  }
  return at <= capacity;
}
} // namespace

cpnrt::TaskRef cpnrt::comm::submitAllGather(TaskGraph &graph, StoreRef local,
                                            StoreRef full,
                                            std::vector<size_t> rankBytes,
                                            std::string name) {
  std::vector<int> counts, displs;
  bool inPlace = local == full;
  if (!local || !full || int(rankBytes.size()) != size() ||
      (!inPlace && local->nbytes() < rankBytes[rank()]) ||
      !blocksOf(rankBytes, full->nbytes(), counts, displs, "all_gather"))
    throw Error(ErrorKind::Runtime,
                "all_gather: one byte count per rank, the local store "
                "holding this rank's and the full store all of them");
  size_t received = 0;
  for (size_t q = 0; q < rankBytes.size(); ++q)
    received += int(q) == rank() ? 0 : rankBytes[q];
  auto c = std::make_shared<std::pair<std::vector<int>, std::vector<int>>>(
      std::move(counts), std::move(displs));
  return submitCollective(
      graph, std::move(name), {local}, {full},
      [local, full, c, inPlace](MPI_Request *r) {
        // In place: this rank's bytes are already at its displacement.
        MPI_Iallgatherv(inPlace ? MPI_IN_PLACE : local->data(),
                        c->first[rank()], MPI_BYTE, full->data(),
                        c->first.data(), c->second.data(), MPI_BYTE,
                        state().messages, r);
      },
      [local, full, c, inPlace] {
        if (!inPlace)
          std::memcpy(full->data(), local->data(), size_t(c->first[0]));
      },
      received);
}

namespace {
/// The messages that give each rank q rows [rows[2q], rows[2q + 1]) of the
/// split `store` (n rows): the rows of this rank's block others read, and
/// the rows of others' blocks this rank reads, as one round of plain
/// MPI_Isend/MPI_Irecv (see Exchange(bool)) with `tag`.
std::shared_ptr<cpnrt::comm::Exchange>
rowMessages(const cpnrt::StoreRef &store, int64_t n,
            const std::vector<int64_t> &rows, int tag) {
  int ranks = cpnrt::comm::size(), me = cpnrt::comm::rank();
  size_t row = store->nbytes() / size_t(n);
  auto ex = std::make_shared<cpnrt::comm::Exchange>(/*persistent=*/false);
  for (int q = 0; q < ranks; ++q) {
    if (q == me)
      continue;
    auto [s0, s1] = cpnrt::comm::rowsSent(rows.data(), n, me, q, ranks);
    if (s1 > s0)
      ex->send(store, size_t(s0) * row, size_t(s1 - s0) * row, q, tag);
    auto [r0, r1] = cpnrt::comm::rowsSent(rows.data(), n, q, me, ranks);
    if (r1 > r0)
      ex->receive(store, size_t(r0) * row, size_t(r1 - r0) * row, q, tag);
  }
  return ex;
}
} // namespace

void cpnrt::comm::gatherBlocks(TaskGraph &graph, const StoreRef &store) {
  if (!store || store->distribution() != Distribution::BlockRows)
    return;
  store->setDistribution(Distribution::Replicated);
  int64_t n = store->shape().empty() ? 0 : store->shape()[0];
  int ranks = size();
  if (ranks <= 1 || n == 0)
    return;
  std::string name = "gather " + std::to_string(store->nbytes()) + " bytes";
  // One in-place MPI_Iallgatherv of the blocks (the library picks its
  // algorithm: a ring or recursive doubling, where P - 1 messages from each
  // rank to every other cost P (P - 1) message latencies); its byte counts
  // are ints, so a store of 2 GiB or more goes as messages instead: each
  // rank's block to every other rank (an exchange in which every rank reads
  // all rows), in order with the collectives, as the gather it stands for.
  size_t row = store->nbytes() / size_t(n);
  if (store->nbytes() <= size_t(INT_MAX)) {
    std::vector<size_t> rankBytes;
    for (int q = 0; q < ranks; ++q)
      rankBytes.push_back(
          size_t(blockRow(n, q + 1, ranks) - blockRow(n, q, ranks)) * row);
    submitAllGather(graph, store, store, std::move(rankBytes), name);
    return;
  }
  std::vector<int64_t> all;
  for (int q = 0; q < ranks; ++q)
    all.insert(all.end(), {0, n});
  submitExchange(graph, rowMessages(store, n, all, 1), name,
                 /*inOrder=*/true);
}

void cpnrt::comm::exchangeRows(TaskGraph &graph, const StoreRef &store,
                               const std::vector<int64_t> &rows) {
  if (!store || store->distribution() != Distribution::BlockRows)
    return;
  int64_t n = store->shape().empty() ? 0 : store->shape()[0];
  int ranks = size();
  if (ranks <= 1 || n == 0)
    return;
  if (rows.size() != 2 * size_t(ranks))
    throw Error(ErrorKind::Runtime,
                "exchangeRows: one pair of rows per rank expected");
  // The same decision on every rank: every rank reads all rows (a
  // gather), or some rank reads a row it does not own (an exchange).
  bool all = true, foreign = false;
  for (int q = 0; q < ranks; ++q) {
    int64_t lo = rows[2 * q], hi = rows[2 * q + 1];
    all &= lo <= 0 && hi >= n;
    if (hi > lo)
      foreign |= lo < blockRow(n, q, ranks) || hi > blockRow(n, q + 1, ranks);
  }
  if (all)
    return gatherBlocks(graph, store);
  if (!foreign)
    return;
  submitExchange(graph, rowMessages(store, n, rows, 0), "halo rows");
}

cpnrt::TaskRef cpnrt::comm::submitAllToAll(TaskGraph &graph, StoreRef send,
                                           StoreRef recv,
                                           std::vector<size_t> sendBytes,
                                           std::vector<size_t> recvBytes,
                                           std::string name) {
  struct Blocks {
    std::vector<int> sendCounts, sendDispls, recvCounts, recvDispls;
  };
  auto b = std::make_shared<Blocks>();
  if (!send || !recv || send == recv || int(sendBytes.size()) != size() ||
      int(recvBytes.size()) != size() ||
      !blocksOf(sendBytes, send->nbytes(), b->sendCounts, b->sendDispls,
                "all_to_all") ||
      !blocksOf(recvBytes, recv->nbytes(), b->recvCounts, b->recvDispls,
                "all_to_all") ||
      sendBytes[rank()] != recvBytes[rank()])
    throw Error(ErrorKind::Runtime,
                "all_to_all: one byte count per rank for two stores that "
                "hold them, and this rank's block the same size both ways");
  size_t received = 0;
  for (size_t q = 0; q < recvBytes.size(); ++q)
    received += int(q) == rank() ? 0 : recvBytes[q];
  return submitCollective(
      graph, std::move(name), {send}, {recv},
      [send, recv, b](MPI_Request *r) {
        MPI_Ialltoallv(send->data(), b->sendCounts.data(), b->sendDispls.data(),
                       MPI_BYTE, recv->data(), b->recvCounts.data(),
                       b->recvDispls.data(), MPI_BYTE, state().messages, r);
      },
      [send, recv, b] {
        std::memcpy(recv->data(), send->data(), size_t(b->sendCounts[0]));
      },
      received);
}

cpnrt::TaskRef cpnrt::comm::submitBroadcast(TaskGraph &graph, StoreRef store,
                                            size_t offset, size_t bytes,
                                            int root, std::string name) {
  if (!store || offset + bytes > store->nbytes() || root < 0 || root >= size())
    throw Error(ErrorKind::Runtime,
                "broadcast: a byte range outside the store or no such root");
  int n = checkedCount(bytes, "broadcast");
  return submitCollective(
      graph, std::move(name), {}, {store},
      [store, offset, n, root](MPI_Request *r) {
        MPI_Ibcast(static_cast<char *>(store->data()) + offset, n, MPI_BYTE,
                   root, state().messages, r);
      },
      [] {}, rank() == root ? 0 : bytes);
}
