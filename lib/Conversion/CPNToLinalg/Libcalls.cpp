//===- Libcalls.cpp - cpn.libcall to runtime calls ------------------------===//
//
// Part of cpnumeric.
//
// A cpn.libcall that is not in place becomes a call of the runtime's
// cpn_lib_<callee> on buffers (emitLibcall); an in-place one stays for
// one-shot bufferization.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// cpn.libcall becomes `cpn_lib_<callee>(meta, out, in...)` (see
/// runtime/include/cpnrt/Lapack.h and emitLibcall): operands are read through
/// bufferization.to_buffer (any layout), the result is written into a fresh
/// buffer that becomes the result tensor. Buffers are passed as direct
/// arguments, so that deallocation sees their last use. An in-place call
/// stays for one-shot bufferization (BufferizableOpInterfaceImpl.cpp).
LogicalResult lowerLibcall(IRRewriter &rw, LibcallOp op) {
  if (op.getInPlace())
    return success();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  RankedTensorType resTy = tensorOf(op.getResult());
  auto outBuf = memref::AllocOp::create(
      rw, loc, MemRefType::get(resTy.getShape(), resTy.getElementType()));
  SmallVector<Value> buffers{outBuf};
  for (Value v : op.getOperands()) {
    RankedTensorType t = tensorOf(v);
    auto layout = StridedLayoutAttr::get(
        ctx, ShapedType::kDynamic,
        SmallVector<int64_t>(t.getRank(), ShapedType::kDynamic));
    auto mt = MemRefType::get(t.getShape(), t.getElementType(), layout);
    auto toBuf = bufferization::ToBufferOp::create(rw, loc, mt, v);
    toBuf.setReadOnly(true);
    buffers.push_back(toBuf);
  }
  emitLibcall(rw, loc, op, buffers);
  auto result = bufferization::ToTensorOp::create(rw, loc, resTy, outBuf);
  result.setRestrict(true);
  result.setWritable(true);
  rw.replaceOp(op, result.getResult());
  return success();
}

} // namespace mlir::cpn::tolinalg
