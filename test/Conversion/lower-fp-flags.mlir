// RUN: cpn-opt %s -split-input-file -convert-cpn-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: cpn-opt %s -split-input-file -cpn-lower-fp-flags | FileCheck %s --check-prefix=LOWER
// RUN: cpn-opt %s -split-input-file -cpn-lower-fp-flags -convert-scf-to-openmp | FileCheck %s --check-prefix=OMP
// RUN: cpn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(cpn-fuse-elementwise),cse)' | FileCheck %s --check-prefix=FUSE

// np.errstate: an op with cpn.fpcheck reports each element of its body
// (here divide by zero, bit 1, and invalid, bit 4, as site 22).
// LINALG-LABEL: func @divide
// LINALG: linalg.generic
// LINALG: ^bb0(%[[X:.+]]: f64, %[[Y:.+]]: f64, %{{.+}}: f64):
// LINALG: %[[Q:.+]] = arith.divf %[[X]], %[[Y]]
// LINALG: cpn.fp_flag divide(%[[X]], %[[Y]]) -> %[[Q]] {checks = 5 : i64, site = 22 : i64} : f64, f64 -> f64
// LINALG: linalg.yield %[[Q]]
func.func @divide(%a: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<8xf64> {
  %r = cpn.divide %a, %b {cpn.fpcheck = 5 : i64, cpn.fpsite = 22 : i64} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// -----

// Without the attributes nothing is checked.
// LINALG-LABEL: func @unchecked
// LINALG-NOT: cpn.fp_flag
func.func @unchecked(%a: tensor<8xf64>, %b: tensor<8xf64>) -> tensor<8xf64> {
  %r = cpn.divide %a, %b : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %r : tensor<8xf64>
}

// -----

// Integer floor division and casts report too (a zero divisor; NaN or
// infinity cast to an integer).
// LINALG-LABEL: func @ints
// LINALG: cpn.fp_flag floor_divide(%{{.+}}, %{{.+}}) -> %{{.+}} {checks = 7 : i64, site = 0 : i64} : i64, i64 -> i64
// LINALG: cpn.fp_flag cast(%{{.+}}) -> %{{.+}} {checks = 7 : i64, site = 1 : i64} : f64 -> i32
func.func @ints(%a: tensor<8xi64>, %b: tensor<8xi64>, %f: tensor<8xf64>) -> (tensor<8xi64>, tensor<8xi32>) {
  %r = cpn.floor_divide %a, %b {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<8xi64>, tensor<8xi64> -> tensor<8xi64>
  %c = cpn.cast %f {cpn.fpcheck = 7 : i64, cpn.fpsite = 1 : i64} : tensor<8xf64> -> tensor<8xi32>
  return %r, %c : tensor<8xi64>, tensor<8xi32>
}

// -----

// A loop that writes what it reads (in place) ORs the exact bits of its
// elements, carries them out of the nest and ORs them into the status once
// per parallel iteration, when set.
// LOWER-LABEL: func @in_place
// LOWER: scf.parallel
// LOWER: %[[ACC:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %c0_i32) -> (i32)
// LOWER: %[[N:.+]] = arith.ori %[[A]], %{{.+}} : i32
// LOWER: scf.yield %[[N]] : i32
// LOWER: %[[SET:.+]] = arith.cmpi ne, %[[ACC]], %c0_i32
// LOWER: scf.if %[[SET]]
// LOWER: memref.atomic_rmw ori %[[ACC]], %arg1[%{{.+}}] : (i32, memref<1xi32>)
// LOWER-NOT: cpn.fp_flag
func.func @in_place(%a: memref<64x64xf64>, %status: memref<1xi32> {cpn.fp_status}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %x = memref.load %a[%i, %j] : memref<64x64xf64>
      %y = math.log %x : f64
      cpn.fp_flag log(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
      memref.store %y, %a[%i, %j] : memref<64x64xf64>
    }
    scf.reduce
  }
  return
}

// -----

// Otherwise the loops only sum the probes (a probe that feeds another
// through an add is covered by it) and OR the test of the sum; a copy of the
// nest without its stores computes the exact bits when that is set, in a
// function of its own (noinline) that takes the block's bounds. An
// innermost parallel loop is first cut into blocks of 4096 iterations.
// LOWER-LABEL: func.func private @fast_fp_check0(%{{.+}}: memref<100000xf64>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: memref<1xi32>) attributes {cpn.fp_check, passthrough = ["noinline"]}
// LOWER: scf.for
// LOWER-NOT: memref.store
// LOWER: memref.atomic_rmw ori
// LOWER-LABEL: func @fast
// LOWER: scf.parallel (%[[B:.+]]) = (%c0) to (%{{.+}}) step (%{{.+}})
// LOWER: %[[END:.+]] = arith.minsi
// LOWER: %[[ANY:.+]] = scf.for %{{.+}} = %[[B]] to %[[END]] step %c1 iter_args(%[[A:.+]] = %c0_i32) -> (i32)
// LOWER: %[[Y:.+]] = math.sqrt
// LOWER: %[[Z:.+]] = arith.addf %[[Y]]
// LOWER: memref.store
// LOWER-NOT: math.absf %[[Y]]
// LOWER: %[[ABS:.+]] = math.absf %[[Z]]
// LOWER: arith.cmpf uge, %[[ABS]]
// LOWER: scf.yield
// LOWER: %[[SET:.+]] = arith.cmpi ne, %[[ANY]], %c0_i32
// LOWER: scf.if %[[SET]] {
// LOWER-NEXT: func.call @fast_fp_check0(%arg0, %[[B]], %[[END]], %arg2)
// OMP-LABEL: func.func private @fast_fp_check0
// OMP: memref.atomic_rmw ori
// OMP-LABEL: func @fast
// OMP: omp.wsloop
// OMP: scf.for
// OMP: func.call @fast_fp_check0
func.func @fast(%a: memref<100000xf64>, %out: memref<100000xf64>, %status: memref<1xi32> {cpn.fp_status}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %one = arith.constant 1.0 : f64
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<100000xf64>
    %y = math.sqrt %x : f64
    cpn.fp_flag sqrt(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    %z = arith.addf %y, %one : f64
    cpn.fp_flag add(%y, %one) -> %z {checks = 7 : i64, site = 1 : i64} : f64, f64 -> f64
    memref.store %z, %out[%i] : memref<100000xf64>
    scf.reduce
  }
  return
}

// -----

// Checked products summed by the kernel itself (a small matmul's unrolled
// dot product): the test is on that sum, which is non-finite whenever a
// product is, with no adds of the check's own.
// LOWER-LABEL: func @dot
// LOWER: %[[P0:.+]] = arith.mulf
// LOWER: %[[P1:.+]] = arith.mulf
// LOWER: %[[S0:.+]] = arith.addf %[[P0]], %{{.+}} : f64
// LOWER: %[[S1:.+]] = arith.addf %[[S0]], %[[P1]] : f64
// LOWER: memref.store %[[S1]]
// LOWER-NOT: arith.addf
// LOWER: %[[ABS:.+]] = math.absf %[[S1]]
// LOWER: arith.cmpf uge, %[[ABS]]
// LOWER: scf.yield
func.func @dot(%a: memref<1000x2xf64>, %b: memref<1000x2xf64>, %out: memref<1000xf64>, %status: memref<1xi32> {cpn.fp_status}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x0 = memref.load %a[%i, %c0] : memref<1000x2xf64>
    %y0 = memref.load %b[%i, %c0] : memref<1000x2xf64>
    %x1 = memref.load %a[%i, %c1] : memref<1000x2xf64>
    %y1 = memref.load %b[%i, %c1] : memref<1000x2xf64>
    %p0 = arith.mulf %x0, %y0 : f64
    cpn.fp_flag multiply(%x0, %y0) -> %p0 {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
    %p1 = arith.mulf %x1, %y1 : f64
    cpn.fp_flag multiply(%x1, %y1) -> %p1 {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
    %s0 = arith.addf %p0, %zero : f64
    %s1 = arith.addf %s0, %p1 : f64
    memref.store %s1, %out[%i] : memref<1000xf64>
    scf.reduce
  }
  return
}

// -----

// Not into a value the loop carries: a reduction's accumulator tested in
// every iteration would keep it from being vectorized; the product is.
// LOWER-LABEL: func @carried
// LOWER: scf.for %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (f64, i32)
// LOWER: %[[P:.+]] = arith.mulf
// LOWER: %[[N:.+]] = arith.addf %[[ACC]], %[[P]] {{.*}}: f64
// LOWER: math.absf %[[P]]
// LOWER-NOT: math.absf %[[N]]
// LOWER: scf.yield %[[N]]
func.func @carried(%a: memref<100x64xf64>, %out: memref<100xf64>, %status: memref<1xi32> {cpn.fp_status}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100 : index
  %k = arith.constant 64 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = scf.for %j = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f64) {
      %x = memref.load %a[%i, %j] : memref<100x64xf64>
      %p = arith.mulf %x, %x : f64
      cpn.fp_flag multiply(%x, %x) -> %p {checks = 7 : i64, site = 0 : i64} : f64, f64 -> f64
      %next = arith.addf %acc, %p fastmath<reassoc> : f64
      scf.yield %next : f64
    }
    memref.store %s, %out[%i] : memref<100xf64>
    scf.reduce
  }
  return
}

// -----

// Equal nests on other buffers (a loop's iterations traced into one kernel)
// share one check function.
// LOWER-LABEL: func.func private @twice_fp_check0
// LOWER-NOT: func.func private @twice_fp_check1
// LOWER-LABEL: func @twice
// LOWER: func.call @twice_fp_check0(%arg0,
// LOWER: func.call @twice_fp_check0(%arg1,
func.func @twice(%a: memref<100000xf64>, %b: memref<100000xf64>, %out: memref<100000xf64>, %status: memref<1xi32> {cpn.fp_status}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<100000xf64>
    %y = math.log %x : f64
    cpn.fp_flag log(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    memref.store %y, %out[%i] : memref<100000xf64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<100000xf64>
    %y = math.log %x : f64
    cpn.fp_flag log(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    memref.store %y, %out[%i] : memref<100000xf64>
    scf.reduce
  }
  return
}

// -----

// A 0-d kernel ORs its bits directly.
// LOWER-LABEL: func @scalar
// LOWER: scf.if
// LOWER: memref.atomic_rmw ori %{{.+}}, %arg1[%c2]
func.func @scalar(%a: memref<f64>, %status: memref<3xi32> {cpn.fp_status}) {
  %x = memref.load %a[] : memref<f64>
  %y = math.sqrt %x : f64
  cpn.fp_flag sqrt(%x) -> %y {checks = 4 : i64, site = 20 : i64} : f64 -> f64
  return
}

// -----

// cpn-fuse-elementwise: the same checked computation recorded twice is
// computed once (cse cannot merge it: the flags are writes), and a checking
// generic whose result nobody reads is erased; the consumer then reads one
// producer (fused once per operand; cse merges the copies' values).
// FUSE-LABEL: func @dedup
// FUSE: linalg.generic
// FUSE: math.log
// FUSE: cpn.fp_flag
// FUSE-NOT: math.log
// FUSE: arith.addf
// FUSE: linalg.yield
// FUSE-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @dedup(%a: tensor<8xf64>, %status: memref<1xi32> {cpn.fp_status}) -> tensor<8xf64> {
  %e = tensor.empty() : tensor<8xf64>
  %l1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.log %x : f64
    cpn.fp_flag log(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %l2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.log %x : f64
    cpn.fp_flag log(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %dead = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = math.sqrt %x : f64
    cpn.fp_flag sqrt(%x) -> %y {checks = 7 : i64, site = 0 : i64} : f64 -> f64
    linalg.yield %y : f64
  } -> tensor<8xf64>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%l1, %l2 : tensor<8xf64>, tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %z = arith.addf %x, %y : f64
    linalg.yield %z : f64
  } -> tensor<8xf64>
  return %s : tensor<8xf64>
}
