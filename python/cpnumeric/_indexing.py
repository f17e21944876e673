"""Integer-array and boolean indexing, gathers and scatters (take, put,
compress, nonzero, ...) on the runtime's gather calls and traced ops, and the
index helpers built from arithmetic (ravel_multi_index, unravel_index, ix_).

Index bounds are checked at the call, as NumPy does (indices computed by
pending work cost a sync for that; mode='wrap' or 'clip' needs none). Results
whose size depends on the data (nonzero, compress, boolean masks) count
first: a sync point."""

import numpy as _np

from . import _core, _jit, _manip, _reductions, _ufuncs
from ._core import ndarray, prod
from ._library import eager, libcall, wrap

_MODES = {"raise": 0, "wrap": 1, "clip": 2}


def _as(a):
    return _core.asndarray(a)


def _index_array(indices):
    """Indices as an int64 array (TypeError for non-integer ones)."""
    ind = _as(indices)
    if ind._dtype.kind not in "iub":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return ind.astype(_np.int64, copy=False)


def _check_bounds(ind, n, axis):
    """IndexError at the call, as NumPy raises it: indices known here are
    checked at once; indices computed by pending work cost a sync (their
    least and greatest value). Under @jit (no sync) the gather itself checks
    and the error is raised when its result is read."""
    if ind.size == 0:
        return
    vals = ind._eager()
    if vals is not None:
        lo, hi = int(vals.min()), int(vals.max())
    elif _jit.TRACING["function"] is not None:
        return
    else:
        lo_a, hi_a = _reductions.amin(ind), _reductions.amax(ind)
        lo, hi = int(lo_a), int(hi_a)
    for i in (lo, hi):
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


def _apply_mode(x, n, mode, message):
    """Indices x into an axis of size n under NumPy's clip mode: 'raise'
    checks them (a sync point; ValueError(message)), 'wrap' and 'clip' map
    them into range."""
    _check_mode(mode)
    if mode == "wrap":
        return _ufuncs.remainder(x, n)
    if mode == "clip":
        return _ufuncs.clip(x, 0, n - 1)
    if bool(_reductions.any(_ufuncs.logical_or(_ufuncs.less(x, 0),
                                               _ufuncs.greater_equal(x, n)))):
        raise ValueError(message)
    return x


def _three(a, axis):
    """a as (P, N, Q) around `axis`."""
    shape = a._shape
    return a.reshape(prod(shape[:axis]), shape[axis], prod(shape[axis + 1:]))


def take(a, indices, axis=None, out=None, mode="raise"):
    a = _as(a)
    _check_mode(mode)
    scalar = isinstance(indices, (int, _np.integer))
    ind = _index_array(indices)
    if eager([a, ind]) and out is None:
        return wrap(_np.take(a._eager(), ind._eager(), axis=axis, mode=mode))
    if axis is None:
        a, axis = _manip.ravel(a), 0
    axis = _manip.normalize_axis_index(axis, a.ndim)
    n = a._shape[axis]
    if n == 0 and ind.size:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode == "raise":
        _check_bounds(ind, n, axis)
    shape = a._shape[:axis] + ind._shape + a._shape[axis + 1:]
    if prod(shape) == 0:
        from ._creation import zeros
        return _core.store_out(zeros(shape, a._dtype), out)
    r = libcall("take", [_three(a, axis), _manip.ravel(ind)],
                (prod(a._shape[:axis]), ind.size, prod(a._shape[axis + 1:])), a._dtype,
                [_MODES[mode], axis]).reshape(shape)
    if scalar and not shape:
        return r
    return _core.store_out(r, out)


def take_along_axis(arr, indices, axis=-1):
    arr = _as(arr)
    ind = _index_array(indices)
    if eager([arr, ind]):
        return wrap(_np.take_along_axis(arr._eager(), ind._eager(), axis=axis))
    if axis is None:
        if ind.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = _manip.ravel(arr), 0
    if ind.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _manip.normalize_axis_index(axis, arr.ndim)
    others = _np.broadcast_shapes(*[tuple(s[i] if i != axis else 1
                                          for i in range(arr.ndim))
                                    for s in (arr._shape, ind._shape)])
    ashape = others[:axis] + (arr._shape[axis],) + others[axis + 1:]
    ishape = others[:axis] + (ind._shape[axis],) + others[axis + 1:]
    a3 = _three(_manip.broadcast_to(arr, ashape), axis)
    i3 = _three(_manip.broadcast_to(ind, ishape), axis)
    _check_bounds(ind, arr._shape[axis], axis)
    if prod(ishape) == 0:
        from ._creation import zeros
        return zeros(ishape, arr._dtype)
    return libcall("take_along", [a3, i3], i3._shape, arr._dtype, [axis]).reshape(ishape)


def _put_flat(flat, ind, values, mode):
    """A new 1-D array: flat with flat[ind] = values (cycled)."""
    ind = _manip.ravel(ind)
    values = _manip.ravel(_as(values).astype(flat._dtype, copy=False))
    if ind.size == 0 or values.size == 0:
        return flat.copy()
    if mode == "raise":
        _check_bounds(ind, flat.size, 0)
    if values.size < ind.size:
        from ._joining import tile
        values = tile(values, -(-ind.size // values.size))[:ind.size]
    elif values.size > ind.size:
        values = values[:ind.size]
    return libcall("put", [flat, ind, values], flat._shape, flat._dtype, [_MODES[mode]])


def put(a, ind, v, mode="raise", copy=False):
    """np.put (in place); `copy=True` returns the new array instead."""
    if not isinstance(a, ndarray):
        raise TypeError("argument a of put must be a cpnumeric array")
    _check_mode(mode)
    ind = _index_array(ind)
    if a.size == 0:
        if ind.size:
            raise IndexError("cannot replace elements of an empty array")
        return a if copy else None
    r = _put_flat(_manip.ravel(a), ind, v, mode).reshape(a._shape)
    if copy:
        return r
    a[...] = r


def put_along_axis(arr, indices, values, axis):
    ind = _index_array(indices)
    if axis is None:
        return put(arr, ind, values)
    axis = _manip.normalize_axis_index(axis, arr.ndim)
    if ind.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    shape = _np.broadcast_shapes(ind._shape, tuple(
        arr._shape[i] if i != axis else ind._shape[axis] for i in range(arr.ndim)))
    ind = _manip.broadcast_to(ind, shape)
    _check_bounds(ind, arr._shape[axis], axis)
    from ._creation import arange
    flat = _ufuncs.where(_ufuncs.less(ind, 0), _ufuncs.add(ind, arr._shape[axis]), ind)
    strides = _core.c_strides(arr._shape)
    for d in range(arr.ndim):
        coord = flat if d == axis else arange(shape[d]).reshape(
            tuple(-1 if i == d else 1 for i in range(arr.ndim)))
        term = _ufuncs.multiply(coord, strides[d])
        total = term if d == 0 else _ufuncs.add(total, term)
    vals = _manip.broadcast_to(_as(values).astype(arr._dtype, copy=False), shape)
    put(arr, total, vals)


def putmask(a, mask, values):
    if not isinstance(a, ndarray):
        raise TypeError("putmask: first argument must be an array")
    mask = _as(mask)
    if mask._shape != a._shape:
        raise ValueError("putmask: mask and data must be the same size")
    values = _manip.ravel(_as(values).astype(a._dtype, copy=False))
    if values.size == 0:
        return
    if values.size != a.size:
        from ._joining import tile
        values = tile(values, -(-a.size // values.size))[:a.size]
    a[...] = _ufuncs.where(mask, values.reshape(a._shape), a)


def place(arr, mask, vals):
    if not isinstance(arr, ndarray):
        raise TypeError("argument 1 must be a cpnumeric array")
    mask = _manip.ravel(_as(mask))
    vals = _manip.ravel(_as(vals))
    positions = nonzero(mask)[0]
    if positions.size == 0:
        return
    if vals.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    put(arr, positions, vals)


def choose(a, choices, out=None, mode="raise"):
    a = _index_array(a)
    if isinstance(choices, ndarray):
        choices = [choices[i] for i in range(choices._shape[0])]
    choices = [_as(c) for c in choices]
    n = len(choices)
    a = _apply_mode(a, n, mode, "invalid entry in choice array")
    r = choices[0]
    for i in range(1, n):
        r = _ufuncs.where(_ufuncs.equal(a, i), choices[i], r)
    shape = _np.broadcast_shapes(a._shape, *[c._shape for c in choices])
    dt = _np.result_type(*[c._dtype for c in choices])
    return _core.store_out(_manip.broadcast_to(_as(r), shape).astype(dt), out)


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [_as(c) for c in condlist]
    for i, c in enumerate(conds):
        if c._dtype.kind != "b":
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [_as(c) for c in choicelist]
    dt = _np.result_type(*[c._dtype for c in choices], _np.asarray(default).dtype)
    r = _as(default).astype(dt)
    for c, v in zip(reversed(conds), reversed(choices)):
        r = _ufuncs.where(c, v, r)
    shape = _np.broadcast_shapes(*[c._shape for c in conds], *[c._shape for c in choices])
    return _manip.broadcast_to(_as(r), shape).astype(dt)


def _nonzero_rows(a):
    """(count, ndim) int64 multi-indices of a's nonzero elements (a sync:
    the count)."""
    count = int(_reductions.count_nonzero(a))
    if count == 0 or a.ndim == 0:
        from ._creation import zeros
        return zeros((count, a.ndim), _np.int64)
    return libcall("nonzero", [a], (count, a.ndim), _np.int64)


def nonzero(a):
    a = _as(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    if eager([a]):
        return wrap(_np.nonzero(a._eager()))
    r = _nonzero_rows(a)
    return tuple(r[:, d] for d in range(a.ndim))


def flatnonzero(a):
    return nonzero(_manip.ravel(_as(a)))[0]


def argwhere(a):
    a = _as(a)
    if a.ndim == 0:
        return _nonzero_rows(a.reshape(1))[:, :0]
    if eager([a]):
        return wrap(_np.argwhere(a._eager()))
    return _nonzero_rows(a)


def compress(condition, a, axis=None, out=None):
    a, cond = _as(a), _as(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if eager([a, cond]) and out is None:
        return wrap(_np.compress(cond._eager(), a._eager(), axis=axis))
    if axis is not None:
        return take(a, nonzero(cond)[0], axis=axis, out=out)
    flat = _manip.ravel(a)
    n = min(flat.size, cond.size)
    if cond.size > flat.size and bool(_reductions.any(cond[flat.size:])):
        raise IndexError(f"index {flat.size} is out of bounds for axis 0 with size "
                         f"{flat.size}")
    cond = cond[:n].astype(bool, copy=False)
    count = int(_reductions.count_nonzero(cond))
    if count == 0:
        from ._creation import zeros
        return _core.store_out(zeros((0,), a._dtype), out)
    r = libcall("compress", [flat[:n], cond], (count,), a._dtype)
    return _core.store_out(r, out)


def extract(condition, arr):
    return compress(_manip.ravel(_as(condition)), _manip.ravel(_as(arr)))


def ix_(*args):
    out = []
    nd = len(args)
    for k, new in enumerate(args):
        new = _as(new)
        if new.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new._dtype.kind == "b":
            new = nonzero(new)[0]
        out.append(new.reshape((1,) * k + (new.size,) + (1,) * (nd - k - 1)))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = tuple(int(d) for d in dims)
    idx = [_index_array(i) for i in multi_index]
    if len(idx) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    strides = list(_core.c_strides(dims)) if order == "C" else \
        [prod(dims[:i]) for i in range(len(dims))]
    total = None
    for i, (x, d, m) in enumerate(zip(idx, dims, modes)):
        x = _apply_mode(x, d, m, "invalid entry in coordinates array")
        term = _ufuncs.multiply(x, strides[i])
        total = term if total is None else _ufuncs.add(total, term)
    return total


def unravel_index(indices, shape, order="C"):
    shape = (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    idx = _index_array(indices)
    size = prod(shape)
    if bool(_reductions.any(_ufuncs.logical_or(_ufuncs.less(idx, 0),
                                               _ufuncs.greater_equal(idx, size)))):
        raise ValueError(f"index out of bounds for array with size {size}")
    strides = _core.c_strides(shape) if order == "C" else \
        tuple(prod(shape[:i]) for i in range(len(shape)))
    return tuple(_ufuncs.remainder(_ufuncs.floor_divide(idx, s), d)
                 for s, d in zip(strides, shape))


def diag_indices(n, ndim=2):
    from ._creation import arange
    idx = arange(n)
    return (idx,) * ndim


def diag_indices_from(arr):
    arr = _as(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr._shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr._shape[0], arr.ndim)


def fill_diagonal(a, val, wrap=False):
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if a.ndim == 2:
        step = a._shape[1] + 1
        if not wrap:
            end = a._shape[1] * a._shape[1]
    else:
        if len(set(a._shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(_np.cumprod(a._shape[:-1]).tolist())
    flat = _manip.ravel(a)
    if flat._base is not a._base:
        from . import _fallback
        data = a._numpy()
        _np.fill_diagonal(data, _fallback._to_numpy(val), wrap=wrap)
        _fallback._warn("fill_diagonal on a non-contiguous array")
        a[...] = data
        return
    diag = flat[:end:step]
    v = _as(val)
    if v.size > 1:
        v = _manip.ravel(v)
        if v.size != diag.size:
            from ._joining import tile
            v = tile(v, -(-diag.size // v.size))[:diag.size]
    diag[...] = v if v.size != 1 else v.reshape(())


def _tri_indices(n, k, m, upper):
    from ._joining import tri
    mask = tri(n, m, k - 1 if upper else k, dtype=bool)
    if upper:
        mask = _ufuncs.logical_not(mask)
    return nonzero(mask)


def tril_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, False)


def triu_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, True)


def tril_indices_from(arr, k=0):
    arr = _as(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(arr._shape[-2], k, arr._shape[-1])


def triu_indices_from(arr, k=0):
    arr = _as(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(arr._shape[-2], k, arr._shape[-1])


def mask_indices(n, mask_func, k=0):
    from ._creation import ones
    m = ones((n, n), int)
    return nonzero(_ufuncs.not_equal(_as(mask_func(m, k)), 0))


# -- a[...] with arrays ------------------------------------------------------------

def _advanced_key(a, key):
    """(kind, data) for the integer-array and boolean keys handled natively:
    ("take", (axis, indices)), ("mask", mask) or ("flat", flat indices);
    None for the others."""
    if not isinstance(key, tuple):
        key = (key,)
    arrays = [i for i, k in enumerate(key)
              if isinstance(k, (ndarray, _np.ndarray, list))]
    if not arrays or any(k is Ellipsis or k is None for k in key):
        return None
    for i in range(len(key)):
        if i not in arrays and not (isinstance(key[i], slice) and key[i] == slice(None)):
            return None
    if len(arrays) == 1 and len(key) <= a.ndim:
        k = _as(key[arrays[0]])
        if k._dtype.kind == "b":
            if arrays[0] == 0 and k._shape == a._shape[:k.ndim] and len(key) == 1:
                return ("mask", k)
            return None
        return ("take", (arrays[0], k))
    if len(arrays) == len(key) == a.ndim:
        ks = [_as(k) for k in key]
        if any(k._dtype.kind not in "iu" for k in ks):
            return None
        shape = _np.broadcast_shapes(*[k._shape for k in ks])
        ks = [_manip.broadcast_to(k, shape) for k in ks]
        for k, d in zip(ks, a._shape):
            _check_bounds(k, d, 0)
        wrapped = [_ufuncs.where(_ufuncs.less(k, 0), _ufuncs.add(k, d), k)
                   for k, d in zip(ks, a._shape)]
        return ("flat", ravel_multi_index(wrapped, a._shape, mode="clip"))
    return None


def getitem(a, key):
    """a[key] for integer arrays and boolean masks; None when not native."""
    adv = _advanced_key(a, key)
    if adv is None:
        return None
    kind, data = adv
    if kind == "take":
        axis, ind = data
        return take(a, ind, axis=axis)
    if kind == "flat":
        return take(_manip.ravel(a), data)
    mask = data
    if mask.ndim == a.ndim:
        return compress(_manip.ravel(mask), _manip.ravel(a))
    flat_a = a.reshape((prod(a._shape[:mask.ndim]),) + a._shape[mask.ndim:])
    return take(flat_a, nonzero(_manip.ravel(mask))[0], axis=0)


def setitem(a, key, value):
    """a[key] = value for integer arrays and boolean masks; False when not
    native."""
    adv = _advanced_key(a, key)
    if adv is None:
        return False
    kind, data = adv
    if kind == "mask" and data._shape == a._shape:
        v = _as(value)
        if v.ndim == 0 or v._shape == a._shape:
            a[...] = _ufuncs.where(data, v.astype(a._dtype, copy=False), a)
            return True
        place(a, data, v)
        return True
    if kind == "take" and data[0] == 0 and a.ndim == 1:
        put(a, data[1], _as(value).astype(a._dtype, copy=False))
        return True
    if kind == "flat":
        put(a, data, _manip.broadcast_to(_as(value), data._shape))
        return True
    return False


NATIVE = ["take", "take_along_axis", "put", "put_along_axis", "putmask", "place",
          "choose", "select", "nonzero", "flatnonzero", "argwhere", "compress",
          "extract", "ix_", "ravel_multi_index", "unravel_index", "diag_indices",
          "diag_indices_from", "fill_diagonal", "tril_indices", "triu_indices",
          "tril_indices_from", "triu_indices_from", "mask_indices"]
__all__ = list(NATIVE)
