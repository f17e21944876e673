// RUN: cpn-opt %s -convert-cpn-updates | FileCheck %s

// Two joins whose chains start from one fill (CSE merges the equal fills
// of two concatenations): each starts from tensor.empty, and the fill is
// erased only once neither reads it (it was erased while the second chain
// still read it: a crash in the compiler).
// CHECK-LABEL: func.func @two_joins_one_fill
// CHECK-NOT: ins(%arg0
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [1, 5] [1, 1]
// CHECK-NOT: ins(%arg0
// CHECK: tensor.insert_slice %arg3 into %{{.+}}[0, 0] [3, 2] [1, 1]
// CHECK-NOT: ins(%arg0
#map = affine_map<(d0, d1) -> ()>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_joins_one_fill(%a: tensor<f64>, %x: tensor<1x5xf64>, %y: tensor<2x5xf64>, %p: tensor<3x2xf64>, %q: tensor<3x3xf64>) -> (tensor<3x5xf64>, tensor<3x5xf64>) {
    %2 = tensor.empty() : tensor<3x5xf64>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<f64>) outs(%2 : tensor<3x5xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<3x5xf64>
    %6 = cpn.update %3, %x {offset = 0 : i64, strides = array<i64: 5, 1>} : tensor<3x5xf64>, tensor<1x5xf64> -> tensor<3x5xf64>
    %7 = cpn.update %6, %y {offset = 5 : i64, strides = array<i64: 5, 1>} : tensor<3x5xf64>, tensor<2x5xf64> -> tensor<3x5xf64>
    %8 = cpn.update %3, %p {offset = 0 : i64, strides = array<i64: 5, 1>} : tensor<3x5xf64>, tensor<3x2xf64> -> tensor<3x5xf64>
    %9 = cpn.update %8, %q {offset = 2 : i64, strides = array<i64: 5, 1>} : tensor<3x5xf64>, tensor<3x3xf64> -> tensor<3x5xf64>
    return %7, %9 : tensor<3x5xf64>, tensor<3x5xf64>
}
