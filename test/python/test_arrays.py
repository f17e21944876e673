"""Creation, views, indexing, reductions, matmul, sync points, errors."""

import warnings

import numpy
import pytest

import cpnumeric as cp
from test_ufuncs import check, data

DTYPES = ["bool", "int32", "int64", "uint8", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_creation(dtype):
    check(cp.zeros((2, 3), dtype), numpy.zeros((2, 3), dtype))
    check(cp.ones(4, dtype), numpy.ones(4, dtype))
    check(cp.full((2, 2), 1, dtype), numpy.full((2, 2), 1, dtype))
    check(cp.zeros_like(cp.ones((3,), dtype)), numpy.zeros(3, dtype))
    check(cp.eye(3, 4, 1, dtype), numpy.eye(3, 4, 1, dtype=dtype))
    check(cp.array(data((3, 2), dtype)), data((3, 2), dtype))


def test_ranges():
    check(cp.arange(10), numpy.arange(10))
    check(cp.arange(2, 11, 3), numpy.arange(2, 11, 3))
    check(cp.arange(0.5, 3.0, 0.25), numpy.arange(0.5, 3.0, 0.25))
    check(cp.arange(5, 0, -2), numpy.arange(5, 0, -2))
    check(cp.linspace(0, 1, 11), numpy.linspace(0, 1, 11))
    check(cp.linspace(2, 3, 4, endpoint=False), numpy.linspace(2, 3, 4, endpoint=False))
    check(cp.identity(3), numpy.identity(3))


def test_bad_dtypes_raise_type_error():
    with pytest.raises(TypeError, match="structure of arrays"):
        cp.array(["a", "b"])
    with pytest.raises(TypeError, match="object"):
        cp.zeros(3, dtype=object)


@pytest.mark.parametrize("key", [(1,), (slice(None, None, -1),), (Ellipsis, 1),
                                 (None, slice(1, 3)), (slice(None), None, -1),
                                 (1, slice(None, None, 2)), (slice(-1, 0, -1), 2)])
def test_basic_indexing_reads(key):
    a = numpy.arange(24.0).reshape(4, 6)
    check(cp.array(a)[key], a[key])


def test_views_write_through_to_base():
    a = numpy.arange(24).reshape(4, 6)
    x = cp.array(a)
    x[1:3, ::-2] = -1
    a[1:3, ::-2] = -1
    x.T[0] = 7
    a.T[0] = 7
    r = x.reshape(6, 4)
    r[0, :] = 5
    a.reshape(6, 4)[0, :] = 5
    f = cp.flip(x, 1)
    f[2] = 9
    numpy.flip(a, 1)[2] = 9
    s = x[None, 2, ...]
    s[...] = cp.arange(6)
    a[None, 2, ...] = numpy.arange(6)
    check(x, a)
    check(r, a.reshape(6, 4))


def test_setitem_broadcast_and_errors():
    x = cp.zeros((3, 4))
    x[:, 1] = cp.arange(3.0)
    x[0] = [1, 2, 3, 4]
    ref = numpy.zeros((3, 4))
    ref[:, 1] = numpy.arange(3.0)
    ref[0] = [1, 2, 3, 4]
    check(x, ref)
    with pytest.raises(IndexError):
        x[5]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(ValueError):
        x[0] = cp.ones(3)
    with pytest.raises(ValueError):
        cp.broadcast_to(cp.ones(3), (2, 3))[0] = 1.0


def test_shape_functions():
    a = numpy.arange(24.0).reshape(2, 3, 4)
    x = cp.array(a)
    check(x.transpose(1, 0, 2), a.transpose(1, 0, 2))
    check(cp.swapaxes(x, 0, 2), numpy.swapaxes(a, 0, 2))
    check(cp.moveaxis(x, 0, -1), numpy.moveaxis(a, 0, -1))
    check(cp.expand_dims(x, (0, 3)), numpy.expand_dims(a, (0, 3)))
    check(cp.squeeze(x[:, :1, None]), numpy.squeeze(a[:, :1, None]))
    check(cp.broadcast_to(x[0, 0], (3, 4)), numpy.broadcast_to(a[0, 0], (3, 4)))
    check(x.ravel(), a.ravel())
    check(x[:, ::2].ravel(), a[:, ::2].ravel())
    check(x.reshape(-1, 6), a.reshape(-1, 6))
    check(cp.diagonal(x, 1, 1, 2), numpy.diagonal(a, 1, 1, 2))
    check(cp.diag(cp.arange(3.0), -1), numpy.diag(numpy.arange(3.0), -1))
    check(cp.diag(x[0]), numpy.diag(a[0]))
    check(x.astype("int32"), a.astype("int32"))
    with pytest.raises(numpy.exceptions.AxisError):
        cp.swapaxes(x, 0, 5)
    with pytest.raises(ValueError):
        x.reshape(5, 5)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_reductions(name, dtype, axis):
    a = data((3, 4, 5), dtype, 7)
    if name == "prod" and dtype != "bool":
        a = (a % 3).astype(dtype)
    try:
        with numpy.errstate(all="ignore"):
            ref = getattr(numpy, name)(a, axis=axis)
    except TypeError:
        return
    r = getattr(cp, name)(cp.array(a), axis=axis)
    ref = numpy.asarray(ref)
    if name in ("mean", "var", "std") and dtype == "float32":
        numpy.testing.assert_allclose(numpy.asarray(r), ref, rtol=1e-4)
    else:
        check(r, ref)
    check(getattr(cp, name)(cp.array(a), axis=axis, keepdims=True),
          numpy.asarray(getattr(numpy, name)(a, axis=axis, keepdims=True)))


def close(ours, ref):
    """Equal for exact dtypes; within float summation-order error (scaled by
    the magnitude summed) otherwise."""
    got, ref = numpy.asarray(ours), numpy.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    if ref.dtype.kind in "fc":
        eps = numpy.finfo(ref.dtype).eps
        numpy.testing.assert_allclose(got, ref, rtol=1e3 * eps,
                                      atol=1e4 * eps * max(1.0, numpy.abs(ref).max()))
    else:
        numpy.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint8", "float32", "float64",
                                   "complex128"])
def test_reductions_over_many_rows(dtype, threads):
    # Axis-0 reductions of 1024+ rows run as row-block partials (16 blocks of
    # 64 rows here, 8 of 130 below); row reductions are parallel over rows.
    a = data((1024, 37), dtype, 9)
    b = data((1040, 3, 2), dtype, 10)
    old = cp.get_num_threads()
    cp.set_num_threads(threads)
    try:
        for name in ["sum", "max", "min", "any", "all", "prod"]:
            arr = (a.real % 2).astype(dtype) if name == "prod" and dtype != "bool" else a
            try:
                ref = getattr(numpy, name)(arr, axis=0)
            except TypeError:
                continue
            close(getattr(cp, name)(cp.array(arr), axis=0), ref)
        odd = data((1031, 5), dtype, 14)  # 16 blocks of 64 rows and 7 more
        for name in ["sum", "max", "any"]:
            close(getattr(cp, name)(cp.array(odd), axis=0), getattr(numpy, name)(odd, axis=0))
            close(getattr(cp, name)(cp.array(odd)[1:], axis=0),
                  getattr(numpy, name)(odd[1:], axis=0))
        if dtype != "bool":
            close(cp.sum(cp.array(odd) * 3, axis=0), numpy.sum(odd * 3, axis=0))
            close(cp.sum(cp.array(b), axis=0), numpy.sum(b, axis=0))
            close(cp.sum(cp.array(a) * 2 + 1, axis=0), numpy.sum(a * 2 + 1, axis=0))
            close(cp.sum(cp.array(a.T), axis=1), numpy.sum(a.T, axis=1))
    finally:
        cp.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
def test_tall_transposed_products(dtype, threads):
    # x.T @ v on a tall x is a row-block sum, not a BLAS call.
    x = data((2048, 6), dtype, 11)
    v = data((2048,), dtype, 12)
    m = data((2048, 3), dtype, 13)
    old = cp.get_num_threads()
    cp.set_num_threads(threads)
    try:
        cx = cp.array(x)
        close(cx.T @ cp.array(v), x.T @ v)
        close(cx.T @ cp.array(m), x.T @ m)  # BLAS: v has several columns
        close(cx.T @ (cp.array(v) * 2 - 1), x.T @ (v * 2 - 1))
        close(cp.dot(cx.T, cp.array(v)), numpy.dot(x.T, v))
    finally:
        cp.set_num_threads(old)


def test_reduction_options():
    a = data((4, 5), "float64", 8)
    x = cp.array(a)
    check(cp.sum(x, axis=1, initial=10.0), numpy.sum(a, axis=1, initial=10.0))
    check(cp.max(x, axis=0, initial=2.0), numpy.max(a, axis=0, initial=2.0))
    m = a > 0
    check(cp.sum(x, where=cp.array(m)), numpy.sum(a, where=m))
    check(cp.sum(cp.array(data((4,), "int32", 1)), dtype="float32"),
          numpy.sum(data((4,), "int32", 1), dtype="float32"))
    check(cp.var(x, ddof=1), numpy.var(a, ddof=1))
    with pytest.warns(RuntimeWarning, match="numpy.var"):
        r = cp.var(x, axis=0, where=cp.array(m))
    check(r, numpy.var(a, axis=0, where=m))
    check(cp.count_nonzero(x > 0), numpy.asarray(numpy.count_nonzero(a > 0)))
    check(cp.count_nonzero(x > 0, axis=0), numpy.count_nonzero(a > 0, axis=0))
    out = cp.zeros(5)
    cp.sum(x, axis=0, out=out)
    check(out, a.sum(axis=0))
    check(cp.sum(cp.zeros((0, 3))), numpy.asarray(0.0))
    with pytest.raises(ValueError):
        cp.max(cp.zeros((0,)))
    with pytest.raises(numpy.exceptions.AxisError):
        cp.sum(x, axis=2)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
def test_argmin_argmax(dtype):
    a = data((4, 6), dtype, 9)
    x = cp.array(a)
    for f in ("argmax", "argmin"):
        check(getattr(cp, f)(x), numpy.asarray(getattr(numpy, f)(a)))
        check(getattr(cp, f)(x, axis=0), getattr(numpy, f)(a, axis=0))
        check(getattr(x, f)(axis=1), getattr(a, f)(axis=1))
    n = numpy.array([1.0, numpy.nan, 3.0, numpy.nan])
    check(cp.argmax(cp.array(n)), numpy.asarray(numpy.argmax(n)))
    check(cp.max(cp.array(n)), numpy.asarray(numpy.max(n)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_reductions_nan_and_fused_distance(dtype):
    # Reductions over a few elements per result are unrolled into one
    # elementwise loop: the first extremum, the first NaN, in-order sums.
    a = data((7, 5), dtype, 3)
    a[1, 2] = a[1, 4] = numpy.nan
    a[4, 0] = numpy.nan
    a[5, :] = a[5, 3]  # ties: the first index wins
    x = cp.array(a)
    for f in ("argmin", "argmax"):
        check(getattr(x, f)(axis=1), getattr(a, f)(axis=1))
        check(getattr(x, f)(axis=0), getattr(a, f)(axis=0))
    for f in ("min", "max", "sum", "prod"):
        with numpy.errstate(all="ignore"):
            check(getattr(cp, f)(x, axis=1), getattr(numpy, f)(a, axis=1))
    # k-means' assignment step: distances and argmin in one loop nest.
    p, c = data((300, 3), dtype, 4), data((6, 3), dtype, 5)
    P, C = cp.array(p), cp.array(c)
    d = ((P[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    check(d.argmin(axis=1), ((p[:, None, :] - c[None, :, :]) ** 2).sum(axis=2).argmin(axis=1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul_family(dtype):
    a, b = data((4, 5), dtype, 1), data((5, 3), dtype, 2)
    v, w = data((5,), dtype, 3), data((5,), dtype, 4)
    A, B, V, W = cp.array(a), cp.array(b), cp.array(v), cp.array(w)
    check(A @ B, a @ b)
    check(cp.dot(A, V), numpy.dot(a, v))
    check(cp.matmul(V, B), numpy.matmul(v, b))
    check(cp.inner(V, W), numpy.asarray(numpy.inner(v, w)))
    check(cp.outer(V, W), numpy.outer(v, w))
    check(cp.vdot(V, W), numpy.asarray(numpy.vdot(v, w)))
    check(A.T[::2] @ A[:, ::2], a.T[::2] @ a[:, ::2])
    # Whole-matrix transposes are read in place (transposed BLAS operands or
    # transposed loop maps for integers), alone and together.
    c = data((4, 3), dtype, 5)
    C = cp.array(c)
    check(A.T @ C, a.T @ c)
    check(B @ C.T, b @ c.T)
    check(B.T @ A.T, b.T @ a.T)
    check(cp.dot(A.T, V[:4]), numpy.dot(a.T, v[:4]))
    with pytest.raises(ValueError):
        A @ A


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
@pytest.mark.parametrize("n", [0, 1, 5, 300, 65536, 65537])
def test_vector_inner_products(dtype, n):
    # v @ w of two vectors is a fused sum of products (long ones in parallel
    # row blocks): producers are computed once, in the same pass.
    v, w = data((n,), "float64", 6), data((n,), "float64", 7)
    if dtype == "complex128":
        v, w = v + 1j * data((n,), "float64", 8), w - 2j * data((n,), "float64", 9)
    v, w = v.astype(dtype), w.astype(dtype)
    V, W = cp.array(v), cp.array(w)
    r = v * 2 - w
    R = V * 2 - W
    cases = [(V @ W, v @ w, numpy.abs(v) @ numpy.abs(w)),
             ((V + W) @ (V - W), (v + w) @ (v - w), numpy.abs(v + w) @ numpy.abs(v - w)),
             (R @ R, r @ r, numpy.abs(r) @ numpy.abs(r)),
             (cp.dot(V[::2], W[::-2]), numpy.dot(v[::2], w[::-2]),
              numpy.abs(v[::2]) @ numpy.abs(w[::-2]))]
    for got, want, scale in cases:
        got = numpy.asarray(got)
        assert got.shape == () and got.dtype == numpy.asarray(want).dtype
        if numpy.dtype(dtype).kind in "iu":
            assert got == want
        else:
            # Sums in another order than NumPy's: rounding errors grow
            # as sqrt(n) on average.
            eps = numpy.finfo(dtype).eps * (8 + numpy.sqrt(n))
            assert abs(got - want) <= eps * (scale + 1), (got, want)


def test_sync_points():
    x = cp.arange(6.0).reshape(2, 3)
    assert float(x[1, 2]) == 5.0
    assert int(x.sum()) == 15
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x[0, 1].item() == 1.0
    assert bool(x[1, 0] > 2)
    assert len(x) == 2
    assert repr(x) == repr(numpy.arange(6.0).reshape(2, 3))
    assert [float(r.sum()) for r in x] == [3.0, 12.0]
    assert numpy.asarray(x).dtype == numpy.float64
    assert cp.asnumpy(x).shape == (2, 3)
    assert [0, 1, 2][cp.array(numpy.int64(2))] == 2
    with pytest.raises(ValueError):
        bool(x)


def test_fallback_warns_once_and_is_counted():
    cp.reset_stats()
    x = cp.array(numpy.array([3.0, 1.0, 2.0]))
    with pytest.warns(RuntimeWarning, match="numpy.array_str"):
        r = cp.array_str(x)
    assert r == numpy.array_str(numpy.array([3.0, 1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.array_str(x)  # no second warning
    assert cp.stats()["fallbacks"] == 2
    cov = cp.coverage()
    assert "add" in cov["native"] and "array_str" in cov["fallback"]


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_matrix_vector_products_on_strided_views(dt):
    # n == 1 and m == 1 products go to gemv with the views' strides.
    rng = numpy.random.default_rng(0)
    A = rng.random((7, 5)).astype(dt)
    x = rng.random(5).astype(dt)
    y = rng.random(7).astype(dt)
    cA, cx, cy = cp.asarray(A), cp.asarray(x), cp.asarray(y)
    cases = [(cA @ cx, A @ x), (cy @ cA, y @ A), (cA.T @ cy, A.T @ y),
             (cx @ cA.T, x @ A.T), (cA[::2, ::-1] @ cx[::-1], A[::2, ::-1] @ x[::-1]),
             (cA[:, 1] @ cA[:, 2], A[:, 1] @ A[:, 2]),
             (cy[::2] @ cA[::2, ::2], y[::2] @ A[::2, ::2]),
             (cp.dot(cA[1:, 1:], cx[1:]), numpy.dot(A[1:, 1:], x[1:]))]
    for got, ref in cases:
        got = cp.asnumpy(got)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        numpy.testing.assert_allclose(got, ref, rtol=1e-5)


def test_empty_arrays_beside_others_in_one_kernel():
    """0x0 and 3x0 values in a trace with other work: the kernel keeps its
    bare-pointer calling convention (an identity layout with a zero inner
    size once made it take memref descriptors and crash)."""
    a = cp.array(numpy.zeros((2, 0)))
    e = cp.eye(0, 0).copy()
    z = cp.zeros((3, 0)) + 1
    b = a * 2
    f = cp.eye(3).copy()
    assert numpy.array_equal(numpy.asarray(f), numpy.eye(3))
    assert numpy.asarray(e).shape == (0, 0)
    assert numpy.asarray(z).shape == (3, 0)
    assert numpy.asarray(b).shape == (2, 0)


_FLAG_KEYS = ["C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED",
              "WRITEBACKIFCOPY", "FORC", "FNC", "BEHAVED", "CARRAY", "FARRAY", "C", "F", "W"]


@pytest.mark.parametrize("make", [
    lambda m: m.ones((3, 4)), lambda m: m.ones((3, 4)).T, lambda m: m.ones((3, 4))[:, ::2],
    lambda m: m.ones((1, 4)), lambda m: m.ones((0, 3)), lambda m: m.ones((3, 1))[:, 0],
    lambda m: m.ones(()), lambda m: m.ones((3, 4))[1:], lambda m: m.ones((2, 3, 4))[:, :, ::-1]])
def test_flags_are_numpys(make):
    a, b = make(numpy), make(cp)
    for k in _FLAG_KEYS:
        assert b.flags[k] == a.flags[k], k
        assert getattr(b.flags, cp.ndarray.flags.fget(b)._name(k)) == a.flags[k], k
    b.flags.writeable = False
    assert not b.flags["W"]
    with pytest.raises(ValueError, match="read-only"):
        b[...] = 0
    if b.flags.owndata:  # (views stay read-only here: setflags' rule)
        b.flags["W"] = True
        b[...] = 2
        assert float(cp.asnumpy(b).sum()) == 2 * a.size
    with pytest.raises(KeyError):
        b.flags["NOPE"]
