"""The C path of ufunc calls and operators on traced arrays
(python/src/fast.cpp): once `ufunc._fast` has resolved and cached a loop, the
same call on whole traced arrays of the loop's dtypes and Python scalars is
recorded from C. Every other call takes the Python path; both must agree
with NumPy. (The eager path's tests are in test_eager.py.)"""

import gc
import sys

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core, _ufuncs


@pytest.fixture(autouse=True)
def traced(monkeypatch):
    """Arrays of every size are traced here (the suite may run with
    CPN_EAGER_THRESHOLD set)."""
    monkeypatch.setitem(_core.EAGER, "threshold", 0)


@pytest.fixture
def python_path_calls(monkeypatch):
    """Counts the calls that reach the Python `_fast`."""
    calls = []
    fast = _ufuncs.ufunc._fast

    def counted(self, args):
        calls.append(self.__name__)
        return fast(self, args)
    monkeypatch.setattr(_ufuncs.ufunc, "_fast", counted)
    return calls


_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
           "complex64", "complex128"]


def _data(dtype, shape, seed):
    rng = numpy.random.default_rng(seed)
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_second_call_is_recorded_in_c(python_path_calls, dtype, shape):
    a0, b0 = _data(dtype, shape, 1), _data(dtype, shape, 2)
    a, b = cp.asarray(a0), cp.asarray(b0)
    cases = [(lambda m, x, y: x * y, "multiply"), (lambda m, x, y: x - y if dtype != "bool" else x ^ y, None),
             (lambda m, x, y: m.maximum(x, y), "maximum"), (lambda m, x, y: m.negative(x) if dtype != "bool" else ~x, None)]
    for f, name in cases:
        with numpy.errstate(all="ignore"):
            ref = f(numpy, a0, b0)
        for attempt in range(2):
            del python_path_calls[:]
            with cp.errstate(all="ignore"):
                got = f(cp, a, b)
            if attempt == 1 and name is not None:
                assert python_path_calls == []  # the loop was cached: C recorded it
            assert got.dtype == ref.dtype and got.shape == ref.shape
            numpy.testing.assert_array_equal(cp.asnumpy(got), ref)


def _check_scalar_call(f, x0, x, scalar):
    """f(x, scalar) twice (the second call takes the cached loop) against
    NumPy's f(x0, scalar): its dtype and values, or its TypeError."""
    try:
        with numpy.errstate(all="ignore"):
            ref = f(x0, scalar)
    except TypeError:
        with pytest.raises(TypeError):
            f(x, scalar)
        return
    for _ in range(2):
        with cp.errstate(all="ignore"):
            got = f(x, scalar)
        assert got.dtype == ref.dtype, (scalar, got.dtype, ref.dtype)
        # complex division: the compiled kernel's rounding is within an ulp
        # of NumPy's (test_complex.py), the rest is exact
        numpy.testing.assert_allclose(cp.asnumpy(got), ref,
                                      rtol=2e-7 if ref.dtype.kind == "c" else 0)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("scalar", [True, 3, -2.5, 0.5j])
def test_python_scalars(python_path_calls, dtype, scalar):
    x0 = _data(dtype, (9,), 3)
    x = cp.asarray(x0)
    for f in (lambda x, s: x * s, lambda x, s: s + x, lambda x, s: s - x, lambda x, s: x / s):
        _check_scalar_call(f, x0, x, scalar)


@pytest.mark.parametrize("shape", [(), (4,), (2, 4)])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_cached_scalars_keep_the_sign_of_zero(python_path_calls, shape, kind):
    """The C path takes a Python scalar's value from _core.scalar_node's
    cache: 0.0 and -0.0 (and complex zeros' parts, False, 0) stay apart."""
    x0 = numpy.resize(numpy.array([1.0, -1.0, -0.0, 0.0]), shape)
    zeros = [0.0, -0.0, 0, False]
    if kind == "complex":   # (a real array with a complex scalar casts: Python's path)
        x0 = x0 + numpy.resize(numpy.array([-0.0, 0.0, 1j, -1j]), shape)
        zeros = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), -0.0]
    x = cp.asarray(x0)
    for _ in range(3):   # the first call caches; the next ones read the cache
        del python_path_calls[:]
        for z in zeros:
            for f in (lambda x, s: x * s, lambda x, s: s + x, lambda x, s: x - s):
                ref = f(x0, z)
                got = cp.asnumpy(f(x, z))
                assert got.dtype == ref.dtype and got.shape == ref.shape
                numpy.testing.assert_array_equal(got, ref)
                assert numpy.array_equal(numpy.signbit(got.real), numpy.signbit(ref.real))
                if ref.dtype.kind == "c":
                    assert numpy.array_equal(numpy.signbit(got.imag),
                                             numpy.signbit(ref.imag))
    if shape:   # (0-d operands with Python scalars take the Python path)
        assert python_path_calls == []


_NP_SCALARS = [numpy.float64(2.5), numpy.float32(-1.5), numpy.float16(3.0), numpy.int8(-3),
               numpy.uint8(200), numpy.int32(7), numpy.int64(-9), numpy.uint64(2**63 + 5),
               numpy.bool_(True), numpy.complex64(1 - 2j), numpy.complex128(0.5j),
               numpy.float64(-0.0), numpy.longlong(4), numpy.float64("nan")]


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "complex64"])
def test_numpy_scalars(python_path_calls, dtype):
    """NumPy scalars are strong 0-d operands of their dtype (NEP 50): the
    cached loop and the C path take them as NumPy does."""
    x0 = _data(dtype, (2, 5), 4)
    x = cp.asarray(x0)
    for s in _NP_SCALARS:
        for f in (lambda x, s: x * s, lambda x, s: s + x, lambda x, s: x - s,
                  lambda x, s: numpy.maximum(x, s), lambda x, s: x < s):
            _check_scalar_call(f, x0, x, s)
    y = cp.asarray(_data("float64", (2, 5), 5))
    for _ in range(2):   # the first call caches each loop
        del python_path_calls[:]
        for s in _NP_SCALARS[:3]:
            _ = y * s
    assert python_path_calls == []   # recorded in C


def test_calls_the_c_path_leaves_to_python(python_path_calls):
    x0 = numpy.arange(12.0).reshape(3, 4)
    i0 = numpy.arange(12, dtype=numpy.int32).reshape(3, 4)
    x, i = cp.asarray(x0), cp.asarray(i0)
    x + x  # caches the float64 loop
    cases = [
        (lambda m, x, i: x + i, "a cast (int32 to float64)"),
        (lambda m, x, i: x + x[0], "broadcasting"),
        (lambda m, x, i: x[:, ::2] * x[:, 1::2], "views"),
        (lambda m, x, i: x * numpy.float32(2.0), "a NumPy scalar"),
        (lambda m, x, i: m.add(x, 1.0, out=x), "out="),
        (lambda m, x, i: m.multiply(x, 2, dtype=numpy.float32), "dtype="),
    ]
    for f, why in cases:
        ref = f(numpy, x0.copy(), i0)
        got = f(cp, x, i)
        assert got.dtype == ref.dtype, why
        numpy.testing.assert_array_equal(cp.asnumpy(got), ref, err_msg=why)
        x0 = ref if why == "out=" else x0


def test_errstate_raise_and_ir_locations_take_the_python_path(python_path_calls, tmp_path):
    x = cp.asarray(numpy.array([1.0, 0.0, 2.0]))
    x / x  # cached loop
    with pytest.raises(FloatingPointError):
        with cp.errstate(invalid="raise"):
            x / x  # errstate's raise mode checks right after the op
    old = _core.LOCATIONS
    _core.LOCATIONS = True
    try:
        del python_path_calls[:]
        numpy.testing.assert_array_equal(cp.asnumpy(x * x), [1.0, 0.0, 4.0])
        assert python_path_calls == ["multiply"]  # records its source line
    finally:
        _core.LOCATIONS = old
        # The last location stays set until cleared (a later op's warning
        # would name this file's line).
        cp._cpn.set_location("", 0)


def test_fast_path_keeps_no_references():
    x = cp.asarray(numpy.arange(10.0))
    y = None
    for n in (3, 300):  # the first round caches loops and scalar nodes
        if n == 300:
            node, dt = x._base.node, x.dtype
            gc.collect()
            before = sys.getrefcount(node), sys.getrefcount(dt), sys.getrefcount(x)
        for _ in range(n):
            y = x * 2.0 + x
            cp.sin(y)
        cp.synchronize()
    gc.collect()
    assert (sys.getrefcount(node), sys.getrefcount(dt), sys.getrefcount(x)) == before
    numpy.testing.assert_array_equal(cp.asnumpy(y), numpy.arange(10.0) * 3.0)


def test_operators_keep_numpys_dispatch():
    x = cp.asarray(numpy.arange(4.0))
    n = numpy.arange(4.0)
    assert type(n + x) is cp.ndarray and type(x + n) is cp.ndarray
    numpy.testing.assert_array_equal(cp.asnumpy(n - x), n - n)
    numpy.testing.assert_array_equal(cp.asnumpy([1, 2, 3, 4] * x), n * [1, 2, 3, 4])
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        "a" - x

    class Other:
        def __radd__(self, other):
            return "radd"
    assert x + Other() == "radd"
    assert isinstance(x, cp.ndarray) and cp.ndarray.__add__ is not None



@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 3, 4)])
def test_attributes_in_c(shape):
    """size, ndim, dtype and T are ArrayBase's C getters: NumPy's values, T
    a writable view (read-only where the array is) of every layout, .real
    parts and subclasses through transpose()."""
    a0 = numpy.arange(int(numpy.prod(shape)), dtype=numpy.complex128).reshape(shape) * (1 + 2j)
    a = cp.asarray(a0)
    for x, x0 in [(a, a0), (a.real, a0.real), (a[..., ::2], a0[..., ::2]) if shape else (a, a0)]:
        assert (x.size, x.ndim, x.dtype) == (x0.size, x0.ndim, x0.dtype)
        assert type(x.size) is int and type(x.ndim) is int
        t, t0 = x.T, x0.T
        assert t.shape == t0.shape
        assert t.strides == t0.strides or not x.size  # NumPy's empty views vary
        numpy.testing.assert_array_equal(cp.asnumpy(t), t0)
    if a.size:
        t = a.T
        t[(0,) * a.ndim] = 7
        assert cp.asnumpy(a)[(0,) * a.ndim] == 7
        with pytest.raises(ValueError, match="read-only"):
            cp.broadcast_to(a, (2,) + a.shape).T[(0,) * (a.ndim + 1)] = 1
    assert "size" not in vars(cp.ndarray)  # the C getter, not a Python property


@pytest.mark.parametrize("cshape,xshape", [((6,), (6,)), ((2, 3), (3,)), ((), (4,)), ((3, 1), (1, 5))])
def test_where_of_arrays_and_scalars(cshape, xshape):
    """where(c, x, y) with Python and NumPy scalars (recorded as splats of
    their converted values) and broadcast shapes: NumPy's values and dtypes."""
    rng = numpy.random.default_rng(7)
    c0 = rng.random(cshape) < 0.5
    x0 = rng.standard_normal(xshape).astype(numpy.float32)
    operands = [x0, 2, -1.5, numpy.float64(0.25), numpy.int8(-3), True, numpy.bool_(False),
                numpy.complex64(1j), numpy.uint16(7), x0.astype(numpy.int32)]
    conds = [c0, True, numpy.bool_(False), 0, 2.5, numpy.float32("nan")]
    for c in conds:
        for x in operands:
            for y in operands[::3]:
                ref = numpy.where(c, x, y)
                args = [cp.asarray(v) if isinstance(v, numpy.ndarray) else v for v in (c, x, y)]
                got = cp.where(*args)
                assert got.dtype == ref.dtype and got.shape == ref.shape, (c, x, y)
                numpy.testing.assert_array_equal(cp.asnumpy(got), ref)


def test_clip_with_scalar_bounds():
    """clip's NaN bound is decided at the call for scalar bounds."""
    x0 = numpy.array([-2.0, -0.0, 0.0, 0.5, numpy.nan, 3.0])
    x = cp.asarray(x0)
    for lo, hi in [(0, 1), (-0.0, 0.0), (numpy.nan, 1.0), (0.0, numpy.float64("nan")),
                   (numpy.float32(-1), 2), (-numpy.inf, numpy.inf)]:
        ref = numpy.clip(x0, lo, hi)
        got = cp.asnumpy(cp.clip(x, lo, hi))
        assert got.dtype == ref.dtype
        numpy.testing.assert_array_equal(got, ref)
        assert numpy.array_equal(numpy.signbit(got), numpy.signbit(ref))


@pytest.mark.parametrize("method, args", [
    ("transpose", ()), ("ravel", ()), ("reshape", (4, 2)), ("reshape", ((2, 4),)),
    ("swapaxes", (0, 1)), ("copy", ()), ("astype", (numpy.float32,)), ("sum", (0,)),
    ("max", (1,)), ("round", (1,)), ("clip", (0.5, 2.5)), ("squeeze", ())])
def test_eager_methods_with_arguments_and_parts(method, args):
    """ndarray methods of small eager arrays in C (plain arguments; views of
    the base), on whole arrays, offset views and .real/.imag parts (whose
    views go through the Python path), against NumPy's."""
    c0 = (numpy.arange(16.0) + 0.25j * numpy.arange(16.0)).reshape(2, 8)
    c = cp.asarray(c0)
    for get in (lambda a: a[:, 2:6], lambda a: a.real[:, :4], lambda a: a.imag[:, 4:],
                lambda a: a.real[:, 1:5].copy()):
        x, x0 = get(c), get(c0)
        got, ref = getattr(x, method)(*args), getattr(x0, method)(*args)
        assert type(got) is cp.ndarray
        assert got.dtype == ref.dtype and got.shape == ref.shape
        numpy.testing.assert_array_equal(cp.asnumpy(got), ref)
    w = cp.asarray(numpy.arange(8.0).reshape(2, 4))
    v = w.reshape(4, 2)  # a view: writes reach the base, as NumPy's
    v[0, 0] = -1.0
    assert float(w[0, 0]) == -1.0
