//===- bindings.h - the _cpn module's parts --------------------*- C++ -*-===//
//
// Part of cpnumeric.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_PYTHON_BINDINGS_H
#define CPN_PYTHON_BINDINGS_H

#include "cpn/Trace/Trace.h"
#include "cpnrt/Error.h"

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

void initErrors(pybind11::module_ &m);
void initTrace(pybind11::module_ &m);
void initCompiler(pybind11::module_ &m);
void initRuntime(pybind11::module_ &m);
void initFast(pybind11::module_ &m);
void initBaseline(pybind11::module_ &m);
void initRanks(pybind11::module_ &m);
void initAllocator(pybind11::module_ &m);

/// The kind and message of a Python exception as a value's failure (the
/// baseline tier's runner returns one): numpy.linalg.LinAlgError, IndexError
/// and MemoryError keep their message; another class is of kind Runtime,
/// its message "<class name>: <message>".
cpnrt::Failure failureOf(pybind11::handle exc);

/// Makes sure `node` has a finished store: flushes the trace if it is
/// pending, then waits for the task that writes it (the GIL released);
/// throws the failure of the work (cpnrt::Error with its kind) or of the
/// window.
cpnrt::StoreRef materialize(const cpn::NodeRef &node);

/// A NumPy array over a store's elements, without a copy: the array keeps
/// the store alive; read-only unless `writable`; with `lend`, the store is
/// lent to it while it lives (cpnrt::Store::lent: np.asarray's export).
/// `transient`: the caller reads it on this thread before returning to the
/// program and keeps nothing (see storeOwner).
pybind11::object storeArray(const cpnrt::StoreRef &store, bool writable,
                            bool lend = false, bool transient = false);
/// NumPy's dtype (a PyArray_Descr, borrowed: made once per DType and kept)
/// of a runtime DType.
PyObject *storeDescr(cpnrt::DType dtype);
/// A new capsule that keeps `store` alive: the base object of NumPy arrays
/// over its buffer; with `lend`, lending it until the capsule dies. A
/// borrowed NumPy buffer (cpnrt::Store::borrow) is copied into the store's
/// own memory first: NumPy code reading the array may run on while another
/// thread writes the NumPy buffer. Not when `transient` and no other Python
/// thread exists: nothing can write the buffer before the caller is done.
PyObject *storeOwner(const cpnrt::StoreRef &store, bool lend = false,
                     bool transient = false);

/// Records one op of a Python call (Engine::record): NumPy's checks of the
/// result's size first (ValueError, MemoryError: the Python error is set and
/// null returned), and for an op that reports floating-point errors, the
/// line of the user's code that called it (the warning names that line).
cpn::NodeRef recordFromPython(std::string name,
                              const std::vector<cpn::NodeRef> &operands,
                              std::vector<int64_t> iattrs, std::string sattr,
                              std::vector<int64_t> shape, cpnrt::DType dtype);

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
