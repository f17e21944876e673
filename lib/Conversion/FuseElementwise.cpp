//===- FuseElementwise.cpp - elementwise fusion with recomputation --------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "FusionCost.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// A math function that is a call (exp, log, tanh, erf, pow, ...), not an
/// instruction (sqrt, fabs, fma, rounding).
bool isTranscendental(Operation &op) {
  if (op.getName().getDialectNamespace() != "math")
    return false;
  StringRef name = op.getName().stripDialect();
  return !(name == "sqrt" || name == "absf" || name == "copysign" ||
           name == "fma" || name == "floor" || name == "ceil" ||
           name == "trunc" || name == "roundeven" || name == "absi");
}
} // namespace

/// The cost of recomputing one element of `op`: its body's ops, with
/// transcendental functions (exp, log, tanh, erf, pow, ...: tens of cycles
/// each, even vectorized) counting 16 and divisions and square roots 4.
/// Weighting keeps a chain of recurrences (an LSTM's cell state: c_t from
/// c_{t-1} through sigmoids and tanh) from being recomputed in every step
/// that reads it, while cheap producers (Black-Scholes' d1) still are.
int64_t mlir::cpn::fusionBodySize(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return 0;
  int64_t cost = 0;
  for (Operation &inner : generic.getBody()->getOperations()) {
    // np.errstate's markers are not counted: fusion decisions stay those of
    // unchecked code.
    if (isa<cpn::FpFlagOp>(inner))
      continue;
    StringRef name = inner.getName().stripDialect();
    if (isTranscendental(inner))
      cost += 16;
    else if (inner.getName().getDialectNamespace() == "math" ||
             name == "divf" || name == "divsi" || name == "divui" ||
             name == "remf")
      cost += 4;
    else
      cost += 1;
  }
  return cost;
}

namespace {

bool hasTranscendental(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && llvm::any_of(generic.getBody()->getOperations(),
                                 [](Operation &o) { return isTranscendental(o); });
}

/// Whether `consumer` reads `use` along its innermost loop of more than one
/// trip (the loop LLVM vectorizes). A producer read otherwise (`x.T @
/// f(z)`: f(z)[r] in the (block, r, i) loop nest, whose inner loop is over
/// x's columns i) is computed once per outer iteration when fused: one
/// element at a time, a scalar libm call each.
bool readsAlongInnermost(linalg::LinalgOp consumer, OpOperand *use) {
  SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  AffineMap map = consumer.getMatchingIndexingMap(use);
  for (int64_t d = static_cast<int64_t>(ranges.size()) - 1; d >= 0; --d)
    if (ranges[d] != 1)
      return map.isFunctionOfDim(d);
  return true;
}

/// The tensor a value reads its elements from: through slices and reshapes
/// to their source, so that two slices of one array count as one read.
Value readRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto s = dyn_cast<tensor::ExtractSliceOp>(def))
      v = s.getSource();
    else if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
      v = c.getSrc();
    else
      break;
  }
  return v;
}

/// Whether fusing `producer` into the consumer of `use` makes the consumer
/// read more bytes per element than the producer's result it reads now,
/// while the producer is computed into a buffer anyway (a user other than a
/// loop keeps it: a value the program still holds, a library call). Then
/// fusing saves nothing of the producer and reads more: `mask = s[1:] !=
/// s[:-1]` kept by the program and counted, recomputed in the count, read
/// 16 bytes of float64 an element instead of the mask's one.
bool fusingReadsMore(linalg::GenericOp producer, OpOperand *use) {
  if (llvm::all_of(producer->getUsers(),
                   [](Operation *u) { return isa<linalg::GenericOp>(u); }))
    return false;
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!consumer)
    return false;
  llvm::SmallPtrSet<Value, 8> read;
  for (Value in : consumer.getDpsInputs())
    read.insert(readRoot(in));
  int64_t extra = 0;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    auto ty = dyn_cast<RankedTensorType>(in->get().getType());
    if (!ty || !producer.getMatchingIndexingMap(in).isPermutation())
      continue; // a scalar or a broadcast: a few elements, cached
    if (read.insert(readRoot(in->get())).second)
      extra += cpn::elementBytes(ty.getElementType());
  }
  Type out = cast<RankedTensorType>(use->get().getType()).getElementType();
  return extra > cpn::elementBytes(out);
}

void mergeLocation(Operation *into, Operation *from) {
  into->setLoc(
      FusedLoc::get(into->getContext(), {into->getLoc(), from->getLoc()}));
}

/// A generic on tensors whose results nobody reads stays alive when its
/// body reports floating-point errors (cpn.fp_flag writes): a producer fused
/// into all its consumers, or a value the trace never read. Its consumers
/// check the elements they read; it is erased as soon as it is dead, as
/// unchecked code's would be, so that fusion sees the same use counts.
/// Whether `g` is a generic on tensors whose only effects are reports.
bool onlyReports(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics())
    return false;
  bool flags = false;
  WalkResult r = g.getRegion().walk([&](Operation *op) {
    flags |= isa<cpn::FpFlagOp>(op);
    return isa<cpn::FpFlagOp>(op) || isMemoryEffectFree(op)
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  return flags && !r.wasInterrupted();
}

struct EraseDeadCheckingGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rw) const override {
    if (!g->use_empty() || !onlyReports(g))
      return failure();
    rw.eraseOp(g);
    return success();
  }
};

/// CSE for checking generics, before fusion changes them: the same
/// computation recorded twice is computed once (cse merges pure generics;
/// the reports' effects stop it). In program order, so that consumers of
/// merged values become equal in turn.
void mergeEquivalentCheckingGenerics(Operation *root) {
  SmallVector<linalg::GenericOp> kept;
  SmallVector<linalg::GenericOp> all;
  root->walk([&](linalg::GenericOp g) { all.push_back(g); });
  for (linalg::GenericOp g : all) {
    if (!onlyReports(g))
      continue;
    linalg::GenericOp same;
    for (linalg::GenericOp k : kept) {
      // Values defined inside the two bodies correspond as they are met.
      DenseMap<Value, Value> inner;
      if (k->getBlock() == g->getBlock() &&
          OperationEquivalence::isEquivalentTo(
              g, k,
              [&](Value a, Value b) {
                return success(a == b || inner.lookup(a) == b);
              },
              [&](Value a, Value b) { inner[a] = b; },
              OperationEquivalence::IgnoreLocations)) {
        same = k;
        break;
      }
    }
    if (!same) {
      kept.push_back(g);
      continue;
    }
    g->replaceAllUsesWith(same->getResults());
    g->erase();
  }
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
      int64_t p = cpn::fusionBodySize(producer);
      // A consumer that reads the producer through a broadcast (its map is
      // not a permutation) would recompute it for every broadcast element:
      // only small bodies are worth that, even for a single use (k-means'
      // unrolled argmin broadcast against 16 centroids was 16x the work).
      auto consumer = dyn_cast<linalg::LinalgOp>(use->getOwner());
      if (consumer && p > maxProducer &&
          !consumer.getMatchingIndexingMap(use).isPermutation())
        return false;
      // Transcendental functions are worth a buffer (16 bytes an element
      // moved) when fusing would run them outside the vectorized loop:
      // logistic regression's x.T @ (sigmoid(x @ w) - y) ran exp once per
      // row, scalar (1M rows: 17.9 ms against 12.3 with the sigmoid in a
      // loop of its own).
      if (consumer && hasTranscendental(producer) &&
          !readsAlongInnermost(consumer, use))
        return false;
      bool fuse = producer->hasOneUse() ||
                  (p > 0 && p <= maxProducer &&
                   p + cpn::fusionBodySize(use->getOwner()) <= maxFused &&
                   !fusingReadsMore(cast<linalg::GenericOp>(producer), use));
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
    mergeEquivalentCheckingGenerics(getOperation());
    patterns.add<EraseDeadCheckingGeneric>(ctx, /*benefit=*/10);
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
