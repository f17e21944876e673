"""Ufunc conformance against NumPy: dtypes, 0-d, empty, broadcast, views."""

import warnings

import numpy
import pytest

import cpnumeric as cp

DTYPES = ["bool", "int32", "int64", "uint8", "float32", "float64"]
SHAPES = [(), (0,), (7,), (2, 3, 4)]


def data(shape, dtype, seed=0, positive=False):
    rng = numpy.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if numpy.dtype(dtype).kind in "iu":
        lo = 1 if positive or numpy.dtype(dtype).kind == "u" else -20
        return rng.integers(lo, 20, shape).astype(dtype)
    x = rng.uniform(0.1 if positive else -3, 3, shape)
    return x.astype(dtype)


def check(ours, ref, dtype=None):
    got = numpy.asarray(ours)
    assert got.shape == ref.shape
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if ref.dtype.kind == "f":
        tol = 1e-5 if ref.dtype == numpy.float32 else 1e-12
        numpy.testing.assert_allclose(got, ref, rtol=tol, atol=tol, equal_nan=True)
    else:
        numpy.testing.assert_array_equal(got, ref)


def supported(f, *arrays):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with numpy.errstate(all="ignore"):
                return getattr(numpy, f)(*arrays)
    except (TypeError, ValueError):
        return None


BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
          "power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign",
          "logaddexp", "logaddexp2", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
UNARY = ["negative", "positive", "absolute", "sign", "square", "sqrt", "cbrt", "exp",
         "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
         "arctanh", "floor", "ceil", "trunc", "rint", "logical_not", "invert", "isnan",
         "isinf", "isfinite", "signbit"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_binary(name, dtype, shape):
    a = data(shape, dtype, 1)
    b = data(shape, dtype, 2, positive=name in ("power", "left_shift", "right_shift"))
    if name == "power" and dtype not in ("float32", "float64", "bool"):
        b = (numpy.abs(b) % 4).astype(dtype)
    if name in ("left_shift", "right_shift") and dtype != "bool":
        b = (numpy.abs(b) % 8).astype(dtype)
    ref = supported(name, a, b)
    if ref is None:
        with pytest.raises(TypeError):
            getattr(cp, name)(cp.array(a), cp.array(b))
        return
    with numpy.errstate(all="ignore"):
        check(getattr(cp, name)(cp.array(a), cp.array(b)), ref)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_unary(name, dtype, shape):
    a = data(shape, dtype, 3)
    ref = supported(name, a)
    if ref is None:
        with pytest.raises(TypeError):
            getattr(cp, name)(cp.array(a))
        return
    if ref.dtype.kind not in "biuf":
        pytest.skip("float16 loops are not supported yet")
    check(getattr(cp, name)(cp.array(a)), ref)


@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (5,)),
                                   ((2, 1, 3), (4, 1))])
def test_broadcasting(sa, sb):
    a, b = data(sa, "float64", 1), data(sb, "float64", 2)
    check(cp.add(cp.array(a), cp.array(b)), a + b)
    check(cp.array(a) * cp.array(b) - 1.5, a * b - 1.5)


def test_broadcast_mismatch_is_value_error():
    with pytest.raises(ValueError):
        cp.ones((3,)) + cp.ones((4,))


def test_python_scalars_follow_nep50():
    a = numpy.arange(5, dtype=numpy.uint8)
    check(cp.array(a) + 3, a + 3)
    check(cp.array(a) * 2.5, a * 2.5)
    f = numpy.arange(5, dtype=numpy.float32)
    check(cp.array(f) + 1.0, f + 1.0)
    check(2 - cp.array(f), 2 - f)


def test_noncontiguous_and_negative_stride_views():
    a = data((6, 8), "float64", 4)
    x = cp.array(a)
    check(x[::2, ::-3] + x[1::2, 1::3], a[::2, ::-3] + a[1::2, 1::3])
    check(numpy.exp(x.T[::-1]), numpy.exp(a.T[::-1]))


def test_out_where_dtype_casting():
    a, b = data((5,), "float64", 1), data((5,), "float64", 2)
    out = cp.zeros(5)
    r = cp.add(cp.array(a), cp.array(b), out=out)
    assert r is out
    check(out, a + b)
    mask = a > 0
    out2 = cp.full(5, -1.0)
    cp.multiply(cp.array(a), 2.0, out=out2, where=cp.array(mask))
    ref = numpy.full(5, -1.0)
    numpy.multiply(a, 2.0, out=ref, where=mask)
    check(out2, ref)
    check(cp.add(cp.array(a), 1, dtype="float32"), numpy.add(a, 1, dtype="float32"))
    iout = cp.zeros(5, dtype="int64")
    with pytest.raises(TypeError):
        cp.add(cp.array(a), cp.array(b), out=iout)
    cp.add(cp.array(a), cp.array(b), out=iout, casting="unsafe")
    check(iout, numpy.add(a, b).astype("int64"))


def test_inplace_operators_write_base():
    a = numpy.arange(12.0).reshape(3, 4)
    x = cp.array(a)
    v = x[1:, ::2]
    v += 10
    a[1:, ::2] += 10
    check(x, a)
    x *= 2
    a *= 2
    check(x, a)
    i = cp.arange(6)
    i //= 2
    check(i, numpy.arange(6) // 2)


def test_integer_division_by_zero_matches_numpy():
    a = numpy.array([5, -5, 0, 7], dtype=numpy.int32)
    b = numpy.array([0, 0, 0, -1], dtype=numpy.int32)
    with numpy.errstate(all="ignore"):
        check(cp.floor_divide(cp.array(a), cp.array(b)), a // b)
        check(cp.remainder(cp.array(a), cp.array(b)), a % b)


def test_where_and_clip():
    a = data((4, 5), "float64", 5)
    x = cp.array(a)
    check(cp.where(x > 0, x, 0.0), numpy.where(a > 0, a, 0.0))
    check(cp.clip(x, -1, 1), numpy.clip(a, -1, 1))
    check(x.clip(0, None), a.clip(0, None))


def test_numpy_ufunc_dispatches_to_us():
    a = data((4,), "float64", 6)
    r = numpy.sin(cp.array(a))
    assert isinstance(r, cp.ndarray)
    check(r, numpy.sin(a))
