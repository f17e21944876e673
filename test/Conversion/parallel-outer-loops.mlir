// RUN: cpn-opt %s -cpn-parallel-outer-loops | FileCheck %s
// RUN: cpn-opt %s -cpn-parallel-outer-loops -convert-scf-to-openmp | FileCheck %s --check-prefix=OMP

// A big 2-D nest keeps its outer dimension parallel; the inner one becomes a
// plain scf.for (vectorizable, no collapsed index arithmetic).
// CHECK-LABEL: func @big
// CHECK: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NEXT: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[I]], %[[J]]]
// OMP-LABEL: func @big
// OMP: omp.parallel
// OMP: omp.loop_nest (%{{.+}}) : index
// OMP-NOT: collapse
func.func @big(%a: memref<1000x1000xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %x = arith.constant 1.0 : f64
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    memref.store %x, %a[%i, %j] : memref<1000x1000xf64>
    scf.reduce
  }
  return
}

// A small nest runs sequentially: forking threads would cost more.
// CHECK-LABEL: func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// OMP-LABEL: func @small
// OMP-NOT: omp.parallel
func.func @small(%a: memref<10x10xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 10 : index
  %x = arith.constant 1.0 : f64
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    memref.store %x, %a[%i, %j] : memref<10x10xf64>
    scf.reduce
  }
  return
}

// A short outer dimension is skipped for a longer one.
// CHECK-LABEL: func @short_outer
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK-NEXT: scf.parallel
// OMP-LABEL: func @short_outer
func.func @short_outer(%a: memref<2x100000xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 100000 : index
  %x = arith.constant 1.0 : f64
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %n) step (%c1, %c1) {
    memref.store %x, %a[%i, %j] : memref<2x100000xf64>
    scf.reduce
  }
  return
}

// A reduction over rows (x.sum(axis=0)): instead of a parallel loop per row,
// tiles of columns run in parallel, each walking all rows.
// CHECK-LABEL: func @column_sums
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK: %[[END:.+]] = arith.minsi
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT: scf.for %[[J:.+]] = %[[T]] to %[[END]] step
// CHECK: memref.load %{{.+}}[%[[I]], %[[J]]]
// CHECK: } {cpn.tiles}
// OMP-LABEL: func @column_sums
// OMP: omp.parallel
// OMP-NOT: omp.parallel
func.func @column_sums(%x: memref<1000x1000xf64>, %out: memref<1000xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %a = memref.load %x[%i, %j] : memref<1000x1000xf64>
      %o = memref.load %out[%j] : memref<1000xf64>
      %s = arith.addf %o, %a : f64
      memref.store %s, %out[%j] : memref<1000xf64>
      scf.reduce
    }
  }
  return
}
