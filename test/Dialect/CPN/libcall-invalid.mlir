// RUN: cpn-opt %s -split-input-file -verify-diagnostics

func.func @int_elements(%a: tensor<4x4xi32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{works on f32 or f64 elements}}
  %r = cpn.libcall "inv_i32"(%a) {args = array<i64>} : (tensor<4x4xi32>) -> tensor<4x4xi32>
  return %r : tensor<4x4xi32>
}

// -----

func.func @mixed(%a: tensor<4x4xf32>) -> tensor<4x4xf64> {
  // expected-error @+1 {{one element type}}
  %r = cpn.libcall "inv_f64"(%a) {args = array<i64>} : (tensor<4x4xf32>) -> tensor<4x4xf64>
  return %r : tensor<4x4xf64>
}
