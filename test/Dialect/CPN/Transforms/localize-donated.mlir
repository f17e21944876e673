// RUN: cpn-opt %s -cpn-localize="ranks=4 rank=3 threshold=1000" | FileCheck %s
// RUN: cpn-opt %s -cpn-localize="ranks=4 rank=0 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED
// RUN: cpn-opt %s -cpn-localize="ranks=4 rank=3 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED

// Two donated inputs (cavity flow's pressure step): p gets its last row
// set (`p[-1, :] = 0`), and u's interior is a stencil of the new p. A
// rank's stencil reads the rows of p the row update leaves as they were
// from p's input itself, so p's in-place update and its writes must come
// after those reads: before, one-shot bufferization found the input
// written before it was read ("cannot avoid RaW conflict") and the window
// fell back to computing everything on every rank. The stencil's two views
// of the new p ask for rows [74, 98) and [76, 100) on rank 3: p's update is
// made once on the rows the rank holds, both views read it (no update per
// view, each of which bufferization copied out of p's buffer), and it is the
// same op as the in-place update written at the end (CSE merges the two).
// CHECK-LABEL: func.func @kernel
// CHECK: %[[P:.*]] = bufferization.to_tensor %arg0
// CHECK: %[[NEW:.*]] = cpn.update %[[P]], %{{.*}} {offset = 2500
// CHECK: cpn.view %[[NEW]] {offset = 0 :
// CHECK: cpn.view %[[NEW]] {offset = 200 :
// CHECK: cpn.add
// CHECK: %[[P1:.*]] = cpn.update %[[P]], %{{.*}} {offset = 2500
// CHECK: cpn.update
// CHECK: bufferization.materialize_in_destination %[[P1]] in %[[P]]
// LOWERED: llvm.func @kernel
func.func @kernel(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>, %arg2: memref<f64>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %u = bufferization.to_tensor %arg1 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %z = bufferization.to_tensor %arg2 restrict : memref<f64> to tensor<f64>
  %zr = cpn.view %z {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<100xf64>
  %p1 = cpn.update %p, %zr {offset = 9900 : i64, strides = array<i64: 1>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %n = cpn.view %p1 {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %p1 {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %d0 = bufferization.materialize_in_destination %p1 in %p : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d0 in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  %d1 = bufferization.materialize_in_destination %u1 in %u : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d1 in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
