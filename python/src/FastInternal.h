//===- FastInternal.h - what the C fast path's files share ------*- C++ -*-===//
//
// Part of cpnumeric.
//
// The CPython-API hot paths of the bindings are three files of one job each:
// fast.cpp (ufunc calls, ndarray's operators and buffer protocol, the
// module's functions), items.cpp (a[key], a[key] = v, element access and the
// views behind them) and eager.cpp (the eager library call and iteration).
// This header declares what they share, in cpn::fast: the __slots__ of the
// Python layer's classes (State, `state`), the helpers more than one file
// uses, and the functions one file calls in another. What one file alone
// uses stays file-local there.
//
//===----------------------------------------------------------------------===//

#ifndef CPN_PYTHON_FASTINTERNAL_H
#define CPN_PYTHON_FASTINTERNAL_H

#include "bindings.h"
#include "cpnrt/Store.h"

#include <structmember.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace py = pybind11;

namespace cpn::fast {

/// The slots of a Python class, as byte offsets into its instances.
struct Slots {
  PyTypeObject *type = nullptr;
  std::vector<Py_ssize_t> offsets;

  void init(PyObject *cls, std::initializer_list<const char *> names) {
    if (!PyType_Check(cls))
      throw py::type_error("cpnumeric: fast_init takes classes");
    type = reinterpret_cast<PyTypeObject *>(cls);
    Py_INCREF(cls);
    offsets.clear();
    for (const char *name : names) {
      PyObject *d = PyDict_GetItemString(type->tp_dict, name);
      if (!d || !PyObject_TypeCheck(d, &PyMemberDescr_Type))
        throw py::type_error(std::string("cpnumeric: ") + type->tp_name +
                             " has no slot " + name);
      offsets.push_back(
          reinterpret_cast<PyMemberDescrObject *>(d)->d_member->offset);
    }
  }
  /// The slot's value (borrowed; null when unset).
  PyObject *get(PyObject *obj, size_t i) const {
    return *reinterpret_cast<PyObject **>(reinterpret_cast<char *>(obj) +
                                          offsets[i]);
  }
  /// Stores a new reference in the slot of a fresh object.
  void set(PyObject *obj, size_t i, PyObject *value) const {
    PyObject **p = reinterpret_cast<PyObject **>(reinterpret_cast<char *>(obj) +
                                                 offsets[i]);
    Py_XSETREF(*p, value);
  }
};

// ndarray's slots, in this order.
enum {
  kBase,
  kShape,
  kStrides,
  kOffset,
  kDType,
  kReadonly,
  kWhole,
  kPart,
  kIsScalar
};
// _Base's slots.
enum { kNode, kBShape, kBDType, kNp };

struct State {
  Slots array, base;
  PyObject *numpyArray = nullptr; // numpy.ndarray
  PyObject *numpyGeneric = nullptr; // numpy.generic (NumPy's scalars)
  PyObject *finish = nullptr;     // Python: the other results of eager calls
  PyObject *eagerName = nullptr;  // "_eager"
  PyObject *scalarName = nullptr; // "_scalar"
  PyObject *loops = nullptr;      // _ufuncs._fast_loops: key -> loop dtypes
  PyObject *splat = nullptr;      // _core.splat(value, shape, dtype)
  PyObject *coreDict = nullptr;   // _core's globals (LOCATIONS)
  PyObject *raising = nullptr;    // _errstate.RAISING: [bool]
  PyObject *extobj = nullptr;     // NumPy's error-state ContextVar, or None
  PyObject *synced = nullptr;     // _errstate.SYNCED: [its value last synced]
  PyObject *locationsName = nullptr;
  PyObject *ufuncType = nullptr; // UfuncBase
  bool ready = false;
  // NumPy calls made for eager operands here (stats()' eager_calls).
  uint64_t eagerCalls = 0;
};

/// The registered classes and the Python layer's objects (fast.cpp).
extern State state;

constexpr int kCContiguous = 0x1; // NPY_ARRAY_C_CONTIGUOUS

// --- Helpers (fast.cpp) ---------------------------------------------------

/// NumPy's type numbers that the runtime holds, in native byte order.
bool supportedDescr(PyObject *descr);
/// The C-order element strides of `shape` (a tuple), as _core.c_strides.
PyObject *cStrides(PyObject *shape);
/// Whether `o` is exactly a numpy.ndarray.
bool isArray(PyObject *o);
/// The number of elements of a NumPy array.
long long numpyNumel(PyObject *arr);
/// The eager threshold (_core.EAGER["threshold"]; 0: off).
long long eagerThreshold();
/// An eager ndarray owning `arr`; steals `arr`. `like`: a shape tuple the
/// result shares when its dimensions are the same (null: none).
PyObject *wrapEager(PyObject *arr, PyObject *like = nullptr);
PyObject *wrapEagerResult(PyObject *r, PyObject *like = nullptr);
/// Whether fast_init was called (RuntimeError set when not).
bool checkReady();
/// A Python Node's NodeRef (pybind11 instance), or false.
bool nodeRef(PyObject *node, cpn::NodeRef &out);

// --- Item access (items.cpp) ----------------------------------------------

/// The Python layer's a[key] and a[key] = v (_manip.getitem/setitem), the
/// scalar types element_set takes, and _jit.TRACING (set_item_handlers).
struct ItemHandlers {
  PyObject *get = nullptr, *set = nullptr, *values = nullptr,
           *tracing = nullptr;
  /// Whether this thread traces a @jit function (_jit.tracing_here).
  bool tracingNow() const {
    // Interned keys: PyDict_GetItemString would make a str per call (the
    // a[i] path asks on every element).
    static PyObject *key = PyUnicode_InternFromString("function");
    static PyObject *threadKey = PyUnicode_InternFromString("thread");
    PyObject *f = key ? PyDict_GetItemWithError(tracing, key) : nullptr;
    if (!f && PyErr_Occurred())
      PyErr_Clear();
    if (!f || f == Py_None)
      return false;
    // Another thread's trace does not change what this thread does.
    PyObject *t = threadKey ? PyDict_GetItemWithError(tracing, threadKey)
                            : nullptr;
    if (!t) {
      PyErr_Clear();
      return true;
    }
    unsigned long ident = PyLong_AsUnsignedLong(t);
    if (ident == static_cast<unsigned long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      return true;
    }
    return ident == PyThread_get_thread_ident();
  }
};

/// The item handlers registered with set_item_handlers (items.cpp).
extern ItemHandlers items;

/// The ndarray `a` seen through the NumPy view `r` of its base's buffer, as
/// a view of that base; null without an error when r is not such a view.
PyObject *viewOfBase(PyObject *a, PyObject *r);
/// The NumPy view of an eager ndarray's elements; null for a traced one.
PyObject *eagerView(PyObject *a);
/// A NumPy view of the elements of a small computed traced ndarray; null
/// with no error set when it is not one.
PyObject *computedView(PyObject *a, bool writable, cpn::NodeRef *owned,
                       bool anySize = false);
/// ArrayBase's a[key] and a[key] = value.
PyObject *arrayGetItem(PyObject *self, PyObject *key);
/// a.T: the view with a's axes reversed (transpose()'s, made in C).
PyObject *arrayTransposed(PyObject *a);
int arraySetItem(PyObject *self, PyObject *key, PyObject *value);
/// The module's element_get, element_set, eager_view_of, set_item_handlers.
PyObject *elementGet(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *scalarValue(PyObject *, PyObject *a);
PyObject *elementSet(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *eagerViewOf(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *setItemHandlers(PyObject *, PyObject *const *args,
                          Py_ssize_t nargs);

// --- The eager library call and iteration (eager.cpp) ---------------------

/// The module's eager_count, eager_call, array_iter and eager_init.
PyObject *eagerCount(PyObject *, PyObject *reset);
PyObject *eagerCallPy(PyObject *, PyObject *const *a, Py_ssize_t nargs);
PyObject *arrayIterPy(PyObject *, PyObject *a);
PyObject *eagerInit(PyObject *, PyObject *const *a, Py_ssize_t nargs);
/// The module's creation_call (a small creation function's NumPy call).
PyObject *creationCallPy(PyObject *, PyObject *const *a, Py_ssize_t nargs);
/// Adds the module's EagerFunction type (the C front of _eager.py's
/// function and creation wrappers).
void addEagerFunctionType(PyObject *module);
/// The module's eager_binary(f, name): EagerFunction f tries the C product
/// `name` ("matmul": eagerMatmul) first on two positional arguments.
PyObject *eagerBinary(PyObject *, PyObject *const *a, Py_ssize_t nargs);

/// `a @ b` of small eager float operands at once (fast.cpp); None to decline.
PyObject *eagerMatmul(PyObject *a, PyObject *b);
/// Whether a profile session is open (eager.cpp): the eager path's library
/// calls then take the Python path, which records them as `eager` events.
bool eagerProfiling();

} // namespace cpn::fast

#endif // CPN_PYTHON_FASTINTERNAL_H
