// RUN: cpn-opt %s -split-input-file -cpn-outline-repeats | FileCheck %s
// RUN: cpn-opt %s -split-input-file -cpn-outline-repeats=min-ops=7 | FileCheck %s --check-prefix=BIG
// RUN: cpn-opt %s -split-input-file -cpn-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// Three iterations of x = f(x, p) with a sum traced into one kernel: one
// function for the iteration, called three times; p is passed unchanged, x from one call
// to the next, and each call writes its result into a destination the
// kernel allocates. The kernel's status argument goes to the checks inside.
// CHECK-LABEL: func.func @carried(
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<8xf64>, %[[X:[a-z0-9]+]]: tensor<8xf64>, %[[S:[a-z0-9]+]]: memref<1xi32>
// CHECK: %[[D0:.+]] = bufferization.alloc_tensor() : tensor<8xf64>
// CHECK: %[[R0:.+]] = call @carried_repeat(%[[X]], %[[P]], %[[D0]], %[[S]])
// CHECK: %[[D1:.+]] = bufferization.alloc_tensor() : tensor<8xf64>
// CHECK: %[[R1:.+]] = call @carried_repeat(%[[R0]], %[[P]], %[[D1]], %[[S]])
// CHECK: %[[D2:.+]] = bufferization.alloc_tensor() : tensor<8xf64>
// CHECK: %[[R2:.+]] = call @carried_repeat(%[[R1]], %[[P]], %[[D2]], %[[S]])
// CHECK-NEXT: %[[T:.+]] = cpn.sqrt %[[R2]]
// CHECK-NEXT: return %[[T]]
// CHECK: func.func private @carried_repeat(%[[A0:.+]]: tensor<8xf64>, %[[A1:.+]]: tensor<8xf64>, %[[A2:.+]]: tensor<8xf64>, %{{.+}}: memref<1xi32> {cpn.fp_status}) -> tensor<8xf64> attributes {passthrough = ["noinline"]}
// CHECK-NEXT: cpn.multiply %[[A0]], %[[A1]] {cpn.fpcheck = 7 : i64}
// CHECK-COUNT-4: cpn.
// CHECK-NEXT: %[[Y:.+]] = cpn.divide
// CHECK-NEXT: %[[Z:.+]] = bufferization.materialize_in_destination %[[Y]] in %[[A2]]
// CHECK-NEXT: return %[[Z]]
// A period of six ops is below min-ops=7: nothing is outlined.
// BIG-LABEL: func.func @carried(
// BIG-NOT: call
// BIG: return
func.func @carried(%p: tensor<8xf64>, %x0: tensor<8xf64>, %s: memref<1xi32> {cpn.fp_status}) -> tensor<8xf64> {
  %a0 = cpn.multiply %x0, %p {cpn.fpcheck = 7 : i64} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b0 = cpn.add %a0, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c0 = cpn.exp %b0 : tensor<8xf64> -> tensor<8xf64>
  %d0 = cpn.reduce sum %c0 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  %e0 = cpn.view %d0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %x1 = cpn.divide %c0, %e0 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %a1 = cpn.multiply %x1, %p {cpn.fpcheck = 7 : i64} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b1 = cpn.add %a1, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c1 = cpn.exp %b1 : tensor<8xf64> -> tensor<8xf64>
  %d1 = cpn.reduce sum %c1 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  %e1 = cpn.view %d1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %x2 = cpn.divide %c1, %e1 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %a2 = cpn.multiply %x2, %p {cpn.fpcheck = 7 : i64} : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b2 = cpn.add %a2, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c2 = cpn.exp %b2 : tensor<8xf64> -> tensor<8xf64>
  %d2 = cpn.reduce sum %c2 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  %e2 = cpn.view %d2 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %x3 = cpn.divide %c2, %e2 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %t = cpn.sqrt %x3 : tensor<8xf64> -> tensor<8xf64>
  return %t : tensor<8xf64>
}

// -----

// h = f(xs[t], h) over t: the view of xs moves with t, so it stays in the
// kernel and its value is passed in. The run starts where it repeats (the
// first op is not part of it), at the phase that keeps three periods.
// CHECK-LABEL: func.func @moving_view(
// CHECK: %[[H:.+]] = cpn.negative
// CHECK: %[[V0:.+]] = cpn.view %{{.+}} {offset = 0 : i64
// CHECK: %[[R0:.+]] = call @moving_view_repeat(%[[H]], %[[V0]], %{{.+}})
// CHECK: %[[V1:.+]] = cpn.view %{{.+}} {offset = 8 : i64
// CHECK: %[[R1:.+]] = call @moving_view_repeat(%[[R0]], %[[V1]], %{{.+}})
// CHECK: %[[V2:.+]] = cpn.view %{{.+}} {offset = 16 : i64
// CHECK: %[[R2:.+]] = call @moving_view_repeat(%[[R1]], %[[V2]], %{{.+}})
// CHECK-NEXT: return %[[R2]]
// CHECK: func.func private @moving_view_repeat(%{{.+}}: tensor<8xf32>, %{{.+}}: tensor<8xf32>, %{{.+}}: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NOT: offset = 8
// CHECK: return
func.func @moving_view(%xs: tensor<3x8xf32>, %h: tensor<8xf32>) -> tensor<8xf32> {
  %h0 = cpn.negative %h : tensor<8xf32> -> tensor<8xf32>
  %v0 = cpn.view %xs {offset = 0 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %a0 = cpn.multiply %v0, %h0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %b0 = cpn.tanh %a0 : tensor<8xf32> -> tensor<8xf32>
  %c0 = cpn.add %b0, %v0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s0 = cpn.reduce sum %c0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e0 = cpn.view %s0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h1 = cpn.subtract %e0, %b0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %v1 = cpn.view %xs {offset = 8 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %a1 = cpn.multiply %v1, %h1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %b1 = cpn.tanh %a1 : tensor<8xf32> -> tensor<8xf32>
  %c1 = cpn.add %b1, %v1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s1 = cpn.reduce sum %c1 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e1 = cpn.view %s1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h2 = cpn.subtract %e1, %b1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %v2 = cpn.view %xs {offset = 16 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %a2 = cpn.multiply %v2, %h2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %b2 = cpn.tanh %a2 : tensor<8xf32> -> tensor<8xf32>
  %c2 = cpn.add %b2, %v2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s2 = cpn.reduce sum %c2 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e2 = cpn.view %s2 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h3 = cpn.subtract %e2, %b2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %h3 : tensor<8xf32>
}

// -----

// The same loop in a kernel whose view offsets are arguments: the views
// carry one recorded offset but read at run-time offsets of their own, so
// each stays in the kernel as a moving view does.
// CHECK-LABEL: func.func @run_time_offsets(
// CHECK: %[[V0:.+]] = cpn.view %{{.+}}[%arg2]
// CHECK: call @run_time_offsets_repeat(%{{.+}}, %[[V0]], %{{.+}})
// CHECK: %[[V1:.+]] = cpn.view %{{.+}}[%arg3]
// CHECK: call @run_time_offsets_repeat(%{{.+}}, %[[V1]], %{{.+}})
// CHECK: func.func private @run_time_offsets_repeat(
// CHECK-NOT: cpn.view %{{.+}}[
// CHECK: return
func.func @run_time_offsets(%xs: tensor<3x8xf32>, %h: tensor<8xf32>, %i: index, %j: index, %k: index) -> tensor<8xf32> {
  %h0 = cpn.negative %h : tensor<8xf32> -> tensor<8xf32>
  %v0 = cpn.view %xs [%i] {offset = 8 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %m0 = cpn.multiply %v0, %h0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %a0 = cpn.tanh %m0 : tensor<8xf32> -> tensor<8xf32>
  %s0 = cpn.reduce sum %a0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e0 = cpn.view %s0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h1 = cpn.subtract %e0, %a0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %v1 = cpn.view %xs [%j] {offset = 8 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %m1 = cpn.multiply %v1, %h1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %a1 = cpn.tanh %m1 : tensor<8xf32> -> tensor<8xf32>
  %s1 = cpn.reduce sum %a1 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e1 = cpn.view %s1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h2 = cpn.subtract %e1, %a1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %v2 = cpn.view %xs [%k] {offset = 8 : i64, strides = array<i64: 1>} : tensor<3x8xf32> -> tensor<8xf32>
  %m2 = cpn.multiply %v2, %h2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %a2 = cpn.tanh %m2 : tensor<8xf32> -> tensor<8xf32>
  %s2 = cpn.reduce sum %a2 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %e2 = cpn.view %s2 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f32> -> tensor<8xf32>
  %h3 = cpn.subtract %e2, %a2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %h3 : tensor<8xf32>
}

// -----

// x = g(x) * t with a Python scalar t that changes each iteration: each
// scalar is an input of its own, passed to its call.
// CHECK-LABEL: func.func @varying_scalar(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8xf64>, %[[T0:[a-z0-9]+]]: tensor<f64>, %[[T1:[a-z0-9]+]]: tensor<f64>
// CHECK: %[[R0:.+]] = call @varying_scalar_repeat(%[[X]], %[[T0]], %{{.+}})
// CHECK: %[[R1:.+]] = call @varying_scalar_repeat(%[[R0]], %[[T1]], %{{.+}})
// CHECK-NEXT: return %[[R1]]
func.func @varying_scalar(%x: tensor<8xf64>, %t0: tensor<f64>, %t1: tensor<f64>) -> tensor<8xf64> {
  %a0 = cpn.sin %x : tensor<8xf64> -> tensor<8xf64>
  %s0 = cpn.reduce max %a0 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  %w0 = cpn.view %s0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %b0 = cpn.add %a0, %w0 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %v0 = cpn.view %t0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %x1 = cpn.multiply %b0, %v0 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %a1 = cpn.sin %x1 : tensor<8xf64> -> tensor<8xf64>
  %s1 = cpn.reduce max %a1 {axes = array<i64: 0>} : tensor<8xf64> -> tensor<f64>
  %w1 = cpn.view %s1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %b1 = cpn.add %a1, %w1 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %v1 = cpn.view %t1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<8xf64>
  %x2 = cpn.multiply %b1, %v1 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %x2 : tensor<8xf64>
}

// -----

// Iterations of elementwise ops only are left to fusion (one pass over
// memory for all of them), as are Black-Scholes' Horner steps.
// CHECK-LABEL: func.func @elementwise(
// CHECK-NOT: call
// CHECK: return
func.func @elementwise(%p: tensor<8xf64>, %x0: tensor<8xf64>) -> tensor<8xf64> {
  %a0 = cpn.multiply %x0, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b0 = cpn.add %a0, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c0 = cpn.exp %b0 : tensor<8xf64> -> tensor<8xf64>
  %d0 = cpn.negative %c0 : tensor<8xf64> -> tensor<8xf64>
  %e0 = cpn.subtract %d0, %x0 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %x1 = cpn.divide %e0, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %a1 = cpn.multiply %x1, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b1 = cpn.add %a1, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c1 = cpn.exp %b1 : tensor<8xf64> -> tensor<8xf64>
  %d1 = cpn.negative %c1 : tensor<8xf64> -> tensor<8xf64>
  %e1 = cpn.subtract %d1, %x1 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %x2 = cpn.divide %e1, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %a2 = cpn.multiply %x2, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %b2 = cpn.add %a2, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %c2 = cpn.exp %b2 : tensor<8xf64> -> tensor<8xf64>
  %d2 = cpn.negative %c2 : tensor<8xf64> -> tensor<8xf64>
  %e2 = cpn.subtract %d2, %x2 : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  %x3 = cpn.divide %e2, %p : tensor<8xf64>, tensor<8xf64> -> tensor<8xf64>
  return %x3 : tensor<8xf64>
}

// -----

// Periods that update an array in place are left to the buffer passes.
// CHECK-LABEL: func.func @updates(
// CHECK-NOT: call
// CHECK-COUNT-2: cpn.update
// CHECK: return
func.func @updates(%u: tensor<4x4xf64>, %d: tensor<4xf64>) -> tensor<4x4xf64> {
  %a0 = cpn.exp %d : tensor<4xf64> -> tensor<4xf64>
  %b0 = cpn.sin %a0 : tensor<4xf64> -> tensor<4xf64>
  %r0 = cpn.reduce sum %b0 {axes = array<i64: 0>} : tensor<4xf64> -> tensor<f64>
  %c0 = cpn.view %r0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<4xf64>
  %e0 = cpn.tan %c0 : tensor<4xf64> -> tensor<4xf64>
  %f0 = cpn.sqrt %e0 : tensor<4xf64> -> tensor<4xf64>
  %u0 = cpn.update %u, %f0 {offset = 0 : i64, strides = array<i64: 4>} : tensor<4x4xf64>, tensor<4xf64> -> tensor<4x4xf64>
  %a1 = cpn.exp %d : tensor<4xf64> -> tensor<4xf64>
  %b1 = cpn.sin %a1 : tensor<4xf64> -> tensor<4xf64>
  %r1 = cpn.reduce sum %b1 {axes = array<i64: 0>} : tensor<4xf64> -> tensor<f64>
  %c1 = cpn.view %r1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<4xf64>
  %e1 = cpn.tan %c1 : tensor<4xf64> -> tensor<4xf64>
  %f1 = cpn.sqrt %e1 : tensor<4xf64> -> tensor<4xf64>
  %u1 = cpn.update %u0, %f1 {offset = 0 : i64, strides = array<i64: 4>} : tensor<4x4xf64>, tensor<4xf64> -> tensor<4x4xf64>
  return %u1 : tensor<4x4xf64>
}

// -----

// A kernel as the JIT builds it, lowered all the way: the iteration is one
// LLVM function, never inlined, called twice with bare pointers; the
// second call writes straight into the kernel's output.
// LLVM-LABEL: llvm.func @kernel(
// LLVM: llvm.call @kernel_repeat(
// LLVM: llvm.call @kernel_repeat(
// LLVM-NOT: llvm.call @kernel_repeat(
// LLVM: llvm.return
// LLVM: llvm.func @kernel_repeat(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr {cpn.fp_status})
// LLVM-SAME: passthrough = ["noinline"]
func.func @kernel(%arg0: memref<64xf64> {llvm.noalias}, %arg1: memref<64xf64> {llvm.noalias}, %arg2: memref<64xf64> {llvm.noalias}, %arg3: memref<1xi32> {cpn.fp_status, llvm.noalias}) {
  %p = bufferization.to_tensor %arg0 restrict : memref<64xf64> to tensor<64xf64>
  %x0 = bufferization.to_tensor %arg1 restrict : memref<64xf64> to tensor<64xf64>
  %a0 = cpn.multiply %x0, %p {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  %b0 = cpn.add %a0, %p : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  %c0 = cpn.exp %b0 : tensor<64xf64> -> tensor<64xf64>
  %d0 = cpn.negative %c0 : tensor<64xf64> -> tensor<64xf64>
  %e0 = cpn.reduce sum %d0 {axes = array<i64: 0>} : tensor<64xf64> -> tensor<f64>
  %f0 = cpn.view %e0 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<64xf64>
  %x1 = cpn.divide %d0, %f0 {cpn.fpcheck = 7 : i64, cpn.fpsite = 1 : i64} : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  %a1 = cpn.multiply %x1, %p {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  %b1 = cpn.add %a1, %p : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  %c1 = cpn.exp %b1 : tensor<64xf64> -> tensor<64xf64>
  %d1 = cpn.negative %c1 : tensor<64xf64> -> tensor<64xf64>
  %e1 = cpn.reduce sum %d1 {axes = array<i64: 0>} : tensor<64xf64> -> tensor<f64>
  %f1 = cpn.view %e1 {offset = 0 : i64, strides = array<i64: 0>} : tensor<f64> -> tensor<64xf64>
  %x2 = cpn.divide %d1, %f1 {cpn.fpcheck = 7 : i64, cpn.fpsite = 1 : i64} : tensor<64xf64>, tensor<64xf64> -> tensor<64xf64>
  bufferization.materialize_in_destination %x2 in restrict writable %arg2 : (tensor<64xf64>, memref<64xf64>) -> ()
  return
}

// -----

// Complex results are measured in bytes too (both parts): the pass must not
// ask a complex type for its bit width (a stack of complex products, as
// `a @ a` on a (6, 2, 2) complex array records it).
// CHECK-LABEL: func.func @complex_products(
// CHECK-COUNT-3: call @complex_products_repeat
func.func @complex_products(%a: tensor<6x2x2xcomplex<f64>>, %out: tensor<6x2x2xcomplex<f64>>) -> tensor<6x2x2xcomplex<f64>> {
  %l0 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r0 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m0 = cpn.matmul %l0, %r0 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %l1 = cpn.view %a {offset = 4 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r1 = cpn.view %a {offset = 4 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m1 = cpn.matmul %l1, %r1 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %l2 = cpn.view %a {offset = 8 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r2 = cpn.view %a {offset = 8 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m2 = cpn.matmul %l2, %r2 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %l3 = cpn.view %a {offset = 12 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r3 = cpn.view %a {offset = 12 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m3 = cpn.matmul %l3, %r3 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %l4 = cpn.view %a {offset = 16 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r4 = cpn.view %a {offset = 16 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m4 = cpn.matmul %l4, %r4 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %l5 = cpn.view %a {offset = 20 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %r5 = cpn.view %a {offset = 20 : i64, strides = array<i64: 2, 1>} : tensor<6x2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %m5 = cpn.matmul %l5, %r5 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>> -> tensor<2x2xcomplex<f64>>
  %v0 = cpn.view %m0 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u0 = cpn.update %out, %v0 {offset = 0 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  %v1 = cpn.view %m1 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u1 = cpn.update %u0, %v1 {offset = 4 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  %v2 = cpn.view %m2 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u2 = cpn.update %u1, %v2 {offset = 8 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  %v3 = cpn.view %m3 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u3 = cpn.update %u2, %v3 {offset = 12 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  %v4 = cpn.view %m4 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u4 = cpn.update %u3, %v4 {offset = 16 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  %v5 = cpn.view %m5 {offset = 0 : i64, strides = array<i64: 0, 2, 1>} : tensor<2x2xcomplex<f64>> -> tensor<1x2x2xcomplex<f64>>
  %u5 = cpn.update %u4, %v5 {offset = 20 : i64, strides = array<i64: 4, 2, 1>} : tensor<6x2x2xcomplex<f64>>, tensor<1x2x2xcomplex<f64>> -> tensor<6x2x2xcomplex<f64>>
  return %u5 : tensor<6x2x2xcomplex<f64>>
}

// -----

// Values without elements are not computed at all: their periods are not
// outlined (a call would pass and return nothing but empty tensors).
// CHECK-LABEL: func.func @empty_products(
// CHECK-NOT: call
// CHECK: return
func.func @empty_products(%a: tensor<6x0x2xi16>) -> (tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>) {
  %l0 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r0 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m0 = cpn.matmul %l0, %r0 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  %l1 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r1 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m1 = cpn.matmul %l1, %r1 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  %l2 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r2 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m2 = cpn.matmul %l2, %r2 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  %l3 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r3 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m3 = cpn.matmul %l3, %r3 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  %l4 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r4 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m4 = cpn.matmul %l4, %r4 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  %l5 = cpn.view %a {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<6x0x2xi16> -> tensor<0x2xi16>
  %r5 = cpn.view %a {offset = 0 : i64, strides = array<i64: 1, 2>} : tensor<6x0x2xi16> -> tensor<2x0xi16>
  %m5 = cpn.matmul %l5, %r5 : tensor<0x2xi16>, tensor<2x0xi16> -> tensor<0x0xi16>
  return %m0, %m1, %m2, %m3, %m4, %m5 : tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>, tensor<0x0xi16>
}

// -----

// `a2 @ a4` and `a4 @ a4` of a bool and a float16 vector (jit 710:3732):
// the same ops with the same result types, but the first casts a bool where
// the second casts a float16. They are not periods of one function (its
// parameter has one type: the call did not verify).
// CHECK-LABEL: func.func @operand_types_differ(
// CHECK: cpn.matmul
// CHECK: cpn.matmul
// CHECK: return
func.func @operand_types_differ(%arg0: memref<3xi64> {llvm.noalias}, %arg1: memref<3xi1> {llvm.noalias}, %arg2: memref<i1> {llvm.noalias}, %arg3: memref<1xf16> {llvm.noalias}, %arg4: memref<f16> {llvm.noalias}, %arg5: memref<f16> {llvm.noalias}, %arg6: memref<1xi1> {llvm.noalias}, %arg7: memref<1xi32> {cpn.fp_status, llvm.noalias}) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<3xi64> to tensor<3xi64>
  %1 = cpn.isnan %0 : tensor<3xi64> -> tensor<3xi1>
  %2 = cpn.reduce any %1 {axes = array<i64: 0>} : tensor<3xi1> -> tensor<i1>
  %3 = cpn.view %2 {offset = 0 : i64, strides = array<i64: 1>} : tensor<i1> -> tensor<1xi1>
  %4 = cpn.cast %3 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<1xi1> -> tensor<1xf16>
  %5 = cpn.view %2 {offset = 0 : i64, strides = array<i64: 1>} : tensor<i1> -> tensor<1xi1>
  %6 = cpn.cast %5 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<1xi1> -> tensor<1xf32>
  %7 = cpn.cast %4 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<1xf16> -> tensor<1xf32>
  %8 = cpn.view %6 {offset = 0 : i64, strides = array<i64: 0, 1>} : tensor<1xf32> -> tensor<1x1xf32>
  %9 = cpn.view %7 {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<1xf32> -> tensor<1x1xf32>
  %10 = cpn.matmul %8, %9 : tensor<1x1xf32>, tensor<1x1xf32> -> tensor<1x1xf32>
  %11 = cpn.view %10 {offset = 0 : i64, strides = array<i64>} : tensor<1x1xf32> -> tensor<f32>
  %12 = cpn.cast %11 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<f32> -> tensor<f16>
  %13 = cpn.cast %4 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<1xf16> -> tensor<1xf32>
  %14 = cpn.cast %4 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<1xf16> -> tensor<1xf32>
  %15 = cpn.view %13 {offset = 0 : i64, strides = array<i64: 0, 1>} : tensor<1xf32> -> tensor<1x1xf32>
  %16 = cpn.view %14 {offset = 0 : i64, strides = array<i64: 1, 0>} : tensor<1xf32> -> tensor<1x1xf32>
  %17 = cpn.matmul %15, %16 : tensor<1x1xf32>, tensor<1x1xf32> -> tensor<1x1xf32>
  %18 = cpn.view %17 {offset = 0 : i64, strides = array<i64>} : tensor<1x1xf32> -> tensor<f32>
  %19 = cpn.cast %18 {cpn.fpcheck = 7 : i64, cpn.fpsite = 0 : i64} : tensor<f32> -> tensor<f16>
  %20 = cpn.view %2 {offset = 0 : i64, strides = array<i64: 1>} : tensor<i1> -> tensor<1xi1>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<3xi1>, memref<3xi1>) -> ()
  bufferization.materialize_in_destination %2 in restrict writable %arg2 : (tensor<i1>, memref<i1>) -> ()
  bufferization.materialize_in_destination %4 in restrict writable %arg3 : (tensor<1xf16>, memref<1xf16>) -> ()
  bufferization.materialize_in_destination %12 in restrict writable %arg4 : (tensor<f16>, memref<f16>) -> ()
  bufferization.materialize_in_destination %19 in restrict writable %arg5 : (tensor<f16>, memref<f16>) -> ()
  bufferization.materialize_in_destination %20 in restrict writable %arg6 : (tensor<1xi1>, memref<1xi1>) -> ()
  return
}
