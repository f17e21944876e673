//===- Store.h - runtime buffers --------------------------------*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt). No MLIR or LLVM here.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_STORE_H
#define CPNRT_STORE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cpnrt {

/// The element types the runtime stores. The names are NumPy's `dtype.str`
/// without the byte-order mark ("f8", "i4", "u1", "b1", "c16"). Complex
/// elements are (real, imaginary) pairs, as in NumPy and C99.
enum class DType : uint8_t {
  b1, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, f16, c64, c128
};

DType parseDType(const std::string &name);
const char *dtypeName(DType t);
/// The names of every DType ("b1", "i1", ..., "c16"), in DType's order.
std::vector<std::string> dtypeNames();
size_t dtypeSize(DType t);
bool isUnsigned(DType t);
bool isFloat(DType t);
bool isComplex(DType t);

/// How a store is laid out over ranks. One process: always replicated.
enum class Distribution : uint8_t { Replicated, BlockRows };

class Task;

/// A buffer with a shape and a dtype. Reference-counted through shared_ptr by
/// Python handles and by tasks that read or write it. Memory comes from a
/// process-wide pool of size classes, so a freed temporary's pages are reused
/// instead of faulted in again. It is taken at the first data(), not at
/// construction: a window's outputs are made when it is submitted, up to a
/// few windows before it runs, and a loop's outputs that die before their
/// window runs would otherwise all hold memory at once.
class Store {
public:
  Store(DType dtype, std::vector<int64_t> shape);
  /// A store over memory it does not own (an adopted NumPy array's buffer,
  /// which nothing else can reach): `owner` keeps the memory alive and is
  /// released with the store; otherwise the store is as any other.
  Store(DType dtype, std::vector<int64_t> shape, void *data,
        std::shared_ptr<void> owner);
  ~Store();
  Store(const Store &) = delete;

  /// A store over the buffer of a NumPy array that NumPy code may still
  /// write (np.asarray of a held array), without a copy: the buffer's pages
  /// are made read-only, and the first write to them from anywhere (NumPy,
  /// another thread, a C extension) copies the elements into memory of the
  /// store's own before it lands (Guard.cpp): the store keeps the values it
  /// had when it was made, as a copy would. `allocation` and
  /// `allocationBytes` are the memory that holds the buffer (the NumPy
  /// array that owns it): only memory whose pages hold nothing else is
  /// guarded (pages::take's, glibc's mapped allocations). Null where the buffer
  /// cannot be guarded (copy it): other memory, pages already guarded, the
  /// fault handler replaced, CPN_BORROW=0.
  static std::shared_ptr<Store> borrow(DType dtype, std::vector<int64_t> shape,
                                       void *data, std::shared_ptr<void> owner,
                                       const void *allocation,
                                       size_t allocationBytes);
  /// Whether more than one value was given this store by borrow (the same
  /// elements borrowed again while the first lived): never written in
  /// place, nor lent to NumPy, even after it is copied.
  bool borrowShared() const {
    return borrowShared_.load(std::memory_order_acquire);
  }
  /// Whether the store's memory is still a guarded NumPy buffer.
  bool guarded() const { return guard_.load(std::memory_order_seq_cst) >= 0; }
  /// Makes a guarded store's memory its own (a copy), waiting for the tasks
  /// that read the old memory; for code that hands the memory on (a NumPy
  /// array over the store) or writes it. No-op when not guarded.
  void unguard();
  /// Tasks running now that read the store while it is guarded
  /// (GuardedReads): a write's copy waits for them before the write lands.
  std::atomic<int32_t> guardReaders{0};
  Store &operator=(const Store &) = delete;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return nbytes_; }
  void *data() {
    void *p = data_.load(std::memory_order_acquire);
    return p ? p : allocate();
  }
  const void *data() const { return const_cast<Store *>(this)->data(); }
  Distribution distribution() const {
    return dist_.load(std::memory_order_relaxed);
  }
  /// BlockRows: this rank's block of rows (comm::blockRow) is current, the
  /// other rows are not (a kernel of one rank's program wrote it); set by
  /// the Engine in program order, as the tasks are submitted, and read by
  /// running tasks too (readOnlyFacts): atomic. A store of 1 GiB or more
  /// that is BlockRows when it takes its memory maps it without reserving
  /// it (MAP_NORESERVE): a rank's memory holds the pages it touches, its
  /// block and halo rows, and the kernel's overcommit check does not refuse
  /// an array bigger than one node's memory that P ranks hold.
  void setDistribution(Distribution d) {
    dist_.store(d, std::memory_order_relaxed);
  }

  /// Blocks until the last task that writes this store has finished; throws
  /// cpnrt::Error with the task's kind and message if it failed.
  void wait();

  /// What kernels have learned about the elements since the last write (bits
  /// of cpnrt::Fact in Facts.h). A task that writes the store clears it when
  /// it starts: readers of the old elements have finished by then, and later
  /// readers wait for it.
  std::atomic<uint32_t> facts{0};

  /// How many NumPy arrays (np.asarray's exports, python/src/runtime.cpp)
  /// share this store's buffer. While it is lent, NumPy code may write the
  /// elements at any moment: no task writes it in place (planDonations) and
  /// a trace that reads it takes a copy first (Trace::operandRef).
  bool lent() const { return lent_.load(std::memory_order_acquire) > 0; }
  void lend() {
    facts.store(0, std::memory_order_relaxed);
    lent_.fetch_add(1, std::memory_order_acq_rel);
  }
  /// The last NumPy array gone: what was learned may no longer hold.
  void giveBack() {
    if (lent_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      facts.store(0, std::memory_order_relaxed);
  }
  /// The memory is another library's (the adopting constructor).
  bool external() const { return owner_ != nullptr; }

  // Dependency tracking, used by TaskGraph under its lock: the writes no
  // later write covers (one, the last, unless tasks wrote byte ranges of the
  // store: a halo round's rows), and the reads since, each with its bytes
  // [begin, end).
  struct Access {
    size_t begin = 0, end = SIZE_MAX;
  };
  struct Write : Access {
    std::shared_ptr<Task> task;
  };
  struct Read : Access {
    std::weak_ptr<Task> task;
  };
  std::vector<Write> writers;
  std::vector<Read> readersSinceWrite;

private:
  DType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_;
  size_t nbytes_;
  std::atomic<void *> data_{nullptr};
  std::mutex allocating_;
  void *allocate();
  // Mapped for itself without reserving the whole (a split store of 1 GiB
  // or more, allocate()): unmapped, not pooled.
  size_t mapped_ = 0;
  std::atomic<Distribution> dist_{Distribution::Replicated};
  std::atomic<int32_t> lent_{0};
  std::shared_ptr<void> owner_;
  // Guarded borrowing (Guard.cpp): the guard table's slot, -1 when none;
  // the copy a write made (pooled when made by unguard, mapped when made by
  // the fault handler).
  std::atomic<int32_t> guard_{-1};
  std::atomic<bool> borrowShared_{false};
  enum class Own : uint8_t { None, Pooled, Mapped };
  Own own_ = Own::None;
  size_t ownBytes_ = 0;
  friend struct GuardTable;
};

using StoreRef = std::shared_ptr<Store>;

/// While alive, counts the calling thread as reading `stores` (those of them
/// guarded: Store::guardReaders): TaskGraph::run around each task, and code
/// that reads a store's memory outside a task with the GIL released.
class GuardedReads {
public:
  explicit GuardedReads(const std::vector<StoreRef> &stores);
  ~GuardedReads();
  GuardedReads(const GuardedReads &) = delete;
  GuardedReads &operator=(const GuardedReads &) = delete;

private:
  std::vector<Store *> counted_;
};

/// Borrowed NumPy buffers (Store::borrow) for cpnumeric.stats().
struct GuardStats {
  uint64_t borrowed = 0; // stores made over guarded buffers
  uint64_t copies = 0;   // of them, copied at a write or unguard
  uint64_t copyBytes = 0;
};
GuardStats guardStats();
void resetGuardStats();
/// Whether Store::borrow can guard buffers here: CPN_BORROW is not 0 and
/// the system lets the process use userfaultfd's write protection.
bool borrowingAvailable();

/// Whether borrowing can work here, without starting it: CPN_BORROW is not
/// 0 and a userfaultfd with write protection of unpopulated pages can be
/// made (the probe's descriptor is closed again).
bool borrowingPossible();

/// Pages of their own for NumPy's big arrays (cpnumeric's NEP 49 allocator,
/// python/src/allocator.cpp), so that Store::borrow can guard them: malloc's
/// memory, page-aligned and whole pages, nothing else on them (Pages.cpp).
namespace pages {
/// Arrays of this many bytes or more get such pages; smaller ones NumPy's
/// own allocator (as _creation._BORROW_BYTES: smaller ones are copied).
constexpr size_t kMinBytes = size_t(1) << 18;
/// Memory of at least `bytes`, zeroed when asked; null when the system has
/// none.
void *take(size_t bytes, bool zeroed);
/// Frees p when it is the start of a live allocation of take's; false (and
/// nothing done) otherwise.
bool give(void *p);
/// p (a live allocation of take's) with room for `bytes`, its contents kept
/// (realloc); null, p untouched, when it cannot be.
void *resize(void *p, size_t bytes);
/// Whether p starts a live allocation of take's of at least `bytes`.
bool owns(const void *p, size_t bytes);
/// Whether allocations of 4 MiB or more are advised huge (NumPy's setting).
void setHugePages(bool on);
struct Stats {
  uint64_t allocations = 0;
  uint64_t bytesLive = 0;
};
Stats stats();
} // namespace pages

/// While alive, names the stores that the kernel running on this thread reads
/// and does not write, for cpnrt::readOnlyFacts (Facts.h): facts a library
/// call learns about them hold for the whole run and after it.
class ReadOnlyInputs {
public:
  explicit ReadOnlyInputs(const std::vector<StoreRef> &stores);
  ~ReadOnlyInputs();
  ReadOnlyInputs(const ReadOnlyInputs &) = delete;
  ReadOnlyInputs &operator=(const ReadOnlyInputs &) = delete;

private:
  const std::vector<StoreRef> *previous_;
};

/// Statistics of the buffer pool (for tests and cpnumeric.stats()).
struct PoolStats {
  uint64_t allocations = 0; // buffers taken from the system
  uint64_t reuses = 0;      // buffers served from the pool
  uint64_t bytesLive = 0;
  uint64_t bytesPeak = 0;
  uint64_t bytesCached = 0; // free buffers kept for reuse
};
PoolStats poolStats();
void resetPoolStats();
/// Returns every cached free buffer to the system (for memory measurements).
void trimPool();
/// CPN_POOL_LIMIT: the most bytes of free buffers the pool keeps for reuse
/// (a buffer freed beyond it goes back to the system; 0: none kept). Lowering
/// it returns what is cached above the new limit. Returns the old limit.
uint64_t setPoolLimit(uint64_t bytes);

/// memcpy(dst, src, nbytes) on several threads when it is large (a NumPy
/// array brought in or out: one thread moves ~5 GB/s here, two ~9).
void copyBytes(void *dst, const void *src, size_t nbytes);

/// STREAM triad a[i] = b[i] + s * c[i] over `n` doubles on `threads` threads,
/// best of `reps`, in GB/s counted as STREAM does (24 bytes per element): the
/// memory-bandwidth bound the benchmarks report against.
double streamTriadGBs(size_t n, int threads, int reps);

} // namespace cpnrt

extern "C" {
/// Temporaries of compiled kernels (memref.alloc/dealloc lowered with
/// `use-generic-functions`) come from the same pool as stores, so a kernel run
/// in a loop reuses its pages instead of faulting in fresh ones each call.
void *cpn_rt_alloc(uint64_t nbytes);
void cpn_rt_free(void *p);
}

#endif // CPNRT_STORE_H
