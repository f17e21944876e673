// RUN: cpn-opt %s -split-input-file -cpn-localize="ranks=2 rank=0 threshold=1000" | FileCheck %s --check-prefix=BLOCK
// RUN: not cpn-opt %s -split-input-file -cpn-localize="ranks=2 rank=0 threshold=1000 part=1" 2>&1 | FileCheck %s --check-prefix=ERR

// A stencil written in place into its own input (a donated output read at
// the rows beside those it writes) with a sum: no interior is split off
// (no `cpn.border`), and asking for a part is an error.
// BLOCK-LABEL: func.func @in_place
// BLOCK-NOT: cpn.border
// BLOCK: return
// ERR: cpn-localize: part=1 of a kernel with no interior to split off
func.func @in_place(%arg0: memref<100x100xf64>, %arg1: memref<f64>) {
  %u = bufferization.to_tensor %arg0 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %c = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %c {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %t = cpn.reduce sum %u1 {axes = array<i64: 0, 1>} : tensor<100x100xf64> -> tensor<f64>
  bufferization.materialize_in_destination %t in restrict writable %arg1 : (tensor<f64>, memref<f64>) -> ()
  %d = bufferization.materialize_in_destination %u1 in %u : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg0 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}

// -----

// v written in place while another output reads v's rows beside the ones
// written (the old v one row down): a part would read rows another part
// has already updated. No `cpn.border`.
// BLOCK-LABEL: func.func @donor_read_shifted
// BLOCK-NOT: cpn.border
// BLOCK: return
// ERR: cpn-localize: part=1 of a kernel with no interior to split off
func.func @donor_read_shifted(%arg0: memref<100x100xf64>, %arg1: memref<100x100xf64>, %arg2: memref<98x100xf64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %v = bufferization.to_tensor %arg1 restrict writable : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %v1 = cpn.update %v, %a {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %vd = cpn.view %v {offset = 200 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x100xf64>
  %w = cpn.add %vd, %vd : tensor<98x100xf64>, tensor<98x100xf64> -> tensor<98x100xf64>
  bufferization.materialize_in_destination %w in restrict writable %arg2 : (tensor<98x100xf64>, memref<98x100xf64>) -> ()
  %d = bufferization.materialize_in_destination %v1 in %v : (tensor<100x100xf64>, tensor<100x100xf64>) -> tensor<100x100xf64>
  bufferization.materialize_in_destination %d in restrict writable %arg1 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
