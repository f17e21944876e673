//===- ScheduleReductions.cpp - how each reduction runs -------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// The scheduling choices of reductions, made on cpn ops before
// convert-cpn-to-linalg, which then only carries them out:
//
// - a float16/float32 sum of more than a few elements per result becomes a
//   float64 sum between two casts (accumulated in float64, rounded once);
// - a reduction over every axis of a rank >= 2 array becomes two: over all
//   axes but the first (parallel over rows), then over the rows' partials;
// - a reduction over the outer axis only (`x.sum(axis=0)`, a whole 1-D
//   array), a tall transposed product `x.T @ v` and a long inner product
//   `a @ b` get `cpn.row_blocks`: how many blocks of rows reduce into
//   partials of their own, in parallel, before the partials add up.
//
// The numbers (block counts, sizes, the 2 MB and 32 MB bounds) were measured
// on 2-core machines; each choice says why next to it.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/OpFacts.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_SCHEDULEREDUCTIONS
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {

/// A result row of at least this many bytes is wide: its partials are few.
constexpr int64_t kWideRowBytes = 32 << 10;

/// Row blocks of a sum over rows whose result row is wide (kWideRowBytes):
/// 4, enough for 2-4 cores, whose partials (4 rows) stay in a core's cache
/// and take no memory of note. Each block streams a long contiguous run,
/// so few blocks lose nothing: measured on a 2-core Zen 5, x.sum(axis=0)
/// of float64, 16 blocks against 4: 8000 x 8000 1.56x -> 1.62x NumPy,
/// 1000 x 16000 1.53x -> 1.84x, 4096 x 4096 1.73x -> 2.05x, and the
/// 8000-wide sum's 16 partials (1 MB, which NumPy's sum does not take)
/// gone. More cores share a wide sum 4 ways.
constexpr int64_t kWideRowBlocks = 4;

/// Row blocks for a sum over `rows` rows into `outs` results: 8 to 16 blocks
/// dividing the rows (kWideRowBlocks down to 2 for a wide result row), 64+
/// rows each, partials of at most 32 MB; 0 if none.
int64_t rowBlocks(int64_t rows, int64_t outs, int64_t bytes) {
  if (outs * bytes >= kWideRowBytes) {
    for (int64_t blocks = kWideRowBlocks; blocks >= 2 && rows >= 512; --blocks)
      if (rows % blocks == 0)
        return blocks;
    return 0;
  }
  for (int64_t blocks = 16; blocks >= 8 && rows >= 512; --blocks)
    if (rows % blocks == 0 && rows / blocks >= 64 &&
        blocks * outs * bytes <= (32 << 20))
      return blocks;
  return 0;
}

bool isArgReduce(ReduceOp op) {
  return op.getKind() == ReduceKind::argmin ||
         op.getKind() == ReduceKind::argmax;
}

/// A float or complex product: reduced in NumPy's order, never split into
/// partial products (see combineReassoc).
bool isOrderedProduct(ReduceOp op) {
  return op.getKind() == ReduceKind::prod &&
         isa<FloatType, ComplexType>(tensorOf(op.getResult()).getElementType());
}

/// Whether `x` is stored data once lowered: an argument, a buffer's tensor,
/// a library call's result (not one updated in place, which stays a tensor
/// op) or a view that lowers to a slice of one of these or to its base.
/// Views that lower to a loop (transposed, reversed, broadcast, gathered)
/// are computed.
bool isStored(Value x) {
  Operation *def = x.getDefiningOp();
  if (!def || isa<bufferization::ToTensorOp, tensor::ExtractSliceOp>(def))
    return true;
  if (auto call = dyn_cast<LibcallOp>(def))
    return !call.getInPlace();
  auto view = dyn_cast<ViewOp>(def);
  if (!view)
    return false;
  switch (viewForm(view)) {
  case ViewForm::Slice:
    return true;
  case ViewForm::Base:
    return isStored(view.getBase());
  case ViewForm::Loop:
  case ViewForm::Gather:
    return false;
  }
  return false;
}

/// How many row blocks a reduction over the outer dimension only
/// (`x.sum(axis=0)`) is cut into, or 0 to keep it whole.
int64_t outerBlocks(ReduceOp op) {
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  if (isArgReduce(op) || !inTy.hasStaticShape() ||
      op.getAxes() != ArrayRef<int64_t>{0} || isOrderedProduct(op))
    return 0;
  if (inTy.getRank() == 1) {
    // A whole 1-D array (`x.sum()`, a mask's count) of 2 MB or more: as
    // many blocks as divide it, 4 to 64 of 4096+ elements each, so that
    // every core reduces a part (one loop ran on one thread). Measured on 2
    // cores, one loop against blocks: count_nonzero of 10^7 bools 647 vs
    // 322 us, max of 10^7 float64 5.6 vs 3.3 ms; below ~2 MB starting the
    // threads cost more (sum of 10^5 float64 20 vs 50 us). No slice for a
    // remainder: it would keep x's producer from fusing into the loop.
    int64_t n = inTy.getDimSize(0);
    if (n * elementBytes(inTy.getElementType()) < (2 << 20))
      return 0;
    for (int64_t blocks = 64; blocks >= 4; --blocks)
      if (n % blocks == 0 && n / blocks >= 4096)
        return blocks;
    return 0;
  }
  int64_t rows = inTy.getDimSize(0);
  int64_t bytes = elementBytes(resTy.getElementType());
  if (!rows)
    return 0;
  int64_t cols = inTy.getNumElements() / rows;
  if (int64_t blocks = rowBlocks(rows, cols, bytes))
    return blocks;
  // No count divides the rows: 16 blocks (kWideRowBlocks for a wide row),
  // and the last rows % blocks rows start the result, when x is stored data
  // (an argument or a slice or view of one). The slices would keep a
  // producer from fusing into the sum: computing it into a buffer costs
  // more (3x measured) than blocks save.
  int64_t blocks = cols * bytes >= kWideRowBytes ? kWideRowBlocks : 16;
  return isStored(op.getX()) && rows >= 1024 &&
                 blocks * cols * bytes <= (32 << 20)
             ? blocks
             : 0;
}

void scheduleReduce(OpBuilder &b, ReduceOp op) {
  RankedTensorType inTy = tensorOf(op.getX());
  RankedTensorType resTy = tensorOf(op.getResult());
  if (resTy.hasStaticShape() && resTy.getNumElements() == 0)
    return; // convert-cpn-to-linalg gives a tensor.empty
  b.setInsertionPoint(op);
  Type resElem = resTy.getElementType();
  // A float16/float32 sum accumulates in float64 and rounds once. NumPy's
  // pairwise summation keeps a long sum within a few roundings of the exact
  // one; a vectorized loop's few accumulators do not (4M float32 values:
  // 1.6e-6 relative against NumPy's 1.5e-8). The widening cast fuses into
  // the reduction's loop, so the same bytes are read. A few elements per
  // result (a stack of 8 x 8 products' contractions) are summed in their
  // own type, in order, as NumPy's pairwise sum does below 8 elements and
  // its sgemm does: widening them cost the stacked float32 product a third
  // of its time.
  if (op.getKind() == ReduceKind::sum &&
      isa<Float16Type, Float32Type>(resElem) &&
      inTy.getElementType() == resElem && !isSmallReduce(op)) {
    Type f64 = b.getF64Type();
    auto wide = CastOp::create(b, op.getLoc(), inTy.clone(f64), op.getX());
    ReduceOp sum =
        op.cloneOn(b, wide.getResult(), resTy.clone(f64), op.getAxes());
    auto narrow = CastOp::create(b, op.getLoc(), resTy, sum.getResult());
    op.getResult().replaceAllUsesWith(narrow.getResult());
    op.erase();
    return scheduleReduce(b, sum);
  }
  if (isSmallReduce(op))
    return; // an elementwise loop over the few elements of each result
  // Every axis of a rank >= 2 array: all but the first (parallel over rows,
  // vectorized along them), then the rows' partial results. One nest of
  // reduction loops would run on one thread. Both keep the op's attributes:
  // an unsigned input has an unsigned result dtype (NumPy's), so
  // `is_unsigned` holds for the partials too.
  int64_t rank = inTy.getRank();
  if (!isArgReduce(op) && rank >= 2 &&
      static_cast<int64_t>(op.getAxes().size()) == rank &&
      inTy.getDimSize(0) > 1 && !isOrderedProduct(op)) {
    SmallVector<int64_t> rest;
    for (int64_t i = 1; i < rank; ++i)
      rest.push_back(i);
    ReduceOp partial =
        op.cloneOn(b, op.getX(),
                   RankedTensorType::get({inTy.getDimSize(0)}, resElem), rest);
    ReduceOp total = op.cloneOn(b, partial.getResult(), resTy, {0});
    op.getResult().replaceAllUsesWith(total.getResult());
    op.erase();
    scheduleReduce(b, partial);
    return scheduleReduce(b, total);
  }
  if (int64_t blocks = outerBlocks(op))
    op->setAttr(kRowBlocksAttr, b.getI64IntegerAttr(blocks));
}

/// `x.T @ v` for a tall x (rows >= 512, at most 256 columns) and a vector v
/// is a sum over x's rows in row blocks, not a BLAS call: BLAS's transposed
/// gemv on a tall, narrow matrix reads it at a fraction of the bandwidth (2x
/// slower measured on 1M x 32). With several columns in v BLAS's gemm is
/// faster (k-means' one-hot.T @ points, 16 x 3 outputs: 21 ms against 33
/// ms). `a @ b` of two vectors of 2^15 elements or more is summed in row
/// blocks too.
void scheduleMatmul(OpBuilder &b, MatmulOp op) {
  RankedTensorType resTy = tensorOf(op.getResult());
  Type et = resTy.getElementType();
  if (et.isInteger(1) || !resTy.hasStaticShape())
    return;
  int64_t blocks = 0;
  Value base = transposedBase(op.getLhs());
  RankedTensorType lhsTy = tensorOf(op.getLhs());
  if (base && !transposedBase(op.getRhs()) &&
      tensorOf(op.getRhs()).hasStaticShape()) {
    int64_t rows = tensorOf(base).getDimSize(0), m = resTy.getDimSize(0),
            n = resTy.getDimSize(1);
    blocks = (m <= 256 && n == 1) ? rowBlocks(rows, m, elementBytes(et)) : 0;
  } else if (lhsTy.hasStaticShape() && lhsTy.getDimSize(0) == 1 &&
             resTy.getShape() == ArrayRef<int64_t>{1, 1}) {
    int64_t k = lhsTy.getDimSize(1);
    blocks = k >= (1 << 15) ? rowBlocks(k, 1, elementBytes(et)) : 0;
  }
  if (blocks)
    op->setAttr(kRowBlocksAttr, b.getI64IntegerAttr(blocks));
}

struct ScheduleReductionsPass
    : public mlir::cpn::impl::ScheduleReductionsBase<ScheduleReductionsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<ReduceOp, MatmulOp>(op))
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      if (auto red = dyn_cast<ReduceOp>(op))
        scheduleReduce(b, red);
      else
        scheduleMatmul(b, cast<MatmulOp>(op));
    }
  }
};

} // namespace
