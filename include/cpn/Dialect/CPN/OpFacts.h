//===- OpFacts.h - what passes ask of cpn ops -------------------*- C++ -*-===//
//
// Part of cpnumeric. Facts about cpn ops that the transforms (cpn-schedule-
// reductions, cpn-split-joins) decide on and convert-cpn-to-linalg carries
// out: how a view sits in its base, which views are transposes, which
// reductions are small. One definition for both, in the dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_OPFACTS_H
#define CPN_DIALECT_CPN_OPFACTS_H

#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Trace/ViewBox.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::cpn {

/// The ranked tensor type of `v` (every cpn value has one).
inline RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A view per base dimension: cpn/Trace/ViewBox.h, which the Engine shares.
using BoxView = ::cpn::BoxView;

/// Row-major element strides of `shape` (cpn/Trace/ViewBox.h).
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape);

/// A box of `shape` at element `offset`/`strides` in a base of type `base`,
/// by rows: true (and `delta`, the base row of the box's row 0) when box row
/// i lies whole within base row i + delta (the boxes of cpn.view and
/// cpn.update that partitioning by rows can follow).
bool rowBox(RankedTensorType base, ArrayRef<int64_t> shape, int64_t offset,
            ArrayRef<int64_t> strides, int64_t &delta);

/// The base rows [r0, r1) that a box of `shape` at element `offset` with
/// `strides` touches in a base of type `base` (static, of at least one
/// dimension; strides of either sign): false for an empty box or one outside
/// the base.
bool boxRows(RankedTensorType base, ArrayRef<int64_t> shape, int64_t offset,
             ArrayRef<int64_t> strides, int64_t &r0, int64_t &r1);

/// decomposeView (cpn/Trace/ViewBox.h) over MLIR's array types: the box of
/// the base that a view of `sizes` at `offset` with element `strides` is,
/// if it is one.
std::optional<BoxView> decomposeView(ArrayRef<int64_t> baseShape,
                                     int64_t offset, ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> sizes);

/// The box of a view with the view dimension that walks each base dimension
/// (`viewDimOf`, -1: none); nullopt when the view is not a box (a reshaped
/// or diagonal view: two view dimensions on one base dimension).
std::optional<BoxView> viewBox(ViewOp op, SmallVector<int64_t> &viewDimOf);

/// What convert-cpn-to-linalg makes of a view: its base itself (the whole
/// base with unit steps), a tensor.extract_slice alone (a box in the base's
/// dimension order), or a loop (a box that transposes, reverses or
/// broadcasts: a slice and a generic; any other view: a gather).
enum class ViewForm { Base, Slice, Loop, Gather };
ViewForm viewForm(ViewOp op);

/// The base of `v` when `v` is a cpn.view that transposes a whole 2-D tensor
/// (offset 0, strides [1, columns]); null otherwise.
Value transposedBase(Value v);

/// A reduction of at most 8 (float sums and products) or 16 elements per
/// result: lowered as an elementwise loop over them, never split.
bool isSmallReduce(ReduceOp op);

/// Whether a library call computes each row of its (rows, n) result from the
/// same row of its one (rows, m) operand and nothing else: the runtime's
/// sorts, partitions, scans and FFTs along the rows (runtime/lib
/// Algorithms.cpp, Scans.cpp, Fft.cpp: "rows are the last axis"). Split by
/// rows, each rank calls it on its block (cpn-localize, cpn-partition).
bool rowwiseCall(LibcallOp call);

} // namespace mlir::cpn

#endif // CPN_DIALECT_CPN_OPFACTS_H
