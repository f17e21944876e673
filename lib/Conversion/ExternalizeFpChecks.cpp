//===- ExternalizeFpChecks.cpp - the outlined fp checks become declarations ===//
//
// Part of cpnumeric. cpn-lower-fp-flags outlines the exact classification of
// a loop's floating-point errors into functions marked `cpn.fp_check`, which
// most runs never call. The JIT takes their bodies out right after that pass
// and compiles them when one is first called; this pass leaves their
// declarations, so that the rest of the pipeline (and cpn-opt running it)
// lowers and compiles the kernel alone.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNOps.h"

namespace mlir::cpn {
#define GEN_PASS_DEF_EXTERNALIZEFPCHECKS
#include "cpn/Conversion/Passes.h.inc"
} // namespace mlir::cpn

using namespace mlir;

namespace {
struct ExternalizeFpChecksPass
    : public cpn::impl::ExternalizeFpChecksBase<ExternalizeFpChecksPass> {
  void runOnOperation() override {
    for (func::FuncOp f : getOperation().getOps<func::FuncOp>())
      if (f->hasAttr(cpn::kFpCheckFunctionAttr) && !f.isDeclaration()) {
        f.getBody().getBlocks().clear();
        f.setPrivate();
      }
  }
};
} // namespace
