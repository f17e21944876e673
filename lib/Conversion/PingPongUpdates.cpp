//===- PingPongUpdates.cpp - stencil updates into a fresh buffer ----------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// `u[1:-1, 1:-1] = f(u[:-2, 1:-1], u[2:, 1:-1], ...)` is
//
//   %f = linalg.generic ins(extract_slice %u [shifted]...) outs(tensor.empty)
//   %r = tensor.insert_slice %f into %u [interior]
//
// Updating %u in place is impossible (f reads neighbours the update
// overwrites), so one-shot bufferization computes f into a temporary and
// copies it into %u: two passes over the interior. This pass writes the update
// into a fresh tensor instead: the border of %u (the complement of the
// interior, up to two slabs per dimension) is copied into it, and f is
// written straight into its interior. A chain of such updates then alternates
// between two pooled buffers (double buffering), one pass per update.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_PINGPONGUPDATES
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// A box of a tensor: offsets and sizes per dimension (constants, or
/// run-time values in shape-generic kernels).
struct Box {
  SmallVector<OpFoldResult> offsets, sizes;
};

/// Index arithmetic on constants or values, folded where both are constants.
struct Index {
  OpBuilder &b;
  Location loc;
  Value value(OpFoldResult v) {
    if (auto c = getConstantIntValue(v))
      return arith::ConstantIndexOp::create(b, loc, *c);
    return cast<Value>(v);
  }
  OpFoldResult add(OpFoldResult x, OpFoldResult y) {
    auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx + *cy);
    if (cy && *cy == 0)
      return x;
    return arith::AddIOp::create(b, loc, value(x), value(y)).getResult();
  }
  OpFoldResult sub(OpFoldResult x, OpFoldResult y) {
    auto cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx - *cy);
    if (cy && *cy == 0)
      return x;
    if (!cx && !cy) // n - (n - 1): a constant the canonicalizer leaves
      if (FailureOr<int64_t> d = ValueBoundsConstraintSet::computeConstantDelta(
              cast<Value>(x), cast<Value>(y));
          succeeded(d))
        return b.getIndexAttr(*d);
    return arith::SubIOp::create(b, loc, value(x), value(y)).getResult();
  }
};

/// The complement of `inner` in a tensor of `shape`, as disjoint boxes: for
/// each dimension d, the part before and after `inner` along d, restricted to
/// `inner`'s extent in the dimensions before d and full in those after.
/// Slabs of constant size 0 are left out; run-time sizes may be 0.
SmallVector<Box> complement(Index &ix, ArrayRef<OpFoldResult> shape,
                            const Box &inner) {
  SmallVector<Box> out;
  size_t rank = shape.size();
  for (size_t d = 0; d < rank; ++d) {
    auto slab = [&](OpFoldResult lo, OpFoldResult size) {
      if (auto c = getConstantIntValue(size); c && *c <= 0)
        return;
      Box b;
      for (size_t k = 0; k < rank; ++k) {
        if (k < d) {
          b.offsets.push_back(inner.offsets[k]);
          b.sizes.push_back(inner.sizes[k]);
        } else if (k == d) {
          b.offsets.push_back(lo);
          b.sizes.push_back(size);
        } else {
          b.offsets.push_back(ix.b.getIndexAttr(0));
          b.sizes.push_back(shape[k]);
        }
      }
      out.push_back(std::move(b));
    };
    OpFoldResult end = ix.add(inner.offsets[d], inner.sizes[d]);
    slab(ix.b.getIndexAttr(0), inner.offsets[d]);
    slab(end, ix.sub(shape[d], end));
  }
  return out;
}

/// Where `v` lies in the tensor its chain of extract_slices (of unit strides,
/// keeping the rank) starts from: that tensor (`root`) and the offsets of
/// `v` in it. No slice: `v` itself, no offsets. One slice: its offsets,
/// constant or not. Several: their constant offsets summed; false if one is
/// not constant, or for another stride or rank.
bool placeInRoot(Value v, Value &root, SmallVector<OpFoldResult> &offsets) {
  root = v;
  offsets.clear();
  SmallVector<std::optional<int64_t>> sum;
  int depth = 0;
  while (auto slice = root.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (llvm::any_of(slice.getStaticStrides(),
                     [](int64_t s) { return s != 1; }) ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      return false;
    SmallVector<OpFoldResult> mixed = slice.getMixedOffsets();
    if (depth++ == 0) {
      offsets = mixed;
      for (OpFoldResult o : mixed)
        sum.push_back(getConstantIntValue(o));
    } else {
      for (auto [k, o] : llvm::enumerate(mixed)) {
        std::optional<int64_t> c = getConstantIntValue(o);
        if (!c || !sum[k])
          return false;
        *sum[k] += *c;
      }
    }
    root = slice.getSource();
  }
  if (depth > 1) {
    Builder b(v.getContext());
    for (auto [k, c] : llvm::enumerate(sum))
      offsets[k] = b.getIndexAttr(*c);
  }
  return true;
}

/// The producer of `insert`'s source, when the rewrite applies: a linalg op on
/// tensors with an empty destination that reads the tensor `insert` updates
/// (its destination, or what that is a slice of) somewhere other than the
/// updated region (cpn-localize's rank programs update a slice of rows of
/// their input and read its neighbours through slices of the whole).
linalg::GenericOp stencilProducer(tensor::InsertSliceOp insert) {
  auto producer = insert.getSource().getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer->getNumResults() != 1 ||
      !producer.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return {};
  MLIRContext *ctx = insert.getContext();
  auto same = [](ArrayRef<OpFoldResult> x, ArrayRef<OpFoldResult> y) {
    return x.size() == y.size() &&
           llvm::all_of(llvm::zip(x, y), [](auto p) {
             return isEqualConstantIntOrValue(std::get<0>(p), std::get<1>(p));
           });
  };
  // The updated region in the coordinates of the destination's root.
  Value root;
  SmallVector<OpFoldResult> destAt;
  if (!placeInRoot(insert.getDest(), root, destAt))
    return {};
  SmallVector<OpFoldResult> written = insert.getMixedOffsets();
  Builder b(ctx);
  for (auto [k, a] : llvm::enumerate(destAt)) {
    auto ca = getConstantIntValue(a), co = getConstantIntValue(written[k]);
    if (!ca || !co)
      return {};
    written[k] = b.getIndexAttr(*ca + *co);
  }
  bool readsNeighbours = false;
  for (Value in : producer.getDpsInputs()) {
    Value from;
    SmallVector<OpFoldResult> at;
    if (!in.getDefiningOp<tensor::ExtractSliceOp>())
      continue;
    if (!placeInRoot(in, from, at)) {
      // A slice of another stride or rank: of the root's?
      Value top = in;
      while (auto sl = top.getDefiningOp<tensor::ExtractSliceOp>())
        top = sl.getSource();
      readsNeighbours |= top == root;
      continue;
    }
    if (from != root)
      continue;
    auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
    if (!same(at, written) ||
        !same(slice.getMixedSizes(), insert.getMixedSizes()) ||
        !same(slice.getMixedStrides(), insert.getMixedStrides()))
      readsNeighbours = true;
  }
  if (!readsNeighbours)
    return {};
  // The fresh tensor is built before the producer (eliminate-empty-tensors
  // then writes the producer into it) from slices of the destination: a
  // destination made after the producer (a slice of the root that a rank's
  // program creates later) moves up when its operands allow, else no
  // rewrite.
  Operation *d = insert.getDest().getDefiningOp();
  if (d && d->getBlock() == producer->getBlock() &&
      producer->isBeforeInBlock(d)) {
    bool movable = isa<tensor::ExtractSliceOp>(d) &&
                   llvm::all_of(d->getOperands(), [&](Value v) {
                     Operation *o = v.getDefiningOp();
                     return !o || o->getBlock() != producer->getBlock() ||
                            o->isBeforeInBlock(producer);
                   });
    if (!movable)
      return {};
    d->moveBefore(producer);
  }
  return producer;
}

/// What the destination of `insert` is an update of (through a chain of
/// updates): in shape-generic kernels, the argument's buffer, whose sizes
/// the box's are computed from (value bounds compare the two).
Value rootOf(tensor::InsertSliceOp insert) {
  Value root = insert.getDest();
  while (auto prev = root.getDefiningOp<tensor::InsertSliceOp>())
    root = prev.getDest();
  if (auto arg = root.getDefiningOp<bufferization::ToTensorOp>())
    root = arg.getBuffer();
  return root;
}

/// Whether `insert` updates a box of unit stride covering at least
/// `minFraction` of a destination of the same rank. A dynamic dimension
/// counts as covered where the box's size along it is provably the
/// destination's minus at most 16 (`u[1:-1]` on any size: shape-generic
/// kernels); other dynamic boxes are not rewritten.
bool isLargeBoxUpdate(tensor::InsertSliceOp insert, double minFraction) {
  auto destTy = insert.getDestType();
  if (insert.getSourceType().getRank() != destTy.getRank() ||
      llvm::any_of(insert.getStaticStrides(), [](int64_t s) { return s != 1; }))
    return false;
  Value root = rootOf(insert);
  double covered = 1;
  for (auto [d, size] : llvm::enumerate(insert.getMixedSizes())) {
    std::optional<int64_t> n = getConstantIntValue(size);
    if (!destTy.isDynamicDim(d)) {
      if (!n)
        return false;
      covered *= destTy.getDimSize(d) ? static_cast<double>(*n) /
                                            destTy.getDimSize(d)
                                      : 1.0;
      continue;
    }
    if (n)
      return false;
    FailureOr<int64_t> delta = ValueBoundsConstraintSet::computeConstantDelta(
        root, cast<Value>(size), static_cast<int64_t>(d));
    if (failed(delta) || *delta < 0 || *delta > 16)
      return false;
  }
  return covered >= minFraction;
}

void rewrite(tensor::InsertSliceOp insert, linalg::GenericOp producer) {
  OpBuilder b(producer);
  Location loc = insert.getLoc();
  auto destTy = insert.getDestType();
  Value dest = insert.getDest();
  Index ix{b, loc};
  SmallVector<OpFoldResult> shape;
  SmallVector<Value> dynamicSizes;
  Value root = rootOf(insert);
  for (int64_t d = 0; d < destTy.getRank(); ++d) {
    if (!destTy.isDynamicDim(d)) {
      shape.push_back(b.getIndexAttr(destTy.getDimSize(d)));
      continue;
    }
    Value n = isa<MemRefType>(root.getType())
                  ? memref::DimOp::create(b, loc, root, d).getResult()
                  : tensor::DimOp::create(b, loc, root, d).getResult();
    shape.push_back(n);
    dynamicSizes.push_back(n);
  }
  Value fresh = tensor::EmptyOp::create(b, loc, destTy.getShape(),
                                        destTy.getElementType(), dynamicSizes);
  Box inner{insert.getMixedOffsets(), insert.getMixedSizes()};
  SmallVector<OpFoldResult> ones(destTy.getRank(), b.getIndexAttr(1));
  for (const Box &slab : complement(ix, shape, inner)) {
    Value part = tensor::ExtractSliceOp::create(b, loc, dest, slab.offsets,
                                                slab.sizes, ones);
    fresh = tensor::InsertSliceOp::create(b, loc, part, fresh, slab.offsets,
                                          slab.sizes, ones);
  }
  insert.getDestMutable().assign(fresh);
}

struct PingPongUpdatesPass
    : public cpn::impl::PingPongUpdatesBase<PingPongUpdatesPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::pair<tensor::InsertSliceOp, linalg::GenericOp>> work;
    getOperation().walk([&](tensor::InsertSliceOp insert) {
      if (!isLargeBoxUpdate(insert, minFraction))
        return;
      if (linalg::GenericOp producer = stencilProducer(insert))
        work.push_back({insert, producer});
    });
    for (auto [insert, producer] : work)
      rewrite(insert, producer);
  }
};
} // namespace
