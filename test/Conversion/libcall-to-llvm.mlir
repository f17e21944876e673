// RUN: cpn-opt %s -cpn-lower-to-llvm | FileCheck %s

// A kernel with a library call, through the whole JIT pipeline: the call
// survives bufferization, and its operand and result buffers are freed only
// after it.
// CHECK: llvm.func @cpn_lib_inv_f64(i64, i64, i64, i64, i64)
// CHECK-LABEL: llvm.func @kernel
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @cpn_lib_inv_f64
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK-NOT: cpn.
func.func @kernel(%arg0: memref<4x4xf64>, %out: memref<4x4xf64>) {
  %t = bufferization.to_tensor %arg0 restrict : memref<4x4xf64> to tensor<4x4xf64>
  %e = cpn.exp %t : tensor<4x4xf64> -> tensor<4x4xf64>
  %r = cpn.libcall "inv_f64"(%e) {args = array<i64>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %s = cpn.add %r, %t : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  bufferization.materialize_in_destination %s in restrict writable %out : (tensor<4x4xf64>, memref<4x4xf64>) -> ()
  return
}
