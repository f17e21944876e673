//===- FuseHorizontal.cpp - one loop for independent loops over one domain ===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// Two elementwise loops over the same iteration space that read the same
// arrays and do not depend on each other (Black-Scholes' call and put, both
// from d1 and d2; d1 and d2, both from S, X and T) are two passes over those
// arrays. This pass merges such a pair of `linalg.generic`s into one with the
// results of both; `cpn-fuse-elementwise` run after it then finds a producer
// that had two consumers with one, and fuses it: the whole of Black-Scholes
// becomes one loop that reads its three inputs once and writes its two
// outputs.
//
//===----------------------------------------------------------------------===//

#include "FusionCost.h"
#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_FUSEHORIZONTAL
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// Whether `g` is an elementwise loop nest over a static domain whose outputs
/// are fresh (`tensor.empty`, identity maps) and are not written into another
/// tensor (an update's value: `cpn-ping-pong-updates` wants it on its own).
bool isCandidate(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops() || g.getNumLoops() == 0)
    return false;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  if (ShapedType::isDynamicShape(ranges))
    return false;
  for (OpOperand &init : g.getDpsInitsMutable())
    if (!init.get().getDefiningOp<tensor::EmptyOp>() ||
        !g.getMatchingIndexingMap(&init).isIdentity())
      return false;
  for (Value r : g->getResults())
    for (Operation *user : r.getUsers())
      if (isa<tensor::InsertSliceOp>(user))
        return false;
  return true;
}

/// Whether `b` (after `a` in the same block) can join `a`: the same domain,
/// an input in common, and every input of `b` already defined at `a`.
bool canJoin(linalg::GenericOp a, linalg::GenericOp b, int64_t maxOps) {
  if (a.getStaticLoopRanges() != b.getStaticLoopRanges() ||
      cpn::fusionBodySize(a) + cpn::fusionBodySize(b) > maxOps)
    return false;
  // b moves up to a: its inputs, and the values its body captures from
  // outside (scalars), must already be defined there.
  auto definedAtA = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || def->getBlock() != a->getBlock() || def->isBeforeInBlock(a);
  };
  if (!llvm::all_of(b.getDpsInputs(), definedAtA))
    return false;
  bool capturesLater = false;
  b.getBody()->walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!b->isAncestor(v.getParentRegion()->getParentOp()) && !definedAtA(v))
        capturesLater = true;
  });
  if (capturesLater)
    return false;
  return llvm::any_of(b.getDpsInputs(), [&](Value in) {
    return llvm::is_contained(a.getDpsInputs(), in);
  });
}

/// One generic computing both `a`'s and `b`'s results, at `a`'s place.
linalg::GenericOp join(linalg::GenericOp a, linalg::GenericOp b) {
  OpBuilder builder(a);
  Location loc = FusedLoc::get(a->getContext(), {a->getLoc(), b->getLoc()});
  SmallVector<Value> ins(a.getDpsInputs()), outs(a.getDpsInits());
  llvm::append_range(ins, b.getDpsInputs());
  for (Value init : b.getDpsInits())
    outs.push_back(builder.clone(*init.getDefiningOp())->getResult(0));
  SmallVector<AffineMap> maps;
  for (OpOperand *in : a.getDpsInputOperands())
    maps.push_back(a.getMatchingIndexingMap(in));
  for (OpOperand *in : b.getDpsInputOperands())
    maps.push_back(b.getMatchingIndexingMap(in));
  for (OpOperand &out : a.getDpsInitsMutable())
    maps.push_back(a.getMatchingIndexingMap(&out));
  for (OpOperand &out : b.getDpsInitsMutable())
    maps.push_back(b.getMatchingIndexingMap(&out));
  SmallVector<Type> types(a->getResultTypes());
  llvm::append_range(types, b->getResultTypes());
  auto joined = linalg::GenericOp::create(builder, loc, types, ins, outs, maps,
                                          a.getIteratorTypesArray());
  // The body: a's block arguments, then b's, in the joined operand order.
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value v : llvm::concat<Value>(ins, outs)) {
    argTypes.push_back(getElementTypeOrSelf(v.getType()));
    argLocs.push_back(loc);
  }
  Block *body = builder.createBlock(&joined.getRegion(), {}, argTypes, argLocs);
  IRMapping map;
  int64_t nIns = ins.size(), aIns = a.getNumDpsInputs(),
          aOuts = a.getNumDpsInits();
  for (auto [i, arg] : llvm::enumerate(a.getBody()->getArguments()))
    map.map(arg, body->getArgument(i < size_t(aIns) ? i : nIns + i - aIns));
  for (auto [i, arg] : llvm::enumerate(b.getBody()->getArguments())) {
    int64_t bIns = b.getNumDpsInputs();
    map.map(arg, body->getArgument(
                     int64_t(i) < bIns ? aIns + i : nIns + aOuts + (i - bIns)));
  }
  SmallVector<Value> yields;
  for (linalg::GenericOp g : {a, b}) {
    for (Operation &op : g.getBody()->without_terminator())
      builder.clone(op, map);
    for (Value y : g.getBody()->getTerminator()->getOperands())
      yields.push_back(map.lookupOrDefault(y));
  }
  linalg::YieldOp::create(builder, loc, yields);
  a->replaceAllUsesWith(joined->getResults().take_front(a->getNumResults()));
  b->replaceAllUsesWith(joined->getResults().drop_front(a->getNumResults()));
  a->erase();
  b->erase();
  return joined;
}

struct FuseHorizontalPass
    : public cpn::impl::FuseHorizontalBase<FuseHorizontalPass> {
  using FuseHorizontalBase::FuseHorizontalBase;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      // In program order: each loop takes in the later ones that can join
      // it, one at a time (the joined loop's inputs grow).
      for (Operation *op = block->empty() ? nullptr : &block->front(); op;
           op = op->getNextNode()) {
        auto a = dyn_cast<linalg::GenericOp>(op);
        if (!a || !isCandidate(a))
          continue;
        for (Operation *next = a->getNextNode(); next;) {
          auto b = dyn_cast<linalg::GenericOp>(next);
          next = next->getNextNode();
          if (b && isCandidate(b) && canJoin(a, b, maxFusedOps)) {
            a = join(a, b);
            op = a;
          }
        }
      }
    }
  }
};
} // namespace
