// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=2 rank=0 threshold=1000" | FileCheck %s --check-prefix=BLOCK
// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=2 rank=1 threshold=1000 part=1" | FileCheck %s --check-prefix=INTERIOR
// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=2 rank=1 threshold=1000 part=2" | FileCheck %s --check-prefix=BORDER
// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=3 rank=1 threshold=1000 part=1" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED
// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=3 rank=1 threshold=1000 part=2" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED

// A 5-point stencil into a fresh array (Jacobi under partitioning: the
// update's output is a store of its own). The block's program reads one
// halo row at each side of the block: `cpn.border = 1`, the output rows
// one row in from each edge of a block read only the block. Rank 1 of 2
// owns rows [50, 100); its input holds rows [49, 100).
// BLOCK-LABEL: func.func @five_point
// BLOCK-SAME: cpn.border = 1 : i64
// The interior (part 1), rows [51, 99): the same arguments as the block's
// program; it writes the 48 rows at row 1 of the block, read from rows
// [50, 100) of the input (rows 1.. of its memref).
// INTERIOR-LABEL: func.func @five_point
// INTERIOR-SAME: %arg0: memref<51x100xf64> {cpn.rows = array<i64: 0, 51, 49, 100>}
// INTERIOR-SAME: %arg1: memref<50x100xf64> {cpn.rows = array<i64: 50, 100>}
// INTERIOR: %[[IN:.*]] = bufferization.to_tensor %arg0
// INTERIOR: %[[OUT:.*]] = bufferization.to_tensor %arg1 restrict writable
// INTERIOR-NOT: offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<51x100xf64>
// INTERIOR: cpn.update %[[OUT]], %{{.*}} {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<50x100xf64>, tensor<48x100xf64> -> tensor<50x100xf64>
// INTERIOR: bufferization.materialize_in_destination %{{.*}} in restrict writable %arg1
// The border (part 2): row 50 (from input rows 49-51, the halo row 49
// among them) and row 99 (the last row of u, copied).
// BORDER-LABEL: func.func @five_point
// BORDER: %[[OUT:.*]] = bufferization.to_tensor %arg1 restrict writable
// BORDER: %[[TOP:.*]] = cpn.update %[[OUT]], %{{.*}} {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<50x100xf64>, tensor<1x100xf64> -> tensor<50x100xf64>
// BORDER: cpn.update %[[TOP]], %{{.*}} {offset = 4900 : i64, strides = array<i64: 100, 1>} : tensor<50x100xf64>, tensor<1x100xf64> -> tensor<50x100xf64>
// LOWERED: llvm.func @five_point
func.func @five_point(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %w = cpn.view %u {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %e = cpn.view %u {offset = 102 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %b = cpn.add %a, %w : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %c = cpn.add %b, %e : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %c {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  bufferization.materialize_in_destination %u1 in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// -----

// A stencil two rows wide (u[:-4] + u[4:]), its result a fresh array of 96
// rows: two halo rows each side, `cpn.border = 2`; the interior of rank 1
// (rows [48, 96) of the result) is rows [50, 94), 44 rows at row 2.
// BLOCK-LABEL: func.func @wide
// BLOCK-SAME: cpn.border = 2 : i64
// INTERIOR-LABEL: func.func @wide
// INTERIOR: cpn.update %{{.*}}, %{{.*}} {offset = 200 : i64, strides = array<i64: 100, 1>} : tensor<48x100xf64>, tensor<44x100xf64> -> tensor<48x100xf64>
// BORDER-LABEL: func.func @wide
// BORDER: {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<48x100xf64>, tensor<2x100xf64> -> tensor<48x100xf64>
// BORDER: {offset = 4600 : i64, strides = array<i64: 100, 1>} : tensor<48x100xf64>, tensor<2x100xf64> -> tensor<48x100xf64>
// LOWERED: llvm.func @wide
func.func @wide(%arg0: memref<100x100xf64>, %arg1: memref<96x100xf64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %a = cpn.view %u {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<96x100xf64>
  %b = cpn.view %u {offset = 400 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<96x100xf64>
  %c = cpn.add %a, %b : tensor<96x100xf64>, tensor<96x100xf64> -> tensor<96x100xf64>
  bufferization.materialize_in_destination %c in restrict writable %arg1 : (tensor<96x100xf64>, memref<96x100xf64>) -> ()
  return
}

// -----

// The stencil written into another array in place (`v[1:-1, 1:-1] =
// f(u)`, then `u, v = v, u`): v is a donated input, read only at the rows
// each part writes (its own edge columns), so the parts update it one after
// another. The interior updates rows [1, 49) of rank 1's block of v; the
// border its first row only: the last row of v is outside the update's box
// and stays as it is (no update of v with itself, which bufferization
// would copy whole).
// BLOCK-LABEL: func.func @swapped
// BLOCK-SAME: cpn.border = 1 : i64
// INTERIOR-LABEL: func.func @swapped
// INTERIOR: %[[V:.*]] = bufferization.to_tensor %arg1 restrict writable
// INTERIOR: %[[NEW:.*]] = cpn.update %[[V]], %{{.*}} {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<50x100xf64>, tensor<48x100xf64> -> tensor<50x100xf64>
// INTERIOR: %[[D:.*]] = bufferization.materialize_in_destination %[[NEW]] in %[[V]]
// INTERIOR: bufferization.materialize_in_destination %[[D]] in restrict writable %arg1
// BORDER-LABEL: func.func @swapped
// BORDER: %[[V:.*]] = bufferization.to_tensor %arg1 restrict writable
// BORDER: %[[NEW:.*]] = cpn.update %[[V]], %{{.*}} {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<50x100xf64>, tensor<1x100xf64> -> tensor<50x100xf64>
// BORDER-NOT: cpn.update
// BORDER: bufferization.materialize_in_destination %[[NEW]] in %[[V]]
// LOWERED: llvm.func @swapped
func.func @swapped(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %v = bufferization.to_tensor %arg1 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %c = cpn.view %u {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %b = cpn.add %a, %c : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %v1 = cpn.update %v, %b {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %d = bufferization.materialize_in_destination %v1 in %v : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// -----

// A convergence check in the stencil's window: the largest change over
// the rows, a partial combined over the ranks. Each part reduces its rows
// of the change (the interior rows [51, 99) of rank 1, then rows 50 and
// 99); the border combines its two partials with the interior's, read from
// the output the interior wrote.
// BLOCK-LABEL: func.func @checked
// BLOCK-SAME: cpn.combine = "max"
// BLOCK-SAME: cpn.border = 1 : i64
// INTERIOR-LABEL: func.func @checked
// INTERIOR: %[[P:.*]] = cpn.reduce max %{{.*}} {axes = array<i64: 0, 1>} : tensor<48x100xf64> -> tensor<f64>
// INTERIOR: bufferization.materialize_in_destination %[[P]] in restrict writable %arg2
// BORDER-LABEL: func.func @checked
// BORDER: %[[T:.*]] = cpn.reduce max %{{.*}} {axes = array<i64: 0, 1>} : tensor<1x100xf64> -> tensor<f64>
// BORDER: %[[B:.*]] = cpn.reduce max %{{.*}} {axes = array<i64: 0, 1>} : tensor<1x100xf64> -> tensor<f64>
// BORDER: %[[TB:.*]] = cpn.maximum %[[T]], %[[B]]
// BORDER: %[[I:.*]] = bufferization.to_tensor %arg2 restrict writable
// BORDER: %[[ALL:.*]] = cpn.maximum %[[I]], %[[TB]]
// BORDER: bufferization.materialize_in_destination %[[ALL]] in restrict writable %arg2
// LOWERED: llvm.func @checked
func.func @checked(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>, %arg2: memref<f64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %d = cpn.subtract %u1, %u : tensor<100x100xf64>, tensor<100x100xf64> -> tensor<100x100xf64>
  %m = cpn.reduce max %d {axes = array<i64: 0, 1>} : tensor<100x100xf64> -> tensor<f64>
  bufferization.materialize_in_destination %u1 in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  bufferization.materialize_in_destination %m in restrict writable %arg2 : (tensor<f64>, memref<f64>) -> ()
  return
}

// -----

// Cavity flow's pressure iteration: `pn = p.copy()` is held (an output that
// takes p's old store), the stencil of pn updates p into a fresh store.
// pn's values are its store's already: the parts write none of them, and
// p is read at the rows beside the parts' own without a hazard.
// BLOCK-LABEL: func.func @held_copy
// BLOCK-SAME: %arg0: memref<51x100xf64> {cpn.kept
// BLOCK-SAME: cpn.border = 1 : i64
// INTERIOR-LABEL: func.func @held_copy
// INTERIOR-NOT: in restrict writable %arg0
// INTERIOR: bufferization.materialize_in_destination %{{.*}} in restrict writable %arg1
// INTERIOR-NOT: in restrict writable %arg0
// INTERIOR: return
// BORDER-LABEL: func.func @held_copy
// BORDER-NOT: in restrict writable %arg0
// BORDER: bufferization.materialize_in_destination %{{.*}} in restrict writable %arg1
// BORDER-NOT: in restrict writable %arg0
// BORDER: return
// LOWERED: llvm.func @held_copy
func.func @held_copy(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %pn = cpn.copy %p : tensor<100x100xf64>
  %n = cpn.view %pn {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %pn {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %p1 = cpn.update %p, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  bufferization.materialize_in_destination %p1 in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  %d = bufferization.materialize_in_destination %pn in %p : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
