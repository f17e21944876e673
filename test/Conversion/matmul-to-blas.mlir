// RUN: cpn-opt %s -cpn-matmul-to-blas | FileCheck %s

// CHECK-LABEL: func @gemm
// CHECK: memref.extract_strided_metadata
// CHECK: call @cpn_gemm_f64
// CHECK-NOT: linalg.matmul
func.func @gemm(%a: memref<4x5xf64>, %b: memref<5x3xf64>, %c: memref<4x3xf64>) {
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return
}

// Integer products stay loops.
// CHECK-LABEL: func @int_gemm
// CHECK: linalg.matmul
func.func @int_gemm(%a: memref<4x5xi32>, %b: memref<5x3xi32>, %c: memref<4x3xi32>) {
  linalg.matmul ins(%a, %b : memref<4x5xi32>, memref<5x3xi32>) outs(%c : memref<4x3xi32>)
  return
}
