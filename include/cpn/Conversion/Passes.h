//===- Passes.h - cpn passes and pipelines --------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_CONVERSION_PASSES_H
#define CPN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mlir {
namespace cpn {

#define GEN_PASS_DECL
#include "cpn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cpn/Conversion/Passes.h.inc"

/// convert-cpn-to-linalg's patterns: each cpn op (but cpn.fp_flag) to linalg
/// on tensors, by op family (lib/Conversion/CPNToLinalg/); a view with no
/// users is erased and an op whose results have no elements becomes
/// tensor.empty first (higher benefits). The pass applies them to each op
/// once, matmuls and library calls first (they read transposed and reshaped
/// views in place while those are still cpn.view ops); a greedy driver would
/// lose that order. An elementwise op with no loop for its element type
/// fails its pattern after building IR, and the pass then fails.
void populateCPNToLinalgPatterns(RewritePatternSet &patterns);

/// What varies between the lowering pipelines: parallel loops as OpenMP
/// regions or, without `openmp`, sequential loop nests (`cpnc --target
/// cpu`); memref arguments as bare pointers or, without `barePtr`, memref
/// descriptors (shape-generic kernels); the last stage to run (empty: all);
/// `checksOnly`: only the passes after cpn-lower-fp-flags, the pipeline of
/// the check functions it outlines (compiled when first needed).
struct LoweringOptions {
  bool openmp = true;
  bool barePtr = true;
  std::string stopAfter;
  bool checksOnly = false;
  /// cpn-externalize-fp-checks after cpn-lower-fp-flags.
  bool lazyChecks = true;
};

/// The stages of the pipeline, in order: linalg, fused, bufferized, loops,
/// llvm (IR dumps, `lower().as_text(stage)`).
const std::vector<std::string> &getLoweringStageNames();

/// Adds the passes of one stage to `pm` (a pass manager on the module).
void buildCPNLoweringStage(OpPassManager &pm, llvm::StringRef stage,
                           const LoweringOptions &options);

/// Adds the pipeline that lowers a module of cpn ops in `func.func`s to the
/// LLVM dialect, ready for the JIT: what `cpn-opt
/// --pass-pipeline='builtin.module(cpn-lower-to-llvm{...})'` runs.
void buildCPNLoweringPipeline(OpPassManager &pm,
                              const LoweringOptions &options);

/// The registered pipeline with these options, for a cpn-opt command line.
std::string getReproPipeline(bool openmp = true, bool barePtr = true);

/// Registers the passes and the named pipeline `cpn-lower-to-llvm`.
void registerCPNPassesAndPipelines();

} // namespace cpn
} // namespace mlir

#endif // CPN_CONVERSION_PASSES_H
