//===- ScalarComplexOps.cpp - complex ufuncs ------------------------------===//
//
// Part of cpnumeric.
//
// Complex elements: NumPy's complex loops (npy_math's complex functions and
// the lexicographic order of its comparisons) on complex<f32|f64>.
//
//===----------------------------------------------------------------------===//

#include "ScalarOpsInternal.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::cpn;
using namespace mlir::cpn::scalar;

namespace {
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

/// NumPy's complex multiply: (ac - bd) + (ad + bc)i, without C99's recovery
/// of infinite results from NaN parts (complex.mul's lowering has it:
/// inf+infj where NumPy gives nan+nanj). `fused`: as NumPy's array loop
/// (its SIMD kernel's fmaddsub: fma(a, c, -bd) + i fma(a, d, bc)), so a
/// product whose ac and bd both overflow is -inf where the unfused
/// difference is NaN (fuzz 412:543); npy_cpow's products are unfused.
Value mulC(OpBuilder &b, Location loc, Value x, Value y, bool fused = false) {
  Value a = re(b, loc, x), bb = im(b, loc, x), c = re(b, loc, y),
        d = im(b, loc, y);
  Value bd = arith::MulFOp::create(b, loc, bb, d);
  Value bc = arith::MulFOp::create(b, loc, bb, c);
  if (fused)
    return mkC(b, loc, x.getType(),
               math::FmaOp::create(b, loc, a, c, arith::NegFOp::create(b, loc, bd)),
               math::FmaOp::create(b, loc, a, d, bc));
  Value r = arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, a, c), bd);
  Value i = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a, d), bc);
  return mkC(b, loc, x.getType(), r, i);
}

/// NumPy's complex division (Smith's method; a zero divisor divides each
/// part by |re(y)|, so (2+0.25j) / -0.0 is inf+infj as in NumPy).
Value divC(OpBuilder &b, Location loc, Value x, Value y) {
  Value a = re(b, loc, x), bb = im(b, loc, x), c = re(b, loc, y),
        d = im(b, loc, y);
  auto mul = [&](Value p, Value q) {
    return arith::MulFOp::create(b, loc, p, q).getResult();
  };
  auto add = [&](Value p, Value q) {
    return arith::AddFOp::create(b, loc, p, q).getResult();
  };
  auto sub = [&](Value p, Value q) {
    return arith::SubFOp::create(b, loc, p, q).getResult();
  };
  auto div = [&](Value p, Value q) {
    return arith::DivFOp::create(b, loc, p, q).getResult();
  };
  Value ac = math::AbsFOp::create(b, loc, c), ad = math::AbsFOp::create(b, loc, d);
  Value one = cstF(b, loc, a.getType(), 1.0), zero = cstF(b, loc, a.getType(), 0.0);
  // |c| >= |d|: rat = d/c, scl = 1/(c + d rat).
  Value rat1 = div(d, c), scl1 = div(one, add(c, mul(d, rat1)));
  Value r1 = mul(add(a, mul(bb, rat1)), scl1), i1 = mul(sub(bb, mul(a, rat1)), scl1);
  // |c| < |d|: rat = c/d, scl = 1/(d + c rat).
  Value rat2 = div(c, d), scl2 = div(one, add(d, mul(c, rat2)));
  Value r2 = mul(add(mul(a, rat2), bb), scl2), i2 = mul(sub(mul(bb, rat2), a), scl2);
  // y == 0.
  Value r0 = div(a, ac), i0 = div(bb, ac);
  Value isZero = arith::AndIOp::create(
      b, loc, cmpF(b, loc, CmpFPredicate::OEQ, ac, zero),
      cmpF(b, loc, CmpFPredicate::OEQ, ad, zero));
  Value first = cmpF(b, loc, CmpFPredicate::OGE, ac, ad);
  Value r = sel(b, loc, first, sel(b, loc, isZero, r0, r1), r2);
  Value i = sel(b, loc, first, sel(b, loc, isZero, i0, i1), i2);
  return mkC(b, loc, x.getType(), r, i);
}

/// Float arithmetic on one builder and location (the formulas below).
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

/// atan2(y, x), C's on two zeros too: +-0 or +-pi by the signs. MLIR folds
/// math.atan2(0, 0) of constants to NaN, so log(0j) of a constant was
/// -inf+nanj (fuzz 500:15280); libm's atan2 called per element costs the
/// vectorized loop half its speed.
Value atan2Z(OpBuilder &b, Location loc, Value y, Value x) {
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
Value expC(OpBuilder &b, Location loc, Value z) {
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
  Value et = sel(b, loc, tBig, cstF(b, loc, ft, std::exp(tv)), cstF(b, loc, ft, 1.0));
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
Value logC(OpBuilder &b, Location loc, Value z) {
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
  Value mag = f.mul(big, math::SqrtOp::create(b, loc, math::FmaOp::create(
                                                          b, loc, q, q, one)));
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
Value sqrtC(OpBuilder &b, Location loc, Value z) {
  Type t = z.getType();
  Value x = re(b, loc, z), y = im(b, loc, z);
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0), half = cstF(b, loc, ft, 0.5),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity()),
        nan = cstF(b, loc, ft, std::numeric_limits<double>::quiet_NaN());
  double limit = ft.isF32() ? 1e37 : 1e307;
  Value ax = f.abs(x), ay = f.abs(y);
  Value huge = f.either(cmpF(b, loc, CmpFPredicate::OGT, ax, cstF(b, loc, ft, limit)),
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
  Value iXi = sel(b, loc, xNeg, f.cps(inf, y), sel(b, loc, yNan, nan, f.cps(zero, y)));
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
std::pair<Value, Value> sinhCoshParts(OpBuilder &b, Location loc, Value x,
                                      Value y, bool isSinh, bool forSin = false) {
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity());
  auto fin = [&](Value v) {
    return cmpF(b, loc, CmpFPredicate::OLT, math::AbsFOp::create(b, loc, v), inf);
  };
  auto eq = [&](Value p, Value q) { return cmpF(b, loc, CmpFPredicate::OEQ, p, q); };
  Value sh = callLibm(b, loc, "sinh", x), ch = callLibm(b, loc, "cosh", x);
  Value c = math::CosOp::create(b, loc, y), s = math::SinOp::create(b, loc, y);
  Value xf = fin(x), yf = fin(y), xz = eq(x, zero), yz = eq(y, zero);
  Value xinf = eq(math::AbsFOp::create(b, loc, x), inf);
  Value yny = arith::SubFOp::create(b, loc, y, y); // NaN unless y is finite
  Value xx = f.mul(x, x);
  // Both finite.
  Value r = f.mul(isSinh ? sh : ch, c);
  Value i = sel(b, loc, yz, isSinh ? y : f.mul(f.cps(zero, x), y), f.mul(isSinh ? ch : sh, s));
  // From the last case of npy_csinh/npy_ccosh to the first: NaN x, y != 0.
  Value R = f.mul(xx, yny), I = f.mul(f.add(x, x), yny);
  // x infinite, y finite.
  R = sel(b, loc, xinf, isSinh ? f.mul(x, c) : f.mul(inf, c), R);
  I = sel(b, loc, xinf, isSinh ? f.mul(inf, s) : f.mul(x, s), I);
  // x infinite, y infinite or NaN (after the line above: y finite there).
  Value yNotFinite = cmpF(b, loc, CmpFPredicate::UGE,
                          math::AbsFOp::create(b, loc, y), inf);
  Value xiyn = arith::AndIOp::create(b, loc, xinf, yNotFinite);
  R = sel(b, loc, xiyn, forSin ? arith::NegFOp::create(b, loc, xx).getResult() : xx, R);
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
std::pair<Value, Value> tanhParts(OpBuilder &b, Location loc, Value x, Value y) {
  Type ft = x.getType();
  FloatOps f{b, loc};
  Value zero = cstF(b, loc, ft, 0.0), one = cstF(b, loc, ft, 1.0),
        inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity());
  Value ax = math::AbsFOp::create(b, loc, x), ay = math::AbsFOp::create(b, loc, y);
  Value xf = cmpF(b, loc, CmpFPredicate::OLT, ax, inf);
  Value yf = cmpF(b, loc, CmpFPredicate::OLT, ay, inf);
  Value xnan = isNanF(b, loc, x);
  Value yinf = cmpF(b, loc, CmpFPredicate::OEQ, ay, inf);
  Value yz = cmpF(b, loc, CmpFPredicate::OEQ, y, zero);
  Value sc = f.mul(math::SinOp::create(b, loc, y), math::CosOp::create(b, loc, y));
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
  i = sel(b, loc, big, f.mul(f.mul(cstF(b, loc, ft, 4.0), sc), f.mul(em, em)), i);
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

/// NumPy's npy_cpow: z**0 is 1, 0**w is 0 where w's real part is positive
/// (0 ** (1+1j) too) and NaN otherwise; everything else exp(w log z).
Value powC(OpBuilder &b, Location loc, Value z, Value w) {
  Type t = z.getType();
  Type ft = cast<ComplexType>(t).getElementType();
  Value zero = cstF(b, loc, ft, 0.0);
  auto isZero = [&](Value v) {
    return arith::AndIOp::create(
        b, loc, cmpF(b, loc, CmpFPredicate::OEQ, re(b, loc, v), zero),
        cmpF(b, loc, CmpFPredicate::OEQ, im(b, loc, v), zero));
  };
  // glibc's cpow, which NumPy calls: cexp(w clog z). complex.pow's own
  // lowering multiplies |z|^c by cos/sin of the angle, so a real result
  // that overflows got a NaN imaginary part (1e10 ** 1e10: inf+nanj where
  // NumPy gives inf+0j; fuzz 410:132).
  Value general = expC(b, loc, mulC(b, loc, w, logC(b, loc, z)));
  // An integral real exponent n with |n| < 100: NumPy multiplies (n = 1, 2,
  // 3 unrolled, else by squaring from 1; 1 / that for n < 0), so 1j ** 2
  // is exactly -1 and z ** 1 is z.
  Value br = re(b, loc, w);
  Type i64 = b.getI64Type();
  Value inRange = arith::AndIOp::create(
      b, loc, cmpF(b, loc, CmpFPredicate::OGT, br, cstF(b, loc, ft, -100.0)),
      cmpF(b, loc, CmpFPredicate::OLT, br, cstF(b, loc, ft, 100.0)));
  Value safeBr = sel(b, loc, inRange, br, zero);
  Value n = arith::FPToSIOp::create(b, loc, i64, safeBr);
  Value integral = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, inRange,
          cmpF(b, loc, CmpFPredicate::OEQ,
               arith::SIToFPOp::create(b, loc, ft, n), br)),
      cmpF(b, loc, CmpFPredicate::OEQ, im(b, loc, w), zero));
  Value absN = math::AbsIOp::create(b, loc, n);
  Value one = cstC(b, loc, t, 1.0, 0.0);
  Value aa = one, p = z;
  for (int bit = 0; bit < 7; ++bit) {
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, absN,
                              arith::ConstantOp::create(
                                  b, loc, i64, b.getI64IntegerAttr(1 << bit))),
        arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0)));
    aa = sel(b, loc, set, mulC(b, loc, aa, p), aa);
    if (bit < 6)
      p = mulC(b, loc, p, p);
  }
  aa = sel(b, loc, cmpF(b, loc, CmpFPredicate::OLT, br, zero),
           divC(b, loc, one, aa), aa);
  Value z2 = mulC(b, loc, z, z);
  auto isN = [&](int64_t k) {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, n,
        arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(k)));
  };
  Value byInt = sel(b, loc, isN(1), z,
                    sel(b, loc, isN(2), z2,
                        sel(b, loc, isN(3), mulC(b, loc, z, z2), aa)));
  general = sel(b, loc, integral, byInt, general);
  Value wPosReal = cmpF(b, loc, CmpFPredicate::OGT, re(b, loc, w), zero);
  double nan = std::numeric_limits<double>::quiet_NaN();
  Value zeroBase = sel(b, loc, wPosReal, cstC(b, loc, t, 0.0, 0.0),
                       cstC(b, loc, t, nan, nan));
  Value r = sel(b, loc, isZero(z), zeroBase, general);
  return sel(b, loc, isZero(w), cstC(b, loc, t, 1.0, 0.0), r);
}
} // namespace

Value scalar::emitComplexUnary(OpBuilder &b, Location loc, StringRef name,
                               Value z) {
  Type t = z.getType();
  if (name == "negative")
    return complex::NegOp::create(b, loc, z);
  if (name == "positive")
    return z;
  if (name == "conjugate")
    return complex::ConjOp::create(b, loc, z);
  if (name == "absolute") {
    // C99's hypot: an infinite part gives +inf even beside a NaN
    // (|inf + nan i| = inf, as NumPy's; the complex dialect's gave NaN).
    Value x = re(b, loc, z), y = im(b, loc, z);
    FloatOps f{b, loc};
    return sel(b, loc, f.either(f.isInf(x), f.isInf(y)),
               cstF(b, loc, x.getType(), std::numeric_limits<double>::infinity()),
               complex::AbsOp::create(b, loc, z));
  }
  if (name == "real")
    return re(b, loc, z);
  if (name == "imag")
    return im(b, loc, z);
  if (name == "square") // NumPy's loop, as multiply
    return emitComplexBinary(b, loc, "multiply", z, z);
  if (name == "reciprocal") {
    // NumPy's loop, scaled by the larger part: 0 gives NaN + NaN i (not
    // 1 / 0's inf + NaN i), inf + 0i gives 0 - 0i (fuzz 770:6356).
    Value x = re(b, loc, z), y = im(b, loc, z);
    FloatOps f{b, loc};
    Type ft = x.getType();
    Value one = cstF(b, loc, ft, 1.0), minusOne = cstF(b, loc, ft, -1.0);
    Value byRe = cmpF(b, loc, CmpFPredicate::OLE, f.abs(y), f.abs(x));
    Value r1 = f.div(y, x), d1 = f.add(x, f.mul(y, r1));
    Value r2 = f.div(x, y), d2 = f.add(f.mul(x, r2), y);
    Value real = sel(b, loc, byRe, f.div(one, d1), f.div(r2, d2));
    Value imag = sel(b, loc, byRe, f.div(arith::NegFOp::create(b, loc, r1), d1),
                     f.div(minusOne, d2));
    return mkC(b, loc, t, real, imag);
  }
  if (name == "sign") {
    // NumPy 2's: z / |z|; an infinite part gives +-1 on its axis (NaN when
    // both are), a NaN |z| NaN + i NaN, 0 gives +0 + 0i.
    Value x = re(b, loc, z), y = im(b, loc, z);
    Type ft = x.getType();
    Value zero = cstF(b, loc, ft, 0.0), one = cstF(b, loc, ft, 1.0),
          inf = cstF(b, loc, ft, std::numeric_limits<double>::infinity()),
          nan = cstF(b, loc, ft, std::numeric_limits<double>::quiet_NaN());
    auto isInf = [&](Value v) {
      return cmpF(b, loc, CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, v), inf);
    };
    auto unit = [&](Value v) { // +-1 by v's sign (v is not 0 or NaN here)
      return sel(b, loc, cmpF(b, loc, CmpFPredicate::OGT, v, zero), one,
                 arith::NegFOp::create(b, loc, one));
    };
    Value a = callLibm(b, loc, "hypot", {x, y});
    Value r = arith::DivFOp::create(b, loc, x, a), i = arith::DivFOp::create(b, loc, y, a);
    Value az = cmpF(b, loc, CmpFPredicate::OEQ, a, zero);
    r = sel(b, loc, az, zero, r);
    i = sel(b, loc, az, zero, i);
    Value xi = isInf(x), yi = isInf(y), ai = isInf(a);
    Value rInf = sel(b, loc, xi, sel(b, loc, yi, nan, unit(x)), zero);
    Value iInf = sel(b, loc, xi, sel(b, loc, yi, nan, zero), unit(y));
    r = sel(b, loc, ai, rInf, r);
    i = sel(b, loc, ai, iInf, i);
    Value an = isNanF(b, loc, a);
    return mkC(b, loc, t, sel(b, loc, an, nan, r), sel(b, loc, an, nan, i));
  }
  if (name == "sqrt")
    return sqrtC(b, loc, z);
  if (name == "exp")
    return expC(b, loc, z);
  if (name == "exp2")
    return expC(b, loc, scaleC(b, loc, z, std::log(2.0)));
  if (name == "rint") // each part to the nearest even integer, as NumPy's
    return mkC(b, loc, t, math::RoundEvenOp::create(b, loc, re(b, loc, z)),
               math::RoundEvenOp::create(b, loc, im(b, loc, z)));
  if (name == "expm1") {
    // NumPy's nc_expm1: expm1(x) cos(y) - 2 sin(y/2)^2 + i exp(x) sin(y)
    // (expm1(inf+0j) is inf+nanj there; complex.expm1 gives inf+0j).
    Value x = re(b, loc, z), y = im(b, loc, z);
    Type ft = x.getType();
    Value h = math::SinOp::create(
        b, loc, arith::MulFOp::create(b, loc, y, cstF(b, loc, ft, 0.5)));
    Value r = arith::SubFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, math::ExpM1Op::create(b, loc, x),
                              math::CosOp::create(b, loc, y)),
        arith::MulFOp::create(b, loc, cstF(b, loc, ft, 2.0),
                              arith::MulFOp::create(b, loc, h, h)));
    Value i = arith::MulFOp::create(b, loc, math::ExpOp::create(b, loc, x),
                                    math::SinOp::create(b, loc, y));
    return mkC(b, loc, t, r, i);
  }
  if (name == "log")
    return logC(b, loc, z);
  if (name == "log1p") {
    // NumPy's nc_log1p: log(hypot(x + 1, y)) + i atan2(y, x + 1)
    // (complex.log1p gives 0 at -1+0j, NumPy -inf+0j).
    Value x = re(b, loc, z), y = im(b, loc, z);
    Value x1 = arith::AddFOp::create(b, loc, x, cstF(b, loc, x.getType(), 1.0));
    Value l = callLibm(b, loc, "hypot", {x1, y});
    return mkC(b, loc, t, math::LogOp::create(b, loc, l),
               atan2Z(b, loc, y, x1));
  }
  if (name == "log2" || name == "log10")
    return scaleC(b, loc, logC(b, loc, z),
                  1.0 / std::log(name == "log2" ? 2.0 : 10.0));
  if (name == "tanh" || name == "tan") {
    // tan z = -i tanh(iz), as npy_ctan.
    Value x = re(b, loc, z), y = im(b, loc, z);
    if (name == "tan")
      std::swap(x, y), x = arith::NegFOp::create(b, loc, x); // iz = -y + ix
    auto [r, i] = tanhParts(b, loc, x, y);
    if (name == "tan") // -i (r + i i) = i - i r
      return mkC(b, loc, t, i, arith::NegFOp::create(b, loc, r));
    return mkC(b, loc, t, r, i);
  }
  if (name == "sinh" || name == "cosh" || name == "sin" || name == "cos") {
    // sin z = -i sinh(iz) and cos z = cosh(iz), as npy_csin and npy_ccos.
    Value x = re(b, loc, z), y = im(b, loc, z);
    bool trig = name == "sin" || name == "cos";
    if (trig)
      std::swap(x, y), x = arith::NegFOp::create(b, loc, x); // iz = -y + ix
    auto [r, i] =
        sinhCoshParts(b, loc, x, y, name == "sinh" || name == "sin", name == "sin");
    if (name == "sin") // -i (r + i i) = i - i r
      return mkC(b, loc, t, i, arith::NegFOp::create(b, loc, r));
    return mkC(b, loc, t, r, i);
  }
  return {};
}

Value scalar::emitComplexBinary(OpBuilder &b, Location loc, StringRef name,
                                Value x, Value y) {
  // Component-wise arith, not complex.add/sub: the complex dialect folds
  // add(b, sub(a, b)) -> a, exact only without inf/NaN (inf + (inf - inf) is
  // NaN in NumPy), and arith's float ops carry no such folds.
  if (name == "add" || name == "subtract") {
    auto part = [&](Value u, Value v) -> Value {
      if (name == "add")
        return arith::AddFOp::create(b, loc, u, v);
      return arith::SubFOp::create(b, loc, u, v);
    };
    return mkC(b, loc, x.getType(), part(re(b, loc, x), re(b, loc, y)),
               part(im(b, loc, x), im(b, loc, y)));
  }
  if (name == "multiply")
    return mulC(b, loc, x, y, /*fused=*/true);
  if (name == "divide")
    return divC(b, loc, x, y);
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
