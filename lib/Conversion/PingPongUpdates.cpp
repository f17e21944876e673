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

namespace mlir::cpn {
#define GEN_PASS_DEF_PINGPONGUPDATES
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// A box of a static shape: offsets and sizes per dimension.
struct Box {
  SmallVector<int64_t> offsets, sizes;
};

/// The complement of `inner` in a tensor of `shape`, as disjoint boxes: for
/// each dimension d, the part before and after `inner` along d, restricted to
/// `inner`'s extent in the dimensions before d and full in those after.
SmallVector<Box> complement(ArrayRef<int64_t> shape, const Box &inner) {
  SmallVector<Box> out;
  size_t rank = shape.size();
  for (size_t d = 0; d < rank; ++d) {
    auto slab = [&](int64_t lo, int64_t hi) {
      if (hi <= lo)
        return;
      Box b;
      for (size_t k = 0; k < rank; ++k) {
        if (k < d) {
          b.offsets.push_back(inner.offsets[k]);
          b.sizes.push_back(inner.sizes[k]);
        } else if (k == d) {
          b.offsets.push_back(lo);
          b.sizes.push_back(hi - lo);
        } else {
          b.offsets.push_back(0);
          b.sizes.push_back(shape[k]);
        }
      }
      out.push_back(std::move(b));
    };
    slab(0, inner.offsets[d]);
    slab(inner.offsets[d] + inner.sizes[d], shape[d]);
  }
  return out;
}

/// The producer of `insert`'s source, when the rewrite applies: a linalg op on
/// tensors with an empty destination that reads `insert`'s destination
/// through an extract_slice other than the updated region.
linalg::GenericOp stencilProducer(tensor::InsertSliceOp insert) {
  auto producer = insert.getSource().getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer->getNumResults() != 1 ||
      !producer.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return {};
  Value dest = insert.getDest();
  bool readsNeighbours = false;
  for (Value in : producer.getDpsInputs()) {
    auto slice = in.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSource() != dest)
      continue;
    if (slice.getStaticOffsets() != insert.getStaticOffsets() ||
        slice.getStaticSizes() != insert.getStaticSizes() ||
        slice.getStaticStrides() != insert.getStaticStrides())
      readsNeighbours = true;
  }
  return readsNeighbours ? producer : linalg::GenericOp();
}

/// Whether `insert` updates a box of unit stride covering at least
/// `minFraction` of a statically shaped destination of the same rank.
bool isLargeBoxUpdate(tensor::InsertSliceOp insert, double minFraction) {
  auto destTy = insert.getDestType();
  if (!destTy.hasStaticShape() ||
      insert.getSourceType().getRank() != destTy.getRank() ||
      ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
      ShapedType::isDynamicShape(insert.getStaticSizes()) ||
      llvm::any_of(insert.getStaticStrides(), [](int64_t s) { return s != 1; }))
    return false;
  return static_cast<double>(
             ShapedType::getNumElements(insert.getStaticSizes())) >=
         minFraction * static_cast<double>(destTy.getNumElements());
}

void rewrite(tensor::InsertSliceOp insert, linalg::GenericOp producer) {
  OpBuilder b(producer);
  Location loc = insert.getLoc();
  auto destTy = insert.getDestType();
  Value dest = insert.getDest();
  Value fresh = tensor::EmptyOp::create(b, loc, destTy.getShape(),
                                        destTy.getElementType());
  Box inner{SmallVector<int64_t>(insert.getStaticOffsets()),
            SmallVector<int64_t>(insert.getStaticSizes())};
  SmallVector<int64_t> ones(destTy.getRank(), 1);
  for (const Box &slab : complement(destTy.getShape(), inner)) {
    SmallVector<OpFoldResult> offs =
        getAsIndexOpFoldResult(b.getContext(), slab.offsets);
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(b.getContext(), slab.sizes);
    SmallVector<OpFoldResult> strides =
        getAsIndexOpFoldResult(b.getContext(), ones);
    Value part =
        tensor::ExtractSliceOp::create(b, loc, dest, offs, sizes, strides);
    fresh = tensor::InsertSliceOp::create(b, loc, part, fresh, offs, sizes,
                                          strides);
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
