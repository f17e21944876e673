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
#include "cpnrt/Lapack.h"
#include "cpnrt/Profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <cstdio>

namespace cpn {
namespace {
/// What a kernel of the trace calls, in one pass: BLAS/LAPACK (a
/// matrix-matrix product of 16+ rows and columns, or a library call that is
/// not one of the runtime's own algorithms; matrix-vector products are left
/// out: they are short, and the loops around them want the threads awake,
/// logistic regression measured 5-10% slower), the runtime's algorithms, and
/// loops that run on OpenMP's threads (an op other than a library call or
/// view over at least the 32768 iterations from which
/// cpn-parallel-outer-loops makes a nest parallel: its min-work).
struct Calls {
  bool blas = false, algorithms = false, loops = false;
  explicit Calls(const Trace &trace) {
    auto big = [](const std::vector<int64_t> &shape) {
      return numel(shape) >= 32768;
    };
    for (const TraceOp &op : trace.ops()) {
      if (op.name == "libcall") {
        (cpnrt::isRuntimeAlgorithm(op.sattr) ? algorithms : blas) = true;
        continue;
      }
      if (op.name == "matmul" && op.shape.size() == 2 && op.shape[0] >= 16 &&
          op.shape[1] >= 16)
        blas = true;
      if (op.name == "view" || loops)
        continue;
      loops = big(op.shape) || llvm::any_of(op.operands, [&](int32_t r) {
                return big(r >= 0 ? trace.ops()[r].shape
                                  : trace.inputs()[-r - 1]->shape);
              });
    }
  }
};
} // namespace

void detail::setCallFacts(Executable &exe, const Trace &trace) {
  // A kernel with BLAS calls, or with library calls and no parallel loops,
  // lets OpenMP's idle threads sleep at once (see runKernel): otherwise they
  // spin beside OpenBLAS's or the runtime's threads (a scatter's kernel
  // spent a quarter of its samples in their sched_yield). A kernel with the
  // runtime's algorithms (sorts, gathers, scans) and parallel loops runs the
  // algorithms' parts on the loops' OpenMP threads, which stay awake for
  // both: with the threads sleeping after each loop, each loop waited ~0.14
  // ms for an idle vCPU to wake (a unique() of 10^5 elements, one sort and
  // four loops: 1.0 ms against 0.43 ms for the sort alone).
  Calls calls(trace);
  bool loops = calls.algorithms && calls.loops;
  exe.callsLibrary = calls.blas || (calls.algorithms && !loops);
  exe.callsAlgorithms = !calls.blas && loops;
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
