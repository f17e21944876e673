//===- KernelCache.cpp - compiled kernels on disk (CPN_CACHE_DIR) ---------===//
//
// Part of cpnumeric.
//
// Owns the disk cache: the key's salt (this compiler's build, the pipeline,
// LLVM, the host CPU and CPN_OPT_LEVEL), the checks that the directory and
// every file read are this user's and private, writing entries atomically and
// loading them against their content hashes, and the bound on its size (least
// recently used first). Its format and rules are below.
//
// Calls Jit.cpp's loadObject to link a hit; the Engine calls cacheDirUsable,
// loadCached and storeCached.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <filesystem>
#include <link.h>
#include <map>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace cpn {
namespace detail {

// -- the disk cache ----------------------------------------------------------
// An entry is `<key>.o` (the kernel's object code, with the packed wrapper
// `_mlir_kernel`), `<key>.checks` (the MLIR of its np.errstate checks, if it
// has any) and `<key>.trace`: a line with the content hashes of the other
// two, then the trace text, compared on load so that a hash collision can
// never run the wrong code. The key mixes the trace hash with everything
// that changes the code: compiler version and build (its build-id: the
// passes and their order are its code), LLVM version, the JIT target's
// fingerprint (which pipeline variant, the host CPU and features),
// CPN_OPT_LEVEL.
//
// Loading an object runs its code, so the cache trusts only what this user
// wrote: the directory is created 0700 and not used at all if another user
// owns it or others may write to it; every file is opened without following
// links and must be a regular file of this user that no one else may write;
// the object and checks must have the hashes their .trace names. Files are
// written 0600 to a temporary name and renamed, the .trace last: a reader
// that finds a .trace finds the files it names, and files of two writers, a
// torn or a corrupt file are a hash mismatch: a miss, and the entry removed.
//
// The cache is bounded by CPN_CACHE_MAX_BYTES, least recently used first: a
// hit touches the .trace's mtime (relatime and noatime mounts keep no
// useful atime), and `<dir>/usage` keeps the directory's running total, so
// that only a store that takes it over the bound scans the directory
// (noteStored, scanAndEvict).

constexpr const char *kCompilerVersion = "cpnumeric-0.1.0";

static uint64_t fnv(uint64_t h, const std::string &s) {
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}

/// The GNU build-id note of the loaded object that holds `addr` (the
/// linker's hash of its contents), read from memory; empty without one.
static std::string buildIdNote(const void *addr) {
  struct Search {
    uintptr_t addr;
    std::string note;
  } search{reinterpret_cast<uintptr_t>(addr), {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) -> int {
        auto &s = *static_cast<Search *>(data);
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
          holds =
              ph.p_type == PT_LOAD && s.addr >= lo && s.addr < lo + ph.p_memsz;
        }
        if (!holds)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE)
            continue;
          const char *p =
              reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
          const char *end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto *n = reinterpret_cast<const ElfW(Nhdr) *>(p);
            const char *name = p + sizeof(ElfW(Nhdr));
            const char *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end)
              break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0 && n->n_descsz > 0)
              s.note.assign(desc, n->n_descsz);
            p = desc + ((n->n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.note;
}

/// An identity of the shared object this compiler is in: a rebuilt compiler
/// (a changed lowering) never reuses kernels an older build wrote. The
/// linker's build-id (a hash of the object, read from memory in
/// microseconds); without one, a hash of the file (~1 ms for its 4 MB,
/// paid by the first window of every process).
static uint64_t buildId() {
  static uint64_t id = [] {
    uint64_t h = 0xcbf29ce484222325ull;
    std::string note = buildIdNote(reinterpret_cast<void *>(&buildId));
    if (!note.empty())
      return fnv(h, note);
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&buildId), &info) && info.dli_fname)
      if (auto bytes = llvm::MemoryBuffer::getFile(info.dli_fname))
        h ^= llvm::xxh3_64bits((*bytes)->getBuffer());
    return h;
  }();
  return id;
}

static uint64_t computeCacheSalt(int optLevel);

/// The salt of the cache keys at `optLevel` (computed once per level: it
/// reads the build-id and asks the CPU for its features, ~0.1 ms, and
/// every window the memory cache misses looks the disk up).
static uint64_t cacheSalt(int optLevel) {
  static std::mutex mutex;
  static auto &salts = *new std::map<int, uint64_t>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = salts.find(optLevel);
  if (it == salts.end())
    it = salts.emplace(optLevel, computeCacheSalt(optLevel)).first;
  return it->second;
}

static uint64_t computeCacheSalt(int optLevel) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, kCompilerVersion);
  h = fnv(h, std::to_string(buildId()));
  h = fnv(h, LLVM_VERSION_STRING);
  // The lowering pipeline and the machine the code is for.
  h = fnv(h, jitTarget().fingerprint());
  return fnv(h, std::to_string(optLevel));
}

static std::filesystem::path cachePath(const std::string &dir, uint64_t key,
                                       int optLevel, const char *ext) {
  char name[40];
  snprintf(name, sizeof(name), "%016llx%s",
           static_cast<unsigned long long>(key ^ cacheSalt(optLevel)), ext);
  return std::filesystem::path(dir) / name;
}

/// Whether a file or directory is this user's and only this user may write
/// to it: what the disk cache requires of everything it reads code from.
static bool ownedAndPrivate(const struct stat &st) {
  return st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/// Whether `dir` may hold the disk cache, checked once per directory and
/// process: a missing one is created 0700; one that another user owns or
/// that others may write to is refused with one warning on stderr (loading
/// from it would run whatever code they put there), and the process
/// compiles without the disk cache.
bool cacheDirUsable(const std::string &dir) {
  static std::mutex mutex;
  static auto &verdicts = *new std::map<std::string, bool>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = verdicts.find(dir);
  if (it != verdicts.end())
    return it->second;
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (path.filename().empty())
    path = path.parent_path(); // "dir/"
  std::string why;
  std::error_code ec;
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path(), ec);
  struct stat st;
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    why = std::string("it cannot be created (") + strerror(errno) + ")";
  else if (::stat(path.c_str(), &st) != 0)
    why = std::string("it cannot be read (") + strerror(errno) + ")";
  else if (!S_ISDIR(st.st_mode))
    why = "it is not a directory";
  else if (st.st_uid != geteuid())
    why = "another user owns it";
  else if (!ownedAndPrivate(st))
    why = "other users may write to it (chmod 700 it)";
  if (!why.empty())
    fprintf(stderr,
            "cpnumeric: not using the kernel cache %s: %s; compiling "
            "without it\n",
            dir.c_str(), why.c_str());
  return verdicts[dir] = why.empty();
}

namespace {
enum class ReadResult { Ok, Missing, Refused };
} // namespace

/// Reads `path` into `bytes` if it is a regular file that is
/// ownedAndPrivate (opened without following a link, checked on the open
/// file, read into memory: what is checked is what is used).
static ReadResult readOwnFile(const std::filesystem::path &path,
                              std::string &bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? ReadResult::Missing : ReadResult::Refused;
  llvm::scope_exit closeFd([&] { ::close(fd); });
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !ownedAndPrivate(st))
    return ReadResult::Refused;
  bytes.resize(static_cast<size_t>(st.st_size));
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return ReadResult::Refused; // shorter than fstat said
    done += static_cast<size_t>(n);
  }
  return ReadResult::Ok;
}

/// The first line of a `.trace`: the content hashes of the entry's `.o` and
/// `.checks` ("-": none), so that a torn, corrupt or foreign file, or files
/// of two writers, are a miss.
constexpr const char *kEntryMagic = "cpn-cache-entry-1";

static uint64_t contentHash(llvm::StringRef bytes) {
  return llvm::xxh3_64bits(bytes);
}

static std::string entryHeader(uint64_t objectHash, const std::string *checks) {
  char line[80];
  if (checks)
    snprintf(line, sizeof(line), "%s %016llx %016llx\n", kEntryMagic,
             static_cast<unsigned long long>(objectHash),
             static_cast<unsigned long long>(contentHash(*checks)));
  else
    snprintf(line, sizeof(line), "%s %016llx -\n", kEntryMagic,
             static_cast<unsigned long long>(objectHash));
  return line;
}

/// Removes every file of an entry (a bad one, or the least recently used).
static void removeEntry(const std::string &dir, uint64_t key, int optLevel) {
  for (const char *ext : {".trace", ".o", ".checks"})
    ::unlink(cachePath(dir, key, optLevel, ext).c_str());
}

bool cachedEntryPresent(const std::string &dir, uint64_t key, int optLevel) {
  struct stat st;
  return ::stat(cachePath(dir, key, optLevel, ".trace").c_str(), &st) == 0;
}

std::shared_ptr<Executable> loadCached(const std::string &dir, uint64_t key,
                                       int optLevel, const std::string &text) {
  std::filesystem::path meta = cachePath(dir, key, optLevel, ".trace");
  std::string stored;
  ReadResult read = readOwnFile(meta, stored);
  if (read == ReadResult::Missing)
    return nullptr;
  // From here, an entry that fails a check is removed and compiled again.
  auto bad = [&]() -> std::shared_ptr<Executable> {
    removeEntry(dir, key, optLevel);
    return nullptr;
  };
  if (read != ReadResult::Ok)
    return bad();
  llvm::StringRef header, storedText;
  std::tie(header, storedText) = llvm::StringRef(stored).split('\n');
  llvm::SmallVector<llvm::StringRef, 3> fields;
  header.split(fields, ' ');
  uint64_t objectHash = 0, checksHash = 0;
  bool hasChecks = fields.size() == 3 && fields[2] != "-";
  if (fields.size() != 3 || fields[0] != kEntryMagic ||
      fields[1].getAsInteger(16, objectHash) ||
      (hasChecks && fields[2].getAsInteger(16, checksHash)))
    return bad();
  if (storedText != text)
    return nullptr; // another trace under this name: replaced by the store
  std::string object, checksFile;
  if (readOwnFile(cachePath(dir, key, optLevel, ".o"), object) !=
          ReadResult::Ok ||
      contentHash(object) != objectHash)
    return bad();
  std::shared_ptr<LazyChecks> checks;
  if (hasChecks) {
    if (readOwnFile(cachePath(dir, key, optLevel, ".checks"), checksFile) !=
            ReadResult::Ok ||
        contentHash(checksFile) != checksHash)
      return bad();
    checks = std::make_shared<LazyChecks>();
    llvm::StringRef names, source; // the names, on the first line
    std::tie(names, source) = llvm::StringRef(checksFile).split('\n');
    llvm::SmallVector<llvm::StringRef> list;
    names.split(list, ' ', -1, false);
    for (llvm::StringRef n : list)
      checks->names.push_back(n.str());
    checks->source = source.str();
    checks->optLevel = optLevel;
  }
  std::string error;
  std::shared_ptr<Executable> exe =
      loadObject(llvm::MemoryBuffer::getMemBuffer(object, "kernel.o", false),
                 error, std::move(checks));
  if (!exe)
    return bad();
  // Recently used (the mtime: relatime and noatime mounts keep no atimes).
  ::utimensat(AT_FDCWD, meta.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return exe;
}

/// Writes `path` through a temporary file of this process (0600, never an
/// existing one) and a rename, so that readers never see half of it;
/// `parts` are written one after another.
static bool writeAtomically(const std::filesystem::path &path,
                            std::initializer_list<llvm::StringRef> parts) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = path.string() + "." + std::to_string(getpid()) + "." +
                    std::to_string(counter++) + ".tmp";
  int fd = ::open(tmp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  bool ok = true;
  for (llvm::StringRef part : parts)
    for (size_t done = 0; ok && done < part.size();) {
      ssize_t n = ::write(fd, part.data() + done, part.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      ok = n > 0;
      done += ok ? static_cast<size_t>(n) : 0;
    }
  ok &= ::close(fd) == 0;
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0)
    return true;
  ::unlink(tmp.c_str());
  return false;
}

/// Whether `name` is one of the cache's files: `<16 hex digits>.o`,
/// `.trace`, `.checks`, or a temporary file of one (`...<pid>.<n>.tmp`).
static bool isCacheFile(llvm::StringRef name, bool &temporary) {
  if (name.size() < 18 || name[16] != '.' ||
      !llvm::all_of(name.take_front(16), llvm::isHexDigit))
    return false;
  llvm::StringRef ext = name.drop_front(16);
  temporary = ext.ends_with(".tmp");
  return temporary || ext == ".o" || ext == ".trace" || ext == ".checks";
}

/// Sums the bytes of the cache's files in `dir`; above `maxBytes`, removes
/// the least recently used entries (all their files) until at most 90% of
/// it remains. Temporary files an hour old (of a process that died while
/// writing) are removed. Returns the bytes that remain.
static uint64_t scanAndEvict(const std::string &dir, uint64_t maxBytes) {
  struct Entry {
    int64_t usedNs = 0; // the newest mtime of its files
    uint64_t bytes = 0;
    std::vector<std::string> files;
  };
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return 0;
  llvm::scope_exit closeDir([&] { ::closedir(d); });
  int dfd = ::dirfd(d);
  std::map<std::string, Entry> entries;
  uint64_t total = 0;
  time_t now = ::time(nullptr);
  while (struct dirent *e = ::readdir(d)) {
    bool temporary = false;
    struct stat st;
    if (!isCacheFile(e->d_name, temporary) ||
        ::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (temporary && now - st.st_mtime > 3600) {
      ::unlinkat(dfd, e->d_name, 0);
      continue;
    }
    total += static_cast<uint64_t>(st.st_size);
    if (temporary)
      continue;
    Entry &entry = entries[std::string(e->d_name, 16)];
    entry.usedNs = std::max<int64_t>(entry.usedNs,
                                     int64_t(st.st_mtim.tv_sec) * 1000000000 +
                                         st.st_mtim.tv_nsec);
    entry.bytes += static_cast<uint64_t>(st.st_size);
    entry.files.push_back(e->d_name);
  }
  if (total <= maxBytes)
    return total;
  std::vector<Entry *> oldestFirst;
  for (auto &[stem, entry] : entries)
    oldestFirst.push_back(&entry);
  llvm::sort(oldestFirst,
             [](Entry *a, Entry *b) { return a->usedNs < b->usedNs; });
  uint64_t target = maxBytes / 10 * 9;
  for (Entry *entry : oldestFirst) {
    if (total <= target)
      break;
    for (const std::string &file : entry->files)
      ::unlinkat(dfd, file.c_str(), 0);
    total -= entry->bytes;
  }
  return total;
}

/// Adds a stored entry's `bytes` to the directory's running total, kept in
/// `<dir>/usage` ("<bytes> <time of the last scan>") under flock, so that a
/// store costs no directory scan. A total above `maxBytes` (0: no bound), a
/// missing usage file or a day-old scan has this process scanAndEvict (under
/// the lock: one process at a time) and restart the total from the scan.
static void noteStored(const std::string &dir, uint64_t bytes,
                       uint64_t maxBytes) {
  if (maxBytes == 0)
    return;
  std::string path = dir + "/usage";
  int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  llvm::scope_exit closeFd([&] { ::close(fd); }); // unlocks
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !ownedAndPrivate(st) ||
      ::flock(fd, LOCK_EX) != 0)
    return;
  char text[64] = {0};
  ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  unsigned long long total = 0;
  long long scanned = 0;
  long long now = static_cast<long long>(::time(nullptr));
  bool known = n > 0 && sscanf(text, "%llu %lld", &total, &scanned) == 2 &&
               scanned <= now && now - scanned < 24 * 3600;
  total += bytes;
  if (!known || total > maxBytes) {
    total = scanAndEvict(dir, maxBytes);
    scanned = now;
  }
  int len = snprintf(text, sizeof(text), "%llu %lld\n", total, scanned);
  if (::pwrite(fd, text, static_cast<size_t>(len), 0) == len)
    (void)::ftruncate(fd, len);
}

bool storeCached(const std::string &dir, uint64_t maxBytes, uint64_t key,
                 int optLevel, const std::string &text, llvm::StringRef object,
                 const LazyChecks *checks) {
  // In this order: the check functions' names (one line) and their MLIR,
  // the object, then the trace text under the hashes of both: a .trace
  // names only files that are already there.
  std::string checksFile;
  if (checks) {
    for (const std::string &n : checks->names)
      checksFile += n + ' ';
    checksFile += '\n';
    checksFile += checks->source;
    if (!writeAtomically(cachePath(dir, key, optLevel, ".checks"),
                         {checksFile}))
      return false;
  }
  std::string header =
      entryHeader(contentHash(object), checks ? &checksFile : nullptr);
  if (!writeAtomically(cachePath(dir, key, optLevel, ".o"), {object}) ||
      !writeAtomically(cachePath(dir, key, optLevel, ".trace"), {header, text}))
    return false;
  noteStored(dir,
             checksFile.size() + object.size() + header.size() + text.size(),
             maxBytes);
  return true;
}

} // namespace detail
} // namespace cpn
