// RUN: cpn-opt %s -convert-cpn-to-linalg | FileCheck %s
// RUN: cpn-opt %s -cpn-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// np.gcd is Euclid's algorithm on magnitudes: an scf.while inside the
// element's body (lowered to branches with the rest of the loop nest).
// CHECK-LABEL: func @gcd
// CHECK: linalg.generic
// CHECK: scf.while
// CHECK: arith.cmpi ne
// CHECK: scf.condition
// CHECK: arith.remui
// CHECK: scf.yield
// LLVM-LABEL: llvm.func @gcd
// LLVM: llvm.urem
func.func @gcd(%a: memref<16xi32>, %b: memref<16xi32>, %out: memref<16xi32>) {
  %ta = bufferization.to_tensor %a restrict : memref<16xi32> to tensor<16xi32>
  %tb = bufferization.to_tensor %b restrict : memref<16xi32> to tensor<16xi32>
  %g = cpn.gcd %ta, %tb : tensor<16xi32>, tensor<16xi32> -> tensor<16xi32>
  bufferization.materialize_in_destination %g in restrict writable %out : (tensor<16xi32>, memref<16xi32>) -> ()
  return
}

// np.bitwise_count: the population count of |x|, as uint8.
// CHECK-LABEL: func @count
// CHECK: math.ctpop %{{.*}} : i64
// CHECK: arith.trunci %{{.*}} : i64 to i8
func.func @count(%a: tensor<8xi64>) -> tensor<8xi8> {
  %r = cpn.bitwise_count %a : tensor<8xi64> -> tensor<8xi8>
  return %r : tensor<8xi8>
}

// np.spacing: nextafter away from zero (libm), minus x.
// CHECK-LABEL: func @spacing
// CHECK: call @nextafter
// CHECK: arith.subf
func.func @spacing(%a: tensor<8xf64>) -> tensor<8xf64> {
  %r = cpn.spacing %a : tensor<8xf64> -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// ndarray.view(dtype) / getfield / byteswap: the element's bits as another
// type of the same width; the identity when the types are equal.
// CHECK-LABEL: func @bitcast
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK-LABEL: func @bitcast_back
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// LLVM-LABEL: llvm.func @bitcast_back
// LLVM: llvm.bitcast %{{.*}} : i16 to f16
func.func @bitcast(%a: tensor<8xf64>) -> tensor<8xi64> {
  %r = cpn.bitcast %a : tensor<8xf64> -> tensor<8xi64>
  return %r : tensor<8xi64>
}
func.func @bitcast_back(%a: memref<8xi16>, %out: memref<8xf16>) {
  %ta = bufferization.to_tensor %a restrict : memref<8xi16> to tensor<8xi16>
  %r = cpn.bitcast %ta : tensor<8xi16> -> tensor<8xf16>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<8xf16>, memref<8xf16>) -> ()
  return
}
