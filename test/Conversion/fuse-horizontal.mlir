// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-horizontal))" | FileCheck %s
// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-horizontal{max-fused-ops=1}))" | FileCheck %s --check-prefix=SMALL
// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-elementwise,cpn-fuse-horizontal,cpn-fuse-elementwise),canonicalize)" | FileCheck %s --check-prefix=FUSED

#id = affine_map<(d0) -> (d0)>

// Two loops over one domain that read %x: one loop with both results.
// CHECK-LABEL: func @siblings
// CHECK: %[[J:.+]]:2 = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg0 :
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[J]]#0, %[[J]]#1
// SMALL-LABEL: func @siblings
// SMALL-COUNT-2: linalg.generic
func.func @siblings(%x: tensor<64xf64>, %y: tensor<64xf64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %e0 = tensor.empty() : tensor<64xf64>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<64xf64>, tensor<64xf64>) outs(%e0 : tensor<64xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %s = arith.addf %p, %q : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %e1 = tensor.empty() : tensor<64xf64>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e1 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %m = arith.mulf %p, %p : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  return %a, %b : tensor<64xf64>, tensor<64xf64>
}

// The second reads the first: two loops (vertical fusion's business).
// CHECK-LABEL: func @dependent
// CHECK-COUNT-2: linalg.generic
func.func @dependent(%x: tensor<64xf64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %e0 = tensor.empty() : tensor<64xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e0 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %s = arith.addf %p, %p : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %e1 = tensor.empty() : tensor<64xf64>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %a : tensor<64xf64>, tensor<64xf64>) outs(%e1 : tensor<64xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %m = arith.mulf %p, %q : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  return %a, %b : tensor<64xf64>, tensor<64xf64>
}

// Other domains, no input in common, or a value written into an array (an
// update, left to cpn-ping-pong-updates): separate loops.
// CHECK-LABEL: func @apart
// CHECK-COUNT-4: linalg.generic
func.func @apart(%x: tensor<64xf64>, %z: tensor<32xf64>, %w: tensor<64xf64>, %u: tensor<128xf64>)
    -> (tensor<64xf64>, tensor<32xf64>, tensor<64xf64>, tensor<128xf64>) {
  %e0 = tensor.empty() : tensor<64xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e0 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %s = arith.addf %p, %p : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %e1 = tensor.empty() : tensor<32xf64>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%z : tensor<32xf64>) outs(%e1 : tensor<32xf64>) {
  ^bb0(%p: f64, %o: f64):
    %m = arith.mulf %p, %p : f64
    linalg.yield %m : f64
  } -> tensor<32xf64>
  %e2 = tensor.empty() : tensor<64xf64>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%w : tensor<64xf64>) outs(%e2 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %m = arith.subf %p, %p : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  %e3 = tensor.empty() : tensor<64xf64>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e3 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %m = arith.divf %p, %p : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  %upd = tensor.insert_slice %d into %u[0] [64] [1] : tensor<64xf64> into tensor<128xf64>
  return %a, %b, %c, %upd : tensor<64xf64>, tensor<32xf64>, tensor<64xf64>, tensor<128xf64>
}

// Black-Scholes' shape: d (expensive: exp) feeds two results. Vertical
// fusion alone keeps d as a temporary (it is too big to recompute twice);
// joined, its consumers are one loop and d fuses into it.
// FUSED-LABEL: func @shared_producer
// FUSED: linalg.generic
// FUSED-SAME: ins(%arg0 : tensor<64xf64>)
// FUSED-COUNT-3: math.exp
// FUSED-NOT: linalg.generic
func.func @shared_producer(%x: tensor<64xf64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %e = tensor.empty() : tensor<64xf64>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %0 = math.exp %p : f64
    %1 = math.exp %0 : f64
    %2 = math.exp %1 : f64
    linalg.yield %2 : f64
  } -> tensor<64xf64>
  %e0 = tensor.empty() : tensor<64xf64>
  %call = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%d, %x : tensor<64xf64>, tensor<64xf64>) outs(%e0 : tensor<64xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %s = arith.subf %p, %q : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %e1 = tensor.empty() : tensor<64xf64>
  %put = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%d, %x : tensor<64xf64>, tensor<64xf64>) outs(%e1 : tensor<64xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %s = arith.subf %q, %p : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  return %call, %put : tensor<64xf64>, tensor<64xf64>
}

// The second loop's body uses a scalar computed after the first loop: it
// cannot move up to join it.
// CHECK-LABEL: func @captures_later_value
// CHECK-COUNT-2: linalg.generic
// FUSED-LABEL: func @captures_later_value
func.func @captures_later_value(%x: tensor<64xf64>, %t: tensor<f64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %e0 = tensor.empty() : tensor<64xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e0 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %s = arith.addf %p, %p : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  %c = tensor.extract %t[] : tensor<f64>
  %e1 = tensor.empty() : tensor<64xf64>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e1 : tensor<64xf64>) {
  ^bb0(%p: f64, %o: f64):
    %m = arith.mulf %p, %c : f64
    linalg.yield %m : f64
  } -> tensor<64xf64>
  return %a, %b : tensor<64xf64>, tensor<64xf64>
}
