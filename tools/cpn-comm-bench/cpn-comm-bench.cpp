//===- cpn-comm-bench.cpp - what a message between ranks costs here -------===//
//
// Part of cpnumeric.
//
//   mpirun -n 2 build/bin/cpn-comm-bench [rounds]
//
// The inputs of docs/scaling.md's time model, measured on this machine: one
// round of a halo exchange between two ranks (each sends one message to the
// other and receives one, MPI's persistent requests: cpnrt::comm::Exchange)
// for message sizes from 8 bytes to 8 MB,
//   - on the calling thread (start, then wait): MPI's own cost;
//   - as a task of the runtime's graph (submitExchange, then waitAll): what
//     the runtime adds (the task, the progress thread's polling).
// Prints the median time per round and the bandwidth it implies, then an
// all-reduce of 8 bytes, blocking (MPI_Allreduce) and as a task.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Comm.h"
#include "cpnrt/TaskGraph.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace comm = cpnrt::comm;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median seconds per round of `ex`, `rounds` rounds after 10 unmeasured.
template <typename Round> double timeRounds(int rounds, Round round) {
  std::vector<double> t;
  for (int i = 0; i < rounds + 10; ++i) {
    comm::barrier();
    auto start = std::chrono::steady_clock::now();
    round();
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
    if (i >= 10)
      t.push_back(d.count());
  }
  return median(t);
}
} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  if (!comm::start() || comm::size() != 2) {
    std::fprintf(stderr, "cpn-comm-bench: run it under mpirun -n 2\n");
    comm::finish(0);
    return 2;
  }
  int peer = 1 - comm::rank();
  cpnrt::TaskGraph graph(1);
  if (comm::rank() == 0)
    std::printf("%12s %14s %14s %14s %12s\n", "bytes", "MPI us/round",
                "task us/round", "task - MPI us", "MPI GB/s");
  for (size_t bytes : {size_t(8), size_t(1) << 10, size_t(16000),
                       size_t(327680), size_t(8) << 20}) {
    auto out = std::make_shared<cpnrt::Store>(
        cpnrt::DType::u8, std::vector<int64_t>{int64_t(bytes)});
    auto in = std::make_shared<cpnrt::Store>(
        cpnrt::DType::u8, std::vector<int64_t>{int64_t(bytes)});
    auto ex = std::make_shared<comm::Exchange>();
    ex->send(out, 0, bytes, peer, 1);
    ex->receive(in, 0, bytes, peer, 1);
    int n = bytes >= (size_t(8) << 20) ? std::max(rounds / 10, 5) : rounds;
    double mpi = timeRounds(n, [&] {
      ex->start();
      ex->wait();
    });
    // As a sync point submits and waits (the engine's flush_and_wait).
    double task = timeRounds(n, [&] {
      cpnrt::TaskGraph::WaitFollows follows(graph);
      comm::submitExchange(graph, ex);
      graph.waitAll();
    });
    if (comm::rank() == 0)
      std::printf("%12zu %14.1f %14.1f %14.1f %12.2f\n", bytes, mpi * 1e6,
                  task * 1e6, (task - mpi) * 1e6, bytes / mpi / 1e9);
  }
  // An all-reduce of one float64 (a sync point's sum or a convergence
  // check): the blocking collective against the task.
  auto one = std::make_shared<cpnrt::Store>(cpnrt::DType::f64,
                                            std::vector<int64_t>{1});
  auto sum = std::make_shared<cpnrt::Store>(cpnrt::DType::f64,
                                            std::vector<int64_t>{1});
  int64_t v = comm::rank(), lo, hi;
  double blocking = timeRounds(rounds, [&] { comm::minMax(v, lo, hi); });
  double task = timeRounds(rounds, [&] {
    cpnrt::TaskGraph::WaitFollows follows(graph);
    comm::submitAllReduce(graph, one, sum, comm::ReduceOp::Sum);
    graph.waitAll();
  });
  if (comm::rank() == 0)
    std::printf("all-reduce of 8 B: blocking %.1f us, as a task %.1f us\n",
                blocking * 1e6, task * 1e6);
  comm::finish(60);
  return 0;
}
