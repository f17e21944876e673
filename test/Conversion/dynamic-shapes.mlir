// Shape-generic kernels (cpnc signatures with `:` dimensions): dynamic
// dimensions through cpn-to-linalg, fusion, bufferization and BLAS calls.
// RUN: cpn-opt %s -cpn-schedule-reductions -convert-cpn-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: cpn-opt %s --pass-pipeline='builtin.module(cpn-schedule-reductions,convert-cpn-to-linalg,func.func(cpn-fuse-elementwise),canonicalize,cse,eliminate-empty-tensors,one-shot-bufferize,cpn-matmul-to-blas,canonicalize)' | FileCheck %s --check-prefix=BUF

// a * x + y with a 0-d `a` broadcast to x's size; its sum.
// LINALG-LABEL: func @axpy
// LINALG: %[[N:.+]] = tensor.dim %arg1, %c0
// LINALG: tensor.empty(%[[N]]) : tensor<?xf64>
// LINALG: linalg.generic {{.+}} ins(%arg0 : tensor<f64>)
// LINALG: %[[M:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?xf64>
// LINALG: tensor.empty(%[[M]]) : tensor<?xf64>
// LINALG: arith.mulf
// LINALG: tensor.empty() : tensor<f64>
// LINALG: iterator_types = ["reduction"]
// BUF-LABEL: func @axpy
// BUF: linalg.generic {{.+}} ins({{.+}} : memref<f64, {{.+}}>, memref<?xf64, {{.+}}>, memref<?xf64, {{.+}}>) outs(%arg3 : memref<?xf64>)
// BUF: arith.mulf
// BUF: arith.addf
// BUF: iterator_types = ["reduction"]
func.func @axpy(%a: tensor<f64>, %x: tensor<?xf64>, %y: tensor<?xf64>, %o1: memref<?xf64>, %o2: memref<f64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %b = cpn.remap %a, %n {dims = array<i64: -1>} : tensor<f64>, index -> tensor<?xf64>
  %p = cpn.multiply %b, %x : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %s = cpn.add %p, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
  %r = cpn.reduce sum %s {axes = array<i64: 0>} : tensor<?xf64> -> tensor<f64>
  bufferization.materialize_in_destination %s in restrict writable %o1 : (tensor<?xf64>, memref<?xf64>) -> ()
  bufferization.materialize_in_destination %r in restrict writable %o2 : (tensor<f64>, memref<f64>) -> ()
  return
}

// The Gram matrix of an n x 3 matrix: a transposing remap, then a product
// whose K is dynamic; BLAS gets it from memref.dim.
// LINALG-LABEL: func @gram
// LINALG: %[[N:.+]] = tensor.dim %arg0, %c0
// LINALG: tensor.empty(%[[N]]) : tensor<3x?xf64>
// LINALG: linalg.matmul
// BUF-LABEL: func @gram
// BUF: %[[K:.+]] = tensor.dim %arg0, %c0
// BUF: memref.alloc(%[[K]]) {{.+}} : memref<3x?xf64>
// BUF: %[[K64:.+]] = arith.index_cast %[[K]] : index to i64
// BUF: call @cpn_gemm_f64({{.+}}, %c3_i64, %c3_i64, %[[K64]], %{{.+}})
func.func @gram(%m: tensor<?x3xf64>, %o: memref<3x3xf64>) {
  %t = cpn.remap %m {dims = array<i64: 1, 0>} : tensor<?x3xf64> -> tensor<3x?xf64>
  %g = cpn.matmul %t, %m : tensor<3x?xf64>, tensor<?x3xf64> -> tensor<3x3xf64>
  bufferization.materialize_in_destination %g in restrict writable %o : (tensor<3x3xf64>, memref<3x3xf64>) -> ()
  return
}

// Row sums of a matrix of any shape: the result's size is the operand's.
// LINALG-LABEL: func @row_sums
// LINALG: %[[R:.+]] = tensor.dim %arg0, %c0
// LINALG: tensor.empty(%[[R]]) : tensor<?xf64>
func.func @row_sums(%m: tensor<?x?xf64>) -> tensor<?xf64> {
  %r = cpn.reduce sum %m {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// A float32 sum of any shape accumulates in float64 (cpn-schedule-reductions):
// widened, summed, then narrowed, every size the operand's.
// LINALG-LABEL: func @row_sums_f32
// LINALG: arith.extf %{{.+}} : f32 to f64
// LINALG: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f64
// LINALG: arith.truncf %{{.+}} : f64 to f32
func.func @row_sums_f32(%m: tensor<?x?xf32>) -> tensor<?xf32> {
  %r = cpn.reduce sum %m {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xf32>
  return %r : tensor<?xf32>
}
