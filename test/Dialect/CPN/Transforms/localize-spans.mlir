// RUN: cpn-opt %s -cpn-localize="ranks=4 rank=1 threshold=1000" | FileCheck %s
// RUN: cpn-opt %s -cpn-localize="ranks=4 rank=1 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED

// Cavity flow's pressure iteration cut after its boundary updates: `p[:, -1]
// = p[:, -2]; pn = p.copy(); p[1:-1, 1:-1] = f(pn[:-2, 1:-1], pn[2:, 1:-1])`,
// with pn still held (an output, in p's old buffer) and the new p a fresh
// block. Rank 1 of 4 holds p's rows [25, 50) and computes the stencil on
// them from pn's rows [24, 49) and [26, 51): pn (and the boundary update it
// copies) is computed once on rows [24, 51), not once per view, and pn's
// output is that value whole, written into the rows the input holds.
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: %arg0: memref<27x100xf64> {cpn.rows = array<i64: 0, 26, 24, 51, 49, 76, 74, 100>}
// CHECK: %[[P:.*]] = bufferization.to_tensor %arg0
// CHECK: %[[NEW:.*]] = cpn.update %[[P]]
// CHECK: %[[PN:.*]] = cpn.copy %[[NEW]] : tensor<27x100xf64>
// CHECK-NOT: cpn.copy
// CHECK: cpn.view %[[PN]] {offset = 0 :
// CHECK: cpn.view %[[PN]] {offset = 200 :
// CHECK: cpn.add
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %arg1
// CHECK: bufferization.materialize_in_destination %[[PN]] in %[[P]]
// LOWERED: llvm.func @kernel
func.func @kernel(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %col = cpn.view %p {offset = 98 : i64, strides = array<i64: 100>} : tensor<100x100xf64> -> tensor<100xf64>
  %p1 = cpn.update %p, %col {offset = 99 : i64, strides = array<i64: 100>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %pn = cpn.copy %p1 : tensor<100x100xf64>
  %n = cpn.view %pn {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %pn {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %q = cpn.update %p1, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  bufferization.materialize_in_destination %q in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  %d = bufferization.materialize_in_destination %pn in %p : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
