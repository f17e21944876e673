// RUN: cpn-opt %s -cpn-inline-alloca-scopes | FileCheck %s

// convert-scf-to-openmp wraps parallel bodies in memref.alloca_scope; one
// that allocates nothing on the stack is inlined (a call inside is fine:
// the callee allocates in its own frame), results included.
// CHECK-LABEL: func @calls
// CHECK-NOT: memref.alloca_scope
// CHECK: call @check
// CHECK: %[[R:.+]] = arith.addi
// CHECK: return %[[R]]
func.func private @check(index)
func.func @calls(%i: index) -> index {
  %r = memref.alloca_scope -> (index) {
    func.call @check(%i) : (index) -> ()
    %s = arith.addi %i, %i : index
    memref.alloca_scope.return %s : index
  }
  return %r : index
}

// A scope that bounds a stack allocation stays.
// CHECK-LABEL: func @allocates
// CHECK: memref.alloca_scope
// CHECK: memref.alloca
func.func @allocates(%x: f64) {
  memref.alloca_scope {
    %m = memref.alloca() : memref<4xf64>
    %c0 = arith.constant 0 : index
    memref.store %x, %m[%c0] : memref<4xf64>
  }
  return
}
