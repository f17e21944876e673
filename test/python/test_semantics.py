"""NumPy semantics that NumPy programs rely on beyond values (issue 20): what
integer indexing and iteration return, 0-d results standing in for scalars,
NumPy arrays as outputs, NEP 50 dtypes of the array-creating and clipping
functions, and NumPy's exceptions for bad arguments. Each test compares with
NumPy, with small arrays eager and traced (the `mode` fixture)."""

import json
import time
import operator
import warnings

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.fixture(autouse=True, params=["traced", "eager"])
def mode(request):
    """Every test twice: small arrays traced (CPN_EAGER_THRESHOLD=0) and
    eager on NumPy (the default threshold)."""
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0 if request.param == "traced" else 1024
    yield request.param
    _core.EAGER["threshold"] = old


def values(dtype, shape, seed=0):
    rng = numpy.random.default_rng(seed)
    dt = numpy.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -20
        return rng.integers(lo, 20, shape).astype(dt)
    x = rng.standard_normal(shape) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def same(got, ref, strict=False):
    """Equal to NumPy's result: the same kind of object (scalar or array),
    dtype, shape and values. A 0-d cpnumeric array stands for a NumPy scalar
    unless `strict` (integer indexing must give the scalar itself)."""
    if isinstance(ref, numpy.generic):
        if isinstance(got, cp.ndarray) and got.ndim == 0 and not strict:
            # A lazy 0-d result where NumPy gives a scalar (a reduction's).
            got = numpy.asarray(got)[()]
        assert type(got) is type(ref), (type(got), type(ref))
        assert got == ref or (got != got and ref != ref)
        return
    if isinstance(ref, numpy.ndarray):
        assert isinstance(got, (cp.ndarray, numpy.ndarray)), type(got)
        got = numpy.asarray(got)
        assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
        assert got.shape == ref.shape, (got.shape, ref.shape)
        numpy.testing.assert_array_equal(got, ref)
        return
    assert type(got) is type(ref), (got, ref)
    assert got == ref or (got != got and ref != ref), (got, ref)


def outcome(f):
    """f()'s result, or its exception's type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return f()
    except Exception as e:  # noqa: BLE001  (the outcome compared)
        return (type(e), str(e))


def same_outcome(f, lib_cp=cp, lib_np=numpy):
    ref, got = outcome(lambda: f(lib_np)), outcome(lambda: f(lib_cp))
    if isinstance(ref, tuple) and len(ref) == 2 and isinstance(ref[0], type):
        assert got == ref
    elif isinstance(ref, tuple):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for g, r in zip(got, ref):
            same(g, r)
    else:
        same(got, ref)


# -- integer indexing and iteration -------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape, key", [
    ((10,), -9), ((10,), 3), ((3, 4), (1, -1)), ((2, 3, 4), (1, 0, 2)),
    ((), ()), ((10,), numpy.int64(4)), ((3, 4), (numpy.int32(2), 1))])
def test_integer_index_is_a_scalar_copy(dtype, shape, key):
    ref = values(dtype, shape)
    a = cp.array(ref)
    got = a[key]
    expect = ref[key]
    same(got, expect, strict=True)
    a[...] = 0
    same(got, expect, strict=True)  # not a view: later writes leave it


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128"])
def test_integer_index_of_a_view_is_a_scalar(dtype):
    ref = values(dtype, (6, 5))
    a = cp.array(ref)
    same(a[::2, ::-1][1, 2], ref[::2, ::-1][1, 2], strict=True)
    same(a.T[3, 1], ref.T[3, 1], strict=True)
    same(a[1:][-1, -1], ref[1:][-1, -1], strict=True)
    if dtype.startswith("complex"):
        same(a.real[2, 3], ref.real[2, 3], strict=True)
        same(a.imag[::-1][0, 0], ref.imag[::-1][0, 0], strict=True)
    else:
        other = {"int32": numpy.float32, "float64": numpy.int64}[dtype]
        same(a.view(other)[1, 2], ref.view(other)[1, 2], strict=True)


def test_integer_index_by_0d_integer_array_is_a_scalar():
    ref = numpy.arange(10.0)
    a = cp.array(ref)
    same(a[cp.array(3)], ref[numpy.array(3)], strict=True)
    same(a[cp.arange(4).sum()], ref[numpy.arange(4).sum()], strict=True)


def test_partial_and_ellipsis_indexing_stay_views():
    ref = numpy.arange(12.0).reshape(3, 4)
    a = cp.array(ref)
    for key in [1, (1, Ellipsis), (Ellipsis, 1, 2), (1, 2, None), (slice(None), 1)]:
        v = a[key]
        assert isinstance(v, cp.ndarray)
        same(v, ref[key])
    z = cp.array(numpy.array(2.5))
    assert isinstance(z[...], cp.ndarray) and z[...].shape == ()


def test_integer_index_after_pending_writes_reads_them():
    a = cp.arange(2000.0)
    a[5] = -1.0
    a *= 2
    s = a[5]
    a[a > 0] = 0
    assert s == -2.0 and type(s) is numpy.float64


def test_reading_elements_of_a_computed_array_compiles_nothing():
    a = cp.arange(5000.0) * 3
    float(a[0])
    cp.reset_stats()
    got = [a[i] for i in range(0, 5000, 250)]
    assert cp.stats()["compilations"] == 0
    assert got == [numpy.float64(3.0 * i) for i in range(0, 5000, 250)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (3, 2), (0, 3)])
def test_iteration_gives_what_numpy_gives(dtype, shape):
    ref = values(dtype, shape)
    got = list(cp.array(ref))
    expect = list(ref)
    assert len(got) == len(expect)
    for g, r in zip(got, expect):
        same(g, r, strict=True)


def test_iteration_of_a_reversed_view():
    ref = numpy.arange(7, dtype=numpy.int16)[::-2]
    got = list(cp.array(numpy.arange(7, dtype=numpy.int16))[::-2])
    for g, r in zip(got, list(ref)):
        same(g, r, strict=True)


def test_iterating_a_0d_array_raises_like_numpy():
    same_outcome(lambda np: list(np.array(3.0)))


@pytest.mark.parametrize("dtype, delta", [
    ("bool", 1.75), ("bool", -1), ("int8", 1.5), ("uint8", -1), ("float32", 0.1),
    ("int64", 2), ("complex64", 1j)])
def test_augmented_assignment_to_an_element(dtype, delta):
    def f(np):
        v = np.ones(3, dtype)
        v[1] -= delta
        v[2] += delta
        return v
    same_outcome(f)


def test_flip_of_0d_is_a_scalar_copy():
    a = cp.array(3.0)
    f = cp.flip(a)
    a[...] = 5
    same(f, numpy.flip(numpy.array(3.0)), strict=True)
    same_outcome(lambda np: np.flip(np.array(3.0), axis=0))


# -- 0-d results stand in for NumPy scalars ----------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint32", "float32", "float64",
                                   "complex128"])
def test_0d_result_hashes_as_the_numpy_scalar(dtype):
    ref = numpy.round(values(dtype, (7,)))  # exact sums in any order
    s, r = cp.array(ref).sum(), ref.sum()
    assert hash(s) == hash(r)
    d = {s: 1}
    assert d[r] == 1
    assert {r: 2}[s] == 2


def test_arrays_with_dimensions_stay_unhashable():
    for shape in [(1,), (2, 2), (0,)]:
        with pytest.raises(TypeError, match="unhashable"):
            hash(cp.zeros(shape))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16"])
def test_sequence_repetition_by_0d_integer(dtype):
    ref = numpy.arange(3, dtype=dtype)
    s, r = cp.array(ref).sum(), ref.sum()
    assert [0] * s == [0] * r
    assert s * (1, 2) == r * (1, 2)
    assert "ab" * s == "ab" * r
    assert b"x" * s == b"x" * r
    if dtype.startswith("int"):
        assert [1] * -s == [1] * -r == []


def test_sequence_repetition_by_0d_float_raises():
    with pytest.raises(TypeError):
        [0] * cp.arange(3.0).sum()


def test_sequence_times_array_is_elementwise():
    same([1, 2] * cp.arange(2), [1, 2] * numpy.arange(2))
    same(cp.arange(2) * (3, 4), numpy.arange(2) * (3, 4))


@pytest.mark.parametrize("fmt", ["%d", "%s", "%.3f", "%x", "%5.1e", "%i"])
def test_percent_formatting_of_0d_results(fmt):
    for ref in [numpy.arange(1, 20), numpy.linspace(0.5, 7, 9)]:
        if fmt == "%x" and ref.dtype.kind == "f":
            continue
        assert fmt % cp.array(ref).sum() == fmt % ref.sum()
    assert f"{cp.arange(5.0).mean():.2f}" == f"{numpy.arange(5.0).mean():.2f}"


def test_round_of_0d_results():
    ref = numpy.array([0.125, 2.25, 0.5])
    s, r = cp.array(ref).sum(), ref.sum()
    same(round(s), round(r))
    same(round(s, 1), round(r, 1))
    with pytest.raises(TypeError):
        round(cp.array(ref))


@pytest.mark.parametrize("make", [
    lambda np: np.array([1]), lambda np: np.array(1.0), lambda np: np.array(True),
    lambda np: np.array([[2]]), lambda np: np.array(7), lambda np: np.arange(4).sum(),
    lambda np: np.array(3, np.uint8)])
def test_operator_index(make):
    same_outcome(lambda np: operator.index(make(np)))
    same_outcome(lambda np: list(range(10))[make(np)]
                 if make(np).ndim == 0 and make(np).dtype.kind in "iu" else operator.index(make(np)))


def test_numpy_indexed_by_cpnumeric_arrays():
    ref = numpy.arange(5) * 10
    for idx in [cp.array([1]), cp.array([3, 1]), cp.array(2), cp.array([True, False] * 2 + [True])]:
        same(ref[idx], ref[numpy.asarray(idx)])


def test_json_of_integer_results_raises_as_numpy():
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(numpy.arange(3).sum())
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(cp.arange(3).sum())
    assert json.dumps(cp.arange(3).sum().item()) == json.dumps(int(numpy.arange(3).sum()))


UFUNC_REDUCTIONS = ["sum", "prod", "max", "min", "any", "all", "count_nonzero", "nansum",
                    "nanmax", "nanprod", "ptp", "argmax", "argmin", "argsort", "mean", "std",
                    "var", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", UFUNC_REDUCTIONS)
@pytest.mark.parametrize("axis", [0, -1, 1, (0,), None])
@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_reductions_of_0d_arrays_with_an_axis(name, axis, dtype):
    if dtype == "bool" and name in ("nansum", "nanmax", "nanprod", "ptp", "cumsum", "cumprod",
                                    "std", "var"):
        return
    ref = numpy.array(values(dtype, ()))
    same_outcome(lambda np: getattr(np, name)(ref if np is numpy else cp.array(ref), axis=axis))


def test_reduction_of_0d_with_keepdims():
    for name in ["sum", "max", "argmax", "any"]:
        same_outcome(lambda np: getattr(np, name)(np.array(3.0), axis=0, keepdims=True))


# -- NumPy arrays as outputs --------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "bool", "complex128"])
@pytest.mark.parametrize("op", ["iadd", "isub", "imul", "itruediv", "ior"])
def test_numpy_inplace_operator_with_cpnumeric_operand(dtype, op):
    # Small integers (and halves): products and quotients exact in any order.
    ref_left = numpy.round(values(dtype, (4, 3), 1))
    right = numpy.round(values("float64" if op == "itruediv" else dtype, (3,), 2))
    if op == "itruediv":
        right = numpy.where(right == 0, 2.0, numpy.sign(right) * 2.0 ** numpy.abs(right % 4))

    def f(np):
        n = ref_left.copy()
        getattr(operator, op)(n, np.asarray(right))
        return n
    same_outcome(f)


def test_numpy_inplace_operator_on_a_view():
    n = numpy.zeros((4, 6))
    v = n[::2, 1::2]
    v += cp.ones((2, 3))
    expect = numpy.zeros((4, 6))
    expect[::2, 1::2] += 1
    same(n, expect)


@pytest.mark.parametrize("case", [
    lambda np, n: np.add(np.ones(3), np.ones(3), out=n),
    lambda np, n: np.multiply(np.arange(3.0), 2, out=(n,)),
    lambda np, n: np.add(np.arange(3.0), 1, out=n, where=np.array([True, False, True])),
    lambda np, n: np.subtract(np.arange(3), 1, out=n, casting="unsafe"),
    lambda np, n: np.sqrt(np.arange(3.0), n),
    lambda np, n: numpy.add(np.arange(3.0), np.ones(3), out=n),
])
@pytest.mark.parametrize("out_dtype", ["float64", "float32", "int64"])
def test_ufunc_out_a_numpy_array(case, out_dtype):
    def f(np):
        n = numpy.full(3, 7, out_dtype)
        r = case(np, n)
        assert r is n or (isinstance(r, tuple) and r[0] is n)
        return n
    same_outcome(f)


def test_ufunc_out_a_numpy_array_broadcasts_and_checks():
    def bcast(np):
        n = numpy.zeros((2, 3))
        np.add(np.arange(3.0), 1, out=n)
        return n
    same_outcome(bcast)

    def bad_shape(np):
        np.add(np.arange(3.0), 1, out=numpy.zeros(2))
    with pytest.raises(ValueError):
        bad_shape(cp)

    def read_only(np):
        n = numpy.zeros(3)
        n.flags.writeable = False
        np.add(np.ones(3), 1, out=n)
    same_outcome(read_only)


def test_reductions_into_numpy_out():
    def f(np):
        n = numpy.zeros(())
        numpy.add.reduce(np.arange(4.0), out=n)
        m = numpy.zeros(2)
        numpy.sum(np.ones((3, 2)), axis=0, out=m)
        k = numpy.zeros(2, numpy.int32)
        np.max(np.arange(6).reshape(2, 3), axis=1, out=k)
        return n, m, k
    same_outcome(f)


def test_numpy_ufunc_on_cpnumeric_operands_returns_cpnumeric():
    r = numpy.add(numpy.ones(3), cp.arange(3.0))
    assert isinstance(r, cp.ndarray)
    same(r, numpy.add(numpy.ones(3), numpy.arange(3.0)))
    r = numpy.maximum.reduce(cp.arange(5.0))
    same(numpy.asarray(r)[()], numpy.float64(4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # subtract.reduce falls back
        same(numpy.asarray(numpy.subtract.reduce(cp.arange(5.0))),
             numpy.asarray(numpy.subtract.reduce(numpy.arange(5.0))))


# -- NEP 50 dtypes ------------------------------------------------------------------

LINSPACE = [
    lambda np: np.linspace(numpy.float32(1.5), 1, 5),
    lambda np: np.linspace(np.zeros(2), np.ones(2), 3),
    lambda np: np.linspace(0, np.array([1, 2]), 3, axis=1),
    lambda np: np.linspace(1, 10, 4, dtype=int),
    lambda np: np.linspace(1, 2, 3, retstep=True),
    lambda np: np.linspace(np.zeros(2), np.ones(2), 3, retstep=True),
    lambda np: np.linspace(numpy.int8(1), 2, 3),
    lambda np: np.linspace(numpy.float16(1), 2, 3),
    lambda np: np.linspace(1, 2, 1),
    lambda np: np.linspace(1, 2, 0),
    lambda np: np.linspace(1, 2, 1, retstep=True),
    lambda np: np.linspace(0, 5e-324, 3),
    lambda np: np.linspace(0, 1, 2.5),
    lambda np: np.linspace(0, 1, -1),
    lambda np: np.linspace(True, False, 3),
    lambda np: np.linspace(0, 1j, 3),
    lambda np: np.linspace(1 + 1j, -2j, 4, endpoint=False),
    lambda np: np.linspace(0, 1j, 3, dtype=numpy.complex64),
    lambda np: np.linspace(np.arange(5.0).min(), np.arange(5.0).max(), 7),
    lambda np: np.linspace(numpy.float32(0.1), 7, 11),
    lambda np: np.linspace(1, numpy.float32(0.3), 7, endpoint=False),
    lambda np: np.linspace(np.zeros((2, 3), numpy.float32), 1, 4, axis=-1),
    lambda np: np.linspace(np.zeros(2), np.array([0.0, 5e-324]), 3),
    lambda np: np.linspace(-3, 1e10, 13),
    lambda np: np.linspace(numpy.array([1, 2]), 3.5, 4, dtype=numpy.float32),
    lambda np: np.linspace(np.array(2.0), np.array([[1.0], [3.0]]), 3, axis=-1),
]


@pytest.mark.parametrize("case", range(len(LINSPACE)))
def test_linspace_as_numpy(case):
    same_outcome(LINSPACE[case])


CLIP = [
    lambda np, u8, f32: np.clip(np.ones(3, bool), 5, numpy.float32(1.5)),
    lambda np, u8, f32: np.clip(u8, -3, 300),
    lambda np, u8, f32: np.clip(u8, 1, None),
    lambda np, u8, f32: np.clip(u8, -3, numpy.float32(2)),
    lambda np, u8, f32: np.clip(u8, 1, 300),
    lambda np, u8, f32: np.clip(u8, numpy.int64(-3), 2),
    lambda np, u8, f32: np.clip(u8),
    lambda np, u8, f32: np.clip(f32, 0.5, 2),
    lambda np, u8, f32: np.clip(f32, np.array([1.0, 2, 3, 4, 5]), 3),
    lambda np, u8, f32: np.clip(f32, min=1),
    lambda np, u8, f32: np.clip(f32, 1, 2, min=1),
    lambda np, u8, f32: np.clip(f32, 1),
    lambda np, u8, f32: u8.clip(2, 3),
    lambda np, u8, f32: u8.clip(max=3),
    lambda np, u8, f32: np.clip(np.array([numpy.nan, 1, 5]), 2, 3),
    lambda np, u8, f32: np.clip(f32, 2, 1),
    lambda np, u8, f32: np.clip(np.arange(5), 1.5, 3),
    lambda np, u8, f32: np.clip(f32[::-2], numpy.float64(1), 2),
]


@pytest.mark.parametrize("case", range(len(CLIP)))
def test_clip_as_numpy(case):
    same_outcome(lambda np: CLIP[case](np, np.arange(5, dtype=numpy.uint8),
                                       np.arange(5, dtype=numpy.float32)))


def test_clip_into_out():
    def f(np):
        u8 = np.arange(5, dtype=numpy.uint8)
        np.clip(u8, 2, 3, out=u8)
        return u8
    same_outcome(f)


WHERE = [
    lambda np, c, u8: np.where(c, u8, -3),
    lambda np, c, u8: np.where(c, u8, 300),
    lambda np, c, u8: np.where(c, u8.astype(numpy.float32), 1e300),
    lambda np, c, u8: np.where(c, -3, u8),
    lambda np, c, u8: np.where(c, 3, 4.5),
    lambda np, c, u8: np.where(c, numpy.int8(3), 200),
    lambda np, c, u8: np.where(c, u8, 2 ** 70),
    lambda np, c, u8: np.where(c, u8.astype(numpy.int8), -129),
    lambda np, c, u8: np.where(c, True, 2),
    lambda np, c, u8: np.where(c, 1j, u8),
]


@pytest.mark.parametrize("case", range(len(WHERE)))
def test_where_with_python_scalars_as_numpy(case):
    def f(np):
        u8 = np.arange(5, dtype=numpy.uint8)
        return WHERE[case](np, u8 > 0, u8)
    same_outcome(f)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "bool"])
@pytest.mark.parametrize("exponent", [-1, -3, 0, 2, numpy.int64(-2), numpy.int8(3)])
def test_integer_power_of_negative_scalar_exponent(dtype, exponent):
    same_outcome(lambda np: np.arange(1, 4).astype(dtype) ** exponent)
    same_outcome(lambda np: np.power(np.arange(1, 4).astype(dtype), exponent))

    def ipow(np):
        a = np.arange(1, 4).astype(dtype)
        a **= exponent
        return a
    same_outcome(ipow)

    def empty(np):  # no elements: nothing raised
        a = np.full((1, 3, 1, 2), 2).astype(dtype)
        a[:-1:-1, ::2] **= exponent
        return a, np.arange(0).astype(dtype) ** exponent
    same_outcome(empty)


@pytest.mark.parametrize("exp_dtype", ["int8", "int64", "uint8", "float64", "bool"])
@pytest.mark.parametrize("exps", [[-1, 1, 2], [0, 1, 2], [], [[2], [-2]]])
def test_integer_power_of_exponent_array(exp_dtype, exps):
    if exp_dtype in ("uint8", "bool") and numpy.any(numpy.array(exps) < 0):
        return
    e = numpy.array(exps, dtype=exp_dtype)
    base = numpy.arange(1, 4)[: e.shape[-1] if e.ndim else 3] if e.size else numpy.arange(0)
    same_outcome(lambda np: np.power(np.asarray(base), np.asarray(e)))
    same_outcome(lambda np: np.asarray(base) ** np.asarray(e) + 1)


def test_integer_power_of_computed_negative_exponent_raises():
    e = cp.arange(3) - 1  # pending: computed by the trace
    with pytest.raises(ValueError, match="Integers to negative integer powers"):
        cp.power(cp.arange(1, 4), e)
    same(cp.power(cp.arange(1.0, 4.0), e), numpy.power(numpy.arange(1.0, 4.0),
                                                       numpy.arange(3) - 1))


# -- argument errors ----------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda np: np.eye(-1), lambda np: np.eye(2, -3), lambda np: np.eye(2.0),
    lambda np: np.eye(2, k=1.0), lambda np: np.eye(0), lambda np: np.eye(3, 2, -1),
    lambda np: np.identity(-2),
])
def test_eye_arguments(call):
    same_outcome(call)


def test_eye_error_leaves_other_arrays_readable():
    b = cp.arange(10.0) * 2
    with pytest.raises(ValueError, match="negative dimensions"):
        cp.eye(-1)
    same(b, numpy.arange(10.0) * 2)


@pytest.mark.parametrize("call", [
    lambda np: np.zeros("3"), lambda np: np.zeros(3.0), lambda np: np.ones((2, 2.0)),
    lambda np: np.zeros(numpy.int8(2)), lambda np: np.full("3", 1), lambda np: np.empty([2, "3"]),
    lambda np: np.zeros((2, -1)), lambda np: np.zeros(np.array([2, 3])),
    lambda np: np.arange(4).reshape("a"), lambda np: np.arange(4).reshape(2.0),
    lambda np: np.arange(4).reshape((2, "a")), lambda np: np.arange(6).reshape(np.array([2, 3])),
    lambda np: np.arange(6).reshape(2, numpy.int64(3)), lambda np: np.reshape(np.arange(4), [4, 1]),
])
def test_shape_arguments(call):
    same_outcome(call)


@pytest.mark.parametrize("indices", [
    [], [1.7], 1.7, numpy.float64(1.7), numpy.int8(1), [[1, 2]], [True, False],
    numpy.array([], dtype=float), numpy.array([1.0]), numpy.array([1], numpy.uint64),
    numpy.array([True, False]), numpy.array([[0, -1]], numpy.int16)])
def test_take_index_conversion(indices):
    def f(np):
        idx = np.asarray(indices) if isinstance(indices, numpy.ndarray) else indices
        return np.take(np.arange(5) * 3, idx)
    same_outcome(f)
    same_outcome(lambda np: np.take(np.arange(6).reshape(2, 3), [], axis=1))


@pytest.mark.parametrize("indices", [
    [1.0, 2.0], numpy.array([1.0, 2.0]), [], [True, False], numpy.array([1], numpy.uint64),
    numpy.array([], float), 1.0, numpy.float64(1.0), numpy.int32(2),
    numpy.array([1], numpy.int32), numpy.array([True])])
def test_put_index_conversion(indices):
    def f(np):
        a = np.zeros(4)
        idx = np.asarray(indices) if isinstance(indices, numpy.ndarray) else indices
        np.put(a, idx, 5)
        return a
    same_outcome(f)


@pytest.mark.parametrize("shape, val", [
    ((3, 3), []), ((3, 3), [1, 2]), ((3, 4), [1, 2]), ((7, 3), [1, 2]), ((3, 3, 3), 5),
    ((3, 4), 5), ((3,), 5), ((3, 4, 3), 5), ((3, 3), numpy.zeros((0, 2))), ((4, 4), [9]),
    ((0, 0), [1])])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_values(shape, val, wrap):
    def f(np):
        a = np.zeros(shape)
        np.fill_diagonal(a, np.asarray(val) if isinstance(val, numpy.ndarray) else val,
                         wrap=wrap)
        return a
    same_outcome(f)


# -- reshape orders -----------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F", "A", "K", "X", None, "f"])
@pytest.mark.parametrize("view", ["contiguous", "transposed", "reversed", "strided"])
def test_reshape_ravel_flatten_orders(order, view):
    base = numpy.arange(24).reshape(2, 3, 4)
    make = {"contiguous": lambda x: x, "transposed": lambda x: x.transpose(1, 2, 0),
            "reversed": lambda x: x.transpose(1, 2, 0)[::-1],
            "strided": lambda x: x[:, ::2, 1::2]}[view]

    def arr(np):
        return make(np.asarray(base) if np is cp else base)
    same_outcome(lambda np: arr(np).reshape((4, -1) if arr(np).size == 24 else -1,
                                            order=order))
    same_outcome(lambda np: np.ravel(arr(np), order=order))
    same_outcome(lambda np: arr(np).flatten(order=order or "C"))


def test_reshape_F_is_a_view_where_numpy_gives_one():
    def f(np):
        d = np.zeros(6)
        v = d.reshape((2, 3), order="F")
        v[0, 1] = 7
        return d
    same_outcome(f)
    same_outcome(lambda np: np.arange(12.0).reshape(3, 4).T.reshape(12, order="F", copy=False))
    same_outcome(lambda np: np.arange(12.0).reshape(3, 4).T.reshape(2, 6, copy=False))
    same_outcome(lambda np: np.zeros((0, 3)).reshape((3, 0), order="F"))
    same_outcome(lambda np: np.array(5.0).reshape((1, 1), order="F"))


# -- @jit ------------------------------------------------------------------------------

def test_integer_index_inside_jit_is_a_traced_copy():
    @cp.jit
    def f(x):
        s = x[2]
        x[...] = 0
        return s * 2, x[1, ...]

    a = cp.arange(4.0)
    s, row = f(a)
    same(numpy.asarray(s)[()], numpy.float64(4.0))
    same(a, numpy.zeros(4))
    s, row = f(cp.arange(4.0) + 1)
    same(numpy.asarray(s)[()], numpy.float64(6.0))


def test_numpy_scalar_arguments_to_jit_are_traced_not_retraced():
    @cp.jit
    def f(x, y):
        return x * y

    a = cp.arange(4, dtype=numpy.float32)
    cp.reset_stats()
    r1 = f(a, a[1])
    r2 = f(a, a[2])
    assert cp.stats()["jit_traces"] == 1
    same(r1, numpy.arange(4, dtype=numpy.float32) * numpy.float32(1))
    same(r2, numpy.arange(4, dtype=numpy.float32) * numpy.float32(2))


# -- DLPack and the buffer protocol -------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("view", ["whole", "reversed", "transposed", "0-d", "empty"])
def test_from_dlpack_and_memoryview(dtype, view):
    make = {"whole": lambda np: np.arange(6).astype(dtype).reshape(2, 3),
            "reversed": lambda np: np.arange(6).astype(dtype)[::-2],
            "transposed": lambda np: np.arange(6).astype(dtype).reshape(2, 3).T,
            "0-d": lambda np: np.asarray(np.arange(6).astype(dtype).sum()),
            "empty": lambda np: np.zeros((0, 3), dtype)}[view]
    same_outcome(lambda np: numpy.from_dlpack(make(np)))
    same_outcome(lambda np: numpy.from_dlpack(make(np), copy=True))
    same_outcome(lambda np: make(np).__dlpack_device__())
    same_outcome(lambda np: bytes(memoryview(make(np))))
    same_outcome(lambda np: (memoryview(make(np)).format, memoryview(make(np)).shape))
    if view in ("whole", "0-d", "empty"):
        # The buffer is a C-contiguous copy: frombuffer of a non-contiguous
        # view works where NumPy's raises (docs/numpy-api.md).
        same_outcome(lambda np: numpy.frombuffer(make(np), dtype=dtype))


def test_numpy_conversions_of_small_arrays():
    a = cp.arange(4.0)
    n = numpy.asarray(a)
    n[0] = 7
    # An eager array's elements are copied; a traced one shares its store.
    same(a, numpy.array([0.0 if _core.EAGER["threshold"] > 4 else 7.0, 1, 2, 3]))
    same(n, numpy.array([7.0, 1, 2, 3]))
    same(numpy.array([cp.arange(2.0), cp.ones(2)]), numpy.array([[0.0, 1], [1, 1]]))
    d = numpy.from_dlpack(a, copy=True)
    d[1] = 5.0
    same(a[1], numpy.float64(1.0))


def test_dlpack_and_buffers_share_a_computed_array():
    a = _computed()
    n = numpy.asarray(a)
    assert numpy.shares_memory(numpy.from_dlpack(a), n)
    assert numpy.shares_memory(numpy.from_dlpack(a[::-3]), n)
    assert numpy.shares_memory(numpy.frombuffer(a), n)
    assert numpy.shares_memory(numpy.asarray(memoryview(a)), n)
    assert bytes(a[::2]) == numpy.arange(0, 2 * SHARED_N, 4.0).tobytes()
    with pytest.raises(BufferError):
        numpy.frombuffer(a[::2])  # not contiguous, as NumPy's view


# np.asarray of a computed array shares its memory (docs/numpy-api.md): above
# CPN_EAGER_THRESHOLD's default, so the arrays are traced.
SHARED_N = 1 << 16


def _computed(n=SHARED_N, dtype=numpy.float64):
    a = cp.arange(n, dtype=dtype) * 2
    a[0]  # run: the array has its store
    return a


def test_asarray_of_a_computed_array_shares_its_memory():
    a = _computed()
    n = numpy.asarray(a)
    assert numpy.shares_memory(n, numpy.asarray(a))
    assert n.flags.writeable and n.flags.c_contiguous
    same(n[:3], numpy.array([0.0, 2.0, 4.0]))
    # NumPy-side writes reach the array until cpnumeric next reads it...
    n[0] = 7.0
    assert float(a[0]) == 7.0
    b = a + 1.0  # ...which takes its own copy first
    n[1] = 9.0
    same(b[:3], numpy.array([8.0, 3.0, 5.0]))
    assert float(a[1]) == 2.0
    same(n[:3], numpy.array([7.0, 9.0, 4.0]))


def test_writes_after_asarray_do_not_reach_the_numpy_array():
    a = _computed()
    n = numpy.asarray(a)
    a[0] = 5.0  # not written in place: the NumPy array holds the store
    a += 1.0
    a[2:4] = cp.ones(2)
    same(n[:4], numpy.array([0.0, 2.0, 4.0, 6.0]))
    same(a[:4], numpy.array([6.0, 3.0, 1.0, 1.0]))


def test_asarray_runs_pending_reads_before_numpy_writes():
    a = _computed()
    b = a * 3.0  # pending: reads a's store
    c = cp.sort(a[::-1])
    n = numpy.asarray(a)
    n[:] = -1.0
    same(b[:3], numpy.array([0.0, 6.0, 12.0]))
    same(c[:3], numpy.array([0.0, 2.0, 4.0]))


def test_a_shared_store_is_not_reused_for_results():
    a = _computed()
    cp.reset_stats()
    n = numpy.asarray(a)
    s = cp.stats()
    assert s["exports_shared"] == 1 and s["export_copies"] == 0
    a = a * 2.0 + 1.0  # the old value is dead to cpnumeric, not to NumPy
    b = cp.exp(a * 0.0)
    same(n[:3], numpy.array([0.0, 2.0, 4.0]))
    same(a[:3], numpy.array([1.0, 5.0, 9.0]))
    same(b[:2], numpy.ones(2))
    s = cp.stats()  # the old value was read once while shared: one copy
    assert s["export_copies"] == 1 and s["export_copy_bytes"] == SHARED_N * 8
    del n
    a = _computed()
    n = numpy.asarray(a)
    del n  # given back: the next trace reads the store, no copy
    a = a * 2.0
    same(a[:3], numpy.array([0.0, 4.0, 8.0]))
    assert cp.stats()["export_copies"] == 1


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int32,
                                   numpy.uint8, numpy.bool_, numpy.complex128])
@pytest.mark.parametrize("view", ["whole", "reversed", "transposed", "column", "real"])
def test_asarray_of_views_of_a_computed_array(dtype, view):
    def make(np):
        a = (np.arange(SHARED_N) % 7).astype(dtype).reshape(256, -1)
        return {"whole": lambda: a, "reversed": lambda: a[::-1, ::2],
                "transposed": lambda: a.T, "column": lambda: a[:, 3],
                "real": lambda: a.real}[view]()
    got, want = numpy.asarray(make(cp)), numpy.asarray(make(numpy))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.strides == want.strides
    numpy.testing.assert_array_equal(got, want)


def test_asarray_copy_and_dtype_arguments():
    a = _computed()
    c = numpy.asarray(a, copy=True)
    assert not numpy.shares_memory(c, numpy.asarray(a))
    assert not numpy.shares_memory(numpy.array(a), numpy.asarray(a))
    assert numpy.shares_memory(numpy.asarray(a, copy=False), numpy.asarray(a))
    same(numpy.asarray(a, dtype=numpy.float32)[:3], numpy.array([0, 2, 4], numpy.float32))
    with pytest.raises(ValueError, match="copy"):
        numpy.asarray(a, dtype=numpy.float32, copy=False)
    small = cp.arange(4.0)
    if small._base.np is not None:  # eager: its elements are copied
        with pytest.raises(ValueError, match="copy"):
            small.__array__(copy=False)
        with pytest.raises(BufferError, match="copy"):
            small.__dlpack__(copy=False)


def test_a_compiled_function_reads_a_shared_array_as_it_was():
    @cp.jit
    def f(x):
        return x * 2.0 + 1.0

    a = _computed()
    f(a)  # traced and compiled
    n = numpy.asarray(a)
    r = f(a)  # the cached kernel, run later: it reads a copy
    n[:] = -5.0
    same(r[:3], numpy.array([1.0, 5.0, 9.0]))


def test_index_bounds_are_not_kept_across_numpy_writes():
    key = cp.arange(SHARED_N)
    x = cp.zeros(SHARED_N)
    x[key] = 1.0  # the key's bounds are checked and kept on its value
    k = numpy.asarray(key)
    k[0] = -1
    x[key] = 7.0
    assert float(x[-1]) == 7.0 and float(x[0]) == 1.0  # index 0 is gone
    k = numpy.asarray(key)  # the key has its own copy since: share it again
    k[1] = 10 ** 9
    with pytest.raises(IndexError):
        x[key] = 3.0


def test_asarray_of_a_read_only_view_is_read_only():
    a = _computed()
    for v in (cp.broadcast_to(a, (3, SHARED_N)), a.reshape(256, -1).diagonal()):
        n = numpy.asarray(v)
        assert not n.flags.writeable
        with pytest.raises(ValueError):
            n[0] = 1.0
        assert not numpy.from_dlpack(v).flags.writeable or True  # exported by NumPy
    a.flags.writeable = False
    assert not numpy.asarray(a).flags.writeable
    assert numpy.asarray(a, copy=True).flags.writeable


def test_asarray_of_a_computed_array_allocates_nothing():
    import tracemalloc
    a = _computed(1 << 20)
    tracemalloc.start()
    try:
        n = numpy.asarray(a)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n.nbytes == 8 << 20 and peak < 1 << 20


# NumPy arrays in (docs/numpy-api.md, "NumPy arrays in"): a NumPy array that
# nothing else can reach is adopted; one that NumPy code may still write is
# copied, or borrowed under write protection (test_borrow.py).

def _fresh(made, n=SHARED_N, dtype=numpy.float64):
    x = (numpy.arange(n) % 11).astype(dtype)
    made.append(x.ctypes.data)
    return x


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64,
                                   numpy.bool_, numpy.complex128])
def test_asarray_adopts_an_array_nothing_else_holds(dtype):
    made = []
    cp.reset_stats()
    a = cp.asarray(_fresh(made, dtype=dtype))
    b = cp.array(_fresh(made, dtype=dtype).reshape(256, -1).T)  # a view, F order
    s = cp.stats()
    assert s["imports_borrowed"] == 2 and s["import_copies"] == 0
    assert numpy.asarray(a).ctypes.data == made[0]
    assert b.flags.f_contiguous and not b.flags.c_contiguous
    want = (numpy.arange(SHARED_N) % 11).astype(dtype)
    numpy.testing.assert_array_equal(numpy.asarray(a), want)
    numpy.testing.assert_array_equal(numpy.asarray(b), want.reshape(256, -1).T)
    a[0] = 1  # its own buffer now: written as any array's
    a += a
    want[0] = 1
    numpy.testing.assert_array_equal(numpy.asarray(a), want + want)


def test_array_of_a_list_is_copied_once():
    cp.reset_stats()
    rows = [[float(i + j) for j in range(256)] for i in range(256)]
    a = cp.array(rows)
    assert cp.stats()["imports_borrowed"] == 1  # NumPy's conversion, adopted
    same(a, numpy.array(rows))


@pytest.mark.parametrize("copy", [None, True, False])
def test_an_array_numpy_code_can_reach_is_copied(copy):
    import weakref
    x = numpy.arange(SHARED_N, dtype=numpy.float64)
    views = [x, x[:], x.reshape(256, -1).T]
    ro = numpy.arange(SHARED_N, dtype=numpy.float64)
    ro.flags.writeable = False  # may be made writable again
    cp.reset_stats()
    for v in views + [ro]:
        for a in (cp.asarray(v, copy=copy), cp.array(v, copy=copy)):
            assert not numpy.shares_memory(numpy.asarray(a), x)
            assert not numpy.shares_memory(numpy.asarray(a), ro)
    s = cp.stats()
    # Copied, or borrowed under write protection (test_borrow.py): never
    # adopted. A conversion of elements already borrowed by a live value
    # shares its store (counted once).
    assert s["imports_borrowed"] == 0
    if s["imports_guarded"]:
        assert 1 <= s["import_copies"] + s["imports_guarded"] <= 8
    else:
        assert s["import_copies"] == 8
    a = cp.asarray(x, copy=copy)
    b = a * 2.0  # pending
    x[:] = -1.0  # NumPy's write after the call reaches neither
    same(b[:3], numpy.array([0.0, 2.0, 4.0]))
    same(a[:3], numpy.array([0.0, 1.0, 2.0]))


def test_a_weakly_referenced_array_is_copied():
    import weakref
    refs = []

    def make():
        x = numpy.arange(SHARED_N, dtype=numpy.float64)
        refs.append(weakref.ref(x))
        return x

    cp.reset_stats()
    a = cp.asarray(make())  # the weak reference can still reach it
    s = cp.stats()  # copied, or borrowed under write protection: not adopted
    assert s["imports_borrowed"] == 0
    assert s["import_copies"] + s["imports_guarded"] == 1
    assert not numpy.shares_memory(numpy.asarray(a), refs[0]())


def test_an_adopted_array_is_released_with_its_last_value():
    import tracemalloc
    n = 1 << 20
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        a = cp.asarray(numpy.arange(n, dtype=numpy.float64))
        assert tracemalloc.get_traced_memory()[0] - start >= 8 * n  # NumPy's
        b = cp.sort(a[::-1])  # a task reads the store too
        del a
        same(b[:2], numpy.array([0.0, 1.0]))
        del b
        cp.synchronize()
        for _ in range(1000):  # a worker's release runs at a pending call
            if tracemalloc.get_traced_memory()[0] - start < n:
                break
            time.sleep(0.001)
        assert tracemalloc.get_traced_memory()[0] - start < n
    finally:
        tracemalloc.stop()


# -- more scalar and dtype rules found by the fuzzer ----------------------------

@pytest.mark.parametrize("call", [
    lambda np: np.searchsorted(np.arange(5), 3),
    lambda np: np.searchsorted(np.arange(5.0), 2.5, side="right"),
    lambda np: np.searchsorted(np.arange(5), numpy.int8(7)),
    lambda np: np.arange(5).searchsorted(-1),
    lambda np: np.isin(3, np.arange(5)),
    lambda np: np.interp(2.5, np.arange(5.0), np.arange(5.0) * 2),
])
def test_searchsorted_of_a_scalar_is_a_scalar(call):
    same_outcome(call)


@pytest.mark.parametrize("x", [[-1, 0, 2], numpy.array([-1, 0, 2], numpy.int8),
                               numpy.array([-1.5, 0, numpy.nan], numpy.float32),
                               numpy.array([True, False, True])])
@pytest.mark.parametrize("x2", [0.5, 1, numpy.int8(1), numpy.float32(0.5),
                                numpy.array([0.25, 0.5, 0.75], numpy.float16)])
def test_heaviside_dtype(x, x2):
    same_outcome(lambda np: np.heaviside(np.asarray(x), np.asarray(x2)
                                         if isinstance(x2, numpy.ndarray) else x2))


# -- reshape is a view wherever NumPy's is ---------------------------------------

RESHAPE_VIEWS = {
    "whole": lambda x: x, "reversed": lambda x: x[::-1], "both reversed": lambda x: x[::-1, ::-1],
    "transposed": lambda x: x.T, "rows stepped": lambda x: x[::2], "columns": lambda x: x[:, 1:3],
    "new axes": lambda x: x[None, :, None], "3-d reversed": lambda x: x.reshape(2, 3, 4)[:, ::-1],
    "3-d permuted": lambda x: x.reshape(2, 3, 4).transpose(1, 2, 0),
    "3-d stepped": lambda x: x.reshape(2, 3, 4)[::-1, :, ::2], "one column": lambda x: x[:, 2:3],
    "real part": lambda x: x.astype(complex).real[::-1],
}


@pytest.mark.parametrize("view", list(RESHAPE_VIEWS))
@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize("call", ["reshape-flat", "reshape-2", "reshape-3", "ravel", "flatten",
                                  "ravel-K"])
def test_reshape_ravel_views_and_copies_as_numpy(view, order, call):
    """The values, and whether a write through the result reaches the array
    (a view) or not (a copy), as in NumPy."""
    make = RESHAPE_VIEWS[view]

    def f(np):
        base = np.arange(24.0).reshape(6, 4)
        if view == "real part":
            base = np.arange(24.0).reshape(6, 4).astype(complex)
            v = base.real[::-1]
        else:
            v = make(base)
        n = v.size
        r = {"reshape-flat": lambda: v.reshape(n, order=order),
             "reshape-2": lambda: v.reshape((2, n // 2), order=order),
             "reshape-3": lambda: v.reshape((1, 2, -1, 1) if n % 2 == 0 else (n, 1, 1),
                                            order=order),
             "ravel": lambda: v.ravel(order),
             "flatten": lambda: v.flatten(order),
             "ravel-K": lambda: np.ravel(v, "K")}[call]()
        got = numpy.asarray(r).copy()
        r[...] = -1
        return got, numpy.asarray(base)
    same_outcome(f)


def test_shape_assignment_of_a_reshapable_view():
    def f(np):
        a = np.arange(24.0).reshape(6, 4)[::-1]
        a.shape = (2, 3, 4)
        a[0, 0, 0] = -5
        return a
    same_outcome(f)


@pytest.mark.parametrize("call", [
    lambda np: np.add(np.ones(2), np.ones(3)),
    lambda np: np.add(np.ones((2, 1)), np.ones(3), out=np.ones(3)),
    lambda np: np.add(np.ones(3), np.ones(3), out=np.ones(2)),
    lambda np: np.add(np.ones(3), 1, out=np.ones(2)),
    lambda np: np.add(np.ones(3), np.ones(3), where=np.ones(2, bool)),
    lambda np: np.add(np.ones((2, 3)), np.ones((4, 1, 3))),
    lambda np: np.sin(np.ones(3), out=np.ones((2, 3))),
    lambda np: np.sin(np.ones(3), out=np.ones(2)),
    lambda np: np.ones(3) + np.ones(2),
])
def test_ufunc_shape_errors_as_numpy(call):
    same_outcome(call)


def test_ufunc_output_cast_is_checked_before_shapes():
    def f(np):
        a = np.ones((6, 10, 30), numpy.int8)
        a *= np.ones((2,), numpy.float16)
    same_outcome(f)


# -- Python scalars written into arrays ---------------------------------------------

SETITEM_KEYS = [(slice(None), -2), (0, slice(None)), 1, (slice(None), slice(None)), ([0, 2], 1),
                "mask"]
SCALAR_VALUES = [-1j, 2 ** 70, -1, 1.5, float("nan"), True, 300, numpy.complex64(1j), 2 ** 63,
                 -2 ** 63 - 1, float("inf")]


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "complex64", "int8"])
@pytest.mark.parametrize("key", range(len(SETITEM_KEYS)))
def test_setitem_of_python_scalars_converts_as_numpy(dtype, key):
    for val in SCALAR_VALUES:
        def f(np):
            a = np.zeros((3, 3), dtype)
            k = SETITEM_KEYS[key]
            a[np.array([True, False, True]) if k == "mask" else k] = val
            return a
        same_outcome(f)


@pytest.mark.parametrize("dtype", [None, "float32", "int64", "uint8", "bool", "complex64"])
def test_full_converts_the_fill_value_as_numpy(dtype):
    for val in SCALAR_VALUES + [numpy.float64(2.5), numpy.int64(-3), [1, 2, 3], [[1], [2.5]]]:
        if dtype is None and val in (2 ** 70, 2 ** 63, -2 ** 63 - 1):
            continue  # NumPy makes an object array: not a cpnumeric dtype
        same_outcome(lambda np: np.full((2, 3), val, dtype=dtype))
        same_outcome(lambda np: np.full_like(np.zeros((2, 3)), val, dtype=dtype))
    same_outcome(lambda np: np.full((2, 2), [1, 2, 3]))


def test_signed_zero_constants_keep_their_sign():
    def f(np):
        a = np.full(3, -2.0)
        return a * -0.0, a * 0.0, a * complex(0, -0.0), a * 0j, a + np.full(3, -0.0)
    ref, got = f(numpy), f(cp)
    for g, r in zip(got, ref):
        same(g, r)
        assert (numpy.signbit(numpy.asarray(g).real) == numpy.signbit(r.real)).all()


def _k_cases(m):
    base = m.arange(60.0).reshape(4, 5, 3)
    t = m.moveaxis(base, 2, 0)               # (3, 4, 5), axes (1, 2, 0) outermost
    c = m.ones((3, 4, 5))
    f = m.arange(24.0).reshape(2, 3, 4).T   # F order
    return {
        "T + 1": lambda: t + 1,
        "sqrt(T)": lambda: m.sqrt(t),
        "T + row": lambda: t + m.ones(5),
        "T + C (C wins a conflict)": lambda: t + c,
        "C + T": lambda: c + t,
        "T <= T": lambda: m.less_equal(t, t),
        "where": lambda: m.where(t > 3, t, 0),
        "clip": lambda: m.clip(t, 3, 30),
        "astype": lambda: t.astype(m.float32),
        "astype C": lambda: t.astype(m.float32, order="C"),
        "copy (C)": lambda: t.copy(),
        "np.copy (K)": lambda: m.copy(t),
        "copy F": lambda: t.copy(order="F"),
        "copy A of F": lambda: f.copy(order="A"),
        "F * 2": lambda: f * 2,
        "negative slice": lambda: c[:, ::2, ::-1] + 1,
        "add where=": lambda: m.add(t, 1, where=t > 3, out=m.zeros((3, 4, 5))),
        "sum axis 1": lambda: t.sum(axis=1),
        "sum keepdims": lambda: t.sum(axis=1, keepdims=True),
        "max axis 0": lambda: m.max(t, axis=0),
        "mean axis 2": lambda: t.mean(axis=2),
        "std axis 1": lambda: t.std(axis=1),
        "cumsum axis 1": lambda: m.cumsum(t, axis=1),
        "cumprod axis 0": lambda: t.cumprod(axis=0),
        "zeros_like": lambda: m.zeros_like(t),
        "ones_like F": lambda: m.ones_like(c, order="F"),
        "full_like": lambda: m.full_like(t, 2.5),
        "empty_like C": lambda: m.zeros_like(t, order="C"),
    }


@pytest.mark.parametrize("case", sorted(_k_cases(numpy)))
def test_elementwise_results_keep_numpys_order_k_layout(case):
    # fuzz 414:119: NumPy lays an elementwise result out in its operands'
    # axis order (order='K'), so `result.reshape(...)` of a transposed
    # operand's result copies; cpnumeric's were C-contiguous and the reshape
    # was a view that a later write to the result changed.
    want = _k_cases(numpy)[case]()
    got = _k_cases(cp)[case]()
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    assert got.strides == want.strides
    rw, rg = want.reshape(-1), got.reshape(-1)
    want[...] = -7
    got[...] = -7
    numpy.testing.assert_array_equal(numpy.asarray(rg), rw)


def _numpy_sources():
    base = numpy.arange(2 * 40 * 30, dtype=numpy.float64).reshape(2, 40, 30)
    return {
        "C": base,
        "F": numpy.asfortranarray(base),
        "permuted": numpy.moveaxis(base, 2, 0),
        "strided": base[:, ::2, 1:],
        "reversed": base[:, ::-1],
        "1-d": base.ravel(),
        "1-d reversed": base.ravel()[::-1],
        "big-endian": base.astype(">f8"),
        "int32": base.astype(numpy.int32),
        "read-only": numpy.frombuffer(base.tobytes()).reshape(base.shape),
    }


@pytest.mark.parametrize("src", sorted(_numpy_sources()))
@pytest.mark.parametrize("how", ["asarray", "array", "array C", "array F",
                                 "array A", "array f", "asarray f4", "array ndmin"])
def test_numpy_arrays_come_in_with_numpys_layout_and_values(src, how):
    # A big NumPy array already laid out as the result is copied once into
    # the store (not by NumPy first); any other goes through NumPy's rules.
    def make(m, a):
        return {"asarray": lambda: m.asarray(a),
                "array": lambda: m.array(a),
                "array C": lambda: m.array(a, order="C"),
                "array F": lambda: m.array(a, order="F"),
                "array A": lambda: m.array(a, order="A"),
                "array f": lambda: m.array(a, order="f"),  # NumPy's lowercase
                "asarray f4": lambda: m.asarray(a, dtype=numpy.float32),
                "array ndmin": lambda: m.array(a, ndmin=a.ndim + 1)}[how]()
    a = _numpy_sources()[src]
    want, got = make(numpy, a.copy(order="K")), make(cp, a)
    # Stores hold native elements: a big-endian array comes in as native.
    assert got.dtype == want.dtype.newbyteorder("=") and got.shape == want.shape
    assert [s for s, n in zip(got.strides, got.shape) if n > 1] == \
        [s for s, n in zip(want.strides, want.shape) if n > 1]
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    if a.flags.writeable:  # ours is a copy: a later write to the source stays there
        keep = numpy.asarray(got).copy()
        a[...] = -1
        numpy.testing.assert_array_equal(numpy.asarray(got + 0), keep)


@pytest.mark.parametrize("view", [
    lambda a: a, lambda a: a[3:40], lambda a: a[::-3], lambda a: a.reshape(40, 50)[5:, ::2],
    lambda a: a.reshape(40, 50).T, lambda a: a.reshape(40, 50)[:, 7],
    lambda a: a.reshape(2, 20, 50)[1, ::-1, 3:9]])
@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64", "bool"])
def test_export_of_a_computed_array_is_a_view_of_its_store(view, dtype):
    # np.asarray of a computed array (C: fast.cpp sharedExport, and
    # ndarray._shared): its elements in the store's memory, without a copy,
    # writable as NumPy's own view would be.
    x0 = numpy.arange(2000).astype(dtype)
    want = view(x0 + x0)
    x = cp.asarray(x0) + cp.asarray(x0)
    v = view(x)
    for a in (numpy.asarray(v), numpy.array(v, copy=False), v.__array__()):
        numpy.testing.assert_array_equal(a, want)
        assert a.shape == want.shape and a.dtype == want.dtype
        assert a.strides == want.strides and a.flags.writeable
        assert numpy.shares_memory(a, numpy.asarray(x))
    r = numpy.asarray(cp.broadcast_to(v, (2,) + v.shape))  # read-only as NumPy's
    assert not r.flags.writeable
    numpy.testing.assert_array_equal(r[1], want)
    x += x  # the store is lent: this write goes to new memory
    numpy.testing.assert_array_equal(numpy.asarray(view(x)), view((x0 + x0) + (x0 + x0)))


@pytest.mark.parametrize("dtype", ["float64", "int16", "complex128", "bool"])
def test_export_of_a_small_eager_array_is_a_copy(dtype):
    # np.asarray of a whole array below the eager threshold (C: fast.cpp
    # eagerExport, and ndarray._numpy): a C-order copy of NumPy's elements.
    x0 = (numpy.arange(60) % 7).astype(dtype).reshape(6, 10)
    x = cp.asarray(x0) + cp.asarray(x0)
    a = numpy.asarray(x)
    numpy.testing.assert_array_equal(a, x0 + x0)
    assert a.dtype == x0.dtype and a.flags.c_contiguous and a.flags.writeable
    if x._base.np is not None:  # eager (else the store is lent: shared)
        a[0, 0] = 1
        numpy.testing.assert_array_equal(numpy.asarray(x), x0 + x0)
