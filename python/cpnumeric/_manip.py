"""Views, shape functions, basic indexing and matrix products."""

import operator as _operator

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import _core, _cpn, _jit, _library, _ufuncs
from ._core import c_strides, ndarray, prod, record, statement_end


# -- basic indexing -------------------------------------------------------------
def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, _np.bool_)):
            return False
        if isinstance(k, (int, _np.integer)):
            continue
        if isinstance(k, ndarray) and k.ndim == 0 and k._dtype.kind in "iu":
            continue
        return False
    return True


def basic_view(a, key):
    """The view a[key] for ints, slices, None and Ellipsis."""
    items = list(key) if isinstance(key, tuple) else [key]
    n_real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if n_real > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, "
                         f"but {n_real} were indexed")
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (a.ndim - n_real)
    else:
        items += [slice(None)] * (a.ndim - n_real)
    shape, strides, offset, dim = [], [], a._offset, 0
    for k in items:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        d, s = a._shape[dim], a._strides[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(d)
            n = len(range(start, stop, step))
            shape.append(n)
            strides.append(s * step)
            if n:
                offset += start * s
        else:
            i = int(k)
            if i < -d or i >= d:
                _check_intp(i)
                raise IndexError(f"index {i} is out of bounds for axis {dim} with "
                                 f"size {d}")
            offset += (i % d) * s
        dim += 1
    return a._view(shape, strides, offset)


def _is_element(key, ndim):
    """Whether a basic key names one element (an integer per axis, nothing
    else): NumPy then returns a scalar, not a view."""
    items = key if isinstance(key, tuple) else (key,)
    if len(items) != ndim:
        return False
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, slice):
            return False
    return True


def _element_offset(a, key):
    """The base offset of the element that a tuple of Python ints names (one
    per axis), or None for any other key."""
    if len(key) != len(a._shape):
        return None
    off = a._offset
    for axis, (i, d, s) in enumerate(zip(key, a._shape, a._strides)):
        if type(i) is not int:
            return None
        if i < -d or i >= d:
            _check_intp(i)
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {d}")
        off += (i % d) * s
    return off


def _check_intp(i):
    """NumPy's errors for an integer index outside int64: OverflowError up
    to 2**64 (it tries an unsigned long), IndexError beyond."""
    if (1 << 63) <= i < (1 << 64):
        raise OverflowError("Python int too large to convert to C long")
    if not -(1 << 63) <= i < (1 << 63):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                         "(`None`) and integer or boolean arrays are valid indices")


def getitem(a, key):
    t = type(key)
    if (t is int or t is tuple) and (a._base.np is not None
                                     or (_TRACING["function"] is None or not _jit.tracing_here())):
        r = _element_get(a, key)  # an eager or computed array's element, in C
        if r is not None:
            return r
        off = _element_offset(a, (key,) if t is int else key)
        if off is not None:  # the common a[i], a[i, j]: the element, no view
            return a._element(off)
    if t is ndarray and key._shape and a._base.np is not None:
        # One eager index array or mask into an eager array (a[idx], a[m]):
        # NumPy indexes at once; its result is a fresh copy, kept as it is.
        k = key._eager()
        if k is not None:
            return _library.wrap(a._eager()[k])
    if _is_basic(key):
        v = basic_view(a, key)
        if _is_element(key, a.ndim):
            return v._scalar()
        if any(isinstance(k, ndarray) for k in (key if t is tuple else (key,))):
            # a 0-d integer array is an advanced index in NumPy: its result
            # is a copy (a[np.array(1)] of a 2-D array), not a view
            return copy_array(v)
        return v
    from . import _indexing
    return _indexing.getitem(a, key)


# Scalars that a[i] = v may write straight into a computed store.
_ELEMENT_VALUES = frozenset((bool, int, float, complex, _np.float64, _np.float32,
                             _np.int64, _np.int32, _np.bool_, _np.complex128,
                             _np.uint8, _np.float16, _np.complex64))


_element_get, _element_set = _cpn.element_get, _cpn.element_set
_TRACING = _jit.TRACING


def setitem(a, key, value):
    t = type(key)
    if ((t is int or t is tuple) and type(value) in _ELEMENT_VALUES
            and (_TRACING["function"] is None or not _jit.tracing_here())
            and _element_set(a, key, value)):
        return
    if t is ndarray and key._shape and a._base.np is not None and not a._readonly:
        # One eager index array or mask into an eager array: NumPy assigns.
        k = key._eager()
        src = value._eager() if isinstance(value, ndarray) else value
        if k is not None and src is not None:
            a._eager()[k] = src
            statement_end()
            return
    if not _is_basic(key):
        from . import _indexing
        _indexing.setitem(a, key, value)
        statement_end()
        return
    v = basic_view(a, key)
    if v._readonly:
        raise ValueError("assignment destination is read-only")
    if v._base.np is not None:  # an eager array: NumPy assigns
        src = value
        if isinstance(value, ndarray):
            src = value._eager()
        if src is not None and not isinstance(src, ndarray):
            v._eager()[...] = src
            return
    if isinstance(value, ndarray):
        extra = len(value._shape) - len(v._shape)
        if extra > 0 and all(d == 1 for d in value._shape[:extra]):
            # NumPy's assignment drops a value's leading unit axes
            value = reshape(value, value._shape[extra:])
        if not _core.broadcasts_to(value._shape, v._shape):
            raise ValueError(f"could not broadcast input array from shape "
                             f"{value._shape} into shape {v._shape}")
        node = value._node_as(v._shape, v._dtype)
    elif isinstance(value, (bool, int, float, complex, _np.generic)):
        # A scalar converts as NumPy's setitem packs it (TypeError for a
        # complex into a real array, OverflowError for an int out of range,
        # ValueError for NaN into ints, np.float64 as the Python float it
        # is), even where the key selects nothing.
        node = _core.splat(_core.pack_scalar(value, v._dtype), v._shape, v._dtype)
    else:
        arr = _np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "biuf":
            node = _core.splat(arr.astype(v._dtype)[()], v._shape, v._dtype)
        else:
            if not _core.broadcasts_to(arr.shape, v._shape):
                raise ValueError(f"could not broadcast input array from shape "
                                 f"{arr.shape} into shape {v._shape}")
            node = _core.asndarray(arr)._node_as(v._shape, v._dtype)
    v._write(node)
    statement_end()


# -- shape -------------------------------------------------------------------------
def _shape_arg(shape):
    """reshape's shape arguments as NumPy reads them: integers, or one
    sequence of integers (anything with __index__)."""
    if len(shape) == 1:
        s0 = shape[0]
        try:
            return [_operator.index(s0)]
        except TypeError:
            try:
                shape = tuple(s0)
            except TypeError:
                raise TypeError(f"expected a sequence of integers or a single "
                                f"integer, got '{s0}'") from None
    return [_operator.index(d) for d in shape]


def _reshape_order(a, order):
    """'C' or 'F', as NumPy reads reshape's order (None is C; 'A' is F for
    an array that is F- and not C-contiguous)."""
    o = "C" if order is None else str(order).upper()
    if o == "A":
        f = a.flags
        return "F" if f.f_contiguous and not f.c_contiguous else "C"
    if o == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    if o not in ("C", "F"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return o


def reshape_to(a, shape):
    """reshape(a, shape) for callers inside the package: `shape` a tuple of
    ints of a's size. A whole array (C-contiguous) is viewed at once,
    without reshape's argument parsing (a few us a call)."""
    if a._whole:
        return a._view(shape, c_strides(shape), 0)
    return reshape(a, shape)


def reshape(a, *shape, order="C", copy=None):
    a = _core.asndarray(a)
    shape = _shape_arg(shape)
    unknown = [k for k, d in enumerate(shape) if d < 0]  # NumPy: any negative
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = prod([d for d in shape if d >= 0])
        if known == 0 or a.size % known:
            # NumPy drops leading unknowns from the shape it shows
            k = 0
            while k < len(shape) and shape[k] < 0:
                k += 1
            shown = ",".join("newaxis" if d < 0 else str(d) for d in shape[k:])
            raise ValueError(f"cannot reshape array of size {a.size} into shape "
                             f"({shown})")
        shape[unknown[0]] = a.size // known
    shape = tuple(shape)
    if prod(shape) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    if _reshape_order(a, order) == "F":
        # Fortran order is C order on the reversed axes: a view where that is.
        return transpose(reshape(transpose(a), shape[::-1], copy=copy))
    if copy:
        return a.copy().reshape(shape)
    if a._strides == c_strides(a._shape) or a.size <= 1:
        return a._view(shape, c_strides(shape), a._offset)
    strides = _nocopy_strides(a._shape, a._strides, shape)
    if strides is not None:  # a view, wherever NumPy gives one
        return a._view(shape, strides, a._offset)
    if copy is False:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return a.copy().reshape(shape)


def _nocopy_strides(old_shape, old_strides, new_shape):
    """NumPy's _attempt_nocopy_reshape (C order, element strides): the
    strides of `new_shape` over the same elements without a copy, or None
    when there are none. Runs of old axes that the new axes merge or split
    must be contiguous among themselves; axes of length 1 do not count.
    (Arrays of more than one element.)"""
    old = [(d, st) for d, st in zip(old_shape, old_strides) if d != 1]
    od, os_ = [d for d, _ in old], [st for _, st in old]
    new_nd = len(new_shape)
    ns = [0] * new_nd
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < new_nd and oi < len(od):
        np_, op = new_shape[ni], od[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= od[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if os_[ok] != od[ok + 1] * os_[ok + 1]:
                return None
        ns[nj - 1] = os_[oj - 1]
        for nk in range(nj - 1, ni, -1):
            ns[nk - 1] = ns[nk] * new_shape[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = ns[ni - 1] if ni >= 1 else 1
    for nk in range(ni, new_nd):
        ns[nk] = last
    return ns


def ravel(a, order="C"):
    """NumPy's ravel: a view when the elements are contiguous in the order
    asked for, a copy otherwise (also where reshape(-1) could be a view)."""
    a = _core.asndarray(a)
    if order == "K":  # memory order: the axes by decreasing stride magnitude
        perm = sorted(range(a.ndim), key=lambda i: -abs(a._strides[i]))
        t = transpose(a, perm)
        if _core.whole_elements(a) and _contiguous_run(t):
            return t._view((a.size,), (1,), a._offset)
        return reshape(t.copy(), -1)
    o = "C" if order is None else str(order).upper()
    if o in ("F", "A") and _reshape_order(a, o) == "F":
        return ravel(transpose(a), "C")
    if o not in ("C", "F", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if a.flags.c_contiguous or a.size <= 1:
        return reshape(a, -1)
    return reshape(a.copy(), -1)


def _contiguous_run(a):
    """Whether a's elements are one run of increasing addresses in C order
    (axes of length 1 aside)."""
    expected = 1
    for d, st in zip(reversed(a._shape), reversed(a._strides)):
        if d == 1:
            continue
        if st != expected:
            return False
        expected *= d
    return True


def transpose(a, axes=None):
    a = _core.asndarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    elif len(axes) == 1 and not isinstance(axes[0], (int, _np.integer)):
        axes = tuple(axes[0])
    axes = normalize_axis_tuple(axes, a.ndim)
    if len(axes) != a.ndim:
        raise ValueError("axes don't match array")
    return a._view([a._shape[i] for i in axes], [a._strides[i] for i in axes], a._offset)


def swapaxes(a, axis1, axis2):
    a = _core.asndarray(a)
    i, j = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def moveaxis(a, source, destination):
    a = _core.asndarray(a)
    src = normalize_axis_tuple(source, a.ndim, "source")
    dst = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same "
                         "number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def squeeze(a, axis=None):
    a = _core.asndarray(a)
    if axis is None:
        axes = [i for i, d in enumerate(a._shape) if d == 1]
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        for i in axes:
            if a._shape[i] != 1:
                raise ValueError("cannot select an axis to squeeze out which has "
                                 "size not equal to one")
    keep = [i for i in range(a.ndim) if i not in axes]
    return a._view([a._shape[i] for i in keep], [a._strides[i] for i in keep], a._offset)


def expand_dims(a, axis):
    a = _core.asndarray(a)
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    nd = a.ndim + len(axis)
    axes = normalize_axis_tuple(axis, nd)
    shape, strides, it = [], [], iter(zip(a._shape, a._strides))
    for i in range(nd):
        if i in axes:
            shape.append(1)
            strides.append(0)
        else:
            d, s = next(it)
            shape.append(d)
            strides.append(s)
    return a._view(shape, strides, a._offset)


def broadcast_to(a, shape, subok=False):
    a = _core.asndarray(a)
    shape = (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    if _np.broadcast_shapes(a._shape, shape) != shape:
        raise ValueError(f"operands could not be broadcast together with remapped "
                         f"shapes [original->remapped]: {a._shape} and requested "
                         f"shape {shape}")
    lead = len(shape) - a.ndim
    strides = [0] * lead + [0 if d == 1 and shape[lead + i] != 1 else s
                            for i, (d, s) in enumerate(zip(a._shape, a._strides))]
    return a._view(shape, strides, a._offset, readonly=True)


def flip(m, axis=None):
    m = _core.asndarray(m)
    if m.ndim == 0 and axis is None:  # NumPy's m[()]: a scalar
        return m._scalar()
    axes = range(m.ndim) if axis is None else normalize_axis_tuple(axis, m.ndim)
    strides, offset = list(m._strides), m._offset
    for i in axes:
        if m._shape[i]:
            offset += (m._shape[i] - 1) * strides[i]
        strides[i] = -strides[i]
    return m._view(m._shape, strides, offset)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _core.asndarray(a)
    i, j = normalize_axis_index(axis1, a.ndim), normalize_axis_index(axis2, a.ndim)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = a._shape[i], a._shape[j]
    start = a._offset
    if offset >= 0:
        n = max(0, min(n1, n2 - offset))
        if n:
            start += offset * a._strides[j]
    else:
        n = max(0, min(n1 + offset, n2))
        if n:
            start -= offset * a._strides[i]
    keep = [k for k in range(a.ndim) if k not in (i, j)]
    shape = [a._shape[k] for k in keep] + [n]
    strides = [a._strides[k] for k in keep] + [a._strides[i] + a._strides[j]]
    return a._view(shape, strides, start, readonly=True)


def diag(v, k=0):
    v = _core.asndarray(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    from ._creation import zeros
    n = v._shape[0] + abs(k)
    out = zeros((n, n), v._dtype)
    d = diagonal(out, k)
    d._readonly = False
    d[...] = v
    return out


def astype(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dt = _core.check_dtype(dtype)
    if not _np.can_cast(a._dtype, dt, casting):
        raise TypeError(f"Cannot cast array data from {a._dtype!r} to {dt!r} "
                        f"according to the rule {casting!r}")
    if dt == a._dtype and not copy:
        return a
    _core.supported_dtype(dt)
    _core.complex_warning(a._dtype, dt)
    return _copy_in_order(a, "cast" if dt != a._dtype else "copy", dt, order)


def _axis_order(a, order):
    """The axis order (outermost first) of a copy of `a` in NumPy's memory
    `order` ('C', 'F', 'A' or 'K'), None for C order."""
    nd = len(a._shape)
    if nd < 2 or order in ("C", None):
        return None
    if order == "F":
        return tuple(range(nd - 1, -1, -1))
    if order == "A":  # F for an array that is F- and not C-contiguous
        f = a.flags
        return tuple(range(nd - 1, -1, -1)) if f.f_contiguous and not f.c_contiguous else None
    if order == "K":  # NumPy's NewLikeArray: C order for a C-contiguous
        # array, F for an F-contiguous one (size-1 axes ignored, size 0 is
        # both), else PyArray_CreateSortedStridePerm: a stable sort by
        # |stride|, largest outermost; broadcast (0) strides innermost
        if a._whole or a._part is not None:
            return None
        shape, st = a._shape, a._strides
        if _core._contiguous(shape, st, "C"):
            return None
        if _core._contiguous(shape, st, "F"):
            return tuple(range(nd - 1, -1, -1))
        st = [abs(s) for s in st]
        axes = sorted(range(nd), key=lambda k: -st[k])
        return None if axes == list(range(nd)) else tuple(axes)
    raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")


def _copy_in_order(a, op, dt, order):
    """`op` (copy or cast to dt) of `a`, its result laid out in NumPy's
    memory `order` (a transposed view of a C-contiguous result)."""
    axes = _axis_order(a, order)
    if axes is None:
        return ndarray._from_node(record(op, [a._node()], a._shape, dt), a._shape, dt)
    t = a._axes_view(axes)
    r = ndarray._from_node(record(op, [t._node()], t._shape, dt), t._shape, dt)
    return r._axes_view(_core._inverse_axes(axes))


def copy_array(a, order="C"):
    """ndarray.copy (order 'C' by default; np.copy passes NumPy's 'K')."""
    return _copy_in_order(a, "copy", a._dtype, order)


def fill(a, value):
    a[...] = value


# -- matrix products ------------------------------------------------------------------
def matmul(a, b, out=None, **kwargs):
    a, b = _core.asndarray(a), _core.asndarray(b)
    na, nb = len(a._shape), len(b._shape)
    if na == 0 or nb == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    dt = a._dtype if a._dtype == b._dtype else _np.result_type(a._dtype, b._dtype)
    if out is not None and not _np.can_cast(dt, out.dtype, "same_kind"):
        # NumPy's own error (its casting rule for out=), from 1 x 1 stand-ins
        _np.matmul(_np.zeros((1, 1), a._dtype), _np.zeros((1, 1), b._dtype),
                   out=_np.zeros((1, 1), out.dtype))
    if dt.kind == "b" or kwargs:
        from . import _fallback
        return _fallback.call_numpy("matmul", (a, b), dict(kwargs, out=out))
    if dt == _np.float16:  # NumPy's half loops multiply and sum in float32
        f32 = _np.dtype(_np.float32)
        r = matmul(a.astype(f32), b.astype(f32)).astype(dt)
        return _core.store_out(r, out)
    if na > 2 or nb > 2:
        return _core.store_out(_batched_matmul(a, b, dt), out)
    # The module's functions, not the methods: a method on a traced array
    # goes through the eager dispatch first (a few us each).
    # A vector operand as a (1, k) or (k, 1) view of itself.
    a2 = a if na == 2 else a._view((1,) + a._shape, (0,) + a._strides, a._offset)
    b2 = b if nb == 2 else b._view(b._shape + (1,), b._strides + (0,), b._offset)
    if a2._shape[1] != b2._shape[0]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core "
                         f"dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) "
                         f"(size {b2._shape[0]} is different from {a2._shape[1]})")
    shape = (a2._shape[0], b2._shape[1])
    node = record("matmul", [a2._node_as(a2._shape, dt), b2._node_as(b2._shape, dt)],
                  shape, dt)
    r = ndarray._from_node(node, shape, dt)
    if na == 2 and nb == 2:
        return r if out is None else _core.store_out(r, out)
    final = (a._shape[0],) if na == 2 else (b._shape[1],) if nb == 2 else ()
    return _core.store_out(reshape_to(r, final), out)


# Stacks of at most this many small products are one 2-D product each; bigger
# stacks of them (many small matrices) are one fused multiply-and-sum loop
# nest.
_MATMUL_LOOP_LIMIT = 16
# Products of at least this many multiply-adds in a stack of two or more are
# BLAS calls (cpn_lib_matmul, each product written into its slice of the
# result); smaller ones (8 x 8) stay loops, cheaper than a call each. A stack
# of 8 256 x 256 products as 2-D products, each filled with zeros and
# accumulated into its slice, took 4.0 ms against 2.4 for the library call
# (NumPy 2.4; session 37).
_MATMUL_BLAS_MIN = 16 ** 3


def _batched_matmul(a, b, dt):
    """matmul of stacks (..., n, k) @ (..., k, m), batch dimensions
    broadcast; a 1-D operand is a vector as in NumPy."""
    a2 = a if a.ndim >= 2 else a.reshape(1, -1)
    b2 = b if b.ndim >= 2 else b.reshape(-1, 1)
    n, k = a2._shape[-2:]
    k2, m = b2._shape[-2:]
    if k != k2:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core "
                         f"dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) "
                         f"(size {k2} is different from {k})")
    if a2._shape[:-2] == b2._shape[:-2]:  # the usual stack: no broadcast
        batch = a2._shape[:-2]
    else:
        batch = _np.broadcast_shapes(a2._shape[:-2], b2._shape[:-2])
        a2 = broadcast_to(a2, batch + (n, k))
        b2 = broadcast_to(b2, batch + (k, m))
    a2 = astype(a2, dt, copy=False)
    b2 = astype(b2, dt, copy=False)
    count = _core.prod(batch)
    if (count > 1 and dt in (_np.float32, _np.float64)
            and n * k * m >= _MATMUL_BLAS_MIN):
        # A stack of products big enough for BLAS: one gemm each, in the
        # runtime (cpn_lib_matmul), the stack spread over threads.
        from ._library import libcall
        r = libcall("matmul", [a2.reshape(count, n, k), b2.reshape(count, k, m)],
                    (count, n, m), dt, key="f32" if dt == _np.float32 else "f64")
        r = r.reshape(batch + (n, m))
    elif count <= _MATMUL_LOOP_LIMIT and count > 0:
        from ._joining import stack
        flat_a = [a2[idx] for idx in _np.ndindex(*batch)]
        flat_b = [b2[idx] for idx in _np.ndindex(*batch)]
        r = stack([matmul(x, y) for x, y in zip(flat_a, flat_b)]).reshape(
            batch + (n, m))
    else:
        # (..., n, k, m): a[..., i, l] * b[..., l, j], summed over l; the
        # two broadcast views made directly (stride 0 on the axis each lacks).
        from . import _reductions
        lhs = a2._view(batch + (n, k, m), a2._strides + (0,), a2._offset)
        rhs = b2._view(batch + (n, k, m), b2._strides[:-2] + (0,) + b2._strides[-2:],
                       b2._offset)
        r = _reductions.sum(_ufuncs.multiply(lhs, rhs), axis=-2, dtype=dt)
    if a.ndim == 1:
        r = squeeze(r, -2)
    if b.ndim == 1:
        r = squeeze(r, -1)
    return r


def dot(a, b, out=None):
    a, b = _core.asndarray(a), _core.asndarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _ufuncs.multiply(a, b, out=out)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b, out=out)
    from . import _fallback
    return _fallback.call_numpy("dot", (a, b), {"out": out})


def inner(a, b):
    a, b = _core.asndarray(a), _core.asndarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _ufuncs.multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b if b.ndim == 1 else b.T)
    from . import _fallback
    return _fallback.call_numpy("inner", (a, b), {})


def outer(a, b, out=None):
    a, b = _core.asndarray(a).ravel(), _core.asndarray(b).ravel()
    return _ufuncs.multiply(a[:, None], b[None, :], out=out)


def vdot(a, b):
    """sum(conj(a) * b) over the flattened arrays."""
    a = _core.asndarray(a)
    if a._dtype.kind == "c":
        from . import _ufuncs
        a = _ufuncs.conjugate(a)
    return matmul(a.ravel(), _core.asndarray(b).ravel())


NATIVE = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "squeeze",
          "expand_dims", "broadcast_to", "flip", "fliplr", "flipud", "diagonal", "diag",
          "matmul", "dot", "inner", "outer", "vdot"]
