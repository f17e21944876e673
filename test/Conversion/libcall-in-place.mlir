// RUN: cpn-opt %s -convert-cpn-to-linalg -one-shot-bufferize="bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// An in-place libcall (np.put, ufunc.at) stays a tensor op through
// convert-cpn-to-linalg; one-shot bufferization passes its first operand's
// buffer as the output where nothing reads the old value afterwards.

// The old value is dead and the argument writable: no allocation, the
// argument is the output and the first input.
// CHECK-LABEL: func @dead
// CHECK-SAME: (%[[A:.+]]: memref<8xf64>
// CHECK-NOT: memref.alloc()
// CHECK-NOT: memref.copy
// CHECK-COUNT-2: memref.extract_aligned_pointer_as_index %[[A]] :
// CHECK-NOT: memref.alloc()
// CHECK: call @cpn_lib_put_f8
// CHECK: return %[[A]]
func.func @dead(%a: tensor<8xf64>, %i: tensor<3xi64>, %v: tensor<3xf64>) -> tensor<8xf64> {
  %r = cpn.libcall "put_f8"(%a, %i, %v) {args = array<i64: 2>, in_place} : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// The old value is read after the call: the call writes a copy.
// CHECK-LABEL: func @live
// CHECK-SAME: (%[[A:.+]]: memref<8xf64>
// CHECK: %[[C:.+]] = memref.alloc() {{.*}} : memref<8xf64>
// CHECK: memref.copy %[[A]], %[[C]]
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: call @cpn_lib_at_add_f8
// CHECK: return %[[C]], %[[A]]
func.func @live(%a: tensor<8xf64>, %i: tensor<3xi64>, %v: tensor<3xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %r = cpn.libcall "at_add_f8"(%a, %i, %v) {args = array<i64>, in_place} : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
  return %r, %a : tensor<8xf64>, tensor<8xf64>
}

// A read-only argument (an input nobody donated) is never written.
// CHECK-LABEL: func @readonly
// CHECK: %[[C:.+]] = memref.alloc() {{.*}} : memref<8xf64>
// CHECK: memref.copy
// CHECK: call @cpn_lib_put_f8
func.func @readonly(%a: tensor<8xf64> {bufferization.writable = false}, %i: tensor<3xi64>, %v: tensor<3xf64>) -> tensor<8xf64> {
  %r = cpn.libcall "put_f8"(%a, %i, %v) {args = array<i64: 2>, in_place} : (tensor<8xf64>, tensor<3xi64>, tensor<3xf64>) -> tensor<8xf64>
  return %r : tensor<8xf64>
}
