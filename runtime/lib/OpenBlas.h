//===- OpenBlas.h - the BLAS and LAPACK the runtime calls (internal) -*- C++
//-*-===//
//
// Part of cpnumeric's runtime (libcpnrt). The runtime calls NumPy's own
// OpenBLAS build: PyPI's scipy-openblas64 (ILP64, every kernel built in and
// chosen for the CPU at load time). Its symbols are prefixed `scipy_` and
// suffixed `64_` so that they never clash with another BLAS in the process;
// CPN_BLAS(cblas_dgemm) names scipy_cblas_dgemm64_. docs/architecture.md says
// why ILP64.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_LIB_OPENBLAS_H
#define CPNRT_LIB_OPENBLAS_H

// LAPACKE's integers are 64-bit only when asked for; every lapack_int the
// runtime passes (sizes, pivots, ranks) must match the library's.
#ifndef LAPACK_ILP64
#define LAPACK_ILP64
#endif
#include <cblas.h>
#include <lapacke.h>

#include <mutex>

#ifndef OPENBLAS_USE64BITINT
#error "cpnumeric's runtime expects the ILP64 OpenBLAS of scipy-openblas64"
#endif

static_assert(sizeof(lapack_int) == 8 && sizeof(blasint) == 8,
              "scipy-openblas64 takes 64-bit integers");

#define CPN_BLAS_CAT(prefix, name, suffix) prefix##name##suffix
#define CPN_BLAS(name) CPN_BLAS_CAT(scipy_, name, 64_)

// Exported without the prefix and suffix by scipy-openblas64 (0.3.31), and
// so not declared by its cblas.h under the name it has. It returns the
// number of threads before the call.
extern "C" int openblas_set_num_threads_local(int num_threads);

namespace cpnrt::lib {
/// Products of fewer flops than this run on the calling thread alone: waking
/// OpenBLAS's pool (its threads sleep after ~0.3 ms, OPENBLAS_THREAD_TIMEOUT
/// =20, so that they leave the cores to OpenMP loops) costs more than they
/// do.
constexpr double kOneThreadBlasFlops = 4e7;

/// While alive (when `small`), OpenBLAS runs its calls on the calling
/// thread. openblas_set_num_threads_local is process-wide in this pthreads
/// build, despite its name (it calls the global setter), so the setting is
/// counted: the first guard sets one thread, the last one to leave restores
/// what it found, and guards on several threads at once (a stack of
/// products spread over threads) never leave the pool at one thread. A
/// large call on another thread meanwhile runs on one thread too.
class OneBlasThreadIf {
public:
  explicit OneBlasThreadIf(bool small) : active_(small) {
    if (!active_)
      return;
    std::lock_guard<std::mutex> lock(mutex());
    if (depth()++ == 0)
      saved() = openblas_set_num_threads_local(1);
  }
  ~OneBlasThreadIf() {
    if (!active_)
      return;
    std::lock_guard<std::mutex> lock(mutex());
    if (--depth() == 0 && saved() > 0)
      openblas_set_num_threads_local(saved());
  }
  OneBlasThreadIf(const OneBlasThreadIf &) = delete;
  OneBlasThreadIf &operator=(const OneBlasThreadIf &) = delete;

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  static int &depth() {
    static int d = 0;
    return d;
  }
  static int &saved() {
    static int s = 0;
    return s;
  }
  bool active_;
};
} // namespace cpnrt::lib

#endif // CPNRT_LIB_OPENBLAS_H
