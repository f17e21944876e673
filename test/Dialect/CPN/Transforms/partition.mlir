// RUN: cpn-opt %s -cpn-partition="ranks=4 threshold=1000" | FileCheck %s
// RUN: cpn-opt %s -cpn-partition | FileCheck %s --check-prefix=ONE
// RUN: cpn-opt %s -cpn-partition="ranks=2 threshold=1000" | FileCheck %s --check-prefix=TWO

// One rank: nothing to decide, nothing written.
// ONE-NOT: cpn.dist
// ONE-NOT: cpn.comm

// A 5-point Jacobi step written into u[1:-1, 1:-1] and its sum. The sum of
// the four neighbours is computed where it is written (rows at shift 1:
// owner computes); the views u[:-2] and u[2:] are a row below and above:
// u needs a halo of one row on each side. The sum over the split rows is
// local partials and an all-reduce (12 bytes received: 2 * 8 * 3/4). The
// halo is two rows of 100 float64 received per rank: 1600 bytes.
// Of two ranks each has one neighbour: one halo row received, 800 bytes
// (what a run with CPN_PARTITION=rows receives, test/mpi/partitioned.py).
// CHECK-LABEL: func.func @jacobi5
// TWO-LABEL: func.func @jacobi5
// TWO-SAME: cpn.comm = {update_halo = 800 : i64}
// CHECK-SAME: %arg0: tensor<100x100xf64> {cpn.comm = {update_halo = 1600 : i64}, cpn.dist = {extent = 100 : i64, kind = "rows", shift = 0 : i64}, cpn.halo = array<i64: 1, 1>}
// CHECK-SAME: %arg1: tensor<f64> {cpn.dist = "replicated"}
// CHECK: cpn.view %arg0 {cpn.dist = {extent = 100 : i64, kind = "rows", shift = 0 : i64}, offset = 1
// CHECK: cpn.view %arg0 {cpn.dist = {extent = 100 : i64, kind = "rows", shift = 2 : i64}, offset = 201
// CHECK: cpn.view %arg0 {cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}, offset = 100
// CHECK: cpn.view %arg0 {cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}, offset = 102
// CHECK: cpn.add {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}
// CHECK: cpn.add {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}
// CHECK: cpn.add {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}
// CHECK: cpn.view %arg1 {cpn.dist = {anywhere, extent = 98 : i64, kind = "rows", shift = 0 : i64}
// CHECK: cpn.multiply {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 1 : i64}
// CHECK: cpn.update {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 0 : i64}
// CHECK: cpn.reduce sum {{.*}}cpn.comm = {all_reduce = 12 : i64}, cpn.dist = "replicated"
func.func @jacobi5(%u: tensor<100x100xf64>, %q: tensor<f64>) -> (tensor<100x100xf64>, tensor<f64>) {
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %w = cpn.view %u {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %e = cpn.view %u {offset = 102 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a = cpn.add %n, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %b = cpn.add %a, %w : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %c = cpn.add %b, %e : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %k = cpn.view %q {offset = 0 : i64, strides = array<i64: 0, 0>} : tensor<f64> -> tensor<98x98xf64>
  %m = cpn.multiply %k, %c : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %m {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  %t = cpn.reduce sum %u1 {axes = array<i64: 0, 1>} : tensor<100x100xf64> -> tensor<f64>
  return %u1, %t : tensor<100x100xf64>, tensor<f64>
}

// A 9-point stencil (the diagonals too): still one row each side. A wider
// 1-D stencil, v[:-4] + v[4:] into v[2:-2]: two elements each side.
// CHECK-LABEL: func.func @nine_point
// CHECK-SAME: cpn.halo = array<i64: 1, 1>
// CHECK: cpn.update {{.*}}cpn.dist = {extent = 100 : i64, kind = "rows", shift = 0 : i64}
// CHECK-NOT: cpn.comm
// CHECK: return
func.func @nine_point(%u: tensor<100x100xf64>) -> tensor<100x100xf64> {
  %nw = cpn.view %u {offset = 0 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %n = cpn.view %u {offset = 1 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %ne = cpn.view %u {offset = 2 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %w = cpn.view %u {offset = 100 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %e = cpn.view %u {offset = 102 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %sw = cpn.view %u {offset = 200 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %s = cpn.view %u {offset = 201 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %se = cpn.view %u {offset = 202 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64> -> tensor<98x98xf64>
  %a1 = cpn.add %nw, %n : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a2 = cpn.add %a1, %ne : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a3 = cpn.add %a2, %w : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a4 = cpn.add %a3, %e : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a5 = cpn.add %a4, %sw : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a6 = cpn.add %a5, %s : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %a7 = cpn.add %a6, %se : tensor<98x98xf64>, tensor<98x98xf64> -> tensor<98x98xf64>
  %u1 = cpn.update %u, %a7 {offset = 101 : i64, strides = array<i64: 100, 1>} : tensor<100x100xf64>, tensor<98x98xf64> -> tensor<100x100xf64>
  return %u1 : tensor<100x100xf64>
}

// CHECK-LABEL: func.func @wide_1d
// CHECK-SAME: cpn.halo = array<i64: 2, 2>
func.func @wide_1d(%v: tensor<4096xf64>) -> tensor<4096xf64> {
  %l = cpn.view %v {offset = 0 : i64, strides = array<i64: 1>} : tensor<4096xf64> -> tensor<4092xf64>
  %r = cpn.view %v {offset = 4 : i64, strides = array<i64: 1>} : tensor<4096xf64> -> tensor<4092xf64>
  %a = cpn.add %l, %r : tensor<4092xf64>, tensor<4092xf64> -> tensor<4092xf64>
  %v1 = cpn.update %v, %a {offset = 2 : i64, strides = array<i64: 1>} : tensor<4096xf64>, tensor<4092xf64> -> tensor<4096xf64>
  return %v1 : tensor<4096xf64>
}

// Reductions: over the split rows an all-reduce of the result (64 float64:
// 512 bytes, 768 received per rank); along a row, local.
// CHECK-LABEL: func.func @reductions
// CHECK: cpn.reduce sum {{.*}}cpn.comm = {all_reduce = 768 : i64}, cpn.dist = "replicated"
// CHECK: cpn.reduce max {{.*}}cpn.dist = {extent = 1000 : i64, kind = "rows", shift = 0 : i64}
// CHECK-NOT: cpn.comm
// CHECK: return
func.func @reductions(%x: tensor<1000x64xf64>) -> (tensor<64xf64>, tensor<1000xf64>) {
  %c = cpn.reduce sum %x {axes = array<i64: 0>} : tensor<1000x64xf64> -> tensor<64xf64>
  %r = cpn.reduce max %x {axes = array<i64: 1>} : tensor<1000x64xf64> -> tensor<1000xf64>
  return %c, %r : tensor<64xf64>, tensor<1000xf64>
}

// Transposes and products. x.T read elementwise moves x (all_to_all: each
// rank receives 3/4 of its quarter, 96000 bytes). x.T @ v with x and v split
// alike contracts over the split rows: partial products and an all-reduce of
// the 64 x 8 result (6144 bytes) beat gathering x and v (432000). a @ b with
// both split: rows of the result are rows of a, b is gathered (900000).
// CHECK-LABEL: func.func @products
// CHECK: cpn.view %arg0 {cpn.dist = {extent = 1000 : i64, kind = "transposed", shift = 0 : i64}
// CHECK: cpn.add {{.*}}cpn.comm = {all_to_all = 96000 : i64}
// CHECK: cpn.matmul {{.*}}cpn.comm = {all_reduce = 6144 : i64}, cpn.dist = "replicated"
// CHECK: cpn.matmul {{.*}}cpn.comm = {all_gather = 900000 : i64}, cpn.dist = {extent = 1000 : i64, kind = "rows", shift = 0 : i64}
func.func @products(%x: tensor<1000x64xf64>, %y: tensor<64x1000xf64>, %v: tensor<1000x8xf64>,
                    %a: tensor<1000x500xf64>, %b: tensor<500x300xf64>)
    -> (tensor<64x1000xf64>, tensor<64x8xf64>, tensor<1000x300xf64>) {
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 64>} : tensor<1000x64xf64> -> tensor<64x1000xf64>
  %s = cpn.add %xt, %y : tensor<64x1000xf64>, tensor<64x1000xf64> -> tensor<64x1000xf64>
  %g = cpn.matmul %xt, %v : tensor<64x1000xf64>, tensor<1000x8xf64> -> tensor<64x8xf64>
  %c = cpn.matmul %a, %b : tensor<1000x500xf64>, tensor<500x300xf64> -> tensor<1000x300xf64>
  return %s, %g, %c : tensor<64x1000xf64>, tensor<64x8xf64>, tensor<1000x300xf64>
}

// A dot product of split vectors (y @ v as a 1 x n view of y times an n x 1
// view of v, rows of v as they are) and x.T @ w with w small (on every
// rank): partial products summed, an all-reduce of one element (12 bytes per
// rank: 2 (P - 1) / P of 8) and of 64 x 2 (1536); nothing gathered.
// CHECK-LABEL: func.func @contractions
// CHECK: cpn.view %arg1 {cpn.dist = {extent = 4000 : i64, kind = "rows", shift = 0 : i64}
// CHECK: cpn.matmul {{.*}}cpn.comm = {all_reduce = 12 : i64}, cpn.dist = "replicated"
// CHECK: cpn.matmul {{.*}}cpn.comm = {all_reduce = 1536 : i64}, cpn.dist = "replicated"
// CHECK-NOT: all_gather
// CHECK: return
func.func @contractions(%y: tensor<4000xf64>, %v: tensor<4000xf64>,
                        %x: tensor<100x64xf64>, %w: tensor<100x2xf64>)
    -> (tensor<1x1xf64>, tensor<64x2xf64>) {
  %yr = cpn.view %y {offset = 0 : i64, strides = array<i64: 0, 1>} : tensor<4000xf64> -> tensor<1x4000xf64>
  %vc = cpn.view %v {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<4000xf64> -> tensor<4000x1xf64>
  %d = cpn.matmul %yr, %vc : tensor<1x4000xf64>, tensor<4000x1xf64> -> tensor<1x1xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 64>} : tensor<100x64xf64> -> tensor<64x100xf64>
  %g = cpn.matmul %xt, %w : tensor<64x100xf64>, tensor<100x2xf64> -> tensor<64x2xf64>
  return %d, %g : tensor<1x1xf64>, tensor<64x2xf64>
}

// Small arrays (under the threshold) are replicated: no data moves.
// CHECK-LABEL: func.func @small
// CHECK-SAME: %arg0: tensor<100xf64> {cpn.dist = "replicated"}
// CHECK: cpn.multiply {{.*}}cpn.dist = "replicated"
// CHECK: cpn.reduce sum {{.*}}cpn.dist = "replicated"
// CHECK-NOT: cpn.comm
// CHECK: return
func.func @small(%s: tensor<100xf64>) -> tensor<f64> {
  %m = cpn.multiply %s, %s : tensor<100xf64>, tensor<100xf64> -> tensor<100xf64>
  %t = cpn.reduce sum %m {axes = array<i64: 0>} : tensor<100xf64> -> tensor<f64>
  return %t : tensor<f64>
}

// One-sided: u[1:] = 0.5 * u[:-1] reads the row below only: [1, 0]; the
// column u[:, 0] = c of a split c is row aligned (no data moves); a box that
// straddles two rows (offset 2, four elements a row, in a base of rows of
// four) is not: its value is gathered.
// CHECK-LABEL: func.func @one_sided
// CHECK-SAME: %arg0: tensor<1000x4xf64> {cpn.comm = {update_halo = 32 : i64}, cpn.dist = {extent = 1000 : i64, kind = "rows", shift = 0 : i64}, cpn.halo = array<i64: 1, 0>}
// CHECK: cpn.update %{{.*}}, %arg1 {cpn.dist = {extent = 1000 : i64, kind = "rows", shift = 0 : i64}, offset = 0
// CHECK: cpn.update %{{.*}}, %arg2 {cpn.comm = {all_gather = 11952 : i64}
func.func @one_sided(%u: tensor<1000x4xf64>, %c: tensor<1000xf64>, %w: tensor<498x4xf64>) -> tensor<1000x4xf64> {
  %l = cpn.view %u {offset = 0 : i64, strides = array<i64: 4, 1>} : tensor<1000x4xf64> -> tensor<999x4xf64>
  %m = cpn.multiply %l, %l : tensor<999x4xf64>, tensor<999x4xf64> -> tensor<999x4xf64>
  %u1 = cpn.update %u, %m {offset = 4 : i64, strides = array<i64: 4, 1>} : tensor<1000x4xf64>, tensor<999x4xf64> -> tensor<1000x4xf64>
  %u2 = cpn.update %u1, %c {offset = 0 : i64, strides = array<i64: 4>} : tensor<1000x4xf64>, tensor<1000xf64> -> tensor<1000x4xf64>
  %u3 = cpn.update %u2, %w {offset = 2 : i64, strides = array<i64: 4, 1>} : tensor<1000x4xf64>, tensor<498x4xf64> -> tensor<1000x4xf64>
  return %u3 : tensor<1000x4xf64>
}

// argmax over the split rows combines (value, global index) pairs.
// CHECK-LABEL: func.func @argmax_rows
// CHECK: cpn.reduce argmax {{.*}}cpn.comm = {all_reduce_loc = 768 : i64}
func.func @argmax_rows(%x: tensor<1000x32xf64>) -> tensor<32xi64> {
  %i = cpn.reduce argmax %x {axes = array<i64: 0>} : tensor<1000x32xf64> -> tensor<32xi64>
  return %i : tensor<32xi64>
}

// A stencil step written back into its input's buffer (a kernel's donated
// input, as the Engine flushes it): each rank writes its own rows, nothing
// is gathered; the halo is the input's. An argument split alike written
// into a split buffer moves nothing either.
// CHECK-LABEL: func.func @in_place
// CHECK: bufferization.to_tensor {{.*}}cpn.comm = {update_halo = 3200 : i64}
// CHECK-NOT: all_gather
// CHECK: bufferization.materialize_in_destination {{.*}}cpn.dist = {extent = 200 : i64, kind = "rows", shift = 0 : i64}
// CHECK-NOT: all_gather
// CHECK: bufferization.materialize_in_destination {{.*}}cpn.dist = {extent = 200 : i64, kind = "rows", shift = 0 : i64}
// CHECK: return
func.func @in_place(%arg0: memref<200x200xf64>, %arg1: memref<200x200xf64>, %s: tensor<200x200xf64>) {
  %u = bufferization.to_tensor %arg0 restrict writable : memref<200x200xf64> to tensor<200x200xf64>
  %v = bufferization.to_tensor %arg1 restrict writable : memref<200x200xf64> to tensor<200x200xf64>
  %n = cpn.view %u {offset = 0 : i64, strides = array<i64: 200, 1>} : tensor<200x200xf64> -> tensor<198x200xf64>
  %t = cpn.view %u {offset = 400 : i64, strides = array<i64: 200, 1>} : tensor<200x200xf64> -> tensor<198x200xf64>
  %a = cpn.add %n, %t : tensor<198x200xf64>, tensor<198x200xf64> -> tensor<198x200xf64>
  %u1 = cpn.update %u, %a {offset = 200 : i64, strides = array<i64: 200, 1>} : tensor<200x200xf64>, tensor<198x200xf64> -> tensor<200x200xf64>
  %w = bufferization.materialize_in_destination %u1 in %u : (tensor<200x200xf64>, tensor<200x200xf64>) -> tensor<200x200xf64>
  bufferization.materialize_in_destination %w in restrict writable %arg0 : (tensor<200x200xf64>, memref<200x200xf64>) -> ()
  %z = bufferization.materialize_in_destination %s in %v : (tensor<200x200xf64>, tensor<200x200xf64>) -> tensor<200x200xf64>
  bufferization.materialize_in_destination %z in restrict writable %arg1 : (tensor<200x200xf64>, memref<200x200xf64>) -> ()
  return
}

// A boundary condition p[0, :] = p[1, :]: rows 0 and 1 are both rank 0's,
// which reads and writes them; nothing moves. p[-1, :] = p[1, :] writes the
// row on the last rank: rank 0 broadcasts it (one row of 100 float64
// received), not the base gathered; so does a row read by another op.
// A view that straddles rows (offset 50 in rows of 100) reads 901 of 1000
// rows: the base is gathered (600000 bytes), cheaper than those rows' 720800.
// CHECK-LABEL: func.func @boundary_row
// CHECK: cpn.view %arg0 {cpn.dist = "replicated"
// CHECK-SAME: -> tensor<100xf64>
// CHECK: cpn.update
// CHECK: cpn.view %arg0 {cpn.comm = {broadcast = 800 : i64}, cpn.dist = "replicated"
// CHECK: cpn.update
// CHECK: cpn.view %arg0 {cpn.comm = {broadcast = 800 : i64}, cpn.dist = "replicated"
// CHECK: cpn.add
// CHECK: cpn.view %arg0 {cpn.comm = {all_gather = 600000 : i64}
func.func @boundary_row(%p: tensor<1000x100xf64>) -> (tensor<1000x100xf64>, tensor<100xf64>, tensor<900x100xf64>) {
  %r = cpn.view %p {offset = 100 : i64, strides = array<i64: 1>} : tensor<1000x100xf64> -> tensor<100xf64>
  %p1 = cpn.update %p, %r {offset = 0 : i64, strides = array<i64: 1>} : tensor<1000x100xf64>, tensor<100xf64> -> tensor<1000x100xf64>
  %r2 = cpn.view %p {offset = 100 : i64, strides = array<i64: 1>} : tensor<1000x100xf64> -> tensor<100xf64>
  %p2 = cpn.update %p1, %r2 {offset = 99900 : i64, strides = array<i64: 1>} : tensor<1000x100xf64>, tensor<100xf64> -> tensor<1000x100xf64>
  %r3 = cpn.view %p {offset = 200 : i64, strides = array<i64: 1>} : tensor<1000x100xf64> -> tensor<100xf64>
  %s = cpn.add %r3, %r3 : tensor<100xf64>, tensor<100xf64> -> tensor<100xf64>
  %t = cpn.view %p {offset = 50 : i64, strides = array<i64: 100, 1>} : tensor<1000x100xf64> -> tensor<900x100xf64>
  return %p2, %s, %t : tensor<1000x100xf64>, tensor<100xf64>, tensor<900x100xf64>
}

// A sort along the rows of a split value keeps its rows (each rank sorts its
// block: nothing moves); a take of flat indices reads every row (its split
// operand is gathered: 3/4 of 320000 bytes on each of 4 ranks).
// CHECK-LABEL: func.func @row_calls
// CHECK: cpn.libcall "sort_f8"{{.*}}cpn.dist = {extent = 1000 : i64, kind = "rows", shift = 0 : i64}
// CHECK-NOT: cpn.comm
// CHECK: cpn.libcall "take_f8"{{.*}}cpn.comm = {all_gather = 240000 : i64}
func.func @row_calls(%x: tensor<1000x40xf64>, %i: tensor<10xi64>) -> (tensor<1000x40xf64>, tensor<10xf64>) {
  %s = cpn.libcall "sort_f8"(%x) {args = array<i64>} : (tensor<1000x40xf64>) -> tensor<1000x40xf64>
  %t = cpn.libcall "take_f8"(%x, %i) {args = array<i64: 0>} : (tensor<1000x40xf64>, tensor<10xi64>) -> tensor<10xf64>
  return %s, %t : tensor<1000x40xf64>, tensor<10xf64>
}
