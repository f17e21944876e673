//===- Guard.cpp - NumPy buffers borrowed under write protection ----------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// np.asarray(a) of a NumPy array that the program still holds gives a store
// over a's buffer, not a copy (Store::borrow). Kernels read it later than the
// call, so a NumPy write in between must not reach them: the buffer's pages
// are write-protected with userfaultfd, and the first write to them, from
// whatever code and thread, and from the kernel too (read(2) into the
// buffer), stops until the guard's thread has copied the elements into
// memory of the store's own, pointed the store there and waited for the
// tasks already reading the old memory; then the pages are writable again
// and the write lands in NumPy's buffer only. The store keeps the values it
// had at the call, as the copy it replaces would; a program that never
// writes the array again never pays for the copy.
//
// Only pages that hold nothing but the buffer are protected: those of
// cpnumeric's allocator for NumPy's arrays (Pages.cpp, wherever malloc put
// them) and glibc's allocations made with mmap (arrays above its mmap
// threshold, 128 KiB to 32 MiB, raised by frees). On a page shared with a
// chunk header, malloc writes it with its arena locked, and the copy waits
// for kernels that may need that arena. Where userfaultfd is not allowed
// (unprivileged, seccomp) or cannot protect unpopulated pages (kernels
// before 6.4), nothing is borrowed: the array is copied, as before.
//
// The guard's thread takes the table's spinlock (never held while writing
// guarded memory) and the pool's lock (never held by a writer of NumPy
// memory), and waits for running tasks, which never write guarded memory
// and never need the writer (the baseline tier runs on the calling thread).
// A forked child protects the pages again with a userfaultfd and a guard
// thread of its own (the parent's do not cover its memory).
//
//===----------------------------------------------------------------------===//

#include "Guard.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif

namespace cpnrt {

namespace {
constexpr int kSlots = 128;
constexpr size_t kHuge = size_t(2) << 20;

/// A guarded range: the pages [begin, end) of `store`'s buffer. state 0:
/// free, 1: guarded, 2: being copied (by a write's fault or unguard).
struct Slot {
  uintptr_t begin = 0, end = 0;
  Store *store = nullptr;
  std::weak_ptr<Store> ref; // for a second borrow of the same elements
  int state = 0;
};
Slot slots[kSlots];
std::atomic_flag tableLock = ATOMIC_FLAG_INIT;

void lockTable() {
  while (tableLock.test_and_set(std::memory_order_acquire))
    sched_yield();
}
void unlockTable() { tableLock.clear(std::memory_order_release); }

std::atomic<uint64_t> nBorrowed{0}, nCopies{0}, nCopyBytes{0};

/// The process's userfaultfd (-1: none, or not allowed) and its thread.
std::mutex setupMutex;
int uffd = -1;
bool setupTried = false, atforkSet = false;
/// In a forked child: copies are mapped, not pooled (the pool's lock may
/// have been another thread's at the fork).
bool inChild = false;

/// The stores the calling thread's GuardedReads count (unguard does not
/// wait for its own thread).
thread_local std::vector<Store *> readingHere;

/// CPN_BORROW=0 turns borrowing off (every held array is copied).
bool borrowingOn() {
  static const bool on = [] {
    const char *e = std::getenv("CPN_BORROW");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
}

void say(const char *msg) {
  ssize_t r = write(2, msg, std::strlen(msg));
  (void)r;
}

/// Write protection of [begin, end) on (wp) or off; off wakes the writers
/// stopped there.
bool protect(uintptr_t begin, uintptr_t end, bool wp) {
  uffdio_writeprotect w;
  w.range.start = begin;
  w.range.len = end - begin;
  w.mode = wp ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
  return ioctl(uffd, UFFDIO_WRITEPROTECT, &w) == 0;
}

/// Registers [begin, end) with the userfaultfd and write-protects it.
bool guardRange(uintptr_t begin, uintptr_t end) {
  uffdio_register reg;
  std::memset(&reg, 0, sizeof(reg));
  reg.range.start = begin;
  reg.range.len = end - begin;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0)
    return false;
  if (protect(begin, end, true))
    return true;
  uffdio_range r;
  r.start = begin;
  r.len = end - begin;
  ioctl(uffd, UFFDIO_UNREGISTER, &r);
  return false;
}

void unregister(uintptr_t begin, uintptr_t end) {
  uffdio_range r;
  r.start = begin;
  r.len = end - begin;
  ioctl(uffd, UFFDIO_UNREGISTER, &r);
}

void monitorLoop();
void forkChild();

/// A userfaultfd that can write-protect unpopulated pages; -1 where the
/// system does not allow one.
int openGuardFd() {
  int fd = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0)
    return -1;
  uffdio_api api;
  std::memset(&api, 0, sizeof(api));
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_UNPOPULATED;
  if (ioctl(fd, UFFDIO_API, &api) != 0 ||
      !(api.features & UFFD_FEATURE_WP_UNPOPULATED)) {
    close(fd);
    return -1;
  }
  return fd;
}

/// The userfaultfd, made at the first borrow with its thread; -1 where the
/// system does not allow it.
int guardFd() {
  std::lock_guard<std::mutex> lock(setupMutex);
  if (setupTried)
    return uffd;
  setupTried = true;
  int fd = openGuardFd();
  if (fd < 0)
    return -1;
  uffd = fd;
  try {
    std::thread(monitorLoop).detach();
  } catch (...) {
    uffd = -1;
    close(fd);
    return -1;
  }
  if (!atforkSet)
    pthread_atfork(nullptr, nullptr, forkChild);
  atforkSet = true;
  return uffd;
}
} // namespace

struct GuardTable {
  /// Copies slot i's buffer into the store's own memory, lifts the
  /// protection (waking the writers stopped on it) and frees the slot; the
  /// caller set its state to 2. `waitReaders`: not in a forked child, where
  /// no task runs.
  static void copyOut(int i, bool child = false) {
    Slot &slot = slots[i]; // fields stay put while state is 2
    Store *s = slot.store;
    void *old = s->data_.load(std::memory_order_seq_cst);
    size_t n = s->nbytes_;
    // In a forked child the pool's lock may have been another thread's at
    // the fork: mapped memory there. One thread copies (the pool of copy
    // threads may be the writer's).
    bool mapped = child || inChild;
    size_t len = n >= kHuge ? (n + kHuge - 1) & ~(kHuge - 1)
                            : (n + pageSize() - 1) & ~(pageSize() - 1);
    void *mine = nullptr;
    if (mapped) {
      mine = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mine == MAP_FAILED)
        mine = nullptr;
    } else {
      try {
        mine = takeBuffer(n);
      } catch (...) {
      }
    }
    if (!mine) {
      say("cpnumeric: out of memory copying a NumPy array lent to "
          "cpnumeric before a write to it\n");
      abort();
    }
    std::memcpy(mine, old, n);
    s->own_ = mapped ? Store::Own::Mapped : Store::Own::Pooled;
    s->ownBytes_ = mapped ? len : n;
    // A task that counts itself a reader from here on finds the new memory;
    // one that counted itself before may hold the old: waited for.
    s->data_.store(mine, std::memory_order_seq_cst);
    s->guard_.store(-1, std::memory_order_seq_cst);
    int32_t own =
        int32_t(std::count(readingHere.begin(), readingHere.end(), s));
    // Without a limit: a kernel may read the buffer for minutes (a big
    // solve); the writer waits as long, as it would for the copy at the
    // call if the program had made one then.
    for (long spins = 0;
         !child && s->guardReaders.load(std::memory_order_seq_cst) > own;
         ++spins) {
      if (spins < 1000) {
        sched_yield();
        continue;
      }
      struct timespec ts = {0, 100000}; // 0.1 ms
      nanosleep(&ts, nullptr);
    }
    // Counted before the writer goes on (it may read stats() next).
    nCopies.fetch_add(1, std::memory_order_relaxed);
    nCopyBytes.fetch_add(n, std::memory_order_relaxed);
    if (!child) {
      protect(slot.begin, slot.end, false);
      unregister(slot.begin, slot.end);
    }
    lockTable();
    slot = Slot();
    unlockTable();
  }

  /// Waits while slot i is being copied for `s`.
  static void waitCopied(int i, Store *s) {
    for (;;) {
      lockTable();
      bool busy = slots[i].state == 2 && slots[i].store == s;
      unlockTable();
      if (!busy)
        return;
      sched_yield();
    }
  }

  static StoreRef borrow(DType dtype, std::vector<int64_t> shape, void *data,
                         std::shared_ptr<void> owner, const void *allocation,
                         size_t allocationBytes) {
    if (!borrowingOn())
      return nullptr;
    const size_t page = pageSize();
    auto a = reinterpret_cast<uintptr_t>(allocation);
    auto d = reinterpret_cast<uintptr_t>(data);
    // A mapping of cpnumeric's NumPy allocator (Pages.cpp), or glibc's
    // chunk made with mmap: its 16-byte header starts a page, its size word
    // has IS_MMAPPED (2) and no other flag, and its size is whole pages that
    // just hold the allocation.
    if (!pages::owns(allocation, allocationBytes)) {
      constexpr size_t kHeader = 2 * sizeof(size_t);
      if (a % page != kHeader)
        return nullptr;
      size_t word = reinterpret_cast<const size_t *>(allocation)[-1];
      size_t chunk = word & ~size_t(7);
      if ((word & 7) != 2 || chunk % page != 0 ||
          chunk < allocationBytes + kHeader ||
          chunk > allocationBytes + kHeader + page + 32)
        return nullptr;
    }
    auto store = std::make_shared<Store>(dtype, std::move(shape), data,
                                         std::move(owner));
    size_t n = store->nbytes();
    if (n == 0 || d < a || d + n > a + allocationBytes || guardFd() < 0)
      return nullptr;
    uintptr_t begin = d & ~(page - 1);
    uintptr_t end = (d + n + page - 1) & ~(page - 1);
    lockTable();
    int free = -1;
    StoreRef same;
    bool matches = false;
    for (int i = 0; i < kSlots; ++i) {
      if (slots[i].state == 0) {
        if (free < 0)
          free = i;
      } else if (slots[i].begin < end && begin < slots[i].end) {
        // Pages another store guards: the same elements again (a loop that
        // passes one NumPy array to each call) share its store, which no
        // one writes; others are copied.
        if (slots[i].state == 1)
          same = slots[i].ref.lock();
        matches = same && same->data_.load() == data &&
                  same->dtype() == dtype && same->shape() == store->shape() &&
                  same->guarded();
        if (matches) // before anyone can unguard it (under the lock)
          same->borrowShared_.store(true, std::memory_order_release);
        free = -2;
        break;
      }
    }
    if (free < 0) {
      unlockTable();
      // Dropped outside the lock (the last reference runs release).
      return matches ? same : nullptr;
    }
    if (!guardRange(begin, end)) {
      unlockTable();
      return nullptr;
    }
    slots[free] = Slot{begin, end, store.get(), store, 1};
    store->guard_.store(free, std::memory_order_seq_cst);
    unlockTable();
    nBorrowed.fetch_add(1, std::memory_order_relaxed);
    return store;
  }

  static void unguard(Store &s) {
    lockTable();
    int i = s.guard_.load(std::memory_order_seq_cst);
    if (i < 0) {
      unlockTable();
      return;
    }
    if (slots[i].state == 2) { // a write's fault copies it
      unlockTable();
      waitCopied(i, &s);
      return;
    }
    slots[i].state = 2;
    unlockTable();
    copyOut(i);
  }

  /// Copies out every store guarding pages of [begin, end), which are
  /// about to be freed (pages::give): malloc writes freed memory with its
  /// arena locked.
  static void unguardRange(uintptr_t begin, uintptr_t end) {
    for (;;) {
      lockTable();
      int hit = -1;
      for (int i = 0; i < kSlots && hit < 0; ++i)
        if (slots[i].state != 0 && slots[i].begin < end && begin < slots[i].end)
          hit = i;
      if (hit < 0) {
        unlockTable();
        return;
      }
      Store *st = slots[hit].store;
      if (slots[hit].state == 2) { // being copied: wait, then look again
        unlockTable();
        waitCopied(hit, st);
        continue;
      }
      slots[hit].state = 2;
      unlockTable();
      copyOut(hit);
    }
  }

  static void release(Store &s) {
    // Its slot by the store, not by guard_: a copy in progress has cleared
    // guard_ and still uses the store until it frees the slot.
    lockTable();
    int i = -1;
    for (int k = 0; k < kSlots && i < 0; ++k)
      if (slots[k].state != 0 && slots[k].store == &s)
        i = k;
    if (i >= 0 && slots[i].state == 1) {
      protect(slots[i].begin, slots[i].end, false);
      unregister(slots[i].begin, slots[i].end);
      slots[i] = Slot();
      s.guard_.store(-1, std::memory_order_seq_cst);
      unlockTable();
    } else {
      unlockTable();
      if (i >= 0)
        waitCopied(i, &s);
    }
    void *p = s.data_.load(std::memory_order_seq_cst);
    if (s.own_ == Store::Own::Pooled)
      giveBuffer(p, s.ownBytes_);
    else if (s.own_ == Store::Own::Mapped)
      munmap(p, s.ownBytes_);
    s.own_ = Store::Own::None;
    s.data_.store(nullptr, std::memory_order_seq_cst);
  }

  /// A write stopped at `addr`: copy its store, or wait for the copy in
  /// progress; the pages are writable again after either.
  static void fault(uintptr_t addr) {
    lockTable();
    int hit = -1;
    for (int i = 0; i < kSlots && hit < 0; ++i)
      if (slots[i].state != 0 && slots[i].begin <= addr && addr < slots[i].end)
        hit = i;
    if (hit >= 0 && slots[hit].state == 1) {
      slots[hit].state = 2;
      unlockTable();
      copyOut(hit);
      return;
    }
    Store *s = hit >= 0 ? slots[hit].store : nullptr;
    unlockTable();
    if (s) {
      waitCopied(hit, s); // its copy lifts the protection, waking the writer
      return;
    }
    // No slot: released meanwhile (writable again), or pages that moved
    // (ndarray.resize(refcheck=False) remapped the buffer under a value
    // that reads it): protection off for the page, which wakes the writer.
    uintptr_t page = addr & ~(pageSize() - 1);
    if (!protect(page, page + pageSize(), false)) {
      uffdio_range r; // not registered now: wake the writer, if it waits
      r.start = page;
      r.len = pageSize();
      ioctl(uffd, UFFDIO_WAKE, &r);
    }
  }

  /// In a forked child: its pages lost the protection (userfaultfd's
  /// registrations are the parent's) and no thread answers faults. The
  /// child makes a userfaultfd and a guard thread of its own and protects
  /// the same pages again (still shared with the parent until written);
  /// where it cannot, every guarded store takes its copy now.
  static void child() {
    tableLock.clear();
    inChild = true;
    // Readers counted by the parent's threads (a to_numpy copy without the
    // GIL) do not exist here.
    for (int i = 0; i < kSlots; ++i)
      if (slots[i].state != 0)
        slots[i].store->guardReaders.store(int32_t(std::count(
            readingHere.begin(), readingHere.end(), slots[i].store)));
    if (uffd >= 0)
      close(uffd);
    uffd = -1;
    new (&setupMutex) std::mutex();
    setupTried = false;
    bool any = false;
    for (int i = 0; i < kSlots; ++i)
      any = any || slots[i].state != 0;
    if (!any)
      return;
    bool fd = guardFd() >= 0;
    for (int i = 0; i < kSlots; ++i) {
      if (slots[i].state == 1 && fd && guardRange(slots[i].begin, slots[i].end))
        continue;
      if (slots[i].state != 0) {
        slots[i].state = 2;
        copyOut(i, true);
      }
    }
  }
};

namespace {
void monitorLoop() {
  pthread_setname_np(pthread_self(), "cpn-guard");
  const int fd = uffd;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
      return;
    uffd_msg msgs[16];
    ssize_t got = read(fd, msgs, sizeof(msgs));
    if (got < 0)
      continue; // EAGAIN: another reader took it
    for (ssize_t k = 0; k < got / ssize_t(sizeof(uffd_msg)); ++k)
      if (msgs[k].event == UFFD_EVENT_PAGEFAULT)
        GuardTable::fault(uintptr_t(msgs[k].arg.pagefault.address));
  }
}

void forkChild() { GuardTable::child(); }
} // namespace

StoreRef Store::borrow(DType dtype, std::vector<int64_t> shape, void *data,
                       std::shared_ptr<void> owner, const void *allocation,
                       size_t allocationBytes) {
  return GuardTable::borrow(dtype, std::move(shape), data, std::move(owner),
                            allocation, allocationBytes);
}

void Store::unguard() {
  if (guarded())
    GuardTable::unguard(*this);
}

void releaseGuard(Store &store) { GuardTable::release(store); }

size_t pageSize() {
  static const size_t p = size_t(sysconf(_SC_PAGESIZE));
  return p;
}

void unguardPages(const void *begin, size_t bytes) {
  auto b = reinterpret_cast<uintptr_t>(begin);
  GuardTable::unguardRange(b, b + bytes);
}

bool borrowingAvailable() { return borrowingOn() && guardFd() >= 0; }

bool borrowingPossible() {
  static const bool possible = [] {
    if (!borrowingOn())
      return false;
    {
      std::lock_guard<std::mutex> lock(setupMutex);
      if (setupTried)
        return uffd >= 0;
    }
    int fd = openGuardFd();
    if (fd >= 0)
      close(fd);
    return fd >= 0;
  }();
  return possible;
}

GuardedReads::GuardedReads(const std::vector<StoreRef> &stores) {
  for (const StoreRef &s : stores)
    if (s && s->guarded()) {
      s->guardReaders.fetch_add(1, std::memory_order_seq_cst);
      counted_.push_back(s.get());
      readingHere.push_back(s.get());
    }
  // The count before any later load of data() (an acquire load).
  if (!counted_.empty())
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

GuardedReads::~GuardedReads() {
  for (Store *s : counted_) {
    s->guardReaders.fetch_sub(1, std::memory_order_seq_cst);
    auto it = std::find(readingHere.begin(), readingHere.end(), s);
    if (it != readingHere.end())
      readingHere.erase(it);
  }
}

GuardStats guardStats() {
  return {nBorrowed.load(), nCopies.load(), nCopyBytes.load()};
}

void resetGuardStats() {
  nBorrowed = 0;
  nCopies = 0;
  nCopyBytes = 0;
}

} // namespace cpnrt
