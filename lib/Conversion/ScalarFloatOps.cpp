//===- ScalarFloatOps.cpp - float ufuncs and their libm calls -------------===//
//
// Part of cpnumeric.
//
// Float elements (f16 is computed in f32 by the caller): exact ops in arith,
// NumPy's npy_divmod for floor_divide and remainder, and libm through
// func.call wherever the math dialect's lowering is an approximation or an
// expansion, so that results stay within 1e-12 of NumPy's.
//
//===----------------------------------------------------------------------===//

#include "ScalarOpsInternal.h"

#include "cpn/Conversion/ScalarOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::scalar;

namespace {
/// The module that receives libm declarations. Scalar bodies are built inside
/// regions of ops under construction, which are not yet linked to a module.
thread_local ModuleOp libmModule;
} // namespace

void mlir::cpn::setLibmModule(ModuleOp module) { libmModule = module; }

/// Calls a libm function `name` (with an `f` suffix for f32), declaring it in
/// the module on first use.
Value scalar::callLibm(OpBuilder &b, Location loc, StringRef name,
                       ValueRange args) {
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

namespace {
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
} // namespace

namespace {
/// Ufuncs whose math-dialect lowerings are approximations or expansions
/// (log1p as log(1 + x), ...): libm's function, to stay within 1e-12 of
/// NumPy.
constexpr std::pair<Ufunc, const char *> kLibmUnary[] = {
    {Ufunc::cbrt, "cbrt"},     {Ufunc::expm1, "expm1"},
    {Ufunc::log1p, "log1p"},   {Ufunc::tan, "tan"},
    {Ufunc::arcsin, "asin"},   {Ufunc::arccos, "acos"},
    {Ufunc::arctan, "atan"},   {Ufunc::sinh, "sinh"},
    {Ufunc::cosh, "cosh"},     {Ufunc::tanh, "tanh"},
    {Ufunc::arcsinh, "asinh"}, {Ufunc::arccosh, "acosh"},
    {Ufunc::arctanh, "atanh"},
};

/// The float comparisons (NaN: only not_equal holds).
constexpr std::pair<Ufunc, CmpFPredicate> kFloatCompares[] = {
    {Ufunc::equal, CmpFPredicate::OEQ},
    {Ufunc::not_equal, CmpFPredicate::UNE},
    {Ufunc::less, CmpFPredicate::OLT},
    {Ufunc::less_equal, CmpFPredicate::OLE},
    {Ufunc::greater, CmpFPredicate::OGT},
    {Ufunc::greater_equal, CmpFPredicate::OGE},
};
} // namespace

Value scalar::emitFloatUnary(OpBuilder &b, Location loc, Ufunc u, Value x) {
  Type t = x.getType();
  if (u == Ufunc::negative)
    return arith::NegFOp::create(b, loc, x);
  if (u == Ufunc::positive)
    return x;
  if (u == Ufunc::absolute)
    return math::AbsFOp::create(b, loc, x);
  if (u == Ufunc::square)
    return arith::MulFOp::create(b, loc, x, x);
  if (u == Ufunc::reciprocal)
    return arith::DivFOp::create(b, loc, cstF(b, loc, t, 1.0), x);
  if (u == Ufunc::sign) {
    Value zero = cstF(b, loc, t, 0.0);
    return sel(b, loc, cmpF(b, loc, CmpFPredicate::OGT, x, zero),
               cstF(b, loc, t, 1.0),
               sel(b, loc, cmpF(b, loc, CmpFPredicate::OLT, x, zero),
                   cstF(b, loc, t, -1.0),
                   // +0 for -0.0 too, as NumPy's; NaN stays
                   sel(b, loc, cmpF(b, loc, CmpFPredicate::OEQ, x, zero), zero, x)));
  }
  if (u == Ufunc::sqrt)
    return math::SqrtOp::create(b, loc, x);
  if (u == Ufunc::exp)
    return math::ExpOp::create(b, loc, x);
  if (u == Ufunc::exp2)
    return math::Exp2Op::create(b, loc, x);
  if (u == Ufunc::log)
    return math::LogOp::create(b, loc, x);
  if (u == Ufunc::log2)
    return math::Log2Op::create(b, loc, x);
  if (u == Ufunc::log10)
    return math::Log10Op::create(b, loc, x);
  if (u == Ufunc::sin)
    return math::SinOp::create(b, loc, x);
  if (u == Ufunc::cos)
    return math::CosOp::create(b, loc, x);
  if (u == Ufunc::floor)
    return math::FloorOp::create(b, loc, x);
  if (u == Ufunc::ceil)
    return math::CeilOp::create(b, loc, x);
  if (u == Ufunc::trunc)
    return math::TruncOp::create(b, loc, x);
  if (u == Ufunc::rint)
    return math::RoundEvenOp::create(b, loc, x);
  for (auto [f, libm] : kLibmUnary)
    if (f == u)
      return callLibm(b, loc, libm, x);
  if (u == Ufunc::spacing) { // away from 0 (up for -0.0); NaN for inf
    double inf = std::numeric_limits<double>::infinity();
    Value away =
        sel(b, loc, cmpF(b, loc, CmpFPredicate::OLT, x, cstF(b, loc, t, 0.0)),
            cstF(b, loc, t, -inf), cstF(b, loc, t, inf));
    return arith::SubFOp::create(b, loc,
                                 callLibm(b, loc, "nextafter", {x, away}), x);
  }
  return {};
}

Value scalar::floatMinMax(OpBuilder &b, Location loc, Ufunc u, Value x, Value y,
                          bool tiesToFirst) {
  bool isMax = u == Ufunc::maximum || u == Ufunc::fmax;
  bool nanWins = u == Ufunc::maximum || u == Ufunc::minimum;
  // x wins when it is strictly on the right side of y (or equal, for
  // tiesToFirst), or when it is the NaN that propagates (maximum/minimum)
  // or y is the NaN that is skipped (fmax/fmin). Equal values are +-0 or
  // the same value: the winner decides the sign of a zero.
  CmpFPredicate p = isMax ? (tiesToFirst ? CmpFPredicate::OGE : CmpFPredicate::OGT)
                          : (tiesToFirst ? CmpFPredicate::OLE : CmpFPredicate::OLT);
  Value side = cmpF(b, loc, p, x, y);
  Value nan = nanWins ? cmpF(b, loc, CmpFPredicate::UNO, x, x)
                      : cmpF(b, loc, CmpFPredicate::UNO, y, y);
  Value wins = arith::OrIOp::create(b, loc, side, nan);
  return sel(b, loc, wins, x, y);
}

Value scalar::emitFloatBinary(OpBuilder &b, Location loc, Ufunc u, Value x,
                              Value y) {
  if (u == Ufunc::add)
    return arith::AddFOp::create(b, loc, x, y);
  if (u == Ufunc::subtract)
    return arith::SubFOp::create(b, loc, x, y);
  if (u == Ufunc::multiply)
    return arith::MulFOp::create(b, loc, x, y);
  if (u == Ufunc::divide)
    return arith::DivFOp::create(b, loc, x, y);
  if (u == Ufunc::floor_divide)
    return floatDivmod(b, loc, x, y).first;
  if (u == Ufunc::remainder)
    return floatDivmod(b, loc, x, y).second;
  if (u == Ufunc::fmod)
    return arith::RemFOp::create(b, loc, x, y);
  if (u == Ufunc::power)
    return math::PowFOp::create(b, loc, x, y);
  if (u == Ufunc::maximum || u == Ufunc::minimum || u == Ufunc::fmax ||
      u == Ufunc::fmin)
    return floatMinMax(b, loc, u, x, y, /*tiesToFirst=*/false);
  if (u == Ufunc::copysign)
    return callLibm(b, loc, "copysign", {x, y});
  if (u == Ufunc::arctan2)
    return callLibm(b, loc, "atan2", {x, y});
  if (u == Ufunc::hypot)
    return callLibm(b, loc, "hypot", {x, y});
  if (u == Ufunc::nextafter)
    return callLibm(b, loc, "nextafter", {x, y});
  if (u == Ufunc::logaddexp || u == Ufunc::logaddexp2) {
    // NumPy's npy_logaddexp: exact for x == y, log1p of the smaller term.
    bool two = u == Ufunc::logaddexp2;
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
  for (auto [f, pred] : kFloatCompares)
    if (f == u)
      return cmpF(b, loc, pred, x, y);
  return {};
}
