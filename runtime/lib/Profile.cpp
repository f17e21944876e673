//===- Profile.cpp - a timeline of tasks, kernels and compilations --------===//
//
// Part of cpnumeric's runtime (libcpnrt).
//
//===----------------------------------------------------------------------===//

#include "cpnrt/Profile.h"
#include "cpnrt/Comm.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <pthread.h>
#include <unistd.h>

namespace cpnrt {
namespace {
const auto kEpoch = std::chrono::steady_clock::now();

/// A small number per thread, in order of first event, and its name.
int threadId(std::vector<std::string> &names) {
  thread_local int tid = -1;
  if (tid < 0) {
    tid = static_cast<int>(names.size());
    char buf[32] = {0};
    pthread_getname_np(pthread_self(), buf, sizeof(buf));
    std::string name = buf[0] ? buf : "thread";
    bool main = gettid() == getpid();
    names.push_back(main ? "main" : name + " " + std::to_string(tid));
  }
  return tid;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      snprintf(esc, sizeof(esc), "\\u%04x", c);
      out += esc;
    } else
      out += c;
  }
  return out + "\"";
}
} // namespace

Profiler &Profiler::global() {
  static Profiler *p = new Profiler(); // leaked: used by exiting threads
  return *p;
}

double Profiler::nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - kEpoch)
      .count();
}

size_t Profiler::begin() {
  std::lock_guard<std::mutex> lock(mu_);
  depth_.fetch_add(1);
  return events_.size();
}

void Profiler::complete(std::string name, const char *cat, double startUs,
                        std::string args) {
  double end = nowUs();
  std::lock_guard<std::mutex> lock(mu_);
  if (!enabled())
    return;
  int tid = threadId(threadNames_);
  events_.push_back(
      {std::move(name), std::move(args), cat, startUs, end - startUs, tid});
}

size_t Profiler::eventCount() {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}

bool Profiler::end(size_t first, const std::string &path) {
  std::lock_guard<std::mutex> lock(mu_);
  int pid = static_cast<int>(getpid());
  std::string tmp = path + ".tmp";
  bool ok;
  {
    std::ofstream f(tmp);
    // cpnEpochUs: the steady clock (CLOCK_MONOTONIC, one per machine) at
    // ts 0, so that the files of several ranks merge onto one timeline
    // (cpnumeric.merge_profiles).
    char epoch[64];
    snprintf(
        epoch, sizeof(epoch), "%.3f",
        std::chrono::duration<double, std::micro>(kEpoch.time_since_epoch())
            .count());
    std::string process = "cpnumeric";
    if (comm::active())
      process += " rank " + std::to_string(comm::rank()) + " of " +
                 std::to_string(comm::size());
    f << "{\"displayTimeUnit\": \"ms\", \"cpnEpochUs\": " << epoch;
    if (comm::active())
      f << ", \"cpnRank\": " << comm::rank();
    f << ", \"traceEvents\": [\n";
    f << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " << pid
      << ", \"tid\": 0, \"args\": {\"name\": " << quoted(process) << "}}";
    for (size_t t = 0; t < threadNames_.size(); ++t)
      f << ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << pid
        << ", \"tid\": " << t
        << ", \"args\": {\"name\": " << quoted(threadNames_[t]) << "}}";
    char num[64];
    for (size_t i = first; i < events_.size(); ++i) {
      const Event &e = events_[i];
      snprintf(num, sizeof(num), "%.3f, \"dur\": %.3f", e.ts, e.dur);
      f << ",\n{\"name\": " << quoted(e.name) << ", \"cat\": \"" << e.cat
        << "\", \"ph\": \"X\", \"ts\": " << num << ", \"pid\": " << pid
        << ", \"tid\": " << e.tid;
      if (!e.args.empty())
        f << ", \"args\": " << e.args;
      f << "}";
    }
    f << "\n]}\n";
    ok = static_cast<bool>(f);
  }
  if (depth_.fetch_sub(1) == 1)
    events_.clear();
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

} // namespace cpnrt
