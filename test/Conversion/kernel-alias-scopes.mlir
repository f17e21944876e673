// RUN: cpn-opt %s -cpn-kernel-alias-scopes | FileCheck %s

// Accesses through one noalias pointer argument (directly, through a
// getelementptr, or through a memref descriptor built from it) get that
// argument's scope and the other arguments' as noalias scopes, also inside
// an OpenMP region. Accesses through anything else, and arguments without
// llvm.noalias, are left alone.

// CHECK-DAG: #[[DOM:.+]] = #llvm.alias_scope_domain<{{.*}}description = "kernel arguments">
// CHECK-DAG: #[[S0:.+]] = #llvm.alias_scope<id = {{.+}}, domain = #[[DOM]], description = "arg0">
// CHECK-DAG: #[[S1:.+]] = #llvm.alias_scope<id = {{.+}}, domain = #[[DOM]], description = "arg1">
// CHECK-DAG: #[[S2:.+]] = #llvm.alias_scope<id = {{.+}}, domain = #[[DOM]], description = "arg2">

// CHECK-LABEL: llvm.func @kernel
// CHECK: llvm.load %{{.+}} {alias_scopes = [#[[S0]]], {{.*}}noalias_scopes = [#[[S1]], #[[S2]]]}
// CHECK: omp.parallel
// CHECK: llvm.load %{{.+}} {alias_scopes = [#[[S1]]], {{.*}}noalias_scopes = [#[[S0]], #[[S2]]]}
// CHECK: llvm.store %{{.+}}, %{{.+}} {alias_scopes = [#[[S2]]], {{.*}}noalias_scopes = [#[[S0]], #[[S1]]]}
// CHECK: llvm.load %[[OTHER:.+]] : !llvm.ptr -> f64
// CHECK: llvm.store %{{.+}}, %arg3 : f64, !llvm.ptr
llvm.func @kernel(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr {llvm.noalias},
                  %arg2: !llvm.ptr {llvm.noalias}, %arg3: !llvm.ptr) {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64)>
  %d0 = llvm.insertvalue %arg1, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %d1 = llvm.insertvalue %arg1, %d0[1] : !llvm.struct<(ptr, ptr, i64)>
  %a = llvm.load %arg0 : !llvm.ptr -> f64
  omp.parallel {
    %p = llvm.extractvalue %d1[1] : !llvm.struct<(ptr, ptr, i64)>
    %q = llvm.getelementptr %p[%c1] : (!llvm.ptr, i64) -> !llvm.ptr, f64
    %b = llvm.load %q : !llvm.ptr -> f64
    %s = llvm.fadd %a, %b : f64
    %r = llvm.getelementptr inbounds %arg2[%c1] : (!llvm.ptr, i64) -> !llvm.ptr, f64
    llvm.store %s, %r : f64, !llvm.ptr
    omp.terminator
  }
  %loaded = llvm.load %arg0 : !llvm.ptr -> !llvm.ptr
  %c = llvm.load %loaded : !llvm.ptr -> f64
  llvm.store %c, %arg3 : f64, !llvm.ptr
  llvm.return
}

// One noalias argument: nothing to tell apart.
// CHECK-LABEL: llvm.func @single
// CHECK-NOT: alias_scopes
// CHECK: llvm.return
llvm.func @single(%arg0: !llvm.ptr {llvm.noalias}, %arg1: !llvm.ptr) {
  %a = llvm.load %arg0 : !llvm.ptr -> f64
  llvm.store %a, %arg1 : f64, !llvm.ptr
  llvm.return
}
