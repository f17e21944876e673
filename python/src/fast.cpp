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
//
//===----------------------------------------------------------------------===//

#include "bindings.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/TaskGraph.h"

#include <pybind11/numpy.h>

#include <structmember.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace py = pybind11;

namespace {
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
enum { kBase, kShape, kStrides, kOffset, kDType, kReadonly, kWhole, kPart };
// _Base's slots.
enum { kNode, kBShape, kBDType, kNp };

struct State {
  Slots array, base;
  PyObject *numpyArray = nullptr; // numpy.ndarray
  PyObject *numpyGeneric = nullptr; // numpy.generic (NumPy's scalars)
  PyObject *finish = nullptr;     // Python: the other results of eager calls
  PyObject *eagerName = nullptr;  // "_eager"
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
} state;

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
PyObject *newArray(PyObject *node, PyObject *shape, PyObject *dtype,
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
PyObject *shapeOf(PyObject *arr) {
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
  PyObject *eager = PyDict_GetItemString(state.coreDict, "EAGER");
  PyObject *t = eager ? PyDict_GetItemString(eager, "threshold") : nullptr;
  long long v = t ? PyLong_AsLongLong(t) : 0;
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return v;
}

/// An eager ndarray owning `arr` (an exact, C-contiguous NumPy array of a
/// supported dtype); steals `arr`.
PyObject *wrapEager(PyObject *arr) {
  PyObject *shape = shapeOf(arr);
  PyObject *r = nullptr;
  if (shape) {
    PyObject *dtype =
        reinterpret_cast<PyObject *>(py::detail::array_proxy(arr)->descr);
    r = newArray(Py_None, shape, dtype, arr);
  }
  Py_DECREF(arr);
  return r;
}

constexpr int kCContiguous = 0x1; // NPY_ARRAY_C_CONTIGUOUS

bool checkReady() {
  if (!state.ready)
    PyErr_SetString(PyExc_RuntimeError,
                    "cpnumeric: _cpn.fast_init was not called");
  return state.ready;
}

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
PyObject *computedView(PyObject *a, bool writable, cpn::NodeRef *owned,
                       bool anySize = false);

struct EagerOperands {
  PyObject *vals[3];
  PyObject *owned[3] = {nullptr, nullptr, nullptr};
  bool arrays = false;

  ~EagerOperands() {
    for (PyObject *o : owned)
      Py_XDECREF(o);
  }
  int load(PyObject *const *ops, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *a = ops[i];
      PyTypeObject *t = Py_TYPE(a);
      if (t == state.array.type) {
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
          vals[i] = np;
        } else {
          owned[i] = PyObject_CallMethodNoArgs(a, state.eagerName);
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
  if (!r)
    return nullptr;
  if (isArray(r) && (py::detail::array_proxy(r)->flags & kCContiguous) &&
      supportedDescr(
          reinterpret_cast<PyObject *>(py::detail::array_proxy(r)->descr)))
    return wrapEager(r);
  PyObject *f = PyObject_CallOneArg(state.finish, r);
  Py_DECREF(r);
  return f;
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

/// The runtime's dtype of a NumPy descr (its type number), or false.
bool runtimeDType(PyObject *descr, cpnrt::DType &out) {
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

/// The common traced call of ufunc._fast, in C: whole traced arrays of one
/// shape whose dtypes are the loop's, and Python scalars, with the loop
/// already in _fast_loops (the Python path resolves and caches it). None
/// (nothing recorded) for every other call, and while ops are recorded with
/// source lines or errstate's 'raise' (record's Python hooks).
PyObject *tracedCall(UfuncBase *u, PyObject *const *ops, Py_ssize_t n) {
  PyObject *loc = PyDict_GetItemWithError(state.coreDict, state.locationsName);
  if ((loc && loc != Py_False) || PyErr_Occurred() ||
      PyList_GET_ITEM(state.raising, 0) != Py_False)
    return PyErr_Occurred() ? nullptr : Py_NewRef(Py_None);
  if (state.extobj != Py_None) { // NumPy's error state changed: Python syncs
    PyObject *now = nullptr;
    if (PyContextVar_Get(state.extobj, nullptr, &now) < 0)
      return nullptr;
    bool same = now == PyList_GET_ITEM(state.synced, 0);
    Py_XDECREF(now);
    if (!same)
      Py_RETURN_NONE;
  }
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
    } else if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type ||
               t == &PyComplex_Type) {
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
    std::vector<cpn::NodeRef> nodes(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *a = ops[i];
      PyObject *dt = PyTuple_GET_ITEM(loop, i);
      if (Py_TYPE(a) == state.array.type) {
        PyObject *base = state.array.get(a, kBase);
        if (state.array.get(a, kWhole) != Py_True ||
            state.array.get(a, kDType) != dt ||
            state.base.get(base, kNp) != Py_None ||
            !nodeRef(state.base.get(base, kNode), nodes[i]))
          Py_RETURN_NONE; // a view, a cast, an eager base: Python's path
      } else {
        PyObject *node =
            PyObject_CallFunctionObjArgs(state.splat, a, shape, dt, nullptr);
        if (!node)
          return nullptr;
        bool ok = nodeRef(node, nodes[i]);
        Py_DECREF(node);
        if (!ok)
          Py_RETURN_NONE;
      }
    }
    std::vector<int64_t> dims(PyTuple_GET_SIZE(shape));
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
      if (dims[i] == -1 && PyErr_Occurred())
        return nullptr;
    }
    const char *name = PyUnicode_AsUTF8(u->op);
    if (!name)
      return nullptr;
    cpn::NodeRef r =
        recordFromPython(name, nodes, {}, "", std::move(dims), outDType);
    if (!r)
      return nullptr;
    py::object node = py::cast(std::move(r));
    return newArray(node.ptr(), Py_NewRef(shape), outDescr, Py_None);
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
/// & | ^ << >>) go straight to the ufunc's C path (fastCall) and, when that
/// does not apply, to the Python functions registered with set_operators
/// (forward `f(self, other)` when the left operand is ours, reflected
/// `f(self, other)` with self the right operand otherwise); it also gives
/// ndarray the buffer protocol (arrayGetBuffer).
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
  kNumOperators
};
const char *const operatorNames[kNumOperators] = {
    "add", "sub", "mul", "truediv", "floordiv", "mod",
    "and", "or",  "xor", "lshift",  "rshift"};
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

PyObject *bufferSourceName = nullptr; // "_buffer_source"

/// The buffer protocol (memoryview, bytes, NumPy's array coercion): the
/// buffer of a NumPy copy of the elements (the Python method
/// `_buffer_source`, a sync point), which the view then owns. A copy, as
/// `__array__` gives: writes through it do not reach the array.
int arrayGetBuffer(PyObject *self, Py_buffer *view, int flags) {
  PyObject *src = PyObject_CallMethodNoArgs(self, bufferSourceName);
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

PyObject *elementGet(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *elementSet(PyObject *, PyObject *const *args, Py_ssize_t nargs);
PyObject *eagerView(PyObject *a);

/// The Python layer's a[key] and a[key] = v (_manip.getitem/setitem), the
/// scalar types element_set takes, and _jit.TRACING (set_item_handlers).
struct ItemHandlers {
  PyObject *get = nullptr, *set = nullptr, *values = nullptr,
           *tracing = nullptr;
  bool tracingNow() const {
    PyObject *f = PyDict_GetItemString(tracing, "function");
    return f && f != Py_None;
  }
} items;

/// Whether `key` is basic indexing that NumPy answers with a view or an
/// element: a slice, or a tuple of Python ints and slices.
bool basicKey(PyObject *key) {
  if (PySlice_Check(key))
    return true;
  if (!PyTuple_CheckExact(key))
    return false;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(key); ++k) {
    PyObject *item = PyTuple_GET_ITEM(key, k);
    if (!PyLong_CheckExact(item) && !PySlice_Check(item))
      return false;
  }
  return true;
}

/// A view of ndarray a's base (whole elements, a's dtype) of `shape` and
/// `strides` (new references, stolen) at `offset`, as _core.ndarray._view
/// makes it.
PyObject *newView(PyObject *a, PyObject *shape, PyObject *strides,
                  Py_ssize_t offset, bool readonly) {
  PyObject *base = state.array.get(a, kBase);
  PyObject *c = cStrides(shape);
  PyObject *v = c ? state.array.type->tp_alloc(state.array.type, 0) : nullptr;
  if (!v) {
    Py_DECREF(shape);
    Py_DECREF(strides);
    Py_XDECREF(c);
    return nullptr;
  }
  bool whole = offset == 0 &&
               PyObject_RichCompareBool(shape, state.base.get(base, kBShape),
                                        Py_EQ) == 1 &&
               PyObject_RichCompareBool(strides, c, Py_EQ) == 1;
  Py_DECREF(c);
  state.array.set(v, kBase, Py_NewRef(base));
  state.array.set(v, kShape, shape);
  state.array.set(v, kStrides, strides);
  state.array.set(v, kOffset, PyLong_FromSsize_t(offset));
  state.array.set(v, kDType, Py_NewRef(state.array.get(a, kDType)));
  state.array.set(v, kReadonly, Py_NewRef(readonly ? Py_True : Py_False));
  state.array.set(v, kWhole, Py_NewRef(whole ? Py_True : Py_False));
  state.array.set(v, kPart, Py_NewRef(Py_None));
  return v;
}

/// a[key] for a key of Python ints and slices (basic indexing; at most one
/// per axis) that selects a view of a traced array of whole elements: its
/// shape, strides and offset computed here as _manip.basic_view does.
/// Null with no error set for anything else (an index out of range
/// included: the Python path raises NumPy's error).
PyObject *tracedBasicView(PyObject *a, PyObject *key) {
  if (state.array.get(a, kPart) != Py_None)
    return nullptr;
  PyObject *shape = state.array.get(a, kShape);
  PyObject *strides = state.array.get(a, kStrides);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  PyObject *const *items = &key;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
  }
  if (n > nd)
    return nullptr;
  long long off = PyLong_AsLongLong(state.array.get(a, kOffset));
  std::vector<Py_ssize_t> dims, steps;
  for (Py_ssize_t k = 0; k < nd; ++k) {
    Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
    Py_ssize_t st = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, k));
    PyObject *it = k < n ? items[k] : nullptr;
    if (!it) {
      dims.push_back(d);
      steps.push_back(st);
    } else if (PyLong_CheckExact(it)) {
      int overflow = 0;
      long long i = PyLong_AsLongLongAndOverflow(it, &overflow);
      if (overflow || i < -d || i >= d)
        return nullptr;
      off += (i < 0 ? i + d : i) * st;
    } else if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) {
        PyErr_Clear();
        return nullptr;
      }
      Py_ssize_t len = PySlice_AdjustIndices(d, &start, &stop, step);
      if (len == 0)
        return nullptr; // an empty view: its offset is the Python path's
      off += start * st;
      dims.push_back(len);
      steps.push_back(st * step);
    } else {
      return nullptr;
    }
  }
  if (dims.empty())
    return nullptr; // an element: element_get or the Python path
  PyObject *vs = PyTuple_New(dims.size()), *vt = PyTuple_New(dims.size());
  if (!vs || !vt) {
    Py_XDECREF(vs);
    Py_XDECREF(vt);
    return nullptr;
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    PyTuple_SET_ITEM(vs, k, PyLong_FromSsize_t(dims[k]));
    PyTuple_SET_ITEM(vt, k, PyLong_FromSsize_t(steps[k]));
  }
  return newView(a, vs, vt, off, state.array.get(a, kReadonly) == Py_True);
}

/// The ndarray `a` (eager, whole elements) seen through the NumPy view `r`
/// of its base's buffer: a new view of the same base (its offset and
/// strides in elements), as _core.ndarray._view makes it. Null without an
/// error when r is not such a view (the Python path then decides).
PyObject *viewOfBase(PyObject *a, PyObject *r) {
  PyObject *base = state.array.get(a, kBase);
  PyObject *np = state.base.get(base, kNp);
  auto *rp = py::detail::array_proxy(r);
  auto *bp = py::detail::array_proxy(np);
  if (rp->descr != bp->descr)
    return nullptr;
  Py_ssize_t item = py::reinterpret_borrow<py::dtype>(bp->descr).itemsize();
  Py_ssize_t at = rp->data - bp->data;
  if (item <= 0 || at % item)
    return nullptr;
  PyObject *shape = PyTuple_New(rp->nd), *strides = PyTuple_New(rp->nd);
  bool ok = shape && strides;
  for (int i = 0; ok && i < rp->nd; ++i) {
    if (rp->dimensions[i] == 0 || rp->strides[i] % item) {
      ok = false; // an empty view's offset may lie past the buffer
      break;
    }
    PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(rp->dimensions[i]));
    PyTuple_SET_ITEM(strides, i, PyLong_FromSsize_t(rp->strides[i] / item));
  }
  if (!ok) {
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return nullptr;
  }
  // Read-only when a is, or when NumPy made r read-only (diagonal, ...).
  bool readonly = state.array.get(a, kReadonly) == Py_True ||
                  !(rp->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_);
  return newView(a, shape, strides, at / item, readonly);
}

/// a[key] for basic indexing of an eager array of whole elements: NumPy's
/// indexing (its errors: null with the error set) on the elements, and the
/// view it gives as a view of a's base. Null with no error set: the Python
/// path decides.
PyObject *eagerBasicGet(PyObject *a, PyObject *key) {
  if (state.array.get(a, kPart) != Py_None || !basicKey(key))
    return nullptr;
  PyObject *view = eagerView(a);
  if (!view)
    return nullptr;
  PyObject *r = PyObject_GetItem(view, key);
  Py_DECREF(view);
  if (!r)
    return nullptr; // NumPy's error (IndexError, ...)
  if (!isArray(r))
    return r; // an element
  PyObject *v = viewOfBase(a, r);
  Py_DECREF(r);
  if (!v)
    PyErr_Clear();
  return v;
}

/// a[key]: one element of an eager or computed array read in C (element_get);
/// everything else in the Python layer.
PyObject *arrayGetItem(PyObject *self, PyObject *key) {
  if (!items.get) {
    PyErr_SetString(PyExc_RuntimeError, "cpnumeric: no item handlers");
    return nullptr;
  }
  if ((PyLong_CheckExact(key) || PyTuple_CheckExact(key)) &&
      Py_TYPE(self) == state.array.type && !items.tracingNow()) {
    PyObject *args[2] = {self, key};
    PyObject *r = elementGet(nullptr, args, 2);
    if (r != Py_None)
      return r;
    Py_DECREF(r);
  }
  if (Py_TYPE(self) == state.array.type) {
    if (PyObject *r = eagerBasicGet(self, key))
      return r;
    if (PyErr_Occurred())
      return nullptr;
    if (state.base.get(state.array.get(self, kBase), kNp) == Py_None &&
        (PySlice_Check(key) || PyTuple_CheckExact(key) ||
         PyLong_CheckExact(key)))
      if (PyObject *r = tracedBasicView(self, key))
        return r;
    if (PyErr_Occurred())
      return nullptr;
  }
  return PyObject_CallFunctionObjArgs(items.get, self, key, nullptr);
}

/// a[key] = value (basic indexing) written straight into the store of a
/// computed traced array that nothing else refers to (as element_set
/// checks: only its base holds the value, only the value holds the store),
/// of a scalar, an eager array or a small computed one: NumPy's assignment
/// on the store's elements. 1 written, 0 not such a case (nothing done), -1
/// with NumPy's error set.
int computedAssign(PyObject *self, PyObject *key, PyObject *value) {
  PyObject *src = nullptr;
  if (PySet_Contains(items.values,
                     reinterpret_cast<PyObject *>(Py_TYPE(value))) == 1)
    src = Py_NewRef(value);
  else if (Py_TYPE(value) == state.array.type &&
           state.array.get(value, kPart) == Py_None)
    src = state.base.get(state.array.get(value, kBase), kNp) != Py_None
              ? eagerView(value)
              : computedView(value, false, nullptr);
  if (!src)
    return PyErr_Occurred() ? -1 : 0;
  PyObject *base = state.array.get(self, kBase);
  PyObject *nodeObj = state.base.get(base, kNode);
  cpn::NodeRef node;
  // The sole-owner test before the store's view adds its own reference.
  bool sole = false;
  if (nodeObj && Py_REFCNT(nodeObj) == 1 &&
      nodeRef(nodeObj, node) && node.use_count() == 2 && node->store &&
      node->store.use_count() == 1)
    sole = true;
  node.reset();
  cpn::NodeRef held;
  PyObject *view = sole ? computedView(self, true, &held, true) : nullptr;
  // The elements written: a small region (a large one stays traced, fused).
  PyObject *region = view ? PyObject_GetItem(view, key) : nullptr;
  Py_XDECREF(view);
  if (!region || !isArray(region) ||
      numpyNumel(region) >= eagerThreshold()) {
    Py_XDECREF(region);
    Py_DECREF(src);
    if (PyErr_Occurred() && !region)
      return -1; // NumPy's indexing error
    return 0;
  }
  int failed = PyObject_SetItem(region, Py_Ellipsis, src);
  Py_DECREF(region);
  Py_DECREF(src);
  held->store->facts.store(0, std::memory_order_relaxed);
  held->bounds.reset();
  return failed ? -1 : 1;
}

/// a[key] = value: one scalar element written in C (element_set) when it
/// can be; everything else in the Python layer.
int setItem(PyObject *self, PyObject *key, PyObject *value);

int arraySetItem(PyObject *self, PyObject *key, PyObject *value) {
  if (!value) {
    PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
    return -1;
  }
  if (!items.set) {
    PyErr_SetString(PyExc_RuntimeError, "cpnumeric: no item handlers");
    return -1;
  }
  // A 0-d eager array (what a small array's reduction gives) as the NumPy
  // scalar it holds: NumPy converts both alike.
  PyObject *scalar = nullptr;
  if (Py_TYPE(value) == state.array.type &&
      PyTuple_GET_SIZE(state.array.get(value, kShape)) == 0 &&
      state.array.get(value, kPart) == Py_None)
    if (PyObject *v = eagerView(value)) {
      static PyObject *empty = PyTuple_New(0);
      scalar = PyObject_GetItem(v, empty);
      Py_DECREF(v);
      if (!scalar)
        return -1;
      value = scalar;
    }
  int rc = setItem(self, key, value);
  Py_XDECREF(scalar);
  return rc;
}

int setItem(PyObject *self, PyObject *key, PyObject *value) {
  if ((PyLong_CheckExact(key) || PyTuple_CheckExact(key)) &&
      PySet_Contains(items.values, reinterpret_cast<PyObject *>(Py_TYPE(value))) ==
          1 &&
      !items.tracingNow()) {
    PyObject *args[3] = {self, key, value};
    PyObject *r = elementSet(nullptr, args, 3);
    if (!r)
      return -1;
    bool done = r == Py_True;
    Py_DECREF(r);
    if (done)
      return 0;
  }
  if (Py_TYPE(self) == state.array.type &&
      state.array.get(self, kReadonly) == Py_False &&
      state.array.get(self, kPart) == Py_None && basicKey(key)) {
    // Basic indexing into an eager array, of a scalar or an eager array:
    // NumPy's assignment (its conversions, broadcasting, overlap, errors).
    PyObject *src = nullptr;
    if (PySet_Contains(items.values,
                       reinterpret_cast<PyObject *>(Py_TYPE(value))) == 1)
      src = Py_NewRef(value);
    else if (Py_TYPE(value) == state.array.type &&
             state.array.get(value, kPart) == Py_None)
      src = eagerView(value);
    PyObject *view = src ? eagerView(self) : nullptr;
    if (view) {
      int failed = PyObject_SetItem(view, key, src);
      Py_DECREF(view);
      Py_DECREF(src);
      return failed ? -1 : 0;
    }
    Py_XDECREF(src);
    if (PyErr_Occurred())
      return -1;
  }
  if (Py_TYPE(self) == state.array.type &&
      state.array.get(self, kReadonly) == Py_False && basicKey(key)) {
    int done = computedAssign(self, key, value);
    if (done)
      return done < 0 ? -1 : 0;
  }
  PyObject *r = PyObject_CallFunctionObjArgs(items.set, self, key, value,
                                             nullptr);
  Py_XDECREF(r);
  return r ? 0 : -1;
}

/// eager_view_of(a, r): the NumPy view r of eager ndarray a's base buffer as
/// a view of that base; None when r is not such a view.
PyObject *eagerViewOf(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || Py_TYPE(args[0]) != state.array.type || !isArray(args[1])) {
    PyErr_SetString(PyExc_TypeError, "eager_view_of(ndarray, numpy array)");
    return nullptr;
  }
  PyObject *np = state.base.get(state.array.get(args[0], kBase), kNp);
  if (!np || !isArray(np) || state.array.get(args[0], kPart) != Py_None)
    Py_RETURN_NONE;
  PyObject *v = viewOfBase(args[0], args[1]);
  if (!v && !PyErr_Occurred())
    Py_RETURN_NONE;
  return v;
}

/// set_item_handlers(getitem, setitem, element_values, tracing).
PyObject *setItemHandlers(PyObject *, PyObject *const *args,
                          Py_ssize_t nargs) {
  if (nargs != 4 || !PyAnySet_Check(args[2]) || !PyDict_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError,
                    "set_item_handlers(getitem, setitem, frozenset, dict)");
    return nullptr;
  }
  Py_XSETREF(items.get, Py_NewRef(args[0]));
  Py_XSETREF(items.set, Py_NewRef(args[1]));
  Py_XSETREF(items.values, Py_NewRef(args[2]));
  Py_XSETREF(items.tracing, Py_NewRef(args[3]));
  Py_RETURN_NONE;
}

PyType_Slot arraySlots[] = {
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

/// The base offset of the element that `key` (a Python int, or a tuple of
/// one per axis) names in array `a`, whose base's store holds `numel`
/// elements: 1 found, 0 not such a key (no error), -1 out of bounds
/// (IndexError set, NumPy's message).
int elementOffset(PyObject *a, PyObject *key, int64_t numel, long long &off) {
  PyObject *shape = state.array.get(a, kShape);
  PyObject *strides = state.array.get(a, kStrides);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  PyObject *const *items = &key;
  Py_ssize_t n = 1;
  if (PyTuple_CheckExact(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
  } else if (!PyLong_CheckExact(key)) {
    return 0;
  }
  if (n != nd || nd == 0)
    return 0;
  off = PyLong_AsLongLong(state.array.get(a, kOffset));
  for (Py_ssize_t k = 0; k < nd; ++k) {
    if (!PyLong_CheckExact(items[k]))
      return 0;
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(items[k], &overflow);
    if (overflow)
      return 0; // NumPy's error for a huge index comes from the Python path
    long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k));
    if (i < -d || i >= d) {
      PyErr_Format(PyExc_IndexError,
                   "index %lld is out of bounds for axis %zd with size %lld", i,
                   k, d);
      return -1;
    }
    off +=
        (i < 0 ? i + d : i) * PyLong_AsLongLong(PyTuple_GET_ITEM(strides, k));
  }
  return off >= 0 && off < numel ? 1 : 0;
}

/// 1 when `key` is one Python int per axis of the ndarray `a` (a key that
/// selects one element), else 0.
int intKey(PyObject *a, PyObject *key) {
  Py_ssize_t nd = PyTuple_GET_SIZE(state.array.get(a, kShape));
  if (PyLong_CheckExact(key))
    return nd == 1;
  if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != nd || nd == 0)
    return 0;
  for (Py_ssize_t k = 0; k < nd; ++k)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(key, k)))
      return 0;
  return 1;
}

/// The NumPy view of an eager ndarray's elements (a new reference); null
/// for a traced one (with an error set when making the view failed).
PyObject *eagerView(PyObject *a) {
  PyObject *base = state.array.get(a, kBase);
  PyObject *np = base ? state.base.get(base, kNp) : nullptr;
  if (!np || np == Py_None)
    return nullptr;
  if (state.array.get(a, kWhole) == Py_True)
    return Py_NewRef(np);
  return PyObject_CallMethodNoArgs(a, state.eagerName);
}

/// A NumPy view of the elements of `a`, a traced ndarray of whole elements
/// smaller than the eager threshold whose base's value is computed and
/// finished now (no waiting: a pending kernel keeps it traced), with no
/// floating-point report pending and no @jit tracing: NumPy's loops read it
/// in place, as they read an eager array. Read-only unless `writable` (the
/// caller has made sure nothing else refers to the store). `owned`, when
/// given, receives the node. Null with no error set otherwise.
PyObject *computedView(PyObject *a, bool writable, cpn::NodeRef *owned,
                       bool anySize) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kPart) != Py_None)
    return nullptr;
  PyObject *base = state.array.get(a, kBase);
  if (state.base.get(base, kNp) != Py_None ||
      state.array.get(a, kDType) != state.base.get(base, kBDType))
    return nullptr;
  long long threshold = eagerThreshold();
  PyObject *shape = state.array.get(a, kShape);
  long long n = 1;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k)
    n *= PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k));
  if (threshold <= 0 || (n >= threshold && !anySize) ||
      (items.tracing && items.tracingNow()))
    return nullptr;
  cpn::NodeRef node;
  if (!nodeRef(state.base.get(base, kNode), node) || !node->store ||
      node->opIndex >= 0 || !node->error.empty() ||
      node->store->shape() != node->shape ||
      !cpnrt::TaskGraph::global().storeDone(*node->store) ||
      cpn::hasFpReports())
    return nullptr;
  PyObject *buf = nullptr;
  try {
    buf = storeArray(node->store, writable).release().ptr();
  } catch (const std::exception &) {
    return nullptr;
  }
  if (owned)
    *owned = node;
  if (state.array.get(a, kWhole) == Py_True)
    return buf;
  // The view's elements in buf (a's shape and strides at its offset), made
  // as _core.ndarray._np_view makes it; buf becomes its base.
  auto *bp = py::detail::array_proxy(buf);
  Py_ssize_t item = py::reinterpret_borrow<py::dtype>(bp->descr).itemsize();
  PyObject *strides = state.array.get(a, kStrides);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  std::vector<Py_intptr_t> dims(nd), steps(nd);
  for (Py_ssize_t k = 0; k < nd; ++k) {
    dims[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
    steps[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, k)) * item;
  }
  long long off = PyLong_AsLongLong(state.array.get(a, kOffset));
  auto &api = py::detail::npy_api::get();
  Py_INCREF(bp->descr);
  PyObject *v = api.PyArray_NewFromDescr_(
      api.PyArray_Type_, bp->descr, static_cast<int>(nd), dims.data(),
      steps.data(), bp->data + off * item,
      writable ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0, nullptr);
  if (!v) {
    Py_DECREF(buf);
    return nullptr;
  }
  api.PyArray_SetBaseObject_(v, buf); // steals buf
  return v;
}

/// The computed store under a traced, whole-element view `a` (no .real/.imag
/// part, the base's dtype) once it is finished, with no floating-point
/// report waiting to be raised; null otherwise (the Python path decides).
cpnrt::Store *elementStore(PyObject *a, cpn::NodeRef &node) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kPart) != Py_None)
    return nullptr;
  PyObject *base = state.array.get(a, kBase);
  if (state.base.get(base, kNp) != Py_None ||
      state.array.get(a, kDType) != state.base.get(base, kBDType) ||
      !nodeRef(state.base.get(base, kNode), node) || !node->store ||
      !node->error.empty())
    return nullptr;
  bool ok = true;
  PyThreadState *ts = PyEval_SaveThread();
  try {
    node->store->wait();
  } catch (const std::exception &) {
    ok = false; // the Python path raises the failure
  }
  PyEval_RestoreThread(ts);
  if (!ok || cpn::hasFpReports())
    return nullptr;
  return node->store.get();
}

/// The element as a Python number, or null (a dtype left to the Python path).
PyObject *elementNumber(const cpnrt::Store &s, long long off) {
  const char *p = static_cast<const char *>(s.data());
  switch (s.dtype()) {
  case cpnrt::DType::f64:
    return PyFloat_FromDouble(reinterpret_cast<const double *>(p)[off]);
  case cpnrt::DType::f32:
    return PyFloat_FromDouble(reinterpret_cast<const float *>(p)[off]);
  case cpnrt::DType::i64:
    return PyLong_FromLongLong(reinterpret_cast<const int64_t *>(p)[off]);
  case cpnrt::DType::i32:
    return PyLong_FromLong(reinterpret_cast<const int32_t *>(p)[off]);
  case cpnrt::DType::b1:
    return PyBool_FromLong(reinterpret_cast<const bool *>(p)[off]);
  default:
    return nullptr;
  }
}

/// element_get(a, key): a[key] for a key of Python ints, one per axis, on a
/// computed traced array of float64/32, int64/32 or bool: the element as
/// NumPy's scalar, read from the store (no trace, no copy). None for every
/// other case (the Python path decides); IndexError out of bounds.
PyObject *elementGet(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!checkReady())
    return nullptr;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "element_get(a, key)");
    return nullptr;
  }
  if (Py_TYPE(args[0]) != state.array.type)
    Py_RETURN_NONE;
  if (int keys = intKey(args[0], args[1]); keys <= 0) {
    return keys < 0 ? nullptr : Py_NewRef(Py_None);
  } else if (PyObject *view = eagerView(args[0])) {
    if (view == Py_None)
      return view;
    PyObject *r = PyObject_GetItem(view, args[1]); // NumPy's scalar, errors
    Py_DECREF(view);
    return r;
  } else if (PyErr_Occurred()) {
    return nullptr;
  }
  cpn::NodeRef node;
  long long off = 0;
  cpnrt::Store *s = elementStore(args[0], node);
  if (!s)
    Py_RETURN_NONE;
  int found = elementOffset(args[0], args[1], s->numel(), off);
  if (found <= 0)
    return found < 0 ? nullptr : Py_NewRef(Py_None);
  PyObject *number = elementNumber(*s, off);
  if (!number)
    Py_RETURN_NONE;
  // NumPy's scalar type of the dtype (numpy.float64, ...) makes the scalar.
  PyObject *type =
      PyObject_GetAttrString(state.array.get(args[0], kDType), "type");
  PyObject *r = type ? PyObject_CallOneArg(type, number) : nullptr;
  Py_XDECREF(type);
  Py_DECREF(number);
  return r;
}

/// element_set(a, key, value): a[key] = value written straight into the
/// store, for a key of Python ints on a computed traced array that nothing
/// else refers to (only its base holds the value, only the value holds the
/// store: no pending op, copy, task or NumPy view sees it). The common exact
/// conversions are made here (a float into float64/32, a Python int in
/// range into int64/int32/float64, a bool into bool); any other scalar goes
/// through NumPy's setitem conversion (_core.pack_scalar). True when
/// written; None otherwise (nothing written: the caller records the write);
/// IndexError out of bounds, NumPy's conversion errors.
PyObject *elementSet(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!checkReady())
    return nullptr;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "element_set(a, key, value)");
    return nullptr;
  }
  PyObject *a = args[0], *v = args[2];
  if (Py_TYPE(a) != state.array.type ||
      state.array.get(a, kReadonly) != Py_False)
    Py_RETURN_NONE;
  if (int keys = intKey(a, args[1]); keys <= 0) {
    return keys < 0 ? nullptr : Py_NewRef(Py_None);
  } else if (PyObject *view = eagerView(a)) {
    if (view == Py_None)
      return view;
    // NumPy's setitem: its conversion, its errors and warnings.
    int failed = PyObject_SetItem(view, args[1], v);
    Py_DECREF(view);
    return failed ? nullptr : Py_NewRef(Py_True);
  } else if (PyErr_Occurred()) {
    return nullptr;
  }
  PyObject *nodeObj = state.base.get(state.array.get(a, kBase), kNode);
  cpn::NodeRef node;
  // The base's slot is the node object's one reference; our NodeRef and the
  // pybind11 instance's holder are the node's two.
  cpnrt::Store *s =
      nodeObj && Py_REFCNT(nodeObj) == 1 ? elementStore(a, node) : nullptr;
  // Checked again after elementStore, which lets other threads run while it
  // waits: one may have taken a reference or written a new version.
  if (!s || node.use_count() != 2 || node->store.use_count() != 1 ||
      Py_REFCNT(nodeObj) != 1 ||
      state.base.get(state.array.get(a, kBase), kNode) != nodeObj)
    Py_RETURN_NONE;
  long long off = 0;
  int found = elementOffset(a, args[1], s->numel(), off);
  if (found <= 0)
    return found < 0 ? nullptr : Py_NewRef(Py_None);
  char *p = static_cast<char *>(s->data());
  cpnrt::DType t = s->dtype();
  if (PyFloat_Check(v) && (t == cpnrt::DType::f64 || t == cpnrt::DType::f32)) {
    double x = PyFloat_AS_DOUBLE(v);
    if (t == cpnrt::DType::f64) {
      reinterpret_cast<double *>(p)[off] = x;
    } else {
      float y = static_cast<float>(x);
      if (std::isfinite(x) && !std::isfinite(y))
        Py_RETURN_NONE; // NumPy warns of the overflow: the Python path
      reinterpret_cast<float *>(p)[off] = y;
    }
  } else if (PyBool_Check(v) && t == cpnrt::DType::b1) {
    reinterpret_cast<bool *>(p)[off] = v == Py_True;
  } else if (PyLong_CheckExact(v) &&
             (t == cpnrt::DType::i64 || t == cpnrt::DType::i32 ||
              t == cpnrt::DType::f64)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    if (t == cpnrt::DType::i64) {
      reinterpret_cast<int64_t *>(p)[off] = x;
    } else if (t == cpnrt::DType::i32) {
      if (x < INT32_MIN || x > INT32_MAX)
        Py_RETURN_NONE; // NumPy's OverflowError comes from the Python path
      reinterpret_cast<int32_t *>(p)[off] = static_cast<int32_t>(x);
    } else {
      // A Python int converts to the nearest double, as NumPy's setitem.
      double d = PyLong_AsDouble(v);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
      }
      reinterpret_cast<double *>(p)[off] = d;
    }
  } else {
    // Any other scalar: converted as NumPy's setitem converts it
    // (_core.pack_scalar, with NumPy's errors and warnings), then copied in.
    PyObject *pack = PyDict_GetItemString(state.coreDict, "pack_scalar");
    PyObject *packed =
        pack ? PyObject_CallFunctionObjArgs(pack, v, state.array.get(a, kDType),
                                            nullptr)
             : nullptr;
    if (!packed)
      return nullptr;
    // Python code ran: nothing else may have come to refer to the value.
    Py_buffer bytes;
    bool ok = Py_REFCNT(nodeObj) == 1 &&
              state.base.get(state.array.get(a, kBase), kNode) == nodeObj &&
              node.use_count() == 2 && node->store.use_count() == 1 &&
              PyObject_GetBuffer(packed, &bytes, PyBUF_SIMPLE) == 0;
    Py_DECREF(packed);
    if (!ok) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    size_t item = s->nbytes() / std::max<int64_t>(s->numel(), 1);
    if (size_t(bytes.len) == item)
      std::memcpy(p + off * item, bytes.buf, item);
    PyBuffer_Release(&bytes);
    if (size_t(bytes.len) != item)
      Py_RETURN_NONE;
  }
  s->facts.store(0, std::memory_order_relaxed);
  node->bounds.reset();
  Py_RETURN_TRUE;
}

/// eager_count(reset): the NumPy calls made on eager operands here so far
/// (then zero when `reset`).
PyObject *eagerCount(PyObject *, PyObject *reset) {
  PyObject *r = PyLong_FromUnsignedLongLong(state.eagerCalls);
  if (PyObject_IsTrue(reset))
    state.eagerCalls = 0;
  return r;
}

/// The eager path of library calls in C (python/cpnumeric/_eager.py's
/// common case): `declined` says nothing was called; `finish(r, views, out)`
/// wraps what is not a fresh small array; `profiling` is _profile.SESSIONS.
struct EagerCallState {
  PyObject *declined = nullptr, *finish = nullptr, *profiling = nullptr,
           *dtypeType = nullptr;
} eagerCalls;

/// The arguments of one eager call, cpnumeric arrays replaced by the NumPy
/// views of their eager elements; unwrap returns null without an error to
/// decline (a traced or read-only array, an object of another kind).
struct EagerArgs {
  PyObject *views = nullptr; // list of (cpnumeric array or None, view)
  long long budget;
  bool arrays = false;
  explicit EagerArgs(long long b) : budget(b) {}
  ~EagerArgs() { Py_XDECREF(views); }

  bool note(PyObject *x, PyObject *v) {
    if (!views && !(views = PyList_New(0)))
      return false;
    PyObject *pair = PyTuple_Pack(2, x, v);
    bool ok = pair && PyList_Append(views, pair) == 0;
    Py_XDECREF(pair);
    arrays = true;
    return ok;
  }

  PyObject *unwrap(PyObject *x, int depth) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == state.array.type) {
      PyObject *base = state.array.get(x, kBase);
      if (state.base.get(base, kNp) == Py_None ||
          state.array.get(x, kReadonly) != Py_False)
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
  EagerArgs ea(threshold);
  PyObject *args = ea.unwrap(a[1], 0);
  if (!args || !ea.arrays) {
    Py_XDECREF(args);
    if (PyErr_Occurred())
      return nullptr;
    return Py_NewRef(eagerCalls.declined);
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
      return Py_NewRef(eagerCalls.declined);
    }
  }
  ++state.eagerCalls;
  PyObject *r = PyObject_Call(a[0], args, kwargs);
  Py_DECREF(args);
  Py_XDECREF(kwargs);
  if (!r)
    return nullptr;
  if (isArray(r)) {
    auto *p = py::detail::array_proxy(r);
    bool fresh = !p->base && (p->flags & kCContiguous) &&
                 numpyNumel(r) < threshold &&
                 supportedDescr(reinterpret_cast<PyObject *>(p->descr));
    for (Py_ssize_t i = 0; fresh && i < PyList_GET_SIZE(ea.views); ++i)
      fresh = PyTuple_GET_ITEM(PyList_GET_ITEM(ea.views, i), 1) != r;
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
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ea.views); ++i) {
        PyObject *pair = PyList_GET_ITEM(ea.views, i);
        PyObject *x = PyTuple_GET_ITEM(pair, 0), *v = PyTuple_GET_ITEM(pair, 1);
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
             PyFloat_CheckExact(r) || PyLong_CheckExact(r) ||
             PyBool_Check(r) || r == Py_None) {
    return r;
  }
  PyObject *f = PyObject_CallFunctionObjArgs(eagerCalls.finish, r, ea.views,
                                             out ? Py_True : Py_False, nullptr);
  Py_DECREF(r);
  return f;
}

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

/// eager_init(declined, finish, profiling): the Python side of eager_call.
PyObject *eagerInit(PyObject *, PyObject *const *a, Py_ssize_t nargs) {
  if (nargs != 3 || !PyList_Check(a[2]) || PyList_GET_SIZE(a[2]) != 1) {
    PyErr_SetString(PyExc_TypeError, "eager_init(declined, finish, [n])");
    return nullptr;
  }
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

PyMethodDef methods[] = {
    {"eager_call",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerCallPy)),
     METH_FASTCALL,
     "eager_call(npf, args, kwargs): NumPy's npf on eager arguments, "
     "wrapped; the declined marker when the call is not such a one."},
    {"array_iter", arrayIterPy, METH_O,
     "array_iter(a): for x in a, over a 1-D ndarray, in C."},
    {"eager_init",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(eagerInit)),
     METH_FASTCALL, "eager_init(declined, finish, profiling)."},
    {"eager_count", eagerCount, METH_O,
     "eager_count(reset): NumPy ufunc calls on eager operands so far."},
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
    {"set_operators", setOperators, METH_O,
     "set_operators({name: (ufunc, forward, reflected)}): ArrayBase's "
     "operators."},
    {nullptr, nullptr, 0, nullptr}};
} // namespace

void initFast(py::module_ &m) {
  m.def(
      "fast_init",
      [](py::object array, py::object base, py::object numpyArray,
         py::object finish, py::dict loops, py::object splat,
         py::dict coreGlobals, py::list raising, py::object extobj,
         py::list synced) {
        state.array.init(array.ptr(),
                         {"_base", "_shape", "_strides", "_offset", "_dtype",
                          "_readonly", "_whole", "_part"});
        state.base.init(base.ptr(), {"node", "shape", "dtype", "np"});
        state.numpyArray = numpyArray.inc_ref().ptr();
        state.numpyGeneric =
            py::object(py::module_::import("numpy").attr("generic"))
                .release()
                .ptr();
        state.finish = finish.inc_ref().ptr();
        state.eagerName = PyUnicode_InternFromString("_eager");
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
}
