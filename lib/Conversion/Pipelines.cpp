//===- Pipelines.cpp - the lowering pipelines
//------------------------------===//
//
// Part of cpnumeric. Only pipelines live here; passes have their own files.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstring>

using namespace mlir;

std::vector<std::pair<std::string, std::string>>
mlir::cpn::getLoweringStages(bool openmp, bool barePtr) {
  std::vector<std::pair<std::string, std::string>> stages = {
      {"linalg", "cpn-outline-repeats,convert-cpn-to-linalg{keep-updates=1},"
                 "canonicalize,cse"},
      {"fused", "func.func(cpn-fuse-elementwise,cpn-fuse-horizontal,"
                "cpn-fuse-elementwise),canonicalize,cse,"
                "convert-cpn-updates,cpn-ping-pong-updates"},
      {"bufferized",
       "cpn-unshare-inits,eliminate-empty-tensors,"
       "one-shot-bufferize{bufferize-function-boundaries=1 "
       "function-boundary-type-conversion=identity-layout-map},"
       "drop-equivalent-buffer-results,"
       "cpn-matmul-to-blas,cse,canonicalize,buffer-deallocation-pipeline,"
       "cpn-early-dealloc,cpn-strided-copy-to-linalg"},
      {"loops",
       "func.func(convert-linalg-to-parallel-loops),"
       "cpn-parallel-outer-loops,cpn-lower-fp-flags,convert-scf-to-openmp,"
       "cpn-inline-alloca-scopes,canonicalize,"
       "lower-affine,convert-scf-to-cf,canonicalize,cse"},
      {"llvm",
       "convert-complex-to-standard,"
       "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
       "expand-strided-metadata,"
       "finalize-memref-to-llvm{use-generic-functions=1},convert-arith-to-llvm,"
       "convert-index-to-llvm,convert-cf-to-llvm,"
       "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
       "convert-openmp-to-llvm,convert-complex-to-llvm,"
       "reconcile-unrealized-casts"},
  };
  if (!barePtr) // memref descriptors: shape-generic kernels need the sizes
    for (auto &[name, passes] : stages)
      if (size_t at = passes.find("{use-bare-ptr-memref-call-conv=1}");
          at != std::string::npos)
        passes.erase(at, std::strlen("{use-bare-ptr-memref-call-conv=1}"));
  if (!openmp) // scf.parallel stays a sequential loop nest
    for (auto &[name, passes] : stages)
      for (const char *pass :
           {"cpn-parallel-outer-loops,", "convert-scf-to-openmp,",
            "convert-openmp-to-llvm,"})
        if (size_t at = passes.find(pass); at != std::string::npos)
          passes.erase(at, std::strlen(pass));
  return stages;
}

std::string mlir::cpn::getLowerToLLVMPipeline(bool openmp, bool barePtr) {
  std::string p = "builtin.module(";
  bool first = true;
  for (auto &[name, passes] : getLoweringStages(openmp, barePtr)) {
    p += (first ? "" : ",") + passes;
    first = false;
  }
  return p + ")";
}

void mlir::cpn::registerCPNPassesAndPipelines() {
  registerCPNPasses();
  PassPipelineRegistration<>(
      "cpn-lower-to-llvm", "Lower cpn to the LLVM dialect as the JIT does",
      [](OpPassManager &pm) {
        std::string p = getLowerToLLVMPipeline();
        // Strip the builtin.module( ... ) anchor: pm is already on the module.
        StringRef inner =
            StringRef(p).drop_front(strlen("builtin.module(")).drop_back();
        if (failed(parsePassPipeline(inner, pm)))
          llvm::report_fatal_error("cpn-lower-to-llvm: bad pipeline");
      });
}
