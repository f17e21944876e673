// RUN: cpn-opt %s -cpn-unshare-inits | FileCheck %s
// RUN: cpn-opt %s -cpn-unshare-inits -eliminate-empty-tensors -one-shot-bufferize | FileCheck %s --check-prefix=BUF

// Two reductions of one array share a CSE'd accumulator init; after the pass
// each has its own fill of its own empty tensor.
// CHECK-LABEL: func @two_sums
// CHECK-COUNT-2: tensor.empty
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
// After bufferization each sum accumulates straight into its own output.
// BUF-LABEL: func @two_sums
// BUF-NOT: memref.alloc
// BUF: linalg.fill ins(%{{.+}}) outs(%arg1
// BUF: linalg.fill ins(%{{.+}}) outs(%arg2
// BUF: linalg.generic {{.*}} outs(%arg1
// BUF: linalg.generic {{.*}} outs(%arg2
#m = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
#r = affine_map<(d0, d1) -> (d0)>
func.func @two_sums(%a: memref<3x3xf64>, %o1: memref<3xf64>, %o2: memref<3xf64>) {
  %cst = arith.constant 0.0 : f64
  %t = bufferization.to_tensor %a restrict : memref<3x3xf64> to tensor<3x3xf64>
  %e = tensor.empty() : tensor<3xf64>
  %f = linalg.fill ins(%cst : f64) outs(%e : tensor<3xf64>) -> tensor<3xf64>
  %s0 = linalg.generic {indexing_maps = [#m, #c], iterator_types = ["reduction", "parallel"]}
      ins(%t : tensor<3x3xf64>) outs(%f : tensor<3xf64>) {
  ^bb0(%in: f64, %out: f64):
    %x = arith.addf %out, %in : f64
    linalg.yield %x : f64
  } -> tensor<3xf64>
  %s1 = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<3x3xf64>) outs(%f : tensor<3xf64>) {
  ^bb0(%in: f64, %out: f64):
    %x = arith.addf %out, %in : f64
    linalg.yield %x : f64
  } -> tensor<3xf64>
  bufferization.materialize_in_destination %s0 in restrict writable %o1 : (tensor<3xf64>, memref<3xf64>) -> ()
  bufferization.materialize_in_destination %s1 in restrict writable %o2 : (tensor<3xf64>, memref<3xf64>) -> ()
  return
}

// Two concatenations start from one CSE'd splat and write into it in place:
// each chain gets its own splat, so that each output is written separately.
// CHECK-LABEL: func @two_chains
// CHECK-COUNT-2: linalg.generic
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
// Bufferized, each chain fills and updates its own output (no temporary):
// BUF-LABEL: func @two_chains
// BUF-NOT: memref.alloc
// BUF: outs(%arg3
// BUF: outs(%arg4
// BUF: memref.subview %arg3[1] [4] [1]
// BUF: memref.subview %arg4[1] [4] [1]
#s = affine_map<(d0) -> ()>
#i = affine_map<(d0) -> (d0)>
func.func @two_chains(%z: memref<f64>, %x: memref<4xf64>, %y: memref<4xf64>,
                      %o1: memref<6xf64>, %o2: memref<6xf64>) {
  %zt = bufferization.to_tensor %z restrict : memref<f64> to tensor<f64>
  %xt = bufferization.to_tensor %x restrict : memref<4xf64> to tensor<4xf64>
  %yt = bufferization.to_tensor %y restrict : memref<4xf64> to tensor<4xf64>
  %e = tensor.empty() : tensor<6xf64>
  %splat = linalg.generic {indexing_maps = [#s, #i], iterator_types = ["parallel"]}
      ins(%zt : tensor<f64>) outs(%e : tensor<6xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<6xf64>
  %a = tensor.insert_slice %xt into %splat[1] [4] [1] : tensor<4xf64> into tensor<6xf64>
  %b = tensor.insert_slice %yt into %splat[1] [4] [1] : tensor<4xf64> into tensor<6xf64>
  bufferization.materialize_in_destination %a in restrict writable %o1 : (tensor<6xf64>, memref<6xf64>) -> ()
  bufferization.materialize_in_destination %b in restrict writable %o2 : (tensor<6xf64>, memref<6xf64>) -> ()
  return
}

// An empty tensor nothing uses (left by a rewrite before canonicalization) is
// left alone: the pass clones only values with two uses or more.
// CHECK-LABEL: func @unused_empty
// CHECK: tensor.empty
// CHECK-NEXT: return
func.func @unused_empty() {
  %e = tensor.empty() : tensor<4xf64>
  return
}

// -----

// A splat that an insert chain writes into and that is also stored as an
// output: the chain gets its own splat.
// CHECK-LABEL: func @stored_and_written
// CHECK-COUNT-2: linalg.generic
// CHECK: tensor.insert_slice
func.func @stored_and_written(%z: tensor<f64>, %v: tensor<6xf64>, %o: memref<7xf64>) -> tensor<7xf64> {
  %e = tensor.empty() : tensor<7xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%z : tensor<f64>) outs(%e : tensor<7xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<7xf64>
  %i = tensor.insert_slice %v into %s[1] [6] [1] : tensor<6xf64> into tensor<7xf64>
  bufferization.materialize_in_destination %s in restrict writable %o : (tensor<7xf64>, memref<7xf64>) -> ()
  return %i : tensor<7xf64>
}

// Two stacks that CSE merged up to their first row (np.stack([a, a]) and
// np.stack([a, b])): both second rows were inserted into the one insert_slice
// of the first row, and eliminate-empty-tensors put that shared row into the
// first output's buffer, so the second output read the first one's rows. The
// shared insert_slice and the splat it writes into are cloned per chain.
// CHECK-LABEL: func @shared_first_row
// CHECK-COUNT-2: linalg.generic
// CHECK: %[[R1:.+]] = tensor.insert_slice %arg1 into %{{.+}}[0, 0]
// CHECK: %[[R2:.+]] = tensor.insert_slice %arg1 into %{{.+}}[0, 0]
// CHECK-DAG: tensor.insert_slice %arg1 into %[[R1]][1, 0]
// CHECK-DAG: tensor.insert_slice %arg2 into %[[R2]][1, 0]
// BUF-LABEL: func @shared_first_row
// BUF-NOT: memref.copy %arg3, %arg4
func.func @shared_first_row(%z: tensor<f64>, %a: tensor<2xf64>, %b: tensor<2xf64>,
                            %o1: memref<2x2xf64>, %o2: memref<2x2xf64>) {
  %e = tensor.empty() : tensor<2x2xf64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%z : tensor<f64>) outs(%e : tensor<2x2xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<2x2xf64>
  %r0 = tensor.insert_slice %a into %s[0, 0] [1, 2] [1, 1] : tensor<2xf64> into tensor<2x2xf64>
  %x = tensor.insert_slice %a into %r0[1, 0] [1, 2] [1, 1] : tensor<2xf64> into tensor<2x2xf64>
  %y = tensor.insert_slice %b into %r0[1, 0] [1, 2] [1, 1] : tensor<2xf64> into tensor<2x2xf64>
  bufferization.materialize_in_destination %x in restrict writable %o1 : (tensor<2x2xf64>, memref<2x2xf64>) -> ()
  bufferization.materialize_in_destination %y in restrict writable %o2 : (tensor<2x2xf64>, memref<2x2xf64>) -> ()
  return
}

// A matmul stored as an output and written into by an update chain (a1 =
// inner(a0, a0); np.maximum(a1, a1, out=a0), folded to a1; a0[::2] = 1): the
// chain writes into a copy, never into the stored product.
// CHECK-LABEL: func @stored_matmul_updated
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: %[[C:.+]] = linalg.copy ins(%[[P]]
// CHECK: tensor.insert_slice %{{.+}} into %[[C]]
// CHECK: materialize_in_destination %[[P]]
func.func @stored_matmul_updated(%a: tensor<3x3xf64>, %v: tensor<1x3xf64>,
                                 %o1: memref<3x3xf64>, %o2: memref<3x3xf64>) {
  %e = tensor.empty() : tensor<3x3xf64>
  %p = linalg.matmul ins(%a, %a : tensor<3x3xf64>, tensor<3x3xf64>) outs(%e : tensor<3x3xf64>) -> tensor<3x3xf64>
  %u = tensor.insert_slice %v into %p[0, 0] [1, 3] [1, 1] : tensor<1x3xf64> into tensor<3x3xf64>
  bufferization.materialize_in_destination %p in restrict writable %o1 : (tensor<3x3xf64>, memref<3x3xf64>) -> ()
  bufferization.materialize_in_destination %u in restrict writable %o2 : (tensor<3x3xf64>, memref<3x3xf64>) -> ()
  return
}

// One matmul (CSE merged `a6 = a1 @ x` and `a4 = a1 @ x`) that two update
// chains write into (`a6 += 1; a4[:] = 5`), each stored: the second chain
// writes into a copy, so that bufferized neither output reads the other's
// buffer (a4 read a6's values).
// CHECK-LABEL: func @matmul_updated_twice
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: %[[C:.+]] = linalg.copy ins(%[[P]]
// CHECK-DAG: tensor.insert_slice %{{.+}} into %[[P]]
// CHECK-DAG: tensor.insert_slice %{{.+}} into %[[C]]
// BUF-LABEL: func @matmul_updated_twice
// BUF: linalg.matmul {{.*}} outs(%[[M:arg[45]]]
// BUF: linalg.copy ins(%[[M]] {{.*}} outs(%[[N:arg[45]]]
// BUF-NOT: memref.copy %[[M]], %[[N]]
// BUF-NOT: memref.copy %[[N]], %[[M]]
// BUF: return
func.func @matmul_updated_twice(%a: tensor<2x3xf64>, %x: tensor<3x1xf64>, %v: tensor<2xf64>,
                                %w: tensor<2xf64>, %o1: memref<2x1xf64>, %o2: memref<2x1xf64>) {
  %e = tensor.empty() : tensor<2x1xf64>
  %p = linalg.matmul ins(%a, %x : tensor<2x3xf64>, tensor<3x1xf64>) outs(%e : tensor<2x1xf64>) -> tensor<2x1xf64>
  %u1 = tensor.insert_slice %v into %p[0, 0] [2, 1] [1, 1] : tensor<2xf64> into tensor<2x1xf64>
  %u2 = tensor.insert_slice %w into %p[0, 0] [2, 1] [1, 1] : tensor<2xf64> into tensor<2x1xf64>
  bufferization.materialize_in_destination %u1 in restrict writable %o1 : (tensor<2x1xf64>, memref<2x1xf64>) -> ()
  bufferization.materialize_in_destination %u2 in restrict writable %o2 : (tensor<2x1xf64>, memref<2x1xf64>) -> ()
  return
}

// An in-place library call (np.add.at into `a5 = a4.copy()`, the copy folded
// by canonicalize) writes into the value of a generic that is also stored as
// another output: the call gets its own clone, so that the stored output
// keeps the value from before the call.
// CHECK-LABEL: func @in_place_call_beside_a_stored_output
// CHECK: %[[B:.+]] = linalg.generic
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: cpn.libcall "at_add_i8"(%[[B]],
// CHECK: bufferization.materialize_in_destination %[[A]] in restrict writable %arg3
// Bufferized, the call's operand is computed into the call's output and the
// stored value into its own:
// BUF-LABEL: func @in_place_call_beside_a_stored_output
// BUF: outs(%arg2
// BUF: outs(%arg3
// BUF: call @cpn_lib_at_add_i8
#i1 = affine_map<(d0) -> (d0)>
func.func @in_place_call_beside_a_stored_output(%x: memref<3xi64>, %i: memref<1xi64>,
    %o1: memref<3xi64>, %o2: memref<3xi64>) {
  %xt = bufferization.to_tensor %x restrict : memref<3xi64> to tensor<3xi64>
  %it = bufferization.to_tensor %i restrict : memref<1xi64> to tensor<1xi64>
  %e = tensor.empty() : tensor<3xi64>
  %a = linalg.generic {indexing_maps = [#i1, #i1], iterator_types = ["parallel"]}
      ins(%xt : tensor<3xi64>) outs(%e : tensor<3xi64>) {
  ^bb0(%in: i64, %out: i64):
    %d = arith.addi %in, %in : i64
    linalg.yield %d : i64
  } -> tensor<3xi64>
  %r = cpn.libcall "at_add_i8"(%a, %it, %it) {args = array<i64>, in_place} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  bufferization.materialize_in_destination %r in restrict writable %o1 : (tensor<3xi64>, memref<3xi64>) -> ()
  bufferization.materialize_in_destination %a in restrict writable %o2 : (tensor<3xi64>, memref<3xi64>) -> ()
  return
}

// A swapped pair of stencil buffers: `v[1:3] = f(u)`, then `u[1:3] = g(v)`
// reads the updated v before v is updated again. The update that a later
// update writes into is read first by a slice: bufferization orders that
// read before the write in place, so it is not cloned (a clone copied the
// whole of v and inserted again for every update of a loop).
// CHECK-LABEL: func @read_then_updated
// CHECK-COUNT-3: tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
// Bufferized, every update is one copy of its slice into its argument, in
// place (no whole-buffer copy, no temporary):
// BUF-LABEL: func @read_then_updated
// BUF-NOT: memref.alloc
// BUF-COUNT-3: memref.copy %{{.+}}, %subview
// BUF-NOT: memref.alloc
// BUF: return
func.func @read_then_updated(%u: memref<4xf64>, %v: memref<4xf64>, %f: tensor<2xf64>,
                             %h: tensor<2xf64>) {
  %ut = bufferization.to_tensor %u restrict writable : memref<4xf64> to tensor<4xf64>
  %vt = bufferization.to_tensor %v restrict writable : memref<4xf64> to tensor<4xf64>
  %v1 = tensor.insert_slice %f into %vt[1] [2] [1] : tensor<2xf64> into tensor<4xf64>
  %r = tensor.extract_slice %v1[0] [2] [1] : tensor<4xf64> to tensor<2xf64>
  %u1 = tensor.insert_slice %r into %ut[1] [2] [1] : tensor<2xf64> into tensor<4xf64>
  %v2 = tensor.insert_slice %h into %v1[1] [2] [1] : tensor<2xf64> into tensor<4xf64>
  bufferization.materialize_in_destination %u1 in restrict writable %u : (tensor<4xf64>, memref<4xf64>) -> ()
  bufferization.materialize_in_destination %v2 in restrict writable %v : (tensor<4xf64>, memref<4xf64>) -> ()
  return
}

// An output stored before a read of the value its update was written into
// (cpn-localize writes fresh outputs first): the store moves after the last
// read, through the views of that value, so that eliminate-empty-tensors'
// output buffer is not overwritten while the old value is still read.
// CHECK-LABEL: func @stored_before_a_read_of_its_base
// CHECK: %[[E:.+]] = tensor.extract_slice %[[G:.+]][1] [2] [1]
// CHECK: linalg.generic {{.*}} ins(%[[E]]
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %arg1
// CHECK-NEXT: bufferization.materialize_in_destination %{{.+}} in restrict writable %arg2
// BUF-LABEL: func @stored_before_a_read_of_its_base
// BUF: linalg.generic {{.*}} outs(%arg2
// BUF: memref.copy {{.*}}, %arg1
#id1 = affine_map<(d0) -> (d0)>
func.func @stored_before_a_read_of_its_base(%a: memref<4xf64>, %o1: memref<4xf64>,
                                            %o2: memref<2xf64>) {
  %t = bufferization.to_tensor %a restrict : memref<4xf64> to tensor<4xf64>
  %e = tensor.empty() : tensor<4xf64>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf64>) outs(%e : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %x = arith.addf %in, %in : f64
    linalg.yield %x : f64
  } -> tensor<4xf64>
  %cst = arith.constant 5.0 : f64
  %e1 = tensor.empty() : tensor<1xf64>
  %f = linalg.fill ins(%cst : f64) outs(%e1 : tensor<1xf64>) -> tensor<1xf64>
  %u = tensor.insert_slice %f into %g[0] [1] [1] : tensor<1xf64> into tensor<4xf64>
  bufferization.materialize_in_destination %u in restrict writable %o1 : (tensor<4xf64>, memref<4xf64>) -> ()
  %s = tensor.extract_slice %g[1] [2] [1] : tensor<4xf64> to tensor<2xf64>
  %e2 = tensor.empty() : tensor<2xf64>
  %h = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<2xf64>) outs(%e2 : tensor<2xf64>) {
  ^bb0(%in: f64, %out: f64):
    %x = arith.mulf %in, %in : f64
    linalg.yield %x : f64
  } -> tensor<2xf64>
  bufferization.materialize_in_destination %h in restrict writable %o2 : (tensor<2xf64>, memref<2xf64>) -> ()
  return
}

// The same, the old value read by a library call through its buffer: the
// store moves after the call.
// CHECK-LABEL: func @stored_before_a_library_call_reads_its_base
// CHECK: call @cpn_lib_read
// CHECK-NEXT: bufferization.materialize_in_destination %{{.+}} in restrict writable %arg1
// BUF-LABEL: func @stored_before_a_library_call_reads_its_base
// BUF: call @cpn_lib_read
// BUF: memref.copy {{.*}}, %arg1
func.func private @cpn_lib_read(memref<4xf64>, memref<4xf64, strided<[?], offset: ?>>)
func.func @stored_before_a_library_call_reads_its_base(%a: memref<4xf64>, %o1: memref<4xf64>,
                                                       %o2: memref<4xf64>) {
  %t = bufferization.to_tensor %a restrict : memref<4xf64> to tensor<4xf64>
  %e = tensor.empty() : tensor<4xf64>
  %g = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t : tensor<4xf64>) outs(%e : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %x = arith.addf %in, %in : f64
    linalg.yield %x : f64
  } -> tensor<4xf64>
  %cst = arith.constant 5.0 : f64
  %e1 = tensor.empty() : tensor<1xf64>
  %f = linalg.fill ins(%cst : f64) outs(%e1 : tensor<1xf64>) -> tensor<1xf64>
  %u = tensor.insert_slice %f into %g[0] [1] [1] : tensor<1xf64> into tensor<4xf64>
  bufferization.materialize_in_destination %u in restrict writable %o1 : (tensor<4xf64>, memref<4xf64>) -> ()
  %b = bufferization.to_buffer %g read_only : tensor<4xf64> to memref<4xf64, strided<[?], offset: ?>>
  func.call @cpn_lib_read(%o2, %b) : (memref<4xf64>, memref<4xf64, strided<[?], offset: ?>>) -> ()
  return
}
