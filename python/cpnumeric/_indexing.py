"""Integer-array and boolean indexing, gathers and scatters (take, put,
compress, nonzero, ...) on the runtime's gather calls and traced ops, and the
index helpers built from arithmetic (ravel_multi_index, unravel_index, ix_).

Index bounds are checked at the call, as NumPy does (indices computed by
pending work cost a sync for that; mode='wrap' or 'clip' needs none). Results
whose size depends on the data (nonzero, compress, boolean masks) count
first: a sync point."""

import numpy as _np

from . import _core, _jit, _manip, _reductions, _ufuncs
from ._core import c_strides, ndarray, prod
from ._library import eager, libcall, wrap

_MODES = {"raise": 0, "wrap": 1, "clip": 2}


def _as(a):
    return _core.asndarray(a)


def _values_for(values, dtype, safe=False):
    """The values of put/putmask/place in the target's dtype, as NumPy
    converts them: Python and NumPy scalars and lists element by element
    (OverflowError for -2 into uint64, TypeError for 1j into an integer
    array); arrays by an unsafe cast (put) or only a safe one (putmask and
    place, `safe`: TypeError for int64 values into a uint64 array)."""
    if isinstance(values, (ndarray, _np.ndarray)):
        if safe and not _np.can_cast(values.dtype, dtype, "safe"):
            what = "scalar" if values.ndim == 0 else "array data"
            raise TypeError(f"Cannot cast {what} from {values.dtype!r} to {dtype!r} "
                            "according to the rule 'safe'")
        return _as(values).astype(dtype, copy=False)
    if isinstance(values, _np.generic):
        return _as(_np.asarray(values).astype(dtype))
    return _as(_np.asarray(values, dtype=dtype))


def _index_array(indices):
    """Indices as an int64 array (TypeError for non-integer ones)."""
    ind = _as(indices)
    if ind._dtype.kind not in "iub":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return ind.astype(_np.int64, copy=False)


def _intp_indices(indices, casting):
    """Indices as take and put convert them (to intp): an array is cast
    under `casting` (take: 'same_kind', put: 'safe'; NumPy's TypeError
    otherwise), other data (lists, scalars, even [] or [1.0]) is converted
    element by element, as NumPy does."""
    if isinstance(indices, (ndarray, _np.ndarray)):
        dt = indices.dtype
        if not _np.can_cast(dt, _np.intp, casting):
            raise TypeError(f"Cannot cast array data from {dt!r} to "
                            f"{_np.dtype(_np.intp)!r} according to the rule {casting!r}")
        return _as(indices).astype(_np.int64, copy=False)
    return _as(_np.asarray(indices, dtype=_np.intp))


def _check_bounds(ind, n, axis):
    """IndexError at the call, as NumPy raises it: indices known here are
    checked at once; indices computed by pending work cost a sync (their
    least and greatest value). Under @jit (no sync) the gather itself checks
    and the error is raised when its result is read. The bounds of a whole
    traced array are kept on its value, so indexing with the same array
    again costs no sync. Returns the least index (None when unknown)."""
    if ind.size == 0:
        return None
    vals = ind._eager()
    if vals is not None:
        lo, hi = int(vals.min()), int(vals.max())
    elif _jit.tracing_here():
        return None
    else:
        node = ind._base.node if ind._whole else None
        known = node.bounds if node is not None else None
        if known is not None:
            lo, hi = known
        else:
            lo_a, hi_a = _reductions.amin(ind), _reductions.amax(ind)
            lo, hi = int(lo_a), int(hi_a)
            if node is not None:
                node.bounds = (lo, hi)
    for i in (lo, hi):
        if i < -n or i >= n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return lo


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
    return _manip.reshape_to(a, (prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])))


def take(a, indices, axis=None, out=None, mode="raise"):
    a = _as(a)
    _check_mode(mode)
    scalar = isinstance(indices, (int, _np.integer))
    ind = _intp_indices(indices, "same_kind")
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
    # _manip's functions on these traced arrays, not the methods (whose eager
    # dispatch costs a few us each).
    flat_ind = ind if ind.ndim == 1 else _manip.ravel(ind)
    r = _manip.reshape_to(libcall("take", [_three(a, axis), flat_ind],
                                  (prod(a._shape[:axis]), ind.size, prod(a._shape[axis + 1:])),
                                  a._dtype, [_MODES[mode], axis]), shape)
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
    return _manip.reshape(libcall("take_along", [a3, i3], i3._shape, arr._dtype, [axis]),
                          ishape)


def _put_flat(flat, ind, values, mode):
    """A new 1-D array: flat with flat[ind] = values (cycled)."""
    ind = _manip.ravel(ind)
    values = _manip.ravel(_values_for(values, flat._dtype))
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
    ind = _intp_indices(ind, "safe")
    if a.size == 0:
        if ind.size:
            raise IndexError("cannot replace elements of an empty array")
        return a if copy else None
    r = _manip.reshape(_put_flat(_manip.ravel(a), ind, v, mode), a._shape)
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
    values = _manip.ravel(_values_for(values, a._dtype, safe=True))
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
    vals = _manip.ravel(_values_for(vals, arr._dtype, safe=True))
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


def _nonzero_rows(a, by_dim=False):
    """(count, ndim) int64 multi-indices of a's nonzero elements (a sync:
    the count); by_dim: the transpose of a C-contiguous (ndim, count) array,
    NumPy's layout for argwhere (whose reshape copies)."""
    count = int(_reductions.count_nonzero(a))
    if count == 0 or a.ndim == 0:
        from ._creation import zeros
        r = zeros((a.ndim, count) if by_dim else (count, a.ndim), _np.int64)
    elif by_dim:
        r = libcall("nonzero", [a], (a.ndim, count), _np.int64, (1,))
    else:
        return libcall("nonzero", [a], (count, a.ndim), _np.int64)
    return r.T if by_dim else r


def nonzero(a):
    a = _as(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    if eager([a]):
        cols = _np.nonzero(a._eager())
        rows = cols[0].base
        if rows is None or rows.shape != (cols[0].size, a.ndim):
            return wrap(cols)
        # NumPy's columns of one (count, ndim) array, strided as theirs
        r = wrap(rows)
    else:
        r = _nonzero_rows(a)
    return tuple(r[:, d] for d in range(a.ndim))


def flatnonzero(a):
    return nonzero(_manip.ravel(_as(a)))[0]


def argwhere(a):
    a = _as(a)
    if a.ndim == 0:
        return _nonzero_rows(a.reshape(1), by_dim=True)[:, :0]
    if eager([a]):  # NumPy's layout (the transpose of (ndim, count)) kept
        return wrap(_np.argwhere(a._eager()))
    return _nonzero_rows(a, by_dim=True)


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
    cond = _manip.astype(cond[:n], bool, copy=False)  # traced: not the method
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
    if v.size == 0:  # NumPy's a.flat[...] = []: nothing written
        return
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
# NumPy's advanced indexing: integer arrays, boolean masks, ints, slices, None
# and Ellipsis in any mix. The key is brought to a normal form (_Key): the view
# of the slices, ints and new axes (arrays' axes kept whole), the integer arrays
# on that view's axes (masks become their nonzero() arrays) and where the
# broadcast index block goes in the result. Reads gather from the base buffer
# at the flat positions of the result's elements; writes scatter there.

_VALID_INDICES = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                  "(`None`) and integer or boolean arrays are valid indices")


def _shape_text(shape):
    """A shape as NumPy's indexing messages print it: (2,4), (3,)."""
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _key_item(k):
    """One key item as None, Ellipsis, a slice, an int, ("bool0", value),
    ("mask", bool array) or ("array", integer array); IndexError for the
    others, with NumPy's message."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, (bool, _np.bool_)):
        return ("bool0", bool(k))
    if isinstance(k, (int, _np.integer)):
        return int(k)
    if isinstance(k, (ndarray, _np.ndarray)):
        arr = _as(k)
        if arr._dtype.kind not in "iub":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    elif isinstance(k, (list, tuple)):
        try:
            arr = _as(_np.asarray(k)) if not any(isinstance(x, ndarray) for x in k) \
                else _as(k)
        except ValueError:
            raise IndexError(_VALID_INDICES) from None
        if arr.size == 0 and arr._dtype.kind == "f":
            arr = arr.astype(_np.int64)
        if arr._dtype.kind not in "iub":
            raise IndexError(_VALID_INDICES)
    else:
        raise IndexError(_VALID_INDICES)
    if arr._dtype.kind == "b":
        return ("bool0", bool(arr)) if arr.ndim == 0 else ("mask", arr)
    return ("array", arr.astype(_np.int64, copy=False))


class _Key:
    """An index with arrays in NumPy's normal form on array `a`:
    `basic` is the key of the view V that applies the slices, ints and new
    axes and keeps each array's axis whole; `arrays` pairs V's axes with their
    int64 indices (in range); `block` is the broadcast shape of the indices,
    placed at axis `at` of the result (0 unless the advanced items are
    adjacent in the key, as in NumPy); `shape` is the result's shape."""

    def __init__(self, a, key):
        items = [_key_item(k) for k in (key if isinstance(key, tuple) else (key,))]
        used = sum(1 if isinstance(k, (int, slice)) or (isinstance(k, tuple) and k[0] == "array")
                   else k[1].ndim if isinstance(k, tuple) and k[0] == "mask" else 0
                   for k in items)
        if used > a.ndim:
            raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, "
                             f"but {used} were indexed")
        ellipses = [i for i, k in enumerate(items) if k is Ellipsis]
        if len(ellipses) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if ellipses:
            i = ellipses[0]
            items[i:i + 1] = [slice(None)] * (a.ndim - used)
        self.basic, self.arrays, adv, at = [], [], [], None
        axis = vdim = pos = 0
        for k in items:
            if k is None or isinstance(k, slice):
                self.basic.append(k)
                axis += k is not None
                vdim += 1
                pos += 1
                continue
            if at is None:
                at = vdim
            if isinstance(k, int):
                self.basic.append(k)
                adv.append(pos)
                axis += 1
                pos += 1
            elif k[0] == "bool0":  # indexes a new length-1 axis
                self.basic.append(None)
                self.arrays.append((vdim, _as(_np.zeros(int(k[1]), _np.int64))))
                adv.append(pos)
                vdim += 1
                pos += 1
            else:
                if k[0] == "mask":
                    mask = k[1]
                    for i, d in enumerate(mask._shape):
                        if d != a._shape[axis + i]:
                            raise IndexError(
                                f"boolean index did not match indexed array along axis "
                                f"{axis + i}; size of axis is {a._shape[axis + i]} but size "
                                f"of corresponding boolean axis is {d}")
                    indices = nonzero(mask)  # in range by construction
                else:
                    ind, n = k[1], a._shape[axis]
                    lo = _check_bounds(ind, n, axis)
                    if ind.size and (lo is None or lo < 0):
                        ind = _ufuncs.where(_ufuncs.less(ind, 0), _ufuncs.add(ind, n), ind)
                    indices = (ind,)
                for ind in indices:
                    self.basic.append(slice(None))
                    self.arrays.append((vdim, ind))
                    adv.append(pos)
                    axis += 1
                    vdim += 1
                    pos += 1
        shapes = [ind._shape for _, ind in self.arrays]
        try:
            self.block = _np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast "
                             "together with shapes "
                             + "".join(_shape_text(s) + " " for s in shapes)) from None
        self.at = at if adv == list(range(adv[0], adv[-1] + 1)) else 0
        self.view = _manip.basic_view(a, tuple(self.basic))
        taken = {d for d, _ in self.arrays}
        self.rest = [d for d in range(self.view.ndim) if d not in taken]
        rest = [self.view._shape[d] for d in self.rest]
        self.shape = tuple(rest[:self.at]) + self.block + tuple(rest[self.at:])

    def layout(self):
        """NumPy's memory order of the result (mapiter's): the indexed
        dimensions outermost, then the others in the order of the view's
        strides, biggest first (stable); None when that is C order."""
        nb, at = len(self.block), self.at
        rest = [(r if r < at else r + nb, abs(self.view._strides[d]))
                for r, d in enumerate(self.rest)]
        order = list(range(at, at + nb)) + [
            r for r, _ in sorted(rest, key=lambda t: -t[1])]
        return None if order == list(range(len(self.shape))) else order

    def positions(self):
        """The result's elements' positions in the base buffer (int64, the
        result's shape or broadcastable to it)."""
        from ._creation import arange
        v, nd, nb = self.view, len(self.shape), len(self.block)
        total = None
        for r, d in enumerate(self.rest):
            if v._strides[d] == 0 or v._shape[d] == 1:
                continue
            where = r if r < self.at else r + nb
            coord = arange(v._shape[d], dtype=_np.int64).reshape(
                tuple(-1 if i == where else 1 for i in range(nd)))
            term = _ufuncs.multiply(coord, v._strides[d])
            total = term if total is None else _ufuncs.add(total, term)
        for d, ind in self.arrays:
            if v._strides[d] == 0:
                continue
            lead = (1,) * (self.at + nb - ind.ndim)
            term = ind.reshape(lead + ind._shape + (1,) * (nd - self.at - nb))
            if v._strides[d] != 1:
                term = _ufuncs.multiply(term, v._strides[d])
            total = term if total is None else _ufuncs.add(total, term)
        if total is None:
            from ._creation import zeros
            total = zeros((), _np.int64)
        if v._offset:
            total = _ufuncs.add(total, v._offset)
        return _manip.broadcast_to(total, self.shape)


def _flat_base(a):
    """The whole buffer under `a` as a 1-D view (positions index it)."""
    return a._view((prod(a._base.shape),), (1,), 0)


def _eager_key(a, key):
    """`key` with NumPy arrays in place of ours when `a` and every array in
    the key are small eager ones (NumPy indexes them at once); else None."""
    if a._eager() is None:
        return None
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if isinstance(k, ndarray):
            e = k._eager()
            if e is None:
                return None
            k = e
        elif isinstance(k, list) and any(isinstance(x, ndarray) for x in k):
            return None
        out.append(k)
    return tuple(out) if isinstance(key, tuple) else out[0]


def _c_rows(a):
    """Whether a[i]'s layout is C order (strides not growing inward): then
    a[index_array] is C-ordered in NumPy too, as take's result is."""
    st = [abs(t) for t in a._strides[1:]]
    return all(st[i] >= st[i + 1] for i in range(len(st) - 1))


def getitem(a, key):
    """a[key] for keys with integer arrays or boolean masks (copies)."""
    np_key = _eager_key(a, key)
    if np_key is not None:
        return wrap(a._eager()[np_key])
    if a._part is not None:  # .real/.imag of complex: index a copy
        return getitem(a.copy(), key)
    if (type(key) is ndarray and key._shape and key._dtype.kind in "iu"
            and a._shape and _c_rows(a)):
        # One integer index array: a take along axis 0 (its bounds checked
        # and negative indices wrapped there), without the general key's
        # steps (a[idx] of 64000 elements: 43 -> 40 us of recording).
        return take(a, key, axis=0)
    if not isinstance(key, tuple):
        k = _as(key) if isinstance(key, (ndarray, _np.ndarray)) else None
        if k is not None and k._dtype.kind == "b" and k._shape == a._shape and k.ndim:
            return compress(_manip.ravel(k), _manip.ravel(a))
    index = _Key(a, key)
    if prod(index.shape) == 0:
        from ._creation import zeros
        return zeros(index.shape, a._dtype)
    v = index.view
    if (len(index.arrays) == 1 and index.arrays[0][0] == index.at
            and v._strides == c_strides(v._shape)):
        # One index array in place on a contiguous view: a take along its
        # axis, C-ordered. NumPy puts the indexed axis outermost (A[:, idx]
        # is then not C-contiguous); gathered in that order, 2000 x 2000
        # by 1000 columns took 18.5 ms against 11.7 (docs/numpy-api.md).
        return take(v, index.arrays[0][1], axis=index.at, mode="clip")
    order = index.layout()
    positions = index.positions()
    if order is None:
        return take(_flat_base(a), positions, mode="clip")
    # NumPy's layout: gathered in `order` (C order of the permuted shape),
    # seen through the inverse permutation.
    got = take(_flat_base(a), positions._axes_view(order), mode="clip")
    return got._axes_view(_core._inverse_axes(order))


def setitem(a, key, value):
    """a[key] = value for keys with integer arrays or boolean masks."""
    if a._readonly:
        raise ValueError("assignment destination is read-only")
    np_key = _eager_key(a, key)
    if np_key is not None and not (isinstance(value, ndarray) and value._eager() is None):
        a._eager()[np_key] = value._eager() if isinstance(value, ndarray) else value
        return
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, _np.generic):
        # NumPy's conversion and errors (a NumPy scalar is cast as an array
        # with advanced keys: np.float64(300.0) wraps into int8)
        value = _np.array(value, dtype=a._dtype)
    if a._part is not None:
        tmp = a.copy()
        setitem(tmp, key, value)
        a[...] = tmp
        return
    if not isinstance(key, tuple) and isinstance(key, (ndarray, _np.ndarray)):
        mask = _as(key)
        if mask._dtype.kind == "b" and mask._shape == a._shape:  # 0-d too
            # NumPy's boolean assignment: a 0-d or 1-d value of one element
            # or one per True element (a sync: the count)
            v = _as(value)
            if v.ndim > 1:
                raise TypeError("NumPy boolean array indexing assignment requires a 0 "
                                f"or 1-dimensional input, input has {v.ndim} dimensions")
            if v.size == 1:
                a[...] = _ufuncs.where(mask, v.reshape(()).astype(a._dtype, copy=False), a)
                return
            positions = nonzero(_manip.ravel(mask))[0]
            if v.size != positions.size:
                raise ValueError(f"NumPy boolean array indexing assignment cannot assign "
                                 f"{v.size} input values to the {positions.size} output "
                                 "values where the mask is true")
            if positions.size:
                _core.complex_warning(v._dtype, a._dtype)
                put(a, positions, v)
            return
    if (type(key) is ndarray and key._shape and key._dtype.kind in "iu"
            and len(a._shape) == 1):
        _scatter_1d(a, key, value)
        return
    index = _Key(a, key)
    v, vshape = _values_shape(value, index.shape)
    if prod(index.shape) == 0:
        return
    _core.complex_warning(v._dtype, a._dtype)
    values = _manip.broadcast_to(v.reshape(vshape).astype(a._dtype, copy=False), index.shape)
    put(_flat_base(a), index.positions(), values, mode="clip")


def _values_shape(value, shape):
    """value as an array and the shape it takes to broadcast to an indexing
    result of `shape` (leading 1s dropped); NumPy's ValueError otherwise."""
    v = _as(value)
    vshape = v._shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    if not _core.broadcasts_to(vshape, shape):
        raise ValueError(f"shape mismatch: value array of shape {_shape_text(v._shape)} "
                         f"could not be broadcast to indexing result of shape "
                         f"{_shape_text(shape)}")
    return v, vshape


def _scatter_1d(a, key, value):
    """a[idx] = value for one integer index array into a 1-D array, the
    common scatter: the put call on the positions, without the general key's
    steps (and without the methods' eager dispatch: the arrays are traced)."""
    n = a._shape[0]
    v, vshape = _values_shape(value, key._shape)
    if prod(key._shape) == 0:
        return
    lo = _check_bounds(key, n, 0)  # on the key itself: its bounds are kept
    pos = key if key._dtype == _np.int64 else _manip.astype(key, _np.int64)
    if lo is None or lo < 0:
        pos = _ufuncs.where(_ufuncs.less(pos, 0), _ufuncs.add(pos, n), pos)
    if a._strides[0] != 1:
        pos = _ufuncs.multiply(pos, a._strides[0])
    if a._offset:
        pos = _ufuncs.add(pos, a._offset)
    _core.complex_warning(v._dtype, a._dtype)
    values = v
    if v._shape != vshape or v._dtype != a._dtype:   # (the usual value is neither)
        values = _manip.astype(_manip.reshape(v, vshape), a._dtype, copy=False)
    if values._shape != key._shape:
        values = _manip.broadcast_to(values, key._shape)
    if key.ndim != 1:
        pos, values = _manip.ravel(pos), _manip.ravel(values)
    flat = a if a._whole else _flat_base(a)
    r = libcall("put", [flat, pos, values], flat._shape, flat._dtype, [_MODES["clip"]])
    if flat._whole:   # flat[...] = r: the base's value is the call's
        flat._write(r._node())
    else:
        _manip.setitem(flat, Ellipsis, r)


NATIVE = ["take", "take_along_axis", "put", "put_along_axis", "putmask", "place",
          "choose", "select", "nonzero", "flatnonzero", "argwhere", "compress",
          "extract", "ix_", "ravel_multi_index", "unravel_index", "diag_indices",
          "diag_indices_from", "fill_diagonal", "tril_indices", "triu_indices",
          "tril_indices_from", "triu_indices_from", "mask_indices"]
__all__ = list(NATIVE)
