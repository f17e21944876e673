"""Joining, padding-free rearranging and comparison functions, built from
native ops (views, updates into a fresh array, ufuncs, reductions): every one
of them is traced and compiled, with NumPy's dtypes, shapes and errors."""

import math

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _errstate, _manip, _reductions, _ufuncs


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

def _concat_axes(arrs, nd):
    """The axis order, outermost first, of NumPy's concatenation result: its
    PyArray_CreateMultiSortedStridePerm, a stable insertion sort by the
    inputs' strides, biggest first, where an axis moves outward only if
    every input with extent on both axes agrees (C order wins a conflict);
    None for C order. Broadcast inputs (`np.broadcast_to(a, (3, n))`, stride
    0 outermost) give an F-ordered result, as in NumPy."""
    if nd < 2 or all(type(a) is _core.ndarray and a._whole for a in arrs):
        return None
    shapes, strides = [], []
    for a in arrs:
        if type(a) is not _core.ndarray or a._part is not None:
            return None
        shapes.append(a._shape)
        strides.append([abs(t) for t in (_core.c_strides(a._shape)
                                          if a._whole else a._strides)])

    def moves(ax0, ax1):  # outward: every input with extent on both agrees
        votes = [st[ax0] > st[ax1] for sh, st in zip(shapes, strides)
                 if sh[ax0] != 1 and sh[ax1] != 1]
        return all(votes) if votes else None
    perm = _core.axes_insertion_sort(list(range(nd)), moves)
    return None if perm == list(range(nd)) else perm


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
        axes = _concat_axes(arrs, nd)
        if axes is None:
            res = empty(tuple(shape), dt)
        else:  # NumPy's layout: a C-ordered base in `axes` order, viewed back
            res = empty(tuple(shape[k] for k in axes), dt)._axes_view(
                _core._inverse_axes(axes))
    pos = 0
    for a in arrs:
        n = a.shape[axis]
        if n:
            if out is None:  # a box of the fresh result: written directly
                box = list(res._shape)
                box[axis] = n
                piece = res._view(box, res._strides, res._offset + pos * res._strides[axis])
                piece._write(a._node_as(tuple(box), dt))
                _core.statement_end()
            else:
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
    if type(axis) is int and type(shift) is int:  # the common call, checked quickly
        total = {normalize_axis_index(axis, a.ndim): shift}
    else:
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
        if type(res) is _core.ndarray and res._whole:
            res = _roll_whole(res, ax, s)
            continue
        lo = [slice(None)] * a.ndim
        hi = [slice(None)] * a.ndim
        lo[ax], hi[ax] = slice(n - s, None), slice(None, n - s)
        res = concatenate((res[tuple(lo)], res[tuple(hi)]), ax)
    return res if res is not a else _manip.copy_array(a)


def _roll_whole(a, ax, s):
    """roll of a C-ordered whole array by 0 < s < n along `ax`: what
    concatenate((a[..., n-s:, ...], a[..., :n-s, ...]), ax) makes (a C-ordered
    result, its two boxes written directly), without its checks: np.roll is
    called in stencil loops, per step and axis."""
    from ._creation import empty
    shape, st = a._shape, a._strides
    n = shape[ax]
    res = empty(shape, a._dtype)
    for pos, start, m in ((0, n - s, s), (s, 0, n - s)):
        box = list(shape)
        box[ax] = m
        piece = a._view(box, st, a._offset + start * st[ax])
        dest = res._view(box, res._strides, res._offset + pos * res._strides[ax])
        dest._write(piece._node_as(tuple(box), a._dtype))
        _core.statement_end()
    return res


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
    with _np.errstate(invalid="ignore"), _errstate.quiet():
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
    # NumPy's tile: all ones is a copy in A's memory order; an empty A is
    # reshaped, not copied (a view of A, read-only where A is).
    if all(r == 1 for r in reps):
        return _manip.copy_array(_manip.reshape(A, shape), "K")
    if A.size == 0:
        return _manip.reshape(A, tuple(r * s for r, s in zip(reps, shape)))
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


class _Grid:
    """np.mgrid (dense) and np.ogrid (sparse): grids from slices, `a:b:c`
    stepping as arange does and `a:b:nj` giving n points from a to b
    inclusive, in NumPy's result dtype of the slices' numbers."""

    def __init__(self, sparse):
        self.sparse = sparse

    @staticmethod
    def _axis(key):
        """(points, step, start, dtype) of one slice."""
        start = 0 if key.start is None else key.start
        step = 1 if key.step is None else key.step
        if isinstance(step, complex):
            n = int(abs(step))
            dt = _np.result_type(start, key.stop, abs(step))
            return n, (key.stop - start) / float(n - 1) if n != 1 else 1, start, dt
        n = max(int(math.ceil((key.stop - start) / step)), 0)
        return n, step, start, _np.result_type(start, key.stop, step)

    def __getitem__(self, key):
        from ._creation import arange
        if isinstance(key, slice):
            n, step, start, dt = self._axis(key)
            return _ufuncs.add(_ufuncs.multiply(arange(n, dtype=dt), step), start).astype(
                dt, copy=False)
        axes = [self._axis(k) for k in key]
        dt = _np.result_type(*[a[3] for a in axes])
        nd = len(axes)
        out = []
        for i, (n, step, start, _) in enumerate(axes):
            g = _ufuncs.add(_ufuncs.multiply(arange(n, dtype=dt), step), start).astype(
                dt, copy=False)
            g = _manip.reshape(g, tuple(-1 if j == i else 1 for j in range(nd)))
            out.append(g if self.sparse else _manip.broadcast_to(g, tuple(a[0] for a in axes)))
        if self.sparse:
            return tuple(out)
        return stack(out) if out else _core.asndarray(_np.zeros((0,), dt))

    def __len__(self):
        return 0


mgrid = _Grid(False)
ogrid = _Grid(True)


class _AxisConcat:
    """np.r_ and np.c_: slices (arange, or linspace for `a:b:nj`), scalars
    and arrays concatenated along `axis`, each first made `ndmin`-d (a 1-d
    item's axis placed at `trans1d`), in the result dtype of the items
    (scalars weak). A first string sets axis[,ndmin[,trans1d]]; the matrix
    directives 'r' and 'c' fall back to NumPy (np.matrix results)."""

    def __init__(self, name, axis, ndmin, trans1d):
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def _upgrade(self, obj, ndmin, trans1d):
        """obj with at least ndmin dimensions, as NumPy's r_ adds them."""
        nd = obj.ndim
        if nd >= ndmin:
            return obj
        obj = _manip.reshape(obj, (1,) * (ndmin - nd) + obj.shape)
        if trans1d != -1:
            k2, k1 = ndmin - nd, trans1d
            if k1 < 0:
                k1 += k2 + 1
            order = list(range(ndmin))
            obj = _manip.transpose(obj, order[:k1] + order[k2:] + order[k1:k2])
        return obj

    def __getitem__(self, key):
        from ._creation import arange, linspace
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs, types = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):
                    from . import _fallback
                    _fallback._warn(f"np.{self.name}['{item}', ...] (np.matrix results)")
                    return getattr(_np, self.name)[_fallback._to_numpy(key)]
                try:
                    vec = [int(x) for x in item.split(",")]
                except ValueError:
                    raise ValueError(f"unknown special directive {item!r}") from None
                if len(vec) > 3:
                    raise ValueError(f"unknown special directive {item!r}")
                axis = vec[0]
                ndmin = vec[1] if len(vec) > 1 else ndmin
                trans1d = vec[2] if len(vec) > 2 else trans1d
                continue
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, (complex, _np.complexfloating)):
                    obj = linspace(start, item.stop, num=int(abs(step)))
                else:
                    obj = arange(start, item.stop, step)
                if ndmin > 1:
                    obj = _manip.reshape(obj, (1,) * (ndmin - 1) + obj.shape)
                    if trans1d != -1:
                        obj = _manip.swapaxes(obj, -1, trans1d)
                types.append(obj.dtype)
            elif isinstance(item, (int, float, complex, bool, _np.generic)):
                obj = item
                types.append(item)
            else:
                obj = self._upgrade(_core.asndarray(item), ndmin, trans1d)
                types.append(obj.dtype)
            objs.append(obj)
        dt = _np.result_type(*types) if types else None
        objs = [self._upgrade(_core.asndarray(o, dtype=dt), ndmin, -1) for o in objs]
        return concatenate(objs, axis=axis)

    def __len__(self):
        return 0


r_ = _AxisConcat("r_", 0, 1, -1)
c_ = _AxisConcat("c_", -1, 2, 0)


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
        scl = avg.dtype.type(a.size / avg.size)  # NumPy's ZeroDivisionError: no result
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
    from . import _jit
    if not _jit.tracing_here() and bool(_reductions.any(_ufuncs.equal(wsum, 0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")  # NumPy's check
    avg = _ufuncs.divide(_reductions.sum(_ufuncs.multiply(a, w).astype(rt),
                                         axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _core.asndarray(x)
    if x.dtype.kind == "c":
        # NumPy's: each part on its own, with its float dtype's limits.
        parts = [nan_to_num(p, True, nan, posinf, neginf)._node()
                 for p in (x.real, x.imag)]
        r = _core.ndarray._from_node(_core.record("complex", parts, x._shape, x._dtype),
                               x._shape, x._dtype)
        if not copy:
            x[...] = r
            return x
        return r
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
    if a.dtype.kind in "iu":
        if decimals >= 0:
            return _manip.copy_array(a) if out is None else _assign(out, a)
        from . import _fallback
        return _fallback.call_numpy("round", (a, decimals), {"out": out})
    if a.dtype.kind == "c" and (out is None or out.dtype.kind == "c"):
        # NumPy rounds the parts one by one (a complex multiply by 10 would
        # turn inf+0j into inf+nanj)
        from ._creation import empty
        ret = empty(a.shape, a.dtype) if out is None else out
        ret.real[...] = around(a.real, decimals)
        ret.imag[...] = around(a.imag, decimals)
        return ret
    if decimals == 0:  # bool too, as NumPy's: rint's float16
        return _ufuncs.rint(a, out=out)
    if a.dtype.kind == "b":  # NumPy's steps into a bool array: its cast error
        from ._creation import empty
        ret = empty(a.shape, bool) if out is None else out
        f = 10.0 ** abs(decimals)
        first, last = ((_ufuncs.multiply, _ufuncs.divide) if decimals > 0
                       else (_ufuncs.divide, _ufuncs.multiply))
        first(a, f, out=ret)
        _ufuncs.rint(ret, out=ret)
        return last(ret, f, out=ret)
    f = a.dtype.type(10.0 ** abs(decimals))
    if decimals > 0:
        return _ufuncs.divide(_ufuncs.rint(_ufuncs.multiply(a, f)), f, out=out)
    return _ufuncs.multiply(_ufuncs.rint(_ufuncs.divide(a, f)), f, out=out)


def _assign(out, a):
    out[...] = a
    return out


round = around  # noqa: A001


# NumPy's ufuncs with float loops (_ufuncs._Scaled).
deg2rad, rad2deg = _ufuncs.deg2rad, _ufuncs.rad2deg
radians, degrees = _ufuncs.radians, _ufuncs.degrees


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


# -- splitting, axes, polynomials, statistics ---------------------------------------

def array_split(ary, indices_or_sections, axis=0):
    a = _core.asndarray(ary)
    axis = normalize_axis_index(axis, a.ndim)
    n = a.shape[axis]
    if _np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = [0]
        for s in sizes:
            bounds.append(bounds[-1] + s)
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx = [slice(None)] * a.ndim
        idx[axis] = slice(lo, hi)
        out.append(a[tuple(idx)])
    return out


def split(ary, indices_or_sections, axis=0):
    a = _core.asndarray(ary)
    if _np.ndim(indices_or_sections) == 0:
        n = a.shape[normalize_axis_index(axis, a.ndim)]
        if n % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = _core.asndarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    a = _core.asndarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    a = _core.asndarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def rollaxis(a, axis, start=0):
    a = _core.asndarray(a)
    n = a.ndim
    axis = normalize_axis_index(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _np.exceptions.AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _manip.transpose(a, axes)


def matrix_transpose(x):
    x = _core.asndarray(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional, but it is "
                         f"{x.ndim}")
    return _manip.swapaxes(x, -1, -2)


def ediff1d(ary, to_end=None, to_begin=None):
    a = _manip.ravel(_core.asndarray(ary))
    parts = []
    if to_begin is not None:
        parts.append(_manip.ravel(_core.asndarray(to_begin)).astype(a.dtype))
    parts.append(_ufuncs.subtract(a[1:], a[:-1]))
    if to_end is not None:
        parts.append(_manip.ravel(_core.asndarray(to_end)).astype(a.dtype))
    return parts[0] if len(parts) == 1 else concatenate(parts)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _core.asndarray(y)
    axis = normalize_axis_index(axis, y.ndim)
    hi = [slice(None)] * y.ndim
    lo = [slice(None)] * y.ndim
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    if x is None:
        d = dx
    else:
        x = _core.asndarray(x)
        if x.ndim == 1:
            d = diff(x)
            shape = [1] * y.ndim
            shape[axis] = d.shape[0]
            d = _manip.reshape(d, tuple(shape))
        else:
            d = diff(x, axis=axis)
    return _reductions.sum(_ufuncs.multiply(d, _ufuncs.add(y[tuple(hi)],
                                                            y[tuple(lo)])) / 2.0,
                           axis=axis)


def polyval(p, x):
    p, x = _core.asndarray(p), _core.asndarray(x)
    from ._creation import zeros_like
    y = zeros_like(x)
    for i in range(p.shape[0]):
        y = _ufuncs.add(_ufuncs.multiply(y, x), p[i])
    return y


def vander(x, N=None, increasing=False):
    from ._creation import arange
    x = _core.asndarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else int(N)
    dt = _np.promote_types(x.dtype, int)  # NumPy's result type
    powers = arange(N) if increasing else arange(N - 1, -1, -1)
    return _ufuncs.power(x.astype(dt)[:, None], powers[None, :].astype(
        dt if dt.kind in "iu" else _np.int64))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
        aweights=None, *, dtype=None):
    if fweights is not None or aweights is not None:
        from . import _fallback
        return _fallback.call_numpy("cov", (m, y), dict(
            rowvar=rowvar, bias=bias, ddof=ddof, fweights=fweights,
            aweights=aweights, dtype=dtype))
    m = _core.asndarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    dt = _np.dtype(dtype) if dtype is not None else _np.result_type(m.dtype,
                                                                     _np.float64)
    X = atleast_2d(m).astype(dt)
    if not rowvar and X.shape[0] != 1:
        X = _manip.transpose(X)
    if y is not None:
        Y = atleast_2d(_core.asndarray(y)).astype(dt)
        if not rowvar and Y.shape[0] != 1:
            Y = _manip.transpose(Y)
        X = concatenate((X, Y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = X.shape[1] - ddof
    X = _ufuncs.subtract(X, _reductions.mean(X, axis=1, keepdims=True))
    c = _manip.matmul(X, _manip.transpose(X))
    if fact <= 0:  # NumPy's warnings: c * (1 / 0.0)
        _errstate.warn_if(_core.asndarray(True), "Degrees of freedom <= 0 for slice")
        c = _ufuncs.multiply(c, _ufuncs.divide(dt.type(1), dt.type(0)))
    else:
        c = _ufuncs.divide(c, dt.type(fact))
    return _manip.squeeze(c)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _ufuncs.divide(c, c)
    d = _manip.diagonal(c)
    s = _ufuncs.sqrt(d)
    c = _ufuncs.divide(_ufuncs.divide(c, s[:, None]), s[None, :])
    return _ufuncs.clip(c, -1, 1)


def real(val):
    """The real part: a view for arrays (as `val.real`); Python and NumPy
    scalars give NumPy's scalar."""
    if not isinstance(val, _core.ndarray) and _np.ndim(val) == 0:
        return _np.real(val)
    v = _core.asndarray(val)
    if v._dtype.kind == "c":
        return v.real
    return v[...] if v.ndim else v


def imag(val):
    """The imaginary part: a view of complex arrays, read-only zeros of real
    ones (as `val.imag`)."""
    if not isinstance(val, _core.ndarray) and _np.ndim(val) == 0:
        return _np.imag(val)
    return _core.asndarray(val).imag


def _nan_reduce(kind, a, axis, dtype, keepdims, fill):
    """The reduction with NaNs replaced by `fill` (integers have none)."""
    a = _core.asndarray(a)
    if a.dtype.kind in "fc":  # complex: NaN in either part (NumPy's _replace_nan)
        a = _ufuncs.where(_ufuncs.isnan(a), a.dtype.type(fill), a)
    kw = {"axis": axis, "keepdims": keepdims}
    if dtype is not None:
        kw["dtype"] = dtype
    return getattr(_reductions, kind)(a, **kw)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    return _nan_reduce("sum", a, axis, dtype, keepdims, 0)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _nan_reduce("prod", a, axis, dtype, keepdims, 1)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = _core.asndarray(a)
    if a.dtype.kind not in "fc":
        return _reductions.mean(a, axis=axis, keepdims=keepdims)
    s = nansum(a, axis, dtype, keepdims=keepdims)
    n = _reductions.sum(_ufuncs.logical_not(_ufuncs.isnan(a)), axis=axis,
                        keepdims=keepdims)
    _errstate.warn_if(_reductions.any(_ufuncs.equal(n, 0)), "Mean of empty slice")
    with _np.errstate(invalid="ignore", divide="ignore"), _errstate.quiet():
        return _reductions.by_count(s, n)


def _nan_extreme(kind, a, axis, keepdims):
    a = _core.asndarray(a)
    if a.dtype.kind not in "fc":
        return getattr(_reductions, kind)(a, axis=axis, keepdims=keepdims)
    fill = -_np.inf if kind == "max" else _np.inf
    if a.dtype.kind == "c":  # NumPy's fmin/fmax order: +-(inf+infj) loses every tie
        fill = complex(fill, fill)
    r = _nan_reduce(kind, a, axis, None, keepdims, fill)
    all_nan = _reductions.all(_ufuncs.isnan(a), axis=axis, keepdims=keepdims)
    _errstate.warn_if(_reductions.any(all_nan), "All-NaN slice encountered")
    return _ufuncs.where(all_nan, a.dtype.type(_np.nan), r)


def nanmax(a, axis=None, out=None, keepdims=False):
    return _nan_extreme("max", a, axis, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False):
    return _nan_extreme("min", a, axis, keepdims)


NATIVE += ["array_split", "split", "hsplit", "vsplit", "dsplit", "rollaxis",
           "matrix_transpose", "ediff1d", "trapezoid", "polyval", "vander", "cov",
           "corrcoef", "real", "imag", "nansum", "nanprod", "nanmean", "nanmax",
           "nanmin"]
