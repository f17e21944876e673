//===- Compiler.cpp - compiling a trace into a kernel ---------------------===//
//
// Part of cpnumeric.
//
// What remains of compiling: compile (a window's trace through buildModule,
// lower, toLLVM, the JIT target's code generator and loadObject, with its
// CPN_DUMP_IR directory), compileObject (cpnc's ahead-of-time objects for
// the target it names), planDonations
// (which outputs are written into dead inputs' stores) and the kernels' OpenMP
// runtime and thread count.
//
// Calls the other units through CompilerInternal.h; the Engine calls compile.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Trace/ViewBox.h"
#include "cpnrt/Lapack.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"

#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>

using namespace mlir;

namespace cpn {
namespace detail {

/// Starts a dump directory with the trace and its cpn module, then verifies
/// the module (both compile paths).
static void beginCompile(ModuleOp module, const Trace &trace,
                         const std::filesystem::path &dumpDir) {
  if (!dumpDir.empty()) {
    std::filesystem::create_directories(dumpDir);
    writeFile(dumpDir / "000-trace.txt", trace.str());
    writeFile(dumpDir / "001-cpn.mlir", printOp(module));
  }
  if (failed(verify(module)))
    throw std::runtime_error("cpnumeric: the traced cpn IR does not verify; "
                             "this is a bug in cpnumeric's front end");
}

/// The target's code generator on `m`; with a dump directory, writes the
/// optimized LLVM IR (llvm.ll) and summary.txt's line on scalar math.
static std::vector<char> generate(const Target &target, llvm::Module &m,
                                  int optLevel, bool pic,
                                  const std::filesystem::path &dumpDir) {
  std::string llText;
  std::vector<std::string> scalarCalls;
  CodeGenOptions codegen;
  codegen.optLevel = optLevel;
  codegen.pic = pic;
  if (!dumpDir.empty()) {
    codegen.llText = &llText;
    codegen.scalarCalls = &scalarCalls;
  }
  std::vector<char> object = target.generate(m, codegen);
  if (!dumpDir.empty()) {
    writeFile(dumpDir / "llvm.ll", llText);
    appendScalarMath(dumpDir / "summary.txt", scalarCalls);
  }
  return object;
}

std::shared_ptr<Executable> compile(const Trace &trace,
                                    const std::vector<int32_t> &outputs,
                                    const std::vector<int32_t> &donors,
                                    const CompilerOptions &opts, uint64_t key,
                                    double &mlirSeconds) {
  auto lock = lockCompiler();
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors);
  // Under several ranks: this rank's program (planRanks read the same).
  if (opts.partitioning())
    localizeModule(*module, opts.ranks, opts.rank, opts.partitionThreshold,
                   opts.partitionPart);
  std::filesystem::path dumpDir;
  int fileNo = 1;
  if (!opts.dumpDir.empty()) {
    static int counter = 0;
    char name[64];
    snprintf(name, sizeof(name), "%04d-%016llx", counter++,
             static_cast<unsigned long long>(key));
    dumpDir = std::filesystem::path(opts.dumpDir) / name;
  }
  beginCompile(*module, trace, dumpDir);
  auto t0 = std::chrono::steady_clock::now();
  // The checks' exact classification is lowered and compiled only when a
  // run needs it (LazyChecks).
  auto checks = std::make_shared<LazyChecks>();
  checks->optLevel = opts.optLevel;
  const Target &target = jitTarget();
  lower(*module, dumpDir, fileNo, target.loweringOptions(),
        summaryWriter(trace, outputs, donors, dumpDir), [&](ModuleOp m) {
          if (!extractChecks(m, *checks))
            checks.reset();
          else if (!dumpDir.empty())
            if (auto cm =
                    parseSourceString<ModuleOp>(checks->source, m.getContext()))
              writeFile(dumpDir / "checks.mlir", printOp(*cm));
        });
  mlirSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      toLLVM(*module, llvmContext, checks.get());
  std::vector<char> object = generate(target, *llvmModule, opts.optLevel,
                                      /*pic=*/false, dumpDir);
  std::string error;
  auto exe =
      loadObject(llvm::MemoryBuffer::getMemBufferCopy(
                     llvm::StringRef(object.data(), object.size()), "kernel.o"),
                 error, std::move(checks));
  if (!exe)
    throw std::runtime_error("cpnumeric: loading the compiled kernel failed: " +
                             error);
  exe->object = std::move(object);
  return exe;
}

/// The OpenMP runtime kernels call (__kmpc_fork_call, ...), loaded into the
/// process once so that the thread count set here is the one kernels use.
void *openmpRuntime() {
  static void *handle = dlopen(kOpenMPRuntime, RTLD_NOW | RTLD_GLOBAL);
  return handle;
}

} // namespace detail

using namespace detail;

std::vector<char> compileObject(const Trace &trace,
                                const std::vector<int32_t> &outputs,
                                const ObjectOptions &opts) {
  auto lock = lockCompiler();
  std::vector<int32_t> donors(outputs.size(), -1);
  // Ahead-of-time objects keep the documented calling convention: no
  // status argument, no floating-point error checks.
  OwningOpRef<ModuleOp> module =
      buildModule(trace, outputs, donors, opts.symbols, /*fpStatus=*/false);
  const Target &target = targetNamed(opts.target);
  std::filesystem::path dumpDir;
  int fileNo = 1;
  if (!opts.dumpDir.empty())
    dumpDir = std::filesystem::path(opts.dumpDir) / fileSafe(opts.symbol);
  beginCompile(*module, trace, dumpDir);
  lower(*module, dumpDir, fileNo,
        target.loweringOptions(/*shapeGeneric=*/!opts.symbols.empty()),
        summaryWriter(trace, outputs, donors, dumpDir));
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> m = toLLVM(*module, llvmContext);
  // One exported symbol per object: several kernels link into one library.
  llvm::Function *entry = m->getFunction("_mlir_kernel");
  entry->setName(opts.symbol);
  for (llvm::Function &f : *m)
    if (!f.isDeclaration() && &f != entry)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : m->globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  return generate(target, *m, opts.optLevel, /*pic=*/true, dumpDir);
}

// Read by compiles on the Engine's compiler thread.
static std::atomic<int> kernelThreadCount{0};

int setKernelThreads(int threads) {
  if (threads <= 0)
    threads =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  kernelThreadCount = threads;
  if (void *omp = openmpRuntime())
    if (auto set =
            reinterpret_cast<void (*)(int)>(dlsym(omp, "omp_set_num_threads")))
      set(threads);
  return threads;
}

int kernelThreads() {
  int n = kernelThreadCount.load();
  return n ? n : setKernelThreads(0);
}

/// The updates of the chain that ends at op `last`, from the last back, and
/// after them the value the first one updates (an input: negative).
static std::vector<int32_t> updateChain(const Trace &trace, int32_t last) {
  const std::vector<TraceOp> &ops = trace.ops();
  std::vector<int32_t> chain;
  int32_t r = last;
  for (; r >= 0 && ops[r].name == "update"; r = ops[r].operands[0])
    chain.push_back(r);
  chain.push_back(r);
  return chain;
}

/// Whether the chain of updates that ends at op `last` holds exactly one
/// stencil update: an update whose value reads the chain (its input or an
/// earlier update of it) through a view other than the box it writes
/// (`u[1:-1] = f(u[:-2], u[2:])`), of the kind cpn-ping-pong-updates
/// rewrites. Written into the chain's own input buffer, such an update
/// cannot be made in place: it costs a temporary and a copy of its box (and
/// where cpn-ping-pong-updates alternates buffers, a copy of the whole array
/// back). Written into a fresh buffer (the old one goes back to the pool),
/// it costs neither, with the same peak memory (two arrays either way).
/// Longer chains stay donated: there the alternating buffers end in place
/// every other update, and a fresh output would hold a third array.
static bool loneStencilUpdate(const Trace &trace, int32_t last,
                              bool partitioned) {
  const std::vector<TraceOp> &ops = trace.ops();
  std::vector<int32_t> chain = updateChain(trace, last);
  if (chain.size() < 2)
    return false;
  std::set<int32_t> versions(chain.begin(), chain.end());
  int32_t root = chain.back();
  chain.pop_back();
  // One rank's program reads a copy of the chain's input (`pn = p.copy()`
  // before `p[1:-1, 1:-1] = f(pn)`) from the input's rows: the same
  // conflict. The fresh output is then a third block beside the input and
  // the copy (in place: the input, the copy and the conflict's temporary,
  // and a copy back). A copy of a later version is left donated (tried: its
  // shifted views rebuilt the chain on their rows, more bytes).
  // The whole program (recoverWindow, one process) reads the copy's own
  // buffer: no conflict, so the caller passes partitioned = false there.
  if (partitioned && root < 0)
    for (size_t r = 0; r < ops.size(); ++r)
      if (ops[r].name == "copy" && versions.count(ops[r].operands[0]))
        versions.insert(int32_t(r));
  auto box = [](const TraceOp &op) {
    return std::make_pair(op.iattrs, op.shape);
  };
  // Only updates cpn-ping-pong-updates rewrites count: a box of unit
  // strides, of the base's rank, covering at least half of it, computed (not
  // a plain view: `p[0, :] = p[1, :]` is written in place).
  auto rewritten = [&](const TraceOp &update) {
    const std::vector<int64_t> &base = trace.operandShape(update.operands[0]);
    const std::vector<int64_t> &box = trace.operandShape(update.operands[1]);
    if (update.operands[1] < 0 || ops[update.operands[1]].name == "view" ||
        box.size() != base.size() || update.iattrs.size() != base.size() + 1)
      return false;
    std::vector<int64_t> unit = rowMajorStrides(base);
    double covered = 1;
    for (size_t k = 0; k < base.size(); ++k) {
      if (update.iattrs[k + 1] != unit[k] && box[k] > 1)
        return false;
      covered *= base[k] ? double(box[k]) / double(base[k]) : 1.0;
    }
    return covered >= 0.5;
  };
  size_t stencils = 0;
  for (int32_t u : chain) {
    const TraceOp &update = ops[u];
    if (!rewritten(update))
      continue;
    auto written =
        std::make_pair(update.iattrs, trace.operandShape(update.operands[1]));
    // The update's value, op by op (values computed in the window only).
    std::vector<int32_t> work{update.operands[1]};
    std::set<int32_t> seen;
    bool stencil = false;
    while (!work.empty() && !stencil) {
      int32_t r = work.back();
      work.pop_back();
      if (r < 0 || !seen.insert(r).second)
        continue;
      const TraceOp &op = ops[r];
      if (op.name == "view" && versions.count(op.operands[0]) &&
          box(op) != written)
        stencil = true;
      // Another update's value is a buffer of its own (the swapped `v` of
      // `u, v = v, u` read the old `u` before this update was made).
      if (op.name == "update")
        continue;
      for (int32_t o : op.operands)
        work.push_back(o);
    }
    stencils += stencil;
  }
  return stencils == 1;
}

std::vector<int32_t> planDonations(const Trace &trace,
                                   const std::vector<int32_t> &outputs,
                                   bool partitioned) {
  const auto &inputs = trace.inputs();
  // The trace holds one reference; a Python handle would hold another. Each
  // store belongs to exactly one node, so a dead node means a dead store
  // (tasks still reading it are ordered before ours by the task graph).
  std::vector<bool> free(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    free[i] = inputs[i].use_count() == 1 && inputs[i]->store &&
              inputs[i]->store->nbytes() > 0 && !inputs[i]->store->lent() &&
              !inputs[i]->store->guarded() &&    // a NumPy buffer (Guard.cpp)
              !inputs[i]->store->borrowShared(); // another value's too
  // A runtime call (libcall) reads its operands' buffers outside the tensor
  // SSA that bufferization checks: an output written into a donor it reads
  // could overwrite it first (a copy's result donated into np.put's
  // indices). It may read an input through views, and through any op that
  // canonicalization folds to its operand (a copy, a cast to the same type,
  // `x * 1.0`): no input that a call's operands are computed from is
  // donated (`c = a.copy(); a[0] = 1; sort(c)` with `a` dead read the
  // update). An in-place call (cpnrt::updatesFirstInput) reads and writes
  // its operands as tensors until one-shot bufferization, which sees every
  // use.
  std::vector<bool> feedsCall(trace.ops().size(), false);
  for (size_t i = trace.ops().size(); i-- > 0;) {
    const TraceOp &op = trace.ops()[i];
    bool call = op.name == "libcall" && !cpnrt::updatesFirstInput(op.sattr);
    if (!call && !feedsCall[i])
      continue;
    for (int32_t r : op.operands) {
      if (r < 0)
        free[-r - 1] = false;
      else
        feedsCall[r] = true;
    }
  }
  std::vector<int32_t> donors(outputs.size(), -1);
  auto sameType = [&](int32_t in, const TraceOp &op) {
    return inputs[in]->shape == op.shape && inputs[in]->dtype == op.dtype;
  };
  // Update chains first: `u = update(update(u0, a), b)` goes into u0.
  for (size_t j = 0; j < outputs.size(); ++j) {
    int32_t r = outputs[j];
    while (r >= 0 && trace.ops()[r].name == "update")
      r = trace.ops()[r].operands[0];
    if (r < 0 && outputs[j] >= 0 && trace.ops()[outputs[j]].name == "update") {
      int32_t in = -r - 1;
      if (free[in] && loneStencilUpdate(trace, outputs[j], partitioned)) {
        free[in] = false; // a fresh buffer: see loneStencilUpdate
        // A copy of the chain's input that is itself an output (`pn =
        // p.copy()` still held when the window ends) takes the input's
        // buffer: it holds those bytes already, so the copy moves none, and
        // the stencil reads them there (one block read, where a fresh copy
        // would read and write one more).
        std::vector<int32_t> chain = updateChain(trace, outputs[j]);
        std::set<int32_t> versions(chain.begin(), chain.end());
        for (size_t k = 0; k < outputs.size(); ++k)
          if (donors[k] < 0 && outputs[k] >= 0 &&
              trace.ops()[outputs[k]].name == "copy" &&
              versions.count(trace.ops()[outputs[k]].operands[0]) &&
              sameType(in, trace.ops()[outputs[k]])) {
            donors[k] = in;
            break;
          }
        continue;
      }
      if (free[in] && sameType(in, trace.ops()[outputs[j]])) {
        donors[j] = in;
        free[in] = false;
      }
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0)
      continue;
    // Under partitioning, a reduction over the rows or a product is not
    // written into an input: over split rows, cpn-localize makes it each
    // rank's partial, combined over the ranks into a fresh output (a donated
    // one would be computed whole from whole operands on every rank).
    if (partitioned && outputs[j] >= 0) {
      const TraceOp &op = trace.ops()[outputs[j]];
      if (op.name == "matmul" ||
          (op.name == "reduce" &&
           std::find(op.iattrs.begin(), op.iattrs.end(), 0) != op.iattrs.end()))
        continue;
    }
    for (size_t in = 0; in < inputs.size(); ++in) {
      if (free[in] &&
          sameType(static_cast<int32_t>(in), trace.ops()[outputs[j]])) {
        donors[j] = static_cast<int32_t>(in);
        free[in] = false;
        break;
      }
    }
  }
  for (const TraceOp &op : trace.ops())
    if (op.name == "update" && op.operands[0] < 0 &&
        free[-op.operands[0] - 1]) {
      donors.push_back(-op.operands[0] - 1);
      free[-op.operands[0] - 1] = false;
    }
  return donors;
}

} // namespace cpn
