//===- Simulate.cpp - what P ranks would move for a window
//-----------------===//
//
// Part of cpnumeric.
//
// CPN_SIMULATE_RANKS=P (issue 23): each window a one-process run flushes is
// also partitioned for P ranks by cpn-partition, on its own copy of the
// window's cpn module (the kernel that runs is the same as without the
// knob), and the bytes each rank would receive and the communication
// operations it would take part in are read off the pass's annotations
// (`cpn.comm = {kind = bytes, ...}` on ops and on the function's
// arguments). The Engine sums them per run (stats()); docs/scaling.md
// turns them into a model of scaling.
//
// Calls TraceImport.cpp (buildModule) and the cpn-partition pass.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Dialect/CPN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <stdexcept>

namespace cpn {

using namespace detail;

/// Adds the entries of one `cpn.comm` dictionary to `out`.
static void addComm(mlir::Attribute attr, SimulatedComm &out) {
  auto dict = llvm::dyn_cast_if_present<mlir::DictionaryAttr>(attr);
  if (!dict)
    return;
  for (mlir::NamedAttribute entry : dict) {
    auto bytes = llvm::dyn_cast<mlir::IntegerAttr>(entry.getValue());
    if (!bytes)
      continue;
    uint64_t b = static_cast<uint64_t>(std::max<int64_t>(bytes.getInt(), 0));
    std::string kind = entry.getName().str();
    out.bytes += b;
    out.bytesByKind[kind] += b;
    // A halo update is two exchanges (the rows below and above); every
    // other kind one collective.
    uint64_t ops = kind == "update_halo" ? 2 : 1;
    out.operations += ops;
    out.operationsByKind[kind] += ops;
  }
}

SimulatedComm simulateRanks(const Trace &trace,
                            const std::vector<int32_t> &outputs,
                            const std::vector<int32_t> &donors, int64_t ranks,
                            int64_t threshold) {
  SimulatedComm out;
  if (ranks <= 1 || trace.empty())
    return out;
  auto lock = lockCompiler();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModule(trace, outputs, donors);
  mlir::PassManager pm(module->getContext());
  mlir::cpn::PartitionOptions options;
  options.ranks = ranks;
  options.threshold = threshold;
  pm.addPass(mlir::cpn::createPartition(options));
  if (mlir::failed(pm.run(*module)))
    throw std::runtime_error("cpnumeric: cpn-partition failed on a window");
  module->walk([&](mlir::Operation *op) {
    addComm(op->getAttr("cpn.comm"), out);
    if (auto f = llvm::dyn_cast<mlir::func::FuncOp>(op))
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        addComm(f.getArgAttr(i, "cpn.comm"), out);
  });
  return out;
}

} // namespace cpn
