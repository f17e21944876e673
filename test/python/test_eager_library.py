"""The eager path of library functions (python/cpnumeric/_eager.py): on small
arrays a cpnumeric function is NumPy's own, with NumPy's results, views and
errors, and nothing is recorded; traced arguments take the traced path. Also
the C element access of eager arrays and loop-aligned window cuts."""

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core


def _threshold(n):
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = n
    yield
    _core.EAGER["threshold"] = old


@pytest.fixture
def eager():
    yield from _threshold(4096)


def _inputs(dtype):
    rng = numpy.random.default_rng(7)
    base = rng.normal(size=(6, 8)) * 4
    return {
        "matrix": base.astype(dtype),
        "strided": base.astype(dtype)[::2, ::-3],
        "transposed": base.astype(dtype).T,
        "vector": base.astype(dtype)[1],
        "empty": numpy.zeros((0, 3), dtype),
        "zero_d": numpy.asarray(base[0, 0]).astype(dtype),
    }


CALLS = [
    ("sum", lambda np, a: np.sum(a)),
    ("sum_axis", lambda np, a: np.sum(a, axis=-1)),
    ("mean", lambda np, a: np.mean(a, axis=0)),
    ("max_method", lambda np, a: a.max() if a.size else a.sum()),
    ("argsort", lambda np, a: np.argsort(a, axis=None)),
    ("sort", lambda np, a: np.sort(a, axis=-1)),
    ("cumsum", lambda np, a: np.cumsum(a)),
    ("concatenate", lambda np, a: np.concatenate([a, a], axis=0)),
    ("stack", lambda np, a: np.stack([a, a])),
    ("where", lambda np, a: np.where(a > 0, a, 0)),
    ("clip", lambda np, a: np.clip(a, -1, 2)),
    ("diff", lambda np, a: np.diff(a, axis=0) if a.ndim else a),
    ("unique", lambda np, a: np.unique(a)),
    ("nonzero", lambda np, a: np.nonzero(a) if a.ndim else a),
    ("copy", lambda np, a: a.copy()),
    ("astype", lambda np, a: a.astype(numpy.float32)),
    ("round", lambda np, a: np.round(a, 1)),
    ("isclose", lambda np, a: np.isclose(a, a * 1.0)),
    ("median", lambda np, a: np.median(a) if a.size else a.sum()),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if isinstance(want, numpy.ndarray):
        assert isinstance(got, cp.ndarray)
        got = cp.asnumpy(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        numpy.testing.assert_array_equal(got, want)
    else:
        assert type(got) is type(want)
        numpy.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name,f", CALLS, ids=[c[0] for c in CALLS])
def test_eager_calls_give_numpys_results_and_record_nothing(eager, dtype, name, f):
    for kind, a0 in _inputs(dtype).items():
        a = cp.array(a0)
        if kind == "strided":
            a = cp.array(_inputs(dtype)["matrix"])[::2, ::-3]
        elif kind == "transposed":
            a = cp.array(_inputs(dtype)["matrix"]).T
        try:
            want = f(numpy, a0)
        except Exception as e:  # NumPy's error, raised by the same call
            with pytest.raises(type(e)):
                f(cp, a)
            continue
        cp.reset_stats()
        got = f(cp, a)
        s = cp.stats()
        assert s["ops_recorded"] == 0, (kind, s["ops_recorded"])
        assert s["eager_calls"] >= 1 or got is a
        _same(got, want)


def test_out_is_the_array_passed_and_writes_reach_its_base(eager):
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.array(a0)
    o = cp.zeros((3, 4))
    whole = o
    r = cp.cumsum(a, axis=1, out=o)
    assert r is o
    row = o[1]
    r = cp.clip(a, 2, 5, out=o)
    assert r is o
    numpy.testing.assert_array_equal(cp.asnumpy(whole), numpy.clip(a0, 2, 5))
    numpy.testing.assert_array_equal(cp.asnumpy(row), numpy.clip(a0, 2, 5)[1])


def test_views_numpy_returns_are_views_of_the_base(eager):
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.array(a0)
    f = cp.flip(a, axis=1)
    f[0, 0] = -5.0  # NumPy's flip is a view: the write reaches a
    a0[0, -1] = -5.0
    numpy.testing.assert_array_equal(cp.asnumpy(a), a0)
    d = cp.diagonal(a)  # read-only, as NumPy's
    numpy.testing.assert_array_equal(cp.asnumpy(d), numpy.diagonal(a0))
    with pytest.raises(ValueError):
        d[0] = 1.0
    a[1, 1] = 9.0
    assert float(d[1]) == 9.0


def test_numpy_inputs_are_not_aliased(eager):
    n0 = numpy.arange(10.0)
    r = cp.flip(n0)
    assert isinstance(r, cp.ndarray)
    n0[:] = 0.0
    numpy.testing.assert_array_equal(cp.asnumpy(r), numpy.arange(10.0)[::-1])
    s = cp.asarray(n0)
    n0[0] = 7.0
    assert float(s[0]) == 0.0


def test_in_place_functions_write_eager_arrays(eager):
    a0 = numpy.arange(10.0)
    a = cp.array(a0)
    v = a[::2]
    cp.copyto(v, 3.0)
    cp.put(a, [1, 3], [-1.0, -2.0])
    cp.putmask(a, a > 8, 0.0)
    numpy.copyto(a0[::2], 3.0)
    numpy.put(a0, [1, 3], [-1.0, -2.0])
    numpy.putmask(a0, a0 > 8, 0.0)
    numpy.testing.assert_array_equal(cp.asnumpy(a), a0)
    ro = cp.broadcast_to(a, (2, 10))
    with pytest.raises(ValueError):
        cp.copyto(ro, 1.0)
    a.sort()
    a0.sort()
    numpy.testing.assert_array_equal(cp.asnumpy(a), a0)


def test_errors_are_numpys(eager):
    a = cp.array(numpy.arange(6.0))
    with pytest.raises(numpy.exceptions.AxisError):
        cp.sum(a, axis=3)
    with pytest.raises(ValueError):
        cp.concatenate([a, cp.ones((2, 2))])
    with pytest.raises(TypeError):
        a[0] = 1j
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(IndexError):
        a[-7] = 1.0


def test_traced_arguments_take_the_traced_path(eager):
    small = cp.array(numpy.arange(10.0))
    big = cp.ones(10_000)
    cp.reset_stats()
    r = cp.concatenate([small, big])
    assert cp.stats()["ops_recorded"] > 0
    assert r.shape == (10_010,)
    assert float(r.sum()) == 45.0 + 10_000


def test_creation_is_eager_when_small_and_traced_when_large(eager):
    cp.reset_stats()
    for r, want in [(cp.arange(5, 50, 3), numpy.arange(5, 50, 3)),
                    (cp.linspace(0, 1, 7), numpy.linspace(0, 1, 7)),
                    (cp.eye(4, 3, k=1), numpy.eye(4, 3, k=1)),
                    (cp.zeros((2, 3), "int32"), numpy.zeros((2, 3), "int32")),
                    (cp.arange(0.5, 3.0, 0.25, dtype="float32"),
                     numpy.arange(0.5, 3.0, 0.25, dtype="float32"))]:
        _same(r, want)
    assert cp.stats()["ops_recorded"] == 0
    big = cp.arange(100_000)
    assert cp.stats()["ops_recorded"] > 0
    assert int(big[-1]) == 99_999


def test_element_access_of_eager_arrays_in_c(eager):
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.array(a0)
    cp.reset_stats()
    for i in range(3):
        for j in range(4):
            a[i, j] = a[i, j] * 2 + 1
    a0 = a0 * 2 + 1
    numpy.testing.assert_array_equal(cp.asnumpy(a), a0)
    assert type(a[1, 2]) is numpy.float64
    b = cp.array(numpy.arange(5, dtype="int32"))
    b[2] = 7
    assert b[2] == 7 and type(b[2]) is numpy.int32
    with pytest.raises(OverflowError):
        b[0] = 2 ** 40
    v = a[::-1]
    v[0, 0] = -1.0
    assert float(a[2, 0]) == -1.0
    assert cp.stats()["ops_recorded"] == 0


@pytest.fixture
def traced():
    yield from _threshold(0)


def test_loop_windows_cut_at_iteration_boundaries(traced):
    """x = f(x) in a loop, without statements: its windows are cut at a
    multiple of the loop body's length, so they are one kernel."""
    x0 = numpy.linspace(0.0, 1.0, 3000)
    x, y = cp.array(x0), cp.zeros(3000)
    y0 = numpy.zeros(3000)
    cp.synchronize()
    cp.reset_stats()
    for k in range(120):  # 13 ops per iteration, ~6 windows
        y = 0.5 * y + cp.sin(x * 3.0 + k * 0.001) * cp.exp(-x) - x * x * 0.25
        y0 = 0.5 * y0 + numpy.sin(x0 * 3.0 + k * 0.001) * numpy.exp(-x0) - x0 * x0 * 0.25
    numpy.testing.assert_allclose(cp.asnumpy(y), y0, rtol=1e-12)
    s = cp.stats()
    assert s["flushes"] >= 5
    assert s["compilations"] <= 3, s


def test_loop_windows_of_a_long_body_repeat(traced):
    """out = f(x, k) in a loop whose body is longer than a third of a
    window (160 ops with the scalars' views, an inner loop of 8-op bodies,
    no statement that writes an array): the window grows until the outer
    body shows, and the windows are then cut at its length, one kernel for
    all of them (they drifted through the body, each window a new kernel:
    Black-Scholes with a new rate each step)."""
    x0 = numpy.linspace(0.0, 1.0, 2000)
    x = cp.array(x0)
    cp.synchronize()
    cp.reset_stats()

    def body(m, x, k):
        y = x
        for j in range(20):  # five ops each, and the result's
            y = y * 0.5 + m.sin(x + j * 0.01) - (k + 0.5) * 0.001
        return y

    outs = []
    for k in range(24):
        out = body(cp, x, k)
        if k % 8 == 7:
            outs.append(out)
    for got, k in zip(outs, (7, 15, 23)):
        numpy.testing.assert_allclose(cp.asnumpy(got), body(numpy, x0, k), rtol=1e-12)
    s = cp.stats()
    assert s["flushes"] >= 8
    # The first window (512 ops), the one realigned to a body's end, then
    # one body each: 3 (the fixed cuts made 6 or more).
    assert s["compilations"] <= 4, s


def test_small_views_of_computed_arrays_are_read_and_written_by_numpy(eager):
    """A row or column of a computed traced array is read by NumPy's loops
    in place, and a small write into an array nothing else refers to goes
    straight into its store: the loop records nothing."""
    A0 = numpy.zeros((300, 100))
    x0 = numpy.linspace(0, 1, 100)
    A, x = cp.array(A0), cp.array(x0)
    row = A[5]  # a view taken before the writes sees them
    cp.synchronize()
    cp.reset_stats()
    for i in range(1, 300):
        A[i, :] = cp.sin(x * (i + 1)) + 0.5 * A[i - 1, :]
        A0[i, :] = numpy.sin(x0 * (i + 1)) + 0.5 * A0[i - 1, :]
    assert cp.stats()["ops_recorded"] == 0
    numpy.testing.assert_array_equal(cp.asnumpy(A), A0)
    numpy.testing.assert_array_equal(cp.asnumpy(row), A0[5])
    out0 = numpy.zeros(100)
    out = cp.zeros(100)
    for j in range(100):
        out[j] = cp.sqrt((A[:, j] ** 2).sum())
        out0[j] = numpy.sqrt((A0[:, j] ** 2).sum())
    numpy.testing.assert_array_equal(cp.asnumpy(out), out0)
    assert cp.stats()["ops_recorded"] == 0


def test_writes_into_a_shared_computed_store_are_recorded(eager):
    A0 = numpy.arange(20000.0).reshape(200, 100)
    A = cp.array(A0)
    cp.synchronize()
    C = A + 0.0  # pending: it reads A's current value
    A[3, :] = -1.0
    A0_before = A0.copy()
    A0[3, :] = -1.0
    numpy.testing.assert_array_equal(cp.asnumpy(C), A0_before)
    numpy.testing.assert_array_equal(cp.asnumpy(A), A0)
    ro = A.T  # a read-only view stays read-only
    ro2 = cp.broadcast_to(A[0], (3, 100))
    with pytest.raises(ValueError):
        ro2[0, :] = 1.0
    del ro


def test_a_small_array_left_pending_is_computed_at_its_next_scalar_write(eager):
    """`out[j] = f(A[:, j])` with A pending on much work (above the ~2^21
    element-ops a write reads at once) makes `out` pending once; its next
    scalar write runs that window, and the loop's later writes go into its
    store instead of each recording an update."""
    A0 = numpy.arange(float(1 << 21)).reshape(-1, 8) / 1e3
    A = cp.asarray(A0) / 1.0  # pending, above the eager threshold
    out, out0 = cp.zeros(8), numpy.zeros(8)
    out[0] = cp.sqrt((A[:, 0] ** 2).sum())  # a traced value: recorded
    out0[0] = numpy.sqrt((A0[:, 0] ** 2).sum())
    before = cp.stats()["flushes"]
    recorded = cp.stats()["ops_recorded"]
    for j in range(1, 8):
        out[j] = float(j)
        out0[j] = float(j)
    assert cp.stats()["flushes"] == before + 1
    assert cp.stats()["ops_recorded"] == recorded
    numpy.testing.assert_array_equal(cp.asnumpy(out), out0)
    # On little work the first write reads its value at once (a sync): no
    # later write flushes, none records.
    A = cp.asarray(A0[:1000]) / 1.0
    out, out0 = cp.zeros(8), numpy.zeros(8)
    out[0] = cp.sqrt((A[:, 0] ** 2).sum())
    out0[0] = numpy.sqrt((A0[:1000, 0] ** 2).sum())
    before = cp.stats()["flushes"]
    recorded = cp.stats()["ops_recorded"]
    for j in range(1, 8):
        out[j] = cp.sqrt((A[:, j] ** 2).sum())
        out0[j] = numpy.sqrt((A0[:1000, j] ** 2).sum())
    assert cp.stats()["flushes"] == before
    assert cp.stats()["ops_recorded"] == recorded
    numpy.testing.assert_allclose(cp.asnumpy(out), out0, rtol=1e-15)


METHOD_CALLS = [
    lambda np, a, i: np.sort(a),
    lambda np, a, i: np.sort(a, axis=None),
    lambda np, a, i: np.sort(a, 0, kind="stable"),
    lambda np, a, i: np.partition(a, 2),
    lambda np, a, i: np.partition(a, 1, axis=None),
    lambda np, a, i: np.partition(a, 1, 0),
    lambda np, a, i: np.take(a, i),
    lambda np, a, i: np.take(a, i, axis=-1, mode="wrap"),
    lambda np, a, i: np.cumsum(a, axis=0),
    lambda np, a, i: np.cumprod(a, dtype="float64"),
    lambda np, a, i: np.argsort(a, kind="stable"),
    lambda np, a, i: np.argpartition(a, 1),
    lambda np, a, i: np.searchsorted(np.sort(a, axis=None), a[..., :1].ravel()),
    lambda np, a, i: np.nonzero(a > 0),
    lambda np, a, i: np.argmax(a, axis=-1, keepdims=True),
    lambda np, a, i: np.argmin(a),
]


@pytest.mark.parametrize("k", range(len(METHOD_CALLS)))
@pytest.mark.parametrize("layout", ["matrix", "transposed", "strided", "vector"])
def test_functions_called_as_numpys_methods(k, layout, eager):
    # python/src/eager.cpp callAsMethod: np.take(a, ...) runs as a.take(...),
    # np.sort(a) as a copy sorted in place (axis=None as NumPy's function),
    # with NumPy's results and layouts, eager, nothing recorded.
    f = METHOD_CALLS[k]
    a = _inputs("float64")[layout]
    i = numpy.array([0, 2, -1, 1])
    want = f(numpy, a, i)
    cp.reset_stats()
    got = f(cp, cp.asarray(a), cp.asarray(i))
    assert cp.stats()["ops_recorded"] == 0
    for g, w in zip(got if isinstance(want, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        g = numpy.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        if k in (3, 4, 5, 11):  # partitions: the kth places and the sides
            numpy.testing.assert_array_equal(numpy.sort(g, axis=None),
                                             numpy.sort(w, axis=None))
        else:
            numpy.testing.assert_array_equal(g, w)


def test_put_as_numpys_method_writes_the_eager_array(eager):
    a = numpy.arange(10.0)
    c = cp.asarray(a)
    numpy.put(a, [1, -1, 3], [7.0, 8.0])
    cp.put(c, cp.asarray([1, -1, 3]), [7.0, 8.0])
    numpy.testing.assert_array_equal(numpy.asarray(c), a)
    with pytest.raises(IndexError):
        cp.put(c, [20], 1.0)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "uint64", "bool"])
def test_eager_unique_of_integers_is_numpys(eager, dtype):
    # The values alone come from a sort and a mask (NumPy's hash table is
    # slower); every other form is NumPy's own call. Same values, dtype and
    # shape either way.
    rng = numpy.random.default_rng(11)
    for shape, hi in (((1000,), 7), ((40, 50), 300), ((3000,), 3000), ((5,), 1), ((0,), 2),
                      ((), 5)):
        a0 = rng.integers(0, hi, shape).astype(dtype)
        for view in (lambda x: x, lambda x: x[::-2] if x.ndim else x):
            x0 = view(a0)
            x = view(cp.array(a0))
            calls = [lambda np, x: np.unique(x),
                     lambda np, x: np.unique(x, return_counts=True),
                     lambda np, x: np.unique(x, return_index=True, return_inverse=True),
                     lambda np, x: np.unique(x, equal_nan=False)]
            if x0.ndim == 2:
                calls.append(lambda np, x: np.unique(x, axis=0))
            for f in calls:
                cp.reset_stats()
                got = f(cp, x)
                assert cp.stats()["ops_recorded"] == 0
                _same(got, f(numpy, x0))


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_eager_set_functions_are_numpys(eager, name):
    rng = numpy.random.default_rng(12)
    f_np, f_cp = getattr(numpy, name), getattr(cp, name)
    pairs = [(rng.integers(0, 50, 300), rng.integers(20, 80, 200)),
             (rng.integers(0, 9, (6, 7)).astype(numpy.int8), rng.integers(0, 9, 11)),
             (rng.integers(0, 9, 30).astype(numpy.int32), rng.integers(0, 9, 12)),
             (rng.integers(0, 9, 30).astype(numpy.uint8), rng.random(12) * 9),
             (rng.random(40).round(1), rng.random(30).round(1)),
             (numpy.array([True, False, True]), numpy.array([True])),
             (numpy.zeros(0, numpy.int64), rng.integers(0, 5, 4)),
             (numpy.zeros(0, numpy.int64), numpy.zeros(0, numpy.int64)),
             (numpy.arange(10)[::-3], numpy.arange(4))]
    for a0, b0 in pairs:
        forms = [lambda f, a, b: f(a, b)]
        if name != "union1d":
            forms.append(lambda f, a, b: f(numpy.unique(a) if isinstance(a, numpy.ndarray)
                                           else cp.unique(a), b, assume_unique=True))
        if name == "intersect1d":
            forms.append(lambda f, a, b: f(a, b, return_indices=True))
        for form in forms:
            want = form(f_np, a0, b0)
            cp.reset_stats()
            got = form(f_cp, cp.array(a0), cp.array(b0))
            assert cp.stats()["ops_recorded"] == 0
            _same(got, want)
    _same(f_cp([3, 1, 2, 3], [2, 5]), f_np([3, 1, 2, 3], [2, 5]))  # lists
