//===- ScalarOps.cpp - NumPy's scalar semantics in arith/math -------------===//
//
// Part of cpnumeric.
//
// Each ufunc is written so that its result equals NumPy's bit for bit on
// integers and for exact float ops: integer division by zero gives 0, shifts by
// the bit width or more give 0 (or -1), Python-style signs of `remainder` and
// `floor_divide`, NaN-propagating maximum/minimum, and so on. Transcendentals
// call libm through the math dialect.
//
// This file holds the entry points of cpn/Conversion/ScalarOps.h: the ops of
// any element type (logical, classification, casts, error checks, reduction
// identities); the rest goes to the family of the element type
// (ScalarOpsInternal.h).
//
//===----------------------------------------------------------------------===//

#include "ScalarOpsInternal.h"

#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Trace/FpErrors.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::scalar;

namespace {
Value truthy(OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  if (t.isInteger(1))
    return x;
  if (isa<ComplexType>(t))
    return arith::OrIOp::create(
        b, loc, truthy(b, loc, complex::ReOp::create(b, loc, x)),
        truthy(b, loc, complex::ImOp::create(b, loc, x)));
  if (isa<FloatType>(t))
    return cmpF(b, loc, CmpFPredicate::UNE, x, cstF(b, loc, t, 0.0));
  return cmpI(b, loc, CmpIPredicate::ne, x, cstI(b, loc, t, 0));
}
} // namespace

Value mlir::cpn::emitMixedSignCompare(OpBuilder &b, Location loc, Ufunc u,
                                      Value x, Value y, bool xUnsigned) {
  Value unsignedCmp = emitIntBinary(b, loc, u, x, y, /*isUnsigned=*/true);
  if (!unsignedCmp)
    return {};
  Value s = xUnsigned ? y : x;
  Value negative =
      cmpI(b, loc, CmpIPredicate::slt, s, cstI(b, loc, s.getType(), 0));
  // With the signed operand negative, the unsigned one is the greater.
  bool xGreater = xUnsigned;
  bool holds =
      u == Ufunc::not_equal ||
      (xGreater && (u == Ufunc::greater || u == Ufunc::greater_equal)) ||
      (!xGreater && (u == Ufunc::less || u == Ufunc::less_equal));
  return sel(b, loc, negative, cstI(b, loc, b.getI1Type(), holds), unsignedCmp);
}

namespace {
/// The ufuncs of any element type: logical ones, classification, complex
/// from its parts, the parts and conjugate of real elements, bitcast. Null
/// for the others.
Value anyElementType(OpBuilder &b, Location loc, Ufunc u, ValueRange args,
                     Type resultType, bool isUnsigned) {
  Value x = args[0];
  Type t = x.getType();
  if (u == Ufunc::logical_not)
    return arith::XOrIOp::create(b, loc, truthy(b, loc, x),
                                 cstI(b, loc, b.getI1Type(), 1));
  if (u == Ufunc::logical_and)
    return arith::AndIOp::create(b, loc, truthy(b, loc, x),
                                 truthy(b, loc, args[1]));
  if (u == Ufunc::logical_or)
    return arith::OrIOp::create(b, loc, truthy(b, loc, x),
                                truthy(b, loc, args[1]));
  if (u == Ufunc::logical_xor)
    return arith::XOrIOp::create(b, loc, truthy(b, loc, x),
                                 truthy(b, loc, args[1]));
  if (isa<ComplexType>(t) &&
      (u == Ufunc::isnan || u == Ufunc::isinf || u == Ufunc::isfinite)) {
    // Of either part (isfinite: of both).
    Type bt = b.getI1Type();
    Value r = emitScalarUfunc(b, loc, u, {re(b, loc, x)}, bt, false);
    Value i = emitScalarUfunc(b, loc, u, {im(b, loc, x)}, bt, false);
    return u == Ufunc::isfinite ? (Value)arith::AndIOp::create(b, loc, r, i)
                                : (Value)arith::OrIOp::create(b, loc, r, i);
  }
  if (u == Ufunc::complex)
    return mkC(b, loc, resultType, x, args[1]);
  if (u == Ufunc::bitcast)
    return t == resultType
               ? x
               : (Value)arith::BitcastOp::create(b, loc, resultType, x);
  if (!isa<ComplexType>(t) && (u == Ufunc::real || u == Ufunc::conjugate))
    return x;
  if (!isa<ComplexType>(t) && u == Ufunc::imag)
    return emitZero(b, loc, t);
  if (u == Ufunc::isnan || u == Ufunc::isinf || u == Ufunc::isfinite ||
      u == Ufunc::signbit) {
    if (!isa<FloatType>(t)) {
      if (u == Ufunc::isfinite)
        return cstI(b, loc, b.getI1Type(), 1);
      if (u == Ufunc::signbit && !isUnsigned && !t.isInteger(1))
        return cmpI(b, loc, CmpIPredicate::slt, x, cstI(b, loc, t, 0));
      return cstI(b, loc, b.getI1Type(), 0);
    }
    if (u == Ufunc::isnan)
      return cmpF(b, loc, CmpFPredicate::UNO, x, x);
    Value inf = cstF(b, loc, t, std::numeric_limits<double>::infinity());
    Value ax = math::AbsFOp::create(b, loc, x);
    if (u == Ufunc::isinf)
      return cmpF(b, loc, CmpFPredicate::OEQ, ax, inf);
    if (u == Ufunc::isfinite)
      return cmpF(b, loc, CmpFPredicate::ONE, ax, inf);
    Type it = b.getIntegerType(t.getIntOrFloatBitWidth());
    Value bits = arith::BitcastOp::create(b, loc, it, x);
    return cmpI(b, loc, CmpIPredicate::slt, bits, cstI(b, loc, it, 0));
  }
  return {};
}

/// The ufuncs lowered per element family (ScalarIntOps, ScalarFloatOps,
/// ScalarComplexOps); float16 computes in float32 as NumPy's half loops.
Value byElementFamily(OpBuilder &b, Location loc, Ufunc u, ValueRange args,
                      Type resultType, bool isUnsigned) {
  Value x = args[0];
  Type t = x.getType();
  Value r;
  if (t.isF16() && args.size() == 2 &&
      (u == Ufunc::maximum || u == Ufunc::minimum || u == Ufunc::fmax ||
       u == Ufunc::fmin)) // NumPy's half loops: the first operand on a tie
    return floatMinMax(b, loc, u, x, args[1], /*tiesToFirst=*/true);
  if (t.isF16() && isa<FloatType>(resultType)) {
    // NumPy's half loops: compute in float32, round the result to half.
    Type f32 = b.getF32Type();
    SmallVector<Value> wide;
    for (Value a : args)
      wide.push_back(arith::ExtFOp::create(b, loc, f32, a));
    r = emitScalarUfunc(b, loc, u, wide, f32, false);
    return r ? (Value)arith::TruncFOp::create(b, loc, resultType, r) : r;
  }
  if (t.isF16()) { // comparisons and the like: exact on the widened values
    SmallVector<Value> wide;
    for (Value a : args)
      wide.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), a));
    return emitScalarUfunc(b, loc, u, wide, resultType, false);
  }
  if (isa<ComplexType>(t))
    r = args.size() == 1 ? emitComplexUnary(b, loc, u, x)
                         : emitComplexBinary(b, loc, u, x, args[1]);
  else if (isa<FloatType>(t))
    r = args.size() == 1 ? emitFloatUnary(b, loc, u, x)
                         : emitFloatBinary(b, loc, u, x, args[1]);
  else if (isa<IntegerType>(t))
    r = args.size() == 1 ? emitIntUnary(b, loc, u, x, isUnsigned)
                         : emitIntBinary(b, loc, u, x, args[1], isUnsigned);
  if (r && r.getType() != resultType)
    return {};
  return r;
}
} // namespace

Value mlir::cpn::emitScalarUfunc(OpBuilder &b, Location loc, Ufunc u,
                                 ValueRange args, Type resultType,
                                 bool isUnsigned) {
  // Where each ufunc is lowered. No default: a Ufunc case without a lowering
  // does not build (-Werror=switch in lib/Conversion/CMakeLists.txt).
  switch (u) {
  case Ufunc::logical_not:
  case Ufunc::logical_and:
  case Ufunc::logical_or:
  case Ufunc::logical_xor:
  case Ufunc::isnan:
  case Ufunc::isinf:
  case Ufunc::isfinite:
  case Ufunc::signbit:
  case Ufunc::complex:
  case Ufunc::real:
  case Ufunc::imag:
  case Ufunc::conjugate:
  case Ufunc::bitcast:
    if (Value r = anyElementType(b, loc, u, args, resultType, isUnsigned))
      return r;
    // real, imag and conjugate of complex elements: the complex family
    return byElementFamily(b, loc, u, args, resultType, isUnsigned);
  case Ufunc::negative:
  case Ufunc::positive:
  case Ufunc::absolute:
  case Ufunc::sign:
  case Ufunc::square:
  case Ufunc::reciprocal:
  case Ufunc::sqrt:
  case Ufunc::cbrt:
  case Ufunc::exp:
  case Ufunc::exp2:
  case Ufunc::expm1:
  case Ufunc::log:
  case Ufunc::log2:
  case Ufunc::log10:
  case Ufunc::log1p:
  case Ufunc::sin:
  case Ufunc::cos:
  case Ufunc::tan:
  case Ufunc::arcsin:
  case Ufunc::arccos:
  case Ufunc::arctan:
  case Ufunc::sinh:
  case Ufunc::cosh:
  case Ufunc::tanh:
  case Ufunc::arcsinh:
  case Ufunc::arccosh:
  case Ufunc::arctanh:
  case Ufunc::floor:
  case Ufunc::ceil:
  case Ufunc::trunc:
  case Ufunc::rint:
  case Ufunc::invert:
  case Ufunc::bitwise_count:
  case Ufunc::spacing:
  case Ufunc::add:
  case Ufunc::gcd:
  case Ufunc::lcm:
  case Ufunc::nextafter:
  case Ufunc::subtract:
  case Ufunc::multiply:
  case Ufunc::divide:
  case Ufunc::floor_divide:
  case Ufunc::remainder:
  case Ufunc::fmod:
  case Ufunc::power:
  case Ufunc::maximum:
  case Ufunc::minimum:
  case Ufunc::fmax:
  case Ufunc::fmin:
  case Ufunc::arctan2:
  case Ufunc::hypot:
  case Ufunc::copysign:
  case Ufunc::logaddexp:
  case Ufunc::logaddexp2:
  case Ufunc::equal:
  case Ufunc::not_equal:
  case Ufunc::less:
  case Ufunc::less_equal:
  case Ufunc::greater:
  case Ufunc::greater_equal:
  case Ufunc::bitwise_and:
  case Ufunc::bitwise_or:
  case Ufunc::bitwise_xor:
  case Ufunc::left_shift:
  case Ufunc::right_shift:
    return byElementFamily(b, loc, u, args, resultType, isUnsigned);
  case Ufunc::cast: // cpn.cast: emitScalarCast
    return {};
  }
  llvm_unreachable("a Ufunc case the switch does not name");
}

Value mlir::cpn::emitScalarCast(OpBuilder &b, Location loc, Value x, Type to,
                                bool srcUnsigned, bool dstUnsigned) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1))
    return truthy(b, loc, x);
  if (auto ct = dyn_cast<ComplexType>(to)) { // the real part, imaginary 0
    Type ft = ct.getElementType();
    if (auto cf = dyn_cast<ComplexType>(from))
      return mkC(b, loc, to,
                 emitScalarCast(b, loc, re(b, loc, x), ft, false, false),
                 emitScalarCast(b, loc, im(b, loc, x), ft, false, false));
    return mkC(b, loc, to, emitScalarCast(b, loc, x, ft, srcUnsigned, false),
               cstF(b, loc, ft, 0.0));
  }
  if (isa<ComplexType>(from)) // NumPy discards the imaginary part
    return emitScalarCast(b, loc, re(b, loc, x), to, false, dstUnsigned);
  bool srcU = srcUnsigned || from.isInteger(1);
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (isa<IntegerType>(from) && isa<FloatType>(to))
    return srcU ? (Value)arith::UIToFPOp::create(b, loc, to, x)
                : (Value)arith::SIToFPOp::create(b, loc, to, x);
  if (isa<FloatType>(from) && isa<IntegerType>(to)) {
    // As C casts on x86 do: through int64 for narrower integers, so that
    // -1.0 becomes 255 in uint8.
    if (to.getIntOrFloatBitWidth() == 64)
      return dstUnsigned ? (Value)arith::FPToUIOp::create(b, loc, to, x)
                         : (Value)arith::FPToSIOp::create(b, loc, to, x);
    Value wide = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::TruncIOp::create(b, loc, to, wide);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return srcU ? (Value)arith::ExtUIOp::create(b, loc, to, x)
                : (Value)arith::ExtSIOp::create(b, loc, to, x);
  return arith::TruncIOp::create(b, loc, to, x);
}

Value mlir::cpn::emitFpErrorBits(OpBuilder &b, Location loc, Ufunc u,
                                 ValueRange args, Value result,
                                 unsigned checks) {
  enum : unsigned { Divide = 1, Overflow = 2, Invalid = 4 };
  Type i32 = b.getI32Type();
  Value bits;
  auto flag = [&](Value cond, unsigned bit) {
    if (!(checks & bit))
      return;
    Value v = sel(b, loc, cond, cstI(b, loc, i32, bit), cstI(b, loc, i32, 0));
    bits = bits ? (Value)arith::OrIOp::create(b, loc, bits, v) : v;
  };
  auto isNan = [&](Value x) { return cmpF(b, loc, CmpFPredicate::UNO, x, x); };
  auto isInf = [&](Value x) {
    Value inf = cstF(b, loc, x.getType(), INFINITY);
    return cmpF(b, loc, CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, x),
                inf);
  };
  auto isFinite = [&](Value x) {
    Value inf = cstF(b, loc, x.getType(), INFINITY);
    return cmpF(b, loc, CmpFPredicate::ONE, math::AbsFOp::create(b, loc, x),
                inf);
  };
  auto isEq = [&](Value x, double c) {
    return cmpF(b, loc, CmpFPredicate::OEQ, x, cstF(b, loc, x.getType(), c));
  };
  auto both = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(b, loc, x, y);
  };
  Type rt = result.getType();
  Type at = args[0].getType();
  if (u == Ufunc::cast) {
    if (isa<FloatType>(at) && isa<IntegerType>(rt) && !rt.isInteger(1))
      flag(arith::XOrIOp::create(b, loc, isFinite(args[0]),
                                 cstI(b, loc, b.getI1Type(), 1)),
           Invalid);
    else if (isa<FloatType>(at) && isa<FloatType>(rt) &&
             rt.getIntOrFloatBitWidth() < at.getIntOrFloatBitWidth())
      flag(both(isInf(result), isFinite(args[0])), Overflow);
    return bits;
  }
  if (isa<IntegerType>(rt) && args.size() == 2 &&
      (u == Ufunc::floor_divide || u == Ufunc::remainder || u == Ufunc::fmod)) {
    flag(cmpI(b, loc, CmpIPredicate::eq, args[1], cstI(b, loc, at, 0)), Divide);
    return bits;
  }
  if (!isa<FloatType>(rt) || !isa<FloatType>(at))
    return {};
  // Which errors the function can have besides invalid
  // (cpn/Trace/FpErrors.h; the trace checks only the ufuncs listed there).
  const ::cpn::FpErrorFacts *facts = ::cpn::fpErrorFacts(stringifyUfunc(u));
  bool overflows = facts && facts->overflows;
  // The pole where a finite operand gives an infinity: divide by zero.
  Value pole;
  switch (facts ? facts->pole : ::cpn::FpPole::None) {
  case ::cpn::FpPole::None:
    break;
  case ::cpn::FpPole::SecondZero:
    pole = isEq(args[1], 0.0);
    break;
  case ::cpn::FpPole::FirstZero:
    pole = isEq(args[0], 0.0);
    break;
  case ::cpn::FpPole::FirstMinusOne:
    pole = isEq(args[0], -1.0);
    break;
  case ::cpn::FpPole::FirstMagnitudeOne:
    pole = isEq(math::AbsFOp::create(b, loc, args[0]), 1.0);
    break;
  }
  if (checks & Invalid) {
    Value ordered = cmpF(b, loc, CmpFPredicate::ORD, args[0],
                         args.size() == 2 ? args[1] : args[0]);
    flag(both(isNan(result), ordered), Invalid);
  }
  if ((pole || overflows) && (checks & (Divide | Overflow))) {
    Value finite = isFinite(args[0]);
    if (args.size() == 2)
      finite = both(finite, isFinite(args[1]));
    Value inf = both(isInf(result), finite);
    if (pole) {
      flag(both(inf, pole), Divide);
      if (overflows)
        flag(both(inf, arith::XOrIOp::create(b, loc, pole,
                                             cstI(b, loc, b.getI1Type(), 1))),
             Overflow);
    } else {
      flag(inf, Overflow);
    }
  }
  return bits;
}

/// Whether a reduction keeps the least element (min, argmin), for its
/// identity.
static bool keepsLeast(ReduceKind kind) {
  return kind == ReduceKind::min || kind == ReduceKind::argmin;
}

Value mlir::cpn::emitReductionIdentity(OpBuilder &b, Location loc,
                                       ReduceKind kind, Type t,
                                       bool isUnsigned) {
  double inf = std::numeric_limits<double>::infinity();
  double floatIdentity = kind == ReduceKind::sum    ? 0.0
                         : kind == ReduceKind::prod ? 1.0
                         : keepsLeast(kind)         ? inf
                                                    : -inf;
  if (isa<ComplexType>(t))
    return cstC(b, loc, t, floatIdentity,
                kind == ReduceKind::prod ? 0.0 : floatIdentity);
  if (isa<FloatType>(t))
    return cstF(b, loc, t, floatIdentity);
  unsigned w = t.getIntOrFloatBitWidth();
  if (kind == ReduceKind::sum || kind == ReduceKind::any)
    return cstI(b, loc, t, 0);
  if (kind == ReduceKind::prod || kind == ReduceKind::all)
    return cstI(b, loc, t, 1);
  bool isMin = keepsLeast(kind);
  APInt v =
      (isUnsigned || w == 1)
          ? (isMin ? APInt::getMaxValue(w) : APInt::getMinValue(w))
          : (isMin ? APInt::getSignedMaxValue(w) : APInt::getSignedMinValue(w));
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
}

Value mlir::cpn::emitReductionCombine(OpBuilder &b, Location loc,
                                      ReduceKind kind, Value acc, Value x,
                                      bool isUnsigned) {
  Type t = acc.getType();
  Ufunc ufunc = Ufunc::add;
  switch (kind) {
  case ReduceKind::any:
    return arith::OrIOp::create(b, loc, acc, truthy(b, loc, x));
  case ReduceKind::all:
    return arith::AndIOp::create(b, loc, acc, truthy(b, loc, x));
  case ReduceKind::sum:
    ufunc = Ufunc::add;
    break;
  case ReduceKind::prod:
    ufunc = Ufunc::multiply;
    break;
  case ReduceKind::min:
  case ReduceKind::max:
    if (isa<FloatType>(t)) {
      // IEEE's maximum/minimum (NaN propagates), which LLVM vectorizes as
      // a reduction; a select's ties (floatMinMax, the elementwise ufuncs)
      // would keep the loop scalar. NumPy's own reductions leave a tie of
      // +-0 to their lane order, and so does this one: `nsz` lets x86 drop
      // the sign-of-zero blends, 3 instructions a vector instead of 6 (max
      // of 10^5 float64 ~2x faster).
      Value a = acc, v = x;
      if (t.isF16()) {
        a = arith::ExtFOp::create(b, loc, b.getF32Type(), acc);
        v = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
      }
      auto nsz = arith::FastMathFlags::nsz;
      Value r = kind == ReduceKind::min
                    ? (Value)arith::MinimumFOp::create(b, loc, a, v, nsz)
                    : (Value)arith::MaximumFOp::create(b, loc, a, v, nsz);
      return t.isF16() ? (Value)arith::TruncFOp::create(b, loc, t, r) : r;
    }
    ufunc = kind == ReduceKind::min ? Ufunc::minimum : Ufunc::maximum;
    break;
  case ReduceKind::argmin:
  case ReduceKind::argmax:
    // An arg reduction combines (value, index) pairs: its lowering
    // compares with emitArgBetter; as a plain reduction it keeps the value.
    ufunc = kind == ReduceKind::argmin ? Ufunc::minimum : Ufunc::maximum;
    break;
  }
  return emitScalarUfunc(b, loc, ufunc, {acc, x}, t, isUnsigned);
}

Value mlir::cpn::emitZero(OpBuilder &b, Location loc, Type t) {
  if (isa<ComplexType>(t))
    return cstC(b, loc, t, 0.0, 0.0);
  return arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
}
