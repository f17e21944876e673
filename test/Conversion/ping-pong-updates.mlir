// RUN: cpn-opt %s -split-input-file -cpn-ping-pong-updates | FileCheck %s
// RUN: cpn-opt %s -split-input-file -cpn-ping-pong-updates -eliminate-empty-tensors -one-shot-bufferize -cse -canonicalize | FileCheck %s --check-prefix=BUF
// RUN: cpn-opt %s -split-input-file -cpn-ping-pong-updates=min-fraction=0.99 | FileCheck %s --check-prefix=SMALL

// u[1:-1, 1:-1] = u[:-2, 1:-1] + u[1:-1, 2:] on a 10x10 grid: the update reads
// neighbours it overwrites. The pass copies the border of u (two row slabs,
// two column slabs) into a fresh tensor and inserts the interior there.
// CHECK-LABEL: func @stencil
// CHECK: %[[E:.+]] = tensor.empty() : tensor<10x10xf64>
// CHECK: %[[T:.+]] = tensor.extract_slice %[[U:.+]][0, 0] [1, 10] [1, 1]
// CHECK: %[[E1:.+]] = tensor.insert_slice %[[T]] into %[[E]][0, 0] [1, 10] [1, 1]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[U]][9, 0] [1, 10] [1, 1]
// CHECK: %[[E2:.+]] = tensor.insert_slice %[[B]] into %[[E1]][9, 0] [1, 10] [1, 1]
// CHECK: %[[L:.+]] = tensor.extract_slice %[[U]][1, 0] [8, 1] [1, 1]
// CHECK: %[[E3:.+]] = tensor.insert_slice %[[L]] into %[[E2]][1, 0] [8, 1] [1, 1]
// CHECK: %[[R:.+]] = tensor.extract_slice %[[U]][1, 9] [8, 1] [1, 1]
// CHECK: %[[E4:.+]] = tensor.insert_slice %[[R]] into %[[E3]][1, 9] [8, 1] [1, 1]
// CHECK: %[[F:.+]] = linalg.generic
// CHECK: tensor.insert_slice %[[F]] into %[[E4]][1, 1] [8, 8] [1, 1]
// After bufferization the stencil writes straight into the new buffer's
// interior: one allocation, no 8x8 temporary, no copy of the interior (the
// in-place insert_slice leaves a self-copy, which cse + canonicalize fold).
// BUF-LABEL: func @stencil
// BUF: %[[A:.+]] = memref.alloc() {{.*}} : memref<10x10xf64>
// BUF-NOT: memref.alloc
// BUF-COUNT-4: memref.copy
// BUF: %[[IN:.+]] = memref.subview %[[A]][1, 1] [8, 8] [1, 1]
// BUF: linalg.generic {{.*}} outs(%[[IN]]
// BUF-NOT: memref.copy
// SMALL-LABEL: func @stencil
// SMALL-NOT: tensor.empty() : tensor<10x10xf64>
#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @stencil(%u: tensor<10x10xf64>) -> tensor<10x10xf64> {
  %up = tensor.extract_slice %u[0, 1] [8, 8] [1, 1] : tensor<10x10xf64> to tensor<8x8xf64>
  %right = tensor.extract_slice %u[1, 2] [8, 8] [1, 1] : tensor<10x10xf64> to tensor<8x8xf64>
  %e = tensor.empty() : tensor<8x8xf64>
  %f = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%up, %right : tensor<8x8xf64>, tensor<8x8xf64>) outs(%e : tensor<8x8xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<8x8xf64>
  %r = tensor.insert_slice %f into %u[1, 1] [8, 8] [1, 1] : tensor<8x8xf64> into tensor<10x10xf64>
  return %r : tensor<10x10xf64>
}

// -----

// u[1:] = 2 * u[1:]: the update reads only the region it writes, which
// bufferizes in place; the pass leaves it alone.
// CHECK-LABEL: func @aligned
// BUF-LABEL: func @aligned
// CHECK-NOT: tensor.empty() : tensor<8xf64>
#v = affine_map<(d0) -> (d0)>
func.func @aligned(%u: tensor<8xf64>) -> tensor<8xf64> {
  %x = tensor.extract_slice %u[1] [7] [1] : tensor<8xf64> to tensor<7xf64>
  %e = tensor.empty() : tensor<7xf64>
  %f = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<7xf64>) outs(%e : tensor<7xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.addf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<7xf64>
  %r = tensor.insert_slice %f into %u[1] [7] [1] : tensor<7xf64> into tensor<8xf64>
  return %r : tensor<8xf64>
}

// -----

// p[:, -1] = p[:, -2]: a column update reading its neighbour column is too
// small a part of p to be worth copying the rest; the pass leaves it alone.
// CHECK-LABEL: func @column
// CHECK-NOT: tensor.empty() : tensor<8x8xf64>
#c = affine_map<(d0, d1) -> (d0, d1)>
func.func @column(%p: tensor<8x8xf64>) -> tensor<8x8xf64> {
  %x = tensor.extract_slice %p[0, 6] [8, 1] [1, 1] : tensor<8x8xf64> to tensor<8x1xf64>
  %e = tensor.empty() : tensor<8x1xf64>
  %f = linalg.generic {indexing_maps = [#c, #c], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x1xf64>) outs(%e : tensor<8x1xf64>) {
  ^bb0(%a: f64, %o: f64):
    linalg.yield %a : f64
  } -> tensor<8x1xf64>
  %r = tensor.insert_slice %f into %p[0, 7] [8, 1] [1, 1] : tensor<8x1xf64> into tensor<8x8xf64>
  return %r : tensor<8x8xf64>
}

// -----

// The same stencil on a grid of any size (a shape-generic cpnc kernel): the
// interior's sizes are the grid's minus 2 (value bounds prove it through the
// argument's buffer), so the border slabs get run-time offsets and sizes.
// CHECK-LABEL: func @stencil_any_size
// CHECK: tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?xf64>
// CHECK: %[[N:.+]] = memref.dim %arg0, %c0
// CHECK: %[[M:.+]] = memref.dim %arg0, %c1
// CHECK: tensor.empty(%[[N]], %[[M]]) : tensor<?x?xf64>
// CHECK: tensor.extract_slice %[[U:.+]][0, 0] [1, %[[M]]]
// CHECK: tensor.extract_slice %[[U]][%{{.+}}, 0] [1, %[[M]]]
// CHECK: tensor.extract_slice %[[U]][1, 0] [%{{.+}}, 1]
// CHECK: tensor.extract_slice %[[U]][1, %{{.+}}] [%{{.+}}, 1]
// CHECK: linalg.generic
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[1, 1]
// BUF-LABEL: func @stencil_any_size
// BUF: memref.alloc({{.*}}) {{.*}} : memref<?x?xf64>
// BUF-NOT: memref.alloc
// BUF: linalg.generic
// BUF-NOT: memref.copy
#m2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @stencil_any_size(%arg: memref<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm2 = arith.constant -2 : index
  %u = bufferization.to_tensor %arg restrict : memref<?x?xf64> to tensor<?x?xf64>
  %n = memref.dim %arg, %c0 : memref<?x?xf64>
  %m = memref.dim %arg, %c1 : memref<?x?xf64>
  %n2 = arith.addi %n, %cm2 : index
  %m2 = arith.addi %m, %cm2 : index
  %up = tensor.extract_slice %u[0, 1] [%n2, %m2] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
  %right = tensor.extract_slice %u[1, 2] [%n2, %m2] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
  %e = tensor.empty(%n2, %m2) : tensor<?x?xf64>
  %f = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%up, %right : tensor<?x?xf64>, tensor<?x?xf64>) outs(%e : tensor<?x?xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %s = arith.addf %a, %b : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  %r = tensor.insert_slice %f into %u[1, 1] [%n2, %m2] [1, 1] : tensor<?x?xf64> into tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// -----

// A row of a grid of any size (u[1:2, :] = f(u[0:1, :])): its size along the
// first dimension is not the grid's minus a few, so the pass leaves it alone.
// CHECK-LABEL: func @row_any_size
// BUF-LABEL: func @row_any_size
// CHECK-NOT: tensor.empty(%{{.*}}, %
// CHECK: return
#m3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_any_size(%arg: memref<?x?xf64>) -> tensor<?x?xf64> {
  %c1 = arith.constant 1 : index
  %u = bufferization.to_tensor %arg restrict : memref<?x?xf64> to tensor<?x?xf64>
  %m = memref.dim %arg, %c1 : memref<?x?xf64>
  %top = tensor.extract_slice %u[0, 0] [1, %m] [1, 1] : tensor<?x?xf64> to tensor<1x?xf64>
  %e = tensor.empty(%m) : tensor<1x?xf64>
  %f = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel"]}
      ins(%top : tensor<1x?xf64>) outs(%e : tensor<1x?xf64>) {
  ^bb0(%a: f64, %o: f64):
    %s = arith.addf %a, %a : f64
    linalg.yield %s : f64
  } -> tensor<1x?xf64>
  %r = tensor.insert_slice %f into %u[1, 0] [1, %m] [1, 1] : tensor<1x?xf64> into tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// -----

// One rank's block of a 5-point stencil (cpn-localize): the rank's rows of u
// (rows 0-9 of an 11-row tensor that holds one halo row) are updated at
// [1, 1], and the stencil reads the whole through slices of slices. The
// update is still a stencil of the rows it writes: written into a fresh
// tensor (the rank's fresh output), the border copied.
// CHECK-LABEL: func @rank_block
// CHECK: %[[E:.+]] = tensor.empty() : tensor<10x10xf64>
// CHECK: %[[F:.+]] = linalg.generic
// CHECK: tensor.insert_slice %[[F]] into %[[FRESH:inserted_slice.*]][1, 1] [9, 8] [1, 1]
#b = affine_map<(d0, d1) -> (d0, d1)>
func.func @rank_block(%u: tensor<11x10xf64>) -> tensor<10x10xf64> {
  %mine = tensor.extract_slice %u[0, 0] [10, 10] [1, 1] : tensor<11x10xf64> to tensor<10x10xf64>
  %above = tensor.extract_slice %u[0, 0] [9, 10] [1, 1] : tensor<11x10xf64> to tensor<9x10xf64>
  %up = tensor.extract_slice %above[0, 1] [9, 8] [1, 1] : tensor<9x10xf64> to tensor<9x8xf64>
  %below = tensor.extract_slice %u[2, 0] [9, 10] [1, 1] : tensor<11x10xf64> to tensor<9x10xf64>
  %down = tensor.extract_slice %below[0, 1] [9, 8] [1, 1] : tensor<9x10xf64> to tensor<9x8xf64>
  %e = tensor.empty() : tensor<9x8xf64>
  %f = linalg.generic {indexing_maps = [#b, #b, #b], iterator_types = ["parallel", "parallel"]}
      ins(%up, %down : tensor<9x8xf64>, tensor<9x8xf64>) outs(%e : tensor<9x8xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    linalg.yield %s : f64
  } -> tensor<9x8xf64>
  %r = tensor.insert_slice %f into %mine[1, 1] [9, 8] [1, 1] : tensor<9x8xf64> into tensor<10x10xf64>
  return %r : tensor<10x10xf64>
}
