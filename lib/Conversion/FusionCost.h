//===- FusionCost.h - what fusing loop bodies costs (internal) --*- C++ -*-===//
//
// Part of cpnumeric. Shared by cpn-fuse-elementwise and cpn-fuse-horizontal.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_CONVERSION_FUSIONCOST_H
#define CPN_LIB_CONVERSION_FUSIONCOST_H

#include "mlir/IR/Operation.h"

namespace mlir::cpn {
/// The cost of computing one element of a linalg.generic `op` (0 for other
/// ops): its body's ops, transcendental functions counting 16, divisions and
/// square roots 4, np.errstate's markers nothing.
int64_t fusionBodySize(Operation *op);
} // namespace mlir::cpn

#endif // CPN_LIB_CONVERSION_FUSIONCOST_H
