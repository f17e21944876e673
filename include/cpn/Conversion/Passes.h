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

#include <string>

namespace mlir {
namespace cpn {

#define GEN_PASS_DECL
#include "cpn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "cpn/Conversion/Passes.h.inc"

/// The textual pipeline that lowers a module of cpn ops in a `func.func` to
/// the LLVM dialect, ready for the JIT. Parallel loops become OpenMP regions,
/// or, without `openmp`, sequential loop nests (`cpnc --target cpu`). Memref
/// arguments become bare pointers, or, without `barePtr`, memref descriptors
/// (pointers, offset, sizes, strides: shape-generic kernels). The same string
/// is what `cpn-opt --pass-pipeline=...` takes to reproduce a compilation
/// from a dumped file.
std::string getLowerToLLVMPipeline(bool openmp = true, bool barePtr = true);

/// The pipeline split into named stages (for IR dumps and `lower().as_text`):
/// each entry is (stage name, textual pass pipeline).
std::vector<std::pair<std::string, std::string>>
getLoweringStages(bool openmp = true, bool barePtr = true);

/// Registers the passes and the named pipeline `cpn-lower-to-llvm`.
void registerCPNPassesAndPipelines();

} // namespace cpn
} // namespace mlir

#endif // CPN_CONVERSION_PASSES_H
