//===- MatmulToBLAS.cpp - linalg.matmul to a BLAS call --------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_CONVERTMATMULTOBLAS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// The buffer `v` is a view of (through view-like ops), or `v`.
Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `op` or an op nested in it reads or writes `root` (through any
/// view of it).
bool touches(Operation *op, Value root) {
  bool found = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (rootBuffer(v) == root)
        found = true;
  });
  return found;
}

bool isZero(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  auto f = dyn_cast<FloatAttr>(attr);
  return f && f.getValue().isZero() && !f.getValue().isNegative();
}

/// The linalg.fill of zeros into `c` before `op` in its block, with no op in
/// between touching `c`'s buffer; null otherwise. `c` must be a fresh
/// allocation or a kernel argument (distinct stores, `llvm.noalias`), so that
/// nothing else can alias it. The fill need not be adjacent:
/// fills of independent products are often scheduled together, ahead of
/// them (an LSTM window starts with all its gates' fills).
linalg::FillOp zeroFillOf(Operation *op, Value c) {
  Value root = rootBuffer(c);
  if (root != c ||
      !(c.getDefiningOp<memref::AllocOp>() || isa<BlockArgument>(c)))
    return {};
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev);
        fill && fill.getOutputs()[0] == c)
      return isZero(fill.getInputs()[0]) ? fill : nullptr;
    if (touches(prev, root))
      return {};
  }
  return {};
}

struct ConvertMatmulToBLASPass
    : public cpn::impl::ConvertMatmulToBLASBase<ConvertMatmulToBLASPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::MatmulOp> matmuls;
    module.walk([&](linalg::MatmulOp op) {
      if (op.hasPureBufferSemantics())
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls) {
      Type et =
          cast<MemRefType>(op.getDpsInputs()[0].getType()).getElementType();
      if (!et.isF32() && !et.isF64())
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      std::string name = et.isF32() ? "cpn_gemm_f32" : "cpn_gemm_f64";
      SmallVector<Value> args;
      // Per operand: aligned pointer, offset, row stride, column stride; then
      // M, N, K. All as i64 so the callee's signature is plain C.
      // A transposed operand (stored columns x rows) swaps its strides.
      auto addOperand = [&](Value m, bool transposed) {
        auto md = memref::ExtractStridedMetadataOp::create(b, loc, m);
        Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, m);
        Value rs = md.getStrides()[transposed ? 1 : 0],
              cs = md.getStrides()[transposed ? 0 : 1];
        for (Value v : {ptr, (Value)md.getOffset(), rs, cs})
          args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), v));
      };
      Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1],
            c = op.getDpsInits()[0];
      // Which of A and B are stored transposed (the other indexing maps,
      // broadcasts, stay loops).
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      AffineExpr m = b.getAffineDimExpr(0), n = b.getAffineDimExpr(1),
                 k = b.getAffineDimExpr(2);
      auto is = [&](AffineMap map, AffineExpr r, AffineExpr c) {
        return map == AffineMap::get(3, 0, {r, c}, b.getContext());
      };
      bool aT = is(maps[0], k, m), bT = is(maps[1], n, k);
      if ((!aT && !is(maps[0], m, k)) || (!bT && !is(maps[1], k, n)) ||
          !is(maps[2], m, n))
        continue;
      // Before any op is inserted here (the pointer extractions touch C).
      linalg::FillOp zeroFill = zeroFillOf(op, c);
      addOperand(a, aT);
      addOperand(bm, bT);
      addOperand(c, false);
      // M, N, K: constants, or memref.dim in shape-generic kernels.
      auto size = [&](Value v, int64_t dim) -> Value {
        auto t = cast<MemRefType>(v.getType());
        if (!t.isDynamicDim(dim))
          return arith::ConstantOp::create(
              b, loc, b.getI64Type(), b.getI64IntegerAttr(t.getDimSize(dim)));
        return arith::IndexCastOp::create(
            b, loc, b.getI64Type(), memref::DimOp::create(b, loc, v, dim));
      };
      for (Value v : {size(c, 0), size(c, 1), size(a, aT ? 0 : 1)})
        args.push_back(v);
      // C = A @ B when C was just zeroed (the fill is dropped: BLAS neither
      // reads C nor needs it cleared), else C += A @ B.
      args.push_back(arith::ConstantOp::create(
          b, loc, b.getI64Type(), b.getI64IntegerAttr(zeroFill ? 0 : 1)));
      if (zeroFill)
        zeroFill.erase();
      auto func = module.lookupSymbol<func::FuncOp>(name);
      if (!func) {
        OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
        SmallVector<Type> ins(args.size(), b.getI64Type());
        func = func::FuncOp::create(mb, loc, name, mb.getFunctionType(ins, {}));
        func.setPrivate();
      }
      func::CallOp::create(b, loc, func, args);
      op.erase();
    }
  }
};
} // namespace
