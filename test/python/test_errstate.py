"""np.errstate for compiled code: the same RuntimeWarnings, FloatingPointErrors
and silence as NumPy, per ufunc, for arrays that run compiled."""

import warnings

import numpy
import pytest

import cpnumeric as np

N = 5000  # compiled at any eager threshold up to N


def _warnings(f):
    """The RuntimeWarning messages f() emits, in a set."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f()
    return {str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)}


def _case(values, dtype="f8"):
    """An N-element array of `values` repeated, for NumPy and cpnumeric."""
    a = numpy.resize(numpy.array(values, dtype=dtype), N)
    return a, np.array(a)


UNARY = [
    ("log", [1.0, 0.0, -1.0]),
    ("log", [1.0, 2.0]),
    ("log2", [0.0, 3.0]),
    ("log10", [-2.0, 3.0]),
    ("log1p", [-1.0, 0.5]),
    ("log1p", [-2.0, 0.5]),
    ("sqrt", [-1.0, 4.0]),
    ("sqrt", [numpy.nan, 4.0]),
    ("exp", [1000.0, 1.0]),
    ("exp", [numpy.inf, 1.0]),
    ("exp2", [5000.0]),
    ("expm1", [1000.0]),
    ("sinh", [1000.0]),
    ("cosh", [-1000.0]),
    ("square", [1e200, 2.0]),
    ("reciprocal", [0.0, 2.0]),
    ("sin", [numpy.inf, 1.0]),
    ("cos", [-numpy.inf]),
    ("tan", [numpy.inf]),
    ("arcsin", [2.0, 0.5]),
    ("arccos", [-3.0]),
    ("arccosh", [0.5, 2.0]),
    ("arctanh", [1.0, 0.5]),
    ("arctanh", [2.0]),
    ("absolute", [numpy.nan, -numpy.inf]),
    ("negative", [numpy.nan]),
]


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("name,values", UNARY)
def test_unary_warnings_match_numpy(name, values, dtype):
    a, x = _case(values, dtype)
    want = _warnings(lambda: getattr(numpy, name)(a))
    got = _warnings(lambda: np.asnumpy(getattr(np, name)(x)))
    assert got == want


BINARY = [
    ("divide", [1.0, -1.0, 2.0], [0.0, 0.0, 1.0]),
    ("divide", [0.0, 1.0], [0.0, 2.0]),
    ("divide", [numpy.inf, 1.0], [numpy.inf, 2.0]),
    ("divide", [numpy.inf, numpy.nan], [0.0, 0.0]),
    ("divide", [1e308], [1e-308]),
    ("floor_divide", [1.0, 3.0], [0.0, 2.0]),
    ("floor_divide", [0.0], [0.0]),
    ("remainder", [1.0, 3.0], [0.0, 2.0]),
    ("fmod", [1.0], [0.0]),
    ("power", [0.0, 2.0], [-1.0, 3.0]),
    ("power", [-8.0], [0.5]),
    ("power", [10.0], [400.0]),
    ("multiply", [1e308, 2.0], [10.0, 3.0]),
    ("multiply", [numpy.inf], [0.0]),
    ("add", [numpy.inf, 1.0], [-numpy.inf, 1.0]),
    ("add", [1.7e308], [1.7e308]),
    ("subtract", [numpy.inf], [numpy.inf]),
    ("subtract", [numpy.nan], [1.0]),
    ("hypot", [1e308], [1e308]),
    ("maximum", [numpy.nan, 1.0], [1.0, numpy.nan]),
    ("minimum", [numpy.nan], [numpy.inf]),
    ("less", [numpy.nan], [1.0]),
    ("arctan2", [numpy.inf], [numpy.inf]),
]


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("name,xs,ys", BINARY)
def test_binary_warnings_match_numpy(name, xs, ys, dtype):
    a, x = _case(xs, dtype)
    b, y = _case(ys, dtype)
    want = _warnings(lambda: getattr(numpy, name)(a, b))
    got = _warnings(lambda: np.asnumpy(getattr(np, name)(x, y)))
    assert got == want


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divide"])
@pytest.mark.parametrize("dtype", ["i8", "i4", "u2"])
def test_integer_division_by_zero(name, dtype):
    a, x = _case([7, 1, 3], dtype)
    b, y = _case([0, 1, 2], dtype)
    want = _warnings(lambda: getattr(numpy, name)(a, b))
    got = _warnings(lambda: np.asnumpy(getattr(np, name)(x, y)))
    assert got == want and want


@pytest.mark.parametrize("values,to", [
    ([numpy.nan, 1.0], "i8"), ([numpy.inf], "i4"), ([1.5, 2.0], "i8"),
    ([1e300, 1.0], "f4"), ([1e10], "f2"), ([1.0], "f4"), ([numpy.nan], "f4")])
def test_cast_warnings_match_numpy(values, to):
    a, x = _case(values)
    want = _warnings(lambda: a.astype(to))
    got = _warnings(lambda: np.asnumpy(x.astype(to)))
    assert got == want


def test_float16_overflow():
    a, x = _case([60000.0, 1.0], "f2")
    want = _warnings(lambda: a * a)
    got = _warnings(lambda: np.asnumpy(x * x))
    assert got == want and want


def test_fused_chain_reports_each_op_once():
    a, x = _case([0.0, -1.0, 2.0])
    f = lambda m, v: m.exp(m.sqrt(v) + 1.0 / v) * 2.0  # noqa: E731
    want = _warnings(lambda: f(numpy, a))
    got = _warnings(lambda: np.asnumpy(f(np, x)))
    assert got == want
    assert "divide by zero encountered in divide" in got


def test_where_masked_errors_are_still_reported():
    # NumPy computes log(x) everywhere, then selects: it warns, so do we.
    a, x = _case([0.0, -1.0, 2.0])
    want = _warnings(lambda: numpy.where(a > 0, numpy.log(a), 0.0))
    got = _warnings(lambda: np.asnumpy(np.where(x > 0, np.log(x), 0.0)))
    assert got == want and want


def test_clean_data_is_silent():
    a, x = _case([1.0, 2.0, 3.5])
    got = _warnings(lambda: np.asnumpy(np.log(x) / x + np.sqrt(x) * np.exp(x)))
    assert got == set()


def test_one_bad_element_among_many():
    a = numpy.ones(1 << 20)
    a[777777] = 0.0
    x = np.array(a)
    got = _warnings(lambda: np.asnumpy(1.0 / x))
    assert got == {"divide by zero encountered in divide"}
    a2 = numpy.ones((1024, 1024))
    a2[1000, 3] = -1.0
    got = _warnings(lambda: np.asnumpy(np.sqrt(np.array(a2)).sum(axis=1)))
    assert got == {"invalid value encountered in sqrt"}


def test_ignore_silences():
    a, x = _case([0.0, -1.0])
    with np.errstate(all="ignore"):
        got = _warnings(lambda: np.asnumpy(np.log(x) / x))
    assert got == set()
    with np.errstate(divide="ignore"):
        got = _warnings(lambda: np.asnumpy(np.log(x)))
    assert got == {"invalid value encountered in log"}


def test_ignored_inside_reported_outside_with_block_actions():
    a, x = _case([0.0, 1.0])
    with np.errstate(divide="ignore"):
        y = 1.0 / x  # recorded inside: ignored, even when read later
    z = 1.0 / x  # recorded outside: warns
    got = _warnings(lambda: (np.asnumpy(y), np.asnumpy(z)))
    assert got == {"divide by zero encountered in divide"}
    with np.errstate(divide="ignore"):
        w = 1.0 / x
    assert _warnings(lambda: np.asnumpy(w)) == set()


def test_raise_at_the_statement():
    a, x = _case([0.0, 1.0])
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            x2 = 1.0 / x  # noqa: F841
        y = np.sqrt(x)  # fine: no error
    assert np.asnumpy(y)[1] == 1.0
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt"):
            np.sqrt(x - 2.0)


def test_errstate_as_decorator_and_nested():
    a, x = _case([0.0, 1.0])

    @np.errstate(all="raise")
    def f(v):
        return np.log(v)

    with pytest.raises(FloatingPointError):
        f(x)
    with np.errstate(all="ignore"):
        with np.errstate(divide="warn"):
            got = _warnings(lambda: np.asnumpy(np.log(x - 1.0)))
        assert got == {"divide by zero encountered in log"}
        assert _warnings(lambda: np.asnumpy(np.log(x - 1.0))) == set()
    assert np.geterr() == numpy.geterr()


def test_seterr():
    a, x = _case([0.0, 1.0])
    old = np.seterr(divide="ignore")
    try:
        assert old["divide"] == "warn"
        assert numpy.geterr()["divide"] == "ignore"
        assert _warnings(lambda: np.asnumpy(1.0 / x)) == set()
    finally:
        np.seterr(**old)
    assert _warnings(lambda: np.asnumpy(1.0 / x)) == {
        "divide by zero encountered in divide"}


def test_call_mode():
    a, x = _case([0.0, 1.0])
    seen = []
    with np.errstate(call=lambda kind, flag: seen.append(kind), divide="call"):
        np.asnumpy(1.0 / x)
    assert seen == ["divide by zero"]


def test_jit_reports():
    @np.jit
    def f(v):
        return np.log(v) * 2.0

    a, x = _case([0.0, 1.0])
    for _ in range(2):  # traced, then run from the captured trace
        assert _warnings(lambda: np.asnumpy(f(x))) == {
            "divide by zero encountered in log"}
    with np.errstate(divide="ignore"):
        assert _warnings(lambda: np.asnumpy(f(np.array(a + 1.0)))) == set()


def test_checks_are_in_the_trace_key():
    # The same program under two error states compiles to two kernels and
    # each keeps its own behaviour.
    a, x = _case([0.0, 1.0])
    for _ in range(2):
        with np.errstate(divide="ignore"):
            assert _warnings(lambda: np.asnumpy(np.log(x))) == set()
        assert _warnings(lambda: np.asnumpy(np.log(x))) == {
            "divide by zero encountered in log"}


def test_warning_points_at_user_code():
    a, x = _case([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.asnumpy(np.log(x))
    assert caught and caught[0].filename == __file__


def _slices(shape, nan_rows):
    """A float array of `shape` (N elements or more, so compiled) whose rows
    in `nan_rows` are all NaN and whose others have NaNs and numbers."""
    a = numpy.resize(numpy.array([numpy.nan, 1.5, -2.0, numpy.nan, 4.0]), shape)
    a[nan_rows] = numpy.nan
    return a


def _scalar_named(messages):
    """NumPy names the ops of its scalar results "scalar divide"; ours run
    on 0-d arrays."""
    return {m.replace("in scalar ", "in ") for m in messages}


@pytest.mark.parametrize("name,kwargs", [
    ("nanmin", {}), ("nanmax", {}), ("nanmean", {}), ("nanvar", {}),
    ("nanstd", {"ddof": 1}), ("nanmedian", {}), ("nanpercentile", {"q": 30}),
    ("nanquantile", {"q": [0.2, 0.9]}), ("nansum", {})])
@pytest.mark.parametrize("axis,nan_rows", [(1, [3]), (0, slice(None)), (None, slice(None)),
                                           (1, []), (None, [])])
def test_library_warnings_of_nan_functions(name, kwargs, axis, nan_rows):
    """NumPy's "All-NaN slice encountered", "Mean of empty slice", "Degrees of
    freedom <= 0 for slice." of pending work: reported at the sync point, and
    nothing else (the NaN results' own divisions are quiet)."""
    a = _slices((50, 200), nan_rows)
    ca = np.array(a) + 0.0  # pending work: the warning waits for a sync point
    kwargs = dict(kwargs)
    args = (kwargs.pop("q"),) if "q" in kwargs else ()
    want = _warnings(lambda: getattr(numpy, name)(a, *args, axis=axis, **kwargs))
    got = _warnings(lambda: numpy.asarray(getattr(np, name)(ca, *args, axis=axis, **kwargs)))
    assert got == want


@pytest.mark.parametrize("name,shape,kwargs", [
    ("mean", (0,), {}), ("mean", (0, 3), {"axis": 0}), ("mean", (0, 3), {"axis": 1}),
    ("var", (0,), {}), ("std", (2, 0), {"axis": 1}), ("var", (1,), {"ddof": 1}),
    ("var", (N,), {"ddof": N}), ("median", (0,), {}), ("average", (0,), {}),
    ("cov", (1,), {}), ("cov", (3, 1), {}), ("mean", (N,), {}), ("std", (N, 2), {"axis": 0})])
def test_library_warnings_of_empty_slices(name, shape, kwargs):
    a = numpy.ones(shape)
    want = _scalar_named(_warnings(lambda: getattr(numpy, name)(a, **kwargs)))
    got = _warnings(lambda: numpy.asarray(getattr(np, name)(np.array(a), **kwargs)))
    assert got == want


def test_mean_where_empty_slices():
    a = numpy.arange(2.0 * N).reshape(2, N)
    w = numpy.zeros((2, N), bool)
    w[0, 3] = True
    want = _warnings(lambda: numpy.mean(a, axis=1, where=w))
    got = _warnings(lambda: numpy.asarray(np.mean(np.array(a), axis=1, where=np.array(w))))
    assert got == want


def test_library_warning_waits_for_the_sync_point():
    ca = np.array(_slices((50, 200), [0])) * 2.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = np.nanmax(ca, axis=1)
        assert not caught  # no sync at the call
        r = numpy.asarray(r)
    assert [str(w.message) for w in caught] == ["All-NaN slice encountered"]
    assert caught[0].filename == __file__
    assert numpy.isnan(r[0]) and r[1] == 4.0 * 2


def test_numpys_own_errstate_is_followed():
    """numpy.errstate / numpy.seterr change NumPy's state without telling
    cpnumeric: recording notices (NumPy's error-state ContextVar changed) and
    takes the new state, in the C path of ufunc calls too."""
    a, x = _case([0.0, 1.0])
    for _ in range(2):  # the second time through the C path (cached loop)
        with numpy.errstate(all="ignore"):
            with np.errstate(all="ignore"):
                pass
        # numpy's block is over: NumPy's default state (warn) again
        assert _warnings(lambda: np.asnumpy(1.0 / x)) == {"divide by zero encountered in divide"}
        with numpy.errstate(divide="ignore"):
            assert _warnings(lambda: np.asnumpy(1.0 / x)) == set()
        with pytest.raises(FloatingPointError):
            with numpy.errstate(divide="raise"):
                np.asnumpy(1.0 / x)


def test_synchronize_reports_pending_errors_once():
    """synchronize() with nothing left to run returns at once
    (_cpn.sync_if_idle); with work or reports pending it runs the work and
    warns as np.errstate says, once."""
    np.synchronize()
    np.synchronize()  # idle: nothing happens
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            np.ones(N) / np.zeros(N)  # run at the op, as NumPy raises
        np.synchronize()  # reported once: idle again
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = np.log(np.zeros(N))  # recorded: warned when it runs
        np.synchronize()
        np.synchronize()
    assert len([m for m in w if "divide by zero" in str(m.message)]) == 1
    assert float(y[0]) == -numpy.inf
