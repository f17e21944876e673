// RUN: cpn-opt %s -split-input-file -convert-cpn-to-linalg | FileCheck %s
// RUN: cpn-opt %s -split-input-file | cpn-opt -split-input-file | FileCheck %s --check-prefix=ROUND

// Views and updates whose element offset is a kernel argument (the Engine's
// kernels with offset arguments: `A[i, :]`, `A[:, j]` in a loop): the
// `offset` attribute is the one recorded, the operand the one used.

// A row read and a row written at run-time offsets: the base index of each
// dimension is the offset divided by the row length (and its remainder).
// CHECK-LABEL: func @rows
// CHECK: %[[R:.+]] = arith.divui %arg1, %{{.+}} : index
// CHECK: %[[C:.+]] = arith.remui %arg1, %{{.+}} : index
// CHECK: tensor.extract_slice %arg0[%[[R]], %[[C]]] [1, 4] [1, 1]
// CHECK: arith.divui %arg2
// CHECK: tensor.insert_slice %{{.+}} into %arg0[%{{.+}}, %{{.+}}] [1, 4] [1, 1]
// ROUND-LABEL: func @rows
// ROUND: cpn.view %arg0[%arg1] {offset = 4 : i64, strides = array<i64: 1>}
// ROUND: cpn.update %arg0, %{{.+}}[%arg2] {offset = 8 : i64, strides = array<i64: 1>}
func.func @rows(%u: tensor<4x4xf64>, %i: index, %j: index) -> tensor<4x4xf64> {
  %r = cpn.view %u [%i] {offset = 4 : i64, strides = array<i64: 1>} : tensor<4x4xf64> -> tensor<4xf64>
  %s = cpn.add %r, %r : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %u1 = cpn.update %u, %s [%j] {offset = 8 : i64, strides = array<i64: 1>} : tensor<4x4xf64>, tensor<4xf64> -> tensor<4x4xf64>
  return %u1 : tensor<4x4xf64>
}

// -----

// A column read backwards: the slice starts size - 1 rows before the offset.
// CHECK-LABEL: func @column_reversed
// CHECK: %[[C3:.+]] = arith.constant -3 : index
// CHECK: %[[START:.+]] = arith.addi %{{.+}}, %[[C3]] : index
// CHECK: tensor.extract_slice %arg0[%[[START]], %{{.+}}] [4, 1] [1, 1]
// CHECK: linalg.generic
func.func @column_reversed(%u: tensor<4x4xf64>, %o: index) -> tensor<4xf64> {
  %c = cpn.view %u [%o] {offset = 13 : i64, strides = array<i64: -4>} : tensor<4x4xf64> -> tensor<4xf64>
  return %c : tensor<4xf64>
}

// -----

// A view that crosses rows (of a reshaped array) gathers: the run-time offset
// enters the flat index.
// CHECK-LABEL: func @crossing
// CHECK: %[[O:.+]] = arith.index_cast %arg1 : index to i64
// CHECK: linalg.generic
// CHECK: arith.addi %[[O]]
// CHECK: tensor.extract %arg0
func.func @crossing(%u: tensor<4x4xf64>, %o: index) -> tensor<6xf64> {
  %c = cpn.view %u [%o] {offset = 2 : i64, strides = array<i64: 1>} : tensor<4x4xf64> -> tensor<6xf64>
  return %c : tensor<6xf64>
}

// -----

// A write that crosses rows selects the new value where the flat index,
// less the run-time offset, falls inside the view.
// CHECK-LABEL: func @crossing_update
// CHECK: %[[O:.+]] = arith.index_cast %arg2 : index to i64
// CHECK: linalg.generic
// CHECK: arith.subi %{{.+}}, %[[O]] : i64
// CHECK: arith.select
func.func @crossing_update(%u: tensor<4x4xf64>, %v: tensor<6xf64>, %o: index) -> tensor<4x4xf64> {
  %u1 = cpn.update %u, %v [%o] {offset = 2 : i64, strides = array<i64: 1>} : tensor<4x4xf64>, tensor<6xf64> -> tensor<4x4xf64>
  return %u1 : tensor<4x4xf64>
}
