//===- Views.cpp - cpn.view and cpn.remap to linalg -----------------------===//
//
// Part of cpnumeric.
//
// A cpn.view that is a strided box of its base (decomposeView, shared with
// the updates) becomes tensor.extract_slice, then a generic that transposes,
// reverses or broadcasts it and that fusion folds into consumers; other views
// gather through tensor.extract. cpn.remap is a generic of the same kind.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// The base index where a box view starts in each base dimension: the
/// box's constants, or, with a run-time element offset `dynOffset` (index),
/// that offset decomposed (o / stride_j mod size_j: the caller guarantees
/// the view is a box at it too).
SmallVector<OpFoldResult> boxOffsets(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> baseShape,
                                     const BoxView &box, Value dynOffset) {
  SmallVector<OpFoldResult> out;
  if (!dynOffset) {
    for (int64_t o : box.offsets)
      out.push_back(b.getIndexAttr(o));
    return out;
  }
  SmallVector<int64_t> bs = rowMajorStrides(baseShape);
  for (size_t j = 0; j < baseShape.size(); ++j) {
    if (bs[j] == 0) {
      out.push_back(b.getIndexAttr(0));
      continue;
    }
    Value q = dynOffset;
    if (bs[j] != 1)
      q = arith::DivUIOp::create(
          b, loc, q, arith::ConstantIndexOp::create(b, loc, bs[j]));
    if (j > 0)
      q = arith::RemUIOp::create(
          b, loc, q, arith::ConstantIndexOp::create(b, loc, baseShape[j]));
    out.push_back(q);
  }
  return out;
}

/// `o + c` (index): folded when `o` is a constant.
OpFoldResult addConstant(OpBuilder &b, Location loc, OpFoldResult o,
                         int64_t c) {
  if (std::optional<int64_t> v = getConstantIntValue(o))
    return b.getIndexAttr(*v + c);
  if (c == 0)
    return o;
  return arith::AddIOp::create(b, loc, cast<Value>(o),
                               arith::ConstantIndexOp::create(b, loc, c))
      .getResult();
}

/// An element offset as i64: the constant, or the run-time one.
Value offsetValue(OpBuilder &b, Location loc, int64_t offset, Value dynOffset) {
  if (dynOffset)
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), dynOffset);
  return arith::ConstantOp::create(b, loc, b.getI64Type(),
                                   b.getI64IntegerAttr(offset));
}

/// Emits the flat index of the current iteration of a view (offset plus
/// strides times linalg.index) as i64.
static Value viewFlatIndex(OpBuilder &b, Location l, Value offset,
                           ArrayRef<int64_t> strides) {
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(v));
  };
  Value flat = offset;
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] == 0)
      continue;
    Value idx =
        arith::IndexCastOp::create(b, l, i64, linalg::IndexOp::create(b, l, i));
    flat = arith::AddIOp::create(
        b, l, flat, arith::MulIOp::create(b, l, idx, c(strides[i])));
  }
  return flat;
}

/// A view that is a strided box of its base becomes tensor.extract_slice (a
/// subview after bufferization: no copy) followed, when the view transposes,
/// reverses or broadcasts, by a generic that fusion folds into consumers.
/// Other views (reshaped or diagonal ones) gather through tensor.extract.
LogicalResult lowerView(RewriterBase &rw, ViewOp op) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType resTy = tensorOf(op.getResult());
  ArrayRef<int64_t> sizes = resTy.getShape();
  int64_t k = baseTy.getRank();
  SmallVector<int64_t> viewDimOf;
  std::optional<BoxView> box = viewBox(op, viewDimOf);
  if (!box) {
    SmallVector<int64_t> bs = rowMajorStrides(baseTy.getShape());
    Value base = op.getBase();
    Value offset = offsetValue(rw, loc, op.getOffset(), op.getDynOffset());
    ArrayRef<int64_t> strides = op.getStrides();
    Value r = buildElementwise(
        rw, loc, resTy, {}, {}, [&](OpBuilder &b, Location l, ValueRange) {
          Value flat = viewFlatIndex(b, l, offset, strides);
          SmallVector<Value> idx;
          for (int64_t j = 0; j < k; ++j) {
            Value q = arith::DivSIOp::create(
                b, l, flat,
                arith::ConstantOp::create(b, l, b.getI64Type(),
                                          b.getI64IntegerAttr(bs[j])));
            if (j > 0)
              q = arith::RemSIOp::create(
                  b, l, q,
                  arith::ConstantOp::create(
                      b, l, b.getI64Type(),
                      b.getI64IntegerAttr(baseTy.getDimSize(j))));
            idx.push_back(
                arith::IndexCastOp::create(b, l, b.getIndexType(), q));
          }
          return tensor::ExtractOp::create(b, l, base, idx).getResult();
        });
    rw.replaceOp(op, r);
    return success();
  }
  SmallVector<OpFoldResult> offsets =
      boxOffsets(rw, loc, baseTy.getShape(), *box, op.getDynOffset());
  SmallVector<int64_t> sliceSizes(k, 1), steps(k, 1), packedShape;
  SmallVector<AffineExpr> inExprs;
  bool identity = true;
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = viewDimOf[j];
    if (i < 0)
      continue;
    int64_t c = box->coeffs[i], n = sizes[i];
    sliceSizes[j] = n;
    steps[j] = std::abs(c);
    AffineExpr d = rw.getAffineDimExpr(i);
    if (c < 0) {
      offsets[j] = addConstant(rw, loc, offsets[j], c * (n - 1));
      inExprs.push_back(rw.getAffineConstantExpr(n - 1) - d);
      identity = false;
    } else {
      inExprs.push_back(d);
      identity &= (int64_t)inExprs.size() - 1 == i;
    }
    packedShape.push_back(n);
  }
  // The result keeps the base's rank, its size-1 dimensions where the box
  // takes one element of a base dimension (a row `u[i:i+1, :]`, the 1 x n
  // rows of a rank's border): the slice itself, unit dimensions kept, not a
  // rank-reduced one and a generic that adds them back (which became a
  // buffer of its own before an update or a library call). OpFacts'
  // viewForm says Slice for them alike.
  bool unitRows = k == resTy.getRank() && packedShape.size() < sizes.size();
  for (int64_t j = 0; unitRows && j < k; ++j) {
    int64_t i = viewDimOf[j];
    unitRows = i < 0 ? sizes[j] == 1 && sliceSizes[j] == 1
                     : i == j && box->coeffs[i] > 0;
  }
  if (unitRows) {
    packedShape.assign(sizes.begin(), sizes.end());
    identity = true;
  }
  identity &= packedShape.size() == sizes.size();
  auto sliceTy = RankedTensorType::get(packedShape, resTy.getElementType());
  Value slice = op.getBase();
  // The whole base with unit steps (which starts at 0 at any offset where
  // it is a box) is the base itself.
  bool whole =
      sliceTy == baseTy &&
      llvm::all_of(steps, [](int64_t s) { return s == 1; }) &&
      (op.getDynOffset() || llvm::all_of(offsets, [](OpFoldResult o) {
         return isConstantIntValue(o, 0);
       }));
  if (!whole) {
    slice = tensor::ExtractSliceOp::create(
        rw, loc, sliceTy, op.getBase(), offsets,
        getAsIndexOpFoldResult(rw.getContext(), sliceSizes),
        getAsIndexOpFoldResult(rw.getContext(), steps));
  }
  if (!identity) {
    AffineMap map = AffineMap::get(sizes.size(), 0, inExprs, rw.getContext());
    slice = buildElementwise(
        rw, loc, resTy, slice, map,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  }
  rw.replaceOp(op, slice);
  return success();
}

/// cpn.remap: a generic whose input map sends each base dimension to the
/// result dimension that walks it (a dropped size-1 dimension to 0); fusion
/// folds it into consumers as it does for views.
LogicalResult lowerRemap(RewriterBase &rw, RemapOp op) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType resTy = tensorOf(op.getResult());
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<AffineExpr> exprs(baseTy.getRank(), rw.getAffineConstantExpr(0));
  for (auto [i, d] : llvm::enumerate(dims))
    if (d >= 0)
      exprs[d] = rw.getAffineDimExpr(i);
  AffineMap map = AffineMap::get(resTy.getRank(), 0, exprs, rw.getContext());
  unsigned nextSize = 0;
  SmallVector<Value> sizes(resTy.getRank());
  for (auto [i, d] : llvm::enumerate(dims))
    if (resTy.isDynamicDim(i))
      sizes[i] =
          d >= 0 ? dimOf(rw, loc, op.getBase(), d) : op.getSizes()[nextSize++];
  Value init = emptyLike(rw, loc, resTy, [&](unsigned i) { return sizes[i]; });
  auto generic = linalg::GenericOp::create(
      rw, loc, TypeRange{resTy}, op.getBase(), ValueRange{init},
      {map, rw.getMultiDimIdentityMap(resTy.getRank())},
      parallel(resTy.getRank()), [](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, args[0]);
      });
  rw.replaceOp(op, generic.getResult(0));
  return success();
}

} // namespace mlir::cpn::tolinalg
