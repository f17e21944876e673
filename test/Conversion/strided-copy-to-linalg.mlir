// RUN: cpn-opt %s -cpn-strided-copy-to-linalg | FileCheck %s

// CHECK-LABEL: func @strided
// CHECK: linalg.copy ins(%{{.+}} : memref<4x4xf64>) outs(%{{.+}} : memref<4x4xf64, strided<[6, 1], offset: 7>>)
// CHECK-NOT: memref.copy
func.func @strided(%a: memref<4x4xf64>, %b: memref<6x6xf64>) {
  %s = memref.subview %b[1, 1] [4, 4] [1, 1] : memref<6x6xf64> to memref<4x4xf64, strided<[6, 1], offset: 7>>
  memref.copy %a, %s : memref<4x4xf64> to memref<4x4xf64, strided<[6, 1], offset: 7>>
  return
}

// Contiguous copies stay memref.copy (one memcpy).
// CHECK-LABEL: func @contiguous
// CHECK: memref.copy
func.func @contiguous(%a: memref<6x6xf64>, %b: memref<6x6xf64>) {
  memref.copy %a, %b : memref<6x6xf64> to memref<6x6xf64>
  return
}
