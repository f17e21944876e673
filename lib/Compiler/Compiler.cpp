//===- Compiler.cpp - trace to cpn IR to native code ----------------------===//
//
// Part of cpnumeric.
//
// A flush turns the current trace into a `func.func @kernel` whose arguments
// are one memref per input store and one per live result (bare pointers at the
// ABI level), runs the lowering pipeline, compiles the LLVM IR for the host
// into an object file, links it with ORC's LLJIT (the same path loads objects
// from the disk cache), caches the executable by the trace's hash and submits
// one task to the runtime. A cache hit never touches MLIR.
//
//===----------------------------------------------------------------------===//

#include "cpn/Compiler/Compiler.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNDialect.h"
#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"
#include "cpnrt/Blas.h"
#include "cpnrt/Lapack.h"
#include "cpnrt/Profile.h"
#include "cpnrt/Store.h"
#include "cpnrt/TaskGraph.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

using namespace mlir;

namespace cpn {

constexpr uint64_t kMaxWindowsAhead = 2;

/// The exact floating-point error classification of a kernel's checked loop
/// nests (the `<kernel>_fp_checkN` functions cpn-lower-fp-flags outlines),
/// compiled on first use: it runs only in blocks where the nest's cheap
/// probe saw a NaN or an infinity, which most runs never do. The kernel
/// calls `cpn_lazy_check(handle, n)`, which compiles all of them once (on
/// whichever thread gets there first; the others wait) and returns the n-th.
struct LazyChecks {
  std::string source; // their MLIR (bytecode), as cpn-lower-fp-flags left it
  std::vector<std::string> names;
  int optLevel = 3;
  std::once_flag once;
  std::vector<void *> fns;
  std::string error; // set when compiling them failed
};

class Executable {
public:
  std::vector<char> object; // the object code, until written to the disk cache
  void (*fn)(void **) = nullptr;
  std::string name = "kernel";        // "kernel <key>", as its tasks are named
  std::shared_ptr<LazyChecks> checks; // null when the kernel has none
  /// A product or library call of the trace runs on threads other than
  /// OpenMP's (OpenBLAS's, the runtime's sorts and gathers).
  bool callsLibrary = false;
};

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

Type elementType(MLIRContext *ctx, cpnrt::DType t) {
  using cpnrt::DType;
  switch (t) {
  case DType::b1:
    return IntegerType::get(ctx, 1);
  case DType::i8:
  case DType::u8:
    return IntegerType::get(ctx, 8);
  case DType::i16:
  case DType::u16:
    return IntegerType::get(ctx, 16);
  case DType::i32:
  case DType::u32:
    return IntegerType::get(ctx, 32);
  case DType::i64:
  case DType::u64:
    return IntegerType::get(ctx, 64);
  case DType::f32:
    return Float32Type::get(ctx);
  case DType::f64:
    return Float64Type::get(ctx);
  case DType::f16:
    return Float16Type::get(ctx);
  case DType::c64:
    return ComplexType::get(Float32Type::get(ctx));
  case DType::c128:
    return ComplexType::get(Float64Type::get(ctx));
  }
  return {};
}

/// A context for compiling: the compiling thread has one (context()); lazily
/// compiled error checks make their own (compileChecks).
std::unique_ptr<MLIRContext> newContext() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  static std::once_flag passes;
  std::call_once(passes, [] {
    registerAllPasses();
    mlir::cpn::registerCPNPassesAndPipelines();
  });
  registry.insert<mlir::cpn::CPNDialect>();
  mlir::cpn::registerBufferizableOpInterfaceExternalModels(registry);
  auto c =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  // Only what the traced IR uses: passes load their dependent dialects, and
  // canonicalize collects the patterns of every loaded dialect, so loading
  // all of them made each compile several times slower.
  c->loadDialect<mlir::cpn::CPNDialect, func::FuncDialect,
                 bufferization::BufferizationDialect, arith::ArithDialect,
                 tensor::TensorDialect, memref::MemRefDialect>();
  return c;
}

MLIRContext &context() {
  static MLIRContext *ctx = newContext().release();
  return *ctx;
}

/// Builds `func.func @kernel(inputs..., outputs...)` from the trace. Outputs
/// with a donor input (donors[j] >= 0) get no argument of their own: they are
/// written into the donor's buffer, which is then a writable tensor, so
/// one-shot bufferization sees the aliasing and updates in place where no
/// later read of the old value forbids it.
/// Row-major element strides of a shape.
std::vector<int64_t> rowMajor(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// For a shape-generic kernel: the dims of the cpn.remap equivalent to a view
/// (offset, strides in `iattrs`) of `base` with shape `shape` that broadcasts
/// and transposes the whole base; nullopt for other views (slices, reshapes).
std::optional<SmallVector<int64_t>>
remapDims(const std::vector<int64_t> &base, const std::vector<int64_t> &shape,
          const std::vector<int64_t> &iattrs) {
  if (iattrs.empty() || iattrs[0] != 0 || iattrs.size() != shape.size() + 1)
    return std::nullopt;
  std::vector<int64_t> rs = rowMajor(base);
  std::vector<bool> walked(base.size(), false);
  SmallVector<int64_t> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t n = shape[i], stride = iattrs[i + 1];
    if (n == 1 || stride == 0) {
      dims.push_back(-1);
      continue;
    }
    int64_t found = -1;
    for (size_t j = 0; j < base.size() && found < 0; ++j)
      if (!walked[j] && base[j] == n && rs[j] == stride)
        found = static_cast<int64_t>(j);
    if (found < 0)
      return std::nullopt;
    walked[found] = true;
    dims.push_back(found);
  }
  for (size_t j = 0; j < base.size(); ++j)
    if (!walked[j] && base[j] != 1)
      return std::nullopt;
  return dims;
}

OwningOpRef<ModuleOp> buildModule(const Trace &trace,
                                  const std::vector<int32_t> &outputs,
                                  const std::vector<int32_t> &donors,
                                  const ShapeSymbols &symbols = {},
                                  bool fpStatus = true) {
  MLIRContext *ctx = &context();
  OpBuilder b(ctx);
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  // A dimension whose size is a representative size is dynamic.
  auto dynamic = [&](int64_t d) { return symbols.count(d) > 0; };
  auto anyDynamic = [&](const std::vector<int64_t> &shape) {
    return llvm::any_of(shape, dynamic);
  };
  auto typeShape = [&](const std::vector<int64_t> &shape) {
    SmallVector<int64_t> s;
    for (int64_t d : shape)
      s.push_back(dynamic(d) ? ShapedType::kDynamic : d);
    return s;
  };
  auto tensorTy = [&](const std::vector<int64_t> &shape, cpnrt::DType t) {
    return RankedTensorType::get(typeShape(shape), elementType(ctx, t));
  };
  auto memrefTy = [&](const std::vector<int64_t> &shape, cpnrt::DType t) {
    // An empty array with an empty inner dimension (0x0, 3x0) gets explicit
    // strides: its identity layout has none that MLIR can compute, and one
    // such argument would turn the whole kernel's calling convention from
    // bare pointers into memref descriptors.
    if (!anyDynamic(shape) && shape.size() >= 2 &&
        llvm::is_contained(ArrayRef<int64_t>(shape).drop_front(), 0)) {
      std::vector<int64_t> strides(shape.size(), 1);
      for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * std::max<int64_t>(shape[i + 1], 1);
      return MemRefType::get(typeShape(shape), elementType(ctx, t),
                             StridedLayoutAttr::get(ctx, 0, strides));
    }
    return MemRefType::get(typeShape(shape), elementType(ctx, t));
  };

  SmallVector<Type> argTypes;
  for (const NodeRef &in : trace.inputs())
    argTypes.push_back(memrefTy(in->shape, in->dtype));
  std::vector<bool> donated(trace.inputs().size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0)
      donated[donors[j]] = true;
    else
      argTypes.push_back(memrefTy(trace.ops()[outputs[j]].shape,
                                  trace.ops()[outputs[j]].dtype));
  }
  // np.errstate: one status word per kFpSitesPerWord checked ops, last.
  static_assert(::cpn::kFpSitesPerWord == mlir::cpn::kFpSitesPerWord);
  std::vector<std::string> fpNames;
  if (fpStatus)
    fpNames = trace.fpSites();
  int64_t fpWords =
      (static_cast<int64_t>(fpNames.size()) + ::cpn::kFpSitesPerWord - 1) /
      ::cpn::kFpSitesPerWord;
  if (fpWords)
    argTypes.push_back(MemRefType::get({fpWords}, b.getI32Type()));
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, loc, "kernel", b.getFunctionType(argTypes, {}));
  if (fpWords)
    func.setArgAttr(argTypes.size() - 1, mlir::cpn::kFpStatusAttr,
                    b.getUnitAttr());
  // Every argument is a distinct store (a donated input is one argument), so
  // LLVM may assume no aliasing between them: loads and stores are promoted
  // out of loops and loops vectorize without runtime overlap checks.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, "llvm.noalias", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> inputs, results;
  for (size_t i = 0; i < trace.inputs().size(); ++i) {
    const NodeRef &in = trace.inputs()[i];
    inputs.push_back(bufferization::ToTensorOp::create(
        b, loc, tensorTy(in->shape, in->dtype), entry->getArgument(i),
        /*restrict=*/true, /*writable=*/donated[i]));
  }
  auto operand = [&](int32_t r) -> Value {
    return r >= 0 ? results[r] : inputs[-r - 1];
  };
  auto dtypeOf = [&](int32_t r) {
    return r >= 0 ? trace.ops()[r].dtype : trace.inputs()[-r - 1]->dtype;
  };
  auto shapeOf = [&](int32_t r) -> const std::vector<int64_t> & {
    return r >= 0 ? trace.ops()[r].shape : trace.inputs()[-r - 1]->shape;
  };
  // The size of each dynamic dimension, read off the first input that has it.
  std::map<int64_t, Value> sizeOf;
  for (size_t i = 0; i < trace.inputs().size(); ++i)
    for (auto [k, d] : llvm::enumerate(trace.inputs()[i]->shape))
      if (dynamic(d) && !sizeOf.count(d))
        sizeOf[d] = tensor::DimOp::create(b, loc, inputs[i], k);
  for (const TraceOp &op : trace.ops()) {
    OperationState st(
        op.line ? Location(FileLineColLoc::get(ctx, op.file, op.line, 0)) : loc,
        "cpn." + op.name);
    for (int32_t r : op.operands)
      st.addOperands(operand(r));
    st.addTypes(tensorTy(op.shape, op.dtype));
    bool generic =
        anyDynamic(op.shape) || llvm::any_of(op.operands, [&](int32_t r) {
          return anyDynamic(shapeOf(r));
        });
    auto unsupported = [&](const std::string &what) {
      std::string where =
          op.line ? op.file + ":" + std::to_string(op.line) + ": " : "";
      return std::invalid_argument(
          where + what +
          " involving a dimension of any size (':' or a name) cannot be "
          "compiled shape-generic; declare that dimension's size");
    };
    if (generic && op.name == "view") {
      std::optional<SmallVector<int64_t>> dims =
          remapDims(shapeOf(op.operands[0]), op.shape, op.iattrs);
      if (!dims)
        throw unsupported("a slice, reshape or diagonal");
      OperationState remap(st.location, "cpn.remap");
      remap.addOperands(st.operands);
      for (auto [i, d] : llvm::enumerate(*dims))
        if (d < 0 && dynamic(op.shape[i]))
          remap.addOperands(sizeOf.at(op.shape[i]));
      remap.addTypes(st.types);
      remap.addAttribute("dims", b.getDenseI64ArrayAttr(*dims));
      results.push_back(b.create(remap)->getResult(0));
      continue;
    }
    if (generic &&
        (op.name == "update" || op.name == "iota" || op.name == "libcall"))
      throw unsupported(op.name == "iota"      ? "an arange"
                        : op.name == "libcall" ? "a linear-algebra call"
                                               : "a write into a slice");
    if (op.name == "view" || op.name == "update") {

      st.addAttribute("offset", b.getI64IntegerAttr(op.iattrs.at(0)));
      st.addAttribute(
          "strides",
          b.getDenseI64ArrayAttr(ArrayRef<int64_t>(op.iattrs).drop_front()));
    } else if (op.name == "reduce") {
      st.addAttribute("kind", b.getStringAttr(op.sattr));
      st.addAttribute("axes", b.getDenseI64ArrayAttr(op.iattrs));
    } else if (op.name == "libcall") {
      st.addAttribute("callee", b.getStringAttr(op.sattr));
      st.addAttribute("args", b.getDenseI64ArrayAttr(op.iattrs));
      if (cpnrt::updatesFirstInput(op.sattr))
        st.addAttribute("in_place", b.getUnitAttr());
    } else if (op.name == "iota") {
      st.addAttribute("dim", b.getI64IntegerAttr(op.iattrs.at(0)));
    } else if (op.name == "cast") {
      if (cpnrt::isUnsigned(dtypeOf(op.operands[0])))
        st.addAttribute("src_unsigned", b.getUnitAttr());
      if (cpnrt::isUnsigned(op.dtype))
        st.addAttribute("dst_unsigned", b.getUnitAttr());
    }
    if (fpWords && op.fpChecks) {
      st.addAttribute(mlir::cpn::kFpChecksAttr,
                      b.getI64IntegerAttr(op.fpChecks));
      int64_t site =
          std::find(fpNames.begin(), fpNames.end(), op.name) - fpNames.begin();
      st.addAttribute(mlir::cpn::kFpSiteAttr, b.getI64IntegerAttr(site));
    }
    std::optional<RegisteredOperationName> opName =
        RegisteredOperationName::lookup(st.name.getStringRef(), ctx);
    if (!opName)
      throw std::invalid_argument("cpnumeric: no cpn op '" + op.name + "'");
    // Ops whose meaning depends on signedness declare `is_unsigned` in ODS.
    if (!op.operands.empty() && cpnrt::isUnsigned(dtypeOf(op.operands[0])) &&
        llvm::is_contained(opName->getAttributeNames(),
                           b.getStringAttr("is_unsigned")))
      st.addAttribute("is_unsigned", b.getUnitAttr());
    // NumPy compares an unsigned and a signed integer exactly (`Qq->?`).
    static const std::set<std::string> comparisons = {
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
    if (op.operands.size() == 2 && comparisons.count(op.name)) {
      cpnrt::DType l = dtypeOf(op.operands[0]), r = dtypeOf(op.operands[1]);
      auto isInt = [](cpnrt::DType t) {
        return t != cpnrt::DType::b1 && !cpnrt::isFloat(t) &&
               !cpnrt::isComplex(t);
      };
      if (isInt(l) && isInt(r) && cpnrt::isUnsigned(l) != cpnrt::isUnsigned(r))
        st.addAttribute(mlir::cpn::kMixedSignAttr, b.getUnitAttr());
    }
    results.push_back(b.create(st)->getResult(0));
  }
  // Outputs into fresh buffers first, then those into donated inputs: an
  // output may read a donor's old value directly (canonicalization folds
  // -(-a) to a), and that read must come before the donor is overwritten.
  std::vector<Value> dests(outputs.size());
  size_t nextArg = trace.inputs().size();
  for (size_t j = 0; j < outputs.size(); ++j)
    if (donors[j] < 0)
      dests[j] = entry->getArgument(nextArg++);
  for (bool donated : {false, true})
    for (size_t j = 0; j < outputs.size(); ++j) {
      if ((donors[j] >= 0) != donated)
        continue;
      Value result = results[outputs[j]];
      Value dest = dests[j];
      if (donated) {
        // First into the donor tensor (tensor SSA: bufferization checks the
        // in-place write against every read of the old value), then into its
        // memref, which is by then the same buffer (a copy canonicalized
        // away).
        dest = entry->getArgument(donors[j]);
        result = bufferization::MaterializeInDestinationOp::create(
                     b, loc, result, inputs[donors[j]])
                     .getResult();
      }
      auto m = bufferization::MaterializeInDestinationOp::create(b, loc,
                                                                 result, dest);
      m.setRestrict(true);
      m.setWritable(true);
    }
  func::ReturnOp::create(b, loc);
  return module;
}

/// Splits a pass list at top-level commas ("a,func.func(b,c),d{x=1}").
std::vector<std::string> splitPasses(const std::string &list) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : list) {
    if (c == '(' || c == '{')
      ++depth;
    if (c == ')' || c == '}')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

void writeFile(const std::filesystem::path &p, const std::string &text) {
  std::ofstream f(p);
  f << text;
}

std::string fileSafe(std::string s) {
  for (char &c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      c = '_';
  return s.substr(0, 60);
}

/// Runs the lowering pipeline. With a dump directory, runs one pass at a
/// time and writes the IR after each; on failure, names the cpn-opt command
/// that reproduces it.
/// Called with a stage's name and the module once the stage has run (only
/// when IR is dumped, where stages run one by one).
using StageHook = std::function<void(const std::string &, ModuleOp)>;

/// The pass that outlines the error checks' exact classification: `lower`'s
/// `afterChecks` runs right after it.
constexpr const char *kFpFlagsPass = "cpn-lower-fp-flags";

void lower(ModuleOp module, const std::filesystem::path &dumpDir, int &fileNo,
           const std::string &lastStage = "", bool openmp = true,
           const StageHook &afterStage = nullptr, bool barePtr = true,
           const std::function<void(ModuleOp)> &afterChecks = nullptr) {
  std::string diag;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  auto fail = [&](const std::string &what, const std::string &input) {
    std::string msg = "cpnumeric: compilation failed in " + what + ":\n" + diag;
    msg += "reproduce with: cpn-opt --pass-pipeline='" +
           mlir::cpn::getLowerToLLVMPipeline(openmp, barePtr) + "' " +
           (input.empty() ? std::string("<dumped cpn.mlir>") : input) +
           "\n(set CPN_DUMP_IR=DIR to write the input file)";
    throw std::runtime_error(msg);
  };
  if (dumpDir.empty()) {
    // Two runs when checks are split off: the passes up to the one that
    // outlines them, then the rest.
    std::vector<std::string> parts(1);
    for (auto &[stage, passes] :
         mlir::cpn::getLoweringStages(openmp, barePtr)) {
      for (const std::string &pass : splitPasses(passes)) {
        parts.back() += (parts.back().empty() ? "" : ",") + pass;
        if (afterChecks && pass == kFpFlagsPass)
          parts.emplace_back();
      }
      if (stage == lastStage)
        break;
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0)
        afterChecks(module);
      if (parts[i].empty())
        continue;
      // A fresh pass manager per module: some upstream passes
      // (math-to-funcs) keep per-module state in the pass instance.
      PassManager pm(module.getContext());
      if (failed(parsePassPipeline(parts[i], pm)))
        fail("parsing the lowering pipeline", "");
      if (failed(pm.run(module)))
        fail("the lowering pipeline", "");
    }
    return;
  }
  std::string cpnFile = (dumpDir / "001-cpn.mlir").string();
  for (auto &[stage, passes] : mlir::cpn::getLoweringStages(openmp, barePtr)) {
    for (const std::string &pass : splitPasses(passes)) {
      PassManager pm(module.getContext());
      if (failed(parsePassPipeline(pass, pm)) || failed(pm.run(module)))
        fail("pass '" + pass + "' (stage " + stage + ")", cpnFile);
      if (afterChecks && pass == kFpFlagsPass)
        afterChecks(module);
      char num[8];
      snprintf(num, sizeof(num), "%03d", ++fileNo);
      writeFile(dumpDir / (std::string(num) + "-" + fileSafe(pass) + ".mlir"),
                printOp(module));
    }
    if (afterStage)
      afterStage(stage, module);
  }
}

const char *kOpenMPRuntime = "/usr/lib/llvm-22/lib/libomp.so.5";
const char *kVectorMath = "/lib/x86_64-linux-gnu/libmvec.so.1";

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

/// The host's target machine (CPU and features), so that the vectorizers see
/// the real vector width; without it LLVM's cost model vectorizes almost
/// nothing. `pic`: position-independent code, for shared objects (cpnc).
llvm::TargetMachine *hostTargetMachine(bool pic = false) {
  if (pic) {
    static std::unique_ptr<llvm::TargetMachine> tm =
        makeHostTargetMachine(true);
    return tm.get();
  }
  static std::unique_ptr<llvm::TargetMachine> tm = makeHostTargetMachine(false);
  return tm.get();
}

/// LLVM's default pipeline at `optLevel` for the host, with glibc's vector
/// math library (libmvec) declared, so that loops calling exp/log/sin/pow...
/// vectorize into calls of their SIMD versions. `tm`: a target machine of
/// the caller's own, on threads other than the compiling one.
void optimizeModule(llvm::Module &m, int optLevel,
                    llvm::TargetMachine *tm = nullptr) {
  if (!tm)
    tm = hostTargetMachine();
  if (tm) {
    m.setDataLayout(tm->createDataLayout());
    m.setTargetTriple(tm->getTargetTriple());
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  // Unrolling and interleaving triple compile time for little gain on
  // memory-bound loops.
  pto.LoopUnrolling = false;
  pto.LoopInterleaving = false;
  llvm::PassBuilder pb(tm, pto);
  llvm::TargetLibraryInfoImpl tlii(m.getTargetTriple());
  if (std::filesystem::exists(kVectorMath))
    tlii.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                            m.getTargetTriple());
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

/// The OpenMP runtime kernels call (__kmpc_fork_call, ...), loaded into the
/// process once so that the thread count set here is the one kernels use.
void *openmpRuntime() {
  static void *handle = dlopen(kOpenMPRuntime, RTLD_NOW | RTLD_GLOBAL);
  return handle;
}

std::string cRunnerUtilsPath() {
  const char *candidates[] = {"/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"};
  for (const char *c : candidates)
    if (std::filesystem::exists(c))
      return c;
  return {};
}

/// Adds `void _mlir_<name>(void **args)`, which calls `name` with the
/// pointers args[i] point to: one entry point whatever the kernel's arity
/// (kernels take bare pointers, one per store).
void addPackedWrapper(llvm::Module &m, llvm::StringRef name) {
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
std::vector<char> emitObject(llvm::Module &m, bool pic = false,
                             llvm::TargetMachine *tm = nullptr) {
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
std::unique_ptr<llvm::TargetMachine>
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

std::vector<char> bundleObjects(const std::vector<std::vector<char>> &objects) {
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
/// the kernels' thread count (CPN_THREADS, all cores by default) and 4.
unsigned compileParts(const llvm::Module &m) {
  size_t insts = 0;
  for (const llvm::Function &f : m)
    insts += f.getInstructionCount();
  unsigned threads = static_cast<unsigned>(std::max(1, kernelThreads()));
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
std::vector<std::unique_ptr<llvm::Module>> partition(llvm::Module &m,
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
                                  std::string *llText) {
  unsigned n = compileParts(m);
  if (n <= 1) {
    optimizeModule(m, optLevel);
    if (llText)
      *llText = llvmText(m);
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
  return bundleObjects(objects);
}

void *lazyCheck(void *handle, int32_t index);

/// The runtime's entry points kernels call: Python loads libcpnrt with
/// RTLD_LOCAL, so the JIT cannot find them by a process-wide lookup.
llvm::orc::SymbolMap runtimeSymbols(llvm::orc::MangleAndInterner interner) {
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

/// Libraries compiled kernels link against (found by path at JIT time).
std::vector<std::string> kernelLibraries() {
  std::vector<std::string> libs;
  std::string runner = cRunnerUtilsPath();
  if (!runner.empty())
    libs.push_back(runner);
  if (std::filesystem::exists(kVectorMath))
    libs.push_back(kVectorMath);
  if (!openmpRuntime())
    throw std::runtime_error(std::string("cpnumeric: cannot load the OpenMP "
                                         "runtime ") +
                             kOpenMPRuntime + " (install libomp-22-dev)");
  libs.push_back(kOpenMPRuntime);
  return libs;
}

// -- the disk cache ----------------------------------------------------------
// An entry is `<key>.o` (the kernel's object code, with the packed wrapper
// `_mlir_kernel`), `<key>.checks` (the MLIR of its np.errstate checks, if it
// has any) and `<key>.trace`: a line with the content hashes of the other
// two, then the trace text, compared on load so that a hash collision can
// never run the wrong code. The key mixes the trace hash with everything
// that changes the code: compiler version, pass pipeline, LLVM version, host
// CPU and features, CPN_OPT_LEVEL.
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

uint64_t fnv(uint64_t h, const std::string &s) {
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}

/// A hash of the shared object this compiler is in: a rebuilt compiler (a
/// changed lowering) never reuses kernels an older build wrote.
uint64_t buildId() {
  static uint64_t id = [] {
    uint64_t h = 0xcbf29ce484222325ull;
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&buildId), &info) && info.dli_fname)
      if (auto bytes = llvm::MemoryBuffer::getFile(info.dli_fname))
        h ^= llvm::xxh3_64bits((*bytes)->getBuffer()); // 3 MB in < 1 ms
    return h;
  }();
  return id;
}

uint64_t cacheSalt(int optLevel) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv(h, kCompilerVersion);
  h = fnv(h, std::to_string(buildId()));
  h = fnv(h, mlir::cpn::getLowerToLLVMPipeline());
  h = fnv(h, LLVM_VERSION_STRING);
  // The host CPU and features the target machine is made for (read here
  // without making one: a warm process may never compile).
  h = fnv(h, llvm::sys::getHostCPUName().str());
  std::vector<std::string> features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  std::sort(features.begin(), features.end());
  for (const std::string &f : features)
    h = fnv(h, f);
  return fnv(h, std::to_string(optLevel));
}

std::filesystem::path cachePath(const std::string &dir, uint64_t key,
                                int optLevel, const char *ext) {
  char name[40];
  snprintf(name, sizeof(name), "%016llx%s",
           static_cast<unsigned long long>(key ^ cacheSalt(optLevel)), ext);
  return std::filesystem::path(dir) / name;
}

/// The process's one LLJIT, created on first use and never destroyed (tearing
/// JIT'd code down during static destruction, after the libraries it links
/// against may be gone, hangs in ORC). Its main JITDylib resolves what kernels
/// call.
llvm::orc::LLJIT *sharedJit(std::string &error) {
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
llvm::Expected<llvm::orc::JITDylib *> newKernelDylib(llvm::orc::LLJIT &jit) {
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
           std::shared_ptr<LazyChecks> checks = nullptr) {
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

/// The lowering passes after cpn-lower-fp-flags, which the check functions
/// still need (a list for a module's pass manager).
std::string passesAfterChecks() {
  std::string rest;
  bool after = false;
  for (auto &[stage, passes] : mlir::cpn::getLoweringStages(true, true))
    for (const std::string &pass : splitPasses(passes)) {
      if (after)
        rest += (rest.empty() ? "" : ",") + pass;
      after |= pass == kFpFlagsPass;
    }
  return rest;
}

std::atomic<uint64_t> checkCompilations{0}, checkCompileNanos{0};

/// Compiles the check functions (once per executable; the thread that gets
/// here first does it, the others wait) into their own JITDylib.
void compileChecks(LazyChecks &lc) {
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
    if (!module || failed(parsePassPipeline(passesAfterChecks(), pm)) ||
        failed(pm.run(*module))) {
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
void noCheck() {}

void *lazyCheck(void *handle, int32_t index) {
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
    if (!f.isDeclaration() && f.getSymName().contains("_fp_check"))
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

/// Whether a file or directory is this user's and only this user may write
/// to it: what the disk cache requires of everything it reads code from.
bool ownedAndPrivate(const struct stat &st) {
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

enum class ReadResult { Ok, Missing, Refused };

/// Reads `path` into `bytes` if it is a regular file that is
/// ownedAndPrivate (opened without following a link, checked on the open
/// file, read into memory: what is checked is what is used).
ReadResult readOwnFile(const std::filesystem::path &path, std::string &bytes) {
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

uint64_t contentHash(llvm::StringRef bytes) { return llvm::xxh3_64bits(bytes); }

std::string entryHeader(uint64_t objectHash, const std::string *checks) {
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
void removeEntry(const std::string &dir, uint64_t key, int optLevel) {
  for (const char *ext : {".trace", ".o", ".checks"})
    ::unlink(cachePath(dir, key, optLevel, ext).c_str());
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
bool writeAtomically(const std::filesystem::path &path,
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
bool isCacheFile(llvm::StringRef name, bool &temporary) {
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
uint64_t scanAndEvict(const std::string &dir, uint64_t maxBytes) {
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
void noteStored(const std::string &dir, uint64_t bytes, uint64_t maxBytes) {
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

/// Bytes of a statically shaped memref (0 for dynamic ones).
int64_t memrefBytes(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.hasStaticShape())
    return 0;
  return m.getNumElements() * mlir::cpn::elementBytes(m.getElementType());
}

/// One kernel of a bufferized trace, for summary.txt.
struct KernelInfo {
  std::string what;               // "loop nest 998x998 (f64) ..."
  int64_t bytes = 0;              // bytes it reads and writes
  std::vector<std::string> lines; // "file:line" of the ops it came from
};

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s.empty() ? "scalar" : s;
}

std::vector<std::string> sourceLines(Location loc) {
  std::set<std::pair<std::string, unsigned>> seen;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l))
      seen.insert({f.getFilename().str(), f.getLine()});
    return WalkResult::advance();
  });
  std::vector<std::string> out;
  for (auto &[file, line] : seen)
    out.push_back(file + ":" + std::to_string(line));
  return out;
}

/// Kernels, temporaries, bytes and peak of a bufferized module; with
/// `kernels`, also what each kernel is and where it came from.
TraceCost costOf(ModuleOp module, std::vector<KernelInfo> *kernels = nullptr) {
  TraceCost c;
  module->walk([&](func::FuncOp f) {
    if (f.isExternal())
      return;
    int64_t live = 0;
    for (Type t : f.getArgumentTypes())
      live += memrefBytes(t);
    c.argumentBytes += live;
    c.peakBytes = std::max(c.peakBytes, live);
    f.walk([&](Operation *op) {
      KernelInfo k;
      if (isa<memref::AllocOp>(op)) {
        ++c.temporaries;
        live += memrefBytes(op->getResult(0).getType());
        c.peakBytes = std::max(c.peakBytes, live);
        return;
      }
      if (auto d = dyn_cast<memref::DeallocOp>(op)) {
        live -= memrefBytes(d.getMemref().getType());
        return;
      }
      if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
        for (Value v : op->getOperands())
          k.bytes += memrefBytes(v.getType());
        std::string kind = isa<linalg::GenericOp>(op)
                               ? "loop nest"
                               : op->getName().getStringRef().str();
        k.what = kind + " " + shapeText(l.getStaticLoopRanges()) + ", " +
                 std::to_string(l.getNumDpsInputs()) + " input(s)";
        if (l.getNumReductionLoops())
          k.what += ", reduces " + std::to_string(l.getNumReductionLoops()) +
                    " dim(s)";
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        for (Value v : op->getOperands())
          k.bytes += memrefBytes(v.getType());
        k.what =
            "copy " +
            shapeText(cast<MemRefType>(copy.getSource().getType()).getShape());
      } else if (auto call = dyn_cast<func::CallOp>(op);
                 call && call.getCallee().starts_with("cpn_gemm")) {
        // cpn_gemm_*(A: 4 args, B: 4, C: 4, M, N, K, accumulate).
        auto args = call.getArgOperands();
        int64_t mnk[3] = {0, 0, 0};
        for (int i = 0; i < 3 && args.size() >= 15; ++i)
          if (auto cst = args[12 + i].getDefiningOp<arith::ConstantIntOp>())
            mnk[i] = cst.value();
        int64_t elem = call.getCallee().ends_with("f32") ? 4 : 8;
        int64_t cPasses = 2; // C read and written, or only written
        if (args.size() >= 16)
          if (auto acc = args[15].getDefiningOp<arith::ConstantIntOp>())
            cPasses = acc.value() ? 2 : 1;
        k.bytes = elem * (mnk[0] * mnk[2] + mnk[2] * mnk[1] +
                          cPasses * mnk[0] * mnk[1]);
        k.what = "BLAS " + call.getCallee().str() + " " +
                 std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" +
                 std::to_string(mnk[2]);
      } else if (auto call = dyn_cast<func::CallOp>(op);
                 call && call.getCallee().starts_with("cpn_lib_")) {
        k.what = "LAPACK call " + call.getCallee().str();
      } else {
        return;
      }
      ++c.kernels;
      c.bytesMoved += k.bytes;
      if (kernels) {
        k.lines = sourceLines(op->getLoc());
        kernels->push_back(std::move(k));
      }
    });
  });
  return c;
}

std::string megabytes(int64_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  if (bytes < 1000)
    snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  else if (bytes < 1000000)
    snprintf(buf, sizeof(buf), "%.1f kB", b / 1e3);
  else
    snprintf(buf, sizeof(buf), "%.1f MB", b / 1e6);
  return buf;
}

/// summary.txt of a dumped compilation: each kernel with the source lines it
/// fused, the values that needed no buffer, buffers reused, peak bytes.
std::string summaryText(const Trace &trace, const std::vector<int32_t> &outputs,
                        const std::vector<int32_t> &donors, const TraceCost &c,
                        const std::vector<KernelInfo> &kernels) {
  std::string s;
  auto line = [&](const std::string &t) { s += t + "\n"; };
  line("trace: " + std::to_string(trace.size()) + " ops, " +
       std::to_string(trace.inputs().size()) + " inputs, " +
       std::to_string(outputs.size()) +
       " outputs (values still referenced after the trace)");
  line("kernels: " + std::to_string(c.kernels));
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo &k = kernels[i];
    line("  kernel " + std::to_string(i + 1) + ": " + k.what + ", " +
         megabytes(k.bytes) + " moved");
    std::string from;
    for (const std::string &l : k.lines)
      from += (from.empty() ? "" : ", ") + l;
    line("    from: " +
         (from.empty() ? std::string("(no source lines)") : from));
  }
  int64_t noBuffer = static_cast<int64_t>(trace.size()) -
                     static_cast<int64_t>(outputs.size()) - c.temporaries;
  line("temporaries: " + std::to_string(c.temporaries) +
       " buffer(s) allocated inside the kernel; " +
       std::to_string(std::max<int64_t>(0, noBuffer)) + " of " +
       std::to_string(trace.size()) +
       " values need no buffer of their own (fused into a loop, a view, or "
       "written in place)");
  std::string reused;
  for (size_t j = 0; j < outputs.size(); ++j)
    if (donors[j] >= 0)
      reused += "  output " + std::to_string(j) + " (op %" +
                std::to_string(outputs[j]) + ") is written into the buffer " +
                "of input " + std::to_string(donors[j]) +
                " (no reference to its old value is left)\n";
  line("buffers reused: " +
       std::to_string(donors.size() -
                      std::count(donors.begin(), donors.end(), -1)));
  s += reused;
  line("bytes moved: " + megabytes(c.bytesMoved));
  line("peak bytes: " + std::to_string(c.peakBytes) + " (arguments " +
       std::to_string(c.argumentBytes) +
       " + the most temporaries live at "
       "once)");
  return s;
}

StageHook summaryWriter(const Trace &trace, const std::vector<int32_t> &outputs,
                        const std::vector<int32_t> &donors,
                        const std::filesystem::path &dumpDir) {
  if (dumpDir.empty())
    return nullptr;
  return [&trace, &outputs, &donors, dumpDir](const std::string &stage,
                                              ModuleOp module) {
    if (stage != "bufferized")
      return;
    std::vector<KernelInfo> kernels;
    TraceCost c = costOf(module, &kernels);
    writeFile(dumpDir / "summary.txt",
              summaryText(trace, outputs, donors, c, kernels));
  };
}

/// The LLVM IR of a module lowered to the LLVM dialect, with the packed
/// `_mlir_kernel` entry point, optimized for this machine.
/// `checks`: the check functions extractChecks moved out, which get stubs.
std::unique_ptr<llvm::Module> toLLVM(ModuleOp module, llvm::LLVMContext &ctx,
                                     const LazyChecks *checks = nullptr) {
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

/// Starts a dump directory with the trace and its cpn module, then verifies
/// the module (both compile paths).
void beginCompile(ModuleOp module, const Trace &trace,
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

std::shared_ptr<Executable> compile(const Trace &trace,
                                    const std::vector<int32_t> &outputs,
                                    const std::vector<int32_t> &donors,
                                    const CompilerOptions &opts, uint64_t key,
                                    double &mlirSeconds) {
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors);
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
  lower(*module, dumpDir, fileNo, "", true,
        summaryWriter(trace, outputs, donors, dumpDir), true, [&](ModuleOp m) {
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
  std::string llText;
  std::vector<char> object = optimizeAndEmit(
      *llvmModule, opts.optLevel, dumpDir.empty() ? nullptr : &llText);
  if (!dumpDir.empty())
    writeFile(dumpDir / "llvm.ll", llText);
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

} // namespace

std::vector<char> compileObject(const Trace &trace,
                                const std::vector<int32_t> &outputs,
                                const ObjectOptions &opts) {
  std::vector<int32_t> donors(outputs.size(), -1);
  // Ahead-of-time objects keep the documented calling convention: no
  // status argument, no floating-point error checks.
  OwningOpRef<ModuleOp> module =
      buildModule(trace, outputs, donors, opts.symbols, /*fpStatus=*/false);
  bool barePtr = opts.symbols.empty();
  std::filesystem::path dumpDir;
  int fileNo = 1;
  if (!opts.dumpDir.empty())
    dumpDir = std::filesystem::path(opts.dumpDir) / fileSafe(opts.symbol);
  beginCompile(*module, trace, dumpDir);
  lower(*module, dumpDir, fileNo, "", opts.openmp,
        summaryWriter(trace, outputs, donors, dumpDir), barePtr);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> m =
      toOptimizedLLVM(*module, llvmContext, opts.optLevel);
  // One exported symbol per object: several kernels link into one library.
  llvm::Function *entry = m->getFunction("_mlir_kernel");
  entry->setName(opts.symbol);
  for (llvm::Function &f : *m)
    if (!f.isDeclaration() && &f != entry)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : m->globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (!dumpDir.empty())
    writeFile(dumpDir / "llvm.ll", llvmText(*m));
  return emitObject(*m, /*pic=*/true);
}

std::string stageText(const Trace &trace, const std::vector<int32_t> &outputs,
                      const std::string &stage, int optLevel,
                      const ShapeSymbols &symbols) {
  if (stage == "trace")
    return trace.str();
  std::vector<int32_t> donors(outputs.size(), -1);
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors, symbols);
  if (stage == "cpn")
    return printOp(*module);
  // Both LLVM forms lower through the "llvm" stage.
  std::string last = stage == "llvm-dialect" ? "llvm" : stage;
  bool known = false;
  for (auto &[name, passes] : mlir::cpn::getLoweringStages())
    known |= name == last;
  if (!known)
    throw std::invalid_argument(
        "cpnumeric: unknown stage '" + stage +
        "'; the stages are trace, cpn, linalg, fused, bufferized, loops, "
        "llvm-dialect and llvm (the optimized LLVM IR)");
  int fileNo = 0;
  lower(*module, {}, fileNo, last, true, nullptr, symbols.empty());
  if (stage != "llvm")
    return printOp(*module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      toOptimizedLLVM(*module, llvmContext, optLevel);
  return llvmText(*llvmModule);
}

TraceCost traceCost(const Trace &trace, const std::vector<int32_t> &outputs) {
  std::vector<int32_t> donors(outputs.size(), -1);
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors);
  int fileNo = 0;
  lower(*module, {}, fileNo, "bufferized");
  TraceCost c = costOf(*module);
  c.values = static_cast<int64_t>(trace.size());
  c.outputs = static_cast<int64_t>(outputs.size());
  return c;
}

int kernelThreadCount = 0;

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
  return kernelThreadCount ? kernelThreadCount : setKernelThreads(0);
}

std::vector<int32_t> planDonations(const Trace &trace,
                                   const std::vector<int32_t> &outputs) {
  const auto &inputs = trace.inputs();
  // The trace holds one reference; a Python handle would hold another. Each
  // store belongs to exactly one node, so a dead node means a dead store
  // (tasks still reading it are ordered before ours by the task graph).
  std::vector<bool> free(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    free[i] = inputs[i].use_count() == 1 && inputs[i]->store &&
              inputs[i]->store->nbytes() > 0;
  // A runtime call (libcall) reads its operands' buffers outside the tensor
  // SSA that bufferization checks: an output written into a donor it reads
  // (directly or through views) could overwrite it first (a copy's result
  // donated into np.put's indices). Such inputs are not donated. An in-place
  // call (cpnrt::updatesFirstInput) reads and writes its operands as tensors
  // until one-shot bufferization, which sees every use.
  for (const TraceOp &op : trace.ops())
    if (op.name == "libcall" && !cpnrt::updatesFirstInput(op.sattr))
      for (int32_t r : op.operands) {
        while (r >= 0 && trace.ops()[r].name == "view")
          r = trace.ops()[r].operands[0];
        if (r < 0)
          free[-r - 1] = false;
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
      if (free[in] && sameType(in, trace.ops()[outputs[j]])) {
        donors[j] = in;
        free[in] = false;
      }
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0)
      continue;
    for (size_t in = 0; in < inputs.size(); ++in) {
      if (free[in] &&
          sameType(static_cast<int32_t>(in), trace.ops()[outputs[j]])) {
        donors[j] = static_cast<int32_t>(in);
        free[in] = false;
        break;
      }
    }
  }
  return donors;
}

std::string buildModuleText(const Trace &trace,
                            const std::vector<int32_t> &outputs) {
  return printOp(*buildModule(trace, outputs, planDonations(trace, outputs)));
}

namespace {
/// Submits `exe` on the runtime's task graph: it reads `reads` and writes
/// `outArgs` (its arguments, in that order); `writes` are every store it
/// writes (outArgs and donated inputs).
std::mutex fpReportsMutex;
std::vector<FpReport> fpReports;

/// Reports the sites of `fp` whose bits are set in `status`.
void reportFpErrors(const FpSites &fp, const std::vector<int32_t> &status) {
  std::lock_guard<std::mutex> lock(fpReportsMutex);
  for (size_t k = 0; k < fp.names.size(); ++k) {
    auto bits = static_cast<uint8_t>((status[k / ::cpn::kFpSitesPerWord] >>
                                      (3 * (k % ::cpn::kFpSitesPerWord))) &
                                     7);
    if (bits) {
      FpReport r{fp.names[k], bits, fp.actions};
      if (k < fp.locations.size())
        std::tie(r.file, r.line) = fp.locations[k];
      fpReports.push_back(std::move(r));
    }
  }
}

void runKernel(const std::shared_ptr<Executable> &exe,
               std::vector<cpnrt::StoreRef> reads,
               std::vector<cpnrt::StoreRef> outArgs,
               std::vector<cpnrt::StoreRef> writes,
               std::shared_ptr<const FpSites> fp) {
  // The inputs it does not write in place: what a library call learns about
  // their elements (a symmetric matrix) holds for the whole run.
  std::vector<cpnrt::StoreRef> readOnly;
  for (const cpnrt::StoreRef &s : reads)
    if (!llvm::is_contained(writes, s) && !llvm::is_contained(readOnly, s))
      readOnly.push_back(s);
  cpnrt::TaskGraph::global().submit(
      exe->name,
      [exe, reads, outArgs, fp, readOnly = std::move(readOnly)] {
        cpnrt::ReadOnlyInputs readOnlyScope(readOnly);
        std::vector<void *> ptrs;
        ptrs.reserve(reads.size() + outArgs.size() + 1);
        for (auto &s : reads)
          ptrs.push_back(s->data());
        for (auto &s : outArgs)
          ptrs.push_back(s->data());
        // The status words the kernel ORs its checked ops' errors into.
        std::vector<int32_t> status;
        if (fp) {
          status.assign((fp->names.size() + ::cpn::kFpSitesPerWord - 1) /
                            ::cpn::kFpSitesPerWord,
                        0);
          ptrs.push_back(status.data());
        }
        std::vector<void *> args;
        for (void *&p : ptrs)
          args.push_back(&p);
        // libomp's idle threads spin 200 ms after each parallel region (what
        // back-to-back loop kernels want); around BLAS and library calls,
        // which run on threads of their own, they would take a core from
        // them: in a kernel with such calls they sleep at once.
        static auto *setBlocktime = reinterpret_cast<void (*)(int)>(
            openmpRuntime() ? dlsym(openmpRuntime(), "kmp_set_blocktime")
                            : nullptr);
        static auto *getBlocktime = reinterpret_cast<int (*)()>(
            openmpRuntime() ? dlsym(openmpRuntime(), "kmp_get_blocktime")
                            : nullptr);
        int blocktime = -1;
        if (exe->callsLibrary && setBlocktime && getBlocktime) {
          blocktime = getBlocktime();
          setBlocktime(0);
        }
        exe->fn(args.data());
        if (blocktime >= 0)
          setBlocktime(blocktime);
        if (exe->checks && !exe->checks->error.empty())
          throw std::runtime_error(exe->checks->error);
        if (fp && llvm::any_of(status, [](int32_t w) { return w != 0; }))
          reportFpErrors(*fp, status);
        // A library call (LAPACK) that failed left its error for this thread.
        if (std::string error = cpnrt::takeKernelError(); !error.empty())
          throw std::runtime_error(error);
      },
      reads, writes);
  // At most a few windows ahead of execution.
  cpnrt::TaskGraph::global().waitInFlightAtMost(kMaxWindowsAhead);
}
} // namespace

CheckCompileStats checkCompileStats() {
  return {checkCompilations.load(), checkCompileNanos.load() * 1e-9};
}

void resetCheckCompileStats() {
  checkCompilations = 0;
  checkCompileNanos = 0;
}

std::vector<FpReport> takeFpReports() {
  std::lock_guard<std::mutex> lock(fpReportsMutex);
  std::vector<FpReport> out;
  out.swap(fpReports);
  return out;
}

void Engine::setFpState(uint8_t checks, std::array<uint8_t, 3> actions) {
  fpChecks_ = checks & FpAll;
  fpActions_ = actions;
  trace_.setFpChecks(fpQuiet_ ? 0 : fpChecks_);
}

void Engine::setFpQuiet(bool quiet) {
  fpQuiet_ = quiet;
  trace_.setFpChecks(fpQuiet_ ? 0 : fpChecks_);
}

std::shared_ptr<const FpSites> Engine::fpSites() const {
  std::vector<std::string> names = trace_.fpSites();
  if (names.empty())
    return nullptr;
  auto fp = std::make_shared<FpSites>();
  fp->names = std::move(names);
  fp->locations = trace_.fpSiteLocations();
  fp->actions = fpActions_;
  return fp;
}

Engine &Engine::global() {
  static Engine *e = new Engine();
  return *e;
}

NodeRef Engine::record(std::string name, const std::vector<NodeRef> &operands,
                       std::vector<int64_t> iattrs, std::string sattr,
                       std::vector<int64_t> shape, cpnrt::DType dtype) {
  ++stats_.opsRecorded;
  if (cutPending_)
    flush();
  NodeRef r = trace_.add(std::move(name), operands, std::move(iattrs),
                         std::move(sattr), std::move(shape), dtype);
  // A runaway trace without statements (x = f(x) in a loop) is cut too; `r`
  // is alive, so it is materialized.
  if (trace_.size() >= 4 * options_.traceLimit && !capturing_)
    flush();
  return r;
}

void Engine::statementEnd() {
  if (trace_.size() >= options_.traceLimit && !capturing_)
    cutPending_ = true;
}

void Engine::flush() {
  cutPending_ = false;
  if (trace_.empty())
    return;
  if (capturing_)
    throw std::logic_error(
        "cpnumeric: a value was needed while @jit was tracing");
  ++stats_.flushes;
  std::vector<int32_t> outputs = trace_.liveResults();
  stats_.deadValuesSkipped += trace_.size() - outputs.size();
  std::vector<int32_t> donors = planDonations(trace_, outputs);
  std::shared_ptr<Executable> exe;
  try {
    exe = obtain(outputs, donors);
  } catch (const std::exception &) {
    recoverWindow();
    return;
  }
  submit(exe, outputs, donors);
}

/// A window that failed to compile runs in parts, so that one op the
/// compiler cannot handle costs only the values that depend on it: the ops
/// are recorded again into halves, each compiled alone (values crossing a cut
/// are materialized), recursively until the failing ops are alone. Their
/// results, and the results of every op reading them, keep the compiler's
/// message as their error: reading one, or recording an op on one, raises
/// it. Every other value of the window is computed as if nothing failed.
void Engine::recoverWindow() {
  ++stats_.windowsRecovered;
  Trace failed = trace_;
  trace_.clear();
  const std::vector<TraceOp> &ops = failed.ops();
  size_t n = ops.size();
  // Python's nodes (strong while recovering), each op's value as recorded
  // again, and the error of each op that cannot be computed.
  std::vector<NodeRef> held(n), value(n);
  std::vector<std::string> error(n);
  std::vector<size_t> lastUse(n, 0);
  for (size_t i = 0; i < n; ++i) {
    held[i] = ops[i].result.lock();
    for (int32_t r : ops[i].operands)
      if (r >= 0)
        lastUse[r] = i;
  }
  uint8_t checks = trace_.fpChecks();
  std::function<void(size_t, size_t)> run = [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      const TraceOp &op = ops[i];
      std::vector<NodeRef> operands;
      for (int32_t r : op.operands) {
        if (r >= 0 && !error[r].empty()) {
          error[i] = error[r];
          break;
        }
        operands.push_back(r >= 0 ? value[r] : failed.inputs()[-r - 1]);
      }
      if (!error[i].empty())
        continue;
      trace_.setFpChecks(op.fpChecks);
      trace_.setLocation(op.file, op.line);
      value[i] = trace_.add(op.name, operands, op.iattrs, op.sattr, op.shape,
                            op.dtype, held[i]);
    }
    trace_.setFpChecks(checks);
    trace_.setLocation("", 0);
    // Values used only inside this part need no store.
    for (size_t i = lo; i < hi; ++i)
      if (!held[i] && lastUse[i] < hi)
        value[i].reset();
    if (trace_.empty())
      return;
    std::vector<int32_t> outputs = trace_.liveResults();
    std::vector<int32_t> donors = planDonations(trace_, outputs);
    std::shared_ptr<Executable> exe;
    try {
      exe = obtain(outputs, donors);
    } catch (const std::exception &e) {
      trace_.clear();
      if (hi - lo == 1) {
        error[lo] = std::string(e.what()) + " (op " + ops[lo].name + ")";
        return;
      }
      size_t mid = lo + (hi - lo) / 2;
      run(lo, mid);
      run(mid, hi);
      return;
    }
    submit(exe, outputs, donors);
  };
  run(0, n);
  for (size_t i = 0; i < n; ++i)
    if (held[i] && !error[i].empty()) {
      held[i]->opIndex = -1;
      held[i]->error =
          "cpnumeric: this value could not be computed: " + error[i];
      ++stats_.valuesFailed;
    }
}

std::shared_ptr<Executable> Engine::obtain(const std::vector<int32_t> &outputs,
                                           const std::vector<int32_t> &donors) {
  uint64_t key = trace_.hash();
  for (size_t j = 0; j < outputs.size(); ++j) {
    key = hashMix(key, static_cast<uint64_t>(outputs[j]));
    key = hashMix(key, static_cast<uint64_t>(static_cast<int64_t>(donors[j])));
  }
  // Leaked on purpose: tearing down JIT'd code during static destruction, after
  // the libraries it links against may be gone, hangs in ORC.
  static auto &cache =
      *new std::unordered_map<uint64_t, std::shared_ptr<Executable>>();
  char keyText[24];
  snprintf(keyText, sizeof(keyText), "%016llx",
           static_cast<unsigned long long>(key));
  std::shared_ptr<Executable> exe;
  // The disk cache's check text: the trace and which outputs go where.
  std::string text;
  bool disk = false; // the disk cache is on and its directory usable
  auto it = cache.find(key);
  if (it != cache.end()) {
    ++stats_.cacheHits;
    exe = it->second;
  } else if (!outputs.empty()) {
    disk = !options_.cacheDir.empty() && cacheDirUsable(options_.cacheDir);
    if (disk) {
      auto t0 = std::chrono::steady_clock::now();
      text = trace_.str() + "\noutputs:";
      for (size_t j = 0; j < outputs.size(); ++j)
        text +=
            " " + std::to_string(outputs[j]) + ":" + std::to_string(donors[j]);
      cpnrt::ProfileScope scope("compile",
                                std::string("disk cache lookup ") + keyText);
      exe = loadCached(options_.cacheDir, key, options_.optLevel, text);
      if (exe) {
        exe->name = std::string("kernel ") + keyText;
        exe->callsLibrary = callsLibrary(trace_);
        ++stats_.diskHits;
        stats_.diskLoadSeconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                .count();
        cache[key] = exe;
      }
    }
  }
  if (!exe && !outputs.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    try {
      cpnrt::ProfileScope scope("compile", std::string("compile ") + keyText,
                                "{\"ops\": " + std::to_string(trace_.size()) +
                                    "}");
      double mlirSeconds = 0;
      exe = compile(trace_, outputs, donors, options_, key, mlirSeconds);
      exe->name = std::string("kernel ") + keyText;
      exe->callsLibrary = callsLibrary(trace_);
      stats_.compileMlirSeconds += mlirSeconds;
      if (disk &&
          storeCached(options_.cacheDir, options_.cacheMaxBytes, key,
                      options_.optLevel, text,
                      llvm::StringRef(exe->object.data(), exe->object.size()),
                      exe->checks.get()))
        ++stats_.diskWrites;
      std::vector<char>().swap(exe->object); // written; not kept in memory
    } catch (...) {
      // The caller decides what becomes of the trace (flush runs it in parts,
      // @jit drops it).
      throw;
    }
    stats_.compileSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    ++stats_.compilations;
    cache[key] = exe;
  }
  return exe;
}

void Engine::submit(const std::shared_ptr<Executable> &exe,
                    const std::vector<int32_t> &outputs,
                    const std::vector<int32_t> &donors) {
  std::vector<cpnrt::StoreRef> reads, writes;
  for (const NodeRef &in : trace_.inputs())
    reads.push_back(in->store);
  std::vector<cpnrt::StoreRef> outArgs;
  for (size_t j = 0; j < outputs.size(); ++j) {
    NodeRef node = trace_.ops()[outputs[j]].result.lock();
    if (donors[j] >= 0) {
      node->store = trace_.inputs()[donors[j]]->store;
      ++stats_.buffersDonated;
    } else {
      node->store = std::make_shared<cpnrt::Store>(node->dtype, node->shape);
      outArgs.push_back(node->store);
    }
    node->opIndex = -1;
    writes.push_back(node->store);
    ++stats_.valuesMaterialized;
  }
  std::shared_ptr<const FpSites> fp = fpSites();
  trace_.clear();
  if (exe)
    runKernel(exe, std::move(reads), std::move(outArgs), std::move(writes),
              std::move(fp));
}

void Engine::beginCapture() {
  flush();
  capturing_ = true;
}

std::shared_ptr<CapturedTrace> Engine::endCapture(bool execute) {
  capturing_ = false;
  cutPending_ = false;
  auto cap = std::make_shared<CapturedTrace>();
  cap->inputs = trace_.inputs();
  cap->outputs = trace_.liveResults();
  for (int32_t o : cap->outputs)
    cap->results.push_back(trace_.ops()[o].result.lock());
  // No donation: the inputs are the caller's arrays and captured constants,
  // which later calls read again.
  std::vector<int32_t> donors(cap->outputs.size(), -1);
  try {
    if (!trace_.empty())
      cap->exe = obtain(cap->outputs, donors);
  } catch (...) {
    trace_.clear();
    throw;
  }
  cap->trace = trace_;
  cap->trace.detachInputs();
  cap->fp = fpSites();
  if (execute) {
    ++stats_.flushes;
    submit(cap->exe, cap->outputs, donors);
  } else {
    trace_.clear();
  }
  return cap;
}

std::vector<NodeRef>
CapturedTrace::call(const std::vector<NodeRef> &args) const {
  if (args.size() != inputs.size())
    throw std::invalid_argument(
        "cpnumeric: a compiled function got " + std::to_string(args.size()) +
        " inputs; it was traced with " + std::to_string(inputs.size()));
  std::vector<cpnrt::StoreRef> reads, outArgs;
  for (size_t i = 0; i < args.size(); ++i) {
    const NodeRef &a = args[i];
    if (!a->store)
      throw std::invalid_argument("cpnumeric: input " + std::to_string(i) +
                                  " of a compiled function is not computed");
    if (a->shape != inputs[i]->shape || a->dtype != inputs[i]->dtype)
      throw std::invalid_argument(
          "cpnumeric: input " + std::to_string(i) +
          " of a compiled function has another shape or dtype than traced");
    reads.push_back(a->store);
  }
  std::vector<NodeRef> out;
  for (const NodeRef &r : results) {
    auto node = std::make_shared<ValueNode>();
    node->shape = r->shape;
    node->dtype = r->dtype;
    node->store = std::make_shared<cpnrt::Store>(node->dtype, node->shape);
    outArgs.push_back(node->store);
    out.push_back(node);
  }
  if (exe)
    runKernel(exe, reads, outArgs, outArgs, fp);
  return out;
}

} // namespace cpn
