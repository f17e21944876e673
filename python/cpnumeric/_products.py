"""Products built from traced ops: cross, tensordot, vecdot, matvec, vecmat."""

import operator
import warnings

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from . import _core, _manip, _reductions, _ufuncs
from ._core import prod


def _as(a):
    return _core.asndarray(a)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _as(a), _as(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = _manip.moveaxis(a, normalize_axis_index(axisa, a.ndim, "axisa"), -1)
    b = _manip.moveaxis(b, normalize_axis_index(axisb, b.ndim, "axisb"), -1)
    na, nb = a._shape[-1], b._shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays "
                      "of 3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    dt = _np.promote_types(a._dtype, b._dtype)
    a = a.astype(dt, copy=False)
    b = b.astype(dt, copy=False)
    mul, sub, neg = _ufuncs.multiply, _ufuncs.subtract, _ufuncs.negative
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = sub(mul(a0, b1), mul(a1, b0))
    if na == 2 and nb == 2:
        return z
    if na == 2:
        b2 = b[..., 2]
        c0, c1 = mul(a1, b2), neg(mul(a0, b2))
    elif nb == 2:
        a2 = a[..., 2]
        c0, c1 = neg(mul(a2, b1)), mul(a2, b0)
    else:
        a2, b2 = a[..., 2], b[..., 2]
        c0, c1 = sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2))
    from ._joining import stack
    shape = _np.broadcast_shapes(c0._shape, c1._shape, z._shape)
    cp = stack([_manip.broadcast_to(c, shape) for c in (c0, c1, z)], axis=-1)
    return _manip.moveaxis(cp, -1, normalize_axis_index(axisc, cp.ndim, "axisc"))


def tensordot(a, b, axes=2):
    a, b = _as(a), _as(b)
    try:
        iter(axes)
    except TypeError:
        axes_a, axes_b = list(range(-axes, 0)), list(range(0, axes))
    else:
        axes_a, axes_b = axes
    axes_a = [axes_a] if isinstance(axes_a, (int, _np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, _np.integer)) else list(axes_b)
    sa, sb = a._shape, b._shape
    equal = len(axes_a) == len(axes_b)
    if equal:
        for k in range(len(axes_a)):
            if sa[axes_a[k]] != sb[axes_b[k]]:
                equal = False
                break
            axes_a[k] %= max(a.ndim, 1)
            axes_b[k] %= max(b.ndim, 1)
    if not equal:
        raise ValueError("shape-mismatch for sum")
    notin_a = [k for k in range(a.ndim) if k not in axes_a]
    notin_b = [k for k in range(b.ndim) if k not in axes_b]
    n2 = prod(sa[k] for k in axes_a)
    at = _manip.transpose(a, notin_a + axes_a).reshape(prod(sa[k] for k in notin_a), n2)
    bt = _manip.transpose(b, axes_b + notin_b).reshape(n2, prod(sb[k] for k in notin_b))
    return _manip.dot(at, bt).reshape([sa[k] for k in notin_a] + [sb[k] for k in notin_b])


def _sum_product(x1, x2, axis, out, dtype):
    dt = _np.result_type(x1._dtype, x2._dtype) if dtype is None else _np.dtype(dtype)
    if dt.kind == "b":
        r = _reductions.any(_ufuncs.logical_and(x1, x2), axis=axis)
    else:
        r = _reductions.sum(_ufuncs.multiply(x1.astype(dt, copy=False),
                                             x2.astype(dt, copy=False)), axis=axis,
                            dtype=dt)
    return _core.store_out(r, out)


def _check_core(name, signature, got, want):
    if got != want:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core "
                         f"dimension 0, with gufunc signature {signature} (size "
                         f"{got} is different from {want})")


def vecdot(x1, x2, /, out=None, *, axis=-1, dtype=None, **kwargs):
    x1, x2 = _as(x1), _as(x2)
    if kwargs:
        from . import _fallback
        return _fallback.call_numpy("vecdot", (x1, x2),
                                    dict(kwargs, out=out, axis=axis, dtype=dtype))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: Input operand 0 does not have enough dimensions")
    x1 = _manip.moveaxis(x1, axis, -1)
    x2 = _manip.moveaxis(x2, axis, -1)
    _check_core("vecdot", "(n),(n)->()", x2._shape[-1], x1._shape[-1])
    return _sum_product(_conj(x1), x2, -1, out, dtype)


def matvec(x1, x2, /, out=None, *, dtype=None):
    x1, x2 = _as(x1), _as(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError("matvec: Input operand does not have enough dimensions")
    _check_core("matvec", "(m,n),(n)->(m)", x2._shape[-1], x1._shape[-1])
    return _sum_product(x1, _manip.expand_dims(x2, -2), -1, out, dtype)


def vecmat(x1, x2, /, out=None, *, dtype=None):
    x1, x2 = _as(x1), _as(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError("vecmat: Input operand does not have enough dimensions")
    _check_core("vecmat", "(n),(n,m)->(m)", x2._shape[-2], x1._shape[-1])
    return _sum_product(_manip.expand_dims(_conj(x1), -1), x2, -2, out, dtype)


def _conj(x):
    """vecdot and vecmat conjugate their first (vector) operand."""
    return _ufuncs.conjugate(x) if x._dtype.kind == "c" else x


NATIVE = ["cross", "tensordot", "vecdot", "matvec", "vecmat"]


def _einsum_terms(subscripts, n):
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) != n:
        raise ValueError("more operands provided to einstein sum function than "
                         "specified in the subscripts string" if n > len(terms) else
                         "fewer operands provided to einstein sum function than "
                         "specified in the subscripts string")
    for t in terms + ([out] if arrow else []):
        for ch in t:
            if not ch.isalpha():
                raise ValueError(f"invalid subscript '{ch}' in einstein sum subscripts "
                                 "string, subscripts must be letters")
    if not arrow:  # implicit: the letters that appear once, in alphabetical order
        counts = {}
        for t in terms:
            for ch in t:
                counts[ch] = counts.get(ch, 0) + 1
        out = "".join(sorted(ch for ch, c in counts.items() if c == 1))
    elif len(set(out)) != len(out):
        raise ValueError(f"einstein sum subscripts string includes output subscript "
                         f"'{next(c for c in out if out.count(c) > 1)}' multiple times")
    for ch in out:
        if not any(ch in t for t in terms):
            raise ValueError(f"einstein sum subscripts string included output "
                             f"subscript '{ch}' which never appeared in an input")
    return terms, out


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_letters(sub):
    """An einsum sublist ([0, 1, Ellipsis]) as subscript letters."""
    out = []
    for x in sub:
        if x is Ellipsis:
            out.append("...")
        else:
            k = operator.index(x)
            if not 0 <= k < 52:
                raise ValueError("subscript is not within the valid range [0, 52)")
            out.append(_LETTERS[k])
    return "".join(out)


def _einsum_explicit(operands):
    """(subscripts without '...', operands) from either einsum form: sublists
    become letters; each '...' becomes fresh letters for the broadcast
    dimensions (right-aligned across operands, first in an implicit
    output), as NumPy reads them."""
    if operands and isinstance(operands[0], str):
        subscripts, ops = operands[0].replace(" ", ""), [_as(o) for o in operands[1:]]
    else:
        items = list(operands)
        ops, subs = [], []
        while len(items) >= 2:
            ops.append(_as(items.pop(0)))
            subs.append(_sublist_letters(items.pop(0)))
        subscripts = ",".join(subs) + ("->" + _sublist_letters(items[0]) if items else "")
    if "..." not in subscripts:
        return subscripts, ops
    ins, arrow, out = subscripts.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ops):
        _einsum_terms(subscripts, len(ops))  # NumPy's message
    used = set(c for c in subscripts if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ndims = [o.ndim - (len(t) - 3) if "..." in t else 0 for t, o in zip(terms, ops)]
    if any(d < 0 for d in ndims):
        raise ValueError("einstein sum subscripts string contains too many subscripts "
                         "for operand")
    ell = free[:max(ndims, default=0)]
    terms = [t.replace("...", "".join(ell[len(ell) - d:] if d else [])) for t, d in
             zip(terms, ndims)]
    if arrow:
        if ell and "..." not in out:
            raise ValueError("output has more dimensions than subscripts given in "
                             "einstein sum, but no '...' ellipsis provided to broadcast "
                             "the extra dimensions.")
        out = out.replace("...", "".join(ell))
    else:
        counts = {}
        for t in terms:
            for ch in t:
                counts[ch] = counts.get(ch, 0) + 1
        out = "".join(ell) + "".join(sorted(ch for ch, c in counts.items()
                                            if c == 1 and ch not in ell))
    return ",".join(terms) + "->" + out, ops


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """einsum in the subscript-string or sublist form, with '...': repeated
    letters of an operand take its diagonal; a two-operand contraction
    without batch letters is a tensordot (BLAS); everything else is one
    broadcast product summed over the contracted letters (a fused loop
    nest, no temporary)."""
    if not operands:
        raise ValueError("No input operands")
    subscripts, ops = _einsum_explicit(operands)
    terms, out_term = _einsum_terms(subscripts, len(ops))
    dt = _np.result_type(*[o._dtype for o in ops]) if dtype is None else _np.dtype(dtype)
    if dt.kind == "b":
        from . import _fallback
        return _fallback.call_numpy("einsum", operands, {"out": out, "dtype": dtype})
    ops = [o.astype(dt, copy=False) for o in ops]
    sizes = {}
    for i, (o, t) in enumerate(zip(ops, terms)):
        if len(t) != o.ndim:
            raise ValueError(f"operand has more dimensions than subscripts given in "
                             f"einstein sum, but no '...' ellipsis provided to broadcast "
                             f"the extra dimensions." if o.ndim > len(t) else
                             f"einstein sum subscripts string contains too many "
                             f"subscripts for operand {i}")
        # repeated letters: the diagonal
        while len(set(t)) != len(t):
            ch = next(c for c in t if t.count(c) > 1)
            a1, a2 = t.index(ch), t.index(ch, t.index(ch) + 1)
            if o._shape[a1] != o._shape[a2]:
                raise ValueError(f"dimensions in operand {i} for collapsing index "
                                 f"'{ch}' don't match ({o._shape[a1]} != {o._shape[a2]})")
            o = _manip.diagonal(o, 0, a1, a2)
            t = "".join(c for k, c in enumerate(t) if k not in (a1, a2)) + ch
        ops[i], terms[i] = o, t
        for ch, d in zip(t, o._shape):
            if sizes.get(ch, d) != d and d != 1 and sizes[ch] != 1:
                raise ValueError(f"operands could not be broadcast together with "
                                 f"remapped shapes (size {sizes[ch]} vs {d} for '{ch}')")
            sizes[ch] = max(sizes.get(ch, d), d) if d != 1 else sizes.get(ch, d)
    contracted = [c for t in terms for c in t if c not in out_term]
    contracted = list(dict.fromkeys(contracted))
    if (len(ops) == 2 and contracted and
            all(c in terms[0] and c in terms[1] for c in contracted) and
            not any(c in terms[0] and c in terms[1] for c in out_term) and
            all(ops[k]._shape[terms[k].index(c)] == sizes[c]
                for k in (0, 1) for c in terms[k])):
        a, b = ops
        r = tensordot(a, b, axes=([terms[0].index(c) for c in contracted],
                                  [terms[1].index(c) for c in contracted]))
        got = [c for c in terms[0] if c not in contracted] + \
              [c for c in terms[1] if c not in contracted]
        r = _manip.transpose(r, [got.index(c) for c in out_term]) if got else r
        return _core.store_out(r, out)
    letters = list(out_term) + contracted
    prod_ = None
    for o, t in zip(ops, terms):
        perm = [t.index(c) for c in letters if c in t]
        v = _manip.transpose(o, perm) if perm else o
        v = v.reshape(tuple(sizes[c] if c in t and o._shape[t.index(c)] != 1 else 1
                            for c in letters))
        prod_ = v if prod_ is None else _ufuncs.multiply(prod_, v)
    shape = tuple(sizes[c] for c in letters)
    prod_ = _manip.broadcast_to(prod_, shape)
    if contracted:
        r = _reductions.sum(prod_, axis=tuple(range(len(out_term), len(letters))), dtype=dt)
    else:
        r = prod_.copy()
    return _core.store_out(r, out)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction order: it depends on the operands' shapes only."""
    shapes = [_np.broadcast_to(_np.empty((), _core.asndarray(o)._dtype),
                               _core.asndarray(o).shape) for o in operands]
    return _np.einsum_path(subscripts, *shapes, optimize=optimize)


NATIVE += ["einsum", "einsum_path"]
