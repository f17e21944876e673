// RUN: cpn-opt %s -convert-cpn-to-linalg | FileCheck %s

// cpn.libcall reads its operand through to_buffer, writes a fresh buffer and
// passes both base pointers and a stack array of their layouts.
// CHECK: func.func private @cpn_lib_inv_f64(i64, i64, i64, i64, i64)
// CHECK-LABEL: func @inverse
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<4x4xf64>
// CHECK: %[[IN:.+]] = bufferization.to_buffer %arg0 read_only : tensor<4x4xf64> to memref<4x4xf64, strided<[?, ?], offset: ?>>
// CHECK: %[[META:.+]] = memref.alloca() : memref<14xi64>
// CHECK: memref.store %{{.+}}, %[[META]]
// CHECK: call @cpn_lib_inv_f64(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (i64, i64, i64, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @inverse(%a: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %r = cpn.libcall "inv_f64"(%a) {args = array<i64>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
  return %r : tensor<4x4xf64>
}

// Two operands and an integer argument; a packed result.
// CHECK-LABEL: func @packed
// CHECK-COUNT-2: bufferization.to_buffer
// CHECK: memref.alloca() : memref<19xi64>
// CHECK: call @cpn_lib_solve_f32
func.func @packed(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<6xf32> {
  %r = cpn.libcall "solve_f32"(%a, %b) {args = array<i64: 7>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// A result stored only as a kernel output is written by the callee into the
// output's argument (no fresh buffer, no copy at the end), and an operand
// that is a reshaping cpn.view of its base (np.take's (1, N, 1)) is read in
// place through a reinterpret_cast, not copied by a gather loop.
// CHECK-LABEL: func @take_into_output
// CHECK-NOT: memref.alloc()
// CHECK-NOT: linalg.generic
// CHECK: %[[BASE:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<8xf64> to memref<8xf64>
// CHECK: %[[V:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [1, 8, 1], strides: [8, 1, 1]
// CHECK: memref.cast %[[V]]
// CHECK: call @cpn_lib_take_f8
// CHECK-NOT: materialize_in_destination
// CHECK: return
func.func @take_into_output(%a: memref<8xf64>, %i: memref<5xi64>, %out: memref<1x5x1xf64>) {
  %ta = bufferization.to_tensor %a restrict : memref<8xf64> to tensor<8xf64>
  %ti = bufferization.to_tensor %i restrict : memref<5xi64> to tensor<5xi64>
  %v = cpn.view %ta {offset = 0 : i64, strides = array<i64: 8, 1, 1>} : tensor<8xf64> -> tensor<1x8x1xf64>
  %r = cpn.libcall "take_f8"(%v, %ti) {args = array<i64: 2, 0>} : (tensor<1x8x1xf64>, tensor<5xi64>) -> tensor<1x5x1xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<1x5x1xf64>, memref<1x5x1xf64>) -> ()
  return
}

// A result that another library call reads (here through a reshaping view,
// read in place) is not writable: that read goes to the buffer itself, out
// of one-shot analysis' sight, so a later update of the result must not be
// bufferized into it (fuzz 407:337: an argsort saw a masked update that
// fusion had moved before it).
// CHECK-LABEL: func @result_read_by_a_call
// CHECK: call @cpn_lib_take_f8
// CHECK: bufferization.to_tensor %{{.+}} restrict :
// CHECK-NOT: writable
// CHECK: call @cpn_lib_argsort_f8
// CHECK: bufferization.to_tensor %{{.+}} restrict writable
func.func @result_read_by_a_call(%a: tensor<8xf64>, %i: tensor<4xi64>) -> (tensor<1x4xi64>, tensor<1x4x1xf64>) {
  %v = cpn.view %a {offset = 0 : i64, strides = array<i64: 8, 1, 1>} : tensor<8xf64> -> tensor<1x8x1xf64>
  %t = cpn.libcall "take_f8"(%v, %i) {args = array<i64: 2, 0>} : (tensor<1x8x1xf64>, tensor<4xi64>) -> tensor<1x4x1xf64>
  %f = cpn.view %t {offset = 0 : i64, strides = array<i64: 4, 1>} : tensor<1x4x1xf64> -> tensor<1x4xf64>
  %s = cpn.libcall "argsort_f8"(%f) {args = array<i64>} : (tensor<1x4xf64>) -> tensor<1x4xi64>
  return %s, %t : tensor<1x4xi64>, tensor<1x4x1xf64>
}

// A result stored as a kernel output and also read later is written into
// the output's argument all the same; the later reader sees the argument
// through a to_tensor that is not writable (an update of the result must not
// land in the output, which holds the call's value).
// CHECK-LABEL: func @stored_and_read
// CHECK-NOT: memref.alloc()
// CHECK: call @cpn_lib_take_f8(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK: %[[T:.+]] = bufferization.to_tensor %arg2 restrict :
// CHECK-NOT: writable
// CHECK: linalg.generic {{.+}} ins(%[[T]] :
// CHECK-NOT: materialize_in_destination %{{.+}} in restrict writable %arg2
// CHECK: return
func.func @stored_and_read(%a: tensor<8xf64>, %i: tensor<5xi64>, %out: memref<1x5x1xf64>) -> tensor<1x5x1xf64> {
  %v = cpn.view %a {offset = 0 : i64, strides = array<i64: 8, 1, 1>} : tensor<8xf64> -> tensor<1x8x1xf64>
  %r = cpn.libcall "take_f8"(%v, %i) {args = array<i64: 2, 0>} : (tensor<1x8x1xf64>, tensor<5xi64>) -> tensor<1x5x1xf64>
  %e = cpn.exp %r : tensor<1x5x1xf64> -> tensor<1x5x1xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<1x5x1xf64>, memref<1x5x1xf64>) -> ()
  return %e : tensor<1x5x1xf64>
}

// A scan of a temporary of its result's type stays a tensor op marked in
// place (one-shot bufferization chooses its buffer: scan-in-place.mlir). A
// scan of an input (not a temporary of the kernel) reads the input where it
// is.
// CHECK-LABEL: func @scan_in_place
// CHECK: %[[E:.+]] = linalg.generic
// CHECK: cpn.libcall "cumsum_f8"(%[[E]]) {args = array<i64>, in_place}
// CHECK-LABEL: func @scan_of_an_input
// CHECK: bufferization.to_buffer %arg0 read_only
// CHECK: call @cpn_lib_cumsum_f8
func.func @scan_in_place(%a: tensor<4x16xf64>, %out: memref<4x16xf64>) {
  %e = cpn.exp %a : tensor<4x16xf64> -> tensor<4x16xf64>
  %r = cpn.libcall "cumsum_f8"(%e) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x16xf64>, memref<4x16xf64>) -> ()
  return
}
func.func @scan_of_an_input(%a: tensor<4x16xf64>, %out: memref<4x16xf64>) {
  %r = cpn.libcall "cumsum_f8"(%a) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x16xf64>, memref<4x16xf64>) -> ()
  return
}
