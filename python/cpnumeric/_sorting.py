"""Sorting, searching, scans, order statistics and set operations, on the
runtime's sorting and gathering calls (cpn.libcall) and traced ops.

Functions whose result size depends on the data (unique, the set operations,
bincount without minlength) count first: a sync point, as in any library
that returns an exact-size array."""

import builtins
import collections
import operator

import numpy as _np

from . import _core, _errstate, _manip, _reductions, _ufuncs
from ._core import ndarray, prod, record
from ._library import eager, libcall, rows, wrap


def _as(a):
    return _core.asndarray(a)


def _flat_or_axis(a, axis):
    if axis is None:
        return _manip.ravel(a), -1
    return a, axis


def _whole_1d(a, axis):
    """A whole traced 1-D array sorted along its only axis (np.sort(x), the
    usual call): _rows1d records it."""
    return (a._whole and len(a._shape) == 1 and a._shape[0] > 0
            and a._base.np is None and a._dtype != _np.float16
            and (axis is None or axis == -1 or axis == 0))


def _rows1d(a, name, dtype, args=()):
    """The runtime's `name` call on a whole traced 1-D array: the ops that
    rows() and libcall() record for it (a (1, n) view, the call, the result
    viewed as (n,)), without their views and checks: ~50 Python calls, ~10
    us, for a sort of x down to ~10."""
    n = a._shape[0]
    dt = _np.dtype(dtype)
    view = record("view", [a._base.node], (1, n), a._base.dtype, [0, n, 1])
    node = record("libcall", [view], (1, n), dt, list(args),
                  f"{name}_{_core.dtype_key(a._dtype)}")
    return ndarray._from_node(node, (1, n), dt)._view((n,), (1,), 0)


# -- sorting -------------------------------------------------------------------

def _sort_rows(a, axis, name, dtype, kth=None):
    """The runtime's `name` call on the rows of `a` along `axis`; `kth`: the
    ranks a partition puts in place (negative ones count from the end)."""
    a, axis = _flat_or_axis(a, axis)
    if a.ndim == 0:
        raise _np.exceptions.AxisError("axis -1 is out of bounds for array of "
                                       "dimension 0")
    two, back = rows(a, axis)
    if two.size == 0:
        from ._creation import zeros
        return back(zeros(two._shape, dtype))
    args = ()
    if kth is not None:
        n = two._shape[1]
        args = sorted({int(k) % n for k in _np.atleast_1d(_np.asarray(kth)).tolist()})
    return back(libcall(name, [two], two._shape, dtype, args))


def _sort_copy(a, axis, name, kth=None):
    """sort or partition in the layout of NumPy's a.copy(order='K'), which
    np.sort and np.partition sort in place: a reshape of the sort of a
    transposed array copies, as NumPy's does (fuzz 1080:7990)."""
    axes = _manip._axis_order(a, "K") if axis is not None else None
    if axes is None:
        return _sort_rows(a, axis, name, a._dtype, kth)
    axis = _manip.normalize_axis_index(axis, a.ndim)
    t = a._axes_view(axes)
    r = _sort_rows(t, axes.index(axis), name, a._dtype, kth)
    return r._axes_view(_core._inverse_axes(axes))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    a = _as(a)
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if _whole_1d(a, axis):
        return _rows1d(a, "sort", a._dtype)
    if eager([a]):
        return wrap(_np.sort(a._eager(), axis=axis, kind=kind, stable=stable))
    return _sort_copy(a, axis, "sort")


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Stable whatever `kind` (NumPy's quicksort orders ties unspecified)."""
    a = _as(a)
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if a.ndim == 0:  # NumPy's argsort sees a 0-d array as 1-D
        a = a.reshape(1)
    if _whole_1d(a, axis):
        return _rows1d(a, "argsort", _np.int64)
    if eager([a]):
        return wrap(_np.argsort(a._eager(), axis=axis, kind="stable"))
    return _sort_rows(a, axis, "argsort", _np.int64)


def _check_kth(a, kth, axis):
    n = a.size if axis is None else a._shape[
        _manip.normalize_axis_index(axis, a.ndim)]
    for k in _np.atleast_1d(_np.asarray(kth)).tolist():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """Every element before each kth is no larger, every one after no
    smaller (NumPy's contract; the order inside each part is unspecified).
    A selection in the runtime (Sort.cpp), not a sort: long rows are split
    over threads around brackets of the kth ranks."""
    a = _as(a)
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    _check_kth(a, kth, axis)
    if _whole_1d(a, axis):
        n = a._shape[0]
        return _rows1d(a, "partition", a._dtype, sorted(
            {int(k) % n for k in _np.atleast_1d(_np.asarray(kth)).tolist()}))
    if eager([a]):
        return wrap(_np.partition(a._eager(), kth, axis=axis))
    return _sort_copy(a, axis, "partition", kth)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    a = _as(a)
    _check_kth(a, kth, axis)
    return argsort(a, axis)


def lexsort(keys, axis=-1):
    if isinstance(keys, ndarray):
        keys = [keys[i] for i in range(keys._shape[0])]
    keys = [_as(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if any(k.ndim != 1 for k in keys) or axis not in (-1, 0):
        from . import _fallback
        return _fallback.call_numpy("lexsort", (keys,), {"axis": axis})
    n = keys[0]._shape[0]
    if any(k._shape[0] != n for k in keys):
        raise ValueError("all keys need to be the same shape")
    from ._indexing import take
    idx = argsort(keys[0])
    for k in keys[1:]:
        idx = take(idx, argsort(take(k, idx)))
    return idx


def searchsorted(a, v, side="left", sorter=None):
    a = _as(a)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if type(v) is int and not -2**63 <= v < 2**64:
        if a._dtype.kind == "c":  # NumPy compares as Python objects
            raise TypeError("'<' not supported between instances of 'complex' and 'int'")
        v = float(v)  # NumPy compares it exactly; no element is as large
    v = _as(v)
    if eager([a, v]) and sorter is None:
        return wrap(_np.searchsorted(a._eager(), v._eager(), side=side))
    if sorter is not None:
        from ._indexing import take
        a = take(a, sorter)
    dt = _np.result_type(a._dtype, v._dtype)
    a, vv = a.astype(dt, copy=False), v.astype(dt, copy=False)
    if vv.size == 0 or a.size == 0:
        from ._creation import zeros
        return zeros(v._shape, _np.int64)
    flat = _manip.ravel(vv)
    r = libcall("searchsorted", [a.reshape(1, -1), flat.reshape(1, -1)], (1, flat.size),
                _np.int64, [side == "right"]).reshape(v._shape)
    return r  # a 0-d result for a scalar `v`, standing in for its np.int64


def digitize(x, bins, right=False):
    x, bins = _as(x), _as(bins)
    if bins.ndim != 1:
        raise ValueError("bins must be 1d")
    if x._dtype.kind == "c":
        raise TypeError("x may not be complex")
    d = _ufuncs.subtract(bins[1:], bins[:-1]) if bins.size > 1 else None
    if d is None or bool(_reductions.all(_ufuncs.greater_equal(d, 0))):
        return searchsorted(bins, x, side="left" if right else "right")
    if bool(_reductions.all(_ufuncs.less_equal(d, 0))):
        r = searchsorted(bins[::-1], x, side="left" if right else "right")
        return _ufuncs.subtract(bins.size, r)
    raise ValueError("bins must be monotonically increasing or decreasing")


# -- scans -----------------------------------------------------------------------

def _scan_dtype(a, dtype):
    if dtype is not None:
        return _np.dtype(dtype)
    if a._dtype.kind == "b" or (a._dtype.kind == "i" and a._dtype.itemsize < 8):
        return _np.dtype(_np.int64)
    if a._dtype.kind == "u" and a._dtype.itemsize < 8:
        return _np.dtype(_np.uint64)
    return a._dtype


def scan_name(name, dt):
    """The runtime scan that gives NumPy's `name` (cumsum, cumprod, ...) in
    dtype `dt`: or/and for bools (NumPy's add and multiply of them), the
    float16 ones rounding every partial result to float16 as NumPy's do."""
    if dt.kind == "b":
        return {"cumsum": "cummax", "cumprod": "cummin"}.get(name, name)
    if dt == _np.float16 and name in ("cumsum", "cumprod"):
        return name + "_half"
    return name


def _scan(name, a, axis, dtype, out):
    a = _as(a)
    dt = _scan_dtype(a, dtype)
    if eager([a]) and out is None:
        return wrap(getattr(_np, name)(a._eager(), axis=axis, dtype=dt))
    if axis is None:
        a, axis = _manip.ravel(a), 0
    if a.ndim == 0:
        a = a.reshape(1)
    return _core.store_out(scan_rows(a.astype(dt, copy=False), axis, scan_name(name, dt), dt,
                                     out is None), out)


def scan_rows(a, axis, name, dt, keep_order=True):
    """The runtime scan `name` of `a` along `axis`, in dtype `dt`. With
    keep_order, the result has NumPy's order='K' layout: the scan of the
    transposed view, transposed back (cumsum or minimum.accumulate of a
    transposed array keeps its layout, so a reshape of it copies as NumPy's)."""
    order = _core.k_order([a], a._shape) if keep_order else None
    if order is not None:
        axis = order.index(_manip.normalize_axis_index(axis, a.ndim))
        r = _sort_rows(a._axes_view(order), axis, name, dt)
        return r._axes_view(_core._inverse_axes(order))
    return _sort_rows(a, axis, name, dt)


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("cumprod", a, axis, dtype, out)


def _cumulative(name, x, axis, dtype, out, include_initial):
    x = _as(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension "
                             "``axis`` argument is required.")
        axis = 0
    r = _scan(name, x, axis, dtype, None)
    if include_initial:
        from ._creation import full
        from ._joining import concatenate
        ax = _manip.normalize_axis_index(axis, max(x.ndim, 1))
        shape = list(r._shape)
        shape[ax] = 1
        r = concatenate([full(shape, 0 if name == "cumsum" else 1, r._dtype), r], axis=ax)
    return _core.store_out(r, out)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("cumsum", x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative("cumprod", x, axis, dtype, out, include_initial)


def _nan_as(a, value):
    a = _as(a)
    if a._dtype.kind not in "fc":  # NumPy's _replace_nan: every inexact dtype
        return a
    return _ufuncs.where(_ufuncs.isnan(a), value, a)


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_nan_as(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_nan_as(a, 1), axis, dtype, out)


# -- order statistics --------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(a, q, axis, method, keepdims, nan_skip, out):
    a = _as(a)
    if method not in _METHODS:
        from . import _fallback
        name = "nanquantile" if nan_skip else "quantile"
        return _fallback.call_numpy(name, (a, q), {"axis": axis, "method": method,
                                                   "keepdims": keepdims, "out": out})
    if eager([a]) and out is None and not isinstance(q, ndarray):  # small: NumPy's
        return wrap(getattr(_np, "nanquantile" if nan_skip else "quantile")(
            a._eager(), q, axis=axis, method=method, keepdims=keepdims))
    weak = isinstance(q, (float, int)) and not isinstance(q, bool)
    qs = _np.asarray(q._numpy() if isinstance(q, ndarray) else q, dtype=_np.float64)
    if ((qs < 0) | (qs > 1)).any() or _np.isnan(qs).any():
        raise ValueError("Quantiles must be in the range [0, 1]")
    if not nan_skip:  # nanquantile takes another path for empty arrays
        _ureduce_check(a, axis)
    if method in ("lower", "higher", "nearest"):  # picks elements: a's dtype
        dt = a._dtype
    else:  # NumPy's result_type(a, q), q a weak scalar or a float64 array
        dt = _np.result_type(a._dtype, 0.0 if weak else _np.float64)
    nd = a.ndim
    axes = tuple(range(nd)) if axis is None else _manip.normalize_axis_tuple(axis, nd)
    keep = [i for i in range(nd) if i not in axes]
    moved = _manip.transpose(a, keep + list(axes))
    lead = tuple(a._shape[i] for i in keep)
    n = prod(a._shape[i] for i in axes)
    two = moved.reshape(prod(lead), n)
    if n == 0 and not nan_skip:  # NumPy indexes the empty sorted rows
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    if n == 0:
        from ._creation import full
        res = full(qs.shape + lead, _np.nan, dt)
    elif qs.size == 0:  # no quantiles asked for: an empty result
        from ._creation import empty
        res = empty(qs.shape + lead, dt)
    else:
        skip_nan = nan_skip and two._dtype.kind == "f"
        if skip_nan:  # the positions depend on the data
            s = sort(two, axis=-1)
        else:  # only the ranks the quantiles read need their sorted elements
            ranks = set()
            for qv in qs.ravel().tolist():
                pos = qv * (n - 1)
                ranks |= {int(_np.floor(pos)), int(_np.ceil(pos)), int(_np.rint(pos))}
            s = partition(two, sorted(ranks), axis=-1)
        if skip_nan:
            valid = _reductions.sum(_ufuncs.logical_not(_ufuncs.isnan(two)), axis=-1,
                                    keepdims=True)
            _errstate.warn_if(_reductions.any(_ufuncs.equal(valid, 0)),
                              "All-NaN slice encountered")
        else:
            valid = None
        picks = [_pick(s, float(qv), n, valid, method, dt) for qv in qs.ravel()]
        from ._joining import stack
        res = stack(picks).reshape(qs.shape + lead)
        if valid is None and two._dtype.kind == "f":  # a NaN anywhere: NaN
            bad = _reductions.any(_ufuncs.isnan(two), axis=-1)
            res = _ufuncs.where(bad.reshape(lead), _np.nan, res)
    if keepdims:
        shape = list(a._shape)
        for i in axes:
            shape[i] = 1
        res = res.reshape(qs.shape + tuple(shape))
    return _core.store_out(res.astype(dt, copy=False), out)


def _pick(s, q, n, valid, method, dt):
    """The q-quantile of each row of the sorted (P, n) `s`; rows hold
    `valid` numbers (NaN sorted after them) when given."""
    from ._indexing import take_along_axis

    def at(i):
        if valid is None:
            return s[:, int(i)]
        return take_along_axis(s, i.astype(_np.int64).reshape(-1, 1), axis=-1)[:, 0]
    if valid is None:
        pos = q * (n - 1)
        lo, hi = _np.floor(pos), _np.ceil(pos)
    else:
        last = _ufuncs.maximum(_ufuncs.subtract(valid[:, 0], 1), 0).astype(dt)
        pos = _ufuncs.multiply(last, q)
        lo, hi = _ufuncs.floor(pos), _ufuncs.ceil(pos)
    if method == "lower":
        r = at(lo)
    elif method == "higher":
        r = at(hi)
    elif method == "nearest":
        r = at(_ufuncs.rint(pos) if valid is not None else _np.rint(pos))
    else:  # NumPy's lerp: a + (b - a) t, from b's side when t >= 0.5, with
        # b - a in the input's dtype and t in the result's
        a, b = at(lo), at(hi)
        if method == "midpoint":
            t = dt.type(0.5)
        elif valid is None:
            t = dt.type(pos - lo)
        else:
            t = _ufuncs.subtract(pos, lo).astype(dt, copy=False)
        d = _ufuncs.subtract(b, a)
        r = _ufuncs.where(_ufuncs.greater_equal(t, 0.5),
                          _ufuncs.subtract(b, _ufuncs.multiply(d, _ufuncs.subtract(
                              dt.type(1), t))),
                          _ufuncs.add(a, _ufuncs.multiply(d, t)))
        r = _ufuncs.where(_ufuncs.equal(a, b), a, r)
    if valid is not None:
        r = _ufuncs.where(_ufuncs.equal(valid[:, 0], 0), _np.nan, r)
    return r.astype(dt, copy=False)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    if weights is not None:
        from . import _fallback
        return _fallback.call_numpy("quantile", (a, q), {"axis": axis, "weights": weights,
                                                         "method": method})
    return _quantile(a, q, axis, method, keepdims, False, out)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    q = _np.true_divide(q._numpy() if isinstance(q, ndarray) else q, 100)
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights)


def _median_operand(a):
    """NumPy's median is the mean of the middle elements: of bool ones too
    (as 0 and 1), where quantile raises (no bool subtract)."""
    a = _as(a)
    return a.astype(_np.uint8) if a._dtype.kind == "b" else a


def _ureduce_check(a, axis):
    """NumPy's _ureduce (median, quantile, ...) merges several reduced axes
    with reshape(kept + (-1,)), which raises for an empty array whose kept
    dimensions hold no element."""
    if axis is None or a.size or isinstance(axis, (int, _np.integer)):
        return
    axes = _manip.normalize_axis_tuple(axis, a.ndim)
    kept = [a._shape[i] for i in range(a.ndim) if i not in axes]
    if len(axes) > 1 and 0 in kept:
        raise ValueError(f"cannot reshape array of size 0 into shape "
                         f"({','.join(map(str, kept))},newaxis)")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's median: the mean (np.mean: integers converted to float64
    before the sum) of the one or two middle elements of each partitioned
    row, NaN where the row has a NaN; not quantile's lerp, whose int64
    b - a overflows near the limits."""
    a = _median_operand(a)
    _ureduce_check(a, axis)
    if a.size == 0:  # NumPy's median is then a mean of no elements
        return _reductions.mean(a, axis, out=out, keepdims=keepdims)
    if eager([a]) and out is None:  # small: NumPy's
        return wrap(_np.median(a._eager(), axis=axis, keepdims=keepdims))
    nd = a.ndim
    axes = tuple(range(nd)) if axis is None else _manip.normalize_axis_tuple(axis, nd)
    keep = [i for i in range(nd) if i not in axes]
    lead = tuple(a._shape[i] for i in keep)
    n = prod(a._shape[i] for i in axes)
    two = _manip.transpose(a, keep + list(axes)).reshape(prod(lead), n)
    lo, hi = (n - 1) // 2, n // 2
    s = partition(two, sorted({lo, hi}), axis=-1)
    res = _reductions.mean(s[:, lo:hi + 1], axis=-1)
    if two._dtype.kind in "fc":  # a NaN anywhere: NaN
        res = _ufuncs.where(_reductions.any(_ufuncs.isnan(two), axis=-1), _np.nan, res)
    res = res.reshape(lead)
    if keepdims:
        res = res.reshape(tuple(1 if i in axes else d for i, d in enumerate(a._shape)))
    return _core.store_out(res, out)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    return _quantile(a, q, axis, method, keepdims, True, out)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    q = _np.true_divide(q._numpy() if isinstance(q, ndarray) else q, 100)
    return _quantile(a, q, axis, method, keepdims, True, out)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(_median_operand(a), 0.5, axis, "linear", keepdims, True, out)


# -- sets ----------------------------------------------------------------------------

UniqueAllResult = collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


def _unique_flat(ar, want_index, want_inverse, want_counts, equal_nan=True):
    """Sorted distinct values of ar (flattened) and, when asked, first
    indices, inverse indices (flat) and counts. One sync: the count."""
    from ._creation import arange, empty, zeros
    from ._indexing import compress, put, take
    from ._joining import concatenate
    flat = _manip.ravel(ar)
    n = flat.size
    if n == 0:
        e = empty((0,), _np.int64)
        return flat.copy(), e, e, e
    # The inverse without first indices: each element's place among the
    # distinct values by a binary search (a sort and a search cost less than
    # an argsort with its index pairs, a gather and a scatter), where equal
    # values are one value (not NaNs kept apart: equal_nan=False).
    if not (want_index or want_inverse or want_counts) and flat._dtype != _np.float16:
        # The values alone: the sort, then the runtime's count of distinct
        # values (a sync) and their copy (Algorithms.cpp).
        s = sort(flat)
        args = [int(bool(equal_nan))]
        k = int(libcall("unique_count", [s], (), _np.int64, args,
                        key=_core.dtype_key(s._dtype)))
        return libcall("unique_values", [s], (k,), s._dtype, args), None, None, None
    search_inverse = want_inverse and not want_index and (
        equal_nan or flat._dtype.kind not in "fc")
    if want_index or (want_inverse and not search_inverse):
        perm = argsort(flat)
        s = take(flat, perm)
    else:  # the values alone: a sort, without the index pairs of an argsort
        perm, s = None, sort(flat)
    neq = _ufuncs.not_equal(s[1:], s[:-1])
    if equal_nan and s._dtype.kind == "f":
        # NaNs sort last: an element after a NaN is a NaN, the same one
        neq = _ufuncs.logical_and(neq, _ufuncs.logical_not(_ufuncs.isnan(s[:-1])))
    elif equal_nan and s._dtype.kind == "c":
        neq = _ufuncs.logical_and(neq, _ufuncs.logical_not(_ufuncs.logical_and(
            _ufuncs.isnan(s[1:]), _ufuncs.isnan(s[:-1]))))
    from ._creation import ones
    mask = concatenate([ones(1, bool), neq])
    # A value the program holds at a sync point is computed into a buffer of
    # its own: neq is written once, into its place in mask.
    del neq
    values = compress(mask, s)
    index = compress(mask, perm) if want_index else None
    counts = inverse = None
    if want_counts:
        starts = compress(mask, arange(n))
        counts = _ufuncs.subtract(concatenate([starts[1:], _core.asndarray([n])]), starts)
    if search_inverse:
        inverse = searchsorted(values, flat).astype(_np.int64, copy=False)
    elif want_inverse:
        group = _ufuncs.subtract(cumsum(mask), 1)
        inverse = put(zeros(n, _np.int64), perm, group, copy=True)
    return values, index, inverse, counts


def _numpy_unique(ar, return_index=False, return_inverse=False, return_counts=False,
                  axis=None, *, equal_nan=True, sorted=True):
    """np.unique for the small-array eager path. The values alone of an
    integer or bool array come from NumPy's sort and a mask of where they
    change: NumPy 2.3+ finds them with a hash table and then sorts them,
    3-11x slower than sorting them at 10^3-3x10^4 elements (NumPy 2.4.6;
    10^4 int64 with 100 distinct values 104 us against 29). The same sorted
    values; every other call is NumPy's."""
    if (type(ar) is _np.ndarray and ar.dtype.kind in "iub" and axis is None and sorted
            and not (return_index or return_inverse or return_counts)):
        s = _np.sort(ar, axis=None)
        if s.size > 1:
            m = _np.empty(s.shape, _np.bool_)
            m[0] = True
            _np.not_equal(s[1:], s[:-1], out=m[1:])
            s = s[m]
        return s
    extra = {} if sorted else {"sorted": False}  # NumPy 2.3+ only
    return _np.unique(ar, return_index, return_inverse, return_counts, axis,
                      equal_nan=equal_nan, **extra)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    ar = _as(ar)
    if axis is not None:
        from . import _fallback
        return _fallback.call_numpy("unique", (ar,), dict(
            return_index=return_index, return_inverse=return_inverse,
            return_counts=return_counts, axis=axis, equal_nan=equal_nan))
    if eager([ar]):
        return wrap(_numpy_unique(ar._eager(), return_index, return_inverse, return_counts,
                                  equal_nan=equal_nan))
    values, index, inverse, counts = _unique_flat(ar, return_index, return_inverse,
                                                  return_counts, equal_nan)
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:
        out.append(inverse.reshape(ar._shape) if ar.ndim > 1 else inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


unique._eager_numpy = _numpy_unique


def unique_values(x):
    return unique(x)


def unique_counts(x):
    v, _, _, c = _unique_flat(_as(x), False, False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x):
    x = _as(x)
    v, _, inv, _ = _unique_flat(x, False, True, False)
    return UniqueInverseResult(v, inv.reshape(x._shape))


def unique_all(x):
    x = _as(x)
    v, idx, inv, c = _unique_flat(x, True, True, True)
    return UniqueAllResult(v, idx, inv.reshape(x._shape), c)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    element, test = _as(element), _as(test_elements)
    if eager([element, test]):
        return wrap(_np.isin(element._eager(), test._eager(), invert=invert))
    if test.size == 0:
        from ._creation import full
        return full(element._shape, bool(invert), bool)
    from ._indexing import take
    s = sort(_manip.ravel(test))
    idx = searchsorted(s, element)
    hit = _ufuncs.equal(take(s, _ufuncs.minimum(idx, s.size - 1)), element)
    found = _ufuncs.logical_and(hit, _ufuncs.less(idx, s.size))
    return _ufuncs.logical_not(found) if invert else found


# The eager path of the set functions: NumPy's own code (numpy/lib/
# _arraysetops_impl.py), with _numpy_unique for its unique calls (NumPy's
# hash table made union1d of two 10^4 int64 arrays 584 us against ~50).
def _numpy_union1d(ar1, ar2):
    return _numpy_unique(_np.concatenate((ar1, ar2), axis=None))


def _numpy_intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    if return_indices:  # NumPy's unique with indices sorts already
        return _np.intersect1d(ar1, ar2, assume_unique, return_indices)
    ar1, ar2 = _np.asanyarray(ar1), _np.asanyarray(ar2)
    if assume_unique:
        ar1, ar2 = ar1.ravel(), ar2.ravel()
    else:
        ar1, ar2 = _numpy_unique(ar1), _numpy_unique(ar2)
    aux = _np.concatenate((ar1, ar2))
    aux.sort()
    return aux[:-1][aux[1:] == aux[:-1]]


def _numpy_setdiff1d(ar1, ar2, assume_unique=False):
    if assume_unique:
        ar1 = _np.asarray(ar1).ravel()
    else:
        ar1, ar2 = _numpy_unique(_np.asarray(ar1)), _numpy_unique(_np.asarray(ar2))
    return ar1[_np.isin(ar1, ar2, assume_unique=True, invert=True)]


def _numpy_setxor1d(ar1, ar2, assume_unique=False):
    if not assume_unique:
        ar1, ar2 = _numpy_unique(_np.asarray(ar1)), _numpy_unique(_np.asarray(ar2))
    aux = _np.concatenate((ar1, ar2), axis=None)
    if aux.size == 0:
        return aux
    aux.sort()
    flag = _np.concatenate(([True], aux[1:] != aux[:-1], [True]))
    return aux[flag[1:] & flag[:-1]]


def union1d(ar1, ar2):
    from ._joining import concatenate
    return unique(concatenate([_manip.ravel(_as(ar1)), _manip.ravel(_as(ar2))]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    if return_indices:
        from . import _fallback
        return _fallback.call_numpy("intersect1d", (ar1, ar2),
                                    {"assume_unique": assume_unique,
                                     "return_indices": True})
    from ._indexing import compress
    from ._joining import concatenate
    a = _manip.ravel(_as(ar1)) if assume_unique else unique(ar1)
    b = _manip.ravel(_as(ar2)) if assume_unique else unique(ar2)
    aux = sort(concatenate([a, b]))
    if aux.size == 0:
        return aux
    return compress(_ufuncs.equal(aux[1:], aux[:-1]), aux[:-1])


def setdiff1d(ar1, ar2, assume_unique=False):
    from ._indexing import compress
    a = _manip.ravel(_as(ar1)) if assume_unique else unique(ar1)
    return compress(isin(a, ar2, invert=True), a)


def setxor1d(ar1, ar2, assume_unique=False):
    from ._creation import ones
    from ._indexing import compress
    from ._joining import concatenate
    a = _manip.ravel(_as(ar1)) if assume_unique else unique(ar1)
    b = _manip.ravel(_as(ar2)) if assume_unique else unique(ar2)
    aux = sort(concatenate([a, b]))
    if aux.size == 0:
        return aux
    flag = concatenate([ones(1, bool), _ufuncs.not_equal(aux[1:], aux[:-1]),
                        ones(1, bool)])
    return compress(_ufuncs.logical_and(flag[1:], flag[:-1]), aux)


union1d._eager_numpy = _numpy_union1d
intersect1d._eager_numpy = _numpy_intersect1d
setdiff1d._eager_numpy = _numpy_setdiff1d
setxor1d._eager_numpy = _numpy_setxor1d


# -- counting ----------------------------------------------------------------------------

def bincount(x, weights=None, minlength=0):
    x = _as(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if x._dtype.kind not in "biu":
        raise TypeError("Cannot cast array data from dtype('float64') to "
                        "dtype('int64') according to the rule 'safe'")
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if eager([x]) and (weights is None or eager([_as(weights)])):
        w = None if weights is None else _as(weights)._eager()
        return wrap(_np.bincount(x._eager(), w, minlength))
    length = minlength
    if x.size:
        # The least and greatest value: a sync, unless kept on the value (a
        # whole traced array's, as _indexing._check_bounds keeps an index
        # array's: the labels of a group-by counted again cost no sync).
        node = x._base.node if x._whole and x._base.np is None else None
        known = node.bounds if node is not None else None
        if known is None:
            lo, hi = (int(v) for v in _extremes(x))
            if node is not None:
                node.bounds = (lo, hi)
        else:
            lo, hi = known
        if lo < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(hi + 1, minlength)
    return _bincount(x, weights, length)


def _extremes(a):
    """a's minimum and maximum as NumPy scalars of its dtype: both recorded
    before either is read, so one sync point computes both."""
    lo, hi = _reductions.amin(a), _reductions.amax(a)
    return _np.asarray(lo)[()], _np.asarray(hi)[()]


def _bincount(x, weights, length):
    """Counts (or weight sums) of the values of x in [0, length): others are
    dropped."""
    from ._creation import zeros
    if weights is None:
        if x.size == 0 or length == 0:
            return zeros(length, _np.int64)
        return libcall("bincount", [x.astype(_np.int64, copy=False)], (length,),
                       _np.int64, key="i8")
    w = _as(weights).astype(_np.float64, copy=False)
    if w._shape != x._shape:
        raise ValueError("The weights and list don't have the same length.")
    if x.size == 0 or length == 0:
        return zeros(length, _np.float64)
    return libcall("bincount", [x.astype(_np.int64, copy=False), w], (length,),
                   _np.float64, key="f8")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    a = _as(a)
    if isinstance(bins, str) or not _np.ndim(bins) == 0:
        if isinstance(bins, str):
            from . import _fallback
            return _fallback.call_numpy("histogram_bin_edges", (a,),
                                        {"bins": bins, "range": range, "weights": weights})
        return _array_edges(bins)
    return _uniform_edges(a, _bin_count(bins), range)[0]


def _bin_count(bins):
    try:
        n = operator.index(bins)
    except TypeError:
        raise TypeError("`bins` must be an integer, a string, or an array") from None
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    return n


def _array_edges(bins):
    edges = _as(bins)
    if edges.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if edges.size > 1 and bool(_reductions.any(_ufuncs.less(edges[1:], edges[:-1]))):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges


def _outer_edges(a, range):
    """NumPy's first and last edge (its _get_outer_edges): a's own minimum
    and maximum (NumPy scalars of a's dtype, one sync point for both), or the
    range's values as given."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = _extremes(a)
        if not (_np.isfinite(first) and _np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _uniform_edges(a, bins, range):
    """NumPy's equal-width edges: linspace over the outer edges in the dtype
    of the edges and a (float64 for integers). Returns (edges, first, last)."""
    from ._creation import linspace
    first, last = _outer_edges(a, range)
    dt = _np.result_type(first, last, _np.zeros(0, a._dtype))
    if _np.issubdtype(dt, _np.integer):
        dt = _np.result_type(dt, float)
    edges = linspace(first, last, bins + 1, endpoint=True, dtype=dt)
    # Edges a few ulps apart or more cannot round onto each other: only a
    # range of a few ulps per bin needs NumPy's check (a sync point).
    lo, hi = float(first), float(last)
    fi = _np.finfo(dt)
    tiny = (hi - lo) / bins <= 16 * (float(fi.eps) * max(abs(lo), abs(hi))
                                     + float(fi.smallest_subnormal))
    if tiny and bool(_reductions.any(_ufuncs.greater_equal(edges[:-1], edges[1:]))):
        raise ValueError(f"Too many bins for data range. Cannot create {bins} "
                         "finite-sized bins.")
    return edges, first, last


def _unsigned_subtract(a, b):
    """NumPy's histogram difference: signed integers subtract as unsigned (no
    overflow), other types in their common type. a, b NumPy scalars or
    Python numbers, or (for a) an array of a float dtype."""
    if isinstance(a, ndarray):
        return _ufuncs.subtract(a, b, dtype=_np.result_type(_np.zeros(0, a._dtype), b))
    dt = _np.result_type(a, b)
    if dt.kind == "i":
        return _np.subtract(_np.asarray(a, dt), _np.asarray(b, dt), casting="unsafe",
                            dtype=_np.dtype(dt.char.upper()))
    return _np.subtract(a, b, dtype=dt)


def _uniform_bin_index(flat, edges, first, last, nb):
    """The bin of each element for nb equal bins, NumPy's computation
    (numpy/lib/_histograms_impl.py) element by element in one loop: the
    scaled offset from the first edge, truncated, then moved by one where it
    disagrees with the edges within an ulp (the edges recomputed in the loop
    as linspace computes them, no gather). Elements outside [first, last]
    (and NaN) get bin nb."""
    from ._creation import linspace_at
    dt = edges._dtype
    keep = _ufuncs.logical_and(_ufuncs.greater_equal(flat, first),
                               _ufuncs.less_equal(flat, last))
    tmp = flat.astype(dt, copy=False)
    scaled = _ufuncs.multiply(
        _ufuncs.divide(_unsigned_subtract(tmp, first), _unsigned_subtract(last, first)), nb)
    ind = _ufuncs.where(keep, scaled, 0).astype(_np.intp)
    ind = _ufuncs.where(_ufuncs.equal(ind, nb), nb - 1, ind)
    ind = _ufuncs.where(_ufuncs.less(tmp, linspace_at(ind, first, last, nb + 1, dt)),
                        ind - 1, ind)
    up = _ufuncs.logical_and(
        _ufuncs.greater_equal(tmp, linspace_at(ind + 1, first, last, nb + 1, dt)),
        _ufuncs.not_equal(ind, nb - 1))
    ind = _ufuncs.where(up, ind + 1, ind)
    return _ufuncs.where(keep, ind, nb)


def histogram(a, bins=10, range=None, density=None, weights=None):
    a = _as(a)
    if isinstance(bins, str):
        from . import _fallback
        return _fallback.call_numpy("histogram", (a,), {"bins": bins, "range": range,
                                                        "density": density,
                                                        "weights": weights})
    if a._dtype == _np.bool_:
        import warnings
        warnings.warn("Converting input from bool to <class 'numpy.uint8'> for "
                      "compatibility.", RuntimeWarning, stacklevel=2)
        a = a.astype(_np.uint8)
    flat = _manip.ravel(a)
    w = None
    if weights is not None:
        w = _manip.ravel(_as(weights))
        if w._shape != flat._shape:
            raise ValueError("weights should have the same shape as a.")
        if w._dtype.kind == "c":
            from . import _fallback
            return _fallback.call_numpy("histogram", (a,), {"bins": bins, "range": range,
                                                            "density": density,
                                                            "weights": weights})
    if _np.ndim(bins) == 0:
        nb = _bin_count(bins)
        edges, first, last = _uniform_edges(a, nb, range)
        idx = _uniform_bin_index(flat, edges, first, last, nb)
    else:
        edges = _array_edges(bins)
        nb = edges.size - 1
        last = edges[-1]
        idx = _ufuncs.subtract(searchsorted(edges, flat, side="right"), 1)
        idx = _ufuncs.where(_ufuncs.equal(flat, last), nb - 1, idx)
        inside = _ufuncs.logical_and(_ufuncs.greater_equal(flat, edges[0]),
                                     _ufuncs.less_equal(flat, last))
        idx = _ufuncs.where(inside, idx, nb)
    counts = _bincount(idx, w, nb + 1)[:nb]
    if w is not None and counts._dtype != w._dtype:
        counts = counts.astype(w._dtype)
    if density:
        widths = _ufuncs.subtract(edges[1:], edges[:-1]).astype(_np.float64)
        counts = _ufuncs.divide(_ufuncs.divide(counts, widths), _reductions.sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Counts of N points in D dimensions: a bin index per dimension
    (searchsorted on the edges), one flat index, one bincount. Integer
    bins: NumPy's linspace over the data's range (its dtype's minimum and
    maximum: a sync point), without histogram's bin-width check."""
    from ._creation import linspace
    if isinstance(sample, (list, tuple)):  # D coordinate arrays (or one 1-D list)
        cols = ([_manip.ravel(_as(sample))] if sample and _np.ndim(sample[0]) == 0
                else [_manip.ravel(_as(s)) for s in sample])
    else:
        s = _as(sample)
        if s.ndim == 1:
            s = s.reshape(-1, 1)
        cols = [s[:, i] for i in builtins.range(s._shape[1])]
    d = len(cols)
    n_pts = cols[0].size if cols else 0
    if not isinstance(bins, (list, tuple, ndarray, _np.ndarray)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError("The dimension of bins must be equal to the dimension of the "
                         "sample x.")
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    edges, nbin = [], []
    for i, (b, c) in enumerate(zip(bins, cols)):
        if _np.ndim(b) == 0:
            if b < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            first, last = _outer_edges(c, range[i])  # NumPy's: no bin-width check
            try:
                nb_i = operator.index(b)
            except TypeError:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from None
            e = linspace(first, last, nb_i + 1)
        else:
            e = _as(b)
            if e.ndim != 1:
                raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
            if bool(_reductions.any(_ufuncs.greater(e[:-1], e[1:]))):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when "
                                 "an array")
        edges.append(e)
        nbin.append(e.size + 1)  # outliers below and above
    flat = None
    stride = 1
    for i in reversed(builtins.range(d)):
        idx = searchsorted(edges[i], cols[i], side="right")
        on_edge = _ufuncs.equal(cols[i], edges[i][-1])
        idx = _ufuncs.subtract(idx, on_edge.astype(_np.int64))
        term = _ufuncs.multiply(idx, stride)
        flat = term if flat is None else _ufuncs.add(flat, term)
        stride *= nbin[i]
    w = None if weights is None else _manip.ravel(_as(weights))
    if flat is None or n_pts == 0:
        from ._creation import zeros
        hist = zeros(tuple(nbin), _np.float64)
    else:
        hist = _bincount(flat, w, stride).reshape(tuple(nbin))
    hist = hist[tuple(slice(1, -1) for _ in builtins.range(d))].astype(_np.float64)
    if density:
        total = _reductions.sum(hist)
        for i in builtins.range(d):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            widths = _ufuncs.subtract(edges[i][1:], edges[i][:-1]).reshape(tuple(shape))
            hist = _ufuncs.divide(hist, widths)
        hist = _ufuncs.divide(hist, total)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]


def sort_complex(a):
    """sort(a) as a complex array (complex64 for 8- and 16-bit integers,
    complex128 for the other real types, as NumPy)."""
    b = sort(_core.asndarray(a))
    if b._dtype.kind == "c":
        return b
    return b.astype(_np.complex64 if b._dtype.char in "bhBH" else _np.complex128)


NATIVE = ["histogramdd", "histogram2d", "sort_complex", "sort", "argsort", "partition", "argpartition", "lexsort", "searchsorted",
          "digitize", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
          "nancumsum", "nancumprod", "quantile", "percentile", "median", "nanquantile",
          "nanpercentile", "nanmedian", "unique", "unique_values", "unique_counts",
          "unique_inverse", "unique_all", "isin", "union1d", "intersect1d",
          "setdiff1d", "setxor1d", "bincount", "histogram", "histogram_bin_edges"]
__all__ = list(NATIVE)
