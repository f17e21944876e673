//===- Kernels.cpp - a window's kernel: keys, the memory cache, compiles --===//
//
// Part of cpnumeric. Private to lib/Engine. What the Engine and the compiler
// thread (BackgroundCompile.cpp) share about one window's kernel: the check
// text of its disk cache entry, the process's kernels by key, the compile
// (with its disk cache write and profile event) and the facts the runtime
// needs about what a kernel calls.
//
//===----------------------------------------------------------------------===//

#include "EngineInternal.h"
#include "cpn/Compiler/Kernel.h"
#include "cpnrt/Profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdio>

namespace cpn {
namespace {
/// Whether the trace has a matrix-matrix product (a BLAS gemm of 16+ rows
/// and columns) or a runtime library call (LAPACK, sorting, gathers, which
/// start threads of their own): its kernel lets OpenMP's idle threads sleep
/// at once (see runKernel), or they spin beside the library's threads (a
/// scatter's kernel spent a quarter of its samples in their sched_yield).
/// Matrix-vector products are left out: they are short, and the loops
/// around them want the threads awake (logistic regression measured 5-10%
/// slower).
bool callsLibrary(const Trace &trace) {
  for (const TraceOp &op : trace.ops()) {
    if (op.name == "libcall")
      return true;
    if (op.name == "matmul" && op.shape.size() == 2 && op.shape[0] >= 16 &&
        op.shape[1] >= 16)
      return true;
  }
  return false;
}
} // namespace

void detail::setCallFacts(Executable &exe, const Trace &trace) {
  exe.callsLibrary = callsLibrary(trace);
  exe.callsRuntime = llvm::any_of(trace.ops(), [](const TraceOp &op) {
    return op.name == "libcall" || op.name == "matmul";
  });
}

std::string detail::cacheText(const Trace &trace,
                              const std::vector<int32_t> &outputs,
                              const std::vector<int32_t> &donors) {
  std::string text = trace.str() + "\noutputs:";
  for (size_t j = 0; j < outputs.size(); ++j)
    text += " " + std::to_string(outputs[j]) + ":" + std::to_string(donors[j]);
  for (size_t j = outputs.size(); j < donors.size(); ++j)
    text += " updated:" + std::to_string(donors[j]);
  return text;
}

std::string detail::diskCacheText(const Trace &trace,
                                  const std::vector<int32_t> &outputs,
                                  const std::vector<int32_t> &donors,
                                  const CompilerOptions &options) {
  if (options.cacheDir.empty() || !cacheDirUsable(options.cacheDir))
    return "";
  return cacheText(trace, outputs, donors);
}

std::string detail::keyHex(uint64_t key) {
  char text[24];
  snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(key));
  return text;
}

std::unordered_map<uint64_t, std::shared_ptr<Executable>> &
detail::kernelCache() {
  // Leaked on purpose: tearing down JIT'd code during static destruction,
  // after the libraries it links against may be gone, hangs in ORC.
  static auto &cache =
      *new std::unordered_map<uint64_t, std::shared_ptr<Executable>>();
  return cache;
}

CompileResult detail::compileWindow(const Trace &trace,
                                    const std::vector<int32_t> &outputs,
                                    const std::vector<int32_t> &donors,
                                    const CompilerOptions &options,
                                    uint64_t key, const std::string &text,
                                    const char *what) {
  // The whole compile and its disk-cache write, timed once the lock is ours
  // (not the wait for the other thread's compile).
  auto lock = lockCompiler();
  auto t0 = std::chrono::steady_clock::now();
  CompileResult r;
  r.ops = trace.size();
  std::string name = keyHex(key);
  cpnrt::ProfileScope scope("compile", what + name,
                            "{\"ops\": " + std::to_string(trace.size()) + "}");
  r.exe = compile(trace, outputs, donors, options, key, r.mlirSeconds);
  r.exe->name = "kernel " + name;
  setCallFacts(*r.exe, trace);
  if (!text.empty())
    r.diskWritten = storeCached(
        options.cacheDir, options.cacheMaxBytes, key, options.optLevel, text,
        llvm::StringRef(r.exe->object.data(), r.exe->object.size()),
        r.exe->checks.get());
  std::vector<char>().swap(r.exe->object); // written; not kept in memory
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return r;
}

} // namespace cpn
