//===- Store.cpp - runtime buffers and their pool -------------------------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// First touch of a fresh 4 KiB page costs ~12 µs on these VMs, so buffers are
// kept in a pool by size class and large ones are backed by huge pages.
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Store.h"
#include "Guard.h"
#include "LibCall.h"
#include "cpnrt/Facts.h"
#include "cpnrt/TaskGraph.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <sys/mman.h>
#include <unordered_map>

namespace cpnrt {

namespace {
/// Every dtype the runtime holds, in DType's order: its name (NumPy's kind
/// and item size, "b1" for bool) and item size. The one table of them:
/// Python reads the names through the bindings (_cpn.dtype_names).
struct DTypeInfo {
  DType t;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::b1, "b1", 1},   {DType::i8, "i1", 1},  {DType::i16, "i2", 2},
    {DType::i32, "i4", 4},  {DType::i64, "i8", 8}, {DType::u8, "u1", 1},
    {DType::u16, "u2", 2},  {DType::u32, "u4", 4}, {DType::u64, "u8", 8},
    {DType::f32, "f4", 4},  {DType::f64, "f8", 8}, {DType::f16, "f2", 2},
    {DType::c64, "c8", 8},  {DType::c128, "c16", 16}};
constexpr bool inDTypeOrder() {
  for (size_t i = 0; i < sizeof(kDTypes) / sizeof(kDTypes[0]); ++i)
    if (static_cast<size_t>(kDTypes[i].t) != i)
      return false;
  return sizeof(kDTypes) / sizeof(kDTypes[0]) ==
         static_cast<size_t>(DType::c128) + 1;
}
static_assert(inDTypeOrder(), "one entry per DType, in DType's order");
} // namespace

DType parseDType(const std::string &n) {
  for (const DTypeInfo &d : kDTypes)
    if (n == d.name)
      return d.t;
  throw std::invalid_argument("cpnumeric runtime: unsupported dtype '" + n +
                              "'");
}

const char *dtypeName(DType t) { return kDTypes[static_cast<int>(t)].name; }

size_t dtypeSize(DType t) { return kDTypes[static_cast<int>(t)].size; }

std::vector<std::string> dtypeNames() {
  std::vector<std::string> names;
  for (const DTypeInfo &d : kDTypes)
    names.push_back(d.name);
  return names;
}

bool isUnsigned(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 ||
         t == DType::u64;
}
bool isFloat(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16;
}
bool isComplex(DType t) { return t == DType::c64 || t == DType::c128; }

namespace {
constexpr size_t kAlign = 64;
constexpr size_t kHugeThreshold = 2u << 20;
constexpr size_t kNoReserveBytes = size_t(1) << 30;

/// Size classes: powers of two up to 64 KiB, then multiples of 64 KiB, so
/// that same-shaped temporaries always hit the same class. Buffers from
/// 2 MiB on start on a huge page and are huge pages but for their last
/// partial one (4 KiB pages: a 122 MiB array resides in 122 MiB, not 124).
size_t sizeClass(size_t n) {
  if (n <= 64)
    return 64;
  if (n <= (64u << 10)) {
    size_t c = 64;
    while (c < n)
      c <<= 1;
    return c;
  }
  return (n + (64u << 10) - 1) & ~((size_t(64) << 10) - 1);
}

class Pool {
public:
  void *take(size_t n) {
    size_t c = sizeClass(n);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytesLive += c;
    stats_.bytesPeak = std::max(stats_.bytesPeak, stats_.bytesLive);
    auto it = free_.find(c);
    if (it != free_.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      cached_ -= c;
      ++stats_.reuses;
      return p;
    }
    ++stats_.allocations;
    void *p = nullptr;
    if (c < kHugeThreshold)
      p = std::aligned_alloc(kAlign, c); // c is a multiple of kAlign
    else if (posix_memalign(&p, kHugeThreshold, c) != 0)
      p = nullptr;
    if (!p) {
      stats_.bytesLive -= c;
      throw std::bad_alloc();
    }
    if (c >= kHugeThreshold)
      madvise(p, c & ~(kHugeThreshold - 1), MADV_HUGEPAGE);
    return p;
  }
  void give(void *p, size_t n) {
    size_t c = sizeClass(n);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytesLive -= c;
    // Keep at most limit_ bytes cached; beyond that return memory to the
    // system.
    if (cached_ + c > limit_) {
      std::free(p);
      return;
    }
    free_[c].push_back(p);
    cached_ += c;
  }
  /// Stores mapped for themselves (Store::allocate): counted as live.
  void countMapped(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytesLive += uint64_t(bytes);
    stats_.bytesPeak = std::max(stats_.bytesPeak, stats_.bytesLive);
  }
  /// Untyped allocations (kernel temporaries) remember their size here.
  void *takeUntyped(size_t n) {
    void *p = take(n);
    std::lock_guard<std::mutex> lock(mu_);
    untyped_[p] = n;
    return p;
  }
  void giveUntyped(void *p) {
    size_t n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = untyped_.find(p);
      if (it == untyped_.end())
        return; // not ours: never free what we did not hand out
      n = it->second;
      untyped_.erase(it);
    }
    give(p, n);
  }
  void trim() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto &[c, ptrs] : free_)
      for (void *p : ptrs)
        std::free(p);
    free_.clear();
    cached_ = 0;
  }
  uint64_t setLimit(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t old = limit_;
    limit_ = bytes;
    // The biggest classes go first (the fewest frees for the bytes).
    for (auto it = free_.rbegin(); it != free_.rend() && cached_ > limit_;
         ++it)
      while (!it->second.empty() && cached_ > limit_) {
        std::free(it->second.back());
        it->second.pop_back();
        cached_ -= it->first;
      }
    return old;
  }
  PoolStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    PoolStats s = stats_;
    s.bytesCached = cached_;
    return s;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t live = stats_.bytesLive;
    stats_ = PoolStats();
    stats_.bytesLive = stats_.bytesPeak = live;
  }

private:
  std::mutex mu_;
  std::map<size_t, std::vector<void *>> free_;
  std::unordered_map<void *, size_t> untyped_;
  size_t cached_ = 0;
  uint64_t limit_ = initialLimit();
  PoolStats stats_;

  static uint64_t initialLimit() {
    // The Python layer passes CPN_POOL_LIMIT down too (setPoolLimit); read
    // here as well for programs that use the runtime alone.
    const char *e = std::getenv("CPN_POOL_LIMIT");
    if (e && *e) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(e, &end, 10);
      if (end && *end == '\0')
        return v;
    }
    return uint64_t(1) << 30;
  }
};

Pool &pool() {
  static Pool *p = new Pool(); // never destroyed: stores may outlive statics
  return *p;
}
} // namespace

Store::Store(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) {
    if (d < 0)
      throw std::invalid_argument("cpnumeric runtime: negative dimension");
    numel_ *= d;
  }
  nbytes_ = static_cast<size_t>(numel_) * dtypeSize(dtype_);
}

Store::Store(DType dtype, std::vector<int64_t> shape, void *data,
             std::shared_ptr<void> owner)
    : Store(dtype, std::move(shape)) {
  data_.store(data, std::memory_order_release);
  owner_ = std::move(owner);
}

void *Store::allocate() {
  std::lock_guard<std::mutex> lock(allocating_);
  void *p = data_.load(std::memory_order_relaxed);
  if (!p && nbytes_ >= kNoReserveBytes &&
      distribution() == Distribution::BlockRows) {
    // A split store: each rank touches its block (and halo rows) only. A
    // reserved mapping of the whole would make the kernel's overcommit
    // check (vm.overcommit_memory 0) refuse an array bigger than the
    // node's memory and swap, which P ranks on P nodes hold. Too big for
    // the pool to keep anyway (CPN_POOL_LIMIT, 1 GiB).
    size_t len = (nbytes_ + kHugeThreshold - 1) & ~(kHugeThreshold - 1);
    void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      throw std::bad_alloc();
    madvise(m, len, MADV_HUGEPAGE);
    mapped_ = len;
    pool().countMapped(int64_t(len));
    p = m;
    data_.store(p, std::memory_order_release);
  }
  if (!p) {
    p = pool().take(nbytes_ ? nbytes_ : 1);
    data_.store(p, std::memory_order_release);
  }
  return p;
}

Store::~Store() {
  if (guard_.load(std::memory_order_acquire) >= 0 || own_ != Own::None)
    releaseGuard(*this); // Guard.cpp: pages writable again, its copy freed
  if (owner_)
    return; // owner_'s deleter releases the memory
  void *p = data_.load(std::memory_order_acquire);
  if (p && mapped_) {
    munmap(p, mapped_);
    pool().countMapped(-int64_t(mapped_));
  } else if (p)
    pool().give(p, nbytes_ ? nbytes_ : 1);
}

void *takeBuffer(size_t nbytes) { return pool().take(nbytes ? nbytes : 1); }
void giveBuffer(void *p, size_t nbytes) { pool().give(p, nbytes ? nbytes : 1); }

void Store::wait() { TaskGraph::global().waitStore(*this); }

namespace {
thread_local const std::vector<StoreRef> *readOnlyInputs = nullptr;
} // namespace

ReadOnlyInputs::ReadOnlyInputs(const std::vector<StoreRef> &stores)
    : previous_(readOnlyInputs) {
  readOnlyInputs = &stores;
}

ReadOnlyInputs::~ReadOnlyInputs() { readOnlyInputs = previous_; }

std::atomic<uint32_t> *readOnlyFacts(const void *data, size_t nbytes) {
  if (!readOnlyInputs)
    return nullptr;
  for (const StoreRef &s : *readOnlyInputs)
    if (s->data() == data && s->nbytes() == nbytes &&
        s->distribution() == Distribution::Replicated)
      return &s->facts;
  return nullptr;
}

void copyBytes(void *dst, const void *src, size_t nbytes) {
  // Parts of at least 1 MiB, cut at 4 KiB so that no two threads share a page.
  constexpr size_t kPart = size_t(1) << 20, kPage = 4096;
  int64_t threads = lib::threadsFor(int64_t(nbytes / kPart), 1);
  if (threads <= 1) {
    if (nbytes)
      std::memcpy(dst, src, nbytes);
    return;
  }
  size_t per = (nbytes / threads + kPage - 1) / kPage * kPage;
  lib::onThreads(threads, [&](int64_t t) {
    size_t lo = std::min(nbytes, size_t(t) * per);
    size_t hi = std::min(nbytes, lo + per);
    if (hi > lo)
      std::memcpy(static_cast<char *>(dst) + lo,
                  static_cast<const char *>(src) + lo, hi - lo);
  });
}

PoolStats poolStats() { return pool().stats(); }
void resetPoolStats() { pool().reset(); }
void trimPool() { pool().trim(); }
uint64_t setPoolLimit(uint64_t bytes) { return pool().setLimit(bytes); }

} // namespace cpnrt

void *cpn_rt_alloc(uint64_t nbytes) {
  return cpnrt::pool().takeUntyped(nbytes ? nbytes : 1);
}

void cpn_rt_free(void *p) {
  if (p)
    cpnrt::pool().giveUntyped(p);
}
