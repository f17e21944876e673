// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=0 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s
// RUN: cpn-opt %s -cpn-localize="ranks=2 rank=1 threshold=1000" | cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{openmp=true bare-ptr=true})' | FileCheck %s

// `w = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1]); u[1:-1, 1:-1] = w` with w kept:
// two fresh outputs (planDonations does not donate u to a lone stencil
// update). A rank's program makes the stencil for w first and the rows of
// u it updates after it; cpn-ping-pong-updates builds the fresh u from
// those rows before the stencil (the slice moves up), else the IR would
// use a value before defining it.
// CHECK: llvm.func @kernel
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @kernel(%arg0: memref<100x100xf64>, %arg1: memref<98x98xf64>, %arg2: memref<100x100xf64>) {
  %u = bufferization.to_tensor %arg0 restrict : memref<100x100xf64> to tensor<100x100xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %w = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %w {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  bufferization.materialize_in_destination %w in restrict writable %arg1 : (tensor<98x98xf64>, memref<98x98xf64>) -> ()
  bufferization.materialize_in_destination %u1 in restrict writable %arg2 : (tensor<100x100xf64>, memref<100x100xf64>) -> ()
  return
}
