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

// A row reduction: few rows, but a long sequential loop in each. The rows
// are the parallel dimension (the work counted is rows x row length).
// CHECK-LABEL: func @row_sums
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: scf.for
// OMP-LABEL: func @row_sums
// OMP: omp.parallel
func.func @row_sums(%x: memref<100x4000xf64>, %out: memref<100xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 100 : index
  %cols = arith.constant 4000 : index
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    scf.for %j = %c0 to %cols step %c1 {
      %v = memref.load %x[%i, %j] : memref<100x4000xf64>
      %acc = memref.load %out[%i] : memref<100xf64>
      %s = arith.addf %acc, %v : f64
      memref.store %s, %out[%i] : memref<100xf64>
    }
    scf.reduce
  }
  return
}

// Row-block partial sums: the blocks are parallel; the parallel loop over
// the columns nested under the block's row loop runs sequentially (no
// nested OpenMP region), and is not tiled.
// CHECK-LABEL: func @block_partials
// CHECK: scf.parallel (%[[P:.+]]) =
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.parallel
// OMP-LABEL: func @block_partials
// OMP-COUNT-1: omp.parallel
func.func @block_partials(%x: memref<16x500x8000xf64>, %out: memref<16x8000xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %blocks = arith.constant 16 : index
  %rows = arith.constant 500 : index
  %cols = arith.constant 8000 : index
  scf.parallel (%p) = (%c0) to (%blocks) step (%c1) {
    scf.for %r = %c0 to %rows step %c1 {
      scf.parallel (%c) = (%c0) to (%cols) step (%c1) {
        %v = memref.load %x[%p, %r, %c] : memref<16x500x8000xf64>
        %acc = memref.load %out[%p, %c] : memref<16x8000xf64>
        %s = arith.addf %acc, %v : f64
        memref.store %s, %out[%p, %c] : memref<16x8000xf64>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}
