//===- CPNUpdates.cpp - the cpn.update ops left for after fusion ----------===//
//
// Part of cpnumeric. convert-cpn-to-linalg{keep-updates} leaves cpn.update
// ops in place so that elementwise fusion does not see them; this pass lowers
// them afterwards (lowerUpdate, shared with that pass).
//
//===----------------------------------------------------------------------===//

#include "CPNToLinalg/LowerUpdate.h"
#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
      rw.setInsertionPoint(op);
      if (failed(lowerUpdate(rw, op)))
        return signalPassFailure();
    }
  }
};
} // namespace
