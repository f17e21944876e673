//===- Stream.cpp - STREAM triad, the bandwidth bound of the benchmarks ---===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Store.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace cpnrt {

double streamTriadGBs(size_t n, int threads, int reps) {
  threads = std::max(1, threads);
  auto alloc = [&] {
    return static_cast<double *>(
        std::aligned_alloc(64, ((n * 8 + 63) / 64) * 64));
  };
  double *a = alloc(), *b = alloc(), *c = alloc();
  auto chunk = [&](int t, auto &&fn) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    fn(lo, hi);
  };
  auto parallel = [&](auto &&fn) {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
      pool.emplace_back([&, t] { chunk(t, fn); });
    chunk(0, fn);
    for (auto &th : pool)
      th.join();
  };
  // First touch by the thread that later streams each chunk.
  parallel([&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    parallel([&](size_t lo, size_t hi) {
      const double s = 3.0;
      for (size_t i = lo; i < hi; ++i)
        a[i] = b[i] + s * c[i];
    });
    double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    best = std::max(best, 24.0 * static_cast<double>(n) / dt / 1e9);
  }
  std::free(a);
  std::free(b);
  std::free(c);
  return best;
}

} // namespace cpnrt
