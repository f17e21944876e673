// RUN: cpn-opt %s -cpn-fuse-row-products | FileCheck %s
// RUN: cpn-opt %s --pass-pipeline="builtin.module(cpn-lower-to-llvm)" | FileCheck %s --check-prefix=LLVM

// Logistic regression's gradient, x.T @ (1 / (1 + exp(-(x @ w))) - y): both
// products and the sigmoid per block of 2048 rows (32 blocks of x's 65536),
// one pass over x; the sigmoid, also read after the product, is written
// block by block into a full-size result.
// CHECK-LABEL: func @gradient
// CHECK: %[[L:.+]]:2 = scf.forall (%[[B:.+]]) in (32) shared_outs(%[[P:.+]] = %{{.+}}, %[[E:.+]] = %{{.+}}) -> (tensor<32x8xf64>, tensor<65536xf64>)
// CHECK: %[[OFF:.+]] = affine.apply #{{.+}}(%[[B]])
// CHECK: %[[XB:.+]] = tensor.extract_slice %arg0[%[[OFF]], 0] [2048, 8] [1, 1]
// CHECK: %[[YB:.+]] = tensor.extract_slice %arg2[%[[OFF]]] [2048] [1]
// CHECK: %[[Z:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[XB]], %{{.+}} : tensor<2048x8xf64>, tensor<8x1xf64>)
// CHECK: cpn.negative %[[Z]] : tensor<2048xf64> -> tensor<2048xf64>
// CHECK: cpn.exp
// CHECK: %[[ONE:.+]] = cpn.view %arg3 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<2048xf64>
// CHECK: %[[PROB:.+]] = cpn.divide
// CHECK: %[[V:.+]] = cpn.subtract %[[PROB]], %[[YB]]
// CHECK: %[[T:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[XB]], %[[V]] : tensor<2048x8xf64>, tensor<2048xf64>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[T]] into %[[P]][%[[B]], 0] [1, 8] [1, 1]
// CHECK-NEXT: tensor.parallel_insert_slice %[[PROB]] into %[[E]][%[[OFF]]] [2048] [1]
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[L]]#0 : tensor<32x8xf64>)
// CHECK: tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [8, 1]
// CHECK: cpn.log %[[L]]#1
// CHECK-NOT: cpn.matmul
// LLVM-LABEL: llvm.func @gradient
// LLVM: omp.parallel
// LLVM: omp.loop_nest (%{{.+}}) : i64 = (%{{.+}}) to (%{{.+}}) step
func.func @gradient(%x: tensor<65536x8xf64>, %w: tensor<8xf64>, %y: tensor<65536xf64>, %one: tensor<f64>, %out: memref<8x1xf64>, %lout: memref<65536xf64>) {
  %w2 = cpn.view %w {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<8xf64> -> tensor<8x1xf64>
  %z = cpn.matmul %x, %w2 : tensor<65536x8xf64>, tensor<8x1xf64> -> tensor<65536x1xf64>
  %z1 = cpn.view %z {offset = 0 : i64, strides = array<i64: 1>} : tensor<65536x1xf64> -> tensor<65536xf64>
  %n = cpn.negative %z1 : tensor<65536xf64> -> tensor<65536xf64>
  %e = cpn.exp %n : tensor<65536xf64> -> tensor<65536xf64>
  %ones = cpn.view %one {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<65536xf64>
  %d = cpn.add %ones, %e : tensor<65536xf64>, tensor<65536xf64> -> tensor<65536xf64>
  %p = cpn.divide %ones, %d : tensor<65536xf64>, tensor<65536xf64> -> tensor<65536xf64>
  %v = cpn.subtract %p, %y : tensor<65536xf64>, tensor<65536xf64> -> tensor<65536xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<65536x8xf64> -> tensor<8x65536xf64>
  %v2 = cpn.view %v {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<65536xf64> -> tensor<65536x1xf64>
  %g = cpn.matmul %xt, %v2 : tensor<8x65536xf64>, tensor<65536x1xf64> -> tensor<8x1xf64>
  bufferization.materialize_in_destination %g in restrict writable %out : (tensor<8x1xf64>, memref<8x1xf64>) -> ()
  %l = cpn.log %p : tensor<65536xf64> -> tensor<65536xf64>
  bufferization.materialize_in_destination %l in restrict writable %lout : (tensor<65536xf64>, memref<65536xf64>) -> ()
  return
}

// Rows that no block size from 64 rows up divides (2053 is prime), a
// computed x, and a chain value read before the product: unchanged.
// CHECK-LABEL: func @prime_rows
// CHECK-NOT: scf.forall
// CHECK: cpn.matmul
// CHECK: cpn.matmul
func.func @prime_rows(%x: tensor<2053x8xf64>, %w: tensor<8x1xf64>) -> tensor<8x1xf64> {
  %z = cpn.matmul %x, %w : tensor<2053x8xf64>, tensor<8x1xf64> -> tensor<2053x1xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<2053x8xf64> -> tensor<8x2053xf64>
  %g = cpn.matmul %xt, %z : tensor<8x2053xf64>, tensor<2053x1xf64> -> tensor<8x1xf64>
  return %g : tensor<8x1xf64>
}
// CHECK-LABEL: func @computed_x
// CHECK-NOT: scf.forall
// CHECK: return
func.func @computed_x(%a: tensor<2048x8xf64>, %w: tensor<8x1xf64>) -> tensor<8x1xf64> {
  %x = cpn.exp %a : tensor<2048x8xf64> -> tensor<2048x8xf64>
  %z = cpn.matmul %x, %w : tensor<2048x8xf64>, tensor<8x1xf64> -> tensor<2048x1xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<2048x8xf64> -> tensor<8x2048xf64>
  %g = cpn.matmul %xt, %z : tensor<8x2048xf64>, tensor<2048x1xf64> -> tensor<8x1xf64>
  return %g : tensor<8x1xf64>
}
// CHECK-LABEL: func @read_before_the_product
// CHECK-NOT: scf.forall
// CHECK: return
func.func @read_before_the_product(%x: tensor<2048x8xf64>, %w: tensor<8x1xf64>, %o: memref<2048x1xf64>) -> tensor<8x1xf64> {
  %z = cpn.matmul %x, %w : tensor<2048x8xf64>, tensor<8x1xf64> -> tensor<2048x1xf64>
  %s = cpn.sqrt %z : tensor<2048x1xf64> -> tensor<2048x1xf64>
  bufferization.materialize_in_destination %s in restrict writable %o : (tensor<2048x1xf64>, memref<2048x1xf64>) -> ()
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<2048x8xf64> -> tensor<8x2048xf64>
  %g = cpn.matmul %xt, %z : tensor<8x2048xf64>, tensor<2048x1xf64> -> tensor<8x1xf64>
  return %g : tensor<8x1xf64>
}
// No columns: nothing to block (and no division by a zero block width).
// CHECK-LABEL: func @no_columns
// CHECK-NOT: scf.forall
// CHECK: return
func.func @no_columns(%x: tensor<4096x0xf64>, %w: tensor<0x1xf64>, %out: memref<4096x1xf64>) {
  %z = cpn.matmul %x, %w : tensor<4096x0xf64>, tensor<0x1xf64> -> tensor<4096x1xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<4096x0xf64> -> tensor<0x4096xf64>
  %g = cpn.matmul %xt, %z : tensor<0x4096xf64>, tensor<4096x1xf64> -> tensor<0x1xf64>
  bufferization.materialize_in_destination %z in restrict writable %out : (tensor<4096x1xf64>, memref<4096x1xf64>) -> ()
  return
}

// Two products x @ w1 and x @ w2 in one chain, and a bool chain value read
// after the product: both products run per block, the mask is exported.
// CHECK-LABEL: func @two_products_and_a_mask
// CHECK: %[[L:.+]]:2 = scf.forall (%{{.+}}) in (32) shared_outs(%{{.+}} = %{{.+}}, %[[E:.+]] = %{{.+}}) -> (tensor<32x8xf64>, tensor<65536x1xi1>)
// CHECK-DAG: %[[Z1:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %arg1 : tensor<2048x8xf64>, tensor<8x1xf64>)
// CHECK-DAG: %[[Z2:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %arg2 : tensor<2048x8xf64>, tensor<8x1xf64>)
// CHECK: %[[M:.+]] = cpn.greater %[[Z1]], %[[Z2]] : tensor<2048xf64>, tensor<2048xf64> -> tensor<2048xi1>
// CHECK: cpn.cast %[[M]] : tensor<2048xi1> -> tensor<2048xf64>
// CHECK: tensor.parallel_insert_slice %[[M]] into %[[E]]
// CHECK: return %{{.+}}, %[[L]]#1
func.func @two_products_and_a_mask(%x: tensor<65536x8xf64>, %w1: tensor<8x1xf64>, %w2: tensor<8x1xf64>) -> (tensor<8x1xf64>, tensor<65536x1xi1>) {
  %z1 = cpn.matmul %x, %w1 : tensor<65536x8xf64>, tensor<8x1xf64> -> tensor<65536x1xf64>
  %z2 = cpn.matmul %x, %w2 : tensor<65536x8xf64>, tensor<8x1xf64> -> tensor<65536x1xf64>
  %m = cpn.greater %z1, %z2 : tensor<65536x1xf64>, tensor<65536x1xf64> -> tensor<65536x1xi1>
  %v = cpn.cast %m : tensor<65536x1xi1> -> tensor<65536x1xf64>
  %xt = cpn.view %x {offset = 0 : i64, strides = array<i64: 1, 8>} : tensor<65536x8xf64> -> tensor<8x65536xf64>
  %g = cpn.matmul %xt, %v : tensor<8x65536xf64>, tensor<65536x1xf64> -> tensor<8x1xf64>
  return %g, %m : tensor<8x1xf64>, tensor<65536x1xi1>
}
