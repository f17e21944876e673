// RUN: cpn-opt %s | cpn-opt | FileCheck %s

// CHECK-LABEL: func @views
func.func @views(%u: tensor<4x4xf64>, %v: tensor<2x2xf64>) -> tensor<4x4xf64> {
  // CHECK: %[[V:.+]] = cpn.view %{{.+}} {offset = 5 : i64, strides = array<i64: 4, 1>} : tensor<4x4xf64> -> tensor<2x2xf64>
  %0 = cpn.view %u {offset = 5 : i64, strides = array<i64: 4, 1>} : tensor<4x4xf64> -> tensor<2x2xf64>
  // CHECK: cpn.update %{{.+}}, %[[V]] {offset = 0 : i64, strides = array<i64: 8, 2>}
  %1 = cpn.update %u, %0 {offset = 0 : i64, strides = array<i64: 8, 2>} : tensor<4x4xf64>, tensor<2x2xf64> -> tensor<4x4xf64>
  // CHECK: cpn.view %{{.+}} {offset = 15 : i64, strides = array<i64: -4, -1>}
  %2 = cpn.view %u {offset = 15 : i64, strides = array<i64: -4, -1>} : tensor<4x4xf64> -> tensor<4x4xf64>
  // CHECK: cpn.copy
  %3 = cpn.copy %2 : tensor<4x4xf64>
  return %1 : tensor<4x4xf64>
}

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<8xf64>, %b: tensor<8xf64>, %i: tensor<8xi32>) {
  // CHECK: cpn.add %{{.+}}, %{{.+}} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %0 = cpn.add %a, %b : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  // CHECK: cpn.exp
  %1 = cpn.exp %0 : tensor<8xf64> -> tensor<8xf64>
  // CHECK: cpn.less {{.+}} -> tensor<8xi1>
  %2 = cpn.less %a, %b : tensor<8xf64>, tensor<8xf64> -> tensor<8xi1>
  // CHECK: cpn.select
  %3 = cpn.select %2, %a, %1 : tensor<8xi1>, tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  // CHECK: cpn.floor_divide {{.+}} {is_unsigned}
  %4 = cpn.floor_divide %i, %i {is_unsigned} : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
  // CHECK: cpn.cast {{.+}} {src_unsigned} : tensor<8xi32> -> tensor<8xf64>
  %5 = cpn.cast %i {src_unsigned} : tensor<8xi32> -> tensor<8xf64>
  // CHECK: cpn.isnan {{.+}} -> tensor<8xi1>
  %6 = cpn.isnan %a : tensor<8xf64> -> tensor<8xi1>
  return
}

// CHECK-LABEL: func @reductions_and_creation
func.func @reductions_and_creation(%x: tensor<4x5xf64>, %m: tensor<5x3xf64>) {
  // CHECK: cpn.reduce sum %{{.+}} {axes = array<i64: 1>} : tensor<4x5xf64> -> tensor<4xf64>
  %0 = cpn.reduce sum %x {axes = array<i64: 1>} : tensor<4x5xf64> -> tensor<4xf64>
  // CHECK: cpn.reduce argmax {{.+}} -> tensor<5xi64>
  %1 = cpn.reduce argmax %x {axes = array<i64: 0>} : tensor<4x5xf64> -> tensor<5xi64>
  // CHECK: cpn.iota {dim = 1 : i64} : tensor<3x4xi64>
  %2 = cpn.iota {dim = 1 : i64} : tensor<3x4xi64>
  // CHECK: cpn.matmul {{.+}} -> tensor<4x3xf64>
  %3 = cpn.matmul %x, %m : tensor<4x5xf64>, tensor<5x3xf64> -> tensor<4x3xf64>
  return
}

// CHECK-LABEL: func @remaps
func.func @remaps(%x: tensor<?x3xf64>, %s: tensor<f64>, %n: index) -> (tensor<3x?xf64>, tensor<?xf64>) {
  // CHECK: cpn.remap %{{.+}} {dims = array<i64: 1, 0>} : tensor<?x3xf64> -> tensor<3x?xf64>
  %0 = cpn.remap %x {dims = array<i64: 1, 0>} : tensor<?x3xf64> -> tensor<3x?xf64>
  // CHECK: cpn.remap %{{.+}}, %{{.+}} {dims = array<i64: -1>} : tensor<f64>, index -> tensor<?xf64>
  %1 = cpn.remap %s, %n {dims = array<i64: -1>} : tensor<f64>, index -> tensor<?xf64>
  return %0, %1 : tensor<3x?xf64>, tensor<?xf64>
}

// Complex elements: the parts, building from parts, and the conjugate.
// CHECK-LABEL: func @complex_parts
func.func @complex_parts(%z: tensor<3xcomplex<f64>>, %x: tensor<3xf64>) {
  // CHECK: cpn.real %{{.+}} : tensor<3xcomplex<f64>> -> tensor<3xf64>
  %0 = cpn.real %z : tensor<3xcomplex<f64>> -> tensor<3xf64>
  // CHECK: cpn.imag %{{.+}} : tensor<3xcomplex<f64>> -> tensor<3xf64>
  %1 = cpn.imag %z : tensor<3xcomplex<f64>> -> tensor<3xf64>
  // CHECK: cpn.complex %{{.+}}, %{{.+}} : tensor<3xf64>, tensor<3xf64> -> tensor<3xcomplex<f64>>
  %2 = cpn.complex %0, %x : tensor<3xf64>, tensor<3xf64> -> tensor<3xcomplex<f64>>
  // CHECK: cpn.conjugate %{{.+}} : tensor<3xcomplex<f64>> -> tensor<3xcomplex<f64>>
  %3 = cpn.conjugate %2 : tensor<3xcomplex<f64>> -> tensor<3xcomplex<f64>>
  // CHECK: cpn.bitcast %{{.+}} : tensor<3xf64> -> tensor<3xi64>
  %4 = cpn.bitcast %x : tensor<3xf64> -> tensor<3xi64>
  return
}
