// RUN: cpn-opt %s | cpn-opt | FileCheck %s
// RUN: cpn-opt %s --mlir-print-op-generic | cpn-opt | FileCheck %s

// Round trip of every cpn op that ops.mlir does not exercise: each op is
// parsed from its custom assembly format, printed, and parsed again (the
// second RUN line goes through the generic form). One function per op.

//===----------------------------------------------------------------------===//
// Unary ufuncs on floats.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @negative(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.negative %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @negative(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.negative %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @positive(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.positive %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @positive(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.positive %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @absolute(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.absolute %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @absolute(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.absolute %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @sign(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.sign %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @sign(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.sign %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @square(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.square %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @square(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.square %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @reciprocal(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.reciprocal %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @reciprocal(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.reciprocal %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @sqrt(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.sqrt %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @sqrt(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.sqrt %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @cbrt(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.cbrt %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @cbrt(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.cbrt %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @exp2(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.exp2 %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @exp2(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.exp2 %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @expm1(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.expm1 %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @expm1(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.expm1 %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @log(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.log %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @log(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.log %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @log2(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.log2 %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @log2(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.log2 %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @log10(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.log10 %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @log10(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.log10 %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @log1p(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.log1p %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @log1p(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.log1p %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @sin(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.sin %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @sin(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.sin %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @cos(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.cos %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @cos(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.cos %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @tan(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.tan %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @tan(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.tan %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arcsin(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arcsin %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arcsin(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arcsin %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arccos(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arccos %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arccos(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arccos %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arctan(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arctan %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arctan(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arctan %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @sinh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.sinh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @sinh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.sinh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @cosh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.cosh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @cosh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.cosh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @tanh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.tanh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @tanh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.tanh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arcsinh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arcsinh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arcsinh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arcsinh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arccosh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arccosh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arccosh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arccosh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arctanh(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arctanh %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arctanh(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arctanh %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @floor(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.floor %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @floor(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.floor %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @ceil(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.ceil %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @ceil(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.ceil %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @trunc(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.trunc %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @trunc(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.trunc %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @rint(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.rint %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @rint(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.rint %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @spacing(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.spacing %[[X]] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @spacing(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.spacing %x : tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

//===----------------------------------------------------------------------===//
// Unary predicates (boolean results) and integer/boolean unary ufuncs.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @isinf(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.isinf %[[X]] : tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @isinf(%x: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.isinf %x : tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @isfinite(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.isfinite %[[X]] : tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @isfinite(%x: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.isfinite %x : tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @signbit(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.signbit %[[X]] : tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @signbit(%x: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.signbit %x : tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @logical_not(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xi1>
// CHECK: %[[R:.+]] = cpn.logical_not %[[X]] : tensor<4x3xi1> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @logical_not(%x: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %r = cpn.logical_not %x : tensor<4x3xi1> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @invert(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.invert %[[X]] : tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @invert(%x: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.invert %x : tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @bitwise_count(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: tensor<4x3xi64>
// CHECK: %[[R:.+]] = cpn.bitwise_count %[[X]] : tensor<4x3xi64> -> tensor<4x3xi8>
// CHECK: return %[[R]] : tensor<4x3xi8>
func.func @bitwise_count(%x: tensor<4x3xi64>) -> tensor<4x3xi8> {
  %r = cpn.bitwise_count %x : tensor<4x3xi64> -> tensor<4x3xi8>
  return %r : tensor<4x3xi8>
}

//===----------------------------------------------------------------------===//
// Binary ufuncs on floats.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @subtract(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.subtract %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @subtract(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.subtract %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @multiply(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.multiply %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @multiply(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.multiply %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @divide(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.divide %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @divide(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.divide %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @remainder(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.remainder %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @remainder(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.remainder %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @fmod(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.fmod %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @fmod(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.fmod %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @power(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.power %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @power(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.power %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @maximum(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.maximum %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @maximum(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.maximum %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @minimum(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.minimum %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @minimum(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.minimum %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @fmax(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.fmax %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @fmax(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.fmax %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @fmin(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.fmin %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @fmin(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.fmin %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @arctan2(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.arctan2 %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @arctan2(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.arctan2 %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @hypot(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.hypot %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @hypot(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.hypot %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @copysign(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.copysign %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @copysign(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.copysign %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @logaddexp(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.logaddexp %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @logaddexp(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.logaddexp %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @logaddexp2(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.logaddexp2 %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @logaddexp2(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.logaddexp2 %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// CHECK-LABEL: func @nextafter(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.nextafter %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]] : tensor<4x3xf32>
func.func @nextafter(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = cpn.nextafter %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

//===----------------------------------------------------------------------===//
// Comparisons (boolean results) and logical ufuncs.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @equal(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.equal %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @equal(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.equal %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @not_equal(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.not_equal %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @not_equal(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.not_equal %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @less_equal(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.less_equal %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @less_equal(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.less_equal %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @greater(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.greater %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @greater(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.greater %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @greater_equal(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xf32>
// CHECK: %[[R:.+]] = cpn.greater_equal %[[A]], %[[B]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @greater_equal(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xi1> {
  %r = cpn.greater_equal %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @logical_and(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi1>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi1>
// CHECK: %[[R:.+]] = cpn.logical_and %[[A]], %[[B]] : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @logical_and(%a: tensor<4x3xi1>, %b: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %r = cpn.logical_and %a, %b : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @logical_or(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi1>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi1>
// CHECK: %[[R:.+]] = cpn.logical_or %[[A]], %[[B]] : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @logical_or(%a: tensor<4x3xi1>, %b: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %r = cpn.logical_or %a, %b : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

// CHECK-LABEL: func @logical_xor(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi1>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi1>
// CHECK: %[[R:.+]] = cpn.logical_xor %[[A]], %[[B]] : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
// CHECK: return %[[R]] : tensor<4x3xi1>
func.func @logical_xor(%a: tensor<4x3xi1>, %b: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %r = cpn.logical_xor %a, %b : tensor<4x3xi1>, tensor<4x3xi1> -> tensor<4x3xi1>
  return %r : tensor<4x3xi1>
}

//===----------------------------------------------------------------------===//
// Integer binary ufuncs.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @gcd(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.gcd %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @gcd(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.gcd %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @lcm(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.lcm %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @lcm(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.lcm %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @bitwise_and(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.bitwise_and %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @bitwise_and(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.bitwise_and %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @bitwise_or(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.bitwise_or %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @bitwise_or(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.bitwise_or %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @bitwise_xor(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.bitwise_xor %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @bitwise_xor(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.bitwise_xor %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @left_shift(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.left_shift %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @left_shift(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.left_shift %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @right_shift(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.right_shift %[[A]], %[[B]] : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @right_shift(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.right_shift %a, %b : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @right_shift_is_unsigned(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.right_shift %[[A]], %[[B]] {is_unsigned} : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @right_shift_is_unsigned(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.right_shift %a, %b {is_unsigned} : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

// CHECK-LABEL: func @remainder_is_unsigned(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x3xi32>
// CHECK: %[[R:.+]] = cpn.remainder %[[A]], %[[B]] {is_unsigned} : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
// CHECK: return %[[R]] : tensor<4x3xi32>
func.func @remainder_is_unsigned(%a: tensor<4x3xi32>, %b: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %r = cpn.remainder %a, %b {is_unsigned} : tensor<4x3xi32>, tensor<4x3xi32> -> tensor<4x3xi32>
  return %r : tensor<4x3xi32>
}

//===----------------------------------------------------------------------===//
// Random bits, library calls and floating-point error flags.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func @random_bits(
// CHECK-SAME: %[[KEY:[a-zA-Z0-9_]+]]: tensor<i64>, %[[CTR:[a-zA-Z0-9_]+]]: tensor<i64>
// CHECK: %[[R:.+]] = cpn.random_bits %[[KEY]], %[[CTR]] : tensor<i64>, tensor<i64> -> tensor<4x3xi64>
// CHECK: return %[[R]] : tensor<4x3xi64>
func.func @random_bits(%key: tensor<i64>, %ctr: tensor<i64>) -> tensor<4x3xi64> {
  %r = cpn.random_bits %key, %ctr : tensor<i64>, tensor<i64> -> tensor<4x3xi64>
  return %r : tensor<4x3xi64>
}

// A LAPACK call with one operand and no extra arguments, and one with two
// operands and an extra integer argument whose result is packed flat.
// CHECK-LABEL: func @libcall(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<4x4xf64>, %[[M:[a-zA-Z0-9_]+]]: tensor<3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<3x2xf32>
// CHECK: %[[INV:.+]] = cpn.libcall "inv_f64"(%[[A]]) {args = array<i64>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
// CHECK: %[[SOL:.+]] = cpn.libcall "solve_f32"(%[[M]], %[[B]]) {args = array<i64: 7>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<6xf32>
// CHECK: return %[[INV]], %[[SOL]] : tensor<4x4xf64>, tensor<6xf32>
func.func @libcall(%a: tensor<4x4xf64>, %m: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> (tensor<4x4xf64>, tensor<6xf32>) {
  %inv = cpn.libcall "inv_f64"(%a) {args = array<i64>} : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %sol = cpn.libcall "solve_f32"(%m, %b) {args = array<i64: 7>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<6xf32>
  return %inv, %sol : tensor<4x4xf64>, tensor<6xf32>
}

// An in-place scatter (np.put): three operands and the in_place unit attribute.
// CHECK-LABEL: func @libcall_in_place(
// CHECK-SAME: %[[A:[a-zA-Z0-9_]+]]: tensor<8xf64>, %[[I:[a-zA-Z0-9_]+]]: tensor<3xi64>, %[[V:[a-zA-Z0-9_]+]]: tensor<3xf64>
// CHECK: %[[R:.+]] = cpn.libcall "put_f8"(%[[A]], %[[I]], %[[V]]) {args = array<i64: 2>, in_place} : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
// CHECK: return %[[R]] : tensor<8xf64>
func.func @libcall_in_place(%a: tensor<8xf64>, %i: tensor<3xi64>, %v: tensor<3xf64>) -> tensor<8xf64> {
  %r = cpn.libcall "put_f8"(%a, %i, %v) {args = array<i64: 2>, in_place} : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// fp_flag sits in the scalar body of an elementwise op, next to the element it
// reports on: a binary ufunc and a cast.
// CHECK-LABEL: func @fp_flag(
// CHECK-SAME: %[[X:[a-zA-Z0-9_]+]]: f64, %[[Y:[a-zA-Z0-9_]+]]: f64
// CHECK: %[[Q:.+]] = arith.divf %[[X]], %[[Y]] : f64
// CHECK: cpn.fp_flag divide(%[[X]], %[[Y]]) -> %[[Q]] {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
// CHECK: %[[C:.+]] = arith.fptosi %[[Q]] : f64 to i32
// CHECK: cpn.fp_flag cast(%[[Q]]) -> %[[C]] {checks = 4 : i64, site = 21 : i64} : f64 -> i32
// CHECK: return %[[C]] : i32
func.func @fp_flag(%x: f64, %y: f64) -> i32 {
  %q = arith.divf %x, %y : f64
  cpn.fp_flag divide(%x, %y) -> %q {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
  %c = arith.fptosi %q : f64 to i32
  cpn.fp_flag cast(%q) -> %c {checks = 4 : i64, site = 21 : i64} : f64 -> i32
  return %c : i32
}
