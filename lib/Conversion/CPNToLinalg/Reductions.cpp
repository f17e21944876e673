//===- Reductions.cpp - cpn.reduce to linalg ------------------------------===//
//
// Part of cpnumeric.
//
// cpn.reduce becomes an accumulating linalg.generic, or one of its special
// forms: a few elements per result as an elementwise generic, a sum over many
// rows in the row blocks cpn-schedule-reductions chose (cpn.row_blocks; it
// also splits full reductions and widens float16/float32 sums before this
// lowering). combineReassoc is shared with the products.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "cpn/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// argmin/argmax: whether `x` replaces `best` (strictly better, or the first
/// NaN: NumPy returns the first extremum, and the first NaN if any).
static Value emitArgBetter(OpBuilder &b, Location l, ReduceKind kind, Value x,
                           Value best, bool isUnsigned) {
  Type elemTy = x.getType();
  bool isMin = kind == ReduceKind::argmin;
  if (isa<ComplexType>(elemTy)) { // NumPy's order; the first NaN wins
    Type i1 = b.getI1Type();
    Value better = emitScalarUfunc(b, l, isMin ? Ufunc::less : Ufunc::greater,
                                   {x, best}, i1, false);
    Value xNan = emitScalarUfunc(b, l, Ufunc::isnan, x, i1, false);
    Value bestNan = emitScalarUfunc(b, l, Ufunc::isnan, best, i1, false);
    Value firstNan = arith::AndIOp::create(
        b, l, xNan,
        emitScalarUfunc(b, l, Ufunc::logical_not, bestNan, i1, false));
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
static LogicalResult lowerSmallReduce(RewriterBase &rw, ReduceOp op) {
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  ReduceKind kind = op.getKind();
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
  bool isArg = kind == ReduceKind::argmin || kind == ReduceKind::argmax;
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

/// emitReductionCombine with float additions marked reassociable: NumPy
/// sums pairwise, not in order, so LLVM may reorder float sums and the
/// reduction loops vectorize. Float products stay in order: NumPy multiplies
/// in order, and a reordered product overflows or reaches 0 elsewhere (inf
/// times 0: NaN where NumPy gives 0).
Value combineReassoc(OpBuilder &b, Location l, ReduceKind kind, Value acc,
                     Value x, bool isUnsigned) {
  Value r = emitReductionCombine(b, l, kind, acc, x, isUnsigned);
  if (auto add = r.getDefiningOp<arith::AddFOp>())
    add.setFastmath(arith::FastMathFlags::reassoc);
  return r;
}

/// One accumulating generic: `init` combined with the elements of `x` over
/// the iteration space `iters` (x read through the identity, `init` through
/// `outMap`).
static Value reduceInto(OpBuilder &b, Location loc, ReduceOp op, Value x,
                        AffineMap outMap, Value init,
                        ArrayRef<utils::IteratorType> iters) {
  ReduceKind kind = op.getKind();
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
static LogicalResult splitOuterReduce(RewriterBase &rw, ReduceOp op,
                                      int64_t blocks) {
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

int64_t rowBlocksOf(Operation *op, int64_t rows, bool divides) {
  auto attr = op->getAttrOfType<IntegerAttr>(kRowBlocksAttr);
  if (!attr)
    return 0;
  int64_t blocks = attr.getInt();
  if (blocks < 1 || blocks > rows || (divides && rows % blocks != 0))
    return 0; // not a schedule this op can follow: lowered whole
  return blocks;
}

LogicalResult lowerReduce(RewriterBase &rw, ReduceOp op) {
  if (isSmallReduce(op))
    return lowerSmallReduce(rw, op);
  RankedTensorType xTy = tensorOf(op.getX());
  if (xTy.hasStaticShape() && xTy.getRank() >= 1 &&
      op.getAxes() == ArrayRef<int64_t>{0})
    if (int64_t blocks = rowBlocksOf(op, xTy.getDimSize(0), false))
      return splitOuterReduce(rw, op, blocks);
  Location loc = op.getLoc();
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  ReduceKind kind = op.getKind();
  bool isUnsigned = op.getIsUnsigned();
  bool isArg = kind == ReduceKind::argmin || kind == ReduceKind::argmax;
  unsigned rank = inTy.getRank();
  ArrayRef<int64_t> axes = op.getAxes();
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

} // namespace mlir::cpn::tolinalg
