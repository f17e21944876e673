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
#include "cpnrt/Lapack.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// An operand that is a cpn.view (static offset, non-negative strides: the
/// reshape to (P, N, Q) that take and the scans get) read in place: the
/// view's strides over its base's row-major buffer, as `mt`. Null for other
/// operands, which the callee reads through to_buffer (the view lowered to a
/// copy: a full pass over the base and a fresh buffer per call).
static Value viewInPlace(RewriterBase &rw, Location loc, Value v,
                         MemRefType mt) {
  auto view = v.getDefiningOp<ViewOp>();
  if (!view || view.getDynOffset())
    return {};
  RankedTensorType baseTy = tensorOf(view.getBase());
  RankedTensorType resTy = tensorOf(view.getResult());
  if (!baseTy.hasStaticShape() || !resTy.hasStaticShape() ||
      llvm::any_of(view.getStrides(), [](int64_t s) { return s < 0; }) ||
      view.getOffset() < 0)
    return {};
  auto baseBuf = bufferization::ToBufferOp::create(
      rw, loc, MemRefType::get(baseTy.getShape(), baseTy.getElementType()),
      view.getBase());
  baseBuf.setReadOnly(true);
  // A rank-1 contiguous buffer of the base's elements, then the view on it.
  auto flatTy =
      MemRefType::get({baseTy.getNumElements()}, baseTy.getElementType());
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < baseTy.getRank(); ++d)
    all[0].push_back(d);
  Value flat = baseBuf.getResult();
  if (baseTy.getRank() == 0)
    flat = memref::ExpandShapeOp::create(rw, loc, flatTy, flat,
                                         ArrayRef<ReassociationIndices>{})
               .getResult();
  else if (baseTy.getRank() > 1)
    flat =
        memref::CollapseShapeOp::create(rw, loc, flatTy, flat, all).getResult();
  auto staticTy =
      MemRefType::get(resTy.getShape(), resTy.getElementType(),
                      StridedLayoutAttr::get(rw.getContext(), view.getOffset(),
                                             view.getStrides()));
  Value r = memref::ReinterpretCastOp::create(
      rw, loc, staticTy, flat, view.getOffset(), resTy.getShape(),
      view.getStrides());
  return memref::CastOp::create(rw, loc, mt, r);
}

/// cpn.libcall becomes `cpn_lib_<callee>(meta, out, in...)` (see
/// runtime/include/cpnrt/Lapack.h and emitLibcall): operands are read through
/// bufferization.to_buffer (any layout), the result is written into a fresh
/// buffer that becomes the result tensor. Buffers are passed as direct
/// arguments, so that deallocation sees their last use. An in-place call
/// stays for one-shot bufferization (BufferizableOpInterfaceImpl.cpp).
LogicalResult lowerLibcall(RewriterBase &rw, LibcallOp op) {
  RankedTensorType resTy = tensorOf(op.getResult());
  // A scan of a temporary of its result's type runs in place: the call
  // stays a tensor op marked in place, so that one-shot bufferization, which
  // sees every use once CSE and fusion are done, lets it overwrite the
  // temporary's buffer only where nothing reads the temporary afterwards
  // (else it scans a copy), and empty-tensor elimination computes the
  // temporary straight into the output it is stored in (`cumsum(a * dt +
  // b)`: one array, not two). Deciding here which buffer the call writes
  // (session 31) went wrong when CSE later merged the temporary with an op
  // other ops read (fuzzer 890:515).
  if (!op.getInPlace() && op->getNumOperands() == 1 &&
      cpnrt::scanMayRunInPlace(op.getCallee().str())) {
    Value v = op->getOperand(0);
    Operation *def = v.getDefiningOp();
    if (tensorOf(v) == resTy && def && isa<CPNDialect>(def->getDialect()) &&
        !isa<ViewOp, LibcallOp, UpdateOp>(def))
      op.setInPlace(true);
  }
  if (op.getInPlace())
    return success();
  Location loc = op.getLoc();
  MLIRContext *ctx = rw.getContext();
  auto outTy = MemRefType::get(resTy.getShape(), resTy.getElementType());
  // A result stored as a kernel output (into an argument that nothing else
  // touches) is written there by the callee: no fresh buffer and no copy at
  // the end (a take of 10^5 elements spent more time in the two than in the
  // gather; a cumsum that is also read later kept a third array alive).
  bufferization::MaterializeInDestinationOp store;
  for (Operation *u : op.getResult().getUsers()) {
    auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(u);
    if (m && m.getDest().getType() == outTy &&
        isa<BlockArgument>(m.getDest()) && m.getDest().hasOneUse() &&
        m->getBlock() == op->getBlock()) {
      store = m;
      break;
    }
  }
  Value outBuf = store ? Value(store.getDest())
                       : Value(memref::AllocOp::create(rw, loc, outTy));
  SmallVector<Value> buffers{outBuf};
  for (Value v : op.getOperands()) {
    RankedTensorType t = tensorOf(v);
    auto layout = StridedLayoutAttr::get(
        ctx, ShapedType::kDynamic,
        SmallVector<int64_t>(t.getRank(), ShapedType::kDynamic));
    auto mt = MemRefType::get(t.getShape(), t.getElementType(), layout);
    if (Value strided = viewInPlace(rw, loc, v, mt)) {
      buffers.push_back(strided);
      continue;
    }
    auto toBuf = bufferization::ToBufferOp::create(rw, loc, mt, v);
    toBuf.setReadOnly(true);
    buffers.push_back(toBuf);
  }
  emitLibcall(rw, loc, op, buffers);
  if (store) {
    rw.eraseOp(store);
    if (op.getResult().use_empty()) {
      rw.eraseOp(op);
      return success();
    }
    // Other readers see the argument, read-only: an update of the result
    // must not bufferize into it (the argument holds the call's value).
    auto result = bufferization::ToTensorOp::create(rw, loc, resTy, outBuf);
    result.setRestrict(true);
    rw.replaceOp(op, result.getResult());
    return success();
  }
  // Writable (later updates of the result may bufferize into its buffer)
  // only if no other library call reads it: those read the buffer itself
  // (to_buffer of this to_tensor folds away in canonicalize), a read that
  // one-shot analysis cannot see, so an update that fusion moved before the
  // reader would be written under it (fuzz 407:337).
  bool readByCall = llvm::any_of(op.getResult().getUsers(), [](Operation *u) {
    if (isa<LibcallOp, bufferization::ToBufferOp>(u))
      return true;
    auto view = dyn_cast<ViewOp>(u);
    return view && llvm::any_of(view.getResult().getUsers(),
                                [](Operation *w) { return isa<LibcallOp>(w); });
  });
  auto result = bufferization::ToTensorOp::create(rw, loc, resTy, outBuf);
  result.setRestrict(true);
  result.setWritable(!readByCall);
  rw.replaceOp(op, result.getResult());
  return success();
}

} // namespace mlir::cpn::tolinalg
