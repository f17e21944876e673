// RUN: cpn-opt %s -cpn-lower-to-llvm | FileCheck %s

// A kernel whose view and update offsets are arguments (one i64 each, in a
// buffer after the inputs), as the Engine builds it, through the whole JIT
// pipeline: the subviews at run-time offsets expand to affine maps that are
// lowered too (no cast or affine op is left for the LLVM translation).
// CHECK: llvm.func @kernel(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-NOT: unrealized_conversion_cast
// CHECK-NOT: affine.
// CHECK-NOT: cpn.
func.func @kernel(%arg0: memref<8x16xf64>, %offsets: memref<2xi64>, %out: memref<8x16xf64>) {
  %t = bufferization.to_tensor %arg0 restrict : memref<8x16xf64> to tensor<8x16xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o0 = memref.load %offsets[%c0] : memref<2xi64>
  %i0 = arith.index_cast %o0 : i64 to index
  %o1 = memref.load %offsets[%c1] : memref<2xi64>
  %i1 = arith.index_cast %o1 : i64 to index
  %r = cpn.view %t [%i0] {offset = 16 : i64, strides = array<i64: 1>} : tensor<8x16xf64> -> tensor<16xf64>
  %s = cpn.add %r, %r : tensor<16xf64>, tensor<16xf64> -> tensor<16xf64>
  %u = cpn.update %t, %s [%i1] {offset = 32 : i64, strides = array<i64: 1>} : tensor<8x16xf64>, tensor<16xf64> -> tensor<8x16xf64>
  bufferization.materialize_in_destination %u in restrict writable %out : (tensor<8x16xf64>, memref<8x16xf64>) -> ()
  return
}
