//===- CPNToLinalg.cpp - cpn to linalg on tensors -------------------------===//
//
// Part of cpnumeric.
//
// Each cpn op becomes a linalg.generic on tensors (or tensor.insert_slice).
// Views are not materialized: a cpn.view becomes a copy whose input indexing
// map is the affine map from the view's index to the base's index, and
// upstream elementwise fusion folds that map into every consumer.
//
// This file is the pass: which ops it lowers and in what order (matmuls
// first, dead views erased, empty results replaced), dispatching each op to
// its family's lowering (Lowerings.h, one file per family).
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "LowerUpdate.h"
#include "Lowerings.h"
#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

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
bool replaceEmptyResults(IRRewriter &rw, Operation *op) {
  if (op->getNumResults() == 0)
    return false;
  for (Type t : op->getResultTypes()) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape() || rt.getNumElements() != 0)
      return false;
  }
  SmallVector<Value> empties;
  for (Type t : op->getResultTypes()) {
    auto rt = cast<RankedTensorType>(t);
    empties.push_back(tensor::EmptyOp::create(rw, op->getLoc(), rt.getShape(),
                                              rt.getElementType()));
  }
  rw.replaceOp(op, empties);
  return true;
}

struct ConvertCPNToLinalgPass
    : public mlir::cpn::impl::ConvertCPNToLinalgBase<ConvertCPNToLinalgPass> {
  using ConvertCPNToLinalgBase::ConvertCPNToLinalgBase;
  void runOnOperation() override {
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
    std::stable_partition(ops.begin(), ops.end(), [](Operation *op) {
      return isa<MatmulOp, LibcallOp>(op);
    });
    IRRewriter rw(&getContext());
    setLibmModule(getOperation());
    for (Operation *op : ops) {
      // A view only a matmul or library call read (in place) is dead now.
      if (isa<ViewOp>(op) && op->use_empty()) {
        rw.eraseOp(op);
        continue;
      }
      rw.setInsertionPoint(op);
      if (replaceEmptyResults(rw, op))
        continue;
      LogicalResult r = failure();
      if (auto v = dyn_cast<ViewOp>(op))
        r = lowerView(rw, v);
      else if (auto u = dyn_cast<UpdateOp>(op))
        r = lowerUpdate(rw, u);
      else if (auto red = dyn_cast<ReduceOp>(op))
        r = lowerReduce(rw, red);
      else if (auto iota = dyn_cast<IotaOp>(op))
        r = lowerIota(rw, iota);
      else if (auto remap = dyn_cast<RemapOp>(op))
        r = lowerRemap(rw, remap);
      else if (auto mm = dyn_cast<MatmulOp>(op))
        r = lowerMatmul(rw, mm);
      else if (auto call = dyn_cast<LibcallOp>(op))
        r = lowerLibcall(rw, call);
      else if (auto bits = dyn_cast<RandomBitsOp>(op))
        r = lowerRandomBits(rw, bits);
      else
        r = lowerElementwise(rw, op);
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
