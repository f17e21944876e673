//===- ScalarOpsInternal.h - the scalar ufunc families ----------*- C++ -*-===//
//
// Part of cpnumeric.
//
// Private to lib/Conversion. The scalar body of each elementwise ufunc
// (cpn/Conversion/ScalarOps.h) is built by one file per element family:
// ScalarIntOps (integers and bool), ScalarFloatOps (floats, with the libm
// calls and the module that declares them) and ScalarComplexOps (complex<f32|
// f64>; their elementary functions in ScalarComplexFunctions). ScalarOps
// holds the public entry points, which dispatch on the ufunc and the element
// type. This header declares what one file defines and another calls,
// and the one-line builders they all use; the rest stays file-local. The
// emitters return a null value for a ufunc they do not lower.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H
#define CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H

#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <limits>
#include <utility>

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
Value emitFloatUnary(OpBuilder &b, Location loc, Ufunc u, Value x);
Value emitFloatBinary(OpBuilder &b, Location loc, Ufunc u, Value x, Value y);
/// NumPy's elementwise maximum/minimum/fmax/fmin of floats: a select, whose
/// tie (+-0) gives the second operand as NumPy's float32/float64 loops (their
/// SIMD max/min) or the first (`tiesToFirst`) as its float16 loops; NaN
/// propagates (maximum/minimum) or is skipped (fmax/fmin).
Value floatMinMax(OpBuilder &b, Location loc, Ufunc u, Value x, Value y,
                  bool tiesToFirst);

// ScalarIntOps.cpp: integer and bool operands, unsigned when `isUnsigned`.
Value emitIntUnary(OpBuilder &b, Location loc, Ufunc u, Value x,
                   bool isUnsigned);
Value emitIntBinary(OpBuilder &b, Location loc, Ufunc u, Value x, Value y,
                    bool isUnsigned);

/// Float arithmetic on one builder and location (the complex formulas).
struct FloatOps {
  OpBuilder &b;
  Location loc;
  Value mul(Value p, Value q) { return arith::MulFOp::create(b, loc, p, q); }
  Value add(Value p, Value q) { return arith::AddFOp::create(b, loc, p, q); }
  Value sub(Value p, Value q) { return arith::SubFOp::create(b, loc, p, q); }
  Value div(Value p, Value q) { return arith::DivFOp::create(b, loc, p, q); }
  Value cps(Value mag, Value sgn) {
    return math::CopySignOp::create(b, loc, mag, sgn);
  }
  Value abs(Value v) { return math::AbsFOp::create(b, loc, v); }
  Value eq(Value p, Value q) { return cmpF(b, loc, CmpFPredicate::OEQ, p, q); }
  Value lt(Value p, Value q) { return cmpF(b, loc, CmpFPredicate::OLT, p, q); }
  Value isInf(Value v) {
    Type t = v.getType();
    return eq(abs(v), cstF(b, loc, t, std::numeric_limits<double>::infinity()));
  }
  Value isFinite(Value v) {
    Type t = v.getType();
    return lt(abs(v), cstF(b, loc, t, std::numeric_limits<double>::infinity()));
  }
  Value both(Value p, Value q) { return arith::AndIOp::create(b, loc, p, q); }
  Value either(Value p, Value q) { return arith::OrIOp::create(b, loc, p, q); }
};

// ScalarComplexFunctions.cpp: glibc's (C99 Annex G) complex functions.
/// atan2(y, x) for the argument of a complex number (C's on two zeros).
Value atan2Z(OpBuilder &b, Location loc, Value y, Value x);
Value expC(OpBuilder &b, Location loc, Value z);
Value logC(OpBuilder &b, Location loc, Value z);
Value sqrtC(OpBuilder &b, Location loc, Value z);
/// The parts of sinh(x + iy) (cosh when !isSinh); `forSin` as sin z's.
std::pair<Value, Value> sinhCoshParts(OpBuilder &b, Location loc, Value x,
                                      Value y, bool isSinh, bool forSin);
/// The parts of tanh(x + iy).
std::pair<Value, Value> tanhParts(OpBuilder &b, Location loc, Value x, Value y);

// ScalarComplexOps.cpp.
Value emitComplexUnary(OpBuilder &b, Location loc, Ufunc u, Value z);
Value emitComplexBinary(OpBuilder &b, Location loc, Ufunc u, Value x, Value y);

} // namespace mlir::cpn::scalar

#endif // CPN_LIB_CONVERSION_SCALAROPSINTERNAL_H
