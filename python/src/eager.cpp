//===- eager.cpp - eager library calls and iteration, in C ----------------===//
//
// Part of cpnumeric.
//
// The eager path of library calls and `for x in a`, with the CPython API
// directly:
// - `eager_call` runs NumPy's function on the NumPy views of eager arrays,
//   small NumPy arrays, scalars and sequences of these, and wraps a fresh
//   small result, or a view of an argument's base, as an ndarray; other
//   results go to python/cpnumeric/_eager.py's `finish`, and calls it does
//   not take are declined (the Python path then decides);
// - `array_iter` iterates a 1-D ndarray, reading NumPy's scalars from its
//   elements again after a new version or a demotion;
// - `eager_count` counts the NumPy calls made on eager operands.
//
//===----------------------------------------------------------------------===//

#include "FastInternal.h"

#include <pybind11/numpy.h>

#include <cmath>
#include <cstddef>
#include <structmember.h>
#include <vector>

namespace py = pybind11;

namespace cpn::fast {

/// eager_count(reset): the NumPy calls made on eager operands here so far
/// (then zero when `reset`).
PyObject *eagerCount(PyObject *, PyObject *reset) {
  PyObject *r = PyLong_FromUnsignedLongLong(state.eagerCalls);
  if (PyObject_IsTrue(reset))
    state.eagerCalls = 0;
  return r;
}

namespace {
/// The eager path of library calls in C (python/cpnumeric/_eager.py's
/// common case): `declined` says nothing was called; `finish(r, views, out)`
/// wraps what is not a fresh small array; `profiling` is _profile.SESSIONS.
struct EagerCallState {
  PyObject *declined = nullptr, *finish = nullptr, *profiling = nullptr,
           *dtypeType = nullptr;
  /// Returned when an argument is a traced array: the traced path makes
  /// the result (no Python-side second look, ~1 us).
  PyObject *traced = nullptr;
  /// NumPy function -> (method name, axis position or None): functions that NumPy
  /// defines as the method of their first argument (np.take(a, ...) is
  /// a.take(...); np.sort(a, ...) sorts a copy of a in place). Calling the
  /// method skips the function's dispatch, 0.3-0.7 us of a 1-5 us call.
  PyObject *methods = nullptr;
} eagerCalls;

/// npf(*args, **kwargs) as the method of args[0], an exact NumPy array, when
/// eagerCalls.methods has npf (and a sort or partition is along an axis:
/// axis=None flattens first); null without an error set otherwise.
PyObject *callAsMethod(PyObject *npf, PyObject *args, PyObject *kwargs) {
  PyObject *entry = eagerCalls.methods
                        ? PyDict_GetItemWithError(eagerCalls.methods, npf)
                        : nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (!entry || n < 1 ||
      Py_TYPE(PyTuple_GET_ITEM(args, 0)) !=
          reinterpret_cast<PyTypeObject *>(state.numpyArray))
    return nullptr;
  PyObject *name = PyTuple_GET_ITEM(entry, 0);
  // sort/partition (copied first) say where their axis argument is.
  bool copied = PyTuple_GET_ITEM(entry, 1) != Py_None;
  PyObject *arr = PyTuple_GET_ITEM(args, 0);
  if (copied) { // axis=None flattens: NumPy's function
    static PyObject *axisName = PyUnicode_InternFromString("axis");
    Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 1));
    PyObject *axis = n > at ? PyTuple_GET_ITEM(args, at)
                     : kwargs ? PyDict_GetItemWithError(kwargs, axisName)
                              : nullptr;
    if (axis == Py_None || PyErr_Occurred())
      return nullptr;
  }
  PyObject *rest = PyTuple_GetSlice(args, 1, n);
  if (!rest)
    return nullptr;
  PyObject *self = nullptr;
  if (copied) {
    static PyObject *copyName = PyUnicode_InternFromString("copy");
    static PyObject *orderK = Py_BuildValue("(s)", "K");
    PyObject *copy = PyObject_GetAttr(arr, copyName);
    self = copy ? PyObject_Call(copy, orderK, nullptr) : nullptr;
    Py_XDECREF(copy);
  } else {
    self = Py_NewRef(arr);
  }
  PyObject *method = self ? PyObject_GetAttr(self, name) : nullptr;
  PyObject *r = method ? PyObject_Call(method, rest, kwargs) : nullptr;
  Py_XDECREF(method);
  Py_DECREF(rest);
  if (copied && r) { // the method sorted the copy in place
    Py_DECREF(r);
    return self;
  }
  Py_XDECREF(self);
  return r;
}

/// The arguments of one eager call, cpnumeric arrays replaced by the NumPy
/// views of their eager elements; unwrap returns null without an error to
/// decline (a traced or read-only array, an object of another kind).
struct EagerArgs {
  /// (cpnumeric array or None, view) of each array argument, held; a
  /// Python list of them only for _eager.py's finish (listOfViews): most
  /// calls have a few (no list, tuples and appends: ~50 ns a call).
  struct View {
    PyObject *x, *v;
  };
  View first[4];
  std::vector<View> more;
  Py_ssize_t count = 0;
  long long budget;
  bool arrays = false, traced = false;
  explicit EagerArgs(long long b) : budget(b) {}
  ~EagerArgs() {
    for (Py_ssize_t i = 0; i < count; ++i) {
      Py_DECREF(at(i).x);
      Py_DECREF(at(i).v);
    }
  }
  const View &at(Py_ssize_t i) const {
    return i < 4 ? first[i] : more[size_t(i - 4)];
  }

  EagerArgs(const EagerArgs &) = delete;
  EagerArgs &operator=(const EagerArgs &) = delete;

  bool note(PyObject *x, PyObject *v) {
    if (count >= 4) {
      try {
        more.push_back({nullptr, nullptr});
      } catch (const std::bad_alloc &) {
        PyErr_NoMemory();
        return false;
      }
      more.back() = {Py_NewRef(x), Py_NewRef(v)};
    } else {
      first[count] = {Py_NewRef(x), Py_NewRef(v)};
    }
    ++count;
    arrays = true;
    return true;
  }

  /// [(x, v), ...] (a new reference).
  PyObject *listOfViews() const {
    PyObject *l = PyList_New(count);
    for (Py_ssize_t i = 0; l && i < count; ++i) {
      PyObject *pair = PyTuple_Pack(2, at(i).x, at(i).v);
      if (!pair)
        Py_CLEAR(l);
      else
        PyList_SET_ITEM(l, i, pair);
    }
    return l;
  }

  PyObject *unwrap(PyObject *x, int depth) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == state.array.type) {
      PyObject *base = state.array.get(x, kBase);
      if (state.base.get(base, kNp) == Py_None) {
        traced = true;
        return nullptr;
      }
      if (state.array.get(x, kReadonly) != Py_False)
        return nullptr;
      PyObject *v = eagerView(x);
      if (!v)
        return nullptr;
      if (!note(x, v)) {
        Py_DECREF(v);
        return nullptr;
      }
      return v;
    }
    if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type ||
        t == &PyComplex_Type || x == Py_None || t == &PyUnicode_Type ||
        t == &PySlice_Type || x == Py_Ellipsis || PyType_Check(x) ||
        PyObject_TypeCheck(
            x, reinterpret_cast<PyTypeObject *>(state.numpyGeneric)) ||
        PyObject_TypeCheck(
            x, reinterpret_cast<PyTypeObject *>(eagerCalls.dtypeType)))
      return Py_NewRef(x);
    if ((t == &PyTuple_Type || t == &PyList_Type) && depth < 2) {
      Py_ssize_t n = PySequence_Fast_GET_SIZE(x);
      budget -= n;
      if (budget < 0)
        return nullptr;
      PyObject *r = t == &PyTuple_Type ? PyTuple_New(n) : PyList_New(n);
      if (!r)
        return nullptr;
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *u = unwrap(PySequence_Fast_GET_ITEM(x, i), depth + 1);
        if (!u) {
          Py_DECREF(r);
          return nullptr;
        }
        if (t == &PyTuple_Type)
          PyTuple_SET_ITEM(r, i, u);
        else
          PyList_SET_ITEM(r, i, u);
      }
      return r;
    }
    if (isArray(x)) {
      budget -= numpyNumel(x);
      auto *descr = reinterpret_cast<PyObject *>(py::detail::array_proxy(x)->descr);
      if (budget < 0 || !supportedDescr(descr) || !note(Py_None, x))
        return nullptr;
      return Py_NewRef(x);
    }
    return nullptr;
  }
};
} // namespace

/// The eager call's result `r` (stolen) as the caller gets it: a fresh
/// small array wrapped, a view of an argument's elements as the view of
/// that argument's base, NumPy's scalars as they are, anything else through
/// _eager.py's finish.
/// Whether NumPy's result `r` (an array) is a fresh small array we hold
/// as it is: no base (not a view of anything), C-contiguous, under the
/// eager threshold, of a held dtype.
static bool freshSmall(PyObject *r, long long threshold) {
  auto *p = py::detail::array_proxy(r);
  return !p->base && (p->flags & kCContiguous) && numpyNumel(r) < threshold &&
         supportedDescr(reinterpret_cast<PyObject *>(p->descr));
}

static PyObject *eagerResult(PyObject *r, EagerArgs &ea, bool out,
                             long long threshold) {
  if (isArray(r)) {
    auto *p = py::detail::array_proxy(r);
    bool fresh = freshSmall(r, threshold);
    for (Py_ssize_t i = 0; fresh && i < ea.count; ++i)
      fresh = ea.at(i).v != r;
    if (fresh)
      return wrapEager(r);
    if (p->base && numpyNumel(r) > 0) {
      // A view NumPy made of an eager argument's elements (reshape,
      // transpose, ...): the view of that argument's base.
      auto root = [](PyObject *o) {
        while (isArray(o) && py::detail::array_proxy(o)->base &&
               isArray(py::detail::array_proxy(o)->base))
          o = py::detail::array_proxy(o)->base;
        return o;
      };
      PyObject *rr = root(r);
      for (Py_ssize_t i = 0; i < ea.count; ++i) {
        PyObject *x = ea.at(i).x, *v = ea.at(i).v;
        if (x == Py_None || v == r || root(v) != rr ||
            state.array.get(x, kPart) != Py_None)
          continue;
        PyObject *view = viewOfBase(x, r);
        if (view) {
          Py_DECREF(r);
          return view;
        }
        if (PyErr_Occurred()) {
          Py_DECREF(r);
          return nullptr;
        }
        break;
      }
    }
  } else if (PyObject_TypeCheck(
                 r, reinterpret_cast<PyTypeObject *>(state.numpyGeneric)) ||
             PyFloat_CheckExact(r) || PyLong_CheckExact(r) || PyBool_Check(r) ||
             r == Py_None) {
    return r;
  }
  PyObject *views = ea.listOfViews();
  if (!views) {
    Py_DECREF(r);
    return nullptr;
  }
  PyObject *f = PyObject_CallFunctionObjArgs(eagerCalls.finish, r, views,
                                             out ? Py_True : Py_False, nullptr);
  Py_DECREF(views);
  Py_DECREF(r);
  return f;
}

/// Whether `o` is an argument NumPy's method takes as it is: no array of
/// ours in it (an int, a tuple of ints, a string, None, a type or dtype).
static bool plainArgument(PyObject *o) {
  if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) ||
      PyUnicode_CheckExact(o) || o == Py_None || PyType_Check(o) ||
      PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject *>(
                                py::detail::npy_api::get().PyArrayDescr_Type_)))
    return true;
  // A shape or axes, not data (a long tuple goes through the general
  // path's element budget).
  if (!PyTuple_CheckExact(o) || PyTuple_GET_SIZE(o) > 32)
    return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(o, i)))
      return false;
  return true;
}

/// ndarray's method `npm` (a method descriptor of numpy.ndarray) called on
/// the eager, writable array x = args[0] with at most three plain
/// arguments (`x.sum()`, `x.reshape(8, 8)`): by vectorcall on x's elements,
/// without the general path's argument tuple and view list (x.max() 2.0 ->
/// ~1.5 us, NumPy's 1.1). Null with no error when the call is not such.
static PyObject *eagerMethodCall(PyObject *npm, PyObject *const *args,
                                 Py_ssize_t n, long long threshold) {
  PyObject *x = n ? args[0] : nullptr;
  if (!x || n > 4 || Py_TYPE(x) != state.array.type ||
      !Py_IS_TYPE(npm, &PyMethodDescr_Type) ||
      state.base.get(state.array.get(x, kBase), kNp) == Py_None ||
      state.array.get(x, kReadonly) != Py_False)
    return nullptr;
  PyObject *call[4];
  for (Py_ssize_t i = 1; i < n; ++i) {
    call[i] = args[i];
    if (!plainArgument(call[i]))
      return nullptr;
  }
  PyObject *v = eagerView(x);
  if (!v)
    return nullptr;
  ++state.eagerCalls;
  call[0] = v;
  PyObject *r = PyObject_Vectorcall(npm, call, size_t(n), nullptr);
  if (!r ||
      PyObject_TypeCheck(
          r, reinterpret_cast<PyTypeObject *>(state.numpyGeneric)) ||
      PyFloat_CheckExact(r) || PyLong_CheckExact(r) || PyBool_Check(r) ||
      r == Py_None) {
    Py_DECREF(v);
    return r;
  }
  // A fresh small array (no base: not a view of x's elements; not x's
  // own NumPy array) is wrapped at once, as eagerResult would, without the
  // list of views it checks (x.copy() of 64 elements: 342 -> 286 ns, NumPy's
  // 81).
  if (r != v && isArray(r) && freshSmall(r, threshold)) {
    Py_DECREF(v);
    return wrapEager(r);
  }
  // A view NumPy made of x's elements (x.ravel(), x.reshape(8, 8),
  // x.transpose()): the view of x's base, as eagerResult makes it, without
  // the view list (x.ravel() 310 -> 219 ns, NumPy's 46).
  if (r != v && isArray(r) && state.array.get(x, kPart) == Py_None) {
    auto *rp = py::detail::array_proxy(r);
    PyObject *np = state.base.get(state.array.get(x, kBase), kNp);
    if (rp->base && (rp->base == np || rp->base == v) && numpyNumel(r) > 0) {
      Py_DECREF(v);
      PyObject *view = viewOfBase(x, r);
      if (view || PyErr_Occurred()) {
        Py_DECREF(r);
        return view;
      }
      v = eagerView(x); // not a view of it after all: the general path
      if (!v) {
        Py_DECREF(r);
        return nullptr;
      }
    }
  }
  EagerArgs ea(threshold);
  bool noted = ea.note(x, v);
  Py_DECREF(v);
  if (!noted) {
    Py_DECREF(r);
    return nullptr;
  }
  return eagerResult(r, ea, false, threshold);
}

/// eager_call(npf, args, kwargs): NumPy's npf on the eager elements of the
/// arguments, wrapped, when they are eager arrays, small NumPy arrays,
/// scalars and sequences of these; `declined` (nothing called) otherwise.
PyObject *eagerCallPy(PyObject *, PyObject *const *a, Py_ssize_t nargs) {
  if (nargs != 3 || !PyTuple_Check(a[1]) || !eagerCalls.declined) {
    PyErr_SetString(PyExc_TypeError, "eager_call(npf, args, kwargs)");
    return nullptr;
  }
  long long threshold = eagerThreshold();
  if (threshold <= 0 || (items.tracing && items.tracingNow()) ||
      PyObject_IsTrue(PyList_GET_ITEM(eagerCalls.profiling, 0)))
    return Py_NewRef(eagerCalls.declined);
  if (PyTuple_GET_SIZE(a[1]) >= 1 &&
      (a[2] == Py_None || !PyDict_GET_SIZE(a[2])))
    if (PyObject *r = eagerMethodCall(a[0], &PyTuple_GET_ITEM(a[1], 0),
                                      PyTuple_GET_SIZE(a[1]), threshold);
        r || PyErr_Occurred())
      return r;
  EagerArgs ea(threshold);
  PyObject *args = ea.unwrap(a[1], 0);
  if (!args || !ea.arrays) {
    Py_XDECREF(args);
    if (PyErr_Occurred())
      return nullptr;
    return Py_NewRef(ea.traced ? eagerCalls.traced : eagerCalls.declined);
  }
  PyObject *kwargs = nullptr;
  bool out = false;
  if (a[2] != Py_None && PyDict_GET_SIZE(a[2])) {
    kwargs = PyDict_New();
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(a[2], &pos, &k, &v)) {
      PyObject *u = ea.unwrap(v, 0);
      if (!u || PyDict_SetItem(kwargs, k, u) < 0) {
        Py_XDECREF(u);
        Py_CLEAR(kwargs);
        break;
      }
      Py_DECREF(u);
      out |= PyUnicode_CompareWithASCIIString(k, "out") == 0;
    }
    if (!kwargs) {
      Py_DECREF(args);
      if (PyErr_Occurred())
        return nullptr;
      return Py_NewRef(ea.traced ? eagerCalls.traced : eagerCalls.declined);
    }
  }
  ++state.eagerCalls;
  PyObject *r = callAsMethod(a[0], args, kwargs);
  if (!r && !PyErr_Occurred())
    r = PyObject_Call(a[0], args, kwargs);
  Py_DECREF(args);
  Py_XDECREF(kwargs);
  if (!r)
    return nullptr;
  return eagerResult(r, ea, out, threshold);
}

namespace {
/// `for x in a` over a 1-D ndarray of whole elements: NumPy's scalars read
/// from the elements (_core.ndarray._host: a sync point for a traced array),
/// read again when the base has a new version or was demoted meanwhile (a
/// write to the array in the loop's body is seen at the next element).
struct ArrayIter {
  PyObject_HEAD PyObject *array;
  PyObject *node, *np, *buf;
  Py_ssize_t i, n;
};

PyObject *hostName = nullptr; // "_host"

PyObject *arrayIterNext(PyObject *self) {
  auto *it = reinterpret_cast<ArrayIter *>(self);
  if (it->i >= it->n)
    return nullptr;
  PyObject *base = state.array.get(it->array, kBase);
  PyObject *node = state.base.get(base, kNode), *np = state.base.get(base, kNp);
  if (!it->buf || node != it->node || np != it->np) {
    PyObject *buf = PyObject_CallMethodNoArgs(it->array, hostName);
    if (!buf)
      return nullptr;
    Py_XSETREF(it->buf, buf);
    Py_XSETREF(it->node, Py_XNewRef(node));
    Py_XSETREF(it->np, Py_XNewRef(np));
  }
  return PySequence_GetItem(it->buf, it->i++);
}

void arrayIterDealloc(PyObject *self) {
  auto *it = reinterpret_cast<ArrayIter *>(self);
  Py_XDECREF(it->array);
  Py_XDECREF(it->node);
  Py_XDECREF(it->np);
  Py_XDECREF(it->buf);
  PyTypeObject *t = Py_TYPE(self);
  t->tp_free(self);
  Py_DECREF(t);
}

PyType_Slot arrayIterSlots[] = {
    {Py_tp_iter, reinterpret_cast<void *>(PyObject_SelfIter)},
    {Py_tp_iternext, reinterpret_cast<void *>(arrayIterNext)},
    {Py_tp_dealloc, reinterpret_cast<void *>(arrayIterDealloc)},
    {0, nullptr}};
PyType_Spec arrayIterSpec = {"cpnumeric._cpn.ArrayIter", sizeof(ArrayIter), 0,
                             Py_TPFLAGS_DEFAULT, arrayIterSlots};
PyObject *arrayIterType = nullptr;
} // namespace

/// array_iter(a): the iterator of a 1-D ndarray (see ArrayIter).
PyObject *arrayIterPy(PyObject *, PyObject *a) {
  if (Py_TYPE(a) != state.array.type ||
      PyTuple_GET_SIZE(state.array.get(a, kShape)) != 1) {
    PyErr_SetString(PyExc_TypeError, "array_iter(a): a 1-D ndarray");
    return nullptr;
  }
  if (!arrayIterType &&
      !(arrayIterType = PyType_FromSpec(&arrayIterSpec)))
    return nullptr;
  if (!hostName)
    hostName = PyUnicode_InternFromString("_host");
  auto *it = PyObject_New(ArrayIter, reinterpret_cast<PyTypeObject *>(arrayIterType));
  if (!it)
    return nullptr;
  Py_INCREF(arrayIterType); // each instance holds its heap type
  it->array = Py_NewRef(a);
  it->node = it->np = it->buf = nullptr;
  it->i = 0;
  it->n = PyLong_AsSsize_t(PyTuple_GET_ITEM(state.array.get(a, kShape), 0));
  return reinterpret_cast<PyObject *>(it);
}

/// eager_init(declined, finish, profiling, methods, traced): the Python
/// side of eager_call.
namespace {
/// A Python float or int (not a bool's subclass question: bool is an int,
/// as in _eager._real) as a double; false for anything else or an int too
/// large for a double (the Python path then decides, and raises NumPy's
/// error).
bool realArg(PyObject *o, double &v) {
  if (PyFloat_CheckExact(o)) {
    v = PyFloat_AS_DOUBLE(o);
    return true;
  }
  if (PyLong_Check(o)) {
    v = PyLong_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  }
  return false;
}

/// An exact Python int as a long long; false otherwise (or on overflow).
bool intArg(PyObject *o, long long &v) {
  if (!PyLong_CheckExact(o))
    return false;
  int overflow = 0;
  v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

/// The number of elements a creation function makes from positional
/// arguments of Python numbers (python/cpnumeric/_eager.py's CREATION
/// sizes, kinds 0-4: zeros/ones/empty, arange, linspace and the like, eye,
/// identity); false where its Python path decides (other argument types,
/// the size arguments given by keyword).
bool creationSize(int kind, PyObject *args, PyObject *kwargs, long long &n) {
  Py_ssize_t na = PyTuple_GET_SIZE(args);
  auto named = [&](std::initializer_list<const char *> names) {
    if (!kwargs)
      return false;
    for (const char *k : names)
      if (PyDict_GetItemString(kwargs, k))
        return true;
    return false;
  };
  switch (kind) {
  case 0: { // shape
    if (na < 1 || named({"shape"}))
      return false;
    PyObject *shape = PyTuple_GET_ITEM(args, 0);
    if (PyLong_CheckExact(shape))
      return intArg(shape, n);
    if (!PyTuple_CheckExact(shape))
      return false;
    n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); ++i) {
      long long d;
      if (!intArg(PyTuple_GET_ITEM(shape, i), d) ||
          __builtin_mul_overflow(n, d, &n))
        return false;
    }
    return true;
  }
  case 1: { // arange(start, stop=None, step=None)
    if (na < 1 || named({"start", "stop", "step"}))
      return false;
    double start = 0, stop, step = 1;
    PyObject *a0 = PyTuple_GET_ITEM(args, 0);
    PyObject *a1 = na > 1 ? PyTuple_GET_ITEM(args, 1) : Py_None;
    PyObject *a2 = na > 2 ? PyTuple_GET_ITEM(args, 2) : Py_None;
    if (a1 == Py_None) {
      if (!realArg(a0, stop))
        return false;
    } else if (!realArg(a0, start) || !realArg(a1, stop)) {
      return false;
    }
    if (a2 != Py_None && !realArg(a2, step))
      return false;
    if (step == 0)
      return false;
    double c = std::ceil((stop - start) / step);
    if (!std::isfinite(c) || c > 9.0e18)
      return false;
    n = c > 0 ? static_cast<long long>(c) : 0;
    return true;
  }
  case 2: { // linspace(start, stop, num=50)
    if (na < 2 || named({"start", "stop", "num"}))
      return false;
    double v;
    if (!realArg(PyTuple_GET_ITEM(args, 0), v) ||
        !realArg(PyTuple_GET_ITEM(args, 1), v))
      return false;
    if (na < 3) {
      n = 50;
      return true;
    }
    return intArg(PyTuple_GET_ITEM(args, 2), n);
  }
  case 3:   // eye(N, M=None)
  case 4: { // identity(n)
    if (na < 1 || named({"N", "M", "n"}))
      return false;
    long long rows, cols;
    if (!intArg(PyTuple_GET_ITEM(args, 0), rows))
      return false;
    cols = rows;
    if (kind == 3 && na > 1 && PyTuple_GET_ITEM(args, 1) != Py_None &&
        !intArg(PyTuple_GET_ITEM(args, 1), cols))
      return false;
    return !__builtin_mul_overflow(rows, cols, &n);
  }
  }
  return false;
}
} // namespace

/// creation_call(npf, kind, args, kwargs): NumPy's creation function npf
/// (kind: creationSize's) when it makes fewer elements than the eager
/// threshold, its array wrapped as an eager ndarray (a tuple's first, for
/// linspace's retstep); the declined marker when the Python path decides
/// (python/cpnumeric/_eager.py's `creation`, whose common case this is).
PyObject *creationCallPy(PyObject *, PyObject *const *a, Py_ssize_t nargs) {
  if (nargs != 4 || !PyTuple_Check(a[2]) || !eagerCalls.declined) {
    PyErr_SetString(PyExc_TypeError, "creation_call(npf, kind, args, kwargs)");
    return nullptr;
  }
  PyObject *kwargs = a[3] != Py_None && PyDict_GET_SIZE(a[3]) ? a[3] : nullptr;
  static PyObject *likeName = PyUnicode_InternFromString("like");
  long long threshold = eagerThreshold(), n = 0;
  if (threshold <= 0 || (items.tracing && items.tracingNow()) ||
      (kwargs && PyDict_GetItemWithError(kwargs, likeName)) ||
      !creationSize(static_cast<int>(PyLong_AsLong(a[1])), a[2], kwargs, n) ||
      n < 0 || n >= threshold) {
    if (PyErr_Occurred())
      return nullptr;
    return Py_NewRef(eagerCalls.declined);
  }
  ++state.eagerCalls;
  PyObject *r = PyObject_Call(a[0], a[2], kwargs);
  if (!r)
    return nullptr;
  auto held = [](PyObject *x) {
    return isArray(x) &&
           supportedDescr(reinterpret_cast<PyObject *>(
               py::detail::array_proxy(x)->descr));
  };
  if (held(r))
    return wrapEagerResult(r);
  if (PyTuple_CheckExact(r) && PyTuple_GET_SIZE(r) > 0 &&
      held(PyTuple_GET_ITEM(r, 0))) {
    PyObject *w = wrapEagerResult(Py_NewRef(PyTuple_GET_ITEM(r, 0)));
    if (!w) {
      Py_DECREF(r);
      return nullptr;
    }
    PyObject *t = PyTuple_New(PyTuple_GET_SIZE(r));
    if (!t) {
      Py_DECREF(w);
      Py_DECREF(r);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, 0, w);
    for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(r); ++i)
      PyTuple_SET_ITEM(t, i, Py_NewRef(PyTuple_GET_ITEM(r, i)));
    Py_DECREF(r);
    return t;
  }
  Py_DECREF(r); // a dtype not held: cpnumeric's function raises
  return Py_NewRef(eagerCalls.declined);
}

namespace {
/// A cpnumeric function with NumPy's in front for small eager operands
/// (_eager.py's `function` and `creation`), called in C: the eager call is
/// tried first (eager_call, or creation_call with `kind`), and anything it
/// declines goes to `slow`, the Python function that decides as before. No
/// Python frame on the eager path (~150 ns a call). Its attributes
/// (__name__, __doc__, __wrapped__, ...) are the Python function's.
struct EagerFunction {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *npf, *slow, *kind, *dict;
  /// cpnumeric's function, called directly when eager_call says an
  /// argument is traced (what `slow` would do after a second eager_call).
  PyObject *cpf;
  /// Tried first on two positional arguments outside a profile session
  /// (eager_binary): its result, or None to go on as without it.
  binaryfunc binary;
};

PyTypeObject *eagerFunctionType = nullptr;

PyObject *eagerFunctionCall(PyObject *self, PyObject *const *args,
                            size_t nargsf, PyObject *kwnames) {
  auto *f = reinterpret_cast<EagerFunction *>(self);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  // An ndarray method on an eager array (x.copy(), x.reshape(8, 8)):
  // straight to eagerMethodCall, without the argument tuple (eager_call's
  // checks first).
  if (f->kind == Py_None && nk == 0 && n >= 1 &&
      Py_IS_TYPE(f->npf, &PyMethodDescr_Type) && eagerCalls.declined) {
    long long threshold = eagerThreshold();
    int profiling = PyObject_IsTrue(PyList_GET_ITEM(eagerCalls.profiling, 0));
    if (profiling < 0)
      return nullptr;
    if (threshold > 0 && !(items.tracing && items.tracingNow()) && !profiling) {
      PyObject *r = eagerMethodCall(f->npf, args, n, threshold);
      if (r && (r == eagerCalls.declined || r == eagerCalls.traced)) {
        // _eager.py's finish declined the result (a view of a .real part):
        // cpnumeric's method, as below.
        PyObject *next = r == eagerCalls.traced && f->cpf ? f->cpf : f->slow;
        Py_DECREF(r);
        return PyObject_Vectorcall(next, args, nargsf, kwnames);
      }
      if (r || PyErr_Occurred())
        return r;
    }
  }
  if (f->binary && n == 2 && nk == 0) { // declines while profiling
    PyObject *r = f->binary(args[0], args[1]);
    if (r != Py_None)
      return r;
    Py_DECREF(r);
  }
  PyObject *tuple = PyTuple_New(n);
  if (!tuple)
    return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i)
    PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
  PyObject *kwargs = nk ? PyDict_New() : Py_NewRef(Py_None);
  for (Py_ssize_t i = 0; kwargs && i < nk; ++i)
    if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
      Py_CLEAR(kwargs);
  PyObject *r = nullptr;
  if (kwargs) {
    if (f->kind == Py_None) {
      PyObject *a[3] = {f->npf, tuple, kwargs};
      r = eagerCallPy(nullptr, a, 3);
    } else {
      PyObject *a[4] = {f->npf, f->kind, tuple, kwargs};
      r = creationCallPy(nullptr, a, 4);
    }
  }
  Py_DECREF(tuple);
  Py_XDECREF(kwargs);
  if (r && (r == eagerCalls.declined || r == eagerCalls.traced)) {
    PyObject *next = r == eagerCalls.traced && f->cpf ? f->cpf : f->slow;
    Py_DECREF(r);
    r = PyObject_Vectorcall(next, args, nargsf, kwnames);
  }
  return r;
}

int eagerFunctionInit(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *npf, *slow, *kind, *cpf = nullptr;
  static const char *names[] = {"npf", "slow", "kind", "cpf", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|O",
                                   const_cast<char **>(names), &npf, &slow,
                                   &kind, &cpf))
    return -1;
  if (kind != Py_None && !PyLong_CheckExact(kind)) {
    PyErr_SetString(PyExc_TypeError, "EagerFunction: kind is an int or None");
    return -1;
  }
  auto *f = reinterpret_cast<EagerFunction *>(self);
  Py_XSETREF(f->npf, Py_NewRef(npf));
  Py_XSETREF(f->slow, Py_NewRef(slow));
  Py_XSETREF(f->kind, Py_NewRef(kind));
  Py_XSETREF(f->cpf, cpf == Py_None ? nullptr : Py_XNewRef(cpf));
  f->vectorcall = eagerFunctionCall;
  return 0;
}

int eagerFunctionTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *f = reinterpret_cast<EagerFunction *>(self);
  Py_VISIT(f->npf);
  Py_VISIT(f->slow);
  Py_VISIT(f->dict);
  Py_VISIT(f->cpf);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int eagerFunctionClear(PyObject *self) {
  auto *f = reinterpret_cast<EagerFunction *>(self);
  Py_CLEAR(f->npf);
  Py_CLEAR(f->slow);
  Py_CLEAR(f->kind);
  Py_CLEAR(f->dict);
  Py_CLEAR(f->cpf);
  return 0;
}

void eagerFunctionDealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  eagerFunctionClear(self);
  t->tp_free(self);
  Py_DECREF(t);
}

PyObject *eagerFunctionRepr(PyObject *self) {
  PyObject *slow = reinterpret_cast<EagerFunction *>(self)->slow;
  return slow ? PyObject_Repr(slow) : PyUnicode_FromString("<EagerFunction>");
}

/// Pickled by name, as functions are: its module's attribute.
PyObject *eagerFunctionReduce(PyObject *self, PyObject *) {
  return PyObject_GetAttrString(self, "__qualname__");
}

/// A method when it is a class's attribute, as a Python function would be.
PyObject *eagerFunctionGet(PyObject *self, PyObject *obj, PyObject *) {
  if (!obj || obj == Py_None)
    return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyMemberDef eagerFunctionMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(EagerFunction, vectorcall),
     READONLY, nullptr},
    {"__dictoffset__", T_PYSSIZET, offsetof(EagerFunction, dict), READONLY,
     nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyMethodDef eagerFunctionMethods[] = {
    {"__reduce__", eagerFunctionReduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot eagerFunctionSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
    {Py_tp_init, reinterpret_cast<void *>(eagerFunctionInit)},
    {Py_tp_traverse, reinterpret_cast<void *>(eagerFunctionTraverse)},
    {Py_tp_clear, reinterpret_cast<void *>(eagerFunctionClear)},
    {Py_tp_dealloc, reinterpret_cast<void *>(eagerFunctionDealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(eagerFunctionRepr)},
    {Py_tp_descr_get, reinterpret_cast<void *>(eagerFunctionGet)},
    {Py_tp_members, eagerFunctionMembers},
    {Py_tp_methods, eagerFunctionMethods},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_doc,
     const_cast<char *>("EagerFunction(npf, slow, kind, cpf=None): NumPy's "
                        "npf for small eager operands (kind None: eager_call; "
                        "an int: creation_call's kind), cpf(*args, **kwargs) "
                        "when eager_call finds a traced argument, else "
                        "slow(*args, **kwargs).")},
    {0, nullptr}};

PyType_Spec eagerFunctionSpec = {
    "cpnumeric._cpn.EagerFunction", sizeof(EagerFunction), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
        Py_TPFLAGS_METHOD_DESCRIPTOR,
    eagerFunctionSlots};
} // namespace

void addEagerFunctionType(PyObject *module) {
  PyObject *t = PyType_FromSpec(&eagerFunctionSpec);
  if (!t)
    throw py::error_already_set();
  eagerFunctionType = reinterpret_cast<PyTypeObject *>(t); // held for good
  if (PyModule_AddObject(module, "EagerFunction", Py_NewRef(t)) < 0) {
    Py_DECREF(t);
    throw py::error_already_set();
  }
}

bool eagerProfiling() {
  if (!eagerCalls.profiling)
    return true; // before eager_init: decline
  int on = PyObject_IsTrue(PyList_GET_ITEM(eagerCalls.profiling, 0));
  if (on < 0)
    PyErr_Clear();
  return on != 0;
}

PyObject *eagerBinary(PyObject *, PyObject *const *a, Py_ssize_t nargs) {
  if (nargs != 2 || Py_TYPE(a[0]) != eagerFunctionType ||
      !PyUnicode_Check(a[1]) ||
      PyUnicode_CompareWithASCIIString(a[1], "matmul") != 0) {
    PyErr_SetString(PyExc_TypeError,
                    "eager_binary(f, name): an EagerFunction and \"matmul\"");
    return nullptr;
  }
  reinterpret_cast<EagerFunction *>(a[0])->binary = eagerMatmul;
  Py_RETURN_NONE;
}

PyObject *eagerInit(PyObject *, PyObject *const *a, Py_ssize_t nargs) {
  if (nargs != 5 || !PyList_Check(a[2]) || PyList_GET_SIZE(a[2]) != 1 ||
      !PyDict_Check(a[3])) {
    PyErr_SetString(PyExc_TypeError,
                    "eager_init(declined, finish, [n], methods, traced)");
    return nullptr;
  }
  Py_XSETREF(eagerCalls.methods, Py_NewRef(a[3]));
  Py_XSETREF(eagerCalls.traced, Py_NewRef(a[4]));
  Py_XSETREF(eagerCalls.declined, Py_NewRef(a[0]));
  Py_XSETREF(eagerCalls.finish, Py_NewRef(a[1]));
  Py_XSETREF(eagerCalls.profiling, Py_NewRef(a[2]));
  if (!eagerCalls.dtypeType) {
    PyObject *np = PyImport_ImportModule("numpy");
    eagerCalls.dtypeType = np ? PyObject_GetAttrString(np, "dtype") : nullptr;
    Py_XDECREF(np);
    if (!eagerCalls.dtypeType)
      return nullptr;
  }
  Py_RETURN_NONE;
}

} // namespace cpn::fast
