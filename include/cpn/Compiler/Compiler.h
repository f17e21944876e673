//===- Compiler.h - trace to native code ------------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_COMPILER_COMPILER_H
#define CPN_COMPILER_COMPILER_H

#include "cpn/Trace/Trace.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cpn {

/// An integer of a shape-generic trace as an affine function of the dynamic
/// sizes: c + sum over s of coef[s] * (the size of dimension s).
struct SizeExpr {
  int64_t c = 0;
  std::vector<int64_t> coef;
  bool isConstant() const {
    for (int64_t k : coef)
      if (k)
        return false;
    return true;
  }
};

/// A view or update of a shape-generic trace that is a box of its base at
/// every size: decomposeView's owner and coeffs (the same at every size) and
/// where the box starts in each base dimension.
struct SizeBox {
  std::vector<int64_t> owner, coeffs;
  std::vector<SizeExpr> starts;
};

/// Shape-generic kernels (cpnc signatures with `:` dimensions). cpnc records
/// the trace with a distinct representative size for each dynamic dimension
/// of the inputs (`sizes`: size -> dimension number) and fits, from traces
/// at several sizes, each op's dimensions (`shapes`, the ops with a dynamic
/// one) and the boxes of its slices (`boxes`: `u[1:-1, 2:]`) as affine
/// functions of those sizes. Empty: all dimensions are static.
struct ShapeSymbols {
  std::map<int64_t, int> sizes;
  std::map<int32_t, std::vector<SizeExpr>> shapes;
  std::map<int32_t, SizeBox> boxes;
  bool empty() const { return sizes.empty(); }
};

/// Settings that the Python registry of CPN_* variables passes down.
struct CompilerOptions {
  std::string dumpDir;    // CPN_DUMP_IR: write every stage of each compile
  size_t traceLimit = 64; // CPN_TRACE_LIMIT: cut windows at this many ops
  int optLevel = 3;       // CPN_OPT_LEVEL
  std::string cacheDir;   // CPN_CACHE_DIR: compiled kernels on disk ("" = off)
  // CPN_CACHE_MAX_BYTES: the disk cache's bound (0: none)
  uint64_t cacheMaxBytes = uint64_t(1) << 30;
  // CPN_BASELINE_WORK: a window whose work (per op the elements it computes
  // or reads, a product's multiply-adds) is at or above this is never run in
  // the baseline tier; below it the cost model of Baseline.cpp decides (the
  // expected time op by op against the compile's). 0: always compile.
  uint64_t baselineWork = uint64_t(1) << 26;
  // CPN_BACKGROUND_COMPILE: a window the baseline tier runs is compiled on
  // a thread of its own meanwhile, once it repeats (or is big enough to pay
  // at once); the next time it comes its kernel runs. false: compiled on
  // the calling thread once the baseline tier has paid for it.
  bool backgroundCompile = true;
  // CPN_SIMULATE_RANKS / CPN_PARTITION_THRESHOLD: every window flushed is
  // also partitioned for this many ranks (above 1) and what they would move
  // is counted in CompilerStats::simulated.
  int64_t simulateRanks = 0;
  int64_t partitionThreshold = 262144;
  // CPN_PARTITION under several MPI ranks: each window is compiled into
  // this rank's program (cpn-localize), big arrays split by rows.
  bool partition = false;
  int64_t ranks = 1, rank = 0;
  bool partitioning() const { return partition && ranks > 1; }
  // CPN_HALO_OVERLAP: a partitioned window whose program reads halo rows
  // (RankPlan::border) and whose rank's blocks hold at least this many
  // elements (RankPlan::blockElements) runs as two kernels, the interior
  // while the halo rows travel and the border after they land; smaller
  // ones (a kernel launch more costs more than the round's wait hidden)
  // and 0: one kernel after the halo rows.
  int64_t haloOverlap = int64_t(1) << 20;
  // Which program of a partitioned window compileWindow builds: 0 the
  // block's, 1 its interior rows, 2 its border rows (cpn-localize's part).
  int64_t partitionPart = 0;
};

/// What P ranks would move for one run of a window (CPN_SIMULATE_RANKS):
/// cpn-partition's `cpn.comm` annotations summed (lib/Compiler/Simulate.cpp).
struct SimulatedComm {
  uint64_t bytes = 0;      // bytes one rank receives
  uint64_t operations = 0; // halo exchanges (two per halo update), collectives
  std::map<std::string, uint64_t> bytesByKind, operationsByKind;
};

struct CompilerStats {
  uint64_t flushes = 0;
  uint64_t compilations = 0;
  uint64_t cacheHits = 0;
  uint64_t opsRecorded = 0;
  uint64_t valuesMaterialized = 0;
  uint64_t deadValuesSkipped = 0;
  uint64_t buffersDonated = 0; // outputs written into a dead input's store
  double compileSeconds = 0;
  double compileMlirSeconds = 0; // of which the MLIR pass pipeline
  uint64_t diskHits = 0;         // kernels loaded from CPN_CACHE_DIR
  uint64_t diskWrites = 0;       // kernels written to CPN_CACHE_DIR
  double diskLoadSeconds = 0;
  uint64_t windowsRecovered = 0; // windows that failed whole, run in parts
  uint64_t valuesFailed = 0;     // values left uncomputed by such failures
  uint64_t baselineWindows = 0;  // windows run op by op, not compiled
  double baselineSeconds = 0;
  uint64_t backgroundCompiles = 0; // windows queued for the compiler thread
  double compileWaitSeconds = 0;   // waited for the compiler thread
  uint64_t offsetArgWindows = 0;   // run by a kernel with offset arguments
  // Partitioned windows run as an interior beside their halo rounds and a
  // border after them (CPN_HALO_OVERLAP).
  uint64_t haloOverlapWindows = 0;
  // CPN_SIMULATE_RANKS: what the windows run so far would have moved on
  // that many ranks (each run counted), per rank.
  SimulatedComm simulated;
  uint64_t simulatedRuns = 0;
};

/// The exact classification of np.errstate checks, compiled only when a run
/// needs it (on the thread that runs the kernel): how often, and how long.
struct CheckCompileStats {
  uint64_t compilations = 0;
  double seconds = 0;
};
CheckCompileStats checkCompileStats();
void resetCheckCompileStats();

/// Partitions the window of `trace` (these outputs and donors) for `ranks`
/// ranks, values of fewer than `threshold` elements replicated, without
/// running or compiling it.
SimulatedComm simulateRanks(const Trace &trace,
                            const std::vector<int32_t> &outputs,
                            const std::vector<int32_t> &donors, int64_t ranks,
                            int64_t threshold);

/// What a window's program for one rank (cpn-localize) reads and writes,
/// by rows of the first axis, for the Engine to move data before and after
/// it runs.
struct RankPlan {
  /// Per trace input: the rows [lo, hi) each rank's program reads (two per
  /// rank); empty: read whole (or too small to be split).
  std::vector<std::vector<int64_t>> inputRows;
  /// Per output: this rank's rows {lo, hi} of it that the program writes,
  /// {-1, -1} when whole (a donated output: its input's rows).
  std::vector<std::pair<int64_t, int64_t>> outputRows;
  /// Per output: the reduction ("sum", "max", ...) whose partial over this
  /// rank's rows it holds, to combine over the ranks; "" for none.
  std::vector<std::string> combine;
  /// cpn-localize's `cpn.border`: the rows at each edge of every output's
  /// block that need other ranks' rows; the rows between read only the
  /// inputs' blocks (programs part 1 and 2). 0: no such split.
  int64_t border = 0;
  /// The elements of this rank's block of the largest split output.
  int64_t blockElements = 0;
  /// Per trace input: whether the interior and border programs leave it as
  /// it is although an output takes its store (`cpn.kept`: a held copy).
  std::vector<bool> keptInputs;
  /// Set when a part's program failed to compile: the window's block
  /// program runs from then on (no second try per window).
  mutable bool partsFailed = false;
};

/// The plan of the window of `trace` on rank `rank` of `ranks`
/// (lib/Compiler/Simulate.cpp): the cpn-localize pass run on its module.
RankPlan planRanks(const Trace &trace, const std::vector<int32_t> &outputs,
                   const std::vector<int32_t> &donors, int64_t ranks,
                   int64_t rank, int64_t threshold);

/// Builds the cpn module of a trace whose outputs are `outputs` (op indices)
/// and returns its text (the `cpn` stage).
std::string buildModuleText(const Trace &trace,
                            const std::vector<int32_t> &outputs);

/// The text of a trace with these outputs at a stage: "trace", "cpn", a
/// lowering stage ("linalg", "fused", "bufferized", "loops", "llvm-dialect")
/// or "llvm" (the LLVM IR as optimized for this machine).
std::string stageText(const Trace &trace, const std::vector<int32_t> &outputs,
                      const std::string &stage, int optLevel,
                      const ShapeSymbols &symbols = {});

/// How `compileObject` builds an ahead-of-time object (cpnc).
struct ObjectOptions {
  std::string symbol; // the entry point: void symbol(void **args)
  int optLevel = 3;   // LLVM's -O level
  // A target of cpn/Compiler/Target.h: "openmp", or "cpu" for sequential
  // loop nests (cpnc --target cpu)
  std::string target = "openmp";
  std::string dumpDir;  // numbered files of every pass under dumpDir/symbol
  ShapeSymbols symbols; // dynamic dimensions (then memref descriptors)
};

/// Compiles a trace with these outputs into a position-independent ELF object
/// for this machine that exports one function, `opts.symbol`, taking one
/// pointer per slot: slot i points to the data pointer of input i, then of
/// each output, as the JIT's entry points. With `symbols`, each input and
/// output takes 3 + 2 * rank slots instead (a memref descriptor: allocated
/// and aligned pointer, offset, sizes, strides in elements). The object needs
/// at link time: libomp (target "openmp"), libmvec, libm,
/// `_mlir_memref_to_llvm_alloc/free` and, for matmuls, `cpn_gemm_f32/f64` (see
/// cpnrt/Blas.h).
std::vector<char> compileObject(const Trace &trace,
                                const std::vector<int32_t> &outputs,
                                const ObjectOptions &opts);

/// What a trace costs once fused and bufferized, read off its bufferized IR.
struct TraceCost {
  int64_t values = 0;        // ops in the trace
  int64_t outputs = 0;       // values that get a store
  int64_t kernels = 0;       // loop nests, copies and BLAS calls
  int64_t temporaries = 0;   // buffers allocated inside the kernel
  int64_t bytesMoved = 0;    // bytes the loop nests and calls read and write
  int64_t argumentBytes = 0; // the inputs' and outputs' stores
  int64_t peakBytes = 0;     // arguments + the most temporaries live at once
};
TraceCost traceCost(const Trace &trace, const std::vector<int32_t> &outputs);

/// Sets the number of OpenMP threads kernels run on (0: all cores) and
/// returns it; loads the OpenMP runtime the kernels call.
int setKernelThreads(int threads);
int kernelThreads();

/// For each output, the input whose store it may be written into (or -1): an
/// input is donatable when nothing but the trace refers to it (its Python
/// handles died, as the old value of `u` after `u[1:-1] = f(u)`). An update
/// chain's root input goes to the chain's result, so the update can be done in
/// place; other outputs take any remaining donatable input of their type.
/// After the outputs' entries come the donatable inputs left that an update
/// writes into (`update %inK`, a chain no output keeps: the last window of a
/// loop that swaps two buffers): the kernel may update them in place too.
/// `partitioned`: the kernel becomes one rank's program (cpn-localize),
/// where a copy of the chain's input is read from that input (its halo
/// rows are there): a stencil of the copy counts as one of the chain.
std::vector<int32_t> planDonations(const Trace &trace,
                                   const std::vector<int32_t> &outputs,
                                   bool partitioned = false);

} // namespace cpn

#endif // CPN_COMPILER_COMPILER_H
