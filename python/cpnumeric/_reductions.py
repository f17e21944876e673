"""Reductions: one cpn.reduce per call, with NumPy's result dtypes."""

import builtins
import operator as _operator

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _errstate
from ._core import ndarray, record

_result_dtypes = {}
_NP_FUNCS = {"sum": _np.sum, "prod": _np.prod, "min": _np.min, "max": _np.max,
             "any": _np.any, "all": _np.all}


def _result_dtype(kind, dt, dtype):
    key = (kind, dt, dtype)
    r = _result_dtypes.get(key)
    if r is None:
        kw = {"dtype": dtype} if kind in ("sum", "prod") and dtype is not None else {}
        r = _NP_FUNCS[kind](_np.ones(1, dt), **kw).dtype
        _result_dtypes[key] = r
    return r


def _axes(a, axis, ufunc=False):
    """The reduced axes. `ufunc`: the rule of ufunc reductions (sum, max,
    any, ...), which take an integer axis 0 or -1 for a 0-d array."""
    if axis is None:
        return tuple(range(a.ndim))
    if ufunc and a.ndim == 0 and not isinstance(axis, tuple):
        try:
            i = _operator.index(axis)
        except TypeError:
            i = None
        if i in (0, -1):
            return ()
    return normalize_axis_tuple(axis, a.ndim)


def _keep(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _finish(node, shape, dtype, axes, a_shape, keepdims, out):
    res = ndarray._from_node(node, shape, dtype)
    if keepdims:
        res = res.reshape(_keep(a_shape, axes))
    elif not shape:
        res._isscalar = True  # NumPy's reduction gives a scalar
    if out is not None:
        if not isinstance(out, (ndarray, _np.ndarray)):
            raise TypeError("output must be an array")
        if out.shape != res._shape:
            raise ValueError(f"output parameter has shape {out.shape}, expected "
                             f"{res._shape}")
    return _core.store_out(res, out)


def _inner_axis(a):
    """The axis NumPy's iterator walks innermost over `a`: the one of size
    > 1 with the smallest stride (the last one of a C-ordered array); None
    when no axis has more than one element."""
    axes = [i for i, n in enumerate(a._shape) if n > 1]
    if not axes:
        return None
    return builtins.min(reversed(axes), key=lambda i: abs(a._strides[i]))


_BOOL = _np.dtype(bool)
_HALF = _np.dtype(_np.float16)


def reduce(kind, a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
           where=True):
    if (axis is None and dtype is None and out is None and keepdims is False
            and initial is None and where is True and type(a) is ndarray
            and a._shape):
        # The common call, x.sum() of a whole array to NumPy's scalar: the
        # reduction over every axis recorded at once (the general path's
        # axis, order and option handling cost ~2-3 us of a synchronized
        # 10^5 reduction's ~17).
        if kind in ("any", "all"):
            rdt, acc = _BOOL, None
        else:
            rdt = _result_dtype(kind, a._dtype, None)
        if not (rdt == _HALF and kind in ("sum", "prod")) and not (
                kind in ("min", "max") and 0 in a._shape):
            acc = a._node() if rdt is _BOOL else a._node_as(a._shape, rdt)
            res = ndarray._from_node(
                record("reduce", [acc], (), rdt, list(range(len(a._shape))), kind), (), rdt)
            res._isscalar = True
            return res
    a = _core.asndarray(a)
    axes = _axes(a, axis, ufunc=True)
    if out is None and where is True and a.ndim - len(axes) >= 2:
        order = _core.k_order([a], a._shape)
        rest = [d for d in (order or ()) if d not in axes]
        if order is not None and rest != sorted(rest):
            # NumPy's order='K': the result's axes in the operand's order
            # (t.sum(axis=1) of a transposed t is not C-contiguous). Reduce
            # the transposed view, whose result is C-contiguous, and return
            # that result's transpose.
            r = reduce(kind, a._axes_view(order), tuple(order.index(d) for d in axes),
                       dtype, None, keepdims, initial, True)
            if keepdims:
                return r._axes_view(_core._inverse_axes(order))
            return r._axes_view([rest.index(d) for d in sorted(rest)])
    if kind in ("any", "all"):
        rdt = _np.dtype(bool)
        acc = a._node()
    else:
        rdt = _result_dtype(kind, a._dtype, _np.dtype(dtype) if dtype else None)
        if initial is not None and not isinstance(initial, ndarray):
            # NumPy converts initial to the loop's dtype first, as setitem
            # does: bool(-5) is True, -1 into uint64 an OverflowError.
            initial = _core.pack_scalar(initial, rdt)
        if rdt == _np.float16 and kind in ("sum", "prod") and (
                kind == "sum" or _inner_axis(a) in axes):
            # NumPy's half loops accumulate in float32 along the axis its
            # iterator walks innermost (the smallest stride) and round once;
            # a product over other axes only multiplies whole rows in
            # float16, rounding (and overflowing) at each step.
            # Other inputs are cast to float16 first (the loop's dtype):
            # float64 values beyond its range are infinities before the sum.
            src = a if a._dtype == _np.float16 else a.astype(_np.float16)
            r = reduce(kind, src, axis, _np.float32, None, keepdims, initial, where)
            return _core.store_out(r.astype(rdt), out)
        acc = a._node_as(a._shape, rdt)
    if kind in ("min", "max") and initial is None and builtins.any(a._shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation "
                         f"{'minimum' if kind == 'min' else 'maximum'} which has no "
                         "identity")
    if where is not True:
        w = _core.asndarray(where, dtype=bool)
        ident = {"sum": 0, "prod": 1, "any": False, "all": True}.get(kind)
        if ident is None:
            if initial is None:
                raise ValueError(f"reduction operation '{kind}' does not have an "
                                 "identity, so to use a where mask one has to "
                                 "specify 'initial'")
            ident = initial
        acc = record("select", [w._node_as(a._shape), acc,
                                _core.splat(ident, a._shape, rdt)], a._shape, rdt)
    shape = tuple(d for i, d in enumerate(a._shape) if i not in axes)
    node = record("reduce", [acc], shape, rdt, sorted(axes), kind)
    res = ndarray._from_node(node, shape, rdt)
    if initial is not None:
        from . import _ufuncs
        f = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum",
             "any": "logical_or", "all": "logical_and"}[kind]
        res = getattr(_ufuncs, f)(res, initial)
        if res._dtype != rdt:
            res = res.astype(rdt)
    return _finish(res._node(), shape, rdt, axes, a._shape, keepdims, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduce("sum", a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduce("prod", a, axis, dtype, out, keepdims, initial, where)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduce("max", a, axis, None, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduce("min", a, axis, None, out, keepdims, initial, where)


max = amax  # noqa: A001
min = amin  # noqa: A001


def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return reduce("any", a, axis, None, out, keepdims, None, where)


def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    return reduce("all", a, axis, None, out, keepdims, None, where)


def _count(a, axes):
    n = 1
    for i in axes:
        n *= a._shape[i]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _core.asndarray(a)
    axes = _axes(a, axis)
    if where is True and _count(a, axes) == 0:
        _errstate.warn_if(_core.asndarray(True), "Mean of empty slice")
    return _core.store_out(_mean(a, axes, dtype, keepdims, where), out)


def by_count(s, n):
    """s / n as NumPy divides a sum by its count (an intp: _methods and
    _nanfunctions' _divide_by_count): float16 and float32 sums in float64
    (complex64 in complex128), cast back; a count past 65504 is no float16
    infinity. n: a Python int or an integer array."""
    from . import _ufuncs
    if isinstance(n, (int, float)):  # a count less a float ddof: float64
        n = _np.intp(n) if isinstance(n, int) else _np.float64(n)
    r = _ufuncs.divide(s, n)
    return r.astype(s._dtype) if r._dtype != s._dtype else r


def _mean(a, axes, dtype, keepdims, where=True):
    from . import _ufuncs
    sdt = dtype
    if dtype is None:
        dtype = _np.dtype("f8") if a._dtype.kind in "biu" else a._dtype
        # float16 means are summed and divided in float32 (as NumPy's); an
        # explicit dtype=float16 sums (rounding once) and divides in float16.
        sdt = _np.dtype("f4") if dtype == _np.float16 else dtype
    if where is not True:
        w = _core.asndarray(where, dtype=bool)
        s = reduce("sum", a, axes, sdt, None, keepdims, None, w)
        from ._manip import broadcast_to
        n = reduce("sum", broadcast_to(w, a._shape), axes, _np.dtype(_np.intp), None,
                   keepdims)
        _errstate.warn_if(any(_ufuncs.equal(n, 0)), "Mean of empty slice")
        r = by_count(s, n)
    else:
        s = reduce("sum", a, axes, sdt, None, keepdims)
        r = by_count(s, _count(a, axes))
    if r._dtype != _np.dtype(dtype):
        r = r.astype(dtype)
    return r


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):
    from . import _ufuncs
    if where is not True or mean is not None:
        from . import _fallback  # not native yet; never silently ignored
        kw = {"where": where} if where is not True else {}
        if mean is not None:
            kw["mean"] = mean
        if correction is not None:
            kw["correction"] = correction
        else:
            kw["ddof"] = ddof
        return _fallback.call_numpy("var", (a,), dict(
            kw, axis=axis, dtype=dtype, out=out, keepdims=keepdims))
    a = _core.asndarray(a)
    if correction is not None:
        ddof = correction
    axes = _axes(a, axis)
    if ddof >= _count(a, axes):
        _errstate.warn_if(_core.asndarray(True), "Degrees of freedom <= 0 for slice")
    m = _mean(a, axes, dtype, True)
    d = _ufuncs.subtract(a, m)
    if d._dtype.kind == "c":  # |d|**2, as NumPy's (d * conj(d)).real
        sq = _ufuncs.multiply(d, _ufuncs.conjugate(d)).real
    else:
        sq = _ufuncs.multiply(d, d)
    n = _count(a, axes)
    s = reduce("sum", sq, axes, None, None, keepdims)
    return _core.store_out(by_count(s, builtins.max(n - ddof, 0)), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):
    from . import _ufuncs
    return _core.store_out(
        _ufuncs.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where,
                         mean=mean, correction=correction)),
        out)


def _arg(kind, a, axis, out, keepdims):
    a = _core.asndarray(a)
    if a.ndim == 0 and axis is not None:  # NumPy sees a 0-d array as 1-D
        normalize_axis_index(axis, 1)
        axis, keepdims = None, False
    # NumPy raises only when the reduced extent is empty: the argmax along a
    # non-empty axis of a (3, 0) array is an empty result.
    if a.size == 0 and (axis is None or a.ndim == 0 or
                        a._shape[normalize_axis_tuple(axis, a.ndim)[0]] == 0):
        raise ValueError(f"attempt to get {kind} of an empty sequence")
    if axis is None:
        flat = a.ravel()
        node = record("reduce", [flat._node()], (), _np.dtype("i8"), [0], kind)
        res = ndarray._from_node(node, (), _np.dtype("i8"))
        if keepdims:
            res = res.reshape((1,) * a.ndim)
        else:
            res._isscalar = True
    else:
        (ax,) = normalize_axis_tuple(axis, a.ndim)
        shape = tuple(d for i, d in enumerate(a._shape) if i != ax)
        node = record("reduce", [a._node()], shape, _np.dtype("i8"), [ax], kind)
        res = ndarray._from_node(node, shape, _np.dtype("i8"))
        if keepdims:
            res = res.reshape(_keep(a._shape, (ax,)))
    return _core.store_out(res, out)


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg("argmin", a, axis, out, keepdims)


def count_nonzero(a, axis=None, *, keepdims=False):
    from . import _ufuncs
    a = _core.asndarray(a)
    nz = _ufuncs.not_equal(a, 0) if a._dtype.kind != "b" else a
    return reduce("sum", nz, axis, _np.dtype("i8"), None, keepdims)


NATIVE = ["sum", "prod", "amax", "amin", "max", "min", "any", "all", "mean", "var",
          "std", "argmax", "argmin", "count_nonzero"]
