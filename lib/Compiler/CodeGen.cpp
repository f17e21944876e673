//===- CodeGen.cpp - LLVM optimization and host object code ---------------===//
//
// Part of cpnumeric.
//
// Owns the LLVM side of a compile: the host's target machines, LLVM's
// optimization pipeline with libmvec declared (optimizeModule), the lowered
// module as LLVM IR with the packed `_mlir_kernel` entry point (toLLVM), and
// object code for the host (emitObject), split by function over up to four
// threads (optimizeAndEmit) into one object or a bundle of them (bundleObjects,
// unbundleObjects).
//
// Calls LLVM, Jit.cpp's stubChecks (kernels with lazily compiled checks) and
// kernelThreads() to size its threads.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/IVDescriptors.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

using namespace mlir;

namespace cpn {
namespace detail {

std::unique_ptr<llvm::TargetMachine> makeHostTargetMachine(bool pic) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    llvm::consumeError(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (pic)
    builder->setRelocationModel(llvm::Reloc::PIC_);
  auto tm = builder->createTargetMachine();
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

llvm::TargetMachine *hostTargetMachine(bool pic) {
  if (pic) {
    static std::unique_ptr<llvm::TargetMachine> tm =
        makeHostTargetMachine(true);
    return tm.get();
  }
  static std::unique_ptr<llvm::TargetMachine> tm = makeHostTargetMachine(false);
  return tm.get();
}

/// Booleans in memory as bytes: `load i1` becomes `load i8` and a compare
/// with 0, `store i1` a zero-extended `store i8` (the same bytes: an i1 takes
/// one byte in memory). LLVM's loop vectorizer cannot widen i1 loads (a
/// vector of i1 in memory is bit-packed), so a loop reading a mask loaded
/// its bytes one at a time: count_nonzero of 10^6 bools took 0.63 ms against
/// NumPy's 0.06 ms. The compare also reads any nonzero byte (a uint8 array
/// viewed as bool) as True, as NumPy does.
static void boolMemoryAsBytes(llvm::Module &m) {
  llvm::Type *i1 = llvm::Type::getInt1Ty(m.getContext());
  llvm::Type *i8 = llvm::Type::getInt8Ty(m.getContext());
  llvm::SmallVector<llvm::Instruction *> rewrite;
  for (llvm::Function &f : m)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &inst : bb) {
        if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
          if (ld->getType() == i1 && ld->isSimple())
            rewrite.push_back(ld);
        } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
          if (st->getValueOperand()->getType() == i1 && st->isSimple())
            rewrite.push_back(st);
        }
      }
  for (llvm::Instruction *inst : rewrite) {
    llvm::IRBuilder<> b(inst);
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(inst)) {
      llvm::LoadInst *byte =
          b.CreateAlignedLoad(i8, ld->getPointerOperand(), ld->getAlign());
      byte->copyMetadata(*ld);
      ld->replaceAllUsesWith(b.CreateICmpNE(byte, b.getInt8(0)));
    } else {
      auto *st = llvm::cast<llvm::StoreInst>(inst);
      llvm::StoreInst *byte =
          b.CreateAlignedStore(b.CreateZExt(st->getValueOperand(), i8),
                               st->getPointerOperand(), st->getAlign());
      byte->copyMetadata(*st);
    }
    inst->eraseFromParent();
  }
}

/// Before the loop vectorizer: an innermost loop that carries a reduction
/// (sum, prod, max, min, any, all, a count; float or integer, as LLVM's
/// RecurrenceDescriptor recognizes it) is interleaved four ways, four vector
/// accumulators instead of one. Interleaving is off for the other loops
/// (compile time, see optimizeModule). With one accumulator the loop waits
/// on the last vector's latency: a float max on llvm.maximum's several
/// instructions per vector (max of 10^5 float64 took 45 us against NumPy's
/// 10 us), an int64 max on vpmaxsq's 3 cycles per 4 elements (10^5: 30 us
/// of a 39 us call, NumPy's whole call 11 us).
struct InterleaveReductions : llvm::PassInfoMixin<InterleaveReductions> {
  /// A float reduction phi (as before: also in a loop that writes other
  /// results), or a loop that only reduces: an integer reduction phi or a
  /// store to one address on every iteration (the accumulator in memory: a
  /// partial of a parallel reduction, whose block LICM cannot prove apart
  /// from the input; the vectorizer keeps it in registers behind a run-time
  /// alias check), and no store elsewhere. Not an elementwise loop whose
  /// floating-point status bits are OR-ed on the side (four copies of its
  /// body for nothing).
  static bool reduces(llvm::Loop &loop) {
    bool floatPhi = false, otherPhi = false;
    for (llvm::PHINode &phi : loop.getHeader()->phis()) {
      llvm::RecurrenceDescriptor desc;
      if (phi.getNumIncomingValues() == 2 &&
          llvm::RecurrenceDescriptor::isReductionPHI(&phi, &loop, desc))
        (phi.getType()->isFloatingPointTy() ? floatPhi : otherPhi) = true;
    }
    if (floatPhi)
      return true;
    bool invariantStore = false;
    for (llvm::BasicBlock *bb : loop.blocks())
      for (llvm::Instruction &inst : *bb)
        if (auto *st = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
          if (!loop.isLoopInvariant(st->getPointerOperand()))
            return false;
          invariantStore = true;
        }
    return otherPhi || invariantStore;
  }

  llvm::PreservedAnalyses run(llvm::Function &f,
                              llvm::FunctionAnalysisManager &fam) {
    llvm::LLVMContext &ctx = f.getContext();
    for (llvm::Loop *loop :
         fam.getResult<llvm::LoopAnalysis>(f).getLoopsInPreorder()) {
      if (!loop->isInnermost() || !loop->getLoopPreheader() ||
          !loop->getLoopLatch())
        continue;
      if (!reduces(*loop))
        continue;
      llvm::SmallVector<llvm::Metadata *> ops{nullptr};
      if (llvm::MDNode *old = loop->getLoopID())
        for (unsigned i = 1; i < old->getNumOperands(); ++i)
          ops.push_back(old->getOperand(i));
      ops.push_back(llvm::MDNode::get(
          ctx, {llvm::MDString::get(ctx, "llvm.loop.interleave.count"),
                llvm::ConstantAsMetadata::get(
                    llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 4))}));
      llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, ops);
      id->replaceOperandWith(0, id);
      loop->setLoopID(id);
    }
    return llvm::PreservedAnalyses::all();
  }
};

/// The routines of glibc's libmvec (2.35 on) that LLVM's LIBMVEC table
/// leaves out (it has sin, cos, tan, exp, log and pow): without them a loop
/// calling tanh, atan, cbrt, expm1, ... called the scalar function per
/// element (np.arctan of 2e6 float64 0.26x NumPy's SIMD loop). SSE (b) and
/// AVX2 (d) widths, as LLVM's own entries; scalar names and intrinsics.
/// With `avx512`, the AVX-512 (e) width of every routine too, LLVM's six
/// included (its table has none): on a CPU whose vectorizer takes 512-bit
/// vectors (AMD Zen 4/5) a loop of Philox words and a log, vectorized 16
/// wide, called llvm.log.v16f64, which code generation makes 16 scalar
/// calls (a normal draw 3x slower than in two loops of width 4).
/// Not hypot: NumPy's complex abs and np.hypot call libm's, and complex
/// abs/sign stay bit for bit NumPy's (libmvec's is 1 ulp off).
static llvm::ArrayRef<llvm::VecDesc> moreVectorMath(bool avx512) {
  static std::deque<std::string> names; // VecDesc holds StringRefs
  static std::mutex mutex;              // compiles run on several threads
  static std::vector<llvm::VecDesc> cached[2];
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<llvm::VecDesc> &descs = cached[avx512];
  if (descs.empty()) {
    struct Fn {
      const char *name;
      int args;
      bool intrinsic; // an llvm.<name>.f64 intrinsic exists
      bool inLLVM;    // in LLVM's own LIBMVEC table (b and d widths)
    };
    const Fn fns[] = {{"acos", 1, true, false},   {"acosh", 1, false, false},
                      {"asin", 1, true, false},   {"asinh", 1, false, false},
                      {"atan", 1, true, false},   {"atanh", 1, false, false},
                      {"cbrt", 1, false, false},  {"cosh", 1, true, false},
                      {"erf", 1, false, false},   {"erfc", 1, false, false},
                      {"exp10", 1, true, false},  {"exp2", 1, true, false},
                      {"expm1", 1, false, false}, {"log10", 1, true, false},
                      {"log1p", 1, false, false}, {"log2", 1, true, false},
                      {"sinh", 1, true, false},   {"tanh", 1, true, false},
                      {"atan2", 2, true, false},  {"sin", 1, true, true},
                      {"cos", 1, true, true},     {"tan", 1, true, true},
                      {"exp", 1, true, true},     {"log", 1, true, true},
                      {"pow", 2, true, true}};
    std::vector<llvm::VecDesc> &d = descs;
    std::vector<std::pair<char, int>> widths = {{'b', 2}, {'d', 4}};
    if (avx512)
      widths.push_back({'e', 8});
    for (const Fn &f : fns)
      for (bool single : {false, true})
        for (auto [isa, lanes] : widths) {
          if (f.inLLVM && isa != 'e')
            continue;
          if (single)
            lanes *= 2;
          std::string params(f.args, 'v');
          std::string scalar = std::string(f.name) + (single ? "f" : "");
          llvm::StringRef vec =
              names.emplace_back("_ZGV" + std::string(1, isa) + "N" +
                                 std::to_string(lanes) + params + "_" + scalar);
          llvm::StringRef prefix = names.emplace_back(
              "_ZGV_LLVM_N" + std::to_string(lanes) + params);
          auto count = llvm::ElementCount::getFixed(lanes);
          d.emplace_back(names.emplace_back(scalar), vec, count, false, prefix,
                         std::nullopt);
          if (f.intrinsic)
            d.emplace_back(names.emplace_back("llvm." + std::string(f.name) +
                                              (single ? ".f32" : ".f64")),
                           vec, count, false, prefix, std::nullopt);
        }
  }
  return descs;
}

/// Whether a target machine's code may use AVX-512F (libmvec's `e` width).
static bool hasAvx512(llvm::TargetMachine *tm) {
  return tm && tm->getMCSubtargetInfo() &&
         tm->getMCSubtargetInfo()->checkFeatures("+avx512f");
}

/// LLVM's default pipeline at `optLevel` for the host, with glibc's vector
/// math library (libmvec) declared, so that loops calling exp/log/sin/pow...
/// vectorize into calls of their SIMD versions. `tm`: a target machine of
/// the caller's own, on threads other than the compiling one.
void optimizeModule(llvm::Module &m, int optLevel, llvm::TargetMachine *tm) {
  if (!tm)
    tm = hostTargetMachine();
  if (tm) {
    m.setDataLayout(tm->createDataLayout());
    m.setTargetTriple(tm->getTargetTriple());
  }
  boolMemoryAsBytes(m);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  // The SLP vectorizer's time grows faster than linearly with a block's
  // length: a loop body of ~17 fused iterations of a loop (1,477
  // instructions) took it 2.1 s of a 2.6 s compile, for nothing (the loop
  // vectorizer has vectorized the loop). It runs on modules whose blocks
  // are all shorter than kSlpMaxBlock.
  constexpr size_t kSlpMaxBlock = 600;
  size_t longestBlock = 0;
  for (const llvm::Function &f : m)
    for (const llvm::BasicBlock &bb : f)
      longestBlock = std::max(longestBlock, bb.size());
  pto.SLPVectorization = optLevel >= 2 && longestBlock < kSlpMaxBlock;
  // Unrolling and interleaving triple compile time for little gain on
  // memory-bound loops.
  pto.LoopUnrolling = false;
  pto.LoopInterleaving = false;
  llvm::PassBuilder pb(tm, pto);
  pb.registerVectorizerStartEPCallback(
      [](llvm::FunctionPassManager &fpm, llvm::OptimizationLevel) {
        fpm.addPass(InterleaveReductions());
      });
  llvm::TargetLibraryInfoImpl tlii(m.getTargetTriple());
  if (std::filesystem::exists(kVectorMath)) {
    tlii.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                            m.getTargetTriple());
    bool avx512 = hasAvx512(tm);
    tlii.addVectorizableFunctions(moreVectorMath(avx512));
    // Kernels never read errno: math functions that may write it (tanh,
    // atan, hypot, ...: `memory(errnomem: write)`) would keep their loops
    // from vectorizing.
    for (const llvm::VecDesc &d : moreVectorMath(avx512))
      if (llvm::Function *f = m.getFunction(d.getScalarFnName());
          f && f->isDeclaration() && !f->isIntrinsic())
        f->setMemoryEffects(llvm::MemoryEffects::none());
  }
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm;
  // The iterations of a loop traced into one window give equal loop nests,
  // and OpenMP's outlining makes each a function: equal ones are compiled
  // once (k-means: 39 parallel bodies, 8 distinct).
  mpm.addPass(llvm::MergeFunctionsPass());
  mpm.addPass(level == llvm::OptimizationLevel::O0
                  ? pb.buildO0DefaultPipeline(level)
                  : pb.buildPerModuleDefaultPipeline(level));
  mpm.run(m, mam);
}

/// Adds `void _mlir_<name>(void **args)`, which calls `name` with the
/// pointers args[i] point to: one entry point whatever the kernel's arity
/// (kernels take bare pointers, one per store).
static void addPackedWrapper(llvm::Module &m, llvm::StringRef name) {
  llvm::Function *fn = m.getFunction(name);
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::get(ctx, 0);
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy}, false),
      llvm::GlobalValue::ExternalLinkage, "_mlir_" + name.str(), m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < fn->arg_size(); ++i) {
    llvm::Value *slot =
        b.CreateLoad(ptrTy, b.CreateConstGEP1_64(ptrTy, wrapper->getArg(0), i));
    args.push_back(b.CreateLoad(fn->getArg(i)->getType(), slot));
  }
  b.CreateCall(fn, args);
  b.CreateRetVoid();
}

/// Machine code for the host, as an ELF object (what the disk cache holds;
/// position-independent with `pic`, for a shared object).
std::vector<char> emitObject(llvm::Module &m, bool pic,
                             llvm::TargetMachine *tm) {
  if (!tm)
    tm = hostTargetMachine(pic);
  if (!tm)
    throw std::runtime_error("cpnumeric: no target machine for this host");
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile))
    throw std::runtime_error("cpnumeric: the target cannot emit object files");
  pm.run(m);
  return std::vector<char>(buffer.begin(), buffer.end());
}

std::string llvmText(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

/// Target machines for the compiling threads other than the caller's (one
/// each; building one costs ~20 ms, so they are kept for the process).
static std::unique_ptr<llvm::TargetMachine>
borrowTargetMachine(std::unique_ptr<llvm::TargetMachine> back = nullptr) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<llvm::TargetMachine>> spare;
  std::lock_guard<std::mutex> lock(mutex);
  if (back) {
    spare.push_back(std::move(back));
    return nullptr;
  }
  if (spare.empty())
    return makeHostTargetMachine(false);
  std::unique_ptr<llvm::TargetMachine> tm = std::move(spare.back());
  spare.pop_back();
  return tm;
}

/// Several objects of one kernel in one buffer (what the disk cache holds):
/// the magic, the count and sizes as decimal text on one line, the objects.
constexpr llvm::StringLiteral kObjectBundle = "CPN-OBJECTS ";

static std::vector<char>
bundleObjects(const std::vector<std::vector<char>> &objects) {
  if (objects.size() == 1)
    return objects[0];
  std::string head = kObjectBundle.str() + std::to_string(objects.size());
  for (const std::vector<char> &o : objects)
    head += " " + std::to_string(o.size());
  head += "\n";
  std::vector<char> out(head.begin(), head.end());
  for (const std::vector<char> &o : objects)
    out.insert(out.end(), o.begin(), o.end());
  return out;
}

/// The objects of a buffer (a bundle, or one object file); empty when a
/// bundle is malformed.
std::vector<llvm::StringRef> unbundleObjects(llvm::StringRef data) {
  if (!data.starts_with(kObjectBundle))
    return {data};
  size_t eol = data.find('\n');
  if (eol == llvm::StringRef::npos)
    return {};
  std::istringstream head(data.substr(kObjectBundle.size(), eol).str());
  size_t n = 0, at = eol + 1;
  std::vector<llvm::StringRef> parts;
  if (!(head >> n) || n == 0 || n > 64)
    return {};
  for (size_t i = 0; i < n; ++i) {
    size_t size = 0;
    if (!(head >> size) || at + size > data.size())
      return {};
    parts.push_back(data.substr(at, size));
    at += size;
  }
  return at == data.size() ? parts : std::vector<llvm::StringRef>{};
}

/// How many parts a kernel's LLVM module is optimized and compiled in, on
/// as many threads: one per 500 instructions before optimization, at most
/// the kernels' thread count (CPN_THREADS, all cores by default), the
/// calling thread's cap (setCompileThreadCap) and 4.
static thread_local unsigned compileThreadCap = 0;

void setCompileThreadCap(unsigned threads) { compileThreadCap = threads; }

static unsigned compileParts(const llvm::Module &m) {
  size_t insts = 0;
  for (const llvm::Function &f : m)
    insts += f.getInstructionCount();
  unsigned threads = static_cast<unsigned>(std::max(1, kernelThreads()));
  if (compileThreadCap)
    threads = std::min(threads, compileThreadCap);
  return std::max(1u,
                  std::min({threads, 4u, static_cast<unsigned>(insts / 500)}));
}

/// `m` as `n` modules that each define a share of its functions, balanced
/// by instruction count (largest first, each to the lightest part), and
/// declare the rest; its global variables are defined in the first. Local
/// symbols become hidden external ones, so that the parts' objects link
/// with each other in the kernel's JITDylib; so do linkonce and weak ones
/// (convert-math-to-funcs' `__mlir_math_ipowi_*`), which the part that
/// defines them would otherwise drop once its own calls are inlined.
static std::vector<std::unique_ptr<llvm::Module>> partition(llvm::Module &m,
                                                            unsigned n) {
  unsigned unnamed = 0;
  for (llvm::GlobalValue &gv : m.global_values()) {
    if (gv.isDeclaration())
      continue;
    if (gv.hasLocalLinkage() || gv.hasLinkOnceLinkage() ||
        gv.hasWeakLinkage()) {
      gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
      gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
    if (!gv.hasName())
      gv.setName("__cpn_part" + std::to_string(unnamed++));
  }
  std::vector<std::pair<unsigned, llvm::Function *>> functions;
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      functions.push_back({f.getInstructionCount(), &f});
  std::stable_sort(functions.begin(), functions.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  std::vector<size_t> load(n, 0);
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> owner;
  for (auto &[insts, f] : functions) {
    unsigned lightest = static_cast<unsigned>(
        std::min_element(load.begin(), load.end()) - load.begin());
    owner[f] = lightest;
    load[lightest] += insts;
  }
  std::vector<std::unique_ptr<llvm::Module>> parts;
  for (unsigned i = 0; i < n; ++i) {
    llvm::ValueToValueMapTy vmap;
    parts.push_back(
        llvm::CloneModule(m, vmap, [&](const llvm::GlobalValue *gv) {
          auto it = owner.find(gv);
          return it == owner.end() ? i == 0 : it->second == i;
        }));
  }
  return parts;
}

/// LLVM's optimizer and code generator on `m`, split (partition) into parts
/// compiled on threads of their own, each in its own LLVMContext: ~60% of a
/// kernel's compile time is here, and its functions are independent (the loop
/// nests' bodies are called through OpenMP). Equal functions are merged before
/// the split. The result is one object, or a bundle of them (bundleObjects).
/// `llText`: the optimized IR, parts one after another.
std::vector<char> optimizeAndEmit(llvm::Module &m, int optLevel,
                                  std::string *llText,
                                  std::vector<std::string> *scalarCalls) {
  unsigned n = compileParts(m);
  if (n <= 1) {
    optimizeModule(m, optLevel);
    if (llText)
      *llText = llvmText(m);
    if (scalarCalls)
      *scalarCalls = scalarMathInLoops(m);
    return emitObject(m);
  }
  {
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb;
    pb.registerModuleAnalyses(mam);
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::MergeFunctionsPass());
    mpm.run(m, mam);
  }
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  for (std::unique_ptr<llvm::Module> &part : partition(m, n)) {
    bitcode.emplace_back();
    llvm::raw_svector_ostream os(bitcode.back());
    llvm::WriteBitcodeToFile(*part, os);
  }
  size_t parts = bitcode.size();
  std::vector<std::vector<char>> objects(parts);
  std::vector<std::string> texts(parts), errors(parts);
  std::vector<std::vector<std::string>> calls(parts);
  auto work = [&](size_t i, llvm::TargetMachine *tm) {
    try {
      llvm::LLVMContext ctx;
      auto part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(
              llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
          ctx);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        return;
      }
      optimizeModule(**part, optLevel, tm);
      if (llText)
        texts[i] = "; part " + std::to_string(i) + "\n" + llvmText(**part);
      if (scalarCalls)
        calls[i] = scalarMathInLoops(**part);
      objects[i] = emitObject(**part, false, tm);
    } catch (const std::exception &e) {
      errors[i] = e.what();
    }
  };
  std::vector<std::thread> pool;
  std::vector<std::unique_ptr<llvm::TargetMachine>> tms;
  for (size_t i = 1; i < parts; ++i) {
    tms.push_back(borrowTargetMachine());
    if (!tms.back())
      throw std::runtime_error("cpnumeric: no target machine for this host");
    pool.emplace_back(work, i, tms.back().get());
  }
  work(0, hostTargetMachine());
  for (std::thread &t : pool)
    t.join();
  for (auto &tm : tms)
    borrowTargetMachine(std::move(tm));
  for (const std::string &e : errors)
    if (!e.empty())
      throw std::runtime_error("cpnumeric: compiling a kernel part failed: " +
                               e);
  if (llText)
    for (const std::string &t : texts)
      *llText += t;
  if (scalarCalls)
    for (const std::vector<std::string> &c : calls)
      scalarCalls->insert(scalarCalls->end(), c.begin(), c.end());
  return bundleObjects(objects);
}

/// The LLVM IR of a module lowered to the LLVM dialect, with the packed
/// `_mlir_kernel` entry point (toOptimizedLLVM optimizes it for this machine).
/// `checks`: the check functions extractChecks moved out, which get stubs.
std::unique_ptr<llvm::Module> toLLVM(ModuleOp module, llvm::LLVMContext &ctx,
                                     const LazyChecks *checks) {
  std::unique_ptr<llvm::Module> m =
      translateModuleToLLVMIR(module, ctx, "kernel");
  if (!m)
    throw std::runtime_error("cpnumeric: translation to LLVM IR failed");
  addPackedWrapper(*m, "kernel");
  if (checks)
    stubChecks(*m, *checks);
  return m;
}

std::unique_ptr<llvm::Module>
toOptimizedLLVM(ModuleOp module, llvm::LLVMContext &ctx, int optLevel) {
  std::unique_ptr<llvm::Module> m = toLLVM(module, ctx);
  optimizeModule(*m, optLevel);
  return m;
}

} // namespace detail
} // namespace cpn
