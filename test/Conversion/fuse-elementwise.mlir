// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-elementwise))" | FileCheck %s
// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-elementwise{max-producer-ops=1}))" | FileCheck %s --check-prefix=BOUNDED

// %d (exp of the input) feeds two results. Upstream fusion keeps it as a
// temporary; this pass recomputes it in both consumers: two generics, each
// reading only the input, and no generic producing %d.
// CHECK-LABEL: func @two_uses
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// With a bound below the producer's size, the producer stays.
// BOUNDED-LABEL: func @two_uses
// BOUNDED-COUNT-3: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @two_uses(%x: tensor<8xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %e = tensor.empty() : tensor<8xf64>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %v = math.exp %a : f64
    linalg.yield %v : f64
  } -> tensor<8xf64>
  %call = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%d, %x : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %v = arith.mulf %a, %b : f64
    linalg.yield %v : f64
  } -> tensor<8xf64>
  %put = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %v = arith.negf %a : f64
    linalg.yield %v : f64
  } -> tensor<8xf64>
  return %call, %put : tensor<8xf64>, tensor<8xf64>
}
