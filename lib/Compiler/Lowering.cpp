//===- Lowering.cpp - the pass pipeline, IR dumps and repro ---------------===//
//
// Part of cpnumeric.
//
// Owns running the lowering pipeline on a cpn module (lower): in one pass
// manager, or two around the pass that outlines the np.errstate checks, or with
// CPN_DUMP_IR one pass at a time, writing the IR after each; on failure it
// names the cpn-opt command that reproduces it. Also the small text helpers of
// dumps (printOp, writeFile, fileSafe) and splitPasses.
//
// Calls only MLIR and cpn/Conversion's pipeline (getLoweringStages).
//
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"
#include "cpn/Conversion/Passes.h"

#include "mlir/IR/Diagnostics.h"
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

/// Splits a pass list at top-level commas ("a,func.func(b,c),d{x=1}").
std::vector<std::string> splitPasses(const std::string &list) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : list) {
    if (c == '(' || c == '{')
      ++depth;
    if (c == ')' || c == '}')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

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

/// Runs the lowering pipeline. With a dump directory, runs one pass at a
/// time and writes the IR after each; on failure, names the cpn-opt command
/// that reproduces it.
void lower(ModuleOp module, const std::filesystem::path &dumpDir, int &fileNo,
           const std::string &lastStage, bool openmp,
           const StageHook &afterStage, bool barePtr,
           const std::function<void(ModuleOp)> &afterChecks) {
  std::string diag;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  auto fail = [&](const std::string &what, const std::string &input) {
    std::string msg = "cpnumeric: compilation failed in " + what + ":\n" + diag;
    msg += "reproduce with: cpn-opt --pass-pipeline='" +
           mlir::cpn::getLowerToLLVMPipeline(openmp, barePtr) + "' " +
           (input.empty() ? std::string("<dumped cpn.mlir>") : input) +
           "\n(set CPN_DUMP_IR=DIR to write the input file)";
    throw std::runtime_error(msg);
  };
  if (dumpDir.empty()) {
    // Two runs when checks are split off: the passes up to the one that
    // outlines them, then the rest.
    std::vector<std::string> parts(1);
    for (auto &[stage, passes] :
         mlir::cpn::getLoweringStages(openmp, barePtr)) {
      for (const std::string &pass : splitPasses(passes)) {
        parts.back() += (parts.back().empty() ? "" : ",") + pass;
        if (afterChecks && pass == kFpFlagsPass)
          parts.emplace_back();
      }
      if (stage == lastStage)
        break;
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0)
        afterChecks(module);
      if (parts[i].empty())
        continue;
      // A fresh pass manager per module: some upstream passes
      // (math-to-funcs) keep per-module state in the pass instance.
      PassManager pm(module.getContext());
      if (failed(parsePassPipeline(parts[i], pm)))
        fail("parsing the lowering pipeline", "");
      if (failed(pm.run(module)))
        fail("the lowering pipeline", "");
    }
    return;
  }
  std::string cpnFile = (dumpDir / "001-cpn.mlir").string();
  for (auto &[stage, passes] : mlir::cpn::getLoweringStages(openmp, barePtr)) {
    for (const std::string &pass : splitPasses(passes)) {
      PassManager pm(module.getContext());
      if (failed(parsePassPipeline(pass, pm)) || failed(pm.run(module)))
        fail("pass '" + pass + "' (stage " + stage + ")", cpnFile);
      if (afterChecks && pass == kFpFlagsPass)
        afterChecks(module);
      char num[8];
      snprintf(num, sizeof(num), "%03d", ++fileNo);
      writeFile(dumpDir / (std::string(num) + "-" + fileSafe(pass) + ".mlir"),
                printOp(module));
    }
    if (afterStage)
      afterStage(stage, module);
  }
}

} // namespace detail
} // namespace cpn
