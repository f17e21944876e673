//===- CPNUpdates.cpp - the cpn.update ops left for after fusion ----------===//
//
// Part of cpnumeric. convert-cpn-to-linalg{keep-updates} leaves cpn.update
// ops in place so that elementwise fusion does not see them; this pass lowers
// them afterwards (lowerUpdate, shared with that pass). A chain of updates
// that tiles its base (a join, Joins.h) starts from tensor.empty when its
// base is computed: no element of it survives, so it needs no fill.
//
//===----------------------------------------------------------------------===//

#include "CPNToLinalg/LowerUpdate.h"
#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/Transforms/Joins.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_CONVERTCPNUPDATES
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {
struct ConvertCPNUpdatesPass
    : public cpn::impl::ConvertCPNUpdatesBase<ConvertCPNUpdatesPass> {
  void runOnOperation() override {
    SmallVector<UpdateOp> ops;
    getOperation()->walk([&](UpdateOp op) { ops.push_back(op); });
    IRRewriter rw(&getContext());
    for (UpdateOp op : ops) {
      // The last update of a join: its chain's first base is dead. A stored
      // base (an argument: a donated buffer) is kept, for the output to be
      // written into it.
      if (llvm::any_of(op->getUsers(), [](Operation *u) { return isa<UpdateOp>(u); }))
        continue;
      std::optional<Join> j = matchJoin(op.getResult(), int64_t(1) << 16);
      if (!j)
        continue;
      Value base = j->first.getBase();
      Operation *def = base.getDefiningOp();
      if (!def || !isa<linalg::LinalgOp, tensor::EmptyOp>(def))
        continue;
      rw.setInsertionPoint(j->first);
      auto ty = cast<RankedTensorType>(base.getType());
      j->first.getBaseMutable().assign(tensor::EmptyOp::create(
          rw, j->first.getLoc(), ty.getShape(), ty.getElementType()));
      // Bufferized, it would be a fill of its own; one that reports fp
      // errors (cpn.fp_flag in its body) still runs.
      if (isOpTriviallyDead(def))
        rw.eraseOp(def);
    }
    for (UpdateOp op : ops) {
      rw.setInsertionPoint(op);
      if (failed(lowerUpdate(rw, op)))
        return signalPassFailure();
    }
  }
};
} // namespace
