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
