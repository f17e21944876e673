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
#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// Decomposes a strided view over the flat index of a base of `baseShape` into
/// per-dimension affine forms. Fails when the view crosses base rows (as a
/// reshaped view can); the caller then uses floordiv/mod.
std::optional<BoxView> decomposeView(ArrayRef<int64_t> baseShape,
                                     int64_t offset, ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> sizes) {
  int64_t k = baseShape.size();
  SmallVector<int64_t> bs = rowMajorStrides(baseShape);
  BoxView v;
  v.offsets.assign(k, 0);
  int64_t rem = offset;
  for (int64_t j = 0; j < k; ++j) {
    v.offsets[j] = bs[j] ? rem / bs[j] : 0;
    rem -= v.offsets[j] * bs[j];
  }
  if (rem != 0)
    return std::nullopt;
  for (auto [s, n] : llvm::zip(strides, sizes)) {
    if (s == 0 || n == 1) {
      v.owner.push_back(-1);
      v.coeffs.push_back(0);
      continue;
    }
    int64_t owner = -1;
    for (int64_t j = 0; j < k; ++j) // The outermost dim whose stride divides s.
      if (baseShape[j] > 1 && bs[j] != 0 && s % bs[j] == 0) {
        owner = j;
        break;
      }
    if (owner < 0)
      return std::nullopt;
    v.owner.push_back(owner);
    v.coeffs.push_back(s / bs[owner]);
  }
  // Each base index must stay within its dimension over the whole view.
  for (int64_t j = 0; j < k; ++j) {
    int64_t lo = v.offsets[j], hi = v.offsets[j];
    for (size_t i = 0; i < sizes.size(); ++i)
      if (v.owner[i] == j)
        (v.coeffs[i] > 0 ? hi : lo) += v.coeffs[i] * (sizes[i] - 1);
    if (lo < 0 || hi >= baseShape[j])
      return std::nullopt;
  }
  return v;
}

/// Emits the flat index of the current iteration of a view (offset plus
/// strides times linalg.index) as i64.
static Value viewFlatIndex(OpBuilder &b, Location l, int64_t offset,
                           ArrayRef<int64_t> strides) {
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, l, i64, b.getI64IntegerAttr(v));
  };
  Value flat = c(offset);
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
LogicalResult lowerView(IRRewriter &rw, ViewOp op) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType resTy = tensorOf(op.getResult());
  ArrayRef<int64_t> sizes = resTy.getShape();
  int64_t k = baseTy.getRank();
  std::optional<BoxView> box =
      decomposeView(baseTy.getShape(), op.getOffset(), op.getStrides(), sizes);
  SmallVector<int64_t> viewDimOf(k, -1);
  if (box)
    for (size_t i = 0; i < sizes.size() && box; ++i)
      if (box->owner[i] >= 0) {
        if (viewDimOf[box->owner[i]] >= 0)
          box.reset();
        else
          viewDimOf[box->owner[i]] = i;
      }
  if (!box) {
    SmallVector<int64_t> bs = rowMajorStrides(baseTy.getShape());
    Value base = op.getBase();
    int64_t offset = op.getOffset();
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
  SmallVector<int64_t> offsets(box->offsets), sliceSizes(k, 1), steps(k, 1),
      packedShape;
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
      offsets[j] += c * (n - 1);
      inExprs.push_back(rw.getAffineConstantExpr(n - 1) - d);
      identity = false;
    } else {
      inExprs.push_back(d);
      identity &= (int64_t)inExprs.size() - 1 == i;
    }
    packedShape.push_back(n);
  }
  identity &= packedShape.size() == sizes.size();
  auto sliceTy = RankedTensorType::get(packedShape, resTy.getElementType());
  Value slice = op.getBase();
  if (sliceTy != baseTy || llvm::any_of(offsets, [](int64_t o) { return o; }) ||
      llvm::any_of(steps, [](int64_t s) { return s != 1; }))
    slice = tensor::ExtractSliceOp::create(
        rw, loc, sliceTy, op.getBase(), ValueRange{}, ValueRange{},
        ValueRange{}, offsets, sliceSizes, steps);
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
LogicalResult lowerRemap(IRRewriter &rw, RemapOp op) {
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
