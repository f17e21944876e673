// RUN: cpn-opt %s -split-input-file -verify-diagnostics

func.func @view_out_of_bounds(%u: tensor<4x4xf64>) {
  // expected-error @+1 {{view selects flat indices [5, 25] outside the base's 16 elements}}
  %0 = cpn.view %u {offset = 5 : i64, strides = array<i64: 5, 5>} : tensor<4x4xf64> -> tensor<2x4xf64>
  return
}

// -----

func.func @update_broadcast(%u: tensor<4xf64>, %v: tensor<4xf64>) {
  // expected-error @+1 {{cannot write through a zero-stride (broadcast) view}}
  %0 = cpn.update %u, %v {offset = 0 : i64, strides = array<i64: 0>} : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return
}

// -----

func.func @shape_mismatch(%a: tensor<4xf64>, %b: tensor<5xf64>) {
  // expected-error @+1 {{operands must have the result's shape}}
  %0 = cpn.add %a, %b : tensor<4xf64>, tensor<5xf64> -> tensor<4xf64>
  return
}

// -----

func.func @type_mismatch(%a: tensor<4xf64>, %b: tensor<4xf32>) {
  // expected-error @+1 {{requires all operands to have the same type}}
  %0 = cpn.add %a, %b : tensor<4xf64>, tensor<4xf32> -> tensor<4xf64>
  return
}

// -----

func.func @bad_reduce(%x: tensor<4x5xf64>) {
  // expected-error @+1 {{result shape must be the operand's without the axes}}
  %0 = cpn.reduce sum %x {axes = array<i64: 1>} : tensor<4x5xf64> -> tensor<5xf64>
  return
}

// -----

func.func @bad_kind(%x: tensor<4xf64>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, prod, min, max, any, all, argmin, argmax]}}
  %0 = cpn.reduce median %x {axes = array<i64: 0>} : tensor<4xf64> -> tensor<f64>
  return
}

// -----

func.func @bad_matmul(%a: tensor<4x5xf64>, %b: tensor<4x5xf64>) {
  // expected-error @+1 {{shapes do not agree for a matrix product}}
  %0 = cpn.matmul %a, %b : tensor<4x5xf64>, tensor<4x5xf64> -> tensor<4x5xf64>
  return
}

// -----

func.func @remap_drops_a_dimension(%x: tensor<3x4xf64>) {
  // expected-error @+1 {{base dimension 0 is dropped but does not have size 1}}
  %0 = cpn.remap %x {dims = array<i64: 1>} : tensor<3x4xf64> -> tensor<4xf64>
  return
}

// -----

func.func @remap_missing_size(%x: tensor<f64>) {
  // expected-error @+1 {{expected one size per dynamic broadcast dimension}}
  %0 = cpn.remap %x {dims = array<i64: -1>} : tensor<f64> -> tensor<?xf64>
  return
}

// -----

func.func @view_of_dynamic(%x: tensor<?xf64>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = cpn.view %x {offset = 0 : i64, strides = array<i64: 1>} : tensor<?xf64> -> tensor<4xf64>
  return
}

// -----

func.func @bitcast_width(%a: tensor<4xf64>) {
  // expected-error @+1 {{reinterprets 'f64' as 'i32': both must be integer or float types of one width (not i1)}}
  %0 = cpn.bitcast %a : tensor<4xf64> -> tensor<4xi32>
  return
}

// -----

// cpn.fp_flag names its ufunc from the dialect's Ufunc enum: a name that is
// not an elementwise op's (or cast) is refused.
func.func @fp_flag_unknown_ufunc(%x: f64) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'ufunc'}}
  cpn.fp_flag cosine(%x) -> %x {checks = 7 : i64, site = 0 : i64} : f64 -> f64
  return
}
