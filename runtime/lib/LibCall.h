//===- LibCall.h - decoding a cpn.libcall's arrays (internal) ---*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). The layout words and pointers of a
// `cpn_lib_*` call (see cpnrt/Lapack.h) as strided arrays, shared by
// Lapack.cpp and the algorithm calls (Algorithms.cpp, Indexing.cpp, Scans.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_LIBCALL_H
#define CPNRT_LIB_LIBCALL_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

/// The runtime is built for the baseline x86-64 (SSE2), where GCC leaves
/// compare-and-count loops scalar: hot loops of that kind are compiled for
/// AVX-512 and AVX2 too, the CPU's best chosen when the library loads
/// (counting the keys above a pivot: 0.56 ms -> 0.015 ms for 2 x 10^5).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    __GNUC__ >= 12
#define CPN_CLONES                                                             \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPN_CLONES
#endif

namespace cpnrt::lib {
/// One strided array of the call (sizes and strides in elements).
struct Array {
  char *base = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t size(size_t d) const { return sizes[d]; }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
  /// Element offset of the element of row-major linear index `i`.
  int64_t at(int64_t i) const {
    if (sizes.size() == 1) // the common flat view: no division
      return offset + i * strides[0];
    int64_t off = offset;
    for (int64_t d = rank() - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
  /// The first element (the base pointer advanced by the offset).
  template <typename T> T *data() const {
    return reinterpret_cast<T *>(base) + offset;
  }
  template <typename T> T &el(int64_t off) const {
    return reinterpret_cast<T *>(base)[off];
  }
  /// Matrices in the batch (every dimension but the last two).
  int64_t batch() const {
    int64_t n = 1;
    for (int64_t i = 0; i + 2 < rank(); ++i)
      n *= sizes[i];
    return n;
  }
  /// Element offset of matrix `b` of the batch.
  int64_t batchOffset(int64_t b) const {
    int64_t off = offset;
    for (int64_t i = rank() - 3; i >= 0; --i) {
      off += (b % sizes[i]) * strides[i];
      b /= sizes[i];
    }
    return off;
  }
  int64_t rows() const { return rank() >= 2 ? sizes[rank() - 2] : 1; }
  int64_t cols() const { return rank() >= 1 ? sizes[rank() - 1] : 1; }
  int64_t rowStride() const { return rank() >= 2 ? strides[rank() - 2] : 0; }
  int64_t colStride() const { return rank() >= 1 ? strides[rank() - 1] : 0; }
};

/// The decoded call: output, inputs, integer arguments.
struct Call {
  Array out;
  std::vector<Array> in;
  std::vector<int64_t> args;

  Call(int64_t meta, int64_t outPtr, int64_t in0, int64_t in1, int64_t in2) {
    const int64_t *w = reinterpret_cast<const int64_t *>(meta);
    int64_t n = *w++;
    int64_t ptrs[4] = {outPtr, in0, in1, in2};
    for (int64_t a = 0; a < n; ++a) {
      Array arr;
      arr.base = reinterpret_cast<char *>(ptrs[std::min<int64_t>(a, 3)]);
      arr.offset = *w++;
      int64_t rank = *w++;
      arr.sizes.assign(w, w + rank);
      w += rank;
      arr.strides.assign(w, w + rank);
      w += rank;
      (a == 0 ? out : in.emplace_back()) = std::move(arr);
    }
    int64_t nargs = *w++;
    args.assign(w, w + nargs);
  }
  int64_t arg(size_t i, int64_t dflt = 0) const {
    return i < args.size() ? args[i] : dflt;
  }
};

/// Threads the library calls may use: CPN_THREADS, else every core (read
/// once).
inline int64_t maxThreads() {
  static const int64_t n = [] {
    const char *v = std::getenv("CPN_THREADS");
    int64_t t = v ? std::atoll(v) : 0;
    return t > 0 ? t
                 : int64_t(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return n;
}

/// Threads for `work` items at least `perThread` each: 1 to `cap`.
inline int64_t threadsFor(int64_t work, int64_t perThread,
                          int64_t cap = maxThreads()) {
  return std::max<int64_t>(1, std::min(cap, work / perThread));
}

/// Runs fn(ctx, t) once for every t < n (n < 2^16), on the calling thread
/// and the runtime's worker threads (Threads.cpp), which claim the parts as
/// they come: a part must not wait for another.
void runOnThreads(int64_t n, void (*fn)(void *, int64_t), void *ctx);

/// fn(t) once for every t < n, on the calling thread and the workers.
template <typename F> void onThreads(int64_t n, F fn) {
  if (n <= 1) {
    fn(0);
    return;
  }
  runOnThreads(
      n, [](void *f, int64_t t) { (*static_cast<F *>(f))(t); }, &fn);
}

/// Runs fn(b) for every b < n, on several threads when the matrices are
/// small (`flops` per matrix); a big matrix uses OpenBLAS's threads instead.
/// (A stack of 1000 8 x 8 matrices stays on one thread: on two it took
/// twice as long, measured; OpenBLAS takes a lock for each call's
/// workspace, the likely cause.)
/// Matrices of at least this many flops are done one after another, each
/// on OpenBLAS's threads (forBatch).
constexpr double kBatchSpreadBelowFlops = 2e6;

/// `minFlops`: the batch's total below which it stays on one thread.
template <typename F>
void forBatch(int64_t n, double flops, F fn, double minFlops = 1e6) {
  int64_t threads = std::min<int64_t>(n, maxThreads()); // CPN_THREADS
  if (threads <= 1 || flops >= kBatchSpreadBelowFlops || n * flops < minFlops) {
    for (int64_t b = 0; b < n; ++b)
      fn(b);
    return;
  }
  // Runs of matrices claimed as they come: one at a time, the threads'
  // outputs interleaved and shared cache lines (1000 8 x 8 determinants
  // took twice as long on two threads as on one).
  const int64_t run = std::max<int64_t>(1, n / (8 * threads));
  std::atomic<int64_t> next{0};
  onThreads(threads, [&](int64_t) {
    for (int64_t b0; (b0 = next.fetch_add(run)) < n;)
      for (int64_t b = b0; b < std::min(n, b0 + run); ++b)
        fn(b);
  });
}
} // namespace cpnrt::lib

#endif // CPNRT_LIB_LIBCALL_H
