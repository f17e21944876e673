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
#include "cpnrt/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
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

namespace detail {
void localizeModule(mlir::ModuleOp module, int64_t ranks, int64_t rank,
                    int64_t threshold, int64_t part) {
  mlir::PassManager pm(module->getContext());
  mlir::cpn::LocalizeOptions options;
  options.ranks = ranks;
  options.rank = rank;
  options.threshold = threshold;
  options.part = part;
  pm.addPass(mlir::cpn::createLocalize(options));
  if (mlir::failed(pm.run(module)))
    throw std::runtime_error("cpnumeric: cpn-localize failed on a window");
}
} // namespace detail

RankPlan planRanks(const Trace &trace, const std::vector<int32_t> &outputs,
                   const std::vector<int32_t> &donors, int64_t ranks,
                   int64_t rank, int64_t threshold) {
  RankPlan plan;
  auto lock = lockCompiler();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModule(trace, outputs, donors);
  localizeModule(*module, ranks, rank, threshold);
  auto f = llvm::cast<mlir::func::FuncOp>(module->getBody()->front());
  size_t inputs = trace.inputs().size();
  if (auto border = f->getAttrOfType<mlir::IntegerAttr>("cpn.border"))
    plan.border = border.getInt();
  plan.inputRows.resize(inputs);
  plan.keptInputs.resize(inputs);
  for (size_t i = 0; i < inputs; ++i)
    if (auto rows = f.getArgAttrOfType<mlir::DenseI64ArrayAttr>(unsigned(i),
                                                                "cpn.rows"))
      plan.inputRows[i].assign(rows.asArrayRef().begin(),
                               rows.asArrayRef().end());
  for (size_t i = 0; i < inputs; ++i)
    plan.keptInputs[i] = bool(f.getArgAttr(unsigned(i), "cpn.kept"));
  // Outputs without a donor have arguments after the inputs (and the
  // offsets argument), in order.
  unsigned next = unsigned(inputs + (trace.offsetArgCount() ? 1 : 0));
  plan.outputRows.assign(outputs.size(), {-1, -1});
  plan.combine.assign(outputs.size(), "");
  // After the loop below: the largest split output's block.
  auto blockOf = [&](size_t j) {
    const std::vector<int64_t> &shape = trace.ops()[outputs[j]].shape;
    int64_t row = 1;
    for (size_t k = 1; k < shape.size(); ++k)
      row *= shape[k];
    return (plan.outputRows[j].second - plan.outputRows[j].first) * row;
  };
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (donors[j] >= 0) {
      const std::vector<int64_t> &in = plan.inputRows[donors[j]];
      if (!in.empty()) {
        int64_t n = trace.inputs()[donors[j]]->shape[0];
        plan.outputRows[j] = {n * rank / ranks, n * (rank + 1) / ranks};
      }
      continue;
    }
    unsigned arg = next++;
    if (auto rows =
            f.getArgAttrOfType<mlir::DenseI64ArrayAttr>(arg, "cpn.rows"))
      plan.outputRows[j] = {rows[0], rows[1]};
    if (auto c = f.getArgAttrOfType<mlir::StringAttr>(arg, "cpn.combine"))
      plan.combine[j] = c.str();
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    if (plan.outputRows[j].first >= 0)
      plan.blockElements = std::max(plan.blockElements, blockOf(j));
  // A window whose outputs are partials only (a sum of a stencil): the
  // blocks of its split inputs.
  for (size_t i = 0; i < inputs; ++i) {
    const std::vector<int64_t> &rows = plan.inputRows[i];
    const std::vector<int64_t> &shape = trace.inputs()[i]->shape;
    if (rows.size() < size_t(2 * (rank + 1)) || shape.empty() || !shape[0])
      continue;
    int64_t n = shape[0], row = 1;
    for (size_t k = 1; k < shape.size(); ++k)
      row *= shape[k];
    plan.blockElements = std::max(plan.blockElements,
                                  (cpnrt::comm::blockRow(n, rank + 1, ranks) -
                                   cpnrt::comm::blockRow(n, rank, ranks)) *
                                      row);
  }
  return plan;
}

} // namespace cpn
