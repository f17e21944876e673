//===- Passes.h - cpn-to-cpn transforms ------------------------*- C++ -*-===//
//
// Part of cpnumeric. The passes that rewrite cpn ops into cpn ops
// (Passes.td), registered with the conversions by
// cpn::registerCPNPassesAndPipelines (cpn/Conversion/Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef CPN_DIALECT_CPN_TRANSFORMS_PASSES_H
#define CPN_DIALECT_CPN_TRANSFORMS_PASSES_H

#include "cpn/Dialect/CPN/CPNOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace cpn {

#define GEN_PASS_DECL
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cpn/Dialect/CPN/Transforms/Passes.h.inc"

} // namespace cpn
} // namespace mlir

#endif // CPN_DIALECT_CPN_TRANSFORMS_PASSES_H
