//===- LowerFpFlags.cpp - floating-point error bits to the status buffer --===//
//
// Part of cpnumeric.
//
// NumPy reports divide by zero, overflow and invalid operations once per ufunc
// call (np.errstate). Compiled kernels check each element (cpn.fp_flag in the
// loop body) and must stay vectorized: the bits of an innermost loop are an
// OR-reduction carried by the loop, and only a loop run that saw an error
// touches the shared status word, with one atomic OR.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "cpn/Conversion/ScalarOps.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/MapVector.h"

#include <limits>
#include <map>

namespace mlir::cpn {
#define GEN_PASS_DEF_LOWERFPFLAGS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {
struct LowerFpFlagsPass : public cpn::impl::LowerFpFlagsBase<LowerFpFlagsPass> {
  using LowerFpFlagsBase::LowerFpFlagsBase;

  void runOnOperation() override {
    // (Outlining adds functions: collect the kernels first.)
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp f : funcs)
      if (failed(lowerFunction(f)))
        signalPassFailure();
    shareEqualChecks();
  }

  /// The outlined check copies, in order.
  SmallVector<func::FuncOp> outlined;

  /// Check copies with the same signature and body (a loop's iterations
  /// traced into one kernel run the same nests on other buffers) become
  /// calls of the first: each distinct check is compiled once.
  void shareEqualChecks() {
    SmallVector<func::FuncOp> kept;
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> sameAs;
    SmallVector<func::FuncOp> dropped;
    for (func::FuncOp f : outlined) {
      func::FuncOp same;
      for (func::FuncOp k : kept)
        if (k.getFunctionType() == f.getFunctionType() &&
            OperationEquivalence::isRegionEquivalentTo(
                &k.getBody(), &f.getBody(),
                OperationEquivalence::IgnoreLocations)) {
          same = k;
          break;
        }
      if (!same) {
        kept.push_back(f);
        continue;
      }
      sameAs[f.getSymNameAttr()] = FlatSymbolRefAttr::get(same);
      dropped.push_back(f);
    }
    if (dropped.empty())
      return;
    // The copies are only called (one walk, not one per copy).
    getOperation().walk([&](func::CallOp call) {
      auto it = sameAs.find(call.getCalleeAttr().getAttr());
      if (it != sameAs.end())
        call.setCalleeAttr(it->second);
    });
    for (func::FuncOp f : dropped)
      f.erase();
  }

  LogicalResult lowerFunction(func::FuncOp f) {
    SmallVector<FpFlagOp> flags;
    f.walk([&](FpFlagOp op) { flags.push_back(op); });
    if (flags.empty())
      return success();
    Value status;
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (f.getArgAttr(i, kFpStatusAttr))
        status = f.getArgument(i);
    if (!status)
      return f.emitOpError("has cpn.fp_flag ops but no argument marked ")
             << kFpStatusAttr;
    // Innermost one-dimensional parallel loops holding flags are cut into
    // blocks first: the flags are then in a sequential loop.
    SmallVector<scf::ParallelOp> pars;
    for (FpFlagOp flag : flags)
      if (auto par = dyn_cast<scf::ParallelOp>(flag->getParentOp());
          par && par.getNumLoops() == 1 && par.getInitVals().empty() &&
          !llvm::is_contained(pars, par))
        pars.push_back(par);
    for (scf::ParallelOp par : pars)
      blocked(par);
    // Each flag's nest: the outermost of the scf.for loops around it that
    // nest directly in one another (up to a parallel loop or the function).
    // (Blocking replaced the flags of cut loops: walk again.)
    flags.clear();
    f.walk([&](FpFlagOp op) { flags.push_back(op); });
    SmallVector<Operation *> tops;
    for (FpFlagOp flag : flags) {
      auto loop = dyn_cast<scf::ForOp>(flag->getParentOp());
      if (!loop) { // 0-d kernels, bodies of unusual loops
        OpBuilder b(flag);
        if (Value bits = exactBitsOf(b, flag.getLoc(), flag))
          atomicOrIfSet(b, flag.getLoc(), bits, status, wordOf(flag));
        flag.erase();
        continue;
      }
      Operation *top = loop;
      while (isa<scf::ForOp>(top->getParentOp()))
        top = top->getParentOp();
      if (!llvm::is_contained(tops, top))
        tops.push_back(top);
    }
    for (Operation *top : tops)
      lowerNest(cast<scf::ForOp>(top), status);
    return success();
  }

  /// The flags of the nest `top`. Errors are rare: the loops OR only the
  /// flags' cheap probes, carried out of the nest by its loops, and when
  /// that is set after the nest, a copy of the nest without its stores ORs
  /// the exact bits. A nest that reads a buffer it writes (an in-place
  /// update) cannot run twice: it ORs the exact bits itself.
  void lowerNest(scf::ForOp top, Value status) {
    if (!rereadable(top)) {
      exactBits(top, status);
      return;
    }
    Location loc = top.getLoc();
    OpBuilder b(top);
    auto check = cast<scf::ForOp>(b.clone(*top));
    SmallVector<Operation *> stores;
    check.getBody()->walk([&](memref::StoreOp st) { stores.push_back(st); });
    for (Operation *st : stores)
      st->erase();
    // The fast nest: each innermost loop ORs its probes.
    Operation *nest = top;
    SmallVector<Value> anys;
    for (scf::ForOp loop : innermostWithFlags(top)) {
      SmallVector<FpFlagOp> flags = flagsOf(loop);
      anys.push_back(reduceOut(
          loop, flags, 1, nest,
          [&](OpBuilder &yb, Location l, ArrayRef<BlockArgument> accs) {
            Value any = anyProbe(yb, l, flags);
            return SmallVector<Value>{arith::OrIOp::create(
                yb, l, accs[0],
                arith::ExtUIOp::create(yb, l, yb.getI32Type(), any))};
          })[0]);
    }
    b.setInsertionPointAfter(nest);
    Value any = anys[0];
    for (Value v : ArrayRef<Value>(anys).drop_front())
      any = arith::OrIOp::create(b, loc, any, v);
    auto ifOp = scf::IfOp::create(b, loc, nonZero(b, loc, any),
                                  /*withElseRegion=*/false);
    check->moveBefore(ifOp.thenBlock()->getTerminator());
    // The copy runs only where an error is likely: LLVM keeps its loops
    // scalar (no vectorizing or unrolling, less to compile).
    MLIRContext *ctx = check->getContext();
    BoolAttr yes = BoolAttr::get(ctx, true);
    auto scalar = LLVM::LoopAnnotationAttr::get(
        ctx, /*disableNonforced=*/yes,
        LLVM::LoopVectorizeAttr::get(ctx, yes, {}, {}, {}, {}, {}, {}), {},
        LLVM::LoopUnrollAttr::get(ctx, yes, {}, {}, {}, {}, {}, {}), {}, {}, {},
        {}, {}, {}, {}, {}, {}, {}, {});
    check->walk([&](scf::ForOp f) { f->setAttr("loop_annotation", scalar); });
    exactBits(check, status);
    // ... in a function of its own (noinline), which equal copies share.
    if (!outlinable(ifOp))
      return;
    IRRewriter rw(ctx);
    auto parent = ifOp->getParentOfType<func::FuncOp>();
    std::string name =
        (parent.getName() + "_fp_check" + std::to_string(outlined.size()))
            .str();
    FailureOr<func::FuncOp> fn =
        outlineSingleBlockRegion(rw, loc, ifOp.getThenRegion(), name);
    if (failed(fn))
      return;
    fn->setPrivate();
    (*fn)->setAttr("passthrough", rw.getStrArrayAttr({"noinline"}));
    (*fn)->setAttr(kFpCheckFunctionAttr, rw.getUnitAttr());
    outlined.push_back(*fn);
  }

  /// Prepares the then-region of `ifOp` for outlining: the views, casts,
  /// constants and index arithmetic it uses from outside are cloned into
  /// it, so that the function takes plain buffers (the bare-pointer calling
  /// convention has no strided memrefs) and sizes. False when a value of
  /// another kind would still cross (the copy then stays inline).
  static bool outlinable(scf::IfOp ifOp) {
    Region &region = ifOp.getThenRegion();
    Block &entry = region.front();
    auto plain = [](Value v) {
      auto m = dyn_cast<MemRefType>(v.getType());
      return !m || m.getLayout().isIdentity();
    };
    for (int round = 0; round < 16; ++round) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(region, above);
      bool changed = false;
      for (Value v : above) {
        Operation *def = v.getDefiningOp();
        if (plain(v) && !(def && isa<arith::ConstantOp>(def)))
          continue;
        if (!def || def->getNumRegions() ||
            !(isa<ViewLikeOpInterface>(def) || isPure(def)))
          return false;
        OpBuilder b(&entry, entry.begin());
        Operation *copy = b.clone(*def);
        for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
          replaceAllUsesInRegionWith(from, to, region);
        changed = true;
      }
      if (!changed)
        return true;
    }
    return false;
  }

  /// The exact bits of the nest's flags, per status word: ORed over each
  /// innermost loop, carried out of the nest, then one atomic OR per word.
  void exactBits(Operation *top, Value status) {
    Location loc = top->getLoc();
    SmallVector<std::pair<int64_t, Value>> results;
    for (scf::ForOp loop : innermostWithFlags(top)) {
      SmallVector<FpFlagOp> flags = flagsOf(loop);
      SmallVector<int64_t> words;
      for (FpFlagOp f : flags)
        if (!llvm::is_contained(words, wordOf(f)))
          words.push_back(wordOf(f));
      SmallVector<Value> out = reduceOut(
          loop, flags, words.size(), top,
          [&](OpBuilder &yb, Location l, ArrayRef<BlockArgument> accs) {
            SmallVector<Value> next;
            for (auto [w, acc] : llvm::zip(words, accs)) {
              Value v = acc;
              for (FpFlagOp f : flags)
                if (wordOf(f) == w)
                  if (Value bits = exactBitsOf(yb, l, f))
                    v = arith::OrIOp::create(yb, l, v, bits);
              next.push_back(v);
            }
            return next;
          });
      for (auto [w, v] : llvm::zip(words, out))
        results.push_back({w, v});
    }
    OpBuilder b(top->getContext());
    b.setInsertionPointAfter(top);
    std::map<int64_t, Value> total;
    for (auto [w, v] : results) {
      auto it = total.find(w);
      if (it == total.end())
        total.emplace(w, v);
      else
        it->second = arith::OrIOp::create(b, loc, it->second, v);
    }
    for (auto &[word, v] : total)
      atomicOrIfSet(b, loc, v, status, word);
  }

  /// Replaces `loop`'s `flags` by `n` accumulators updated by `next` and
  /// carried out of the nest `top` (updated when it is replaced); returns
  /// their final values after `top`.
  static SmallVector<Value>
  reduceOut(scf::ForOp loop, ArrayRef<FpFlagOp> flags, size_t n,
            Operation *&top,
            function_ref<SmallVector<Value>(OpBuilder &, Location,
                                            ArrayRef<BlockArgument>)>
                next) {
    bool isTop = loop.getOperation() == top;
    scf::ForOp grown = carry(loop, n, next);
    for (FpFlagOp f : flags)
      f.erase();
    if (isTop)
      top = grown;
    return carryUp(grown, n, top);
  }

  /// Carries the last `n` results of `loop` (accumulators started at 0) out
  /// through the scf.for loops around it up to `top` (updated when it is
  /// replaced): each outer loop starts the inner one from its own
  /// accumulators. Returns the final values after `top`.
  static SmallVector<Value> carryUp(scf::ForOp loop, size_t n,
                                    Operation *&top) {
    scf::ForOp inner = loop;
    while (inner.getOperation() != top) {
      auto outer = cast<scf::ForOp>(inner->getParentOp());
      bool outerIsTop = outer.getOperation() == top;
      unsigned first = inner.getNumRegionIterArgs() - n;
      auto tail = inner.getResults().take_back(n);
      SmallVector<Value> innerResults(tail.begin(), tail.end());
      scf::ForOp grown = carry(
          outer, n, [&](OpBuilder &, Location, ArrayRef<BlockArgument> accs) {
            for (size_t k = 0; k < n; ++k)
              inner.getInitArgsMutable()[first + k].assign(accs[k]);
            return innerResults;
          });
      if (outerIsTop)
        top = grown;
      inner = grown;
    }
    auto r = inner.getResults().take_back(n);
    return SmallVector<Value>(r.begin(), r.end());
  }

  /// Adds `n` i32 accumulators starting at 0 to `loop`, updated by `next`
  /// at the end of each iteration; returns the new loop (its last `n`
  /// results are the accumulators' final values).
  static scf::ForOp
  carry(scf::ForOp loop, size_t n,
        function_ref<SmallVector<Value>(OpBuilder &, Location,
                                        ArrayRef<BlockArgument>)>
            next) {
    IRRewriter rw(loop.getContext());
    rw.setInsertionPoint(loop);
    Value zero =
        arith::ConstantOp::create(rw, loop.getLoc(), rw.getI32IntegerAttr(0));
    SmallVector<Value> inits(n, zero);
    FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
        rw, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &yb, Location l, ArrayRef<BlockArgument> accs) {
          return next(yb, l, accs);
        });
    return cast<scf::ForOp>(grown->getOperation());
  }

  /// The scf.for loops in `top` (itself included) whose bodies hold flags.
  static SmallVector<scf::ForOp> innermostWithFlags(Operation *top) {
    SmallVector<scf::ForOp> loops;
    top->walk([&](FpFlagOp f) {
      if (auto l = dyn_cast<scf::ForOp>(f->getParentOp());
          l && !llvm::is_contained(loops, l))
        loops.push_back(l);
    });
    return loops;
  }

  static int64_t wordOf(FpFlagOp f) { return f.getSite() / kFpSitesPerWord; }

  /// The exact FpError bits of the flag's element, shifted to its site; null
  /// when it cannot have any of its checks.
  static Value exactBitsOf(OpBuilder &b, Location l, FpFlagOp f) {
    Value bits = emitFpErrorBits(b, l, f.getUfunc(), f.getArgs(), f.getResult(),
                                 f.getChecks());
    int64_t shift = 3 * (f.getSite() % kFpSitesPerWord);
    if (bits && shift)
      bits = arith::ShLIOp::create(
          b, l, bits,
          arith::ConstantOp::create(b, l, b.getI32IntegerAttr(shift)));
    return bits;
  }

  /// v != 0 for an i32 `v`.
  static Value nonZero(OpBuilder &b, Location loc, Value v) {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, v,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
  }

  /// if (bits != 0) atomic_or(status[word], bits)
  static void atomicOrIfSet(OpBuilder &b, Location loc, Value bits,
                            Value status, int64_t word) {
    auto ifOp = scf::IfOp::create(b, loc, nonZero(b, loc, bits),
                                  /*withElseRegion=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Value index = arith::ConstantIndexOp::create(tb, loc, word);
    memref::AtomicRMWOp::create(tb, loc, arith::AtomicRMWKind::ori, bits,
                                status, ValueRange{index});
  }

  /// `parallel i in [lb, ub) step s {body}` as
  /// `parallel i0 in [lb, ub) step s*block { for i in [i0, min(i0+s*block,
  /// ub)) step s {body} }`; returns the inner loop.
  scf::ForOp blocked(scf::ParallelOp par) {
    Location loc = par.getLoc();
    OpBuilder b(par);
    Value lb = par.getLowerBound()[0], ub = par.getUpperBound()[0],
          st = par.getStep()[0];
    Value bigStep = arith::MulIOp::create(
        b, loc, st, arith::ConstantIndexOp::create(b, loc, block));
    Block &body = par.getRegion().front();
    IRMapping map;
    scf::ForOp inner;
    auto outer = scf::ParallelOp::create(
        b, loc, ValueRange{lb}, ValueRange{ub}, ValueRange{bigStep},
        [&](OpBuilder &pb, Location l, ValueRange ivs) {
          Value end = arith::MinSIOp::create(
              pb, l, arith::AddIOp::create(pb, l, ivs[0], bigStep), ub);
          inner = scf::ForOp::create(
              pb, l, ivs[0], end, st, ValueRange{},
              [&](OpBuilder &fb, Location l2, Value iv, ValueRange) {
                map.map(body.getArgument(0), iv);
                for (Operation &o : body.without_terminator())
                  fb.clone(o, map);
                scf::YieldOp::create(fb, l2);
              });
        });
    // Carry over the attributes of the original loop (OpenMP hints).
    for (NamedAttribute a : par->getDiscardableAttrs())
      outer->setAttr(a.getName(), a.getValue());
    par.erase();
    return inner;
  }

  /// The buffer a memref value views (through subviews, casts, reshapes).
  static Value rootBuffer(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        break;
      v = view.getViewSource();
    }
    return v;
  }

  /// Whether a copy of the nest without its stores computes the same error
  /// bits: no flag's operands depend on a load of a buffer the nest writes
  /// (a reduction's accumulator may be written: the checked values do not
  /// read it).
  static bool rereadable(Operation *top) {
    llvm::SmallPtrSet<Value, 8> written;
    bool unknown = false;
    top->walk([&](Operation *op) {
      if (auto st = dyn_cast<memref::StoreOp>(op))
        written.insert(rootBuffer(st.getMemRef()));
      else if (auto call = dyn_cast<func::CallOp>(op))
        // libm is pure; the runtime's entry points (BLAS, LAPACK) write.
        unknown |= call.getCallee().starts_with("cpn_");
      else if (!isa<FpFlagOp, memref::LoadOp>(op) && !isMemoryEffectFree(op) &&
               !isa<scf::ForOp, scf::WhileOp, scf::IfOp, scf::YieldOp,
                    scf::ConditionOp>(op))
        unknown = true;
    });
    if (unknown)
      return false;
    SmallVector<Value> work;
    llvm::SmallPtrSet<Value, 32> seen;
    top->walk([&](FpFlagOp f) {
      for (Value v : f->getOperands())
        if (seen.insert(v).second)
          work.push_back(v);
    });
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || !top->isAncestor(def))
        continue;
      if (auto ld = dyn_cast<memref::LoadOp>(def))
        if (written.contains(rootBuffer(ld.getMemRef())))
          return false;
      for (Value v : def->getOperands())
        if (seen.insert(v).second)
          work.push_back(v);
    }
    return true;
  }

  /// Whether `v` is NaN or infinite whenever operand `use` is: NaN
  /// propagates through arithmetic, and an infinity through a sum, a
  /// product (inf * 0 is NaN), a numerator, a square root or a logarithm.
  static bool propagatesNonFinite(OpOperand &use) {
    Operation *op = use.getOwner();
    if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::NegFOp,
            math::AbsFOp, math::SqrtOp, math::LogOp, math::Log2Op,
            math::Log10Op>(op))
      return true;
    return isa<arith::DivFOp>(op) && use.getOperandNumber() == 0;
  }

  /// The last value of `block` (the flag's loop body) that is NaN or
  /// infinite whenever p is: p's uses followed through ops that keep a
  /// value non-finite (a dot product's terms end at its sum). Testing it
  /// covers every probe that flows into it, without adds of its own (a
  /// finite sum may overflow there too: the exact check then finds no
  /// error, as when the probes' own sum overflows). Not into a value the
  /// loop carries or a reduction's combining op (a test of its accumulator
  /// would change how the reduction is vectorized), nor from a p defined
  /// elsewhere.
  /// A reduction's combining op (marked reassociable: the vectorizer's
  /// partial sums): its accumulator, in a register or in memory, is not
  /// tested, so that the reduction is vectorized (and summed) as before.
  static bool reassociable(Operation *o) {
    auto fm = dyn_cast<arith::ArithFastMathInterface>(o);
    return fm && arith::bitEnumContainsAll(fm.getFastMathFlagsAttr().getValue(),
                                           arith::FastMathFlags::reassoc);
  }

  static Value sinkOf(Value p, Block *block) {
    if (p.getParentBlock() != block)
      return p;
    Operation *terminator = block->getTerminator();
    for (;;) {
      Value next;
      for (OpOperand &use : p.getUses()) {
        Operation *o = use.getOwner();
        if (o->getBlock() == block && o->getNumResults() == 1 &&
            o->getResult(0).getType() == p.getType() &&
            propagatesNonFinite(use) && !reassociable(o) &&
            !llvm::is_contained(o->getResult(0).getUsers(), terminator)) {
          next = o->getResult(0);
          break;
        }
      }
      if (!next)
        return p;
      p = next;
    }
  }

  /// True when some probe says its op may have an error: the values the
  /// float probes flow into (sinkOf) of each type summed pairwise, the sum
  /// tested for NaN or infinity, ORed with the i1 probes.
  static Value anyProbe(OpBuilder &b, Location l, ArrayRef<FpFlagOp> flags) {
    llvm::MapVector<Type, SmallVector<Value>> floats;
    Value any = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
    // A probe that flows into another probe through ops that keep it
    // non-finite is covered by that one: only the last of each chain adds.
    llvm::SmallPtrSet<Value, 32> probes;
    for (FpFlagOp f : flags)
      probes.insert(f.getResult());
    auto covered = [&](Value p) {
      for (OpOperand &use : p.getUses())
        if (propagatesNonFinite(use) &&
            llvm::any_of(use.getOwner()->getResults(),
                         [&](Value r) { return probes.contains(r); }))
          return true;
      return false;
    };
    llvm::SmallPtrSet<Value, 32> added, sinks;
    for (FpFlagOp f : flags) {
      Value p = f.getResult();
      if (!added.insert(p).second)
        continue;
      if (isa<FloatType>(p.getType())) {
        if (!covered(p)) {
          Value sink = sinkOf(p, f->getBlock());
          if (sinks.insert(sink).second)
            floats[p.getType()].push_back(sink);
        }
      } else if (Value bits = exactBitsOf(b, l, f)) {
        // Integer results (division by zero, casts): the bits are cheap.
        any = arith::OrIOp::create(b, l, any, nonZero(b, l, bits));
      }
    }
    for (auto &[type, values] : floats) {
      while (values.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < values.size(); i += 2)
          next.push_back(arith::AddFOp::create(b, l, values[i], values[i + 1]));
        if (values.size() % 2)
          next.push_back(values.back());
        values = std::move(next);
      }
      Value inf = arith::ConstantOp::create(
          b, l, b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
      Value bad =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::UGE,
                                math::AbsFOp::create(b, l, values[0]), inf);
      any = arith::OrIOp::create(b, l, any, bad);
    }
    return any;
  }

  static SmallVector<FpFlagOp> flagsOf(scf::ForOp loop) {
    SmallVector<FpFlagOp> flags;
    for (Operation &o : loop.getBody()->without_terminator())
      if (auto f = dyn_cast<FpFlagOp>(o))
        flags.push_back(f);
    return flags;
  }
};
} // namespace
