// RUN: cpn-opt %s --pass-pipeline="builtin.module(cpn-lower-to-llvm{stop-after=bufferized})" | FileCheck %s

// A scan of a temporary is marked in place by convert-cpn-to-linalg and
// one-shot bufferization decides where it runs, once CSE and fusion are
// done. Stored as an output, the temporary is computed into the output's
// argument and the scan reads and writes that one buffer.
// CHECK-LABEL: func @scan_into_output
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg1 : memref<4x16xf64>)
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[I:.+]] = arith.index_cast %[[P]]
// CHECK: call @cpn_lib_cumsum_f8(%{{.+}}, %[[I]], %[[I]],
func.func @scan_into_output(%a: tensor<4x16xf64>, %out: memref<4x16xf64>) {
  %e = cpn.exp %a : tensor<4x16xf64> -> tensor<4x16xf64>
  %r = cpn.libcall "cumsum_f8"(%e) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x16xf64>, memref<4x16xf64>) -> ()
  return
}

// The temporary is also read by another op after the scan (here a second
// scan; in fuzzer 890:515 an op CSE merged with the temporary's producer
// after the lowering): each in-place scan gets a temporary of its own
// (cpn-unshare-inits recomputes it; bufferization would copy it), so that
// each reads the temporary's values, not the other's results.
// CHECK-LABEL: func @two_scans_of_one_temporary
// CHECK-COUNT-2: math.exp
// CHECK: call @cpn_lib_cumsum_f8(%{{.+}}, %[[X:.+]], %[[X]],
// CHECK: call @cpn_lib_cumprod_f8(%{{.+}}, %[[Y:.+]], %[[Y]],
func.func @two_scans_of_one_temporary(%a: tensor<4x16xf64>, %out: memref<4x16xf64>) {
  %e = cpn.exp %a : tensor<4x16xf64> -> tensor<4x16xf64>
  %r = cpn.libcall "cumsum_f8"(%e) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  %p = cpn.libcall "cumprod_f8"(%e) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  %s = cpn.add %r, %p : tensor<4x16xf64>, tensor<4x16xf64> -> tensor<4x16xf64>
  bufferization.materialize_in_destination %s in restrict writable %out : (tensor<4x16xf64>, memref<4x16xf64>) -> ()
  return
}

// A scan of an argument is not in place: it reads the argument where it is.
// CHECK-LABEL: func @scan_of_an_argument
// CHECK: call @cpn_lib_cumsum_f8(%{{.+}}, %[[O:.+]], %[[A:.+]], %{{.+}}, %{{.+}})
func.func @scan_of_an_argument(%a: tensor<4x16xf64>, %out: memref<4x16xf64>) {
  %r = cpn.libcall "cumsum_f8"(%a) {args = array<i64>} : (tensor<4x16xf64>) -> tensor<4x16xf64>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<4x16xf64>, memref<4x16xf64>) -> ()
  return
}
