//===- Passes.td - cpn passes ------------------------------*- tablegen -*-===//
//
// Part of cpnumeric. The passes that lower cpn ops and the upstream IR they
// become (linalg, bufferization, loops, LLVM); the passes that rewrite cpn
// ops into cpn ops are in cpn/Dialect/CPN/Transforms/Passes.td. Every pass
// can be run alone from cpn-opt.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_PASSES
#define CPN_PASSES

include "mlir/Pass/PassBase.td"

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
    destination use for the same reason. Last, a store into an output's
    memref that comes before reads of a value its chain was written into in
    place (or views of it) moves after the last of them, unless something
    writes into that chain in between: eliminate-empty-tensors would put the
    chain into the output's buffer, and the store's copy-in would overwrite
    what they read.
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
