//===- FuseRowProducts.cpp - x.T @ f(x @ w) in one pass over x ------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// A linear model's gradient, `x.T @ f(x @ w, y, ...)` with f computed row by
// row, reads a tall, narrow x twice: for `x @ w` (a gemv) and for the sum
// over x's rows. Per block of rows that stays in cache both read x once from
// memory:
//
//   scf.forall (b) in (B) shared_outs(partials, exports...) {
//     x_b = x[b*q : (b+1)*q, :]
//     z_b = x_b @ w                       (a loop: inner loop over x's columns)
//     v_b = f(z_b, y[b*q : (b+1)*q], ...) (the cpn ops, cloned on q rows)
//     partials[b] = x_b.T @ v_b           (rows outer, columns inner)
//     exports[b*q : (b+1)*q] = values of f that other ops read
//   }
//   x.T @ v = sum of partials over b
//
// The elementwise ops stay cpn ops (convert-cpn-to-linalg lowers them inside
// the loop); the two products are linalg.generic here, so that neither
// becomes a BLAS call per block. `scf-forall-to-parallel` turns the loop
// into the kernel's parallel loop.
//
//===----------------------------------------------------------------------===//

#include "CPNToLinalg/Lowerings.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_FUSEROWPRODUCTS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;
using mlir::cpn::tolinalg::zerosOf;

namespace {

/// Whether `t` is a row vector of `rows` rows: (rows) or (rows, 1).
bool isRowVector(RankedTensorType t, int64_t rows) {
  return t && t.hasStaticShape() &&
         (t.getRank() == 1 || (t.getRank() == 2 && t.getDimSize(1) == 1)) &&
         t.getDimSize(0) == rows;
}

/// Data the kernel holds rather than computes: an argument or a buffer's
/// tensor. Slices of it are reads.
bool isStored(Value v) {
  return isa<BlockArgument>(v) || v.getDefiningOp<bufferization::ToTensorOp>();
}

/// A view that only reshapes a row vector ((R) <-> (R, 1)).
bool isRowReshape(ViewOp view, int64_t rows) {
  if (view.getDynOffset() || view.getOffset() != 0)
    return false;
  RankedTensorType base = tensorOf(view.getBase()),
                   res = tensorOf(view.getResult());
  if (!isRowVector(base, rows) || !isRowVector(res, rows))
    return false;
  ArrayRef<int64_t> s = view.getStrides();
  return (res.getRank() == 1 && s == ArrayRef<int64_t>{1}) ||
         (res.getRank() == 2 && s == ArrayRef<int64_t>{1, 0});
}

/// A 0-d value broadcast to a row vector (a Python scalar of the chain).
bool isScalarBroadcast(ViewOp view, int64_t rows) {
  return !view.getDynOffset() && tensorOf(view.getBase()).getRank() == 0 &&
         isRowVector(tensorOf(view.getResult()), rows) &&
         llvm::all_of(view.getStrides(), [](int64_t s) { return s == 0; });
}

/// The pattern around one `x.T @ v`.
struct Chain {
  Value x;                  // R x m, stored
  SmallVector<MatmulOp> zs; // x @ w, each R x 1
  SmallVector<Operation *> ops; // views and elementwise ops, program order
  SmallVector<Value> slices;    // stored row vectors read by the chain
};

/// Collects the chain computing `root` (a row vector of `rows` rows) from
/// products `x @ w`, stored row vectors and broadcast scalars. False if
/// anything else feeds it.
bool collect(Value root, Chain &c, int64_t rows, Operation *product) {
  SmallVector<Value> work{root};
  DenseSet<Value> seen;
  DenseSet<Operation *> inChain;
  while (!work.empty()) {
    Value u = work.pop_back_val();
    if (!seen.insert(u).second)
      continue;
    Operation *def = u.getDefiningOp();
    if (def && def->getBlock() != product->getBlock())
      return false;
    if (auto mm = dyn_cast_or_null<MatmulOp>(def)) {
      RankedTensorType w = tensorOf(mm.getRhs());
      if (mm.getLhs() != c.x || !w.hasStaticShape() || w.getRank() != 2 ||
          w.getDimSize(1) != 1 || !isRowVector(tensorOf(u), rows) ||
          w.getElementType() != tensorOf(c.x).getElementType())
        return false;
      c.zs.push_back(mm);
      continue;
    }
    if (auto view = dyn_cast_or_null<ViewOp>(def)) {
      if (isScalarBroadcast(view, rows)) {
        inChain.insert(def);
        continue;
      }
      if (!isRowReshape(view, rows))
        return false;
      inChain.insert(def);
      work.push_back(view.getBase());
      continue;
    }
    if (def && def->hasTrait<OpTrait::CPNSameShape>() &&
        def->getNumResults() == 1 && isRowVector(tensorOf(u), rows)) {
      inChain.insert(def);
      for (Value operand : def->getOperands())
        work.push_back(operand);
      continue;
    }
    if (isStored(u) && isRowVector(tensorOf(u), rows)) {
      c.slices.push_back(u);
      continue;
    }
    return false;
  }
  if (c.zs.empty())
    return false;
  for (Operation &op : *product->getBlock())
    if (inChain.contains(&op))
      c.ops.push_back(&op);
  return true;
}

/// Rows per block: the most that keep a block of x within 128 KiB (read
/// again from L2 by the second product), dividing the rows, 64 or more, and
/// at least 4 blocks; 0 if none.
int64_t blockRows(int64_t rows, int64_t cols, int64_t elementBytes) {
  if (cols < 1 || elementBytes < 1)
    return 0;
  int64_t most = (128 << 10) / (cols * elementBytes);
  for (int64_t q = std::min(most, rows / 4); q >= 64; --q)
    if (rows % q == 0)
      return q;
  return 0;
}

/// out += a * b, reassociable (the vectorizer's partial sums), as the
/// lowering's row-block products.
void multiplyAdd(OpBuilder &b, Location loc, ValueRange args) {
  Value prod = emitScalarUfunc(b, loc, Ufunc::multiply, {args[0], args[1]},
                               args[0].getType(), false);
  linalg::YieldOp::create(
      b, loc,
      tolinalg::combineReassoc(b, loc, ReduceKind::sum, args[2], prod, false));
}

/// Offsets, sizes and strides of rows [off, off + q) of a row vector of
/// rank `rank` ((R) or (R, 1)).
struct RowBox {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
RowBox rowBox(OpBuilder &b, Value off, int64_t q, int64_t rank) {
  RowBox box{{off}, {b.getIndexAttr(q)}, {b.getIndexAttr(1)}};
  if (rank == 2) {
    box.offsets.push_back(b.getIndexAttr(0));
    box.sizes.push_back(b.getIndexAttr(1));
    box.strides.push_back(b.getIndexAttr(1));
  }
  return box;
}

/// `q` rows at `off` of the row vector `u`, as a (q) tensor.
Value rowSlice(OpBuilder &b, Location loc, Value u, Value off, int64_t q) {
  RankedTensorType t = tensorOf(u);
  RowBox box = rowBox(b, off, q, t.getRank());
  return tensor::ExtractSliceOp::create(
             b, loc, RankedTensorType::get({q}, t.getElementType()), u,
             box.offsets, box.sizes, box.strides)
      .getResult();
}

void rewrite(MatmulOp product, Chain &c, int64_t q) {
  OpBuilder b(product);
  Location loc = product.getLoc();
  MLIRContext *ctx = b.getContext();
  RankedTensorType xTy = tensorOf(c.x);
  Type et = xTy.getElementType();
  int64_t rows = xTy.getDimSize(0), m = xTy.getDimSize(1), blocks = rows / q;
  DenseSet<Operation *> inside(c.ops.begin(), c.ops.end());
  for (MatmulOp z : c.zs)
    inside.insert(z);
  inside.insert(product);
  // Values of the chain read outside it, after the product: written out
  // block by block.
  SmallVector<Value> exports;
  auto addExports = [&](Operation *op) {
    // A broadcast scalar's other readers keep their view of it.
    if (auto view = dyn_cast<ViewOp>(op); view && isScalarBroadcast(view, rows))
      return;
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !inside.contains(u); }))
        exports.push_back(r);
  };
  for (MatmulOp z : c.zs)
    addExports(z);
  for (Operation *op : c.ops)
    addExports(op);
  SmallVector<Value> inits{tensor::EmptyOp::create(b, loc,
                                                   ArrayRef<int64_t>{blocks, m},
                                                   et)};
  for (Value e : exports) {
    RankedTensorType t = tensorOf(e);
    inits.push_back(
        tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType()));
  }
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto par = utils::IteratorType::parallel,
       red = utils::IteratorType::reduction;
  // The loop names every source line it computes (kernel summaries).
  SmallVector<Location> locs{loc};
  for (MatmulOp z : c.zs)
    locs.push_back(z.getLoc());
  for (Operation *op : c.ops)
    locs.push_back(op->getLoc());
  auto forall = scf::ForallOp::create(
      b, FusedLoc::get(ctx, locs),
      ArrayRef<OpFoldResult>{b.getIndexAttr(blocks)}, inits, std::nullopt);
  {
        OpBuilder lb = OpBuilder::atBlockBegin(forall.getBody());
        Location l = loc;
        Value blk = forall.getInductionVar(0);
        Value off = affine::AffineApplyOp::create(
            lb, l, AffineMap::get(1, 0, lb.getAffineDimExpr(0) * q), blk);
        SmallVector<OpFoldResult> xOffs{off, lb.getIndexAttr(0)},
            xSizes{lb.getIndexAttr(q), lb.getIndexAttr(m)},
            ones{lb.getIndexAttr(1), lb.getIndexAttr(1)};
        Value xb = tensor::ExtractSliceOp::create(
            lb, l, RankedTensorType::get({q, m}, et), c.x, xOffs, xSizes,
            ones);
        IRMapping map;
        for (Value s : c.slices)
          map.map(s, rowSlice(lb, l, s, off, q));
        // z_b[r] = sum_k x_b[r, k] * w[k, 0]: rows outer, columns inner.
        for (MatmulOp z : c.zs) {
          auto gen = linalg::GenericOp::create(
              lb, l, TypeRange{RankedTensorType::get({q}, et)},
              ValueRange{xb, z.getRhs()}, zerosOf(lb, l, {q}, et),
              ArrayRef<AffineMap>{
                  AffineMap::get(2, 0, {d(0), d(1)}, ctx),
                  AffineMap::get(2, 0, {d(1), lb.getAffineConstantExpr(0)},
                                 ctx),
                  AffineMap::get(2, 0, {d(0)}, ctx)},
              ArrayRef<utils::IteratorType>{par, red},
              [&](OpBuilder &gb, Location gl, ValueRange a) {
                multiplyAdd(gb, gl, a);
              });
          map.map(z.getResult(), gen.getResult(0));
        }
        for (Operation *op : c.ops) {
          auto view = dyn_cast<ViewOp>(op);
          if (view && isRowReshape(view, rows)) {
            map.map(view.getResult(), map.lookup(view.getBase()));
            continue;
          }
          Operation *clone = lb.clone(*op, map);
          Type resEt = tensorOf(op->getResult(0)).getElementType();
          clone->getResult(0).setType(RankedTensorType::get({q}, resEt));
          if (view)
            clone->setAttr("strides", lb.getDenseI64ArrayAttr({0}));
        }
        // partial[i] = sum_r x_b[r, i] * v_b[r]: rows outer, so that the
        // inner loop runs over x's contiguous columns.
        auto partial = linalg::GenericOp::create(
            lb, l, TypeRange{RankedTensorType::get({m}, et)},
            ValueRange{xb, map.lookup(product.getRhs())},
            zerosOf(lb, l, {m}, et),
            ArrayRef<AffineMap>{AffineMap::get(2, 0, {d(0), d(1)}, ctx),
                                AffineMap::get(2, 0, {d(0)}, ctx),
                                AffineMap::get(2, 0, {d(1)}, ctx)},
            ArrayRef<utils::IteratorType>{red, par},
            [&](OpBuilder &gb, Location gl, ValueRange a) {
              multiplyAdd(gb, gl, a);
            });
        OpBuilder tb = OpBuilder::atBlockBegin(forall.getTerminator().getBody());
        auto bbArgs = forall.getRegionIterArgs();
        tensor::ParallelInsertSliceOp::create(
            tb, l, partial.getResult(0), bbArgs[0],
            ArrayRef<OpFoldResult>{blk, tb.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{tb.getIndexAttr(1), tb.getIndexAttr(m)},
            ArrayRef<OpFoldResult>{tb.getIndexAttr(1), tb.getIndexAttr(1)});
        for (auto [i, e] : llvm::enumerate(exports)) {
          RowBox box = rowBox(tb, off, q, tensorOf(e).getRank());
          tensor::ParallelInsertSliceOp::create(tb, l, map.lookup(e),
                                                bbArgs[i + 1], box.offsets,
                                                box.sizes, box.strides);
        }
  }
  // (b, i): total[i] += partials[b, i]; then the product's (m, 1) shape.
  auto total = linalg::GenericOp::create(
      b, loc, TypeRange{RankedTensorType::get({m}, et)},
      ValueRange{forall.getResult(0)}, zerosOf(b, loc, {m}, et),
      ArrayRef<AffineMap>{AffineMap::get(2, 0, {d(0), d(1)}, ctx),
                          AffineMap::get(2, 0, {d(1)}, ctx)},
      ArrayRef<utils::IteratorType>{red, par},
      [&](OpBuilder &gb, Location gl, ValueRange a) {
        linalg::YieldOp::create(gb, gl,
                                tolinalg::combineReassoc(
                                    gb, gl, ReduceKind::sum, a[1], a[0], false));
      });
  Value result = tensor::ExpandShapeOp::create(
      b, loc, tensorOf(product.getResult()), total.getResult(0),
      ArrayRef<ReassociationIndices>{{0, 1}});
  for (auto [i, e] : llvm::enumerate(exports))
    e.replaceUsesWithIf(forall.getResult(i + 1), [&](OpOperand &use) {
      return !inside.contains(use.getOwner()) &&
             use.getOwner() != forall.getOperation() &&
             !forall->isProperAncestor(use.getOwner());
    });
  product.getResult().replaceAllUsesWith(result);
  Operation *transposed = product.getLhs().getDefiningOp();
  product.erase();
  if (transposed->use_empty())
    transposed->erase();
  // The chain outside the loop is dead now (its readers read the exports).
  for (Operation *op : llvm::reverse(c.ops))
    if (op->use_empty())
      op->erase();
  for (MatmulOp z : c.zs)
    if (z->use_empty())
      z->erase();
}

/// Whether every reader of a chain value outside the chain comes after the
/// product (the loop replaces them there).
bool exportsFollow(MatmulOp product, const Chain &c) {
  DenseSet<Operation *> inside(c.ops.begin(), c.ops.end());
  for (MatmulOp z : c.zs)
    inside.insert(z);
  inside.insert(product);
  int64_t rows = tensorOf(c.x).getDimSize(0);
  auto follows = [&](Operation *op) {
    // A broadcast scalar's other readers keep their view of it.
    if (auto view = dyn_cast<ViewOp>(op); view && isScalarBroadcast(view, rows))
      return true;
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers()) {
        if (inside.contains(u))
          continue;
        Operation *top = product->getBlock()->findAncestorOpInBlock(*u);
        if (!top || !product->isBeforeInBlock(top))
          return false;
      }
    return true;
  };
  return llvm::all_of(c.ops, follows) &&
         llvm::all_of(c.zs, [&](MatmulOp z) { return follows(z); });
}

struct FuseRowProductsPass
    : public mlir::cpn::impl::FuseRowProductsBase<FuseRowProductsPass> {
  void runOnOperation() override {
    SmallVector<MatmulOp> products;
    getOperation()->walk([&](MatmulOp op) { products.push_back(op); });
    for (MatmulOp product : products) {
      Value x = transposedBase(product.getLhs());
      if (!x || !isStored(x))
        continue;
      RankedTensorType xTy = tensorOf(x);
      Type et = xTy.getElementType();
      if (!xTy.hasStaticShape() || !(et.isF32() || et.isF64()))
        continue;
      int64_t rows = xTy.getDimSize(0), m = xTy.getDimSize(1);
      RankedTensorType vTy = tensorOf(product.getRhs());
      if (m < 1 || m > 256 || !isRowVector(vTy, rows) || vTy.getRank() != 2 ||
          vTy.getElementType() != et)
        continue;
      int64_t q = blockRows(rows, m, et.getIntOrFloatBitWidth() / 8);
      if (!q)
        continue;
      Chain c;
      c.x = x;
      if (!collect(product.getRhs(), c, rows, product) ||
          !exportsFollow(product, c))
        continue;
      rewrite(product, c, q);
    }
  }
};

} // namespace
