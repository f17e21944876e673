// RUN: cpn-opt %s -split-input-file -cpn-schedule-reductions -convert-cpn-to-linalg | FileCheck %s
// RUN: cpn-opt %s -split-input-file \
// RUN:   --pass-pipeline="builtin.module(cpn-schedule-reductions,convert-cpn-to-linalg,canonicalize,cse,func.func(linalg-fuse-elementwise-ops))" \
// RUN:   | FileCheck %s --check-prefix=FUSED

// A Jacobi stencil: four shifted views, the arithmetic, and the write back.
// CHECK-LABEL: func @jacobi
// CHECK-COUNT-4: tensor.extract_slice
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[1, 1] [4, 4] [1, 1]
// FUSED-LABEL: func @jacobi
// FUSED: linalg.generic
// FUSED-COUNT-3: arith.addf
// FUSED-NEXT: arith.mulf
// FUSED-NEXT: linalg.yield
// FUSED-NOT: linalg.generic
// FUSED: tensor.insert_slice
func.func @jacobi(%u: tensor<6x6xf64>, %c: tensor<f64>) -> tensor<6x6xf64> {
  %a = cpn.view %u {offset = 1 : i64, strides = array<i64: 6, 1>} : tensor<6x6xf64> -> tensor<4x4xf64>
  %b = cpn.view %u {offset = 13 : i64, strides = array<i64: 6, 1>} : tensor<6x6xf64> -> tensor<4x4xf64>
  %l = cpn.view %u {offset = 6 : i64, strides = array<i64: 6, 1>} : tensor<6x6xf64> -> tensor<4x4xf64>
  %r = cpn.view %u {offset = 8 : i64, strides = array<i64: 6, 1>} : tensor<6x6xf64> -> tensor<4x4xf64>
  %cb = cpn.view %c {offset = 0 : i64, strides = array<i64: 0, 0>} : tensor<f64> -> tensor<4x4xf64>
  %s1 = cpn.add %a, %b : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %s2 = cpn.add %s1, %l : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %s3 = cpn.add %s2, %r : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %s4 = cpn.multiply %cb, %s3 : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %u1 = cpn.update %u, %s4 {offset = 7 : i64, strides = array<i64: 6, 1>} : tensor<6x6xf64>, tensor<4x4xf64> -> tensor<6x6xf64>
  return %u1 : tensor<6x6xf64>
}

// -----

// A transposed, reversed view: a slice, then a generic that permutes.
// CHECK-DAG: #[[REV:.+]] = affine_map<(d0, d1) -> (d1, -d0 + 2)>
// CHECK-LABEL: func @transpose_reverse
// CHECK: linalg.generic {indexing_maps = [#[[REV]]
func.func @transpose_reverse(%u: tensor<3x4xf32>) -> tensor<3x3xf32> {
  %0 = cpn.view %u {offset = 2 : i64, strides = array<i64: -1, 4>} : tensor<3x4xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// A diagonal write cannot be a box: the gather form picks the new value.
// CHECK-LABEL: func @diagonal_update
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK: arith.select
func.func @diagonal_update(%u: tensor<3x3xi64>, %d: tensor<3xi64>) -> tensor<3x3xi64> {
  %0 = cpn.update %u, %d {offset = 0 : i64, strides = array<i64: 4>} : tensor<3x3xi64>, tensor<3xi64> -> tensor<3x3xi64>
  return %0 : tensor<3x3xi64>
}

// -----

// CHECK-LABEL: func @reduce_rows
// CHECK: linalg.fill
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf
func.func @reduce_rows(%x: tensor<4x50xf64>) -> tensor<4xf64> {
  %0 = cpn.reduce sum %x {axes = array<i64: 1>} : tensor<4x50xf64> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// A few elements per result: an elementwise generic with one input per
// reduced position (constant indices in the maps), summed in order; no
// accumulator fill.
// CHECK-DAG: #[[M0:.+]] = affine_map<(d0) -> (d0, 0)>
// CHECK-DAG: #[[M2:.+]] = affine_map<(d0) -> (d0, 2)>
// CHECK-LABEL: func @reduce_small_rows
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[M0]], #{{.+}}, #[[M2]], #{{.+}}], iterator_types = ["parallel"]}
// CHECK-COUNT-3: arith.addf
func.func @reduce_small_rows(%x: tensor<4x3xf64>) -> tensor<4xf64> {
  %0 = cpn.reduce sum %x {axes = array<i64: 1>} : tensor<4x3xf64> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// argmin over 4 columns: the first minimum (or NaN), by selects.
// CHECK-LABEL: func @argmin_small
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel"]
// CHECK-COUNT-3: arith.cmpf olt
// CHECK: linalg.yield %{{.+}} : i64
func.func @argmin_small(%x: tensor<6x4xf32>) -> tensor<6xi64> {
  %0 = cpn.reduce argmin %x {axes = array<i64: 1>} : tensor<6x4xf32> -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

// Integer floor division guards the zero divisor (NumPy gives 0).
// CHECK-LABEL: func @int_floor_divide
// CHECK: arith.cmpi eq
// CHECK: arith.floordivsi
// CHECK: arith.select
func.func @int_floor_divide(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = cpn.floor_divide %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func @unsigned_cast
// CHECK: arith.uitofp
func.func @unsigned_cast(%a: tensor<4xi8>) -> tensor<4xf64> {
  %0 = cpn.cast %a {src_unsigned} : tensor<4xi8> -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// CHECK-LABEL: func @matmul
// CHECK: linalg.matmul
func.func @matmul(%a: tensor<4x5xf64>, %b: tensor<5x3xf64>) -> tensor<4x3xf64> {
  %0 = cpn.matmul %a, %b : tensor<4x5xf64>, tensor<5x3xf64> -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// -----

// x.T @ y.T: both operands are whole-matrix transposes, read in place through
// transposed indexing maps; no transposing copy.
// CHECK-LABEL: func @matmul_transposed
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%arg0, %arg1 : tensor<5x4xf64>, tensor<3x5xf64>)
func.func @matmul_transposed(%x: tensor<5x4xf64>, %y: tensor<3x5xf64>) -> tensor<4x3xf64> {
  %a = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 4>} : tensor<5x4xf64> -> tensor<4x5xf64>
  %b = cpn.view %y {offset = 0 : i64, strides = array<i64: 1, 5>} : tensor<3x5xf64> -> tensor<5x3xf64>
  %0 = cpn.matmul %a, %b : tensor<4x5xf64>, tensor<5x3xf64> -> tensor<4x3xf64>
  return %0 : tensor<4x3xf64>
}

// A reduction over many rows (axis 0) is cut into row blocks: the rows are
// regrouped (blocks, rows/blocks, cols), each block reduces into its own
// partial row (parallel over blocks), then the 16 partials into the result.
// CHECK-LABEL: func @reduce_outer_blocks
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [16, 64, 5]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.+}} : tensor<16x5xf64>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%{{.+}} : tensor<5xf64>)
func.func @reduce_outer_blocks(%x: tensor<1024x5xf64>) -> tensor<5xf64> {
  %0 = cpn.reduce sum %x {axes = array<i64: 0>} : tensor<1024x5xf64> -> tensor<5xf64>
  return %0 : tensor<5xf64>
}

// Rows that no block count from 8 to 16 divides: 16 blocks of 64 rows, and
// the last 7 rows (a slice) start the result.
// CHECK-LABEL: func @reduce_outer_prime
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [1024, 5] [1, 1]
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [16, 64, 5]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: tensor.extract_slice %{{.+}}[1024, 0] [7, 5] [1, 1]
// CHECK: %[[TAIL:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%[[TAIL]] : tensor<5xf64>)
func.func @reduce_outer_prime(%x: tensor<1031x5xf64>) -> tensor<5xf64> {
  %0 = cpn.reduce max %x {axes = array<i64: 0>} : tensor<1031x5xf64> -> tensor<5xf64>
  return %0 : tensor<5xf64>
}

// A whole 1-D array of 2 MB or more is reduced in blocks, as many as divide
// it (64 here, of 4096 elements): each block into its own partial (parallel
// over blocks), then the partials into the result.
// CHECK-LABEL: func @reduce_1d_blocks
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [64, 4096]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<64xf64>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<f64>)
func.func @reduce_1d_blocks(%x: tensor<262144xf64>) -> tensor<f64> {
  %0 = cpn.reduce sum %x {axes = array<i64: 0>} : tensor<262144xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

// Below 2 MB (and for a length no block count divides) one loop.
// CHECK-LABEL: func @reduce_1d_small
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
func.func @reduce_1d_small(%x: tensor<65536xf64>) -> tensor<f64> {
  %0 = cpn.reduce max %x {axes = array<i64: 0>} : tensor<65536xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

// x.T @ v on a tall, narrow x is no linalg.matmul (no BLAS call): a row-block
// sum over x's rows, as x.sum(axis=0) (BLAS's transposed gemv reads such an x
// at a fraction of the bandwidth).
// CHECK-LABEL: func @tall_transposed_matvec
// CHECK-NOT: linalg.matmul
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [16, 256, 8]
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [16, 256, 1]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel", "parallel"]
// CHECK: arith.mulf
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel", "parallel"]
func.func @tall_transposed_matvec(%x: tensor<4096x8xf64>, %v: tensor<4096x1xf64>) -> tensor<8x1xf64> {
  %t = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<4096x8xf64> -> tensor<8x4096xf64>
  %r = cpn.matmul %t, %v : tensor<8x4096xf64>, tensor<4096x1xf64> -> tensor<8x1xf64>
  return %r : tensor<8x1xf64>
}

// A vector @ vector product (1 x k by k x 1) is a reduction of products,
// which the vectors' producers fuse into (no BLAS call, no buffer per operand).
// CHECK-LABEL: func @inner_product
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#[[$A:.+]], #[[$B:.+]], #{{.+}}], iterator_types = ["reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<f64>)
// CHECK: arith.mulf
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc>
// CHECK: tensor.expand_shape %{{.+}} [] output_shape [1, 1] : tensor<f64> into tensor<1x1xf64>
func.func @inner_product(%a: tensor<1x300xf64>, %b: tensor<300x1xf64>) -> tensor<1x1xf64> {
  %r = cpn.matmul %a, %b : tensor<1x300xf64>, tensor<300x1xf64> -> tensor<1x1xf64>
  return %r : tensor<1x1xf64>
}

// Long vectors (2^15 elements or more): 16 blocks summed in parallel, then
// the partials.
// CHECK-LABEL: func @inner_product_blocks
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<16xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<f32>)
func.func @inner_product_blocks(%a: tensor<1x65536xf32>, %b: tensor<65536x1xf32>) -> tensor<1x1xf32> {
  %r = cpn.matmul %a, %b : tensor<1x65536xf32>, tensor<65536x1xf32> -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}

// No rows: one (empty) reduction, no blocks.
// CHECK-LABEL: func @reduce_outer_empty
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
func.func @reduce_outer_empty(%x: tensor<0x5xf64>) -> tensor<5xf64> {
  %0 = cpn.reduce sum %x {axes = array<i64: 0>} : tensor<0x5xf64> -> tensor<5xf64>
  return %0 : tensor<5xf64>
}

// -----

// Results without elements compute nothing: each becomes a tensor.empty, even
// where lowering the op would divide by a zero-length dimension's stride (a
// flat view of a 6x0 base).
// CHECK-LABEL: func @empty_results
// CHECK-NOT: linalg.generic
// CHECK: %[[E:.+]] = tensor.empty() : tensor<0xi1>
// CHECK: return %[[E]]
func.func @empty_results(%x: tensor<6x0xf64>, %y: tensor<6x0xf64>) -> tensor<0xi1> {
  %g = cpn.greater %x, %y : tensor<6x0xf64>, tensor<6x0xf64> -> tensor<6x0xi1>
  %f = cpn.view %g {offset = 0 : i64, strides = array<i64: 1>} : tensor<6x0xi1> -> tensor<0xi1>
  return %f : tensor<0xi1>
}

// -----

// A sum over an empty axis has elements: it is lowered (to its identity).
// CHECK-LABEL: func @sum_over_empty_axis
// CHECK: linalg.
func.func @sum_over_empty_axis(%x: tensor<6x0xf64>) -> tensor<6xf64> {
  %s = cpn.reduce sum %x {axes = array<i64: 1>} : tensor<6x0xf64> -> tensor<6xf64>
  return %s : tensor<6xf64>
}

// -----

// np.reciprocal of integers: 1 and -1 are their own reciprocals, 0 gives
// INT_MIN for 64-bit signed integers, everything else 0.
// CHECK-LABEL: func @reciprocal_int
// CHECK: linalg.generic
// CHECK-DAG: arith.constant -9223372036854775808 : i64
// CHECK-DAG: arith.constant -1 : i64
// CHECK: arith.select
func.func @reciprocal_int(%x: tensor<4xi64>) -> tensor<4xi64> {
  %r = cpn.reciprocal %x : tensor<4xi64> -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// Elementwise maximum/minimum of floats are NumPy's selects: a tie (+-0)
// gives the second operand for float64 (its SIMD loops), the first for
// float16 (its half loops); NaN propagates. A max reduction combines with
// IEEE's maximumf, which LLVM vectorizes.
// CHECK-LABEL: func @min_max_ties
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.cmpf ole
// CHECK: arith.select
// CHECK: arith.maximumf
func.func @min_max_ties(%a: tensor<8xf64>, %b: tensor<8xf64>, %h: tensor<8xf16>, %g: tensor<8xf16>) -> (tensor<8xf64>, tensor<8xf16>, tensor<f64>) {
  %m = cpn.maximum %a, %b : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %n = cpn.minimum %h, %g : tensor<8xf16>, tensor<8xf16> -> tensor<8xf16>
  %r = cpn.reduce max %a {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  return %m, %n, %r : tensor<8xf64>, tensor<8xf16>, tensor<f64>
}

// -----

// A float32 sum of a few elements per result (8 here: a stack of 8 x 8
// products' contractions) stays in float32, in order, as NumPy's pairwise
// sum below 8 elements; a longer one accumulates in float64.
// CHECK-LABEL: func @f32_sums
// CHECK-NOT: arith.extf
// CHECK: arith.addf %{{.*}} : f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @f32_sums(%a: tensor<100x8xf32>, %b: tensor<100x64xf32>) -> (tensor<100xf32>, tensor<100xf32>) {
  %s = cpn.reduce sum %a {axes = array<i64: 1>} : tensor<100x8xf32> -> tensor<100xf32>
  %t = cpn.reduce sum %b {axes = array<i64: 1>} : tensor<100x64xf32> -> tensor<100xf32>
  return %s, %t : tensor<100xf32>, tensor<100xf32>
}

// -----

// A 1 x n row of a 2-D array keeps its unit dimension in the slice: no
// rank-reduced slice and generic that adds it back (which an update then
// copied into a buffer of its own).
// CHECK-LABEL: func.func @unit_row
// CHECK: %[[R:.*]] = tensor.extract_slice %{{.*}}[3, 0] [1, 16] [1, 1] : tensor<8x16xf64> to tensor<1x16xf64>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @unit_row(%u: tensor<8x16xf64>) -> tensor<1x16xf64> {
  %r = cpn.view %u {offset = 48 : i64, strides = array<i64: 16, 1>} : tensor<8x16xf64> -> tensor<1x16xf64>
  return %r : tensor<1x16xf64>
}

// -----

// A column `u[:, j:j+1]` (n x 1) likewise: one slice, no generic.
// CHECK-LABEL: func.func @unit_column
// CHECK: %[[C:.*]] = tensor.extract_slice %{{.*}}[0, 5] [8, 1] [1, 1] : tensor<8x16xf64> to tensor<8x1xf64>
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
func.func @unit_column(%u: tensor<8x16xf64>) -> tensor<8x1xf64> {
  %c = cpn.view %u {offset = 5 : i64, strides = array<i64: 16, 1>} : tensor<8x16xf64> -> tensor<8x1xf64>
  return %c : tensor<8x1xf64>
}
