//===- OpFacts.cpp - what passes ask of cpn ops ---------------------------===//
//
// Part of cpnumeric. See cpn/Dialect/CPN/OpFacts.h.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/OpFacts.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn {

/// decomposeView (cpn/Trace/ViewBox.h) over MLIR's array types.
std::optional<BoxView> decomposeView(ArrayRef<int64_t> baseShape,
                                     int64_t offset, ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> sizes) {
  return ::cpn::decomposeView(
      std::vector<int64_t>(baseShape.begin(), baseShape.end()), offset,
      std::vector<int64_t>(strides.begin(), strides.end()),
      std::vector<int64_t>(sizes.begin(), sizes.end()));
}

/// The box of a view with the view dimension that walks each base dimension
/// (`viewDimOf`, -1: none); nullopt when the view is not a box (a reshaped
/// or diagonal view: two view dimensions on one base dimension).
std::optional<BoxView> viewBox(ViewOp op, SmallVector<int64_t> &viewDimOf) {
  RankedTensorType baseTy = tensorOf(op.getBase());
  ArrayRef<int64_t> sizes = tensorOf(op.getResult()).getShape();
  std::optional<BoxView> box =
      decomposeView(baseTy.getShape(), op.getOffset(), op.getStrides(), sizes);
  viewDimOf.assign(baseTy.getRank(), -1);
  if (box)
    for (size_t i = 0; i < sizes.size() && box; ++i)
      if (box->owner[i] >= 0) {
        if (viewDimOf[box->owner[i]] >= 0)
          box.reset();
        else
          viewDimOf[box->owner[i]] = i;
      }
  return box;
}

ViewForm viewForm(ViewOp op) {
  SmallVector<int64_t> viewDimOf;
  std::optional<BoxView> box = viewBox(op, viewDimOf);
  if (!box)
    return ViewForm::Gather;
  ArrayRef<int64_t> baseShape = tensorOf(op.getBase()).getShape();
  size_t walked = 0;
  bool unitSteps = true, identity = true, atZero = true;
  SmallVector<int64_t> packedShape;
  for (size_t j = 0; j < baseShape.size(); ++j) {
    int64_t i = viewDimOf[j];
    if (i < 0)
      continue;
    int64_t c = box->coeffs[i];
    identity &= c > 0 && static_cast<int64_t>(walked) == i;
    unitSteps &= std::abs(c) == 1;
    atZero &= box->offsets[j] == 0;
    packedShape.push_back(tensorOf(op.getResult()).getDimSize(i));
    ++walked;
  }
  // A view keeping the base's rank whose other dimensions are the base's
  // single elements (a 1 x n row) is the slice itself (the lowering's
  // unitRows, Views.cpp).
  ArrayRef<int64_t> shape = tensorOf(op.getResult()).getShape();
  bool unitRows = walked < shape.size() && baseShape.size() == shape.size();
  for (size_t j = 0; unitRows && j < baseShape.size(); ++j) {
    int64_t i = viewDimOf[j];
    unitRows = i < 0 ? shape[j] == 1 : i == int64_t(j) && box->coeffs[i] > 0;
  }
  identity &= walked == shape.size();
  if (unitRows) {
    identity = true;
    packedShape.assign(shape.begin(), shape.end());
  }
  if (!identity)
    return ViewForm::Loop;
  bool whole = ArrayRef<int64_t>(packedShape) == baseShape && unitSteps &&
               (op.getDynOffset() || atZero);
  return whole ? ViewForm::Base : ViewForm::Slice;
}

Value transposedBase(Value v) {
  auto view = v.getDefiningOp<ViewOp>();
  if (!view || view.getDynOffset())
    return {};
  ArrayRef<int64_t> base = tensorOf(view.getBase()).getShape();
  ArrayRef<int64_t> shape = tensorOf(view.getResult()).getShape();
  if (base.size() != 2 || shape.size() != 2 || view.getOffset() != 0 ||
      shape[0] != base[1] || shape[1] != base[0] ||
      view.getStrides() != ArrayRef<int64_t>{1, base[1]})
    return {};
  return view.getBase();
}

bool rowwiseCall(LibcallOp call) {
  if (call.getInPlace() || call->getNumOperands() != 1)
    return false;
  RankedTensorType in = tensorOf(call->getOperand(0)), out = tensorOf(call);
  if (in.getRank() != 2 || out.getRank() != 2 ||
      in.getDimSize(0) != out.getDimSize(0))
    return false;
  StringRef callee = call.getCallee();
  StringRef name = callee.substr(0, callee.rfind('_'));
  return llvm::is_contained(
      {"sort", "argsort", "partition", "cumsum", "cumprod", "cummax", "cummin",
       "cumfmax", "cumfmin", "cumand", "cumor", "cumxor", "cumsum_half",
       "cumprod_half", "fft", "rfft", "irfft"},
      name);
}

bool isSmallReduce(ReduceOp op) {
  RankedTensorType inTy = tensorOf(op.getX());
  ArrayRef<int64_t> axes = op.getAxes();
  if (axes.empty() || (int64_t)axes.size() == inTy.getRank())
    return false; // nothing kept: a full reduction
  int64_t count = 1;
  for (int64_t a : axes) {
    if (inTy.isDynamicDim(a) || inTy.getDimSize(a) == 0)
      return false;
    count *= inTy.getDimSize(a);
  }
  bool floatSum =
      isa<FloatType, ComplexType>(inTy.getElementType()) &&
      (op.getKind() == ReduceKind::sum || op.getKind() == ReduceKind::prod);
  return count <= (floatSum ? 8 : 16);
}

bool rowBox(RankedTensorType base, ArrayRef<int64_t> shape, int64_t offset,
            ArrayRef<int64_t> strides, int64_t &delta) {
  // The box may have more dimensions than its base (a vector's (n, 1) view
  // as the right side of a product: strides (1, 0)): what matters is that
  // each of its rows stays within one base row.
  if (base.getRank() < 1 || shape.empty() || strides.size() != shape.size() ||
      !base.hasStaticShape())
    return false;
  int64_t rowStride = 1;
  for (int64_t d : base.getShape().drop_front())
    rowStride *= d;
  if (rowStride <= 0 || strides[0] != rowStride || offset < 0)
    return false;
  int64_t reach = offset % rowStride;
  for (size_t k = 1; k < shape.size(); ++k) {
    if (strides[k] < 0)
      return false;
    reach += (shape[k] - 1) * strides[k];
  }
  delta = offset / rowStride;
  return reach < rowStride && delta + shape[0] <= base.getDimSize(0);
}

bool boxRows(RankedTensorType base, ArrayRef<int64_t> shape, int64_t offset,
             ArrayRef<int64_t> strides, int64_t &r0, int64_t &r1) {
  if (base.getRank() < 1 || !base.hasStaticShape())
    return false;
  int64_t row = 1;
  for (int64_t d : base.getShape().drop_front())
    row *= d;
  if (row <= 0)
    return false;
  int64_t first = offset, last = offset;
  for (auto [n, s] : llvm::zip(shape, strides)) {
    if (n <= 0)
      return false;
    (s < 0 ? first : last) += (n - 1) * s;
  }
  if (first < 0)
    return false;
  r0 = first / row;
  r1 = last / row + 1;
  return r1 <= base.getDimSize(0);
}

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> s = ::cpn::rowMajorStrides(shape.vec());
  return SmallVector<int64_t>(s.begin(), s.end());
}

} // namespace mlir::cpn
