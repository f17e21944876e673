// RUN: cpn-opt %s -split-input-file -cpn-schedule-reductions | FileCheck %s

// A float32 sum of more than 8 elements per result accumulates in float64:
// a cast, the sum, a cast back; 8 or fewer are summed in float32, in order.
// CHECK-LABEL: func @f32_sums
// CHECK: %[[W:.+]] = cpn.cast %{{.+}} : tensor<100x64xf32> -> tensor<100x64xf64>
// CHECK: %[[S:.+]] = cpn.reduce sum %[[W]] {axes = array<i64: 1>} : tensor<100x64xf64> -> tensor<100xf64>
// CHECK: cpn.cast %[[S]] : tensor<100xf64> -> tensor<100xf32>
// CHECK: cpn.reduce sum %{{.+}} {axes = array<i64: 1>} : tensor<100x8xf32> -> tensor<100xf32>
func.func @f32_sums(%a: tensor<100x64xf32>, %b: tensor<100x8xf32>) -> (tensor<100xf32>, tensor<100xf32>) {
  %s = cpn.reduce sum %a {axes = array<i64: 1>} : tensor<100x64xf32> -> tensor<100xf32>
  %t = cpn.reduce sum %b {axes = array<i64: 1>} : tensor<100x8xf32> -> tensor<100xf32>
  return %s, %t : tensor<100xf32>, tensor<100xf32>
}

// -----

// A reduction over every axis of a matrix: the rows' sums, then their sum.
// A float product is not split (NumPy multiplies in order).
// CHECK-LABEL: func @full_reductions
// CHECK: %[[P:.+]] = cpn.reduce max %{{.+}} {axes = array<i64: 1, 2>} : tensor<40x30x20xi32> -> tensor<40xi32>
// CHECK: cpn.reduce max %[[P]] {axes = array<i64: 0>} : tensor<40xi32> -> tensor<i32>
// CHECK: cpn.reduce prod %{{.+}} {axes = array<i64: 0, 1>} : tensor<40x30xf64> -> tensor<f64>
func.func @full_reductions(%x: tensor<40x30x20xi32>, %y: tensor<40x30xf64>) -> (tensor<i32>, tensor<f64>) {
  %m = cpn.reduce max %x {axes = array<i64: 0, 1, 2>} : tensor<40x30x20xi32> -> tensor<i32>
  %p = cpn.reduce prod %y {axes = array<i64: 0, 1>} : tensor<40x30xf64> -> tensor<f64>
  return %m, %p : tensor<i32>, tensor<f64>
}

// -----

// Sums over the outer axis in row blocks: 16 blocks dividing 1024 rows;
// 16 for 1031 stored rows (the 7 left start the result); none for 1031
// computed rows (slices would keep the producer from fusing); 64 blocks of a
// 2 MB 1-D array, none below 2 MB.
// CHECK-LABEL: func @outer_blocks
// CHECK: cpn.reduce sum %arg0 {axes = array<i64: 0>, cpn.row_blocks = 16 : i64} : tensor<1024x5xf64>
// CHECK: cpn.reduce sum %arg1 {axes = array<i64: 0>, cpn.row_blocks = 16 : i64} : tensor<1031x5xf64>
// CHECK: %[[E:.+]] = cpn.exp %arg1
// CHECK: cpn.reduce sum %[[E]] {axes = array<i64: 0>} : tensor<1031x5xf64>
// CHECK: cpn.reduce sum %arg2 {axes = array<i64: 0>, cpn.row_blocks = 64 : i64} : tensor<262144xf64>
// CHECK: cpn.reduce sum %arg3 {axes = array<i64: 0>} : tensor<65536xf64>
func.func @outer_blocks(%a: tensor<1024x5xf64>, %b: tensor<1031x5xf64>, %c: tensor<262144xf64>, %d: tensor<65536xf64>)
    -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<f64>, tensor<f64>) {
  %0 = cpn.reduce sum %a {axes = array<i64: 0>} : tensor<1024x5xf64> -> tensor<5xf64>
  %1 = cpn.reduce sum %b {axes = array<i64: 0>} : tensor<1031x5xf64> -> tensor<5xf64>
  %e = cpn.exp %b : tensor<1031x5xf64> -> tensor<1031x5xf64>
  %2 = cpn.reduce sum %e {axes = array<i64: 0>} : tensor<1031x5xf64> -> tensor<5xf64>
  %3 = cpn.reduce sum %c {axes = array<i64: 0>} : tensor<262144xf64> -> tensor<f64>
  %4 = cpn.reduce sum %d {axes = array<i64: 0>} : tensor<65536xf64> -> tensor<f64>
  return %0, %1, %2, %3, %4 : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<f64>, tensor<f64>
}

// -----

// A wide result row (32 KB or more): 4 row blocks (4 partial rows), 3 when 4
// does not divide the rows, 4 and the rows left starting the result when
// no count from 4 to 2 does.
// CHECK-LABEL: func @wide_rows
// CHECK: cpn.reduce sum %arg0 {axes = array<i64: 0>, cpn.row_blocks = 4 : i64} : tensor<1024x4096xf64>
// CHECK: cpn.reduce sum %arg1 {axes = array<i64: 0>, cpn.row_blocks = 3 : i64} : tensor<1023x4096xf64>
// CHECK: cpn.reduce sum %arg2 {axes = array<i64: 0>, cpn.row_blocks = 4 : i64} : tensor<1031x4096xf64>
// CHECK: cpn.reduce sum %arg3 {axes = array<i64: 0>, cpn.row_blocks = 16 : i64} : tensor<1024x4095xf64>
func.func @wide_rows(%a: tensor<1024x4096xf64>, %b: tensor<1023x4096xf64>, %c: tensor<1031x4096xf64>, %d: tensor<1024x4095xf64>)
    -> (tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4095xf64>) {
  %0 = cpn.reduce sum %a {axes = array<i64: 0>} : tensor<1024x4096xf64> -> tensor<4096xf64>
  %1 = cpn.reduce sum %b {axes = array<i64: 0>} : tensor<1023x4096xf64> -> tensor<4096xf64>
  %2 = cpn.reduce sum %c {axes = array<i64: 0>} : tensor<1031x4096xf64> -> tensor<4096xf64>
  %3 = cpn.reduce sum %d {axes = array<i64: 0>} : tensor<1024x4095xf64> -> tensor<4095xf64>
  return %0, %1, %2, %3 : tensor<4096xf64>, tensor<4096xf64>, tensor<4096xf64>, tensor<4095xf64>
}

// -----

// `x.T @ v` of a tall x and one vector: row blocks (not BLAS); with two
// columns in v it stays a product for BLAS. A long inner product gets row
// blocks, a short one none.
// CHECK-LABEL: func @products
// CHECK: cpn.matmul %{{.+}}, %arg1 {cpn.row_blocks = 16 : i64} : tensor<8x4096xf64>, tensor<4096x1xf64>
// CHECK: cpn.matmul %{{.+}}, %arg2 : tensor<8x4096xf64>, tensor<4096x2xf64>
// CHECK: cpn.matmul %arg3, %arg4 {cpn.row_blocks = 16 : i64} : tensor<1x65536xf32>
// CHECK: cpn.matmul %arg5, %arg6 : tensor<1x300xf64>
func.func @products(%x: tensor<4096x8xf64>, %v: tensor<4096x1xf64>, %w: tensor<4096x2xf64>,
                    %a: tensor<1x65536xf32>, %b: tensor<65536x1xf32>,
                    %c: tensor<1x300xf64>, %d: tensor<300x1xf64>)
    -> (tensor<8x1xf64>, tensor<8x2xf64>, tensor<1x1xf32>, tensor<1x1xf64>) {
  %t = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<4096x8xf64> -> tensor<8x4096xf64>
  %0 = cpn.matmul %t, %v : tensor<8x4096xf64>, tensor<4096x1xf64> -> tensor<8x1xf64>
  %1 = cpn.matmul %t, %w : tensor<8x4096xf64>, tensor<4096x2xf64> -> tensor<8x2xf64>
  %2 = cpn.matmul %a, %b : tensor<1x65536xf32>, tensor<65536x1xf32> -> tensor<1x1xf32>
  %3 = cpn.matmul %c, %d : tensor<1x300xf64>, tensor<300x1xf64> -> tensor<1x1xf64>
  return %0, %1, %2, %3 : tensor<8x1xf64>, tensor<8x2xf64>, tensor<1x1xf32>, tensor<1x1xf64>
}

// -----

// Views count as stored data where they lower to a slice of it: a box of
// 1031 stored rows gets 16 blocks (the 7 left start the result); a
// transposed view lowers to a loop, as computed data does: no blocks.
// CHECK-LABEL: func @views_of_stored_rows
// CHECK: %[[S:.+]] = cpn.view %arg0 {offset = 5 : i64, strides = array<i64: 5, 1>}
// CHECK: cpn.reduce sum %[[S]] {axes = array<i64: 0>, cpn.row_blocks = 16 : i64} : tensor<1031x5xf64>
// CHECK: %[[T:.+]] = cpn.view %arg1
// CHECK: cpn.reduce sum %[[T]] {axes = array<i64: 0>} : tensor<1031x5xf64>
func.func @views_of_stored_rows(%a: tensor<1040x5xf64>, %b: tensor<5x1031xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
  %s = cpn.view %a {offset = 5 : i64, strides = array<i64: 5, 1>} : tensor<1040x5xf64> -> tensor<1031x5xf64>
  %0 = cpn.reduce sum %s {axes = array<i64: 0>} : tensor<1031x5xf64> -> tensor<5xf64>
  %t = cpn.view %b {offset = 0 : i64, strides = array<i64: 1, 1031>} : tensor<5x1031xf64> -> tensor<1031x5xf64>
  %1 = cpn.reduce sum %t {axes = array<i64: 0>} : tensor<1031x5xf64> -> tensor<5xf64>
  return %0, %1 : tensor<5xf64>, tensor<5xf64>
}
