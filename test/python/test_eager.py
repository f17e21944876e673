"""The eager small-array path (CPN_EAGER_THRESHOLD): arrays below the threshold
are computed by NumPy at once; they become traced values when they meet the
traced world. The rest of the suite runs with the threshold at 0."""

import importlib
import warnings

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core


@pytest.fixture
def eager():
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 1024
    yield
    _core.EAGER["threshold"] = old


def test_small_arrays_run_eagerly_without_compiling(eager):
    x0 = numpy.linspace(0.0, 1.0, 100)
    x = cp.asarray(x0)
    cp.reset_stats()
    y = cp.sin(x) * 2.0 + x ** 2 - cp.sqrt(x)
    assert cp.stats()["ops_recorded"] == 0
    numpy.testing.assert_array_equal(cp.asnumpy(y), numpy.sin(x0) * 2.0 + x0 ** 2 - numpy.sqrt(x0))


def test_big_arrays_are_traced(eager):
    x = cp.ones(5000)
    cp.reset_stats()
    y = x + 1.0
    assert cp.stats()["ops_recorded"] > 0
    assert float(y.sum()) == 10000.0


def test_writes_through_views_of_eager_arrays_reach_the_base(eager):
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.asarray(a0)
    v = a[1:, ::2]
    v[...] = 7.0
    a[0, ::-1] = cp.asarray(numpy.array([1.0, 2.0, 3.0, 4.0]))
    a0[1:, ::2] = 7.0
    a0[0, ::-1] = [1.0, 2.0, 3.0, 4.0]
    numpy.testing.assert_array_equal(cp.asnumpy(a), a0)
    numpy.testing.assert_array_equal(cp.asnumpy(v), a0[1:, ::2])


def test_eager_meets_traced_and_stays_consistent(eager):
    small0 = numpy.arange(10.0)
    small = cp.asarray(small0)
    view = small[::3]
    big = cp.zeros(5000)
    big[:10] = small  # the traced world reads the eager array
    r = small.sum()  # a reduction demotes it to a traced value
    view[...] = -1.0  # and a view made before still writes into it
    small0[::3] = -1.0
    numpy.testing.assert_array_equal(cp.asnumpy(small), small0)
    assert float(r) == 45.0
    assert float(big.sum()) == 45.0


def test_eager_complex_loops_are_numpys(eager):
    z = numpy.arange(5) * (0.1 + 0.2j)
    r = cp.arcsin(cp.asarray(z))  # not compiled, but small: NumPy computes it
    assert isinstance(r, cp.ndarray) and r.dtype == numpy.complex128
    numpy.testing.assert_allclose(numpy.asarray(r), numpy.arcsin(z), rtol=1e-12)


def test_eager_float16_is_held(eager):
    x = numpy.arange(5, dtype=numpy.int8)
    r = cp.sqrt(cp.asarray(x))  # float16 in NumPy
    assert isinstance(r, cp.ndarray) and r.dtype == numpy.float16
    numpy.testing.assert_array_equal(numpy.asarray(r), numpy.sqrt(x))


@pytest.mark.parametrize("name", ["black_scholes", "jacobi", "cavity_flow", "kmeans", "lstm"])
def test_workloads_with_the_eager_path(eager, name):
    import test_workloads  # noqa: F401  (puts benchmarks/workloads on the path)
    mod = importlib.import_module(name)
    params = mod.SIZES["small"]
    ref = mod.run(numpy, *mod.inputs(numpy, **params), **params)
    got = mod.run(cp, *mod.inputs(cp, **params), **params)
    for g, r in zip(got, ref):
        numpy.testing.assert_allclose(cp.asnumpy(g), numpy.asarray(r), rtol=1e-9, atol=1e-12)


# -- the C fast path (python/src/fast.cpp): operators and ufunc calls on eager
# operands, with every kind of operand it meets.
def _operands(case, asarray):
    """Two operands of each kind, made with numpy.asarray or cp.asarray (views
    are taken of the array it returns, so cpnumeric's are views of an eager
    base)."""
    base = asarray(numpy.arange(24.0).reshape(4, 6) - 7.5)
    if case == "whole":
        return base, asarray(numpy.arange(24.0).reshape(4, 6) + 1)
    if case == "0-d":
        return asarray(numpy.array(2.5)), asarray(numpy.array(-1.25))
    if case == "0-d and array":
        return asarray(numpy.array(3.0)), base
    if case == "empty":
        return asarray(numpy.zeros((0, 3))), asarray(numpy.ones((0, 3)))[::-1]
    if case == "broadcast":
        return base, base[:1]
    if case == "strided":
        return base[::2, ::-3], base[1::2, 1::3]
    if case == "transposed":
        return base.T, asarray(numpy.arange(24.0).reshape(6, 4))
    if case == "int8 and float32":
        return (asarray(numpy.arange(-6, 6, dtype=numpy.int8)),
                asarray(numpy.linspace(-1, 1, 12, dtype=numpy.float32)))
    if case == "uint16 and bool":
        return asarray(numpy.arange(12, dtype=numpy.uint16)), asarray(numpy.arange(12) % 3 == 0)
    if case == "complex parts":
        c = asarray(numpy.arange(24.0).reshape(4, 6) * (1 - 0.5j))
        return c.real[::2], c[1::2].imag
    raise AssertionError(case)


_CASES = ["whole", "0-d", "0-d and array", "empty", "broadcast", "strided", "transposed",
          "int8 and float32", "uint16 and bool", "complex parts"]
_OPERATORS = {"add": lambda a, b: a + b, "multiply": lambda a, b: a * b,
              "true_divide": lambda a, b: a / b, "less": lambda a, b: a < b,
              "power": lambda a, b: a ** b, "maximum": None}


@pytest.mark.parametrize("case", _CASES)
@pytest.mark.parametrize("op", sorted(_OPERATORS))
def test_fast_path_operands(eager, case, op):
    a0, b0 = _operands(case, numpy.asarray)
    a, b = _operands(case, cp.asarray)
    assert all(v._eager() is not None for v in (a, b))
    cp.reset_stats()
    with numpy.errstate(all="ignore"), cp.errstate(all="ignore"):
        ref = getattr(numpy, op)(a0, b0)
        got = [getattr(cp, op)(a, b)]
        if _OPERATORS[op] is not None:
            got.append(_OPERATORS[op](a, b))
    assert cp.stats()["ops_recorded"] == 0
    for g in got:
        assert type(g) is cp.ndarray and g.dtype == ref.dtype and g.shape == ref.shape
        numpy.testing.assert_array_equal(cp.asnumpy(g), ref)


@pytest.mark.parametrize("scalar", [True, 3, -2.5, 1 + 2j, 2 ** 40])
@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32", "float32", "float64", "complex64"])
def test_fast_path_python_scalars(eager, scalar, dtype):
    x0 = numpy.arange(1, 9).astype(dtype)
    x = cp.asarray(x0)
    for f in (lambda m, a, s: a + s, lambda m, a, s: s * a, lambda m, a, s: s - a,
              lambda m, a, s: m.subtract(s, a), lambda m, a, s: m.maximum(a, s)):
        try:
            with numpy.errstate(all="ignore"):
                ref = f(numpy, x0, scalar)
        except Exception as e:  # noqa: BLE001  NumPy's own error, e.g. int8 + 2**40
            with pytest.raises(type(e)):
                f(cp, x, scalar)
            continue
        with cp.errstate(all="ignore"):
            got = f(cp, x, scalar)
        assert got.dtype == ref.dtype
        numpy.testing.assert_array_equal(cp.asnumpy(got), ref)


def test_fast_path_unary_and_keywords(eager):
    x0 = numpy.linspace(-2, 2, 9)
    x = cp.asarray(x0)
    numpy.testing.assert_array_equal(cp.asnumpy(cp.sin(x)), numpy.sin(x0))
    numpy.testing.assert_array_equal(cp.asnumpy(cp.abs(x[::-2])), numpy.abs(x0[::-2]))
    out = cp.zeros(9)
    assert cp.add(x, 1.0, out=out) is out  # keywords: the general path
    numpy.testing.assert_array_equal(cp.asnumpy(out), x0 + 1.0)
    assert cp.add(x, x, out) is out
    numpy.testing.assert_array_equal(cp.asnumpy(out), x0 + x0)
    got = cp.multiply(x, 2, dtype=numpy.float32)
    assert got.dtype == numpy.float32
    with pytest.raises(TypeError, match="takes 2 positional"):
        cp.add(x)
    with pytest.raises(TypeError):
        cp.sin(x, x, x)
    with pytest.raises(TypeError):
        cp.bitwise_and(x, x)  # NumPy's TypeError, from NumPy itself
    with pytest.raises(TypeError):
        x + "a"
    assert isinstance(cp.sin, cp.ufunc) and cp.sin.nin == 1 and repr(cp.sin).startswith("<cpnumeric ufunc")


def test_fast_path_warns_once_as_numpy(eager):
    import warnings
    x0 = numpy.array([1.0, 0.0, -1.0])
    x = cp.asarray(x0)
    with warnings.catch_warnings(record=True) as ref:
        warnings.simplefilter("always")
        x0 / 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = x / 0.0
    assert [str(v.message) for v in w] == [str(v.message) for v in ref]
    assert [str(v.message) for v in w] == ["divide by zero encountered in divide",
                                           "invalid value encountered in divide"]
    numpy.testing.assert_array_equal(cp.asnumpy(r), numpy.array([numpy.inf, numpy.nan, -numpy.inf]))
    with pytest.raises(FloatingPointError):
        with cp.errstate(divide="raise"):
            x / 0.0


def test_fast_path_keeps_no_references(eager):
    import gc
    import sys
    x0 = numpy.arange(10.0)
    x = cp.asarray(x0)
    v = x[::2]
    held, dt = x._base.np, x.dtype
    gc.collect()
    before = (sys.getrefcount(held), sys.getrefcount(dt), sys.getrefcount(x), sys.getrefcount(v))
    for _ in range(1000):
        x * 2.0 + cp.sin(x) - v[1]
        cp.add(v, 1.0)
        v * v
    gc.collect()
    after = (sys.getrefcount(held), sys.getrefcount(dt), sys.getrefcount(x), sys.getrefcount(v))
    assert x._base.np is held  # still eager
    assert before == after


def test_fast_path_results_are_independent_arrays(eager):
    x = cp.asarray(numpy.arange(6.0))
    y = x + 0.0
    y[0] = 42.0
    assert float(x[0]) == 0.0
    assert y._base is not x._base and y._whole and y._strides == (1,) and y._offset == 0
    # An F-ordered NumPy result keeps NumPy's layout (order='K'): a transposed
    # view of a C-contiguous base, so that its reshape copies as NumPy's does.
    z = cp.asarray(numpy.arange(6.0).reshape(2, 3)).T * 1.0
    assert z._base.np.flags.c_contiguous and z._strides == (1, 3)
    assert z.strides == (numpy.arange(6.0).reshape(2, 3).T * 1.0).strides
    numpy.testing.assert_array_equal(cp.asnumpy(z), numpy.arange(6.0).reshape(2, 3).T)


_INPLACE = {"+=": lambda a, b: a.__iadd__(b), "-=": lambda a, b: a.__isub__(b),
            "*=": lambda a, b: a.__imul__(b), "/=": lambda a, b: a.__itruediv__(b),
            "//=": lambda a, b: a.__ifloordiv__(b), "%=": lambda a, b: a.__imod__(b),
            "&=": lambda a, b: a.__iand__(b), "<<=": lambda a, b: a.__ilshift__(b)}


@pytest.mark.parametrize("op", sorted(_INPLACE))
@pytest.mark.parametrize("case", ["whole", "strided", "int8 and float32", "uint16 and bool",
                                  "complex parts", "0-d", "broadcast", "empty"])
def test_in_place_operators_stay_eager(eager, op, case):
    """`a op= b` on eager operands is NumPy's in-place call (python/src/fast.cpp):
    the same values and errors, and `a` stays eager (no trace, no demotion)."""
    a0, b0 = _operands(case, numpy.asarray)
    a, b = _operands(case, cp.asarray)
    a0, a = a0.copy() if a0.base is None else a0, a
    cp.reset_stats()
    f = _INPLACE[op]
    with numpy.errstate(all="ignore"), cp.errstate(all="ignore"):
        try:
            ref = f(a0, b0)
        except Exception as e:  # noqa: BLE001  NumPy's own error (casting, bitwise on floats)
            with pytest.raises(type(e)):
                f(a, b)
            return
        got = f(a, b)
    assert got is a and a._eager() is not None
    assert cp.stats()["ops_recorded"] == 0
    numpy.testing.assert_array_equal(cp.asnumpy(a), ref)
    for scalar in (2, 0.5, True):
        try:
            with numpy.errstate(all="ignore"):
                ref = f(a0, scalar)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                f(a, scalar)
            continue
        with cp.errstate(all="ignore"):
            f(a, scalar)
        numpy.testing.assert_array_equal(cp.asnumpy(a), ref)


def test_in_place_writes_reach_the_base_and_its_views(eager):
    base0 = numpy.arange(12.0).reshape(3, 4)
    base = cp.asarray(base0.copy())
    view = base[1:, ::2]
    view += 100.0
    base0[1:, ::2] += 100.0
    numpy.testing.assert_array_equal(cp.asnumpy(base), base0)
    c = cp.asarray(numpy.ones(4) * (1 + 2j))
    c.imag[::2] *= 3.0
    numpy.testing.assert_array_equal(cp.asnumpy(c), [1 + 6j, 1 + 2j, 1 + 6j, 1 + 2j])


def test_in_place_falls_back_for_traced_and_read_only(eager):
    a = cp.asarray(numpy.arange(6.0))
    big = cp.ones(5000)[:6]  # a view of a traced array
    a += big  # the Python path: `a` becomes traced
    numpy.testing.assert_array_equal(cp.asnumpy(a), numpy.arange(6.0) + 1.0)
    r = cp.asarray(numpy.arange(3.0))
    r.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        r += 1.0
    x = cp.asarray(numpy.ones((1, 3)))
    with pytest.raises(ValueError):
        x += cp.asarray(numpy.ones((2, 3)))  # NumPy: non-broadcastable output


CREATION_CALLS = [
    ("zeros", (5,), {}), ("zeros", ((2, 3),), {"dtype": "f4"}), ("ones", ((0, 4),), {}),
    ("empty", ((3,),), {"dtype": numpy.int32}), ("zeros", (numpy.int64(4),), {}),
    ("zeros", ([2, 2],), {}), ("ones", (3,), {"dtype": "c16"}),
    ("arange", (7,), {}), ("arange", (1.5, 9.25, 0.5), {}), ("arange", (True,), {}),
    ("arange", (10, 0, -3), {}), ("arange", (3, 1), {}), ("arange", (0, 5, None), {}),
    ("arange", (numpy.float32(2.5),), {}), ("arange", (5,), {"dtype": "f4"}),
    ("arange", (), {"stop": 4}), ("arange", (1 << 40, (1 << 40) + 3), {}),
    ("linspace", (0, 1, 11), {}), ("linspace", (0.5, -1.0), {}),
    ("linspace", (0, 1, 5), {"retstep": True}), ("linspace", (0, 1), {"num": 4}),
    ("logspace", (0, 2, 3), {}), ("geomspace", (1, 8, 4), {}),
    ("eye", (3,), {}), ("eye", (3, 5), {"k": 1}), ("eye", (3, None), {}),
    ("tri", (4, 3), {}), ("identity", (3,), {"dtype": "i8"}),
]


@pytest.mark.parametrize("name,args,kwargs", CREATION_CALLS)
def test_small_creation_calls_are_numpys(eager, name, args, kwargs):
    # The C path of small creation calls (python/src/eager.cpp
    # creation_call) and the Python one give NumPy's arrays, held eagerly.
    cp.reset_stats()
    got = getattr(cp, name)(*args, **kwargs)
    want = getattr(numpy, name)(*args, **kwargs)
    if isinstance(want, tuple):
        assert got[1] == want[1]
        got, want = got[0], want[0]
    assert isinstance(got, cp.ndarray)
    assert cp.stats()["ops_recorded"] == 0
    if name == "empty":  # uninitialized elements
        got, want = cp.asnumpy(got), want
        assert got.shape == want.shape and got.dtype == want.dtype
        return
    numpy.testing.assert_array_equal(cp.asnumpy(got), want)
    assert cp.asnumpy(got).dtype == want.dtype


@pytest.mark.parametrize("call", [
    lambda np: np.zeros(-1), lambda np: np.arange(0, 5, 0), lambda np: np.arange(),
    lambda np: np.arange(float("nan")),
    lambda np: np.linspace(0, 1, -2), lambda np: np.eye(-1), lambda np: np.zeros((2, -2)),
    lambda np: np.arange(float("inf")), lambda np: np.arange(2 ** 80)])
def test_small_creation_errors_are_numpys(eager, call):
    with pytest.raises(Exception) as want:
        call(numpy)
    with pytest.raises(type(want.value)):
        call(cp)


def test_creation_above_the_threshold_is_traced(eager):
    cp.reset_stats()
    a = cp.zeros(5000)
    b = cp.arange(5000.0)
    assert cp.stats()["eager_calls"] == 0
    assert float((a + b).sum()) == 5000 * 4999 / 2


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "complex128"])
def test_power_operator_is_numpys(eager, dtype):
    """`a ** b` on small eager arrays (and small views of computed ones) is
    NumPy's own operator, scalar fast paths included: x ** 0.5 is sqrt
    (-0.0 stays -0.0), x ** 2 square, x ** -1 reciprocal, complex x ** 1
    and x ** 2.0 power; reflected, array exponents, a modulo (TypeError)
    and in place as NumPy."""
    vals = [-0.0, 4.0, 2.5, -3.0, 1.0] if dtype[0] in "fc" else [0, 4, 2, 3, 1]
    n = numpy.array(vals).astype(dtype)
    big = cp.arange(40000.0).reshape(200, 200) / 1e4
    cp.synchronize()   # computed: its small views are read in place
    col, ncol = big[:5, 7], numpy.arange(40000.0).reshape(200, 200)[:5, 7] / 1e4
    for x, ref in ((cp.asarray(n), n), (col, ncol)):
        exps = [2, 0.5, -1, 0, 1, 3, 2.0, -0.5] if ref.dtype.kind in "fc" else [2, 0, 1, 3]
        with numpy.errstate(all="ignore"), cp.errstate(all="ignore"):
            for e in exps:
                got, want = cp.asnumpy(x ** e), ref ** e
                assert got.dtype == want.dtype, e
                numpy.testing.assert_array_equal(got, want, err_msg=str(e))
                for part in ("real", "imag"):
                    assert (numpy.signbit(getattr(got, part))
                            == numpy.signbit(getattr(want, part))).all(), (e, part)
            numpy.testing.assert_array_equal(cp.asnumpy(2 ** x), 2 ** ref)
            numpy.testing.assert_array_equal(cp.asnumpy(x ** x), ref ** ref)
    with pytest.raises(TypeError):
        pow(cp.asarray(n), 2, 5)
    y, m = cp.asarray(n), n.copy()
    y **= 2
    m **= 2
    numpy.testing.assert_array_equal(cp.asnumpy(y), m)


def test_ufunc_of_numpy_scalars_is_numpys_scalar(eager):
    """A ufunc of NumPy scalars alone (`np.sqrt(a.sum())`) gives NumPy's
    scalar, of NumPy's type, as NumPy does (not a 0-d array), and warns as
    NumPy."""
    a = cp.arange(5.0)
    s = a.sum()
    assert type(s) is numpy.float64
    for f, args in ((cp.sqrt, (s,)), (cp.add, (s, 1)), (cp.maximum, (numpy.int8(3), 5)),
                    (cp.sqrt, (numpy.float32(2),))):
        got = f(*args)
        want = getattr(numpy, f.__name__)(*args)
        assert type(got) is type(want) and got == want
    with pytest.warns(RuntimeWarning, match="invalid value"):
        assert numpy.isnan(cp.sqrt(numpy.float64(-1.0)))


_ELEMENT_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float16",
                   "float32", "float64", "complex64", "complex128"]


def _same_scalar(got, ref):
    assert type(got) is type(ref), (type(got), type(ref))
    if isinstance(ref, numpy.inexact) and numpy.isnan(ref):
        assert numpy.isnan(got)
    else:
        assert got == ref


@pytest.mark.parametrize("dtype", _ELEMENT_DTYPES)
@pytest.mark.parametrize("traced", [False, True])
def test_element_reads_are_numpy_scalars(eager, dtype, traced):
    """a[i], a[i, j] of eager arrays (read in place) and of computed traced
    ones (read from the store): NumPy's scalar type and value, views and
    negative indices included, NumPy's IndexError out of bounds."""
    a0 = (numpy.arange(24).reshape(4, 6) * 1.5 - 7).astype(dtype)
    if traced:
        _core.EAGER["threshold"] = 0
    a = cp.asarray(a0) + cp.zeros((), dtype)  # computed when traced
    if traced:
        cp.synchronize()
    for key in [(0, 0), (3, 5), (-1, -2), (2, -6)]:
        _same_scalar(a[key], a0[key])
    v, v0 = a[1:, ::2], a0[1:, ::2]
    for key in [(0, 0), (2, 2), (-1, -1)]:
        _same_scalar(v[key], v0[key])
    r, r0 = a[2], a0[2]
    for i in (0, 5, -6):
        _same_scalar(r[i], r0[i])
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        r[6]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        a[-5, 0]


@pytest.mark.parametrize("dtype", _ELEMENT_DTYPES)
def test_element_writes_convert_as_numpy(eager, dtype):
    """a[i] = v on an eager array: Python floats, ints and bools, NumPy
    scalars of the array's type and of others; NumPy's value after each
    write, and NumPy's error where NumPy raises one."""
    values = [1.5, -2.0, 7, -3, True, 2**40, numpy.float64(2.25), numpy.float32(0.5),
              numpy.int64(-9), numpy.dtype(dtype).type(3), float("nan"), float("inf"),
              1e300, 2**70, -1]
    for val in values:
        a0 = numpy.zeros(5, dtype)
        a = cp.asarray(a0.copy())
        try:
            with numpy.errstate(all="ignore"):
                a0[3] = val
        except Exception as e:  # noqa: BLE001 - NumPy's type is the reference
            with pytest.raises(type(e)):
                with cp.errstate(all="ignore"):
                    a[3] = val
            continue
        with cp.errstate(all="ignore"):
            a[3] = val
        numpy.testing.assert_array_equal(cp.asnumpy(a), a0, err_msg=repr(val))
        a[-1] = a0[3]
        assert cp.asnumpy(a)[-1] == a0[3] or numpy.isnan(a0[3])
    a = cp.asarray(numpy.zeros((3, 4), dtype))
    v = a[:, 1:3]
    v[2, -1] = 1
    assert cp.asnumpy(a)[2, 2] == 1
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        a[0, 4] = 1
    with pytest.raises(ValueError, match="read-only"):
        cp.broadcast_to(a[0], (2, 4))[1, 1] = 1


@pytest.mark.parametrize("traced", [False, True])
def test_item_is_numpys(eager, traced):
    """a.item(...) of eager arrays (their own elements), views and traced
    arrays: NumPy's Python scalar, flat and per-axis indices, NumPy's
    errors."""
    if traced:
        _core.EAGER["threshold"] = 0
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.asarray(a0)
    for x, x0 in [(a, a0), (a.T, a0.T), (a[:, ::2], a0[:, ::2])]:
        for args in [(5,), ((1, 1),), (2, 1), (-1,)]:
            got, ref = x.item(*args), x0.item(*args)
            assert type(got) is type(ref) and got == ref
        with pytest.raises(IndexError):
            x.item(99)
        with pytest.raises(ValueError, match="size 1"):
            x.item()
    assert cp.asarray(numpy.array(7, numpy.int32)).item() == 7


def test_float_subclass_writes_convert_through_float(eager):
    """a[i] = v of a float subclass converts through its __float__, as
    NumPy's setitem does, into eager and computed traced arrays."""
    class F(float):
        def __float__(self):
            return 7.0
    ref = numpy.zeros(3)
    ref[0] = F(1.5)
    a = cp.zeros(3)
    a[0] = F(1.5)
    _core.EAGER["threshold"] = 0
    b = cp.zeros(3) + 0
    cp.synchronize()
    b[0] = F(1.5)
    assert cp.asnumpy(a)[0] == cp.asnumpy(b)[0] == ref[0] == 7.0


def test_scalar_of_a_traced_value_reports_floating_point_errors():
    """float() of a traced 0-d value (read in C: _cpn.scalar_value) is a
    sync point like any other: errstate's 'warn' warns there (and 'raise'
    raises), and the value is NumPy's."""
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    try:
        x = cp.asarray(numpy.arange(1000.0))
        with cp.errstate(divide="raise"):  # raise mode runs each op at once
            with pytest.raises(FloatingPointError):
                float((1.0 / x).sum())
        with cp.errstate(divide="warn"):
            s = (1.0 / x).max()
            with pytest.warns(RuntimeWarning, match="divide by zero"):
                assert float(s) == numpy.inf
        assert float(x.sum()) == 499500.0 and int(x.astype(numpy.int64).max()) == 999
    finally:
        _core.EAGER["threshold"] = old


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64,
                                   numpy.complex128])
def test_column_loop_after_a_computed_array_runs_eagerly(eager, dtype):
    """`out[j] = f(A[:, j])` right after A's statement: the first write reads
    its value (A's window is little work: it runs there), and every later
    iteration runs on NumPy's loops over A's store; no op is recorded after
    the first iteration's (issue 22's column loop recorded ~30 iterations)."""
    A0 = (numpy.arange(3000).reshape(100, 30) % 17).astype(dtype)
    ref_A = A0 * dtype(2) + dtype(1)
    A = cp.asarray(A0) * dtype(2) + dtype(1)  # pending, above the threshold
    out, ref = cp.zeros(30, dtype), numpy.zeros(30, dtype)
    cp.synchronize()
    A = A + dtype(0)  # pending again
    ref_A = ref_A + dtype(0)
    cp.reset_stats()
    for j in range(30):
        out[j] = (A[:, j] ** 2).sum()
        ref[j] = (ref_A[:, j] ** 2).sum()
    # A's op and the first iteration's four.
    assert cp.stats()["ops_recorded"] <= 5
    numpy.testing.assert_array_equal(cp.asarray(out), ref)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_row_loop_after_the_arrays_statement_runs_eagerly(eager, dtype):
    """A loop of small ops over the rows of an array its statement just made
    (a window of few ops and little work): the first small view's op runs
    that window and every iteration runs on NumPy's loops over the store; no
    iteration's op is recorded (issue 22's row loop recorded ten iterations,
    then the 64-op window's baseline run)."""
    x0 = numpy.linspace(0.0, 1.0, 40).astype(dtype)
    x = cp.asarray(x0)
    cp.synchronize()
    cp.reset_stats()
    A, ref = cp.zeros((60, 40), dtype), numpy.zeros((60, 40), dtype)
    for i in range(1, 60):
        A[i, :] = cp.sin(x * (i + 1)) + dtype(0.5) * A[i - 1, :]
        ref[i, :] = numpy.sin(x0 * (i + 1)) + dtype(0.5) * ref[i - 1, :]
    assert cp.stats()["ops_recorded"] <= 2  # the zeros: a splat, its broadcast
    numpy.testing.assert_array_equal(cp.asnumpy(A), ref)


def test_small_views_of_a_longer_window_stay_recorded(eager):
    """A window of more ops (a stencil step before its boundary copy) is not
    run for a small view's op: the op is recorded and fused with it, with
    the same values."""
    u0 = numpy.linspace(0.0, 1.0, 80 * 40).reshape(80, 40)
    u = cp.asarray(u0)
    cp.synchronize()
    cp.reset_stats()
    ref = u0.copy()
    for k in range(3):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        ref[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                  + ref[1:-1, 2:])
        u[0, :] = u[1, :] * 0.5
        ref[0, :] = ref[1, :] * 0.5
    assert cp.stats()["flushes"] == 0
    numpy.testing.assert_allclose(cp.asnumpy(u), ref, rtol=1e-14)


def test_small_views_of_a_big_fresh_window_stay_recorded(eager):
    """A window of few ops but much work (above ~2^21 element-ops) is not run
    for a small view's op."""
    a = cp.ones((1 << 11, 1 << 11)) * 3.0
    cp.reset_stats()
    b = a[0, :8] + 1.0
    assert cp.stats()["flushes"] == 0
    numpy.testing.assert_array_equal(cp.asnumpy(b), numpy.full(8, 4.0))


def test_element_write_of_a_big_window_stays_deferred(eager):
    """A write whose value needs much work (above ~2^21 element-ops) is
    recorded: the window keeps fusing and runs at a later sync point."""
    x = cp.asarray(numpy.linspace(0.0, 1.0, 1 << 20))
    out = cp.zeros(4)
    cp.synchronize()
    cp.reset_stats()
    for k in range(4):
        out[k] = (cp.exp(x * k) + cp.sin(x)).sum()
    assert cp.stats()["flushes"] == 0
    x0 = numpy.linspace(0.0, 1.0, 1 << 20)
    ref = [(numpy.exp(x0 * k) + numpy.sin(x0)).sum() for k in range(4)]
    numpy.testing.assert_allclose(cp.asarray(out), ref, rtol=1e-12)


def test_small_views_of_a_running_window_are_read_eagerly(eager):
    """A small view of a value whose window was flushed and still runs is
    waited for and read by NumPy's loops (no op recorded); the window's
    floating-point reports are given as at any sync point."""
    n = 1 << 21
    x0 = numpy.linspace(0.0, 1.0, n)
    x = cp.asarray(x0)
    cp.synchronize()
    y = cp.sqrt(cp.exp(x) * 2.0 + 1.0)
    cp.flush()  # started, maybe not finished
    before = cp.stats()["ops_recorded"]
    head = y[:100] * 3.0
    assert cp.stats()["ops_recorded"] == before
    numpy.testing.assert_allclose(cp.asarray(head), numpy.sqrt(numpy.exp(x0[:100]) * 2.0 + 1.0) * 3.0,
                                  rtol=1e-14)
    # Floating-point reports of the awaited work, as at a sync point.
    with cp.errstate(divide="warn"):
        q = 1.0 / (x - x)
        cp.flush()
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            r = q[:10] + 1.0
            cp.synchronize()
    assert numpy.isinf(cp.asarray(r)).all()


def test_waiting_for_a_running_window_with_other_threads(eager):
    """While one thread waits for a running window (a small view of it read
    by NumPy's loops, the GIL released), others reshape that view and demote
    an eager operand of the same call: the view is made from what the array
    is after the wait (helper review of session 43)."""
    import threading
    A = cp.asarray(numpy.ones((200, 1000))) + 0.0
    v = A[:, 0]
    stop = threading.Event()
    errors = []

    def reshaper():
        k = 0
        while not stop.is_set():
            try:
                v.shape = (200, 1) if k % 2 else (200,)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
            k += 1

    t = threading.Thread(target=reshaper)
    t.start()
    try:
        for i in range(200):
            A += 1.0
            cp.flush()
            x = cp.ones(200)
            r = x + v
            assert r.shape in ((200,), (200, 200))
            y = cp.ones(200)
            other = threading.Thread(target=lambda: y + A[0:1, :].sum())
            other.start()
            s = y * v[:1]
            other.join()
            assert s.shape in ((200,), (1, 200))
    finally:
        stop.set()
        t.join()
    assert not errors
    v.shape = (200,)
    numpy.testing.assert_array_equal(cp.asarray(v), numpy.full(200, 201.0))


_ELEMENT_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32",
                   "float64", "complex128"]


@pytest.mark.parametrize("dtype", _ELEMENT_DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 5)])
def test_element_reads_and_writes_of_eager_arrays_are_numpys(eager, dtype, shape):
    """a[i] and a[i, j] on a whole eager array go straight to its NumPy
    buffer (items.cpp, wholeEagerElement): values, scalar types, NumPy's
    conversions of every kind of value, negative indices, errors."""
    ref = (numpy.arange(numpy.prod(shape)).reshape(shape) % 5).astype(dtype)
    a = cp.asarray(ref.copy())
    values = [1.5, 2, True, -3, numpy.float64(2.25), numpy.float32(0.5),
              numpy.int64(7), ref.dtype.type(1), 1 + 2j, 1e40, 300, -1]
    for v in values:
        keys = [(0,) * len(shape), (-1,) * len(shape)]
        for k in keys:
            key = k[0] if len(k) == 1 else k
            want = err = None
            r = ref.copy()
            with numpy.errstate(all="ignore"):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r[key] = v
                    want = r[key]
                except Exception as e:  # noqa: BLE001 - NumPy's error is the reference
                    err = type(e)
                if err is None:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        a[key] = v
                    got = a[key]
                    assert type(got) is type(want), (v, key)
                    assert got == want or (got != got and want != want), (v, key)
                    ref[key] = want
                else:
                    with pytest.raises(err):
                        a[key] = v
    numpy.testing.assert_array_equal(cp.asnumpy(a), ref)
    bad = shape[0] if len(shape) == 1 else (0, shape[1])
    with pytest.raises(IndexError, match="out of bounds"):
        a[bad]
    with pytest.raises(IndexError, match="out of bounds"):
        a[bad] = 1
    r = cp.asarray(ref.copy())
    r.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        r[bad] = 1  # NumPy's read-only error before its index error


def test_an_element_loop_on_an_eager_array_is_numpys(eager):
    def loop(np):
        b = np.zeros(300)
        for i in range(1, 300):
            b[i] = b[i - 1] * 0.5 + 1.0
        return b
    got, want = loop(cp), loop(numpy)
    assert _core.EAGER["threshold"] > 300
    numpy.testing.assert_array_equal(cp.asnumpy(got), want)



def _identity(x):
    return x


# Operand pairs of small products: (shape, view) for each side, the view made
# alike of NumPy's and of our array (transposed, strided, reversed,
# broadcast, empty; matrices and vectors).
_PRODUCT_CASES = [
    (((5, 7), _identity), ((7, 3), _identity)),
    (((6, 4), _identity), ((4,), _identity)),
    (((4,), _identity), ((4, 6), _identity)),
    (((1, 1), _identity), ((1, 1), _identity)),
    (((30, 30), _identity), ((30, 30), _identity)),
    (((0, 3), _identity), ((3, 2), _identity)),
    (((3, 0), _identity), ((0, 2), _identity)),
    (((2, 3), _identity), ((3, 0), _identity)),
    (((7, 5), lambda x: x.T), ((3, 7), lambda x: x.T)),
    (((12, 10), lambda x: x[::2, 1::3]), ((3, 5), _identity)),
    (((12, 10), lambda x: x[::-1, ::-2]), ((5,), _identity)),
    (((6,), _identity), ((12, 10), lambda x: x[::-2, ::-1])),
    (((8, 8), _identity), ((16,), lambda x: x[::2])),
    (((8, 8), _identity), ((8,), lambda x: x[::-1])),
    (((1, 6), lambda x: _bcast(x, (4, 6))),
     ((6, 1), lambda x: _bcast(x, (6, 3)))),
]


def _bcast(x, shape):
    return (numpy if isinstance(x, numpy.ndarray) else cp).broadcast_to(x, shape)


_PRODUCTS = {
    "operator": lambda np, a, b: a @ b,
    "matmul": lambda np, a, b: np.matmul(a, b),
    "dot": lambda np, a, b: np.dot(a, b),
    "method": lambda np, a, b: a.dot(b),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", sorted(_PRODUCTS))
def test_small_float_products_are_computed_at_once(eager, dtype, call):
    f = _PRODUCTS[call]
    tol = 1e-5 if dtype == "float32" else 1e-12
    rng = numpy.random.default_rng(3)
    for (sa, va), (sb, vb) in _PRODUCT_CASES:
        a0 = rng.standard_normal(sa).astype(dtype)
        b0 = rng.standard_normal(sb).astype(dtype)
        a, b = va(cp.asarray(a0)), vb(cp.asarray(b0))
        cp.reset_stats()
        r = f(cp, a, b)
        assert cp.stats()["ops_recorded"] == 0
        assert cp.stats()["eager_calls"] == 1
        want = f(numpy, va(a0), vb(b0))
        assert isinstance(r, cp.ndarray) and r.dtype == want.dtype
        assert r.shape == want.shape
        numpy.testing.assert_allclose(cp.asnumpy(r), want, rtol=tol, atol=tol)
        if r.size:  # a fresh array: writing it leaves the operands alone
            r[...] = 0.0
            numpy.testing.assert_array_equal(cp.asnumpy(a), va(a0))
            numpy.testing.assert_array_equal(cp.asnumpy(b), vb(b0))


@pytest.mark.parametrize("call", sorted(_PRODUCTS))
def test_small_products_report_floating_point_errors_as_numpy(eager, call):
    f = _PRODUCTS[call]
    big0 = numpy.full((3, 3), 1e308)
    inf0 = numpy.array([[0.0, numpy.inf]])
    zero0 = numpy.zeros((2, 1))
    for x0, y0 in ((big0, big0), (inf0, zero0), (big0, big0[0])):
        x, y = cp.asarray(x0), cp.asarray(y0)
        for mode in ("warn", "ignore", "raise"):
            with warnings.catch_warnings(record=True) as seen_np:
                warnings.simplefilter("always")
                with numpy.errstate(all=mode):
                    try:
                        want, err = f(numpy, x0, y0), None
                    except FloatingPointError as e:
                        want, err = None, e
            with warnings.catch_warnings(record=True) as seen_cp:
                warnings.simplefilter("always")
                with cp.errstate(all=mode):
                    if err is not None:
                        with pytest.raises(FloatingPointError, match=str(err)):
                            f(cp, x, y)
                        continue
                    r = f(cp, x, y)
            numpy.testing.assert_array_equal(cp.asnumpy(r), want)
            assert [str(w.message) for w in seen_cp] == [str(w.message) for w in seen_np]


def test_small_products_of_other_kinds_are_numpys(eager):
    pairs = [(numpy.arange(6.0).reshape(2, 3).astype(numpy.float32),
              numpy.arange(3.0)),                                   # promoted
             (numpy.arange(6).reshape(2, 3), numpy.arange(3)),      # integers
             (numpy.arange(4.0).reshape(2, 2) + 1j, numpy.ones(2)),  # complex
             (numpy.arange(3.0), numpy.arange(3.0)),                # vector . vector
             (numpy.ones((2, 2, 2)), numpy.ones((2, 2)))]           # a stack
    for x0, y0 in pairs:
        x, y = cp.asarray(x0), cp.asarray(y0)
        for call, f in _PRODUCTS.items():
            want = f(numpy, x0, y0)
            got = f(cp, x, y)
            assert numpy.asarray(cp.asnumpy(got)).dtype == want.dtype, call
            numpy.testing.assert_allclose(cp.asnumpy(got), want)
    x, y = cp.ones((2, 3)), cp.ones((4, 2))
    for call, f in _PRODUCTS.items():
        with pytest.raises(ValueError):
            f(numpy, numpy.ones((2, 3)), numpy.ones((4, 2)))
        with pytest.raises(ValueError):
            f(cp, x, y)


def test_small_products_of_layouts_numpy_loops_over_are_numpys(eager):
    # Reversed, broadcast and doubly strided operands are multiplied by
    # NumPy's own loop, not BLAS: the same sums, bit for bit.
    rng = numpy.random.default_rng(5)
    a0, v0, b0 = rng.random((20, 16)), rng.random(16), rng.random((16, 12))
    a, v, b = cp.asarray(a0), cp.asarray(v0), cp.asarray(b0)
    for f in (lambda np, a, v, b: a @ v[::-1], lambda np, a, v, b: v[::-1] @ b,
              lambda np, a, v, b: a @ np.broadcast_to(v[:1], (16,)),
              lambda np, a, v, b: a[::2, ::2] @ v[::2], lambda np, a, v, b: np.dot(a[:, ::-1], v)):
        numpy.testing.assert_array_equal(cp.asnumpy(f(cp, a, v, b)), f(numpy, a0, v0, b0))


def test_small_products_with_big_results_are_traced(eager):
    # 1024 is the fixture's threshold: an outer product of 40 x 40 is traced.
    x = cp.ones((40, 1))
    r = x @ cp.ones((1, 40))
    assert r._base.np is None
    numpy.testing.assert_array_equal(cp.asnumpy(r), numpy.ones((40, 40)))
    r = cp.ones((50, 0)) @ cp.ones((0, 50))
    assert r._base.np is None
    numpy.testing.assert_array_equal(cp.asnumpy(r), numpy.zeros((50, 50)))


def test_small_products_are_eager_events_in_a_profile(eager, tmp_path):
    import json
    a, b = cp.ones((10, 10)), cp.ones(10)
    path = tmp_path / "p.json"
    with cp.profile(path):
        a @ b
        a.dot(b)
        cp.matmul(a, b)
    events = json.loads(path.read_text())["traceEvents"]
    assert [e["name"] for e in events if e.get("cat") == "eager"] == ["matmul", "dot", "matmul"]
