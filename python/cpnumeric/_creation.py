"""Array creation. Constant fills and ranges are traced (cpn.view of a
scalar, cpn.iota), so they are fused with their consumers."""

import numpy as _np

from . import _core, _cpn
from ._core import ndarray, record


def _shape(shape):
    if isinstance(shape, (int, _np.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _dtype(dtype, default="f8"):
    return _core.supported_dtype(default if dtype is None else dtype)


def full(shape, fill_value, dtype=None, order="C", *, like=None):
    shape = _shape(shape)
    if dtype is None:
        dtype = _np.asarray(fill_value).dtype
    dt = _dtype(dtype)
    if isinstance(fill_value, ndarray):
        src = fill_value.astype(dt)._node_as(shape)
        return ndarray._from_node(record("copy", [src], shape, dt), shape, dt)
    if _core.prod(shape) < _core.EAGER["threshold"]:
        return ndarray._from_eager(_np.full(shape, fill_value, dt))
    s = _core.splat(fill_value, shape, dt)
    return ndarray._from_node(record("copy", [s], shape, dt), shape, dt)


def zeros(shape, dtype=float, order="C", *, like=None):
    return full(shape, 0, dtype)


def ones(shape, dtype=None, order="C", *, like=None):
    return full(shape, 1, _np.float64 if dtype is None else dtype)


def empty(shape, dtype=float, order="C", *, like=None):
    return full(shape, 0, dtype)


def _like(a, dtype, shape):
    a = _core.asndarray(a)
    return (a._shape if shape is None else shape), (a._dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    s, d = _like(a, dtype, shape)
    return full(s, fill_value, d)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    s, d = _like(a, dtype, shape)
    return full(s, 0, d)


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    s, d = _like(a, dtype, shape)
    return full(s, 1, d)


def empty_like(a, dtype=None, order="K", subok=True, shape=None):
    s, d = _like(a, dtype, shape)
    return full(s, 0, d)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    """An array from data. Our arrays are copied (or cast) in the trace; other
    data goes through NumPy's conversion rules and is copied into a store."""
    if isinstance(obj, ndarray):
        r = obj.astype(dtype if dtype is not None else obj._dtype, copy=copy is not False)
    else:
        if dtype is not None:
            _core.check_dtype(dtype)
        a = _np.array(obj, dtype=dtype, copy=True, ndmin=ndmin)
        _core.supported_dtype(a.dtype)
        if a.size < _core.EAGER["threshold"]:
            return ndarray._from_eager(a)
        return ndarray._from_node(_cpn.from_numpy(a), a.shape, a.dtype)
    while r.ndim < ndmin:
        r = r[None]
    return r


def asarray(a, dtype=None, order=None, *, like=None, copy=None):
    if isinstance(a, ndarray):
        return a if dtype is None or _np.dtype(dtype) == a._dtype else a.astype(dtype)
    return array(a, dtype=dtype)


asanyarray = asarray
ascontiguousarray = asarray


def copy(a, order="K", subok=False):
    return _core.asndarray(a).copy()


def arange(start, stop=None, step=None, dtype=None, *, like=None):
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("step must not be zero")
    # NumPy's own length and dtype rules, from an empty arange of the same kind.
    dt = _np.dtype(dtype) if dtype is not None else _np.array([start, stop, step]).dtype
    n = max(int(_np.ceil((stop - start) / step)), 0)
    dt = _dtype(dt)
    idx = record("iota", [], (n,), _np.dtype("i8"), [0])
    calc = _np.dtype("f8") if dt.kind == "f" or any(
        isinstance(v, float) for v in (start, step)) else _np.dtype("i8")
    from . import _ufuncs
    i = ndarray._from_node(idx, (n,), _np.dtype("i8"))
    r = _ufuncs.add(_ufuncs.multiply(i.astype(calc), step), start)
    return r.astype(dt) if r._dtype != dt else r


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             *, device=None):
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else _np.nan
    from . import _ufuncs
    i = ndarray._from_node(record("iota", [], (num,), _np.dtype("i8"), [0]), (num,),
                           _np.dtype("i8")).astype(_np.float64)
    if div > 0:
        r = _ufuncs.add(_ufuncs.multiply(i, float(step)), float(start))
        if endpoint and num > 1:
            r[-1] = stop
    else:
        r = _ufuncs.add(_ufuncs.multiply(i, 0.0), float(start))
    dt = _np.result_type(start, stop, float) if dtype is None else _np.dtype(dtype)
    if dt != r._dtype:
        r = r.astype(dt)
    return (r, step) if retstep else r


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):
    M = N if M is None else M
    dt = _dtype(dtype)
    from . import _ufuncs
    rows = ndarray._from_node(record("iota", [], (N, M), _np.dtype("i8"), [0]), (N, M),
                              _np.dtype("i8"))
    cols = ndarray._from_node(record("iota", [], (N, M), _np.dtype("i8"), [1]), (N, M),
                              _np.dtype("i8"))
    return _ufuncs.equal(_ufuncs.add(rows, k), cols).astype(dt)


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=float if dtype is None else dtype)


NATIVE = ["full", "zeros", "ones", "empty", "full_like", "zeros_like", "ones_like",
          "empty_like", "array", "asarray", "asanyarray", "ascontiguousarray", "copy",
          "arange", "linspace", "eye", "identity"]
