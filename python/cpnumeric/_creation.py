"""Array creation. Constant fills and ranges are traced (cpn.view of a
scalar, cpn.iota), so they are fused with their consumers."""

import operator as _operator
import sys as _sys
import weakref as _weakref

import numpy as _np

from . import _core, _cpn
from ._core import ndarray, record


def _shape(shape):
    """A shape argument as NumPy reads it: an integer or a sequence of
    integers (anything with __index__; TypeError for '3' or 3.0)."""
    try:
        shape = (_operator.index(shape),)
    except TypeError:
        try:
            items = iter(shape)
        except TypeError:
            raise TypeError(f"expected a sequence of integers or a single "
                            f"integer, got '{shape}'") from None
        shape = tuple(_operator.index(d) for d in items)
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
    if not (type(fill_value) is int and fill_value in (0, 1) and dt.kind in "biuf"):
        # NumPy's conversion: copyto(..., casting='unsafe') of the fill value
        # (its ComplexWarning, its RuntimeWarning for NaN into ints).
        fv = _np.empty(_np.shape(fill_value), dt)
        _np.copyto(fv, fill_value, casting="unsafe")
        if fv.ndim:
            try:
                ok = _np.broadcast_shapes(fv.shape, shape) == shape
            except ValueError:
                ok = False
            if not ok:
                text = [str(t).replace(" ", "") for t in (fv.shape, shape)]
                raise ValueError(f"could not broadcast input array from shape "
                                 f"{text[0]} into shape {text[1]}")
            src = ndarray._from_node(_cpn.from_numpy(fv), fv.shape, dt)._node_as(shape)
            return ndarray._from_node(record("copy", [src], shape, dt), shape, dt)
        fill_value = fv[()]
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


def _full_like(a, value, dtype, order, shape):
    """full(...) shaped and laid out as NumPy's *_like make it: the
    prototype's axis order for order='K' (and 'A' of an F-ordered one), F
    order for 'F', C order for 'C' or a new shape."""
    s, d = _like(a, dtype, shape)
    if shape is None and order != "C":
        from . import _manip
        axes = _manip._axis_order(_core.asndarray(a), order)
        if axes is not None:
            r = full(tuple(s[k] for k in axes), value, d)
            return r._axes_view(_core._inverse_axes(axes))
    return full(s, value, d)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _full_like(a, fill_value, dtype, order, shape)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    return _full_like(a, 0, dtype, order, shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    return _full_like(a, 1, dtype, order, shape)


def empty_like(a, dtype=None, order="K", subok=True, shape=None):
    return _full_like(a, 0, dtype, order, shape)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    """An array from data. Our arrays are copied (or cast) in the trace; other
    data goes through NumPy's conversion rules and is copied into a store,
    or adopted (_stored)."""
    sole = _sys.getrefcount(obj) == _SOLE_REFS   # first: see _probe
    return _array(obj, dtype, copy, order, ndmin, sole)


def _array(obj, dtype, copy, order, ndmin, sole):
    if isinstance(obj, ndarray):
        r = obj.astype(dtype if dtype is not None else obj._dtype,
                       order="K" if order is None else order, copy=copy is not False)
        if copy is False or r is obj:
            r = _in_order(r, order)
    else:
        if dtype is not None:
            _core.check_dtype(dtype)
        axes = _copied_once(obj, dtype, order, ndmin)
        if axes is not None:
            # A big NumPy array already laid out as the result: its buffer
            # when nothing else can reach it, else one copy, into the store,
            # on several threads (not NumPy's copy, then ours).
            a = obj
            own = sole and _unreachable(obj)
        else:
            a = _np.array(obj, dtype=dtype, copy=True, ndmin=ndmin,
                          order="K" if order is None else order)
            _core.supported_dtype(a.dtype)
            if not a.dtype.isnative:  # stores hold native elements
                a = a.astype(a.dtype.newbyteorder("="), order="K")
            if a.size < _core.EAGER["threshold"]:
                return ndarray._from_eager(a)
            axes = _core._permuted_contiguous(a)
            own = True   # NumPy's new copy: nothing else holds it
        if axes is not None and axes != tuple(range(a.ndim)):
            # NumPy's layout kept (an F-ordered array stays F)
            t = a.transpose(axes)
            r = ndarray._from_node(_stored(t, own), t.shape, t.dtype)
            return r._axes_view(_core._inverse_axes(axes))
        return ndarray._from_node(_stored(a, own), a.shape, a.dtype)
    while r.ndim < ndmin:
        r = r[None]
    return r


def _probe(a, dtype=None, order=None, *, like=None, copy=None):
    return _sys.getrefcount(a)


def _calibrate():
    """The references a NumPy array passed straight to array() or asarray()
    has there when nothing else holds it (a temporary: `np.asarray(
    rng.random(n))`), counted as those functions count them, on their first
    line; None where a local that holds an array counts the same
    (interpreters that borrow references on the stack: there nothing is
    taken as unshared)."""
    held = _np.empty(1)
    temp, local = _probe(_np.empty(1)), _probe(held)
    return temp if local > temp else None


_SOLE_REFS = _calibrate()


def _unreachable(obj):
    """Whether nothing but the caller can reach the elements of the NumPy
    array `obj`, which it holds once (`sole`): no weak reference, and bases
    that only it holds. Such an array's buffer is adopted, not copied
    (docs/numpy-api.md, "NumPy arrays in")."""
    return _weakref.getweakrefcount(obj) == 0 and _cpn.numpy_owner_alone(obj)


_BORROW_BYTES = 1 << 18


def _stored(t, own):
    """A materialized value of the NumPy array t's elements: t's own buffer
    when `own` (nothing else can reach it) and it lies in C order; else,
    when it is big, its buffer borrowed under write protection (the first
    write to it copies the elements for us first: docs/numpy-api.md); else
    a copy."""
    if t.flags.c_contiguous and t.flags.aligned:
        if own:
            node = _cpn.adopt_numpy(t)
            if node is not None:
                return node
        elif t.nbytes >= _BORROW_BYTES:
            node = _cpn.borrow_numpy(t)
            if node is not None:
                return node
    return _cpn.from_numpy(t)


def _copied_once(obj, dtype, order, ndmin):
    """The axis order (outermost first) in which the NumPy array `obj` lies
    contiguously, when copying its bytes as they lie gives NumPy's
    array(obj, dtype, order=order, ndmin=ndmin) and it is big enough to be
    traced; else None."""
    if type(obj) is not _np.ndarray or order not in (None, "K", "A", "C", "F") \
            or obj.size < _core.EAGER["threshold"] \
            or ndmin > obj.ndim or not obj.dtype.isnative \
            or (dtype is not None and _np.dtype(dtype) != obj.dtype) \
            or not _core.is_supported(obj.dtype):
        return None
    c, f = obj.flags.c_contiguous, obj.flags.f_contiguous
    if order == "C" and not c or order == "F" and not f \
            or order == "A" and not (c or f):
        return None
    if c and order != "F":
        return tuple(range(obj.ndim))
    return _core._permuted_contiguous(obj)


def _in_order(a, order):
    """a, or its copy in memory order 'C' or 'F' when it is not laid out so
    (NumPy's asarray(order=...))."""
    if order in ("C", "F") and a.ndim > 1 and not (
            a.flags.c_contiguous if order == "C" else a.flags.f_contiguous):
        from . import _manip
        return _manip.copy_array(a, order)
    return a


def asarray(a, dtype=None, order=None, *, like=None, copy=None):
    sole = _sys.getrefcount(a) == _SOLE_REFS   # first: see _probe
    if isinstance(a, ndarray):
        r = a if dtype is None or _np.dtype(dtype) == a._dtype else a.astype(dtype)
        if copy and r is a:
            from . import _manip
            return _manip.copy_array(a, "K" if order is None else order)
        return _in_order(r, order)
    return _array(a, dtype, copy, order, 0, sole)


asanyarray = asarray


def ascontiguousarray(a, dtype=None, *, like=None):
    """a as a C-contiguous array (of at least one dimension), a copy when it
    is not one."""
    r = asarray(a, dtype=dtype, order="C")
    return r.reshape(1) if r.ndim == 0 else r


def asfortranarray(a, dtype=None, *, like=None):
    """a as an F-contiguous array (of at least one dimension), a copy when it
    is not one."""
    r = asarray(a, dtype=dtype, order="F")
    return r.reshape(1) if r.ndim == 0 else r


def copy(a, order="K", subok=False):
    from . import _manip
    return _manip.copy_array(_core.asndarray(a), order)


def arange(start=None, stop=None, step=None, dtype=None, *, like=None):
    if stop is None:
        if start is None:
            raise TypeError("arange() requires stop to be specified.")
        start, stop = 0, start
    elif start is None:
        start = 0
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("step must not be zero")
    length = (stop - start) / step
    if all(type(v) in (int, float, bool) for v in (start, stop, step)):
        if length != length:  # NumPy's length errors come first
            raise ValueError("arange: cannot compute length")
        if length >= 2.0 ** 63:
            raise ValueError("Maximum allowed size exceeded")
    # NumPy's own length and dtype rules, from an empty arange of the same kind.
    dt = _np.dtype(dtype) if dtype is not None else _np.array([start, stop, step]).dtype
    n = max(int(_np.ceil(length)), 0)
    dt = _dtype(dt)
    if dt.kind == "b" and n > 2:
        raise TypeError("arange() is only supported for booleans when the result "
                        "has at most length 2.")
    idx = record("iota", [], (n,), _np.dtype("i8"), [0])
    calc = _np.dtype("f8") if dt.kind == "f" or any(
        isinstance(v, float) for v in (start, step)) else _np.dtype("i8")
    from . import _ufuncs
    i = ndarray._from_node(idx, (n,), _np.dtype("i8"))
    r = i.astype(calc)
    # start + i * step, as NumPy fills it; with step 1 and start 0 that is i
    # itself (exact, and +0.0 first as there), without two ops and their
    # temporaries. A start of +0 is added when the step is not positive:
    # 0 * -0.5 is -0.0, and NumPy's first element is 0 + -0.0 = +0.0.
    if not (type(step) in (int, float) and step == 1):
        r = _ufuncs.multiply(r, step)
    if not (type(start) in (int, float) and start == 0
            and _np.copysign(1.0, start) > 0
            and type(step) in (int, float) and step > 0):
        r = _ufuncs.add(r, start)
    if r._dtype != dt:
        # NumPy fills the result in its dtype: values past a float16's range
        # are inf without an overflow warning
        with _np.errstate(over="ignore"):
            r = r.astype(dt)
    return r


def _is_py_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, _np.generic)


def _dtype_stand_in(x):
    """What NumPy's dtype rules see of an argument: Python scalars stay (weak,
    NEP 50), arrays become empty arrays of their dtype."""
    if isinstance(x, ndarray):
        return _np.zeros((0,) * x.ndim, x._dtype)
    if _is_py_scalar(x):
        return x
    a = _np.asarray(x)
    return _np.zeros((0,) * a.ndim, a.dtype)


def _spaced(y, start, stop, div, dt):
    """linspace's arithmetic on the positions y (1-D, of its dtype dt) for
    start and stop known here (NumPy scalars or arrays, whose axes follow
    y's): start + y * step, or start +
    y / div * delta where a step is 0 (denormal ranges). Returns the values
    and the step."""
    from . import _ufuncs
    delta = _np.subtract(stop, start, dtype=type(dt))
    y = y.reshape(y.shape + (1,) * delta.ndim)  # array endpoints: one column each
    if div > 0:
        step = delta / div
        y = y / div * delta if _np.any(step == 0) else y * step
    else:
        step = _np.nan
        y = y * delta
    y = _ufuncs.add(y, start)
    return (y if y._dtype == dt else y.astype(dt)), step


def linspace_at(pos, start, stop, num, dtype=None):
    """linspace(start, stop, num, dtype=dtype)[pos] for scalar start and stop
    and an integer array pos of positions in [0, num), element by element
    with linspace's own arithmetic (the same values bit for bit, no table to
    gather from): histogram's uniform bins compute their edges this way."""
    from . import _ufuncs
    dt = _np.linspace(_dtype_stand_in(start), _dtype_stand_in(stop), 2).dtype
    if _is_py_scalar(start) and _is_py_scalar(stop):
        start, stop = _np.asarray(start), _np.asarray(stop)
    y, _ = _spaced(pos.astype(dt), start, stop, num - 1, dt)
    if num > 1:
        last = _np.asarray(stop).astype(dt)[()]  # as y[-1] = stop
        y = _ufuncs.where(_ufuncs.equal(pos, num - 1), last, y)
    return y.astype(dt if dtype is None else dtype, copy=False)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             *, device=None):
    """NumPy's linspace, step for step: `start + arange(num) * step` in the
    inexact dtype NumPy's rules give the endpoints (NEP 50: a float32 start
    stays float32), broadcast over array endpoints along `axis`."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    # NumPy's result dtype, from empty stand-ins of the same kinds.
    dt = _np.linspace(_dtype_stand_in(start), _dtype_stand_in(stop), 2).dtype
    integer_dtype = dtype is not None and _np.issubdtype(dtype, _np.integer)
    if dtype is None:
        dtype = dt
    from . import _ufuncs
    from ._manip import moveaxis
    # As NumPy's _array_converter: Python scalars stay weak beside an array.
    if _is_py_scalar(start) and _is_py_scalar(stop):
        start, stop = _np.asarray(start), _np.asarray(stop)
    traced = isinstance(start, ndarray) or isinstance(stop, ndarray)
    if traced:
        start = start if _is_py_scalar(start) else _core.asndarray(start)
        stop = stop if _is_py_scalar(stop) else _core.asndarray(stop)
        delta = _ufuncs.subtract(_core.asndarray(stop, dt), _core.asndarray(start, dt))
        y = arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)
        if div > 0:
            step = delta / div
            from ._reductions import any as _any
            y = _ufuncs.where(_any(_ufuncs.equal(step, 0)), y / div * delta, y * step)
        else:
            step = _np.nan
            y = y * delta
        y = _ufuncs.add(y, start)
        if y._dtype != dt:
            y = y.astype(dt)
    else:  # the step is known here, as NumPy computes it
        y, step = _spaced(arange(0, num, dtype=dt), start, stop, div, dt)
    if endpoint and num > 1:
        y[-1, ...] = stop
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if integer_dtype:
        y = _ufuncs.floor(y)
    y = y.astype(dtype, copy=False)
    if retstep:
        return y, step
    return y


def eye(N, M=None, k=0, dtype=float, order="C", *, like=None):
    M = N if M is None else M
    N, M = _shape((N, M))
    k = _operator.index(k)
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
          "empty_like", "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray",
          "copy",
          "arange", "linspace", "eye", "identity"]
