// RUN: cpn-opt %s -convert-cpn-to-linalg | FileCheck %s
// RUN: cpn-opt %s -cpn-lower-to-llvm | FileCheck %s --check-prefix=LLVM
// RUN: cpn-opt %s -convert-cpn-to-linalg -canonicalize | FileCheck %s --check-prefix=CANON

// Complex elements lower to the complex dialect inside the generic body; the
// parts are complex.re / complex.im, and cpn.complex builds a value from them.
// In the JIT's pipeline they end as LLVM struct {f64, f64} loads, stores and
// float arithmetic on the parts. A product is NumPy's array loop on the
// parts, fma(a, c, -bd) + i fma(a, d, bc) (complex.mul's lowering would
// recover infinities from NaNs).
// CHECK-LABEL: func @mul_conj
// CHECK: linalg.generic
// CHECK: complex.conj
// CHECK-NOT: complex.mul
// CHECK: %[[BD:.*]] = arith.mulf
// CHECK: math.fma
// CHECK: arith.negf %[[BD]]
// CHECK: math.fma
// CHECK: complex.create
// LLVM-LABEL: llvm.func @mul_conj
// LLVM-NOT: complex.
// LLVM: llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(f64, f64)>
// LLVM: llvm.intr.fma
// LLVM: llvm.store %{{.*}} : !llvm.struct<(f64, f64)>, !llvm.ptr
func.func @mul_conj(%a: memref<8xcomplex<f64>>, %b: memref<8xcomplex<f64>>, %out: memref<8xcomplex<f64>>) {
  %ta = bufferization.to_tensor %a restrict : memref<8xcomplex<f64>> to tensor<8xcomplex<f64>>
  %tb = bufferization.to_tensor %b restrict : memref<8xcomplex<f64>> to tensor<8xcomplex<f64>>
  %c = cpn.conjugate %ta : tensor<8xcomplex<f64>> -> tensor<8xcomplex<f64>>
  %r = cpn.multiply %c, %tb : tensor<8xcomplex<f64>>, tensor<8xcomplex<f64>> -> tensor<8xcomplex<f64>>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<8xcomplex<f64>>, memref<8xcomplex<f64>>) -> ()
  return
}

// CHECK-LABEL: func @parts
// CHECK: complex.re
// CHECK: complex.im
// CHECK: complex.create
func.func @parts(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %re = cpn.real %a : tensor<4xcomplex<f32>> -> tensor<4xf32>
  %im = cpn.imag %a : tensor<4xcomplex<f32>> -> tensor<4xf32>
  %r = cpn.complex %im, %re : tensor<4xf32>, tensor<4xf32> -> tensor<4xcomplex<f32>>
  return %r : tensor<4xcomplex<f32>>
}

// np.absolute of complex is a float; np.less is NumPy's lexicographic order.
// CHECK-LABEL: func @abs_less
// CHECK: complex.abs
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf oeq
func.func @abs_less(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f64>>) -> (tensor<4xf64>, tensor<4xi1>) {
  %m = cpn.absolute %a : tensor<4xcomplex<f64>> -> tensor<4xf64>
  %l = cpn.less %a, %b : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>> -> tensor<4xi1>
  return %m, %l : tensor<4xf64>, tensor<4xi1>
}

// A complex sum starts from complex 0.
// CHECK-LABEL: func @sum
// CHECK: complex.constant [0.000000e+00, 0.000000e+00] : complex<f64>
// CHECK: arith.addf
func.func @sum(%a: tensor<64x64xcomplex<f64>>) -> tensor<64xcomplex<f64>> {
  %s = cpn.reduce sum %a {axes = array<i64: 1>} : tensor<64x64xcomplex<f64>> -> tensor<64xcomplex<f64>>
  return %s : tensor<64xcomplex<f64>>
}

// float16 ufuncs compute in float32 and round once, as NumPy's half loops.
// CHECK-LABEL: func @half
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @half(%a: tensor<4xf16>) -> tensor<4xf16> {
  %r = cpn.exp %a : tensor<4xf16> -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// sin, tanh and log1p are NumPy's formulas on the parts (npy_csin as
// -i sinh(iz), with C99's values for infinite and NaN parts; ctanh by
// Kahan's formula; log(hypot(x + 1, y)) + i atan2(y, x + 1)), not the
// complex dialect's ops (complex.log1p gives 0 at -1+0j, NumPy -inf+0j).
// CHECK-LABEL: func @trig
// CHECK-NOT: complex.sin
// CHECK: call @sinh
// CHECK: call @cosh
// CHECK: arith.negf
// CHECK-NOT: complex.tanh
// CHECK: math.tan
// CHECK-NOT: complex.log1p
// CHECK: call @hypotf
// CHECK: math.atan2
func.func @trig(%a: tensor<4xcomplex<f64>>, %b: tensor<4xcomplex<f32>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>) {
  %s = cpn.sin %a : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  %t = cpn.tanh %a : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  %l = cpn.log1p %b : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  return %s, %t, %l : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>
}

// exp, log and sqrt are glibc's cexp, clog and csqrt on the parts (which
// NumPy calls), not the complex dialect's ops: exp splits e^x past e^709 and
// keeps a zero imaginary part; log takes one math.log (of 1 + u near |z| = 1,
// for log1p(u), else of |z|); sqrt is Kahan's with libm's hypot. Each selects
// C99 Annex G's values for infinite and NaN parts.
// CHECK-LABEL: func @exp_log_sqrt
// CHECK-NOT: complex.exp
// CHECK: math.exp
// CHECK: math.cos
// CHECK: math.sin
// CHECK-NOT: complex.log
// CHECK: math.log
// CHECK-NOT: math.log
// CHECK: math.atan2
// CHECK-NOT: complex.sqrt
// CHECK: call @hypot
// CHECK: math.sqrt
func.func @exp_log_sqrt(%a: tensor<4xcomplex<f64>>) -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>) {
  %e = cpn.exp %a : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  %l = cpn.log %a : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  %f = cpn.cast %a : tensor<4xcomplex<f64>> -> tensor<4xcomplex<f32>>
  %s = cpn.sqrt %f : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  return %e, %l, %s : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>, tensor<4xcomplex<f32>>
}

// Complex add/subtract are component-wise arith ops, so that no fold assumes
// exact algebra: x + (x - x) keeps its subtraction (inf - inf is NaN).
// CHECK-LABEL: func @add_of_difference
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: arith.addf
// CANON-LABEL: func @add_of_difference
// CANON: arith.subf
// CANON: arith.addf
func.func @add_of_difference(%a: tensor<4xcomplex<f64>>) -> tensor<4xcomplex<f64>> {
  %d = cpn.subtract %a, %a : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  %s = cpn.add %a, %d : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>> -> tensor<4xcomplex<f64>>
  return %s : tensor<4xcomplex<f64>>
}
