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


# -- more compositions -------------------------------------------------------------

def tile(A, reps):
    A = _core.asndarray(A)
    reps = (int(reps),) if _np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    d = max(len(reps), A.ndim)
    shape = (1,) * (d - A.ndim) + A.shape
    reps = (1,) * (d - len(reps)) + reps
    inter = []
    for r, s in zip(reps, shape):
        inter += [r, s]
    src = _manip.reshape(A, [x for s in shape for x in (1, s)])
    out = _manip.broadcast_to(src, tuple(inter))
    return _manip.reshape(_manip.copy_array(out),
                          tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None):
    a = _core.asndarray(a)
    if _np.ndim(repeats) != 0:
        from . import _fallback
        return _fallback.call_numpy("repeat", (a, repeats), {"axis": axis})
    r = int(repeats)
    if r < 0:
        raise ValueError("negative dimensions are not allowed")
    if axis is None:
        a, axis = _manip.ravel(a), 0
    axis = normalize_axis_index(axis, a.ndim)
    shape = a.shape
    src = _manip.reshape(a, shape[:axis + 1] + (1,) + shape[axis + 1:])
    out = _manip.broadcast_to(src, shape[:axis + 1] + (r,) + shape[axis + 1:])
    return _manip.reshape(_manip.copy_array(out),
                          shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * nd
        shape[i] = -1
        out.append(_manip.reshape(_core.asndarray(x), tuple(shape)))
    if indexing == "xy" and nd > 1:
        for k in range(nd):
            out[k] = _manip.swapaxes(out[k], 0, 1)
    if not sparse:
        out = list(broadcast_arrays(*out))
    if copy:
        out = [_manip.copy_array(o) for o in out]
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    from ._creation import arange
    dimensions = tuple(dimensions)
    n = len(dimensions)
    grids = []
    for i, dim in enumerate(dimensions):
        shape = [1] * n
        shape[i] = dim
        g = _manip.reshape(arange(dim, dtype=dtype), tuple(shape))
        grids.append(g if sparse else _manip.broadcast_to(g, dimensions))
    if sparse:
        return tuple(grids)
    if n == 0:
        from ._creation import empty
        return empty((0,), dtype)
    return stack(grids)


def kron(a, b):
    a, b = _core.asndarray(a), _core.asndarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    ea = _manip.reshape(a, [x for s in sa for x in (s, 1)])
    eb = _manip.reshape(b, [x for s in sb for x in (1, s)])
    return _manip.reshape(_ufuncs.multiply(ea, eb),
                          tuple(x * y for x, y in zip(sa, sb)))


def rot90(m, k=1, axes=(0, 1)):
    m = _core.asndarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if (axes[0] >= m.ndim or axes[0] < -m.ndim or axes[1] >= m.ndim
            or axes[1] < -m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return _manip.flip(_manip.flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return _manip.transpose(_manip.flip(m, axes[1]), perm)
    return _manip.flip(_manip.transpose(m, perm), axes[1])


def tri(N, M=None, k=0, dtype=float, *, like=None):
    from ._creation import arange
    M = N if M is None else M
    mask = _ufuncs.less_equal(arange(M)[None, :] - arange(N)[:, None], int(k))
    return mask.astype(dtype)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    a = _core.asndarray(a)
    if weights is None:
        avg = _reductions.mean(a, axis=axis, keepdims=keepdims)
        scl = avg.dtype.type(a.size / max(avg.size, 1))
        from ._creation import full
        if returned:
            return avg, full(avg.shape, scl, dtype=avg.dtype)
        return avg
    w = _core.asndarray(weights)
    if a.shape != w.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights "
                            "differ.")
        if w.ndim != 1 or not isinstance(axis, (int, _np.integer)):
            raise TypeError("1D weights expected when shapes of a and weights "
                            "differ.")
        ax = normalize_axis_index(axis, a.ndim)
        if w.shape[0] != a.shape[ax]:
            raise ValueError("Length of weights not compatible with specified axis.")
        shape = [1] * a.ndim
        shape[ax] = -1
        w = _manip.reshape(w, tuple(shape))
    rt = _np.result_type(a.dtype, w.dtype, _np.float64 if a.dtype.kind in "biu"
                         else a.dtype)
    wsum = _reductions.sum(_manip.broadcast_to(w, a.shape).astype(rt), axis=axis,
                           keepdims=keepdims)
    avg = _ufuncs.divide(_reductions.sum(_ufuncs.multiply(a, w).astype(rt),
                                         axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _core.asndarray(x)
    if x.dtype.kind not in "f":
        return _manip.copy_array(x) if copy else x
    info = _np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    dt = x.dtype.type
    r = _ufuncs.where(_ufuncs.isnan(x), dt(nan), x)
    r = _ufuncs.where(_ufuncs.logical_and(_ufuncs.isinf(r), _ufuncs.greater(r, 0)),
                      dt(posinf), r)
    r = _ufuncs.where(_ufuncs.logical_and(_ufuncs.isinf(r), _ufuncs.less(r, 0)),
                      dt(neginf), r)
    if not copy:
        x[...] = r
        return x
    return r


def around(a, decimals=0, out=None):
    a = _core.asndarray(a)
    decimals = int(decimals)
    if a.dtype.kind in "biu":
        if decimals >= 0:
            return _manip.copy_array(a) if out is None else _assign(out, a)
        from . import _fallback
        return _fallback.call_numpy("round", (a, decimals), {"out": out})
    if decimals == 0:
        return _ufuncs.rint(a, out=out)
    f = a.dtype.type(10.0 ** abs(decimals))
    if decimals > 0:
        return _ufuncs.divide(_ufuncs.rint(_ufuncs.multiply(a, f)), f, out=out)
    return _ufuncs.multiply(_ufuncs.rint(_ufuncs.divide(a, f)), f, out=out)


def _assign(out, a):
    out[...] = a
    return out


round = around  # noqa: A001


def deg2rad(x, out=None):
    return _ufuncs.multiply(x, _np.pi / 180.0, out=out)


def rad2deg(x, out=None):
    return _ufuncs.multiply(x, 180.0 / _np.pi, out=out)


radians, degrees = deg2rad, rad2deg


def sinc(x):
    x = _core.asndarray(x)
    if x.dtype.kind in "biu":
        x = x.astype(_np.float64)
    y = _ufuncs.multiply(_np.pi, _ufuncs.where(_ufuncs.equal(x, 0),
                                                x.dtype.type(1.0e-20), x))
    return _ufuncs.divide(_ufuncs.sin(y), y)


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = _core.asndarray(a1), _core.asndarray(a2)
    if a1.shape != a2.shape:
        return False
    eq = _ufuncs.equal(a1, a2)
    if equal_nan and a1.dtype.kind == "f" and a2.dtype.kind == "f":
        eq = _ufuncs.logical_or(eq, _ufuncs.logical_and(_ufuncs.isnan(a1),
                                                        _ufuncs.isnan(a2)))
    return bool(_reductions.all(eq))


def array_equiv(a1, a2):
    a1, a2 = _core.asndarray(a1), _core.asndarray(a2)
    try:
        _np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(_reductions.all(_ufuncs.equal(a1, a2)))


NATIVE += ["tile", "repeat", "meshgrid", "indices", "kron", "rot90", "tri",
           "average", "nan_to_num", "around", "round", "deg2rad", "rad2deg",
           "radians", "degrees", "sinc", "array_equal", "array_equiv"]
