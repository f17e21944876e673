//===- OutlineRepeats.cpp - compile a loop's traced iterations once -------===//
//
// Part of cpnumeric.
//
// A Python loop whose body writes no array (k-means' Lloyd iterations, an
// LSTM's time steps) is traced into one kernel as the same ops over and over:
// 10 iterations of 23 ops in one k-means trace. Every pass after this one, and
// LLVM, then compiles each iteration again. This pass finds the longest run of
// equal periods in a kernel's body and moves one period into a private
// function that the kernel calls once per period: each iteration is compiled
// once. Values that flow from one period into the next (the centroids) are
// the function's results passed back in; values from before the run (the
// points) are passed unchanged; an op that differs between periods only in
// its attributes (or in an index operand: a view at a run-time offset) and
// reads only values from before the run (`xs[t]`: a view whose offset moves)
// stays in the kernel and its value is passed in.
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <optional>

namespace mlir::cpn {
#define GEN_PASS_DEF_OUTLINEREPEATS
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {
/// `length` ops from `start` that repeat every `period` ops: `count()`
/// whole periods.
struct Run {
  size_t start = 0, period = 0, length = 0;
  size_t count() const { return length / period; }
  size_t saved() const { return (count() - 1) * period; }
};

/// How a value read by the first period from outside the run is bound in
/// the later ones: the same value, result `result` of the op at `pos` of the
/// period before, or another value from outside the run in each period (a
/// Python scalar that changes: `x * t`).
struct Binding {
  enum Kind { Same, Carried, Varying } kind = Same;
  size_t pos = 0;
  unsigned result = 0;
  llvm::SmallVector<Value> values; // Varying: the value of each period
};

/// One verified run and what its function takes and returns.
struct Plan {
  Run run;
  llvm::SmallVector<bool> hoisted;       // per position: stays in the kernel
  llvm::SmallVector<Value> outside;      // the first period's outside values
  llvm::SmallVector<Binding> bound;      // per outside value
  llvm::SmallVector<size_t> hoistedArgs; // positions passed in
  llvm::SmallVector<std::pair<size_t, unsigned>> results; // (pos, result)
};

/// The largest input that may differ from period to period.
constexpr int64_t kMaxVaryingElements = 64;

bool outlinable(Operation *op) {
  return isa<CPNDialect>(op->getDialect()) && !isa<UpdateOp, FpFlagOp>(op) &&
         op->getNumRegions() == 0 && op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(), [](Type t) {
           auto rt = dyn_cast<RankedTensorType>(t);
           // Destinations are made by the caller; values without elements
           // are not computed at all (convert-cpn-to-linalg).
           return rt && rt.hasStaticShape() && rt.getNumElements() > 0;
         });
}

/// What must agree for two ops to be the same op of two periods, operand
/// values aside (their types agree): attributes are compared later (an op that
/// differs only in them may stay in the kernel).
llvm::hash_code shapeOf(Operation *op) {
  llvm::hash_code h = llvm::hash_combine(op->getName().getAsOpaquePointer(),
                                         op->getNumOperands());
  for (Type t : op->getResultTypes())
    h = llvm::hash_combine(h, t.getAsOpaquePointer());
  // Operand types too: a cast of a bool and a cast of a float16 to the same
  // type are not the same op (the function's parameter has one type; jit
  // 710:3732 called it with the other).
  for (Type t : op->getOperandTypes())
    h = llvm::hash_combine(h, t.getAsOpaquePointer());
  return h;
}

struct OutlineRepeatsPass
    : public cpn::impl::OutlineRepeatsBase<OutlineRepeatsPass> {
  using OutlineRepeatsBase::OutlineRepeatsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (!f.isDeclaration() && f.isPublic() && f.getBody().hasOneBlock())
        kernels.push_back(f);
    // Several runs (two loops in one window) each get a function: calls are
    // not outlinable, so a run already outlined is not found again.
    for (func::FuncOp f : kernels)
      for (int i = 0; i < 4 && outlineIn(f); ++i)
        ;
  }

  /// Outlines the best run of `f`; false when there is none.
  bool outlineIn(func::FuncOp f) {
    Block &body = f.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    if (ops.size() < 2 * static_cast<size_t>(minOps))
      return false;
    llvm::DenseMap<Operation *, size_t> index; // position in `ops`
    for (auto [i, op] : llvm::enumerate(ops))
      index[op] = i;
    SmallVector<size_t> shapes(ops.size());
    for (auto [i, op] : llvm::enumerate(ops))
      shapes[i] = outlinable(op) ? static_cast<size_t>(shapeOf(op)) : i + 1;
    // Candidates: for each period p, the maximal stretches where an op has
    // the shape of the op p before it; best first.
    SmallVector<Run> runs;
    size_t n = ops.size();
    for (size_t p = 1; p <= n / 2; ++p) {
      size_t i = 0;
      while (i + p < n) {
        if (shapes[i] != shapes[i + p] || !outlinable(ops[i])) {
          ++i;
          continue;
        }
        size_t len = 0;
        while (i + p + len < n && shapes[i + len] == shapes[i + p + len] &&
               outlinable(ops[i + len]))
          ++len;
        Run r{i, p, len + p};
        if (r.count() >= 2 && static_cast<int64_t>(p) >= minOps)
          runs.push_back(r);
        i += len;
      }
    }
    llvm::stable_sort(runs, [](const Run &a, const Run &b) {
      return a.saved() != b.saved() ? a.saved() > b.saved()
                                    : a.period < b.period;
    });
    for (size_t tried = 0; tried < runs.size() && tried < 16; ++tried) {
      // A run may start at any phase that keeps at least two periods; the
      // earliest that verifies is taken.
      // The phase decides what crosses from one call to the next and what
      // is left over around the run. Leftover parts of a period are
      // compiled in the kernel and fuse badly (k-means cut mid-iteration
      // fused its two halves into a loop that moved 272 MB): the phases that
      // keep the most periods come first, then the fewest bytes of results
      // (an LSTM step cut after `h` passes `h` and `c`, not its gates).
      const Run &r = runs[tried];
      std::optional<Plan> best;
      int64_t bestBytes = 0;
      // (At most 64 phases: a long @jit trace stays linear in its length.)
      for (size_t shift = 0; shift < std::min<size_t>(r.period, 64); ++shift) {
        Run s{r.start + shift, r.period, r.length - shift};
        if (s.count() < 2)
          break;
        std::optional<Plan> plan = verify(ops, index, s);
        if (!plan)
          continue;
        int64_t bytes = 0;
        for (auto [t, res] : plan->results) {
          auto type = cast<RankedTensorType>(
              ops[s.start + t]->getResult(res).getType());
          bytes += type.getNumElements() * elementBytes(type.getElementType());
        }
        if (!best || s.count() > best->run.count() ||
            (s.count() == best->run.count() && bytes < bestBytes)) {
          best = std::move(plan);
          bestBytes = bytes;
        }
      }
      if (best) {
        outline(f, ops, *best);
        return true;
      }
    }
    return false;
  }

  /// The run `r` as a plan, or nothing when its periods are not the same
  /// computation.
  std::optional<Plan> verify(ArrayRef<Operation *> ops,
                             const llvm::DenseMap<Operation *, size_t> &index,
                             const Run &r) {
    size_t p = r.period, end = r.start + r.count() * p;
    auto periodOfOp = [&](Operation *op) -> std::optional<size_t> {
      auto it = op ? index.find(op) : index.end();
      if (it == index.end() || it->second < r.start || it->second >= end)
        return std::nullopt;
      return (it->second - r.start) / p;
    };
    auto periodOf = [&](Value v) { return periodOfOp(v.getDefiningOp()); };
    auto posOfOp = [&](Operation *op) {
      return (index.lookup(op) - r.start) % p;
    };
    auto posOf = [&](Value v) { return posOfOp(v.getDefiningOp()); };
    Plan plan;
    plan.run = r;
    plan.hoisted.assign(p, false);
    // Ops that differ between periods in attributes only and read nothing
    // of the run stay in the kernel.
    for (size_t t = 0; t < p; ++t) {
      Operation *first = ops[r.start + t];
      for (size_t k = 1; k < r.count(); ++k) {
        Operation *op = ops[r.start + k * p + t];
        if (op->getName() != first->getName() ||
            op->getResultTypes() != first->getResultTypes() ||
            op->getNumOperands() != first->getNumOperands())
          return std::nullopt;
        if (op->getAttrDictionary() != first->getAttrDictionary())
          plan.hoisted[t] = true;
        // A view at a run-time offset (a kernel's offset argument) differs
        // in that operand as another view differs in its attribute.
        for (auto [a, b] : llvm::zip(op->getOperands(), first->getOperands()))
          if (a != b && !isa<RankedTensorType>(a.getType()))
            plan.hoisted[t] = true;
      }
      if (plan.hoisted[t])
        for (size_t k = 0; k < r.count(); ++k)
          for (Value v : ops[r.start + k * p + t]->getOperands())
            if (periodOf(v))
              return std::nullopt;
    }
    // A period of elementwise ops only is left to fusion: the iterations of
    // x = f(x) fuse into one pass over memory (and Black-Scholes' Horner
    // steps into its one loop), which calls would cut into one pass each.
    // A reduction, product or library call ends fusion anyway.
    bool endsFusion = false;
    for (size_t t = 0; t < p; ++t)
      if (!plan.hoisted[t] &&
          isa<ReduceOp, MatmulOp, LibcallOp>(ops[r.start + t]))
        endsFusion = true;
    if (!endsFusion)
      return std::nullopt;
    // Operands: the same position of the same period, or an outside value
    // bound the same way in every period.
    llvm::DenseMap<Value, size_t> outsideIndex;
    for (size_t t = 0; t < p; ++t) {
      if (plan.hoisted[t])
        continue;
      Operation *first = ops[r.start + t];
      for (auto [j, v0] : llvm::enumerate(first->getOperands())) {
        if (periodOf(v0)) { // inside the first period
          size_t t0 = posOf(v0);
          unsigned res = cast<OpResult>(v0).getResultNumber();
          for (size_t k = 1; k < r.count(); ++k) {
            Value vk = ops[r.start + k * p + t]->getOperand(j);
            if (periodOf(vk) != k || posOf(vk) != t0 ||
                cast<OpResult>(vk).getResultNumber() != res)
              return std::nullopt;
          }
          continue;
        }
        auto [it, added] = outsideIndex.try_emplace(v0, plan.outside.size());
        if (added) {
          plan.outside.push_back(v0);
          Value v1 = ops[r.start + p + t]->getOperand(j);
          Binding b;
          if (v1 != v0 && !periodOf(v1)) {
            // Loops vary scalars. Periods that differ in a large input are
            // a helper applied to different data (Black-Scholes' CND(d1)
            // and CND(d2)), which fusion across the calls serves better.
            auto type = dyn_cast<RankedTensorType>(v0.getType());
            if (!type || type.getNumElements() > kMaxVaryingElements)
              return std::nullopt;
            b.kind = Binding::Varying;
            b.values.assign(r.count(), Value());
            b.values[0] = v0;
          } else if (v1 != v0) {
            if (periodOf(v1) != 0 || plan.hoisted[posOf(v1)])
              return std::nullopt;
            b.kind = Binding::Carried;
            b.pos = posOf(v1);
            b.result = cast<OpResult>(v1).getResultNumber();
          }
          plan.bound.push_back(std::move(b));
        }
        Binding &b = plan.bound[it->second];
        for (size_t k = 1; k < r.count(); ++k) {
          Value vk = ops[r.start + k * p + t]->getOperand(j);
          bool ok = false;
          switch (b.kind) {
          case Binding::Same:
            ok = vk == v0;
            break;
          case Binding::Carried:
            ok = periodOf(vk) == k - 1 && posOf(vk) == b.pos &&
                 cast<OpResult>(vk).getResultNumber() == b.result;
            break;
          case Binding::Varying:
            ok = !periodOf(vk) && (!b.values[k] || b.values[k] == vk);
            b.values[k] = vk;
            break;
          }
          if (!ok)
            return std::nullopt;
        }
      }
    }
    // Results: what anything but its own period's ops reads (the next
    // period's carried values, the ops after the run, the terminator).
    llvm::SmallDenseSet<std::pair<size_t, unsigned>> escaping;
    for (size_t k = 0; k < r.count(); ++k)
      for (size_t t = 0; t < p; ++t) {
        if (plan.hoisted[t])
          continue;
        Operation *op = ops[r.start + k * p + t];
        for (OpResult res : op->getResults())
          for (Operation *user : res.getUsers()) {
            std::optional<size_t> up = periodOfOp(user);
            if (!up || *up != k || plan.hoisted[posOfOp(user)])
              escaping.insert({t, res.getResultNumber()});
          }
      }
    for (size_t t = 0; t < p; ++t)
      for (unsigned res = 0; res < ops[r.start + t]->getNumResults(); ++res)
        if (escaping.contains({t, res})) {
          // A view returned would alias an argument across the call.
          if (isa<ViewOp, RemapOp>(ops[r.start + t]))
            return std::nullopt;
          plan.results.push_back({t, res});
        }
    for (size_t t = 0; t < p; ++t)
      if (plan.hoisted[t])
        plan.hoistedArgs.push_back(t);
    return plan;
  }

  void outline(func::FuncOp kernel, ArrayRef<Operation *> ops,
               const Plan &plan) {
    const Run &r = plan.run;
    size_t p = r.period;
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    // The kernel's floating-point status goes to the checks of the body.
    Value status;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (kernel.getArgAttr(i, kFpStatusAttr))
        status = kernel.getArgument(i);
    SmallVector<Type> argTypes, resultTypes;
    for (Value v : plan.outside)
      argTypes.push_back(v.getType());
    for (size_t t : plan.hoistedArgs)
      argTypes.push_back(ops[r.start + t]->getResult(0).getType());
    // Results are written into destinations the caller passes: what the
    // callee returns is then its argument's buffer (dropped after
    // bufferization), and the caller's buffers are plain allocations whose
    // deallocation is placed statically.
    for (auto [t, res] : plan.results)
      resultTypes.push_back(ops[r.start + t]->getResult(res).getType());
    argTypes.append(resultTypes);
    if (status)
      argTypes.push_back(status.getType());
    b.setInsertionPointAfter(kernel);
    std::string name = (kernel.getSymName() + "_repeat").str();
    for (unsigned i = 0; module.lookupSymbol(name); ++i)
      name = (kernel.getSymName() + "_repeat" + Twine(i)).str();
    auto fn = func::FuncOp::create(b, ops[r.start]->getLoc(), name,
                                   b.getFunctionType(argTypes, resultTypes));
    fn.setPrivate();
    // Compiled once and called from each period: never inlined back.
    fn->setAttr("passthrough", b.getStrArrayAttr({"noinline"}));
    if (status)
      fn.setArgAttr(argTypes.size() - 1, kFpStatusAttr, b.getUnitAttr());
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    IRMapping map;
    for (auto [i, v] : llvm::enumerate(plan.outside))
      map.map(v, entry->getArgument(i));
    for (auto [i, t] : llvm::enumerate(plan.hoistedArgs))
      map.map(ops[r.start + t]->getResult(0),
              entry->getArgument(plan.outside.size() + i));
    for (size_t t = 0; t < p; ++t)
      if (!plan.hoisted[t])
        b.clone(*ops[r.start + t], map);
    SmallVector<Value> returned;
    size_t destArg = plan.outside.size() + plan.hoistedArgs.size();
    for (auto [i, tr] : llvm::enumerate(plan.results)) {
      Value v = map.lookup(ops[r.start + tr.first]->getResult(tr.second));
      returned.push_back(bufferization::MaterializeInDestinationOp::create(
                             b, fn.getLoc(), v, entry->getArgument(destArg + i))
                             .getResult());
    }
    func::ReturnOp::create(b, fn.getLoc(), returned);
    // Each period becomes a call after its last op.
    SmallVector<Value> previous; // the results of the call before
    for (size_t k = 0; k < r.count(); ++k) {
      size_t base = r.start + k * p;
      SmallVector<Value> args;
      for (auto [i, v] : llvm::enumerate(plan.outside)) {
        const Binding &bd = plan.bound[i];
        if (bd.kind == Binding::Varying) {
          args.push_back(bd.values[k]);
          continue;
        }
        if (bd.kind == Binding::Same || k == 0) {
          args.push_back(v);
          continue;
        }
        auto at = llvm::find(plan.results,
                             std::pair<size_t, unsigned>{bd.pos, bd.result});
        args.push_back(previous[at - plan.results.begin()]);
      }
      for (size_t t : plan.hoistedArgs)
        args.push_back(ops[base + t]->getResult(0));
      b.setInsertionPointAfter(ops[base + p - 1]);
      // (alloc_tensor, not tensor.empty: CSE would make one empty tensor
      // of all periods, and bufferization its copies at the top.)
      for (Type t : resultTypes)
        args.push_back(bufferization::AllocTensorOp::create(
            b, ops[base]->getLoc(), cast<RankedTensorType>(t), ValueRange{}));
      if (status)
        args.push_back(status);
      auto call = func::CallOp::create(b, ops[base]->getLoc(), fn, args);
      previous.assign(call.getResults().begin(), call.getResults().end());
      // Every use of a result reads the call's instead: the next periods'
      // reads were bound to these results above, and the period's own ops
      // (which read them before the call) are erased below.
      for (auto [i, tr] : llvm::enumerate(plan.results))
        ops[base + tr.first]->getResult(tr.second).replaceAllUsesWith(
            call.getResult(i));
    }
    // The periods' own ops, last first (hoisted ones stay).
    for (size_t i = r.start + r.count() * p; i-- > r.start;)
      if (!plan.hoisted[(i - r.start) % p])
        ops[i]->erase();
  }
};
} // namespace
