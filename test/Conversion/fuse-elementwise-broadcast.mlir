// RUN: cpn-opt %s --pass-pipeline="builtin.module(func.func(cpn-fuse-elementwise{max-producer-ops=2}))" | FileCheck %s --check-prefix=BIG

// A producer bigger than max-producer-ops is not recomputed for every element
// of a broadcast, even with a single use; through an identity map it fuses.
// BIG-LABEL: func @no_recompute_across_broadcast
// BIG-COUNT-2: linalg.generic
// BIG-LABEL: func @fuse_through_identity
// BIG-COUNT-1: linalg.generic
// BIG-NOT: linalg.generic
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @no_recompute_across_broadcast(%x: tensor<8xf64>) -> tensor<8x16xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %p = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = math.exp %a : f64
    %1 = arith.mulf %0, %a : f64
    %2 = arith.addf %1, %0 : f64
    linalg.yield %2 : f64
  } -> tensor<8xf64>
  %e2 = tensor.empty() : tensor<8x16xf64>
  %r = linalg.generic {indexing_maps = [#row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8xf64>) outs(%e2 : tensor<8x16xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = arith.mulf %a, %a : f64
    linalg.yield %0 : f64
  } -> tensor<8x16xf64>
  return %r : tensor<8x16xf64>
}

func.func @fuse_through_identity(%x: tensor<8xf64>) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %p = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = math.exp %a : f64
    %1 = arith.mulf %0, %a : f64
    %2 = arith.addf %1, %0 : f64
    linalg.yield %2 : f64
  } -> tensor<8xf64>
  %e2 = tensor.empty() : tensor<8xf64>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf64>) outs(%e2 : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %0 = arith.mulf %a, %a : f64
    linalg.yield %0 : f64
  } -> tensor<8xf64>
  return %r : tensor<8xf64>
}

