//===- InlineAllocaScopes.cpp - drop stack scopes that bound nothing ------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_INLINEALLOCASCOPES
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
struct InlineAllocaScopesPass
    : public cpn::impl::InlineAllocaScopesBase<InlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk(
        [&](memref::AllocaScopeOp scope) { scopes.push_back(scope); });
    IRRewriter rw(&getContext());
    // Post-order: inner scopes first.
    for (memref::AllocaScopeOp scope : scopes) {
      Region &body = scope.getBodyRegion();
      if (!body.hasOneBlock())
        continue;
      bool allocates = false;
      body.walk([&](memref::AllocaOp) { allocates = true; });
      if (allocates)
        continue;
      Block *block = &body.front();
      Operation *ret = block->getTerminator();
      SmallVector<Value> results(ret->getOperands());
      rw.eraseOp(ret);
      rw.inlineBlockBefore(block, scope);
      rw.replaceOp(scope, results);
    }
  }
};
} // namespace
