"""NumPy's ufuncs, traced. Type resolution is NumPy's own (resolve_dtypes);
each call records casts, zero-stride views for broadcasting, and one cpn op."""

import numpy as _np

from . import _core, _cpn, _jit
from ._core import eager as _eager, ndarray, record, statement_end

_UNARY = [
    "negative", "positive", "absolute", "sign", "square", "reciprocal", "sqrt",
    "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "logical_not",
    "invert", "isnan", "isinf", "isfinite", "signbit", "conjugate", "bitwise_count",
    "spacing",
]
_BINARY = [
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
    "power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign",
    "logaddexp", "logaddexp2", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd",
    "lcm", "nextafter",
]
# NumPy names that are the same cpn op.
_ALIASES = {"float_power": "power", "fabs": "absolute",
            "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
            "bitwise_right_shift": "right_shift"}

# The ops compiled for complex operands (lib/Conversion/ScalarComplexOps.cpp); NumPy's
# other complex loops (arcsin, ...) run in NumPy, with a warning.
_COMPLEX_OPS = frozenset([
    "negative", "positive", "conjugate", "absolute", "square", "reciprocal",
    "sign", "sqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "rint",
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "isnan", "isinf", "isfinite",
    "logical_not", "add", "subtract", "multiply", "divide", "power", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum",
    "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor"])


# Ops whose float16 loops are not float32's rounded once (one ulp of half).
_NO_HALF = frozenset(["nextafter", "spacing"])


def native_loop(op, loop):
    """Whether cpnumeric compiles the ufunc loop (a tuple of dtypes)."""
    for d in loop:
        if not _core.is_supported(d):
            return False
        if d.kind == "c" and op not in _COMPLEX_OPS:
            return False
        if d == _np.float16 and op in _NO_HALF:
            return False
    return True


_resolved = {}
_fast_loops = _core.FAST_LOOPS


def _is_py_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, _np.generic)


_LOGICAL = frozenset(("logical_and", "logical_or", "logical_xor"))


def _k_operands(args, shape, order):
    """The operands (our arrays broadcast to `shape`, scalars) of an
    elementwise op computed in the axis order `order` (NumPy's order='K',
    _core.k_order), and that permuted shape; the result, C-contiguous in
    it, is returned as its transpose back to `shape`."""
    from . import _manip
    res = []
    for a in args:
        if isinstance(a, ndarray):
            b = a if a._shape == shape else _manip.broadcast_to(a, shape)
            res.append(b._axes_view(order))
        else:
            res.append(a)
    return res, tuple(shape[k] for k in order)


def _in_type(x):
    """What resolve_dtypes takes for an operand: a dtype, or a Python scalar
    type for NEP 50's weak scalars."""
    if isinstance(x, ndarray):
        return x._dtype
    if isinstance(x, (bool, _np.bool_)):
        return _np.dtype(bool)
    if isinstance(x, (int, float, complex)) and not isinstance(x, _np.generic):
        return type(x)
    return _np.asarray(x).dtype


def _resolve(npufunc, in_types, dtype, casting):
    # dtype('Q') == dtype('L') (uint64 as unsigned long long and as unsigned
    # long: np.array(2 ** 63) is the first): the key tells them apart, so
    # that each gets NumPy's own result type (and its scalar type).
    key = (npufunc.__name__, tuple(in_types), dtype, casting,
           tuple(t.char for t in in_types if isinstance(t, _np.dtype) and t.kind in "iu"),
           dtype.char if isinstance(dtype, _np.dtype) else None)
    r = _resolved.get(key)
    if r is None:
        kw = {"casting": casting}
        if dtype is not None:
            kw["signature"] = (None,) * npufunc.nin + (_np.dtype(dtype),)
        r = npufunc.resolve_dtypes(tuple(in_types) + (None,) * npufunc.nout, **kw)
        _resolved[key] = r
    return r


def _check_c_long(args):
    """NumPy's OverflowError for a Python int operand that is no C long."""
    for a in args:
        if type(a) is int and not -(1 << 63) <= a < (1 << 63):
            raise OverflowError("Python int too large to convert to C long")


def _check_int_power(args, shape, dt=None):
    """NumPy's ValueError for integers to negative integer powers (of a
    result of `shape`: none when it is empty), at the call: a scalar exponent
    is checked here; an exponent array computed by pending work costs a sync
    (its least value), as index bounds do. Under @jit (no sync) it is not
    checked. First, as in NumPy's call, Python int operands of the signed
    loop: one that is no C long is an OverflowError of its own, then NEP
    50's range of the loop's dtype (1080:18435)."""
    e = args[1]
    if dt is not None:
        info = _np.iinfo(dt)
        for a in args:
            if type(a) is not int:
                continue
            if not -(1 << 63) <= a < (1 << 63):
                raise OverflowError("Python int too large to convert to C long")
            if not info.min <= a <= info.max:
                raise OverflowError(f"Python integer {a} out of bounds for {dt}")
    if shape is not None and 0 in shape:
        return
    if isinstance(e, ndarray):
        if e._dtype.kind not in "iu" or e.size == 0:
            return
        if dt is not None and e._dtype != dt:
            # the exponents as the loop reads them (power(u8, u8,
            # dtype='int64'): uint64 past int64 is negative; 800:4012)
            e = e.astype(dt)
        if e._dtype.kind != "i":
            return
        vals = e._eager()
        if vals is None:
            if _jit.tracing_here():
                return
            from ._reductions import amin
            negative = int(amin(e)) < 0
        else:
            negative = bool((vals < 0).any())
    else:
        e = _np.asarray(e)
        if dt is not None and e.dtype.kind in "iu" and e.dtype != dt:
            e = e.astype(dt)
        negative = bool(_np.any(e < 0))
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


_COMPARISONS = frozenset(["equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"])


def _decided_comparison(op, args, loop):
    """NumPy 2's comparison of an integer array with a Python int out of the
    range of the loop's integer dtype (NumPy's special_integer_comparisons):
    no conversion, the same answer for every element, decided by the int's
    sign (`u8 > -1` all True, `u8 == 300` all False). That bool, or None
    for every other call (a bool array's int64 loop still overflows)."""
    if op not in _COMPARISONS or len(args) != 2:
        return None
    for i in (0, 1):
        a, other = args[i], args[1 - i]
        if type(a) is not int or not isinstance(other, ndarray) \
                or other._dtype.kind not in "iu" or loop[i].kind not in "iu":
            continue
        info = _np.iinfo(loop[i])
        if info.min <= a <= info.max:
            return None
        left_less = (a > info.max) == (i == 1)  # left < right for every element
        if op == "equal":
            return False
        if op == "not_equal":
            return True
        return left_less == (op in ("less", "less_equal"))
    return None


def _constant_bool(value, shape):
    dt = _np.dtype(bool)
    return record("copy", [_core.splat(value, shape, dt)], shape, dt)


def _shape_text(shape):
    """A shape as NumPy's messages print it: (2,3), (2,), ()."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _raise_like_numpy(npufunc, args, out, casting, dtype):
    """Call NumPy on 0-d stand-ins so that the error is exactly NumPy's."""
    dummies = [_np.zeros((), a._dtype) if isinstance(a, ndarray) else a for a in args]
    npufunc(*dummies, out=_np.zeros((), out._dtype), casting=casting, dtype=dtype)
    raise TypeError(f"Cannot cast ufunc {npufunc.__name__!r} output to "
                    f"{out._dtype} with casting rule {casting!r}")


# The ufuncs whose reduce is a native reduction.
_REDUCE_KINDS = {"add": "sum", "multiply": "prod", "maximum": "max",
                 "minimum": "min", "logical_or": "any", "logical_and": "all"}

# The ufuncs whose accumulate is a runtime scan, by the loop's dtype: on bool
# (0 or 1 in a byte) add and logical_or are maximum, multiply and
# logical_and minimum.
_SCAN_KINDS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
               "minimum": "cummin", "fmax": "cumfmax", "fmin": "cumfmin"}
_INT_SCAN_KINDS = {"bitwise_and": "cumand", "bitwise_or": "cumor", "bitwise_xor": "cumxor"}
_BOOL_SCAN_KINDS = {"add": "cummax", "logical_or": "cummax", "maximum": "cummax",
                    "fmax": "cummax", "bitwise_or": "cummax", "multiply": "cummin",
                    "logical_and": "cummin", "minimum": "cummin", "fmin": "cummin",
                    "bitwise_and": "cummin", "logical_xor": "cumxor",
                    "bitwise_xor": "cumxor", "not_equal": "cumxor"}


def _scan_kind(name, loop):
    """The runtime scan of `name`.accumulate in the loop dtype, or None."""
    if loop.kind == "b":
        return _BOOL_SCAN_KINDS.get(name)
    if loop.kind in "iu":
        return _SCAN_KINDS.get(name) or _INT_SCAN_KINDS.get(name)
    return _SCAN_KINDS.get(name)


def _at_kind(name, loop, dt):
    """The runtime's ufunc.at operation (cpn_lib_at_<kind>) for `name` with
    the resolved `loop` on an array of dtype `dt`, or None. The loop must
    compute in `dt`, except that + - * of integers in a wider integer loop
    give the same bits as in `dt` (arithmetic modulo 2^bits)."""
    kind = {"add": "add", "subtract": "subtract", "multiply": "multiply",
            "maximum": "maximum", "minimum": "minimum", "logical_or": "maximum",
            "logical_and": "minimum"}.get(name)
    if kind is None or not all(_core.is_supported(d) for d in loop):
        return None
    if dt.kind == "b":
        if any(d.kind != "b" for d in loop):
            return None
        return {"add": "maximum", "multiply": "minimum", "maximum": "maximum",
                "minimum": "minimum"}.get(kind)
    if name.startswith("logical"):
        return None
    if all(d == dt for d in loop):
        return kind
    if (kind in ("add", "subtract", "multiply") and dt.kind in "iu"
            and loop[0] == loop[2] and loop[2].kind in "iu"
            and loop[2].itemsize >= dt.itemsize and loop[0] == loop[1]):
        return kind
    return None


class ufunc(_cpn.UfuncBase):
    """A traced NumPy ufunc with NumPy's signature and semantics. Calls
    without keywords on small eager operands, or on whole traced arrays of
    the loop's dtypes and Python scalars once `_fast` has cached the loop,
    run in C (_cpn.UfuncBase, python/src/fast.cpp); every other call comes
    to `_general`."""

    def __init__(self, name):
        npufunc = getattr(_np, name)
        self._op = _ALIASES.get(name, name)
        super().__init__(npufunc, self._op)
        self.__name__ = name
        self._np = npufunc
        self.nin, self.nout = npufunc.nin, npufunc.nout
        self.__doc__ = npufunc.__doc__

    def __repr__(self):
        return f"<cpnumeric ufunc '{self.__name__}'>"

    def _general(self, *args, out=None, **kwargs):
        r = self._general_call(*args, out=out, **kwargs)
        if out is None:
            # 0-d results are what NumPy gives as scalars (ndarray._isscalar)
            for x in (r if type(r) is tuple else (r,)):
                if type(x) is ndarray and not x._shape and \
                        all(x is not a for a in args):
                    x._isscalar = True
        return r

    def _general_call(self, *args, out=None, where=True, casting="same_kind",
                      dtype=None, **kwargs):
        if self._op in _LOGICAL and (dtype is None or any(
                t.endswith("->" + _np.dtype(dtype).char) for t in self._np.types)):
            # NumPy's logical loops take Python ints as C longs; with no
            # loop for `dtype`, resolution's TypeError comes first (1030:10841)
            _check_c_long(args)
        if out is None and where is True and dtype is None and not kwargs \
                and casting == "same_kind" and len(args) == self.nin:
            r = self._quick(args)
            if r is not None:
                return r
        return self._call(args, out, where, casting, dtype, kwargs)

    def _quick(self, args):
        """The common calls (no keywords, `nin` operands): small eager
        operands straight to NumPy, then same-shape arrays and Python scalars
        recorded by the cached loop; None when the general path must run."""
        r = _eager(self._np, *args)
        return r if r is not None else self._fast(args)

    def _fast(self, args):
        """The common call: arrays, Python scalars and NumPy scalars, no
        keywords. The loop is cached by operand types; None when the general
        path must run."""
        key, shape, cached = [self._op], None, True
        for a in args:
            t = type(a)
            if t is ndarray:
                d = a._dtype
                # dtype('q') == dtype('l') (long long and long): each kind
                # keeps its own loop, so the long long kinds are not cached
                # (the C path leaves them to this one).
                if d.char in "qQ":
                    cached = False
                key.append(d)
                if shape is None:
                    shape = a._shape
                elif a._shape != shape:
                    return None
            elif t is float or t is int or t is bool or t is complex:
                key.append(t)
            elif isinstance(a, _np.generic):
                # A NumPy scalar (np.float64(2), w[i] of a NumPy array): a
                # strong 0-d operand of its dtype (NEP 50), which its type
                # decides for the held numeric types; the long long kinds
                # as above. It went through _call and a store of its own:
                # 10.9 us to record `x * np.float64(2)` against 1.4 for
                # `x * 2.0`.
                d = a.dtype
                if not _core.is_supported(d):
                    return None
                if d.char in "qQ":
                    cached = False
                key.append(t)
            else:
                return None
        key = tuple(key)
        loop = _fast_loops.get(key) if cached else None
        if loop is None:
            loop = _resolve(self._np, [_in_type(a) for a in args], None, "same_kind")
            if not native_loop(self._op, loop):
                return None
            if self._op == "power" and loop[1].kind == "i":
                _check_int_power(args, shape, loop[1])  # each call checks: not cached
            elif cached:
                _fast_loops[key] = loop
        if shape is None:
            shape = ()
        out_dt = loop[self.nin]
        if self._op in _COMPARISONS:
            c = _decided_comparison(self._op, args, loop)
            if c is not None:
                return ndarray._from_node(_constant_bool(c, shape), shape, out_dt)
        order = _core.k_order(args, shape) if len(shape) > 1 else None
        if order is not None:
            args, shape = _k_operands(args, shape, order)
        nodes = []
        for a, dt in zip(args, loop):
            if type(a) is ndarray:
                nodes.append(a._node() if dt == a._dtype else a._node_as(shape, dt))
            else:
                nodes.append(_core.splat(a, shape, dt))
        r = ndarray._from_node(record(self._op, nodes, shape, out_dt), shape, out_dt)
        return r if order is None else r._axes_view(_core._inverse_axes(order))

    def _call(self, args, out, where, casting, dtype, kwargs):
        if len(args) != self.nin:
            if len(args) == self.nin + 1 and out is None:
                out, args = args[-1], args[:-1]
            else:
                raise TypeError(f"{self.__name__}() takes {self.nin} positional "
                                f"arguments but {len(args)} were given")
        if kwargs.pop("order", "K") not in ("K", "C", "A", "F") or kwargs.pop("subok", True) is not True:
            raise ValueError("unsupported order/subok")
        if kwargs:
            raise TypeError(f"{self.__name__}() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("the 'out' tuple must have exactly one entry")
            out = out[0]
        if out is not None and not isinstance(out, ndarray):
            if isinstance(out, _np.ndarray):
                return self._into_numpy(args, out, where, casting, dtype)
            raise TypeError("return arrays must be of ArrayType")
        if out is not None and out._readonly:
            # NumPy checks this as it takes the operands, before any loop
            raise ValueError("output array is read-only")
        args = [a if isinstance(a, ndarray) or _is_py_scalar(a)
                else _core.asndarray(a) for a in args]
        if dtype is not None and _np.dtype(dtype).kind in "iu" and any(
                t.endswith("->" + _np.dtype(dtype).char) for t in self._np.types):
            # NumPy converts Python ints to the requested integer dtype first:
            # one out of its range is an OverflowError before any cast check
            # (but after the check that a loop exists: divide has no uint16
            # loop, a TypeError).
            for a in args:
                if isinstance(a, int) and not isinstance(a, bool):
                    _np.array(a, dtype=dtype)
        if dtype is not None and _np.dtype(dtype).kind == "b" and any(
                t.endswith("->?") for t in self._np.types):
            # a bool loop takes them as C longs first (720:17256); without
            # one (logaddexp) resolution's TypeError comes first (1020:2412)
            _check_c_long(args)
        in_types = [_in_type(a) for a in args]
        loop = _resolve(self._np, in_types, dtype, casting)
        in_dts, out_dt = loop[:self.nin], loop[self.nin]
        if not native_loop(self._op, loop):
            from . import _fallback  # complex loops we do not compile
            kw = {"out": out, "casting": casting, "dtype": dtype}
            if where is not True:
                kw["where"] = where
            return _fallback.call_numpy_ufunc(self._np, "__call__", args, kw)
        # NumPy's order: the output cast is checked before the shapes.
        if out is not None and not _np.can_cast(out_dt, out._dtype, casting):
            _raise_like_numpy(self._np, args, out, casting, dtype)
        shapes = [a._shape if isinstance(a, ndarray) else () for a in args]
        if out is not None:
            shapes.append(out._shape)
        w = None
        if where is not True:
            w = _core.asndarray(where, dtype=bool)
            shapes.append(w._shape)
        try:
            full = _np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError("operands could not be broadcast together with shapes "
                             + "".join(_shape_text(t) + " " for t in shapes)) from None
        if out is not None:
            if full != out._shape:
                raise ValueError(f"non-broadcastable output operand with shape "
                                 f"{_shape_text(out._shape)} doesn't match the "
                                 f"broadcast shape {_shape_text(full)}")
        shape = full
        if self._op == "power" and loop[1].kind == "i":
            _check_int_power(args, shape, loop[1])  # after the casting check, as NumPy's loop
        order = None
        if out is None and len(shape) > 1:
            # NumPy's order='K': the result's axes in its operands' order
            order = _core.k_order(args if w is None else list(args) + [w], shape)
            if order is not None:
                if w is not None:
                    w = _k_operands([w], shape, order)[0][0]
                args, shape = _k_operands(args, shape, order)
        c = _decided_comparison(self._op, args, loop)
        if c is not None:
            res = _constant_bool(c, shape)
        else:
            nodes = []
            for a, dt in zip(args, in_dts):
                if isinstance(a, ndarray):
                    nodes.append(a._node_as(shape, dt))
                else:
                    nodes.append(_core.splat(a, shape, dt))
            res = self._record(nodes, shape, loop)
        if out is None:
            if w is not None:
                res = record("select", [w._node_as(shape), res,
                                        _core.splat(0, shape, out_dt)], shape, out_dt)
            r = ndarray._from_node(res, shape, out_dt)
            return r if order is None else r._axes_view(_core._inverse_axes(order))
        if out_dt != out._dtype:
            res = record("cast", [res], shape, out._dtype)
        if w is not None:
            res = record("select", [w._node_as(shape), res, out._node()], shape,
                         out._dtype)
        out._write(res)
        statement_end()
        return out

    def _record(self, nodes, shape, loop):
        """The op on operand nodes already of the loop's input dtypes."""
        return record(self._op, nodes, shape, loop[self.nin])

    def _into_numpy(self, args, out, where, casting, dtype):
        """`out=` a NumPy array (`numpy_array += cpnumeric_array` comes here
        through __array_ufunc__): computed into a cpnumeric copy of `out`
        (NumPy's casting and broadcasting checks, `where=` keeping the other
        elements), then written back into it: a sync point."""
        if not out.flags.writeable:
            raise ValueError("output array is read-only")
        if not _core.is_supported(out.dtype):
            from . import _fallback
            kw = {"out": out, "casting": casting, "dtype": dtype}
            if where is not True:
                kw["where"] = where
            return _fallback.call_numpy_ufunc(self._np, "__call__", args, kw)
        tmp = _core.asndarray(out.copy())
        self._call(args, tmp, where, casting, dtype, {})
        out[...] = tmp._numpy()
        return out

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False,
               initial=None, where=True):
        from . import _reductions
        kind = _REDUCE_KINDS.get(self.__name__)
        if kind is None:
            raise NotImplementedError(f"{self.__name__}.reduce is not native")
        if isinstance(out, tuple):  # NumPy's __array_ufunc__ passes out=(out,)
            if len(out) != 1:
                raise ValueError("the 'out' tuple must have exactly one entry")
            out = out[0]
        return _reductions.reduce(kind, a, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """NumPy's ufunc.accumulate: its argument checks, exceptions and loop
        dtype (NumPy's own resolution, on 1-element stand-ins). add,
        multiply, maximum, minimum, fmax, fmin, the logical and (on integer
        and bool loops) bitwise ones are runtime scans (cpn_lib_cum*,
        runtime/lib/Scans.cpp); the other binary ufuncs run NumPy's accumulate (the
        declared fallback)."""
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("the 'out' tuple must have exactly one entry")
            out = out[0]
        if out is not None and not isinstance(out, ndarray):
            if isinstance(out, _np.ndarray):  # computed, then written back
                if not out.flags.writeable:
                    raise ValueError("output array is read-only")
                tmp = _core.asndarray(out.copy())
                self.accumulate(array, axis, dtype, tmp)
                out[...] = tmp._numpy()
                return out
            raise TypeError("return arrays must be of ArrayType")
        a = array if isinstance(array, ndarray) else _core.asndarray(array)
        # NumPy's checks (binary ufunc, scalar input, axis, dtype, casting to
        # out) and result dtype, on stand-ins of one element.
        np_out = None if out is None else _np.zeros((1,) * out.ndim, out._dtype)
        with _np.errstate(all="ignore"):
            res_dt = self._np.accumulate(_np.zeros((1,) * a.ndim, a._dtype), axis=axis,
                                         dtype=dtype, out=np_out).dtype
        if out is not None and out._shape != a._shape:
            raise ValueError("provided out is the wrong size for the accumulation.")
        if isinstance(axis, tuple):
            axis = axis[0]
        elif axis is None:  # NumPy takes it for 1-D arrays only
            axis = 0
        axis = _np.lib.array_utils.normalize_axis_index(axis, a.ndim)
        kw = {} if dtype is None else {"signature": (_np.dtype(dtype), None, None)}
        loop = self._np.resolve_dtypes((None if out is None else out._dtype, a._dtype, None),
                                       reduction=True, casting="unsafe", **kw)[0]
        kind = _scan_kind(self.__name__, loop)
        if kind is None or not _core.is_supported(loop) or (out is None and loop != res_dt):
            from . import _fallback
            return _fallback.call_numpy_ufunc(self._np, "accumulate", (a,),
                                              {"axis": axis, "dtype": dtype, "out": out})
        if out is None and a._eager() is not None:
            from ._library import wrap
            return wrap(self._np.accumulate(a._eager(), axis=axis, dtype=dtype))
        from ._sorting import scan_name, scan_rows
        return _core.store_out(scan_rows(a.astype(loop, copy=False), axis,
                                         scan_name(kind, _np.dtype(loop)), loop, out is None), out)

    def at(self, a, indices, b=_np._NoValue):
        """NumPy's ufunc.at: a[indices] = op(a[indices], b), unbuffered (a
        repeated index takes each of its values in turn). add, subtract,
        multiply, maximum and minimum (and logical_or/and of bool) whose loop
        computes in a's dtype (or, for + - *, in a wider integer one: the
        same bits) are a runtime scatter in index order (cpn_lib_at_*,
        runtime/lib/Scans.cpp); other ufuncs and loops run NumPy's at on a copy of
        `a`, written back (the declared fallback)."""
        from . import _fallback, _indexing
        args = (indices,) if b is _np._NoValue else (indices, b)
        if not isinstance(a, ndarray):
            if isinstance(a, _np.ndarray):  # NumPy's at, in place
                return _fallback.call_numpy_ufunc(self._np, "at", (a,) + args, {})
            raise TypeError("first operand must be array")
        if self.nin == 2 and b is _np._NoValue:
            raise ValueError("second operand needed for ufunc")
        if self.nin == 1 and b is not _np._NoValue:
            raise ValueError("second operand provided when ufunc is unary")
        if a._readonly:
            raise ValueError("assignment destination is read-only")
        bv = None if b is _np._NoValue else _core.asndarray(b)
        np_key = _indexing._eager_key(a, indices)
        if np_key is not None and (bv is None or bv._eager() is not None):
            self._np.at(a._eager(), np_key, *(() if bv is None else (bv._eager(),)))
            return None  # small: NumPy's, in place
        kind = None
        if bv is not None and a._part is None and a._dtype != _np.float16:
            # NumPy's at takes b as an array (int64 for a Python int), then
            # casts the result: a Python int within a's integer type gives
            # the same elements by a's own loop (`np.maximum.at(a_int32,
            # idx, 3)`: no int64 loop, which is not natively run here).
            in_b = bv._dtype
            # Not uint64: NumPy's uint64 with int64 is a float64 loop, whose
            # rounding above 2**53 the result keeps (fuzz 1334:1277).
            if type(b) is int and a._dtype.kind in "iu" and a._dtype != _np.uint64:
                info = _np.iinfo(a._dtype)
                in_b = a._dtype if info.min <= b <= info.max else in_b
            loop = _resolve(self._np, [a._dtype, in_b], None, "unsafe")
            kind = _at_kind(self.__name__, loop, a._dtype)
        if kind is None:
            _fallback._warn(f"numpy.{self.__name__}.at")
            host = a._numpy()
            self._np.at(host, *_fallback._to_numpy(args))
            a[...] = host
            return None
        items = indices if isinstance(indices, tuple) else (indices,)
        if all(k is None or k is Ellipsis or isinstance(k, slice) for k in items):
            v = a[indices]  # a view: no element twice
            self(v, bv, out=v, casting="unsafe")
            return None
        index = _indexing._Key(a, indices)
        vshape = bv._shape
        if not _core.broadcasts_to(vshape, index.shape):
            raise ValueError("array is not broadcastable to correct shape")
        if 0 in index.shape:
            return None
        _core.complex_warning(bv._dtype, a._dtype)
        from ._library import libcall
        from ._manip import broadcast_to, ravel
        flat = _indexing._flat_base(a)
        positions = ravel(index.positions())
        if bv.size == 1:
            # One value for every index: the 0-d value itself, which the
            # runtime reads once (a broadcast of it to the indices' shape
            # was one element per index in a compiled kernel, whose library
            # calls read their operands as buffers).
            values = bv.astype(a._dtype, copy=False).reshape(())
        else:
            values = ravel(broadcast_to(bv.astype(a._dtype, copy=False), index.shape))
        flat[...] = libcall(f"at_{kind}", [flat, positions, values],
                            flat._shape, a._dtype)
        return None


class _OwnLoops(ufunc):
    """A NumPy ufunc computed by another's cpn op (fabs by absolute,
    float_power by power) but with loops of its own (fabs of int8 is
    float16): each call resolves its own loop, never taking one from the
    cache that the op's calls share (keyed by the op, in C as well)."""

    def __call__(self, *args, **kwargs):
        return self._general(*args, **kwargs)

    def _fast(self, args):
        return None


class _Scaled(_OwnLoops):
    """deg2rad/radians and rad2deg/degrees: NumPy's float loops (int8 gives
    float16, int16 float32), x times NumPy's constant in the loop's
    precision (float32's is pi_f / 180_f rounded in float32, as npy_math's;
    float16 computes in float32 and rounds once)."""

    def __init__(self, name, to_radians):
        super().__init__(name)
        self._to_radians = to_radians

    def _record(self, nodes, shape, loop):
        dt = loop[0]
        wide = _np.dtype(_np.float32) if dt == _np.float16 else dt
        pi, k = (_np.pi, 180.0) if wide == _np.float64 else (_np.float32(_np.pi), _np.float32(180))
        factor = float(pi / k if self._to_radians else k / pi)
        x = nodes[0] if wide == dt else record("cast", [nodes[0]], shape, wide)
        r = record("multiply", [x, _core.splat(factor, shape, wide)], shape, wide)
        return r if wide == dt else record("cast", [r], shape, dt)


for _name in _UNARY + _BINARY + list(_ALIASES):
    _cls = _OwnLoops if getattr(_np, _name) is not getattr(_np, _ALIASES.get(_name, _name)) \
        else ufunc
    globals()[_name] = _cls(_name)
for _name, _to_radians in (("deg2rad", True), ("radians", True), ("rad2deg", False),
                           ("degrees", False)):
    globals()[_name] = _Scaled(_name, _to_radians)

true_divide = globals()["divide"]
mod = globals()["remainder"]
abs = globals()["absolute"]  # noqa: A001
conj = globals()["conjugate"]
bitwise_not = globals()["invert"]

# NumPy 2's array-API names are the same ufuncs (np.acos is np.arccos).
_SAME = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
         "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh",
         "atan2": "arctan2", "pow": "power"}
for _alias, _of in _SAME.items():
    globals()[_alias] = globals()[_of]

NATIVE_UFUNCS = _UNARY + _BINARY + list(_ALIASES) + [
    "deg2rad", "radians", "rad2deg", "degrees",
    "true_divide", "mod", "abs", "conj", "bitwise_not"] + list(_SAME)


def clip(a, a_min=_np._NoValue, a_max=_np._NoValue, out=None, *, min=_np._NoValue,
         max=_np._NoValue, **kwargs):
    """NumPy's clip (its argument rules and NEP 50 dtypes)."""
    if a_min is _np._NoValue and a_max is _np._NoValue:
        a_min = None if min is _np._NoValue else min
        a_max = None if max is _np._NoValue else max
    elif a_min is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_min'")
    elif a_max is _np._NoValue:
        raise TypeError("clip() missing 1 required positional argument: 'a_max'")
    elif min is not _np._NoValue or max is not _np._NoValue:
        raise ValueError("Passing `min` or `max` keyword argument when "
                         "`a_min` and `a_max` are provided is forbidden.")
    return clip_method(a, a_min, a_max, out, **kwargs)


def clip_method(a, min=None, max=None, out=None, **kwargs):
    """ndarray.clip, as NumPy's _methods._clip: out-of-range Python int
    bounds of an integer array are dropped; one bound is maximum or minimum;
    both are NumPy's clip ufunc: one loop for the three operands' dtypes
    (clip(bool_array, 5, float32(1.5)) is float32), minimum(maximum(a, lo),
    hi) in it."""
    a = a if isinstance(a, ndarray) else _core.asndarray(a)
    lo, hi = min, max
    if a._dtype.kind in "iu":
        info = _np.iinfo(a._dtype)
        if type(lo) is int and lo <= info.min:
            lo = None
        if type(hi) is int and hi >= info.max:
            hi = None
    g = globals()
    if lo is None and hi is None:
        return g["positive"](a, out=out, **kwargs)
    if lo is None:
        return g["minimum"](a, hi, out=out, **kwargs)
    if hi is None:
        return g["maximum"](a, lo, out=out, **kwargs)
    ops = [v if isinstance(v, ndarray) or _is_py_scalar(v) else _core.asndarray(v)
           for v in (a, lo, hi)]
    loop = _resolve(_np._core.umath.clip, [_in_type(v) for v in ops],
                    kwargs.pop("dtype", None), kwargs.get("casting", "same_kind"))
    dt = loop[0]
    x, lo, hi = (v.astype(dt, copy=False) if isinstance(v, ndarray) else v for v in ops)
    if dt.kind == "f" and not kwargs and all(
            not isinstance(v, ndarray) or v.ndim == 0 for v in (lo, hi)):
        # NumPy's loop for bounds of stride 0 (scalars, 0-d arrays): lo > x ?
        # lo : x, then hi < v ? hi : v (x's own zero where it equals a bound:
        # clip(-0.0, 0.0, 0.0) is -0.0, clip(-4, 0.0, -0.0) is 0.0); a NaN
        # bound makes every element NaN. Array bounds are minimum(maximum(x,
        # lo), hi), as there.
        lo, hi = (v if isinstance(v, ndarray) else dt.type(v) for v in (lo, hi))
        v = g["where"](g["greater"](lo, x), lo, x)
        r = g["where"](g["less"](hi, v), hi, v)
        if isinstance(lo, ndarray) or isinstance(hi, ndarray):
            nan_bound = g["logical_or"](g["isnan"](lo), g["isnan"](hi))
            r = g["where"](nan_bound, dt.type(_np.nan), r)
        elif _np.isnan(lo) or _np.isnan(hi):   # scalar bounds: decided here
            r = g["where"](True, dt.type(_np.nan), r)
        return _core.store_out(r.astype(dt, copy=False), out)
    if dt.kind == "c" and not kwargs:
        # NumPy's complex clip loop: a bound wins where x equals it (x = -0-0j
        # clipped at 0 is 0j: its log2's imaginary part tells), a NaN x
        # stays, a NaN bound wins; minimum(maximum()) kept x's own zero
        # (fuzz 1250:957).
        v = g["where"](g["logical_or"](g["isnan"](x), g["greater"](x, lo)), x, lo)
        r = g["where"](g["logical_or"](g["isnan"](v), g["less"](v, hi)), v, hi)
        return _core.store_out(r.astype(dt, copy=False), out)
    return g["minimum"](g["maximum"](x, lo), hi, out=out, **kwargs)


def _where_operand(v, dt):
    if isinstance(v, ndarray):
        return v
    if _is_py_scalar(v):  # as NumPy's where: its default dtype, cast unsafely
        v = _np.asarray(v).astype(dt)
    return _core.asndarray(v, dtype=dt)


def _is_scalar_operand(v):
    return _is_py_scalar(v) or (isinstance(v, _np.generic) and _core.is_supported(v.dtype))


def _where_direct(condition, x, y, dt):
    """where(c, x, y) of arrays and scalars in C order (the usual call):
    scalars as splats of their values converted as below (no store and no
    0-d array each: `where(c, a, 0.0)` took 9.3 us to record, clip 44),
    equal shapes without broadcast_shapes. None for other calls."""
    ops = (condition, x, y)
    shape = None
    for v in ops:
        if type(v) is ndarray:
            if shape is None:
                shape = v._shape
            elif v._shape != shape:
                shape = False
        elif not _is_scalar_operand(v):
            return None
    if shape is False:
        shape = _np.broadcast_shapes(*[v._shape for v in ops if type(v) is ndarray])
    elif shape is None:
        shape = ()
    if len(shape) > 1 and _core.k_order([v for v in ops if type(v) is ndarray],
                                        shape) is not None:
        return None
    nodes = []
    for v, vdt in ((condition, _BOOL), (x, dt), (y, dt)):
        if type(v) is ndarray:
            nodes.append(v._node_as(shape, vdt))
            continue
        if vdt is _BOOL:   # NumPy's where: the condition as a bool array
            v = _np.asarray(v).astype(bool)
        elif _is_py_scalar(v):   # its default dtype, cast unsafely (as _where_operand)
            v = _np.asarray(v).astype(dt)
        else:   # a NumPy scalar: promoted to dt, exactly
            v = _np.asarray(v, dtype=dt)
        nodes.append(_core.splat(v[()], shape, vdt))
    node = record("select", nodes, shape, dt)
    return ndarray._from_node(node, shape, dt)


_BOOL = _np.dtype(bool)


def where(condition, x=None, y=None):
    """where(cond, x, y) elementwise; where(cond) is nonzero(cond)."""
    if x is None and y is None:
        from . import _indexing
        return _indexing.nonzero(_core.asndarray(condition))
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    dt = _np.result_type(*[v if _is_py_scalar(v) else _in_type(v) for v in (x, y)])
    r = _where_direct(condition, x, y, dt)
    if r is not None:
        return r
    c = _core.asndarray(condition)
    xs, ys = (_where_operand(v, dt) for v in (x, y))
    shape = _np.broadcast_shapes(c._shape, xs._shape, ys._shape)
    order = _core.k_order((c, xs, ys), shape) if len(shape) > 1 else None
    if order is not None:  # NumPy's order='K'
        (c, xs, ys), shape = _k_operands((c, xs, ys), shape, order)
    cn = c._node_as(shape, _np.dtype(bool))
    node = record("select", [cn, xs._node_as(shape, dt), ys._node_as(shape, dt)],
                  shape, dt)
    r = ndarray._from_node(node, shape, dt)
    return r if order is None else r._axes_view(_core._inverse_axes(order))


def dispatch_numpy_ufunc(npufunc, method, inputs, kwargs):
    """NumPy ufuncs called on our arrays come here (__array_ufunc__)."""
    ours = globals().get(npufunc.__name__)
    if isinstance(ours, ufunc):
        if method == "__call__":
            return ours(*inputs, **kwargs)
        if method == "reduce" and npufunc.__name__ in _REDUCE_KINDS:
            return ours.reduce(*inputs, **kwargs)
        if method in ("accumulate", "at"):
            return getattr(ours, method)(*inputs, **kwargs)
    if npufunc is _np.matmul and method == "__call__" and len(inputs) == 2:
        # `numpy_array @ ours` (NumPy's operator calls its matmul gufunc):
        # cpnumeric.matmul, small eager operands on NumPy's call as `ours @
        # numpy_array` takes them
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            out = out[0] if len(out) == 1 else out
        return _core._matmul(*inputs, out=out, **kwargs)  # its eager front first
    from . import _fallback
    return _fallback.call_numpy_ufunc(npufunc, method, inputs, kwargs)
