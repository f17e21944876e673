//===- Passes.td - cpn passes ------------------------------*- tablegen -*-===//
//
// Part of cpnumeric. Every pass the Python side runs is declared here and can
// be run alone from cpn-opt.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_PASSES
#define CPN_PASSES

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

def FuseRowProducts : Pass<"cpn-fuse-row-products", "ModuleOp"> {
  let summary = "One pass over x for x.T @ f(x @ w): both products per block of rows";
  let description = [{
    A tall transposed product `x.T @ v` whose `v` is computed row by row
    (elementwise ops, reshapes and broadcast scalars) from `x @ w` and from
    stored row vectors (the gradient of a linear model: logistic regression's
    `x.T @ (sigmoid(x @ w) - y)`) reads x twice: once for `x @ w`, once for
    the sum over its rows. Here both run per block of rows small enough to
    stay in cache (an `scf.forall` over the blocks): `z = x_b @ w`, the
    elementwise ops on the block, then `x_b.T @ v_b` into the block's
    partial, read from cache; the partials are added after the loop. Values
    of the chain that other ops read (`z`, `prob`) are written block by
    block into full-size results. x must be stored (an argument) with a
    static shape, the block rows must divide its rows; otherwise nothing
    changes.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
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

def ConvertCPNToLinalg : Pass<"convert-cpn-to-linalg", "ModuleOp"> {
  let summary = "Lower cpn ops to linalg.generic on tensors";
  let description = [{
    Every elementwise op, cast, select, view and reduction becomes one
    `linalg.generic` on tensors whose body is the scalar NumPy semantics of the
    op (arith/math). Views become input indexing maps (affine maps from the
    view's index to the base's index), so upstream elementwise fusion turns a
    chain of views and ufuncs, stencils included, into one loop nest.
    `cpn.update` becomes `tensor.insert_slice` when the view is a strided
    box of the base (the common `u[1:-1, 1:-1] = ...`), else a generic over the
    base that picks the new value where the view selects the element.
    `cpn.matmul` becomes a call of the runtime's BLAS entry point.

    With `keep-updates`, `cpn.update` ops stay for `convert-cpn-updates` to
    lower after elementwise fusion: the fusion driver folds an insert_slice
    into a chained insert_slice of the same box back onto the original array,
    which makes every Jacobi iteration copy the whole input instead of
    updating one buffer in place.
  }];
  let options = [
    Option<"keepUpdates", "keep-updates", "bool", /*default=*/"false",
           "Leave cpn.update for convert-cpn-updates">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::math::MathDialect",
    "mlir::complex::ComplexDialect", "mlir::scf::SCFDialect",
    "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
    "mlir::func::FuncDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def ConvertCPNUpdates : Pass<"convert-cpn-updates", "ModuleOp"> {
  let summary = "Lower the cpn.update ops left by convert-cpn-to-linalg{keep-updates}";
  let description = [{
    Runs after elementwise fusion, with no canonicalization before
    bufferization, so that a chain of updates of one array stays a chain of
    `tensor.insert_slice` into the previous value, which one-shot bufferization
    performs in place when the array's buffer is writable (donated).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ConvertMatmulToBLAS : Pass<"cpn-matmul-to-blas", "ModuleOp"> {
  let summary = "Replace float linalg.matmul on memrefs by a BLAS gemm call";
  let description = [{
    Runs after bufferization. A `linalg.matmul` on f32/f64 memrefs becomes a
    call of `cpn_gemm_f32`/`cpn_gemm_f64` (resolved by the JIT from the
    process, where the runtime's OpenBLAS wrapper lives) with the aligned base
    pointers, offsets, sizes and strides of its operands as plain integers, so
    that strided subviews need no copy. Integer matmuls stay loops.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def StridedCopyToLinalg : Pass<"cpn-strided-copy-to-linalg", "ModuleOp"> {
  let summary = "Turn memref.copy of non-contiguous memrefs into linalg.copy";
  let description = [{
    Runs after bufferization. A `memref.copy` between identity-layout memrefs
    lowers to one memcpy, but a strided one (a subview of a stencil update)
    lowers to a call of the runner-utils `memrefCopy`, which walks elements one
    at a time through a generic descriptor. As a `linalg.copy` it becomes a loop
    nest that LLVM vectorizes.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def UnshareInits : Pass<"cpn-unshare-inits", "ModuleOp"> {
  let summary = "Give every linalg destination its own tensor.empty / linalg.fill";
  let description = [{
    Runs right before `eliminate-empty-tensors`. CSE merges identical
    `tensor.empty` and `linalg.fill` ops, so two reductions of one array share
    one initialised accumulator. `eliminate-empty-tensors` then rewrites that
    shared init into the first output's buffer, and one-shot bufferization
    (which does not track writes through `materialize_in_destination` into a
    memref) lets the second reduction overwrite the first one's result. Cloning
    each multi-use init per use keeps every destination chain separate. A
    generic written into in place that is also stored as an output, or read
    elsewhere when it only moves elements (a splat), gets a clone for its
    destination use for the same reason.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def PingPongUpdates : Pass<"cpn-ping-pong-updates", "ModuleOp"> {
  let summary = "Write stencil updates into a fresh buffer instead of temp + copy";
  let description = [{
    `u[1:-1, 1:-1] = f(neighbours of u)` cannot update u in place: f reads
    values the update overwrites, so bufferization computes f into a
    temporary and copies it back (two passes). For such an
    `tensor.insert_slice` of a linalg result that reads its destination
    through shifted slices, and covers at least `min-fraction` of it (in a
    dynamic dimension: a size provably the destination's minus at most 16,
    as `u[1:-1]` in a shape-generic kernel), the
    pass copies the border of the destination into a new tensor and inserts
    into that instead: `eliminate-empty-tensors` then writes f straight into
    the new buffer's interior. Chains of updates alternate between two pooled
    buffers, one pass each.
  }];
  let options = [
    Option<"minFraction", "min-fraction", "double", /*default=*/"0.5",
           "Smallest updated fraction of the destination to rewrite">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def EarlyDealloc : Pass<"cpn-early-dealloc", "ModuleOp"> {
  let summary = "Move each memref.dealloc right after the last use of its buffer";
  let description = [{
    Runs after `buffer-deallocation-pipeline`, which frees every temporary at
    the end of its block. In a straight-line kernel of many iterations that
    keeps every temporary alive at once (20 Jacobi iterations: 20 fresh
    buffers). Moved right after the last op that uses the buffer, or any value
    derived from it (subviews, extracted pointers passed to BLAS), the next
    iteration's allocation reuses the same pooled, cache-warm memory.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ParallelOuterLoops : Pass<"cpn-parallel-outer-loops", "ModuleOp"> {
  let summary = "Keep one parallel dimension per loop nest, serialize small nests";
  let description = [{
    Runs on the `scf.parallel` nests of `convert-linalg-to-parallel-loops`,
    before `convert-scf-to-openmp`. A multi-dimensional `scf.parallel` would
    become one collapsed OpenMP loop that recovers the indices with a division
    per element and defeats vectorization of the inner loop. This pass keeps
    the outermost dimension with at least `min-trip` iterations parallel and
    turns the others into `scf.for` (the innermost stays a plain, vectorizable
    loop). Nests with fewer than `min-work` iterations in all become
    sequential: forking threads costs more than they save.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Nests with fewer iterations in all run sequentially">,
    Option<"minTrip", "min-trip", "int64_t", /*default=*/"8",
           "The parallel dimension needs at least this many iterations">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def InlineAllocaScopes : Pass<"cpn-inline-alloca-scopes", "ModuleOp"> {
  let summary = "Inline memref.alloca_scope regions that allocate nothing";
  let description = [{
    Runs after `convert-scf-to-openmp`, which wraps each parallel loop body
    in a `memref.alloca_scope`. Canonicalization inlines a scope only when
    nothing in it may allocate on the stack, and a `func.call` (the
    outlined floating-point checks of `cpn-lower-fp-flags`) counts as
    maybe allocating; a scope left in place breaks `convert-scf-to-cf`
    (its region must stay one block). A scope whose region holds no
    `memref.alloca` bounds nothing: callees allocate in their own frames.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KernelAliasScopes : Pass<"cpn-kernel-alias-scopes", "ModuleOp"> {
  let summary = "Tag loads and stores through noalias pointer arguments "
                "with alias scopes";
  let description = [{
    Runs on the LLVM dialect, last. A kernel's pointer arguments are
    distinct stores (`llvm.noalias`), but OpenMP's outlining of a parallel
    region passes them to the outlined function through a struct, and the
    attribute is lost there: LLVM then vectorizes an inner loop only behind
    run-time overlap checks, and not at all when the loop is short (the
    8 columns of a stack of 8 x 8 products). Each `llvm.noalias` pointer
    argument of a function gets an alias scope of its own; every memory
    access whose pointers all derive from one argument (through
    `getelementptr`, and `insertvalue`/`extractvalue` of memref
    descriptors) is tagged with that argument's scope and as not aliasing
    the others'. Metadata survives the outlining. Accesses that derive from
    anything else (allocations, loaded pointers) are left untagged, so
    nothing is assumed about them.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LowerFpFlags : Pass<"cpn-lower-fp-flags", "ModuleOp"> {
  let summary = "Turn cpn.fp_flag into loop OR-reductions and atomic ORs";
  let description = [{
    Runs on loops, after `cpn-parallel-outer-loops` and before
    `convert-scf-to-openmp`. The flags (`cpn.fp_flag`) of an innermost
    `scf.for` become one OR-reduction carried by the loop (LLVM vectorizes
    it) of a cheap test: the float probes of each element summed, the sum
    tested for NaN or infinity. When that is set after the loop, a copy of
    the loop without its stores ORs the exact error bits and then, once,
    `memref.atomic_rmw ori`s them into the function's `cpn.fp_status`
    argument. A loop that reads a buffer it writes (an in-place update)
    cannot run twice: it carries the exact bits itself. The copy is
    outlined into a private `noinline` function, and copies with the same
    body (the iterations of a loop traced into one kernel) share one
    function: they are compiled once. An innermost
    one-dimensional `scf.parallel` is first cut into blocks of `block`
    iterations (a parallel loop over blocks, a reduction loop in each). Flags
    outside loops (0-d kernels) OR their bits directly.
  }];
  let options = [
    Option<"block", "block", "int64_t", /*default=*/"4096",
           "Iterations per block of a cut parallel loop">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def ExternalizeFpChecks : Pass<"cpn-externalize-fp-checks", "ModuleOp"> {
  let summary = "Turn the check functions cpn-lower-fp-flags outlined into declarations";
  let description = [{
    The functions marked `cpn.fp_check` (the exact classification of a
    loop's floating-point errors, which most runs never call) lose their
    bodies and stay as private declarations. The JIT has taken the bodies
    out before this pass (after `cpn-lower-fp-flags`) and compiles them when
    one is first called, with `cpn-lower-to-llvm{checks-only}`; the kernel
    is lowered and compiled without them.
  }];
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

def FuseHorizontal : Pass<"cpn-fuse-horizontal", "func::FuncOp"> {
  let summary = "Join independent elementwise loops over one domain that read the same arrays";
  let description = [{
    Two `linalg.generic`s over the same static, all-parallel domain, with fresh
    outputs, an input in common, and the later one's inputs all defined
    before the earlier one, become one generic with both results (Black-Scholes'
    call and put; d1 and d2): their shared inputs are read once. Run
    `cpn-fuse-elementwise` after it: a producer whose consumers were joined
    now has one consumer and fuses. Loops whose results are written into
    another tensor (array updates) are left alone, as are joins whose body
    would exceed `max-fused-ops` (the cost of cpn-fuse-elementwise).
  }];
  let options = [
    Option<"maxFusedOps", "max-fused-ops", "int64_t", /*default=*/"400",
           "Largest body a joined loop may have">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def FuseElementwise : Pass<"cpn-fuse-elementwise", "func::FuncOp"> {
  let summary = "Elementwise fusion that recomputes small multi-use producers";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` fuses a producer only into its single
    consumer, so a value used by several expressions (Black-Scholes' `d1`, a
    CND value used by the call and the put) stays a full-size temporary: a
    store and a pass over memory. This pass runs the same patterns but also
    fuses a producer with several uses into each consumer (recomputing it) when
    its body has at most `max-producer-ops` ops and the consumer's body stays
    under `max-fused-ops`; compute is cheap next to memory traffic.
  }];
  let options = [
    Option<"maxProducerOps", "max-producer-ops", "int64_t", /*default=*/"48",
           "Largest body of a multi-use producer that is recomputed">,
    Option<"maxFusedOps", "max-fused-ops", "int64_t", /*default=*/"400",
           "Largest body a fused consumer may grow to">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

#endif // CPN_PASSES
