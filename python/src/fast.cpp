//===- fast.cpp - the hot path of ufunc calls, in C -----------------------===//
//
// Part of cpnumeric.
//
// A ufunc on small eager arrays costs NumPy ~0.5-1 us; the same call through
// cpnumeric's Python layer (operator, type tests, wrapping the result in a
// new ndarray and _Base) cost 2-4 us more, and recording an op on traced
// arrays 5-8 us. These functions are the common calls in C, with the CPython
// API directly (pybind11's argument casting alone costs more than the whole
// call should):
// - `eager` calls a NumPy ufunc on the eager elements of its operands and
//   wraps the result;
// - `UfuncBase`, the base class of cpnumeric.ufunc, runs a call without
//   keywords through `eager`, then records it when its operands are whole
//   traced arrays of the loop's dtypes (and Python scalars) and the Python
//   layer has cached the loop; other calls go to the Python method
//   `_general`;
// - `ArrayBase`, the base class of cpnumeric.ndarray, gives it binary
//   operators that take the same path;
// - `wrap_eager` and `wrap_node` make ndarray objects (filling the __slots__
//   of python/cpnumeric/_core.py's classes) without running Python code.
// The Python layer registers its classes once with `fast_init` and keeps
// every decision of NumPy's semantics: what is not handled here goes there.
// Item access is in items.cpp, the eager library call and iteration in
// eager.cpp; FastInternal.h declares what the three files share.
//
//===----------------------------------------------------------------------===//

#include "FastInternal.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/Blas.h"

#include <cmath>
#include <pybind11/numpy.h>

namespace py = pybind11;

namespace cpn::fast {

State state;

/// NumPy's type numbers that the runtime holds (bool, ints, half, float,
/// double, complex64/128), in native byte order.
bool supportedDescr(PyObject *descr) {
  auto *d = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(descr);
  if (d->byteorder == '>')
    return false;
  int t = d->type_num;
  return (t >= 0 && t <= 12) || t == 14 || t == 15 || t == 23;
}

/// The C-order element strides of `shape` (a tuple), as _core.c_strides.
PyObject *cStrides(PyObject *shape) {
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  if (nd == 1) { // every 1-D array's: one shared tuple (tuples are immutable)
    static PyObject *one = Py_BuildValue("(i)", 1);
    return one ? Py_NewRef(one) : nullptr;
  }
  PyObject *r = PyTuple_New(nd);
  if (!r)
    return nullptr;
  long long acc = 1;
  for (Py_ssize_t i = nd - 1; i >= 0; --i) {
    PyObject *s = PyLong_FromLongLong(acc);
    if (!s) {
      Py_DECREF(r);
      return nullptr;
    }
    PyTuple_SET_ITEM(r, i, s);
    long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
    if (d == -1 && PyErr_Occurred()) {
      Py_DECREF(r);
      return nullptr;
    }
    acc *= d > 1 ? d : 1;
  }
  return r;
}

/// A new whole-base ndarray over a new _Base; steals `shape`.
static PyObject *newArray(PyObject *node, PyObject *shape, PyObject *dtype,
                          PyObject *np) {
  PyObject *strides = cStrides(shape);
  if (!strides) {
    Py_DECREF(shape);
    return nullptr;
  }
  PyObject *base = state.base.type->tp_alloc(state.base.type, 0);
  PyObject *a =
      base ? state.array.type->tp_alloc(state.array.type, 0) : nullptr;
  if (!a) {
    Py_XDECREF(base);
    Py_DECREF(shape);
    Py_DECREF(strides);
    return nullptr;
  }
  state.base.set(base, kNode, Py_NewRef(node));
  state.base.set(base, kBShape, Py_NewRef(shape));
  state.base.set(base, kBDType, Py_NewRef(dtype));
  state.base.set(base, kNp, Py_NewRef(np));
  state.array.set(a, kBase, base);
  state.array.set(a, kShape, shape);
  state.array.set(a, kStrides, strides);
  state.array.set(a, kOffset, PyLong_FromLong(0));
  state.array.set(a, kDType, Py_NewRef(dtype));
  state.array.set(a, kReadonly, Py_NewRef(Py_False));
  state.array.set(a, kWhole, Py_NewRef(Py_True));
  state.array.set(a, kPart, Py_NewRef(Py_None));
  return a;
}

/// The shape of a NumPy array, as a new tuple.
static PyObject *shapeOf(PyObject *arr) {
  auto *p = py::detail::array_proxy(arr);
  PyObject *t = PyTuple_New(p->nd);
  if (!t)
    return nullptr;
  for (int i = 0; i < p->nd; ++i) {
    PyObject *d = PyLong_FromSsize_t(p->dimensions[i]);
    if (!d) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

bool isArray(PyObject *o) {
  return Py_TYPE(o) == reinterpret_cast<PyTypeObject *>(state.numpyArray);
}

/// The number of elements of a NumPy array.
long long numpyNumel(PyObject *arr) {
  auto *p = py::detail::array_proxy(arr);
  long long n = 1;
  for (int i = 0; i < p->nd; ++i)
    n *= p->dimensions[i];
  return n;
}

/// The eager threshold (_core.EAGER["threshold"]; 0: off).
long long eagerThreshold() {
  // Interned keys: this is asked on every eager call.
  static PyObject *eagerKey = PyUnicode_InternFromString("EAGER");
  static PyObject *thresholdKey = PyUnicode_InternFromString("threshold");
  PyObject *eager =
      eagerKey ? PyDict_GetItemWithError(state.coreDict, eagerKey) : nullptr;
  PyObject *t = eager && thresholdKey
                    ? PyDict_GetItemWithError(eager, thresholdKey)
                    : nullptr;
  if (!t && PyErr_Occurred())
    PyErr_Clear();
  long long v = t ? PyLong_AsLongLong(t) : 0;
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return v;
}

/// `like` (a shape tuple, or null) when it holds the dimensions of NumPy
/// array `arr`, as a new reference; else null.
static PyObject *sameShape(PyObject *arr, PyObject *like) {
  if (!like || !PyTuple_Check(like))
    return nullptr;
  auto *p = py::detail::array_proxy(arr);
  if (PyTuple_GET_SIZE(like) != p->nd)
    return nullptr;
  for (int i = 0; i < p->nd; ++i) {
    PyObject *d = PyTuple_GET_ITEM(like, i);
    if (!PyLong_CheckExact(d) || PyLong_AsSsize_t(d) != p->dimensions[i]) {
      PyErr_Clear();
      return nullptr;
    }
  }
  return Py_NewRef(like);
}

/// An eager ndarray owning `arr` (an exact, C-contiguous NumPy array of a
/// supported dtype); steals `arr`. `like`: an operand's shape tuple that the
/// result shares when it has the same dimensions (an elementwise result's
/// shape, made once).
PyObject *wrapEager(PyObject *arr, PyObject *like) {
  PyObject *shape = sameShape(arr, like);
  if (!shape)
    shape = shapeOf(arr);
  PyObject *r = nullptr;
  if (shape) {
    PyObject *dtype =
        reinterpret_cast<PyObject *>(py::detail::array_proxy(arr)->descr);
    r = newArray(Py_None, shape, dtype, arr);
  }
  Py_DECREF(arr);
  return r;
}

/// NumPy's result `r` of a call on eager operands as ours (steals r): an
/// eager ndarray owning it when it is a C-contiguous array of a supported
/// dtype, else what _core._finish_eager makes of it (None: a dtype we do
/// not hold).
PyObject *wrapEagerResult(PyObject *r, PyObject *like) {
  if (isArray(r) && (py::detail::array_proxy(r)->flags & kCContiguous) &&
      supportedDescr(
          reinterpret_cast<PyObject *>(py::detail::array_proxy(r)->descr)))
    return wrapEager(r, like);
  PyObject *f = PyObject_CallOneArg(state.finish, r);
  Py_DECREF(r);
  return f;
}

bool checkReady() {
  if (!state.ready)
    PyErr_SetString(PyExc_RuntimeError,
                    "cpnumeric: _cpn.fast_init was not called");
  return state.ready;
}

/// The runtime's dtype of a NumPy descr (its type number), or false.
static bool runtimeDType(PyObject *descr, cpnrt::DType &out) {
  static_assert(sizeof(long) == 8, "NPY_LONG is int64 here");
  static const char *const keys[24] = {
      "b1",    "i1",    "u1",    "i2",    "u2",    "i4",    "u4",    "i8",
      "u8",    "i8",    "u8",    "f4",    "f8",    nullptr, "c8",    "c16",
      nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, "f2"};
  if (!supportedDescr(descr))
    return false;
  static cpnrt::DType cache[24];
  static bool known[24] = {};
  int t = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(descr)->type_num;
  if (!known[t]) {
    cache[t] = cpnrt::parseDType(keys[t]);
    known[t] = true;
  }
  out = cache[t];
  return true;
}

/// A Python Node's NodeRef (pybind11 instance), or null.
bool nodeRef(PyObject *node, cpn::NodeRef &out) {
  py::detail::make_caster<cpn::NodeRef> caster;
  if (!caster.load(node, false))
    return false;
  out = py::detail::cast_op<cpn::NodeRef>(caster);
  return static_cast<bool>(out);
}

namespace {
/// NumPy's `ufunc` on the eager elements of `ops` (cpnumeric ndarrays and
/// Python scalars, at least one array), wrapped as an eager ndarray; None,
/// before calling NumPy, when an operand is traced or of another type.
/// Results that are not a C-contiguous array of a held dtype go to the
/// Python layer's `finish` (which may return None: the general path then
/// decides).
/// The NumPy operands of an eager call: cpnumeric ndarrays whose base is
/// eager (their NumPy view; non-whole views made by the Python method
/// `_eager`, held in `owned`) and Python scalars. 1 when all are, 0 when
/// one is traced or of another kind, -1 with the error set.
struct EagerOperands {
  PyObject *vals[3];
  // References held (views made here, and eager bases' arrays: a small view
  // of a running window waits with the GIL released, and another thread
  // may demote an eager base meanwhile).
  PyObject *owned[3] = {nullptr, nullptr, nullptr};
  bool arrays = false;
  bool ours = false; // a cpnumeric ndarray among them
  // The first one's shape (held, as `owned`): an elementwise result's,
  // mostly.
  PyObject *like = nullptr;

  ~EagerOperands() {
    for (PyObject *o : owned)
      Py_XDECREF(o);
    Py_XDECREF(like);
  }
  int load(PyObject *const *ops, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *a = ops[i];
      PyTypeObject *t = Py_TYPE(a);
      if (t == state.array.type) {
        ours = true;
        if (!like)
          like = Py_NewRef(state.array.get(a, kShape));
        PyObject *base = state.array.get(a, kBase);
        PyObject *np = base ? state.base.get(base, kNp) : nullptr;
        if (!np || np == Py_None) {
          // A small view of a computed array: NumPy reads its store.
          owned[i] = computedView(a, false, nullptr);
          if (!owned[i])
            return PyErr_Occurred() ? -1 : 0;
          vals[i] = owned[i];
          arrays = true;
          continue;
        }
        if (state.array.get(a, kWhole) == Py_True) {
          vals[i] = owned[i] = Py_NewRef(np);
        } else {
          owned[i] = eagerView(a);
          if (!owned[i])
            return -1;
          vals[i] = owned[i];
        }
        arrays = true;
      } else if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type ||
                 t == &PyComplex_Type) {
        vals[i] = a;
      } else if (PyObject_TypeCheck(
                     a, reinterpret_cast<PyTypeObject *>(state.numpyGeneric))) {
        // A NumPy scalar (a small array's sum): NumPy's scalar math, as
        // NumPy gives it.
        vals[i] = a;
        arrays = true;
      } else {
        return 0;
      }
    }
    return 1;
  }
};

PyObject *eagerCall(PyObject *ufunc, PyObject *const *ops, Py_ssize_t n) {
  EagerOperands eo;
  int loaded = eo.load(ops, n);
  if (loaded <= 0)
    return loaded < 0 ? nullptr : Py_NewRef(Py_None);
  if (!eo.arrays)
    Py_RETURN_NONE;
  ++state.eagerCalls;
  PyObject *r = PyObject_Vectorcall(ufunc, eo.vals, n, nullptr);
  // NumPy scalars alone (np.sqrt(a.sum())): NumPy's scalar result as
  // NumPy gives it, not a 0-d array (765 -> ~150 ns; session 37).
  if (r && !eo.ours &&
      PyObject_TypeCheck(r,
                         reinterpret_cast<PyTypeObject *>(state.numpyGeneric)))
    return r;
  return r ? wrapEagerResult(r, eo.like) : nullptr;
}

/// eager(ufunc, *operands): eagerCall from Python.
PyObject *eager(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!checkReady())
    return nullptr;
  if (nargs < 2 || nargs > 4) {
    PyErr_SetString(PyExc_TypeError, "eager(ufunc, *operands): 1-3 operands");
    return nullptr;
  }
  return eagerCall(args[0], args + 1, nargs - 1);
}

/// inplace(ufunc, self, other): `self op= other` for a writable `self` with
/// an eager base and an eager or Python-scalar `other`: NumPy's ufunc with
/// out= self's elements (NumPy's in-place semantics: same_kind casting and
/// its errors, overlap); returns self, which stays eager. None, before
/// calling NumPy, for every other operand (the Python path then decides).
PyObject *inplace(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!checkReady())
    return nullptr;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "inplace(ufunc, self, other)");
    return nullptr;
  }
  PyObject *self = args[1];
  if (Py_TYPE(self) != state.array.type ||
      state.array.get(self, kReadonly) != Py_False ||
      state.base.get(state.array.get(self, kBase), kNp) == Py_None)
    Py_RETURN_NONE;
  EagerOperands eo;
  int loaded = eo.load(args + 1, 2);
  if (loaded <= 0)
    return loaded < 0 ? nullptr : Py_NewRef(Py_None);
  static PyObject *outName = Py_BuildValue("(s)", "out");
  if (!outName)
    return nullptr;
  PyObject *call[3] = {eo.vals[0], eo.vals[1], eo.vals[0]};
  ++state.eagerCalls;
  PyObject *r = PyObject_Vectorcall(args[0], call, 2, outName);
  if (!r)
    return nullptr;
  Py_DECREF(r);
  return Py_NewRef(self);
}

/// The base class of cpnumeric's ufunc objects: its call runs small eager
/// operands (eagerCall) and the common traced call (tracedCall) without a
/// Python frame, and hands every other call to the Python method
/// `_general(*args, **kwargs)`.
struct UfuncBase {
  PyObject_HEAD PyObject *np; // the NumPy ufunc
  PyObject *op;               // the cpn op's name (str)
  Py_ssize_t nin;
};

PyObject *scalarsName = nullptr; // "_SCALARS": _core.scalar_node's cache

/// Python scalar `v` (int, float, bool or complex, or a NumPy scalar of a
/// held type) as `dt`, broadcast to `dims`, as _core.splat records it, when
/// _core.scalar_node's cache holds its 0-d value (the same key: type,
/// value, dtype, and a zero's signs): 1 with `out` set; 0 when it is not
/// cached (the Python splat makes it);
/// -1 on an error. Its Python call was ~1.7 us of the 3.2 that `x + 1.0`
/// took to record.
int cachedSplat(PyObject *v, PyObject *dt, const std::vector<int64_t> &dims,
                cpn::NodeRef &out) {
  if (!scalarsName && !(scalarsName = PyUnicode_InternFromString("_SCALARS")))
    return -1;
  PyObject *cache = PyDict_GetItemWithError(state.coreDict, scalarsName);
  if (!cache || !PyDict_Check(cache))
    return PyErr_Occurred() ? -1 : 0;
  int zero = PyObject_Not(v); // value == 0 for these four types
  if (zero < 0)
    return -1;
  PyObject *key;
  if (zero) { // 0.0 == -0.0: the signs of a zero's parts are in the key
    Py_complex c = PyComplex_AsCComplex(v);
    if (c.real == -1.0 && PyErr_Occurred())
      return -1;
    key = Py_BuildValue("(OOOdd)", reinterpret_cast<PyObject *>(Py_TYPE(v)), v,
                        dt, std::copysign(1.0, c.real),
                        std::copysign(1.0, c.imag));
  } else {
    key = PyTuple_Pack(3, reinterpret_cast<PyObject *>(Py_TYPE(v)), v, dt);
  }
  if (!key)
    return -1;
  PyObject *node = PyDict_GetItemWithError(cache, key);
  Py_DECREF(key);
  if (!node)
    return PyErr_Occurred() ? -1 : 0;
  cpn::NodeRef scalar;
  cpnrt::DType rt;
  if (!nodeRef(node, scalar) || !runtimeDType(dt, rt))
    return 0;
  if (dims.empty()) {
    out = std::move(scalar);
    return 1;
  }
  out = recordFromPython(
      "view", {scalar}, std::vector<int64_t>(dims.size() + 1, 0), "", dims, rt);
  return out ? 1 : -1;
}

/// Whether a traced C path may record now, as _core.record would: 1; 0
/// while ops are recorded with source lines or errstate's 'raise', or when
/// NumPy's error state changed (record's Python hooks); -1 on an error.
int tracedPathOpen() {
  PyObject *loc = PyDict_GetItemWithError(state.coreDict, state.locationsName);
  if ((loc && loc != Py_False) || PyErr_Occurred() ||
      PyList_GET_ITEM(state.raising, 0) != Py_False)
    return PyErr_Occurred() ? -1 : 0;
  if (state.extobj != Py_None) { // NumPy's error state changed: Python syncs
    PyObject *now = nullptr;
    if (PyContextVar_Get(state.extobj, nullptr, &now) < 0)
      return -1;
    bool same = now == PyList_GET_ITEM(state.synced, 0);
    Py_XDECREF(now);
    if (!same)
      return 0;
  }
  return 1;
}

/// The trace value of a whole traced array (borrowed Python node), or null.
PyObject *wholeTracedNode(PyObject *a) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kWhole) != Py_True)
    return nullptr;
  PyObject *base = state.array.get(a, kBase);
  if (state.base.get(base, kNp) != Py_None)
    return nullptr; // eager: the Python path (its eager front) decides
  return state.base.get(base, kNode);
}

/// The common traced call of ufunc._fast, in C: whole traced arrays of one
/// shape whose dtypes are the loop's, and Python or NumPy scalars, with the
/// loop already in _fast_loops (the Python path resolves and caches it).
/// None (nothing recorded) for every other call, and while tracedPathOpen
/// says no.
PyObject *tracedCall(UfuncBase *u, PyObject *const *ops, Py_ssize_t n) {
  if (int open = tracedPathOpen(); open <= 0)
    return open < 0 ? nullptr : Py_NewRef(Py_None);
  PyObject *shape = nullptr;
  PyObject *key = PyTuple_New(n + 1);
  if (!key)
    return nullptr;
  PyTuple_SET_ITEM(key, 0, Py_NewRef(u->op));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = ops[i];
    PyTypeObject *t = Py_TYPE(a);
    PyObject *item;
    if (t == state.array.type) {
      PyObject *s = state.array.get(a, kShape);
      if (shape && s != shape) {
        int eq = PyObject_RichCompareBool(s, shape, Py_EQ);
        if (eq != 1) {
          Py_DECREF(key);
          return eq < 0 ? nullptr : Py_NewRef(Py_None);
        }
      }
      shape = s;
      item = state.array.get(a, kDType);
      // long long kinds (dtype('q') == dtype('l')): the Python path, which
      // keeps each kind's own loop.
      int num = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(item)->type_num;
      if (num == 9 || num == 10) { // NPY_LONGLONG, NPY_ULONGLONG
        Py_DECREF(key);
        Py_RETURN_NONE;
      }
    } else if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type ||
               t == &PyComplex_Type ||
               PyObject_TypeCheck(
                   a, reinterpret_cast<PyTypeObject *>(state.numpyGeneric))) {
      // Python scalars, and NumPy's (keyed by their type, as ufunc._fast
      // caches them: only held numeric types are in the cache)
      item = reinterpret_cast<PyObject *>(t);
    } else {
      Py_DECREF(key);
      Py_RETURN_NONE;
    }
    PyTuple_SET_ITEM(key, i + 1, Py_NewRef(item));
  }
  PyObject *loop = PyDict_GetItemWithError(state.loops, key);
  Py_DECREF(key);
  if (!loop || !shape || !PyTuple_Check(loop) || PyTuple_GET_SIZE(loop) <= n)
    return PyErr_Occurred() ? nullptr : Py_NewRef(Py_None);
  PyObject *outDescr = PyTuple_GET_ITEM(loop, n);
  cpnrt::DType outDType;
  if (!runtimeDType(outDescr, outDType))
    Py_RETURN_NONE;
  return translatingExceptions([&]() -> PyObject * {
    std::vector<int64_t> dims(PyTuple_GET_SIZE(shape));
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
      if (dims[i] == -1 && PyErr_Occurred())
        return nullptr;
    }
    std::vector<cpn::NodeRef> nodes(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *a = ops[i];
      PyObject *dt = PyTuple_GET_ITEM(loop, i);
      if (Py_TYPE(a) == state.array.type) {
        PyObject *node = wholeTracedNode(a);
        if (!node || state.array.get(a, kDType) != dt ||
            !nodeRef(node, nodes[i]))
          Py_RETURN_NONE; // a view, a cast, an eager base: Python's path
        continue;
      }
      int cached = cachedSplat(a, dt, dims, nodes[i]);
      if (cached < 0)
        return nullptr;
      if (cached)
        continue;
      PyObject *node =
          PyObject_CallFunctionObjArgs(state.splat, a, shape, dt, nullptr);
      if (!node)
        return nullptr;
      bool ok = nodeRef(node, nodes[i]);
      Py_DECREF(node);
      if (!ok)
        Py_RETURN_NONE;
    }
    const char *name = PyUnicode_AsUTF8(u->op);
    if (!name)
      return nullptr;
    cpn::NodeRef r =
        recordFromPython(name, nodes, {}, "", std::move(dims), outDType);
    if (!r)
      return nullptr;
    py::object node = py::cast(std::move(r));
    PyObject *result =
        newArray(node.ptr(), Py_NewRef(shape), outDescr, Py_None);
    if (result && PyTuple_GET_SIZE(shape) == 0) // NumPy's ufunc gives a scalar
      state.array.set(result, kIsScalar, Py_NewRef(Py_True));
    return result;
  });
}

/// The C path of a ufunc call without keywords: eager, then traced; None
/// when neither applies.
PyObject *fastCall(UfuncBase *u, PyObject *const *ops) {
  PyObject *r = eagerCall(u->np, ops, u->nin);
  if (r != Py_None)
    return r;
  Py_DECREF(r);
  return tracedCall(u, ops, u->nin);
}

PyObject *generalName = nullptr; // "_general"

PyObject *ufuncCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  auto *u = reinterpret_cast<UfuncBase *>(self);
  if (state.ready && u->np && u->op &&
      (!kwargs || PyDict_GET_SIZE(kwargs) == 0) &&
      PyTuple_GET_SIZE(args) == u->nin) {
    PyObject *r = fastCall(u, &PyTuple_GET_ITEM(args, 0));
    if (r != Py_None)
      return r; // the result, or null with the error set
    Py_DECREF(r);
  }
  PyObject *general = PyObject_GetAttr(self, generalName);
  if (!general)
    return nullptr;
  PyObject *r = PyObject_Call(general, args, kwargs);
  Py_DECREF(general);
  return r;
}

int ufuncInit(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *np, *op;
  static const char *names[] = {"ufunc", "op", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OU",
                                   const_cast<char **>(names), &np, &op))
    return -1;
  PyObject *nin = PyObject_GetAttrString(np, "nin");
  if (!nin)
    return -1;
  Py_ssize_t n = PyLong_AsSsize_t(nin);
  Py_DECREF(nin);
  if (n == -1 && PyErr_Occurred())
    return -1;
  if (n < 1 || n > 3) {
    PyErr_SetString(PyExc_ValueError, "cpnumeric: ufuncs take 1-3 operands");
    return -1;
  }
  auto *u = reinterpret_cast<UfuncBase *>(self);
  Py_XSETREF(u->np, Py_NewRef(np));
  Py_XSETREF(u->op, Py_NewRef(op));
  u->nin = n;
  return 0;
}

int ufuncTraverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(reinterpret_cast<UfuncBase *>(self)->np);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int ufuncClear(PyObject *self) {
  Py_CLEAR(reinterpret_cast<UfuncBase *>(self)->np);
  Py_CLEAR(reinterpret_cast<UfuncBase *>(self)->op);
  return 0;
}

void ufuncDealloc(PyObject *self) {
  PyTypeObject *t = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  ufuncClear(self);
  t->tp_free(self);
  Py_DECREF(t);
}

PyType_Slot ufuncSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(ufuncCall)},
    {Py_tp_init, reinterpret_cast<void *>(ufuncInit)},
    {Py_tp_traverse, reinterpret_cast<void *>(ufuncTraverse)},
    {Py_tp_clear, reinterpret_cast<void *>(ufuncClear)},
    {Py_tp_dealloc, reinterpret_cast<void *>(ufuncDealloc)},
    {Py_tp_new, reinterpret_cast<void *>(PyType_GenericNew)},
    {Py_tp_doc, const_cast<char *>(
                    "UfuncBase(numpy_ufunc, op): the C call of cpnumeric's "
                    "ufuncs (small eager operands, the common traced call); "
                    "others go to self._general.")},
    {0, nullptr}};

PyType_Spec ufuncSpec = {
    "cpnumeric._cpn.UfuncBase", sizeof(UfuncBase), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, ufuncSlots};

/// The base class of cpnumeric's ndarray: its binary operators (+ - * / // %
/// & | ^ << >>; ** see arrayPower) go straight to the ufunc's C path (fastCall)
/// and, when that does not apply, to the Python functions registered with
/// set_operators (forward `f(self, other)` when the left operand is ours,
/// reflected `f(self, other)` with self the right operand otherwise); it also
/// gives ndarray the buffer protocol (arrayGetBuffer).
enum Operator {
  kAdd,
  kSubtract,
  kMultiply,
  kTrueDivide,
  kFloorDivide,
  kRemainder,
  kAnd,
  kOr,
  kXor,
  kLShift,
  kRShift,
  kPower,
  kNumOperators
};
const char *const operatorNames[kNumOperators] = {
    "add", "sub", "mul", "truediv", "floordiv", "mod",
    "and", "or",  "xor", "lshift",  "rshift",   "pow"};
struct OperatorEntry {
  PyObject *ufunc = nullptr, *forward = nullptr, *reflected = nullptr;
} operators[kNumOperators];

template <int K> PyObject *binaryOperator(PyObject *a, PyObject *b) {
  const OperatorEntry &e = operators[K];
  if (!e.ufunc || !state.ready)
    Py_RETURN_NOTIMPLEMENTED;
  auto *u = reinterpret_cast<UfuncBase *>(e.ufunc);
  if (u->nin == 2 && u->op) {
    PyObject *ops[2] = {a, b};
    PyObject *r = fastCall(u, ops);
    if (r != Py_None)
      return r;
    Py_DECREF(r);
  }
  if (PyObject_TypeCheck(a, state.array.type))
    return PyObject_CallFunctionObjArgs(e.forward, a, b, nullptr);
  return PyObject_CallFunctionObjArgs(e.reflected, b, a, nullptr);
}

/// `a ** b`: on eager operands NumPy's own operator (its array_power, with
/// the scalar fast paths: x ** 2 is square, x ** 0.5 sqrt, which differ
/// from power at -0.0), else the registered Python functions. It was
/// Python's `__pow__` first: 3.7 us per `v ** 2` of a small view of a
/// computed array against NumPy's 0.9 (session 37).
PyObject *arrayPower(PyObject *a, PyObject *b, PyObject *mod) {
  const OperatorEntry &e = operators[kPower];
  if (!e.forward || !state.ready || mod != Py_None)
    Py_RETURN_NOTIMPLEMENTED;
  PyObject *ops[2] = {a, b};
  EagerOperands eo;
  int loaded = eo.load(ops, 2);
  if (loaded < 0)
    return nullptr;
  if (loaded > 0 && eo.arrays) {
    ++state.eagerCalls;
    PyObject *r = PyNumber_Power(eo.vals[0], eo.vals[1], Py_None);
    if (!r)
      return nullptr;
    return wrapEagerResult(r, eo.like);
  }
  if (PyObject_TypeCheck(a, state.array.type))
    return PyObject_CallFunctionObjArgs(e.forward, a, b, nullptr);
  return PyObject_CallFunctionObjArgs(e.reflected, b, a, nullptr);
}

PyObject *matmulFallback = nullptr; // _core._matmul (set_matmul)

/// `a @ b` of whole traced arrays of one float or complex dtype, a matrix
/// times a matrix or a vector times a matrix (either side), recorded as
/// _manip.matmul records it: the vector as a (1, k) or (k, 1) view, the
/// product, and the result's view without the vector's unit axis. None for
/// every other call (the Python path: promotions, stacks, errors), and
/// while tracedPathOpen says no. It was ~30 Python calls: 5.8 us of a
/// 256^2 matrix-vector product's 9.5 (NumPy's whole call: 4.9).
PyObject *tracedMatmul(PyObject *a, PyObject *b) {
  PyObject *na = wholeTracedNode(a), *nb = wholeTracedNode(b);
  if (!na || !nb)
    Py_RETURN_NONE;
  PyObject *dt = state.array.get(a, kDType);
  int num = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(dt)->type_num;
  int numB = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(
                 state.array.get(b, kDType))
                 ->type_num;
  // NPY_FLOAT, NPY_DOUBLE, NPY_CFLOAT, NPY_CDOUBLE, the same on both sides
  if (num != numB || !(num == 11 || num == 12 || num == 14 || num == 15))
    Py_RETURN_NONE;
  PyObject *sa = state.array.get(a, kShape), *sb = state.array.get(b, kShape);
  Py_ssize_t ra = PyTuple_GET_SIZE(sa), rb = PyTuple_GET_SIZE(sb);
  if (!((ra == 2 && (rb == 1 || rb == 2)) || (ra == 1 && rb == 2)))
    Py_RETURN_NONE;
  auto dim = [](PyObject *shape, Py_ssize_t i) {
    return PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
  };
  int64_t n = ra == 2 ? dim(sa, 0) : 1, k = dim(sa, ra - 1);
  int64_t kb = dim(sb, 0), m = rb == 2 ? dim(sb, 1) : 1;
  if (PyErr_Occurred())
    return nullptr;
  if (k != kb)
    Py_RETURN_NONE; // the Python path raises NumPy's error
  if (int open = tracedPathOpen(); open <= 0)
    return open < 0 ? nullptr : Py_NewRef(Py_None);
  cpnrt::DType rt;
  if (!runtimeDType(dt, rt))
    Py_RETURN_NONE;
  return translatingExceptions([&]() -> PyObject * {
    cpn::NodeRef lhs, rhs;
    if (!nodeRef(na, lhs) || !nodeRef(nb, rhs))
      Py_RETURN_NONE;
    // A vector as a view of its base: (1, k) with strides (0, 1), (k, 1)
    // with (1, 0); iattrs are the offset and the strides.
    if (ra == 1 &&
        !(lhs = recordFromPython("view", {lhs}, {0, 0, 1}, "", {1, k}, rt)))
      return nullptr;
    if (rb == 1 &&
        !(rhs = recordFromPython("view", {rhs}, {0, 1, 0}, "", {k, 1}, rt)))
      return nullptr;
    cpn::NodeRef r = recordFromPython("matmul", {lhs, rhs}, {}, "", {n, m}, rt);
    if (!r)
      return nullptr;
    py::object node = py::cast(std::move(r));
    PyObject *shape = Py_BuildValue("(LL)", static_cast<long long>(n),
                                    static_cast<long long>(m));
    if (!shape)
      return nullptr;
    PyObject *result = newArray(node.ptr(), shape, dt, Py_None);
    if (!result || (ra == 2 && rb == 2))
      return result;
    // The vector's unit axis dropped: a view of the (n, 1) or (1, m) base.
    PyObject *flat =
        Py_BuildValue("(L)", static_cast<long long>(ra == 2 ? n : m));
    PyObject *strides = flat ? cStrides(flat) : nullptr;
    if (!strides) {
      Py_XDECREF(flat);
      Py_DECREF(result);
      return nullptr;
    }
    state.array.set(result, kShape, flat);
    state.array.set(result, kStrides, strides);
    state.array.set(result, kWhole, Py_NewRef(Py_False));
    return result;
  });
}

} // namespace

/// Products of at most this many multiply-adds between eager operands are
/// computed by eagerMatmul: OpenBLAS runs them on one thread (its own
/// threshold for gemm is 64^3), so the exception flags that NumPy's report
/// needs are the calling thread's.
constexpr double kEagerGemmMax = 1 << 18;

/// `a @ b` of two eager arrays (ours) of float32 or float64, a matrix times
/// a matrix or a vector times a matrix (either side), of at most
/// kEagerGemmMax multiply-adds: OpenBLAS's gemm or gemv on the calling
/// thread (cpnrt::gemmNow) into a fresh array, an eager result, without
/// NumPy's gufunc machinery around the same BLAS call (a 64^2 matrix times
/// a vector: NumPy's `@` 0.88 us; ours through NumPy's matmul was 1.30).
/// None for anything else, and when the product raised a floating-point
/// exception: NumPy then computes it again and warns or raises as its
/// error state says.
PyObject *eagerMatmul(PyObject *a, PyObject *b) {
  if (Py_TYPE(a) != state.array.type || Py_TYPE(b) != state.array.type)
    Py_RETURN_NONE;
  PyObject *ops[2] = {a, b};
  EagerOperands eo;
  if (int loaded = eo.load(ops, 2); loaded <= 0)
    return loaded < 0 ? nullptr : Py_NewRef(Py_None);
  PyObject *x = eo.vals[0], *y = eo.vals[1];
  if (!isArray(x) || !isArray(y) || eagerProfiling())
    Py_RETURN_NONE; // a profile shows NumPy's call as an `eager` event
  auto *px = py::detail::array_proxy(x), *py_ = py::detail::array_proxy(y);
  auto *dx = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(px->descr);
  auto *dy = reinterpret_cast<py::detail::PyArrayDescr_Proxy *>(py_->descr);
  constexpr int kAligned = 0x100; // NPY_ARRAY_ALIGNED
  // NPY_FLOAT, NPY_DOUBLE, the same on both sides, native and aligned
  if (dx->type_num != dy->type_num ||
      !(dx->type_num == 11 || dx->type_num == 12) || dx->byteorder == '>' ||
      dy->byteorder == '>' || !(px->flags & kAligned) ||
      !(py_->flags & kAligned))
    Py_RETURN_NONE;
  int rx = px->nd, ry = py_->nd;
  if (!((rx == 2 && (ry == 1 || ry == 2)) || (rx == 1 && ry == 2)))
    Py_RETURN_NONE;
  Py_ssize_t item = dx->type_num == 12 ? 8 : 4;
  // Rows and columns of each operand (a vector a row on the left, a column
  // on the right) and their strides in elements.
  int64_t m = rx == 2 ? px->dimensions[0] : 1, k = px->dimensions[rx - 1];
  int64_t kb = py_->dimensions[0], n = ry == 2 ? py_->dimensions[1] : 1;
  if (k != kb || double(m) * double(n) * double(k) > kEagerGemmMax)
    Py_RETURN_NONE; // NumPy's call raises its error or runs the big one
  // A result of the eager threshold's size or more is made on the traced
  // path, as eager_call's are.
  long long threshold = eagerThreshold();
  if (threshold <= 0 || (rx == 2 ? m : 1) * (ry == 2 ? n : 1) >= threshold)
    Py_RETURN_NONE;
  int64_t aCs = px->strides[rx - 1] / item,
          aRs = rx == 2 ? px->strides[0] / item : 0;
  int64_t bRs = py_->strides[0] / item,
          bCs = ry == 2 ? py_->strides[1] / item : 0;
  // Layouts NumPy's matmul hands to BLAS (its is_blasable2d): a matrix with
  // unit steps along one axis and a step along the other of at least that
  // axis's length, a vector with a positive step. NumPy multiplies other
  // layouts (reversed, broadcast, strided both ways) in its own loop, whose
  // sums round differently: those are NumPy's call.
  auto matrixOk = [](int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    return (cs == 1 && rs >= cols) || (rs == 1 && cs >= rows);
  };
  if (!(rx == 2 ? matrixOk(m, k, aRs, aCs) : aCs >= 1) ||
      !(ry == 2 ? matrixOk(k, n, bRs, bCs) : bRs >= 1))
    Py_RETURN_NONE;
  Py_intptr_t dims[2] = {rx == 2 ? m : n, n};
  int nd = rx == 2 && ry == 2 ? 2 : 1;
  auto &api = py::detail::npy_api::get();
  Py_INCREF(px->descr);
  PyObject *out = api.PyArray_NewFromDescr_(api.PyArray_Type_, px->descr, nd,
                                            dims, nullptr, nullptr, 0, nullptr);
  if (!out)
    return nullptr;
  bool clean =
      cpnrt::gemmNow(dx->type_num == 12, px->data, aRs, aCs, py_->data, bRs,
                     bCs, py::detail::array_proxy(out)->data, n, m, n, k);
  if (!clean) {
    Py_DECREF(out);
    Py_RETURN_NONE;
  }
  ++state.eagerCalls;
  return wrapEager(out, eo.like);
}

namespace {

/// eager_matmul(a, b): eagerMatmul from Python (ndarray.dot).
PyObject *eagerMatmulPy(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "eager_matmul(a, b)");
    return nullptr;
  }
  return eagerMatmul(args[0], args[1]);
}

/// `a @ b` (ArrayBase's nb_matrix_multiply, for `a @ b` and `b @ a` with
/// either one ours): tracedMatmul, eagerMatmul, else the registered Python
/// function.
PyObject *arrayMatmul(PyObject *a, PyObject *b) {
  if (!matmulFallback || !state.ready)
    Py_RETURN_NOTIMPLEMENTED;
  PyObject *r = tracedMatmul(a, b);
  if (r != Py_None)
    return r;
  Py_DECREF(r);
  if (!(r = eagerMatmul(a, b)) || r != Py_None)
    return r;
  Py_DECREF(r);
  return PyObject_CallFunctionObjArgs(matmulFallback, a, b, nullptr);
}

/// set_matmul(f): the Python function of ArrayBase's `@` beyond its C path.
PyObject *setMatmul(PyObject *, PyObject *f) {
  if (!PyCallable_Check(f)) {
    PyErr_SetString(PyExc_TypeError, "set_matmul takes a function");
    return nullptr;
  }
  Py_XSETREF(matmulFallback, Py_NewRef(f));
  Py_RETURN_NONE;
}

PyObject *bufferSourceName = nullptr; // "_buffer_source"

/// The buffer protocol (memoryview, bytes, NumPy's array coercion, which
/// np.asarray takes before __array__): the buffer of what `_buffer_source`
/// gives (a sync point), which the view then holds: the computed base's
/// memory, shared as __array__ shares it (docs/numpy-api.md), or a copy of
/// the elements. A view's buffer has its strides: a consumer that needs
/// contiguous memory raises as with NumPy's view.
/// _cpn.lend and _errstate.report (set_export), for sharedExport.
PyObject *exportLend = nullptr, *exportReport = nullptr;

/// What ndarray._buffer_source gives (np.asarray's export of the computed
/// store, without a copy) for the common case, in C: a plain ndarray of
/// whole elements, not empty, of a traced base, outside @jit tracing; the
/// same lend, floating-point report and view as _shared, without its
/// Python frames and intermediate arrays (np.asarray of a computed view
/// 2.3 -> ~1 us). Null with no error set for every other case (the Python
/// path decides); null with the error set when the work or report raised.
static PyObject *sharedExport(PyObject *self) {
  if (!exportLend || !exportReport || Py_TYPE(self) != state.array.type ||
      state.array.get(self, kPart) != Py_None ||
      (items.tracing && items.tracingNow()))
    return nullptr;
  PyObject *base = state.array.get(self, kBase);
  if (state.base.get(base, kNp) != Py_None)
    return nullptr;
  PyObject *shape = state.array.get(self, kShape);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); ++i)
    if (PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i)) <= 0) {
      PyErr_Clear();
      return nullptr;
    }
  Py_INCREF(base); // the base lent, whatever other threads do to self
  bool whole = state.array.get(self, kWhole) == Py_True;
  PyObject *buf =
      PyObject_CallFunctionObjArgs(exportLend, state.base.get(base, kNode),
                                   whole ? Py_False : Py_True, nullptr);
  PyObject *reported =
      buf ? PyObject_CallNoArgs(exportReport) : nullptr; // as _raising
  Py_XDECREF(reported);
  if (!reported || buf == Py_None || state.array.get(self, kBase) != base ||
      state.array.get(self, kPart) != Py_None || !isArray(buf)) {
    // Copied instead (None), or `self` changed meanwhile: the Python path.
    Py_DECREF(base);
    Py_XDECREF(buf);
    return nullptr;
  }
  // The view _np_view makes: offsets and strides in the base's items.
  shape = state.array.get(self, kShape);
  PyObject *strides = state.array.get(self, kStrides);
  Py_ssize_t item =
      py::reinterpret_borrow<py::dtype>(state.base.get(base, kBDType))
          .itemsize();
  Py_DECREF(base);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  if (nd > 64 || PyTuple_GET_SIZE(strides) != nd) {
    Py_DECREF(buf);
    return nullptr;
  }
  Py_intptr_t dims[64], steps[64];
  for (Py_ssize_t i = 0; i < nd; ++i) {
    dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    steps[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i)) * item;
  }
  long long offset = PyLong_AsLongLong(state.array.get(self, kOffset));
  if (PyErr_Occurred()) {
    Py_DECREF(buf);
    return nullptr;
  }
  auto &api = py::detail::npy_api::get();
  PyObject *descr = state.array.get(self, kDType);
  Py_INCREF(descr); // NewFromDescr steals it
  char *data =
      static_cast<char *>(py::detail::array_proxy(buf)->data) + offset * item;
  int wflags = state.array.get(self, kReadonly) == Py_False
                   ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_
                   : 0;
  PyObject *a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, int(nd),
                                          dims, steps, data, wflags, nullptr);
  if (!a) {
    Py_DECREF(buf);
    return nullptr;
  }
  if (api.PyArray_SetBaseObject_(a, buf) < 0) { // steals buf
    Py_DECREF(a);
    return nullptr;
  }
  return a;
}

/// shared_export(a): sharedExport from Python (ndarray.__array__'s common
/// case); None where the Python path decides.
static PyObject *sharedExportPy(PyObject *, PyObject *a) {
  PyObject *r = sharedExport(a);
  if (!r && !PyErr_Occurred())
    Py_RETURN_NONE;
  return r;
}

/// set_export(lend, report): sharedExport's calls.
static PyObject *setExport(PyObject *, PyObject *const *args, Py_ssize_t n) {
  if (n != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "set_export(lend, report)");
    return nullptr;
  }
  Py_XSETREF(exportLend, Py_NewRef(args[0]));
  Py_XSETREF(exportReport, Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

/// What ndarray._buffer_source gives for a whole array of an eager base,
/// in C: a C-order copy of the base's NumPy array, as _numpy makes it (an
/// eager base's memory is NumPy's own, so exports copy it). Null with no
/// error set for every other array.
static PyObject *eagerExport(PyObject *self) {
  if (Py_TYPE(self) != state.array.type ||
      state.array.get(self, kPart) != Py_None ||
      state.array.get(self, kWhole) != Py_True)
    return nullptr;
  PyObject *np = state.base.get(state.array.get(self, kBase), kNp);
  if (np == Py_None || !isArray(np) ||
      reinterpret_cast<PyObject *>(py::detail::array_proxy(np)->descr) !=
          state.array.get(self, kDType))
    return nullptr;
  return py::detail::npy_api::get().PyArray_NewCopy_(np, 0 /* NPY_CORDER */);
}

int arrayGetBuffer(PyObject *self, Py_buffer *view, int flags) {
  PyObject *src = sharedExport(self);
  if (!src && !PyErr_Occurred())
    src = eagerExport(self);
  if (!src && PyErr_Occurred()) {
    view->obj = nullptr;
    return -1;
  }
  if (src) {
    int r = PyObject_GetBuffer(src, view, flags); // view->obj holds src
    Py_DECREF(src);
    return r;
  }
  src = PyObject_CallMethodNoArgs(self, bufferSourceName);
  if (!src) {
    view->obj = nullptr;
    return -1;
  }
  int r = PyObject_GetBuffer(src, view, flags); // view->obj holds src
  Py_DECREF(src);
  return r;
}

/// Never called (each view's obj is its NumPy copy, whose release runs);
/// its presence tells consumers that keep the exporter rather than the view
/// (numpy.frombuffer) that the memory lives with the view: they hold a
/// memoryview instead.
void arrayReleaseBuffer(PyObject *, Py_buffer *) {}

/// ndarray.size, .ndim, .dtype and .T from its __slots__ in C (as Python
/// properties they cost 242, 114, 75 and 834 ns a read against NumPy's 28,
/// 40, 39 and 56-117: `x.sum() / x.size` in a loop of small arrays).
static bool arraySlotsReady(PyObject *self) {
  if (state.ready && PyObject_TypeCheck(self, state.array.type))
    return true;
  PyErr_SetString(PyExc_AttributeError,
                  "cpnumeric: the array's attributes are not ready");
  return false;
}

static PyObject *arraySize(PyObject *self, void *) {
  if (!arraySlotsReady(self))
    return nullptr;
  PyObject *shape = state.array.get(self, kShape);
  long long n = 1;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k) {
    long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k));
    if (d == -1 && PyErr_Occurred())
      return nullptr;
    if (__builtin_mul_overflow(n, d, &n)) {
      PyErr_SetString(PyExc_OverflowError, "array size overflows int64");
      return nullptr;
    }
  }
  return PyLong_FromLongLong(n);
}

static PyObject *arrayNdim(PyObject *self, void *) {
  if (!arraySlotsReady(self))
    return nullptr;
  return PyLong_FromSsize_t(PyTuple_GET_SIZE(state.array.get(self, kShape)));
}

static PyObject *arrayDType(PyObject *self, void *) {
  if (!arraySlotsReady(self))
    return nullptr;
  return Py_NewRef(state.array.get(self, kDType));
}

static PyObject *arrayT(PyObject *self, void *) {
  if (!arraySlotsReady(self))
    return nullptr;
  return arrayTransposed(self);
}

static PyGetSetDef arrayGetSet[] = {
    {"T", arrayT, nullptr,
     const_cast<char *>("View of the array with its axes reversed."), nullptr},
    {"size", arraySize, nullptr,
     const_cast<char *>("Number of elements in the array."), nullptr},
    {"ndim", arrayNdim, nullptr,
     const_cast<char *>("Number of array dimensions."), nullptr},
    {"dtype", arrayDType, nullptr,
     const_cast<char *>("Data-type of the array's elements."), nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot arraySlots[] = {
    {Py_tp_getset, reinterpret_cast<void *>(arrayGetSet)},
    {Py_mp_subscript, reinterpret_cast<void *>(arrayGetItem)},
    {Py_mp_ass_subscript, reinterpret_cast<void *>(arraySetItem)},
    {Py_bf_getbuffer, reinterpret_cast<void *>(arrayGetBuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void *>(arrayReleaseBuffer)},
    {Py_nb_add, reinterpret_cast<void *>(binaryOperator<kAdd>)},
    {Py_nb_subtract, reinterpret_cast<void *>(binaryOperator<kSubtract>)},
    {Py_nb_multiply, reinterpret_cast<void *>(binaryOperator<kMultiply>)},
    {Py_nb_true_divide, reinterpret_cast<void *>(binaryOperator<kTrueDivide>)},
    {Py_nb_floor_divide,
     reinterpret_cast<void *>(binaryOperator<kFloorDivide>)},
    {Py_nb_remainder, reinterpret_cast<void *>(binaryOperator<kRemainder>)},
    {Py_nb_and, reinterpret_cast<void *>(binaryOperator<kAnd>)},
    {Py_nb_or, reinterpret_cast<void *>(binaryOperator<kOr>)},
    {Py_nb_xor, reinterpret_cast<void *>(binaryOperator<kXor>)},
    {Py_nb_lshift, reinterpret_cast<void *>(binaryOperator<kLShift>)},
    {Py_nb_rshift, reinterpret_cast<void *>(binaryOperator<kRShift>)},
    {Py_nb_power, reinterpret_cast<void *>(arrayPower)},
    {Py_nb_matrix_multiply, reinterpret_cast<void *>(arrayMatmul)},
    {Py_tp_doc,
     const_cast<char *>("The C binary operators of cpnumeric.ndarray (see "
                        "_cpn.set_operators).")},
    {0, nullptr}};

PyType_Spec arraySpec = {"cpnumeric._cpn.ArrayBase", sizeof(PyObject), 0,
                         Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, arraySlots};

/// set_operators({name: (ufunc, forward, reflected)}): the ufunc and the
/// Python fallbacks of each operator of ArrayBase.
PyObject *setOperators(PyObject *, PyObject *table) {
  if (!PyDict_Check(table)) {
    PyErr_SetString(PyExc_TypeError, "set_operators takes a dict");
    return nullptr;
  }
  for (int k = 0; k < kNumOperators; ++k) {
    PyObject *entry = PyDict_GetItemString(table, operatorNames[k]);
    PyObject *uf, *fwd, *rev;
    if (!entry || !PyArg_ParseTuple(entry, "OOO", &uf, &fwd, &rev)) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_KeyError, "set_operators: no entry for '%s'",
                     operatorNames[k]);
      return nullptr;
    }
    if (!PyObject_TypeCheck(
            uf, reinterpret_cast<PyTypeObject *>(state.ufuncType))) {
      PyErr_SetString(PyExc_TypeError, "set_operators: not a UfuncBase");
      return nullptr;
    }
    OperatorEntry &e = operators[k];
    Py_XSETREF(e.ufunc, Py_NewRef(uf));
    Py_XSETREF(e.forward, Py_NewRef(fwd));
    Py_XSETREF(e.reflected, Py_NewRef(rev));
  }
  Py_RETURN_NONE;
}

/// wrap_eager(arr): ndarray._from_eager for an exact, C-contiguous NumPy
/// array of a held dtype (None otherwise: the caller converts it).
PyObject *wrapEagerPy(PyObject *, PyObject *arr) {
  if (!checkReady())
    return nullptr;
  if (!isArray(arr) || !(py::detail::array_proxy(arr)->flags & kCContiguous))
    Py_RETURN_NONE;
  return wrapEager(Py_NewRef(arr));
}

/// wrap_node(node, shape, dtype): ndarray._from_node.
PyObject *wrapNode(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!checkReady())
    return nullptr;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "wrap_node(node, shape, dtype)");
    return nullptr;
  }
  PyObject *shape = PyTuple_CheckExact(args[1]) ? Py_NewRef(args[1])
                                                : PySequence_Tuple(args[1]);
  if (!shape)
    return nullptr;
  return newArray(args[0], shape, args[2], Py_None);
}

PyMethodDef methods[] = {
    {"eager_call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerCallPy)),
     METH_FASTCALL,
     "eager_call(npf, args, kwargs): NumPy's npf on eager arguments, "
     "wrapped; the declined marker when the call is not such a one."},
    {"creation_call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(creationCallPy)),
     METH_FASTCALL,
     "creation_call(npf, kind, args, kwargs): NumPy's creation function "
     "for a small result, wrapped; the declined marker otherwise."},
    {"array_iter", arrayIterPy, METH_O,
     "array_iter(a): for x in a, over a 1-D ndarray, in C."},
    {"eager_init",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerInit)),
     METH_FASTCALL,
     "eager_init(declined, finish, profiling, methods, traced)."},
    {"eager_count", eagerCount, METH_O,
     "eager_count(reset): NumPy ufunc calls on eager operands so far."},
    {"eager_binary",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerBinary)),
     METH_FASTCALL,
     "eager_binary(f, 'matmul'): EagerFunction f computes small products of "
     "two eager arrays in C first."},
    {"eager_matmul",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerMatmulPy)),
     METH_FASTCALL,
     "eager_matmul(a, b): a @ b of small eager float arrays in C; None when "
     "it is not such a product."},
    {"eager", reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eager)),
     METH_FASTCALL,
     "eager(ufunc, *operands): NumPy's ufunc on small eager operands, "
     "wrapped; None when an operand is traced."},
    {"inplace",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(inplace)),
     METH_FASTCALL,
     "inplace(ufunc, self, other): self op= other on eager operands, in "
     "NumPy; None when an operand is traced."},
    {"wrap_eager", wrapEagerPy, METH_O,
     "wrap_eager(arr): an eager ndarray owning a C-contiguous NumPy array."},
    {"wrap_node",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(wrapNode)),
     METH_FASTCALL, "wrap_node(node, shape, dtype): a traced ndarray."},
    {"element_get",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(elementGet)),
     METH_FASTCALL,
     "element_get(a, key): a[i, j] read from a computed array's store; None "
     "when the Python path must decide."},
    {"scalar_value",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(scalarValue)),
     METH_O,
     "scalar_value(a): the element of a 0-d traced array as NumPy's scalar "
     "(a sync point); None when the Python path must decide."},
    {"element_set",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(elementSet)),
     METH_FASTCALL,
     "element_set(a, key, value): a[i, j] = scalar written into the store "
     "when nothing else refers to it; None when the Python path must "
     "decide."},
    {"eager_view_of",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerViewOf)),
     METH_FASTCALL,
     "eager_view_of(a, r): the NumPy view r of a's eager base as a view of "
     "that base; None when it is not one."},
    {"set_item_handlers",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(setItemHandlers)),
     METH_FASTCALL,
     "set_item_handlers(getitem, setitem, element_values, tracing): "
     "ArrayBase's a[key] and a[key] = v beyond one element."},
    {"set_export",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(setExport)),
     METH_FASTCALL,
     "set_export(lend, report): np.asarray's export of a computed array in "
     "C (the common case of ndarray._buffer_source): _cpn.lend, then "
     "_errstate.report."},
    {"shared_export", sharedExportPy, METH_O,
     "shared_export(a): what np.asarray(a) gives for a computed array, "
     "without a copy, in C (ndarray._shared's common case); None where the "
     "Python path decides."},
    {"set_matmul", setMatmul, METH_O,
     "set_matmul(f): ArrayBase's `a @ b` beyond its C path, f(a, b)."},
    {"set_operators", setOperators, METH_O,
     "set_operators({name: (ufunc, forward, reflected)}): ArrayBase's "
     "operators."},
    {nullptr, nullptr, 0, nullptr}};
} // namespace
} // namespace cpn::fast

void initFast(py::module_ &m) {
  using namespace cpn::fast;
  m.def(
      "fast_init",
      [](py::object array, py::object base, py::object numpyArray,
         py::object finish, py::dict loops, py::object splat,
         py::dict coreGlobals, py::list raising, py::object extobj,
         py::list synced) {
        state.array.init(array.ptr(),
                         {"_base", "_shape", "_strides", "_offset", "_dtype",
                          "_readonly", "_whole", "_part", "_isscalar"});
        state.base.init(base.ptr(), {"node", "shape", "dtype", "np"});
        state.numpyArray = numpyArray.inc_ref().ptr();
        state.numpyGeneric =
            py::object(py::module_::import("numpy").attr("generic"))
                .release()
                .ptr();
        state.finish = finish.inc_ref().ptr();
        state.eagerName = PyUnicode_InternFromString("_eager");
        state.scalarName = PyUnicode_InternFromString("_scalar");
        state.loops = loops.inc_ref().ptr();
        state.splat = splat.inc_ref().ptr();
        state.coreDict = coreGlobals.inc_ref().ptr();
        if (raising.size() != 1)
          throw py::value_error("fast_init: raising is a list of one bool");
        state.raising = raising.inc_ref().ptr();
        if (!extobj.is_none() && !PyContextVar_CheckExact(extobj.ptr()))
          throw py::type_error("fast_init: extobj is a ContextVar or None");
        if (synced.size() != 1)
          throw py::value_error("fast_init: synced is a list of one value");
        state.extobj = extobj.inc_ref().ptr();
        state.synced = synced.inc_ref().ptr();
        state.locationsName = PyUnicode_InternFromString("LOCATIONS");
        // pybind11's NumPy API table, made on its first use (it checks
        // NumPy's version with numpy.lib.NumpyVersion and two regular
        // expressions): here, not in a program's first element read, which
        // took 150-175 us for it.
        py::detail::npy_api::get();
        state.ready = true;
      },
      py::arg("ndarray"), py::arg("base"), py::arg("numpy_ndarray"),
      py::arg("finish"), py::arg("loops"), py::arg("splat"),
      py::arg("core_globals"), py::arg("raising"), py::arg("extobj"),
      py::arg("synced"),
      "Registers the Python layer's classes with the C fast path.");
  if (PyModule_AddFunctions(m.ptr(), methods) < 0)
    throw py::error_already_set();
  generalName = PyUnicode_InternFromString("_general");
  bufferSourceName = PyUnicode_InternFromString("_buffer_source");
  PyObject *ufuncType = PyType_FromSpec(&ufuncSpec);
  state.ufuncType = ufuncType;
  if (!generalName || !bufferSourceName || !ufuncType ||
      PyModule_AddObject(m.ptr(), "UfuncBase", Py_NewRef(ufuncType)) < 0)
    throw py::error_already_set();
  PyObject *arrayType = PyType_FromSpec(&arraySpec);
  if (!arrayType || PyModule_AddObject(m.ptr(), "ArrayBase", arrayType) < 0)
    throw py::error_already_set();
  addEagerFunctionType(m.ptr());
}
