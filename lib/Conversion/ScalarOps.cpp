//===- ScalarOps.cpp - NumPy's scalar semantics in arith/math
//--------------===//
//
// Part of cpnumeric.
//
// Each ufunc is written so that its result equals NumPy's bit for bit on
// integers and for exact float ops: integer division by zero gives 0, shifts by
// the bit width or more give 0 (or -1), Python-style signs of `remainder` and
// `floor_divide`, NaN-propagating maximum/minimum, and so on. Transcendentals
// call libm through the math dialect.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cpn;

namespace {
using arith::CmpFPredicate;
using arith::CmpIPredicate;

Value cstF(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, t, b.getFloatAttr(t, v));
}
Value cstI(OpBuilder &b, Location loc, Type t, int64_t v) {
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
}
Value cmpF(OpBuilder &b, Location loc, CmpFPredicate p, Value x, Value y) {
  return arith::CmpFOp::create(b, loc, p, x, y);
}
Value cmpI(OpBuilder &b, Location loc, CmpIPredicate p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value sel(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

/// The module that receives libm declarations. Scalar bodies are built inside
/// regions of ops under construction, which are not yet linked to a module.
thread_local ModuleOp libmModule;

/// Calls a libm function `name` (with an `f` suffix for f32), declaring it in
/// the module on first use.
Value callLibm(OpBuilder &b, Location loc, StringRef name, ValueRange args) {
  Type t = args[0].getType();
  std::string fn = name.str();
  if (t.isF32())
    fn += "f";
  ModuleOp module = libmModule;
  if (!module)
    llvm::report_fatal_error("cpn: setLibmModule was not called");
  auto func = module.lookupSymbol<func::FuncOp>(fn);
  if (!func) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<Type> ins(args.size(), t);
    func = func::FuncOp::create(b, loc, fn, b.getFunctionType(ins, {t}));
    func.setPrivate();
  }
  return func::CallOp::create(b, loc, func, args).getResult(0);
}

/// NumPy's float floor division and remainder (npy_divmod).
std::pair<Value, Value> floatDivmod(OpBuilder &b, Location loc, Value a,
                                    Value d) {
  Type t = a.getType();
  Value zero = cstF(b, loc, t, 0.0);
  Value mod = arith::RemFOp::create(b, loc, a, d);
  Value div =
      arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, a, mod), d);
  // Adjust mod and div when the signs of mod and divisor differ.
  Value modNeg = cmpF(b, loc, CmpFPredicate::OLT, mod, zero);
  Value dNeg = cmpF(b, loc, CmpFPredicate::OLT, d, zero);
  Value modNonZero = cmpF(b, loc, CmpFPredicate::UNE, mod, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, modNeg, dNeg);
  Value adjust = arith::AndIOp::create(b, loc, modNonZero, signsDiffer);
  Value modAdj =
      sel(b, loc, adjust, arith::AddFOp::create(b, loc, mod, d), mod);
  Value one = cstF(b, loc, t, 1.0);
  Value divAdj =
      sel(b, loc, adjust, arith::SubFOp::create(b, loc, div, one), div);
  // A zero remainder takes the divisor's sign.
  modAdj =
      sel(b, loc, modNonZero, modAdj, callLibm(b, loc, "copysign", {zero, d}));
  // Round the quotient to the nearest integer the way NumPy does.
  Value fl = math::FloorOp::create(b, loc, divAdj);
  Value frac = arith::SubFOp::create(b, loc, divAdj, fl);
  Value half = cstF(b, loc, t, 0.5);
  Value bump = cmpF(b, loc, CmpFPredicate::OGT, frac, half);
  fl = sel(b, loc, bump, arith::AddFOp::create(b, loc, fl, one), fl);
  Value divNonZero = cmpF(b, loc, CmpFPredicate::UNE, divAdj, zero);
  Value q = arith::DivFOp::create(b, loc, a, d);
  Value floordiv =
      sel(b, loc, divNonZero, fl, callLibm(b, loc, "copysign", {zero, q}));
  // Division by zero: NumPy returns a / d and fmod(a, d).
  Value dZero = cmpF(b, loc, CmpFPredicate::OEQ, d, zero);
  floordiv = sel(b, loc, dZero, q, floordiv);
  modAdj = sel(b, loc, dZero, mod, modAdj);
  return {floordiv, modAdj};
}

/// Integer division family with NumPy's results for a zero divisor (0) and
/// for MIN / -1 (wraps), both of which are undefined in LLVM.
Value intDivLike(OpBuilder &b, Location loc, StringRef name, Value a, Value d,
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
  if (name == "floor_divide") {
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
  if (!isUnsigned && name == "remainder") {
    Value rNeg = cmpI(b, loc, CmpIPredicate::slt, r, zero);
    Value dNeg = cmpI(b, loc, CmpIPredicate::slt, d, zero);
    Value adjust =
        arith::AndIOp::create(b, loc, cmpI(b, loc, CmpIPredicate::ne, r, zero),
                              arith::XOrIOp::create(b, loc, rNeg, dNeg));
    r = sel(b, loc, adjust, arith::AddIOp::create(b, loc, r, d), r);
  }
  return sel(b, loc, bad, zero, r);
}

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

Value emitFloatUnary(OpBuilder &b, Location loc, StringRef name, Value x) {
  Type t = x.getType();
  if (name == "negative")
    return arith::NegFOp::create(b, loc, x);
  if (name == "positive")
    return x;
  if (name == "absolute")
    return math::AbsFOp::create(b, loc, x);
  if (name == "square")
    return arith::MulFOp::create(b, loc, x, x);
  if (name == "reciprocal")
    return arith::DivFOp::create(b, loc, cstF(b, loc, t, 1.0), x);
  if (name == "sign") {
    Value zero = cstF(b, loc, t, 0.0);
    return sel(b, loc, cmpF(b, loc, CmpFPredicate::OGT, x, zero),
               cstF(b, loc, t, 1.0),
               sel(b, loc, cmpF(b, loc, CmpFPredicate::OLT, x, zero),
                   cstF(b, loc, t, -1.0), x));
  }
  if (name == "sqrt")
    return math::SqrtOp::create(b, loc, x);
  if (name == "exp")
    return math::ExpOp::create(b, loc, x);
  if (name == "exp2")
    return math::Exp2Op::create(b, loc, x);
  if (name == "log")
    return math::LogOp::create(b, loc, x);
  if (name == "log2")
    return math::Log2Op::create(b, loc, x);
  if (name == "log10")
    return math::Log10Op::create(b, loc, x);
  if (name == "sin")
    return math::SinOp::create(b, loc, x);
  if (name == "cos")
    return math::CosOp::create(b, loc, x);
  if (name == "floor")
    return math::FloorOp::create(b, loc, x);
  if (name == "ceil")
    return math::CeilOp::create(b, loc, x);
  if (name == "trunc")
    return math::TruncOp::create(b, loc, x);
  if (name == "rint")
    return math::RoundEvenOp::create(b, loc, x);
  // Functions whose math-dialect lowerings are approximations or expansions
  // (log1p as log(1 + x), ...) call libm to stay within 1e-12 of NumPy.
  StringRef libm = llvm::StringSwitch<StringRef>(name)
                       .Case("cbrt", "cbrt")
                       .Case("expm1", "expm1")
                       .Case("log1p", "log1p")
                       .Case("tan", "tan")
                       .Case("arcsin", "asin")
                       .Case("arccos", "acos")
                       .Case("arctan", "atan")
                       .Case("sinh", "sinh")
                       .Case("cosh", "cosh")
                       .Case("tanh", "tanh")
                       .Case("arcsinh", "asinh")
                       .Case("arccosh", "acosh")
                       .Case("arctanh", "atanh")
                       .Default("");
  if (!libm.empty())
    return callLibm(b, loc, libm, x);
  if (name == "spacing") { // away from 0 (up for -0.0); NaN for inf
    double inf = std::numeric_limits<double>::infinity();
    Value away =
        sel(b, loc, cmpF(b, loc, CmpFPredicate::OLT, x, cstF(b, loc, t, 0.0)),
            cstF(b, loc, t, -inf), cstF(b, loc, t, inf));
    return arith::SubFOp::create(b, loc,
                                 callLibm(b, loc, "nextafter", {x, away}), x);
  }
  return {};
}

Value emitFloatBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                      Value y) {
  if (name == "add")
    return arith::AddFOp::create(b, loc, x, y);
  if (name == "subtract")
    return arith::SubFOp::create(b, loc, x, y);
  if (name == "multiply")
    return arith::MulFOp::create(b, loc, x, y);
  if (name == "divide")
    return arith::DivFOp::create(b, loc, x, y);
  if (name == "floor_divide")
    return floatDivmod(b, loc, x, y).first;
  if (name == "remainder")
    return floatDivmod(b, loc, x, y).second;
  if (name == "fmod")
    return arith::RemFOp::create(b, loc, x, y);
  if (name == "power")
    return math::PowFOp::create(b, loc, x, y);
  if (name == "maximum")
    return arith::MaximumFOp::create(b, loc, x, y);
  if (name == "minimum")
    return arith::MinimumFOp::create(b, loc, x, y);
  if (name == "fmax")
    return arith::MaxNumFOp::create(b, loc, x, y);
  if (name == "fmin")
    return arith::MinNumFOp::create(b, loc, x, y);
  if (name == "copysign")
    return callLibm(b, loc, "copysign", {x, y});
  if (name == "arctan2")
    return callLibm(b, loc, "atan2", {x, y});
  if (name == "hypot")
    return callLibm(b, loc, "hypot", {x, y});
  if (name == "nextafter")
    return callLibm(b, loc, "nextafter", {x, y});
  if (name == "logaddexp" || name == "logaddexp2") {
    // NumPy's npy_logaddexp: exact for x == y, log1p of the smaller term.
    bool two = name == "logaddexp2";
    Type t = x.getType();
    Value tmp = arith::SubFOp::create(b, loc, x, y);
    Value zero = cstF(b, loc, t, 0.0);
    auto tail = [&](Value v) -> Value { // log1p(exp(v)) or log2(1 + 2**v)
      if (!two)
        return callLibm(b, loc, "log1p",
                        math::ExpOp::create(b, loc, v).getResult());
      Value l = callLibm(b, loc, "log1p",
                         math::Exp2Op::create(b, loc, v).getResult());
      return arith::MulFOp::create(b, loc, l,
                                   cstF(b, loc, t, 1.0 / std::log(2.0)));
    };
    Value pos = arith::AddFOp::create(b, loc, x,
                                      tail(arith::NegFOp::create(b, loc, tmp)));
    Value neg = arith::AddFOp::create(b, loc, y, tail(tmp));
    Value same = arith::AddFOp::create(
        b, loc, x, cstF(b, loc, t, two ? 1.0 : std::log(2.0)));
    Value r =
        sel(b, loc, cmpF(b, loc, CmpFPredicate::OGT, tmp, zero), pos,
            sel(b, loc, cmpF(b, loc, CmpFPredicate::OLE, tmp, zero), neg, tmp));
    return sel(b, loc, cmpF(b, loc, CmpFPredicate::OEQ, x, y), same, r);
  }
  auto pred = llvm::StringSwitch<std::optional<CmpFPredicate>>(name)
                  .Case("equal", CmpFPredicate::OEQ)
                  .Case("not_equal", CmpFPredicate::UNE)
                  .Case("less", CmpFPredicate::OLT)
                  .Case("less_equal", CmpFPredicate::OLE)
                  .Case("greater", CmpFPredicate::OGT)
                  .Case("greater_equal", CmpFPredicate::OGE)
                  .Default(std::nullopt);
  if (pred)
    return cmpF(b, loc, *pred, x, y);
  return {};
}

Value emitIntUnary(OpBuilder &b, Location loc, StringRef name, Value x,
                   bool isUnsigned) {
  Type t = x.getType();
  bool isBool = t.isInteger(1);
  Value zero = cstI(b, loc, t, 0);
  if (name == "positive")
    return x;
  if (name == "negative")
    return arith::SubIOp::create(b, loc, zero, x);
  if (name == "absolute")
    return (isUnsigned || isBool)
               ? x
               : sel(b, loc, cmpI(b, loc, CmpIPredicate::slt, x, zero),
                     arith::SubIOp::create(b, loc, zero, x), x);
  if (name == "square")
    return isBool ? x : (Value)arith::MulIOp::create(b, loc, x, x);
  if (name == "sign") {
    Value one = cstI(b, loc, t, 1);
    Value gt = cmpI(
        b, loc, isUnsigned ? CmpIPredicate::ugt : CmpIPredicate::sgt, x, zero);
    if (isUnsigned)
      return sel(b, loc, gt, one, zero);
    Value lt = cmpI(b, loc, CmpIPredicate::slt, x, zero);
    return sel(b, loc, gt, one, sel(b, loc, lt, cstI(b, loc, t, -1), zero));
  }
  if (name == "reciprocal") {
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
  if (name == "invert")
    return arith::XOrIOp::create(b, loc, x, cstI(b, loc, t, -1));
  if (name == "floor" || name == "ceil" || name == "trunc" || name == "rint")
    return x;
  if (name == "bitwise_count") { // of |x|, as a uint8
    Value ax = emitIntUnary(b, loc, "absolute", x, isUnsigned);
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

/// Euclid's algorithm on magnitudes (an scf.while in the element's body).
Value gcdOf(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned) {
  Type t = x.getType();
  Value ax = emitIntUnary(b, loc, "absolute", x, isUnsigned);
  Value ay = emitIntUnary(b, loc, "absolute", y, isUnsigned);
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

Value emitIntBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                    Value y, bool isUnsigned) {
  Type t = x.getType();
  bool isBool = t.isInteger(1);
  if (name == "add")
    return isBool ? (Value)arith::OrIOp::create(b, loc, x, y)
                  : (Value)arith::AddIOp::create(b, loc, x, y);
  if (name == "subtract")
    return arith::SubIOp::create(b, loc, x, y);
  if (name == "multiply")
    return isBool ? (Value)arith::AndIOp::create(b, loc, x, y)
                  : (Value)arith::MulIOp::create(b, loc, x, y);
  if (name == "floor_divide" || name == "remainder" || name == "fmod")
    return intDivLike(b, loc, name, x, y, isUnsigned || isBool);
  if (name == "power") {
    if (isBool) // True ** anything is True; False ** 0 is True.
      return arith::OrIOp::create(
          b, loc, x, arith::XOrIOp::create(b, loc, y, cstI(b, loc, t, 1)));
    return math::IPowIOp::create(b, loc, x, y);
  }
  if (name == "maximum" || name == "fmax")
    return (isUnsigned || isBool) ? (Value)arith::MaxUIOp::create(b, loc, x, y)
                                  : (Value)arith::MaxSIOp::create(b, loc, x, y);
  if (name == "minimum" || name == "fmin")
    return (isUnsigned || isBool) ? (Value)arith::MinUIOp::create(b, loc, x, y)
                                  : (Value)arith::MinSIOp::create(b, loc, x, y);
  if (name == "gcd" && !isBool)
    return gcdOf(b, loc, x, y, isUnsigned);
  if (name == "lcm" && !isBool) { // |x / gcd * y|, 0 when both are 0
    Value g = gcdOf(b, loc, x, y, isUnsigned);
    Value zero = cstI(b, loc, t, 0);
    Value gZero = cmpI(b, loc, CmpIPredicate::eq, g, zero);
    Value safe = sel(b, loc, gZero, cstI(b, loc, t, 1), g);
    Value ax = emitIntUnary(b, loc, "absolute", x, isUnsigned);
    Value ay = emitIntUnary(b, loc, "absolute", y, isUnsigned);
    Value l = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, ax, safe), ay);
    return sel(b, loc, gZero, zero, l);
  }
  if (name == "bitwise_and")
    return arith::AndIOp::create(b, loc, x, y);
  if (name == "bitwise_or")
    return arith::OrIOp::create(b, loc, x, y);
  if (name == "bitwise_xor")
    return arith::XOrIOp::create(b, loc, x, y);
  if (name == "left_shift" || name == "right_shift") {
    unsigned width = t.getIntOrFloatBitWidth();
    Value w = cstI(b, loc, t, width);
    Value over = cmpI(b, loc, CmpIPredicate::uge, y, w);
    Value safe = sel(b, loc, over, cstI(b, loc, t, 0), y);
    if (name == "left_shift")
      return sel(b, loc, over, cstI(b, loc, t, 0),
                 arith::ShLIOp::create(b, loc, x, safe));
    if (isUnsigned || isBool)
      return sel(b, loc, over, cstI(b, loc, t, 0),
                 arith::ShRUIOp::create(b, loc, x, safe));
    Value fill = arith::ShRSIOp::create(b, loc, x, cstI(b, loc, t, width - 1));
    return sel(b, loc, over, fill, arith::ShRSIOp::create(b, loc, x, safe));
  }
  auto pred = llvm::StringSwitch<std::optional<CmpIPredicate>>(name)
                  .Case("equal", CmpIPredicate::eq)
                  .Case("not_equal", CmpIPredicate::ne)
                  .Case("less", CmpIPredicate::slt)
                  .Case("less_equal", CmpIPredicate::sle)
                  .Case("greater", CmpIPredicate::sgt)
                  .Case("greater_equal", CmpIPredicate::sge)
                  .Default(std::nullopt);
  if (pred) {
    CmpIPredicate p = *pred;
    if (isUnsigned || isBool) {
      switch (*pred) {
      case CmpIPredicate::slt:
        p = CmpIPredicate::ult;
        break;
      case CmpIPredicate::sle:
        p = CmpIPredicate::ule;
        break;
      case CmpIPredicate::sgt:
        p = CmpIPredicate::ugt;
        break;
      case CmpIPredicate::sge:
        p = CmpIPredicate::uge;
        break;
      default:
        break;
      }
    }
    return cmpI(b, loc, p, x, y);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Complex elements: NumPy's complex loops (npy_math's complex functions and
// the lexicographic order of its comparisons) on complex<f32|f64>.
//===----------------------------------------------------------------------===//

Value re(OpBuilder &b, Location loc, Value z) {
  return complex::ReOp::create(b, loc, z);
}
Value im(OpBuilder &b, Location loc, Value z) {
  return complex::ImOp::create(b, loc, z);
}
Value mkC(OpBuilder &b, Location loc, Type t, Value r, Value i) {
  return complex::CreateOp::create(b, loc, t, r, i);
}
Value cstC(OpBuilder &b, Location loc, Type t, double r, double i) {
  Type ft = cast<ComplexType>(t).getElementType();
  return complex::ConstantOp::create(
      b, loc, t,
      b.getArrayAttr({b.getFloatAttr(ft, r), b.getFloatAttr(ft, i)}));
}
Value isNanF(OpBuilder &b, Location loc, Value x) {
  return cmpF(b, loc, CmpFPredicate::UNO, x, x);
}
Value isNanC(OpBuilder &b, Location loc, Value z) {
  return arith::OrIOp::create(b, loc, isNanF(b, loc, re(b, loc, z)),
                              isNanF(b, loc, im(b, loc, z)));
}
/// z times a real constant, part by part (no inf * 0 cross terms).
Value scaleC(OpBuilder &b, Location loc, Value z, double c) {
  Type ft = cast<ComplexType>(z.getType()).getElementType();
  Value k = cstF(b, loc, ft, c);
  return mkC(b, loc, z.getType(),
             arith::MulFOp::create(b, loc, re(b, loc, z), k),
             arith::MulFOp::create(b, loc, im(b, loc, z), k));
}

/// NumPy's complex order: x < y when x.real < y.real (and no imaginary part
/// is NaN), or the real parts are equal and x.imag < y.imag (<= for `orEqual`).
Value lessC(OpBuilder &b, Location loc, Value x, Value y, bool orEqual) {
  Value xr = re(b, loc, x), xi = im(b, loc, x);
  Value yr = re(b, loc, y), yi = im(b, loc, y);
  Value noNan =
      arith::AndIOp::create(b, loc, cmpF(b, loc, CmpFPredicate::ORD, xi, xi),
                            cmpF(b, loc, CmpFPredicate::ORD, yi, yi));
  Value first = arith::AndIOp::create(
      b, loc, cmpF(b, loc, CmpFPredicate::OLT, xr, yr), noNan);
  Value second = arith::AndIOp::create(
      b, loc, cmpF(b, loc, CmpFPredicate::OEQ, xr, yr),
      cmpF(b, loc, orEqual ? CmpFPredicate::OLE : CmpFPredicate::OLT, xi, yi));
  return arith::OrIOp::create(b, loc, first, second);
}

Value emitComplexBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                        Value y);

Value emitComplexUnary(OpBuilder &b, Location loc, StringRef name, Value z) {
  Type t = z.getType();
  if (name == "negative")
    return complex::NegOp::create(b, loc, z);
  if (name == "positive")
    return z;
  if (name == "conjugate")
    return complex::ConjOp::create(b, loc, z);
  if (name == "absolute")
    return complex::AbsOp::create(b, loc, z);
  if (name == "real")
    return re(b, loc, z);
  if (name == "imag")
    return im(b, loc, z);
  if (name == "square") // NumPy's loop, as multiply
    return emitComplexBinary(b, loc, "multiply", z, z);
  if (name == "reciprocal")
    return complex::DivOp::create(b, loc, cstC(b, loc, t, 1.0, 0.0), z);
  if (name == "sign")
    return complex::SignOp::create(b, loc, z);
  if (name == "sqrt")
    return complex::SqrtOp::create(b, loc, z);
  if (name == "exp")
    return complex::ExpOp::create(b, loc, z);
  if (name == "exp2")
    return complex::ExpOp::create(b, loc, scaleC(b, loc, z, std::log(2.0)));
  if (name == "expm1")
    return complex::Expm1Op::create(b, loc, z);
  if (name == "log")
    return complex::LogOp::create(b, loc, z);
  if (name == "log1p")
    return complex::Log1pOp::create(b, loc, z);
  if (name == "log2" || name == "log10")
    return scaleC(b, loc, complex::LogOp::create(b, loc, z),
                  1.0 / std::log(name == "log2" ? 2.0 : 10.0));
  if (name == "sin")
    return complex::SinOp::create(b, loc, z);
  if (name == "cos")
    return complex::CosOp::create(b, loc, z);
  if (name == "tan")
    return complex::TanOp::create(b, loc, z);
  if (name == "tanh")
    return complex::TanhOp::create(b, loc, z);
  if (name == "sinh" || name == "cosh") {
    // sinh(x+iy) = sinh x cos y + i cosh x sin y; cosh swaps sinh and cosh.
    Value x = re(b, loc, z), y = im(b, loc, z);
    Value sh = callLibm(b, loc, "sinh", x), ch = callLibm(b, loc, "cosh", x);
    Value c = math::CosOp::create(b, loc, y),
          s = math::SinOp::create(b, loc, y);
    bool isSinh = name == "sinh";
    return mkC(b, loc, t, arith::MulFOp::create(b, loc, isSinh ? sh : ch, c),
               arith::MulFOp::create(b, loc, isSinh ? ch : sh, s));
  }
  return {};
}

/// NumPy's npy_cpow: z**0 is 1, 0**w is 0 for a positive real w and NaN
/// otherwise; everything else exp(w log z).
Value powC(OpBuilder &b, Location loc, Value z, Value w) {
  Type t = z.getType();
  Type ft = cast<ComplexType>(t).getElementType();
  Value zero = cstF(b, loc, ft, 0.0);
  auto isZero = [&](Value v) {
    return arith::AndIOp::create(
        b, loc, cmpF(b, loc, CmpFPredicate::OEQ, re(b, loc, v), zero),
        cmpF(b, loc, CmpFPredicate::OEQ, im(b, loc, v), zero));
  };
  Value general = complex::PowOp::create(b, loc, z, w);
  Value wPosReal = arith::AndIOp::create(
      b, loc, cmpF(b, loc, CmpFPredicate::OGT, re(b, loc, w), zero),
      cmpF(b, loc, CmpFPredicate::OEQ, im(b, loc, w), zero));
  double nan = std::numeric_limits<double>::quiet_NaN();
  Value zeroBase = sel(b, loc, wPosReal, cstC(b, loc, t, 0.0, 0.0),
                       cstC(b, loc, t, nan, nan));
  Value r = sel(b, loc, isZero(z), zeroBase, general);
  return sel(b, loc, isZero(w), cstC(b, loc, t, 1.0, 0.0), r);
}

Value emitComplexBinary(OpBuilder &b, Location loc, StringRef name, Value x,
                        Value y) {
  if (name == "add")
    return complex::AddOp::create(b, loc, x, y);
  if (name == "subtract")
    return complex::SubOp::create(b, loc, x, y);
  if (name == "multiply") {
    // NumPy's loop: (ac - bd) + (ad + bc)i, without C99's recovery of
    // infinite results from NaN parts (complex.mul's lowering has it:
    // inf+infj where NumPy gives nan+nanj).
    Value a = re(b, loc, x), bb = im(b, loc, x), c = re(b, loc, y),
          d = im(b, loc, y);
    Value r = arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, a, c),
                                    arith::MulFOp::create(b, loc, bb, d));
    Value i = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a, d),
                                    arith::MulFOp::create(b, loc, bb, c));
    return mkC(b, loc, x.getType(), r, i);
  }
  if (name == "divide")
    return complex::DivOp::create(b, loc, x, y);
  if (name == "power")
    return powC(b, loc, x, y);
  if (name == "equal")
    return complex::EqualOp::create(b, loc, x, y);
  if (name == "not_equal")
    return complex::NotEqualOp::create(b, loc, x, y);
  if (name == "less")
    return lessC(b, loc, x, y, false);
  if (name == "less_equal")
    return lessC(b, loc, x, y, true);
  if (name == "greater")
    return lessC(b, loc, y, x, false);
  if (name == "greater_equal")
    return lessC(b, loc, y, x, true);
  // maximum/minimum keep the first operand when it is NaN or wins the order;
  // fmax/fmin keep it when the second is NaN or the first wins.
  if (name == "maximum" || name == "minimum") {
    Value wins = lessC(b, loc, name == "maximum" ? y : x,
                       name == "maximum" ? x : y, true);
    return sel(b, loc, arith::OrIOp::create(b, loc, isNanC(b, loc, x), wins), x,
               y);
  }
  if (name == "fmax" || name == "fmin") {
    Value wins =
        lessC(b, loc, name == "fmax" ? y : x, name == "fmax" ? x : y, true);
    return sel(b, loc, arith::OrIOp::create(b, loc, isNanC(b, loc, y), wins), x,
               y);
  }
  return {};
}
} // namespace

void mlir::cpn::setLibmModule(ModuleOp module) { libmModule = module; }

Value mlir::cpn::emitMixedSignCompare(OpBuilder &b, Location loc,
                                      StringRef name, Value x, Value y,
                                      bool xUnsigned) {
  Value unsignedCmp = emitIntBinary(b, loc, name, x, y, /*isUnsigned=*/true);
  if (!unsignedCmp)
    return {};
  Value s = xUnsigned ? y : x;
  Value negative = cmpI(b, loc, CmpIPredicate::slt, s, cstI(b, loc, s.getType(), 0));
  // With the signed operand negative, the unsigned one is the greater.
  bool xGreater = xUnsigned;
  bool holds = name == "not_equal" ||
               (xGreater && (name == "greater" || name == "greater_equal")) ||
               (!xGreater && (name == "less" || name == "less_equal"));
  return sel(b, loc, negative, cstI(b, loc, b.getI1Type(), holds), unsignedCmp);
}

Value mlir::cpn::emitScalarUfunc(OpBuilder &b, Location loc, StringRef name,
                                 ValueRange args, Type resultType,
                                 bool isUnsigned) {
  Value x = args[0];
  Type t = x.getType();
  // Logical and classification ufuncs work on any element type.
  if (name == "logical_not")
    return arith::XOrIOp::create(b, loc, truthy(b, loc, x),
                                 cstI(b, loc, b.getI1Type(), 1));
  if (name == "logical_and")
    return arith::AndIOp::create(b, loc, truthy(b, loc, x),
                                 truthy(b, loc, args[1]));
  if (name == "logical_or")
    return arith::OrIOp::create(b, loc, truthy(b, loc, x),
                                truthy(b, loc, args[1]));
  if (name == "logical_xor")
    return arith::XOrIOp::create(b, loc, truthy(b, loc, x),
                                 truthy(b, loc, args[1]));
  if (isa<ComplexType>(t) &&
      (name == "isnan" || name == "isinf" || name == "isfinite")) {
    // Of either part (isfinite: of both).
    Type bt = b.getI1Type();
    Value r = emitScalarUfunc(b, loc, name, {re(b, loc, x)}, bt, false);
    Value i = emitScalarUfunc(b, loc, name, {im(b, loc, x)}, bt, false);
    return name == "isfinite" ? (Value)arith::AndIOp::create(b, loc, r, i)
                              : (Value)arith::OrIOp::create(b, loc, r, i);
  }
  if (name == "complex")
    return mkC(b, loc, resultType, x, args[1]);
  if (name == "bitcast")
    return t == resultType
               ? x
               : (Value)arith::BitcastOp::create(b, loc, resultType, x);
  if (!isa<ComplexType>(t) && (name == "real" || name == "conjugate"))
    return x;
  if (!isa<ComplexType>(t) && name == "imag")
    return emitZero(b, loc, t);
  if (name == "isnan" || name == "isinf" || name == "isfinite" ||
      name == "signbit") {
    if (!isa<FloatType>(t)) {
      if (name == "isfinite")
        return cstI(b, loc, b.getI1Type(), 1);
      if (name == "signbit" && !isUnsigned && !t.isInteger(1))
        return cmpI(b, loc, CmpIPredicate::slt, x, cstI(b, loc, t, 0));
      return cstI(b, loc, b.getI1Type(), 0);
    }
    if (name == "isnan")
      return cmpF(b, loc, CmpFPredicate::UNO, x, x);
    Value inf = cstF(b, loc, t, std::numeric_limits<double>::infinity());
    Value ax = math::AbsFOp::create(b, loc, x);
    if (name == "isinf")
      return cmpF(b, loc, CmpFPredicate::OEQ, ax, inf);
    if (name == "isfinite")
      return cmpF(b, loc, CmpFPredicate::ONE, ax, inf);
    Type it = b.getIntegerType(t.getIntOrFloatBitWidth());
    Value bits = arith::BitcastOp::create(b, loc, it, x);
    return cmpI(b, loc, CmpIPredicate::slt, bits, cstI(b, loc, it, 0));
  }
  Value r;
  if (t.isF16() && isa<FloatType>(resultType)) {
    // NumPy's half loops: compute in float32, round the result to half.
    Type f32 = b.getF32Type();
    SmallVector<Value> wide;
    for (Value a : args)
      wide.push_back(arith::ExtFOp::create(b, loc, f32, a));
    r = emitScalarUfunc(b, loc, name, wide, f32, false);
    return r ? (Value)arith::TruncFOp::create(b, loc, resultType, r) : r;
  }
  if (t.isF16()) { // comparisons and the like: exact on the widened values
    SmallVector<Value> wide;
    for (Value a : args)
      wide.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), a));
    return emitScalarUfunc(b, loc, name, wide, resultType, false);
  }
  if (isa<ComplexType>(t))
    r = args.size() == 1 ? emitComplexUnary(b, loc, name, x)
                         : emitComplexBinary(b, loc, name, x, args[1]);
  else if (isa<FloatType>(t))
    r = args.size() == 1 ? emitFloatUnary(b, loc, name, x)
                         : emitFloatBinary(b, loc, name, x, args[1]);
  else if (isa<IntegerType>(t))
    r = args.size() == 1 ? emitIntUnary(b, loc, name, x, isUnsigned)
                         : emitIntBinary(b, loc, name, x, args[1], isUnsigned);
  if (r && r.getType() != resultType)
    return {};
  return r;
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

Value mlir::cpn::emitFpErrorBits(OpBuilder &b, Location loc, StringRef name,
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
  if (name == "cast") {
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
      (name == "floor_divide" || name == "remainder" || name == "fmod")) {
    flag(cmpI(b, loc, CmpIPredicate::eq, args[1], cstI(b, loc, at, 0)), Divide);
    return bits;
  }
  if (!isa<FloatType>(rt) || !isa<FloatType>(at))
    return {};
  // Which errors the function can have at all.
  bool overflows = llvm::is_contained(
      {"add", "subtract", "multiply", "divide", "floor_divide", "power",
       "square", "reciprocal", "exp", "exp2", "expm1", "sinh", "cosh", "hypot"},
      name);
  // The pole where a finite operand gives an infinity: divide by zero.
  Value pole;
  if (name == "divide" || name == "floor_divide")
    pole = isEq(args[1], 0.0);
  else if (name == "log" || name == "log2" || name == "log10" ||
           name == "reciprocal" || name == "power")
    pole = isEq(args[0], 0.0);
  else if (name == "log1p")
    pole = isEq(args[0], -1.0);
  else if (name == "arctanh")
    pole = isEq(math::AbsFOp::create(b, loc, args[0]), 1.0);
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

Value mlir::cpn::emitReductionIdentity(OpBuilder &b, Location loc,
                                       StringRef kind, Type t,
                                       bool isUnsigned) {
  if (isa<ComplexType>(t)) {
    double inf = std::numeric_limits<double>::infinity();
    double v = kind == "sum"                         ? 0.0
               : kind == "prod"                      ? 1.0
               : (kind == "min" || kind == "argmin") ? inf
                                                     : -inf;
    return cstC(b, loc, t, v, kind == "prod" ? 0.0 : v);
  }
  if (auto ft = dyn_cast<FloatType>(t)) {
    double inf = std::numeric_limits<double>::infinity();
    double v = kind == "sum"                         ? 0.0
               : kind == "prod"                      ? 1.0
               : (kind == "min" || kind == "argmin") ? inf
                                                     : -inf;
    return cstF(b, loc, t, v);
  }
  unsigned w = t.getIntOrFloatBitWidth();
  if (kind == "sum" || kind == "any")
    return cstI(b, loc, t, 0);
  if (kind == "prod" || kind == "all")
    return cstI(b, loc, t, 1);
  bool isMin = kind == "min" || kind == "argmin";
  APInt v =
      (isUnsigned || w == 1)
          ? (isMin ? APInt::getMaxValue(w) : APInt::getMinValue(w))
          : (isMin ? APInt::getSignedMaxValue(w) : APInt::getSignedMinValue(w));
  return arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
}

Value mlir::cpn::emitReductionCombine(OpBuilder &b, Location loc,
                                      StringRef kind, Value acc, Value x,
                                      bool isUnsigned) {
  Type t = acc.getType();
  if (kind == "any")
    return arith::OrIOp::create(b, loc, acc, truthy(b, loc, x));
  if (kind == "all")
    return arith::AndIOp::create(b, loc, acc, truthy(b, loc, x));
  StringRef ufunc = kind == "sum"    ? "add"
                    : kind == "prod" ? "multiply"
                    : kind == "min"  ? "minimum"
                                     : "maximum";
  return emitScalarUfunc(b, loc, ufunc, {acc, x}, t, isUnsigned);
}

Value mlir::cpn::emitZero(OpBuilder &b, Location loc, Type t) {
  if (isa<ComplexType>(t))
    return cstC(b, loc, t, 0.0, 0.0);
  return arith::ConstantOp::create(b, loc, t, b.getZeroAttr(t));
}
