//===- SplitJoins.cpp - elementwise ops of a concatenation, piece by piece ===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// np.concatenate, np.roll, np.stack and np.append build their result as a
// chain of cpn.update ops that tile a fresh base along one axis (a join,
// Joins.h). An elementwise op that reads a join cannot fuse with the writes
// that build it: the join is materialized (a fill of the base, a copy per
// piece) and read again. Periodic stencils do this once per step:
//
//   u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
//
// Here an elementwise op with a join operand becomes one op per piece (the
// union of the split points of its join operands on one axis), each reading
// the pieces themselves and slices of its other operands, and its result a
// join of those: ops that read it split in turn, so a chain of ufuncs over
// rolls is one fused loop per piece, written into its slice of the result.
// convert-cpn-updates starts a join's chain from tensor.empty (no fill).
//
// A reduction over the join's axis whose partial results combine exactly
// (a sum or product of integers, min/max of integers, any, all) becomes one
// reduction per piece and the combination of their results: the count of
// a mask made with np.concatenate (`a[np.concatenate(([True], s[1:] !=
// s[:-1]))]`, np.unique's) no longer materializes the join to read it once.
// Float sums keep their one reduction (splitting changes their rounding).
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/Transforms/Joins.h"

#include "cpn/Dialect/CPN/OpFacts.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

namespace mlir::cpn {
#define GEN_PASS_DEF_SPLITJOINS
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {
/// Where an update writes along the one axis its value does not cover whole:
/// {axis, start}; nullopt when it is not such a slab in the base's order.
/// An update of the whole base gives axis -1.
std::optional<std::pair<int64_t, int64_t>> slabOf(UpdateOp u) {
  auto baseTy = dyn_cast<RankedTensorType>(u.getBase().getType());
  auto valTy = dyn_cast<RankedTensorType>(u.getValue().getType());
  if (u.getDynOffset() || !baseTy || !valTy || !baseTy.hasStaticShape() ||
      valTy.getRank() != baseTy.getRank())
    return std::nullopt;
  ArrayRef<int64_t> base = baseTy.getShape(), val = valTy.getShape();
  auto box = decomposeView(base, u.getOffset(), u.getStrides(), val);
  if (!box)
    return std::nullopt;
  int64_t axis = -1;
  for (int64_t i = 0, k = base.size(); i < k; ++i) {
    // A dimension of more than one element walks its own base dimension,
    // forward, one by one.
    if (val[i] > 1 && (box->owner[i] != i || box->coeffs[i] != 1))
      return std::nullopt;
    if (val[i] == base[i])
      continue;
    if (axis >= 0)
      return std::nullopt; // partial along two axes
    axis = i;
  }
  for (int64_t i = 0, k = base.size(); i < k; ++i)
    if (i != axis && box->offsets[i] != 0)
      return std::nullopt;
  return std::make_pair(axis, axis < 0 ? 0 : box->offsets[axis]);
}

/// A slice [lo, hi) along `axis` of `x` (shape `shape`): a view of x's own
/// base where x is a view (offsets add, strides stay), else a view of x.
Value sliceOf(OpBuilder &b, Location loc, Value x, int64_t axis, int64_t lo,
              int64_t hi) {
  auto ty = cast<RankedTensorType>(x.getType());
  if (lo == 0 && hi == ty.getDimSize(axis))
    return x;
  SmallVector<int64_t> shape(ty.getShape());
  shape[axis] = hi - lo;
  auto sliceTy = RankedTensorType::get(shape, ty.getElementType());
  if (auto v = x.getDefiningOp<ViewOp>(); v && !v.getDynOffset()) {
    ArrayRef<int64_t> strides = v.getStrides();
    return ViewOp::create(b, loc, sliceTy, v.getBase(), Value(),
                          v.getOffset() + lo * strides[axis], strides);
  }
  SmallVector<int64_t> strides = rowMajorStrides(ty.getShape());
  return ViewOp::create(b, loc, sliceTy, x, Value(), lo * strides[axis],
                        strides);
}

/// Whether `op` is an elementwise cpn op with every operand of its result's
/// static shape.
bool isElementwise(Operation *op) {
  if (!op->hasTrait<OpTrait::CPNSameShape>() || op->getNumResults() != 1 ||
      op->getNumRegions() != 0)
    return false;
  auto ty = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!ty || !ty.hasStaticShape() || ty.getRank() == 0)
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type t) {
    auto o = dyn_cast<RankedTensorType>(t);
    return o && o.getShape() == ty.getShape();
  });
}

/// Whether partial results of `op` over pieces of its operand combine into
/// exactly its result (integer arithmetic wraps alike in any order).
bool combinesExactly(ReduceOp op) {
  if (op->hasAttr(kRowBlocksAttr))
    return false; // scheduled as one reduction (cpn-schedule-reductions)
  Type in = cast<RankedTensorType>(op.getX().getType()).getElementType();
  Type out = cast<RankedTensorType>(op.getResult().getType()).getElementType();
  switch (op.getKind()) {
  case ReduceKind::any:
  case ReduceKind::all:
    return true;
  case ReduceKind::sum:
  case ReduceKind::prod:
  case ReduceKind::min:
  case ReduceKind::max:
    return isa<IntegerType>(in) && isa<IntegerType>(out);
  default:
    return false;
  }
}

/// a `kind` b for partial results of a reduction of kind `kind`.
Value combine(OpBuilder &b, Location loc, ReduceOp op, Value x, Value y) {
  Type t = x.getType();
  bool u = op.getIsUnsigned();
  switch (op.getKind()) {
  case ReduceKind::sum:
    return AddOp::create(b, loc, t, x, y, u);
  case ReduceKind::prod:
    return MultiplyOp::create(b, loc, t, x, y, u);
  case ReduceKind::min:
    return MinimumOp::create(b, loc, t, x, y, u);
  case ReduceKind::max:
    return MaximumOp::create(b, loc, t, x, y, u);
  case ReduceKind::any:
    return LogicalOrOp::create(b, loc, t, x, y, u);
  default:
    return LogicalAndOp::create(b, loc, t, x, y, u);
  }
}

struct SplitJoinsPass : public mlir::cpn::impl::SplitJoinsBase<SplitJoinsPass> {
  using SplitJoinsBase::SplitJoinsBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isElementwise(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      split(op);
    // After the elementwise ops: a reduction of a ufunc of a join reads the
    // join of the ufunc's pieces.
    SmallVector<ReduceOp> reductions;
    getOperation()->walk([&](ReduceOp op) {
      if (combinesExactly(op))
        reductions.push_back(op);
    });
    for (ReduceOp op : reductions)
      splitReduce(op);
  }

  /// Replaces `op`, a reduction over the axis of its operand's join, by one
  /// reduction per piece and the combination of their results.
  void splitReduce(ReduceOp op) {
    std::optional<Join> j = matchJoin(op.getX(), maxPieces);
    if (!j || !llvm::is_contained(op.getAxes(), j->axis))
      return;
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value total;
    for (Value piece : j->pieces) {
      Value part = op.cloneOn(b, piece, op.getResult().getType(), op.getAxes());
      total = total ? combine(b, loc, op, total, part) : part;
    }
    op.getResult().replaceAllUsesWith(total);
    op.erase();
  }

  /// Replaces `op` by one op per piece of its join operands and a join of
  /// their results.
  void split(Operation *op) {
    // The joins among the operands, on the axis of the first.
    SmallVector<std::optional<Join>> joins;
    std::optional<int64_t> axis;
    SmallVector<int64_t> bounds;
    for (Value x : op->getOperands()) {
      std::optional<Join> j = matchJoin(x, maxPieces);
      if (j && (!axis || *axis == j->axis)) {
        axis = j->axis;
        bounds.append(j->bounds);
      } else {
        j.reset();
      }
      joins.push_back(std::move(j));
    }
    if (!axis)
      return;
    llvm::sort(bounds);
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    if (int64_t(bounds.size()) - 1 > maxPieces)
      return;
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto ty = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> pieces;
    for (size_t p = 0; p + 1 < bounds.size(); ++p) {
      int64_t lo = bounds[p], hi = bounds[p + 1];
      SmallVector<Value> operands;
      for (auto [x, j] : llvm::zip(op->getOperands(), joins)) {
        if (!j) {
          operands.push_back(sliceOf(b, loc, x, *axis, lo, hi));
          continue;
        }
        // The join's piece that holds [lo, hi), sliced.
        size_t i = std::upper_bound(j->bounds.begin(), j->bounds.end(), lo) -
                   j->bounds.begin() - 1;
        operands.push_back(sliceOf(b, loc, j->pieces[i], *axis,
                                   lo - j->bounds[i], hi - j->bounds[i]));
      }
      SmallVector<int64_t> shape(ty.getShape());
      shape[*axis] = hi - lo;
      OperationState state(loc, op->getName(), operands,
                           {RankedTensorType::get(shape, ty.getElementType())},
                           op->getAttrs());
      pieces.push_back(b.create(state)->getResult(0));
    }
    // The join of the pieces, on a base that none of its elements survive
    // into (the first piece broadcast; convert-cpn-updates makes it empty).
    SmallVector<int64_t> zeros(ty.getRank(), 0);
    Value base = CopyOp::create(
        b, loc, ViewOp::create(b, loc, ty, pieces[0], Value(), 0, zeros));
    SmallVector<int64_t> strides = rowMajorStrides(ty.getShape());
    for (size_t p = 0; p < pieces.size(); ++p)
      base = UpdateOp::create(b, loc, ty, base, pieces[p], Value(),
                              bounds[p] * strides[*axis], strides);
    op->getResult(0).replaceAllUsesWith(base);
    op->erase();
  }
};
} // namespace

std::optional<Join> mlir::cpn::matchJoin(Value v, int64_t maxPieces) {
  struct Slab {
    int64_t start, size;
    Value value;
  };
  SmallVector<Slab> slabs;
  Join j;
  int64_t axis = -1;
  UpdateOp u = v.getDefiningOp<UpdateOp>();
  for (; u; u = u.getBase().getDefiningOp<UpdateOp>()) {
    // A result before the last that something else reads shows the base
    // through its gaps: the chain is not a join (and CSE merges equal
    // prefixes of chains, `zeros(8); y[:3] = a` with np.append(a, b)).
    if (u.getResult() != v && !u.getResult().hasOneUse())
      return std::nullopt;
    auto s = slabOf(u);
    if (!s || s->first < 0 || (axis >= 0 && s->first != axis) ||
        int64_t(slabs.size()) >= maxPieces)
      return std::nullopt;
    axis = s->first;
    int64_t size =
        cast<RankedTensorType>(u.getValue().getType()).getDimSize(axis);
    if (size > 0) // an empty slab writes nothing
      slabs.push_back({s->second, size, u.getValue()});
    j.first = u;
  }
  if (slabs.size() < 2)
    return std::nullopt; // one slab leaves part of the base, or is all of it
  llvm::sort(slabs,
             [](const Slab &a, const Slab &b) { return a.start < b.start; });
  int64_t at = 0;
  j.axis = axis;
  for (const Slab &s : slabs) {
    if (s.start != at) // a gap (the base shows through) or an overlap
      return std::nullopt;
    j.bounds.push_back(at);
    j.pieces.push_back(s.value);
    at += s.size;
  }
  if (at != cast<RankedTensorType>(v.getType()).getDimSize(axis))
    return std::nullopt;
  j.bounds.push_back(at);
  return j;
}
