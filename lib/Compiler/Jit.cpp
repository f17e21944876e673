//===- Jit.cpp - the ORC JIT and lazily compiled fp checks ----------------===//
//
// Part of cpnumeric.
//
// Owns the process's one LLJIT and what kernels link against there (the
// runtime's entry points, libmlir_c_runner_utils, libmvec and libomp), loading
// a kernel's objects into a JITDylib of their own (loadObject), and the
// np.errstate checks compiled only on first use: extractChecks moves them out
// of the MLIR module, stubChecks gives the LLVM module stubs that call
// lazyCheck, and compileChecks compiles them with a context and target machine
// of their own (counted by checkCompileStats).
//
// Calls the runtime, TraceImport.cpp (newContext),
// CodeGen.cpp (target machines, optimizeModule, emitObject, unbundleObjects)
// and Compiler.cpp (openmpRuntime).
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpnrt/Blas.h"
#include "cpnrt/Lapack.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Store.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <chrono>
#include <filesystem>

using namespace mlir;

namespace cpn {
namespace detail {

static void *lazyCheck(void *handle, int32_t index);

/// The runtime's entry points kernels call: Python loads libcpnrt with
/// RTLD_LOCAL, so the JIT cannot find them by a process-wide lookup.
static llvm::orc::SymbolMap
runtimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap map;
  auto add = [&](const char *name, auto *fn) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                           llvm::JITSymbolFlags::Exported};
  };
  add("cpn_lazy_check", &lazyCheck);
  add("cpn_gemm_f64", &cpn_gemm_f64);
  add("cpn_gemm_f32", &cpn_gemm_f32);
  size_t nLib = 0;
  const cpn_lib_entry *lib = cpn_lib_functions(&nLib);
  for (size_t i = 0; i < nLib; ++i)
    add(lib[i].name, lib[i].fn);
  // Kernel temporaries come from the runtime's pool.
  add("_mlir_memref_to_llvm_alloc", &cpn_rt_alloc);
  add("_mlir_memref_to_llvm_free", &cpn_rt_free);
  return map;
}

/// Libraries compiled kernels link against (found by path at JIT time): the
/// JIT target's, with its OpenMP runtime loaded into the process first.
static std::vector<std::string> kernelLibraries() {
  if (!openmpRuntime())
    throw std::runtime_error(std::string("cpnumeric: cannot load the OpenMP "
                                         "runtime ") +
                             kOpenMPRuntime + " (install libomp-22-dev)");
  return jitTarget().libraries();
}

/// The process's one LLJIT, created on first use and never destroyed (tearing
/// JIT'd code down during static destruction, after the libraries it links
/// against may be gone, hangs in ORC). Its main JITDylib resolves what kernels
/// call.
static llvm::orc::LLJIT *sharedJit(std::string &error) {
  static llvm::orc::LLJIT *jit = [&]() -> llvm::orc::LLJIT * {
    auto fail = [&](llvm::Error e) -> llvm::orc::LLJIT * {
      llvm::raw_string_ostream os(error);
      os << e;
      return nullptr;
    };
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb)
      return fail(jtmb.takeError());
    auto made = llvm::orc::LLJITBuilder()
                    .setJITTargetMachineBuilder(std::move(*jtmb))
                    .create();
    if (!made)
      return fail(made.takeError());
    llvm::orc::LLJIT *j = made->release();
    auto &jd = j->getMainJITDylib();
    const llvm::DataLayout &dl = j->getDataLayout();
    llvm::orc::MangleAndInterner interner(j->getExecutionSession(), dl);
    if (llvm::Error e =
            jd.define(llvm::orc::absoluteSymbols(runtimeSymbols(interner))))
      return fail(std::move(e));
    for (const std::string &lib : kernelLibraries()) {
      auto gen = llvm::orc::DynamicLibrarySearchGenerator::Load(
          lib.c_str(), dl.getGlobalPrefix());
      if (!gen)
        return fail(gen.takeError());
      jd.addGenerator(std::move(*gen));
    }
    auto process =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            dl.getGlobalPrefix());
    if (!process)
      return fail(process.takeError());
    jd.addGenerator(std::move(*process));
    return j;
  }();
  if (!jit && error.empty())
    error = "the JIT could not be created";
  return jit;
}

/// The global through which a kernel's check stubs find its LazyChecks.
constexpr const char *kLazyChecksHandle = "__cpn_lazy_checks";

/// A JITDylib for one object (every kernel object defines `_mlir_kernel`);
/// its link order reaches the main one, which resolves the runtime's entry
/// points, libm, libmvec and OpenMP.
static llvm::Expected<llvm::orc::JITDylib *>
newKernelDylib(llvm::orc::LLJIT &jit) {
  static std::atomic<int> counter{0};
  auto jd = jit.createJITDylib("kernel" + std::to_string(counter++));
  if (!jd)
    return jd.takeError();
  jd->addToLinkOrder(jit.getMainJITDylib());
  return &*jd;
}

/// Links an object file of a kernel (compiled here or read from the disk
/// cache) into the shared LLJIT and finds the packed entry point
/// `_mlir_kernel`; `checks`: the kernel's check functions, compiled on first
/// use (extractChecks, stubChecks).
std::shared_ptr<Executable>
loadObject(std::unique_ptr<llvm::MemoryBuffer> buffer, std::string &error,
           std::shared_ptr<LazyChecks> checks) {
  auto fail = [&](llvm::Error e) -> std::shared_ptr<Executable> {
    llvm::raw_string_ostream os(error);
    os << e;
    return nullptr;
  };
  llvm::orc::LLJIT *jit = sharedJit(error);
  if (!jit)
    return nullptr;
  auto jd = newKernelDylib(*jit);
  if (!jd)
    return fail(jd.takeError());
  std::vector<llvm::StringRef> objects = unbundleObjects(buffer->getBuffer());
  if (objects.empty()) {
    error = "a malformed bundle of objects";
    return nullptr;
  }
  for (llvm::StringRef object : objects)
    if (llvm::Error e = jit->addObjectFile(
            **jd, llvm::MemoryBuffer::getMemBufferCopy(object, "kernel.o")))
      return fail(std::move(e));
  auto sym = jit->lookup(**jd, "_mlir_kernel");
  if (!sym)
    return fail(sym.takeError());
  auto exe = std::make_shared<Executable>();
  exe->fn = sym->toPtr<void (*)(void **)>();
  auto handle = jit->lookup(**jd, kLazyChecksHandle);
  if (!checks) {
    // An object with check stubs needs its checks (a disk cache entry
    // whose `.checks` file is gone is compiled again).
    if (handle) {
      error = "the kernel's error checks are missing";
      return nullptr;
    }
    llvm::consumeError(handle.takeError());
    return exe;
  }
  if (!handle)
    return fail(handle.takeError());
  *handle->toPtr<void **>() = checks.get();
  exe->checks = std::move(checks);
  return exe;
}

static std::atomic<uint64_t> checkCompilations{0}, checkCompileNanos{0};

/// Compiles the check functions (once per executable; the thread that gets
/// here first does it, the others wait) into their own JITDylib.
static void compileChecks(LazyChecks &lc) {
  auto t0 = std::chrono::steady_clock::now();
  auto done = llvm::make_scope_exit([&] {
    ++checkCompilations;
    checkCompileNanos += std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
  });
  auto fail = [&](const std::string &what) {
    lc.error =
        "cpnumeric: compiling the floating-point error checks failed: " + what;
  };
  try {
    cpnrt::ProfileScope scope("compile", "errstate checks");
    // A context and a target machine of its own: the compiling thread may be
    // using the shared ones.
    std::unique_ptr<MLIRContext> mctx = newContext();
    std::string diag;
    ScopedDiagnosticHandler handler(mctx.get(), [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diag);
      os << d << "\n";
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(lc.source, mctx.get());
    PassManager pm(mctx.get());
    mlir::cpn::LoweringOptions checksOnly;
    checksOnly.checksOnly = true; // the passes after cpn-lower-fp-flags
    if (module)
      mlir::cpn::buildCPNLoweringPipeline(pm, checksOnly);
    if (!module || failed(pm.run(*module))) {
      fail(diag);
      return;
    }
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m =
        translateModuleToLLVMIR(*module, ctx, "checks");
    if (!m) {
      fail("translation to LLVM IR failed: " + diag);
      return;
    }
    std::unique_ptr<llvm::TargetMachine> tm = makeHostTargetMachine(false);
    optimizeModule(*m, lc.optLevel, tm.get());
    std::vector<char> object = emitObject(*m, false, tm.get());
    std::string error;
    llvm::orc::LLJIT *jit = sharedJit(error);
    if (!jit) {
      fail(error);
      return;
    }
    auto jd = newKernelDylib(*jit);
    if (!jd) {
      fail(llvm::toString(jd.takeError()));
      return;
    }
    if (llvm::Error e = jit->addObjectFile(
            **jd,
            llvm::MemoryBuffer::getMemBufferCopy(
                llvm::StringRef(object.data(), object.size()), "checks.o"))) {
      fail(llvm::toString(std::move(e)));
      return;
    }
    std::vector<void *> fns;
    for (const std::string &name : lc.names) {
      auto sym = jit->lookup(**jd, name);
      if (!sym) {
        fail(llvm::toString(sym.takeError()));
        return;
      }
      fns.push_back(sym->toPtr<void *>());
    }
    lc.fns = std::move(fns);
  } catch (const std::exception &e) {
    fail(e.what());
  }
}

/// What a kernel calls when its checks could not be compiled: nothing (the
/// run then fails with LazyChecks::error).
static void noCheck() {}

static void *lazyCheck(void *handle, int32_t index) {
  auto *lc = static_cast<LazyChecks *>(handle);
  if (!lc)
    return reinterpret_cast<void *>(&noCheck);
  std::call_once(lc->once, [lc] { compileChecks(*lc); });
  if (index < 0 || static_cast<size_t>(index) >= lc->fns.size())
    return reinterpret_cast<void *>(&noCheck);
  return lc->fns[index];
}

/// Moves the bodies of the kernel's check functions (cpn-lower-fp-flags'
/// private `<kernel>_fp_checkN`) out of `module` into `lc`, as MLIR bytecode
/// of their own module; they stay in `module` as declarations. False when
/// there are none.
bool extractChecks(ModuleOp module, LazyChecks &lc) {
  SmallVector<func::FuncOp> checks;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isDeclaration() && f->hasAttr(mlir::cpn::kFpCheckFunctionAttr))
      checks.push_back(f);
  if (checks.empty())
    return false;
  OpBuilder b(module.getContext());
  OwningOpRef<ModuleOp> cm = ModuleOp::create(module.getLoc());
  (*cm)->setAttrs(module->getAttrDictionary());
  b.setInsertionPointToEnd(cm->getBody());
  // What they reference (libm declarations, helpers, constant globals),
  // and what that references, copied as it is.
  SymbolTable table(module);
  llvm::SetVector<Operation *> needed;
  SmallVector<Operation *> work(checks.begin(), checks.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    auto uses = SymbolTable::getSymbolUses(op);
    if (!uses)
      continue;
    for (const SymbolTable::SymbolUse &use : *uses) {
      Operation *def = table.lookup(use.getSymbolRef().getRootReference());
      if (def && !llvm::is_contained(checks, def) && needed.insert(def))
        work.push_back(def);
    }
  }
  for (Operation *def : needed)
    b.clone(*def);
  for (func::FuncOp f : checks) {
    auto copy = cast<func::FuncOp>(b.clone(*f));
    copy.setPublic();
    lc.names.push_back(f.getSymName().str());
    f.getBody().getBlocks().clear(); // a declaration
  }
  llvm::raw_string_ostream os(lc.source);
  if (failed(writeBytecodeToFile(*cm, os)))
    return false;
  return true;
}

/// Defines each check function `module` declares (extractChecks) as a stub
/// that asks `cpn_lazy_check` for the compiled function and calls it; the
/// executable's LazyChecks is read from the global `__cpn_lazy_checks`, set
/// when the object is loaded.
void stubChecks(llvm::Module &m, const LazyChecks &lc) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *handle = new llvm::GlobalVariable(
      m, ptrTy, false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(ptrTy), kLazyChecksHandle);
  llvm::FunctionCallee resolve = m.getOrInsertFunction(
      "cpn_lazy_check", ptrTy, ptrTy, llvm::Type::getInt32Ty(ctx));
  for (size_t k = 0; k < lc.names.size(); ++k) {
    llvm::Function *f = m.getFunction(lc.names[k]);
    if (!f || !f->isDeclaration())
      continue;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    f->addFnAttr(llvm::Attribute::Cold);
    f->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *fn =
        b.CreateCall(resolve, {b.CreateLoad(ptrTy, handle),
                               b.getInt32(static_cast<uint32_t>(k))});
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &a : f->args())
      args.push_back(&a);
    llvm::CallInst *call = b.CreateCall(f->getFunctionType(), fn, args);
    if (f->getReturnType()->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call);
  }
}

} // namespace detail

using namespace detail;

CheckCompileStats checkCompileStats() {
  return {checkCompilations.load(), checkCompileNanos.load() * 1e-9};
}

void resetCheckCompileStats() {
  checkCompilations = 0;
  checkCompileNanos = 0;
}

} // namespace cpn
