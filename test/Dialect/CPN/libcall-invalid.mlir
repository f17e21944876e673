// RUN: cpn-opt %s -split-input-file -verify-diagnostics

func.func @four_operands(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{at most three operands}}
  %r = cpn.libcall "sort_f4"(%a, %a, %a, %a) {args = array<i64>} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
