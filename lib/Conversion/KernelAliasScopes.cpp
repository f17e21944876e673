//===- KernelAliasScopes.cpp - noalias arguments as alias scopes ----------===//
//
// Part of cpnumeric.
//
// A kernel's pointer arguments are distinct stores (llvm.noalias, set by
// trace import). OpenMP's outlining passes them to the parallel region's
// function through a struct of captured values, where the attribute does
// not follow; alias-scope metadata on the accesses does. So each noalias
// pointer argument gets a scope, and each access that only reads or writes
// through one argument says so.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMInterfaces.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_KERNELALIASSCOPES
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {

/// The value that `v` was inserted as at `pos` of the memref descriptor
/// `container` (a chain of llvm.insertvalue), or null.
Value insertedAt(Value container, ArrayRef<int64_t> pos) {
  while (auto ins = container.getDefiningOp<LLVM::InsertValueOp>()) {
    if (ins.getPosition() == pos)
      return ins.getValue();
    container = ins.getContainer();
  }
  return {};
}

/// The block argument of `func` that pointer `p` derives from, or null:
/// followed through getelementptr (an address within the same object),
/// descriptors built and read with insertvalue/extractvalue, and
/// address-space casts.
BlockArgument baseArgument(Value p, LLVM::LLVMFuncOp func) {
  for (int steps = 0; steps < 64; ++steps) {
    if (auto arg = dyn_cast<BlockArgument>(p))
      return arg.getOwner() == &func.getBody().front() ? arg : BlockArgument();
    Operation *def = p.getDefiningOp();
    if (auto gep = dyn_cast<LLVM::GEPOp>(def))
      p = gep.getBase();
    else if (auto ext = dyn_cast<LLVM::ExtractValueOp>(def))
      p = insertedAt(ext.getContainer(), ext.getPosition());
    else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(def))
      p = cast.getArg();
    else
      return {};
    if (!p)
      return {};
  }
  return {};
}

struct KernelAliasScopesPass
    : public cpn::impl::KernelAliasScopesBase<KernelAliasScopesPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) { tag(func); });
  }

  static void tag(LLVM::LLVMFuncOp func) {
    if (func.isExternal())
      return;
    MLIRContext *ctx = func.getContext();
    SmallVector<BlockArgument> args;
    for (BlockArgument arg : func.getArguments())
      if (isa<LLVM::LLVMPointerType>(arg.getType()) &&
          func.getArgAttr(arg.getArgNumber(),
                          LLVM::LLVMDialect::getNoAliasAttrName()))
        args.push_back(arg);
    if (args.size() < 2)
      return;
    auto domain = LLVM::AliasScopeDomainAttr::get(
        ctx, StringAttr::get(ctx, func.getName() + " arguments"));
    llvm::DenseMap<BlockArgument, unsigned> index;
    SmallVector<Attribute> scopes;
    for (BlockArgument arg : args) {
      index[arg] = scopes.size();
      scopes.push_back(LLVM::AliasScopeAttr::get(
          domain,
          StringAttr::get(ctx, "arg" + std::to_string(arg.getArgNumber()))));
    }
    func.walk([&](LLVM::AliasAnalysisOpInterface access) {
      if (access.getAliasScopesOrNull() || access.getNoAliasScopesOrNull())
        return; // tagged already (an inlined call's scopes): leave them
      SmallVector<Value> ptrs = access.getAccessedOperands();
      if (ptrs.empty())
        return;
      BlockArgument base;
      for (Value p : ptrs) {
        BlockArgument b = baseArgument(p, func);
        if (!b || !index.count(b) || (base && b != base))
          return;
        base = b;
      }
      unsigned own = index[base];
      SmallVector<Attribute> others;
      for (unsigned i = 0; i < scopes.size(); ++i)
        if (i != own)
          others.push_back(scopes[i]);
      access.setAliasScopes(ArrayAttr::get(ctx, scopes[own]));
      access.setNoAliasScopes(ArrayAttr::get(ctx, others));
    });
  }
};
} // namespace
