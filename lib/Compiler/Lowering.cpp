//===- Lowering.cpp - the pass pipeline, IR dumps and repro ---------------===//
//
// Part of cpnumeric.
//
// Owns running the lowering pipeline on a cpn module (lower): a pass manager
// per stage, built by cpn/Conversion's buildCPNLoweringStage, the same with or
// without CPN_DUMP_IR (which adds MLIR's IR printing into one file per pass,
// the crash reproducer, and repro.txt, the cpn-opt command of the whole
// pipeline); the JIT takes the outlined checks out right after
// cpn-lower-fp-flags through a pass instrumentation. Also the small text
// helpers of dumps (printOp, writeFile, fileSafe).
//
// Calls only MLIR and cpn/Conversion's pipeline.
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Conversion/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <stdexcept>

using namespace mlir;

namespace cpn {
namespace detail {

std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}

void writeFile(const std::filesystem::path &p, const std::string &text) {
  std::ofstream f(p);
  f << text;
}

std::string fileSafe(std::string s) {
  for (char &c : s)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      c = '_';
  return s.substr(0, 60);
}

namespace {
/// CPN_DUMP_IR: the module after each pass, into NNN-<pass>.mlir. A pass on
/// functions runs once per function; its file is rewritten each time, so it
/// ends with the module after the pass has run on all of them.
class DumpEachPass : public PassManager::IRPrinterConfig {
public:
  DumpEachPass(std::filesystem::path dir, int &fileNo)
      : IRPrinterConfig(/*printModuleScope=*/true), dir_(std::move(dir)),
        fileNo_(fileNo) {}
  void printAfterIfEnabled(Pass *pass, Operation *op,
                           PrintCallbackFn) override {
    while (Operation *parent = op->getParentOp())
      op = parent;
    if (pass != last_ || op != lastTop_) {
      char num[16];
      snprintf(num, sizeof(num), "%03d", ++fileNo_);
      file_ = dir_ / (std::string(num) + "-" +
                      fileSafe(pass->getArgument().str()) + ".mlir");
      last_ = pass;
      lastTop_ = op;
    }
    writeFile(file_, printOp(op) + "\n"); // as cpn-opt prints it
  }

private:
  std::filesystem::path dir_, file_;
  int &fileNo_;
  Pass *last_ = nullptr;
  Operation *lastTop_ = nullptr;
};

/// Calls `fn` on the module right after cpn-lower-fp-flags (the JIT takes
/// the outlined checks out there).
class AfterFpFlags : public PassInstrumentation {
public:
  explicit AfterFpFlags(std::function<void(ModuleOp)> fn)
      : fn_(std::move(fn)) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    if (pass->getArgument() == kFpFlagsPass)
      if (auto m = dyn_cast<ModuleOp>(op))
        fn_(m);
  }

private:
  std::function<void(ModuleOp)> fn_;
};
} // namespace

/// Runs the lowering pipeline (Pipelines.cpp) one stage at a time, a pass
/// manager per stage, the same with or without a dump directory. With one,
/// writes the IR after each pass, and a crash reproducer and the cpn-opt
/// command on failure.
void lower(ModuleOp module, const std::filesystem::path &dumpDir, int &fileNo,
           const mlir::cpn::LoweringOptions &options,
           const StageHook &afterStage,
           const std::function<void(ModuleOp)> &afterChecks) {
  std::string diag;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  std::string cpnFile =
      dumpDir.empty() ? std::string() : (dumpDir / "001-cpn.mlir").string();
  auto fail = [&](const std::string &stage) {
    std::string msg = "cpnumeric: compilation failed in stage " + stage +
                      " of the lowering pipeline:\n" + diag;
    msg += "reproduce with: cpn-opt --pass-pipeline='" +
           mlir::cpn::getReproPipeline(options.openmp, options.barePtr) + "' " +
           (cpnFile.empty() ? std::string("<dumped cpn.mlir>") : cpnFile) +
           (cpnFile.empty()
                ? "\n(set CPN_DUMP_IR=DIR to write the input file)"
                : "\n(and " + (dumpDir / "crash-reproducer.mlir").string() +
                      ": the failing pass alone)");
    throw std::runtime_error(msg);
  };
  if (!dumpDir.empty())
    writeFile(dumpDir / "repro.txt",
              "cpn-opt --pass-pipeline='" +
                  mlir::cpn::getReproPipeline(options.openmp, options.barePtr) +
                  "' " + cpnFile + "\n");
  for (const std::string &stage : mlir::cpn::getLoweringStageNames()) {
    // A fresh pass manager per module: some upstream passes
    // (math-to-funcs) keep per-module state in the pass instance.
    PassManager pm(module.getContext());
    mlir::cpn::buildCPNLoweringStage(pm, stage, options);
    if (afterChecks)
      pm.addInstrumentation(std::make_unique<AfterFpFlags>(afterChecks));
    if (!dumpDir.empty()) {
      pm.enableIRPrinting(std::make_unique<DumpEachPass>(dumpDir, fileNo));
      pm.enableCrashReproducerGeneration(
          (dumpDir / "crash-reproducer.mlir").string());
    }
    if (failed(pm.run(module)))
      fail(stage);
    if (afterStage)
      afterStage(stage, module);
    if (stage == options.stopAfter)
      break;
  }
}

} // namespace detail
} // namespace cpn
