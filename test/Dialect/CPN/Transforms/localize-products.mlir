// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=4 rank=1 threshold=1000" | FileCheck %s

// x.T @ v with x (400 x 3) and v (400 x 4) split alike: the contraction runs
// over the split rows, so rank 1 of 4 multiplies its block (rows [100, 200)
// of both, as a transposed view of its rows of x) and the 3 x 4 result is
// its partial product, marked for summing over the ranks: nothing gathered.
// CHECK-LABEL: func.func @xt_v
// CHECK-SAME: %arg0: memref<100x3xf64> {cpn.rows = array<i64: 0, 100, 100, 200, 200, 300, 300, 400>
// CHECK-SAME: %arg1: memref<100x4xf64> {cpn.rows = array<i64: 0, 100, 100, 200, 200, 300, 300, 400>
// CHECK-SAME: %arg2: memref<3x4xf64> {cpn.combine = "sum"
// CHECK: %[[X:.*]] = bufferization.to_tensor %arg0
// CHECK: %[[V:.*]] = bufferization.to_tensor %arg1
// CHECK: %[[XT:.*]] = cpn.view %[[X]] {offset = 0 : i64, strides = array<i64: 1, 3>} : tensor<100x3xf64> -> tensor<3x100xf64>
// CHECK: cpn.matmul %[[XT]], %[[V]] : tensor<3x100xf64>, tensor<100x4xf64> -> tensor<3x4xf64>
func.func @xt_v(%a0: memref<400x3xf64>, %a1: memref<400x4xf64>,
                %a2: memref<3x4xf64>) {
  %0 = bufferization.to_tensor %a0 restrict : memref<400x3xf64> to tensor<400x3xf64>
  %1 = bufferization.to_tensor %a1 restrict : memref<400x4xf64> to tensor<400x4xf64>
  %2 = cpn.view %0 {offset = 0 : i64, strides = array<i64: 1, 3>} : tensor<400x3xf64> -> tensor<3x400xf64>
  %3 = cpn.matmul %2, %1 : tensor<3x400xf64>, tensor<400x4xf64> -> tensor<3x4xf64>
  bufferization.materialize_in_destination %3 in restrict writable %a2 : (tensor<3x4xf64>, memref<3x4xf64>) -> ()
  return
}

// -----

// A dot product of two split vectors (y @ v: a 1 x n view of y and an n x 1
// view of v): rank 1's rows of each, its partial summed over the ranks.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: %arg0: memref<1000xf64> {cpn.rows = array<i64: 0, 1000, 1000, 2000, 2000, 3000, 3000, 4000>
// CHECK-SAME: %arg2: memref<1x1xf64> {cpn.combine = "sum"
// CHECK: %[[Y:.*]] = cpn.view %{{.*}} {offset = 0 : i64, strides = array<i64: 0, 1>} : tensor<1000xf64> -> tensor<1x1000xf64>
// CHECK: cpn.matmul %[[Y]], %{{.*}} : tensor<1x1000xf64>, tensor<1000x1xf64> -> tensor<1x1xf64>
func.func @dot(%a0: memref<4000xf64>, %a1: memref<4000xf64>,
               %a2: memref<1x1xf64>) {
  %0 = bufferization.to_tensor %a0 restrict : memref<4000xf64> to tensor<4000xf64>
  %1 = bufferization.to_tensor %a1 restrict : memref<4000xf64> to tensor<4000xf64>
  %2 = cpn.view %0 {offset = 0 : i64, strides = array<i64: 0, 1>} : tensor<4000xf64> -> tensor<1x4000xf64>
  %3 = cpn.view %1 {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<4000xf64> -> tensor<4000x1xf64>
  %4 = cpn.matmul %2, %3 : tensor<1x4000xf64>, tensor<4000x1xf64> -> tensor<1x1xf64>
  bufferization.materialize_in_destination %4 in restrict writable %a2 : (tensor<1x1xf64>, memref<1x1xf64>) -> ()
  return
}

// -----

// A product whose result the window uses further is computed whole (the
// Engine runs such a window in stages, so that the product is an output).
// CHECK-LABEL: func.func @used_further
// CHECK-NOT: cpn.combine
// CHECK: cpn.matmul %{{.*}}, %{{.*}} : tensor<3x400xf64>, tensor<400x4xf64> -> tensor<3x4xf64>
func.func @used_further(%a0: memref<400x3xf64>, %a1: memref<400x4xf64>,
                        %a2: memref<3x4xf64>) {
  %0 = bufferization.to_tensor %a0 restrict : memref<400x3xf64> to tensor<400x3xf64>
  %1 = bufferization.to_tensor %a1 restrict : memref<400x4xf64> to tensor<400x4xf64>
  %2 = cpn.view %0 {offset = 0 : i64, strides = array<i64: 1, 3>} : tensor<400x3xf64> -> tensor<3x400xf64>
  %3 = cpn.matmul %2, %1 : tensor<3x400xf64>, tensor<400x4xf64> -> tensor<3x4xf64>
  %4 = cpn.multiply %3, %3 : tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  bufferization.materialize_in_destination %4 in restrict writable %a2 : (tensor<3x4xf64>, memref<3x4xf64>) -> ()
  return
}
