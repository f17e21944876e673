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
    // A parallel loop inside another (a reduction between parallel
    // dimensions: the partial sums of a row block) runs sequentially: the
    // outer one has the threads. Innermost first, so outer ops survive.
    SmallVector<scf::ParallelOp> nested;
    getOperation().walk([&](scf::ParallelOp op) {
      if (op.getInitVals().empty() && op->getParentOfType<scf::ParallelOp>())
        nested.push_back(op);
    });
    for (scf::ParallelOp op : nested)
      sequential(op);
    SmallVector<scf::ForOp> reductions;
    getOperation().walk([&](scf::ForOp op) {
      if (innerParallel(op) && !op->getParentOfType<scf::ParallelOp>())
        reductions.push_back(op);
    });
    for (scf::ForOp op : reductions)
      tileAcrossReduction(op);
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (op.getInitVals().empty() && !op->hasAttr(kTiles))
        loops.push_back(op);
    });
    for (scf::ParallelOp op : loops)
      rewrite(op);
  }

  static constexpr const char *kTiles = "cpn.tiles";

  /// The scf.parallel that is the whole body of `op` (a reduction loop of a
  /// linalg nest: `for i { parallel j { out[j] += x[i, j] } }`), if its
  /// bounds do not depend on `op`.
  static scf::ParallelOp innerParallel(scf::ForOp op) {
    Block *body = op.getBody();
    if (!op.getInitArgs().empty() || body->getOperations().size() != 2)
      return {};
    auto par = dyn_cast<scf::ParallelOp>(body->front());
    if (!par || !par.getInitVals().empty())
      return {};
    for (Value v : par.getOperands())
      if (!op.isDefinedOutsideOfLoop(v))
        return {};
    return par;
  }

  /// A reduction over the outer dimension (`x.sum(axis=0)`) would fork a
  /// parallel loop per row, or, below min-work per row, run on one thread.
  /// Instead the parallel dimension is cut into at most 16 column tiles that
  /// run in parallel, each walking all rows over its columns:
  /// `parallel t { for i { for j in tile t { out[j] += x[i, j] } } }`. This
  /// is valid for linalg nests: iteration j only touches out[j].
  void tileAcrossReduction(scf::ForOp op) {
    scf::ParallelOp par = innerParallel(op);
    auto forTrips =
        constantTrips(op.getLowerBound(), op.getUpperBound(), op.getStep());
    SmallVector<int64_t> trips;
    for (unsigned d = 0; d < par.getNumLoops(); ++d) {
      auto t = constantTrips(par.getLowerBound()[d], par.getUpperBound()[d],
                             par.getStep()[d]);
      if (!t)
        return;
      trips.push_back(*t);
    }
    int64_t work = forTrips ? *forTrips : minWork;
    for (int64_t t : trips)
      work *= t;
    if (work < minWork || trips[0] < 32 || (forTrips && *forTrips < 2))
      return;
    int64_t tiles = std::min<int64_t>(16, (trips[0] + 15) / 16);
    int64_t tile = ((trips[0] + tiles - 1) / tiles + 15) / 16 * 16;
    Location loc = op.getLoc();
    OpBuilder b(op);
    Value lb = par.getLowerBound()[0], ub = par.getUpperBound()[0],
          st = par.getStep()[0];
    Value tileStep = arith::MulIOp::create(
        b, loc, st, arith::ConstantIndexOp::create(b, loc, tile));
    Block &body = par.getRegion().front();
    IRMapping map;
    std::function<void(OpBuilder &, unsigned)> inner = [&](OpBuilder &nb,
                                                           unsigned d) {
      if (d == par.getNumLoops()) {
        for (Operation &o : body.without_terminator())
          nb.clone(o, map);
        return;
      }
      scf::ForOp::create(nb, loc, par.getLowerBound()[d],
                         par.getUpperBound()[d], par.getStep()[d], ValueRange{},
                         [&](OpBuilder &fb, Location l, Value iv, ValueRange) {
                           map.map(body.getArgument(d), iv);
                           inner(fb, d + 1);
                           scf::YieldOp::create(fb, l);
                         });
    };
    auto tiled = scf::ParallelOp::create(
        b, loc, ValueRange{lb}, ValueRange{ub}, ValueRange{tileStep},
        [&](OpBuilder &pb, Location l, ValueRange t) {
          Value end = arith::MinSIOp::create(
              pb, l, arith::AddIOp::create(pb, l, t[0], tileStep), ub);
          scf::ForOp::create(
              pb, l, op.getLowerBound(), op.getUpperBound(), op.getStep(),
              ValueRange{},
              [&](OpBuilder &rb, Location l2, Value i, ValueRange) {
                map.map(op.getInductionVar(), i);
                scf::ForOp::create(
                    rb, l2, t[0], end, st, ValueRange{},
                    [&](OpBuilder &jb, Location l3, Value j, ValueRange) {
                      map.map(body.getArgument(0), j);
                      inner(jb, 1);
                      scf::YieldOp::create(jb, l3);
                    });
                scf::YieldOp::create(rb, l2);
              });
        });
    tiled->setAttr(kTiles, b.getUnitAttr());
    op.erase();
  }

  /// Iterations of the loops nested in `block` (the largest nest; a dynamic
  /// trip count counts as min-work): the work of one parallel iteration.
  int64_t nestedWork(Block &block) {
    int64_t most = 1;
    for (Operation &o : block)
      if (auto f = dyn_cast<scf::ForOp>(o)) {
        auto t = constantTrips(f.getLowerBound(), f.getUpperBound(),
                               f.getStep());
        int64_t w = t ? *t : minWork.getValue();
        most = std::max(most, w * nestedWork(*f.getBody()));
      }
    return std::min<int64_t>(most, minWork);
  }

  /// `op` as a nest of scf.for loops.
  void sequential(scf::ParallelOp op) { renest(op, -1); }

  void rewrite(scf::ParallelOp op) {
    unsigned n = op.getNumLoops();
    // A row reduction's parallel loop holds a sequential loop per row: its
    // iterations count too (`x.sum(axis=1)` over 8000 rows of 8000).
    int64_t total = nestedWork(op.getRegion().front());
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
    renest(op, par);
  }

  /// Replaces `op` by a nest of scf.for loops, except dimension `par` (if
  /// any), which stays a one-dimensional scf.parallel.
  void renest(scf::ParallelOp op, int par) {
    unsigned n = op.getNumLoops();
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
