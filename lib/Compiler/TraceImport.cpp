//===- TraceImport.cpp - a trace as a cpn MLIR module ---------------------===//
//
// Part of cpnumeric.
//
// Owns the MLIR side of a trace: the compiling thread's MLIRContext (and the
// fresh ones lazily compiled checks make, newContext), the mapping of runtime
// dtypes to MLIR types, and buildModule, which writes `func.func @kernel` of
// cpn ops taking one memref per input, per output without a donor and, with
// np.errstate checks, the status words.
//
// Calls only the Trace, the cpn dialect and MLIR; buildModuleText also uses
// printOp (Lowering.cpp) and planDonations (Compiler.cpp).
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNDialect.h"
#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"
#include "cpn/Trace/ViewBox.h"
#include "cpnrt/Lapack.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>

using namespace mlir;

namespace cpn {
namespace detail {

static Type elementType(MLIRContext *ctx, cpnrt::DType t) {
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

static MLIRContext &context() {
  static MLIRContext *ctx = newContext().release();
  return *ctx;
}

// Leaked, as the context: a background compile may still hold it while
// static destructors run.
static std::recursive_mutex *compilerMutex = new std::recursive_mutex();

std::unique_lock<std::recursive_mutex> lockCompiler() {
  return std::unique_lock<std::recursive_mutex>(*compilerMutex);
}

void lockCompilerForFork() { compilerMutex->lock(); }

void unlockCompilerAfterFork() { compilerMutex->unlock(); }

void resetCompilerLockAfterFork() {
  compilerMutex = new std::recursive_mutex();
}

/// For a shape-generic kernel: the dims of the cpn.remap equivalent to a view
/// (offset, strides in `iattrs`) of `base` with shape `shape` that broadcasts
/// and transposes the whole base; nullopt for other views (slices, reshapes).
static std::optional<SmallVector<int64_t>>
remapDims(const std::vector<int64_t> &base, const std::vector<int64_t> &shape,
          const std::vector<int64_t> &iattrs) {
  if (iattrs.empty() || iattrs[0] != 0 || iattrs.size() != shape.size() + 1)
    return std::nullopt;
  std::vector<int64_t> rs = rowMajorStrides(base);
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

/// A view or update of a shape-generic trace that is a box of its base at
/// every size (`box`, fitted by cpnc) as tensor.extract_slice or
/// tensor.insert_slice at run-time offsets and sizes; a view with dimensions
/// the box does not walk (new or broadcast ones) is then a cpn.remap of the
/// slice (which also transposes: `A[1:, :-1].T`). nullopt for boxes this
/// cannot express: reversed or diagonal ones, and writes through broadcast
/// dimensions.
static std::optional<Value>
importBox(OpBuilder &b, Location loc, bool update, ValueRange operands,
          RankedTensorType resultTy, const SizeBox &box,
          function_ref<OpFoldResult(const SizeExpr &)> sizeValue,
          function_ref<OpFoldResult(size_t)> resultSize) {
  Value base = operands[0];
  auto baseTy = cast<RankedTensorType>(base.getType());
  size_t k = baseTy.getRank();
  Value value = update ? operands[1] : Value();
  auto viewTy = update ? cast<RankedTensorType>(value.getType()) : resultTy;
  size_t rank = viewTy.getRank();
  if (box.owner.size() != rank || box.coeffs.size() != rank ||
      box.starts.size() != k)
    return std::nullopt;
  auto viewSize = [&](size_t i) -> OpFoldResult {
    if (!viewTy.isDynamicDim(i))
      return b.getIndexAttr(viewTy.getDimSize(i));
    if (update)
      return tensor::DimOp::create(b, loc, value, i).getResult();
    return resultSize(i);
  };
  std::vector<int64_t> viewDimOf(k, -1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t j = box.owner[i];
    if (j < 0) {
      if (update && viewTy.getDimSize(i) != 1)
        return std::nullopt;
      continue;
    }
    if (j >= static_cast<int64_t>(k) || viewDimOf[j] >= 0 || box.coeffs[i] <= 0)
      return std::nullopt;
    viewDimOf[j] = static_cast<int64_t>(i);
  }
  // The box's dimensions in base order; base dimensions it does not walk
  // are size-1 slices, dropped (a rank-reducing slice).
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> packed, packedShape;
  for (size_t j = 0; j < k; ++j) {
    offsets.push_back(sizeValue(box.starts[j]));
    int64_t i = viewDimOf[j];
    if (i < 0) {
      sizes.push_back(b.getIndexAttr(1));
      strides.push_back(b.getIndexAttr(1));
      continue;
    }
    packed.push_back(i);
    sizes.push_back(viewSize(i));
    strides.push_back(b.getIndexAttr(box.coeffs[i]));
    packedShape.push_back(viewTy.getDimSize(i));
  }
  auto sliceTy = RankedTensorType::get(packedShape, viewTy.getElementType());
  bool inOrder = llvm::is_sorted(packed);
  auto remapOf = [&](Value v, RankedTensorType ty, ArrayRef<int64_t> dims,
                     ValueRange sizes) {
    OperationState remap(loc, "cpn.remap");
    remap.addOperands(v);
    remap.addOperands(sizes);
    remap.addTypes(ty);
    remap.addAttribute("dims", b.getDenseI64ArrayAttr(dims));
    return b.create(remap)->getResult(0);
  };
  if (update) {
    Value src = value;
    if (!inOrder) // transposed into the base's order (size-1 dims dropped)
      src = remapOf(value, sliceTy, packed, ValueRange());
    else if (packed.size() != rank) { // drop the value's size-1 dimensions
      SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)),
          ones(rank, b.getIndexAttr(1)), full;
      for (size_t i = 0; i < rank; ++i)
        full.push_back(viewSize(i));
      src = tensor::ExtractSliceOp::create(b, loc, sliceTy, value, zeros, full,
                                           ones);
    }
    Value r = tensor::InsertSliceOp::create(b, loc, src, base, offsets, sizes,
                                            strides);
    if (r.getType() != resultTy)
      r = tensor::CastOp::create(b, loc, resultTy, r);
    return r;
  }
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceTy, base, offsets,
                                               sizes, strides);
  if (inOrder && packed.size() == rank)
    return slice;
  // New, broadcast and transposed dimensions: result dim i walks the slice's
  // dim p where packed[p] == i.
  SmallVector<int64_t> dims(rank, -1);
  for (auto [p, i] : llvm::enumerate(packed))
    dims[i] = static_cast<int64_t>(p);
  SmallVector<Value> newSizes;
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0 && resultTy.isDynamicDim(i))
      newSizes.push_back(cast<Value>(resultSize(i)));
  return remapOf(slice, resultTy, dims, newSizes);
}

/// Builds `func.func @kernel(inputs..., outputs...)` from the trace. Outputs
/// with a donor input (donors[j] >= 0) get no argument of their own: they are
/// written into the donor's buffer, which is then a writable tensor, so
/// one-shot bufferization sees the aliasing and updates in place where no
/// later read of the old value forbids it.
OwningOpRef<ModuleOp> buildModule(const Trace &trace,
                                  const std::vector<int32_t> &outputs,
                                  const std::vector<int32_t> &donors,
                                  const ShapeSymbols &symbols, bool fpStatus) {
  MLIRContext *ctx = &context();
  OpBuilder b(ctx);
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  // An input dimension whose size is a representative size is dynamic; an
  // op's dimensions are those cpnc fitted (symbols.shapes).
  auto dynamic = [&](int64_t d) { return symbols.sizes.count(d) > 0; };
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
  auto fitted = [&](int32_t i) -> const std::vector<SizeExpr> * {
    auto it = symbols.shapes.find(i);
    return it == symbols.shapes.end() ? nullptr : &it->second;
  };
  // The type of op i's result: dynamic where its fitted size is not constant.
  auto opTensorTy = [&](int32_t i) {
    const TraceOp &op = trace.ops()[i];
    SmallVector<int64_t> s(op.shape.begin(), op.shape.end());
    if (const std::vector<SizeExpr> *exprs = fitted(i))
      for (auto [d, e] : llvm::zip(s, *exprs))
        if (!e.isConstant())
          d = ShapedType::kDynamic;
    return RankedTensorType::get(s, elementType(ctx, op.dtype));
  };
  auto memrefTy = [&](const std::vector<int64_t> &shape, cpnrt::DType t) {
    // An empty array with an empty inner dimension (0x0, 3x0) gets explicit
    // strides: its identity layout has none that MLIR can compute, and one
    // such argument would turn the whole kernel's calling convention from
    // bare pointers into memref descriptors.
    if (!anyDynamic(shape) && shape.size() >= 2 &&
        llvm::is_contained(ArrayRef<int64_t>(shape).drop_front(), 0)) {
      std::vector<int64_t> strides =
          rowMajorStrides(shape, /*clampEmpty=*/true);
      return MemRefType::get(typeShape(shape), elementType(ctx, t),
                             StridedLayoutAttr::get(ctx, 0, strides));
    }
    return MemRefType::get(typeShape(shape), elementType(ctx, t));
  };

  SmallVector<Type> argTypes;
  for (const NodeRef &in : trace.inputs())
    argTypes.push_back(memrefTy(in->shape, in->dtype));
  // The element offsets that are arguments (TraceOp::offsetArg): one i64
  // each, in op order, in one buffer after the inputs.
  int64_t offsetArgs = static_cast<int64_t>(trace.offsetArgCount());
  if (offsetArgs)
    argTypes.push_back(MemRefType::get({offsetArgs}, b.getI64Type()));
  std::vector<bool> donated(trace.inputs().size(), false);
  for (size_t j = outputs.size(); j < donors.size(); ++j)
    donated[donors[j]] = true; // updated in place, no output
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0)
      donated[donors[j]] = true;
    else if (symbols.empty())
      argTypes.push_back(memrefTy(trace.ops()[outputs[j]].shape,
                                  trace.ops()[outputs[j]].dtype));
    else {
      RankedTensorType t = opTensorTy(outputs[j]);
      argTypes.push_back(MemRefType::get(t.getShape(), t.getElementType()));
    }
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
  // Each run-time offset, loaded once at the kernel's start.
  SmallVector<Value> offsetValues;
  for (int64_t k = 0; k < offsetArgs; ++k)
    offsetValues.push_back(arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(
            b, loc, entry->getArgument(trace.inputs().size()),
            ValueRange{arith::ConstantIndexOp::create(b, loc, k)})));
  size_t nextOffset = 0;
  auto operand = [&](int32_t r) -> Value {
    return r >= 0 ? results[r] : inputs[-r - 1];
  };
  auto dtypeOf = [&](int32_t r) {
    return r >= 0 ? trace.ops()[r].dtype : trace.inputs()[-r - 1]->dtype;
  };
  // The size of each dynamic dimension, read off the first input that has it.
  std::map<int, Value> symbolSize;
  for (size_t i = 0; i < trace.inputs().size(); ++i)
    for (auto [k, d] : llvm::enumerate(trace.inputs()[i]->shape))
      if (dynamic(d) && !symbolSize.count(symbols.sizes.at(d)))
        symbolSize[symbols.sizes.at(d)] =
            tensor::DimOp::create(b, loc, inputs[i], k);
  // A fitted size at run time (folded when it is a constant).
  auto sizeValue = [&](const SizeExpr &e) -> OpFoldResult {
    if (e.isConstant())
      return b.getIndexAttr(e.c);
    Value v = arith::ConstantIndexOp::create(b, loc, e.c);
    for (auto [s, k] : llvm::enumerate(e.coef)) {
      if (!k)
        continue;
      Value t = symbolSize.at(static_cast<int>(s));
      if (k != 1)
        t = arith::MulIOp::create(b, loc, t,
                                  arith::ConstantIndexOp::create(b, loc, k));
      v = arith::AddIOp::create(b, loc, v, t);
    }
    return v;
  };
  auto isDynamic = [](Value v) {
    return !cast<RankedTensorType>(v.getType()).hasStaticShape();
  };
  for (auto [index, op] : llvm::enumerate(trace.ops())) {
    OperationState st(
        op.line ? Location(FileLineColLoc::get(ctx, op.file, op.line, 0)) : loc,
        "cpn." + op.name);
    for (int32_t r : op.operands)
      st.addOperands(operand(r));
    RankedTensorType resultTy = opTensorTy(static_cast<int32_t>(index));
    st.addTypes(resultTy);
    bool generic =
        !resultTy.hasStaticShape() || llvm::any_of(st.operands, isDynamic);
    auto unsupported = [&](const std::string &what) {
      std::string where =
          op.line ? op.file + ":" + std::to_string(op.line) + ": " : "";
      return std::invalid_argument(
          where + what +
          " involving a dimension of any size (':' or a name) cannot be "
          "compiled shape-generic; declare that dimension's size");
    };
    // The size of result dimension i (dynamic: the fitted one).
    auto resultSize = [&](size_t i) -> OpFoldResult {
      if (!resultTy.isDynamicDim(i))
        return b.getIndexAttr(resultTy.getDimSize(i));
      return sizeValue(fitted(static_cast<int32_t>(index))->at(i));
    };
    if (generic && op.name == "view") {
      std::optional<SmallVector<int64_t>> dims =
          remapDims(trace.operandShape(op.operands[0]), op.shape, op.iattrs);
      if (dims) {
        OperationState remap(st.location, "cpn.remap");
        remap.addOperands(st.operands);
        for (auto [i, d] : llvm::enumerate(*dims))
          if (d < 0 && resultTy.isDynamicDim(i))
            remap.addOperands(cast<Value>(resultSize(i)));
        remap.addTypes(st.types);
        remap.addAttribute("dims", b.getDenseI64ArrayAttr(*dims));
        results.push_back(b.create(remap)->getResult(0));
        continue;
      }
    }
    if (generic && (op.name == "view" || op.name == "update")) {
      auto box = symbols.boxes.find(static_cast<int32_t>(index));
      if (box == symbols.boxes.end())
        throw unsupported(op.name == "view" ? "a slice, reshape or diagonal"
                                            : "a write into a view");
      std::optional<Value> r =
          importBox(b, st.location, op.name == "update", st.operands, resultTy,
                    box->second, sizeValue, resultSize);
      if (!r)
        throw unsupported(op.name == "view"
                              ? "a reversed or diagonal slice"
                              : "a write into a reversed slice or through a "
                                "broadcast one");
      results.push_back(*r);
      continue;
    }
    if (generic && (op.name == "iota" || op.name == "libcall"))
      throw unsupported(op.name == "iota" ? "an arange"
                                          : "a linear-algebra call");
    if (op.name == "view" || op.name == "update") {
      if (op.offsetArg)
        st.addOperands(offsetValues[nextOffset++]);
      st.addAttribute("offset", b.getI64IntegerAttr(op.iattrs.at(0)));
      st.addAttribute(
          "strides",
          b.getDenseI64ArrayAttr(ArrayRef<int64_t>(op.iattrs).drop_front()));
    } else if (op.name == "reduce") {
      std::optional<mlir::cpn::ReduceKind> kind =
          mlir::cpn::symbolizeReduceKind(op.sattr);
      if (!kind)
        throw std::invalid_argument("cpnumeric: no reduction kind '" +
                                    op.sattr + "'");
      st.addAttribute("kind",
                      mlir::cpn::ReduceKindAttr::get(b.getContext(), *kind));
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
  size_t nextArg = trace.inputs().size() + (offsetArgs ? 1 : 0);
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
      auto m = bufferization::MaterializeInDestinationOp::create(b, loc, result,
                                                                 dest);
      m.setRestrict(true);
      m.setWritable(true);
    }
  func::ReturnOp::create(b, loc);
  return module;
}

} // namespace detail

using namespace detail;

std::string buildModuleText(const Trace &trace,
                            const std::vector<int32_t> &outputs) {
  auto lock = lockCompiler();
  return printOp(*buildModule(trace, outputs, planDonations(trace, outputs)));
}

} // namespace cpn
