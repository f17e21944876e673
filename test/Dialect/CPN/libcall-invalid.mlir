// RUN: cpn-opt %s -split-input-file -verify-diagnostics

func.func @four_operands(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{at most three operands}}
  %r = cpn.libcall "sort_f4"(%a, %a, %a, %a) {args = array<i64>} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @in_place_type(%a: tensor<4xf32>, %i: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{in place needs a first operand of the result's type}}
  %r = cpn.libcall "put_f4"(%a, %i, %v) {args = array<i64: 2>, in_place} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
