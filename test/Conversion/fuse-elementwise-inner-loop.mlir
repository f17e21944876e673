// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-elementwise))" | FileCheck %s

// A single-use producer with a transcendental function, read by a reduction
// whose inner loop (over x's columns) does not index it (`x.T @ sigmoid(z)`):
// fused, exp would run once per row outside the vectorized loop, a scalar
// call; it keeps a loop of its own. A cheap producer read the same way fuses.
// CHECK-LABEL: func @no_scalar_exp_in_outer_loop
// CHECK: math.exp
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-SAME: ["parallel", "reduction", "parallel"]
// CHECK-NOT: math.exp
// CHECK: linalg.yield
// CHECK-LABEL: func @cheap_producer_fuses
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
#blk2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#blk3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#part = affine_map<(d0, d1, d2) -> (d0, d2)>
#id2b = affine_map<(d0, d1) -> (d0, d1)>
func.func @no_scalar_exp_in_outer_loop(%x: tensor<4x64x32xf64>, %z: tensor<4x64xf64>) -> tensor<4x32xf64> {
  %e = tensor.empty() : tensor<4x64xf64>
  %p = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x64xf64>) outs(%e : tensor<4x64xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = math.exp %a : f64
    linalg.yield %0 : f64
  } -> tensor<4x64xf64>
  %zero = arith.constant 0.0 : f64
  %e2 = tensor.empty() : tensor<4x32xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e2 : tensor<4x32xf64>) -> tensor<4x32xf64>
  %r = linalg.generic {indexing_maps = [#blk3, #blk2, #part], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %p : tensor<4x64x32xf64>, tensor<4x64xf64>) outs(%f : tensor<4x32xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %0 = arith.mulf %a, %b : f64
    %1 = arith.addf %o, %0 : f64
    linalg.yield %1 : f64
  } -> tensor<4x32xf64>
  return %r : tensor<4x32xf64>
}

func.func @cheap_producer_fuses(%x: tensor<4x64x32xf64>, %z: tensor<4x64xf64>) -> tensor<4x32xf64> {
  %e = tensor.empty() : tensor<4x64xf64>
  %p = linalg.generic {indexing_maps = [#id2b, #id2b], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x64xf64>) outs(%e : tensor<4x64xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = arith.mulf %a, %a : f64
    linalg.yield %0 : f64
  } -> tensor<4x64xf64>
  %zero = arith.constant 0.0 : f64
  %e2 = tensor.empty() : tensor<4x32xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e2 : tensor<4x32xf64>) -> tensor<4x32xf64>
  %r = linalg.generic {indexing_maps = [#blk3, #blk2, #part], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %p : tensor<4x64x32xf64>, tensor<4x64xf64>) outs(%f : tensor<4x32xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %0 = arith.mulf %a, %b : f64
    %1 = arith.addf %o, %0 : f64
    linalg.yield %1 : f64
  } -> tensor<4x32xf64>
  return %r : tensor<4x32xf64>
}
