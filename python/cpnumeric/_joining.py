"""Joining, padding-free rearranging and comparison functions, built from
native ops (views, updates into a fresh array, ufuncs, reductions): every one
of them is traced and compiled, with NumPy's dtypes, shapes and errors."""

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _manip, _reductions, _ufuncs


def _arrays(seq):
    if isinstance(seq, (_core.ndarray, _np.ndarray)):
        if seq.ndim == 0:
            raise TypeError("arrays to stack must be passed as a sequence")
        return [_core.asndarray(seq[i]) for i in range(seq.shape[0])]
    try:
        items = list(seq)
    except TypeError:
        raise TypeError("arrays to stack must be passed as a sequence") from None
    return [_core.asndarray(a) for a in items]


# -- joining ---------------------------------------------------------------------

def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    from ._creation import empty
    arrs = _arrays(arrays)
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrs = [_manip.ravel(a) for a in arrs]
        axis = 0
    nd = arrs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for i, a in enumerate(arrs):
        if a.ndim != nd:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {nd} dimension(s) and the array at index "
                f"{i} has {a.ndim} dimension(s)")
    axis = normalize_axis_index(axis, nd)
    for i, a in enumerate(arrs):
        for d in range(nd):
            if d != axis and a.shape[d] != arrs[0].shape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation "
                    f"axis must match exactly, but along dimension {d}, the array "
                    f"at index 0 has size {arrs[0].shape[d]} and the array at "
                    f"index {i} has size {a.shape[d]}")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, "
                        "but both were provided.")
    dt = _np.dtype(dtype) if dtype is not None else (
        out.dtype if out is not None else
        _np.result_type(*[a.dtype for a in arrs]))
    for a in arrs:
        if not _np.can_cast(a.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dt!r} "
                            f"according to the rule {casting!r}")
    shape = list(arrs[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrs)
    if out is not None:
        if tuple(out.shape) != tuple(shape):
            raise ValueError("Output array is the wrong shape")
        res = out
    else:
        res = empty(tuple(shape), dt)
    pos = 0
    for a in arrs:
        n = a.shape[axis]
        if n:
            idx = [slice(None)] * nd
            idx[axis] = slice(pos, pos + n)
            res[tuple(idx)] = a
        pos += n
    return res


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrs = _arrays(arrays)
    if not arrs:
        raise ValueError("need at least one array to stack")
    if any(a.shape != arrs[0].shape for a in arrs):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, arrs[0].ndim + 1)
    return concatenate([_manip.expand_dims(a, axis) for a in arrs], axis, out,
                       dtype=dtype, casting=casting)


def _one_or_tuple(res):
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    return _one_or_tuple([_manip.reshape(a, (1,)) if a.ndim == 0 else a
                          for a in map(_core.asndarray, arys)])


def atleast_2d(*arys):
    res = []
    for a in map(_core.asndarray, arys):
        if a.ndim == 0:
            a = _manip.reshape(a, (1, 1))
        elif a.ndim == 1:
            a = a[None, :]
        res.append(a)
    return _one_or_tuple(res)


def atleast_3d(*arys):
    res = []
    for a in map(_core.asndarray, arys):
        if a.ndim == 0:
            a = _manip.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = a[None, :, None]
        elif a.ndim == 2:
            a = a[:, :, None]
        res.append(a)
    return _one_or_tuple(res)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_2d(a) for a in _arrays(tup)]
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(a) for a in _arrays(tup)]
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in _arrays(tup)], 2)


def column_stack(tup):
    arrs = []
    for a in _arrays(tup):
        if a.ndim < 2:
            a = _manip.transpose(atleast_2d(a))
        arrs.append(a)
    return concatenate(arrs, 1)


def append(arr, values, axis=None):
    arr, values = _core.asndarray(arr), _core.asndarray(values)
    if axis is None:
        return concatenate((_manip.ravel(arr), _manip.ravel(values)), 0)
    return concatenate((arr, values), axis)


def broadcast_arrays(*args, subok=False):
    arrs = [_core.asndarray(a) for a in args]
    shape = _np.broadcast_shapes(*[a.shape for a in arrs])
    return tuple(a if a.shape == shape else _manip.broadcast_to(a, shape)
                 for a in arrs)


# -- rearranging -----------------------------------------------------------------

def roll(a, shift, axis=None):
    a = _core.asndarray(a)
    if axis is None:
        return _manip.reshape(roll(_manip.ravel(a), shift, 0), a.shape)
    axes = normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    shifts = _np.broadcast_to(_np.asarray(shift), (len(axes),)) if _np.ndim(
        shift) == 0 else _np.asarray(shift)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for s, ax in zip(shifts.tolist(), axes):
        total[ax] = total.get(ax, 0) + int(s)
    res = a
    for ax, s in total.items():
        n = a.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        lo = [slice(None)] * a.ndim
        hi = [slice(None)] * a.ndim
        lo[ax], hi[ax] = slice(n - s, None), slice(None, n - s)
        res = concatenate((res[tuple(lo)], res[tuple(hi)]), ax)
    return res if res is not a else _manip.copy_array(a)


def _tri(m, k, lower):
    from ._creation import arange, zeros
    m = _core.asndarray(m)
    if m.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N' "
                        "(tril and triu need an array of at least 1 dimension)")
    rows, cols = (m.shape[-1], m.shape[-1]) if m.ndim == 1 else m.shape[-2:]
    offset = arange(cols)[None, :] - arange(rows)[:, None]
    mask = (_ufuncs.less_equal if lower else _ufuncs.greater_equal)(offset, int(k))
    return _ufuncs.where(mask, m, zeros((), m.dtype))


def tril(m, k=0):
    return _tri(m, k, True)


def triu(m, k=0):
    return _tri(m, k, False)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = _manip.diagonal(_core.asndarray(a), offset, axis1, axis2)
    return _reductions.sum(d, axis=-1, dtype=dtype, out=out)


def diff(a, n=1, axis=-1, prepend=_np._NoValue, append=_np._NoValue):
    a = _core.asndarray(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, a.ndim)
    parts = []
    for value in (prepend,):
        if value is not _np._NoValue:
            parts.append(_edge(value, a, axis))
    parts.append(a)
    if append is not _np._NoValue:
        parts.append(_edge(append, a, axis))
    if len(parts) > 1:
        a = concatenate(parts, axis)
    hi = [slice(None)] * a.ndim
    lo = [slice(None)] * a.ndim
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    hi, lo = tuple(hi), tuple(lo)
    op = _ufuncs.not_equal if a.dtype == _np.bool_ else _ufuncs.subtract
    for _ in range(n):
        a = op(a[hi], a[lo])
    return a


def _edge(value, a, axis):
    v = _core.asndarray(value)
    if v.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        v = _manip.broadcast_to(v, tuple(shape))
    return v


def ptp(a, axis=None, out=None, keepdims=False):
    a = _core.asndarray(a)
    return _ufuncs.subtract(_reductions.max(a, axis=axis, keepdims=keepdims),
                            _reductions.min(a, axis=axis, keepdims=keepdims),
                            out=out)


# -- comparison ------------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    x, y = _core.asndarray(a), _core.asndarray(b)
    dt = _np.result_type(y.dtype, 1.0)
    if y.dtype != dt:
        y = y.astype(dt)
    with _np.errstate(invalid="ignore"):
        result = _ufuncs.logical_or(
            _ufuncs.logical_and(
                _ufuncs.less_equal(_ufuncs.absolute(x - y),
                                   atol + rtol * _ufuncs.absolute(y)),
                _ufuncs.isfinite(y)),
            _ufuncs.equal(x, y))
        if equal_nan:
            result = _ufuncs.logical_or(
                result, _ufuncs.logical_and(_ufuncs.isnan(x), _ufuncs.isnan(y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_reductions.all(isclose(a, b, rtol, atol, equal_nan)))


concat = concatenate  # the array-API name


def permute_dims(a, axes=None):
    return _manip.transpose(a, axes)


NATIVE = ["concat", "permute_dims", "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack",
          "atleast_1d", "atleast_2d", "atleast_3d", "append", "broadcast_arrays",
          "roll", "tril", "triu", "trace", "diff", "ptp", "isclose", "allclose"]
