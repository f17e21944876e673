//===- ScalarOpsInternal.h - the scalar ufunc families ----------*- C++ -*-===//
//
// Part of cpnumeric.
//
// Private to lib/Conversion. The scalar body of each elementwise ufunc
// (cpn/Conversion/ScalarOps.h) is built by one file per element family:
// ScalarIntOps (integers and bool), ScalarFloatOps (floats, with the libm
// calls and the module that declares them) and ScalarComplexOps (complex<f32|
// f64>); ScalarOps holds the public entry points, which dispatch on the
// element type. This header declares what one file defines and another calls,
// and the one-line builders they all use; the rest stays file-local. The
// emitters return a null value for a name they do not know.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H
#define CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::cpn::scalar {
using arith::CmpFPredicate;
using arith::CmpIPredicate;

inline Value cstF(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}
inline Value cstI(OpBuilder &b, Location loc, Type t, int64_t v) {
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
}
inline Value cmpF(OpBuilder &b, Location loc, CmpFPredicate p, Value x,
                  Value y) {
  return arith::CmpFOp::create(b, loc, p, x, y);
}
inline Value cmpI(OpBuilder &b, Location loc, CmpIPredicate p, Value x,
                  Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
inline Value sel(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}
inline Value re(OpBuilder &b, Location loc, Value z) {
  return complex::ReOp::create(b, loc, z);
}
inline Value im(OpBuilder &b, Location loc, Value z) {
  return complex::ImOp::create(b, loc, z);
}
inline Value mkC(OpBuilder &b, Location loc, Type t, Value r, Value i) {
  return complex::CreateOp::create(b, loc, t, r, i);
}
inline Value cstC(OpBuilder &b, Location loc, Type t, double r, double i) {
  Type ft = cast<ComplexType>(t).getElementType();
  return complex::ConstantOp::create(
      b, loc, t,
      b.getArrayAttr({b.getFloatAttr(ft, r), b.getFloatAttr(ft, i)}));
}

// ScalarFloatOps.cpp.
Value callLibm(OpBuilder &b, Location loc, StringRef name, ValueRange args);
Value emitFloatUnary(OpBuilder &b, Location loc, StringRef name, Value x);
Value emitFloatBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                      Value y);
/// NumPy's elementwise maximum/minimum/fmax/fmin of floats: a select, whose
/// tie (+-0) gives the second operand as NumPy's float32/float64 loops (their
/// SIMD max/min) or the first (`tiesToFirst`) as its float16 loops; NaN
/// propagates (maximum/minimum) or is skipped (fmax/fmin).
Value floatMinMax(OpBuilder &b, Location loc, StringRef name, Value x, Value y,
                  bool tiesToFirst);

// ScalarIntOps.cpp: integer and bool operands, unsigned when `isUnsigned`.
Value emitIntUnary(OpBuilder &b, Location loc, StringRef name, Value x,
                   bool isUnsigned);
Value emitIntBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                    Value y, bool isUnsigned);

// ScalarComplexOps.cpp.
Value emitComplexUnary(OpBuilder &b, Location loc, StringRef name, Value z);
Value emitComplexBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                        Value y);

} // namespace mlir::cpn::scalar

#endif // CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H
