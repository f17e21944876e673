//===- CPNToLinalg.cpp - cpn to linalg on tensors -------------------------===//
//
// Part of cpnumeric.
//
// Each cpn op becomes a linalg.generic on tensors (or tensor.insert_slice).
// Views are not materialized: a cpn.view becomes a copy whose input indexing
// map is the affine map from the view's index to the base's index, and
// upstream elementwise fusion folds that map into every consumer.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "LowerUpdate.h"
#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_CONVERTCPNTOLINALG
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

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

/// A view expressed per base dimension: base index j = offsets[j] +
/// sum over view dims i with owner[i] == j of coeffs[i] * d_i.
struct BoxView {
  SmallVector<int64_t> offsets;
  SmallVector<int64_t> owner;  // base dim of each view dim, -1 if stride 0
  SmallVector<int64_t> coeffs; // step along that base dim
};

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

SmallVector<utils::IteratorType> parallel(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

/// A tensor.empty of type `t`; its dynamic dimensions (shape-generic
/// kernels) get their sizes from `dynamicSize(dim)`.
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t,
                function_ref<Value(unsigned)> dynamicSize = nullptr) {
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
    Value shapeInput = {}, ArrayRef<int64_t> shapeDims = {}) {
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

LogicalResult lowerElementwise(IRRewriter &rw, Operation *op) {
  Location loc = op->getLoc();
  RankedTensorType resTy = tensorOf(op->getResult(0));
  StringRef name = op->getName().stripDialect();
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
        else if (op->hasAttr(kMixedSignAttr))
          v = emitMixedSignCompare(b, l, name, args[0], args[1], isUnsigned);
        else
          v = emitScalarUfunc(b, l, name, args, resTy.getElementType(),
                              isUnsigned);
        if (!v) {
          failed = true;
          v = emitZero(b, l, resTy.getElementType());
        }
        // np.errstate: cpn-lower-fp-flags computes this element's errors.
        if (fpChecks)
          FpFlagOp::create(b, l, args, v,
                           b.getStringAttr(isa<CastOp>(op) ? "cast" : name),
                           fpChecks, fpSite);
        return v;
      });
  if (failed)
    return op->emitOpError("has no lowering for element type ")
           << tensorOf(op->getOperand(0)).getElementType();
  rw.replaceOp(op, r);
  return success();
}

/// Emits the flat index of the current iteration of a view (offset plus
/// strides times linalg.index) as i64.
Value viewFlatIndex(OpBuilder &b, Location l, int64_t offset,
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

/// u[box] = value as tensor.insert_slice: reverse and transpose the value into
/// the base's dimension order, then insert it with positive strides.
Value lowerBoxUpdate(IRRewriter &rw, UpdateOp op, const BoxView &box) {
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
  SmallVector<int64_t> offsets(box.offsets), sliceSizes(k, 1), steps(k, 1),
      packedShape;
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
      offsets[j] += c * (n - 1);
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
  return tensor::InsertSliceOp::create(rw, loc, src, op.getBase(), ValueRange{},
                                       ValueRange{}, ValueRange{}, offsets,
                                       sliceSizes, steps);
}

/// The general form: a generic over the base that takes the value's element
/// where the (injective) view selects the base element. The view's dims are
/// recovered from the flat index greedily by decreasing stride, which is exact
/// for the views NumPy's basic indexing makes.
Value lowerGatherUpdate(IRRewriter &rw, UpdateOp op) {
  Location loc = op.getLoc();
  RankedTensorType baseTy = tensorOf(op.getBase());
  RankedTensorType valTy = tensorOf(op.getValue());
  ArrayRef<int64_t> sizes = valTy.getShape();
  int64_t offset = op.getOffset();
  SmallVector<int64_t> strides(op.getStrides());
  // Turn negative strides positive; remember which dims are reversed.
  SmallVector<bool> reversed(sizes.size(), false);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (strides[i] < 0) {
      offset += strides[i] * (sizes[i] - 1);
      strides[i] = -strides[i];
      reversed[i] = true;
    }
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
        Value r = arith::SubIOp::create(b, l, flat, c(offset));
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

} // namespace

LogicalResult mlir::cpn::lowerUpdate(IRRewriter &rw, UpdateOp op) {
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

namespace {

LogicalResult lowerReduce(IRRewriter &rw, ReduceOp op);

/// A reduction over every axis of a rank >= 2 array as two: over all axes but
/// the first (parallel over rows, vectorized along them), then over the rows'
/// partial results. One nest of reduction loops would run on one thread.
LogicalResult splitFullReduce(IRRewriter &rw, ReduceOp op) {
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  auto make = [&](Value x, RankedTensorType ty, ArrayRef<int64_t> axes) {
    OperationState st(loc, ReduceOp::getOperationName());
    st.addOperands(x);
    st.addTypes(ty);
    st.addAttributes(op->getAttrs());
    st.addAttribute("axes", rw.getDenseI64ArrayAttr(axes));
    return cast<ReduceOp>(rw.create(st));
  };
  SmallVector<int64_t> rest;
  for (int64_t i = 1; i < inTy.getRank(); ++i)
    rest.push_back(i);
  ReduceOp partial =
      make(op.getX(),
           RankedTensorType::get({inTy.getDimSize(0)}, resTy.getElementType()),
           rest);
  ReduceOp total = make(partial.getResult(), resTy, {0});
  // Both keep the op's attributes: an unsigned input has an unsigned result
  // dtype (NumPy's), so `is_unsigned` holds for the partials too.
  rw.replaceOp(op, total.getResult());
  rw.setInsertionPoint(partial);
  if (failed(lowerReduce(rw, partial)))
    return failure();
  rw.setInsertionPoint(total);
  return lowerReduce(rw, total);
}

/// argmin/argmax: whether `x` replaces `best` (strictly better, or the first
/// NaN: NumPy returns the first extremum, and the first NaN if any).
Value emitArgBetter(OpBuilder &b, Location l, StringRef kind, Value x,
                    Value best, bool isUnsigned) {
  Type elemTy = x.getType();
  bool isMin = kind == "argmin";
  if (isa<ComplexType>(elemTy)) { // NumPy's order; the first NaN wins
    Type i1 = b.getI1Type();
    Value better =
        emitScalarUfunc(b, l, isMin ? "less" : "greater", {x, best}, i1, false);
    Value xNan = emitScalarUfunc(b, l, "isnan", x, i1, false);
    Value bestNan = emitScalarUfunc(b, l, "isnan", best, i1, false);
    Value firstNan = arith::AndIOp::create(
        b, l, xNan, emitScalarUfunc(b, l, "logical_not", bestNan, i1, false));
    return arith::OrIOp::create(b, l, better, firstNan);
  }
  if (isa<FloatType>(elemTy)) {
    Value better = arith::CmpFOp::create(
        b, l, isMin ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT, x,
        best);
    Value xNan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
    Value bestNan =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, best, best);
    Value firstNan = arith::AndIOp::create(
        b, l, xNan,
        arith::XOrIOp::create(b, l, bestNan,
                              arith::ConstantOp::create(b, l, b.getI1Type(),
                                                        b.getBoolAttr(true))));
    return arith::OrIOp::create(b, l, better, firstNan);
  }
  bool u = isUnsigned || elemTy.isInteger(1);
  auto pred = isMin
                  ? (u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
                  : (u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt);
  return arith::CmpIOp::create(b, l, pred, x, best);
}

/// A reduction over a few elements per result (static reduced extents of at
/// most 16, 8 for float sums and products, which NumPy adds in order up to 8)
/// becomes an elementwise generic over the kept dimensions with one input per
/// reduced position: no accumulator to zero in its own pass, loops that are
/// all parallel, and a producer that fuses into it, so that `dist` in
/// `((p[:, None] - c) ** 2).sum(axis=2).argmin(axis=1)` never exists.
LogicalResult lowerSmallReduce(IRRewriter &rw, ReduceOp op) {
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  StringRef kind = op.getKind();
  bool isUnsigned = op.getIsUnsigned();
  ArrayRef<int64_t> axes = op.getAxes();
  unsigned rank = inTy.getRank();
  SmallVector<int64_t> kept, extents;
  for (unsigned i = 0; i < rank; ++i)
    if (llvm::is_contained(axes, (int64_t)i))
      extents.push_back(inTy.getDimSize(i));
    else
      kept.push_back(i);
  int64_t count = 1;
  for (int64_t e : extents)
    count *= e;
  // One input per reduced position: (kept dims) -> x index with the reduced
  // dims fixed, in C order of the reduced positions.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t pos = 0; pos < count; ++pos) {
    SmallVector<AffineExpr> exprs(rank);
    int64_t rem = pos;
    for (int64_t a = (int64_t)axes.size() - 1; a >= 0; --a) {
      exprs[axes[a]] = rw.getAffineConstantExpr(rem % extents[a]);
      rem /= extents[a];
    }
    for (auto [d, i] : llvm::enumerate(kept))
      exprs[i] = rw.getAffineDimExpr(d);
    inputs.push_back(op.getX());
    maps.push_back(AffineMap::get(kept.size(), 0, exprs, rw.getContext()));
  }
  bool isArg = kind.starts_with("arg");
  Value r = buildElementwise(
      rw, loc, resTy, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        if (isArg) { // the first extremum (or NaN) along the one axis
          Value best = args[0];
          Value bestIdx = arith::ConstantOp::create(b, l, b.getI64Type(),
                                                    b.getI64IntegerAttr(0));
          for (int64_t k = 1; k < count; ++k) {
            Value better = emitArgBetter(b, l, kind, args[k], best, isUnsigned);
            best = arith::SelectOp::create(b, l, better, args[k], best);
            bestIdx = arith::SelectOp::create(
                b, l, better,
                arith::ConstantOp::create(b, l, b.getI64Type(),
                                          b.getI64IntegerAttr(k)),
                bestIdx);
          }
          return bestIdx;
        }
        Value acc = emitReductionIdentity(b, l, kind, resTy.getElementType(),
                                          isUnsigned);
        for (Value x : args)
          acc = emitReductionCombine(b, l, kind, acc, x, isUnsigned);
        return acc;
      },
      /*shapeInput=*/op.getX(), kept);
  rw.replaceOp(op, r);
  return success();
}

bool isSmallReduce(ReduceOp op) {
  RankedTensorType inTy = tensorOf(op.getX());
  ArrayRef<int64_t> axes = op.getAxes();
  if (axes.empty() || (int64_t)axes.size() == inTy.getRank())
    return false; // nothing kept: a full reduction
  int64_t count = 1;
  for (int64_t a : axes) {
    if (inTy.isDynamicDim(a) || inTy.getDimSize(a) == 0)
      return false;
    count *= inTy.getDimSize(a);
  }
  bool floatSum = isa<FloatType, ComplexType>(inTy.getElementType()) &&
                  (op.getKind() == "sum" || op.getKind() == "prod");
  return count <= (floatSum ? 8 : 16);
}

/// Row blocks for a sum over `rows` rows into `outs` results (as
/// outerBlocks): 8 to 16 blocks dividing the rows, 64+ rows each; 0 if none.
int64_t rowBlocks(int64_t rows, int64_t outs, int64_t bytes) {
  for (int64_t blocks = 16; blocks >= 8 && rows >= 512; --blocks)
    if (rows % blocks == 0 && rows / blocks >= 64 &&
        blocks * outs * bytes <= (32 << 20))
      return blocks;
  return 0;
}

/// How many row blocks a reduction over the outer dimension only
/// (`x.sum(axis=0)`) is cut into, or 0 to keep it whole: 8 to 16 blocks that
/// divide the rows, of at least 64 rows each, partial results of at most
/// 32 MB.
int64_t outerBlocks(ReduceOp op) {
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  if (op.getKind().starts_with("arg") || !inTy.hasStaticShape() ||
      inTy.getRank() < 2 || op.getAxes() != ArrayRef<int64_t>{0})
    return 0;
  int64_t rows = inTy.getDimSize(0);
  int64_t bytes = elementBytes(resTy.getElementType());
  if (!rows)
    return 0;
  int64_t cols = inTy.getNumElements() / rows;
  if (int64_t blocks = rowBlocks(rows, cols, bytes))
    return blocks;
  // No count divides the rows: 16 blocks, and the last rows % 16 rows start
  // the result (splitOuterReduce), when x is stored data (an argument or a
  // slice or view of one). The slices would keep a producer from fusing into
  // the sum: computing it into a buffer costs more (3x measured) than blocks
  // save.
  Operation *def = op.getX().getDefiningOp();
  bool stored =
      !def ||
      isa<ViewOp, bufferization::ToTensorOp, tensor::ExtractSliceOp>(def);
  return stored && rows >= 1024 && 16 * cols * bytes <= (32 << 20) ? 16 : 0;
}

/// emitReductionCombine with float additions and multiplications marked
/// reassociable: NumPy sums pairwise, not in order, so LLVM may reorder float
/// sums and products and the reduction loops vectorize.
Value combineReassoc(OpBuilder &b, Location l, StringRef kind, Value acc,
                     Value x, bool isUnsigned) {
  Value r = emitReductionCombine(b, l, kind, acc, x, isUnsigned);
  if (auto add = r.getDefiningOp<arith::AddFOp>())
    add.setFastmath(arith::FastMathFlags::reassoc);
  if (auto mul = r.getDefiningOp<arith::MulFOp>())
    mul.setFastmath(arith::FastMathFlags::reassoc);
  return r;
}

/// One accumulating generic: `init` combined with the elements of `x` over
/// the iteration space `iters` (x read through the identity, `init` through
/// `outMap`).
Value reduceInto(OpBuilder &b, Location loc, ReduceOp op, Value x,
                 AffineMap outMap, Value init,
                 ArrayRef<utils::IteratorType> iters) {
  StringRef kind = op.getKind();
  bool isUnsigned = op.getIsUnsigned();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, x, init,
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(iters.size()), outMap},
      iters, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l, combineReassoc(nb, l, kind, args[1], args[0], isUnsigned));
      });
  return generic.getResult(0);
}

/// `x.sum(axis=0)` over many rows, as per-block partial results: x's rows
/// are regrouped as (blocks, rows/blocks, cols...) (a tensor.expand_shape,
/// which fusion moves through x's producer; rows that no block count
/// divides leave a slice of fewer than `blocks` rows that starts the
/// result); each block reduces its rows
/// into its own partial row (parallel over blocks, each streaming its rows
/// with the columns innermost), then the partials reduce into the result.
/// Column tiles (each thread walking every row over a slice of the columns)
/// read memory in short runs and cannot split a few columns over threads.
LogicalResult splitOuterReduce(IRRewriter &rw, ReduceOp op, int64_t blocks) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  unsigned m = inTy.getRank() - 1; // kept dims
  Type accTy = resTy.getElementType();
  Value ident =
      emitReductionIdentity(rw, loc, op.getKind(), accTy, op.getIsUnsigned());
  auto filled = [&](ArrayRef<int64_t> shape) {
    return linalg::FillOp::create(
               rw, loc, ident,
               tensor::EmptyOp::create(rw, loc, shape, accTy).getResult())
        .getResult(0);
  };
  int64_t rows = inTy.getDimSize(0), q = rows / blocks,
          rest = rows - blocks * q;
  // Rows [from, from + count) of x (x itself when that is all of it).
  auto rowsOf = [&](int64_t from, int64_t count) -> Value {
    if (count == rows)
      return op.getX();
    SmallVector<OpFoldResult> offsets(m + 1, rw.getIndexAttr(0)), sizes,
        strides(m + 1, rw.getIndexAttr(1));
    offsets[0] = rw.getIndexAttr(from);
    sizes.push_back(rw.getIndexAttr(count));
    for (int64_t d : resTy.getShape())
      sizes.push_back(rw.getIndexAttr(d));
    return tensor::ExtractSliceOp::create(rw, loc, op.getX(), offsets, sizes,
                                          strides);
  };
  SmallVector<int64_t> grouped{blocks, q};
  llvm::append_range(grouped, resTy.getShape());
  SmallVector<ReassociationIndices> assoc{{0, 1}};
  for (unsigned i = 0; i < m; ++i)
    assoc.push_back({static_cast<int64_t>(i + 2)});
  Value x = tensor::ExpandShapeOp::create(
      rw, loc, RankedTensorType::get(grouped, inTy.getElementType()),
      rowsOf(0, blocks * q), assoc);
  auto red = utils::IteratorType::reduction,
       par = utils::IteratorType::parallel;
  // Partials: (p, r, c...) -> out (p, c...).
  SmallVector<int64_t> partialShape{blocks};
  llvm::append_range(partialShape, resTy.getShape());
  SmallVector<AffineExpr> out{rw.getAffineDimExpr(0)};
  for (unsigned i = 0; i < m; ++i)
    out.push_back(rw.getAffineDimExpr(2 + i));
  SmallVector<utils::IteratorType> iters{par, red};
  iters.append(m, par);
  Value partials =
      reduceInto(rw, loc, op, x, AffineMap::get(m + 2, 0, out, ctx),
                 filled(partialShape), iters);
  // The result: (p, c...) -> out (c...).
  SmallVector<AffineExpr> kept;
  for (unsigned i = 0; i < m; ++i)
    kept.push_back(rw.getAffineDimExpr(1 + i));
  SmallVector<utils::IteratorType> iters1{red};
  iters1.append(m, par);
  AffineMap keptMap = AffineMap::get(m + 1, 0, kept, ctx);
  Value init = filled(resTy.getShape());
  if (rest) // the last rows (fewer than `blocks`) start the result
    init = reduceInto(rw, loc, op, rowsOf(blocks * q, rest), keptMap, init,
                      iters1);
  Value r = reduceInto(rw, loc, op, partials, keptMap, init, iters1);
  rw.replaceOp(op, r);
  return success();
}

/// A float16/float32 sum accumulates in float64 and rounds once. NumPy's
/// pairwise summation keeps a long sum within a few roundings of the exact
/// one; a vectorized loop's few accumulators do not (4M float32 values:
/// 1.6e-6 relative against NumPy's 1.5e-8). The widening cast fuses into the
/// reduction's loop, so the same bytes are read.
LogicalResult lowerWideSum(IRRewriter &rw, ReduceOp op) {
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  Type f64 = rw.getF64Type();
  auto wide = CastOp::create(rw, loc, inTy.clone(f64), op.getX());
  OperationState st(loc, ReduceOp::getOperationName());
  st.addOperands(wide.getResult());
  st.addTypes(resTy.clone(f64));
  st.addAttributes(op->getAttrs());
  auto sum = cast<ReduceOp>(rw.create(st));
  auto narrow = CastOp::create(rw, loc, resTy, sum.getResult());
  rw.replaceOp(op, narrow.getResult());
  rw.setInsertionPoint(wide);
  if (failed(lowerElementwise(rw, wide)))
    return failure();
  rw.setInsertionPoint(sum);
  if (failed(lowerReduce(rw, sum)))
    return failure();
  rw.setInsertionPoint(narrow);
  return lowerElementwise(rw, narrow);
}

LogicalResult lowerReduce(IRRewriter &rw, ReduceOp op) {
  Type resElem = tensorOf(op.getResult()).getElementType();
  if (op.getKind() == "sum" && isa<Float16Type, Float32Type>(resElem) &&
      tensorOf(op.getX()).getElementType() == resElem)
    return lowerWideSum(rw, op);
  if (isSmallReduce(op))
    return lowerSmallReduce(rw, op);
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  StringRef kind = op.getKind();
  bool isUnsigned = op.getIsUnsigned();
  bool isArg = kind.starts_with("arg");
  unsigned rank = inTy.getRank();
  ArrayRef<int64_t> axes = op.getAxes();
  if (!isArg && rank >= 2 && axes.size() == rank && inTy.getDimSize(0) > 1)
    return splitFullReduce(rw, op);
  if (int64_t blocks = outerBlocks(op))
    return splitOuterReduce(rw, op, blocks);
  SmallVector<utils::IteratorType> iters = parallel(rank);
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < rank; ++i) {
    if (llvm::is_contained(axes, (int64_t)i))
      iters[i] = utils::IteratorType::reduction;
    else
      outExprs.push_back(rw.getAffineDimExpr(i));
  }
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, rw.getContext());
  Type elemTy = inTy.getElementType();
  Type accTy = isArg ? elemTy : resTy.getElementType();
  auto accTensorTy = RankedTensorType::get(resTy.getShape(), accTy);
  Value ident = emitReductionIdentity(rw, loc, kind, accTy, isUnsigned);
  SmallVector<int64_t> kept; // the operand's dims the result keeps
  for (unsigned i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, (int64_t)i))
      kept.push_back(i);
  auto keptSize = [&](unsigned i) {
    return dimOf(rw, loc, op.getX(), kept[i]);
  };
  Value acc = linalg::FillOp::create(rw, loc, ident,
                                     emptyLike(rw, loc, accTensorTy, keptSize))
                  .getResult(0);
  SmallVector<Value> inits{acc};
  SmallVector<Type> resultTypes{accTensorTy};
  SmallVector<AffineMap> maps{rw.getMultiDimIdentityMap(rank), outMap};
  if (isArg) {
    Value zero = arith::ConstantOp::create(rw, loc, rw.getI64Type(),
                                           rw.getI64IntegerAttr(0));
    inits.push_back(linalg::FillOp::create(rw, loc, zero,
                                           emptyLike(rw, loc, resTy, keptSize))
                        .getResult(0));
    resultTypes.push_back(resTy);
    maps.push_back(outMap);
  }
  int64_t axis = axes.empty() ? 0 : axes[0];
  auto generic = linalg::GenericOp::create(
      rw, loc, resultTypes, op.getX(), inits, maps, iters,
      [&](OpBuilder &b, Location l, ValueRange args) {
        if (!isArg) {
          linalg::YieldOp::create(
              b, l, combineReassoc(b, l, kind, args[1], args[0], isUnsigned));
          return;
        }
        // Strictly better, or the first NaN: NumPy returns the first one.
        Value x = args[0], best = args[1], bestIdx = args[2];
        Value idx = arith::IndexCastOp::create(
            b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
        Value better = emitArgBetter(b, l, kind, x, best, isUnsigned);
        // The first element along the axis always replaces the identity.
        Value first = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, idx,
            arith::ConstantOp::create(b, l, b.getI64Type(),
                                      b.getI64IntegerAttr(0)));
        better = arith::OrIOp::create(b, l, better, first);
        linalg::YieldOp::create(
            b, l,
            ValueRange{arith::SelectOp::create(b, l, better, x, best),
                       arith::SelectOp::create(b, l, better, idx, bestIdx)});
      });
  rw.replaceOp(op, generic.getResult(isArg ? 1 : 0));
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

LogicalResult lowerIota(IRRewriter &rw, IotaOp op) {
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

/// cpn.random_bits: a generic over the result whose body is Philox4x32-10 on
/// the counter (counter + linear index, 0) under the key, in 64-bit integer
/// arithmetic (each 32x32->64 product is one multiply of zero-extended
/// halves, which vectorizes).
LogicalResult lowerRandomBits(IRRewriter &rw, RandomBitsOp op) {
  RankedTensorType resTy = tensorOf(op.getResult());
  unsigned rank = resTy.getRank();
  SmallVector<int64_t> strides = rowMajorStrides(resTy.getShape());
  AffineMap scalar = AffineMap::get(rank, 0, {}, rw.getContext());
  Value r = buildElementwise(
      rw, op.getLoc(), resTy, {op.getKey(), op.getCounter()}, {scalar, scalar},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Type i64 = b.getI64Type();
        auto cst = [&](uint64_t v) -> Value {
          return arith::ConstantOp::create(
              b, l, i64, b.getI64IntegerAttr(static_cast<int64_t>(v)));
        };
        Value mask = cst(0xffffffffull), c32 = cst(32);
        auto lo = [&](Value v) -> Value {
          return arith::AndIOp::create(b, l, v, mask);
        };
        auto hi = [&](Value v) -> Value {
          return arith::ShRUIOp::create(b, l, v, c32);
        };
        Value n =
            arith::AddIOp::create(b, l, args[1], linearIndex(b, l, strides));
        Value c0 = lo(n), c1 = hi(n), c2 = cst(0), c3 = cst(0);
        Value k0 = lo(args[0]), k1 = hi(args[0]);
        Value m0 = cst(0xD2511F53ull), m1 = cst(0xCD9E8D57ull);
        Value w0 = cst(0x9E3779B9ull), w1 = cst(0xBB67AE85ull);
        for (int round = 0; round < 10; ++round) {
          Value p0 = arith::MulIOp::create(b, l, c0, m0);
          Value p1 = arith::MulIOp::create(b, l, c2, m1);
          Value n0 = arith::XOrIOp::create(
              b, l, arith::XOrIOp::create(b, l, hi(p1), c1), k0);
          Value n2 = arith::XOrIOp::create(
              b, l, arith::XOrIOp::create(b, l, hi(p0), c3), k1);
          c1 = lo(p1);
          c3 = lo(p0);
          c0 = n0;
          c2 = n2;
          k0 = lo(arith::AddIOp::create(b, l, k0, w0));
          k1 = lo(arith::AddIOp::create(b, l, k1, w1));
        }
        return arith::OrIOp::create(b, l, arith::ShLIOp::create(b, l, c0, c32),
                                    c1);
      });
  rw.replaceOp(op, r);
  return success();
}

/// The base of `v` when `v` is a cpn.view that transposes a whole 2-D
/// tensor (offset 0, strides [1, columns]); null otherwise.
Value transposedBase(Value v) {
  auto view = v.getDefiningOp<ViewOp>();
  if (!view)
    return {};
  ArrayRef<int64_t> base = tensorOf(view.getBase()).getShape();
  ArrayRef<int64_t> shape = tensorOf(view.getResult()).getShape();
  if (base.size() != 2 || shape.size() != 2 || view.getOffset() != 0 ||
      shape[0] != base[1] || shape[1] != base[0] ||
      view.getStrides() != ArrayRef<int64_t>{1, base[1]})
    return {};
  return view.getBase();
}

/// A tensor of `shape` filled with zeros of `et`.
Value zerosOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type et) {
  return linalg::FillOp::create(
             b, loc, emitZero(b, loc, et),
             tensor::EmptyOp::create(b, loc, shape, et).getResult())
      .getResult(0);
}

/// cpn.matmul becomes linalg.matmul. An operand that is a transposed view
/// (`x.T @ r`) is read through a transposed indexing map instead of being
/// copied: cpn-matmul-to-blas passes it to BLAS as a transposed operand.
/// `x.T @ v` for a tall x (rows >= 512, at most 256 columns) and a vector v
/// is a sum over x's rows, not a BLAS call: BLAS's transposed gemv on a
/// tall, narrow matrix reads it at a fraction of the bandwidth (2x slower
/// measured on 1M x 32). With several columns in v BLAS's gemm is faster
/// (k-means' one-hot.T @ points, 16 x 3 outputs: 21 ms against 33 ms). Rows are
/// grouped in blocks as for `x.sum(axis=0)`: each block accumulates x[r, i] *
/// v[r, j] into its own partial (parallel over blocks, one pass over x), then
/// the partials add up. A producer of v (`x.T @ (p - y)`) fuses into the pass.
Value tallTransposedProduct(IRRewriter &rw, MatmulOp op) {
  Value base = transposedBase(op.getLhs());
  Value rhs = op.getRhs();
  RankedTensorType resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  if (!base || transposedBase(rhs) || !resTy.hasStaticShape() ||
      !tensorOf(rhs).hasStaticShape() || et.isInteger(1))
    return {};
  int64_t rows = tensorOf(base).getDimSize(0), m = resTy.getDimSize(0),
          n = resTy.getDimSize(1);
  int64_t blocks =
      (m <= 256 && n == 1) ? rowBlocks(rows, m, elementBytes(et)) : 0;
  if (!blocks)
    return {};
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  int64_t q = rows / blocks;
  auto grouped = [&](Value v, int64_t cols) {
    SmallVector<ReassociationIndices> assoc{{0, 1}, {2}};
    return tensor::ExpandShapeOp::create(
               rw, loc, RankedTensorType::get({blocks, q, cols}, et), v, assoc)
        .getResult();
  };
  auto zeros = [&](ArrayRef<int64_t> shape) {
    return zerosOf(rw, loc, shape, et);
  };
  auto d = [&](unsigned i) { return rw.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  // (p, r, i, j): partial[p, i, j] += x[p, r, i] * v[p, r, j].
  auto partial = linalg::GenericOp::create(
      rw, loc, TypeRange{RankedTensorType::get({blocks, m, n}, et)},
      ValueRange{grouped(base, m), grouped(rhs, n)}, zeros({blocks, m, n}),
      ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
                          AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx)},
      ArrayRef<utils::IteratorType>{par, red, par, par},
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value prod =
            emitScalarUfunc(b, l, "multiply", {args[0], args[1]}, et, false);
        linalg::YieldOp::create(
            b, l, combineReassoc(b, l, "sum", args[2], prod, false));
      });
  // (p, i, j): result[i, j] += partial[p, i, j].
  auto total = linalg::GenericOp::create(
      rw, loc, TypeRange{resTy}, partial.getResult(0), zeros({m, n}),
      ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(3),
                          AffineMap::get(3, 0, {d(1), d(2)}, ctx)},
      ArrayRef<utils::IteratorType>{red, par, par},
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(
            b, l, combineReassoc(b, l, "sum", args[1], args[0], false));
      });
  return total.getResult(0);
}

/// `a @ b` of two vectors (a 1 x k by k x 1 product, CG's `r @ r`): a sum
/// of products over k that the vectors' producers fuse into. As a BLAS call
/// each operand needs a buffer of its own, and a producer used by both (`r @
/// r`) was computed twice. Long vectors (2^15 elements or more) are summed
/// in row blocks, in parallel, as tallTransposedProduct does.
Value innerProduct(IRRewriter &rw, MatmulOp op) {
  RankedTensorType lhsTy = tensorOf(op.getLhs()),
                   resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  if (!lhsTy.hasStaticShape() || lhsTy.getDimSize(0) != 1 ||
      resTy.getShape() != ArrayRef<int64_t>{1, 1} || et.isInteger(1))
    return {};
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  int64_t k = lhsTy.getDimSize(1);
  int64_t blocks = k >= (1 << 15) ? rowBlocks(k, 1, elementBytes(et)) : 0;
  int64_t q = blocks ? k / blocks : k;
  auto d = [&](unsigned i) { return rw.getAffineDimExpr(i); };
  AffineExpr zeroExpr = rw.getAffineConstantExpr(0);
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  auto zeros = [&](ArrayRef<int64_t> shape) {
    return zerosOf(rw, loc, shape, et);
  };
  auto sumBody = [&](OpBuilder &b, Location l, ValueRange args) {
    Value prod =
        emitScalarUfunc(b, l, "multiply", {args[0], args[1]}, et, false);
    linalg::YieldOp::create(b, l,
                            combineReassoc(b, l, "sum", args[2], prod, false));
  };
  Value total;
  if (!blocks) {
    // (i): out[] += a[0, i] * b[i, 0].
    total = linalg::GenericOp::create(
                rw, loc, TypeRange{RankedTensorType::get({}, et)},
                ValueRange{op.getLhs(), op.getRhs()}, zeros({}),
                ArrayRef<AffineMap>{AffineMap::get(1, 0, {zeroExpr, d(0)}, ctx),
                                    AffineMap::get(1, 0, {d(0), zeroExpr}, ctx),
                                    AffineMap::get(1, 0, {}, ctx)},
                ArrayRef<utils::IteratorType>{red}, sumBody)
                .getResult(0);
  } else {
    // (p, r): partial[p] += a[p*q + r] * b[p*q + r] (each vector regrouped
    // as (blocks, q)), then the sum of the partials.
    auto grouped = [&](Value v) {
      Value flat = tensor::CollapseShapeOp::create(
          rw, loc, RankedTensorType::get({k}, et), v,
          ArrayRef<ReassociationIndices>{{0, 1}});
      return tensor::ExpandShapeOp::create(
                 rw, loc, RankedTensorType::get({blocks, q}, et), flat,
                 ArrayRef<ReassociationIndices>{{0, 1}})
          .getResult();
    };
    Value partial = linalg::GenericOp::create(
                        rw, loc, TypeRange{RankedTensorType::get({blocks}, et)},
                        ValueRange{grouped(op.getLhs()), grouped(op.getRhs())},
                        zeros({blocks}),
                        ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(2),
                                            rw.getMultiDimIdentityMap(2),
                                            AffineMap::get(2, 0, {d(0)}, ctx)},
                        ArrayRef<utils::IteratorType>{par, red}, sumBody)
                        .getResult(0);
    total =
        linalg::GenericOp::create(
            rw, loc, TypeRange{RankedTensorType::get({}, et)}, partial,
            zeros({}),
            ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(1),
                                AffineMap::get(1, 0, {}, ctx)},
            ArrayRef<utils::IteratorType>{red},
            [&](OpBuilder &b, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  b, l, combineReassoc(b, l, "sum", args[1], args[0], false));
            })
            .getResult(0);
  }
  return tensor::ExpandShapeOp::create(rw, loc, resTy, total,
                                       ArrayRef<ReassociationIndices>{})
      .getResult();
}

LogicalResult lowerMatmul(IRRewriter &rw, MatmulOp op) {
  if (Value r = tallTransposedProduct(rw, op)) {
    rw.replaceOp(op, r);
    return success();
  }
  if (Value r = innerProduct(rw, op)) {
    rw.replaceOp(op, r);
    return success();
  }
  Location loc = op.getLoc();
  RankedTensorType resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  Value zero = emitZero(rw, loc, et);
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Value init =
      linalg::FillOp::create(rw, loc, zero,
                             emptyLike(rw, loc, resTy,
                                       [&](unsigned i) {
                                         return i == 0 ? dimOf(rw, loc, lhs, 0)
                                                       : dimOf(rw, loc, rhs, 1);
                                       }))
          .getResult(0);
  SmallVector<AffineMap> maps =
      linalg::MatmulOp::getDefaultIndexingMaps(rw.getContext());
  AffineExpr m = rw.getAffineDimExpr(0), n = rw.getAffineDimExpr(1),
             k = rw.getAffineDimExpr(2);
  if (Value base = transposedBase(lhs)) {
    lhs = base;
    maps[0] = AffineMap::get(3, 0, {k, m}, rw.getContext());
  }
  if (Value base = transposedBase(rhs)) {
    rhs = base;
    maps[1] = AffineMap::get(3, 0, {n, k}, rw.getContext());
  }
  SmallVector<NamedAttribute> attrs;
  if (lhs != op.getLhs() || rhs != op.getRhs())
    attrs.push_back(
        rw.getNamedAttr("indexing_maps", rw.getAffineMapArrayAttr(maps)));
  Value r =
      linalg::MatmulOp::create(rw, loc, TypeRange{resTy}, ValueRange{lhs, rhs},
                               ValueRange{init}, attrs)
          .getResult(0);
  rw.replaceOp(op, r);
  return success();
}

/// cpn.libcall becomes `cpn_lib_<callee>(meta, out, in...)` (see
/// runtime/include/cpnrt/Lapack.h and emitLibcall): operands are read through
/// bufferization.to_buffer (any layout), the result is written into a fresh
/// buffer that becomes the result tensor. Buffers are passed as direct
/// arguments, so that deallocation sees their last use. An in-place call
/// stays for one-shot bufferization (BufferizableOpInterfaceImpl.cpp).
LogicalResult lowerLibcall(IRRewriter &rw, LibcallOp op) {
  if (op.getInPlace())
    return success();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  RankedTensorType resTy = tensorOf(op.getResult());
  auto outBuf = memref::AllocOp::create(
      rw, loc, MemRefType::get(resTy.getShape(), resTy.getElementType()));
  SmallVector<Value> buffers{outBuf};
  for (Value v : op.getOperands()) {
    RankedTensorType t = tensorOf(v);
    auto layout = StridedLayoutAttr::get(
        ctx, ShapedType::kDynamic,
        SmallVector<int64_t>(t.getRank(), ShapedType::kDynamic));
    auto mt = MemRefType::get(t.getShape(), t.getElementType(), layout);
    auto toBuf = bufferization::ToBufferOp::create(rw, loc, mt, v);
    toBuf.setReadOnly(true);
    buffers.push_back(toBuf);
  }
  emitLibcall(rw, loc, op, buffers);
  auto result = bufferization::ToTensorOp::create(rw, loc, resTy, outBuf);
  result.setRestrict(true);
  result.setWritable(true);
  rw.replaceOp(op, result.getResult());
  return success();
}

/// An op whose results all have no elements computes nothing: its results
/// become tensor.empty. Lowering it would build index arithmetic over
/// zero-length dimensions (row-major strides of 0, divisions by them) and
/// loops and library calls that never run. Every cpn op is pure (a write
/// through a view is an update whose result is the base), so nothing is lost.
/// Static shapes only: a dynamic dimension may be non-zero at run time.
bool replaceEmptyResults(IRRewriter &rw, Operation *op) {
  if (op->getNumResults() == 0)
    return false;
  for (Type t : op->getResultTypes()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape() || rt.getNumElements() != 0)
      return false;
  }
  SmallVector<Value> empties;
  for (Type t : op->getResultTypes()) {
    auto rt = cast<RankedTensorType>(t);
    empties.push_back(tensor::EmptyOp::create(rw, op->getLoc(), rt.getShape(),
                                              rt.getElementType()));
  }
  rw.replaceOp(op, empties);
  return true;
}

struct ConvertCPNToLinalgPass
    : public cpn::impl::ConvertCPNToLinalgBase<ConvertCPNToLinalgPass> {
  using ConvertCPNToLinalgBase::ConvertCPNToLinalgBase;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      // cpn.fp_flag is already scalar (in bodies, kept until loops).
      if (isa<CPNDialect>(op->getDialect()) && !isa<FpFlagOp>(op) &&
          !(keepUpdates && isa<UpdateOp>(op)))
        ops.push_back(op);
    });
    // Matmuls first, while their operands are still cpn.view ops: a
    // transposed operand is then read in place (see lowerMatmul).
    std::stable_partition(ops.begin(), ops.end(),
                          [](Operation *op) { return isa<MatmulOp>(op); });
    IRRewriter rw(&getContext());
    setLibmModule(getOperation());
    for (Operation *op : ops) {
      // A view only a matmul read (in place, transposed) is dead now.
      if (isa<ViewOp>(op) && op->use_empty()) {
        rw.eraseOp(op);
        continue;
      }
      rw.setInsertionPoint(op);
      if (replaceEmptyResults(rw, op))
        continue;
      LogicalResult r = failure();
      if (auto v = dyn_cast<ViewOp>(op))
        r = lowerView(rw, v);
      else if (auto u = dyn_cast<UpdateOp>(op))
        r = lowerUpdate(rw, u);
      else if (auto red = dyn_cast<ReduceOp>(op))
        r = lowerReduce(rw, red);
      else if (auto iota = dyn_cast<IotaOp>(op))
        r = lowerIota(rw, iota);
      else if (auto remap = dyn_cast<RemapOp>(op))
        r = lowerRemap(rw, remap);
      else if (auto mm = dyn_cast<MatmulOp>(op))
        r = lowerMatmul(rw, mm);
      else if (auto call = dyn_cast<LibcallOp>(op))
        r = lowerLibcall(rw, call);
      else if (auto bits = dyn_cast<RandomBitsOp>(op))
        r = lowerRandomBits(rw, bits);
      else
        r = lowerElementwise(rw, op);
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace

