//===- CPNOps.cpp - cpn operations and their verifiers --------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::cpn;

namespace {
/// Checks that a strided view (offset, strides, sizes) over the C-order flat
/// index of a tensor with `numel` elements only selects existing elements.
LogicalResult verifyStridedAccess(Operation *op, int64_t numel, int64_t offset,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> sizes) {
  if (strides.size() != sizes.size())
    return op->emitOpError("expected ")
           << sizes.size() << " strides, one per view dimension, but got "
           << strides.size();
  for (int64_t s : sizes)
    if (s == 0)
      return success(); // An empty view selects nothing.
  int64_t lo = offset, hi = offset;
  for (auto [st, sz] : llvm::zip(strides, sizes)) {
    if (st > 0)
      hi += st * (sz - 1);
    else
      lo += st * (sz - 1);
  }
  if (lo < 0 || hi >= numel)
    return op->emitOpError("view selects flat indices [")
           << lo << ", " << hi << "] outside the base's " << numel
           << " elements";
  return success();
}

ShapedType shapedOf(Value v) { return cast<ShapedType>(v.getType()); }
} // namespace

LogicalResult ViewOp::verify() {
  ShapedType base = shapedOf(getBase()), res = shapedOf(getResult());
  if (base.getElementType() != res.getElementType())
    return emitOpError("result element type must equal the base's");
  return verifyStridedAccess(*this, base.getNumElements(), getOffset(),
                             getStrides(), res.getShape());
}

LogicalResult RemapOp::verify() {
  ShapedType base = shapedOf(getBase()), res = shapedOf(getResult());
  if (base.getElementType() != res.getElementType())
    return emitOpError("result element type must equal the base's");
  ArrayRef<int64_t> dims = getDims();
  if ((int64_t)dims.size() != res.getRank())
    return emitOpError("expected one entry of dims per result dimension");
  SmallVector<bool> walked(base.getRank(), false);
  int64_t dynamicBroadcasts = 0;
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d == -1) {
      dynamicBroadcasts += res.isDynamicDim(i);
      continue;
    }
    if (d < 0 || d >= base.getRank() || walked[d])
      return emitOpError("dims must be distinct base dimensions or -1");
    walked[d] = true;
    if (base.getDimSize(d) != res.getDimSize(i))
      return emitOpError("result dimension ")
             << i << " must have the size of base dimension " << d;
  }
  for (auto [d, w] : llvm::enumerate(walked))
    if (!w && base.getDimSize(d) != 1)
      return emitOpError("base dimension ")
             << d << " is dropped but does not have size 1";
  if ((int64_t)getSizes().size() != dynamicBroadcasts)
    return emitOpError("expected one size per dynamic broadcast dimension");
  return success();
}

LogicalResult UpdateOp::verify() {
  ShapedType base = shapedOf(getBase()), val = shapedOf(getValue());
  if (getResult().getType() != getBase().getType())
    return emitOpError("result type must equal the base's");
  if (base.getElementType() != val.getElementType())
    return emitOpError("value element type must equal the base's");
  for (auto [s, n] : llvm::zip(getStrides(), val.getShape()))
    if (s == 0 && n > 1)
      return emitOpError("cannot write through a zero-stride (broadcast) view");
  return verifyStridedAccess(*this, base.getNumElements(), getOffset(),
                             getStrides(), val.getShape());
}

LogicalResult mlir::cpn::verifySameShapes(Operation *op) {
  ArrayRef<int64_t> shape = shapedOf(op->getResult(0)).getShape();
  for (Value v : op->getOperands())
    if (shapedOf(v).getShape() != shape)
      return op->emitOpError("operands must have the result's shape; the "
                             "front end broadcasts with cpn.view");
  return success();
}

LogicalResult BitcastOp::verify() {
  Type from = shapedOf(getX()).getElementType();
  Type to = shapedOf(getResult()).getElementType();
  auto width = [](Type t) -> unsigned {
    return isa<IntegerType, FloatType>(t) ? t.getIntOrFloatBitWidth() : 0;
  };
  if (!width(from) || width(from) != width(to) || from.isInteger(1))
    return emitOpError("reinterprets ")
           << from << " as " << to
           << ": both must be integer or float types of one width (not i1)";
  return success();
}

LogicalResult SelectOp::verify() {
  if (!shapedOf(getCond()).getElementType().isInteger(1))
    return emitOpError("condition must have i1 elements");
  if (getA().getType() != getB().getType() ||
      shapedOf(getA()).getElementType() !=
          shapedOf(getResult()).getElementType())
    return emitOpError("choices and result must have one element type");
  return success();
}

ReduceOp ReduceOp::cloneOn(OpBuilder &b, Value x, Type type,
                           ArrayRef<int64_t> axes) {
  OperationState st(getLoc(), getOperationName());
  st.addOperands(x);
  st.addTypes(type);
  st.addAttributes((*this)->getAttrs());
  // set, not add: the copied `axes` is replaced.
  st.attributes.set(getAxesAttrName(), b.getDenseI64ArrayAttr(axes));
  return cast<ReduceOp>(b.create(st));
}

LogicalResult ReduceOp::verify() {
  ReduceKind kind = getKind();
  ShapedType in = shapedOf(getX()), out = shapedOf(getResult());
  ArrayRef<int64_t> axes = getAxes();
  SmallVector<int64_t> expected;
  for (int64_t i = 0, e = in.getRank(); i < e; ++i)
    if (!llvm::is_contained(axes, i))
      expected.push_back(in.getDimSize(i));
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= in.getRank() || (i && axes[i] <= axes[i - 1]))
      return emitOpError("axes must be sorted, distinct and within the rank");
  if (ArrayRef<int64_t>(expected) != out.getShape())
    return emitOpError("result shape must be the operand's without the axes");
  bool isArg = kind == ReduceKind::argmin || kind == ReduceKind::argmax;
  bool logical = kind == ReduceKind::any || kind == ReduceKind::all;
  if (isArg && (axes.size() != 1 || !out.getElementType().isInteger(64)))
    return emitOpError("argmin/argmax take one axis and give i64 indices");
  if (logical && !out.getElementType().isInteger(1))
    return emitOpError("any/all give i1 elements");
  if (!isArg && !logical && out.getElementType() != in.getElementType())
    return emitOpError("result element type must equal the operand's; the "
                       "front end casts for dtype=");
  return success();
}

LogicalResult IotaOp::verify() {
  ShapedType t = shapedOf(getResult());
  if (getDim() < 0 || getDim() >= t.getRank())
    return emitOpError("dim must be within the result's rank");
  if (!t.getElementType().isInteger(64))
    return emitOpError("iota gives i64 elements");
  return success();
}

LogicalResult MatmulOp::verify() {
  ShapedType a = shapedOf(getLhs()), b = shapedOf(getRhs()),
             c = shapedOf(getResult());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError("operands and result must be 2-D");
  if (a.getDimSize(1) != b.getDimSize(0) ||
      c.getDimSize(0) != a.getDimSize(0) || c.getDimSize(1) != b.getDimSize(1))
    return emitOpError("shapes do not agree for a matrix product");
  if (a.getElementType() != b.getElementType() ||
      a.getElementType() != c.getElementType())
    return emitOpError("operands and result must have one element type");
  return success();
}

LogicalResult LibcallOp::verify() {
  if (getOperands().size() > 3)
    return emitOpError("takes at most three operands");
  if (getInPlace() && (getOperands().empty() ||
                       getOperands()[0].getType() != getResult().getType()))
    return emitOpError("in place needs a first operand of the result's type");
  return success();
}

#define GET_OP_CLASSES
#include "cpn/Dialect/CPN/CPNOps.cpp.inc"
