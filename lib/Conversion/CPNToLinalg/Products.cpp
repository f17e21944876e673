//===- Products.cpp - cpn.matmul to linalg --------------------------------===//
//
// Part of cpnumeric.
//
// cpn.matmul becomes linalg.matmul (a transposed view operand read in
// place), or a sum in row blocks for a tall transposed product or an inner
// product of two vectors.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "cpn/Conversion/ScalarOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

Value zerosOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type et) {
  return linalg::FillOp::create(
             b, loc, emitZero(b, loc, et),
             tensor::EmptyOp::create(b, loc, shape, et).getResult())
      .getResult(0);
}

/// cpn.matmul becomes linalg.matmul. An operand that is a transposed view
/// (`x.T @ r`) is read through a transposed indexing map instead of being
/// copied: cpn-matmul-to-blas passes it to BLAS as a transposed operand.
/// `x.T @ v` with cpn.row_blocks (a tall x and a vector v, which
/// cpn-schedule-reductions found faster as a sum over x's rows than as a
/// BLAS call). Rows are
/// grouped in blocks as for `x.sum(axis=0)`: each block accumulates x[r, i] *
/// v[r, j] into its own partial (parallel over blocks, one pass over x), then
/// the partials add up. A producer of v (`x.T @ (p - y)`) fuses into the pass.
static Value tallTransposedProduct(RewriterBase &rw, MatmulOp op) {
  Value base = transposedBase(op.getLhs());
  Value rhs = op.getRhs();
  RankedTensorType resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  if (!base || transposedBase(rhs) || !resTy.hasStaticShape() ||
      !tensorOf(rhs).hasStaticShape() || et.isInteger(1))
    return {};
  int64_t rows = tensorOf(base).getDimSize(0), m = resTy.getDimSize(0),
          n = resTy.getDimSize(1);
  int64_t blocks = rowBlocksOf(op, rows, /*divides=*/true);
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
        Value prod = emitScalarUfunc(b, l, Ufunc::multiply, {args[0], args[1]},
                                     et, false);
        linalg::YieldOp::create(
            b, l, combineReassoc(b, l, ReduceKind::sum, args[2], prod, false));
      });
  // (p, i, j): result[i, j] += partial[p, i, j].
  auto total = linalg::GenericOp::create(
      rw, loc, TypeRange{resTy}, partial.getResult(0), zeros({m, n}),
      ArrayRef<AffineMap>{rw.getMultiDimIdentityMap(3),
                          AffineMap::get(3, 0, {d(1), d(2)}, ctx)},
      ArrayRef<utils::IteratorType>{red, par, par},
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(
            b, l,
            combineReassoc(b, l, ReduceKind::sum, args[1], args[0], false));
      });
  return total.getResult(0);
}

/// `a @ b` of two vectors (a 1 x k by k x 1 product, CG's `r @ r`): a sum
/// of products over k that the vectors' producers fuse into. As a BLAS call
/// each operand needs a buffer of its own, and a producer used by both (`r @
/// r`) was computed twice. With cpn.row_blocks (long vectors) it is summed
/// in row blocks, in parallel, as tallTransposedProduct does.
static Value innerProduct(RewriterBase &rw, MatmulOp op) {
  RankedTensorType lhsTy = tensorOf(op.getLhs()),
                   resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  if (!lhsTy.hasStaticShape() || lhsTy.getDimSize(0) != 1 ||
      resTy.getShape() != ArrayRef<int64_t>{1, 1} || et.isInteger(1))
    return {};
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  int64_t k = lhsTy.getDimSize(1);
  int64_t blocks = rowBlocksOf(op, k, /*divides=*/true);
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
        emitScalarUfunc(b, l, Ufunc::multiply, {args[0], args[1]}, et, false);
    linalg::YieldOp::create(
        b, l, combineReassoc(b, l, ReduceKind::sum, args[2], prod, false));
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
              linalg::YieldOp::create(b, l,
                                      combineReassoc(b, l, ReduceKind::sum,
                                                     args[1], args[0], false));
            })
            .getResult(0);
  }
  return tensor::ExpandShapeOp::create(rw, loc, resTy, total,
                                       ArrayRef<ReassociationIndices>{})
      .getResult();
}

LogicalResult lowerMatmul(RewriterBase &rw, MatmulOp op) {
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

} // namespace mlir::cpn::tolinalg
