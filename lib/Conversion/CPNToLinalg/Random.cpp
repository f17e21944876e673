//===- Random.cpp - cpn.random_bits to linalg -----------------------------===//
//
// Part of cpnumeric.
//
// cpn.random_bits becomes a generic whose body is Philox4x32-10; the
// runtime's host version is cpnrt::philoxWords (runtime/lib/Random.cpp).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::cpn;

namespace mlir::cpn::tolinalg {

/// cpn.random_bits: a generic over the result whose body is Philox4x32-10 on
/// the counter (counter + linear index, 0) under the key, in 64-bit integer
/// arithmetic (each 32x32->64 product is one multiply of zero-extended
/// halves, which vectorizes).
LogicalResult lowerRandomBits(RewriterBase &rw, RandomBitsOp op) {
  RankedTensorType resTy = tensorOf(op.getResult());
  unsigned rank = resTy.getRank();
  SmallVector<int64_t> strides = rowMajorStrides(resTy.getShape());
  AffineMap scalar = AffineMap::get(rank, 0, {}, rw.getContext());
  Value r = buildElementwise(
      rw, op.getLoc(), resTy, {op.getKey(), op.getCounter()}, {scalar, scalar},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Type i64 = b.getI64Type();
        auto cst = [&](uint64_t v) -> Value {
          return arith::ConstantOp::create(
              b, l, i64, b.getI64IntegerAttr(static_cast<int64_t>(v)));
        };
        Value mask = cst(0xffffffffull), c32 = cst(32);
        auto lo = [&](Value v) -> Value {
          return arith::AndIOp::create(b, l, v, mask);
        };
        auto hi = [&](Value v) -> Value {
          return arith::ShRUIOp::create(b, l, v, c32);
        };
        Value n =
            arith::AddIOp::create(b, l, args[1], linearIndex(b, l, strides));
        Value c0 = lo(n), c1 = hi(n), c2 = cst(0), c3 = cst(0);
        Value k0 = lo(args[0]), k1 = hi(args[0]);
        Value m0 = cst(0xD2511F53ull), m1 = cst(0xCD9E8D57ull);
        Value w0 = cst(0x9E3779B9ull), w1 = cst(0xBB67AE85ull);
        for (int round = 0; round < 10; ++round) {
          Value p0 = arith::MulIOp::create(b, l, c0, m0);
          Value p1 = arith::MulIOp::create(b, l, c2, m1);
          Value n0 = arith::XOrIOp::create(
              b, l, arith::XOrIOp::create(b, l, hi(p1), c1), k0);
          Value n2 = arith::XOrIOp::create(
              b, l, arith::XOrIOp::create(b, l, hi(p0), c3), k1);
          c1 = lo(p1);
          c3 = lo(p0);
          c0 = n0;
          c2 = n2;
          k0 = lo(arith::AddIOp::create(b, l, k0, w0));
          k1 = lo(arith::AddIOp::create(b, l, k1, w1));
        }
        return arith::OrIOp::create(b, l, arith::ShLIOp::create(b, l, c0, c32),
                                    c1);
      });
  rw.replaceOp(op, r);
  return success();
}

} // namespace mlir::cpn::tolinalg
