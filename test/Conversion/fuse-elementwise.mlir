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

// %m (a comparison of two float64 arrays) is also a result of the function:
// it is computed into a buffer whatever the consumer does. Recomputing it in
// the consumer would read 16 bytes an element instead of the mask's one, so
// the consumer reads %m.
// CHECK-LABEL: func @kept_mask
// CHECK: %[[M:.*]] = linalg.generic
// CHECK: arith.cmpf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[M]] : tensor<8xi1>)
// CHECK-NOT: arith.cmpf
// CHECK: return
func.func @kept_mask(%x: tensor<8xf64>, %y: tensor<8xf64>) -> (tensor<8xi1>, tensor<8xi64>) {
  %e = tensor.empty() : tensor<8xi1>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: f64, %b: f64, %o: i1):
    %v = arith.cmpf une, %a, %b : f64
    linalg.yield %v : i1
  } -> tensor<8xi1>
  %e64 = tensor.empty() : tensor<8xi64>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%m : tensor<8xi1>) outs(%e64 : tensor<8xi64>) {
  ^bb0(%a: i1, %o: i64):
    %v = arith.extui %a : i1 to i64
    linalg.yield %v : i64
  } -> tensor<8xi64>
  return %m, %c : tensor<8xi1>, tensor<8xi64>
}

// The same kept producer, read by a consumer that reads its inputs anyway:
// fusing adds no bytes, and it fuses.
// CHECK-LABEL: func @kept_shared_inputs
// CHECK: linalg.generic
// CHECK: arith.cmpf
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<8xf64>, tensor<8xf64>)
// CHECK: arith.cmpf
// CHECK: arith.select
func.func @kept_shared_inputs(%x: tensor<8xf64>, %y: tensor<8xf64>) -> (tensor<8xi1>, tensor<8xf64>) {
  %e = tensor.empty() : tensor<8xi1>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xi1>) {
  ^bb0(%a: f64, %b: f64, %o: i1):
    %v = arith.cmpf une, %a, %b : f64
    linalg.yield %v : i1
  } -> tensor<8xi1>
  %ef = tensor.empty() : tensor<8xf64>
  %s = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %x, %y : tensor<8xi1>, tensor<8xf64>, tensor<8xf64>) outs(%ef : tensor<8xf64>) {
  ^bb0(%c: i1, %a: f64, %b: f64, %o: f64):
    %v = arith.select %c, %a, %b : f64
    linalg.yield %v : f64
  } -> tensor<8xf64>
  return %m, %s : tensor<8xi1>, tensor<8xf64>
}
