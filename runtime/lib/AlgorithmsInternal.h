//===- AlgorithmsInternal.h - helpers of the algorithm calls ----*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). What Algorithms.cpp (sorting,
// searching), Indexing.cpp (gathers, scatters, selections) and Scans.cpp
// (ufunc.accumulate, ufunc.at) share: the gather loop split over threads, the
// copy of a first input, and the macros that define the entry points
// `cpn_lib_<name>_<t>` for every element type and list them.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_ALGORITHMSINTERNAL_H
#define CPNRT_LIB_ALGORITHMSINTERNAL_H

#include "cpnrt/Lapack.h"

#include "LibCall.h"

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace cpnrt::lib {
using View = Array;
using Args = Call;

/// Gathers of at least this many elements per thread are split over threads
/// (2-core Xeon, a take of 10^5 random float64 elements from 10^5: 88 us on
/// one thread, 51 us on two; 2^16 kept it on one).
constexpr int64_t kGatherPerThread = int64_t(1) << 15;

/// fn(lo, hi, bad) over [0, n) split between threads when there are at
/// least `elements` x kGatherPerThread; fn reports an index out of bounds
/// through bad(i) and stops. The first bad index is returned (or nullopt) so
/// that the calling thread, whose error slot the task reads, raises it.
template <typename F>
std::optional<int64_t> gatherOnThreads(int64_t n, int64_t elements, F fn) {
  int64_t t = threadsFor(elements, kGatherPerThread, std::min(maxThreads(), n));
  std::atomic<bool> failed{false};
  std::atomic<int64_t> badIndex{0};
  onThreads(t, [&](int64_t c) {
    fn(n * c / t, n * (c + 1) / t, [&](int64_t i) {
      if (!failed.exchange(true))
        badIndex = i;
    });
  });
  if (failed)
    return badIndex.load();
  return std::nullopt;
}

/// out (n elements) = x, split over threads (contiguous: memcpy).
template <typename T> void copyAll(const View &x, T *out, int64_t n) {
  gatherOnThreads(n, n, [&](int64_t lo, int64_t hi, auto) {
    if (x.rank() == 1 && x.strides[0] == 1)
      std::memcpy(out + lo, x.data<const T>() + lo,
                  size_t(hi - lo) * sizeof(T));
    else
      for (int64_t i = lo; i < hi; ++i)
        out[i] = x.el<T>(x.at(i));
  });
}

/// out = in0, unless the output is in0 itself (cpn.libcall {in_place}: the
/// compiler found no later read of in0's old value and passed its buffer).
template <typename T> void startFromFirstInput(const Args &a) {
  const View &x = a.in[0];
  if (x.data<T>() == a.out.data<T>() && x.sizes == a.out.sizes &&
      x.strides == a.out.strides)
    return;
  copyAll<T>(x, a.out.data<T>(), x.count());
}

/// The entry points of Indexing.cpp and Scans.cpp, which algorithmFunctions()
/// (Algorithms.cpp) lists with its own.
std::vector<cpn_lib_entry> indexingFunctions();
std::vector<cpn_lib_entry> scanFunctions();
} // namespace cpnrt::lib

// The integer element types by suffix (bool, one byte, included), which the
// bitwise scans take.
#define CPN_INT_TYPES(X, name)                                                 \
  X(name, b1, uint8_t)                                                         \
  X(name, i1, int8_t)                                                          \
  X(name, i2, int16_t)                                                         \
  X(name, i4, int32_t)                                                         \
  X(name, i8, int64_t)                                                         \
  X(name, u1, uint8_t)                                                         \
  X(name, u2, uint16_t)                                                        \
  X(name, u4, uint32_t)                                                        \
  X(name, u8, uint64_t)
// Every element type by suffix.
#define CPN_TYPES(X, name)                                                     \
  CPN_INT_TYPES(X, name)                                                       \
  X(name, f4, float)                                                           \
  X(name, f8, double)                                                          \
  X(name, c8, std::complex<float>)                                             \
  X(name, c16, std::complex<double>)
// `extern "C" cpn_lib_<name>_<suffix>` calling name<T> (a template of the
// file that expands the macro), for every type or every integer type.
#define CPN_DEFINE(name, suffix, T)                                            \
  extern "C" void cpn_lib_##name##_##suffix(int64_t m, int64_t o, int64_t a,   \
                                            int64_t b, int64_t c) {            \
    name<T>(cpnrt::lib::Args(m, o, a, b, c));                                  \
  }
#define CPN_DEFINE_ALL(name) CPN_TYPES(CPN_DEFINE, name)
#define CPN_DEFINE_INT(name) CPN_INT_TYPES(CPN_DEFINE, name)
// The rows {"cpn_lib_<name>_<suffix>", fn} of those entry points.
#define CPN_ROW(name, suffix, T)                                               \
  {"cpn_lib_" #name "_" #suffix, &cpn_lib_##name##_##suffix},
#define CPN_ROWS(name) CPN_TYPES(CPN_ROW, name)
#define CPN_INT_ROWS(name) CPN_INT_TYPES(CPN_ROW, name)

#endif // CPNRT_LIB_ALGORITHMSINTERNAL_H
