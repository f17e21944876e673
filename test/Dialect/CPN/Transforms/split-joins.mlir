// RUN: cpn-opt %s -cpn-split-joins -canonicalize | FileCheck %s
// RUN: cpn-opt %s -cpn-split-joins -convert-cpn-to-linalg=keep-updates=1 -canonicalize -convert-cpn-updates | FileCheck %s --check-prefix=UPD
// RUN: cpn-opt %s --pass-pipeline="builtin.module(cpn-lower-to-llvm)" | FileCheck %s --check-prefix=LLVM
// RUN: cpn-opt %s -cpn-split-joins -cpn-schedule-reductions | FileCheck %s --check-prefix=SCHED

// np.roll(u, 1) + u: the roll is a join of u[7:] and u[:7]; the add becomes
// one add per piece, on the pieces and on slices of u (views of u's own
// base), and its result a join of the two sums. convert-cpn-updates starts
// that join from tensor.empty, not from a fill.
// CHECK-LABEL: func.func @roll_plus
// CHECK-DAG: %[[HEAD:.+]] = cpn.view %[[U:.+]] {offset = 7 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<1xf64>
// CHECK-DAG: %[[TAIL:.+]] = cpn.view %[[U]] {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<7xf64>
// CHECK-DAG: %[[U0:.+]] = cpn.view %[[U]] {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<1xf64>
// CHECK-DAG: %[[U1:.+]] = cpn.view %[[U]] {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<7xf64>
// CHECK-DAG: %[[A0:.+]] = cpn.add %[[HEAD]], %[[U0]] : tensor<1xf64>, tensor<1xf64> -> tensor<1xf64>
// CHECK-DAG: %[[A1:.+]] = cpn.add %[[TAIL]], %[[U1]] : tensor<7xf64>, tensor<7xf64> -> tensor<7xf64>
// CHECK: %[[J0:.+]] = cpn.update %{{.+}}, %[[A0]] {offset = 0 : i64, strides = array<i64: 1>}
// CHECK: %[[J1:.+]] = cpn.update %[[J0]], %[[A1]] {offset = 1 : i64, strides = array<i64: 1>}
// CHECK-NOT: tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
// CHECK: return %[[J1]]
// UPD-LABEL: func.func @roll_plus
// UPD-NOT: outs(%{{.+}} : tensor<8xf64>)
// UPD: tensor.insert_slice %{{.+}} into %[[E:.+]][0] [1] [1]
// UPD-NOT: outs(%{{.+}} : tensor<8xf64>)
// UPD-LABEL: func.func @two_rolls
// A chain whose middle result another op reads keeps its base (the add's
// result shows through the first write's gap there); its ufunc stays whole.
// UPD-LABEL: func.func @prefix_read
// UPD: %[[A:.+]] = linalg.generic
// UPD: tensor.insert_slice %{{.+}} into %[[A]][0] [1] [1]
// LLVM-LABEL: llvm.func @roll_plus
func.func @roll_plus(%u: tensor<8xf64>, %z: tensor<f64>) -> tensor<8xf64> {
  %b = cpn.view %z {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %init = cpn.copy %b : tensor<8xf64>
  %head = cpn.view %u {offset = 7 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<1xf64>
  %j0 = cpn.update %init, %head {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64> -> tensor<8xf64>
  %tail = cpn.view %u {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<7xf64>
  %roll = cpn.update %j0, %tail {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %r = cpn.add %roll, %u : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// np.roll(u, 1) - np.roll(u, -1), then times a broadcast scalar: the union
// of the two joins' split points (1 and 7) gives three pieces, and the
// multiply, reading the subtraction's join, splits into the same three.
// CHECK-LABEL: func.func @two_rolls
// CHECK-COUNT-3: cpn.subtract
// CHECK-NOT: cpn.subtract
// CHECK-COUNT-3: cpn.multiply
// CHECK-NOT: cpn.multiply
// CHECK: cpn.update %{{.+}} {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64>
// CHECK: cpn.update %{{.+}} {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<6xf64>
// CHECK: cpn.update %{{.+}} {offset = 7 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64>
// CHECK-NEXT: return
func.func @two_rolls(%u: tensor<8xf64>, %z: tensor<f64>, %c: tensor<f64>) -> tensor<8xf64> {
  %b = cpn.view %z {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %i0 = cpn.copy %b : tensor<8xf64>
  %h0 = cpn.view %u {offset = 7 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<1xf64>
  %a0 = cpn.update %i0, %h0 {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64> -> tensor<8xf64>
  %t0 = cpn.view %u {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<7xf64>
  %r0 = cpn.update %a0, %t0 {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %i1 = cpn.copy %b : tensor<8xf64>
  %h1 = cpn.view %u {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<7xf64>
  %a1 = cpn.update %i1, %h1 {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %t1 = cpn.view %u {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64> -> tensor<1xf64>
  %r1 = cpn.update %a1, %t1 {offset = 7 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64> -> tensor<8xf64>
  %d = cpn.subtract %r0, %r1 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %cb = cpn.view %c {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %m = cpn.multiply %cb, %d : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %m : tensor<8xf64>
}

// np.concatenate([a, b], axis=1) of (2, 3) and (2, 2), compared with x: the
// pieces are column blocks; x's slices are views of x at column offsets 0
// and 3 with x's strides.
// CHECK-LABEL: func.func @columns
// CHECK-DAG: cpn.view %{{.+}} {offset = 0 : i64, strides = array<i64: 5, 1>} : tensor<2x5xf64> -> tensor<2x3xf64>
// CHECK-DAG: cpn.view %{{.+}} {offset = 3 : i64, strides = array<i64: 5, 1>} : tensor<2x5xf64> -> tensor<2x2xf64>
// CHECK-DAG: cpn.less %{{.+}} : tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xi1>
// CHECK-DAG: cpn.less %{{.+}} : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xi1>
// CHECK: cpn.update %{{.+}} {offset = 3 : i64, strides = array<i64: 5, 1>} : tensor<2x5xi1>, tensor<2x2xi1>
func.func @columns(%a: tensor<2x3xf64>, %b: tensor<2x2xf64>, %x: tensor<2x5xf64>, %z: tensor<f64>) -> tensor<2x5xi1> {
  %bz = cpn.view %z {offset = 0 : i64, strides = array<i64: 0, 0>} : tensor<f64> -> tensor<2x5xf64>
  %init = cpn.copy %bz : tensor<2x5xf64>
  %j0 = cpn.update %init, %a {offset = 0 : i64, strides = array<i64: 5, 1>} : tensor<2x5xf64>, tensor<2x3xf64> -> tensor<2x5xf64>
  %j1 = cpn.update %j0, %b {offset = 3 : i64, strides = array<i64: 5, 1>} : tensor<2x5xf64>, tensor<2x2xf64> -> tensor<2x5xf64>
  %r = cpn.less %j1, %x : tensor<2x5xf64>, tensor<2x5xf64> -> tensor<2x5xi1>
  return %r : tensor<2x5xi1>
}

// Not joins: one update that leaves part of its base (u[1:] = v), two
// updates with a gap between them, and updates that overlap. The adds stay
// whole.
// CHECK-LABEL: func.func @not_joins
// CHECK-COUNT-3: cpn.add %{{.+}} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
func.func @not_joins(%u: tensor<8xf64>, %v: tensor<7xf64>, %w: tensor<3xf64>) -> (tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) {
  %p = cpn.update %u, %v {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %r0 = cpn.add %p, %u : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %g0 = cpn.update %u, %w {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<3xf64> -> tensor<8xf64>
  %g1 = cpn.update %g0, %w {offset = 4 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<3xf64> -> tensor<8xf64>
  %r1 = cpn.add %g1, %u : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %o0 = cpn.update %u, %v {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %o1 = cpn.update %o0, %w {offset = 5 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<3xf64> -> tensor<8xf64>
  %r2 = cpn.add %o1, %u : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %r0, %r1, %r2 : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>
}

// CHECK-LABEL: func.func @prefix_read
// CHECK: cpn.negative %{{.+}} : tensor<8xf64> -> tensor<8xf64>
// CHECK: cpn.exp %{{.+}} : tensor<8xf64> -> tensor<8xf64>
func.func @prefix_read(%x: tensor<8xf64>, %h: tensor<1xf64>, %t: tensor<7xf64>) -> (tensor<8xf64>, tensor<8xf64>) {
  %a = cpn.add %x, %x : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %j0 = cpn.update %a, %h {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<1xf64> -> tensor<8xf64>
  %s = cpn.negative %j0 : tensor<8xf64> -> tensor<8xf64>
  %j1 = cpn.update %j0, %t {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<7xf64> -> tensor<8xf64>
  %e = cpn.exp %j1 : tensor<8xf64> -> tensor<8xf64>
  return %s, %e : tensor<8xf64>, tensor<8xf64>
}

// The count of a mask made by np.concatenate (np.unique's): the cast splits
// into one per piece and the sum into one per piece and an add; the join
// of the casts is never built. A float sum over a join stays one sum (its
// rounding would change), and so does a sum along another axis.
// CHECK-LABEL: func.func @count_of_join
// CHECK-DAG: %[[C0:.+]] = cpn.cast %{{.+}} : tensor<1xi1> -> tensor<1xi64>
// CHECK-DAG: %[[C1:.+]] = cpn.cast %{{.+}} : tensor<7xi1> -> tensor<7xi64>
// CHECK-DAG: %[[S0:.+]] = cpn.reduce sum %[[C0]] {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
// CHECK-DAG: %[[S1:.+]] = cpn.reduce sum %[[C1]] {axes = array<i64: 0>} : tensor<7xi64> -> tensor<i64>
// CHECK: %[[T:.+]] = cpn.add %[[S0]], %[[S1]] : tensor<i64>, tensor<i64> -> tensor<i64>
// CHECK-NOT: tensor<8xi64>
// CHECK: return %[[T]]
// LLVM-LABEL: llvm.func @count_of_join
func.func @count_of_join(%a: tensor<1xi1>, %m: tensor<7xi1>, %z: tensor<i1>) -> tensor<i64> {
  %b = cpn.view %z {offset = 0 : i64, strides = array<i64: 0>} : tensor<i1> -> tensor<8xi1>
  %init = cpn.copy %b : tensor<8xi1>
  %j0 = cpn.update %init, %a {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xi1>, tensor<1xi1> -> tensor<8xi1>
  %j1 = cpn.update %j0, %m {offset = 1 : i64, strides = array<i64: 1>} : tensor<8xi1>, tensor<7xi1> -> tensor<8xi1>
  %c = cpn.cast %j1 : tensor<8xi1> -> tensor<8xi64>
  %s = cpn.reduce sum %c {axes = array<i64: 0>} : tensor<8xi64> -> tensor<i64>
  return %s : tensor<i64>
}

// CHECK-LABEL: func.func @max_any_and_float_sum
// CHECK: cpn.reduce max %{{.+}} {axes = array<i64: 0>, is_unsigned} : tensor<3x2xi8> -> tensor<2xi8>
// CHECK: cpn.reduce max %{{.+}} {axes = array<i64: 0>, is_unsigned} : tensor<5x2xi8> -> tensor<2xi8>
// CHECK: cpn.maximum %{{.+}}, %{{.+}} {is_unsigned} : tensor<2xi8>, tensor<2xi8> -> tensor<2xi8>
// CHECK: cpn.reduce any %{{.+}} : tensor<3x2xi8> -> tensor<i1>
// CHECK: cpn.reduce any %{{.+}} : tensor<5x2xi8> -> tensor<i1>
// CHECK: cpn.logical_or
// CHECK: cpn.reduce sum %{{.+}} {axes = array<i64: 1>} : tensor<8x2xi8> -> tensor<8xi8>
// CHECK: cpn.reduce sum %{{.+}} {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
func.func @max_any_and_float_sum(%a: tensor<3x2xi8>, %c: tensor<5x2xi8>, %z: tensor<i8>, %f: tensor<3xf64>, %h: tensor<5xf64>, %g: tensor<f64>)
    -> (tensor<2xi8>, tensor<i1>, tensor<8xi8>, tensor<f64>) {
  %b = cpn.view %z {offset = 0 : i64, strides = array<i64: 0, 0>} : tensor<i8> -> tensor<8x2xi8>
  %init = cpn.copy %b : tensor<8x2xi8>
  %j0 = cpn.update %init, %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<8x2xi8>, tensor<3x2xi8> -> tensor<8x2xi8>
  %j1 = cpn.update %j0, %c {offset = 6 : i64, strides = array<i64: 2, 1>} : tensor<8x2xi8>, tensor<5x2xi8> -> tensor<8x2xi8>
  %m = cpn.reduce max %j1 {axes = array<i64: 0>, is_unsigned} : tensor<8x2xi8> -> tensor<2xi8>
  %y = cpn.reduce any %j1 {axes = array<i64: 0, 1>} : tensor<8x2xi8> -> tensor<i1>
  %r = cpn.reduce sum %j1 {axes = array<i64: 1>} : tensor<8x2xi8> -> tensor<8xi8>
  %fb = cpn.view %g {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %finit = cpn.copy %fb : tensor<8xf64>
  %f0 = cpn.update %finit, %f {offset = 0 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<3xf64> -> tensor<8xf64>
  %f1 = cpn.update %f0, %h {offset = 3 : i64, strides = array<i64: 1>} : tensor<8xf64>, tensor<5xf64> -> tensor<8xf64>
  %fs = cpn.reduce sum %f1 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  return %m, %y, %r, %fs : tensor<2xi8>, tensor<i1>, tensor<8xi8>, tensor<f64>
}

// The count of a mask of 10^6 elements made by np.concatenate: the pipeline
// splits joins before it schedules reductions, so the long piece's sum gets
// row blocks of its own (a row-blocked sum of the join was not split, and
// the join of 8-byte casts was built: 16 MB moved to count 1 MB of bools).
// SCHED-LABEL: func.func @long_count_of_join
// SCHED: cpn.reduce sum %{{.+}} {axes = array<i64: 0>} : tensor<1xi64> -> tensor<i64>
// SCHED: cpn.reduce sum %{{.+}} {axes = array<i64: 0>, cpn.row_blocks = 63 : i64} : tensor<999999xi64> -> tensor<i64>
// SCHED-NOT: tensor<1000000xi64>
func.func @long_count_of_join(%a: tensor<1xi1>, %m: tensor<999999xi1>, %z: tensor<i1>) -> tensor<i64> {
  %b = cpn.view %z {offset = 0 : i64, strides = array<i64: 0>} : tensor<i1> -> tensor<1000000xi1>
  %init = cpn.copy %b : tensor<1000000xi1>
  %j0 = cpn.update %init, %a {offset = 0 : i64, strides = array<i64: 1>} : tensor<1000000xi1>, tensor<1xi1> -> tensor<1000000xi1>
  %j1 = cpn.update %j0, %m {offset = 1 : i64, strides = array<i64: 1>} : tensor<1000000xi1>, tensor<999999xi1> -> tensor<1000000xi1>
  %c = cpn.cast %j1 : tensor<1000000xi1> -> tensor<1000000xi64>
  %s = cpn.reduce sum %c {axes = array<i64: 0>} : tensor<1000000xi64> -> tensor<i64>
  return %s : tensor<i64>
}
