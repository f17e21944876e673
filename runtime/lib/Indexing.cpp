//===- Indexing.cpp - gathers, scatters and selections --------------------===//
//
// Part of cpnumeric's runtime (libcpnrt). The entry points
// `cpn_lib_<name>_<t>` of take, take_along, compress, nonzero, bincount and
// put for every element type (see Algorithms.cpp), with NumPy's index modes
// (raise, wrap, clip). Large gathers and selections are split over threads;
// an index out of bounds sets the error of the calling thread, which the
// kernel's task raises (IndexError).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Lapack.h"

#include "AlgorithmsInternal.h"
#include "Compress.h"
#include "LibCall.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace {
using cpnrt::lib::Args;
using cpnrt::lib::gatherOnThreads;
using cpnrt::lib::kGatherPerThread;
using cpnrt::lib::startFromFirstInput;
using cpnrt::lib::View;

/// Whether index i of an axis of size n is valid under NumPy's mode, fixing
/// it (wrap, clip, negative); no error is set (see fixIndex).
inline bool indexOk(int64_t &i, int64_t n, int64_t mode) {
  if (mode == 1 && n)
    i = ((i % n) + n) % n;
  else if (mode == 2)
    i = std::clamp<int64_t>(i, 0, std::max<int64_t>(n - 1, 0));
  else if (i < -n || i >= n)
    return false;
  else if (i < 0)
    i += n;
  return true;
}

/// Calls `loop(fix)` with `fix(i)` = indexOk(i, n, mode) specialized for the
/// mode (clip, wrap, or raise with negative indices from the end), so that a
/// loop over many indices tests no mode per element.
template <typename F> auto withIndexFix(int64_t n, int64_t mode, F loop) {
  if (mode == 2 && n)
    return loop([n](int64_t &i) {
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
      return true;
    });
  if (mode == 1 && n)
    return loop([n](int64_t &i) {
      i = ((i % n) + n) % n;
      return true;
    });
  return loop([n](int64_t &i) {
    if (static_cast<uint64_t>(i + n) >= static_cast<uint64_t>(2 * n))
      return false;
    i += i < 0 ? n : 0;
    return true;
  });
}

/// Index `i` of an axis of size n under NumPy's mode (args: 0 raise, 1 wrap,
/// 2 clip); false (and the error set) when out of bounds in raise mode.
bool fixIndex(int64_t &i, int64_t n, int64_t mode, int64_t axis) {
  int64_t raw = i;
  if (indexOk(i, n, mode))
    return true;
  cpnrt::setKernelError(
      cpnrt::ErrorKind::Index,
      "index " + std::to_string(raw) + " is out of bounds for axis " +
          std::to_string(axis) + " with size " + std::to_string(n));
  return false;
}

/// take: in0 a (P, N, Q), in1 indices (K) int64 -> out (P, K, Q);
/// args = mode, axis (for messages). Split over threads by index.
template <typename T> void take(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1];
  int64_t P = x.size(0), N = x.size(1), Q = x.size(2), K = ind.count();
  int64_t mode = a.arg(0), axis = a.arg(1);
  T *out = a.out.data<T>();
  const int64_t *idx = ind.rank() == 1 && ind.strides[0] == 1
                           ? ind.data<const int64_t>()
                           : nullptr;
  if (idx && P == 1 && Q == 1) {
    // One element per index: a tight loop per mode with everything in
    // registers, so that many of its random loads are in flight at once (the
    // general loop below held about a third as many).
    const T *src = x.data<const T>();
    const int64_t step = x.strides[1];
    auto gather = [&](auto fix) {
      return gatherOnThreads(K, K, [&](int64_t lo, int64_t hi, auto fail) {
        const T *const from = src;
        const int64_t *const at = idx;
        T *const to = out;
        const int64_t s = step;
        auto fixLocal = fix;
        for (int64_t k = lo; k < hi; ++k) {
          int64_t i = at[k];
          if (!fixLocal(i)) [[unlikely]]
            return fail(at[k]);
          to[k] = from[i * s];
        }
      });
    };
    std::optional<int64_t> bad = withIndexFix(N, mode, gather);
    if (bad)
      fixIndex(*bad, N, mode, axis);
    return;
  }
  auto bad =
      gatherOnThreads(K, K * P * Q, [&](int64_t lo, int64_t hi, auto fail) {
        for (int64_t k = lo; k < hi; ++k) {
          int64_t raw = idx ? idx[k] : ind.el<int64_t>(ind.at(k)), i = raw;
          if (!indexOk(i, N, mode))
            return fail(raw);
          const T *from = x.data<const T>() + i * x.strides[1];
          if (P == 1 && Q == 1) {
            out[k] = *from;
            continue;
          }
          for (int64_t p = 0; p < P; ++p)
            for (int64_t q = 0; q < Q; ++q)
              out[(p * K + k) * Q + q] =
                  from[p * x.strides[0] + q * x.strides[2]];
        }
      });
  if (bad)
    fixIndex(*bad, N, mode, axis);
}

/// take_along: in0 a (P, N, Q), in1 indices (P, K, Q) int64 -> out (P, K, Q).
/// Split over threads by row p (or by k when there is one row).
template <typename T> void take_along(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1];
  int64_t P = ind.size(0), K = ind.size(1), Q = ind.size(2), N = x.size(1);
  int64_t axis = a.arg(0);
  T *out = a.out.data<T>();
  auto one = [&](int64_t p, int64_t k, int64_t q, auto fail) {
    int64_t raw = ind.el<int64_t>(ind.offset + p * ind.strides[0] +
                                  k * ind.strides[1] + q * ind.strides[2]),
            i = raw;
    if (!indexOk(i, N, 0)) {
      fail(raw);
      return false;
    }
    out[(p * K + k) * Q + q] = x.el<T>(x.offset + p * x.strides[0] +
                                       i * x.strides[1] + q * x.strides[2]);
    return true;
  };
  std::optional<int64_t> bad;
  if (Q == 1 && P > 1) {
    // Along the last axis (the common case: a row's own indices): the
    // strides in registers, one load of an index and one of an element per
    // output (the general loop below recomputes three-term offsets).
    const T *const src = x.data<const T>();
    const int64_t *const at = ind.data<const int64_t>();
    const int64_t xs0 = x.strides[0], xs1 = x.strides[1],
                  is0 = ind.strides[0], is1 = ind.strides[1];
    bad = gatherOnThreads(P, P * K, [&](int64_t lo, int64_t hi, auto fail) {
      for (int64_t p = lo; p < hi; ++p) {
        const T *row = src + p * xs0;
        const int64_t *irow = at + p * is0;
        T *to = out + p * K;
        for (int64_t k = 0; k < K; ++k) {
          int64_t i = irow[k * is1];
          if (static_cast<uint64_t>(i + N) >= static_cast<uint64_t>(2 * N))
              [[unlikely]]
            return fail(i);
          to[k] = row[(i + (i < 0 ? N : 0)) * xs1];
        }
      }
    });
  } else if (P > 1)
    bad = gatherOnThreads(P, P * K * Q, [&](int64_t lo, int64_t hi, auto fail) {
      for (int64_t p = lo; p < hi; ++p)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t q = 0; q < Q; ++q)
            if (!one(p, k, q, fail))
              return;
    });
  else
    bad = gatherOnThreads(K, K * Q, [&](int64_t lo, int64_t hi, auto fail) {
      for (int64_t k = lo; k < hi; ++k)
        for (int64_t q = 0; q < Q; ++q)
          if (!one(0, k, q, fail))
            return;
    });
  if (bad)
    fixIndex(*bad, N, 0, axis);
}

/// The selected elements of [0, n) written in order by several threads when
/// n is large: count(lo, hi) says how many chunk [lo, hi) selects, and
/// write(lo, hi, k, end) writes them from output position k (the counts of
/// the chunks before it) to end (the next chunk's k; INT64_MAX for the
/// last chunk).
template <typename Count, typename Write>
void selectInChunks(int64_t n, Count count, Write write) {
  int64_t t = cpnrt::lib::threadsFor(n, 4 * kGatherPerThread);
  std::vector<int64_t> start(t + 1, 0);
  if (t > 1)
    cpnrt::lib::onThreads(t, [&](int64_t c) {
      start[c + 1] = count(n * c / t, n * (c + 1) / t);
    });
  std::partial_sum(start.begin(), start.end(), start.begin());
  cpnrt::lib::onThreads(t, [&](int64_t c) {
    write(n * c / t, n * (c + 1) / t, start[c],
          c + 1 < t ? start[c + 1] : std::numeric_limits<int64_t>::max());
  });
}

/// emit(i) for each i in [lo, lo + 64 * whole blocks) where test(i), in
/// order: 64 tests make a word, then its set bits are visited (a branch per
/// element mispredicts on random data). Returns where the blocks end.
template <typename Test, typename Emit>
int64_t forEachSetIn64s(int64_t lo, int64_t hi, Test test, Emit emit) {
  for (; lo + 64 <= hi; lo += 64) {
    uint64_t bits = 0;
    for (int b = 0; b < 64; ++b)
      bits |= uint64_t(test(lo + b)) << b;
    for (; bits; bits &= bits - 1)
      emit(lo + __builtin_ctzll(bits));
  }
  return lo;
}

/// compress: in0 a (N), in1 mask (N) bool -> out (count): a where mask (the
/// count was computed before, so out has exactly that many elements).
template <typename T> void compress(const Args &a) {
  const View &x = a.in[0], &m = a.in[1];
  T *out = a.out.data<T>();
  int64_t n = x.count(), limit = a.out.count();
  bool flat = x.rank() == 1 && m.rank() == 1 && m.strides[0] == 1;
  selectInChunks(
      n,
      [&](int64_t lo, int64_t hi) {
        int64_t count = 0;
        if (flat) { // a plain loop over a pointer: vectorized
          const uint8_t *mp = m.data<const uint8_t>();
          for (int64_t i = lo; i < hi; ++i)
            count += mp[i] != 0;
        } else
          for (int64_t i = lo; i < hi; ++i)
            count += m.el<uint8_t>(m.at(i)) != 0;
        return count;
      },
      [&](int64_t i, int64_t hi, int64_t k, int64_t end) {
        if (flat) {
          const uint8_t *mp = m.data<const uint8_t>();
          const T *xp = x.data<const T>();
          int64_t xs = x.strides[0];
          if constexpr (cpnrt::simd::kHasVectorCompress<T>) {
            if (xs == 1) { // the vector unit's compress
              // Its whole-vector stores stay inside this chunk's part.
              cpnrt::simd::compressByMask(xp + i, mp + i, hi - i, out, k,
                                          std::min(end, limit));
              return;
            }
          }
          // Never past this chunk's part or the output, whatever the mask
          // holds now (its count was taken before the call).
          int64_t stop = std::min(end, limit);
          i = forEachSetIn64s(
              i, hi, [&](int64_t j) { return mp[j] != 0; },
              [&](int64_t j) {
                if (k < stop)
                  out[k++] = xp[j * xs];
              });
        }
        for (; i < hi && k < limit; ++i)
          if (m.el<uint8_t>(m.at(i)))
            out[k++] = x.el<T>(x.at(i));
      });
}

/// nonzero: in0 a (any shape) -> out (count, ndim) int64: the multi-indices
/// of the nonzero elements in row-major order; with arg0 = 1 out is
/// (ndim, count), one row per dimension (argwhere's transposed layout).
template <typename T> void nonzero(const Args &a) {
  const View &x = a.in[0];
  int64_t *out = a.out.data<int64_t>();
  int64_t nd = static_cast<int64_t>(x.sizes.size()), n = x.count();
  bool byDim = a.arg(0) != 0;
  int64_t limit = byDim ? a.out.size(1) : a.out.size(0);
  // element (k, d) of the (count, ndim) result
  int64_t kStride = byDim ? 1 : nd, dStride = byDim ? limit : 1;
  const T *xp = x.data<const T>(); // 1-D: read through a pointer
  int64_t xs = nd == 1 ? x.strides[0] : 0;
  selectInChunks(
      n,
      [&](int64_t lo, int64_t hi) {
        int64_t count = 0;
        if (nd == 1) // a plain loop over a pointer: vectorized
          for (int64_t i = lo; i < hi; ++i)
            count += xp[i * xs] != T(0);
        else
          for (int64_t i = lo; i < hi; ++i)
            count += x.el<T>(x.at(i)) != T(0);
        return count;
      },
      [&](int64_t i, int64_t hi, int64_t k, int64_t end) {
        int64_t stop = std::min(end, limit); // as compress's
        if (nd == 1)
          i = forEachSetIn64s(
              i, hi, [&](int64_t j) { return xp[j * xs] != T(0); },
              [&](int64_t j) {
                if (k < stop)
                  out[k++] = j;
              });
        for (; i < hi && k < limit; ++i) {
          if (x.el<T>(x.at(i)) == T(0))
            continue;
          int64_t rest = i;
          for (int64_t d = nd - 1; d >= 0; --d) {
            out[k * kStride + d * dStride] = rest % x.sizes[d];
            rest /= x.sizes[d];
          }
          ++k;
        }
      });
}

/// bincount: in0 x (N) int64 (non-negative, checked before), optionally in1
/// weights (N) of T -> out (M) of T: out[x[i]] += w[i] (or 1).
/// Counts without weights are split over threads, each with bins of its own
/// (integers: the same counts); weighted sums stay in NumPy's order.
template <typename T> void bincount(const Args &a) {
  const View &x = a.in[0];
  T *out = a.out.data<T>();
  int64_t m = a.out.count(), n = x.count();
  std::fill(out, out + m, T(0));
  int64_t t = cpnrt::lib::threadsFor(n, 4 * kGatherPerThread);
  if (a.in.size() == 1 && t > 1 && m <= n / 4) {
    std::vector<std::vector<T>> bins(t);
    cpnrt::lib::onThreads(t, [&](int64_t c) {
      std::vector<T> &mine = bins[c];
      mine.assign(m, T(0));
      T *bin = mine.data();
      const int64_t *xp = x.rank() == 1 ? x.data<const int64_t>() : nullptr;
      int64_t xs = x.rank() == 1 ? x.strides[0] : 0;
      for (int64_t i = n * c / t; i < n * (c + 1) / t; ++i) {
        int64_t b = xp ? xp[i * xs] : x.el<int64_t>(x.at(i));
        if (b >= 0 && b < m)
          bin[b] += T(1);
      }
    });
    for (const std::vector<T> &mine : bins)
      for (int64_t b = 0; b < m; ++b)
        out[b] += mine[b];
    return;
  }
  if (x.rank() == 1 && (a.in.size() == 1 || a.in[1].rank() == 1)) {
    // Flat operands (the usual case): pointer loops, in order.
    const int64_t *xp = x.data<const int64_t>();
    int64_t xs = x.strides[0];
    if (a.in.size() == 1) {
      for (int64_t i = 0; i < n; ++i)
        if (int64_t b = xp[i * xs]; b >= 0 && b < m)
          out[b] += T(1);
      return;
    }
    const T *wp = a.in[1].data<const T>();
    int64_t ws = a.in[1].strides[0];
    for (int64_t i = 0; i < n; ++i)
      if (int64_t b = xp[i * xs]; b >= 0 && b < m)
        out[b] += wp[i * ws];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = x.el<int64_t>(x.at(i));
    if (b < 0 || b >= m)
      continue;
    out[b] += a.in.size() > 1 ? a.in[1].el<T>(a.in[1].at(i)) : T(1);
  }
}

/// put: in0 a (N), in1 indices (K) int64, in2 values (K) -> out (N) = a
/// with out[indices[k]] = values[k] (later writes win); args = mode.
template <typename T> void put(const Args &a) {
  const View &x = a.in[0], &ind = a.in[1], &v = a.in[2];
  T *out = a.out.data<T>();
  int64_t n = x.count(), k = ind.count();
  startFromFirstInput<T>(a); // the copy of the base
  // The writes in order, on one thread: later writes to an index win.
  int64_t vn = v.count();
  int64_t mode = a.arg(0);
  if (ind.rank() == 1 && v.rank() == 1 && vn >= k) {
    // Flat operands, one value per index: a tight loop per mode (random
    // stores; the loop must not stand between them and the memory system).
    const int64_t *ip = ind.data<const int64_t>();
    const T *vp = v.data<const T>();
    int64_t is = ind.strides[0], vs = v.strides[0];
    // Scatters into a destination larger than the caches are split by
    // destination: each thread reads every index and writes those in its
    // part of `out`, in order, so a repeated index still ends with its last
    // value. Into a cached destination one thread is faster (measured on 2
    // cores, 5e5 stores: 0.8 ms on one thread into 8 MB, 2.8 ms on two;
    // 5e6 into 80 MB: 35 ms on one, 24 ms on two).
    int64_t t = n * int64_t(sizeof(T)) < (int64_t(32) << 20)
                    ? 1
                    : cpnrt::lib::threadsFor(k, kGatherPerThread,
                                             cpnrt::lib::maxThreads());
    auto scatter = [&](auto fix) {
      std::atomic<int64_t> bad{-1};
      cpnrt::lib::onThreads(t, [&](int64_t c) {
        const uint64_t lo = uint64_t(n * c / t),
                       width = uint64_t(n * (c + 1) / t) - lo;
        T *const dstBase = out;
        const int64_t *const src = ip;
        const T *const vals = vp;
        const int64_t istep = is, vstep = vs, count = k;
        auto fixLocal = fix;
        // The other threads' elements land in `sink`, chosen by a mask: a
        // branch on a random index would be mispredicted half the time.
        T sink;
        const uintptr_t sinkAddr = reinterpret_cast<uintptr_t>(&sink);
        for (int64_t j = 0; j < count; ++j) {
          int64_t i = src[j * istep];
          if (!fixLocal(i)) [[unlikely]] {
            int64_t none = -1;
            bad.compare_exchange_strong(none, j);
            return;
          }
          if (t == 1) {
            dstBase[i] = vals[j * vstep];
            continue;
          }
          uintptr_t mine = -uintptr_t(uint64_t(i) - lo < width);
          uintptr_t at = reinterpret_cast<uintptr_t>(dstBase + i);
          *reinterpret_cast<T *>((at & mine) | (sinkAddr & ~mine)) =
              vals[j * vstep];
        }
      });
      if (int64_t j = bad.load(); j >= 0) {
        int64_t i = ip[j * is];
        fixIndex(i, n, mode, 0); // sets the error on the task's thread
      }
    };
    withIndexFix(n, mode, scatter);
    return;
  }
  if (ind.rank() == 1 && v.rank() == 1) { // flat operands, values cycled
    const int64_t *ip = ind.data<const int64_t>();
    const T *vp = v.data<const T>();
    int64_t is = ind.strides[0], vs = v.strides[0];
    for (int64_t j = 0, jv = 0; j < k && vn;
         ++j, jv = jv + 1 == vn ? 0 : jv + 1) {
      int64_t i = ip[j * is];
      if (!indexOk(i, n, mode)) [[unlikely]] {
        fixIndex(i, n, mode, 0); // sets the error
        return;
      }
      out[i] = vp[jv * vs];
    }
    return;
  }
  for (int64_t j = 0, jv = 0; j < k && vn;
       ++j, jv = jv + 1 == vn ? 0 : jv + 1) {
    int64_t i = ind.el<int64_t>(ind.at(j));
    if (!indexOk(i, n, mode)) [[unlikely]] {
      fixIndex(i, n, mode, 0);
      return;
    }
    out[i] = v.el<T>(v.at(jv));
  }
}

} // namespace

// The entry points of this file, each defined for every element type.
#define CPN_INDEXING(X)                                                        \
  X(take) X(take_along) X(compress) X(nonzero) X(bincount) X(put)
CPN_INDEXING(CPN_DEFINE_ALL)

std::vector<cpn_lib_entry> cpnrt::lib::indexingFunctions() {
  return {CPN_INDEXING(CPN_ROWS)};
}
#undef CPN_INDEXING
