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
void initFast(pybind11::module_ &m);

/// The body `f` of a raw CPython function (a new reference, or null with the
/// error set): the C++ exceptions it throws become Python's, as pybind11's
/// translators make them.
template <typename F> PyObject *translatingExceptions(F &&f) {
  try {
    return f();
  } catch (pybind11::error_already_set &e) {
    e.restore();
    return nullptr;
  } catch (...) {
    pybind11::detail::try_translate_exceptions();
    return nullptr;
  }
}

#endif // CPN_PYTHON_BINDINGS_H
