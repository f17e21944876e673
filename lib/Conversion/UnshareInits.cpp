//===- UnshareInits.cpp - one destination init per use --------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_UNSHAREINITS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// Clones `op` (one result) for every use but the first, right before it.
void unshare(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  if (uses.size() < 2) // drop_begin of an empty list is undefined
    return;
  for (OpOperand *use : llvm::drop_begin(uses)) {
    OpBuilder b(op);
    use->set(b.clone(*op)->getResult(0));
  }
}

/// Whether `use` writes into its value in place once bufferized: the
/// destination of an insert_slice, the init of a destination-style op, or
/// the first operand of an in-place library call (np.add.at, np.put: after
/// canonicalize folded the copy before it, `a5 = a4.copy(); np.add.at(a5,
/// ...); +a4` made the call's operand a4's own value, which a stored output
/// also is).
bool isDestination(OpOperand &use) {
  if (auto call = dyn_cast<cpn::LibcallOp>(use.getOwner()))
    return call.getInPlace() && use.getOperandNumber() == 0;
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner()))
    return use.getOperandNumber() == insert.getDestMutable().getOperandNumber();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner()))
    return linalgOp.isDpsInit(&use);
  return false;
}

/// A generic (a splat, an elementwise value) that two ops write into in
/// place after CSE merged identical ones (two concatenations both start from
/// the same zero fill): each destination use but the first gets its own
/// clone. Without this, eliminate-empty-tensors writes both chains into the
/// first chain's output buffer and one output ends up with the other's data.
///
/// A destination use beside a value that the kernel also stores as an
/// output (`materialize_in_destination` into an argument's memref) gets its
/// own clone too: eliminate-empty-tensors would put the generic into the
/// destination chain's output buffer, whose final copy-in comes before the
/// other output's copy-out (`a4 = np.zeros(7)` CSE'd with the zero fill that
/// `np.roll` writes into read the roll's result). So does one beside any
/// other reader when the generic only moves elements (a splat, a copy): a
/// clone costs no more than the copy bufferization would make.
/// Each result of a multi-result generic (a horizontally fused pair of
/// splats) is treated alike, its clones giving the same result. An
/// insert_slice whose result two updates write into, or that is stored and
/// updated, is unshared the same way; one beside other readers is not
/// (`besideReaders` false): bufferization orders a read before the update
/// in place and copies only where a read comes after it, where a clone
/// would copy the whole destination and insert again for every update (a
/// stencil's `v[1:-1, 1:-1] = f(u)` in a loop that swaps u and v).
void unshareDestinations(Operation *op, bool besideReaders) {
  for (OpResult result : op->getResults()) {
    SmallVector<OpOperand *> dests;
    bool stored = false, otherReaders = false;
    for (OpOperand &use : result.getUses()) {
      if (isDestination(use))
        dests.push_back(&use);
      else if (isa<bufferization::MaterializeInDestinationOp>(use.getOwner()))
        stored = true;
      else
        otherReaders = true;
    }
    size_t keep = (stored || (otherReaders && besideReaders)) ? 0 : 1;
    if (dests.size() <= keep)
      continue;
    for (OpOperand *use : llvm::drop_begin(dests, keep)) {
      OpBuilder b(op);
      use->set(b.clone(*op)->getResult(result.getResultNumber()));
    }
  }
}

/// A value of a costly op (a matmul) that the kernel stores as an output and
/// that an update chain also writes into: the chain gets a copy of it (what
/// bufferization would copy, had eliminate-empty-tensors not put the op into
/// the output's buffer, which the chain then overwrote: `a1 = inner(a0, a0);
/// np.maximum(a1, a1, out=a0); a0[::2] = 1` changed a1). So does every
/// update chain but the first of one that several chains write into (CSE
/// merged `a6 = a1 @ x` and `a4 = a1 @ x`, then `a6 += 1; a4[:] = 5`: both
/// chains were put into a6's output buffer, and a4 read a6's values).
void copyStoredDestinations(linalg::LinalgOp op) {
  for (OpResult result : op->getResults()) {
    SmallVector<OpOperand *> dests;
    bool stored = false;
    for (OpOperand &use : result.getUses()) {
      if (isDestination(use))
        dests.push_back(&use);
      else if (isa<bufferization::MaterializeInDestinationOp>(use.getOwner()))
        stored = true;
    }
    auto ty = dyn_cast<RankedTensorType>(result.getType());
    size_t keep = stored ? 0 : 1;
    if (dests.size() <= keep || !ty)
      continue;
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Location loc = op->getLoc();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < ty.getRank(); ++d)
      if (ty.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b, loc, result, d));
    for (OpOperand *use : llvm::drop_begin(dests, keep)) {
      Value empty = tensor::EmptyOp::create(b, loc, ty.getShape(),
                                            ty.getElementType(), sizes);
      use->set(linalg::CopyOp::create(b, loc, result, empty).getResult(0));
    }
  }
}

/// The values that share a stored value's buffer once eliminate-empty-tensors
/// puts its chain into the output: the value, the destination it was written
/// into in place, that one's destination, and so on.
SmallVector<Value> destinationChain(Value v) {
  SmallVector<Value> chain;
  while (v && chain.size() < 4096 && !v.getDefiningOp<tensor::EmptyOp>()) {
    chain.push_back(v);
    Operation *def = v.getDefiningOp();
    if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(def))
      v = insert.getDest();
    else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def))
      v = linalgOp.getDpsInitOperand(cast<OpResult>(v).getResultNumber())
              ->get();
    else if (auto call = dyn_cast_or_null<cpn::LibcallOp>(def);
             call && call.getInPlace() && call->getNumOperands())
      v = call->getOperand(0);
    else
      break;
  }
  return chain;
}

/// A value stored into an output's memref before ops that read a value of
/// its destination chain: the store moves after the last of them. Once
/// eliminate-empty-tensors has put the chain into the output's buffer, the
/// store's copy-in (bufferization copies where an update of the chain is out
/// of place) would overwrite what they read, and one-shot bufferization does
/// not see writes through a memref destination. cpn-localize writes fresh
/// outputs before the ops it emits for donated inputs (`a19 + eye` stored,
/// then updated, and its old value read by a matrix power: the powers read
/// the update).
void storeAfterChainReads(bufferization::MaterializeInDestinationOp store) {
  Value dest = store.getDest();
  if (!isa<BaseMemRefType>(dest.getType()))
    return;
  Block *block = store->getBlock();
  Operation *last = nullptr;
  // The chain's values and what aliases them once bufferized (slices,
  // reshapes, the memref a library call reads), read after the store.
  SmallVector<Value> work = destinationChain(store.getSource());
  llvm::SmallPtrSet<Value, 16> seen(work.begin(), work.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == store)
        continue;
      auto toBuffer = dyn_cast<bufferization::ToBufferOp>(user);
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp, tensor::CastOp, tensor::ReshapeOp>(user) ||
          (toBuffer && toBuffer.getReadOnly()) ||
          (view && view.getViewSource() == v))
        for (Value r : user->getResults())
          if (seen.insert(r).second)
            work.push_back(r);
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at || !store->isBeforeInBlock(at))
        continue;
      // A write into the stored value after the store (`np.negative(a,
      // out=a)` with a's old value an output), a buffer that may be
      // written, a value passed on by a terminator: the store stays.
      auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(user);
      auto insert = dyn_cast<tensor::InsertOp>(user);
      if (isDestination(use) || (m && use.get() == m.getDest()) ||
          (insert && use.get() == insert.getDest()) ||
          (toBuffer && !toBuffer.getReadOnly()) ||
          isa<scf::ForOp, scf::ForallOp, scf::WhileOp>(user) ||
          at->hasTrait<OpTrait::IsTerminator>())
        return;
      if (!last || last->isBeforeInBlock(at))
        last = at;
    }
  }
  if (!last)
    return;
  // Nothing in between (last included) may use the output's memref or a
  // view of it.
  SmallVector<Value> views{dest};
  llvm::SmallPtrSet<Value, 8> aliases{dest};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *at =
          user == store ? nullptr : block->findAncestorOpInBlock(*user);
      if (at && store->isBeforeInBlock(at) && !last->isBeforeInBlock(at))
        return;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v)
        for (Value r : user->getResults())
          if (aliases.insert(r).second)
            views.push_back(r);
    }
  }
  store->moveAfter(last);
}

struct UnshareInitsPass : public cpn::impl::UnshareInitsBase<UnshareInitsPass> {
  void runOnOperation() override {
    // Chains of updates first, the last first: two stacks that CSE merged up
    // to their first row (`np.stack([a, a])`, `np.stack([a, b])`) share the
    // insert_slice of that row, which both then update in place; its clones
    // add destination uses to the value it inserts into, which the earlier
    // insert_slices and the generics below then unshare in turn.
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (op.hasPureTensorSemantics())
        inserts.push_back(op);
    });
    for (tensor::InsertSliceOp op : llvm::reverse(inserts))
      unshareDestinations(op, /*besideReaders=*/false);
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op->getNumResults() >= 1)
        generics.push_back(op);
    });
    SmallVector<linalg::LinalgOp> costly; // not generics: matmuls, ...
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp>(op) &&
          op.hasPureTensorSemantics())
        costly.push_back(op);
    });
    for (linalg::LinalgOp op : costly)
      copyStoredDestinations(op);
    for (linalg::GenericOp op : generics)
      unshareDestinations(op, /*besideReaders=*/op.getBody()
                                      ->getOperations()
                                      .size() == 1); // moves only
    // Fills next: their clones add uses to the empties they fill.
    SmallVector<Operation *> fills, empties;
    getOperation().walk([&](Operation *op) {
      if (auto fill = dyn_cast<linalg::FillOp>(op)) {
        if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
          fills.push_back(op);
      }
    });
    for (Operation *op : fills)
      unshare(op);
    getOperation().walk([&](tensor::EmptyOp op) {
      if (!op.getResult().hasOneUse())
        empties.push_back(op);
    });
    for (Operation *op : empties)
      unshare(op);
    // Last, on chains no longer shared.
    SmallVector<bufferization::MaterializeInDestinationOp> stores;
    getOperation().walk([&](bufferization::MaterializeInDestinationOp op) {
      stores.push_back(op);
    });
    for (auto store : stores)
      storeAfterChainReads(store);
  }
};
} // namespace
