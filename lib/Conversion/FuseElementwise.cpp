//===- FuseElementwise.cpp - elementwise fusion with recomputation --------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// The cost of recomputing one element of `op`: its body's ops, with
/// transcendental functions (exp, log, tanh, erf, pow, ...: tens of cycles
/// each, even vectorized) counting 16 and divisions and square roots 4.
/// Weighting keeps a chain of recurrences (an LSTM's cell state: c_t from
/// c_{t-1} through sigmoids and tanh) from being recomputed in every step
/// that reads it, while cheap producers (Black-Scholes' d1) still are.
int64_t bodySize(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return 0;
  int64_t cost = 0;
  for (Operation &inner : generic.getBody()->getOperations()) {
    StringRef dialect = inner.getName().getDialectNamespace();
    StringRef name = inner.getName().stripDialect();
    if (dialect == "math")
      cost += (name == "sqrt" || name == "absf" || name == "copysign" ||
               name == "fma" || name == "floor" || name == "ceil" ||
               name == "trunc" || name == "roundeven" || name == "absi")
                  ? 4
                  : 16;
    else if (name == "divf" || name == "divsi" || name == "divui" ||
             name == "remf")
      cost += 4;
    else
      cost += 1;
  }
  return cost;
}

void mergeLocation(Operation *into, Operation *from) {
  into->setLoc(
      FusedLoc::get(into->getContext(), {into->getLoc(), from->getLoc()}));
}

struct FuseElementwisePass
    : public cpn::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    int64_t maxProducer = maxProducerOps, maxFused = maxFusedOps;
    linalg::ControlFusionFn control = [=](OpOperand *use) {
      Operation *producer = use->get().getDefiningOp();
      if (!producer)
        return false;
      int64_t p = bodySize(producer);
      // A consumer that reads the producer through a broadcast (its map is
      // not a permutation) would recompute it for every broadcast element:
      // only small bodies are worth that, even for a single use (k-means'
      // unrolled argmin broadcast against 16 centroids was 16x the work).
      auto consumer = dyn_cast<linalg::LinalgOp>(use->getOwner());
      if (consumer && p > maxProducer &&
          !consumer.getMatchingIndexingMap(use).isPermutation())
        return false;
      bool fuse =
          producer->hasOneUse() || (p > 0 && p <= maxProducer &&
                                    p + bodySize(use->getOwner()) <= maxFused);
      if (fuse) // The fused op keeps the consumer's location: add the
                // producer's, so that a kernel names all its source lines.
        mergeLocation(use->getOwner(), producer);
      return fuse;
    };
    linalg::ControlFusionFn singleUse = [](OpOperand *use) {
      Operation *producer = use->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, singleUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
