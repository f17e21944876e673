//===- Pipelines.cpp - the lowering pipeline, built in C++ ----------------===//
//
// Part of cpnumeric. Only pipelines live here; passes have their own files.
// The pipeline is built from the passes' create functions with its options
// (a pass renamed or removed fails to compile here), registered as
// `cpn-lower-to-llvm{openmp= bare-ptr= stop-after= checks-only= lazy-checks=}`,
// so that cpn-opt runs exactly what the JIT, cpnc and the IR dumps run.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
/// Adds passes to a pass manager, or (checks-only) only those after
/// cpn-lower-fp-flags: the functions it outlines are compiled on their own
/// when first needed, from that point of the pipeline on.
struct Adder {
  OpPassManager &pm;
  bool skip;
  void operator()(std::unique_ptr<Pass> p) {
    if (!skip)
      pm.addPass(std::move(p));
  }
  void onFunctions(std::unique_ptr<Pass> p) {
    if (!skip)
      pm.addNestedPass<func::FuncOp>(std::move(p));
  }
};

void addStage(Adder &add, llvm::StringRef stage,
              const cpn::LoweringOptions &o) {
  if (stage == "linalg") {
    add(cpn::createOutlineRepeats());
    // Joins split before reductions are scheduled: each piece's reduction
    // gets the schedule of its own size (a row-blocked one is not split).
    add(cpn::createSplitJoins());
    add(cpn::createScheduleReductions());
    add(cpn::createFuseRowProducts());
    cpn::ConvertCPNToLinalgOptions toLinalg;
    toLinalg.keepUpdates = true;
    add(cpn::createConvertCPNToLinalg(toLinalg));
    add(createCanonicalizerPass());
    add(createCSEPass());
  } else if (stage == "fused") {
    add.onFunctions(cpn::createFuseElementwise());
    add.onFunctions(cpn::createFuseHorizontal());
    add.onFunctions(cpn::createFuseElementwise());
    add(createCanonicalizerPass());
    add(createCSEPass());
    add(cpn::createConvertCPNUpdates());
    add(cpn::createPingPongUpdates());
  } else if (stage == "bufferized") {
    add(cpn::createUnshareInits());
    add(bufferization::createEmptyTensorEliminationPass());
    bufferization::OneShotBufferizePassOptions oneShot;
    oneShot.bufferizeFunctionBoundaries = true;
    oneShot.functionBoundaryTypeConversion =
        bufferization::LayoutMapOption::IdentityLayoutMap;
    add(bufferization::createOneShotBufferizePass(oneShot));
    add(bufferization::createDropEquivalentBufferResultsPass());
    add(cpn::createConvertMatmulToBLAS());
    add(createCSEPass());
    add(createCanonicalizerPass());
    if (!add.skip)
      bufferization::buildBufferDeallocationPipeline(add.pm);
    add(cpn::createEarlyDealloc());
    add(cpn::createStridedCopyToLinalg());
  } else if (stage == "loops") {
    // cpn-fuse-row-products' loop over row blocks runs in parallel.
    add(createForallToParallelLoopPass());
    add.onFunctions(createConvertLinalgToParallelLoopsPass());
    if (o.openmp) // else scf.parallel stays a sequential loop nest
      add(cpn::createParallelOuterLoops());
    add(cpn::createLowerFpFlags());
    if (o.checksOnly)
      add.skip = false; // the checks' own pipeline starts here
    else if (o.lazyChecks)
      add(cpn::createExternalizeFpChecks());
    if (o.openmp)
      add(createConvertSCFToOpenMPPass());
    add(cpn::createInlineAllocaScopes());
    add(createCanonicalizerPass());
    add(createLowerAffinePass());
    add(createSCFToControlFlowPass());
    add(createCanonicalizerPass());
    add(createCSEPass());
  } else if (stage == "llvm") {
    add(createConvertComplexToStandardPass());
    add(createConvertMathToFuncs());
    add(createConvertMathToLLVMPass());
    add(createConvertMathToLibmPass());
    add(memref::createExpandStridedMetadataPass());
    // Subviews at run-time offsets (offset arguments) expand to affine.apply.
    add(createLowerAffinePass());
    FinalizeMemRefToLLVMConversionPassOptions memrefs;
    memrefs.useGenericFunctions = true;
    add(createFinalizeMemRefToLLVMConversionPass(memrefs));
    add(createArithToLLVMConversionPass());
    add(createConvertIndexToLLVMPass());
    add(createConvertControlFlowToLLVMPass());
    // Bare pointers, or memref descriptors (shape-generic kernels need the
    // sizes).
    ConvertFuncToLLVMPassOptions funcs;
    funcs.useBarePtrCallConv = o.barePtr;
    add(createConvertFuncToLLVMPass(funcs));
    if (o.openmp)
      add(createConvertOpenMPToLLVMPass());
    add(createConvertComplexToLLVMPass());
    add(createReconcileUnrealizedCastsPass());
    // Bare pointers only: a descriptor's two pointers (allocated, aligned)
    // are one store, and would get two scopes.
    if (o.barePtr)
      add(cpn::createKernelAliasScopes());
  }
}

/// cpn-lower-to-llvm's options, as cpn-opt parses them.
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<bool> openmp{*this, "openmp",
                      llvm::cl::desc("parallel loops become OpenMP regions"),
                      llvm::cl::init(true)};
  Option<bool> barePtr{*this, "bare-ptr",
                       llvm::cl::desc("memref arguments as bare pointers"),
                       llvm::cl::init(true)};
  Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("the last stage to run (linalg, fused, bufferized, "
                     "loops, llvm; empty: all)"),
      llvm::cl::init("")};
  Option<bool> lazyChecks{
      *this, "lazy-checks",
      llvm::cl::desc("the outlined fp checks become declarations (the JIT "
                     "compiles them when first called)"),
      llvm::cl::init(true)};
  Option<bool> checksOnly{
      *this, "checks-only",
      llvm::cl::desc("only the passes after cpn-lower-fp-flags (the "
                     "outlined checks' own pipeline)"),
      llvm::cl::init(false)};
};
} // namespace

const std::vector<std::string> &mlir::cpn::getLoweringStageNames() {
  static const std::vector<std::string> names = {"linalg", "fused",
                                                 "bufferized", "loops", "llvm"};
  return names;
}

void mlir::cpn::buildCPNLoweringStage(OpPassManager &pm, llvm::StringRef stage,
                                      const LoweringOptions &o) {
  Adder add{pm, o.checksOnly};
  addStage(add, stage, o);
}

void mlir::cpn::buildCPNLoweringPipeline(OpPassManager &pm,
                                         const LoweringOptions &o) {
  Adder add{pm, o.checksOnly};
  for (const std::string &stage : getLoweringStageNames()) {
    addStage(add, stage, o);
    if (stage == o.stopAfter)
      break;
  }
}

std::string mlir::cpn::getReproPipeline(bool openmp, bool barePtr) {
  return std::string("builtin.module(cpn-lower-to-llvm{openmp=") +
         (openmp ? "true" : "false") +
         " bare-ptr=" + (barePtr ? "true" : "false") + "})";
}

void mlir::cpn::registerCPNPassesAndPipelines() {
  registerCPNPasses();
  registerCPNTransformsPasses();
  PassPipelineRegistration<PipelineOptions>(
      "cpn-lower-to-llvm",
      "Lower cpn to the LLVM dialect as the JIT does (stages linalg, fused, "
      "bufferized, loops, llvm)",
      [](OpPassManager &pm, const PipelineOptions &o) {
        buildCPNLoweringPipeline(
            pm, {o.openmp, o.barePtr, o.stopAfter, o.checksOnly,
                 o.lazyChecks});
      });
}
