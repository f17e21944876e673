"""np.pad, every mode, traced: each axis in turn (so later axes see earlier
axes' padding, as NumPy's) becomes one concatenation of the array with its
pad blocks. The blocks are views of the array (reflections and wraps are
runs of forward or reversed slices), broadcast edges, constants, reductions
(stat modes) or ramps; the whole pad fuses into the kernels around it."""

import numpy as _np

from . import _core, _errstate, _fallback, _joining, _manip, _reductions, _ufuncs
from ._core import ndarray

_KWARGS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
           "linear_ramp": ("end_values",), "maximum": ("stat_length",),
           "mean": ("stat_length",), "median": ("stat_length",),
           "minimum": ("stat_length",), "reflect": ("reflect_type",),
           "symmetric": ("reflect_type",)}
_STATS = {"maximum": _reductions.amax, "minimum": _reductions.amin,
          "mean": _reductions.mean}


def _pairs(x, ndim, as_index=False):
    """x as ndim (before, after) pairs, NumPy's broadcasting of pad widths,
    constants, end values and stat lengths."""
    if x is None:
        return [(None, None)] * ndim
    x = _np.asarray(x._numpy() if isinstance(x, ndarray) else x)
    if as_index:
        x = _np.round(x).astype(_np.intp)
        if x.size and x.min() < 0:
            raise ValueError("index can't contain negative values")
    if x.size == 1:
        v = x.ravel()[0]
        return [(v, v)] * ndim
    if x.size == 2 and x.shape != (2, 1):
        v = x.ravel()
        return [(v[0], v[1])] * ndim
    return [tuple(p) for p in _np.broadcast_to(x, (ndim, 2)).tolist()]


def _take(a, axis, start, stop, step=1):
    key = [slice(None)] * a.ndim
    key[axis] = slice(start, stop, step)
    return a[tuple(key)]


def _block(a, axis, width, value):
    """`value` (a scalar, or an array with 1 along `axis`) repeated `width`
    times along `axis`, in a's dtype."""
    shape = list(a._shape)
    shape[axis] = width
    if isinstance(value, ndarray):
        if value._dtype != a._dtype:
            value = value.astype(a._dtype)
        return _manip.broadcast_to(value, tuple(shape))
    from ._creation import full
    return full(tuple(shape), value, a._dtype)


def _runs(n, before, after, mode):
    """The source of every output position -before..n+after-1 along an axis
    of n elements for the periodic modes, as runs (start, step, length,
    mirrored, period) of consecutive positions read with step +1 or -1."""
    if mode == "wrap":
        period, last = n, None
    elif mode == "reflect":
        period = 2 * (n - 1)
    else:  # symmetric
        period = 2 * n
    runs = []
    for i in range(-before, n + after):
        m, r = divmod(i, period)
        if mode == "wrap":
            src, mirrored = r, False
        elif mode == "reflect":
            src, mirrored = (r, False) if r < n else (period - r, True)
        else:
            src, mirrored = (r, False) if r < n else (period - 1 - r, True)
        if runs:
            start, step, length, mir, last = runs[-1]
            nxt = start + step * length
            if mir == mirrored and last == m and (src == nxt or (length == 1 and
                                                                  abs(src - start) == 1)):
                if length == 1:
                    step = src - start
                runs[-1] = (start, step, length + 1, mir, m)
                continue
        runs.append((src, 1, 1, mirrored, m))
    return runs


def _periodic(a, axis, before, after, mode, odd):
    """wrap / reflect / symmetric along one axis. Odd reflections mirror the
    values about the edge values too: a mirrored run is 2 * a[-1] - a[src],
    and each whole period adds 2 * (a[-1] - a[0])."""
    n = a._shape[axis]
    first, last = _take(a, axis, 0, 1), _take(a, axis, n - 1, n)
    pieces = []
    for start, step, length, mirrored, m in _runs(n, before, after, mode):
        stop = start + step * length
        piece = _take(a, axis, start, stop if stop >= 0 else None, step)
        if odd and mode != "wrap":
            if mirrored:
                piece = _ufuncs.subtract(_ufuncs.multiply(2, last), piece)
            if m:
                k = 2 * m  # modulo 2**bits for unsigned types, which wrap
                if a._dtype.kind == "u":
                    k %= 1 << (8 * a._dtype.itemsize)
                piece = _ufuncs.add(piece, _ufuncs.multiply(
                    k, _ufuncs.subtract(last, first)))
            if piece._dtype != a._dtype:
                piece = piece.astype(a._dtype)
        pieces.append(piece)
    return _joining.concatenate(pieces, axis=axis) if len(pieces) > 1 else pieces[0]


@_errstate.quietly
def _ramp(a, axis, width, end, edge, reverse):
    """np.linspace(end, edge, width, endpoint=False) along `axis` in a's
    dtype (floored for integers, as NumPy's linspace)."""
    from ._creation import arange
    dt = _np.result_type(a._dtype, end)
    if dt.kind not in "fc":
        dt = _np.dtype(_np.float64)
    shape = [1] * a.ndim
    shape[axis] = width
    pos = arange(width, dtype=dt).reshape(tuple(shape))
    step = _ufuncs.divide(_ufuncs.subtract(edge.astype(dt), dt.type(end)), width)
    y = _ufuncs.add(_ufuncs.multiply(pos, step), dt.type(end))
    if a._dtype.kind in "iub":
        y = _ufuncs.floor(y)
    y = y.astype(a._dtype)
    return _manip.flip(y, axis) if reverse else y


def _stat(a, axis, mode, length, from_end):
    n = a._shape[axis]
    length = n if length is None or length > n else length
    chunk = _take(a, axis, n - length, n) if from_end else _take(a, axis, 0, length)
    if mode == "median":
        from ._sorting import median
        r = median(chunk, axis=axis, keepdims=True)
    else:
        r = _STATS[mode](chunk, axis=axis, keepdims=True)
    if a._dtype.kind in "iu" and r._dtype.kind == "f":
        r = _ufuncs.rint(r)
    return r


def pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's pad: every mode; a callable mode runs NumPy's (a warning)."""
    a = _core.asndarray(array)
    if callable(mode):
        return _fallback.call_numpy("pad (a callable mode)", (a, pad_width, mode), kwargs,
                                    func=_np.pad)
    if mode not in _KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    extra = set(kwargs) - set(_KWARGS[mode])
    if extra:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
    widths = [(int(b), int(c)) for b, c in _pairs(pad_width, a.ndim, as_index=True)]
    if mode not in ("constant", "empty") and a.size == 0:
        for axis, (b, c) in enumerate(widths):
            if a._shape[axis] == 0 and (b or c):
                raise ValueError(f"can't extend empty axis {axis} using modes other "
                                 "than 'constant' or 'empty'")
    if mode == "constant":
        values = _pairs(kwargs.get("constant_values", 0), a.ndim)
        for v in (v for pair in values for v in pair if type(v) is int):
            _np.full((), v, a._dtype)  # NumPy's OverflowError, even for 0 widths
    elif mode == "linear_ramp":
        values = _pairs(kwargs.get("end_values", 0), a.ndim)
    elif mode in ("maximum", "minimum", "mean", "median"):
        values = _pairs(kwargs.get("stat_length"), a.ndim, as_index=True)
    odd = kwargs.get("reflect_type", "even") == "odd"
    out = a
    for axis, (b, c) in enumerate(widths):
        if not (b or c):
            continue
        n = out._shape[axis]
        if mode in ("empty", "constant") or n == 0:
            v = values[axis] if mode == "constant" else (0, 0)
            parts = [_block(out, axis, b, v[0]), out, _block(out, axis, c, v[1])]
        elif mode == "edge" or (mode in ("reflect", "symmetric") and n == 1):
            parts = [_block(out, axis, b, _take(out, axis, 0, 1)), out,
                     _block(out, axis, c, _take(out, axis, n - 1, n))]
        elif mode == "linear_ramp":
            ends = values[axis]
            parts = [_ramp(out, axis, b, ends[0], _take(out, axis, 0, 1), False), out,
                     _ramp(out, axis, c, ends[1], _take(out, axis, n - 1, n), True)]
        elif mode in ("maximum", "minimum", "mean", "median"):
            lengths = values[axis]
            if 0 in lengths and mode in ("maximum", "minimum"):
                raise ValueError("stat_length of 0 yields no value for padding")
            parts = [_block(out, axis, b, _stat(out, axis, mode, lengths[0], False)), out,
                     _block(out, axis, c, _stat(out, axis, mode, lengths[1], True))]
        else:
            out = _periodic(out, axis, b, c, mode, odd)
            continue
        out = _joining.concatenate([p for p in parts if p._shape[axis]], axis=axis)
    return out.copy() if out is a else out


NATIVE = ["pad"]
__all__ = list(NATIVE)
