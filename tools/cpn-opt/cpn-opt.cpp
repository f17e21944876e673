//===- cpn-opt.cpp - mlir-opt with the cpn dialect and passes -------------===//
//
// Part of cpnumeric. Every pass and pipeline the JIT runs can be run here.
//
//===----------------------------------------------------------------------===//

#include "cpn/Conversion/Passes.h"
#include "cpn/Dialect/CPN/CPNDialect.h"
#include "cpn/Dialect/CPN/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::cpn::registerCPNPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::cpn::CPNDialect>();
  mlir::cpn::registerBufferizableOpInterfaceExternalModels(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "cpn optimizer driver\n", registry));
}
