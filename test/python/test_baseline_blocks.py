"""The baseline tier computes runs of elementwise ops over big arrays a block
of rows at a time (CPN_BASELINE_BLOCK): the same values as op by op over the
whole arrays, bit for bit, and temporaries of a block's size."""

import tracemalloc

import numpy
import pytest

import cpnumeric as np
from cpnumeric import _baseline


@pytest.fixture(params=[1, 3])
def block(baseline, request):
    """Blocks of 8 elements, so that small arrays take several blocks, on
    one thread and on three."""
    old, threads = _baseline._BLOCK, np._cpn.kernel_threads()
    # no window on the compiler thread: a run then takes every thread
    background = np._cpn.set_background_compile(False)
    np._cpn.wait_compiles()
    np.synchronize()
    _baseline._BLOCK = 8
    np._cpn.set_kernel_threads(request.param)
    yield request.param
    _baseline._BLOCK = old
    np._cpn.set_kernel_threads(threads)
    np._cpn.set_background_compile(background)


def _both(f, *arrays):
    """f on NumPy arrays and on cpnumeric's (every window in the baseline
    tier), and f with blocks off: the three must agree bit for bit."""
    ref = f(numpy, *arrays)
    runs = list(_baseline.BLOCKED_RUNS)
    got = f(np, *[np.asarray(a.copy()) for a in arrays])
    got = [numpy.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
    assert _baseline.BLOCKED_RUNS[0] > runs[0], "no run was computed in blocks"
    if np._cpn.kernel_threads() > 1:
        assert _baseline.BLOCKED_RUNS[1] > runs[1], "no run was computed on threads"
    old = _baseline._BLOCK
    _baseline._BLOCK = 0
    try:
        whole = f(np, *[np.asarray(a.copy()) for a in arrays])
        whole = [numpy.asarray(g) for g in (whole if isinstance(whole, tuple) else (whole,))]
    finally:
        _baseline._BLOCK = old
    ref = ref if isinstance(ref, tuple) else (ref,)
    for r, g, w in zip(ref, got, whole):
        assert g.dtype == r.dtype and g.shape == r.shape
        numpy.testing.assert_array_equal(g, r)
        numpy.testing.assert_array_equal(g, w)


def _chain(lib, x, y):
    t = lib.sin(x) * 2.0 + y
    u = lib.where(t > 0.5, t, -t)
    return lib.sqrt(lib.abs(u)) - 1.0


@pytest.mark.parametrize("shape", [(100,), (37, 5), (3, 4, 7), (2, 50), (50, 1)])
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_chain_matches_numpy(block, shape, dtype):
    rng = numpy.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    _both(_chain, x, y)


def test_broadcast_operands_and_scalars(block):
    rng = numpy.random.default_rng(2)
    a = rng.standard_normal((40, 6))
    col = rng.standard_normal((40, 1))
    row = rng.standard_normal((1, 6))
    line = rng.standard_normal(6)

    def f(lib, a, col, row, line):
        return (a * col + row) / (line + 3.0) - lib.float64(0.5) * a

    _both(f, a, col, row, line)


def test_values_read_after_the_run_are_whole(block):
    rng = numpy.random.default_rng(3)
    a = rng.standard_normal((30, 4))

    def f(lib, a):
        t = a * 3.0 + 1.0       # read by the reduction after the run
        u = lib.exp(t) - t      # read by the update
        s = t.sum(axis=1)
        v = u.copy()
        v[::2] = 0.0
        return s, v, u.max()

    _both(f, a)


def test_integer_bool_complex_and_casts(block):
    rng = numpy.random.default_rng(4)
    i = rng.integers(-50, 50, (45, 3))
    b = rng.random((45, 3)) < 0.5
    z = rng.standard_normal((45, 3)) + 1j * rng.standard_normal((45, 3))

    def f(lib, i, b, z):
        k = (i * 3 + 1) // 4 % 7
        m = lib.logical_and(b, k > 2)
        w = z * z + k.astype(lib.float32)
        return lib.where(m, k, -k), (w * 2).conj(), (k.astype(lib.float64) / 3.0)

    _both(f, i, b, z)


def test_strided_views_and_copies(block):
    rng = numpy.random.default_rng(5)
    a = rng.standard_normal((200, 8))

    def f(lib, a):
        col = a[:, -1]
        flat = lib.ravel(col)   # a copy of a strided column
        t = (flat - 0.1) * 4.0
        return lib.floor(t).astype(lib.int64) + 1, a[::3, 1:5] * 2.0 + a[::3, :4]

    _both(f, a)


def test_histogram_of_a_column(block):
    rng = numpy.random.default_rng(6)
    a = rng.standard_normal((500, 16)) * 30 + 100

    def f(lib, a):
        return lib.histogram(a[:, -1], bins=20, range=(50.0, 200.0))[0]

    _both(f, a)


def test_fp_errors_reported_once(block):
    x = np.asarray(numpy.array([1.0, 0.0, -1.0] * 20))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        numpy.asarray(1.0 / x * 2.0 + 1.0)
    with pytest.raises(FloatingPointError):
        with np.errstate(invalid="raise"):
            numpy.asarray(np.sqrt(x * 2.0) + 1.0)


def test_temporaries_are_a_block(baseline):
    """An expression of nine ops over 10^6 elements with one output holds
    about a block of each temporary, not 8 MB each (NumPy's own allocations,
    which tracemalloc sees)."""
    n = 1 << 20
    x = np.asarray(numpy.random.default_rng(7).standard_normal(n))
    np.synchronize()
    tracemalloc.start()
    try:
        y = np.sin(x) * np.cos(x) + np.exp(x) * np.tanh(x) - np.sqrt(np.abs(x))
        got = numpy.asarray(y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    r = numpy.asarray(x)
    ref = numpy.sin(r) * numpy.cos(r) + numpy.exp(r) * numpy.tanh(r) - numpy.sqrt(numpy.abs(r))
    numpy.testing.assert_array_equal(got, ref)
    # The output's 8 MB is the runtime's store (tracemalloc does not see
    # it); op by op the temporaries held 16-24 MB at once.
    assert peak < 2 << 20, peak


def test_scatters_write_in_place(baseline):
    """`a[idx] = v` and np.add.at in the baseline tier write into the base's
    buffer where nothing reads its old value (the runtime's put skips its
    copy), as a compiled kernel does: no 8 MB copy of the base (NumPy's
    allocations, which tracemalloc sees)."""
    n = 1 << 20
    ref = numpy.full(n, 1.0)
    idx0 = numpy.arange(0, n, 997)
    a = np.asarray(numpy.zeros(n)) + 1.0  # computed: its store is the runtime's
    idx = np.asarray(idx0)
    v = np.asarray(numpy.full(idx0.size, 5.0))
    np.synchronize()
    tracemalloc.start()
    try:
        a[idx] = v                  # a donated input, written in place
        np.add.at(a, idx, 1.0)
        b = a * 2.0                 # a fresh value, scattered into in place
        b[idx] = v
        got_a, got_b = numpy.asarray(a), numpy.asarray(b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ref[idx0] = 5.0
    numpy.add.at(ref, idx0, 1.0)
    ref_b = ref * 2.0
    ref_b[idx0] = 5.0
    numpy.testing.assert_array_equal(got_a, ref)
    numpy.testing.assert_array_equal(got_b, ref_b)
    assert peak < 1 << 20, peak


def test_scatters_wait_for_the_runs_that_read_their_base(block):
    # A run that reads a buffer a scatter then writes in place is computed
    # first (review of session 50: the scatter's values leaked into it).
    n = 64
    ref = numpy.arange(n, dtype=float)
    idx0 = numpy.arange(0, n, 5)
    idx = np.asarray(idx0)
    t = np.asarray(numpy.zeros(n)) + 1.0
    t[idx] = 0.0
    a = np.asarray(numpy.zeros(n)) + np.asarray(ref)
    np.synchronize()
    y = a * 2.0 + 1.0
    a[idx] = -100.0                       # a donated input, put in place
    b = np.asarray(ref) * 3.0
    z = b * 2.0 + 1.0
    b[idx] = -100.0                       # a fresh value
    c = np.asarray(numpy.zeros(n)) + np.asarray(ref)
    np.synchronize()
    w = c * 2.0 + 1.0
    np.add.at(c, idx, 1000.0)             # ufunc.at
    numpy.testing.assert_array_equal(numpy.asarray(y), ref * 2.0 + 1.0)
    numpy.testing.assert_array_equal(numpy.asarray(z), ref * 6.0 + 1.0)
    numpy.testing.assert_array_equal(numpy.asarray(w), ref * 2.0 + 1.0)
    ra = ref.copy()
    ra[idx0] = -100.0
    numpy.testing.assert_array_equal(numpy.asarray(a), ra)


def test_scatters_of_views_of_their_base(baseline):
    # Values that are a view of the base itself: not in place (the callee
    # would read what it has written).
    n = 200000
    ref = numpy.arange(n, dtype=float)
    idx0 = numpy.arange(0, n, 5)[:13]
    b = np.asarray(ref) * 1.0
    np.add.at(b, np.asarray(idx0), b[:13])
    c = np.asarray(ref) * 1.0
    c[np.asarray(idx0)] = c[:13]
    rb, rc = ref.copy(), ref.copy()
    numpy.add.at(rb, idx0, rb[:13].copy())
    rc[idx0] = rc[:13].copy()
    numpy.testing.assert_array_equal(numpy.asarray(b), rb)
    numpy.testing.assert_array_equal(numpy.asarray(c), rc)


def test_block_copies_keep_their_values(block):
    # A copy in a run is its operand's block; no later op may write its
    # result there (review of session 50: j took m's values).
    def f(lib, x):
        r = x * 2.0
        j = r.copy()
        m = r + 1.0
        return j * 3.0 + m
    _both(f, numpy.arange(100, dtype=float))
