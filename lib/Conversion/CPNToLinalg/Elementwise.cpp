//===- Elementwise.cpp - elementwise cpn ops to linalg --------------------===//
//
// Part of cpnumeric.
//
// Ufuncs, casts, cpn.select, cpn.copy and cpn.iota become one parallel
// linalg.generic on tensors. Also the helpers every family builds its
// generics with (emptyLike, dimOf, parallel, buildElementwise,
// linearIndex).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "cpn/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// Inside a generic's body: the row-major element index sum_j index(j) *
/// strides[j], as i64.
Value linearIndex(OpBuilder &b, Location l, ArrayRef<int64_t> strides) {
  Type i64 = b.getI64Type();
  Value flat = arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(0));
  for (auto [j, stride] : llvm::enumerate(strides)) {
    Value idx =
        arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, j));
    flat = arith::AddIOp::create(
        b, l, flat,
        arith::MulIOp::create(
            b, l, idx,
            arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(stride))));
  }
  return flat;
}

SmallVector<utils::IteratorType> parallel(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// A tensor.empty of type `t`; its dynamic dimensions (shape-generic
/// kernels) get their sizes from `dynamicSize(dim)`.
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t,
                function_ref<Value(unsigned)> dynamicSize) {
  SmallVector<Value> sizes;
  for (unsigned i = 0; i < t.getRank(); ++i)
    if (t.isDynamicDim(i))
      sizes.push_back(dynamicSize(i));
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType(),
                                 sizes);
}

Value dimOf(OpBuilder &b, Location loc, Value v, int64_t dim) {
  return tensor::DimOp::create(b, loc, v, dim);
}

/// Builds a generic with `inputMaps` on `inputs` and one result of `resTy`.
/// Dynamic result sizes are those of `shapeInput`'s dims `shapeDims` (by
/// default, of the first input: elementwise operands have the result's
/// shape).
Value buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType resTy, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    Value shapeInput, ArrayRef<int64_t> shapeDims) {
  unsigned rank = resTy.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = emptyLike(b, loc, resTy, [&](unsigned i) {
    return shapeInput ? dimOf(b, loc, shapeInput, shapeDims[i])
                      : dimOf(b, loc, inputs[0], i);
  });
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resTy}, inputs, ValueRange{init}, maps, parallel(rank),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l, body(nb, l, args.drop_back()));
      });
  return generic.getResult(0);
}

LogicalResult lowerElementwise(RewriterBase &rw, Operation *op) {
  Location loc = op->getLoc();
  RankedTensorType resTy = tensorOf(op->getResult(0));
  // Every elementwise op but cast, select and copy applies a ufunc.
  auto ufuncOp = dyn_cast<UfuncOpInterface>(op);
  bool isUnsigned = op->hasAttr("is_unsigned");
  auto fpChecks = op->getAttrOfType<IntegerAttr>(kFpChecksAttr);
  auto fpSite = op->getAttrOfType<IntegerAttr>(kFpSiteAttr);
  if (!fpSite)
    fpChecks = {};
  SmallVector<AffineMap> maps(op->getNumOperands(),
                              rw.getMultiDimIdentityMap(resTy.getRank()));
  bool failed = false;
  Value r = buildElementwise(
      rw, loc, resTy, op->getOperands(), maps,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value v;
        if (auto cast = dyn_cast<CastOp>(op))
          v = emitScalarCast(b, l, args[0], resTy.getElementType(),
                             cast.getSrcUnsigned(), cast.getDstUnsigned());
        else if (isa<SelectOp>(op))
          v = arith::SelectOp::create(b, l, args[0], args[1], args[2]);
        else if (isa<CopyOp>(op))
          v = args[0];
        else if (ufuncOp && op->hasAttr(kMixedSignAttr))
          v = emitMixedSignCompare(b, l, ufuncOp.getUfunc(), args[0], args[1],
                                   isUnsigned);
        else if (ufuncOp)
          v = emitScalarUfunc(b, l, ufuncOp.getUfunc(), args,
                              resTy.getElementType(), isUnsigned);
        if (!v) {
          failed = true;
          v = emitZero(b, l, resTy.getElementType());
        }
        // np.errstate: cpn-lower-fp-flags computes this element's errors.
        if (fpChecks)
          FpFlagOp::create(
              b, l, args, v,
              UfuncAttr::get(b.getContext(),
                             ufuncOp ? ufuncOp.getUfunc() : Ufunc::cast),
              fpChecks, fpSite);
        return v;
      });
  if (failed)
    return op->emitOpError("has no lowering for element type ")
           << tensorOf(op->getOperand(0)).getElementType();
  rw.replaceOp(op, r);
  return success();
}

LogicalResult lowerIota(RewriterBase &rw, IotaOp op) {
  RankedTensorType resTy = tensorOf(op.getResult());
  int64_t dim = op.getDim();
  Value r = buildElementwise(
      rw, op.getLoc(), resTy, {}, {},
      [&](OpBuilder &b, Location l, ValueRange) -> Value {
        return arith::IndexCastOp::create(b, l, b.getI64Type(),
                                          linalg::IndexOp::create(b, l, dim));
      });
  rw.replaceOp(op, r);
  return success();
}

} // namespace mlir::cpn::tolinalg
