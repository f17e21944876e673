//===- Partition.cpp - a distribution for every value over the ranks ------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//
//
// The first half of partitioning a kernel over P ranks (issue 23): decide
// how every tensor value is laid out over the ranks and where data must
// move, and write it on the ops. Nothing is rewritten yet; the rank-local
// program and the runtime's messages will be made from these annotations.
//
// A value is `replicated` (every rank holds all of it: small ones, 0-d
// results) or split in blocks of rows along its first axis. The rows of a
// split value are rows of an *index space* (the rows of the base it came
// from, `extent` of them, cut into P blocks as evenly as possible); value
// row i lies at index row i + `shift`. A view u[1:-1, 2:] of a split base
// is split with shift 1, and costs nothing to read on the rank that owns
// its rows. Elementwise ops compute where their result goes (owner
// computes): an op whose result an update writes at row offset d of a
// split base computes its rows at shift d, and the ops feeding it do too.
// An operand row at another shift is a neighbour's row: the base it views
// needs a halo of that many rows, `cpn.halo = [below, above]` on the op
// that makes the base (a 5-point stencil u[:-2] + u[2:] + ... written into
// u[1:-1]: [1, 1]). Where the layouts cannot line up, data moves, and the
// op says how.
//
// `cpn.comm = {kind = bytes, ...}` names each way data moves for an op and
// the bytes each rank receives for it:
//
//   all_reduce  a reduction over the split axis (local partials, summed);
//               a product whose contraction runs over the split rows
//               (x.T @ v with x and v split alike)
//   all_gather  an operand every rank needs whole (the right side of a
//               product, a library call's input, a view that mixes rows)
//   all_to_all  a transposed view of a split matrix read elementwise
//   broadcast   the few rows of a split value a replicated view reads (a
//               boundary row), sent by the ranks that own them
//   update_halo the halo rows of a base (on the op that makes it)
//
// Where two ways are possible the cheaper in bytes received per rank is
// chosen (a product: all_gather of its right side against all_reduce of
// partial results). Upstream's `shard` dialect cannot say what this needs:
// its shardings have halo sizes or explicit shard offsets but not both, and
// no notion of a view shifted against its base, so the annotations are
// cpn's own (docs/architecture.md, "Partitioning").
//
//===----------------------------------------------------------------------===//

#include "cpn/Dialect/CPN/CPNOps.h"
#include "cpn/Dialect/CPN/OpFacts.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <string>

namespace mlir::cpn {
#define GEN_PASS_DEF_PARTITION
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;
using namespace mlir::cpn;

namespace {
/// How one value lies over the ranks.
struct Dist {
  enum Kind { Replicated, Rows, Transposed } kind = Replicated;
  // Rows: value row i is index row i + shift; Transposed (a 2-D view whose
  // columns are a split value's rows): column j is index row j + shift.
  int64_t shift = 0;
  int64_t extent = 0; // rows of the index space
  // Rows: every rank can compute any rows of it from replicated data (a
  // broadcast scalar, a function of replicated values): it moves nothing,
  // and takes the rows its users want.
  bool anywhere = false;
  /// Split over the ranks for real: reading it elsewhere moves data.
  bool split() const { return kind != Replicated && !anywhere; }
};

int64_t elementBytes(Type t) {
  if (auto c = dyn_cast<ComplexType>(t))
    return 2 * elementBytes(c.getElementType());
  return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
}

/// Bytes of a statically shaped tensor value (0 for anything else).
int64_t bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape())
    return 0;
  return t.getNumElements() * elementBytes(t.getElementType());
}

/// Elements in one row (the first axis) of a tensor type.
int64_t rowElements(RankedTensorType t) {
  int64_t r = 1;
  for (int64_t d : t.getShape().drop_front())
    r *= d;
  return r;
}

/// The first and last rows of a base of type `base` (rank 2 or more) that a
/// box of `shape` at element `offset` with non-negative `strides` touches.
bool boxRowRange(RankedTensorType base, ArrayRef<int64_t> shape, int64_t offset,
                 ArrayRef<int64_t> strides, int64_t &first, int64_t &last) {
  int64_t end;
  if (base.getRank() < 2 ||
      llvm::any_of(strides, [](int64_t s) { return s < 0; }) ||
      !boxRows(base, shape, offset, strides, first, end))
    return false;
  last = end - 1;
  return true;
}

/// The rows of its base a view with non-negative strides touches (the
/// first axis of a base of rank 2 or more), in `rows`.
bool rowSpan(ViewOp v, int64_t &rows) {
  int64_t first, last;
  if (!boxRowRange(cast<RankedTensorType>(v.getBase().getType()),
                   cast<RankedTensorType>(v.getType()).getShape(),
                   v.getOffset(), v.getStrides(), first, last))
    return false;
  rows = last - first + 1;
  return true;
}

/// Bytes of one row (the first axis) of a tensor value.
int64_t rowBytes(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return rowElements(t) * elementBytes(t.getElementType());
}

bool rowAligned(ViewOp v, int64_t &delta) {
  return !v.getDynOffset() &&
         rowBox(cast<RankedTensorType>(v.getBase().getType()),
                cast<RankedTensorType>(v.getType()).getShape(), v.getOffset(),
                v.getStrides(), delta);
}

bool rowAligned(UpdateOp u, int64_t &delta) {
  return !u.getDynOffset() &&
         rowBox(cast<RankedTensorType>(u.getBase().getType()),
                cast<RankedTensorType>(u.getValue().getType()).getShape(),
                u.getOffset(), u.getStrides(), delta);
}

/// A 2-D view that transposes a 2-D base (v[j, i] = base[i + delta, j + c]),
/// or lays a vector out as one row (v[0, i] = base[i + delta]: the left side
/// of `y @ v` for a vector y).
bool transposedView(ViewOp v, int64_t &delta) {
  auto base = cast<RankedTensorType>(v.getBase().getType());
  auto view = cast<RankedTensorType>(v.getType());
  if (v.getDynOffset() || view.getRank() != 2)
    return false;
  if (base.getRank() == 1) {
    delta = v.getOffset();
    return view.getDimSize(0) == 1 &&
           v.getStrides() == ArrayRef<int64_t>{0, 1} && delta >= 0 &&
           delta + view.getDimSize(1) <= base.getDimSize(0);
  }
  if (base.getRank() != 2)
    return false;
  int64_t rowStride = base.getDimSize(1);
  ArrayRef<int64_t> strides = v.getStrides();
  if (rowStride <= 0 || strides[0] != 1 || strides[1] != rowStride ||
      v.getOffset() < 0)
    return false;
  delta = v.getOffset() / rowStride;
  return v.getOffset() % rowStride + view.getDimSize(0) <= rowStride;
}

bool elementwise(Operation *op) {
  return op->hasTrait<OpTrait::CPNSameShape>() || isa<CopyOp>(op);
}

class Partitioner {
public:
  Partitioner(int64_t ranks, int64_t threshold)
      : ranks_(ranks), threshold_(threshold) {}

  void run(func::FuncOp f) {
    // Tensor arguments are inputs every rank holds its blocks of.
    for (BlockArgument a : f.getArguments())
      dist_[a] = held(a.getType());
    SmallVector<Operation *> ops;
    f.walk([&](Operation *op) {
      if (op != f.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops)
      forward(op);
    for (Operation *op : llvm::reverse(ops))
      backward(op);
    for (Operation *op : ops)
      reads(op);
    for (Operation *op : ops)
      annotate(op);
    Builder b(f.getContext());
    for (BlockArgument a : f.getArguments()) {
      if (!isa<RankedTensorType>(a.getType()))
        continue;
      f.setArgAttr(a.getArgNumber(), "cpn.dist", distAttr(b, dist_.lookup(a)));
      if (auto h = haloAttr(b, a)) {
        f.setArgAttr(a.getArgNumber(), "cpn.halo", h);
        auto hs = cast<DenseI64ArrayAttr>(h).asArrayRef();
        auto t = cast<RankedTensorType>(a.getType());
        NamedAttribute bytes = b.getNamedAttr(
            "update_halo", b.getI64IntegerAttr(
                               haloRowsReceived(hs[0], hs[1]) * rowElements(t) *
                               elementBytes(t.getElementType())));
        f.setArgAttr(a.getArgNumber(), "cpn.comm", b.getDictionaryAttr(bytes));
      }
    }
  }

private:
  /// A split layout for a fresh value of type `t` (its own index space),
  /// or replicated when it is too small to split.
  Dist fresh(Type type) const {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.hasStaticShape() || t.getRank() < 1 ||
        t.getNumElements() == 0 || t.getNumElements() < threshold_ ||
        t.getDimSize(0) < ranks_)
      return {};
    return {Dist::Rows, 0, t.getDimSize(0), /*anywhere=*/true};
  }

  /// A value every rank computed whole (a library call's result, an
  /// input): big ones are kept in blocks, as split values.
  Dist held(Type type) const {
    Dist d = fresh(type);
    d.anywhere = false;
    return d;
  }

  /// Data moved for `op`: bytes received per rank, by kind.
  void comm(Operation *op, StringRef kind, int64_t bytes) {
    comms_[op][kind.str()] += bytes;
  }

  /// Bytes a rank receives to hold all of a split value of `bytes`.
  int64_t gatherBytes(int64_t bytes) const {
    return bytes * (ranks_ - 1) / ranks_;
  }
  /// ... to sum a value of `bytes` over the ranks (ring all-reduce).
  int64_t reduceBytes(int64_t bytes) const {
    return 2 * bytes * (ranks_ - 1) / ranks_;
  }

  /// The layout of `v` as an operand that must be replicated: an
  /// all_gather on `user` when it is split.
  void needWhole(Operation *user, Value v) {
    if (dist_.lookup(v).split())
      comm(user, "all_gather", gatherBytes(bytesOf(v)));
  }

  /// The rank that owns index row `i` of `extent` rows.
  int64_t owner(int64_t extent, int64_t i) const {
    for (int64_t q = 0; q < ranks_; ++q)
      if (i < extent * (q + 1) / ranks_)
        return q;
    return ranks_ - 1;
  }

  /// Whether every use of the view `v` of the split `base` is the value of
  /// an update of a value split alike, and the rows it reads and the rows
  /// the update writes have one owner (a boundary row copied to its
  /// neighbour row).
  bool ownerLocal(ViewOp v, const Dist &base) {
    int64_t r0, r1;
    if (v->use_empty() ||
        !boxRowRange(cast<RankedTensorType>(v.getBase().getType()),
                     cast<RankedTensorType>(v.getType()).getShape(),
                     v.getOffset(), v.getStrides(), r0, r1))
      return false;
    int64_t q = owner(base.extent, r0 + base.shift);
    if (owner(base.extent, r1 + base.shift) != q)
      return false;
    for (OpOperand &use : v->getUses()) {
      auto u = dyn_cast<UpdateOp>(use.getOwner());
      int64_t w0, w1;
      if (!u || use.get() != u.getValue() || u.getBase() == v.getResult() ||
          u.getDynOffset())
        return false;
      Dist dest = dist_.lookup(u.getBase());
      if (dest.kind != Dist::Rows || !dest.split() ||
          dest.extent != base.extent ||
          !boxRowRange(
              cast<RankedTensorType>(u.getBase().getType()),
              cast<RankedTensorType>(u.getValue().getType()).getShape(),
              u.getOffset(), u.getStrides(), w0, w1) ||
          owner(dest.extent, w0 + dest.shift) != q ||
          owner(dest.extent, w1 + dest.shift) != q)
        return false;
    }
    return true;
  }

  void forward(Operation *op) {
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    Value r = op->getResult(0);
    if (auto v = dyn_cast<ViewOp>(op)) {
      Dist base = dist_.lookup(v.getBase());
      int64_t delta = 0;
      if (base.kind == Dist::Rows && base.split() && rowAligned(v, delta)) {
        dist_[r] = {Dist::Rows, base.shift + delta, base.extent};
        return;
      }
      if (base.kind == Dist::Rows && base.split() && transposedView(v, delta)) {
        dist_[r] = {Dist::Transposed, base.shift + delta, base.extent};
        return;
      }
      // A few rows of a split base written only into rows of a split value
      // that the same rank owns (`p[0, :] = p[1, :]`: rows 0 and 1 are
      // rank 0's): that rank reads and writes them, nothing moves (as
      // cpn-localize computes them).
      if (base.kind == Dist::Rows && base.split() && !v.getDynOffset() &&
          ownerLocal(v, base)) {
        dist_[r] = fresh(r.getType());
        return;
      }
      // A view within a few rows of a split base (a boundary row p[1, :]
      // read whole by another op): the ranks that own those rows broadcast
      // them, each rank receiving the rows, not the whole base.
      int64_t rows = 0;
      if (base.kind == Dist::Rows && base.split() && !v.getDynOffset() &&
          rowSpan(v, rows) &&
          rows * rowBytes(v.getBase()) < gatherBytes(bytesOf(v.getBase()))) {
        comm(op, "broadcast", rows * rowBytes(v.getBase()));
        dist_[r] = fresh(r.getType());
        return;
      }
      needWhole(op, v.getBase());
      dist_[r] = fresh(r.getType());
      return;
    }
    if (auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(op)) {
      // A result written into an input's buffer (a donated input updated
      // in place): each rank writes its own rows of the input, from rows of
      // the value laid out alike or computable anywhere. Moves nothing.
      Dist src = dist_.lookup(m.getSource()), dst = dist_.lookup(m.getDest());
      if (!src.split() || (src.kind == dst.kind && src.shift == dst.shift &&
                           src.extent == dst.extent)) {
        dist_[r] = dst;
        dist_[r].anywhere = dst.anywhere && !src.split();
        return;
      }
    }
    if (auto u = dyn_cast<UpdateOp>(op)) {
      Dist dest = dist_.lookup(u.getBase());
      Dist value = dist_.lookup(u.getValue());
      dist_[r] = dest;
      if (dest.kind != Dist::Rows) {
        needWhole(op, u.getValue());
        return;
      }
      // The base stays computable anywhere only if what is written is.
      dist_[r].anywhere = dest.anywhere && (value.anywhere || !value.split());
      // The value's rows go to the base's rows at the box's offset.
      int64_t delta = 0;
      if (rowAligned(u, delta)) {
        Dist target = {Dist::Rows, dest.shift + delta, dest.extent};
        target_[op] = target;
        if (!demand_.count(u.getValue()))
          demand_[u.getValue()] = target;
      } else {
        needWhole(op, u.getValue());
      }
      return;
    }
    if (elementwise(op)) {
      // Provisional: the first split operand's rows (backward() may move
      // it to where the result is written).
      for (Value x : op->getOperands())
        if (dist_.lookup(x).kind == Dist::Rows && dist_.lookup(x).split()) {
          dist_[r] = dist_.lookup(x);
          return;
        }
      for (Value x : op->getOperands())
        if (dist_.lookup(x).kind == Dist::Transposed) {
          // Read elementwise, a transposed matrix moves (all_to_all in
          // reads()); the result is split by its own rows.
          dist_[r] = held(r.getType());
          return;
        }
      dist_[r] = fresh(r.getType());
      return;
    }
    if (auto red = dyn_cast<ReduceOp>(op)) {
      Dist x = dist_.lookup(red.getX());
      bool overRows = llvm::is_contained(red.getAxes(), 0);
      if (x.kind == Dist::Rows && x.split() && !overRows) {
        dist_[r] = x;
        return;
      }
      if (x.kind == Dist::Rows && x.split()) {
        // Local partials, combined over the ranks; argmin/argmax combine
        // (value, global index) pairs (indices offset by the block's start).
        ReduceKind k = red.getKind();
        if (k == ReduceKind::argmin || k == ReduceKind::argmax) {
          auto xt = cast<RankedTensorType>(red.getX().getType());
          auto rt = cast<RankedTensorType>(r.getType());
          comm(op, "all_reduce_loc",
               reduceBytes(rt.getNumElements() *
                           (elementBytes(xt.getElementType()) + 8)));
        } else {
          comm(op, "all_reduce", reduceBytes(bytesOf(r)));
        }
        dist_[r] = {};
        return;
      }
      needWhole(op, red.getX());
      dist_[r] = fresh(r.getType());
      return;
    }
    if (auto mm = dyn_cast<MatmulOp>(op)) {
      product(mm);
      return;
    }
    if (auto call = dyn_cast<LibcallOp>(op); call && rowwiseCall(call)) {
      // Each row from the same row of its operand (a sort or FFT along the
      // rows): the operand's rows, nothing moved.
      Dist x = dist_.lookup(call->getOperand(0));
      if (x.kind == Dist::Rows && x.split()) {
        dist_[r] = x;
        return;
      }
    }
    // Library calls, iota, random bits, ...: their split operands are
    // gathered, and a big result is kept in blocks (each rank holds its
    // rows of a value every rank computed).
    for (Value x : op->getOperands())
      needWhole(op, x);
    // iota and random bits (from a replicated key) can be computed at any
    // rows; an input's to_tensor and a library call's result are held in
    // blocks.
    dist_[r] =
        isa<IotaOp, RandomBitsOp>(op) ? fresh(r.getType()) : held(r.getType());
  }

  void product(MatmulOp mm) {
    Value r = mm.getResult();
    Dist a = dist_.lookup(mm.getLhs()), b = dist_.lookup(mm.getRhs());
    if (a.kind == Dist::Transposed &&
        (b.kind == Dist::Replicated || (b.kind == Dist::Rows && b.anywhere))) {
      // x.T @ v with v on every rank (or computed at any rows): each rank
      // multiplies its rows of x by the same rows of v, the partial
      // products summed (cpn-localize).
      comm(mm, "all_reduce", reduceBytes(bytesOf(r)));
      dist_[r] = {};
      return;
    }
    if (a.kind == Dist::Transposed && b.kind == Dist::Rows && b.split() &&
        a.extent == b.extent && a.shift == b.shift) {
      // x.T @ v (or y @ v of a vector y) with x and v split alike: the
      // contraction runs over the split rows. Partial products summed over
      // ranks, or x gathered (re-laid out by rows of x.T) and v gathered:
      // the cheaper.
      int64_t partials = reduceBytes(bytesOf(r));
      int64_t gathers =
          gatherBytes(bytesOf(mm.getLhs())) + gatherBytes(bytesOf(mm.getRhs()));
      if (partials <= gathers) {
        comm(mm, "all_reduce", partials);
        dist_[r] = {};
      } else {
        comm(mm, "all_gather", gathers);
        dist_[r] = fresh(r.getType());
      }
      return;
    }
    if (a.kind == Dist::Rows && a.split()) {
      // Rows of the result are rows of the left side: the right side whole.
      needWhole(mm, mm.getRhs());
      dist_[r] = {Dist::Rows, a.shift, a.extent};
      return;
    }
    needWhole(mm, mm.getLhs());
    needWhole(mm, mm.getRhs());
    dist_[r] = fresh(r.getType());
  }

  /// Owner computes: an elementwise op whose result is written (or read by
  /// an elementwise op that is) computes its rows where they are written.
  void backward(Operation *op) {
    if (!elementwise(op) || op->getNumResults() != 1)
      return;
    Value r = op->getResult(0);
    auto it = demand_.find(r);
    Dist now = dist_.lookup(r);
    if (it != demand_.end() && now.kind == Dist::Rows &&
        (now.anywhere || now.extent == it->second.extent)) {
      dist_[r] = it->second;
      dist_[r].anywhere = now.anywhere;
    }
    Dist d = dist_.lookup(r);
    if (d.kind != Dist::Rows)
      return;
    for (Value x : op->getOperands())
      if (x.getDefiningOp() && elementwise(x.getDefiningOp()) &&
          dist_.lookup(x).kind == Dist::Rows && !demand_.count(x))
        demand_[x] = d;
  }

  /// What an elementwise op (or an update's value) reads from neighbours:
  /// halos on the bases of its shifted operands; all_to_all for a
  /// transposed one.
  void reads(Operation *op) {
    auto needFrom = [&](Value x, const Dist &at, Operation *user) {
      Dist d = dist_.lookup(x);
      if (!d.split())
        return; // replicated, or computed where it is needed
      if (d.kind == Dist::Transposed) {
        comm(user, "all_to_all", gatherBytes(bytesOf(x)) / ranks_);
        return;
      }
      if (at.kind != Dist::Rows || d.shift == at.shift)
        return;
      if (d.extent != at.extent) {
        needWhole(user, x);
        return;
      }
      // Rows of another rank: a halo of the value the view reads, or of x
      // itself when it is computed (a temporary at another alignment).
      Value base = x;
      if (auto v = x.getDefiningOp<ViewOp>())
        base = v.getBase();
      auto &h = halo_[base];
      h.first = std::max(h.first, at.shift - d.shift);
      h.second = std::max(h.second, d.shift - at.shift);
    };
    if (elementwise(op) && op->getNumResults() == 1) {
      Dist at = dist_.lookup(op->getResult(0));
      for (Value x : op->getOperands())
        needFrom(x, at, op);
    }
    if (isa<UpdateOp>(op)) {
      auto it = target_.find(op); // where this update writes its value
      if (it != target_.end())
        needFrom(cast<UpdateOp>(op).getValue(), it->second, op);
    }
  }

  Attribute distAttr(Builder &b, const Dist &d) const {
    if (d.kind == Dist::Replicated)
      return b.getStringAttr("replicated");
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("extent", b.getI64IntegerAttr(d.extent)),
        b.getNamedAttr(
            "kind",
            b.getStringAttr(d.kind == Dist::Rows ? "rows" : "transposed")),
        b.getNamedAttr("shift", b.getI64IntegerAttr(d.shift))};
    if (d.anywhere)
      fields.push_back(b.getNamedAttr("anywhere", b.getUnitAttr()));
    return b.getDictionaryAttr(fields);
  }

  /// The halo rows the rank that receives most gets: a rank between two
  /// others gets both sides; of two ranks each has one neighbour and gets
  /// one side (the larger).
  int64_t haloRowsReceived(int64_t below, int64_t above) const {
    return ranks_ == 2 ? std::max(below, above) : below + above;
  }

  /// `cpn.halo` of a value read at other shifts (null when none), and its
  /// update_halo's bytes on `at` (the op that makes it, if any).
  Attribute haloAttr(Builder &b, Value v, Operation *at = nullptr) {
    auto h = halo_.find(v);
    if (h == halo_.end() || !(h->second.first || h->second.second))
      return {};
    auto t = cast<RankedTensorType>(v.getType());
    if (at)
      comm(at, "update_halo",
           haloRowsReceived(h->second.first, h->second.second) *
               rowElements(t) * elementBytes(t.getElementType()));
    return b.getDenseI64ArrayAttr({h->second.first, h->second.second});
  }

  void annotate(Operation *op) {
    Builder b(op->getContext());
    if (op->getNumResults() == 1 &&
        isa<RankedTensorType>(op->getResult(0).getType())) {
      Value r = op->getResult(0);
      op->setAttr("cpn.dist", distAttr(b, dist_.lookup(r)));
      if (Attribute h = haloAttr(b, r, op))
        op->setAttr("cpn.halo", h);
    }
    auto c = comms_.find(op);
    if (c != comms_.end()) {
      SmallVector<NamedAttribute> fields;
      for (auto &[kind, bytes] : c->second)
        fields.push_back(b.getNamedAttr(kind, b.getI64IntegerAttr(bytes)));
      op->setAttr("cpn.comm", b.getDictionaryAttr(fields));
    }
  }

  int64_t ranks_, threshold_;
  llvm::DenseMap<Value, Dist> dist_;
  // The rows an elementwise result should be computed at (where it is
  // written).
  llvm::DenseMap<Value, Dist> demand_;
  // Each row-aligned update's rows in the index space.
  llvm::DenseMap<Operation *, Dist> target_;
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> halo_;
  llvm::DenseMap<Operation *, std::map<std::string, int64_t>> comms_;
};

struct PartitionPass : public mlir::cpn::impl::PartitionBase<PartitionPass> {
  using PartitionBase::PartitionBase;
  void runOnOperation() override {
    if (ranks < 2)
      return; // one rank: nothing to decide
    getOperation().walk([&](func::FuncOp f) {
      if (!f.isExternal())
        Partitioner(ranks, threshold).run(f);
    });
  }
};
} // namespace
