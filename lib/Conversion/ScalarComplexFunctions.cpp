//===- ScalarComplexFunctions.cpp - complex elementary functions ----------===//
//
// Part of cpnumeric.
//
// The complex elementary functions of NumPy's loops (npy_math's, which call
// glibc's cexp/clog/csqrt/csinh/ctanh or FreeBSD msun's), C99 Annex G's
// values for infinite and NaN parts included: exp, log, sqrt, the parts of
// sinh/cosh (sin/cos through them) and tanh (tan), and atan2. The complex
// ufuncs (ScalarComplexOps.cpp) compose them.
//
//===----------------------------------------------------------------------===//

#include "ScalarOpsInternal.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::scalar;

static Value isNanF(OpBuilder &b, Location loc, Value x) {
  return cmpF(b, loc, CmpFPredicate::UNO, x, x);
}

/// atan2(y, x), C's on two zeros too: +-0 or +-pi by the signs. MLIR folds
/// math.atan2(0, 0) of constants to NaN, so log(0j) of a constant was
/// -inf+nanj (fuzz 500:15280); libm's atan2 called per element costs the
/// vectorized loop half its speed.
Value scalar::atan2Z(OpBuilder &b, Location loc, Value y, Value x) {
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0), one = cstF(b, loc, ft, 1.0);
  Value both = f.both(f.eq(x, zero), f.eq(y, zero));
  Value xNeg = f.lt(f.cps(one, x), zero); // -0.0 too
  Value special = f.cps(sel(b, loc, xNeg, cstF(b, loc, ft, M_PI), zero), y);
  return sel(b, loc, both, special, math::Atan2Op::create(b, loc, y, x));
}

/// exp(x + iy) as glibc's cexp, which NumPy calls: e^x (cos y + i sin y)
/// with e^x split past e^709 (a finite result there stays finite),
/// y = 0 keeping its zero (exp(800+0j) is inf+0j, not inf+nanj), and C99
/// Annex G's values for infinite and NaN parts (complex.exp's lowering
/// multiplies: exp(-inf+nanj) was nan+nanj where glibc gives 0+0j).
Value scalar::expC(OpBuilder &b, Location loc, Value z) {
  Type t = z.getType();
  Value x = re(b, loc, z), y = im(b, loc, z);
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity());
  // Past t = (max exponent - 1) ln 2, e^t goes into cos y and sin y and
  // e^(x - t) is taken, as glibc does.
  double tv = ft.isF32() ? 127 * std::log(2.0) : 1023 * std::log(2.0);
  Value tBig = cmpF(b, loc, CmpFPredicate::OGT, x, cstF(b, loc, ft, tv));
  Value et =
      sel(b, loc, tBig, cstF(b, loc, ft, std::exp(tv)), cstF(b, loc, ft, 1.0));
  Value ex = math::ExpOp::create(
      b, loc, sel(b, loc, tBig, f.sub(x, cstF(b, loc, ft, tv)), x));
  Value r = f.mul(ex, f.mul(math::CosOp::create(b, loc, y), et));
  Value i = f.mul(ex, f.mul(math::SinOp::create(b, loc, y), et));
  // y = 0: e^x + i y (NaN x too).
  Value yz = f.eq(y, zero);
  r = sel(b, loc, yz, math::ExpOp::create(b, loc, x), r);
  i = sel(b, loc, yz, y, i);
  // x = -inf, y infinite or NaN: +0 + i copysign(0, y); x = +inf: inf + i NaN
  // (finite y: the formula's +-0 and +-inf by cos y and sin y).
  Value yBad = arith::XOrIOp::create(b, loc, f.isFinite(y),
                                     cstI(b, loc, b.getI1Type(), 1));
  Value xInf = f.isInf(x), xNeg = f.lt(x, zero);
  Value special = f.both(xInf, yBad);
  r = sel(b, loc, special, sel(b, loc, xNeg, zero, inf), r);
  i = sel(b, loc, special, sel(b, loc, xNeg, f.cps(zero, y), f.sub(y, y)), i);
  return mkC(b, loc, t, r, i);
}

/// log(x + iy) as glibc's clog: log|z| + i atan2(y, x), |z| near 1 through
/// log1p so that log(0.6+0.8j) is not a rounding error, an infinite part
/// making the real part +inf whatever the other (NaN included).
Value scalar::logC(OpBuilder &b, Location loc, Value z) {
  Type t = z.getType();
  Value x = re(b, loc, z), y = im(b, loc, z);
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value ax = f.abs(x), ay = f.abs(y);
  Value big = arith::MaximumFOp::create(b, loc, ax, ay);
  Value small = arith::MinimumFOp::create(b, loc, ax, ay);
  Value one = cstF(b, loc, ft, 1.0), half = cstF(b, loc, ft, 0.5);
  // |z| = big sqrt(1 + (small / big)^2) (vectorized, where libm's hypot
  // is a call per element); big = 0 gives log 0 = -inf.
  Value q = f.div(small, big);
  Value mag = f.mul(big, math::SqrtOp::create(
                             b, loc, math::FmaOp::create(b, loc, q, q, one)));
  mag = sel(b, loc, f.eq(big, cstF(b, loc, ft, 0.0)), big, mag);
  // Near |z| = 1 (0.5 <= big < 2, small < 1), where log|z| is small: half
  // log1p(u) of u = |z|^2 - 1 = (big - 1)(big + 1) + small^2, as
  // log(w) u / (w - 1) with w = 1 + u (Goldberg's; a few ulps, vectorized
  // where libm's log1p is a call per element), u where w rounds to 1. One
  // log of w or of |z|.
  Value u = math::FmaOp::create(b, loc, small, small,
                                f.mul(f.sub(big, one), f.add(big, one)));
  Value near1 = f.both(f.both(cmpF(b, loc, CmpFPredicate::OGE, big, half),
                              f.lt(big, cstF(b, loc, ft, 2.0))),
                       f.lt(small, one));
  Value w = f.add(one, u);
  Value l = math::LogOp::create(b, loc, sel(b, loc, near1, w, mag));
  Value l1p = sel(b, loc, f.eq(w, one), u, f.div(f.mul(l, u), f.sub(w, one)));
  Value r = sel(b, loc, near1, f.mul(half, l1p), l);
  Value anyInf = f.either(f.isInf(x), f.isInf(y));
  r = sel(b, loc, anyInf,
          cstF(b, loc, ft, std::numeric_limits<double>::infinity()), r);
  return mkC(b, loc, t, r, atan2Z(b, loc, y, x));
}

/// sqrt(x + iy) as glibc's csqrt (Kahan's): with d = |z|, for x > 0
/// r = sqrt((d + x) / 2) and i = y / 2r, else |y| / 2s + i copysign(s, y)
/// with s = sqrt((d - x) / 2), scaled by 1/4 near the largest float; a real
/// negative x gives an exact 0 real part (complex.sqrt's lowering left a
/// rounding error there), and C99 Annex G's values for infinite and NaN
/// parts.
Value scalar::sqrtC(OpBuilder &b, Location loc, Value z) {
  Type t = z.getType();
  Value x = re(b, loc, z), y = im(b, loc, z);
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0), half = cstF(b, loc, ft, 0.5),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity()),
        nan = cstF(b, loc, ft, std::numeric_limits<double>::quiet_NaN());
  double limit = ft.isF32() ? 1e37 : 1e307;
  Value ax = f.abs(x), ay = f.abs(y);
  Value huge =
      f.either(cmpF(b, loc, CmpFPredicate::OGT, ax, cstF(b, loc, ft, limit)),
               cmpF(b, loc, CmpFPredicate::OGT, ay, cstF(b, loc, ft, limit)));
  Value k = sel(b, loc, huge, cstF(b, loc, ft, 0.25), cstF(b, loc, ft, 1.0));
  Value back = sel(b, loc, huge, cstF(b, loc, ft, 2.0), cstF(b, loc, ft, 1.0));
  Value sx = f.mul(x, k), sy = f.mul(y, k);
  Value d = callLibm(b, loc, "hypot", {sx, sy});
  Value pos = cmpF(b, loc, CmpFPredicate::OGT, x, zero);
  // x > 0.
  Value r1 = math::SqrtOp::create(b, loc, f.mul(half, f.add(d, sx)));
  Value i1 = f.div(f.mul(half, sy), r1);
  // x <= 0 (y = 0 too: s = sqrt(-x), 0 / s = 0).
  Value s2 = math::SqrtOp::create(b, loc, f.mul(half, f.sub(d, sx)));
  Value r2 = f.abs(f.div(f.mul(half, sy), s2));
  Value i2 = f.cps(s2, y);
  Value r = f.mul(sel(b, loc, pos, r1, r2), back);
  Value i = f.mul(sel(b, loc, pos, i1, i2), back);
  // y = 0: sqrt(|x|) + i y for x >= 0 (r2's 0 / s2 is NaN at x = 0; |x|:
  // sqrt(-0.0) is -0.0 where csqrt(-0 + 0i) is +0 + 0i).
  Value yz = f.eq(y, zero);
  Value xNonNeg = cmpF(b, loc, CmpFPredicate::OGE, x, zero);
  r = sel(b, loc, f.both(yz, xNonNeg), math::SqrtOp::create(b, loc, ax), r);
  i = sel(b, loc, yz, f.cps(zero, y), i);
  i = sel(b, loc, f.both(yz, f.lt(x, zero)),
          f.cps(math::SqrtOp::create(b, loc, f.abs(x)), y), i);
  // Infinite and NaN parts: y = +-inf: inf + i y; x = -inf: 0 + i copysign(
  // inf, y) (NaN + i inf for NaN y); x = +inf: inf + i copysign(0, y) (inf +
  // i NaN for NaN y); any other NaN: NaN + i NaN.
  Value yNan = isNanF(b, loc, y), xNan = isNanF(b, loc, x);
  Value xInf = f.isInf(x), yInf = f.isInf(y), xNeg = f.lt(x, zero);
  r = sel(b, loc, f.either(xNan, yNan), nan, r);
  i = sel(b, loc, f.either(xNan, yNan), nan, i);
  Value rXi = sel(b, loc, xNeg, sel(b, loc, yNan, nan, zero), inf);
  Value iXi =
      sel(b, loc, xNeg, f.cps(inf, y), sel(b, loc, yNan, nan, f.cps(zero, y)));
  r = sel(b, loc, xInf, rXi, r);
  i = sel(b, loc, xInf, iXi, i);
  r = sel(b, loc, yInf, inf, r);
  i = sel(b, loc, yInf, y, i);
  return mkC(b, loc, t, r, i);
}

/// The parts of sinh(x + iy) (cosh when !isSinh) as NumPy's npy_csinh and
/// npy_ccosh (FreeBSD's msun, C99 Annex G): sinh x cos y + i cosh x sin y
/// for finite parts, a real argument keeping its zero imaginary part
/// (sinh(800+0j) is inf+0j, not inf+nanj), and the standard's values where
/// a part is infinite or NaN. `forSin`: the parts of sinh(iz) for sin z,
/// whose -i turns +inf + i NaN into NaN - i inf where glibc's csin gives
/// NaN + i inf: -inf there.
std::pair<Value, Value> scalar::sinhCoshParts(OpBuilder &b, Location loc,
                                              Value x, Value y, bool isSinh,
                                              bool forSin) {
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity());
  auto fin = [&](Value v) {
    return cmpF(b, loc, CmpFPredicate::OLT, math::AbsFOp::create(b, loc, v),
                inf);
  };
  auto eq = [&](Value p, Value q) {
    return cmpF(b, loc, CmpFPredicate::OEQ, p, q);
  };
  Value sh = callLibm(b, loc, "sinh", x), ch = callLibm(b, loc, "cosh", x);
  Value c = math::CosOp::create(b, loc, y), s = math::SinOp::create(b, loc, y);
  Value xf = fin(x), yf = fin(y), xz = eq(x, zero), yz = eq(y, zero);
  Value xinf = eq(math::AbsFOp::create(b, loc, x), inf);
  Value yny = arith::SubFOp::create(b, loc, y, y); // NaN unless y is finite
  Value xx = f.mul(x, x);
  // Both finite.
  Value r = f.mul(isSinh ? sh : ch, c);
  Value i = sel(b, loc, yz, isSinh ? y : f.mul(f.cps(zero, x), y),
                f.mul(isSinh ? ch : sh, s));
  // From the last case of npy_csinh/npy_ccosh to the first: NaN x, y != 0.
  Value R = f.mul(xx, yny), I = f.mul(f.add(x, x), yny);
  // x infinite, y finite.
  R = sel(b, loc, xinf, isSinh ? f.mul(x, c) : f.mul(inf, c), R);
  I = sel(b, loc, xinf, isSinh ? f.mul(inf, s) : f.mul(x, s), I);
  // x infinite, y infinite or NaN (after the line above: y finite there).
  Value yNotFinite =
      cmpF(b, loc, CmpFPredicate::UGE, math::AbsFOp::create(b, loc, y), inf);
  Value xiyn = arith::AndIOp::create(b, loc, xinf, yNotFinite);
  R = sel(b, loc, xiyn,
          forSin ? arith::NegFOp::create(b, loc, xx).getResult() : xx, R);
  I = sel(b, loc, xiyn, f.mul(x, yny), I);
  // x finite, y infinite or NaN.
  R = sel(b, loc, xf, yny, R);
  I = sel(b, loc, xf, f.mul(x, yny), I);
  // y zero, x infinite or NaN.
  Value rY0 = isSinh ? x : xx;
  Value iY0 = isSinh ? y
                     : sel(b, loc, xinf, f.mul(f.cps(zero, x), y),
                           f.cps(zero, f.mul(f.add(x, x), y)));
  R = sel(b, loc, yz, rY0, R);
  I = sel(b, loc, yz, iY0, I);
  // x zero, y infinite or NaN.
  R = sel(b, loc, xz, isSinh ? f.cps(zero, f.mul(x, yny)) : yny, R);
  I = sel(b, loc, xz, isSinh ? yny : f.cps(zero, f.mul(x, yny)), I);
  Value both = arith::AndIOp::create(b, loc, xf, yf);
  return {sel(b, loc, both, r, R), sel(b, loc, both, i, I)};
}

/// The parts of tanh(x + iy) as NumPy's ctanh (glibc's; FreeBSD's msun):
/// Kahan's formula with t = tan y, s = sinh x, and the standard's values
/// for infinite or NaN parts and |x| >= 22.
std::pair<Value, Value> scalar::tanhParts(OpBuilder &b, Location loc, Value x,
                                          Value y) {
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0), one = cstF(b, loc, ft, 1.0),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity());
  Value ax = math::AbsFOp::create(b, loc, x),
        ay = math::AbsFOp::create(b, loc, y);
  Value xf = cmpF(b, loc, CmpFPredicate::OLT, ax, inf);
  Value yf = cmpF(b, loc, CmpFPredicate::OLT, ay, inf);
  Value xnan = isNanF(b, loc, x);
  Value yinf = cmpF(b, loc, CmpFPredicate::OEQ, ay, inf);
  Value yz = cmpF(b, loc, CmpFPredicate::OEQ, y, zero);
  Value sc =
      f.mul(math::SinOp::create(b, loc, y), math::CosOp::create(b, loc, y));
  // General: beta = 1 + t^2, rho = sqrt(1 + s^2), denominator 1 + beta s^2.
  Value tt = math::TanOp::create(b, loc, y);
  Value beta = f.add(one, f.mul(tt, tt));
  Value sx = callLibm(b, loc, "sinh", x);
  Value rho = math::SqrtOp::create(b, loc, f.add(one, f.mul(sx, sx)));
  Value den = f.add(one, f.mul(beta, f.mul(sx, sx)));
  Value r = f.div(f.mul(f.mul(beta, rho), sx), den), i = f.div(tt, den);
  // |x| >= 22: tanh x rounds to +-1; 4 sin y cos y exp(-2|x|).
  Value big = cmpF(b, loc, CmpFPredicate::OGE, ax, cstF(b, loc, ft, 22.0));
  Value em = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, ax));
  r = sel(b, loc, big, f.cps(one, x), r);
  i = sel(b, loc, big, f.mul(f.mul(cstF(b, loc, ft, 4.0), sc), f.mul(em, em)),
          i);
  // y infinite or NaN (x finite): NaN + i NaN, +-0 + i NaN for x = +-0
  // (C11's DR 471, as glibc's ctanh that NumPy calls).
  Value yny = arith::SubFOp::create(b, loc, y, y);
  r = sel(b, loc, yf, r,
          sel(b, loc, cmpF(b, loc, CmpFPredicate::OEQ, x, zero), x, yny));
  i = sel(b, loc, yf, i, yny);
  // x infinite or NaN.
  Value rX = sel(b, loc, xnan, x, f.cps(one, x));
  Value iX = sel(b, loc, xnan, sel(b, loc, yz, y, f.mul(x, y)),
                 f.cps(zero, sel(b, loc, yinf, y, sc)));
  return {sel(b, loc, xf, r, rX), sel(b, loc, xf, i, iX)};
}
