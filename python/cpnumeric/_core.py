"""The deferred ndarray: a view (offset, shape, strides) onto a base whose
current version is a pending trace value or a materialized runtime store."""

import math
import operator
import os
import sys
import warnings

import numpy as _np

from . import _cpn, _errstate

# dtype.kind+itemsize keys the runtime knows (its table, cpnrt/Store.cpp).
_SUPPORTED = frozenset(_cpn.dtype_names())


_DTYPE_KEYS = {}


def dtype_key(dt):
    k = _DTYPE_KEYS.get(dt)
    if k is None:
        k = _DTYPE_KEYS[dt] = "b1" if dt.kind == "b" else f"{dt.kind}{dt.itemsize}"
    return k


# The supported dtypes in native byte order: a set test first (the eager
# path asks for every result).
_SUPPORTED_DTYPES = frozenset(
    _np.dtype(c) for c in "?bhilqBHILQefdFD" if dtype_key(_np.dtype(c)) in _SUPPORTED)


def is_supported(dt):
    return dt in _SUPPORTED_DTYPES or dtype_key(dt) in _SUPPORTED


def supported_dtype(dt):
    """The dtype, if the runtime holds it; TypeError naming it otherwise."""
    dt = check_dtype(dt)
    if not is_supported(dt):
        raise TypeError(f"cpnumeric: dtype {dt} is not supported yet "
                        "(bool, int8-64, uint8-64, float16-64, complex64/128 are)")
    return dt


def check_dtype(dt):
    """Raise TypeError for dtypes cpnumeric will never hold."""
    dt = _np.dtype(dt)
    if dt.kind in "OSUVMm" or dt.fields is not None:
        raise TypeError(
            f"cpnumeric arrays hold numeric and bool dtypes only, not dtype "
            f"{dt.name!r} ({dt}); "
            "keep each field or string column in its own numeric array "
            "(a structure of arrays) instead")
    return dt


_C_STRIDES = {}


def c_strides(shape):
    r = _C_STRIDES.get(shape)
    if r is None:
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= max(d, 1)
        r = tuple(reversed(strides))
        if len(_C_STRIDES) > 4096:
            _C_STRIDES.clear()
        _C_STRIDES[tuple(shape)] = r
    return r


def broadcasts_to(src, dst):
    """Whether shape `src` broadcasts to shape `dst` unchanged (NumPy's
    `broadcast_shapes(src, dst) == dst` for valid shapes, without its
    arrays: an assignment checks this on every call)."""
    if src == dst:
        return True
    n = len(dst) - len(src)
    if n < 0:
        return False
    for i, d in enumerate(src):
        if d != 1 and d != dst[n + i]:
            return False
    return True


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# Arrays with fewer elements than this run eagerly on NumPy (CPN_EAGER_THRESHOLD,
# set at import; 0 = never): below it, recording and compiling cost more than
# the work.
EAGER = {"threshold": 0}


class _Base:
    """One buffer identity; `node` is its current version. A small array may
    instead hold its elements eagerly in `np` (a C-contiguous NumPy array) until
    it meets the traced world, which demotes it (copies it into a store)."""
    __slots__ = ("node", "shape", "dtype", "np", "__weakref__")

    def __init__(self, node, shape, dtype, np=None):
        self.node, self.shape, self.dtype, self.np = node, tuple(shape), dtype, np


def _demote(base):
    """An eager base becomes a traced value (its elements copied into a store);
    from then on it stays traced."""
    base.node = _cpn.from_numpy(base.np)
    base.np = None


_op = _cpn.op
# errstate's 'raise' mode (a module-level name: record is the hot path).
_RAISING = _errstate.RAISING


# Source lines of recorded ops, kept when IR is dumped (CPN_DUMP_IR): the
# kernels of summary.txt name the lines they fused.
LOCATIONS = False
# The package's directory as imported (a code object's file name keeps a
# sys.path entry's '..') and made absolute.
_PACKAGE_DIRS = tuple({os.path.dirname(__file__) + os.sep,
                       os.path.dirname(os.path.abspath(__file__)) + os.sep})


_EXTOBJ, _SYNCED = _errstate.EXTOBJ, _errstate.SYNCED
_scalar_value_c = _cpn.scalar_value
_eager_matmul = _cpn.eager_matmul


def record(name, operands, shape, dtype, iattrs=(), sattr=""):
    if LOCATIONS:
        _set_location()
    if _EXTOBJ is not None and _EXTOBJ.get() is not _SYNCED[0]:
        _errstate.sync_engine()  # NumPy's error state changed behind our back
    r = _op(name, operands, iattrs, sattr, shape, dtype_key(dtype))
    if _RAISING[0]:
        _errstate.run_now()
    return r


def _set_location():
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIRS):
        f = f.f_back
    if f is not None:
        _cpn.set_location(f.f_code.co_filename, f.f_lineno)


def to_numpy(node):
    """The elements of a trace value (a sync point). A failure of the work
    that computed it raises here: LinAlgError for LAPACK's errors, IndexError
    for an index out of bounds, MemoryError for a store not allocated."""
    return _raising(_cpn.to_numpy, node)


def wait(node):
    """Waits until a trace value is computed (a sync point); raises as
    to_numpy does."""
    _raising(_cpn.wait, node)


def _raising(f, node):
    """f(node), a sync point, then the floating-point errors the work found.
    A failure of that work raises from f as the class of its kind, which
    travels with it from where it happened (python/src/errors.cpp)."""
    r = f(node)
    _errstate.report()
    return r


def complex_warning(src, dst):
    """NumPy's ComplexWarning for a cast that drops imaginary parts."""
    if src.kind == "c" and dst.kind not in "cb":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      _np.exceptions.ComplexWarning, stacklevel=4)


def statement_end():
    _cpn.statement_end()


_SCALARS = {}


def scalar_node(value, dtype):
    """A 0-d value holding a Python scalar converted as NumPy 2 does. Kept in a
    small cache, so that `0.25 * x` in a loop reads one constant store instead
    of making a new one each iteration (the cache's reference also keeps the
    store from being donated as an output buffer)."""
    key = (type(value), value, dtype)
    if value == 0:  # 0.0 == -0.0: the sign of a zero is part of the key
        key += (math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
    node = _SCALARS.get(key)
    if node is None:
        node = _cpn.from_numpy(_np.asarray(value, dtype=dtype))
        if len(_SCALARS) > 1024:
            _SCALARS.clear()
        _SCALARS[key] = node
    return node


def pack_scalar(value, dtype):
    """`value` (a Python or NumPy scalar) as an element of `dtype`, converted
    exactly as NumPy's setitem converts it, with its exceptions."""
    cell = _np.empty((), dtype)
    cell[()] = value
    return cell[()]


def splat(value, shape, dtype):
    """A scalar broadcast to `shape` (a zero-stride view of a 0-d value)."""
    node = scalar_node(value, dtype)
    if not shape:
        return node
    return record("view", [node], shape, dtype, [0] * (len(shape) + 1))


def _fast_splat(value, shape, dtype):
    """splat for the C path of ufunc calls (python/src/fast.cpp): None (the
    call goes to the Python path, which decides) for a Python int out of
    the range of `dtype`: an OverflowError there, except in comparisons."""
    try:
        node = scalar_node(value, dtype)
    except OverflowError:
        return None
    if not shape:
        return node
    return record("view", [node], shape, dtype, [0] * (len(shape) + 1))


def store_out(result, out):
    """NumPy's `out=`: write the result into `out` and return it."""
    if out is None:
        return result
    out[...] = result
    return out


def _permuted_contiguous(arr):
    """The axis order (outermost first) in which the exact NumPy array
    `arr` is C-contiguous with positive strides, when it is not in C order
    but a transpose of such an array; else None."""
    if type(arr) is not _np.ndarray or arr.ndim < 2 or arr.size <= 1 \
            or not is_supported(arr.dtype):
        return None
    order = tuple(sorted(range(arr.ndim), key=lambda k: -arr.strides[k]))
    t = arr.transpose(order)
    return order if t.flags.c_contiguous and min(t.strides) > 0 else None


def _inverse_axes(order):
    inv = [0] * len(order)
    for i, k in enumerate(order):
        inv[k] = i
    return inv


def k_order(arrays, shape):
    """NumPy's order='K' for an elementwise result of `shape` computed from
    `arrays` (our arrays, broadcast to shape): the axis order, outermost first,
    that NumPy's iterator chooses (axes moved inward only where every operand
    with strides on both agrees that they should be, as its
    find_best_axis_ordering), or None for C order (the common case: whole
    arrays, operands that disagree, or size-1 axes only)."""
    nd = len(shape)
    if nd < 2:
        return None
    for a in arrays:
        if type(a) is ndarray and not a._whole and a._part is None:
            prev = None  # C order already (strides not growing inward)?
            for st in a._strides:
                st = st if st >= 0 else -st
                if st:
                    if prev is not None and st > prev:
                        break
                    prev = st
            else:
                continue
            break
    else:
        return None  # whole arrays, C-ordered views, scalars: C order
    strides = []
    for a in arrays:
        if type(a) is not ndarray or a._part is not None:
            continue
        sh = a._shape
        st = list(c_strides(sh) if a._whole else a._strides)
        lead = nd - len(sh)  # broadcast leading axes: no stride
        strides.append([0 if k < lead or sh[k - lead] == 1 else abs(st[k - lead])
                        for k in range(nd)])
    # Innermost axis first: axis `cur` moves inward past `inner` while every
    # operand with strides on both says so; one without strides on both is
    # no vote.
    def moves(cur, inner):
        votes = [st[inner] > st[cur] for st in strides if st[cur] and st[inner]]
        return all(votes) if votes else None
    order = tuple(reversed(axes_insertion_sort(list(range(nd - 1, -1, -1)),
                                               moves)))
    return None if order == tuple(range(nd)) else order


def axes_insertion_sort(perm, moves):
    """NumPy's stable insertion sort of axes (its iterator's
    find_best_axis_ordering and PyArray_CreateMultiSortedStridePerm): axis
    `cur` moves before the axis `prev` ahead of it while moves(cur, prev) is
    True (every operand that votes agrees), passes over it when no operand
    votes (None) and stops at False. Sorts `perm` in place and returns it."""
    for i in range(1, len(perm)):
        cur = perm[i]
        pos = i
        for j in range(i - 1, -1, -1):
            m = moves(cur, perm[j])
            if m is None:
                continue
            if not m:
                break
            pos = j
        if pos != i:
            del perm[i]
            perm.insert(pos, cur)
    return perm


def _uint(itemsize):
    return _np.dtype(f"u{itemsize}")


def _reinterpret(node, shape, src, dst):
    """The same bits as `dst`, a dtype of `src`'s size (bool: x != 0 one
    way, 0 or 1 the other, as bool bytes are)."""
    if src == dst:
        return node
    if "b" in (src.kind, dst.kind):
        return record("cast", [node], shape, dst)
    return record("bitcast", [node], shape, dst)


def _field_read(node, shape, base, dtype, offset):
    """The field of `dtype` at byte `offset` of each (little-endian) element
    of `node` (of dtype `base`)."""
    if base.kind == "c" and dtype.kind != "c" and dtype.itemsize == base.itemsize:
        # both parts' bits (complex64.view(int64)): the parts as two fields
        ft, res = _np.dtype(base.char.lower()), splat(0, shape, dtype)
        for k, part in enumerate(("real", "imag")):
            res = _field_write(record(part, [node], shape, ft), res, shape, dtype, ft,
                               k * ft.itemsize)
        return res
    if base.kind == "c":  # a field of one part
        half = base.itemsize // 2
        part = record("imag" if offset >= half else "real", [node], shape,
                      _np.dtype(base.char.lower()))
        return _field_read(part, shape, _np.dtype(base.char.lower()), dtype,
                           offset % half)
    if dtype.kind == "c":  # of real elements: two fields, its parts
        ft = _np.dtype(dtype.char.lower())
        parts = [_field_read(node, shape, base, ft, offset + k * ft.itemsize) for k in (0, 1)]
        return record("complex", parts, shape, dtype)
    if dtype.itemsize == base.itemsize:
        return _reinterpret(node, shape, base, dtype)
    ub, uf = _uint(base.itemsize), _uint(dtype.itemsize)
    bits = _reinterpret(node, shape, base, ub)
    if offset:
        bits = record("right_shift", [bits, splat(8 * offset, shape, ub)], shape, ub)
    return _reinterpret(record("cast", [bits], shape, uf), shape, uf, dtype)


def _field_write(node, old, shape, base, dtype, offset):
    """`old` (of dtype `base`) with the field of `dtype` at byte `offset`
    replaced by `node`'s bits."""
    if base.kind == "c" and dtype.kind != "c" and dtype.itemsize == base.itemsize:
        ft = _np.dtype(base.char.lower())
        parts = [_field_read(node, shape, dtype, ft, k * ft.itemsize) for k in (0, 1)]
        return record("complex", parts, shape, base)
    if base.kind == "c":
        half = base.itemsize // 2
        ft = _np.dtype(base.char.lower())
        re = record("real", [old], shape, ft)
        im = record("imag", [old], shape, ft)
        if offset >= half:
            im = _field_write(node, im, shape, ft, dtype, offset - half)
        else:
            re = _field_write(node, re, shape, ft, dtype, offset)
        return record("complex", [re, im], shape, base)
    if dtype.kind == "c":  # into real elements: its parts, one field each
        ft = _np.dtype(dtype.char.lower())
        for k, part in enumerate(("real", "imag")):
            old = _field_write(record(part, [node], shape, ft), old, shape, base, ft,
                               offset + k * ft.itemsize)
        return old
    if dtype.itemsize == base.itemsize:
        return _reinterpret(node, shape, dtype, base)
    ub, uf = _uint(base.itemsize), _uint(dtype.itemsize)
    bits = record("cast", [_reinterpret(node, shape, dtype, uf)], shape, ub)
    if offset:
        bits = record("left_shift", [bits, splat(8 * offset, shape, ub)], shape, ub)
    keep = ~(((1 << 8 * dtype.itemsize) - 1) << 8 * offset) & ((1 << 8 * base.itemsize) - 1)
    rest = record("bitwise_and", [_reinterpret(old, shape, base, ub), splat(keep, shape, ub)],
                  shape, ub)
    return _reinterpret(record("bitwise_or", [rest, bits], shape, ub), shape, ub, base)


# -- ndarray's methods: what the class body uses ------------------------------
# The methods call the functions of _ufuncs, _manip, _reductions, ... : modules
# that import ndarray from here, imported at the end of this module. A method
# body names them (`_manip.reshape(...)`), resolved at call time. The methods
# that hold such a function (the operators hold their ufunc, the eager methods
# the function they stand in front of) are made in the class body from its
# name; _bind_late puts the function itself into their closures at the end of
# this module, so that a call costs what it did with the function held
# directly.
_LATE = []


def _bind_late():
    for bind in _LATE:
        bind()
    _LATE.clear()


def _binop(name):
    """The Python operator of _ufuncs' ufunc `name`: NotImplemented for an
    operand it does not take (Python then asks the other operand)."""
    uf = None

    def op(self, other):
        try:
            return uf(self, other)  # the common calls in C (ufunc's call)
        except TypeError:
            if not isinstance(other, (ndarray, int, float, _np.ndarray, list, tuple, _np.generic)):
                return NotImplemented
            raise

    def bind():
        nonlocal uf
        uf = getattr(_ufuncs, name)
    _LATE.append(bind)
    return op


def _rbinop(name):
    """The reflected operator of _ufuncs' ufunc `name`."""
    uf = None

    def op(self, other):
        return uf(other, self)

    def bind():
        nonlocal uf
        uf = getattr(_ufuncs, name)
    _LATE.append(bind)
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


def _ibinop(name):
    """The in-place operator of _ufuncs' ufunc `name` (`a += b`)."""
    uf = npf = None

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

    def bind():
        nonlocal uf, npf
        uf = getattr(_ufuncs, name)
        npf = uf._np
    _LATE.append(bind)
    return op


def _eager_method(cpm, name=None):
    """The ndarray method cpm with the eager path of NumPy's method `name`
    (cpm's name) in front (python/cpnumeric/_eager.py): NumPy's method on the
    elements of an eager array. cpm is a function, or "module.function", a
    function of a module that imports this one (bound by _bind_late)."""
    name = name or cpm.__name__
    npm = getattr(_np.ndarray, name)

    def m(self, *args, **kwargs):
        # A traced array never takes NumPy's method: straight to ours (asking
        # the C path, then _call, cost 2-5 us per call: x.sum() 8.5 -> 3.6 us).
        if self._base.np is None:
            return cpm(self, *args, **kwargs)
        r = _eager_call(npm, (self,) + args, kwargs)
        if r is _DECLINED:
            try:
                return _eager_numpy_call(npm, (self,) + args, kwargs)
            except _Traced:
                return cpm(self, *args, **kwargs)
        return cpm(self, *args, **kwargs) if r is _TRACED else r
    m.__name__ = name
    # m behind the C front of the eager path (python/src/eager.cpp's
    # EagerFunction, a method descriptor): NumPy's method on an eager array,
    # ours at once on a traced one, m for what it declines. x.sum() of 64
    # float64 878 -> 787 ns back to back (NumPy's 685-731): m's frame and the
    # bound method.
    f = _cpn.EagerFunction(npm, m, None, None if isinstance(cpm, str) else cpm)
    f.__name__, f.__qualname__, f.__module__ = name, "ndarray." + name, __name__
    if isinstance(cpm, str):
        module, function = cpm.split(".")

        def bind():
            nonlocal cpm
            cpm = getattr(globals()[module], function)
            m.__doc__ = f.__doc__ = getattr(cpm, "__doc__", None)
        _LATE.append(bind)
    else:
        m.__doc__ = f.__doc__ = getattr(cpm, "__doc__", None)
    return f


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
    return store_out(r, out)


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
    return store_out(r, out)


def _pow_minus_half(x, out=None):
    # 1 / sqrt(x + 0.0): pow(-0.0, -0.5) is +inf (x + 0.0 makes -0.0 +0.0),
    # pow(-inf, -0.5) is 0
    neg_inf, s = _sqrt_no_neg_inf(_ufuncs.add(x, 0.0))
    return store_out(_ufuncs.where(neg_inf, 0.0, _ufuncs.reciprocal(s)), out)


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


_power = _binop("power")  # a ** b when no faster ufunc applies


def _pow(self, other):
    """`self ** other` when the base's C operator (NumPy's own on eager
    operands) does not apply."""
    f = _fast_power(self, other)
    return f(self) if f is not None else _power(self, other)


def _wide_view(a, dt):
    """a.view(dt) for a larger dtype (NumPy's checks): the bytes of a
    contiguous last axis regrouped, each element the bits of r whole base
    elements (base strides of r along that axis; the "wide" views)."""
    if not is_supported(dt) or dt.kind not in "biufc":
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
    if not is_supported(dt) or dt.kind not in "biufc":
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


# copy=False where the elements cannot be shared (docs/numpy-api.md).
_NO_SHARE = ("Unable to avoid copy while creating an array as requested: this "
             "array's elements are copied when exported (an array below "
             "CPN_EAGER_THRESHOLD elements runs on NumPy's own memory, an array "
             "split over MPI ranks is gathered); {}")


class ndarray(_cpn.ArrayBase):
    """A NumPy-compatible array whose work is traced and compiled.

    Operations return at once; data is computed at sync points (printing,
    ``float()``, ``np.asarray``...). Views share their base as in NumPy.
    """

    # _standin (set on few arrays; read with getattr): a 0-d traced copy that
    # stands for the NumPy scalar integer indexing returns (@jit tracing).
    # _isscalar (set True on few arrays; read in C): a 0-d value that NumPy
    # gives as a scalar (a reduction's, a ufunc's of 0-d operands), not a
    # 0-d array (np.array(x), a view): assigned into an integer array a
    # scalar converts as int() does (OverflowError, ValueError for NaN), an
    # array is cast (fuzz 740:10583, 790:2355, 800:12355).
    __slots__ = ("_base", "_shape", "_strides", "_offset", "_dtype", "_readonly",
                 "_whole", "_part", "_standin", "_isscalar", "__weakref__")
    __array_priority__ = 100

    def __init__(self, *args, **kwargs):
        raise TypeError("create cpnumeric arrays with cpnumeric.array, zeros, "
                        "empty, ... rather than ndarray(...)")

    # -- construction -------------------------------------------------------
    # ndarray._from_node(node, shape, dtype): a traced array, whole view of a
    # new base (made in C: python/src/fast.cpp fills these __slots__).
    _from_node = _cpn.wrap_node

    @staticmethod
    def _from_eager(arr):
        """An eager array holding `arr` (a fresh NumPy array it now owns).
        A fresh array in another axis order (NumPy's order='K' result of
        transposed operands) keeps its layout: its C-contiguous transpose is
        held and the array is the transposed view of it."""
        r = _cpn.wrap_eager(arr)
        if r is None:  # not C-contiguous, or a subclass
            order = _permuted_contiguous(arr)
            if order is None:
                return _cpn.wrap_eager(_np.ascontiguousarray(arr))
            held = _cpn.wrap_eager(arr.transpose(order))
            if held is None:
                return _cpn.wrap_eager(_np.ascontiguousarray(arr))
            return held._axes_view(_inverse_axes(order))
        return r

    def _axes_view(self, axes):
        """The view of self with its axes in the order `axes` (transpose)."""
        return self._view([self._shape[i] for i in axes],
                          [self._strides[i] for i in axes], self._offset)

    def _eager(self):
        """This view's elements as a NumPy view of the eager base, or None when
        the base is traced."""
        b = self._base
        if b.np is None:
            return None
        return self._np_view(b.np)

    def _np_view(self, buf):
        """This view's elements as a NumPy view of `buf`, the base's elements
        (a C-contiguous NumPy array of the base's shape and dtype)."""
        if self._whole:
            return buf
        at = self._offset * self._base.dtype.itemsize
        if self._part == "imag":
            at += self._dtype.itemsize
        elif isinstance(self._part, int):
            at += self._part
        if 0 in self._shape:
            # No elements: its offset may lie past the buffer. Still a view of
            # it (at most at its end), so that two views of the same empty
            # elements are the same memory to NumPy (np.copyto(d, d[:]) of a
            # read-only empty diagonal copies nothing; 700:15147).
            return _np.ndarray(self._shape, self._dtype, buffer=buf,
                               offset=min(at, buf.nbytes), strides=self.strides)
        return _np.ndarray(self._shape, self._dtype, buffer=buf, offset=at,
                           strides=self.strides)

    def _host(self):
        """This view's elements as a NumPy view of the base's buffer, without
        a copy: the eager elements, or (a sync point) a read-only view of the
        traced base's store. Copy what is kept: the store's buffer may be
        reused by later work."""
        b = self._base
        if b.np is not None:
            return self._np_view(b.np)
        if _jit.tracing_here():
            raise _jit.tracing_error("converting an array to a Python or NumPy "
                                     "value (float(), print, np.asarray, ...)")
        if 0 in self._shape:
            return _np.empty(self._shape, self._dtype)
        return self._np_view(_raising(_cpn.host_view, b.node))

    def _scalar(self):
        """The element of this 0-d view as a NumPy scalar, as integer
        indexing returns it: a copy of its value now (a sync point for a
        traced base: one element read from the base's store, no kernel).
        Inside @jit tracing, where values are unknown, a 0-d traced copy."""
        b = self._base
        if b.np is None and _jit.tracing_here():
            r = ndarray._from_node(self._node(), (), self._dtype)
            r._standin = True  # `a[i, j] += v` then computes a new value
            return r
        return self._element(self._offset)

    def _element(self, offset):
        """The element at `offset` (in base elements) of the base, seen as
        this view's part, as a NumPy scalar (a sync point for a traced base;
        not for @jit tracing)."""
        b = self._base
        buf = b.np if b.np is not None else _raising(_cpn.host_view, b.node)
        part = self._part
        if part is None:
            return buf.reshape(-1)[offset]
        if part == "real":
            return buf.reshape(-1)[offset].real
        if part == "imag":
            return buf.reshape(-1)[offset].imag
        return _np.ndarray((), self._dtype, buffer=buf, offset=offset * b.dtype.itemsize
                           + (0 if part == "wide" else part))[()]

    def _view(self, shape, strides, offset, readonly=None):
        a = object.__new__(type(self))
        a._base = self._base
        a._shape = tuple(shape)
        a._strides = tuple(strides)
        a._offset = offset
        a._dtype = self._dtype
        a._readonly = self._readonly if readonly is None else readonly
        a._part = self._part
        a._whole = (offset == 0 and a._shape == a._base.shape
                    and a._strides == c_strides(a._shape) and a._part is None)
        return a

    def _part_view(self, part):
        """`.real` or `.imag` of a complex array: a view whose elements are one
        part of the base's (offsets and strides stay in base elements); of a
        complex view of real elements (float64.view(complex64)), a field."""
        if self._part == "wide":  # parts of r base elements each, or fields of one
            ft = _np.dtype(self._dtype.char.lower())
            per = ft.itemsize // self._base.dtype.itemsize
            root = self._view(self._shape, self._strides,
                              self._offset + (max(per, 1) if part == "imag" else 0))
            root._dtype, root._part = self._base.dtype, None
            if per > 1:
                root._dtype, root._part = ft, "wide"
                return root
            return root._field_view(ft, 0)
        if self._base.dtype.kind != "c":
            ft = _np.dtype(self._dtype.char.lower())
            root = self._view(self._shape, self._strides, self._offset)
            root._dtype, root._part = self._base.dtype, None
            return root._field_view(ft, self._part + (ft.itemsize if part == "imag" else 0))
        a = self._view(self._shape, self._strides, self._offset)
        a._part, a._whole = part, False
        a._dtype = _np.dtype(self._dtype.char.lower())  # 'D' -> 'd', 'F' -> 'f'
        return a

    def _field_view(self, dtype, offset):
        """The bytes [offset, offset + dtype.itemsize) of each element of the
        base seen as `dtype` (ndarray.view, getfield; `self` reads the base's
        elements, no part): a view whose reads and writes reinterpret the
        base's bits; offsets and strides stay in base elements."""
        base = self._base.dtype
        a = self._view(self._shape, self._strides, self._offset)
        if dtype == base and offset == 0:
            return a
        a._dtype = dtype
        if base.kind == "c" and dtype == _np.dtype(base.char.lower()):
            a._part, a._whole = "imag" if offset else "real", False
        else:
            a._part, a._whole = offset, False
        return a

    def _read(self, shape, strides, part=False):
        """A view of the base (in its dtype), then `part` of it ("real",
        "imag", or the byte offset of a field; this view's own part by
        default)."""
        b = self._base
        part = self._part if part is False else part
        if part == "wide":  # r consecutive base elements' bits in each element
            item = b.dtype.itemsize
            node = splat(0, shape, self._dtype)
            for k in range(self._dtype.itemsize // item):
                piece = record("view", [b.node], shape, b.dtype, [self._offset + k, *strides])
                node = _field_write(piece, node, shape, self._dtype, b.dtype, k * item)
            return node
        node = record("view", [b.node], shape, b.dtype, [self._offset, *strides])
        if isinstance(part, int):
            node = _field_read(node, shape, b.dtype, self._dtype, part)
        elif part is not None:
            node = record(part, [node], shape, self._dtype)
        return node

    # -- reading into the trace --------------------------------------------
    def _is_whole_base(self):
        return self._whole

    def _node(self):
        """The trace value of this array's elements."""
        if self._base.np is not None:
            _demote(self._base)
        if self._is_whole_base():
            return self._base.node
        return self._read(self._shape, self._strides)

    def _node_as(self, shape, dtype=None):
        """The trace value broadcast to `shape` and cast to `dtype`."""
        shape = tuple(shape)
        if self._base.np is not None:
            _demote(self._base)
        if shape == self._shape:
            node = self._node()
        else:
            nd = len(shape)
            lead = nd - len(self._shape)
            strides = [0] * lead
            for i, (d, s) in enumerate(zip(self._shape, self._strides)):
                strides.append(0 if d == 1 and shape[lead + i] != 1 else s)
            node = self._read(shape, strides)
        if dtype is not None and dtype != self._dtype:
            if self._dtype.kind == "c":
                complex_warning(self._dtype, dtype)
            node = record("cast", [node], shape, dtype)
        return node

    def _write(self, node):
        """Write a value of this view's shape and dtype through the view."""
        if self._readonly:
            raise ValueError("assignment destination is read-only")
        if 0 in self._shape:
            return
        base = self._base
        if base.np is not None:
            _demote(base)
        if self._is_whole_base():
            base.node = node
            return
        if self._part == "wide":  # each element's bits into its r base elements
            item = base.dtype.itemsize
            for k in range(self._dtype.itemsize // item):
                piece = _field_read(node, self._shape, self._dtype, base.dtype, k * item)
                base.node = record("update", [base.node, piece], base.shape, base.dtype,
                                   [self._offset + k, *self._strides])
            return
        if isinstance(self._part, int):
            node = _field_write(node, self._read(self._shape, self._strides, None),
                                self._shape, base.dtype, self._dtype, self._part)
        elif self._part is not None:  # the other part keeps its values
            other = self._read(self._shape, self._strides,
                               "imag" if self._part == "real" else "real")
            parts = [node, other] if self._part == "real" else [other, node]
            node = record("complex", parts, self._shape, base.dtype)
        base.node = record("update", [base.node, node], base.shape, base.dtype,
                           [self._offset, *self._strides])

    # -- basic attributes ---------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @shape.setter
    def shape(self, value):
        r = self.reshape(value)
        if r._base is not self._base:
            raise AttributeError("incompatible shape for in-place modification; "
                                 "use .reshape() to make a copy")
        self._shape, self._strides, self._offset = r._shape, r._strides, r._offset
        self._whole = r._whole

    # dtype, ndim, size and T are _cpn.ArrayBase's (C getters of the slots).

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self._dtype.itemsize

    @property
    def strides(self):
        return tuple(s * self._base.dtype.itemsize for s in self._strides)

    @property
    def base(self):
        return None if self._is_whole_base() else self._base

    @property
    def flags(self):
        return flagsobj(self)


    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    @property
    def real(self):
        if self._dtype.kind == "c":
            return self._part_view("real")
        return self

    @real.setter
    def real(self, value):
        self.real[...] = value

    @property
    def imag(self):
        if self._dtype.kind == "c":
            return self._part_view("imag")
        # NumPy's zeros in Fortran order for an F-contiguous (not C-
        # contiguous) array, else in C order (array_imag_get): a reshape of
        # the imaginary part of a transposed array copies, as NumPy's does
        # (and the copy is writeable; fuzz 810:14767); of a strided view
        # (a diagonal) it is a view (fuzz 1080:12593, not order 'K').
        from ._creation import zeros_like
        fortran = (whole_elements(self)
                   and _contiguous(self._shape, self._strides, "F")
                   and not _contiguous(self._shape, self._strides, "C"))
        z = zeros_like(self, order="F" if fortran else "C")
        z._readonly = True
        return z

    @imag.setter
    def imag(self, value):
        if self._dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.imag[...] = value

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    # -- sync points ----------------------------------------------------------
    def _numpy(self):
        """A NumPy copy of the elements (a sync point)."""
        eager = self._eager()
        if eager is not None:
            return eager.copy()
        if _jit.tracing_here():
            raise _jit.tracing_error("converting an array to a Python or NumPy "
                                     "value (float(), print, np.asarray, ...)")
        if not self._is_whole_base():  # the view's elements, read in place
            return self._host().copy()
        out = to_numpy(self._base.node)
        if out.dtype.char != self._dtype.char:  # (== holds for 'Q' and 'L')
            out = out.view(self._dtype)
        return out.reshape(self._shape)

    def __array__(self, dtype=None, copy=None):
        a = self._exported(copy, ValueError, "pass copy=None")
        if dtype is not None and _np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array "
                                 "as requested: the dtype differs; pass copy=None "
                                 "to convert")
            a = a.astype(dtype)
        return a

    def _shared(self, copy_part=False):
        """What np.asarray returns (a sync point): a NumPy array over the
        computed base's store, without a copy, as NumPy's asarray aliases;
        read-only where this array is. The store is lent while it lives:
        later writes through cpnumeric go to new memory, and the first
        computation that reads the array afterwards takes a copy of it
        (docs/numpy-api.md). None where the elements must be copied: a small
        eager base, an array split over MPI ranks; with `copy_part`, also a
        part of a borrowed NumPy buffer (the store would be copied whole to
        be lent: the part's copy is less)."""
        b = self._base
        if b.np is not None or _jit.tracing_here():
            return None
        if 0 in self._shape:  # nothing to share; still a sync point
            _raising(_cpn.wait, b.node)
            a = _np.empty(self._shape, self._dtype)
        else:
            part = copy_part and not self._is_whole_base()
            buf = _raising(lambda n: _cpn.lend(n, part), b.node)
            if buf is None:
                return None
            if not self._is_whole_base():
                a = self._np_view(buf)
            else:
                a = (buf if buf.dtype.char == self._dtype.char
                     else buf.view(self._dtype)).reshape(self._shape)
        if self._readonly:
            a = a.view()
            a.flags.writeable = False
        return a

    def _exported(self, copy, error, hint):
        """The elements a NumPy consumer gets (a sync point): shared
        (_shared) unless `copy`, else or where they cannot be, a copy;
        copy=False where they cannot be raises `error`."""
        a = _cpn.shared_export(self) if copy is None else None  # C: the common case
        if a is None and not copy:
            a = self._shared(copy_part=copy is None)
        if a is None:
            if copy is False:
                raise error(_NO_SHARE.format(hint))
            a = self._numpy()
        return a

    def _buffer_source(self):
        """What the buffer protocol exports (python/src/fast.cpp), as
        np.asarray gives it (a sync point), where the C path (sharedExport,
        eagerExport) declined: _exported's copy=None case without trying
        it again."""
        a = self._shared(copy_part=True)
        return self._numpy() if a is None else a

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (numpy.from_dlpack, torch.from_dlpack), a sync point:
        the memory np.asarray shares (_shared), or with copy=True a copy of
        the elements; exported by NumPy."""
        a = self._exported(copy, BufferError, "pass copy=None or True")
        return a.__dlpack__(stream=stream, max_version=max_version,
                            dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return _np.empty(0).__dlpack_device__()  # host memory: (kDLCPU, 0)

    def __repr__(self):
        return repr(self._numpy())

    def __str__(self):
        return str(self._numpy())

    def __format__(self, spec):
        return format(self._numpy()[()] if not self._shape else self._numpy(), spec)

    def item(self, *args):
        b = self._base.np
        if b is not None and self._whole:  # an eager array: its own elements
            return b.item(*args)
        return self._host().item(*args)

    def tolist(self):
        return self._numpy().tolist()

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one "
                             "element is ambiguous. Use a.any() or a.all()")
        if _jit.tracing_here() and self._eager() is None:
            raise _jit.tracing_error("a branch on an array (if/while/and/or)")
        return bool(self._host().reshape(())[()])

    def __float__(self):
        return float(self._scalar_value())

    def __int__(self):
        return int(self._scalar_value())

    def __complex__(self):
        return complex(self._scalar_value())

    def __index__(self):
        if self._shape or self._dtype.kind not in "iu":
            raise TypeError("only integer scalar arrays can be converted to a "
                            "scalar index")
        return operator.index(self._host()[()])

    def __round__(self, ndigits=None):
        # A 0-d array stands in for NumPy's scalar, which rounds (a sync).
        if self._shape:
            raise TypeError("type cpnumeric.ndarray doesn't define __round__ method")
        v = self._host()[()]
        return round(v) if ndigits is None else round(v, ndigits)

    def _scalar_value(self):
        if self._shape:  # NumPy 2.4: float(np.ones((1, 1))) is a TypeError too
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        if self._base.np is None:
            # A traced 0-d value (float(x.sum())): flushed, waited for and
            # read in C (_cpn.scalar_value), then the sync's floating-point
            # reports, as _raising makes them.
            v = _scalar_value_c(self)
            if v is not None:
                _errstate.report()
                return v
        return self._host().reshape(())[()]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        if (len(self._shape) == 1 and self._part is None
                and not _jit.tracing_here()):
            # The elements read straight from the buffer (one sync), as
            # NumPy's scalars, in C; a write to the array while iterating (a
            # new version of its base, or a demotion) is seen at the next
            # element.
            return _cpn.array_iter(self)
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self):
        # A 0-d array is what cpnumeric returns where NumPy returns a scalar
        # (a reduction's result, a ufunc of 0-d operands), so it hashes as
        # that scalar does (a sync point); other arrays are unhashable, as
        # NumPy's.
        if self._shape:
            raise TypeError("unhashable type: 'cpnumeric.ndarray'")
        return hash(self._host()[()])

    def __reduce__(self):
        from ._creation import array
        return (array, (self._numpy(),))

    def __copy__(self):  # NumPy's copy.copy / copy.deepcopy keep the layout
        return self.copy(order="K")

    def __deepcopy__(self, memo):
        return self.copy(order="K")

    # -- NumPy interoperability ------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from . import _ufuncs
        return _ufuncs.dispatch_numpy_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from . import _fallback
        return _fallback.dispatch_numpy_function(func, args, kwargs)

    # -- operators ------------------------------------------------------------
    # + - * / // % & | ^ << >> and ** are the base's (_cpn.ArrayBase, in C):
    # the ufunc's C path (NumPy's operator for ** of eager operands) first,
    # then the Python functions registered with _cpn.set_operators at the
    # end of this module.
    __eq__ = _binop("equal")
    __ne__ = _binop("not_equal")
    __lt__ = _binop("less")
    __le__ = _binop("less_equal")
    __gt__ = _binop("greater")
    __ge__ = _binop("greater_equal")

    __iadd__ = _ibinop("add")
    __isub__ = _ibinop("subtract")
    __imul__ = _ibinop("multiply")
    __itruediv__ = _ibinop("divide")
    __ifloordiv__ = _ibinop("floor_divide")
    __imod__ = _ibinop("remainder")
    __iand__ = _ibinop("bitwise_and")
    __ior__ = _ibinop("bitwise_or")
    __ixor__ = _ibinop("bitwise_xor")
    __ilshift__ = _ibinop("left_shift")
    __irshift__ = _ibinop("right_shift")

    def __ipow__(self, other):
        if getattr(self, "_standin", False):
            return ndarray.__pow__(self, other)  # a NumPy scalar's `x **= v` (see _ibinop)
        f = _fast_power(self, other)
        return f(self, out=self) if f is not None else _ufuncs.power(self, other, out=self)

    def __neg__(self):
        return _ufuncs.negative(self)

    def __pos__(self):
        return _ufuncs.positive(self)

    def __abs__(self):
        return _ufuncs.absolute(self)

    def __invert__(self):
        return _ufuncs.invert(self)

    # `a @ b` (and `b @ a`): the base's C slot (python/src/fast.cpp: whole
    # traced matrices and vectors of one float or complex dtype), else the
    # public cpnumeric.matmul (its eager path in front), _cpn.set_matmul.

    # -- reductions -----------------------------------------------------------
    # @_eager_method: NumPy's method of the same name on an eager array's
    # elements (not for views and element access: cpnumeric's own path makes
    # them as fast).
    @_eager_method
    def sum(self, *a, **k):
        return _reductions.sum(self, *a, **k)

    @_eager_method
    def prod(self, *a, **k):
        return _reductions.prod(self, *a, **k)

    @_eager_method
    def mean(self, *a, **k):
        return _reductions.mean(self, *a, **k)

    @_eager_method
    def var(self, *a, **k):
        return _reductions.var(self, *a, **k)

    @_eager_method
    def std(self, *a, **k):
        return _reductions.std(self, *a, **k)

    @_eager_method
    def any(self, *a, **k):
        return _reductions.any(self, *a, **k)

    @_eager_method
    def all(self, *a, **k):
        return _reductions.all(self, *a, **k)

    @_eager_method
    def argmax(self, *a, **k):
        return _reductions.argmax(self, *a, **k)

    @_eager_method
    def argmin(self, *a, **k):
        return _reductions.argmin(self, *a, **k)

    @_eager_method
    def max(self, *a, **k):
        return _reductions.amax(self, *a, **k)

    @_eager_method
    def min(self, *a, **k):
        return _reductions.amin(self, *a, **k)

    def ptp(self, axis=None, out=None, keepdims=False):
        return _ufuncs.subtract(_reductions.amax(self, axis, keepdims=keepdims),
                                _reductions.amin(self, axis, keepdims=keepdims), out=out)

    @_eager_method
    def cumsum(self, axis=None, dtype=None, out=None):
        return _sorting.cumsum(self, axis, dtype, out)

    @_eager_method
    def cumprod(self, axis=None, dtype=None, out=None):
        return _sorting.cumprod(self, axis, dtype, out)

    @_eager_method
    def trace(self, *a, **k):
        return _joining.trace(self, *a, **k)

    # -- shape and layout -----------------------------------------------------
    @_eager_method
    def reshape(self, *shape, order="C", copy=None):
        return _manip.reshape(self, *shape, order=order, copy=copy)

    @_eager_method
    def transpose(self, *axes):
        return _manip.transpose(self, axes or None)

    @_eager_method
    def ravel(self, *a, **k):
        return _manip.ravel(self, *a, **k)

    @_eager_method
    def swapaxes(self, *a, **k):
        return _manip.swapaxes(self, *a, **k)

    @_eager_method
    def squeeze(self, *a, **k):
        return _manip.squeeze(self, *a, **k)

    def diagonal(self, *a, **k):
        return _manip.diagonal(self, *a, **k)

    @_eager_method
    def flatten(self, order="C"):
        return _manip.copy_array(_manip.ravel(self, order))

    def repeat(self, repeats, axis=None):
        return _joining.repeat(self, repeats, axis)

    def resize(self, *new_shape, refcheck=True):
        """In-place resize of an array that owns its data: elements kept in
        C order, new ones zero (as ndarray.resize)."""
        if len(new_shape) == 1 and not isinstance(new_shape[0], (int, _np.integer)):
            new_shape = tuple(new_shape[0])
        if not self._is_whole_base():
            raise ValueError("cannot resize this array: it does not own its data")
        n = prod(new_shape)
        flat = _manip.ravel(self)
        if n <= self.size:
            new = flat[:n].copy()
        else:
            new = _joining.concatenate([flat, _creation.zeros(n - self.size, self._dtype)])
        new = new.reshape(new_shape)
        new = ndarray._from_node(new._node(), new._shape, new._dtype)  # owns its data
        self._base, self._shape, self._strides = new._base, new._shape, new._strides
        self._offset, self._whole = new._offset, new._whole

    flat = property(_FlatIter)

    # -- values ---------------------------------------------------------------
    # astype, copy and clip are those functions of _manip and _ufuncs
    # themselves (bound at the end of this module).
    astype = _eager_method("_manip.astype", "astype")
    copy = _eager_method("_manip.copy_array", "copy")
    clip = _eager_method("_ufuncs.clip_method", "clip")

    def _dot(self, *a, **k):
        return _manip.dot(self, *a, **k)
    _dot = _eager_method(_dot, "dot")

    def dot(self, b, out=None):
        if out is None:  # a small float product of eager arrays, in C
            r = _eager_matmul(self, b)
            if r is not None:
                return r
        return self._dot(b, out=out)

    def fill(self, *a, **k):
        return _manip.fill(self, *a, **k)

    def conjugate(self, out=None, /):
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

    conj = conjugate

    @_eager_method
    def round(self, decimals=0, out=None):
        return _joining.around(self, decimals, out)

    # -- sorting, searching, selecting ----------------------------------------
    @_eager_method
    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        self[...] = _sorting.sort(self, axis, kind, order, stable=stable)

    @_eager_method
    def partition(self, kth, axis=-1, kind="introselect", order=None):
        self[...] = _sorting.partition(self, kth, axis, kind, order)

    @_eager_method
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return _sorting.argsort(self, axis, kind, order, stable=stable)

    @_eager_method
    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return _sorting.argpartition(self, kth, axis, kind, order)

    @_eager_method
    def searchsorted(self, v, side="left", sorter=None):
        return _sorting.searchsorted(self, v, side, sorter)

    @_eager_method
    def take(self, indices, axis=None, out=None, mode="raise"):
        return _indexing.take(self, indices, axis, out, mode)

    def put(self, indices, values, mode="raise"):
        return _indexing.put(self, indices, values, mode)

    @_eager_method
    def nonzero(self):
        return _indexing.nonzero(self)

    @_eager_method
    def compress(self, condition, axis=None, out=None):
        return _indexing.compress(condition, self, axis, out)

    def choose(self, choices, out=None, mode="raise"):
        return _indexing.choose(self, choices, out, mode)

    # -- flags, bytes and views of the data -----------------------------------
    def setflags(self, write=None, align=None, uic=None):
        if write is not None:
            if write and self._readonly and not self._is_whole_base():
                raise ValueError("cannot set WRITEABLE flag to True of this array")
            self._readonly = not write

    def tobytes(self, order="C"):
        return self._numpy().tobytes(order)

    def tofile(self, fid, sep="", format="%s"):
        from . import _ranks
        a = self._numpy()
        return _ranks.run_writer(lambda: a.tofile(fid, sep, format), fid)

    def dumps(self):
        return self._numpy().dumps()

    def dump(self, file):
        from . import _ranks
        a = self._numpy()
        return _ranks.run_writer(lambda: a.dump(file), file)

    def to_device(self, device, /, *, stream=None):
        return self

    def view(self, dtype=None, type=None):
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
                    if not is_supported(dt) or dt.kind not in "biufc":
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

    def getfield(self, dtype, offset=0):
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

    def setfield(self, val, dtype, offset=0):
        """ndarray.setfield: writes `val` into the field of `dtype` at byte
        `offset` of each element."""
        ndarray.getfield(self, dtype, offset)[...] = val

    def byteswap(self, inplace=False):
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
            parts = [ndarray.byteswap(p)._node() for p in (self.real, self.imag)]
            r = ndarray._from_node(record("complex", parts, self._shape, dt),
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


def _contiguous(shape, strides, order):
    """NumPy's contiguity rule on element strides: dimensions of length 1
    do not count, an empty array is contiguous."""
    if 0 in shape:
        return True
    dims = list(zip(shape, strides))
    expected = 1
    for d, s in (reversed(dims) if order == "C" else dims):
        if d != 1 and s != expected:
            return False
        expected *= d
    return True


def whole_elements(a):
    """Whether each element of view `a` is one whole base element (no part,
    or a field as wide as the element: float64.view(complex64)), so that its
    strides say its layout as NumPy's do."""
    p = a._part
    return p is None or (type(p) is int and p == 0
                         and a._dtype.itemsize == a._base.dtype.itemsize)


def fresh(a):
    """`a` as a function's new result is in NumPy: C-contiguous (a copy of a
    view that is not), so that a later reshape is a view, as NumPy's is, and
    writes through it reach `a`."""
    if a._part is None and _contiguous(a._shape, a._strides, "C"):
        return a
    return a.copy()


class flagsobj:
    """ndarray.flags as NumPy's: attributes (`a.flags.writeable`) and keys
    (`a.flags["C_CONTIGUOUS"]`, `a.flags["W"]`); WRITEABLE can be set (as
    setflags(write=...))."""

    __slots__ = ("_a",)
    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous",
             "CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "FORTRAN": "f_contiguous",
             "WRITEABLE": "writeable", "W": "writeable", "OWNDATA": "owndata",
             "O": "owndata", "ALIGNED": "aligned", "A": "aligned",
             "WRITEBACKIFCOPY": "writebackifcopy", "X": "writebackifcopy",
             "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved", "B": "behaved",
             "CARRAY": "carray", "CA": "carray", "FARRAY": "farray", "FA": "farray"}

    def __init__(self, a):
        self._a = a

    @property
    def c_contiguous(self):
        a = self._a
        return whole_elements(a) and _contiguous(a._shape, a._strides, "C")

    @property
    def f_contiguous(self):
        a = self._a
        return whole_elements(a) and _contiguous(a._shape, a._strides, "F")

    @property
    def writeable(self):
        return not self._a._readonly

    @writeable.setter
    def writeable(self, value):
        self._a.setflags(write=value)

    @property
    def owndata(self):
        return self._a._is_whole_base()

    aligned = property(lambda self: True)
    writebackifcopy = property(lambda self: False)
    forc = property(lambda self: self.c_contiguous or self.f_contiguous)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    behaved = property(lambda self: self.writeable)
    carray = property(lambda self: self.writeable and self.c_contiguous)
    # NumPy's FARRAY tests (ALIGNED or WRITEABLE or F_CONTIGUOUS) and not
    # C_CONTIGUOUS; our arrays are always aligned.
    farray = property(lambda self: not self.c_contiguous)

    def _name(self, key):
        name = self._KEYS.get(key.upper() if isinstance(key, str) else key)
        if name is None:
            raise KeyError(f"Unknown flag {key!r}")
        return name

    def __getitem__(self, key):
        return getattr(self, self._name(key))

    def __setitem__(self, key, value):
        if self._name(key) != "writeable":
            raise KeyError(f"cpnumeric can set only the WRITEABLE flag, not {key!r}")
        self.writeable = value

    def __eq__(self, other):
        if isinstance(other, flagsobj):
            return all(self[k] == other[k] for k in self._SHOWN)
        return NotImplemented

    __hash__ = None
    _SHOWN = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
              "WRITEBACKIFCOPY")

    def __repr__(self):
        return "\n".join(f"  {k} : {self[k]}" for k in self._SHOWN) + "\n"


def _finish_eager(r):
    """The result of a NumPy call on eager operands that the C fast path
    (_cpn.eager) does not wrap itself: a NumPy scalar (0-d operands), a
    non-contiguous array, or a dtype we do not hold (None: the general path
    then decides)."""
    scalar = isinstance(r, _np.generic)
    if type(r) is not _np.ndarray:
        r = _np.asarray(r)
    if is_supported(r.dtype):
        a = ndarray._from_eager(r)
        if scalar:
            a._isscalar = True
        return a
    return None


# The ufunc loops of the common calls: (op, dtype or scalar type, ...) ->
# NumPy's resolved loop (dtypes), for loops cpnumeric compiles (_ufuncs._fast
# fills it, the C path of ufunc calls reads it).
FAST_LOOPS = {}

_cpn.fast_init(ndarray, _Base, _np.ndarray, _finish_eager, FAST_LOOPS, _fast_splat,
               globals(), _RAISING, _EXTOBJ, _SYNCED)
# eager(numpy_ufunc, *operands): NumPy on small eager operands, wrapped; None
# when an operand is traced (python/src/fast.cpp).
eager = _cpn.eager


def asndarray(x, dtype=None):
    """Our ndarray for x (no copy if it already is one)."""
    if isinstance(x, ndarray):
        if dtype is not None and _np.dtype(dtype) != x._dtype:
            return x.astype(dtype)
        return x
    from ._creation import array
    return array(x, dtype=dtype)


# -- the modules ndarray's methods call --------------------------------------
# They import ndarray from here, so they come last; the methods name them in
# their bodies (resolved at call time), and _bind_late below puts the
# functions held by the operators and the eager methods into them.
from . import _jit  # noqa: E402
from . import _creation, _manip, _reductions, _joining, _indexing, _sorting  # noqa: E402
from . import _library, _ufuncs  # noqa: E402  (_manip imported them)
from ._eager import (DECLINED as _DECLINED, TRACED as _TRACED, _Traced,  # noqa: E402
                     _call as _eager_numpy_call, _eager_call, function as _eager_function)

# `a @ b`: what the public cpnumeric.matmul is, _manip.matmul with the eager
# path in front (_eager.install puts it in front of cpnumeric's functions).
_matmul = _eager_function(_np.matmul, _manip.matmul)
_cpn.set_matmul(_matmul)

# The Python functions of the base's binary operators (ArrayBase's, in C) for
# the calls that the ufunc's C path does not take: the ufunc, the operator
# and the reflected one.
_operators = {op: (getattr(_ufuncs, uf), _binop(uf), _rbinop(uf)) for op, uf in {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift"}.items()}
_operators["mul"] = (_ufuncs.multiply, *_mul(*_operators["mul"][1:]))
_operators["pow"] = (_ufuncs.power, _pow, _rbinop("power"))
_bind_late()
_cpn.set_operators(_operators)
# a[key] and a[key] = v: the base's C slots (one element), then these.
_cpn.set_item_handlers(_manip.getitem, _manip.setitem, _manip._ELEMENT_VALUES, _jit.TRACING)
# np.asarray of a computed array: ndarray._buffer_source's common case in C.
_cpn.set_export(_cpn.lend, _errstate.report)
