//===- LowerUpdate.h - cpn.update to tensor ops -----------------*- C++ -*-===//
//
// Part of cpnumeric. Shared by convert-cpn-to-linalg (CPNToLinalg/, defined
// in Updates.cpp) and convert-cpn-updates (CPNUpdates.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef CPN_CONVERSION_LOWERUPDATE_H
#define CPN_CONVERSION_LOWERUPDATE_H

#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::cpn {
/// Replaces `op` (a write of its value into a view of its base) with a
/// `tensor.insert_slice` of the value into the base where the view is a
/// slice, else an elementwise generic that selects the value inside the view.
LogicalResult lowerUpdate(RewriterBase &rw, UpdateOp op);
} // namespace mlir::cpn

#endif // CPN_CONVERSION_LOWERUPDATE_H
