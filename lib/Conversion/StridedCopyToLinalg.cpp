//===- StridedCopyToLinalg.cpp - strided memref.copy to linalg.copy --------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_STRIDEDCOPYTOLINALG
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
struct StridedCopyToLinalgPass
    : public cpn::impl::StridedCopyToLinalgBase<StridedCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) {
      auto src = cast<MemRefType>(op.getSource().getType());
      auto dst = cast<MemRefType>(op.getTarget().getType());
      // Contiguous copies stay: they lower to memcpy.
      if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace
