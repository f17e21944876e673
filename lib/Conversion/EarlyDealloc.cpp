//===- EarlyDealloc.cpp - free temporaries after their last use -----------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_EARLYDEALLOC
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
/// The last op of `block` that uses `root` or any value computed from it
/// (transitively through every op that takes it), or null when some use is
/// outside `block`'s ops' nests or escapes through a terminator.
Operation *lastUserInBlock(Value root, Block *block, Operation *dealloc) {
  SmallVector<Value> work{root};
  llvm::SmallPtrSet<Value, 16> seen{root};
  Operation *last = nullptr;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == dealloc)
        continue;
      if (user->hasTrait<OpTrait::IsTerminator>() && user->getBlock() == block)
        return nullptr;
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (!anc)
        return nullptr;
      if (!last || last->isBeforeInBlock(anc))
        last = anc;
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          work.push_back(r);
    }
  }
  return last;
}

struct EarlyDeallocPass : public cpn::impl::EarlyDeallocBase<EarlyDeallocPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
    for (memref::DeallocOp op : deallocs) {
      auto alloc = op.getMemref().getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != op->getBlock())
        continue;
      Operation *last = lastUserInBlock(alloc, op->getBlock(), op);
      if (last && last->isBeforeInBlock(op))
        op->moveAfter(last);
    }
  }
};
} // namespace
