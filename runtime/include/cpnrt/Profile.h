//===- Profile.h - a timeline of tasks, kernels, compilations ---*- C++ -*-===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
// Records complete events ("ph": "X") with the thread they ran on, and writes
// them as Chrome / Perfetto trace-event JSON (CPN_PROFILE, cpnumeric.profile).
// Recording is off unless a session is open; an event then costs one clock
// read at each end and one locked append.
//
//===----------------------------------------------------------------------===//

#ifndef CPNRT_PROFILE_H
#define CPNRT_PROFILE_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace cpnrt {

class Profiler {
public:
  static Profiler &global();

  bool enabled() const { return depth_.load(std::memory_order_relaxed) > 0; }

  /// Opens a session (sessions nest); returns the index of its first event.
  size_t begin();
  /// Closes a session, writing its events (from `first` on) to `path`.
  /// Returns false (and writes nothing) if the file cannot be written.
  bool end(size_t first, const std::string &path);

  /// Microseconds since the profiler was created.
  static double nowUs();

  /// Adds one event of `cat` (kernel, task, compile, copy, flush, message) that
  /// started at `startUs` and ends now. `args` is JSON object text or "".
  void complete(std::string name, const char *cat, double startUs,
                std::string args = "");

  size_t eventCount();

private:
  struct Event {
    std::string name, args;
    const char *cat;
    double ts, dur;
    int tid;
  };
  std::mutex mu_;
  std::vector<Event> events_;
  std::vector<std::string> threadNames_; // by tid
  std::atomic<int> depth_{0};
};

/// Times a scope as one event when profiling is on.
class ProfileScope {
public:
  ProfileScope(const char *cat, std::string name, std::string args = "")
      : on_(Profiler::global().enabled()) {
    if (on_) {
      cat_ = cat;
      name_ = std::move(name);
      args_ = std::move(args);
      start_ = Profiler::nowUs();
    }
  }
  ~ProfileScope() {
    if (on_)
      Profiler::global().complete(std::move(name_), cat_, start_,
                                  std::move(args_));
  }
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;

private:
  bool on_;
  const char *cat_ = nullptr;
  std::string name_, args_;
  double start_ = 0;
};

} // namespace cpnrt

#endif // CPNRT_PROFILE_H
