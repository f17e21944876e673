//===- items.cpp - a[key] and a[key] = v, in C ----------------------------===//
//
// Part of cpnumeric.
//
// a[key] and a[key] = v on cpnumeric.ndarray (ArrayBase's mapping slots) and
// the element access behind them, with the CPython API directly:
// - `arrayGetItem` reads one element of an eager or computed array in C
//   (`element_get`), answers basic indexing of an eager array with NumPy's
//   view seen as a view of its base, and of a traced array with the view's
//   shape, strides and offset computed here; the rest goes to the Python
//   layer's getitem (`set_item_handlers`);
// - `arraySetItem` writes one scalar element straight into a store that
//   nothing else refers to (`element_set`), and runs NumPy's assignment for
//   basic indexing of an eager array, or of a small computed one that nothing
//   else refers to; the rest goes to the Python layer's setitem;
// - `eagerView`, `computedView` and `viewOfBase` give the NumPy view of an
//   array's elements and the way back; the ufunc and library calls use them
//   too.
//
//===----------------------------------------------------------------------===//

#include "FastInternal.h"
#include "cpn/Engine/Engine.h"
#include "cpnrt/Comm.h"
#include "cpnrt/Profile.h"
#include "cpnrt/TaskGraph.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace py = pybind11;

namespace cpn::fast {

ItemHandlers items;

/// Whether `key` is basic indexing that NumPy answers with a view or an
/// element: a slice, or a tuple of Python ints and slices.
static bool basicKey(PyObject *key) {
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
static PyObject *newView(PyObject *a, PyObject *shape, PyObject *strides,
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

/// A tuple's items in reverse order (a new reference).
static PyObject *reversedTuple(PyObject *t) {
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  PyObject *r = PyTuple_New(n);
  for (Py_ssize_t k = 0; r && k < n; ++k)
    PyTuple_SET_ITEM(r, k, Py_NewRef(PyTuple_GET_ITEM(t, n - 1 - k)));
  return r;
}

PyObject *arrayTransposed(PyObject *a) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kPart) != Py_None)
    return PyObject_CallMethod(a, "transpose", nullptr);
  PyObject *shape = reversedTuple(state.array.get(a, kShape));
  PyObject *strides =
      shape ? reversedTuple(state.array.get(a, kStrides)) : nullptr;
  if (!strides) {
    Py_XDECREF(shape);
    return nullptr;
  }
  Py_ssize_t offset = PyLong_AsSsize_t(state.array.get(a, kOffset));
  return newView(a, shape, strides, offset,
                 state.array.get(a, kReadonly) == Py_True);
}

/// a[key] for a key of Python ints and slices (basic indexing; at most one
/// per axis) that selects a view of a traced array of whole elements: its
/// shape, strides and offset computed here as _manip.basic_view does.
/// Null with no error set for anything else (an index out of range
/// included: the Python path raises NumPy's error).
static PyObject *tracedBasicView(PyObject *a, PyObject *key) {
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
static PyObject *eagerBasicGet(PyObject *a, PyObject *key) {
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

/// a[k] for an eager array a and one eager index array or mask k of at least
/// one dimension (advanced indexing): NumPy's indexing (its errors: null
/// with the error set), its result a fresh array, kept as it is (the Python
/// layer's getitem does the same, ~1 us slower). Null with no error set:
/// the Python path decides.
static PyObject *eagerAdvancedGet(PyObject *a, PyObject *key) {
  if (Py_TYPE(key) != state.array.type ||
      PyTuple_GET_SIZE(state.array.get(key, kShape)) == 0)
    return nullptr;
  PyObject *kv = eagerView(key);
  if (!kv)
    return nullptr;
  PyObject *av = eagerView(a);
  if (!av) {
    Py_DECREF(kv);
    return nullptr;
  }
  PyObject *r = PyObject_GetItem(av, kv);
  Py_DECREF(av);
  Py_DECREF(kv);
  if (!r)
    return nullptr; // NumPy's error (IndexError, ...)
  PyObject *f = wrapEagerResult(r);
  if (f == Py_None) { // a dtype we do not hold: the general path
    Py_DECREF(f);
    return nullptr;
  }
  return f;
}

/// The Python ints of an element key (`i` or a tuple `(i, j, ...)`): false
/// for any other key. `keys` may point at `key` itself: the caller's.
static bool keyItems(PyObject *const &key, PyObject *const *&keys,
                     Py_ssize_t &n) {
  if (PyTuple_CheckExact(key)) {
    keys = &PyTuple_GET_ITEM(key, 0);
    n = PyTuple_GET_SIZE(key);
    return true;
  }
  keys = &key;
  n = 1;
  return PyLong_CheckExact(key);
}

/// Index `item` on axis k of size d, made non-negative: 1 done, 0 not a
/// Python int that fits (the Python path's case), -1 out of bounds (NumPy's
/// IndexError set).
static int axisIndex(PyObject *item, long long d, Py_ssize_t k, long long &i) {
  if (!PyLong_CheckExact(item))
    return 0;
  int overflow = 0;
  i = PyLong_AsLongLongAndOverflow(item, &overflow);
  if (overflow)
    return 0; // NumPy's error for a huge index comes from the Python path
  if (i < -d || i >= d) {
    PyErr_Format(PyExc_IndexError,
                 "index %lld is out of bounds for axis %zd with size %lld", i,
                 k, d);
    return -1;
  }
  if (i < 0)
    i += d;
  return 1;
}

static PyObject *numpyScalar(const char *p, PyObject *descr);
static int storeExact(char *p, PyObject *descr, PyObject *v);

/// The element that `key` (a Python int per axis) names in an eager array
/// that is its base's whole NumPy array (`b[i]`, `A[i, j]` in an element
/// loop): its address and descr, read from the NumPy array itself. 1 found,
/// 0 not this case (nothing set), -1 out of bounds (NumPy's IndexError).
/// `write`: only where the NumPy array is writeable (NumPy's read-only
/// error comes before its index error).
static int wholeEagerElement(PyObject *a, PyObject *key, bool write, char *&p,
                             PyObject *&descr) {
  if (state.array.get(a, kWhole) != Py_True)
    return 0;
  PyObject *np = state.base.get(state.array.get(a, kBase), kNp);
  if (!np || !isArray(np))
    return 0;
  auto *ap = py::detail::array_proxy(np);
  if (write && !(ap->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_))
    return 0;
  PyObject *const *keys;
  Py_ssize_t n;
  if (!keyItems(key, keys, n) || n != ap->nd || n == 0)
    return 0;
  char *q = ap->data;
  for (Py_ssize_t k = 0; k < n; ++k) {
    long long i;
    if (int found = axisIndex(keys[k], ap->dimensions[k], k, i); found <= 0)
      return found;
    q += i * ap->strides[k];
  }
  p = q;
  descr = ap->descr;
  return 1;
}

/// a[key]: one element of an eager or computed array read in C (element_get);
/// everything else in the Python layer.
PyObject *arrayGetItem(PyObject *self, PyObject *key) {
  if (!items.get) {
    PyErr_SetString(PyExc_RuntimeError, "cpnumeric: no item handlers");
    return nullptr;
  }
  // An element loop's read first: NumPy's scalar made from the element.
  if (Py_TYPE(self) == state.array.type) {
    char *p = nullptr;
    PyObject *descr = nullptr;
    int found = wholeEagerElement(self, key, false, p, descr);
    if (found < 0)
      return nullptr;
    if (found) {
      if (PyObject *r = numpyScalar(p, descr))
        return r;
      if (PyErr_Occurred())
        return nullptr;
    }
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
    if (!items.tracingNow())
      if (PyObject *r = eagerAdvancedGet(self, key))
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

/// What an assignment of `value` reads, as NumPy sees it (a new
/// reference): a scalar of items.values itself, an eager array's elements,
/// or (`computed`) a small computed array's elements; null when it is none
/// of these (with an error set where one occurred).
static PyObject *assignSource(PyObject *value, bool computed) {
  if (PySet_Contains(items.values,
                     reinterpret_cast<PyObject *>(Py_TYPE(value))) == 1)
    return Py_NewRef(value);
  if (Py_TYPE(value) != state.array.type ||
      state.array.get(value, kPart) != Py_None)
    return nullptr;
  if (!computed ||
      state.base.get(state.array.get(value, kBase), kNp) != Py_None)
    return eagerView(value);
  return computedView(value, false, nullptr);
}

/// a[key] = value (basic indexing) written straight into the store of a
/// computed traced array that nothing else refers to (as element_set
/// checks: only its base holds the value, only the value holds the store),
/// of a scalar, an eager array or a small computed one: NumPy's assignment
/// on the store's elements. 1 written, 0 not such a case (nothing done), -1
/// with NumPy's error set.
static int computedAssign(PyObject *self, PyObject *key, PyObject *value) {
  PyObject *src = assignSource(value, true);
  if (!src)
    return PyErr_Occurred() ? -1 : 0;
  PyObject *base = state.array.get(self, kBase);
  PyObject *nodeObj = state.base.get(base, kNode);
  cpn::NodeRef node;
  // The sole-owner test before the store's view adds its own reference.
  bool sole = false;
  if (nodeObj && Py_REFCNT(nodeObj) == 1 && nodeRef(nodeObj, node) &&
      node.use_count() == 2 && node->store && node->store.use_count() == 1 &&
      !cpn::Engine::global().options().partitioning())
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

/// Whether NumPy dtype `dtype`'s kind character ('f', 'c', 'i', ...) is one
/// of `kinds`.
static bool kindIn(PyObject *dtype, const char *kinds) {
  if (!dtype || !PyObject_TypeCheck(dtype, reinterpret_cast<PyTypeObject *>(
                                               py::detail::npy_api::get()
                                                   .PyArrayDescr_Type_)))
    return false;
  char k = py::detail::array_descriptor_proxy(dtype)->kind;
  return k && std::strchr(kinds, k);
}

/// a[key] = value: one scalar element written in C (element_set) when it
/// can be; everything else in the Python layer.
static int setItem(PyObject *self, PyObject *key, PyObject *value);

/// The number of elements of a shape tuple.
static long long shapeNumel(PyObject *shape) {
  long long n = 1;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k)
    n *= PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k));
  return n;
}

/// Work below which a window is run now for an element write (about a
/// millisecond of loops): see readsSmallWindow.
constexpr uint64_t kSmallWindowWork = uint64_t(1) << 21;

/// Whether `self[key] = value`, an element of a small array (under the
/// eager threshold) set to a 0-d value that ops recorded and not flushed
/// compute, reads the value now (a sync point) rather than recording the
/// write: when those ops are little work (kSmallWindowWork). A loop that
/// fills a small array from views of a computed array (`out[j] =
/// np.sqrt((A[:, j] ** 2).sum())` right after A's statement) then runs A's
/// window at its first write and every later iteration on NumPy's loops
/// over A's store (the eager path), where each iteration's ops were
/// recorded (~6-8 us an op) into 64-op windows, the small array left
/// pending. Not while @jit traces or under CPN_PARTITION=rows.
static bool readsSmallWindow(PyObject *self, PyObject *key, PyObject *value) {
  if (Py_TYPE(self) != state.array.type ||
      !(PyLong_CheckExact(key) || PyTuple_CheckExact(key)) ||
      items.tracingNow())
    return false;
  PyObject *base = state.array.get(value, kBase);
  cpn::NodeRef node;
  if (state.base.get(base, kNp) != Py_None ||
      !nodeRef(state.base.get(base, kNode), node) || node->store ||
      node->opIndex < 0 || !node->error.empty())
    return false;
  cpn::Engine &engine = cpn::Engine::global();
  if (node->epoch != engine.trace().epoch() || engine.capturing() ||
      engine.options().partitioning())
    return false;
  long long n =
      shapeNumel(state.base.get(state.array.get(self, kBase), kBShape));
  return n < eagerThreshold() && engine.pendingWork() < kSmallWindowWork;
}

int arraySetItem(PyObject *self, PyObject *key, PyObject *value) {
  if (!value) {
    PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
    return -1;
  }
  if (!items.set) {
    PyErr_SetString(PyExc_RuntimeError, "cpnumeric: no item handlers");
    return -1;
  }
  // NumPy checks the destination before the key (fuzz 840:19275: a key out
  // of bounds of a broadcast view is still "read-only").
  if (Py_TYPE(self) == state.array.type &&
      state.array.get(self, kReadonly) == Py_True) {
    PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
    return -1;
  }
  // An element loop's write first: a float, a Python int or the dtype's own
  // NumPy scalar stored as NumPy's setitem converts it (storeExact).
  if (Py_TYPE(self) == state.array.type &&
      state.array.get(self, kReadonly) == Py_False) {
    char *p = nullptr;
    PyObject *descr = nullptr;
    int found = wholeEagerElement(self, key, true, p, descr);
    if (found < 0)
      return -1;
    if (found && storeExact(p, descr, value) == 1)
      return 0;
  }
  // A 0-d eager array as the NumPy scalar it holds (element_set takes
  // scalars): NumPy converts both alike, except into an integer array,
  // where a scalar's int() conversion raises for NaN (ValueError) and for
  // values past the type (OverflowError) and a 0-d array is cast (fuzz
  // 790:2355: np.array(2**63) into int64 wraps). There ndarray._isscalar
  // decides (a reduction's or a ufunc's 0-d result; fuzz 740:10583, and a
  // squeezed keepdims result is an array, 800:12355); a traced scalar is
  // read (a sync) and converts.
  PyObject *scalar = nullptr;
  if (Py_TYPE(value) == state.array.type &&
      PyTuple_GET_SIZE(state.array.get(value, kShape)) == 0 &&
      state.array.get(value, kPart) == Py_None) {
    bool isScalar = state.array.get(value, kIsScalar) == Py_True;
    bool intTarget = kindIn(state.array.get(self, kDType), "iu") &&
                     kindIn(state.array.get(value, kDType), "iufc");
    if (intTarget && !isScalar) {
      scalar = Py_NewRef(value); // cast as an array
    } else if (PyObject *v = eagerView(value)) {
      static PyObject *empty = PyTuple_New(0);
      scalar = PyObject_GetItem(v, empty);
      Py_DECREF(v);
    } else if (PyErr_Occurred()) {
      return -1;
    } else if ((intTarget && !items.tracingNow()) ||
               readsSmallWindow(self, key, value)) {
      scalar = PyObject_CallMethodNoArgs(value, state.scalarName);
    } else {
      scalar = Py_NewRef(value);
    }
    if (!scalar)
      return -1;
    value = scalar;
  }
  int rc = setItem(self, key, value);
  Py_XDECREF(scalar);
  return rc;
}

/// NumPy's assignment (its conversions, broadcasting, overlap, errors) into
/// an eager array, at a basic key or at one eager index array or mask of at
/// least one dimension (as the Python layer's setitem), of a scalar or an
/// eager array. 1 done, 0 not such a case (nothing done), -1 with NumPy's
/// error set.
static int eagerAssign(PyObject *self, PyObject *key, PyObject *value) {
  if (Py_TYPE(self) != state.array.type ||
      state.array.get(self, kReadonly) != Py_False ||
      state.array.get(self, kPart) != Py_None)
    return 0;
  bool arrayKey = Py_TYPE(key) == state.array.type &&
                  PyTuple_GET_SIZE(state.array.get(key, kShape)) > 0 &&
                  !items.tracingNow();
  if (!arrayKey && !basicKey(key))
    return 0;
  PyObject *src = assignSource(value, false);
  PyObject *k = !src ? nullptr : arrayKey ? eagerView(key) : Py_NewRef(key);
  PyObject *view = k ? eagerView(self) : nullptr;
  if (view) {
    int failed = PyObject_SetItem(view, k, src);
    Py_DECREF(view);
    Py_DECREF(k);
    Py_DECREF(src);
    return failed ? -1 : 1;
  }
  Py_XDECREF(k);
  Py_XDECREF(src);
  return PyErr_Occurred() ? -1 : 0;
}

static int setItem(PyObject *self, PyObject *key, PyObject *value) {
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
  if (int done = eagerAssign(self, key, value))
    return done < 0 ? -1 : 0;
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

/// The base offset of the element that `key` (a Python int, or a tuple of
/// one per axis) names in array `a`, whose base's store holds `numel`
/// elements: 1 found, 0 not such a key (no error), -1 out of bounds
/// (IndexError set, NumPy's message).
static int elementOffset(PyObject *a, PyObject *key, int64_t numel,
                         long long &off) {
  PyObject *shape = state.array.get(a, kShape);
  PyObject *strides = state.array.get(a, kStrides);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  PyObject *const *items;
  Py_ssize_t n;
  if (!keyItems(key, items, n) || n != nd || nd == 0)
    return 0;
  off = PyLong_AsLongLong(state.array.get(a, kOffset));
  for (Py_ssize_t k = 0; k < nd; ++k) {
    long long i;
    if (int found = axisIndex(
            items[k], PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k)), k, i);
        found <= 0)
      return found;
    off += i * PyLong_AsLongLong(PyTuple_GET_ITEM(strides, k));
  }
  return off >= 0 && off < numel ? 1 : 0;
}

/// 1 when `key` is one Python int per axis of the ndarray `a` (a key that
/// selects one element), else 0.
static int intKey(PyObject *a, PyObject *key) {
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
static PyObject *viewIn(PyObject *a, PyObject *buf, bool writable);
static PyObject *viewAt(PyObject *a, PyObject *descr, char *data,
                        PyObject *owner, bool writable);

PyObject *eagerView(PyObject *a) {
  PyObject *base = state.array.get(a, kBase);
  PyObject *np = base ? state.base.get(base, kNp) : nullptr;
  if (!np || np == Py_None)
    return nullptr;
  if (state.array.get(a, kWhole) == Py_True)
    return Py_NewRef(np);
  // A view of whole elements with elements: made here (the Python method
  // `_eager` costs ~2 us); .real/.imag parts, other dtypes and empty views
  // (whose offset may lie past the buffer) in Python.
  if (isArray(np) && state.array.get(a, kPart) == Py_None &&
      state.array.get(a, kDType) == state.base.get(base, kBDType)) {
    PyObject *shape = state.array.get(a, kShape);
    bool empty = false;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(shape); ++k)
      empty |= PyLong_AsLongLong(PyTuple_GET_ITEM(shape, k)) == 0;
    if (!empty)
      return viewIn(a, Py_NewRef(np),
                    py::detail::array_proxy(np)->flags &
                        py::detail::npy_api::NPY_ARRAY_WRITEABLE_);
  }
  return PyObject_CallMethodNoArgs(a, state.eagerName);
}

/// Ops a window may hold and still be run at a small view's first eager
/// op (freshWindowHolds): the statements that made the arrays a loop then
/// reads row by row or column by column.
constexpr size_t kFreshWindowOps = 8;

/// Whether the window recorded so far, which computes `node` (a pending
/// value of `base`, an array of at least the eager threshold's elements),
/// is run now for a small view of it: when it holds few ops of little work
/// (kFreshWindowOps, kSmallWindowWork) -- the statements that made the
/// array -- so that a loop of small ops over its rows or columns
/// (`A = np.zeros((300, 1000))`, then `A[i, :] = np.sin(x * i) + 0.5 *
/// A[i - 1, :]`) runs on NumPy's loops over the store from its first
/// iteration, where it recorded each op (~6-8 us) until the window's
/// 64-op cut (ten iterations, then the baseline tier's run of them). A
/// window that already holds more (a stencil step whose boundary rows are
/// copied: `u[0, :] = u[1, :]`) keeps the op recorded, fused with it. The
/// decision depends on the program alone (replicated MPI ranks record
/// alike); not while @jit captures (computedView checks @jit tracing
/// first), nor under CPN_PARTITION.
static bool freshWindowHolds(const cpn::NodeRef &node, PyObject *base) {
  cpn::Engine &engine = cpn::Engine::global();
  if (node->opIndex < 0 || !node->error.empty() ||
      node->epoch != engine.trace().epoch() || engine.capturing() ||
      engine.options().partitioning())
    return false;
  return shapeNumel(state.base.get(base, kBShape)) >= eagerThreshold() &&
         engine.trace().size() <= kFreshWindowOps &&
         engine.pendingWork() < kSmallWindowWork;
}

/// A NumPy view of the elements of `a`, a traced ndarray of whole elements
/// smaller than the eager threshold whose base's value is computed, with no
/// floating-point report pending and no @jit tracing: NumPy's loops read it
/// in place, as they read an eager array. A value whose window was flushed
/// and still runs is waited for (a sync point; whether an op is recorded
/// then depends on the program alone, not on timing, as replicated MPI
/// ranks need: they must record alike; a store split over ranks is not
/// read here): a
/// loop of small ops over the rows or columns of an array computed just
/// before (`out[j] = np.sqrt((A[:, j] ** 2).sum())`) recorded each op
/// (~6-8 us) while the kernel ran, then cut a window every 64 ops, instead
/// of running NumPy's loops on the result; a value the trace still holds
/// keeps the op traced, unless its window is run now (freshWindowHolds).
/// Read-only unless `writable` (the caller has made sure nothing else refers to
/// the store). `owned`, when given, receives the node. Null with no error set
/// otherwise; null with the error set when the awaited work failed.
PyObject *computedView(PyObject *a, bool writable, cpn::NodeRef *owned,
                       bool anySize) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kPart) != Py_None)
    return nullptr;
  PyObject *base = state.array.get(a, kBase);
  if (state.base.get(base, kNp) != Py_None ||
      state.array.get(a, kDType) != state.base.get(base, kBDType))
    return nullptr;
  long long threshold = eagerThreshold();
  long long n = shapeNumel(state.array.get(a, kShape));
  if (threshold <= 0 || (n >= threshold && !anySize) ||
      (items.tracing && items.tracingNow()))
    return nullptr;
  cpn::NodeRef node;
  if (!nodeRef(state.base.get(base, kNode), node))
    return nullptr;
  if (!node->store && n < threshold && freshWindowHolds(node, base)) {
    try {
      cpnrt::ProfileScope scope("copy", "host_view");
      cpn::Engine::global().flush();
    } catch (...) {
      py::detail::try_translate_exceptions();
      return nullptr;
    }
    // The flush may let other threads run: read `a` again.
    base = state.array.get(a, kBase);
    if (state.base.get(base, kNp) != Py_None ||
        state.array.get(a, kPart) != Py_None ||
        state.array.get(a, kDType) != state.base.get(base, kBDType) ||
        !nodeRef(state.base.get(base, kNode), node))
      return nullptr;
  }
  if (!node->store || node->opIndex >= 0 || !node->error.empty() ||
      node->store->shape() != node->shape || cpn::hasFpReports())
    return nullptr;
  // A store split over MPI ranks holds this rank's rows only: the op is
  // traced (cpn-localize reads the rows it needs). Its distribution is set
  // when its window is submitted, on this thread: the same on every rank.
  if (node->store->distribution() == cpnrt::Distribution::BlockRows)
    return nullptr;
  if (!cpnrt::TaskGraph::global().storeDone(*node->store)) {
    if (n >= threshold)
      return nullptr;
    try {
      cpnrt::ProfileScope scope("copy", "host_view");
      cpnrt::TaskGraph::WaitFollows waitFollows; // runs here, no worker woken
      py::gil_scoped_release release;
      node->store->wait();
    } catch (...) {
      // The work's failure, raised as a sync point raises it.
      py::detail::try_translate_exceptions();
      return nullptr;
    }
    // The kernel's floating-point reports go through the Python path.
    if (cpn::hasFpReports())
      return nullptr;
    // Other threads ran meanwhile: `a` may have a new shape (`a.shape =`)
    // or its base a new version; everything below is read again.
    base = state.array.get(a, kBase);
    cpn::NodeRef now;
    if (state.base.get(base, kNp) != Py_None ||
        !nodeRef(state.base.get(base, kNode), now) || now != node ||
        state.array.get(a, kPart) != Py_None ||
        state.array.get(a, kDType) != state.base.get(base, kBDType))
      return nullptr;
  }
  // A writer's sole-owner test came before other threads could run: a store
  // lent to NumPy since (np.asarray) is not written in place.
  // A borrowed NumPy buffer (Guard.cpp) would be copied whole for a view
  // of it: traced instead. One shared by several values is not written.
  if (node->store->guarded() ||
      (writable && (node->store->lent() || node->store->borrowShared())))
    return nullptr;
  // One NumPy array made straight over the store's elements at a's shape,
  // strides and offset, its base a capsule that holds the store (a NumPy
  // array of the whole store, then a view of it, cost ~1 us more: a row
  // loop over a computed array makes one or two a row).
  PyObject *descr, *keep;
  try {
    descr = storeDescr(node->store->dtype());
  } catch (const std::exception &) {
    return nullptr;
  }
  if (!(keep = storeOwner(node->store)))
    return nullptr;
  PyObject *v = viewAt(a, descr, static_cast<char *>(node->store->data()), keep,
                       writable);
  if (!v)
    return nullptr;
  if (owned)
    *owned = node;
  return v;
}

/// The elements of `a` (a whole-element view: no .real/.imag part, its
/// base's dtype) in `buf`, the NumPy array of its base's elements: buf
/// itself for a whole view, else a NumPy view of it (a's shape and strides
/// at its offset, as _core.ndarray._np_view makes it; buf becomes its
/// base). Steals the reference to buf.
static PyObject *viewIn(PyObject *a, PyObject *buf, bool writable) {
  if (state.array.get(a, kWhole) == Py_True)
    return buf;
  auto *bp = py::detail::array_proxy(buf);
  return viewAt(a, bp->descr, bp->data, buf, writable);
}

/// A NumPy array of `descr`'s elements at a's shape, strides and offset over
/// the buffer at `data`, whose base object is `owner` (stolen, also on
/// failure).
static PyObject *viewAt(PyObject *a, PyObject *descr, char *data,
                        PyObject *owner, bool writable) {
  PyObject *shape = state.array.get(a, kShape);
  Py_ssize_t item = py::reinterpret_borrow<py::dtype>(descr).itemsize();
  PyObject *strides = state.array.get(a, kStrides);
  Py_ssize_t nd = PyTuple_GET_SIZE(shape);
  std::vector<Py_intptr_t> dims(nd), steps(nd);
  for (Py_ssize_t k = 0; k < nd; ++k) {
    dims[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
    steps[k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, k)) * item;
  }
  long long off = PyLong_AsLongLong(state.array.get(a, kOffset));
  auto &api = py::detail::npy_api::get();
  Py_INCREF(descr);
  PyObject *v = api.PyArray_NewFromDescr_(
      api.PyArray_Type_, descr, static_cast<int>(nd), dims.data(), steps.data(),
      data + off * item,
      writable ? py::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0, nullptr);
  if (!v) {
    Py_DECREF(owner);
    return nullptr;
  }
  api.PyArray_SetBaseObject_(v, owner); // steals owner
  return v;
}

/// The computed store under a traced, whole-element view `a` (no .real/.imag
/// part, the base's dtype) once it is finished, with no floating-point
/// report waiting to be raised; null otherwise (the Python path decides).
static cpnrt::Store *elementStore(PyObject *a, cpn::NodeRef &node) {
  if (Py_TYPE(a) != state.array.type || state.array.get(a, kPart) != Py_None)
    return nullptr;
  PyObject *base = state.array.get(a, kBase);
  if (state.base.get(base, kNp) != Py_None ||
      state.array.get(a, kDType) != state.base.get(base, kBDType) ||
      !nodeRef(state.base.get(base, kNode), node) || !node->store ||
      !node->error.empty())
    return nullptr;
  bool ok = true;
  cpnrt::comm::gatherBlocks(cpnrt::TaskGraph::global(), node->store);
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
static PyObject *elementNumber(const cpnrt::Store &s, long long off) {
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

/// Whether a dtype's byte order character is this machine's.
static bool nativeOrder(char b) {
  const uint16_t probe = 1;
  bool little = *reinterpret_cast<const uint8_t *>(&probe) == 1;
  return b == '=' || b == '|' || b == (little ? '<' : '>');
}

/// NumPy's scalar of the element at `p` whose dtype is `descr` (a new
/// reference), made as NumPy's PyArrayScalar_New makes it: the scalar
/// type's tp_alloc, then the value right after the object header (the
/// `obval` of every numeric scalar in NumPy's arrayscalars.h; float64 and
/// complex128 lay out as Python's float and complex, their bases). Native
/// integers, floats up to 8 bytes and complex up to 16; null with no error
/// for other dtypes (bool, whose scalars are NumPy's two singletons, long
/// double, swapped byte order, ...).
static PyObject *numpyScalar(const char *p, PyObject *descr) {
  auto *d = py::detail::array_descriptor_proxy(descr);
  char k = d->kind;
  if ((k != 'i' && k != 'u' && k != 'f' && k != 'c') ||
      !nativeOrder(d->byteorder))
    return nullptr;
  Py_ssize_t size = py::reinterpret_borrow<py::dtype>(descr).itemsize();
  if (size > (k == 'c' ? 16 : 8))
    return nullptr;
  auto *type = reinterpret_cast<PyTypeObject *>(d->typeobj);
  PyObject *o = type->tp_alloc(type, 0);
  if (o)
    std::memcpy(reinterpret_cast<char *>(o) + sizeof(PyObject), p, size);
  return o;
}

/// The address of the element `key` (Python ints, one per axis) names in
/// the eager, whole-element array `a` (its base's NumPy buffer, read or
/// written in place: no view made): 1 found (`p`, `descr` set), 0 not such
/// a case (no error), -1 out of bounds (NumPy's IndexError set).
static int eagerElement(PyObject *a, PyObject *key, char *&p,
                        PyObject *&descr) {
  PyObject *base = state.array.get(a, kBase);
  PyObject *np = state.base.get(base, kNp);
  if (!np || !isArray(np) || state.array.get(a, kPart) != Py_None ||
      state.array.get(a, kDType) != state.base.get(base, kBDType))
    return 0;
  auto *ap = py::detail::array_proxy(np);
  long long off = 0;
  int found = elementOffset(a, key, numpyNumel(np), off);
  if (found <= 0)
    return found;
  descr = ap->descr;
  p = ap->data + off * py::reinterpret_borrow<py::dtype>(descr).itemsize();
  return 1;
}

/// Writes v into the element at p of dtype `descr` where NumPy's setitem
/// converts it exactly and silently: a float into float64 or float32 (not
/// one that overflows float32: NumPy warns), a Python int into float64
/// (nearest) or an int64/int32 it fits, a bool into bool, a NumPy scalar
/// of the dtype's own type. 1 written, 0 not such a case (nothing written,
/// no error: NumPy's setitem decides). Exactly a float: a subclass converts
/// through its __float__ (np.float64 is the same-type copy).
static int storeExact(char *p, PyObject *descr, PyObject *v) {
  auto *d = py::detail::array_descriptor_proxy(descr);
  if (!nativeOrder(d->byteorder))
    return 0;
  Py_ssize_t size = py::reinterpret_borrow<py::dtype>(descr).itemsize();
  char k = d->kind;
  if (k == 'f' && (size == 8 || size == 4) && PyFloat_CheckExact(v)) {
    double x = PyFloat_AS_DOUBLE(v);
    if (size == 8) {
      std::memcpy(p, &x, 8);
    } else {
      float y = static_cast<float>(x);
      if (std::isfinite(x) && !std::isfinite(y))
        return 0; // NumPy warns of the overflow
      std::memcpy(p, &y, 4);
    }
    return 1;
  }
  if (k == 'b' && PyBool_Check(v)) {
    *reinterpret_cast<bool *>(p) = v == Py_True;
    return 1;
  }
  if (PyLong_CheckExact(v) &&
      ((k == 'f' && size == 8) || (k == 'i' && (size == 8 || size == 4)))) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return 0; // NumPy's conversion (and its OverflowError)
    }
    if (k == 'f') {
      double y = static_cast<double>(x); // nearest, as NumPy's setitem
      std::memcpy(p, &y, 8);
    } else if (size == 8) {
      std::memcpy(p, &x, 8);
    } else {
      if (x < INT32_MIN || x > INT32_MAX)
        return 0;
      int32_t y = static_cast<int32_t>(x);
      std::memcpy(p, &y, 4);
    }
    return 1;
  }
  if (reinterpret_cast<PyObject *>(Py_TYPE(v)) == d->typeobj &&
      (k == 'i' || k == 'u' || k == 'f' || k == 'c') &&
      size <= (k == 'c' ? 16 : 8)) {
    std::memcpy(p, reinterpret_cast<char *>(v) + sizeof(PyObject), size);
    return 1;
  }
  return 0;
}

/// a[key] = v for one element of an eager, writeable array, in place where
/// storeExact converts v: 1 written, 0 not such a case (NumPy's setitem
/// decides), -1 out of bounds.
static int eagerElementSet(PyObject *a, PyObject *key, PyObject *v) {
  char *p = nullptr;
  PyObject *descr = nullptr;
  PyObject *np = state.base.get(state.array.get(a, kBase), kNp);
  if (!np || !isArray(np) ||
      !(py::detail::array_proxy(np)->flags &
        py::detail::npy_api::NPY_ARRAY_WRITEABLE_))
    return 0;
  int found = eagerElement(a, key, p, descr);
  return found <= 0 ? found : storeExact(p, descr, v);
}

/// element_get(a, key): a[key] for a key of Python ints, one per axis: on an
/// eager array NumPy's own getitem; on a computed traced array of
/// float64/32, int64/32 or bool the element as NumPy's scalar, read from the
/// store (no trace, no copy). None for every
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
  }
  char *p = nullptr;
  PyObject *descr = nullptr;
  if (int found = eagerElement(args[0], args[1], p, descr); found < 0) {
    return nullptr;
  } else if (found) {
    // The element read in place (NumPy's getitem: 45 ns a call here, with
    // the view and dispatch ours cost 61; this 30).
    if (PyObject *r = numpyScalar(p, descr))
      return r;
    if (PyErr_Occurred())
      return nullptr;
  }
  if (PyObject *view = eagerView(args[0])) {
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
  PyObject *dtype = state.array.get(args[0], kDType);
  if (PyObject *r = numpyScalar(
          static_cast<const char *>(s->data()) +
              off * py::reinterpret_borrow<py::dtype>(dtype).itemsize(),
          dtype))
    return r;
  if (PyErr_Occurred())
    return nullptr;
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

/// scalar_value(a): the element of a 0-d traced ndarray (a reduction's
/// result: `float(x.sum())`) as NumPy's scalar, its window flushed and
/// waited for here and the element read from the store, without the NumPy
/// view of the store the Python path makes (host_view). None when the
/// Python path must decide: an eager or non-0-d array, a .real/.imag part,
/// a dtype numpyScalar does not make, @jit tracing. A failure of the
/// window or of the work raises here, as host_view's (materialize).
PyObject *scalarValue(PyObject *, PyObject *a) {
  if (!checkReady())
    return nullptr;
  if (Py_TYPE(a) != state.array.type ||
      PyTuple_GET_SIZE(state.array.get(a, kShape)) != 0 ||
      state.array.get(a, kPart) != Py_None ||
      (items.tracing && items.tracingNow()))
    Py_RETURN_NONE;
  PyObject *base = state.array.get(a, kBase);
  PyObject *dtype = state.array.get(a, kDType);
  cpn::NodeRef node;
  if (state.base.get(base, kNp) != Py_None ||
      dtype != state.base.get(base, kBDType) ||
      !nodeRef(state.base.get(base, kNode), node))
    Py_RETURN_NONE;
  // The sync's event in the profile, as host_view's.
  cpnrt::ProfileScope scope("copy", "scalar_value");
  try {
    materialize(node);
  } catch (...) {
    // The flush's or the work's failure, raised as host_view raises it
    // (its kind's class, through the module's exception translators).
    py::detail::try_translate_exceptions();
    return nullptr;
  }
  long long off = PyLong_AsLongLong(state.array.get(a, kOffset));
  if (off < 0 || off >= node->store->numel())
    Py_RETURN_NONE;
  PyObject *r =
      numpyScalar(static_cast<const char *>(node->store->data()) +
                      off * py::reinterpret_borrow<py::dtype>(dtype).itemsize(),
                  dtype);
  if (!r && !PyErr_Occurred())
    Py_RETURN_NONE;
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
  } else if (int done = eagerElementSet(a, args[1], v); done) {
    return done < 0 ? nullptr : Py_NewRef(Py_True);
  } else if (PyObject *view = eagerView(a)) {
    // NumPy's setitem: its conversion, its errors and warnings.
    int failed = PyObject_SetItem(view, args[1], v);
    Py_DECREF(view);
    return failed ? nullptr : Py_NewRef(Py_True);
  } else if (PyErr_Occurred()) {
    return nullptr;
  }
  PyObject *nodeObj = state.base.get(state.array.get(a, kBase), kNode);
  cpn::NodeRef node;
  // A small array that an earlier write of a traced value left pending
  // (`out[0] = A[:, 0].sum()` while A was pending): its window runs now, so
  // that this write and a loop's next ones go straight into its store
  // rather than each recording an update into an array that stays pending.
  if (nodeObj && nodeRef(nodeObj, node) && !node->store &&
      node->opIndex >= 0 && node->error.empty() &&
      node->epoch == cpn::Engine::global().trace().epoch() &&
      node->numel() < eagerThreshold() && !cpn::Engine::global().capturing()) {
    try {
      cpn::Engine::global().flush();
    } catch (const std::exception &) {
      Py_RETURN_NONE; // the Python path records the write
    }
  }
  node.reset();
  // The base's slot is the node object's one reference; our NodeRef and the
  // pybind11 instance's holder are the node's two.
  // Not under CPN_PARTITION=rows: whether a store has one owner depends on
  // the tasks still holding it (timing), and the ranks must trace alike.
  cpnrt::Store *s = nodeObj && Py_REFCNT(nodeObj) == 1 &&
                            !cpn::Engine::global().options().partitioning()
                        ? elementStore(a, node)
                        : nullptr;
  // Checked again after elementStore, which lets other threads run while it
  // waits: one may have taken a reference or written a new version.
  if (!s || node.use_count() != 2 || node->store.get() != s ||
      node->store.use_count() != 1 || Py_REFCNT(nodeObj) != 1 ||
      state.base.get(state.array.get(a, kBase), kNode) != nodeObj)
    Py_RETURN_NONE;
  long long off = 0;
  int found = elementOffset(a, args[1], s->numel(), off);
  if (found <= 0)
    return found < 0 ? nullptr : Py_NewRef(Py_None);
  PyObject *dtype = state.array.get(a, kDType);
  size_t item = py::reinterpret_borrow<py::dtype>(dtype).itemsize();
  // A borrowed NumPy buffer is NumPy's: the store's own copy is written.
  s->unguard();
  char *p = static_cast<char *>(s->data()) + off * item;
  if (!storeExact(p, dtype, v)) {
    // Any other scalar: converted as NumPy's setitem converts it
    // (_core.pack_scalar, with NumPy's errors and warnings), then copied in.
    PyObject *pack = PyDict_GetItemString(state.coreDict, "pack_scalar");
    PyObject *packed =
        pack ? PyObject_CallFunctionObjArgs(pack, v, dtype, nullptr) : nullptr;
    if (!packed)
      return nullptr;
    // Python code ran: nothing else may have come to refer to the value.
    Py_buffer bytes;
    bool ok = Py_REFCNT(nodeObj) == 1 &&
              state.base.get(state.array.get(a, kBase), kNode) == nodeObj &&
              node.use_count() == 2 && node->store.get() == s &&
              node->store.use_count() == 1 &&
              PyObject_GetBuffer(packed, &bytes, PyBUF_SIMPLE) == 0;
    Py_DECREF(packed);
    if (!ok) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    if (size_t(bytes.len) == item)
      std::memcpy(p, bytes.buf, item);
    PyBuffer_Release(&bytes);
    if (size_t(bytes.len) != item)
      Py_RETURN_NONE;
  }
  s->facts.store(0, std::memory_order_relaxed);
  node->bounds.reset();
  Py_RETURN_TRUE;
}

} // namespace cpn::fast
