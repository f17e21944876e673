//===- Pages.cpp - pages of their own for NumPy's big arrays --------------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// Store::borrow can guard a NumPy buffer only where its pages hold nothing
// else (Guard.cpp). glibc gives a big array pages of its own only above its
// mmap threshold, which the first free of a big array raises to that
// array's size (up to 32 MiB): after it, most arrays a program makes lie on
// the heap, on pages they share with malloc's headers, and are copied, not
// borrowed. NumPy lets a program choose the allocator of its arrays' data
// (NEP 49); cpnumeric's (python/src/allocator.cpp) gives arrays of
// kMinBytes or more memory from here and leaves smaller ones to NumPy's.
//
// The memory is still malloc's, so that NumPy's speed and resident memory
// stay what they were (freed memory reused warm, the heap shared with the
// rest of the process): whole pages from the first page boundary of a
// malloc'ed block one page bigger. The block's chunk header lies before
// them and the next chunk's after them, and malloc writes no byte of a
// live block: the pages hold nothing else. (posix_memalign would do the
// same, but its request is bigger than what its free gives back, so glibc's
// mmap threshold, raised by the free of a mapped block, never covers the
// next request of the same size: every big array would be fresh pages.) A
// registry of the live ones tells Store::borrow which they are. From 4 MiB
// on they are advised huge, as NumPy's own allocator advises.
//
//===----------------------------------------------------------------------===//

#include "Guard.h"
#include "cpnrt/Store.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>

namespace cpnrt {
namespace pages {
namespace {
constexpr size_t kHugeFrom = size_t(4) << 20;

size_t roundPages(size_t n) {
  size_t p = pageSize();
  return (std::max<size_t>(n, 1) + p - 1) & ~(p - 1);
}

struct Block {
  void *malloced; // what malloc returned
  size_t bytes;   // whole pages from the start
};

struct Registry {
  std::mutex mu;
  std::unordered_map<uintptr_t, Block> live; // by start
  Stats stats;
  bool huge = true;
};

Registry &registry() {
  static Registry *r = [] {
    auto *n = new Registry(); // never destroyed: arrays may outlive statics
    // A fork while another thread holds the lock would leave it held in
    // the child.
    pthread_atfork([] { registry().mu.lock(); }, [] { registry().mu.unlock(); },
                   [] { registry().mu.unlock(); });
    return n;
  }();
  return *r;
}

/// The bytes of the live allocation that starts at p; 0 when none does.
size_t liveBytes(const void *p) {
  if (!p || reinterpret_cast<uintptr_t>(p) % pageSize() != 0)
    return 0;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.live.find(reinterpret_cast<uintptr_t>(p));
  return it == r.live.end() ? 0 : it->second.bytes;
}
} // namespace

void *take(size_t bytes, bool zeroed) {
  if (bytes > size_t(PTRDIFF_MAX) - 2 * pageSize())
    return nullptr;
  size_t len = roundPages(bytes);
  // calloc's zeroing is malloc's own: none for fresh memory.
  void *m =
      zeroed ? std::calloc(1, len + pageSize()) : std::malloc(len + pageSize());
  if (!m)
    return nullptr;
  auto start =
      (reinterpret_cast<uintptr_t>(m) + pageSize() - 1) & ~(pageSize() - 1);
  void *p = reinterpret_cast<void *>(start);
  Registry &r = registry();
  bool huge;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.live[start] = Block{m, len};
    ++r.stats.allocations;
    r.stats.bytesLive += len;
    huge = r.huge;
  }
  if (huge && len >= kHugeFrom)
    madvise(p, len, MADV_HUGEPAGE);
  return p;
}

bool give(void *p) {
  if (!p || reinterpret_cast<uintptr_t>(p) % pageSize() != 0)
    return false;
  Registry &r = registry();
  Block b;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.live.find(reinterpret_cast<uintptr_t>(p));
    if (it == r.live.end())
      return false;
    r.stats.bytesLive -= it->second.bytes;
    b = it->second;
    r.live.erase(it);
  }
  unguardPages(p, b.bytes); // malloc writes freed memory
  std::free(b.malloced);
  return true;
}

void *resize(void *p, size_t bytes) {
  size_t old = liveBytes(p);
  if (!old)
    return nullptr;
  if (roundPages(bytes) == old)
    return p;
  void *q = take(bytes, false);
  if (!q)
    return nullptr; // p is as it was, as realloc leaves it
  std::memcpy(q, p, std::min(old, bytes));
  give(p);
  return q;
}

bool owns(const void *p, size_t bytes) {
  size_t live = liveBytes(p);
  return live && live >= bytes;
}

void setHugePages(bool on) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.huge = on;
}

Stats stats() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.stats;
}

} // namespace pages
} // namespace cpnrt
