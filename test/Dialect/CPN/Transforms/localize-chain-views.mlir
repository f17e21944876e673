// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=0 threshold=1000" | FileCheck %s
// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=1 threshold=1000" | FileCheck %s --check-prefix=RANK1
// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=0 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED
// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=1 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s --check-prefix=LOWERED

// Cavity flow's pressure boundaries: a donated p gets its interior, then
// `p[:, -1] = p[:, -2]` and `p[0, :] = p[1, :]`, whose values are views of
// the chain's own updated p. They are read from the chain on the block: one
// chain of updates, not a second one built on the block for the views (a
// whole copy of the block each, session 45).
// CHECK-LABEL: func.func @kernel
// CHECK: %[[P1:.*]] = cpn.update %{{.*}} {offset = 101 : i64
// CHECK: %[[C:.*]] = cpn.view %[[P1]] {offset = 98 : i64, strides = array<i64: 100>} : tensor<50x100xf64> -> tensor<50xf64>
// CHECK: %[[P2:.*]] = cpn.update %[[P1]], %[[C]] {offset = 99 : i64
// CHECK: %[[R:.*]] = cpn.view %[[P2]] {offset = 100 : i64, strides = array<i64: 1>} : tensor<50x100xf64> -> tensor<100xf64>
// CHECK: cpn.update %[[P2]], %[[R]] {offset = 0 : i64
// CHECK-NOT: cpn.update
// CHECK: bufferization.materialize_in_destination
// Rank 1's block has no row 0: two updates.
// RANK1-LABEL: func.func @kernel
// RANK1-COUNT-2: cpn.update
// RANK1-NOT: cpn.update
// RANK1: bufferization.materialize_in_destination
// LOWERED: llvm.func @kernel
func.func @kernel(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %b = bufferization.to_tensor %arg1 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %b {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %b {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %p1 = cpn.update %p, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %c = cpn.view %p1 {offset = 98 : i64, strides = array<i64: 100>} : tensor<100x100xf64> -> tensor<100xf64>
  %p2 = cpn.update %p1, %c {offset = 99 : i64, strides = array<i64: 100>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %r = cpn.view %p2 {offset = 100 : i64, strides = array<i64: 1>} : tensor<100x100xf64> -> tensor<100xf64>
  %p3 = cpn.update %p2, %r {offset = 0 : i64, strides = array<i64: 1>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %d = bufferization.materialize_in_destination %p3 in %p : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// A value row across the block's edge (`p[49, :] = p[50, :]` on rank 0 of
// 2: row 50 is rank 1's): not read from the chain; its row is computed from
// the input's halo row as before.
// CHECK-LABEL: func.func @edge
// CHECK: cpn.update {{.*}} tensor<1x100xf64>
// CHECK: cpn.update
// LOWERED: llvm.func @edge
func.func @edge(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %p = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %b = bufferization.to_tensor %arg1 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %b {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %p1 = cpn.update %p, %n {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %r = cpn.view %p1 {offset = 5000 : i64, strides = array<i64: 1>} : tensor<100x100xf64> -> tensor<100xf64>
  %p2 = cpn.update %p1, %r {offset = 4900 : i64, strides = array<i64: 1>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %d = bufferization.materialize_in_destination %p2 in %p : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
