// RUN: cpn-opt %s -convert-cpn-to-linalg=keep-updates=1 | FileCheck %s --check-prefix=KEEP
// RUN: cpn-opt %s -convert-cpn-to-linalg=keep-updates=1 -convert-cpn-updates | FileCheck %s
// RUN: cpn-opt %s -convert-cpn-to-linalg=keep-updates=1 -convert-cpn-updates -one-shot-bufferize | FileCheck %s --check-prefix=BUF

// Two Jacobi-style updates of one writable array: they stay cpn.update
// through convert-cpn-to-linalg{keep-updates}, become a chain of insert_slice
// (the second into the first's result, not into the original), and bufferize
// in place: no copy of the whole array.
// KEEP-COUNT-2: cpn.update
// CHECK: %[[I1:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[1] [2] [1]
// CHECK: tensor.insert_slice %{{.+}} into %[[I1]][1] [2] [1]
// BUF-NOT: memref<4xf64>) to memref<4xf64>
// BUF-NOT: memref.alloc() {{.*}} : memref<4xf64>
func.func @two_updates(%m: memref<4xf64>) {
  %u = bufferization.to_tensor %m restrict writable : memref<4xf64> to tensor<4xf64>
  %l = cpn.view %u {offset = 0 : i64, strides = array<i64: 1>} : tensor<4xf64> -> tensor<2xf64>
  %r = cpn.view %u {offset = 2 : i64, strides = array<i64: 1>} : tensor<4xf64> -> tensor<2xf64>
  %s = cpn.add %l, %r : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  %u1 = cpn.update %u, %s {offset = 1 : i64, strides = array<i64: 1>} : tensor<4xf64>, tensor<2xf64> -> tensor<4xf64>
  %l1 = cpn.view %u1 {offset = 0 : i64, strides = array<i64: 1>} : tensor<4xf64> -> tensor<2xf64>
  %r1 = cpn.view %u1 {offset = 2 : i64, strides = array<i64: 1>} : tensor<4xf64> -> tensor<2xf64>
  %s1 = cpn.add %l1, %r1 : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  %u2 = cpn.update %u1, %s1 {offset = 1 : i64, strides = array<i64: 1>} : tensor<4xf64>, tensor<2xf64> -> tensor<4xf64>
  %x = bufferization.materialize_in_destination %u2 in %u : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  bufferization.materialize_in_destination %x in restrict writable %m : (tensor<4xf64>, memref<4xf64>) -> ()
  return
}
