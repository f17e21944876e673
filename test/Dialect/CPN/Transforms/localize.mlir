// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=4 rank=1 threshold=1000" | FileCheck %s
// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=4 rank=3 threshold=1000" | FileCheck %s --check-prefix=LAST
// RUN: cpn-opt %s -split-input-file -cpn-localize | FileCheck %s --check-prefix=ONE

// One rank: nothing changes.
// ONE-NOT: cpn.rows
// ONE-NOT: cpn.local

// A 5-point Jacobi step written in place into u (a donated input) and the
// sum of the new u. Rank 1 of 4 owns rows [25, 50) of u; the views one row
// up and down read rows 24 and 50 too: its memref holds rows [24, 51), and
// `cpn.rows` lists every rank's (the first and last ranks' halos are clipped
// at the edges). The update writes the block's rows of u[1:-1, 1:-1] at its
// local offset (row 1 of the local rows, column 1); the sum is this rank's
// partial over its block, marked for combining.
// CHECK-LABEL: func.func @jacobi
// CHECK-SAME: %arg0: memref<27x100xf64> {cpn.rows = array<i64: 0, 26, 24, 51, 49, 76, 74, 100>
// CHECK-SAME: %arg2: memref<f64> {cpn.combine = "sum"
// CHECK-SAME: cpn.local = array<i64: 1, 4>
// CHECK: %[[U:.*]] = bufferization.to_tensor %arg0 restrict writable : memref<27x100xf64> to tensor<27x100xf64>
// CHECK-DAG: cpn.view %[[U]] {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<27x100xf64> -> tensor<25x100xf64>
// CHECK-DAG: cpn.view %[[U]] {offset = 200 : i64, strides = array<i64: 100, 1>} : tensor<27x100xf64> -> tensor<25x100xf64>
// CHECK: cpn.reduce sum %{{.*}} {axes = array<i64: 0, 1>} : tensor<25x100xf64> -> tensor<f64>
// CHECK: %[[NEW:.*]] = cpn.update %[[U]], %{{.*}} {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<27x100xf64>, tensor<25x98xf64> -> tensor<27x100xf64>
// CHECK: bufferization.materialize_in_destination %[[NEW]] in %[[U]]

// The last rank: rows [75, 100), the update's box ends at row 98.
// LAST-LABEL: func.func @jacobi
// LAST-SAME: %arg0: memref<26x100xf64>
// LAST: cpn.update {{.*}} : tensor<26x100xf64>, tensor<24x98xf64> -> tensor<26x100xf64>
func.func @jacobi(%arg0: memref<100x100xf64>, %arg1: memref<f64>, %arg2: memref<f64>) {
  %u = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %q = bufferization.to_tensor %arg1 restrict : memref<f64> to tensor<f64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %w = cpn.view %u {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %e = cpn.view %u {offset = 102 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %b = cpn.add %a, %w : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %c = cpn.add %b, %e : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %k = cpn.view %q {offset = 0 : i64, strides = array<i64: 0, 0>} : tensor<f64> -> tensor<98x98xf64>
  %m = cpn.multiply %k, %c : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %m {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %t = cpn.reduce sum %u1 {axes = array<i64: 0, 1>} : tensor<100x100xf64> -> tensor<f64>
  bufferization.materialize_in_destination %t in restrict writable %arg2 : (tensor<f64>, memref<f64>) -> ()
  %d = bufferization.materialize_in_destination %u1 in %u : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// -----

// A fresh split output (elementwise of two split inputs) holds this rank's
// block; a small input (below the threshold) and a transposed view read
// whole: the transposed input is read whole on every rank (`cpn.rows` of
// the whole), and the product's rows are rows of its left side.
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: %arg0: memref<50x40xf64> {cpn.rows = array<i64: 0, 50, 50, 100, 100, 150, 150, 200>}
// CHECK-SAME: %arg1: memref<40x200xf64> {cpn.rows = array<i64: 0, 40, 0, 40, 0, 40, 0, 40>}
// CHECK-SAME: %arg2: memref<40x8xf64>,
// CHECK-SAME: %arg3: memref<50x40xf64> {cpn.rows = array<i64: 50, 100>}
// CHECK-SAME: %arg4: memref<50x8xf64> {cpn.rows = array<i64: 50, 100>}
// CHECK: cpn.view %{{.*}} {offset = 50 : i64, strides = array<i64: 1, 200>} : tensor<40x200xf64> -> tensor<50x40xf64>
// CHECK: cpn.matmul {{.*}} : tensor<50x40xf64>, tensor<40x8xf64> -> tensor<50x8xf64>
func.func @fresh(%arg0: memref<200x40xf64>, %arg1: memref<40x200xf64>, %arg2: memref<40x8xf64>, %arg3: memref<200x40xf64>, %arg4: memref<200x8xf64>) {
  %x = bufferization.to_tensor %arg0 restrict : memref<200x40xf64> to tensor<200x40xf64>
  %y = bufferization.to_tensor %arg1 restrict : memref<40x200xf64> to tensor<40x200xf64>
  %w = bufferization.to_tensor %arg2 restrict : memref<40x8xf64> to tensor<40x8xf64>
  %yt = cpn.view %y {offset = 0 : i64, strides = array<i64: 1, 200>} : tensor<40x200xf64> -> tensor<200x40xf64>
  %s = cpn.add %x, %yt : tensor<200x40xf64>, tensor<200x40xf64> -> tensor<200x40xf64>
  %p = cpn.matmul %x, %w : tensor<200x40xf64>, tensor<40x8xf64> -> tensor<200x8xf64>
  bufferization.materialize_in_destination %s in restrict writable %arg3 : (tensor<200x40xf64>, memref<200x40xf64>) -> ()
  bufferization.materialize_in_destination %p in restrict writable %arg4 : (tensor<200x8xf64>, memref<200x8xf64>) -> ()
  return
}

// -----

// Cavity flow's boundary rows, `p[0, :] = p[1, :]` and `p[-1, :] = p[-2, :]`,
// on a split p of 100 rows: a row view reads the base rows its elements lie
// in, and a row update touches only the rank whose block holds the row.
// Rank 1 (rows [25, 50)) reads no row of another rank; rank 0 reads rows
// [0, 25), the last rank rows [75, 100): no rank gathers p.
// CHECK-LABEL: func.func @boundary_rows
// CHECK-SAME: %arg0: memref<25x100xf64> {cpn.rows = array<i64: 0, 25, 25, 50, 50, 75, 75, 100>
// CHECK-NOT: cpn.update
// CHECK: return
// LAST-LABEL: func.func @boundary_rows
// LAST-SAME: %arg0: memref<25x100xf64>
// LAST: %[[ROW:.*]] = cpn.view %{{.*}} {offset = 2300 : i64, strides = array<i64: 100, 1>} : tensor<25x100xf64> -> tensor<1x100xf64>
// LAST: cpn.view %[[ROW]] {offset = 0 : i64, strides = array<i64: 1>} : tensor<1x100xf64> -> tensor<100xf64>
// LAST: cpn.update {{.*}} {offset = 2400 : i64, strides = array<i64: 1>} : tensor<25x100xf64>, tensor<100xf64> -> tensor<25x100xf64>
func.func @boundary_rows(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>) {
  %p = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %r1 = cpn.view %p {offset = 100 : i64, strides = array<i64: 1>} : tensor<100x100xf64> -> tensor<100xf64>
  %p1 = cpn.update %p, %r1 {offset = 0 : i64, strides = array<i64: 1>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  %r2 = cpn.view %p1 {offset = 9800 : i64, strides = array<i64: 1>} : tensor<100x100xf64> -> tensor<100xf64>
  %p2 = cpn.update %p1, %r2 {offset = 9900 : i64, strides = array<i64: 1>} : tensor<100x100xf64>, tensor<100xf64> -> tensor<100x100xf64>
  bufferization.materialize_in_destination %p2 in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// -----

// Random draws and an iota split by rows compute this rank's rows only:
// random_bits on 25 of 100 rows with the counter moved by the block's first
// element (rank 1: row 25 of 40 columns, 1000; the last rank 3000), so each
// word is the one its index gets on one rank; an iota along the rows gets
// the block's first row added, one along the columns is the same op on
// fewer rows. Nothing is computed whole.
// CHECK-LABEL: func.func @draws
// CHECK-DAG: %[[K:.*]] = bufferization.to_tensor %arg0
// CHECK-DAG: %[[C:.*]] = bufferization.to_tensor %arg1
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant dense<1000> : tensor<i64>
// CHECK: %[[C1:.*]] = cpn.add %[[C]], %[[SHIFT]] : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK: cpn.random_bits %[[K]], %[[C1]] : tensor<i64>, tensor<i64> -> tensor<25x40xi64>
// CHECK-NOT: tensor<100x40xi64>
// CHECK: %[[ROWS:.*]] = cpn.iota {dim = 0 : i64} : tensor<25x40xi64>
// CHECK: %[[FIRST:.*]] = arith.constant dense<25> : tensor<25x40xi64>
// CHECK: cpn.add %[[ROWS]], %[[FIRST]]
// CHECK: cpn.iota {dim = 1 : i64} : tensor<25x40xi64>
// CHECK-NOT: tensor<100x40xi64>
// CHECK: return
// LAST-LABEL: func.func @draws
// LAST: arith.constant dense<3000> : tensor<i64>
// LAST: cpn.random_bits {{.*}} -> tensor<25x40xi64>
// LAST: arith.constant dense<75> : tensor<25x40xi64>
// ONE-LABEL: func.func @draws
// ONE-NOT: arith.constant
// ONE: cpn.random_bits {{.*}} -> tensor<100x40xi64>
func.func @draws(%arg0: memref<i64>, %arg1: memref<i64>, %arg2: memref<100x40xi64>, %arg3: memref<100x40xi64>, %arg4: memref<100x40xi64>) {
  %key = bufferization.to_tensor %arg0 restrict : memref<i64> to tensor<i64>
  %ctr = bufferization.to_tensor %arg1 restrict : memref<i64> to tensor<i64>
  %bits = cpn.random_bits %key, %ctr : tensor<i64>, tensor<i64> -> tensor<100x40xi64>
  %rows = cpn.iota {dim = 0 : i64} : tensor<100x40xi64>
  %cols = cpn.iota {dim = 1 : i64} : tensor<100x40xi64>
  bufferization.materialize_in_destination %bits in restrict writable %arg2 : (tensor<100x40xi64>, memref<100x40xi64>) -> ()
  bufferization.materialize_in_destination %rows in restrict writable %arg3 : (tensor<100x40xi64>, memref<100x40xi64>) -> ()
  bufferization.materialize_in_destination %cols in restrict writable %arg4 : (tensor<100x40xi64>, memref<100x40xi64>) -> ()
  return
}

// -----

// Library calls that compute each row from the same row of their operand
// (a sort and an FFT along the rows) are called on the block's rows: the
// input is read at rows [25, 50) only. A call that mixes rows (a take of
// flat indices) is computed whole from the whole input.
// CHECK-LABEL: func.func @row_calls
// CHECK-SAME: %arg0: memref<25x40xf64> {cpn.rows = array<i64: 0, 25, 25, 50, 50, 75, 75, 100>
// CHECK: cpn.libcall "sort_f8"(%{{.*}}) {args = array<i64>} : (tensor<25x40xf64>) -> tensor<25x40xf64>
// CHECK: cpn.libcall "rfft_f8"(%{{.*}}) {args = array<i64: 40>} : (tensor<25x40xf64>) -> tensor<25x21xcomplex<f64>>
// CHECK-LABEL: func.func @mixed_rows
// CHECK-SAME: %arg0: memref<100x40xf64> {cpn.rows = array<i64: 0, 100, 0, 100, 0, 100, 0, 100>
// CHECK: cpn.libcall "take_f8"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<100x40xf64>, tensor<100x40xi64>) -> tensor<100x40xf64>
func.func @row_calls(%arg0: memref<100x40xf64>, %arg1: memref<100x40xf64>, %arg2: memref<100x21xcomplex<f64>>) {
  %x = bufferization.to_tensor %arg0 restrict : memref<100x40xf64> to tensor<100x40xf64>
  %s = cpn.libcall "sort_f8"(%x) {args = array<i64>} : (tensor<100x40xf64>) -> tensor<100x40xf64>
  %f = cpn.libcall "rfft_f8"(%x) {args = array<i64: 40>} : (tensor<100x40xf64>) -> tensor<100x21xcomplex<f64>>
  bufferization.materialize_in_destination %s in restrict writable %arg1 : (tensor<100x40xf64>, memref<100x40xf64>) -> ()
  bufferization.materialize_in_destination %f in restrict writable %arg2 : (tensor<100x21xcomplex<f64>>, memref<100x21xcomplex<f64>>) -> ()
  return
}
func.func @mixed_rows(%arg0: memref<100x40xf64>, %arg1: memref<100x40xi64>, %arg2: memref<100x40xf64>) {
  %x = bufferization.to_tensor %arg0 restrict : memref<100x40xf64> to tensor<100x40xf64>
  %i = bufferization.to_tensor %arg1 restrict : memref<100x40xi64> to tensor<100x40xi64>
  %t = cpn.libcall "take_f8"(%x, %i) {args = array<i64: 0>} : (tensor<100x40xf64>, tensor<100x40xi64>) -> tensor<100x40xf64>
  bufferization.materialize_in_destination %t in restrict writable %arg2 : (tensor<100x40xf64>, memref<100x40xf64>) -> ()
  return
}

// -----

// A scan of a block of one row is the whole call's (the runtime splits a
// single long row over threads, re-associating the sums; the whole call
// scans each row in order, as NumPy): its input whole, its row taken. A sort
// of one row is called on it.
// CHECK-LABEL: func.func @one_row_blocks
// CHECK-SAME: %arg0: memref<4x1000xf64> {cpn.rows = array<i64: 0, 4, 0, 4, 0, 4, 0, 4>
// CHECK: cpn.libcall "cumsum_f8"(%{{.*}}) {args = array<i64>} : (tensor<4x1000xf64>) -> tensor<4x1000xf64>
// CHECK: cpn.libcall "sort_f8"(%{{.*}}) {args = array<i64>} : (tensor<1x1000xf64>) -> tensor<1x1000xf64>
func.func @one_row_blocks(%arg0: memref<4x1000xf64>, %arg1: memref<4x1000xf64>, %arg2: memref<4x1000xf64>) {
  %x = bufferization.to_tensor %arg0 restrict : memref<4x1000xf64> to tensor<4x1000xf64>
  %c = cpn.libcall "cumsum_f8"(%x) {args = array<i64>} : (tensor<4x1000xf64>) -> tensor<4x1000xf64>
  %s = cpn.libcall "sort_f8"(%x) {args = array<i64>} : (tensor<4x1000xf64>) -> tensor<4x1000xf64>
  bufferization.materialize_in_destination %c in restrict writable %arg1 : (tensor<4x1000xf64>, memref<4x1000xf64>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %arg2 : (tensor<4x1000xf64>, memref<4x1000xf64>) -> ()
  return
}
