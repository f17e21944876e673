// RUN: cpn-opt %s -cpn-early-dealloc | FileCheck %s

// Each temporary is freed right after its last use (through a subview), so the
// second allocation can reuse the first one's memory.
// CHECK-LABEL: func @two_temporaries
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: linalg.copy ins(%[[A]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[B:.+]] = memref.alloc
// CHECK: linalg.copy ins(%[[B]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @two_temporaries(%in: memref<4xf64>, %out: memref<6xf64>) {
  %a = memref.alloc() : memref<4xf64>
  linalg.copy ins(%in : memref<4xf64>) outs(%a : memref<4xf64>)
  %s = memref.subview %out[1] [4] [1] : memref<6xf64> to memref<4xf64, strided<[1], offset: 1>>
  linalg.copy ins(%a : memref<4xf64>) outs(%s : memref<4xf64, strided<[1], offset: 1>>)
  %b = memref.alloc() : memref<4xf64>
  linalg.copy ins(%s : memref<4xf64, strided<[1], offset: 1>>) outs(%b : memref<4xf64>)
  linalg.copy ins(%b : memref<4xf64>) outs(%in : memref<4xf64>)
  memref.dealloc %a : memref<4xf64>
  memref.dealloc %b : memref<4xf64>
  return
}

// A buffer whose pointer is passed on as an integer stays alive until the
// call that receives it.
// CHECK-LABEL: func @pointer_escapes_to_call
// CHECK: call @use
// CHECK-NEXT: memref.dealloc
func.func private @use(i64)
func.func @pointer_escapes_to_call() {
  %a = memref.alloc() : memref<4xf64>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf64> -> index
  %i = arith.index_cast %p : index to i64
  %c = arith.constant 0 : i64
  call @use(%i) : (i64) -> ()
  memref.dealloc %a : memref<4xf64>
  return
}
