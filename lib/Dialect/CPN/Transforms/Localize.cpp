//===- Localize.cpp - one rank's program over blocks of rows
//---------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// The rank-local program of a JIT kernel (issue 23). Each split output is
// computed on this rank's block of rows only, from the rows of its operands
// that those rows need, demand-driven from the outputs back to the inputs:
//
//   - an elementwise op computes rows [lo, hi) from rows [lo, hi) of each
//     operand;
//   - a view whose rows lie whole in rows of its base (row-aligned: u[1:-1,
//     2:], u[:, 0]) reads rows [lo + d, hi + d) of the base, d its row
//     offset; an update writes the rows of its box that fall in [lo, hi);
//   - a reduction that keeps the first axis, and a product by rows of its
//     left side (the right side whole), compute their rows;
//   - iota and random bits compute their rows only (random words are those
//     of their row-major index: the counter moved by the block's first
//     element, the same values on any number of ranks);
//   - a library call that computes each row from the same row of its
//     operand (sorts, scans and FFTs along the rows: rowwiseCall) is called
//     on the rows;
//   - anything else (a library call, a transposed or broadcast view of a
//     split value, a reduction over rows) is computed whole from whole
//     operands and its rows taken: correct on any op, at the price of the
//     whole operands.
//
// A split input's memref argument becomes the rows [lo, hi) of the input
// that this rank's uses read (its block and a halo where a view sits at
// another row offset: a stencil); `cpn.rows` on the argument gives those
// rows for every rank, computed by the same walk for each, so that the
// caller (the Engine) knows which rows to send to which rank before the
// kernel runs. Outputs: a split output's memref holds the block; a donated
// input written in place keeps its rows and gets its block rewritten (the
// update chain re-based on the local input, so that the in-place passes see
// the program they saw whole); an output that is a sum, product, min, max,
// any or all over the first axis of a split value, or a product whose
// contraction runs over split rows (`x.T @ v`, `y @ v` of a vector y: each
// rank multiplies its block of the rows), is this rank's partial result
// (`cpn.combine`), which the caller combines over the ranks.
//
// Blocks: rows [n * q / P, n * (q + 1) / P) of an n-row value on rank q of
// P, as the runtime cuts them (cpnrt::comm::blockRows).
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/OpFacts.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace mlir::cpn {
#define GEN_PASS_DEF_LOCALIZE
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {

int64_t blockLo(int64_t n, int64_t q, int64_t ranks) { return n * q / ranks; }

int64_t rowElements(RankedTensorType t) {
  int64_t r = 1;
  if (t.getRank() == 0)
    return r;
  for (int64_t d : t.getShape().drop_front())
    r *= d;
  return r;
}

RankedTensorType withRows(RankedTensorType t, int64_t rows) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return RankedTensorType::get(shape, t.getElementType());
}

MemRefType withRows(MemRefType t, int64_t rows) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return MemRefType::get(shape, t.getElementType());
}

bool elementwise(Operation *op) {
  return op->hasTrait<OpTrait::CPNSameShape>() || isa<CopyOp>(op);
}

/// Reductions whose partial results over blocks of rows combine exactly by
/// the same reduction (or, for sums, closely: float sums change rounding).
/// `elem` is the result's element type: the runtime's all-reduce has no
/// float16, and no min or max of complex numbers (NumPy orders them
/// lexicographically); those are computed whole.
bool combinable(ReduceKind k, Type elem) {
  if (elem.isF16())
    return false;
  if (isa<ComplexType>(elem))
    return k == ReduceKind::sum || k == ReduceKind::prod;
  return k == ReduceKind::sum || k == ReduceKind::prod ||
         k == ReduceKind::min || k == ReduceKind::max || k == ReduceKind::any ||
         k == ReduceKind::all;
}

class Localizer {
public:
  Localizer(func::FuncOp f, int64_t ranks, int64_t rank, int64_t threshold,
            int64_t part)
      : f_(f), ranks_(ranks), rank_(rank), threshold_(threshold), part_(part) {}

  LogicalResult run();

private:
  struct Output {
    Value source;               // the value written
    unsigned destArg;           // the memref it is written into
    int donor = -1;             // the input it is written into in place
    bool split = false;         // this rank computes its block
    bool partial = false;       // a combinable reduction's partial
    Operation *final = nullptr; // the materialize into the memref
  };

  /// A ranked static tensor (or memref) big enough to split.
  bool splittable(ShapedType t) const {
    return t && t.hasStaticShape() && t.getRank() >= 1 &&
           t.getNumElements() >= threshold_ && t.getNumElements() > 0 &&
           t.getDimSize(0) >= ranks_;
  }
  int64_t rowsOf(Value v) const {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getRank() ? t.getDimSize(0) : 0;
  }
  bool whole(Value v, int64_t lo, int64_t hi) const {
    return lo == 0 && hi == rowsOf(v);
  }
  /// The rows of `v` whose index rows (those of the split base it is
  /// aligned with) are rank q's block: the rows a reduction's partial reads.
  std::pair<int64_t, int64_t> naturalRows(Value v, int64_t q) const;
  bool aligned(Value v, int64_t &extent, int64_t &shift, int depth) const;

  /// Rows [lo, hi) of `v` (the whole value for lo = 0, hi = its rows; a
  /// 0-d value is always whole): records what each input must hold on rank
  /// `q_` and, when emitting, builds them.
  Value get(Value v, int64_t lo, int64_t hi);
  Value getWhole(Value v) { return get(v, 0, rowsOf(v)); }
  /// A value that is not a tensor (an index computed from the offsets
  /// argument): cloned as it is.
  Value scalar(Value v);
  /// Every operand of `op` whole (tensors) or cloned (scalars).
  SmallVector<Value> wholeOperands(Operation *op);
  /// The op computed whole from whole operands, its rows [lo, hi) taken.
  Value computeWhole(Operation *op, Value result, int64_t lo, int64_t hi);
  Value sliceRows(Value whole, int64_t lo, int64_t hi);
  Value donated(Value v, unsigned input, int64_t lo, int64_t hi);
  Value partial(ReduceOp red);
  /// Whether `mm` contracts over rows of a split value (`x.T @ v`: the left
  /// side a transposed view of x; `y @ v`: a 1 x n view of a vector y; v's
  /// n rows along them): `base` is x or y. Summed partial products then.
  bool contractsRows(MatmulOp mm, Value &base, bool &vector) const;
  /// The rows of the contraction that rank q multiplies.
  std::pair<int64_t, int64_t> productRows(MatmulOp mm, int64_t q) const;
  Value partialProduct(MatmulOp mm);
  Operation *clone(Operation *op, ValueRange operands, Type result,
                   ArrayRef<NamedAttribute> changed = {});

  /// The rows t of each split output's block edges that need rows of
  /// another rank's block (a stencil's halo), when every output is split
  /// (not a partial) and t or fewer rows at each edge of every block do: the
  /// rows between (the interior) then compute from the block alone, while the
  /// halo travels. 0: no such split.
  int64_t borderRows(ArrayRef<Output> outputs);
  /// Whether, on rank q_, computing rows [lo + t, hi - t) of every output
  /// reads only rows of the split inputs' blocks, and each part (those rows,
  /// [lo, lo + t), [hi - t, hi)) reads an input written in place only at
  /// the rows it writes.
  bool partsAreLocal(ArrayRef<Output> outputs, int64_t t);
  /// The rows part `range` (0 the interior, 1 the top border, 2 the bottom
  /// one) computes of output o on rank q with borders of t rows: rows of
  /// the output, or of the reduced value for a partial (its natural rows
  /// cut alike, clipped to the value).
  std::pair<int64_t, int64_t> partRowsOf(const Output &o, int range, int64_t q,
                                         int64_t t) const;
  /// Whether `v` is input `input` itself or a copy of it (`pn = p.copy()`
  /// written into p's old store): its values are already in the input's
  /// store, and the parts write none of them.
  bool copyOfInput(Value v, unsigned input) const;

  func::FuncOp f_;
  int64_t ranks_, rank_, threshold_;
  // 0: the block's program; 1: its interior rows; 2: its border rows
  // (borderRows).
  int64_t part_;
  // The walk's rank, and whether it builds IR (else it records rows).
  int64_t q_ = 0;
  bool emit_ = false;
  OpBuilder *b_ = nullptr;
  // Inputs: the to_tensor of each input argument.
  llvm::DenseMap<Value, unsigned> inputArg_;
  SmallVector<std::pair<int64_t, int64_t>> rows_; // per argument, rank q_
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> allRows_;
  SmallVector<Value> localInput_; // per argument, when emitting
  // The updates donated() emits into donated inputs, and the views of their
  // values that chainView() makes, in order: moved after every other op, so
  // that nothing reads an input after its in-place update (a row of the base
  // outside an update's box is read from the input itself, run()).
  SmallVector<Operation *> chain_;
  std::map<std::tuple<void *, int64_t, int64_t>, Value> memo_;
  // The row ranges each value is asked for on rank q_ (collect_: the first
  // walk of each rank), and the span a value is computed on where its uses
  // ask for overlapping ranges (a stencil's shifted views of one value):
  // computed once on their union, each use a view of it, not once per use.
  bool collect_ = false;
  std::map<void *, SmallVector<std::pair<int64_t, int64_t>>> requests_;
  std::map<void *, std::pair<int64_t, int64_t>> span_;
  SmallVector<std::map<void *, std::pair<int64_t, int64_t>>> spans_;
  void chooseSpans();
  // donated()'s values by (value, input): the chain's value and the rows
  // [lo, hi) of it that are the value's (the output's block).
  std::map<std::pair<void *, unsigned>, std::tuple<Value, int64_t, int64_t>>
      chainMemo_;
  Value donatedChain(Value v, unsigned input, int64_t lo, int64_t hi);
  bool chainView(Value v, unsigned input, int64_t lo, int64_t hi, Value &out);
  IRMapping scalars_;
};

/// Whether `v` lies along the rows of a split input (through row-aligned
/// views and elementwise ops): its `extent` rows, value row i at index row
/// i + `shift`.
bool Localizer::aligned(Value v, int64_t &extent, int64_t &shift,
                        int depth) const {
  if (inputArg_.count(v)) {
    extent = rowsOf(v);
    shift = 0;
    return splittable(cast<RankedTensorType>(v.getType()));
  }
  Operation *op = v.getDefiningOp();
  if (!op || depth > 32)
    return false;
  if (auto view = dyn_cast<ViewOp>(op)) {
    int64_t delta = 0;
    if (view.getDynOffset() ||
        !rowBox(cast<RankedTensorType>(view.getBase().getType()),
                cast<RankedTensorType>(view.getType()).getShape(),
                view.getOffset(), view.getStrides(), delta) ||
        !aligned(view.getBase(), extent, shift, depth + 1))
      return false;
    shift += delta;
    return true;
  }
  if (elementwise(op))
    for (Value x : op->getOperands())
      if (aligned(x, extent, shift, depth + 1))
        return true;
  return false;
}

std::pair<int64_t, int64_t> Localizer::naturalRows(Value v, int64_t q) const {
  int64_t n = rowsOf(v), extent = n, shift = 0;
  if (!aligned(v, extent, shift, 0)) {
    extent = n;
    shift = 0;
  }
  int64_t lo = blockLo(extent, q, ranks_) - shift;
  int64_t hi = blockLo(extent, q + 1, ranks_) - shift;
  return {std::clamp<int64_t>(lo, 0, n), std::clamp<int64_t>(hi, 0, n)};
}

Operation *Localizer::clone(Operation *op, ValueRange operands, Type result,
                            ArrayRef<NamedAttribute> changed) {
  OperationState st(op->getLoc(), op->getName());
  st.addOperands(operands);
  st.addAttributes(op->getAttrs());
  for (const NamedAttribute &a : changed)
    st.attributes.set(a.getName(), a.getValue());
  st.addTypes(result);
  return b_->create(st);
}

Value Localizer::scalar(Value v) {
  if (emit_)
    if (Value m = scalars_.lookupOrNull(v))
      return m;
  Operation *op = v.getDefiningOp();
  if (!op) // an argument (the offsets memref) keeps its number
    return emit_ ? scalars_.lookup(v) : Value();
  SmallVector<Value> operands = wholeOperands(op);
  if (!emit_)
    return {};
  Operation *c = b_->clone(*op);
  c->setOperands(operands);
  for (auto [o, n] : llvm::zip(op->getResults(), c->getResults()))
    scalars_.map(o, n);
  return scalars_.lookup(v);
}

SmallVector<Value> Localizer::wholeOperands(Operation *op) {
  SmallVector<Value> operands;
  for (Value x : op->getOperands())
    operands.push_back(isa<RankedTensorType>(x.getType()) ? getWhole(x)
                                                          : scalar(x));
  return operands;
}

Value Localizer::sliceRows(Value w, int64_t lo, int64_t hi) {
  if (!emit_ || whole(w, lo, hi))
    return w;
  auto t = cast<RankedTensorType>(w.getType());
  int64_t row = rowElements(t);
  return ViewOp::create(*b_, w.getLoc(), withRows(t, hi - lo), w, Value(),
                        b_->getI64IntegerAttr(lo * row),
                        b_->getDenseI64ArrayAttr(
                            rowMajorStrides(withRows(t, hi - lo).getShape())))
      .getResult();
}

Value Localizer::computeWhole(Operation *op, Value result, int64_t lo,
                              int64_t hi) {
  SmallVector<Value> operands = wholeOperands(op);
  if (!emit_)
    return {};
  auto key =
      std::make_tuple(result.getAsOpaquePointer(), int64_t(-1), int64_t(-1));
  Value w = memo_[key];
  if (!w) {
    Operation *c = b_->clone(*op);
    c->setOperands(operands);
    w = c->getResult(cast<OpResult>(result).getResultNumber());
    memo_[key] = w;
  }
  return sliceRows(w, lo, hi);
}

Value Localizer::get(Value v, int64_t lo, int64_t hi) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() == 0)
    lo = hi = 0;
  auto key = std::make_tuple(v.getAsOpaquePointer(), lo, hi);
  auto found = memo_.find(key);
  if (found != memo_.end())
    return found->second;
  if (t.getRank() && hi <= lo) {
    // No rows here (a block clipped away): an empty tensor, read from
    // nothing.
    if (!emit_)
      return {};
    Value e =
        tensor::EmptyOp::create(*b_, v.getLoc(), withRows(t, 0).getShape(),
                                t.getElementType())
            .getResult();
    memo_[key] = e;
    return e;
  }
  Value out;
  Operation *op = v.getDefiningOp();
  // The span this value is computed on (chooseSpans), when it holds more
  // than these rows: a view of it.
  std::optional<std::pair<int64_t, int64_t>> span;
  if (t.getRank() && op) {
    if (collect_)
      requests_[v.getAsOpaquePointer()].push_back({lo, hi});
    auto s = span_.find(v.getAsOpaquePointer());
    if (s != span_.end() && s->second.first <= lo && hi <= s->second.second &&
        s->second != std::make_pair(lo, hi))
      span = s->second;
  }
  if (span) {
    Value w = get(v, span->first, span->second);
    if (emit_)
      out = sliceRows(w, lo - span->first, hi - span->first);
  } else if (auto it = inputArg_.find(v); it != inputArg_.end()) {
    unsigned arg = it->second;
    auto &r = rows_[arg];
    if (t.getRank() == 0 || !splittable(t)) {
      r = {0, rowsOf(v)};
    } else if (hi > lo) {
      r = r.first < r.second
              ? std::make_pair(std::min(r.first, lo), std::max(r.second, hi))
              : std::make_pair(lo, hi);
    }
    if (emit_) {
      Value local = localInput_[arg];
      int64_t base = rows_[arg].first;
      auto lt = cast<RankedTensorType>(local.getType());
      if (t.getRank() == 0 || (lo == base && hi - lo == lt.getDimSize(0)))
        out = local;
      else
        out = ViewOp::create(
                  *b_, v.getLoc(), withRows(t, hi - lo), local, Value(),
                  b_->getI64IntegerAttr((lo - base) * rowElements(t)),
                  b_->getDenseI64ArrayAttr(
                      rowMajorStrides(withRows(t, hi - lo).getShape())))
                  .getResult();
    }
  } else if (!op) {
    out = Value();
  } else if (auto view = dyn_cast<ViewOp>(op);
             view && (t.getRank() || !view.getDynOffset())) {
    auto base = cast<RankedTensorType>(view.getBase().getType());
    int64_t delta = 0;
    if (!view.getDynOffset() && rowBox(base, t.getShape(), view.getOffset(),
                                       view.getStrides(), delta)) {
      // Rows of the base; the view's offset within them is unchanged.
      Value b = get(view.getBase(), delta + lo, delta + hi);
      if (emit_) {
        int64_t row = rowElements(base);
        out = clone(op, {b}, withRows(t, hi - lo),
                    {b_->getNamedAttr("offset", b_->getI64IntegerAttr(
                                                    view.getOffset() % row))})
                  ->getResult(0);
      }
    } else if (!view.getDynOffset()) {
      // Any other view (a row of u, u.T, an element) reads the base rows
      // its elements lie in (all of them for u.T); its rows [lo, hi) start
      // lo strides further.
      int64_t start =
          view.getOffset() + (t.getRank() ? lo * view.getStrides()[0] : 0);
      SmallVector<int64_t> shape(t.getShape());
      if (t.getRank())
        shape[0] = hi - lo;
      int64_t r0 = 0, r1 = rowsOf(view.getBase());
      if (!boxRows(base, shape, start, view.getStrides(), r0, r1))
        r0 = 0, r1 = rowsOf(view.getBase());
      Value b = get(view.getBase(), r0, r1);
      if (emit_)
        out = clone(op, {b}, t.getRank() ? withRows(t, hi - lo) : t,
                    {b_->getNamedAttr(
                        "offset",
                        b_->getI64IntegerAttr(start - r0 * rowElements(base)))})
                  ->getResult(0);
    } else {
      out = computeWhole(op, v, lo, hi);
    }
  } else if (auto up = dyn_cast<UpdateOp>(op)) {
    auto base = cast<RankedTensorType>(up.getBase().getType());
    auto value = cast<RankedTensorType>(up.getValue().getType());
    int64_t delta = 0;
    if (!up.getDynOffset() && rowBox(base, value.getShape(), up.getOffset(),
                                     up.getStrides(), delta)) {
      Value b = get(up.getBase(), lo, hi);
      int64_t c0 = std::max(lo, delta),
              c1 = std::min(hi, delta + value.getDimSize(0));
      if (c1 <= c0) {
        out = b;
      } else {
        Value x = get(up.getValue(), c0 - delta, c1 - delta);
        if (emit_) {
          int64_t row = rowElements(base);
          out = clone(op, {b, x}, withRows(t, hi - lo),
                      {b_->getNamedAttr("offset", b_->getI64IntegerAttr(
                                                      (c0 - lo) * row +
                                                      up.getOffset() % row))})
                    ->getResult(0);
        }
      }
    } else if (int64_t r0, r1; !up.getDynOffset() &&
                               boxRows(base, value.getShape(), up.getOffset(),
                                       up.getStrides(), r0, r1)) {
      // Any other box (a row `u[0, :] = ...`, an element): rows [lo, hi)
      // outside it are the base's; rows that meet it are updated from the
      // whole value on the base rows around them.
      if (r1 <= lo || r0 >= hi) {
        out = get(up.getBase(), lo, hi);
      } else {
        int64_t a = std::min(lo, r0), z = std::max(hi, r1);
        Value b = get(up.getBase(), a, z);
        Value x = getWhole(up.getValue());
        if (emit_) {
          Value w =
              clone(op, {b, x}, withRows(t, z - a),
                    {b_->getNamedAttr(
                        "offset", b_->getI64IntegerAttr(
                                      up.getOffset() - a * rowElements(base)))})
                  ->getResult(0);
          out = sliceRows(w, lo - a, hi - a);
        }
      }
    } else {
      out = computeWhole(op, v, lo, hi);
    }
  } else if (t.getRank() == 0) {
    out = computeWhole(op, v, lo, hi);
  } else if (elementwise(op) && op->getNumResults() == 1) {
    SmallVector<Value> operands;
    for (Value x : op->getOperands())
      operands.push_back(get(x, lo, hi));
    if (emit_)
      out = clone(op, operands, withRows(t, hi - lo))->getResult(0);
  } else if (auto red = dyn_cast<ReduceOp>(op);
             red && !llvm::is_contained(red.getAxes(), 0)) {
    Value x = get(red.getX(), lo, hi);
    if (emit_)
      out = clone(op, {x}, withRows(t, hi - lo))->getResult(0);
  } else if (auto iota = dyn_cast<IotaOp>(op)) {
    // Its rows: the same op on fewer rows, their index along the first
    // dimension moved by lo (nothing whole computed).
    if (emit_) {
      auto local = withRows(t, hi - lo);
      out = clone(op, {}, local)->getResult(0);
      if (iota.getDim() == 0 && lo != 0)
        out = AddOp::create(
                  *b_, v.getLoc(), local, out,
                  arith::ConstantOp::create(
                      *b_, v.getLoc(), local,
                      DenseElementsAttr::get(local, b_->getI64IntegerAttr(lo))))
                  .getResult();
    }
  } else if (auto bits = dyn_cast<RandomBitsOp>(op)) {
    // Element i's word is that of counter + i (row-major, 64-bit
    // arithmetic): rows [lo, hi) are the words of counter + lo * row on
    // fewer rows, the same values whatever the number of ranks.
    Value key = getWhole(bits.getKey()), counter = getWhole(bits.getCounter());
    if (emit_) {
      if (lo != 0) {
        auto scalarTy = cast<RankedTensorType>(counter.getType());
        counter =
            AddOp::create(
                *b_, v.getLoc(), scalarTy, counter,
                arith::ConstantOp::create(
                    *b_, v.getLoc(), scalarTy,
                    DenseElementsAttr::get(
                        scalarTy, b_->getI64IntegerAttr(lo * rowElements(t)))))
                .getResult();
      }
      out = clone(op, {key, counter}, withRows(t, hi - lo))->getResult(0);
    }
  } else if (auto call = dyn_cast<LibcallOp>(op);
             call && rowwiseCall(call) &&
             !(hi - lo < 2 && call.getCallee().starts_with("cum"))) {
    // Each row of the result from the same row of its one operand: the
    // same call on the rows. Not a scan of one row: the runtime splits a
    // single long row over threads (partial sums re-associated), while the
    // rows of the whole array are each scanned in order, as NumPy does.
    Value a = get(call->getOperand(0), lo, hi);
    if (emit_)
      out = clone(op, {a}, withRows(t, hi - lo))->getResult(0);
  } else if (auto mm = dyn_cast<MatmulOp>(op)) {
    Value l = get(mm.getLhs(), lo, hi);
    Value r = getWhole(mm.getRhs());
    if (emit_)
      out = clone(op, {l, r}, withRows(t, hi - lo))->getResult(0);
  } else {
    out = computeWhole(op, v, lo, hi);
  }
  if (emit_)
    memo_[key] = out;
  else
    memo_.emplace(key, Value());
  return out;
}

Value Localizer::donated(Value v, unsigned input, int64_t lo, int64_t hi) {
  auto key = std::make_pair(v.getAsOpaquePointer(), input);
  auto found = chainMemo_.find(key);
  if (found != chainMemo_.end() && std::get<1>(found->second) == lo &&
      std::get<2>(found->second) == hi)
    return std::get<0>(found->second);
  Value out = donatedChain(v, input, lo, hi);
  auto it = inputArg_.find(v);
  if (it == inputArg_.end() || it->second != input)
    chainMemo_[key] = {out, lo, hi};
  return out;
}

Value Localizer::donatedChain(Value v, unsigned input, int64_t lo, int64_t hi) {
  // The update chain that writes into the donated input, re-based on the
  // rows the local input holds; anything else is computed on the block and
  // written into it.
  auto it = inputArg_.find(v);
  if (it != inputArg_.end() && it->second == input)
    return emit_ ? localInput_[input] : Value();
  auto t = cast<RankedTensorType>(v.getType());
  if (!splittable(t)) // the input is whole on every rank, and so is v
    return get(v, 0, rowsOf(v));
  int64_t base = rows_[input].first;
  int64_t row = rowElements(t);
  if (auto up = v.getDefiningOp<UpdateOp>()) {
    auto value = cast<RankedTensorType>(up.getValue().getType());
    int64_t delta = 0;
    if (!up.getDynOffset() &&
        rowBox(cast<RankedTensorType>(up.getBase().getType()), value.getShape(),
               up.getOffset(), up.getStrides(), delta)) {
      Value b = donated(up.getBase(), input, lo, hi);
      int64_t c0 = std::max(lo, delta),
              c1 = std::min(hi, delta + value.getDimSize(0));
      if (c1 <= c0)
        return b;
      Value x;
      if (!chainView(up.getValue(), input, c0 - delta, c1 - delta, x))
        x = get(up.getValue(), c0 - delta, c1 - delta);
      if (!emit_)
        return {};
      Operation *c =
          clone(up, {b, x}, b.getType(),
                {b_->getNamedAttr(
                    "offset", b_->getI64IntegerAttr((c0 - base) * row +
                                                    up.getOffset() % row))});
      chain_.push_back(c);
      return c->getResult(0);
    }
    int64_t r0, r1;
    if (!up.getDynOffset() &&
        boxRows(cast<RankedTensorType>(up.getBase().getType()),
                value.getShape(), up.getOffset(), up.getStrides(), r0, r1)) {
      // Another box (a row, an element): outside the block nothing to
      // write; inside it, written from the whole value.
      if (r1 <= lo || r0 >= hi)
        return donated(up.getBase(), input, lo, hi);
      if (r0 >= lo && r1 <= hi) {
        Value b = donated(up.getBase(), input, lo, hi);
        Value x;
        if (!chainView(up.getValue(), input, 0, rowsOf(up.getValue()), x))
          x = getWhole(up.getValue());
        if (!emit_)
          return {};
        Operation *c = clone(
            up, {b, x}, b.getType(),
            {b_->getNamedAttr(
                "offset", b_->getI64IntegerAttr(up.getOffset() - base * row))});
        chain_.push_back(c);
        return c->getResult(0);
      }
    }
  }
  // A value computed once on exactly the rows the local input holds (a copy
  // of the chain that a stencil reads at shifted rows, `pn = p.copy()` kept
  // as an output: chooseSpans) is written whole: its halo rows too, which
  // hold that value's rows as well (and are sent again before any kernel
  // reads them). Bufferization can then make it in the input's buffer, where
  // a write of its block alone would copy the block back.
  if (auto s = span_.find(v.getAsOpaquePointer());
      s != span_.end() && s->second == rows_[input] && s->second.first <= lo &&
      hi <= s->second.second)
    return get(v, s->second.first, s->second.second);
  Value x = get(v, lo, hi);
  if (!emit_)
    return {};
  Value in = localInput_[input];
  if (hi <= lo)
    return in;
  auto c = UpdateOp::create(*b_, v.getLoc(), in.getType(), in, x, Value(),
                            b_->getI64IntegerAttr((lo - base) * row),
                            b_->getDenseI64ArrayAttr(rowMajorStrides(
                                withRows(t, hi - lo).getShape())));
  chain_.push_back(c);
  return c.getResult();
}

/// An update's value read from the chain of `input` where it is a value of
/// that chain, or a view of one, whose rows [lo, hi) lie in the chain's
/// block (`p[:, -1] = p[:, -2]` after `p[1:-1, 1:-1] = ...`): the view made
/// on the chain's value and kept with it (chain_), rather than a second
/// chain of the same updates on the block that get() would build. False
/// otherwise (nothing made).
bool Localizer::chainView(Value v, unsigned input, int64_t lo, int64_t hi,
                          Value &out) {
  auto t = cast<RankedTensorType>(v.getType());
  if (!t.getRank() || hi <= lo)
    return false;
  auto it = chainMemo_.find({v.getAsOpaquePointer(), input});
  if (it != chainMemo_.end()) {
    auto [value, clo, chi] = it->second;
    if (lo < clo || hi > chi)
      return false;
    if (emit_) {
      int64_t base = rows_[input].first;
      out = sliceRows(value, lo - base, hi - base);
      if (out != value)
        chain_.push_back(out.getDefiningOp());
    }
    return true;
  }
  auto view = v.getDefiningOp<ViewOp>();
  if (!view || view.getDynOffset())
    return false;
  auto base = cast<RankedTensorType>(view.getBase().getType());
  int64_t row = rowElements(base), delta = 0, offset, r0, r1;
  Value b;
  if (rowBox(base, t.getShape(), view.getOffset(), view.getStrides(), delta)) {
    if (!chainView(view.getBase(), input, delta + lo, delta + hi, b))
      return false;
    offset = view.getOffset() % row;
  } else {
    int64_t start = view.getOffset() + lo * view.getStrides()[0];
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = hi - lo;
    if (!boxRows(base, shape, start, view.getStrides(), r0, r1) ||
        !chainView(view.getBase(), input, r0, r1, b))
      return false;
    offset = start - r0 * row;
  }
  if (emit_) {
    // On a block's rows of the chain's value (sliceRows: row-major, its rows
    // those of its base), the view is made on that value itself: one view,
    // which bufferization copies alone where the chain then writes (a
    // column, not the block).
    if (auto rows = b.getDefiningOp<ViewOp>()) {
      auto rt = cast<RankedTensorType>(rows.getType());
      auto bt = cast<RankedTensorType>(rows.getBase().getType());
      if (!rows.getDynOffset() && rt.getRank() == bt.getRank() &&
          rt.getShape().drop_front() == bt.getShape().drop_front() &&
          rows.getStrides() ==
              ArrayRef<int64_t>(rowMajorStrides(rt.getShape()))) {
        offset += rows.getOffset();
        b = rows.getBase();
      }
    }
    Operation *c =
        clone(view, {b}, withRows(t, hi - lo),
              {b_->getNamedAttr("offset", b_->getI64IntegerAttr(offset))});
    chain_.push_back(c);
    out = c->getResult(0);
  }
  return true;
}

/// Each value asked for at two or more row ranges whose union is one run of
/// rows (the shifted views of a stencil: rows [lo - 1, hi - 1), [lo, hi),
/// [lo + 1, hi + 1)) is computed once on that union: no more rows than the
/// ranges computed apart, and one value where bufferization would otherwise
/// materialize each (a copy of a block per view).
void Localizer::chooseSpans() {
  span_.clear();
  for (auto &[v, ranges] : requests_) {
    if (ranges.size() < 2)
      continue;
    llvm::sort(ranges);
    int64_t lo = ranges.front().first, hi = ranges.front().second;
    bool run = true;
    for (auto [a, z] : ranges) {
      run &= a <= hi;
      hi = std::max(hi, z);
    }
    if (run)
      span_[v] = {lo, hi};
  }
  requests_.clear();
}

Value Localizer::partial(ReduceOp red) {
  auto [lo, hi] = naturalRows(red.getX(), q_);
  Value x = get(red.getX(), lo, hi);
  if (!emit_)
    return {};
  return clone(red, {x}, red.getType())->getResult(0);
}

bool Localizer::contractsRows(MatmulOp mm, Value &base, bool &vector) const {
  auto lt = cast<RankedTensorType>(mm.getLhs().getType());
  auto rt = cast<RankedTensorType>(mm.getRhs().getType());
  if (lt.getRank() != 2 || rt.getRank() != 2 || !rt.hasStaticShape() ||
      !lt.hasStaticShape() ||
      !combinable(ReduceKind::sum,
                  cast<RankedTensorType>(mm.getType()).getElementType()))
    return false;
  int64_t n = rt.getDimSize(0);
  vector = false;
  base = transposedBase(mm.getLhs());
  if (!base) {
    auto view = mm.getLhs().getDefiningOp<ViewOp>();
    if (!view || view.getDynOffset() || view.getOffset() != 0)
      return false;
    auto bt = cast<RankedTensorType>(view.getBase().getType());
    if (bt.getRank() != 1 || bt.getDimSize(0) != n || lt.getDimSize(0) != 1 ||
        view.getStrides() != ArrayRef<int64_t>{0, 1})
      return false;
    base = view.getBase();
    vector = true;
  }
  if (n < ranks_ ||
      !(splittable(cast<RankedTensorType>(base.getType())) || splittable(rt)))
    return false;
  // Every rank multiplies at least one row (as a reduction's partial).
  for (int64_t q = 0; q < ranks_; ++q) {
    auto [lo, hi] = productRows(mm, q);
    if (hi <= lo)
      return false;
  }
  return true;
}

std::pair<int64_t, int64_t> Localizer::productRows(MatmulOp mm,
                                                   int64_t q) const {
  // The rows of the split side, as a reduction's partial reads them; the
  // same rows of the other side (the contraction's index is both's row).
  Value base = transposedBase(mm.getLhs());
  if (!base)
    if (auto view = mm.getLhs().getDefiningOp<ViewOp>())
      base = view.getBase();
  if (base && splittable(cast<RankedTensorType>(base.getType())))
    return naturalRows(base, q);
  return naturalRows(mm.getRhs(), q);
}

Value Localizer::partialProduct(MatmulOp mm) {
  Value base;
  bool vector = false;
  contractsRows(mm, base, vector);
  auto [lo, hi] = productRows(mm, q_);
  Value x = get(base, lo, hi);
  Value v = get(mm.getRhs(), lo, hi);
  if (!emit_)
    return {};
  auto lt = cast<RankedTensorType>(mm.getLhs().getType());
  int64_t a = lt.getDimSize(0);
  auto viewTy = RankedTensorType::get({a, hi - lo}, lt.getElementType());
  SmallVector<int64_t> strides =
      vector ? SmallVector<int64_t>{0, 1} : SmallVector<int64_t>{1, a};
  Value l = ViewOp::create(*b_, mm.getLoc(), viewTy, x, Value(),
                           b_->getI64IntegerAttr(0),
                           b_->getDenseI64ArrayAttr(strides))
                .getResult();
  return clone(mm, {l, v}, mm.getType())->getResult(0);
}

std::pair<int64_t, int64_t> Localizer::partRowsOf(const Output &o, int range,
                                                  int64_t q, int64_t t) const {
  int64_t lo, hi;
  if (o.partial) {
    std::tie(lo, hi) =
        naturalRows(o.source.getDefiningOp<ReduceOp>().getX(), q);
  } else {
    lo = blockLo(rowsOf(o.source), q, ranks_);
    hi = blockLo(rowsOf(o.source), q + 1, ranks_);
  }
  std::pair<int64_t, int64_t> r = range == 0   ? std::make_pair(lo + t, hi - t)
                                  : range == 1 ? std::make_pair(lo, lo + t)
                                               : std::make_pair(hi - t, hi);
  r.first = std::clamp<int64_t>(r.first, lo, hi);
  r.second = std::clamp<int64_t>(r.second, r.first, hi);
  return r;
}

bool Localizer::copyOfInput(Value v, unsigned input) const {
  for (int depth = 0; depth < 8; ++depth) {
    if (auto it = inputArg_.find(v); it != inputArg_.end())
      return it->second == input;
    auto copy = v.getDefiningOp<CopyOp>();
    if (!copy || copy->getNumOperands() != 1 ||
        copy->getOperand(0).getType() != v.getType())
      return false;
    v = copy->getOperand(0);
  }
  return false;
}

bool Localizer::partsAreLocal(ArrayRef<Output> outputs, int64_t t) {
  unsigned nargs = f_.getNumArguments();
  for (const Output &o : outputs) {
    if (o.partial) {
      // Its border rows apart: each row reduced once.
      auto [lo, hi] =
          naturalRows(o.source.getDefiningOp<ReduceOp>().getX(), q_);
      if (hi - lo < 2 * t)
        return false;
      continue;
    }
    int64_t n = rowsOf(o.source);
    if (blockLo(n, q_ + 1, ranks_) - blockLo(n, q_, ranks_) < 4 * t)
      return false; // too few rows for an interior worth a kernel
  }
  auto rowsIn = [&](const Output &o, int range) {
    return partRowsOf(o, range, q_, t);
  };
  // A min or max (no identity) needs rows in each part.
  for (const Output &o : outputs)
    if (o.partial)
      for (int range = 0; range < 3; ++range) {
        auto red = o.source.getDefiningOp<ReduceOp>();
        auto [a, z] = rowsIn(o, range);
        if (z <= a && (red.getKind() == ReduceKind::min ||
                       red.getKind() == ReduceKind::max))
          return false;
      }
  for (int range = 0; range < 3; ++range) {
    rows_.assign(nargs, {0, 0});
    memo_.clear();
    chainMemo_.clear();
    span_.clear();
    for (const Output &o : outputs) {
      auto [a, z] = rowsIn(o, range);
      get(o.partial ? o.source.getDefiningOp<ReduceOp>().getX() : o.source, a,
          z);
    }
    for (auto &[v, arg] : inputArg_) {
      auto ty = cast<RankedTensorType>(v.getType());
      auto [r0, r1] = rows_[arg];
      if (!splittable(ty) || r1 <= r0)
        continue;
      int64_t n = ty.getDimSize(0);
      if (range == 0 &&
          (r0 < blockLo(n, q_, ranks_) || r1 > blockLo(n, q_ + 1, ranks_)))
        return false;
      // An input the window writes in place is read only at the rows this
      // part writes: the parts then update it one after another.
      for (const Output &o : outputs)
        if (o.donor == int(arg) && !copyOfInput(o.source, arg)) {
          auto [a, z] = rowsIn(o, range);
          if (r0 < a || r1 > z)
            return false;
        }
    }
  }
  return true;
}

int64_t Localizer::borderRows(ArrayRef<Output> outputs) {
  // Split outputs, and partial reductions over split rows (each part
  // reduces its rows; the border combines the interior's partial with its
  // own), not products' partials.
  bool writes = false;
  for (const Output &o : outputs) {
    if (o.partial ? !o.source.getDefiningOp<ReduceOp>() : !o.split)
      return 0;
    writes |= o.donor < 0 || !copyOfInput(o.source, unsigned(o.donor));
  }
  if (!writes) // only held copies: nothing to compute (and the parts must
    return 0;  // write a store in common to run in order)
  // Only where the block's program reads another rank's rows.
  bool halo = false;
  for (int64_t q = 0; q < ranks_; ++q)
    for (auto &[v, arg] : inputArg_) {
      auto t = cast<RankedTensorType>(v.getType());
      auto [r0, r1] = allRows_[q][arg];
      if (splittable(t) && r1 > r0 &&
          (r0 < blockLo(t.getDimSize(0), q, ranks_) ||
           r1 > blockLo(t.getDimSize(0), q + 1, ranks_)))
        halo = true;
    }
  if (!halo)
    return 0;
  int64_t found = 0;
  for (int64_t t = 1; t <= 4 && !found; ++t) {
    bool all = true;
    for (q_ = 0; q_ < ranks_ && all; ++q_)
      all = partsAreLocal(outputs, t);
    if (all)
      found = t;
  }
  memo_.clear();
  chainMemo_.clear();
  span_.clear();
  return found;
}

LogicalResult Localizer::run() {
  Block &body = f_.getBody().front();
  auto *ret = body.getTerminator();
  // Inputs and outputs as TraceImport makes them.
  SmallVector<Output> outputs;
  for (Operation &op : body) {
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(op)) {
      auto arg = dyn_cast<BlockArgument>(tt.getBuffer());
      if (!arg || arg.getOwner() != &body)
        return failure();
      inputArg_[tt.getResult()] = arg.getArgNumber();
      continue;
    }
    auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(op);
    if (!m || !isa<BaseMemRefType>(m.getDest().getType()))
      continue;
    auto arg = dyn_cast<BlockArgument>(m.getDest());
    if (!arg || arg.getOwner() != &body)
      return failure();
    Output o;
    o.source = m.getSource();
    o.destArg = arg.getArgNumber();
    o.final = &op;
    if (auto inner =
            o.source
                .getDefiningOp<bufferization::MaterializeInDestinationOp>()) {
      auto d = inputArg_.find(inner.getDest());
      if (d == inputArg_.end())
        return failure();
      o.donor = int(d->second);
      o.source = inner.getSource();
    }
    auto t = cast<RankedTensorType>(o.source.getType());
    o.split = splittable(t);
    if (auto red = o.source.getDefiningOp<ReduceOp>())
      if (combinable(red.getKind(), t.getElementType()) &&
          llvm::is_contained(red.getAxes(), 0) &&
          splittable(cast<RankedTensorType>(red.getX().getType())) &&
          o.donor < 0) {
        // Every rank must have rows to reduce (min and max have no
        // identity).
        bool rows = true;
        for (int64_t q = 0; q < ranks_; ++q) {
          auto [lo, hi] = naturalRows(red.getX(), q);
          rows &= hi > lo;
        }
        o.partial = rows;
        o.split = false;
      }
    Value base;
    bool vector = false;
    if (auto mm = o.source.getDefiningOp<MatmulOp>();
        mm && o.donor < 0 && contractsRows(mm, base, vector)) {
      o.partial = true;
      o.split = false;
    }
    outputs.push_back(o);
  }
  for (Operation &op : body)
    for (Value r : op.getResults())
      if (isa<RankedTensorType>(r.getType()) &&
          !cast<RankedTensorType>(r.getType()).hasStaticShape())
        return failure(); // shape-generic kernels are not partitioned
  if (outputs.empty())
    return success();

  auto walk = [&](const Output &o) {
    auto t = cast<RankedTensorType>(o.source.getType());
    int64_t n = t.getRank() ? t.getDimSize(0) : 0;
    int64_t lo = o.split ? blockLo(n, q_, ranks_) : 0;
    int64_t hi = o.split ? blockLo(n, q_ + 1, ranks_) : n;
    if (o.partial) {
      if (auto mm = o.source.getDefiningOp<MatmulOp>())
        return partialProduct(mm);
      return partial(o.source.getDefiningOp<ReduceOp>());
    }
    if (o.donor >= 0)
      return donated(o.source, unsigned(o.donor), lo, hi);
    return get(o.source, lo, hi);
  };
  // The rows every input holds on every rank: the same walk for each.
  unsigned nargs = f_.getNumArguments();
  allRows_.assign(ranks_, {});
  spans_.assign(ranks_, {});
  for (q_ = 0; q_ < ranks_; ++q_)
    for (bool collect : {true, false}) {
      // First the ranges each value is asked for (collect_), then the walk
      // with the spans chosen from them (chooseSpans).
      collect_ = collect;
      if (!collect) {
        chooseSpans();
        spans_[q_] = span_;
      } else {
        span_.clear();
        requests_.clear();
      }
      rows_.assign(nargs, {0, 0});
      memo_.clear();
      chainMemo_.clear();
      for (const Output &o : outputs) {
        if (o.donor >= 0) {
          // Written in place: the input holds at least the block it gets.
          auto t = cast<RankedTensorType>(o.source.getType());
          int64_t n = t.getRank() ? t.getDimSize(0) : 0;
          auto &r = rows_[o.donor];
          int64_t lo = o.split ? blockLo(n, q_, ranks_) : 0;
          int64_t hi = o.split ? blockLo(n, q_ + 1, ranks_) : n;
          r = r.first < r.second ? std::make_pair(std::min(r.first, lo),
                                                  std::max(r.second, hi))
                                 : std::make_pair(lo, hi);
        }
      }
      // In the order the program is emitted (below): fresh outputs, then
      // donated ones.
      for (bool donatedPass : {false, true})
        for (const Output &o : outputs)
          if ((o.donor >= 0) == donatedPass)
            walk(o);
      allRows_[q_] = rows_;
    }
  collect_ = false;
  int64_t border = borderRows(outputs);
  // Inputs whose store a held copy takes (copyOfInput): no part writes
  // them, so the caller lets a halo round read their rows beside the
  // interior (`cpn.kept`, set with the new body, once these ops are gone).
  SmallVector<unsigned> kept;
  for (const Output &o : outputs)
    if (border && o.donor >= 0 && copyOfInput(o.source, unsigned(o.donor)))
      kept.push_back(unsigned(o.donor));
  if (part_ != 0 && border == 0)
    return f_.emitError("cpn-localize: part=")
           << part_ << " of a kernel with no interior to split off";
  // The rows each output's part computes on this rank ([lo, hi) of its
  // memref argument, which holds the block: part 1 writes the rows between
  // the borders, part 2 the two borders).
  q_ = rank_;
  auto partRows = [&](const Output &o) {
    SmallVector<std::pair<int64_t, int64_t>> r;
    if (part_ == 1)
      r.push_back(partRowsOf(o, 0, rank_, border));
    else
      r.append(
          {partRowsOf(o, 1, rank_, border), partRowsOf(o, 2, rank_, border)});
    return r;
  };
  // What a part computes of output o: the output itself, or the value a
  // partial reduces.
  auto partValue = [&](const Output &o) {
    return o.partial ? o.source.getDefiningOp<ReduceOp>().getX() : o.source;
  };
  if (part_ != 0) {
    // The spans of the values this part computes, from its own requests.
    collect_ = true;
    span_.clear();
    requests_.clear();
    memo_.clear();
    chainMemo_.clear();
    rows_ = allRows_[rank_];
    for (const Output &o : outputs)
      for (auto [lo, hi] : partRows(o))
        get(partValue(o), lo, hi);
    collect_ = false;
    chooseSpans();
    spans_[rank_] = span_;
  }

  // The local function: new argument types, then the program for rank_.
  Builder attrs(f_.getContext());
  SmallVector<Type> argTypes(f_.getArgumentTypes());
  rows_ = allRows_[rank_];
  span_ = spans_[rank_];
  SmallVector<bool> split(nargs, false);
  for (auto &[v, arg] : inputArg_) {
    auto mt = cast<MemRefType>(f_.getArgument(arg).getType());
    if (!splittable(mt))
      continue;
    split[arg] = true;
    argTypes[arg] = withRows(mt, rows_[arg].second - rows_[arg].first);
    SmallVector<int64_t> all;
    for (int64_t q = 0; q < ranks_; ++q) {
      all.push_back(allRows_[q][arg].first);
      all.push_back(allRows_[q][arg].second);
    }
    f_.setArgAttr(arg, "cpn.rows", attrs.getDenseI64ArrayAttr(all));
  }
  for (const Output &o : outputs) {
    auto mt = cast<MemRefType>(f_.getArgument(o.destArg).getType());
    if (o.donor >= 0) {
      argTypes[o.destArg] = argTypes[o.donor];
      continue;
    }
    if (o.partial) {
      auto red = o.source.getDefiningOp<ReduceOp>();
      auto kind = red ? red.getKind() : ReduceKind::sum; // a product's sum
      f_.setArgAttr(o.destArg, "cpn.combine",
                    attrs.getStringAttr(stringifyReduceKind(kind)));
      continue;
    }
    if (!o.split)
      continue;
    int64_t n = mt.getDimSize(0);
    int64_t lo = blockLo(n, rank_, ranks_), hi = blockLo(n, rank_ + 1, ranks_);
    argTypes[o.destArg] = withRows(mt, hi - lo);
    f_.setArgAttr(o.destArg, "cpn.rows", attrs.getDenseI64ArrayAttr({lo, hi}));
  }

  Block *local = new Block();
  for (unsigned i = 0; i < nargs; ++i)
    local->addArgument(argTypes[i], f_.getArgument(i).getLoc());
  OpBuilder b(f_.getContext());
  b.setInsertionPointToStart(local);
  b_ = &b;
  emit_ = true;
  q_ = rank_;
  memo_.clear();
  chainMemo_.clear();
  for (unsigned i = 0; i < nargs; ++i)
    scalars_.map(f_.getArgument(i), local->getArgument(i));
  localInput_.assign(nargs, Value());
  // A part's program writes no input but the donors of the outputs whose
  // rows it writes: any other is read-only there, so that bufferization
  // never updates it in place (the other part reads its rows).
  auto partWrites = [&](unsigned arg) {
    for (const Output &o : outputs)
      if (o.donor == int(arg) && !copyOfInput(o.source, arg))
        return true;
    return false;
  };
  for (Operation &op : body)
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(op)) {
      unsigned arg = inputArg_.lookup(tt.getResult());
      auto t = cast<RankedTensorType>(tt.getType());
      Type lt = split[arg]
                    ? Type(withRows(t, rows_[arg].second - rows_[arg].first))
                    : Type(t);
      bool writable = tt.getWritable() && (part_ == 0 || partWrites(arg));
      localInput_[arg] = bufferization::ToTensorOp::create(
                             b, tt.getLoc(), lt, local->getArgument(arg),
                             tt.getRestrict(), writable)
                             .getResult();
    }
  // Fresh outputs first, then donated ones (TraceImport's order: an output
  // may read a donor's old value). The updates of donated inputs and their
  // writes come after every other op: another output may read a donated
  // input's rows that an update leaves as they were, from the input itself
  // (get()), after that update in the order of the walks.
  chain_.clear();
  SmallVector<std::pair<Value, const Output *>> writes;
  if (part_ != 0) {
    // Each output's rows of this part, written into its block's memref; a
    // partial reduction's partial over this part's rows, which the border
    // combines with the interior's (in the memref: the interior runs
    // first).
    for (const Output &o : outputs) {
      Value dest = local->getArgument(o.destArg);
      if (o.donor >= 0 && copyOfInput(o.source, unsigned(o.donor)))
        continue; // its values are its store's already
      if (o.partial) {
        auto red = o.source.getDefiningOp<ReduceOp>();
        auto ty = cast<RankedTensorType>(red.getType());
        Value acc;
        auto combine = [&](Value x, Value y) -> Value {
          Location l = red.getLoc();
          switch (red.getKind()) {
          case ReduceKind::sum:
            return AddOp::create(b, l, ty, x, y).getResult();
          case ReduceKind::prod:
            return MultiplyOp::create(b, l, ty, x, y).getResult();
          case ReduceKind::min:
            return MinimumOp::create(b, l, ty, x, y).getResult();
          case ReduceKind::max:
            return MaximumOp::create(b, l, ty, x, y).getResult();
          case ReduceKind::any:
            return LogicalOrOp::create(b, l, ty, x, y).getResult();
          default:
            return LogicalAndOp::create(b, l, ty, x, y).getResult();
          }
        };
        for (auto [r0, r1] : partRows(o)) {
          if (r1 <= r0)
            continue; // a sum's empty part adds nothing
          Value x = get(red.getX(), r0, r1);
          Value p = clone(red, {x}, ty)->getResult(0);
          acc = acc ? combine(acc, p) : p;
        }
        if (part_ == 2) {
          Value interior = bufferization::ToTensorOp::create(
                               b, o.final->getLoc(), ty, dest,
                               /*restrict=*/true, /*writable=*/true)
                               .getResult();
          acc = acc ? combine(interior, acc) : interior;
        }
        if (!acc) // no rows at all (an empty interior of a sum): its identity
          acc = clone(red, {get(red.getX(), 0, 0)}, ty)->getResult(0);
        auto m = bufferization::MaterializeInDestinationOp::create(
            b, o.final->getLoc(), acc, dest);
        m.setRestrict(true);
        m.setWritable(true);
        continue;
      }
      auto destTy = cast<MemRefType>(dest.getType());
      auto tensorTy =
          RankedTensorType::get(destTy.getShape(), destTy.getElementType());
      // A donated input is updated in place: its rows this part computes
      // (from its old values at those rows only, partsAreLocal) go into it.
      Value block = o.donor >= 0 ? localInput_[o.donor]
                                 : bufferization::ToTensorOp::create(
                                       b, o.final->getLoc(), tensorTy, dest,
                                       /*restrict=*/true,
                                       /*writable=*/true)
                                       .getResult();
      int64_t lo = o.donor >= 0 ? rows_[o.donor].first
                                : blockLo(rowsOf(o.source), rank_, ranks_);
      int64_t row = rowElements(tensorTy);
      for (auto [r0, r1] : partRows(o)) {
        Value rows = get(o.source, r0, r1);
        // Rows the chain leaves as they were (a donated input's rows
        // outside every update's box) are already there: an update of them
        // with themselves would make bufferization copy the block.
        if (auto view = rows.getDefiningOp<ViewOp>();
            view && o.donor >= 0 && view.getBase() == localInput_[o.donor] &&
            !view.getDynOffset() && view.getOffset() == (r0 - lo) * row &&
            view.getStrides() ==
                ArrayRef<int64_t>(rowMajorStrides(
                    cast<RankedTensorType>(rows.getType()).getShape())))
          continue;
        block = UpdateOp::create(
                    b, o.final->getLoc(), tensorTy, block, rows, Value(),
                    b.getI64IntegerAttr((r0 - lo) * row),
                    b.getDenseI64ArrayAttr(rowMajorStrides(
                        cast<RankedTensorType>(rows.getType()).getShape())))
                    .getResult();
      }
      if (o.donor >= 0)
        block = bufferization::MaterializeInDestinationOp::create(
                    b, o.final->getLoc(), block, localInput_[o.donor])
                    .getResult();
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, o.final->getLoc(), block, dest);
      m.setRestrict(true);
      m.setWritable(true);
    }
  }
  for (bool donatedPass : {false, true}) {
    if (part_ != 0)
      break;
    for (const Output &o : outputs) {
      if ((o.donor >= 0) != donatedPass)
        continue;
      writes.push_back({walk(o), &o});
    }
    if (donatedPass)
      break;
    // Fresh outputs are written where they are made, before any donated
    // input's update (their values may read those inputs).
    for (auto [result, o] : writes) {
      auto m = bufferization::MaterializeInDestinationOp::create(
          b, o->final->getLoc(), result, local->getArgument(o->destArg));
      m.setRestrict(true);
      m.setWritable(true);
    }
    writes.clear();
  }
  // The chains, and what reads their values (get() from a chain), in order.
  llvm::SmallPtrSet<Operation *, 32> late(chain_.begin(), chain_.end());
  SmallVector<Operation *> tail;
  for (Operation &op : *local) {
    bool reads = late.count(&op);
    for (Value x : op.getOperands())
      if (Operation *d = x.getDefiningOp(); d && late.count(d))
        reads = true;
    if (reads) {
      late.insert(&op);
      tail.push_back(&op);
    }
  }
  for (Operation *op : tail)
    op->moveBefore(local, local->end());
  for (auto [result, o] : writes) {
    Value dest = local->getArgument(o->destArg);
    // Written into the donated input first (unless it is that input, not
    // updated on this rank), then the input's buffer is the output's.
    if (o->donor >= 0 && result != localInput_[o->donor])
      result = bufferization::MaterializeInDestinationOp::create(
                   b, o->final->getLoc(), result, localInput_[o->donor])
                   .getResult();
    auto m = bufferization::MaterializeInDestinationOp::create(
        b, o->final->getLoc(), result, dest);
    m.setRestrict(true);
    m.setWritable(true);
  }
  b.clone(*ret, scalars_);
  // Swap the bodies.
  body.dropAllDefinedValueUses();
  f_.getBody().push_back(local);
  body.erase();
  f_.setFunctionType(b.getFunctionType(argTypes, {}));
  f_->setAttr("cpn.local", attrs.getDenseI64ArrayAttr({rank_, ranks_}));
  if (border) {
    f_->setAttr("cpn.border", attrs.getI64IntegerAttr(border));
    for (unsigned arg : kept)
      f_.setArgAttr(arg, "cpn.kept", attrs.getUnitAttr());
  }
  if (part_)
    f_->setAttr("cpn.part", attrs.getI64IntegerAttr(part_));
  return success();
}

struct LocalizePass : public mlir::cpn::impl::LocalizeBase<LocalizePass> {
  using LocalizeBase::LocalizeBase;
  void runOnOperation() override {
    if (ranks < 2)
      return;
    if (rank < 0 || rank >= ranks) {
      getOperation().emitError("cpn-localize: rank out of range");
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    getOperation().walk([&](func::FuncOp f) {
      if (!f.isExternal() && f.isPublic())
        funcs.push_back(f);
    });
    for (func::FuncOp f : funcs)
      if (failed(Localizer(f, ranks, rank, threshold, part).run())) {
        f.emitError("cpn-localize: not a kernel of memref arguments");
        return signalPassFailure();
      }
  }
};
} // namespace
