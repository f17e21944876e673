"""complex64/complex128 and float16 arrays against NumPy: ufuncs (compiled
through the complex dialect), promotion with real arrays and Python complex
scalars, reductions, `.real`/`.imag` views that write through to the base,
casts, products, sorting and the library calls, on 0-d, empty, broadcast and
non-contiguous operands."""

import warnings

import numpy
import pytest

import cpnumeric as cp

COMPLEX = ["complex64", "complex128"]
SHAPES = [(), (0,), (7,), (3, 4)]

UNARY = ["negative", "positive", "conjugate", "absolute", "square", "reciprocal",
         "sign", "sqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10",
         "sin", "cos", "tan", "sinh", "cosh", "tanh", "isnan", "isinf", "isfinite",
         "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal", "maximum", "minimum",
          "fmax", "fmin", "logical_and", "logical_or"]


def cdata(shape, dtype, seed=0):
    rng = numpy.random.default_rng(seed)
    re = rng.uniform(-2, 2, shape).round(1)
    im = rng.uniform(-2, 2, shape).round(1)
    return (re + 1j * im).astype(dtype)


def tol(dtype):
    return 2e-5 if numpy.dtype(dtype) in (numpy.complex64, numpy.float32) else 1e-12


def same(ours, ref, rtol=None):
    o = numpy.asarray(ours)
    ref = numpy.asarray(ref)
    assert o.shape == ref.shape and o.dtype == ref.dtype, (o.shape, o.dtype, ref.shape,
                                                           ref.dtype)
    if ref.dtype.kind in "fc":
        numpy.testing.assert_allclose(o, ref, rtol=rtol or tol(ref.dtype),
                                      atol=rtol or tol(ref.dtype), equal_nan=True)
    else:
        numpy.testing.assert_array_equal(o, ref)


@pytest.fixture(autouse=True)
def no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, shape, dtype):
    z = cdata(shape, dtype)
    with numpy.errstate(all="ignore"):
        same(getattr(cp, name)(cp.asarray(z)), getattr(numpy, name)(z))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast_and_views(name, dtype):
    z = cdata((4, 6), dtype)
    w = cdata((6,), dtype, seed=1)
    z[1, 2] = w[2]  # equal elements for the comparisons
    cz, cw = cp.asarray(z), cp.asarray(w)
    with numpy.errstate(all="ignore"):
        same(getattr(cp, name)(cz, cw), getattr(numpy, name)(z, w))
        same(getattr(cp, name)(cz[::2, ::-3], cz[1::2, ::3]),
             getattr(numpy, name)(z[::2, ::-3], z[1::2, ::3]))
        same(getattr(cp, name)(cz.T, cz.T[:, ::-1]), getattr(numpy, name)(z.T, z.T[:, ::-1]))


def test_nan_and_inf_parts():
    z = numpy.array([complex(numpy.nan, 1), complex(1, numpy.nan), complex(numpy.inf, 0),
                     complex(0, -numpy.inf), 1 + 1j, 1 + 2j, 0j])
    c = cp.asarray(z)
    for name in ["isnan", "isinf", "isfinite", "absolute"]:
        same(getattr(cp, name)(c), getattr(numpy, name)(z))
    for name in ["less", "greater_equal", "maximum", "minimum", "fmax", "fmin", "equal"]:
        with numpy.errstate(all="ignore"):
            same(getattr(cp, name)(c, c[::-1]), getattr(numpy, name)(z, z[::-1]))


def test_power_special_cases():
    z = numpy.array([0j, 0j, 0j, 2 + 1j, 1 - 1j, -3 + 0j])
    w = numpy.array([2 + 0j, 0j, -1 + 0j, 0j, 3 + 0j, 0.5 + 0j])
    with numpy.errstate(all="ignore"):
        same(cp.power(cp.asarray(z), cp.asarray(w)), numpy.power(z, w))
    same(cp.asarray(z[3:]) ** 2, z[3:] ** 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_promotion_with_real_arrays_and_python_complex(dtype):
    x = numpy.arange(6).reshape(2, 3).astype(dtype)
    c = cp.asarray(x)
    same(c * 1j, x * 1j)
    same(c + (2 - 1j), x + (2 - 1j))
    same(cp.exp(1j * c), numpy.exp(1j * x))
    z = cdata((3,), "complex64")
    same(c - cp.asarray(z), x - z)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(dtype, axis):
    z = cdata((5, 6), dtype)
    c = cp.asarray(z)
    for name in ["sum", "prod", "mean", "var", "std", "max", "min", "argmax", "argmin"]:
        same(getattr(c, name)(axis=axis), getattr(z, name)(axis=axis), rtol=1e-4
             if dtype == "complex64" else 1e-11)
    same(cp.sum(cp.asarray(z[:0]), axis=0), numpy.sum(z[:0], axis=0))
    same(cp.vdot(c, c[::-1]), numpy.vdot(z, z[::-1]), rtol=1e-4)


def test_real_and_imag_are_views():
    z = cdata((3, 4), "complex128")
    c = cp.asarray(z)
    same(c.real, z.real)
    same(c.imag, z.imag)
    assert c.real.dtype == numpy.float64 and c.real.strides == z.real.strides
    assert c.astype(numpy.complex64).imag.dtype == numpy.float32
    # Writes through each view (and views of it) reach the base.
    c.real[1] = 7.0
    z.real[1] = 7.0
    c.imag[:, ::2] = -1.0
    z.imag[:, ::2] = -1.0
    r = c.real
    r[2, 3] += 100
    z.real[2, 3] += 100
    same(c, z)
    c.real = 0.5
    z.real = 0.5
    same(c, z)
    c.imag = cp.arange(4.0)
    z.imag = numpy.arange(4.0)
    same(c, z)
    v = c[::-1, 1:3]
    v.imag[0, 0] = 42
    z[::-1, 1:3].imag[0, 0] = 42
    same(c, z)
    same(cp.real(c), numpy.real(z))
    same(cp.imag(c[1]), numpy.imag(z[1]))
    same(c.real.T @ c.imag, z.real.T @ z.imag)


def test_real_and_imag_of_real_arrays_and_scalars():
    x = numpy.arange(4.0)
    c = cp.asarray(x)
    same(c.real, x.real)
    same(c.imag, x.imag)
    with pytest.raises(ValueError):
        c.imag[0] = 1
    with pytest.raises(TypeError):
        c.imag = 1
    assert cp.real(3 + 4j) == 3 and cp.imag(3 + 4j) == 4
    zero_d = cp.asarray(numpy.complex128(1 - 2j))
    same(zero_d.real, numpy.float64(1))
    same(zero_d.imag, numpy.float64(-2))


def test_complex_predicates_angle_conj():
    z = cdata((9,), "complex128")
    z[::3] = z[::3].real
    c = cp.asarray(z)
    same(cp.iscomplex(c), numpy.iscomplex(z))
    same(cp.isreal(c), numpy.isreal(z))
    assert cp.iscomplexobj(c) and not cp.isrealobj(c)
    same(cp.angle(c), numpy.angle(z))
    same(cp.angle(c, deg=True), numpy.angle(z, deg=True))
    same(cp.conj(c), numpy.conj(z))
    same(c.conj(), z.conj())
    same(cp.real_if_close(cp.asarray(z.real + 1e-18j)), numpy.real_if_close(z.real + 1e-18j))
    same(cp.real_if_close(c), numpy.real_if_close(z))


def test_casts():
    z = cdata((2, 3), "complex128")
    c = cp.asarray(z)
    same(c.astype(numpy.complex64), z.astype(numpy.complex64))
    same(c.astype(bool), z.astype(bool))
    with pytest.warns(numpy.exceptions.ComplexWarning):
        r = c.astype(numpy.float64)
    same(r, z.real)
    with pytest.warns(numpy.exceptions.ComplexWarning):
        f = cp.zeros((2, 3))
        f[...] = c
    same(f, z.real)
    same(cp.asarray(numpy.arange(3, dtype=numpy.int16)).astype(numpy.complex64),
         numpy.arange(3, dtype=numpy.int16).astype(numpy.complex64))
    same(cp.zeros(3, dtype=complex), numpy.zeros(3, dtype=complex))
    same(cp.full((2,), 1 - 1j), numpy.full((2,), 1 - 1j))
    same(cp.ones((2, 2), numpy.complex64) * (1 + 1j), numpy.ones((2, 2), numpy.complex64) * (1 + 1j))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_products(dtype):
    a, b = cdata((4, 5), dtype), cdata((5, 3), dtype, seed=2)
    ca, cb = cp.asarray(a), cp.asarray(b)
    same(ca @ cb, a @ b)
    same(cp.dot(ca.T, ca), numpy.dot(a.T, a))
    same(cp.vecdot(ca, ca), numpy.vecdot(a, a))
    same(cp.vecmat(ca[0], ca.T), numpy.vecmat(a[0], a.T))
    same(cp.einsum("ij,jk->ik", ca, cb), numpy.einsum("ij,jk->ik", a, b))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sorting_scans_and_gathers(dtype):
    z = cdata((12,), dtype)
    z[3] = z[7]
    c = cp.asarray(z)
    same(cp.sort(c), numpy.sort(z))
    same(cp.argsort(c), numpy.argsort(z, kind="stable"))
    same(cp.searchsorted(cp.sort(c), c), numpy.searchsorted(numpy.sort(z), z))
    same(cp.unique(c), numpy.unique(z))
    same(cp.cumsum(c), numpy.cumsum(z))
    same(cp.cumprod(c[:5]), numpy.cumprod(z[:5]))
    same(c[cp.asarray([5, 0, 5])], z[[5, 0, 5]])
    same(c[c.real > 0], z[z.real > 0])
    same(cp.nonzero(c * (c.imag > 0))[0], numpy.nonzero(z * (z.imag > 0))[0])
    nan_sorted = numpy.array([complex(numpy.nan, 0), 1 + numpy.nan * 1j, 2 + 1j, 1 + 1j])
    same(cp.sort(cp.asarray(nan_sorted)), numpy.sort(nan_sorted))


def test_linalg_of_complex_falls_back_with_a_warning():
    a = cdata((3, 3), "complex128") + 3 * numpy.eye(3)
    with pytest.warns(RuntimeWarning, match="linalg.inv of complex"):
        r = cp.linalg.inv(cp.asarray(a))
    same(r, numpy.linalg.inv(a))


def test_uncompiled_complex_loops_fall_back_with_a_warning():
    z = cdata((2000,), "complex128") / 3  # above the eager threshold
    with pytest.warns(RuntimeWarning, match="arcsin"):
        r = cp.arcsin(cp.asarray(z))
    same(r, numpy.arcsin(z))


def test_one_and_two_threads_agree():
    z = cdata((300, 40), "complex128")
    c = cp.asarray(z)
    r = cp.exp(c) * c.conj() + c.sum(axis=0)
    same(r, numpy.exp(z) * z.conj() + z.sum(axis=0))


# -- float16 --------------------------------------------------------------------

HALF_UNARY = ["negative", "absolute", "square", "sqrt", "exp", "log", "sin", "tanh",
              "floor", "rint", "isnan", "signbit", "reciprocal"]
HALF_BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "fmin",
               "less", "equal", "arctan2", "floor_divide", "remainder"]


@pytest.mark.parametrize("shape", SHAPES)
def test_float16_ufuncs_round_as_numpy(shape):
    rng = numpy.random.default_rng(3)
    x = rng.uniform(0.1, 4, shape).astype(numpy.float16)
    y = rng.uniform(0.1, 4, shape).astype(numpy.float16)
    cx, cy = cp.asarray(x), cp.asarray(y)
    for name in HALF_UNARY:
        numpy.testing.assert_array_equal(numpy.asarray(getattr(cp, name)(cx)),
                                         getattr(numpy, name)(x), err_msg=name)
    for name in HALF_BINARY:
        numpy.testing.assert_array_equal(numpy.asarray(getattr(cp, name)(cx, cy)),
                                         getattr(numpy, name)(x, y), err_msg=name)
        assert getattr(cp, name)(cx, cy).dtype == getattr(numpy, name)(x, y).dtype


def test_float16_reductions_sort_and_casts():
    x = numpy.linspace(-3, 3, 1001).astype(numpy.float16)
    c = cp.asarray(x)
    for name in ["sum", "mean", "max", "argmin", "prod"]:
        n = 6 if name == "prod" else 40
        numpy.testing.assert_allclose(numpy.asarray(getattr(c[:n], name)()),
                                      getattr(x[:n], name)(), rtol=2e-3, atol=1e-3)
        assert getattr(c[:n], name)().dtype == getattr(x[:n], name)().dtype
    numpy.testing.assert_allclose(numpy.asarray(c.reshape(7, 143).sum(axis=1)),
                                  x.reshape(7, 143).sum(axis=1), rtol=2e-3, atol=1e-2)
    same(cp.sort(c[::-3]), numpy.sort(x[::-3]))
    same(c.astype(numpy.int32), x.astype(numpy.int32))
    same(cp.asarray(x.astype(numpy.float64)).astype(numpy.float16), x)
    same(c + numpy.float32(1), x + numpy.float32(1))
    same(c * 2.5, x * 2.5)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "complex64"])
def test_sort_complex(dtype):
    x = (numpy.arange(7)[::-1] % 4).astype(dtype)
    same(cp.sort_complex(cp.asarray(x)), numpy.sort_complex(x))
