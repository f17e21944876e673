//===- CPNToLinalg.cpp - cpn to linalg on tensors -------------------------===//
//
// Part of cpnumeric.
//
// Each cpn op becomes a linalg.generic on tensors (or tensor.insert_slice).
// Views are not materialized: a cpn.view becomes a copy whose input indexing
// map is the affine map from the view's index to the base's index, and
// upstream elementwise fusion folds that map into every consumer.
//
// This file is the pass and its patterns: one pattern per op (or family,
// UfuncOpInterface for the ufuncs) calling its family's lowering
// (Lowerings.h, one file per family), one erasing dead views and one
// replacing empty results (populateCPNToLinalgPatterns); the pass applies
// them to each op once, matmuls and library calls first.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "LowerUpdate.h"
#include "Lowerings.h"
#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Rewrite/PatternApplicator.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_CONVERTCPNTOLINALG
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::tolinalg;

namespace {

/// An op whose results all have no elements computes nothing: its results
/// become tensor.empty. Lowering it would build index arithmetic over
/// zero-length dimensions (row-major strides of 0, divisions by them) and
/// loops and library calls that never run. Every cpn op is pure (a write
/// through a view is an update whose result is the base), so nothing is lost.
/// Static shapes only: a dynamic dimension may be non-zero at run time.
/// Tried before the op's own lowering (a higher benefit).
struct ReplaceEmptyResults : RewritePattern {
  ReplaceEmptyResults(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rw) const override {
    if (!isa<CPNDialect>(op->getDialect()) || op->getNumResults() == 0)
      return failure();
    for (Type t : op->getResultTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape() || rt.getNumElements() != 0)
        return failure();
    }
    SmallVector<Value> empties;
    for (Type t : op->getResultTypes()) {
      auto rt = cast<RankedTensorType>(t);
      empties.push_back(tensor::EmptyOp::create(rw, op->getLoc(), rt.getShape(),
                                                rt.getElementType()));
    }
    rw.replaceOp(op, empties);
    return success();
  }
};

/// A view that only matmuls and library calls read is dead once they are
/// lowered (they read its base in place: lowerMatmul, lowerLibcall).
struct EraseDeadView : OpRewritePattern<ViewOp> {
  EraseDeadView(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/3) {}
  LogicalResult matchAndRewrite(ViewOp op, PatternRewriter &rw) const override {
    if (!op->use_empty())
      return failure();
    rw.eraseOp(op);
    return success();
  }
};

/// An op of type OpT lowered by its family's entry point (Lowerings.h).
template <typename OpT> struct Lower : OpRewritePattern<OpT> {
  using Fn = LogicalResult (*)(RewriterBase &, OpT);
  Lower(MLIRContext *ctx, Fn fn) : OpRewritePattern<OpT>(ctx), fn(fn) {}
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    return fn(rw, op);
  }
  Fn fn;
};

/// An elementwise op of type OpT (cast, select, copy) lowered to a generic.
template <typename OpT> struct LowerElementwise : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpT op, PatternRewriter &rw) const override {
    return lowerElementwise(rw, op);
  }
};

/// Every ufunc op (UfuncOpInterface) lowered to a generic.
struct LowerUfunc : OpInterfaceRewritePattern<UfuncOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(UfuncOpInterface op,
                                PatternRewriter &rw) const override {
    return lowerElementwise(rw, op);
  }
};

struct ConvertCPNToLinalgPass
    : public mlir::cpn::impl::ConvertCPNToLinalgBase<ConvertCPNToLinalgPass> {
  using ConvertCPNToLinalgBase::ConvertCPNToLinalgBase;
  void runOnOperation() override {
    RewritePatternSet set(&getContext());
    populateCPNToLinalgPatterns(set);
    FrozenRewritePatternSet frozen(std::move(set));
    PatternApplicator patterns(frozen);
    patterns.applyDefaultCostModel();
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      // cpn.fp_flag is already scalar (in bodies, kept until loops).
      if (isa<CPNDialect>(op->getDialect()) && !isa<FpFlagOp>(op) &&
          !(keepUpdates && isa<UpdateOp>(op)))
        ops.push_back(op);
    });
    // Matmuls and library calls first, while their operands are still
    // cpn.view ops: a transposed operand is then read in place (see
    // lowerMatmul), so is a library call's reshaped one (lowerLibcall).
    // Then the rest in program order, each op once (as walkAndApplyPatterns
    // visits ops, but in this order).
    std::stable_partition(ops.begin(), ops.end(), [](Operation *op) {
      return isa<MatmulOp, LibcallOp>(op);
    });
    PatternRewriter rw(&getContext());
    setLibmModule(getOperation());
    for (Operation *op : ops) {
      // The applicator sets the insertion point at the op.
      if (failed(patterns.matchAndRewrite(op, rw))) {
        op->emitOpError("has no lowering to linalg");
        return signalPassFailure();
      }
    }
  }
};

} // namespace

void mlir::cpn::populateCPNToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReplaceEmptyResults, EraseDeadView, LowerUfunc,
               LowerElementwise<CastOp>, LowerElementwise<SelectOp>,
               LowerElementwise<CopyOp>>(ctx);
  patterns.add<Lower<ViewOp>>(ctx, lowerView);
  patterns.add<Lower<UpdateOp>>(ctx, lowerUpdate);
  patterns.add<Lower<ReduceOp>>(ctx, lowerReduce);
  patterns.add<Lower<IotaOp>>(ctx, lowerIota);
  patterns.add<Lower<RemapOp>>(ctx, lowerRemap);
  patterns.add<Lower<MatmulOp>>(ctx, lowerMatmul);
  patterns.add<Lower<LibcallOp>>(ctx, lowerLibcall);
  patterns.add<Lower<RandomBitsOp>>(ctx, lowerRandomBits);
}
