//===- EngineInternal.h - shared by the Engine's files ----------*- C++ -*-===//
//
// Part of cpnumeric. Private to lib/Engine.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_ENGINE_ENGINEINTERNAL_H
#define CPN_LIB_ENGINE_ENGINEINTERNAL_H

#include "cpn/Engine/Engine.h"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace cpn {
/// What compiling a window gave (compileWindow), for Engine::recordCompile.
struct CompileResult {
  std::shared_ptr<Executable> exe;
  double seconds = 0, mlirSeconds = 0;
  size_t ops = 0;
  bool diskWritten = false;
};
} // namespace cpn

namespace cpn::detail {
/// The kernels of this process by window key (the Engine's thread only).
std::unordered_map<uint64_t, std::shared_ptr<Executable>> &kernelCache();
/// Compiles a window (any thread; one compile at a time in the process) and,
/// when `text` (its diskCacheText, made when it was flushed: the text marks
/// results dead by then) is not empty, writes it to the disk cache; `what`
/// begins its profile event's name. Throws when the compiler fails.
CompileResult compileWindow(const Trace &trace,
                            const std::vector<int32_t> &outputs,
                            const std::vector<int32_t> &donors,
                            const CompilerOptions &options, uint64_t key,
                            const std::string &text, const char *what);
/// The disk cache's check text of a window: its trace (which results are
/// dead) and which outputs go where.
std::string cacheText(const Trace &trace, const std::vector<int32_t> &outputs,
                      const std::vector<int32_t> &donors);
/// cacheText when `options`' disk cache is on and usable, else "".
std::string diskCacheText(const Trace &trace,
                          const std::vector<int32_t> &outputs,
                          const std::vector<int32_t> &donors,
                          const CompilerOptions &options);
/// "%016llx" of a key.
std::string keyHex(uint64_t key);
/// Sets what a kernel of `trace` calls (Executable::callsLibrary,
/// callsRuntime) on every executable the Engine obtains, compiled or loaded.
void setCallFacts(Executable &exe, const Trace &trace);

/// Submits `exe` on the runtime's task graph (RunKernel.cpp): it reads
/// `reads` and writes `outArgs` (its arguments, in that order); `writes` are
/// every store it writes (outArgs and donated inputs); `fp`: its checked
/// ops' sites (null: no status words); `readRanges`, `writeRanges`: the
/// bytes of each of `reads` (`writes`) it reads (writes) (cpnrt::Task's;
/// empty: every store whole).
/// `fpCarry`: status words shared by the kernels of one window (a
/// partitioned window's interior and border): each ORs its words in and
/// only the one with `fpReport` (the last to run) reports them, once.
void runKernel(const std::shared_ptr<Executable> &exe,
               std::vector<cpnrt::StoreRef> reads,
               std::vector<cpnrt::StoreRef> outArgs,
               std::vector<cpnrt::StoreRef> writes,
               std::shared_ptr<const FpSites> fp,
               std::vector<size_t> byteOffsets = {},
               std::vector<std::pair<size_t, size_t>> readRanges = {},
               std::vector<std::pair<size_t, size_t>> writeRanges = {},
               std::shared_ptr<std::vector<int32_t>> fpCarry = nullptr,
               bool fpReport = true);

/// Whether the compiler thread is compiling a window now
/// (BackgroundCompile.cpp): kernels then let their idle OpenMP threads sleep
/// at once, for the compile and the windows run op by op meanwhile.
bool backgroundCompileRunning();

/// Queues a report for each site of `fp` whose bits are set in `status` (a
/// kernel's fp status words, or the baseline tier's), for takeFpReports.
void reportFpErrors(const FpSites &fp, const std::vector<int32_t> &status);

/// Holds the engine's gate for a scope (Engine::setGateWaiter): record,
/// flush, @jit captures and the collection of background compiles.
struct EngineGate {
  EngineGate();
  ~EngineGate();
  EngineGate(const EngineGate &) = delete;
  EngineGate &operator=(const EngineGate &) = delete;
};
} // namespace cpn::detail

#endif // CPN_LIB_ENGINE_ENGINEINTERNAL_H
