//===- Passes.td - cpn-to-cpn transforms -------------------*- tablegen -*-===//
//
// Part of cpnumeric. The passes that rewrite cpn ops into cpn ops (schedule,
// split, partition, outline), before convert-cpn-to-linalg; each can be run
// alone from cpn-opt.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_TRANSFORMS_PASSES
#define CPN_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ScheduleReductions : Pass<"cpn-schedule-reductions", "ModuleOp"> {
  let summary = "Choose how each reduction runs: precision, splits, row blocks";
  let description = [{
    The scheduling choices of reductions, made on cpn ops so that
    `convert-cpn-to-linalg` only carries them out (and so that they can be
    read, tested and changed apart from the lowering). A float16/float32
    `sum` of more than a few elements per result becomes a float64 sum
    between two `cpn.cast`s (NumPy's pairwise summation is within a few
    roundings; a vectorized loop's accumulators in float32 are not). A
    reduction over every axis of a rank >= 2 array becomes two `cpn.reduce`s
    (all axes but the first, parallel over rows; then the rows), since one
    nest of reduction loops runs on one thread. A reduction over the outer
    axis only, a tall transposed product `x.T @ v` (BLAS's transposed gemv
    reads a tall, narrow matrix at a fraction of the bandwidth) and a long
    inner product get `cpn.row_blocks`: blocks of rows reduced into partials
    in parallel, then added. The thresholds are measured; each says why in
    ScheduleReductions.cpp.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def SplitJoins : Pass<"cpn-split-joins", "ModuleOp"> {
  let summary = "Compute elementwise ops of a concatenation piece by piece";
  let description = [{
    np.concatenate, np.roll, np.stack and np.append write their result as a
    chain of cpn.update ops that tile a fresh base along one axis (a join).
    An elementwise op with a join operand becomes one op per piece (the
    union of the split points of its join operands on that axis), reading
    the pieces and slices of its other operands; its result is a join of
    those pieces, so that ops reading it split in turn. A chain of ufuncs
    over `np.roll(u, 1)` and `np.roll(u, -1)` is then one fused loop per
    piece instead of a fill and copies per roll and a pass over each.
  }];
  let options = [
    Option<"maxPieces", "max-pieces", "int64_t", /*default=*/"8",
           "Split an op into at most this many pieces">,
  ];
}

def Partition : Pass<"cpn-partition", "ModuleOp"> {
  let summary = "Decide a distribution over MPI ranks for every value";
  let description = [{
    Writes `cpn.dist` on every op with a tensor result: "replicated", or
    `{kind = "rows", extent, shift}` (split in blocks of rows of an index
    space of `extent` rows; value row i is index row i + shift; `anywhere`:
    every rank can compute any rows of it from replicated data) or
    `{kind = "transposed", ...}` (a 2-D view whose columns are split rows).
    Elementwise ops compute their rows where they are written (owner
    computes); operands at other shifts give the base they view a halo,
    `cpn.halo = array<i64: below, above>`. `cpn.comm = {kind = bytes}`
    names the data each op moves (all_reduce, all_gather, all_to_all,
    update_halo) and the bytes each rank receives, the cheaper way chosen
    where there are two. Analysis only: nothing is rewritten yet.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Ranks to partition over (1: the pass does nothing)">,
    Option<"threshold", "threshold", "int64_t", /*default=*/"65536",
           "Values with fewer elements are replicated">,
  ];
}

def Localize : Pass<"cpn-localize", "ModuleOp"> {
  let summary = "Rewrite a kernel into one rank's program over blocks of rows";
  let description = [{
    The rank-local program of a JIT kernel (`func.func` over memref
    arguments, inputs read through `bufferization.to_tensor`, outputs
    written by `bufferization.materialize_in_destination`) for rank `rank`
    of `ranks`. An output with at least `threshold` elements and `ranks`
    rows is split: this rank computes its block of rows (rows
    [n * rank / ranks, n * (rank + 1) / ranks)), and its memref argument
    holds those rows only; a sum, product, min, max, any or all over the
    first axis of a split value that is an output is this rank's partial
    (`cpn.combine = "<kind>"` on the output: the caller combines the ranks'
    partials). What an output needs is computed from the rows it needs:
    elementwise ops, row-aligned views and updates, reductions that keep
    the first axis and products by rows of their left side compute only
    those rows (a view at another row offset reads the neighbouring rows of
    its base: a halo); any other op is computed whole and its rows taken.
    A split input's memref holds the rows any use reads, written for every
    rank as `cpn.rows = array<i64: lo0, hi0, lo1, hi1, ...>` (rows of the
    input's first axis), so that the caller knows what to send where; an
    input without it is read whole. A donated input (an output written in
    place) keeps its rows and gets the block's rows written. The function
    gets `cpn.local = array<i64: rank, ranks>`. One rank: nothing changes.

    Where every output is a fresh split one and the block's program reads
    rows of other ranks' blocks (a stencil's halo), the function also gets
    `cpn.border = t`: computing rows [lo + t, hi - t) of every output on
    every rank reads only rows of the inputs' blocks. `part=1` builds the
    program of those interior rows and `part=2` that of the border rows
    [lo, lo + t) and [hi - t, hi), each writing its rows into the output's
    block (same arguments as the block's program), so that the caller runs
    the interior while the halo rows travel and the border after they land.
    A part of a kernel without `cpn.border` is an error.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Ranks the program runs on (1: the pass does nothing)">,
    Option<"rank", "rank", "int64_t", /*default=*/"0",
           "The rank whose program to build">,
    Option<"threshold", "threshold", "int64_t", /*default=*/"65536",
           "Outputs with fewer elements are computed whole on every rank">,
    Option<"part", "part", "int64_t", /*default=*/"0",
           "0: the block's program; 1: its interior rows; 2: its border "
           "rows (a kernel marked cpn.border)">,
  ];
  let dependentDialects = ["tensor::TensorDialect"];
}

def OutlineRepeats : Pass<"cpn-outline-repeats", "ModuleOp"> {
  let summary = "Compile the repeated periods of a kernel (a loop's iterations) once";
  let description = [{
    Runs first, on cpn ops. A Python loop whose body writes no array is
    traced into one kernel as the same ops again and again (k-means: 10
    iterations of 23 ops; an LSTM: a time step of 30 ops, 8 per window), and
    every later pass and LLVM compiled each copy. The longest run of at least
    two equal periods of `min-ops` ops or more in a public function's body
    becomes one private `noinline` function `<kernel>_repeat` and one
    `func.call` per period (then the next longest, up to four runs). Values
    read from before the run are passed in unchanged; values one period
    hands to the next are results of the call passed to the next call;
    an input that is another value in each period (a Python scalar that
    changes) is passed per call; what the ops after the run (or the kernel's
    outputs) read are results too. An op that differs between periods only
    in its attributes (`xs[t]`: a view whose offset moves) and reads nothing
    of the run stays in the kernel and its value is passed in. Results are
    written into destinations the caller allocates
    (`bufferization.alloc_tensor`, `materialize_in_destination` in the
    callee), so that after `drop-equivalent-buffer-results` the kernel's
    buffers are plain allocations. A run may start at any phase: those
    that keep the most periods come first (what is left of a period around
    the run is compiled in the kernel), then the one whose results are the
    fewest bytes. A period must hold a
    reduction, a product or a library call: elementwise periods are left to
    fusion (the iterations of `x = f(x)` fuse into one pass over memory,
    which calls would cut into one pass each). The periods must not hold
    `cpn.update` (in-place updates stay visible to the buffer passes), no
    period may return a view, an input that differs per period must have at
    most 64 elements (loops vary scalars; a large one is a helper applied to
    different data), and shapes must be static. The function's
    tensors are bufferized across the call (`bufferize-function-boundaries`
    with identity layouts) and the kernel's `cpn.fp_status` argument is
    passed on to it.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"6",
           "Fewest ops in a period worth a function">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

#endif // CPN_TRANSFORMS_PASSES
