"""cpnumeric.fft: np.fft's API, native.

Each one-dimensional transform is one `cpn.libcall` of the runtime's FFTW
entry points (runtime/lib/Fft.cpp) on the rows of the array with the axis
last, read with any strides; n-dimensional transforms are 1-D transforms
along each axis in NumPy's order. Padding and truncation to `n` are traced
slices and concatenations, normalization ("backward", "ortho", "forward") is
applied by the library call. Result dtypes are NumPy's: complex64 for
float16/float32/complex64 input, complex128 otherwise; the real results of
irfft and hfft keep float16/float32.
"""

import operator

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from . import _core, _joining, _library, _manip, _ufuncs

_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _norm_code(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", '
                         '"ortho" or "forward".')
    return _NORMS[norm]


def _swap_direction(norm):
    return {None: "forward", "backward": "forward", "ortho": "ortho",
            "forward": "backward"}[norm if norm in _NORMS else _norm_code(norm)]


def _real_dtype(dt):
    """NumPy's precision of a transform: result_type(dt.real, 1.0)."""
    if dt.kind == "c":
        dt = _np.dtype(dt.char.lower())
    return _np.result_type(dt, 1.0)


def _complex_of(real):
    return _np.dtype(_np.complex64 if real.itemsize <= 4 else _np.complex128)


def _check_n(n):
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _fit(a, axis, m):
    """a with its `axis` truncated or zero-padded to length m."""
    have = a._shape[axis]
    if have == m:
        return a
    if have > m:
        key = [slice(None)] * a.ndim
        key[axis] = slice(0, m)
        return a[tuple(key)]
    from ._creation import zeros
    shape = list(a._shape)
    shape[axis] = m - have
    return _joining.concatenate([a, zeros(tuple(shape), a._dtype)], axis=axis)


def _transform(name, a, axis, length, out_len, in_dt, out_dt, args):
    """The library transform `name` of a's rows along `axis` (cut or padded
    to `length`), giving `out_len` elements of `out_dt` per row."""
    if _library.eager([a]):  # the small-array path: NumPy's pocketfft
        np_name = {"fft": "ifft" if args[0] else "fft"}.get(name, name)
        norm = {0: "backward", 1: "ortho", 2: "forward"}[args[-1]]
        r = getattr(_np.fft, np_name)(a._eager().astype(in_dt, copy=False),
                                      n=out_len if name == "irfft" else length,
                                      axis=axis, norm=norm)
        return _library.wrap(r.astype(out_dt, copy=False))
    a = _fit(a.astype(in_dt, copy=False), axis, length)
    two, back = _library.rows(a, axis)
    if two._shape[0] == 0:
        from ._creation import zeros
        return back(zeros((0, out_len), out_dt))
    key = _core.dtype_key(in_dt)
    r = _library.libcall(name, [two], (two._shape[0], out_len), out_dt, args, key)
    return back(r)


def _c2c(a, n, axis, norm, inverse, out):
    a = _core.asndarray(a)
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n(a._shape[axis] if n is None else n)
    dt = _complex_of(_real_dtype(a._dtype))
    r = _transform("fft", a, axis, n, n, dt, dt, [int(inverse), _norm_code(norm)])
    return _core.store_out(r, out)


def fft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c(a, n, axis, norm, False, out)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    return _c2c(a, n, axis, norm, True, out)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    a = _core.asndarray(a)
    if a._dtype.kind == "c":
        raise TypeError("ufunc 'rfft_n_even' did not contain a loop with signature "
                        "matching types")
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n(a._shape[axis] if n is None else n)
    real = _real_dtype(a._dtype)
    calc = _np.dtype(_np.float32) if real.itemsize <= 4 else _np.dtype(_np.float64)
    r = _transform("rfft", a, axis, n, n // 2 + 1, calc, _complex_of(calc),
                   [_norm_code(norm)])
    return _core.store_out(r, out)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    a = _core.asndarray(a)
    axis = normalize_axis_index(axis, a.ndim)
    n = _check_n((a._shape[axis] - 1) * 2 if n is None else n)
    real = _real_dtype(a._dtype)
    calc = _np.dtype(_np.float32) if real.itemsize <= 4 else _np.dtype(_np.float64)
    r = _transform("irfft", a, axis, n // 2 + 1, n, _complex_of(calc), calc,
                   [n, _norm_code(norm)])
    if real != calc:
        r = r.astype(real)
    return _core.store_out(r, out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a signal with Hermitian symmetry: irfft(conj(a))."""
    a = _core.asndarray(a)
    axis = normalize_axis_index(axis, a.ndim)
    if n is None:
        n = (a._shape[axis] - 1) * 2
    return irfft(_ufuncs.conjugate(a), n, axis, _swap_direction(norm), out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft: conj(rfft(a))."""
    r = rfft(a, n, axis, _swap_direction(norm))
    return _core.store_out(_ufuncs.conjugate(r), out)


def _cook_nd_args(a, s, axes, invreal=False):
    """NumPy's shapes and axes of an n-dimensional transform."""
    shapeless = s is None
    if s is None:
        s = list(a._shape) if axes is None else [a._shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        axes = list(range(-len(s), 0))
    axes = list(axes)
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a._shape[axes[-1]] - 1) * 2
    s = [a._shape[ax] if d == -1 else d for d, ax in zip(s, axes)]
    return s, axes


def _raw_fftnd(a, s, axes, function, norm, out):
    a = _core.asndarray(a)
    s, axes = _cook_nd_args(a, s, axes)
    for ii in reversed(range(len(axes))):
        a = function(a, n=s[ii], axis=axes[ii], norm=norm)
    return _core.store_out(a, out)


def fftn(a, s=None, axes=None, norm=None, out=None):
    return _raw_fftnd(a, s, axes, fft, norm, out)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    return _raw_fftnd(a, s, axes, ifft, norm, out)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _raw_fftnd(a, s, axes, fft, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _raw_fftnd(a, s, axes, ifft, norm, out)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    a = _core.asndarray(a)
    s, axes = _cook_nd_args(a, s, axes)
    a = rfft(a, s[-1], axes[-1], norm)
    for ii in range(len(axes) - 2, -1, -1):
        a = fft(a, s[ii], axes[ii], norm)
    return _core.store_out(a, out)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    a = _core.asndarray(a)
    s, axes = _cook_nd_args(a, s, axes, invreal=True)
    for ii in range(len(axes) - 1):
        a = ifft(a, s[ii], axes[ii], norm)
    a = irfft(a, s[-1], axes[-1], norm)
    return _core.store_out(a, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn(a, s, axes, norm, out)


def fftfreq(n, d=1.0, *, device=None):
    from ._creation import arange
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n should be an integer greater than 0, got {n}")
    half = (n - 1) // 2 + 1
    k = _joining.concatenate([arange(0, half), arange(-(n // 2), 0)])
    return _ufuncs.multiply(k, 1.0 / (n * d))


def rfftfreq(n, d=1.0, *, device=None):
    from ._creation import arange
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n should be an integer greater than 0, got {n}")
    return _ufuncs.multiply(arange(0, n // 2 + 1), 1.0 / (n * d))


def _shift(x, axes, sign):
    x = _core.asndarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shifts = [sign * (d // 2) for d in x.shape]
    elif isinstance(axes, (int, _np.integer)):
        shifts = sign * (x.shape[axes] // 2)
    else:
        shifts = [sign * (x.shape[ax] // 2) for ax in axes]
    return _joining.roll(x, shifts, axes)


def fftshift(x, axes=None):
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    return _shift(x, axes, -1)


NATIVE = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "fft2",
          "ifft2", "rfftn", "irfftn", "rfft2", "irfft2", "fftfreq", "rfftfreq",
          "fftshift", "ifftshift"]
__all__ = list(NATIVE)
