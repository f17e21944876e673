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

Value scalar::emitComplexUnary(OpBuilder &b, Location loc, Ufunc u, Value z) {
  Type t = z.getType();
  if (u == Ufunc::negative)
    return complex::NegOp::create(b, loc, z);
  if (u == Ufunc::positive)
    return z;
  if (u == Ufunc::conjugate)
    return complex::ConjOp::create(b, loc, z);
  if (u == Ufunc::absolute) {
    // C99's hypot: an infinite part gives +inf even beside a NaN
    // (|inf + nan i| = inf, as NumPy's; the complex dialect's gave NaN).
    Value x = re(b, loc, z), y = im(b, loc, z);
    FloatOps f{b, loc};
    return sel(b, loc, f.either(f.isInf(x), f.isInf(y)),
               cstF(b, loc, x.getType(), std::numeric_limits<double>::infinity()),
               complex::AbsOp::create(b, loc, z));
  }
  if (u == Ufunc::real)
    return re(b, loc, z);
  if (u == Ufunc::imag)
    return im(b, loc, z);
  if (u == Ufunc::square) // NumPy's loop, as multiply
    return emitComplexBinary(b, loc, Ufunc::multiply, z, z);
  if (u == Ufunc::reciprocal) {
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
  if (u == Ufunc::sign) {
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
  if (u == Ufunc::sqrt)
    return sqrtC(b, loc, z);
  if (u == Ufunc::exp)
    return expC(b, loc, z);
  if (u == Ufunc::exp2)
    return expC(b, loc, scaleC(b, loc, z, std::log(2.0)));
  if (u == Ufunc::rint) // each part to the nearest even integer, as NumPy's
    return mkC(b, loc, t, math::RoundEvenOp::create(b, loc, re(b, loc, z)),
               math::RoundEvenOp::create(b, loc, im(b, loc, z)));
  if (u == Ufunc::expm1) {
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
  if (u == Ufunc::log)
    return logC(b, loc, z);
  if (u == Ufunc::log1p) {
    // NumPy's nc_log1p: log(hypot(x + 1, y)) + i atan2(y, x + 1)
    // (complex.log1p gives 0 at -1+0j, NumPy -inf+0j).
    Value x = re(b, loc, z), y = im(b, loc, z);
    Value x1 = arith::AddFOp::create(b, loc, x, cstF(b, loc, x.getType(), 1.0));
    Value l = callLibm(b, loc, "hypot", {x1, y});
    return mkC(b, loc, t, math::LogOp::create(b, loc, l),
               atan2Z(b, loc, y, x1));
  }
  if (u == Ufunc::log2 || u == Ufunc::log10)
    return scaleC(b, loc, logC(b, loc, z),
                  1.0 / std::log(u == Ufunc::log2 ? 2.0 : 10.0));
  if (u == Ufunc::tanh || u == Ufunc::tan) {
    // tan z = -i tanh(iz), as npy_ctan.
    Value x = re(b, loc, z), y = im(b, loc, z);
    if (u == Ufunc::tan)
      std::swap(x, y), x = arith::NegFOp::create(b, loc, x); // iz = -y + ix
    auto [r, i] = tanhParts(b, loc, x, y);
    if (u == Ufunc::tan) // -i (r + i i) = i - i r
      return mkC(b, loc, t, i, arith::NegFOp::create(b, loc, r));
    return mkC(b, loc, t, r, i);
  }
  if (u == Ufunc::sinh || u == Ufunc::cosh || u == Ufunc::sin ||
      u == Ufunc::cos) {
    // sin z = -i sinh(iz) and cos z = cosh(iz), as npy_csin and npy_ccos.
    Value x = re(b, loc, z), y = im(b, loc, z);
    bool trig = u == Ufunc::sin || u == Ufunc::cos;
    if (trig)
      std::swap(x, y), x = arith::NegFOp::create(b, loc, x); // iz = -y + ix
    auto [r, i] = sinhCoshParts(
        b, loc, x, y, u == Ufunc::sinh || u == Ufunc::sin, u == Ufunc::sin);
    if (u == Ufunc::sin) // -i (r + i i) = i - i r
      return mkC(b, loc, t, i, arith::NegFOp::create(b, loc, r));
    return mkC(b, loc, t, r, i);
  }
  return {};
}

Value scalar::emitComplexBinary(OpBuilder &b, Location loc, Ufunc u, Value x,
                                Value y) {
  // Component-wise arith, not complex.add/sub: the complex dialect folds
  // add(b, sub(a, b)) -> a, exact only without inf/NaN (inf + (inf - inf) is
  // NaN in NumPy), and arith's float ops carry no such folds.
  if (u == Ufunc::add || u == Ufunc::subtract) {
    auto part = [&](Value p, Value q) -> Value {
      if (u == Ufunc::add)
        return arith::AddFOp::create(b, loc, p, q);
      return arith::SubFOp::create(b, loc, p, q);
    };
    return mkC(b, loc, x.getType(), part(re(b, loc, x), re(b, loc, y)),
               part(im(b, loc, x), im(b, loc, y)));
  }
  if (u == Ufunc::multiply)
    return mulC(b, loc, x, y, /*fused=*/true);
  if (u == Ufunc::divide)
    return divC(b, loc, x, y);
  if (u == Ufunc::power)
    return powC(b, loc, x, y);
  if (u == Ufunc::equal)
    return complex::EqualOp::create(b, loc, x, y);
  if (u == Ufunc::not_equal)
    return complex::NotEqualOp::create(b, loc, x, y);
  if (u == Ufunc::less)
    return lessC(b, loc, x, y, false);
  if (u == Ufunc::less_equal)
    return lessC(b, loc, x, y, true);
  if (u == Ufunc::greater)
    return lessC(b, loc, y, x, false);
  if (u == Ufunc::greater_equal)
    return lessC(b, loc, y, x, true);
  // maximum/minimum keep the first operand when it is NaN or wins the order;
  // fmax/fmin keep it when the second is NaN or the first wins.
  if (u == Ufunc::maximum || u == Ufunc::minimum) {
    Value wins = lessC(b, loc, u == Ufunc::maximum ? y : x,
                       u == Ufunc::maximum ? x : y, true);
    return sel(b, loc, arith::OrIOp::create(b, loc, isNanC(b, loc, x), wins), x,
               y);
  }
  if (u == Ufunc::fmax || u == Ufunc::fmin) {
    Value wins =
        lessC(b, loc, u == Ufunc::fmax ? y : x, u == Ufunc::fmax ? x : y, true);
    return sel(b, loc, arith::OrIOp::create(b, loc, isNanC(b, loc, y), wins), x,
               y);
  }
  return {};
}
