"""cpnumeric.linalg: NumPy's np.linalg, compiled.

Factorizations (inv, solve, det, slogdet, cholesky, qr, svd, eigh, lstsq) are
`cpn.libcall` ops: calls from the compiled kernel into LAPACK (LAPACKE over
OpenBLAS), stacks `(..., M, N)` spread over threads. The rest (norm, pinv,
matrix_rank, cond, matrix_power, multi_dot, tensorsolve, ...) are built from
those and traced ops. Small eager arrays run NumPy's own versions at once.

Errors: a call that can fail (a singular matrix, no positive definiteness, no
convergence) runs in a window of its own and is waited for, so LinAlgError is
raised by the call itself, as in NumPy, and no other pending work is
affected. Under @jit (one kernel, no waiting) the error is raised when the
function's results are read instead.
"""

import collections
import functools
import operator

import numpy as _np
from numpy.linalg import LinAlgError

from . import _eager
from . import (_core, _fallback, _jit, _joining, _library, _manip, _products,
               _reductions, _ufuncs)
from ._core import c_strides, prod

__all__ = ["LinAlgError"]

EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])


# -- helpers -----------------------------------------------------------------

def _float_dtype(*arrays):
    """NumPy's linalg result type: integers and bool compute in float64."""
    for a in arrays:  # NumPy checks each operand (float16 with float64 too)
        if a._dtype == _np.float16:
            raise TypeError("array type float16 is unsupported in linalg")
    dt = _np.result_type(*[a._dtype for a in arrays])
    if dt.kind in "biu":
        return _np.dtype(_np.float64)
    if dt == _np.float16 or dt.kind != "f":
        raise TypeError(f"array type {dt} is unsupported in linalg")
    return dt


def _assert_stacked_2d(*arrays):
    for a in arrays:
        if a.ndim < 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                              "at least two-dimensional")


def _assert_stacked_square(*arrays):
    for a in arrays:
        if a._shape[-1] != a._shape[-2]:
            raise LinAlgError("Last 2 dimensions of the array must be square")


def _eager_numpy(name, arrays, *args, **kwargs):
    """NumPy's linalg.<name> on the eager inputs (the small-array path), its
    named tuples turned into ours."""
    vals = [a._eager() for a in arrays]
    return _library.wrap(_our_tuple(getattr(_np.linalg, name)(*vals, *args, **kwargs)))


def _our_tuple(r):
    """NumPy's named tuple of results as ours (others as they are)."""
    if hasattr(r, "_fields"):
        ours = {"EighResult": EighResult, "EigResult": EigResult, "QRResult": QRResult,
                "SlogdetResult": SlogdetResult, "SVDResult": SVDResult}
        cls = ours.get(type(r).__name__)
        r = cls(*r) if cls else tuple(r)
    return r


def _tracing():
    return _jit.tracing_here()


def _libcall(callee, inputs, dt, parts, args=(), raises=False, out_dt=None):
    """Records `cpn.libcall` of `callee` (suffixed with the dtype) on `inputs`
    cast to `dt`; its one flat result (of `out_dt`, by default `dt`) is split
    into C-contiguous arrays of the shapes `parts` (packed in that order)."""
    out_dt = _np.dtype(out_dt or dt)
    total = sum(prod(p) for p in parts)
    if total == 0 or (any(0 in x._shape for x in inputs) and callee != "lstsq"):
        from ._creation import zeros
        return [zeros(p, out_dt) for p in parts]
    inputs = [x.astype(dt, copy=False) for x in inputs]
    if raises and not _tracing():
        _core._cpn.flush()  # earlier work stays out of a failing window
    flat = _library.libcall(callee, inputs, (total,), out_dt, args,
                            key="f32" if dt == _np.float32 else "f64")
    node = flat._base.node
    out, off = [], 0
    for p in parts:
        p = tuple(p)
        out.append(flat._view(p, c_strides(p), off) if p != (total,) else flat)
        off += prod(p)
    if raises and not _tracing():
        _core.wait(node)  # LinAlgError here, as NumPy raises it
    return out


def _as(a):
    return _core.asndarray(a)


# -- factorizations (LAPACK) -------------------------------------------------

def inv(a):
    a = _as(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if _library.eager([a]):
        return _eager_numpy("inv", [a])
    dt = _float_dtype(a)
    return _libcall("inv", [a], dt, [a._shape], raises=True)[0]


def solve(a, b):
    a, b = _as(a), _as(b)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if _library.eager([a, b]):
        return _eager_numpy("solve", [a, b])
    dt = _float_dtype(a, b)
    n = a._shape[-1]
    vector = b.ndim == 1
    b2 = b.reshape(n, 1) if vector and b._shape[0] == n else b
    if b2.ndim < 2 or b2._shape[-2] != n:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core "
                         f"dimension 0, with gufunc signature (m,m),(m,n)->(m,n) "
                         f"(size {b._shape[-2] if b.ndim >= 2 else b._shape[0]} "
                         f"is different from {n})")
    batch = _np.broadcast_shapes(a._shape[:-2], b2._shape[:-2])
    a3 = _manip.broadcast_to(a, batch + (n, n))
    b3 = _manip.broadcast_to(b2, batch + b2._shape[-2:])
    x = _libcall("solve", [a3, b3], dt, [b3._shape], raises=True)[0]
    return x.reshape(batch + (n,)) if vector else x


def _slogdet_parts(a):
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    dt = _float_dtype(a)
    batch = a._shape[:-2]
    if a._shape[-1] == 0:  # the empty product: sign 1, log 0, det 1
        from ._creation import ones, zeros
        return ones(batch, dt), zeros(batch, dt), ones(batch, dt)
    (packed,) = _libcall("slogdet", [a], dt, [batch + (3,)])
    return packed[..., 0], packed[..., 1], packed[..., 2]


def slogdet(a):
    a = _as(a)
    if _library.eager([a]):
        return _eager_numpy("slogdet", [a])
    sign, logdet, _ = _slogdet_parts(a)
    return SlogdetResult(sign, logdet)


def det(a):
    a = _as(a)
    if _library.eager([a]):
        return _eager_numpy("det", [a])
    return _slogdet_parts(a)[2]


def cholesky(a, /, *, upper=False):
    a = _as(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if _library.eager([a]):
        return _eager_numpy("cholesky", [a], upper=upper)
    dt = _float_dtype(a)
    return _libcall("cholesky", [a], dt, [a._shape], [bool(upper)], raises=True)[0]


def qr(a, mode="reduced"):
    a = _as(a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    _assert_stacked_2d(a)
    if mode == "raw":
        return _fallback.call_numpy("linalg.qr", (a,), {"mode": mode},
                                    func=_np.linalg.qr)
    if _library.eager([a]):
        return _eager_numpy("qr", [a], mode=mode)
    dt = _float_dtype(a)
    batch, (m, n) = a._shape[:-2], a._shape[-2:]
    k = min(m, n)
    if mode == "r":
        return _libcall("qr", [a], dt, [batch + (k, n)], [2])[0]
    qc = m if mode == "complete" else k
    if k == 0:  # nothing to factor: Q is the identity (complete) or empty
        from ._creation import eye, zeros
        q = _manip.broadcast_to(eye(m, qc, dtype=dt), batch + (m, qc)).copy()
        return QRResult(q, zeros(batch + (qc, n), dt))
    q, r = _libcall("qr", [a], dt, [batch + (m, qc), batch + (qc, n)],
                    [1 if mode == "complete" else 0])
    return QRResult(q, r)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _as(a)
    _assert_stacked_2d(a)
    if _library.eager([a]):
        return _eager_numpy("svd", [a], full_matrices=full_matrices,
                            compute_uv=compute_uv, hermitian=hermitian)
    dt = _float_dtype(a)
    batch, (m, n) = a._shape[:-2], a._shape[-2:]
    k = min(m, n)
    if not compute_uv:
        return _libcall("svd", [a], dt, [batch + (k,)], [0, 0], raises=True)[0]
    uc, vr = (m, n) if full_matrices else (k, k)
    if k == 0:
        from ._creation import eye, zeros
        return SVDResult(
            _manip.broadcast_to(eye(m, uc, dtype=dt), batch + (m, uc)).copy(),
            zeros(batch + (0,), dt),
            _manip.broadcast_to(eye(vr, n, dtype=dt), batch + (vr, n)).copy())
    u, s, vh = _libcall("svd", [a], dt,
                        [batch + (m, uc), batch + (k,), batch + (vr, n)],
                        [1, bool(full_matrices)], raises=True)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    return svd(x, compute_uv=False)


def _eigh(a, uplo, vectors):
    a = _as(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    uplo = uplo.upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    if _library.eager([a]):
        return _eager_numpy("eigh" if vectors else "eigvalsh", [a], UPLO=uplo)
    dt = _float_dtype(a)
    batch, n = a._shape[:-2], a._shape[-1]
    parts = [batch + (n,)] + ([batch + (n, n)] if vectors else [])
    r = _libcall("eigh", [a], dt, parts, [bool(vectors), uplo == "U"], raises=True)
    return EighResult(*r) if vectors else r[0]


def eigh(a, UPLO="L"):
    return _eigh(a, UPLO, True)


def _eig(a, vectors):
    """geev through the runtime: complex eigenvalues (and vectors); real ones
    when every eigenvalue of the stack is real, as NumPy decides (a sync
    point: the result's dtype depends on the values)."""
    a = _as(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if _library.eager([a]):
        return _eager_numpy("eig" if vectors else "eigvals", [a])
    dt = _float_dtype(a)
    cdt = _np.dtype(_np.complex64 if dt == _np.float32 else _np.complex128)
    n, batch = a._shape[-1], a._shape[:-2]
    parts = [batch + (n,)] + ([batch + (n, n)] if vectors else [])
    res = _libcall("eig", [a], dt, parts, [int(vectors)], raises=True, out_dt=cdt)
    if bool(_reductions.all(_ufuncs.equal(res[0].imag, 0))):
        res = [r.real.copy() for r in res]
    return EigResult(*res) if vectors else res[0]


def eig(a):
    return _eig(a, True)


def eigvals(a):
    return _eig(a, False)


def eigvalsh(a, UPLO="L"):
    return _eigh(a, UPLO, False)


def lstsq(a, b, rcond=None):
    """Least squares through LAPACK's gelsd. The rank is a Python int and the
    residuals' shape depends on it, so this call is a sync point."""
    a, b = _as(a), _as(b)
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                          "two-dimensional")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one "
                          "or two-dimensional")
    m, n = a._shape
    if b._shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    if _library.eager([a, b]):
        return _eager_numpy("lstsq", [a, b], rcond=rcond)
    dt = _float_dtype(a, b)
    vector = b.ndim == 1
    b2 = b.reshape(m, 1) if vector else b
    k = b2._shape[1]
    if rcond is None:
        rcond = _np.finfo(dt).eps * max(m, n)
    bits = int(_np.array(float(rcond), _np.float64).view(_np.int64))
    mn = min(m, n)
    x, res, rank, s = _libcall("lstsq", [a, b2], dt,
                               [(n, k), (k,), (1,), (mn,)], [bits], raises=True)
    rank = int(rank[0])
    if vector:
        x = x.reshape(n)
    if not (rank == n and m > n):
        from ._creation import empty
        res = empty((0,), dt)
    return x, res, rank, s


# -- built from the factorizations -------------------------------------------

def pinv(a, rcond=None, hermitian=False, *, rtol=_np._NoValue):
    a = _as(a)
    _assert_stacked_2d(a)
    if rcond is None:
        if rtol is _np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a._shape[-2:]) * _np.finfo(_float_dtype(a)).eps
        else:
            rcond = rtol
    elif rtol is not _np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    dt = _float_dtype(a)
    if a.size == 0:
        from ._creation import empty
        m, n = a._shape[-2:]
        return empty(a._shape[:-2] + (n, m), dt)
    u, s, vt = svd(a, full_matrices=False, hermitian=hermitian)
    rcond = _as(rcond)
    cutoff = _ufuncs.multiply(_manip.expand_dims(rcond, -1),
                              _reductions.amax(s, axis=-1, keepdims=True))
    big = _ufuncs.greater(s, cutoff)
    sinv = _ufuncs.where(big, _ufuncs.divide(1, _ufuncs.where(big, s, 1)), 0)
    return _manip.matmul(_manip.swapaxes(vt, -1, -2),
                         _ufuncs.multiply(_manip.expand_dims(sinv, -1),
                                          _manip.swapaxes(u, -1, -2)))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    A = _as(A)
    if A.ndim < 2:
        return int(not _reductions.all(_ufuncs.equal(A, 0)))
    S = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(A._shape[-2:]) * _np.finfo(S._dtype).eps
        else:
            rtol = _manip.expand_dims(_as(rtol), -1)
        tol = _ufuncs.multiply(_reductions.amax(S, axis=-1, keepdims=True), rtol)
    else:
        tol = _manip.expand_dims(_as(tol), -1)
    return _reductions.count_nonzero(_ufuncs.greater(S, tol), axis=-1)


def cond(x, p=None):
    x = _as(x)
    _assert_stacked_2d(x)
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        if p == -2:
            return _ufuncs.divide(s[..., -1], s[..., 0])
        return _ufuncs.divide(s[..., 0], s[..., -1])
    _assert_stacked_square(x)
    dt = _float_dtype(x)
    invx = _libcall("inv", [x], dt, [x._shape], [1])[0]  # NaN when singular
    r = _ufuncs.multiply(norm(x, p, axis=(-2, -1)), norm(invx, p, axis=(-2, -1)))
    # A singular matrix has infinite condition (NaN from the inverse), unless
    # the matrix itself holds NaN.
    finite_input = _ufuncs.logical_not(
        _reductions.any(_ufuncs.isnan(x), axis=(-2, -1)))
    return _ufuncs.where(_ufuncs.logical_and(_ufuncs.isnan(r), finite_input),
                         _np.inf, r)


# The norms follow NumPy's numpy/linalg/_linalg.py step by step (dtypes:
# integers and bool in float64, float16/float32 kept, complex to its real
# dtype; max with initial=0 so that empty arrays give 0).

def _abs2(x):
    """|x|^2 elementwise, as NumPy's (x.conj() * x).real."""
    if x._dtype.kind != "c":
        return _ufuncs.multiply(x, x)
    return _ufuncs.multiply(_ufuncs.conjugate(x), x).real


def _vector_norm(x, ord, axis, keepdims):
    """ord-norm of x along `axis` (a 1-tuple)."""
    if ord == _np.inf:
        return _reductions.amax(_ufuncs.absolute(x), axis=axis, keepdims=keepdims,
                                initial=0)
    if ord == -_np.inf:
        return _reductions.amin(_ufuncs.absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real = _np.dtype(x._dtype.char.lower()) if x._dtype.kind == "c" else x._dtype
        return _reductions.sum(_ufuncs.not_equal(x, 0).astype(real), axis=axis,
                               keepdims=keepdims)
    if ord == 1:
        return _reductions.sum(_ufuncs.absolute(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return _ufuncs.sqrt(_reductions.sum(_abs2(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    absx = _ufuncs.absolute(x)
    absx = _ufuncs.power(absx, ord, out=absx)  # NumPy's absx **= ord
    ret = _reductions.sum(absx, axis=axis, keepdims=keepdims)
    return _ufuncs.power(ret, _np.reciprocal(ord, dtype=ret._dtype), out=ret)


def _matrix_norm(x, ord, row, col, keepdims):
    nd = x.ndim
    if ord in (2, -2, "nuc"):
        s = svd(_manip.moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
        ret = (_reductions.amax(s, axis=-1, initial=0) if ord == 2 else
               _reductions.amin(s, axis=-1) if ord == -2 else
               _reductions.sum(s, axis=-1, initial=0))
    elif ord in (1, -1):
        red = _reductions.amax if ord == 1 else _reductions.amin
        ret = red(_reductions.sum(_ufuncs.absolute(x), axis=row),
                  axis=col - 1 if col > row else col, **({"initial": 0} if ord == 1 else {}))
    elif ord in (_np.inf, -_np.inf):
        red = _reductions.amax if ord == _np.inf else _reductions.amin
        ret = red(_reductions.sum(_ufuncs.absolute(x), axis=col),
                  axis=row - 1 if row > col else row,
                  **({"initial": 0} if ord == _np.inf else {}))
    elif ord in (None, "fro", "f"):
        ret = _ufuncs.sqrt(_reductions.sum(_abs2(x), axis=(row, col)))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        ret = ret.reshape(tuple(1 if i in (row, col) else x._shape[i] for i in range(nd)))
    return ret


def norm(x, ord=None, axis=None, keepdims=False):
    x = _as(x)
    if x._dtype.kind not in "fc":
        x = x.astype(_np.float64)
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            flat = _manip.ravel(x)
            if x._dtype.kind == "c":
                re, im = flat.real, flat.imag
                sq = _ufuncs.add(_reductions.sum(_ufuncs.multiply(re, re)),
                                 _reductions.sum(_ufuncs.multiply(im, im)))
            else:
                sq = _reductions.sum(_ufuncs.multiply(flat, flat))
            r = _ufuncs.sqrt(sq)
            return r.reshape((1,) * nd) if keepdims else r
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of "
                            "integers") from None
    if len(axis) == 1:
        return _vector_norm(x, ord, (_manip.normalize_axis_index(axis[0], nd),), keepdims)
    if len(axis) == 2:
        row, col = (_manip.normalize_axis_index(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """NumPy's: norm along one axis of a (raveled or regrouped) array."""
    x = _as(x)
    shape = list(x._shape)
    if axis is None:
        x, ax = _manip.ravel(x), 0
    elif isinstance(axis, tuple):
        axes = _manip.normalize_axis_tuple(axis, x.ndim)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        x = _manip.transpose(x, axis + rest).reshape(
            (int(_np.prod([x._shape[i] for i in axis], dtype=int)),
             *[x._shape[i] for i in rest]))
        ax = 0
    else:
        ax = axis
    res = norm(x, axis=ax, ord=ord)
    if keepdims:
        for i in _manip.normalize_axis_tuple(range(len(shape)) if axis is None else axis,
                                             len(shape)):
            shape[i] = 1
        res = res.reshape(tuple(shape))
    return res


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    x = _as(x)
    _assert_stacked_2d(x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_power(a, n):
    a = _as(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        from ._creation import eye
        return _manip.broadcast_to(eye(a._shape[-1], dtype=a._dtype), a._shape).copy()
    if n < 0:
        a = inv(a)
        n = abs(n)
    if n == 1:  # NumPy's short-cut returns `a` itself (or inv(a) for -1)
        return a
    if n == 2:
        return _manip.matmul(a, a)
    if n == 3:
        return _manip.matmul(_manip.matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else _manip.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _manip.matmul(result, z)
    return result


def _chain_order(shapes):
    """NumPy's multi_dot order: s[i, j] splits the product of arrays i..j."""
    p = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    m = _np.zeros((n, n))
    s = _np.zeros((n, n), dtype=_np.intp)
    for ln in range(1, n):
        for i in range(n - ln):
            j = i + ln
            m[i, j] = _np.inf
            for k in range(i, j):
                q = m[i, k] + m[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if q < m[i, j]:
                    m[i, j] = q
                    s[i, j] = k
    return s


def multi_dot(arrays, *, out=None):
    arrays = [_as(a) for a in arrays]
    n = len(arrays)
    if n < 2:
        raise ValueError("Expecting at least two arrays.")
    if n == 2:
        return _manip.dot(arrays[0], arrays[1], out=out)
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = _manip.expand_dims(arrays[0], 0)
    if last == 1:
        arrays[-1] = _manip.expand_dims(arrays[-1], -1)
    for a in arrays:
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    if n == 3:
        a, b, c = arrays
        a0, a1b0 = a._shape
        b1c0, c1 = c._shape
        cost1 = a0 * b1c0 * (a1b0 + c1)
        cost2 = a1b0 * c1 * (a0 + b1c0)
        r = (_manip.dot(_manip.dot(a, b), c) if cost1 < cost2
             else _manip.dot(a, _manip.dot(b, c)))
    else:
        order = _chain_order([a._shape for a in arrays])

        def product(i, j):
            if i == j:
                return arrays[i]
            k = order[i, j]
            return _manip.dot(product(i, k), product(k + 1, j))
        r = product(0, n - 1)
    if first == 1 and last == 1:
        r = r.reshape(())
    elif first == 1:
        r = r.reshape(r._shape[1:])
    elif last == 1:
        r = r.reshape(r._shape[:-1])
    return _core.store_out(r, out)


def tensorinv(a, ind=2):
    a = _as(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    oldshape = a._shape
    invshape = oldshape[ind:] + oldshape[:ind]
    size = prod(oldshape[ind:])
    return inv(a.reshape(size, -1)).reshape(invshape)


def tensorsolve(a, b, axes=None):
    a, b = _as(a), _as(b)
    an = a.ndim
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = _manip.transpose(a, allaxes)
    oldshape = a._shape[-(an - b.ndim):]
    size = prod(oldshape)
    if a.size != size ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(size, size), b.ravel()).reshape(oldshape)


# -- the array-API spellings ---------------------------------------------------

def cross(x1, x2, /, *, axis=-1):
    x1, x2 = _as(x1), _as(x2)
    if x1._shape[axis] != 3 or x2._shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional "
                         f"vectors, but they are {x1._shape[axis]} and "
                         f"{x2._shape[axis]} dimensional instead.")
    return _products.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    return _manip.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    return _joining.trace(x, offset, -2, -1, dtype=dtype)


def outer(x1, x2, /):
    x1, x2 = _as(x1), _as(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} and x2.ndim={x2.ndim}.")
    return _manip.outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    return _products.tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, /, *, axis=-1):
    return _products.vecdot(x1, x2, axis=axis)


matmul = _manip.matmul
matrix_transpose = _joining.matrix_transpose

def _is_complex(a):
    if isinstance(a, _core.ndarray):
        return a._dtype.kind == "c"
    return isinstance(a, (list, tuple, _np.ndarray, complex, _np.generic)) and \
        _np.iscomplexobj(a)


# The functions whose small-array path is NumPy's own call (_eager_numpy):
# taken in C before anything else.
_EAGER_IN_C = frozenset(["inv", "solve", "det", "slogdet", "cholesky", "svd", "eigh",
                         "eigvalsh", "eig", "eigvals", "lstsq"])


def _real_only(f):
    """LAPACK is called for real matrices; complex ones run NumPy's
    linalg.<name>, with the fallback's warning."""
    name = f.__name__
    npf = getattr(_np.linalg, name)
    eager = name in _EAGER_IN_C

    @functools.wraps(f)
    def real_or_fallback(*args, **kwargs):
        if eager:
            # Small eager arrays: NumPy's function, called from C (the
            # Python path cost ~2 us more than NumPy's own call).
            r = _eager._eager_call(npf, args, kwargs)
            if r is not _eager.DECLINED and r is not _eager.TRACED:
                return _our_tuple(r)
        if any(_is_complex(a) for a in args) or any(_is_complex(v) for v in kwargs.values()):
            return _fallback.call_numpy(f"linalg.{name} of complex input", args, kwargs,
                                        func=getattr(_np.linalg, name))
        return f(*args, **kwargs)
    return real_or_fallback


for _name in ["inv", "solve", "det", "slogdet", "cholesky", "qr", "svd", "svdvals",
              "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "pinv", "matrix_rank", "cond",
              "tensorinv", "tensorsolve"]:
    globals()[_name] = _real_only(globals()[_name])

NATIVE = ["inv", "solve", "det", "slogdet", "cholesky", "qr", "svd", "svdvals",
          "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "pinv", "matrix_rank", "cond", "norm",
          "vector_norm", "matrix_norm", "matrix_power", "multi_dot", "tensorinv",
          "tensorsolve", "cross", "diagonal", "trace", "outer", "tensordot",
          "vecdot", "matmul", "matrix_transpose"]


# The rest: NumPy's, with a warning.
__getattr__ = _fallback.module_getattr(_np.linalg, "linalg", globals())
