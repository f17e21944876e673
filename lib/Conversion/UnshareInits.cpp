//===- UnshareInits.cpp - one destination init per use --------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_UNSHAREINITS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// Clones `op` (one result) for every use but the first, right before it.
void unshare(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  for (OpOperand *use : llvm::drop_begin(uses)) {
    OpBuilder b(op);
    use->set(b.clone(*op)->getResult(0));
  }
}

struct UnshareInitsPass : public cpn::impl::UnshareInitsBase<UnshareInitsPass> {
  void runOnOperation() override {
    // Fills first: their clones add uses to the empties they fill.
    SmallVector<Operation *> fills, empties;
    getOperation().walk([&](Operation *op) {
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
          fills.push_back(op);
      }
    });
    for (Operation *op : fills)
      unshare(op);
    getOperation().walk([&](tensor::EmptyOp op) {
      if (!op.getResult().hasOneUse())
        empties.push_back(op);
    });
    for (Operation *op : empties)
      unshare(op);
  }
};
} // namespace
