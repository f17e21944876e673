//===- ScalarOps.h - NumPy's scalar semantics in arith/math ---*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_CONVERSION_SCALAROPS_H
#define CPN_CONVERSION_SCALAROPS_H

#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir {
class ModuleOp;
namespace cpn {

/// Sets the module where libm functions called by scalar code are declared;
/// passes that emit scalar ufuncs call it first.
void setLibmModule(ModuleOp module);

/// Emits the scalar computation of NumPy ufunc `u` (an elementwise op's
/// UfuncOpInterface::getUfunc) on `args`, giving a value of `resultType`.
/// Integer operands are unsigned when `isUnsigned` is set. Returns a null value
/// for an element type the ufunc has no loop for (and for `cast`, which is
/// emitScalarCast).
Value emitScalarUfunc(OpBuilder &b, Location loc, Ufunc u, ValueRange args,
                      Type resultType, bool isUnsigned);

/// The comparison `u` (equal, less, ...) of an unsigned and a signed
/// integer of one width, exact as NumPy's mixed loops (`Qq->?`): a negative
/// signed operand is below every unsigned value. `xUnsigned` says which one
/// is unsigned.
Value emitMixedSignCompare(OpBuilder &b, Location loc, Ufunc u, Value x,
                           Value y, bool xUnsigned);

/// NumPy's floating-point error checks of one element of ufunc `u` (or
/// `cast`): an i32 of FpError bits (1 divide by zero, 2 overflow, 4 invalid;
/// only those in `checks`) that are set when `result`, computed from `args`,
/// is such an error as NumPy reports it: a NaN from operands that are not NaN
/// (invalid), an infinity from finite operands at a pole of the function
/// (divide: 1/0, log(0)) or elsewhere (overflow), integer division by zero,
/// and NaN or infinity cast to an integer. Null when the op cannot raise any
/// of `checks` for these types (complex values are not checked).
Value emitFpErrorBits(OpBuilder &b, Location loc, Ufunc u, ValueRange args,
                      Value result, unsigned checks);

/// The zero of any element type (integer, float or complex).
Value emitZero(OpBuilder &b, Location loc, Type t);

/// Emits NumPy's `astype` conversion of one scalar.
Value emitScalarCast(OpBuilder &b, Location loc, Value x, Type to,
                     bool srcUnsigned, bool dstUnsigned);

/// The identity element of a reduction kind for `type` (sum -> 0, min ->
/// +inf or the largest integer, ...).
Value emitReductionIdentity(OpBuilder &b, Location loc, ReduceKind kind,
                            Type type, bool isUnsigned);

/// Combines an accumulator and an element for a reduction kind.
Value emitReductionCombine(OpBuilder &b, Location loc, ReduceKind kind,
                           Value acc, Value x, bool isUnsigned);

} // namespace cpn
} // namespace mlir

#endif // CPN_CONVERSION_SCALAROPS_H
