//===- Updates.cpp - cpn.update to tensor ops -----------------------------===//
//
// Part of cpnumeric.
//
// A write of a value into a view of a base: tensor.insert_slice where the
// view is a box of the base, else a generic over the base that selects the
// value's element inside the view. lowerUpdate (LowerUpdate.h) is shared
// with convert-cpn-updates (CPNUpdates.cpp).
//
//===----------------------------------------------------------------------===//

#include "LowerUpdate.h"
#include "Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// u[box] = value as tensor.insert_slice: reverse and transpose the value into
/// the base's dimension order, then insert it with positive strides.
static Value lowerBoxUpdate(RewriterBase &rw, UpdateOp op, const BoxView &box) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType valTy = tensorOf(op.getValue());
  int64_t k = baseTy.getRank();
  ArrayRef<int64_t> sizes = valTy.getShape();
  // viewDimOf[j]: the view dim that walks base dim j, if any.
  SmallVector<int64_t> viewDimOf(k, -1);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (box.owner[i] >= 0) {
      if (viewDimOf[box.owner[i]] >= 0)
        return {};
      viewDimOf[box.owner[i]] = i;
    }
  SmallVector<OpFoldResult> offsets =
      boxOffsets(rw, loc, baseTy.getShape(), box, op.getDynOffset());
  SmallVector<int64_t> sliceSizes(k, 1), steps(k, 1), packedShape;
  SmallVector<AffineExpr> inExprs(sizes.size(), rw.getAffineConstantExpr(0));
  unsigned p = 0;
  bool identity = true;
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = viewDimOf[j];
    if (i < 0)
      continue;
    int64_t c = box.coeffs[i], n = sizes[i];
    sliceSizes[j] = n;
    steps[j] = std::abs(c);
    AffineExpr d = rw.getAffineDimExpr(p);
    if (c < 0) {
      offsets[j] = addConstant(rw, loc, offsets[j], c * (n - 1));
      inExprs[i] = rw.getAffineConstantExpr(n - 1) - d;
      identity = false;
    } else {
      inExprs[i] = d;
      identity &= (int64_t)p == i;
    }
    packedShape.push_back(n);
    ++p;
  }
  Value src = op.getValue();
  if (!identity || packedShape.size() != sizes.size()) {
    auto packedTy = RankedTensorType::get(packedShape, valTy.getElementType());
    AffineMap map = AffineMap::get(p, 0, inExprs, rw.getContext());
    src = buildElementwise(
        rw, loc, packedTy, src, map,
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  }
  return tensor::InsertSliceOp::create(
      rw, loc, src, op.getBase(), offsets,
      getAsIndexOpFoldResult(rw.getContext(), sliceSizes),
      getAsIndexOpFoldResult(rw.getContext(), steps));
}

/// The general form: a generic over the base that takes the value's element
/// where the (injective) view selects the base element. The view's dims are
/// recovered from the flat index greedily by decreasing stride, which is exact
/// for the views NumPy's basic indexing makes.
static Value lowerGatherUpdate(RewriterBase &rw, UpdateOp op) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType valTy = tensorOf(op.getValue());
  ArrayRef<int64_t> sizes = valTy.getShape();
  int64_t shift = 0;
  SmallVector<int64_t> strides(op.getStrides());
  // Turn negative strides positive; remember which dims are reversed.
  SmallVector<bool> reversed(sizes.size(), false);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (strides[i] < 0) {
      shift += strides[i] * (sizes[i] - 1);
      strides[i] = -strides[i];
      reversed[i] = true;
    }
  Value offset =
      offsetValue(rw, loc, op.getOffset() + shift, op.getDynOffset());
  if (op.getDynOffset() && shift)
    offset = arith::AddIOp::create(
        rw, loc, offset,
        arith::ConstantOp::create(rw, loc, rw.getI64Type(),
                                  rw.getI64IntegerAttr(shift)));
  SmallVector<int64_t> order;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1)
      order.push_back(i);
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  SmallVector<int64_t> bs = rowMajorStrides(baseTy.getShape());
  unsigned k = baseTy.getRank();
  Value value = op.getValue();
  return buildElementwise(
      rw, loc, baseTy, op.getBase(), rw.getMultiDimIdentityMap(k),
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Type i64 = b.getI64Type();
        auto c = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(v));
        };
        Value flat = linearIndex(b, l, bs);
        Value r = arith::SubIOp::create(b, l, flat, offset);
        Value inside =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, r, c(0));
        r = arith::SelectOp::create(b, l, inside, r, c(0));
        SmallVector<Value> q(sizes.size());
        for (size_t i = 0; i < sizes.size(); ++i)
          q[i] = arith::ConstantIndexOp::create(b, l, 0);
        for (int64_t i : order) {
          Value qi = arith::DivUIOp::create(b, l, r, c(strides[i]));
          Value ok = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, qi,
                                           c(sizes[i]));
          inside = arith::AndIOp::create(b, l, inside, ok);
          qi = arith::SelectOp::create(b, l, ok, qi, c(0));
          r = arith::SubIOp::create(
              b, l, r, arith::MulIOp::create(b, l, qi, c(strides[i])));
          if (reversed[i])
            qi = arith::SubIOp::create(b, l, c(sizes[i] - 1), qi);
          q[i] = arith::IndexCastOp::create(b, l, b.getIndexType(), qi);
        }
        inside = arith::AndIOp::create(
            b, l, inside,
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, c(0)));
        Value v = tensor::ExtractOp::create(b, l, value, q);
        return arith::SelectOp::create(b, l, inside, v, args[0]);
      });
}

} // namespace mlir::cpn::tolinalg

using namespace mlir::cpn::tolinalg;

LogicalResult mlir::cpn::lowerUpdate(RewriterBase &rw, UpdateOp op) {
  RankedTensorType valTy = tensorOf(op.getValue());
  if (valTy.getNumElements() == 0) {
    rw.replaceOp(op, op.getBase());
    return success();
  }
  Value r;
  if (auto box =
          decomposeView(tensorOf(op.getBase()).getShape(), op.getOffset(),
                        op.getStrides(), valTy.getShape()))
    r = lowerBoxUpdate(rw, op, *box);
  if (!r)
    r = lowerGatherUpdate(rw, op);
  rw.replaceOp(op, r);
  return success();
}
