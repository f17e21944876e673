// RUN: cpn-opt %s -cpn-lower-to-llvm | FileCheck %s

// The whole JIT pipeline: a kernel with memref arguments ends as llvm.func.
// CHECK: llvm.func @kernel(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-NOT: cpn.
// CHECK-NOT: linalg.
func.func @kernel(%arg0: memref<8xf64>, %out: memref<8xf64>) {
  %t = bufferization.to_tensor %arg0 restrict : memref<8xf64> to tensor<8xf64>
  %e = cpn.exp %t : tensor<8xf64> -> tensor<8xf64>
  %s = cpn.add %e, %t : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  bufferization.materialize_in_destination %s in restrict writable %out : (tensor<8xf64>, memref<8xf64>) -> ()
  return
}
