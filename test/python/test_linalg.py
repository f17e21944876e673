"""cpnumeric.linalg against numpy.linalg: float32/float64/integer inputs,
stacks, empty matrices, non-contiguous views, LinAlgError, and the products
(batched matmul, cross, tensordot, vecdot, matvec, vecmat)."""

import numpy
import pytest

import cpnumeric as cp

LA = numpy.linalg
DTYPES = ["float64", "float32", "int64"]


def tol(dtype):
    return (1e-4, 1e-4) if numpy.dtype(dtype) == numpy.float32 else (1e-9, 1e-9)


def close(ours, ref, dtype="float64", sign_free=False):
    got = numpy.asarray(ours)
    ref = numpy.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if sign_free:  # singular/eigen vectors are unique up to sign
        got, ref = numpy.abs(got), numpy.abs(ref)
    rtol, atol = tol(dtype)
    numpy.testing.assert_allclose(got, ref, rtol=rtol * 100, atol=atol * 100)


def matrices(shape, dtype, seed=0, spd=False):
    rng = numpy.random.default_rng(seed)
    a = rng.standard_normal(shape) * 3
    if spd:
        a = a @ numpy.swapaxes(a, -1, -2) + shape[-1] * numpy.eye(shape[-1])
    elif len(shape) >= 2 and shape[-1] == shape[-2] and shape[-1]:
        a = a + 2 * shape[-1] * numpy.eye(shape[-1])  # well conditioned
    return a.round().astype(dtype) if numpy.dtype(dtype).kind == "i" else a.astype(dtype)


SQUARE = [(4, 4), (1, 1), (0, 0), (3, 5, 5), (2, 3, 4, 4), (40, 3, 3)]


# A fallback (or any other RuntimeWarning) fails the test (conftest.py).
pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_inv_det_slogdet(dtype, shape):
    a = matrices(shape, dtype)
    ca = cp.array(a)
    close(cp.linalg.inv(ca), LA.inv(a), dtype)
    close(cp.linalg.det(ca), LA.det(a), dtype)
    sign, logdet = cp.linalg.slogdet(ca)
    rs, rl = LA.slogdet(a)
    close(sign, rs, dtype)
    close(logdet, rl, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_cholesky_eigh(dtype, shape):
    a = matrices(shape, "float64", spd=True).astype(dtype)
    ca = cp.array(a)
    close(cp.linalg.cholesky(ca), LA.cholesky(a), dtype)
    close(cp.linalg.cholesky(ca, upper=True), LA.cholesky(a, upper=True), dtype)
    w, v = cp.linalg.eigh(ca)
    rw, rv = LA.eigh(a)
    close(w, rw, dtype)
    close(v, rv, dtype, sign_free=True)
    close(cp.linalg.eigvalsh(ca, UPLO="U"), LA.eigvalsh(a, UPLO="U"), dtype)


def test_eigh_reads_one_triangle():
    a = matrices((5, 5), "float64", spd=True)
    junk = a.copy()
    junk[numpy.triu_indices(5, 1)] = 99.0  # only the lower triangle is read
    close(cp.linalg.eigvalsh(cp.array(junk)), LA.eigvalsh(junk))
    close(cp.linalg.eigvalsh(cp.array(junk.T), UPLO="U"), LA.eigvalsh(junk.T, UPLO="U"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 3), (0, 3), (3, 0)])
def test_qr_svd(dtype, shape):
    a = matrices(shape, dtype)
    ca = cp.array(a)
    for mode in ("reduced", "complete"):
        q, r = cp.linalg.qr(ca, mode=mode)
        rq, rr = LA.qr(a, mode=mode)
        close(q, rq, dtype)
        close(r, rr, dtype)
    close(cp.linalg.qr(ca, mode="r"), LA.qr(a, mode="r"), dtype)
    for full in (True, False):
        u, s, vh = cp.linalg.svd(ca, full_matrices=full)
        ru, rs, rvh = LA.svd(a, full_matrices=full)
        close(s, rs, dtype)
        close(u, ru, dtype, sign_free=True)
        close(vh, rvh, dtype, sign_free=True)
        k = min(shape[-2:])
        recon = numpy.asarray(u)[..., :, :k] * numpy.asarray(s)[..., None, :] @ \
            numpy.asarray(vh)[..., :k, :]
        rtol, atol = tol(dtype)
        numpy.testing.assert_allclose(recon, a.astype(recon.dtype), rtol=rtol * 1e3,
                                      atol=atol * 1e3)
    close(cp.linalg.svd(ca, compute_uv=False), LA.svd(a, compute_uv=False), dtype)
    close(cp.linalg.svdvals(ca), LA.svdvals(a), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_shapes(dtype):
    a = matrices((4, 4), dtype)
    b = matrices((4, 3), dtype, seed=1)
    v = matrices((4,), "float64", seed=2).astype(dtype)
    close(cp.linalg.solve(cp.array(a), cp.array(b)), LA.solve(a, b), dtype)
    close(cp.linalg.solve(cp.array(a), cp.array(v)), LA.solve(a, v), dtype)
    stack = matrices((5, 4, 4), dtype)
    close(cp.linalg.solve(cp.array(stack), cp.array(b)), LA.solve(stack, b), dtype)
    bs = matrices((2, 1, 4, 2), dtype, seed=3)
    close(cp.linalg.solve(cp.array(stack), cp.array(bs)), LA.solve(stack, bs), dtype)
    close(cp.linalg.solve(cp.array(numpy.zeros((0, 0), dtype)), cp.array(numpy.zeros((0, 2), dtype))),
          LA.solve(numpy.zeros((0, 0), dtype), numpy.zeros((0, 2), dtype)), dtype)


def test_views_are_read_in_place():
    base = matrices((6, 8), "float64")
    a = base[1:5, ::2]  # 4x4, non-contiguous
    ca = cp.array(base)[1:5, ::2]
    close(cp.linalg.inv(ca), LA.inv(a))
    close(cp.linalg.inv(ca.T), LA.inv(a.T))
    close(cp.linalg.det(ca[::-1]), LA.det(a[::-1]))
    b = matrices((4, 3), "float64")
    close(cp.linalg.solve(ca.T, cp.array(b)[:, ::-1]), LA.solve(a.T, b[:, ::-1]))
    close(cp.linalg.svd(ca, compute_uv=False), LA.svd(a, compute_uv=False))
    # a write through the result reaches nothing else
    inv = cp.linalg.inv(ca)
    inv[0, 0] = 1e9
    close(ca, a)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,bshape", [((8, 3), (8,)), ((8, 3), (8, 2)),
                                          ((3, 8), (3, 2)), ((4, 4), (4,)),
                                          ((6, 3), (6, 0))])
def test_lstsq(dtype, shape, bshape):
    a = matrices(shape, dtype)
    b = matrices(bshape, dtype, seed=5) if 0 not in bshape else numpy.zeros(bshape, dtype)
    x, res, rank, s = cp.linalg.lstsq(cp.array(a), cp.array(b))
    rx, rres, rrank, rs = LA.lstsq(a, b)
    close(x, rx, dtype)
    close(res, rres, dtype)
    assert rank == rrank and isinstance(rank, (int, numpy.integer))
    close(s, rs, dtype)


def test_lstsq_rank_deficient():
    a = numpy.ones((5, 3))
    b = numpy.arange(5.0)
    x, res, rank, s = cp.linalg.lstsq(cp.array(a), cp.array(b))
    rx, rres, rrank, rs = LA.lstsq(a, b)
    close(x, rx)
    assert rank == rrank == 1
    assert numpy.asarray(res).shape == rres.shape == (0,)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (3, 4, 2), (0, 3)])
def test_pinv_rank_cond_norm(shape):
    a = matrices(shape, "float64")
    ca = cp.array(a)
    close(cp.linalg.pinv(ca), LA.pinv(a))
    close(cp.linalg.pinv(ca, rtol=None), LA.pinv(a, rtol=None))
    if a.size:
        assert numpy.array_equal(numpy.asarray(cp.linalg.matrix_rank(ca)),
                                 LA.matrix_rank(a))
        close(cp.linalg.cond(ca), LA.cond(a))
        close(cp.linalg.cond(ca, -2), LA.cond(a, -2))
        for ord in (None, "fro", "nuc", 1, -1, 2, -2, numpy.inf, -numpy.inf):
            close(cp.linalg.norm(ca, ord, axis=(-2, -1)), LA.norm(a, ord, axis=(-2, -1)))
            close(cp.linalg.matrix_norm(ca, ord=ord or "fro", keepdims=True),
                  LA.matrix_norm(a, ord=ord or "fro", keepdims=True))
    if len(shape) == 2 and shape[0] == shape[1]:
        for p in ("fro", 1, -1, numpy.inf, -numpy.inf):
            close(cp.linalg.cond(ca, p), LA.cond(a, p))


def test_rank_of_singular_and_vectors():
    a = numpy.ones((4, 4))
    assert int(cp.linalg.matrix_rank(cp.array(a))) == 1
    assert cp.linalg.matrix_rank(cp.array([0.0, 0.0])) == LA.matrix_rank(numpy.zeros(2))
    assert cp.linalg.matrix_rank(cp.array([0.0, 1.0])) == 1
    assert float(cp.linalg.cond(cp.array(a), 1)) == LA.cond(a, 1) == numpy.inf


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_vector_norms(dtype):
    x = matrices((3, 5), "float64").astype(dtype)
    x[x == 0] = 1  # no 0 ** -1 (NumPy warns)
    cx = cp.array(x)
    for ord in (None, 0, 1, 2, 3, 0.5, numpy.inf, -numpy.inf, -1):
        close(cp.linalg.norm(cx, ord, axis=1), LA.norm(x, ord, axis=1), dtype)
        close(cp.linalg.norm(cx[0], ord), LA.norm(x[0], ord), dtype)
        close(cp.linalg.norm(cx, ord, axis=0, keepdims=True),
              LA.norm(x, ord, axis=0, keepdims=True), dtype)
    close(cp.linalg.norm(cx), LA.norm(x), dtype)
    close(cp.linalg.norm(cx, keepdims=True), LA.norm(x, keepdims=True), dtype)
    close(cp.linalg.vector_norm(cx), LA.vector_norm(x), dtype)
    close(cp.linalg.vector_norm(cx, axis=(0, 1), ord=3, keepdims=True),
          LA.vector_norm(x, axis=(0, 1), ord=3, keepdims=True), dtype)
    close(cp.linalg.vector_norm(cx, axis=-1, ord=numpy.inf),
          LA.vector_norm(x, axis=-1, ord=numpy.inf), dtype)
    with pytest.raises(ValueError):
        cp.linalg.norm(cx[0], "fro")
    with pytest.raises(ValueError):
        cp.linalg.norm(cx, "bad")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1, -3])
def test_matrix_power(n):
    a = matrices((3, 4, 4), "float64") / 8
    close(cp.linalg.matrix_power(cp.array(a), n), LA.matrix_power(a, n))
    i = numpy.arange(9).reshape(3, 3) % 4
    if n >= 0:
        assert numpy.array_equal(numpy.asarray(cp.linalg.matrix_power(cp.array(i), n)),
                                 LA.matrix_power(i, n))
    with pytest.raises(TypeError):
        cp.linalg.matrix_power(cp.array(a), 1.5)


def test_multi_dot_tensorinv_tensorsolve():
    rng = numpy.random.default_rng(3)
    arrs = [rng.standard_normal(s) for s in [(10,), (10, 30), (30, 5), (5, 60), (60, 7)]]
    for k in (2, 3, 4, 5):
        close(cp.linalg.multi_dot([cp.array(x) for x in arrs[1:k + 1]]),
              LA.multi_dot(arrs[1:k + 1]))
    close(cp.linalg.multi_dot([cp.array(x) for x in arrs]), LA.multi_dot(arrs))
    close(cp.linalg.multi_dot([cp.array(arrs[0]), cp.array(arrs[1]), cp.array(arrs[1][0])]),
          LA.multi_dot([arrs[0], arrs[1], arrs[1][0]]))
    a = numpy.eye(4 * 6).reshape(4, 6, 8, 3) + rng.standard_normal((4, 6, 8, 3)) * 0.1
    close(cp.linalg.tensorinv(cp.array(a), ind=2), LA.tensorinv(a, ind=2))
    a = numpy.eye(24).reshape(6, 4, 2, 3, 4) * 3 + \
        rng.standard_normal((6, 4, 2, 3, 4)) * 0.1
    b = rng.standard_normal((6, 4))
    close(cp.linalg.tensorsolve(cp.array(a), cp.array(b)), LA.tensorsolve(a, b))
    a2 = numpy.moveaxis(a, 4, 0)
    close(cp.linalg.tensorsolve(cp.array(a2), cp.array(b), axes=(0,)),
          LA.tensorsolve(a2, b, axes=(0,)))


def test_errors():
    with pytest.raises(LA.LinAlgError, match="square"):
        cp.linalg.inv(cp.ones((2, 3)))
    with pytest.raises(LA.LinAlgError, match="at least two-dimensional"):
        cp.linalg.det(cp.ones(3))
    with pytest.raises(TypeError, match="float16"):
        cp.linalg.inv(cp.ones((2, 2), dtype="float16"))
    with pytest.raises(ValueError, match="UPLO"):
        cp.linalg.eigh(cp.eye(2), UPLO="X")
    with pytest.raises(ValueError, match="mode"):
        cp.linalg.qr(cp.eye(2), mode="bad")
    assert issubclass(cp.linalg.LinAlgError, ValueError)


def test_linalg_errors_raise_at_the_call():
    """A singular matrix raises LinAlgError from the call itself, as in NumPy;
    work recorded before and after is unaffected."""
    x = cp.arange(2000.0) * 2
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        cp.linalg.inv(cp.zeros((3, 3)) + cp.zeros(3))
    y = x + 1
    assert float(y[10]) == 21.0
    assert float(x[3]) == 6.0
    with pytest.raises(LA.LinAlgError, match="positive definite"):
        cp.linalg.cholesky(-cp.eye(4))
    with pytest.raises(LA.LinAlgError, match="Singular"):
        cp.linalg.solve(cp.ones((4, 4)), cp.ones(4))
    # one singular matrix in a stack fails the call, as in NumPy
    stack = numpy.stack([numpy.eye(3), numpy.zeros((3, 3))])
    with pytest.raises(LA.LinAlgError):
        cp.linalg.inv(cp.array(stack))
    assert float(cp.linalg.det(cp.eye(3) * 2)) == 8.0


def test_linalg_errors_under_jit_raise_when_read():
    @cp.jit
    def f(a):
        return cp.linalg.inv(a) * 2
    r = f(cp.array(numpy.eye(3)))
    close(r, 2 * numpy.eye(3))
    with pytest.raises(LA.LinAlgError, match="Singular matrix"):
        numpy.asarray(f(cp.zeros((3, 3))))
    close(f(cp.array(numpy.eye(3) * 4)), numpy.eye(3) / 2)


def test_linalg_error_at_a_sync_point_is_numpys_class_not_a_parsed_message():
    """A LAPACK error in a kernel's task travels with its kind to the sync
    point, where the bindings raise numpy.linalg.LinAlgError with NumPy's
    message (issue 21): not a RuntimeError that the Python layer parsed and
    raised again (which left the RuntimeError as the exception's context)."""
    from cpnumeric import _cpn

    @cp.jit
    def f(a):
        return cp.linalg.inv(a) * 2
    r = f(cp.zeros((3, 3)))
    # The binding itself raises it, with no Python layer between.
    with pytest.raises(LA.LinAlgError) as info:
        _cpn.wait(r._base.node)
    e = info.value
    assert type(e) is LA.LinAlgError and str(e) == "Singular matrix"
    assert RuntimeError not in type(e).__mro__
    assert e.__context__ is None and e.__cause__ is None
    # And so at the user's sync point.
    with pytest.raises(LA.LinAlgError) as info:
        numpy.asarray(r)
    assert type(info.value) is LA.LinAlgError and str(info.value) == "Singular matrix"
    assert info.value.__context__ is None
    with pytest.raises(LA.LinAlgError) as info:
        cp.linalg.cholesky(-cp.eye(4))
    assert str(info.value) == "Matrix is not positive definite"
    assert info.value.__context__ is None


def test_nan_passes_through_like_numpy():
    a = numpy.eye(3)
    a[1, 1] = numpy.nan
    with numpy.errstate(invalid="ignore"):
        close(cp.linalg.det(cp.array(a)), LA.det(a))
    close(cp.linalg.svd(cp.array(numpy.eye(3)), compute_uv=False), numpy.ones(3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SQUARE)
def test_eig_eigvals(dtype, shape):
    # General (non-symmetric) matrices: complex pairs where NumPy has them,
    # real results when every eigenvalue of the stack is real.
    a = matrices(shape, dtype, seed=3)
    if a.size:
        a = a - 2 * shape[-1] * numpy.eye(shape[-1], dtype=dtype)  # not dominant
    w, v = cp.linalg.eig(cp.array(a))
    rw, rv = LA.eig(a)
    assert numpy.asarray(w).dtype == rw.dtype and numpy.asarray(v).dtype == rv.dtype
    close(w, rw, dtype)  # LAPACK's order, the same call as NumPy's
    w, v = numpy.asarray(w), numpy.asarray(v)
    rtol, atol = tol(dtype)
    numpy.testing.assert_allclose(a.astype(w.dtype) @ v, v * w[..., None, :],
                                  rtol=rtol * 100, atol=atol * 1000)
    close(cp.linalg.eigvals(cp.array(a)), LA.eigvals(a), dtype)


def test_eig_real_and_complex_spectra():
    rot = numpy.array([[0.0, -1.0], [1.0, 0.0]])
    w = cp.linalg.eigvals(cp.array(rot))
    assert w.dtype == numpy.complex128
    close(numpy.sort_complex(numpy.asarray(w)), numpy.sort_complex(LA.eigvals(rot)))
    tri = numpy.triu(numpy.arange(1.0, 10.0).reshape(3, 3))
    w, v = cp.linalg.eig(cp.array(tri))
    assert w.dtype == numpy.float64 and v.dtype == numpy.float64
    close(w, LA.eig(tri).eigenvalues)
    with pytest.raises(LA.LinAlgError):
        cp.linalg.eig(cp.ones((2, 3)))
    with pytest.raises(LA.LinAlgError):
        cp.linalg.eigvals(cp.ones(3))


def test_complex_input_falls_back_with_a_warning():
    a = numpy.array([[1j, 2.0], [0.0, 1.0]])
    with pytest.warns(RuntimeWarning, match="of complex input"):
        w = cp.linalg.eigvals(cp.array(a))
    numpy.testing.assert_allclose(numpy.asarray(w), LA.eigvals(a))


def test_small_eager_arrays_use_the_same_results(monkeypatch):
    monkeypatch.setitem(cp._core.EAGER, "threshold", 1024)
    a = matrices((4, 4), "float64")
    ca = cp.array(a)
    assert ca._eager() is not None
    close(cp.linalg.inv(ca), LA.inv(a))
    w, v = cp.linalg.eigh(cp.array(matrices((3, 3), "float64", spd=True)))
    assert isinstance(w, cp.ndarray)
    close(cp.linalg.qr(ca).R, LA.qr(a).R)


def test_linalg_inside_jit():
    @cp.jit
    def f(a, b):
        return cp.linalg.solve(a @ a.T + 4 * cp.eye(4), b) + cp.linalg.det(a)
    a, b = matrices((4, 4), "float64"), matrices((4,), "float64", seed=1)
    ref = LA.solve(a @ a.T + 4 * numpy.eye(4), b) + LA.det(a)
    close(f(cp.array(a), cp.array(b)), ref)
    close(f(cp.array(a), cp.array(b)), ref)


# -- products ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("sa,sb", [((3, 4, 5), (3, 5, 2)), ((2, 1, 4, 5), (3, 5, 2)),
                                   ((30, 4, 5), (5, 3)), ((5,), (30, 5, 2)),
                                   ((30, 4, 5), (5,)), ((0, 2, 3), (3, 4))])
def test_batched_matmul(dtype, sa, sb):
    a = matrices(sa, "float64").astype(dtype)
    b = matrices(sb, "float64", seed=1).astype(dtype)
    close(cp.matmul(cp.array(a), cp.array(b)), numpy.matmul(a, b), dtype)
    close(cp.array(a) @ cp.array(b), a @ b, dtype)
    with pytest.raises(ValueError, match="mismatch"):
        cp.matmul(cp.ones((2, 3, 4)), cp.ones((2, 5, 4)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex64", "complex128", "int64"])
@pytest.mark.parametrize("sa,sb", [((40, 30), (30, 20)), ((40, 30), (30,)), ((30,), (30, 20)),
                                   ((30,), (30,)), ((1, 1), (1,)), ((0, 3), (3, 2)),
                                   ((3, 0), (0,)), ((4, 3), (3, 0))])
def test_matmul_operator_of_traced_arrays(dtype, sa, sb):
    """`a @ b` of whole traced arrays goes through ArrayBase's C slot (a
    matrix or a vector on either side); views, mixed dtypes and NumPy's
    operand on the left through the Python path; all as NumPy."""
    from cpnumeric import _core
    a = matrices(sa, "float64").astype(dtype)
    b = matrices(sb, "float64", seed=1).astype(dtype)
    if a.dtype.kind == "c":
        a = a + 1j * matrices(sa, "float64", seed=2)
    threshold = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0  # traced, not NumPy's eager call
    try:
        ca, cb = cp.array(a), cp.array(b)
        r = ca @ cb
        close(r, a @ b, dtype)
        close(r * 2, (a @ b) * 2, dtype)  # the result's view, traced on
        close(cp.array(a[::-1]) @ cb, a[::-1] @ b, dtype)  # a view operand
        if len(sa) == 2:
            close(cp.array(a.T.copy()).T @ cb, a @ b, dtype)  # a transposed view
        other = {"float64": "float32", "float32": "float64", "complex64": "complex128",
                 "complex128": "complex64", "int64": "float32"}[dtype]
        close(ca @ cb.astype(other), a @ b.astype(other), "float32")
        close(a @ cb, a @ b, dtype)  # NumPy's operator: its matmul ufunc
        close(numpy.matmul(a, cb), a @ b, dtype)
    finally:
        _core.EAGER["threshold"] = threshold
    with pytest.raises(ValueError, match="mismatch"):
        cp.ones((3, 4)) @ cp.ones(5)
    with pytest.raises(ValueError, match="mismatch"):
        cp.ones(4) @ cp.ones((5, 2))


def test_matmul_out_casting_and_numpy_operand_eager():
    """out= follows NumPy's same_kind rule (its own error); a small NumPy
    matrix times ours goes through the eager call as ours @ NumPy's does."""
    a = numpy.arange(9.0).reshape(3, 3)
    with pytest.raises(TypeError, match="same_kind") as e:
        numpy.matmul(a, cp.array(a), out=numpy.empty((3, 3), numpy.int64))
    assert type(e.value) is type(pytest.raises(TypeError, numpy.matmul, a, a,
                                               out=numpy.empty((3, 3), numpy.int64)).value)
    with pytest.raises(TypeError, match="same_kind"):
        cp.matmul(cp.array(a), cp.array(a), out=cp.zeros((3, 3), "int64"))
    out = cp.zeros((3, 3), "float32")
    assert numpy.matmul(a, cp.array(a), out=out) is out
    close(out, (a @ a).astype("float32"), "float32")
    from cpnumeric import _core
    threshold = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 1024  # the rest of the suite runs with 0
    try:
        x = cp.ones(4)
        before = cp.stats()["eager_calls"]
        r = numpy.ones((4, 4)) @ x
        assert cp.stats()["eager_calls"] > before
    finally:
        _core.EAGER["threshold"] = threshold
    close(r, numpy.full(4, 4.0))


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_cross(dtype):
    a = matrices((5, 3), "float64").astype(dtype)
    b = matrices((5, 3), "float64", seed=1).astype(dtype)
    close(cp.cross(cp.array(a), cp.array(b)), numpy.cross(a, b), dtype)
    close(cp.cross(cp.array(a.T), cp.array(b.T), axisa=0, axisb=0, axisc=0),
          numpy.cross(a.T, b.T, axisa=0, axisb=0, axisc=0), dtype)
    close(cp.cross(cp.array(a), cp.array(b[0])), numpy.cross(a, b[0]), dtype)
    close(cp.linalg.cross(cp.array(a), cp.array(b)), LA.cross(a, b), dtype)
    with pytest.warns(DeprecationWarning):
        close(cp.cross(cp.array(a[:, :2]), cp.array(b)), numpy.cross(a[:, :2], b), dtype)
    with pytest.warns(DeprecationWarning):
        close(cp.cross(cp.array(a[:, :2]), cp.array(b[:, :2])),
              numpy.cross(a[:, :2], b[:, :2]), dtype)
    with pytest.raises(ValueError, match="incompatible dimensions"):
        cp.cross(cp.ones((2, 4)), cp.ones((2, 3)))
    with pytest.raises(ValueError):
        cp.linalg.cross(cp.ones((2, 2)), cp.ones((2, 2)))


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_tensordot_vecdot_matvec_vecmat(dtype):
    a = matrices((3, 4, 5), "float64").astype(dtype)
    b = matrices((4, 5, 2), "float64", seed=1).astype(dtype)
    ca, cb = cp.array(a), cp.array(b)
    close(cp.tensordot(ca, cb), numpy.tensordot(a, b), dtype)
    close(cp.tensordot(ca.transpose(0, 2, 1), cb, axes=1),
          numpy.tensordot(a.transpose(0, 2, 1), b, axes=1), dtype)
    close(cp.tensordot(ca, cb, axes=([1, 2], [0, 1])),
          numpy.tensordot(a, b, axes=([1, 2], [0, 1])), dtype)
    close(cp.tensordot(ca, cb, axes=0), numpy.tensordot(a, b, axes=0), dtype)
    close(cp.linalg.tensordot(ca, cb, axes=2), LA.tensordot(a, b, axes=2), dtype)
    with pytest.raises(ValueError, match="shape-mismatch"):
        cp.tensordot(ca, cb, axes=([0], [0]))
    v = matrices((3, 5), "float64", seed=2).astype(dtype)
    close(cp.vecdot(ca, cp.array(v[:, None, :])), numpy.vecdot(a, v[:, None, :]), dtype)
    close(cp.vecdot(ca, ca, axis=1), numpy.vecdot(a, a, axis=1), dtype)
    close(cp.linalg.vecdot(ca, ca, axis=0), LA.vecdot(a, a, axis=0), dtype)
    close(cp.matvec(ca, cp.array(v[0])), numpy.matvec(a, v[0]), dtype)
    close(cp.vecmat(cp.array(v[0, :4]), ca), numpy.vecmat(v[0, :4], a), dtype)
    close(cp.linalg.outer(cp.array(v[0]), cp.array(v[1])), LA.outer(v[0], v[1]), dtype)
    close(cp.linalg.diagonal(ca, offset=1), LA.diagonal(a, offset=1), dtype)
    close(cp.linalg.trace(ca), LA.trace(a), dtype)
    close(cp.linalg.matrix_transpose(ca), LA.matrix_transpose(a), dtype)
    close(cp.linalg.matmul(ca, cb[0]), LA.matmul(a, b[0]), dtype)
    with pytest.raises(ValueError):
        cp.linalg.outer(ca, ca)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repeated_products_with_a_symmetric_matrix(dtype):
    """A stored matrix multiplied by vectors again and again is checked for
    symmetry on its second product; a symmetric one is then read as one
    triangle (symv). Writes to it, in a later trace or in the same kernel as a
    product, must be seen by every later product."""
    n = 600
    m = numpy.random.default_rng(3).standard_normal((n, n))
    a = ((m + m.T) / 2).astype(dtype)
    x = numpy.linspace(-1, 1, n).astype(dtype)
    ca, cx = cp.array(a), cp.array(x)
    cp.reset_stats()

    def products():
        for _ in range(3):
            close(ca @ cx, a @ x, dtype)
            close(cx @ ca, x @ a, dtype)
            close(ca.T @ cx, a.T @ x, dtype)
            close(cp.matvec(ca, cx), numpy.matvec(a, x), dtype)

    products()
    ca[0, 1] += 1  # above the diagonal: symv with the lower triangle would miss it
    a[0, 1] += 1
    products()
    ca[1, 0] += 1  # symmetric again
    a[1, 0] += 1
    products()
    # One trace: a product, an in-place write, a product of the new matrix.
    y1 = ca @ cx
    ca[2, 5] -= 3
    y2 = ca @ cx
    close(y1, a @ x, dtype)
    a[2, 5] -= 3
    close(y2, a @ x, dtype)
    products()
    s = cp.stats()
    # Checked once after each write (the second product), symmetric in the
    # first and third rounds (cp.matvec is a fused loop, not a BLAS call).
    assert s["symmetry_checks"] == 4, s
    assert s["symmetric_products"] >= 12, s
    # A view that is not the whole stored matrix is multiplied as it is.
    close(ca[:512, :512] @ cx[:512], a[:512, :512] @ x[:512], dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_einsum(dtype):
    rng = numpy.random.default_rng(0)

    def r(*shape):
        return (rng.random(shape) * 10).astype(dtype)
    A, B, S = r(3, 4), r(4, 5), r(4, 4)
    T, U, V, W = r(2, 3, 4), r(2, 4, 5), r(3, 4, 6), r(4, 3, 7)
    cases = [("ij,jk->ik", A, B), ("ij->ji", A), ("ii->i", S), ("ii", S), ("ij->", A),
             ("i,i", A[0], A[1]), ("i,j->ij", A[0], B[0]), ("bij,bjk->bik", T, U),
             ("ijk,jil->kl", V, W), ("ij,ij->ij", A, A), ("ij,jk", A, B), ("ba", A),
             ("ij,jk,kl->il", A, B, B.T), ("iij->ij", r(3, 3, 2)), ("ij,j->i", A, B[:, 0]),
             (" ij , jk -> ki ", A, B), ("ij,kj->ik", A[:, ::-1], A),
             ("...j,jk", T, B), ("...j,jk->...k", T, B), ("...ii->...i", r(3, 2, 2)),
             ("ij...,j...->i...", r(2, 3, 5), r(3, 1)), ("...,...", A[0], A),
             ("b...,b", r(2, 3), r(2)), ("i...->...", T), ("...", A)]
    for sub, *ops in cases:
        close(cp.einsum(sub, *[cp.array(o) for o in ops]), numpy.einsum(sub, *ops), dtype)
    for sub in [(T, [0, 1, 2], U, [0, 2, 3], [0, 1, 3]), (T, [Ellipsis, 2], B, [2, 3]),
                (A, [1, 0]), (T, [Ellipsis, 1], [Ellipsis, 1]), (A[0], [0], A[1], [0], [])]:
        ours = [cp.array(x) if isinstance(x, numpy.ndarray) else x for x in sub]
        close(cp.einsum(*ours), numpy.einsum(*sub), dtype)
    with pytest.raises(ValueError, match="no '...' ellipsis"):
        cp.einsum("i...->i", cp.array(T))
    close(cp.einsum("ij,jk->ik", cp.array(A), cp.array(B), dtype="float64"),
          numpy.einsum("ij,jk->ik", A, B, dtype="float64"))
    assert cp.einsum_path("ij,jk,kl->il", A, B, B.T)[0] == \
        numpy.einsum_path("ij,jk,kl->il", A, B, B.T)[0]
    with pytest.raises(ValueError, match="fewer operands"):
        cp.einsum("ij,jk->ik", cp.array(A))
    with pytest.raises(ValueError, match="never appeared"):
        cp.einsum("ij->k", cp.array(A))
    with pytest.raises(ValueError, match="too many subscripts"):
        cp.einsum("ijk->i", cp.array(A))
    with pytest.raises(ValueError):
        cp.einsum("ij,ij->i", cp.array(A), cp.array(B))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stacked_products_big_enough_for_blas(dtype):
    """Stacks of two or more products of 16^3+ multiply-adds go to one gemm
    per product in the runtime (cpn_lib_matmul): broadcast batch axes,
    transposed and strided operands, vectors, int and mixed dtypes; short
    stacks of big products (their gemms on OpenBLAS's threads, one after
    another) and of products as big as a 2-D one gets."""
    a = matrices((20, 24, 16), dtype, 1)
    b = matrices((20, 16, 32), dtype, 2)
    close(cp.matmul(cp.array(a), cp.array(b)), a @ b, dtype)
    close(cp.array(a) @ cp.array(b[0]), a @ b[0], dtype)          # broadcast b
    c = matrices((3, 1, 17, 18), dtype, 3)
    d = matrices((1, 7, 18, 19), dtype, 4)
    close(cp.array(c) @ cp.array(d), c @ d, dtype)                  # both broadcast
    t = numpy.swapaxes(matrices((30, 20, 20), dtype, 5), -1, -2)
    close(cp.array(t) @ cp.array(t[::-1]), t @ t[::-1], dtype)      # transposed, reversed
    s = matrices((40, 40, 40), dtype, 6)[::2, ::2, 1::2]
    close(cp.array(s) @ cp.array(s), s @ s, dtype)                  # strided
    v = matrices((40,), dtype, 7)
    m = matrices((25, 30, 40), dtype, 8)
    close(cp.array(m) @ cp.array(v), m @ v, dtype)                  # matrix @ vector
    i = numpy.arange(20 * 16 * 16).reshape(20, 16, 16) % 7
    close(cp.array(a) @ cp.array(i[:, :, :16]), a @ i[:, :, :16], dtype)
    for shape in [(2, 130, 70), (3, 16, 16), (2, 1, 200, 200)]:
        e = matrices(shape, dtype, 9)
        f = numpy.swapaxes(matrices(shape, dtype, 10), -1, -2)
        close(cp.array(e) @ cp.array(f), e @ f, dtype)
        close(cp.array(e) @ cp.array(f[:1]), e @ f[:1], dtype)     # broadcast


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(400, 400), (2, 389, 389)])
def test_large_lu_split_over_threads(dtype, shape):
    # n >= 384: the blocked LU of runtime/lib/Factor.cpp (the transpose factored,
    # its updates split over the threads) behind solve, inv, det, slogdet;
    # a transposed view (not contiguous), a ragged last block of 389.
    a = matrices(shape, dtype, seed=3)
    b = matrices(shape[:-1] + (3,), dtype, seed=4)
    for x in (a, numpy.swapaxes(a, -1, -2)):
        ca = cp.asarray(numpy.ascontiguousarray(x)) if x is a else \
            numpy.swapaxes(cp.asarray(a), -1, -2)
        close(cp.linalg.solve(ca, cp.asarray(b)), LA.solve(x, b), dtype)
        close(cp.linalg.inv(ca), LA.inv(x), dtype)
        sign, logdet = cp.linalg.slogdet(ca)
        ref_sign, ref_logdet = LA.slogdet(x)
        close(sign, ref_sign, dtype)
        close(logdet, ref_logdet, dtype)


def test_large_singular_matrices_raise_and_have_zero_determinant():
    # A zero row or column in a matrix the threads factor: LinAlgError from
    # solve and inv, det 0 and slogdet (0, -inf), as NumPy.
    for axis in (0, 1):
        a = matrices((400, 400), "float64", seed=5)
        if axis == 0:
            a[137] = 0
        else:
            a[:, 137] = 0
        ca = cp.asarray(a)
        with pytest.raises(LA.LinAlgError):
            numpy.asarray(cp.linalg.solve(ca, cp.ones(400)))
        with pytest.raises(LA.LinAlgError):
            numpy.asarray(cp.linalg.inv(ca))
        assert float(cp.linalg.det(ca)) == 0.0
        sign, logdet = cp.linalg.slogdet(ca)
        assert float(sign) == 0.0 and float(logdet) == -numpy.inf


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(400, 400), (2, 389, 389)])
def test_large_cholesky_split_over_threads(dtype, shape):
    # runtime/lib/Factor.cpp parallelPotrf; upper=True; a matrix that is not
    # positive definite raises LinAlgError.
    a = matrices(shape, dtype, seed=6, spd=True)
    close(cp.linalg.cholesky(cp.asarray(a)), LA.cholesky(a), dtype)
    close(cp.linalg.cholesky(cp.asarray(a), upper=True), LA.cholesky(a, upper=True), dtype)
    bad = a.copy()
    bad[..., 200, 200] = -1
    with pytest.raises(LA.LinAlgError):
        numpy.asarray(cp.linalg.cholesky(cp.asarray(bad)))


def _small_cases(n, dtype, rng):
    """Stacks of n x n matrices for the inline factorizations (n <= 16):
    random ones that need row interchanges, exactly singular integer ones,
    nearly singular ones, a zero matrix, NaN and inf entries."""
    t = numpy.dtype(dtype)
    m = rng.standard_normal((6, n, n)).astype(t)
    m[1] = numpy.tril(m[1], -1) + numpy.triu(m[1]) * 1e-3  # small diagonal: pivots
    ints = rng.integers(-4, 5, (n, n)).astype(t)
    ints[-1] = ints[0] * 2 if n > 1 else 0  # a repeated row: exactly singular
    m[2] = ints
    m[3] = numpy.arange(n * n, dtype=t).reshape(n, n) + 1  # rank 2 for n >= 2
    m[4] = 0
    if n > 1:
        m[5, 0, 0] = numpy.nan
    return m


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 12, 16, 17])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_small_stacked_factorizations_match_numpy(n, dtype):
    """Stacks of small matrices are factored inline (runtime/lib/Lapack.cpp,
    up to 16 rows); singular, nearly singular and non-finite ones go to
    LAPACK as NumPy's do: the same values, NaN and errors as NumPy."""
    rng = numpy.random.default_rng(n)
    m = _small_cases(n, dtype, rng)
    cm = cp.asarray(m)
    # 2, 4 and (from 3 rows) 3 are singular: their det is rounding noise.
    singular = [2, 4] + ([3] if n >= 3 else [])
    regular = [i for i in range(len(m)) if i not in singular and i != 5]  # 5: NaN
    with numpy.errstate(all="ignore"):
        for name in ("det", "slogdet"):
            ref = getattr(LA, name)(m)
            got = getattr(cp.linalg, name)(cm)
            for g, r in zip(got if name == "slogdet" else [got],
                            ref if name == "slogdet" else [ref]):
                g = numpy.asarray(g)
                assert g.dtype == r.dtype
                numpy.testing.assert_allclose(g[regular], r[regular],
                                              rtol=2e-3 if dtype == "float32" else 1e-9,
                                              atol=0, equal_nan=True, err_msg=name)
        assert numpy.isnan(numpy.asarray(cp.linalg.det(cm))[5]) == (n > 1)
        d = numpy.abs(numpy.asarray(cp.linalg.det(cm))[singular])
        assert (d <= 1e-3 * numpy.abs(m[singular]).max() ** n).all(), d
    # One matrix at a time, singular ones raising as NumPy's.
    for i in range(len(m)):
        for name, args in (("inv", (m[i],)), ("solve", (m[i], m[i][:, :1] + 1)),
                           ("cholesky", (m[i] @ m[i].T + n * numpy.eye(n, dtype=dtype),)),
                           ("cholesky", (m[i],))):
            if i in singular and name != "cholesky":
                # Exactly singular: LAPACK's last rounding decides between an
                # error and noise, and our OpenBLAS build is not NumPy's.
                try:
                    numpy.asarray(getattr(cp.linalg, name)(*[cp.asarray(a) for a in args]))
                except LA.LinAlgError as e:
                    assert "Singular matrix" in str(e)
                continue
            try:
                with numpy.errstate(all="ignore"):
                    ref = getattr(LA, name)(*args)
            except LA.LinAlgError as e:
                with pytest.raises(LA.LinAlgError, match=str(e)):
                    numpy.asarray(getattr(cp.linalg, name)(*[cp.asarray(a) for a in args]))
                continue
            with numpy.errstate(all="ignore"):
                got = numpy.asarray(getattr(cp.linalg, name)(*[cp.asarray(a) for a in args]))
            if numpy.isnan(m[i]).any():  # NaN spreads by the algorithm's order
                assert numpy.isnan(got).any() == numpy.isnan(ref).any(), (name, i)
                continue
            scale = numpy.nanmax(numpy.abs(ref)) if numpy.isfinite(ref).any() else 1.0
            numpy.testing.assert_allclose(
                got, ref, rtol=1e-3 if dtype == "float32" else 1e-7,
                atol=(1e-3 if dtype == "float32" else 1e-7) * scale, equal_nan=True,
                err_msg=f"{name} of matrix {i}")
    # Stacks of well-conditioned ones (spread over threads when many).
    for count in (3, 1000):
        a = rng.standard_normal((count, n, n)).astype(dtype) + n * numpy.eye(n, dtype=dtype)
        b = rng.standard_normal((count, n, 2)).astype(dtype)
        ca, cb = cp.asarray(a), cp.asarray(b)
        r = 1e-3 if dtype == "float32" else 1e-9
        numpy.testing.assert_allclose(numpy.asarray(cp.linalg.inv(ca)), LA.inv(a), rtol=r, atol=r)
        numpy.testing.assert_allclose(numpy.asarray(cp.linalg.solve(ca, cb)), LA.solve(a, b),
                                      rtol=r, atol=r)
        numpy.testing.assert_allclose(numpy.asarray(cp.linalg.det(ca)), LA.det(a), rtol=r)
        s = a @ a.transpose(0, 2, 1)
        numpy.testing.assert_allclose(numpy.asarray(cp.linalg.cholesky(cp.asarray(s))),
                                      LA.cholesky(s), rtol=r * 10, atol=r * 10)


@pytest.mark.parametrize("n", [2, 8, 20])
def test_cholesky_reads_the_triangle_it_is_asked_for(n):
    """upper=True factors the upper triangle of a non-symmetric matrix, as
    NumPy's (it took the lower one and transposed its factor)."""
    rng = numpy.random.default_rng(n)
    a = rng.random((3, n, n)) + n * numpy.eye(n)
    a[:, numpy.tril_indices(n, -1)[0], numpy.tril_indices(n, -1)[1]] = 100.0
    for upper in (True, False):
        try:
            ref = LA.cholesky(a, upper=upper)
        except LA.LinAlgError:
            with pytest.raises(LA.LinAlgError):
                numpy.asarray(cp.linalg.cholesky(cp.asarray(a), upper=upper))
            continue
        close(cp.linalg.cholesky(cp.asarray(a), upper=upper), ref)
