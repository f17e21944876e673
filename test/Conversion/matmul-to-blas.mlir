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

// A transposed A (stored 5x4, read as 4x5) is passed with its strides
// swapped: row stride = the stored column stride.
// CHECK-LABEL: func @gemm_at
// CHECK: %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %[[S:.+]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[RS:.+]] = arith.index_cast %[[S]]#1
// CHECK: %[[CS:.+]] = arith.index_cast %[[S]]#0
// CHECK: call @cpn_gemm_f64(%{{.+}}, %{{.+}}, %[[RS]], %[[CS]],
// CHECK-NOT: linalg.matmul
#a_t = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gemm_at(%a: memref<5x4xf64>, %b: memref<5x3xf64>, %c: memref<4x3xf64>) {
  linalg.matmul indexing_maps = [#a_t, #b, #c] ins(%a, %b : memref<5x4xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return
}

// C zeroed just before (what cpn-to-linalg emits for cpn.matmul): the fill is
// dropped and BLAS overwrites C (accumulate = 0).
// CHECK-LABEL: func @gemm_into_zeros
// CHECK-NOT: linalg.fill
// CHECK: %[[NOACC:.+]] = arith.constant 0 : i64
// CHECK: call @cpn_gemm_f64({{.+}}, %[[NOACC]])
func.func @gemm_into_zeros(%a: memref<4x5xf64>, %b: memref<5x3xf64>, %c: memref<4x3xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<4x3xf64>)
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return
}

// A fill of another value, or into another buffer, stays (accumulate = 1).
// CHECK-LABEL: func @gemm_onto_ones
// CHECK: linalg.fill
// CHECK: %[[ACC:.+]] = arith.constant 1 : i64
// CHECK: call @cpn_gemm_f64({{.+}}, %[[ACC]])
func.func @gemm_onto_ones(%a: memref<4x5xf64>, %b: memref<5x3xf64>, %c: memref<4x3xf64>) {
  %one = arith.constant 1.0 : f64
  linalg.fill ins(%one : f64) outs(%c : memref<4x3xf64>)
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return
}

// Fills of independent products scheduled together, ahead of both: each
// product still overwrites its own zeroed C (no fill, accumulate = 0), as
// long as nothing between touches that C.
// CHECK-LABEL: func @fills_first
// CHECK-NOT: linalg.fill
// CHECK: call @cpn_gemm_f64({{.*}}, %c0_i64{{(_[0-9]+)?}})
// CHECK: call @cpn_gemm_f64({{.*}}, %c0_i64{{(_[0-9]+)?}})
func.func @fills_first(%a: memref<4x5xf64>, %b: memref<5x3xf64>) -> (memref<4x3xf64>, memref<4x3xf64>) {
  %zero = arith.constant 0.0 : f64
  %c1 = memref.alloc() : memref<4x3xf64>
  %c2 = memref.alloc() : memref<4x3xf64>
  linalg.fill ins(%zero : f64) outs(%c1 : memref<4x3xf64>)
  linalg.fill ins(%zero : f64) outs(%c2 : memref<4x3xf64>)
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c1 : memref<4x3xf64>)
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c2 : memref<4x3xf64>)
  return %c1, %c2 : memref<4x3xf64>, memref<4x3xf64>
}

// A read of C between the fill and the product keeps the fill.
// CHECK-LABEL: func @read_between
// CHECK: linalg.fill
// CHECK: memref.load
// CHECK: call @cpn_gemm_f64({{.*}}, %c1_i64{{(_[0-9]+)?}})
func.func @read_between(%a: memref<4x5xf64>, %b: memref<5x3xf64>) -> (memref<4x3xf64>, f64) {
  %zero = arith.constant 0.0 : f64
  %i = arith.constant 0 : index
  %c = memref.alloc() : memref<4x3xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<4x3xf64>)
  %x = memref.load %c[%i, %i] : memref<4x3xf64>
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x3xf64>) outs(%c : memref<4x3xf64>)
  return %c, %x : memref<4x3xf64>, f64
}
