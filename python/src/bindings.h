//===- bindings.h - the _cpn module's parts --------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_PYTHON_BINDINGS_H
#define CPN_PYTHON_BINDINGS_H

#include <pybind11/pybind11.h>

void initTrace(pybind11::module_ &m);
void initCompiler(pybind11::module_ &m);
void initRuntime(pybind11::module_ &m);

#endif // CPN_PYTHON_BINDINGS_H
