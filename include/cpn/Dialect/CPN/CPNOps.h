//===- CPNOps.h - cpn operations ------------------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_CPNOPS_H
#define CPN_DIALECT_CPN_CPNOPS_H

#include "cpn/Dialect/CPN/CPNDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace cpn {
/// Checks that every operand of an elementwise op has its result's shape.
LogicalResult verifySameShapes(Operation *op);

/// np.errstate: an elementwise op with `cpn.fpcheck` (FpError bits: 1 divide
/// by zero, 2 overflow, 4 invalid) reports those errors as site `cpn.fpsite`
/// of the kernel: bits 3 * (site % kFpSitesPerWord) of status word
/// site / kFpSitesPerWord, in the memref<Nxi32> argument marked
/// `cpn.fp_status` (see cpn.fp_flag).
constexpr const char *kFpChecksAttr = "cpn.fpcheck";
constexpr const char *kFpSiteAttr = "cpn.fpsite";
/// On a function cpn-lower-fp-flags outlined: the exact classification of a
/// loop nest's floating-point errors (cpn-externalize-fp-checks).
constexpr const char *kFpCheckFunctionAttr = "cpn.fp_check";
constexpr const char *kFpStatusAttr = "cpn.fp_status";
constexpr int64_t kFpSitesPerWord = 10;
/// On a comparison of an unsigned and a signed integer operand (NumPy's
/// exact `Qq->?` loops): which one is unsigned is `is_unsigned` (the first).
constexpr const char *kMixedSignAttr = "cpn.mixed_sign";
/// On a cpn.reduce over the outer axis or a cpn.matmul that is a sum over
/// rows (a tall transposed product, an inner product): how many blocks of
/// rows reduce into partials of their own, in parallel, before the partials
/// add up (cpn-schedule-reductions chooses; convert-cpn-to-linalg follows).
constexpr const char *kRowBlocksAttr = "cpn.row_blocks";

/// Bytes one element of `t` occupies in a store: bool (i1) takes a byte, a
/// complex number both of its parts, index 8.
inline int64_t elementBytes(Type t) {
  if (auto c = dyn_cast<ComplexType>(t))
    return 2 * elementBytes(c.getElementType());
  if (t.isIndex())
    return 8;
  return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
}
} // namespace cpn

namespace OpTrait {
/// The operands of an elementwise cpn op have the result's shape.
template <typename ConcreteType>
class CPNSameShape : public TraitBase<ConcreteType, CPNSameShape> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return cpn::verifySameShapes(op);
  }
};
} // namespace OpTrait
} // namespace mlir

#include "cpn/Dialect/CPN/CPNOpsEnums.h.inc"
// The interfaces name the enums (UfuncOpInterface::getUfunc).
#include "cpn/Dialect/CPN/CPNInterfaces.h.inc"

#define GET_OP_CLASSES
#include "cpn/Dialect/CPN/CPNOps.h.inc"

#endif // CPN_DIALECT_CPN_CPNOPS_H
