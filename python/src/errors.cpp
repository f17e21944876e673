//===- errors.cpp - the runtime's error kinds as Python exceptions --------===//
//
// Part of cpnumeric. Owns the one place that knows Python's exception classes
// for the kinds of cpnrt::Error (cpnrt/Error.h): a pybind11 translator that
// raises an Error of kind LinAlg as numpy.linalg.LinAlgError, Index as
// IndexError, Memory as MemoryError and Runtime as RuntimeError, with the
// Error's message; and the way back, the kind of a Python exception the
// baseline tier's runner returns (failureOf). A failure's kind is set where
// it happens (a library call, a task) and travels with its message, so
// nothing here or in the Python layer reads a message to find its class.
// std::bad_alloc outside a task stays pybind11's own translation
// (MemoryError("std::bad_alloc")).
//
// Calls pybind11 and numpy.linalg (looked up once, at the module's init).
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpnrt/Error.h"

namespace py = pybind11;

namespace {
/// numpy.linalg.LinAlgError, a strong reference kept for the process (the
/// translator may run during the interpreter's teardown).
PyObject *linAlgError = nullptr;

PyObject *classOf(cpnrt::ErrorKind kind) {
  switch (kind) {
  case cpnrt::ErrorKind::LinAlg:
    return linAlgError;
  case cpnrt::ErrorKind::Index:
    return PyExc_IndexError;
  case cpnrt::ErrorKind::Memory:
    return PyExc_MemoryError;
  case cpnrt::ErrorKind::Runtime:
    break;
  }
  return PyExc_RuntimeError;
}
} // namespace

cpnrt::Failure failureOf(py::handle exc) {
  py::handle type = reinterpret_cast<PyObject *>(Py_TYPE(exc.ptr()));
  std::string message = py::str(exc);
  if (message.empty()) // MemoryError() says nothing; a Failure must
    message = py::str(type.attr("__name__")).cast<std::string>();
  for (auto kind : {cpnrt::ErrorKind::LinAlg, cpnrt::ErrorKind::Index,
                    cpnrt::ErrorKind::Memory})
    if (PyObject_IsInstance(exc.ptr(), classOf(kind)) == 1)
      return {kind, std::move(message)};
  return {cpnrt::ErrorKind::Runtime,
          py::str(type.attr("__name__")).cast<std::string>() + ": " + message};
}

void initErrors(py::module_ &m) {
  py::object cls = py::module_::import("numpy.linalg").attr("LinAlgError");
  linAlgError = cls.release().ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const cpnrt::Error &e) {
      PyErr_SetString(classOf(e.kind()), e.what());
    }
  });
  // The kinds' numbers, for the C wrapper cpnc generates (it picks the
  // class of cpn_lib_take_error's kind).
  py::enum_<cpnrt::ErrorKind>(m, "ErrorKind",
                              "What kind of failure a runtime error is "
                              "(cpnrt::ErrorKind)")
      .value("Runtime", cpnrt::ErrorKind::Runtime)
      .value("LinAlg", cpnrt::ErrorKind::LinAlg)
      .value("Index", cpnrt::ErrorKind::Index)
      .value("Memory", cpnrt::ErrorKind::Memory);
}
