// RUN: cpn-opt %s -convert-cpn-to-linalg | FileCheck %s

// cpn.random_bits is one parallel generic: the key and the counter are read
// as scalars, the element's row-major index is added to the counter, and ten
// Philox rounds (two 32x32->64 multiplies each) give the word.
// CHECK-LABEL: func @bits
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<i64>, tensor<i64>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK-COUNT-20: arith.muli %{{.+}}, %c{{3528531795|3449720151}}_i64
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: linalg.yield
func.func @bits(%key: tensor<i64>, %ctr: tensor<i64>) -> tensor<4x8xi64> {
  %r = cpn.random_bits %key, %ctr : tensor<i64>, tensor<i64> -> tensor<4x8xi64>
  return %r : tensor<4x8xi64>
}
