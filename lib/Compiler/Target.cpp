//===- Target.cpp - the targets kernels are compiled for ------------------===//
//
// Part of cpnumeric.
//
// Owns the targets (cpn/Compiler/Target.h) and their registry: HostTarget, the
// host CPU with or without OpenMP ("openmp", "cpu"), whose lowering options
// choose OpenMP regions or sequential loops and whose code generator is
// CodeGen.cpp's (LLVM's optimizer for the host with libmvec, object code,
// split over threads for the JIT).
//
// Calls CodeGen.cpp and cpn/Conversion's pipeline text.
//
//===----------------------------------------------------------------------===//

#include "cpn/Compiler/Target.h"
#include "CompilerInternal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace cpn {

Target::~Target() = default;

namespace {

/// MLIR's C runner utilities (memref copies of ranked descriptors), which
/// lowered kernels may call.
std::string cRunnerUtilsPath() {
  const char *path = "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so";
  return std::filesystem::exists(path) ? path : "";
}

/// The CPU this process runs on, with or without OpenMP.
class HostTarget final : public Target {
public:
  explicit HostTarget(bool openmp) : openmp(openmp) {}

  llvm::StringRef name() const override { return openmp ? "openmp" : "cpu"; }

  mlir::cpn::LoweringOptions loweringOptions(bool shapeGeneric) const override {
    mlir::cpn::LoweringOptions o;
    o.openmp = openmp;
    o.barePtr = !shapeGeneric;
    return o;
  }

  std::vector<char> generate(llvm::Module &m,
                             const CodeGenOptions &opts) const override {
    if (!opts.pic)
      return detail::optimizeAndEmit(m, opts.optLevel, opts.llText,
                                     opts.scalarCalls);
    detail::optimizeModule(m, opts.optLevel, detail::hostTargetMachine(true));
    if (opts.llText)
      *opts.llText = detail::llvmText(m);
    if (opts.scalarCalls)
      *opts.scalarCalls = detail::scalarMathInLoops(m);
    return detail::emitObject(m, /*pic=*/true);
  }

  std::string fingerprint() const override {
    // The pipeline by its variant, not its text: which passes run, in what
    // order and with what options is this build's code, which the cache's
    // build-id covers (printing the text took ~1.5 ms of every process's
    // first window).
    std::string s = name().str() + "\n" +
                    mlir::cpn::getReproPipeline(openmp, true) + "\n" +
                    llvm::sys::getHostCPUName().str();
    // Read without making a target machine: a warm process may never
    // compile.
    std::vector<std::string> features;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      features.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    std::sort(features.begin(), features.end());
    for (const std::string &f : features)
      s += " " + f;
    return s;
  }

  std::vector<std::string> libraries() const override {
    std::vector<std::string> libs;
    if (std::string runner = cRunnerUtilsPath(); !runner.empty())
      libs.push_back(runner);
    if (std::filesystem::exists(detail::kVectorMath))
      libs.push_back(detail::kVectorMath);
    if (openmp)
      libs.push_back(detail::kOpenMPRuntime);
    return libs;
  }

private:
  bool openmp;
};

/// Every target, the JIT's first.
const std::vector<const Target *> &registry() {
  static const HostTarget openmp(true), cpu(false);
  static const std::vector<const Target *> all = {&openmp, &cpu};
  return all;
}

} // namespace

const Target &targetNamed(llvm::StringRef name) {
  for (const Target *t : registry())
    if (t->name() == name)
      return *t;
  std::string known;
  for (const std::string &n : targetNames())
    known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("cpnumeric: unknown target '" + name.str() +
                              "'; the targets are " + known);
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const Target *t : registry())
    names.push_back(t->name().str());
  return names;
}

const Target &jitTarget() { return *registry().front(); }

} // namespace cpn
