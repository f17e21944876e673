//===- Reports.cpp - cost, summary.txt and stage text ---------------------===//
//
// Part of cpnumeric.
//
// Owns reading lowered IR back for people: traceCost (kernels, temporaries,
// bytes moved and peak bytes of the bufferized IR), the summary.txt of a dumped
// compilation (summaryWriter, a StageHook for lower; scalarMathInLoops adds
// the scalar libm calls the optimized code kept in loops) and stageText, a
// trace's IR at any stage.
//
// Calls TraceImport.cpp (buildModule), Lowering.cpp (lower, printOp, writeFile)
// and CodeGen.cpp (toOptimizedLLVM, llvmText).
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpnrt/Comm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

using namespace mlir;

namespace cpn {
namespace detail {

/// Bytes of a statically shaped memref (0 for dynamic ones).
static int64_t memrefBytes(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.hasStaticShape())
    return 0;
  return m.getNumElements() * mlir::cpn::elementBytes(m.getElementType());
}

namespace {
/// One kernel of a bufferized trace, for summary.txt.
struct KernelInfo {
  std::string what;               // "loop nest 998x998 (f64) ..."
  int64_t bytes = 0;              // bytes it reads and writes
  std::vector<std::string> lines; // "file:line" of the ops it came from
};
} // namespace

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s.empty() ? "scalar" : s;
}

static std::vector<std::string> sourceLines(Location loc) {
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
static TraceCost costOf(ModuleOp module,
                        std::vector<KernelInfo> *kernels = nullptr) {
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
      // A cpn-fuse-row-products loop is one kernel: the loops and calls
      // inside run once per block of rows.
      if (op->getParentOfType<scf::ForallOp>())
        return;
      if (auto loop = dyn_cast<scf::ForallOp>(op)) {
        int64_t trips = 1;
        for (OpFoldResult ub : loop.getMixedUpperBound())
          trips *= getConstantIntValue(ub).value_or(1);
        int64_t loops = 0;
        loop.getBody()->walk([&](linalg::LinalgOp inner) {
          ++loops;
          for (Value v : inner->getOperands())
            k.bytes += trips * memrefBytes(v.getType());
        });
        k.what = "row-block loop of " + std::to_string(trips) + " blocks, " +
                 std::to_string(loops) + " loop nest(s) each";
      } else if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
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

static std::string megabytes(int64_t bytes) {
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
static std::string summaryText(const Trace &trace,
                               const std::vector<int32_t> &outputs,
                               const std::vector<int32_t> &donors,
                               const TraceCost &c,
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
  for (size_t j = outputs.size(); j < donors.size(); ++j)
    reused += "  input " + std::to_string(donors[j]) +
              " is updated in place (no reference to it is left)\n";
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

std::vector<std::string> scalarMathInLoops(const llvm::Module &m) {
  static const std::set<std::string> libm = {
      "exp",  "exp2", "expm1", "exp10",  "log",    "log2",  "log10", "log1p",
      "pow",  "sin",  "cos",   "tan",    "asin",   "acos",  "atan",  "atan2",
      "sinh", "cosh", "tanh",  "asinh",  "acosh",  "atanh", "cbrt",  "hypot",
      "fmod", "erf",  "erfc",  "tgamma", "lgamma", "sincos"};
  // libm's name of a callee: exp, expf, llvm.exp.f64 -> "exp"; or "". A
  // vector math intrinsic left in the code (llvm.log.v16f64: no vector
  // routine of its width) becomes one scalar call per lane in code
  // generation: "log (per lane)".
  auto mathName = [&](llvm::StringRef name, llvm::Type *ret) -> std::string {
    if (ret->isVectorTy()) {
      if (!name.consume_front("llvm."))
        return "";
      name = name.take_until([](char c) { return c == '.'; });
      return libm.count(name.str()) ? name.str() + " (per lane)" : "";
    }
    if (name.consume_front("llvm.")) {
      name = name.take_until([](char c) { return c == '.'; });
      return libm.count(name.str()) ? name.str() : "";
    }
    if (libm.count(name.str()))
      return name.str();
    if (name.consume_back("f") && libm.count(name.str()))
      return name.str() + "f";
    return "";
  };
  std::vector<std::string> found;
  for (const llvm::Function &cf : m) {
    if (cf.isDeclaration())
      continue;
    auto &f = const_cast<llvm::Function &>(cf);
    llvm::DominatorTree dt(f);
    llvm::LoopInfo loops(dt);
    std::map<std::string, int> counts;
    for (llvm::BasicBlock &bb : f) {
      llvm::Loop *loop = loops.getLoopFor(&bb);
      if (!loop)
        continue;
      // A vectorized loop and its scalar remainder (its last few elements)
      // are both marked vectorized: their scalar calls are the remainder's.
      bool vectorized =
          llvm::getBooleanLoopAttribute(loop, "llvm.loop.isvectorized");
      for (llvm::Instruction &inst : bb) {
        std::string name;
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
          if (const llvm::Function *callee = call->getCalledFunction();
              callee && (!vectorized || call->getType()->isVectorTy()))
            name = mathName(callee->getName(), call->getType());
        } else if (inst.getOpcode() == llvm::Instruction::FRem &&
                   (!vectorized || inst.getType()->isVectorTy())) {
          name = "fmod"; // vector frem too: code generation calls fmod per lane
        }
        if (!name.empty())
          ++counts[name];
      }
    }
    for (const auto &[name, n] : counts)
      found.push_back(name + (n > 1 ? " x" + std::to_string(n) : "") + " in " +
                      f.getName().str());
  }
  return found;
}

void appendScalarMath(const std::filesystem::path &summary,
                      const std::vector<std::string> &calls) {
  std::string text = "scalar libm calls in loops: ";
  if (calls.empty())
    text += "none (every math function in a loop is vectorized)\n";
  else {
    text += std::to_string(calls.size()) +
            " (a call per element, not a vector routine)\n";
    for (const std::string &c : calls)
      text += "  " + c + "\n";
  }
  std::ofstream(summary, std::ios::app) << text;
}

/// The messages of one rank's program (cpn-localize's attributes): for each
/// split input, the rows it reads, the halo rows it receives from and sends
/// to each rank (as the Engine's exchangeRows makes them) or a gather; each
/// split output's rows and each partial's all-reduce. Empty for a kernel of
/// one process (no `cpn.local`).
static std::string ranksText(ModuleOp module, const Trace &trace,
                             const std::vector<int32_t> &outputs,
                             const std::vector<int32_t> &donors) {
  func::FuncOp f;
  module.walk([&](func::FuncOp g) {
    if (!f && g->hasAttr("cpn.local"))
      f = g;
  });
  if (!f)
    return "";
  auto local = f->getAttrOfType<DenseI64ArrayAttr>("cpn.local");
  int64_t me = local[0], ranks = local[1];
  auto block = [&](int64_t n, int64_t q) {
    return cpnrt::comm::blockRow(n, q, ranks);
  };
  std::string s = "ranks: the program of rank " + std::to_string(me) + " of " +
                  std::to_string(ranks) + " (cpn-localize)";
  if (auto b = f->getAttrOfType<IntegerAttr>("cpn.border")) {
    auto part = f->getAttrOfType<IntegerAttr>("cpn.part");
    int64_t t = b.getInt();
    s += !part ? "; its interior and border (" + std::to_string(t) +
                     " row(s) at each edge) can run apart"
         : part.getInt() == 1
             ? "; the interior: the rows " + std::to_string(t) +
                   " in from each edge of the block, run while the halo "
                   "rows travel"
             : "; the border: " + std::to_string(t) +
                   " row(s) at each edge of the block, run after the halo "
                   "rows land";
  }
  s += "\n";
  int64_t received = 0, sent = 0;
  for (size_t i = 0; i < trace.inputs().size(); ++i) {
    auto rows = f.getArgAttrOfType<DenseI64ArrayAttr>(unsigned(i), "cpn.rows");
    const auto &node = trace.inputs()[i];
    if (!rows || node->shape.empty() || node->shape[0] == 0)
      continue;
    int64_t n = node->shape[0];
    int64_t row = int64_t(cpnrt::dtypeSize(node->dtype));
    for (size_t k = 1; k < node->shape.size(); ++k)
      row *= node->shape[k];
    int64_t lo = block(n, me), hi = block(n, me + 1);
    int64_t r0 = rows[2 * me], r1 = rows[2 * me + 1];
    std::string line = "  input " + std::to_string(i) + ": rows [" +
                       std::to_string(r0) + ", " + std::to_string(r1) +
                       ") of " + std::to_string(n) + " (its block [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "))";
    bool all = true;
    for (int64_t q = 0; q < ranks; ++q)
      all &= rows[2 * q] <= 0 && rows[2 * q + 1] >= n;
    if (all) {
      int64_t b = (n - (hi - lo)) * row;
      received += b;
      line += ", gathered when split: " + megabytes(b) + " received";
    } else {
      std::string in, out;
      for (int64_t q = 0; q < ranks; ++q) {
        if (q == me)
          continue;
        // As the runtime's halo round makes them (exchangeRows).
        auto [a, z] =
            cpnrt::comm::rowsSent(rows.asArrayRef().data(), n, q, me, ranks);
        if (z > a) {
          received += (z - a) * row;
          in += (in.empty() ? "" : ", ") + std::to_string(z - a) +
                " from rank " + std::to_string(q);
        }
        std::tie(a, z) =
            cpnrt::comm::rowsSent(rows.asArrayRef().data(), n, me, q, ranks);
        if (z > a) {
          sent += (z - a) * row;
          out += (out.empty() ? "" : ", ") + std::to_string(z - a) +
                 " to rank " + std::to_string(q);
        }
      }
      if (!in.empty())
        line += ", halo rows received: " + in;
      if (!out.empty())
        line += ", rows sent: " + out;
    }
    s += line + "\n";
  }
  unsigned next =
      unsigned(trace.inputs().size() + (trace.offsetArgCount() ? 1 : 0));
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0) {
      // Written in place into its input: that input's block.
      const auto &node = trace.inputs()[donors[j]];
      if (f.getArgAttrOfType<DenseI64ArrayAttr>(unsigned(donors[j]),
                                                "cpn.rows") &&
          !node->shape.empty())
        s += "  output " + std::to_string(j) + ": rows [" +
             std::to_string(block(node->shape[0], me)) + ", " +
             std::to_string(block(node->shape[0], me + 1)) +
             ") (its block), written in place into input " +
             std::to_string(donors[j]) + "\n";
      continue;
    }
    unsigned arg = next++;
    if (arg >= f.getNumArguments())
      break;
    if (auto rows = f.getArgAttrOfType<DenseI64ArrayAttr>(arg, "cpn.rows"))
      s += "  output " + std::to_string(j) + ": rows [" +
           std::to_string(rows[0]) + ", " + std::to_string(rows[1]) +
           ") (its block)\n";
    if (auto c = f.getArgAttrOfType<StringAttr>(arg, "cpn.combine")) {
      auto mt = cast<MemRefType>(f.getArgument(arg).getType());
      int64_t b = mt.getNumElements() *
                  int64_t(cpnrt::dtypeSize(trace.ops()[outputs[j]].dtype));
      s += "  output " + std::to_string(j) + ": this rank's partial " +
           c.getValue().str() + ", combined over the ranks (an all-reduce of " +
           megabytes(b) + ")\n";
    }
  }
  s += "  messages: " + megabytes(received) + " received, " + megabytes(sent) +
       " sent per run where the inputs are split (halo rows and gathers; "
       "docs/mpi.md)\n";
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
              summaryText(trace, outputs, donors, c, kernels) +
                  ranksText(module, trace, outputs, donors));
  };
}

} // namespace detail

using namespace detail;

std::string stageText(const Trace &trace, const std::vector<int32_t> &outputs,
                      const std::string &stage, int optLevel,
                      const ShapeSymbols &symbols) {
  if (stage == "trace")
    return trace.str();
  auto lock = lockCompiler();
  std::vector<int32_t> donors(outputs.size(), -1);
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors, symbols);
  if (stage == "cpn")
    return printOp(*module);
  // Both LLVM forms lower through the "llvm" stage.
  std::string last = stage == "llvm-dialect" ? "llvm" : stage;
  if (!llvm::is_contained(mlir::cpn::getLoweringStageNames(), last))
    throw std::invalid_argument(
        "cpnumeric: unknown stage '" + stage +
        "'; the stages are trace, cpn, linalg, fused, bufferized, loops, "
        "llvm-dialect and llvm (the optimized LLVM IR)");
  int fileNo = 0;
  mlir::cpn::LoweringOptions options =
      jitTarget().loweringOptions(/*shapeGeneric=*/!symbols.empty());
  options.stopAfter = last;
  lower(*module, {}, fileNo, options);
  if (stage != "llvm")
    return printOp(*module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      toOptimizedLLVM(*module, llvmContext, optLevel);
  return llvmText(*llvmModule);
}

TraceCost traceCost(const Trace &trace, const std::vector<int32_t> &outputs) {
  auto lock = lockCompiler();
  std::vector<int32_t> donors(outputs.size(), -1);
  OwningOpRef<ModuleOp> module = buildModule(trace, outputs, donors);
  int fileNo = 0;
  mlir::cpn::LoweringOptions options = jitTarget().loweringOptions();
  options.stopAfter = "bufferized";
  lower(*module, {}, fileNo, options);
  TraceCost c = costOf(*module);
  c.values = static_cast<int64_t>(trace.size());
  c.outputs = static_cast<int64_t>(outputs.size());
  return c;
}

} // namespace cpn
