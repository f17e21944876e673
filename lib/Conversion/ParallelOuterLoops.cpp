//===- ParallelOuterLoops.cpp - one parallel dimension per loop nest ------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace mlir::cpn {
#define GEN_PASS_DEF_PARALLELOUTERLOOPS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
std::optional<int64_t> constantTrips(Value lb, Value ub, Value step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
       s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
}

struct ParallelOuterLoopsPass
    : public cpn::impl::ParallelOuterLoopsBase<ParallelOuterLoopsPass> {
  using ParallelOuterLoopsBase::ParallelOuterLoopsBase;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (op.getInitVals().empty())
        loops.push_back(op);
    });
    for (scf::ParallelOp op : loops)
      rewrite(op);
  }

  void rewrite(scf::ParallelOp op) {
    unsigned n = op.getNumLoops();
    int64_t total = 1;
    SmallVector<int64_t> trips;
    for (unsigned d = 0; d < n; ++d) {
      auto t = constantTrips(op.getLowerBound()[d], op.getUpperBound()[d],
                             op.getStep()[d]);
      trips.push_back(t ? *t : minTrip); // dynamic: assume big enough
      total = t ? total * *t : std::max<int64_t>(total, minWork);
    }
    int par = -1;
    if (total >= minWork) {
      par = 0;
      for (unsigned d = 0; d < n; ++d)
        if (trips[d] >= minTrip) {
          par = d;
          break;
        }
    }
    // Already in the wanted form: one dimension, parallel.
    if (n == 1 && par == 0)
      return;
    Block &body = op.getRegion().front();
    Location loc = op.getLoc();
    IRMapping map;
    std::function<void(OpBuilder &, unsigned)> build = [&](OpBuilder &b,
                                                           unsigned d) {
      if (d == n) {
        for (Operation &inner : body.without_terminator())
          b.clone(inner, map);
        return;
      }
      Value lb = op.getLowerBound()[d], ub = op.getUpperBound()[d],
            st = op.getStep()[d];
      if (static_cast<int>(d) == par) {
        scf::ParallelOp::create(b, loc, ValueRange{lb}, ValueRange{ub},
                                ValueRange{st},
                                [&](OpBuilder &nb, Location, ValueRange ivs) {
                                  map.map(body.getArgument(d), ivs[0]);
                                  build(nb, d + 1);
                                });
      } else {
        scf::ForOp::create(
            b, loc, lb, ub, st, ValueRange{},
            [&](OpBuilder &nb, Location l, Value iv, ValueRange) {
              map.map(body.getArgument(d), iv);
              build(nb, d + 1);
              scf::YieldOp::create(nb, l);
            });
      }
    };
    OpBuilder b(op);
    build(b, 0);
    op.erase();
  }
};
} // namespace
