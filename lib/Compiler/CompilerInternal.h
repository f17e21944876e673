//===- CompilerInternal.h - the compiler's units, to each other -*- C++ -*-===//
//
// Part of cpnumeric.
//
// Private to lib/Compiler. A flush turns the current trace into a `func.func
// @kernel` whose arguments are one memref per input store and one per live
// result (bare pointers at the ABI level), runs the lowering pipeline, compiles
// the LLVM IR for the host into an object file, links it with ORC's LLJIT (the
// same path loads objects from the disk cache), caches the executable by the
// trace's hash and submits one task to the runtime. A cache hit never touches
// MLIR.
//
// The units, each a file: TraceImport (trace to cpn module), Lowering (the pass
// pipeline), CodeGen (LLVM optimization and objects), Jit (ORC and lazily
// compiled checks), KernelCache (the disk cache), Reports (cost, summary.txt,
// stage text) and Compiler (compile, compileObject, donations). This header
// declares what one of them defines and another calls; the rest stays
// file-local. What the Engine (lib/Engine) calls is in cpn/Compiler/Kernel.h.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_COMPILER_COMPILERINTERNAL_H
#define CPN_LIB_COMPILER_COMPILERINTERNAL_H

#include "cpn/Compiler/Compiler.h"
#include "cpn/Compiler/Kernel.h"
#include "cpn/Compiler/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class MemoryBuffer;
class Module;
class TargetMachine;
} // namespace llvm

namespace cpn {

namespace detail {

// -- TraceImport.cpp ----------------------------------------------------------

std::unique_ptr<mlir::MLIRContext> newContext();
mlir::OwningOpRef<mlir::ModuleOp>
buildModule(const Trace &trace, const std::vector<int32_t> &outputs,
            const std::vector<int32_t> &donors,
            const ShapeSymbols &symbols = {}, bool fpStatus = true);

/// cpn-localize on `module` for rank `rank` of `ranks` (Simulate.cpp): the
/// rank's program, its arguments' rows in `cpn.rows`.
void localizeModule(mlir::ModuleOp module, int64_t ranks, int64_t rank,
                    int64_t threshold, int64_t part = 0);

// -- Lowering.cpp -------------------------------------------------------------

std::string printOp(mlir::Operation *op);
void writeFile(const std::filesystem::path &p, const std::string &text);
std::string fileSafe(std::string s);

/// Called with a stage's name and the module once the stage has run.
using StageHook = std::function<void(const std::string &, mlir::ModuleOp)>;

/// The pass that outlines the error checks' exact classification: `lower`'s
/// `afterChecks` runs right after it.
constexpr const char *kFpFlagsPass = "cpn-lower-fp-flags";

/// Runs the lowering pipeline with `options` (a target's; its stopAfter:
/// the last stage to run, empty for all).
void lower(mlir::ModuleOp module, const std::filesystem::path &dumpDir,
           int &fileNo, const mlir::cpn::LoweringOptions &options,
           const StageHook &afterStage = nullptr,
           const std::function<void(mlir::ModuleOp)> &afterChecks = nullptr);

// -- the host's libraries (CodeGen.cpp, Jit.cpp, Compiler.cpp) ----------------

constexpr const char *kOpenMPRuntime = "/usr/lib/llvm-22/lib/libomp.so.5";
constexpr const char *kVectorMath = "/lib/x86_64-linux-gnu/libmvec.so.1";

// -- CodeGen.cpp --------------------------------------------------------------

std::unique_ptr<llvm::TargetMachine> makeHostTargetMachine(bool pic);
/// The host's target machine (CPU and features), kept for the process, so
/// that the vectorizers see the real vector width; without it LLVM's cost
/// model vectorizes almost nothing. `pic`: position-independent code, for
/// shared objects (cpnc). For the compiling thread (others make their own).
llvm::TargetMachine *hostTargetMachine(bool pic = false);
void optimizeModule(llvm::Module &m, int optLevel,
                    llvm::TargetMachine *tm = nullptr);
std::vector<char> emitObject(llvm::Module &m, bool pic = false,
                             llvm::TargetMachine *tm = nullptr);
std::string llvmText(const llvm::Module &m);
std::vector<llvm::StringRef> unbundleObjects(llvm::StringRef data);
std::vector<char>
optimizeAndEmit(llvm::Module &m, int optLevel, std::string *llText,
                std::vector<std::string> *scalarCalls = nullptr);
std::unique_ptr<llvm::Module> toLLVM(mlir::ModuleOp module,
                                     llvm::LLVMContext &ctx,
                                     const LazyChecks *checks = nullptr);
std::unique_ptr<llvm::Module>
toOptimizedLLVM(mlir::ModuleOp module, llvm::LLVMContext &ctx, int optLevel);

// -- Reports.cpp (LLVM IR) ----------------------------------------------------

/// The calls to scalar math functions (libm's exp, pow, sin, ..., and
/// fmod's frem) left inside loops of an optimized module, as "name in
/// function" (a vectorized loop calls libmvec's _ZGV variants instead).
std::vector<std::string> scalarMathInLoops(const llvm::Module &m);
/// Appends summary.txt's line about them (none: says so).
void appendScalarMath(const std::filesystem::path &summary,
                      const std::vector<std::string> &calls);

// -- Jit.cpp ------------------------------------------------------------------

std::shared_ptr<Executable>
loadObject(std::unique_ptr<llvm::MemoryBuffer> buffer, std::string &error,
           std::shared_ptr<LazyChecks> checks = nullptr);
bool extractChecks(mlir::ModuleOp module, LazyChecks &lc);
void stubChecks(llvm::Module &m, const LazyChecks &lc);

// -- KernelCache.cpp: cacheDirUsable, cachedEntryPresent, loadCached and
// storeCached are in Kernel.h (the Engine calls them).

// -- Reports.cpp --------------------------------------------------------------

StageHook summaryWriter(const Trace &trace, const std::vector<int32_t> &outputs,
                        const std::vector<int32_t> &donors,
                        const std::filesystem::path &dumpDir);

// -- Compiler.cpp: compile and openmpRuntime are in Kernel.h.

} // namespace detail
} // namespace cpn

#endif // CPN_LIB_COMPILER_COMPILERINTERNAL_H
