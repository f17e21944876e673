//===- Lowerings.h - convert-cpn-to-linalg's op families --------*- C++ -*-===//
//
// Part of cpnumeric.
//
// Private to lib/Conversion/CPNToLinalg. The pass (CPNToLinalg.cpp) lowers
// each cpn op with its family's entry point, one file a family: Elementwise
// (ufuncs, casts, select, copy, iota), Views (view, remap), Updates (update,
// declared in LowerUpdate.h), Reductions (reduce), Products (matmul), Libcalls
// (libcall) and Random (random_bits). This header declares those entry points
// and the helpers that one file defines and another calls; the rest stays
// file-local. Each definition carries its comment.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_CONVERSION_CPNTOLINALG_LOWERINGS_H
#define CPN_LIB_CONVERSION_CPNTOLINALG_LOWERINGS_H

#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/OpFacts.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::cpn::tolinalg {

// Elementwise.cpp: the generics every family builds on.
Value linearIndex(OpBuilder &b, Location l, ArrayRef<int64_t> strides);
SmallVector<utils::IteratorType> parallel(unsigned n);
Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t,
                function_ref<Value(unsigned)> dynamicSize = nullptr);
Value dimOf(OpBuilder &b, Location loc, Value v, int64_t dim);
Value buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType resTy, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body,
    Value shapeInput = {}, ArrayRef<int64_t> shapeDims = {});
LogicalResult lowerElementwise(RewriterBase &rw, Operation *op);
LogicalResult lowerIota(RewriterBase &rw, IotaOp op);

// Views.cpp; these also serve the updates. How a view sits in its base
// (decomposeView, viewBox, viewForm), transposedBase, isSmallReduce and
// rowMajorStrides are cpn/Dialect/CPN/OpFacts.h, which the transforms read.
SmallVector<OpFoldResult> boxOffsets(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> baseShape,
                                     const BoxView &box, Value dynOffset);
Value offsetValue(OpBuilder &b, Location loc, int64_t offset, Value dynOffset);
OpFoldResult addConstant(OpBuilder &b, Location loc, OpFoldResult o, int64_t c);
LogicalResult lowerView(RewriterBase &rw, ViewOp op);
LogicalResult lowerRemap(RewriterBase &rw, RemapOp op);

// Reductions.cpp; combineReassoc also serves the products.
/// The cpn.row_blocks of `op` over `rows` rows when the lowering can follow
/// it (1 <= blocks <= rows; `divides`: no remainder), else 0 (lowered whole).
int64_t rowBlocksOf(Operation *op, int64_t rows, bool divides);
Value combineReassoc(OpBuilder &b, Location l, ReduceKind kind, Value acc,
                     Value x, bool isUnsigned);
LogicalResult lowerReduce(RewriterBase &rw, ReduceOp op);

// Products.cpp, Libcalls.cpp, Random.cpp.
/// A tensor of `shape` filled with zeros of `et`.
Value zerosOf(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type et);
LogicalResult lowerMatmul(RewriterBase &rw, MatmulOp op);
LogicalResult lowerLibcall(RewriterBase &rw, LibcallOp op);
LogicalResult lowerRandomBits(RewriterBase &rw, RandomBitsOp op);

} // namespace mlir::cpn::tolinalg

#endif // CPN_LIB_CONVERSION_CPNTOLINALG_LOWERINGS_H
