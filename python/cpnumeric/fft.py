"""cpnumeric.fft: np.fft's API.

The sample-frequency helpers (fftfreq, rfftfreq, fftshift, ifftshift) are
native. The transforms themselves need complex arrays, which cpnumeric's
runtime does not hold yet: they run NumPy's pocketfft on materialized inputs
with a one-time RuntimeWarning, and return NumPy arrays (complex results) or
cpnumeric arrays (real results: irfft, hfft, ...).
"""

import operator

import numpy as _np

from . import _core, _fallback, _joining, _ufuncs


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


NATIVE = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# The transforms: NumPy's on materialized inputs, with a warning.
__getattr__ = _fallback.module_getattr(_np.fft, "fft", globals())
