//===- ScalarIntOps.cpp - integer and bool ufuncs -------------------------===//
//
// Part of cpnumeric.
//
// Integer and bool elements, equal to NumPy's bit for bit: division by zero
// gives 0, MIN / -1 wraps, shifts by the bit width or more give 0 (or -1),
// Python-style signs of `remainder` and `floor_divide`, bool's add and
// multiply are or and and.
//
//===----------------------------------------------------------------------===//

#include "ScalarOpsInternal.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::scalar;

namespace {
/// Integer division family with NumPy's results for a zero divisor (0) and
/// for MIN / -1 (wraps), both of which are undefined in LLVM.
Value intDivLike(OpBuilder &b, Location loc, Ufunc u, Value a, Value d,
                 bool isUnsigned) {
  Type t = a.getType();
  Value zero = cstI(b, loc, t, 0);
  Value one = cstI(b, loc, t, 1);
  Value dZero = cmpI(b, loc, CmpIPredicate::eq, d, zero);
  Value bad = dZero;
  Value minusOne;
  if (!isUnsigned) {
    minusOne = cstI(b, loc, t, -1);
    bad = arith::OrIOp::create(b, loc, dZero,
                               cmpI(b, loc, CmpIPredicate::eq, d, minusOne));
  }
  Value safeD = sel(b, loc, bad, one, d);
  Value r;
  if (u == Ufunc::floor_divide) {
    r = isUnsigned ? (Value)arith::DivUIOp::create(b, loc, a, safeD)
                   : (Value)arith::FloorDivSIOp::create(b, loc, a, safeD);
    if (!isUnsigned)
      r = sel(b, loc, dZero, zero,
              sel(b, loc, bad, arith::SubIOp::create(b, loc, zero, a), r));
    else
      r = sel(b, loc, dZero, zero, r);
    return r;
  }
  // remainder (sign of the divisor) and fmod (sign of the dividend).
  r = isUnsigned ? (Value)arith::RemUIOp::create(b, loc, a, safeD)
                 : (Value)arith::RemSIOp::create(b, loc, a, safeD);
  if (!isUnsigned && u == Ufunc::remainder) {
    Value rNeg = cmpI(b, loc, CmpIPredicate::slt, r, zero);
    Value dNeg = cmpI(b, loc, CmpIPredicate::slt, d, zero);
    Value adjust =
        arith::AndIOp::create(b, loc, cmpI(b, loc, CmpIPredicate::ne, r, zero),
                              arith::XOrIOp::create(b, loc, rNeg, dNeg));
    r = sel(b, loc, adjust, arith::AddIOp::create(b, loc, r, d), r);
  }
  return sel(b, loc, bad, zero, r);
}

/// Euclid's algorithm on magnitudes (an scf.while in the element's body).
Value gcdOf(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  Type t = x.getType();
  Value ax = emitIntUnary(b, loc, Ufunc::absolute, x, isUnsigned);
  Value ay = emitIntUnary(b, loc, Ufunc::absolute, y, isUnsigned);
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{t, t}, ValueRange{ax, ay},
      [&](OpBuilder &nb, Location l, ValueRange v) {
        Value more = cmpI(nb, l, CmpIPredicate::ne, v[1], cstI(nb, l, t, 0));
        scf::ConditionOp::create(nb, l, more, v);
      },
      [&](OpBuilder &nb, Location l, ValueRange v) {
        // Magnitudes as unsigned: |INT_MIN| stays exact.
        Value r = arith::RemUIOp::create(nb, l, v[0], v[1]);
        scf::YieldOp::create(nb, l, ValueRange{v[1], r});
      });
  return loop.getResult(0);
}
} // namespace

Value scalar::emitIntUnary(OpBuilder &b, Location loc, Ufunc u, Value x,
                           bool isUnsigned) {
  Type t = x.getType();
  bool isBool = t.isInteger(1);
  Value zero = cstI(b, loc, t, 0);
  if (u == Ufunc::positive)
    return x;
  if (u == Ufunc::negative)
    return arith::SubIOp::create(b, loc, zero, x);
  if (u == Ufunc::absolute)
    return (isUnsigned || isBool)
               ? x
               : sel(b, loc, cmpI(b, loc, CmpIPredicate::slt, x, zero),
                     arith::SubIOp::create(b, loc, zero, x), x);
  if (u == Ufunc::square)
    return isBool ? x : (Value)arith::MulIOp::create(b, loc, x, x);
  if (u == Ufunc::sign) {
    Value one = cstI(b, loc, t, 1);
    Value gt = cmpI(
        b, loc, isUnsigned ? CmpIPredicate::ugt : CmpIPredicate::sgt, x, zero);
    if (isUnsigned)
      return sel(b, loc, gt, one, zero);
    Value lt = cmpI(b, loc, CmpIPredicate::slt, x, zero);
    return sel(b, loc, gt, one, sel(b, loc, lt, cstI(b, loc, t, -1), zero));
  }
  if (u == Ufunc::reciprocal) {
    // NumPy converts 1.0 / x: 1 and -1 are their own reciprocals, any other
    // nonzero x gives 0, and 0 gives an infinity converted as x86 does it
    // (cvttsd2si, truncated to the width): INT_MIN for 32- and 64-bit signed
    // integers, 0 for the others.
    unsigned width = t.getIntOrFloatBitWidth();
    Value one = cstI(b, loc, t, 1);
    Value r = sel(b, loc, cmpI(b, loc, CmpIPredicate::eq, x, one), one, zero);
    if (!isUnsigned && !isBool) {
      Value minusOne = cstI(b, loc, t, -1);
      r = sel(b, loc, cmpI(b, loc, CmpIPredicate::eq, x, minusOne), minusOne,
              r);
    }
    Value atZero = (!isUnsigned && (width == 32 || width == 64))
                       ? cstI(b, loc, t, width == 32 ? INT32_MIN : INT64_MIN)
                       : zero;
    return sel(b, loc, cmpI(b, loc, CmpIPredicate::eq, x, zero), atZero, r);
  }
  if (u == Ufunc::invert)
    return arith::XOrIOp::create(b, loc, x, cstI(b, loc, t, -1));
  if (u == Ufunc::floor || u == Ufunc::ceil || u == Ufunc::trunc ||
      u == Ufunc::rint)
    return x;
  if (u == Ufunc::bitwise_count) { // of |x|, as a uint8
    Value ax = emitIntUnary(b, loc, Ufunc::absolute, x, isUnsigned);
    Value n = math::CtPopOp::create(b, loc, ax);
    Type u8 = b.getIntegerType(8);
    if (t.getIntOrFloatBitWidth() == 8)
      return n;
    return t.getIntOrFloatBitWidth() < 8
               ? (Value)arith::ExtUIOp::create(b, loc, u8, n)
               : (Value)arith::TruncIOp::create(b, loc, u8, n);
  }
  return {};
}

namespace {
/// The integer comparisons: signed and unsigned predicates.
struct IntCompare {
  Ufunc ufunc;
  CmpIPredicate signedPred, unsignedPred;
};
constexpr IntCompare kIntCompares[] = {
    {Ufunc::equal, CmpIPredicate::eq, CmpIPredicate::eq},
    {Ufunc::not_equal, CmpIPredicate::ne, CmpIPredicate::ne},
    {Ufunc::less, CmpIPredicate::slt, CmpIPredicate::ult},
    {Ufunc::less_equal, CmpIPredicate::sle, CmpIPredicate::ule},
    {Ufunc::greater, CmpIPredicate::sgt, CmpIPredicate::ugt},
    {Ufunc::greater_equal, CmpIPredicate::sge, CmpIPredicate::uge},
};
} // namespace

Value scalar::emitIntBinary(OpBuilder &b, Location loc, Ufunc u, Value x,
                            Value y, bool isUnsigned) {
  Type t = x.getType();
  bool isBool = t.isInteger(1);
  if (u == Ufunc::add)
    return isBool ? (Value)arith::OrIOp::create(b, loc, x, y)
                  : (Value)arith::AddIOp::create(b, loc, x, y);
  if (u == Ufunc::subtract)
    return arith::SubIOp::create(b, loc, x, y);
  if (u == Ufunc::multiply)
    return isBool ? (Value)arith::AndIOp::create(b, loc, x, y)
                  : (Value)arith::MulIOp::create(b, loc, x, y);
  if (u == Ufunc::floor_divide || u == Ufunc::remainder || u == Ufunc::fmod)
    return intDivLike(b, loc, u, x, y, isUnsigned || isBool);
  if (u == Ufunc::power) {
    if (isBool) // True ** anything is True; False ** 0 is True.
      return arith::OrIOp::create(
          b, loc, x, arith::XOrIOp::create(b, loc, y, cstI(b, loc, t, 1)));
    if (isUnsigned) { // exponents with the top bit set are not negative:
      // the power in twice the width (exponent >= 0 there), truncated, is the
      // power modulo 2^width, as NumPy's repeated multiplication gives.
      unsigned width = t.getIntOrFloatBitWidth();
      Type wide = IntegerType::get(b.getContext(), 2 * width);
      Value p = math::IPowIOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, wide, x),
          arith::ExtUIOp::create(b, loc, wide, y));
      return arith::TruncIOp::create(b, loc, t, p);
    }
    return math::IPowIOp::create(b, loc, x, y);
  }
  if (u == Ufunc::maximum || u == Ufunc::fmax)
    return (isUnsigned || isBool) ? (Value)arith::MaxUIOp::create(b, loc, x, y)
                                  : (Value)arith::MaxSIOp::create(b, loc, x, y);
  if (u == Ufunc::minimum || u == Ufunc::fmin)
    return (isUnsigned || isBool) ? (Value)arith::MinUIOp::create(b, loc, x, y)
                                  : (Value)arith::MinSIOp::create(b, loc, x, y);
  if (u == Ufunc::gcd && !isBool)
    return gcdOf(b, loc, x, y, isUnsigned);
  if (u == Ufunc::lcm && !isBool) { // |x / gcd * y|, 0 when both are 0
    Value g = gcdOf(b, loc, x, y, isUnsigned);
    Value zero = cstI(b, loc, t, 0);
    Value gZero = cmpI(b, loc, CmpIPredicate::eq, g, zero);
    Value safe = sel(b, loc, gZero, cstI(b, loc, t, 1), g);
    Value ax = emitIntUnary(b, loc, Ufunc::absolute, x, isUnsigned);
    Value ay = emitIntUnary(b, loc, Ufunc::absolute, y, isUnsigned);
    Value l = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, ax, safe), ay);
    return sel(b, loc, gZero, zero, l);
  }
  if (u == Ufunc::bitwise_and)
    return arith::AndIOp::create(b, loc, x, y);
  if (u == Ufunc::bitwise_or)
    return arith::OrIOp::create(b, loc, x, y);
  if (u == Ufunc::bitwise_xor)
    return arith::XOrIOp::create(b, loc, x, y);
  if (u == Ufunc::left_shift || u == Ufunc::right_shift) {
    unsigned width = t.getIntOrFloatBitWidth();
    Value w = cstI(b, loc, t, width);
    Value over = cmpI(b, loc, CmpIPredicate::uge, y, w);
    Value safe = sel(b, loc, over, cstI(b, loc, t, 0), y);
    if (u == Ufunc::left_shift)
      return sel(b, loc, over, cstI(b, loc, t, 0),
                 arith::ShLIOp::create(b, loc, x, safe));
    if (isUnsigned || isBool)
      return sel(b, loc, over, cstI(b, loc, t, 0),
                 arith::ShRUIOp::create(b, loc, x, safe));
    Value fill = arith::ShRSIOp::create(b, loc, x, cstI(b, loc, t, width - 1));
    return sel(b, loc, over, fill, arith::ShRSIOp::create(b, loc, x, safe));
  }
  // Comparisons: unsigned ones for unsigned integers and bools.
  for (const IntCompare &c : kIntCompares)
    if (c.ufunc == u)
      return cmpI(b, loc, isUnsigned || isBool ? c.unsignedPred : c.signedPred,
                  x, y);
  return {};
}
