//===- Target.h - where compiled kernels run --------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
// A target is what the compiler needs to know about the machine a kernel runs
// on, behind one interface: the options of the lowering pipeline for it
// (cpn-lower-to-llvm), its code generator (an LLVM module of the lowered
// kernel to object code), what kernels compiled for it depend on (the disk
// cache's key) and the libraries they call at run time. Everything before
// (trace import, the cpn and linalg passes) is the same for every target.
//
// Targets today: "openmp" (the host CPU, parallel loops as OpenMP regions:
// the JIT's and cpnc's default) and "cpu" (the host CPU, sequential loop
// nests: `cpnc --target cpu`). A CUDA target plugs in here: its lowering
// options and a code generator that writes CUDA source for NVRTC.
//
// Defined in lib/Compiler/Target.cpp. Compiler.cpp, KernelCache.cpp and
// Jit.cpp take their target from here; Reports.cpp takes the JIT target's
// lowering options (its "llvm" stage is the host's optimized IR).
//
//===----------------------------------------------------------------------===//

#ifndef CPN_COMPILER_TARGET_H
#define CPN_COMPILER_TARGET_H

#include "cpn/Conversion/Passes.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace cpn {

/// How a target's code generator runs on one kernel.
struct CodeGenOptions {
  int optLevel = 3; // LLVM's -O level (CPN_OPT_LEVEL, cpnc -O)
  /// Position-independent code for a shared object (cpnc); otherwise code
  /// for the JIT, which a big kernel may get in parts compiled on threads
  /// of their own (a bundle of objects: unbundleObjects).
  bool pic = false;
  std::string *llText = nullptr; // gets the optimized LLVM IR (IR dumps)
  /// Gets the scalar math calls left in its loops (summary.txt).
  std::vector<std::string> *scalarCalls = nullptr;
};

class Target {
public:
  virtual ~Target();
  /// Its name, as `cpnc --target` and error messages spell it.
  virtual llvm::StringRef name() const = 0;
  /// The lowering pipeline's options for this target. `shapeGeneric`:
  /// kernels with dynamic dimensions (memref descriptors, not bare
  /// pointers).
  virtual mlir::cpn::LoweringOptions
  loweringOptions(bool shapeGeneric = false) const = 0;
  /// The object code of a kernel's LLVM module (translated from the
  /// lowered module, with its packed entry point), optimized for this
  /// target; `m` is changed (optimized, perhaps split) on the way.
  virtual std::vector<char> generate(llvm::Module &m,
                                     const CodeGenOptions &opts) const = 0;
  /// What code for this target depends on besides the trace and the
  /// compiler's build: which variant of the lowering pipeline and the
  /// machine (CPU name and features). Part of the disk cache's key.
  virtual std::string fingerprint() const = 0;
  /// The shared libraries its kernels call, by path (the JIT resolves
  /// their symbols there; libraries missing on this machine are left out).
  virtual std::vector<std::string> libraries() const = 0;
};

/// The target of that name; std::invalid_argument naming the targets
/// otherwise.
const Target &targetNamed(llvm::StringRef name);
/// The names of the targets, in the order of targetNamed's message.
std::vector<std::string> targetNames();
/// The JIT's target: the host CPU with OpenMP.
const Target &jitTarget();

} // namespace cpn

#endif // CPN_COMPILER_TARGET_H
