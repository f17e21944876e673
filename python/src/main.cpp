//===- main.cpp - the _cpn pybind11 module ---------------------------------===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#include "bindings.h"

PYBIND11_MODULE(_cpn, m) {
  m.doc() = "cpnumeric's C++ side: trace recording, compiler, runtime";
  initTrace(m);
  initCompiler(m);
  initRuntime(m);
  initFast(m);
  initBaseline(m);
}
