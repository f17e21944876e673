"""cpnumeric: NumPy programs, traced and compiled through MLIR.

``import cpnumeric as np`` gives the NumPy API with deferred execution: calls
record ops into a trace; a sync point (print, float(), np.asarray, ...)
compiles the pending trace into fused native kernels and runs them.
"""

import os as _os

import numpy as _np

# The OpenBLAS that compiled kernels call (scipy-openblas64, loaded with the
# runtime below; NumPy's own copy was initialized by the import above and is
# not affected): its idle threads spin 2^20 cycles (~0.3 ms) before they
# sleep, not ~0.1 s (2^28), which took the cores from the OpenMP loops
# between products. 2^4 (sleep at once) made every inner BLAS call of a
# LAPACK routine wake the pool: qr of 1000 x 1000 73 ms against NumPy's
# 46 ms, eigh of 256 x 256 47-50 ms after the program had slept 0.15 s;
# with 2^20 42 ms and 6 ms, and the LSTM, logistic regression and GEMM
# workloads the same. Set OPENBLAS_THREAD_TIMEOUT to override.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

from . import (_config, _core, _cpn, _creation, _extras, _fallback, _indexing, _jit, _library,
               _joining, _manip, _pad, _products, _reductions, _sorting, _sysinfo, _ufuncs)
from . import fft, linalg, random  # noqa: F401
from ._core import ndarray
from ._jit import Lowered, TracingError, jit  # noqa: F401
from ._profile import profile  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._manip import (broadcast_to, diag, diagonal, dot, expand_dims, flip, fliplr,  # noqa: F401
                     flipud, inner, matmul, moveaxis, outer, ravel, reshape, squeeze,
                     swapaxes, transpose, vdot)
from ._reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, max,  # noqa: F401,A004
                          mean, min, prod, std, sum, var)
from ._ufuncs import clip, where, ufunc  # noqa: F401
from ._products import cross, einsum, einsum_path, matvec, tensordot, vecdot, vecmat  # noqa: F401,E501
from ._sorting import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._extras import *  # noqa: F401,F403
from ._pad import *  # noqa: F401,F403
from ._joining import (allclose, append, atleast_1d, atleast_2d, atleast_3d,  # noqa: F401
                       broadcast_arrays, column_stack, concat, concatenate, diff, dstack,
                       permute_dims, tile, repeat, meshgrid, indices, kron, rot90,
                       tri, average, nan_to_num, around, deg2rad, rad2deg,
                       radians, degrees, sinc, array_equal, array_equiv,
                       array_split, split, hsplit, vsplit, dsplit, rollaxis,
                       matrix_transpose, ediff1d, trapezoid, polyval, vander, cov,
                       corrcoef, real, imag, nansum, nanprod, nanmean, nanmax, nanmin,
                       hstack, isclose, ptp, roll, stack, trace, tril, triu, vstack,
                       mgrid, ogrid, r_, c_)

_cpn.configure(_config.get("CPN_DUMP_IR"), _config.get_int("CPN_TRACE_LIMIT"),
               _config.get_int("CPN_OPT_LEVEL"), _config.get_int("CPN_THREADS"),
               _config.cache_dir(), _config.get_int("CPN_CACHE_MAX_BYTES"),
               # IR dumps show kernels: every window is compiled then
               0 if _config.get("CPN_DUMP_IR") else _config.get_int("CPN_BASELINE_WORK"),
               _config.get_int("CPN_BACKGROUND_COMPILE") != 0)

_cpn.set_pool_limit(_config.get_int("CPN_POOL_LIMIT"))

def _at_exit():
    # The compiler thread's running compile finishes before LLVM's statics
    # go, and the kernels already submitted finish before the OpenMP runtime
    # and OpenBLAS do (a window still running at exit crashed in libomp's
    # teardown).
    _cpn.stop_compiles()
    _cpn.wait_all()


__import__("atexit").register(_at_exit)

_core.EAGER["threshold"] = _config.get_int("CPN_EAGER_THRESHOLD")
_core.LOCATIONS = bool(_config.get("CPN_DUMP_IR"))
from . import _baseline  # noqa: E402,F401  (sets the Engine's baseline tier)
from . import _profile  # noqa: E402
_profile._start_from_environment()
from . import _errstate  # noqa: E402
from ._errstate import errstate, geterr, geterrcall, seterr, seterrcall  # noqa: E402,F401
_errstate.sync_engine()

for _name in _ufuncs.NATIVE_UFUNCS:
    globals()[_name] = getattr(_ufuncs, _name)

# NumPy's scalar types, constants and type helpers are NumPy's own.
for _name in ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float32", "float64", "intp", "uintp", "int_", "uint",
              "float16", "complex64", "complex128", "double", "single", "longlong",
              "ulonglong", "byte", "ubyte", "short", "ushort", "intc", "uintc",
              "generic", "number", "integer", "signedinteger", "unsignedinteger",
              "floating", "complexfloating", "inexact", "dtype", "finfo", "iinfo",
              "pi", "e", "inf", "nan", "newaxis", "euler_gamma",
              "result_type", "can_cast", "promote_types", "issubdtype",
              "broadcast_shapes", "set_printoptions",
              "get_printoptions", "printoptions"]:
    globals()[_name] = getattr(_np, _name)
bool = _np.bool_  # noqa: A001
AxisError = _np.exceptions.AxisError


def asnumpy(a):
    """A NumPy copy of an array (a sync point)."""
    return a._numpy() if isinstance(a, ndarray) else _np.asarray(a)


def show_config(file=None):
    """Print the BLAS/LAPACK library, the CPU kernels it chose and the CPU's
    vector extensions (``cpnumeric._sysinfo.blas_config()`` gives them as a
    dict)."""
    _sysinfo.show_config(file)


def stats():
    """Compilations, cache hits, flushes, fallbacks and buffer use so far."""
    s = dict(_cpn.stats())
    s["fallbacks"] = _fallback.FALLBACK_CALLS["count"]
    s["eager_calls"] = _cpn.eager_count(False) + _eager.CALLS[0]
    s.update(_jit.JIT_STATS)
    return s


def reset_stats():
    _cpn.reset_stats()
    _fallback.FALLBACK_CALLS["count"] = 0
    _cpn.eager_count(True)
    _eager.CALLS[0] = 0
    for k in _jit.JIT_STATS:
        _jit.JIT_STATS[k] = 0


def flush():
    """Compile and start the pending work without waiting for it."""
    _cpn.flush()


def synchronize():
    """Wait until all submitted work has finished; reports the floating-point
    errors it found (np.errstate)."""
    _cpn.flush_and_wait()
    _errstate.report()


coverage = _fallback.coverage


def set_num_threads(n):
    """Sets the number of threads compiled kernels run on (0: all cores);
    CPN_THREADS sets it at import."""
    _cpn.flush()
    _cpn.wait_all()
    _cpn.set_kernel_threads(int(n))


def get_num_threads():
    """The number of threads compiled kernels run on."""
    return _cpn.kernel_threads()


# -- ndarray methods and operators -------------------------------------------------
def _method(f):
    return lambda self, *a, **k: f(self, *a, **k)


def _binop(uf):
    def op(self, other):
        try:
            return uf(self, other)  # the common calls in C (ufunc's call)
        except TypeError:
            if not isinstance(other, (ndarray, int, float, _np.ndarray, list, tuple, _np.generic)):
                return NotImplemented
            raise
    return op


def _rbinop(uf):
    def op(self, other):
        return uf(other, self)
    return op


# Python's sequences: `[0] * n` with a 0-d integer array repeats the list, as
# with the NumPy integer scalar it stands in for.
_SEQUENCES = (list, tuple, str, bytes, bytearray)


def _mul(forward, reflected):
    def fwd(self, other):
        if not self._shape and isinstance(other, _SEQUENCES):
            return NotImplemented  # Python repeats the sequence (__index__)
        return forward(self, other)

    def rev(self, other):
        if not self._shape and isinstance(other, _SEQUENCES):
            return NotImplemented
        return reflected(self, other)
    return fwd, rev


def _ibinop(uf):
    npf = uf._np

    def op(self, other):
        # Eager operands: NumPy in place, in C (self stays eager).
        r = _cpn.inplace(npf, self, other)
        if r is not None:
            return r
        if getattr(self, "_standin", False):
            # a NumPy scalar's `x += v` is `x = x + v` (then a[i, j] = x,
            # with setitem's cast), never an in-place ufunc
            return uf(self, other)
        if self._readonly:  # NumPy checks this before the output's casting
            raise ValueError("output array is read-only")
        return uf(self, other, out=self)
    return op


_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
        "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
        "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "lshift": "left_shift", "rshift": "right_shift"}
# The binary operators but ** are ndarray's base's (_cpn.ArrayBase, in C): the
# ufunc's C path first, these Python functions when it does not apply.
_operators = {_op: (getattr(_ufuncs, _uf), _binop(getattr(_ufuncs, _uf)),
                    _rbinop(getattr(_ufuncs, _uf)))
              for _op, _uf in _OPS.items() if _op != "pow"}
_operators["mul"] = (_ufuncs.multiply, *_mul(*_operators["mul"][1:]))
_cpn.set_operators(_operators)
ndarray.__rpow__ = _rbinop(_ufuncs.power)
for _op, _uf in _OPS.items():
    setattr(ndarray, f"__i{_op}__", _ibinop(getattr(_ufuncs, _uf)))
for _op, _uf in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                 "gt": "greater", "ge": "greater_equal"}.items():
    setattr(ndarray, f"__{_op}__", _binop(getattr(_ufuncs, _uf)))


# NumPy's fast_scalar_power: float and complex arrays raised to a Python 2,
# 0.5, -1 or 1 use square/sqrt/reciprocal/positive (the same values, no pow
# call); bool and integer arrays use square for a Python int 2 (bool ** 2 is
# int8, as square's loop).
_FAST_POWER = {2: "square", 0.5: "sqrt", -1: "reciprocal", 1: "positive"}


def _pow_inv_square(x, out=None):
    # (1/x)**2: x*x first would overflow where the result is still a number
    return _ufuncs.square(_ufuncs.reciprocal(x), out=out)


def _sqrt_no_neg_inf(x):
    """(x == -inf, sqrt of x with -inf read as +inf): pow(-inf, y) is a
    number where sqrt(-inf) is NaN, and sqrt must not raise 'invalid' for
    elements the caller replaces."""
    neg_inf = x == -_np.inf
    return neg_inf, _ufuncs.sqrt(_ufuncs.where(neg_inf, _np.inf, x))


def _pow_three_halves(x, out=None):
    # x * sqrt(x); pow(-inf, 1.5) is inf
    neg_inf, s = _sqrt_no_neg_inf(x)
    r = _ufuncs.where(neg_inf, _np.inf, _ufuncs.multiply(x, s))
    return _core.store_out(r, out)


def _pow_minus_three_halves(x, out=None):
    # (1/sqrt(x))**3 (x * sqrt(x) first would overflow where the result is
    # still a number); float16/32 in float64, rounded once; pow(-inf, -1.5)
    # is 0
    dt = x.dtype
    y = x if dt == _np.float64 else x.astype(_np.float64)
    neg_inf, s = _sqrt_no_neg_inf(_ufuncs.add(y, 0.0))
    r = _ufuncs.reciprocal(s)
    r = _ufuncs.where(neg_inf, 0.0, _ufuncs.multiply(_ufuncs.square(r), r))
    if dt != _np.float64:
        r = r.astype(dt)
    return _core.store_out(r, out)


def _pow_minus_half(x, out=None):
    # 1 / sqrt(x + 0.0): pow(-0.0, -0.5) is +inf (x + 0.0 makes -0.0 +0.0),
    # pow(-inf, -0.5) is 0
    neg_inf, s = _sqrt_no_neg_inf(_ufuncs.add(x, 0.0))
    return _core.store_out(_ufuncs.where(neg_inf, 0.0, _ufuncs.reciprocal(s)), out)


# Traced float arrays: further constant exponents as square roots and
# products, which vectorize (a pow call per element does not). Within an
# ulp or two of pow; the signed zeros, infinities and NaNs, and the
# floating-point errors, are pow's. Eager arrays keep NumPy's own loops.
_TRACED_POWER = {-2: _pow_inv_square, 1.5: _pow_three_halves,
                 -1.5: _pow_minus_three_halves, -0.5: _pow_minus_half}


def _fast_power(self, other):
    t = type(other)
    if t is not int and t is not float:
        return None
    kind = self.dtype.kind
    if kind in "fc" and other in _FAST_POWER:
        return getattr(_ufuncs, _FAST_POWER[other])
    if kind in "biu" and t is int and other == 2:
        return _ufuncs.square
    if kind == "f" and other in _TRACED_POWER and self._base.np is None:
        return _TRACED_POWER[other]
    return None


def _pow(self, other):
    f = _fast_power(self, other)
    return f(self) if f is not None else _binop(_ufuncs.power)(self, other)


def _ipow(self, other):
    if getattr(self, "_standin", False):
        return _pow(self, other)  # a NumPy scalar's `x **= v` (see _ibinop)
    f = _fast_power(self, other)
    return f(self, out=self) if f is not None else _ufuncs.power(self, other, out=self)


ndarray.__pow__ = _pow
ndarray.__ipow__ = _ipow
ndarray.__neg__ = lambda self: _ufuncs.negative(self)
ndarray.__pos__ = lambda self: _ufuncs.positive(self)
ndarray.__abs__ = lambda self: _ufuncs.absolute(self)
ndarray.__invert__ = lambda self: _ufuncs.invert(self)
ndarray.__matmul__ = lambda self, o: _manip.matmul(self, o)
ndarray.__rmatmul__ = lambda self, o: _manip.matmul(o, self)
# a[key] and a[key] = v: ArrayBase's C slots (one element), then these.
_cpn.set_item_handlers(_manip.getitem, _manip.setitem, _manip._ELEMENT_VALUES, _jit.TRACING)

for _name in ["sum", "prod", "mean", "var", "std", "any", "all", "argmax", "argmin"]:
    setattr(ndarray, _name, _method(getattr(_reductions, _name)))
ndarray.max = _method(_reductions.amax)
ndarray.min = _method(_reductions.amin)
ndarray.ptp = lambda self, axis=None, out=None, keepdims=False: _ufuncs.subtract(
    _reductions.amax(self, axis, keepdims=keepdims), _reductions.amin(self, axis, keepdims=keepdims), out=out)
ndarray.reshape = lambda self, *shape, order="C", copy=None: _manip.reshape(
    self, *shape, order=order, copy=copy)
ndarray.transpose = lambda self, *axes: _manip.transpose(self, axes or None)
for _name in ["ravel", "swapaxes", "squeeze", "diagonal", "dot", "fill"]:
    setattr(ndarray, _name, _method(getattr(_manip, _name)))
ndarray.flatten = lambda self, order="C": _manip.copy_array(_manip.ravel(self, order))
ndarray.trace = _method(_joining.trace)
ndarray.astype = _manip.astype
ndarray.copy = _manip.copy_array
ndarray.clip = _ufuncs.clip_method


def _conjugate(self, out=None, /):
    """ndarray.conj(): the conjugate of a complex array; a real or bool array
    itself (NumPy returns `self`: writes through the result reach it), or
    copied into `out`."""
    if self._dtype.kind == "c":
        return _ufuncs.conjugate(self, out=out)
    if out is None:
        return self
    if not _np.can_cast(self._dtype, out.dtype, "same_kind"):
        raise TypeError(f"Cannot cast array data from {self._dtype!r} to "
                        f"{out.dtype!r} according to the rule 'same_kind'")
    out[...] = self
    return out


ndarray.conj = ndarray.conjugate = _conjugate
ndarray.round = lambda self, decimals=0, out=None: _joining.around(self, decimals, out)

round = _joining.round  # noqa: A001


def _sort_in_place(self, axis=-1, kind=None, order=None, *, stable=None):
    self[...] = _sorting.sort(self, axis, kind, order, stable=stable)


def _partition_in_place(self, kth, axis=-1, kind="introselect", order=None):
    self[...] = _sorting.partition(self, kth, axis, kind, order)


def _setflags(self, write=None, align=None, uic=None):
    if write is not None:
        if write and self._readonly and not self._is_whole_base():
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        self._readonly = not write


ndarray.sort = _sort_in_place
ndarray.partition = _partition_in_place
ndarray.argsort = lambda self, axis=-1, kind=None, order=None, *, stable=None: \
    _sorting.argsort(self, axis, kind, order, stable=stable)
ndarray.argpartition = lambda self, kth, axis=-1, kind="introselect", order=None: \
    _sorting.argpartition(self, kth, axis, kind, order)
ndarray.searchsorted = lambda self, v, side="left", sorter=None: \
    _sorting.searchsorted(self, v, side, sorter)
ndarray.cumsum = lambda self, axis=None, dtype=None, out=None: \
    _sorting.cumsum(self, axis, dtype, out)
ndarray.cumprod = lambda self, axis=None, dtype=None, out=None: \
    _sorting.cumprod(self, axis, dtype, out)
ndarray.take = lambda self, indices, axis=None, out=None, mode="raise": \
    _indexing.take(self, indices, axis, out, mode)
ndarray.put = lambda self, indices, values, mode="raise": \
    _indexing.put(self, indices, values, mode)
ndarray.nonzero = lambda self: _indexing.nonzero(self)
ndarray.compress = lambda self, condition, axis=None, out=None: \
    _indexing.compress(condition, self, axis, out)
ndarray.choose = lambda self, choices, out=None, mode="raise": \
    _indexing.choose(self, choices, out, mode)
ndarray.repeat = lambda self, repeats, axis=None: _joining.repeat(self, repeats, axis)
ndarray.setflags = _setflags
ndarray.tobytes = lambda self, order="C": self._numpy().tobytes(order)
ndarray.tofile = lambda self, fid, sep="", format="%s": self._numpy().tofile(fid, sep, format)
ndarray.dumps = lambda self: self._numpy().dumps()
ndarray.dump = lambda self, file: self._numpy().dump(file)
ndarray.to_device = lambda self, device, /, *, stream=None: self


def _view(self, dtype=None, type=None):
    """A new view of the same data; `dtype` of the same size reinterprets
    the bits (a view: writes through it reach this array's elements), a
    larger one takes r consecutive elements of a contiguous last axis as one
    (NumPy's rules and errors). Views as a smaller dtype are not supported
    (TypeError)."""
    if type is not None and type is not ndarray:
        raise TypeError("cpnumeric: view(type=...) supports cpnumeric.ndarray only")
    if dtype is not None:
        if isinstance(dtype, __builtins__["type"]) and issubclass(dtype, ndarray):
            dtype = None
        elif _np.dtype(dtype) != self._dtype:
            dt = _np.dtype(dtype)
            if self._part == "wide" and dt.itemsize == self._dtype.itemsize:
                if not _core.is_supported(dt) or dt.kind not in "biufc":
                    raise TypeError(f"cpnumeric: no {dt} arrays")
                v = self._view(self._shape, self._strides, self._offset)
                v._dtype = dt
                return v
            if dt.itemsize > self._dtype.itemsize:
                return _wide_view(self, dt)
            if dt.itemsize != self._dtype.itemsize:
                raise TypeError(f"cpnumeric: view({dt}) of a {self._dtype} array makes "
                                f"its elements smaller; views as a dtype of "
                                f"{self._dtype.itemsize} bytes or more are supported (use "
                                f"astype() to convert the values, .real/.imag for parts)")
            return _field(self, dt, 0)
    return self._view(self._shape, self._strides, self._offset)


def _wide_view(a, dt):
    """a.view(dt) for a larger dtype (NumPy's checks): the bytes of a
    contiguous last axis regrouped, each element the bits of r whole base
    elements (base strides of r along that axis; _core's "wide" views)."""
    if not _core.is_supported(dt) or dt.kind not in "biufc":
        raise TypeError(f"cpnumeric: no {dt} arrays")
    if a.ndim == 0:
        raise ValueError("Changing the dtype of a 0d array is only supported if the "
                         "itemsize is unchanged")
    if a.strides[-1] != a._dtype.itemsize and a._shape[-1] != 1 and a.size:
        raise ValueError("To change to a dtype of a different size, the last axis must "
                         "be contiguous")
    if (a._shape[-1] * a._dtype.itemsize) % dt.itemsize:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of "
                         "the total size in bytes of the last axis of the array.")
    n = a._shape[-1] * a._dtype.itemsize // dt.itemsize
    r = dt.itemsize // a._base.dtype.itemsize
    v = a._view(a._shape[:-1] + (n,), a._strides[:-1] + (r,), a._offset)
    v._dtype, v._part, v._whole = dt, "wide", False
    return v


def _field(a, dt, offset):
    """The view of the field of dtype `dt` at byte `offset` of a's elements."""
    if not _core.is_supported(dt) or dt.kind not in "biufc":
        raise TypeError(f"cpnumeric: no {dt} arrays")
    src = _np.dtype(a._base.dtype)
    if isinstance(a._part, int):  # a field already: offsets add up
        offset += a._part
    elif a._part == "imag":
        offset += a._dtype.itemsize
    if src.kind == "c":
        half = src.itemsize // 2
        whole = offset == 0 and dt.itemsize == src.itemsize  # both parts' bits
        if dt.kind == "c" and dt != src or dt.kind != "c" and not whole and offset // half != (
                offset + dt.itemsize - 1) // half:
            raise TypeError(f"cpnumeric: a {dt} field at byte {offset} of {src} elements "
                            f"spans both parts; fields within the real or imaginary "
                            f"part are supported")
    root = a._view(a._shape, a._strides, a._offset)
    root._dtype, root._part = src, None
    return root._field_view(dt, offset)


def _getfield(self, dtype, offset=0):
    """ndarray.getfield: a view of the field of `dtype` at byte `offset` of
    each element (little-endian byte order)."""
    dt = _np.dtype(dtype)
    if offset < 0:
        raise ValueError("offset is negative")
    if dt.itemsize > self._dtype.itemsize:
        raise ValueError("new type is larger than original type")
    if offset + dt.itemsize > self._dtype.itemsize:
        raise ValueError("new type plus offset is larger than original type")
    if dt == self._dtype:
        return self._view(self._shape, self._strides, self._offset)
    return _field(self, dt, int(offset))


def _setfield(self, val, dtype, offset=0):
    """ndarray.setfield: writes `val` into the field of `dtype` at byte
    `offset` of each element."""
    _getfield(self, dtype, offset)[...] = val


def _byteswap(self, inplace=False):
    """ndarray.byteswap: each element's bytes reversed (the dtype kept)."""
    dt = self._dtype
    eager = self._eager()
    if eager is not None:
        if inplace:
            eager.byteswap(inplace=True)
            return self
        return _library.wrap(eager.byteswap())
    if dt.itemsize == 1:
        r = self.copy()
    elif dt.kind == "c":
        parts = [_byteswap(p)._node() for p in (self.real, self.imag)]
        r = ndarray._from_node(_core.record("complex", parts, self._shape, dt),
                               self._shape, dt)
    else:
        n = dt.itemsize
        x = self.view(_np.dtype(f"u{n}"))
        out = None
        for k in range(n):
            byte = _ufuncs.bitwise_and(_ufuncs.right_shift(x, 8 * k), 0xFF)
            term = _ufuncs.left_shift(byte, 8 * (n - 1 - k))
            out = term if out is None else _ufuncs.bitwise_or(out, term)
        r = out.view(dt)
    if inplace:
        self[...] = r
        return self
    return r


def _resize(self, *new_shape, refcheck=True):
    """In-place resize of an array that owns its data: elements kept in
    C order, new ones zero (as ndarray.resize)."""
    if len(new_shape) == 1 and not isinstance(new_shape[0], (int, _np.integer)):
        new_shape = tuple(new_shape[0])
    if not self._is_whole_base():
        raise ValueError("cannot resize this array: it does not own its data")
    n = _core.prod(new_shape)
    flat = _manip.ravel(self)
    if n <= self.size:
        new = flat[:n].copy()
    else:
        new = _joining.concatenate([flat, _creation.zeros(n - self.size, self._dtype)])
    new = new.reshape(new_shape)
    new = ndarray._from_node(new._node(), new._shape, new._dtype)  # owns its data
    self._base, self._shape, self._strides = new._base, new._shape, new._strides
    self._offset, self._whole = new._offset, new._whole


class _FlatIter:
    """a.flat: the elements in C order; reads give copies or views, writes
    reach the array."""

    def __init__(self, a):
        self.base = a

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(_manip.ravel(self.base))

    def __array__(self, dtype=None, copy=None):
        return _np.asarray(_manip.ravel(self.base)._numpy(), dtype=dtype)

    def __getitem__(self, key):
        return _manip.ravel(self.base)[key]

    def __setitem__(self, key, value):
        a = self.base
        flat = _manip.ravel(a)
        if flat._base is a._base and (isinstance(key, (int, slice, _np.integer))
                                      or key is Ellipsis):
            flat[key] = value
            return
        idx = _manip.ravel(_creation.arange(a.size)[key])
        _indexing.put(a, idx, value)

    def copy(self):
        return _manip.ravel(self.base).copy()


ndarray.view = _view
ndarray.getfield = _getfield
ndarray.setfield = _setfield
ndarray.byteswap = _byteswap
ndarray.resize = _resize
ndarray.flat = property(_FlatIter)
_fallback.register_native(
    set(_ufuncs.NATIVE_UFUNCS) | {"clip", "where"} | set(_creation.NATIVE)
    | set(_manip.NATIVE) | set(_reductions.NATIVE) | set(_joining.NATIVE)
    | set(_products.NATIVE) | set(_sorting.NATIVE) | set(_indexing.NATIVE)
    | set(_extras.NATIVE) | set(_pad.NATIVE) | set(_errstate.NATIVE))
# `where(cond)` with one argument is data-dependent and falls back.

# Small arrays: NumPy's own function on their elements (python/cpnumeric/_eager.py).
from . import _eager  # noqa: E402
_eager.install(globals(), _np, sorted(_fallback._native))
_eager.install(vars(linalg), _np.linalg, linalg.NATIVE)
_eager.install(vars(fft), _np.fft, fft.NATIVE)
_eager.install_methods(ndarray)
ndarray.__matmul__ = lambda self, o, _mm=globals()["matmul"]: _mm(self, o)
ndarray.__rmatmul__ = lambda self, o, _mm=globals()["matmul"]: _mm(o, self)


def __getattr__(name):
    """NumPy functions without a native version: NumPy on materialized inputs,
    with a one-time RuntimeWarning."""
    if name.startswith("__") or not hasattr(_np, name):
        raise AttributeError(f"module 'cpnumeric' has no attribute {name!r}")
    attr = getattr(_np, name)
    if callable(attr) and not isinstance(attr, type):
        f = _fallback.wrap(name)
        globals()[name] = f
        return f
    return attr


_sysinfo.warn_if_generic()
