//===- CommTest.cpp - messages between ranks as tasks
//----------------------===//
//
// Part of cpnumeric. Run on 1 rank (a plain process) and under mpirun on 2
// and 3 (test/runtime/CMakeLists.txt): every rank runs every test.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Comm.h"
#include "cpnrt/Error.h"
#include "cpnrt/Profile.h"
#include "cpnrt/TaskGraph.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

using cpnrt::Distribution;
using cpnrt::DType;
using cpnrt::Store;
using cpnrt::StoreRef;
using cpnrt::TaskGraph;
namespace comm = cpnrt::comm;

namespace {

/// A block of a grid split by rows over the ranks (rank r holds 4 + r rows:
/// uneven blocks), with one halo row above and below: (rows + 2) x cols.
struct Block {
  int64_t rows, cols, first; // first: the global index of its first row
  StoreRef store;
  double *at(int64_t r) { // r = -1 and rows: the halo rows
    return static_cast<double *>(store->data()) + (r + 1) * cols;
  }
};

Block makeBlock(int64_t cols) {
  Block b;
  b.rows = 4 + comm::rank();
  b.cols = cols;
  b.first = 0;
  for (int r = 0; r < comm::rank(); ++r)
    b.first += 4 + r;
  b.store = std::make_shared<Store>(DType::f64,
                                    std::vector<int64_t>{b.rows + 2, cols});
  return b;
}

/// The halo exchange of a block, periodic over the ranks (rank 0's upper
/// neighbour is the last rank): its first row up, its last row down, the
/// neighbours' rows into its halo rows. Tag 1 travels up, 2 down.
std::shared_ptr<comm::Exchange> haloExchange(Block &b) {
  int p = comm::size(), r = comm::rank();
  int up = (r + p - 1) % p, down = (r + 1) % p;
  size_t row = b.cols * sizeof(double);
  auto ex = std::make_shared<comm::Exchange>();
  ex->send(b.store, 1 * row, row, up, 1);
  ex->send(b.store, b.rows * row, row, down, 2);
  ex->receive(b.store, 0, row, up, 2);
  ex->receive(b.store, (b.rows + 1) * row, row, down, 1);
  return ex;
}

double value(int64_t globalRow, int64_t col, int round) {
  return globalRow * 1000.0 + col + round * 1e6;
}

} // namespace

TEST(Exchange, HaloRowsOfABlockSplitGridEveryRound) {
  comm::start();
  int p = comm::size();
  int64_t total = 0;
  for (int r = 0; r < p; ++r)
    total += 4 + r;
  Block b = makeBlock(300);
  auto ex = haloExchange(b);
  EXPECT_EQ(ex->messages(), 4u);
  EXPECT_EQ(ex->bytesSent(), 2 * 300 * sizeof(double));
  EXPECT_EQ(ex->bytesReceived(), 2 * 300 * sizeof(double));
  TaskGraph graph(2);
  std::atomic<int> bad{0}, checked{0};
  for (int round = 0; round < 40; ++round) {
    // Each round: a task writes the block's rows, the exchange sends them,
    // a task reads the halo rows. Only the stores order them.
    graph.submit("fill",
                 [&b, round] {
                   for (int64_t i = 0; i < b.rows; ++i)
                     for (int64_t j = 0; j < b.cols; ++j)
                       b.at(i)[j] = value(b.first + i, j, round);
                 },
                 {}, {b.store});
    comm::submitExchange(graph, ex);
    graph.submit("check",
                 [&b, &bad, &checked, round, total] {
                   ++checked;
                   int64_t above = (b.first - 1 + total) % total;
                   int64_t below = (b.first + b.rows) % total;
                   for (int64_t j = 0; j < b.cols; ++j) {
                     bad += b.at(-1)[j] != value(above, j, round);
                     bad += b.at(b.rows)[j] != value(below, j, round);
                   }
                 },
                 {b.store}, {});
  }
  graph.waitAll();
  EXPECT_NO_THROW(graph.waitStore(*b.store));
  EXPECT_EQ(checked.load(), 40); // a failed round would skip its check
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(graph.polling(), 0u);
}

// Two exchanges with the same peers and tags, started in opposite orders on
// neighbouring ranks, still deliver each one's messages to its own
// receives (their tags carry the exchange).
TEST(Exchange, SameTagsOfTwoExchangesDoNotMix) {
  comm::start();
  if (comm::size() < 2)
    GTEST_SKIP() << "needs 2 ranks or more (mpirun)";
  int p = comm::size(), r = comm::rank();
  int peer = r ^ 1;
  auto out = std::make_shared<Store>(DType::f64, std::vector<int64_t>{2});
  auto in = std::make_shared<Store>(DType::f64, std::vector<int64_t>{2});
  auto *o = static_cast<double *>(out->data());
  o[0] = 10 + r;
  o[1] = 20 + r;
  // Every rank makes both (exchanges pair by the order they are made in).
  comm::Exchange first, second;
  if (peer >= p)
    GTEST_SKIP() << "the last rank of an odd count has no partner";
  first.send(out, 0, 8, peer, 7);
  first.receive(in, 0, 8, peer, 7);
  second.send(out, 8, 8, peer, 7);
  second.receive(in, 8, 8, peer, 7);
  if (r % 2) {
    second.start();
    first.start();
  } else {
    first.start();
    second.start();
  }
  first.wait();
  second.wait();
  auto *i = static_cast<double *>(in->data());
  EXPECT_EQ(i[0], 10 + peer);
  EXPECT_EQ(i[1], 20 + peer);
}

// A task that does not read what the exchange receives runs while the
// messages travel: rank 0's upper neighbour (the last rank) sends its row
// 1 s late; rank 0's interior task finishes long before, its border task
// starts after.
TEST(Exchange, TasksThatDoNotReadTheHaloRunWhileItTravels) {
  comm::start();
  if (comm::size() < 2)
    GTEST_SKIP() << "needs 2 ranks or more (mpirun)";
  Block b = makeBlock(64);
  auto ex = haloExchange(b);
  auto interior = std::make_shared<Store>(DType::f64, std::vector<int64_t>{8});
  TaskGraph graph(1);
  comm::barrier();
  if (comm::rank() == comm::size() - 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  auto start = std::chrono::steady_clock::now();
  cpnrt::TaskRef exchange = comm::submitExchange(graph, ex);
  std::chrono::steady_clock::time_point interiorDone;
  graph.submit("interior",
               [&] {
                 static_cast<double *>(interior->data())[0] = 1.0;
                 interiorDone = std::chrono::steady_clock::now();
               },
               {}, {interior});
  std::chrono::steady_clock::time_point borderStart;
  graph.submit("border",
               [&] { borderStart = std::chrono::steady_clock::now(); },
               {b.store}, {});
  graph.waitAll();
  EXPECT_TRUE(exchange->done());
  if (comm::rank() == 0) {
    using ms = std::chrono::milliseconds;
    EXPECT_LT(interiorDone, borderStart);
    EXPECT_LT(std::chrono::duration_cast<ms>(interiorDone - start).count(),
              500);
    EXPECT_GE(std::chrono::duration_cast<ms>(borderStart - start).count(), 500);
  }
}

TEST(Exchange, BadMessagesAreErrors) {
  comm::start();
  auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{4});
  comm::Exchange ex;
  EXPECT_THROW(ex.send(s, 0, 64, 0, 1), cpnrt::Error); // past the store
  EXPECT_THROW(ex.send(s, 0, 8, comm::size(), 1), cpnrt::Error);
  EXPECT_THROW(ex.send(s, 0, 8, 0, 1 << 15), cpnrt::Error);
  // One process: a receive with no send of its tag.
  if (!comm::active()) {
    ex.receive(s, 0, 8, 0, 3);
    EXPECT_THROW(ex.start(), cpnrt::Error);
  }
}

// A failed exchange (here: its start throws) fails the tasks that read
// what it receives, as a failed kernel does, and lets go of its stores (a
// failed task's poll held them: store -> task -> poll -> exchange -> store).
TEST(Exchange, AFailedRoundFailsItsReaders) {
  comm::start();
  if (comm::active())
    GTEST_SKIP() << "the failure is made with one process's matching rule";
  auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{4});
  auto ex = std::make_shared<comm::Exchange>();
  ex->receive(s, 0, 8, 0, 5); // no send of tag 5
  TaskGraph graph(1);
  comm::submitExchange(graph, ex);
  bool ran = false;
  graph.submit("reader", [&] { ran = true; }, {s}, {});
  graph.waitAll();
  EXPECT_FALSE(ran);
  EXPECT_THROW(graph.waitStore(*s), cpnrt::Error);
  std::weak_ptr<comm::Exchange> gone = ex;
  ex.reset();
  EXPECT_TRUE(gone.expired());
}

// Rounds of an exchange that only sends (rank 0 to rank 1, which only
// receives) run one after another even with nothing else between them: a
// round started during the previous one would fail ("started again").
TEST(Exchange, RoundsOfASendOnlyExchangeRunInOrder) {
  comm::start();
  if (comm::size() < 2)
    GTEST_SKIP() << "needs 2 ranks or more (mpirun)";
  int r = comm::rank();
  auto s = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  *static_cast<double *>(s->data()) = 42.0;
  auto ex = std::make_shared<comm::Exchange>(); // made on every rank
  if (r == 0)
    ex->send(s, 0, 8, 1, 1);
  if (r == 1)
    ex->receive(s, 0, 8, 0, 1);
  TaskGraph graph(2);
  std::vector<cpnrt::TaskRef> rounds;
  for (int round = 0; round < 20; ++round)
    rounds.push_back(comm::submitExchange(graph, ex));
  graph.waitAll();
  for (const cpnrt::TaskRef &t : rounds)
    EXPECT_EQ(t->error(), "");
  EXPECT_EQ(*static_cast<double *>(s->data()), 42.0);
}

// The profile has each round on the timeline: a "message" event from its
// start to its last arrival, with its bytes.
TEST(Exchange, RoundsAreMessagesInTheProfile) {
  comm::start();
  Block b = makeBlock(100);
  auto ex = haloExchange(b);
  cpnrt::Profiler &prof = cpnrt::Profiler::global();
  size_t first = prof.begin();
  TaskGraph graph(1);
  for (int round = 0; round < 3; ++round)
    comm::submitExchange(graph, ex, "halo");
  graph.waitAll();
  std::string path = ::testing::TempDir() + "comm-profile-rank" +
                     std::to_string(comm::rank()) + ".json";
  ASSERT_TRUE(prof.end(first, path));
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  std::string json = text.str();
  size_t messages = 0;
  for (size_t at = json.find("\"cat\": \"message\""); at != std::string::npos;
       at = json.find("\"cat\": \"message\"", at + 1))
    ++messages;
  EXPECT_EQ(messages, 3u);
  EXPECT_NE(json.find("\"bytes_received\": 1600"), std::string::npos);
  EXPECT_NE(json.find("cpnEpochUs"), std::string::npos);
  std::remove(path.c_str());
}

namespace {
template <typename T> StoreRef storeOf(DType t, std::vector<T> values) {
  auto s =
      std::make_shared<Store>(t, std::vector<int64_t>{int64_t(values.size())});
  std::copy(values.begin(), values.end(), static_cast<T *>(s->data()));
  return s;
}
template <typename T> std::vector<T> valuesOf(const StoreRef &s) {
  auto *p = static_cast<const T *>(s->data());
  return std::vector<T>(p, p + s->numel());
}
} // namespace

// All-reduces of each kind, submitted back to back (independent of each
// other: the collectives still start in one order on every rank), against
// the values computed here from every rank's inputs.
TEST(Collectives, AllReducesOfEveryKind) {
  comm::start();
  int p = comm::size(), r = comm::rank();
  TaskGraph graph(2);
  auto sumIn = storeOf<double>(DType::f64, {r + 1.0, 2.0 * r, -1.0 * r});
  auto sumOut = std::make_shared<Store>(DType::f64, std::vector<int64_t>{3});
  auto maxIn = storeOf<int64_t>(DType::i64, {r, -r, 7});
  auto maxOut = std::make_shared<Store>(DType::i64, std::vector<int64_t>{3});
  auto minInOut = storeOf<float>(DType::f32, {float(r), float(-r)});
  auto prodInOut = storeOf<int32_t>(DType::i32, {r + 1, 2});
  auto andIn = storeOf<bool>(DType::b1, {true, r == 0, r != 0});
  auto andOut = std::make_shared<Store>(DType::b1, std::vector<int64_t>{3});
  auto orIn = storeOf<bool>(DType::b1, {false, r == 0, r != 0});
  auto orOut = std::make_shared<Store>(DType::b1, std::vector<int64_t>{3});
  comm::submitAllReduce(graph, sumIn, sumOut, comm::ReduceOp::Sum);
  comm::submitAllReduce(graph, maxIn, maxOut, comm::ReduceOp::Max);
  comm::submitAllReduce(graph, minInOut, minInOut, comm::ReduceOp::Min);
  comm::submitAllReduce(graph, prodInOut, prodInOut, comm::ReduceOp::Prod);
  comm::submitAllReduce(graph, andIn, andOut, comm::ReduceOp::LogicalAnd);
  comm::submitAllReduce(graph, orIn, orOut, comm::ReduceOp::LogicalOr);
  graph.waitAll();
  EXPECT_NO_THROW(graph.waitStore(*orOut));
  double s0 = 0, s1 = 0;
  int32_t prod = 1;
  for (int q = 0; q < p; ++q) {
    s0 += q + 1.0;
    s1 += 2.0 * q;
    prod *= q + 1;
  }
  EXPECT_EQ(valuesOf<double>(sumOut), (std::vector<double>{s0, s1, -s1 / 2}));
  EXPECT_EQ(valuesOf<int64_t>(maxOut), (std::vector<int64_t>{p - 1, 0, 7}));
  EXPECT_EQ(valuesOf<float>(minInOut),
            (std::vector<float>{0.0f, float(-(p - 1))}));
  EXPECT_EQ(valuesOf<int32_t>(prodInOut),
            (std::vector<int32_t>{prod, int32_t(1) << p}));
  EXPECT_EQ(valuesOf<bool>(andOut), (std::vector<bool>{true, p == 1, false}));
  EXPECT_EQ(valuesOf<bool>(orOut), (std::vector<bool>{false, true, p > 1}));
}

// Where MPI's own ops are not NumPy's: a float max or min with a NaN on one
// rank is NaN (MPI_MAX compares, and drops it), and bools take arithmetic
// (sum and max are or, prod and min and).
TEST(Collectives, AllReducesAsNumPyReduces) {
  comm::start();
  int p = comm::size(), r = comm::rank();
  TaskGraph graph(2);
  double nan = std::numeric_limits<double>::quiet_NaN();
  auto maxInOut =
      storeOf<double>(DType::f64, {r == 0 ? nan : 1.0, r == p - 1 ? nan : 2.0,
                                   double(r), r == 0 ? -0.0 : 0.0});
  auto minZero = storeOf<double>(DType::f64, {r == 0 ? 0.0 : -0.0});
  auto minInOut = storeOf<float>(
      DType::f32,
      {r == p - 1 ? std::numeric_limits<float>::quiet_NaN() : float(r),
       float(-r)});
  auto sumInOut = storeOf<bool>(DType::b1, {false, r == p - 1});
  auto minBool = storeOf<bool>(DType::b1, {true, r == p - 1});
  comm::submitAllReduce(graph, maxInOut, maxInOut, comm::ReduceOp::Max);
  comm::submitAllReduce(graph, minZero, minZero, comm::ReduceOp::Min);
  comm::submitAllReduce(graph, minInOut, minInOut, comm::ReduceOp::Min);
  comm::submitAllReduce(graph, sumInOut, sumInOut, comm::ReduceOp::Sum);
  comm::submitAllReduce(graph, minBool, minBool, comm::ReduceOp::Min);
  graph.waitAll();
  std::vector<double> mx = valuesOf<double>(maxInOut);
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], double(p - 1));
  // Equal zeros: +0.0 for max and -0.0 for min on every rank, whatever
  // order MPI combined them in (one rank alone keeps its own).
  EXPECT_EQ(std::signbit(mx[3]), p == 1);
  EXPECT_EQ(std::signbit(valuesOf<double>(minZero)[0]), p > 1);
  std::vector<float> mn = valuesOf<float>(minInOut);
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_EQ(mn[1], float(-(p - 1)));
  EXPECT_EQ(valuesOf<bool>(sumInOut), (std::vector<bool>{false, true}));
  EXPECT_EQ(valuesOf<bool>(minBool), (std::vector<bool>{true, p == 1}));
}

// Blocks of rows of uneven sizes (rank r holds 4 + r rows of 3 int32),
// gathered whole on every rank; then each rank writes its own row 0 and a
// broadcast gives every rank the last rank's.
TEST(Collectives, AllGatherOfUnevenBlocksAndABroadcast) {
  comm::start();
  int p = comm::size(), r = comm::rank();
  std::vector<size_t> rankBytes;
  int64_t total = 0, first = 0;
  for (int q = 0; q < p; ++q) {
    rankBytes.push_back(size_t(4 + q) * 3 * sizeof(int32_t));
    if (q < r)
      first += 4 + q;
    total += 4 + q;
  }
  std::vector<int32_t> mine;
  for (int64_t i = 0; i < 4 + r; ++i)
    for (int j = 0; j < 3; ++j)
      mine.push_back(int32_t((first + i) * 10 + j));
  auto local = storeOf<int32_t>(DType::i32, mine);
  auto full =
      std::make_shared<Store>(DType::i32, std::vector<int64_t>{total * 3});
  TaskGraph graph(1);
  comm::submitAllGather(graph, local, full, rankBytes);
  std::vector<int32_t> gathered;
  graph.submit("read", [&] { gathered = valuesOf<int32_t>(full); }, {full}, {});
  // Each rank writes its own row 0; the last rank's goes to every rank.
  graph.submit("mark",
               [&] {
                 for (int j = 0; j < 3; ++j)
                   static_cast<int32_t *>(full->data())[j] = r * 1000 + j;
               },
               {}, {full});
  comm::submitBroadcast(graph, full, 0, 3 * sizeof(int32_t), p - 1);
  graph.waitAll();
  ASSERT_EQ(gathered.size(), size_t(total * 3));
  for (int64_t i = 0; i < total; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(gathered[i * 3 + j], int32_t(i * 10 + j));
  auto after = valuesOf<int32_t>(full);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(after[j], (p - 1) * 1000 + j);
  EXPECT_EQ(after[3], 10); // the rest as gathered
  EXPECT_EQ(after[total * 3 - 1], int32_t((total - 1) * 10 + 2));
}

// A store split by rows (each rank's block of 7 rows of 2 doubles current,
// the other rows garbage) gathered in place: every rank then holds every
// row, and the store is replicated; a second gather moves nothing.
TEST(Collectives, GatherBlocksInPlace) {
  comm::start();
  int p = comm::size(), r = comm::rank();
  const int64_t n = 7;
  auto store = std::make_shared<Store>(DType::f64, std::vector<int64_t>{n, 2});
  auto *d = static_cast<double *>(store->data());
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 2; ++j)
      d[i * 2 + j] =
          i >= comm::blockRow(n, r, p) && i < comm::blockRow(n, r + 1, p)
              ? double(i * 10 + j)
              : -1.0 - r;
  store->setDistribution(Distribution::BlockRows);
  TaskGraph graph(1);
  comm::gatherBlocks(graph, store);
  EXPECT_EQ(store->distribution(), Distribution::Replicated);
  comm::gatherBlocks(graph, store); // nothing: replicated
  graph.waitAll();
  auto got = valuesOf<double>(store);
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(got[i * 2 + j], double(i * 10 + j)) << "row " << i;
}

// Rank r sends rank q a block of (r + 1) * (q + 1) int32, all r * 100 + q
// (uneven blocks both ways); each rank checks what every rank sent it.
TEST(Collectives, AllToAllOfUnevenBlocks) {
  comm::start();
  int p = comm::size(), r = comm::rank();
  std::vector<int32_t> out;
  std::vector<size_t> sendBytes, recvBytes;
  size_t in = 0;
  for (int q = 0; q < p; ++q) {
    for (int k = 0; k < (r + 1) * (q + 1); ++k)
      out.push_back(r * 100 + q);
    sendBytes.push_back(size_t((r + 1) * (q + 1)) * sizeof(int32_t));
    recvBytes.push_back(size_t((q + 1) * (r + 1)) * sizeof(int32_t));
    in += (q + 1) * (r + 1);
  }
  auto send = storeOf<int32_t>(DType::i32, out);
  auto recv =
      std::make_shared<Store>(DType::i32, std::vector<int64_t>{int64_t(in)});
  TaskGraph graph(1);
  comm::submitAllToAll(graph, send, recv, sendBytes, recvBytes);
  graph.waitAll();
  std::vector<int32_t> got = valuesOf<int32_t>(recv), expected;
  for (int q = 0; q < p; ++q)
    for (int k = 0; k < (q + 1) * (r + 1); ++k)
      expected.push_back(q * 100 + r);
  EXPECT_EQ(got, expected);
}

TEST(Collectives, BadCallsAreErrors) {
  comm::start();
  TaskGraph graph(1);
  auto h = std::make_shared<Store>(DType::f16, std::vector<int64_t>{2});
  EXPECT_THROW(comm::submitAllReduce(graph, h, h, comm::ReduceOp::Sum),
               cpnrt::Error);
  auto f = std::make_shared<Store>(DType::f64, std::vector<int64_t>{2});
  EXPECT_THROW(comm::submitAllReduce(graph, f, f, comm::ReduceOp::LogicalOr),
               cpnrt::Error);
  auto c = std::make_shared<Store>(DType::c128, std::vector<int64_t>{2});
  EXPECT_THROW(comm::submitAllReduce(graph, c, c, comm::ReduceOp::Max),
               cpnrt::Error);
  auto d = std::make_shared<Store>(DType::f64, std::vector<int64_t>{2});
  auto e = std::make_shared<Store>(DType::f64, std::vector<int64_t>{3});
  EXPECT_THROW(comm::submitAllReduce(graph, d, e, comm::ReduceOp::Max),
               cpnrt::Error);
  EXPECT_THROW(comm::submitAllGather(graph, d, e, {}), cpnrt::Error);
  EXPECT_THROW(comm::submitBroadcast(graph, d, 8, 16, 0), cpnrt::Error);
  std::vector<size_t> one(comm::size(), 8);
  EXPECT_THROW(comm::submitAllToAll(graph, d, d, one, one), cpnrt::Error);
  std::vector<size_t> tooMany(comm::size(), 64);
  EXPECT_THROW(comm::submitAllToAll(graph, d, e, tooMany, tooMany),
               cpnrt::Error);
  graph.waitAll();
}

// A collective whose input failed is skipped (on one rank nothing waits
// for it), and the collectives after it run: the order between them does
// not pass a failure on.
TEST(Collectives, AFailedCollectiveDoesNotFailTheNextOnes) {
  comm::start();
  if (comm::size() > 1)
    GTEST_SKIP() << "on several ranks a skipped collective ends them all "
                    "(ctest comm-abort-n2)";
  TaskGraph graph(1);
  auto bad = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  auto out = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  graph.submit(
      "fails",
      [] { throw cpnrt::Error(cpnrt::ErrorKind::LinAlg, "on purpose"); }, {},
      {bad});
  cpnrt::TaskRef skipped =
      comm::submitAllReduce(graph, bad, out, comm::ReduceOp::Sum);
  auto good = storeOf<double>(DType::f64, {2.5});
  auto sum = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  cpnrt::TaskRef next =
      comm::submitAllReduce(graph, good, sum, comm::ReduceOp::Sum);
  graph.waitAll();
  EXPECT_EQ(skipped->error(), "on purpose");
  EXPECT_EQ(next->error(), "");
  EXPECT_EQ(valuesOf<double>(sum), std::vector<double>{2.5});
}

/// `cpnrt-comm-tests --fail-before-collective` under mpirun (ctest
/// comm-abort-n2): rank 1's input of an all-reduce fails; rank 1 never
/// starts it, rank 0 waits in it, and rank 1 ends both with its message.
int failBeforeCollective() {
  comm::start();
  TaskGraph graph(1);
  auto in = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  auto out = std::make_shared<Store>(DType::f64, std::vector<int64_t>{1});
  graph.submit("input",
               [] {
                 if (comm::rank() == 1)
                   throw cpnrt::Error(cpnrt::ErrorKind::Runtime,
                                      "a collective's input failed on purpose");
               },
               {}, {in});
  comm::submitAllReduce(graph, in, out, comm::ReduceOp::Sum);
  graph.waitAll();
  comm::finish(60);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--fail-before-collective")
    return failBeforeCollective();
  ::testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  // Every rank's status: one failing rank fails the launch.
  comm::finish(60);
  return status;
}
