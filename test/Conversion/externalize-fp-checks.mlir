// RUN: cpn-opt %s -cpn-externalize-fp-checks | FileCheck %s

// The check functions cpn-lower-fp-flags outlined (cpn.fp_check) lose their
// bodies; the kernel and other functions keep theirs.

// CHECK-LABEL: func.func private @kernel_fp_check0(memref<4xf32>, memref<1xi32>)
// CHECK-SAME: cpn.fp_check
// CHECK-NOT: arith.addi
func.func private @kernel_fp_check0(%a: memref<4xf32>, %s: memref<1xi32>) attributes {cpn.fp_check, passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %v = memref.load %s[%c0] : memref<1xi32>
  %w = arith.addi %v, %one : i32
  memref.store %w, %s[%c0] : memref<1xi32>
  return
}

// CHECK-LABEL: func.func @kernel(
// CHECK: call @kernel_fp_check0
// CHECK: return
func.func @kernel(%a: memref<4xf32>, %s: memref<1xi32>) {
  call @kernel_fp_check0(%a, %s) : (memref<4xf32>, memref<1xi32>) -> ()
  return
}

// CHECK-LABEL: func.func private @helper(
// CHECK: arith.muli
func.func private @helper(%x: i32) -> i32 {
  %y = arith.muli %x, %x : i32
  return %y : i32
}
