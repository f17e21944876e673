"""The declared fallback: functions not implemented natively run on NumPy
after their inputs are materialized, with a one-time RuntimeWarning."""

import functools
import warnings

import numpy as _np

from . import _core, _ranks
from ._core import ndarray

_warned = set()
_native = set()
FALLBACK_CALLS = {"count": 0}


def _warn(name):
    from . import _jit
    if _jit.tracing_here():
        raise _jit.fallback_error(name)
    FALLBACK_CALLS["count"] += 1
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"cpnumeric: {name} is not implemented natively; running "
                      "NumPy's version on materialized inputs", RuntimeWarning,
                      stacklevel=4)


def _to_numpy(x):
    if isinstance(x, ndarray):
        return x._numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x


def _from_numpy(x):
    if isinstance(x, _np.ndarray) and _core.is_supported(x.dtype):
        from ._creation import array
        return array(x)
    if isinstance(x, tuple):
        return tuple(_from_numpy(v) for v in x)
    if isinstance(x, list):
        return [_from_numpy(v) for v in x]
    return x


def call_numpy(name, args, kwargs, func=None):
    _warn(f"numpy.{name}")
    func = func or getattr(_np, name)
    out = kwargs.get("out")
    np_kwargs = {k: _to_numpy(v) for k, v in kwargs.items()}
    np_args = _to_numpy(args)
    if name in _ranks.WRITERS:  # one rank writes a file named by a path
        target = np_args[0] if np_args else np_kwargs.get("file", np_kwargs.get("fname"))
        return _ranks.run_writer(lambda: func(*np_args, **np_kwargs), target)
    result = func(*np_args, **np_kwargs)
    if isinstance(out, ndarray):
        out[...] = _from_numpy(np_kwargs["out"])
        return out
    return _from_numpy(result)


def call_numpy_ufunc(npufunc, method, inputs, kwargs):
    return call_numpy(f"{npufunc.__name__}.{method}", inputs, kwargs,
                      func=getattr(npufunc, method))


def dispatch_numpy_function(func, args, kwargs):
    """numpy.f(our_array) comes here via __array_function__."""
    import cpnumeric
    ours = getattr(cpnumeric, func.__name__, None)
    if func.__name__ in _native and ours is not None:
        return ours(*args, **kwargs)
    return call_numpy(func.__name__, args, kwargs, func=func)


def wrap(name):
    func = getattr(_np, name)

    @functools.wraps(func)
    def fallback(*args, **kwargs):
        return call_numpy(name, args, kwargs, func=func)
    return fallback


def module_getattr(np_module, prefix, namespace):
    """A submodule's `__getattr__` (cpnumeric.linalg, cpnumeric.fft): the
    functions of `np_module` without a native version run NumPy's on
    materialized inputs, with a one-time RuntimeWarning."""
    def __getattr__(name):
        attr = getattr(np_module, name, None)
        if attr is None or name.startswith("__"):
            raise AttributeError(f"module 'cpnumeric.{prefix}' has no attribute {name!r}")
        if callable(attr) and not isinstance(attr, type):
            def fallback(*args, **kwargs):
                return call_numpy(f"{prefix}.{name}", args, kwargs, func=attr)
            fallback.__name__ = name
            namespace[name] = fallback
            return fallback
        return attr
    return __getattr__


def register_native(names):
    _native.update(names)


def coverage():
    """Which public NumPy functions cpnumeric runs natively, and which fall
    back to NumPy."""
    public = sorted(n for n in dir(_np) if not n.startswith("_")
                    and callable(getattr(_np, n)) and not isinstance(getattr(_np, n), type))
    native = sorted(n for n in public if n in _native)
    return {"native": native, "fallback": [n for n in public if n not in _native]}
