"""Issue 22: loops of ordinary NumPy code compile once per code shape, and
element access on a computed array needs no trace at all."""

import numpy
import pytest

import cpnumeric as np


def _compilations():
    s = np.stats()
    return s["compilations"] + s["cache_hits"] + s["disk_hits"]


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64,
                                   numpy.uint8, numpy.bool_, numpy.complex128])
def test_element_loop_writes_in_place(dtype):
    n = 3000  # above the eager threshold: the array is traced
    ref = numpy.zeros(n, dtype)
    b = np.zeros(n, dtype)
    b = b + np.ones(n, dtype)  # a computed value
    ref = ref + numpy.ones(n, dtype)
    b[0]  # computed now
    before = np.stats()["ops_recorded"]
    for i in range(1, 200):
        v = (b[i - 1] + ref.dtype.type(1)) if dtype is not numpy.bool_ else not b[i - 1]
        b[i] = v
        ref[i] = v
    assert np.stats()["ops_recorded"] == before  # no trace: written in place
    numpy.testing.assert_array_equal(np.asarray(b), ref)


def test_element_write_keeps_other_values():
    n = 2000
    a = np.arange(n, dtype=numpy.float64) * 2.0
    a[0]
    c = a.copy()            # may share the value: must keep the old element
    view = a[10:20]         # shares the base: sees the write
    pending = a + 1.0       # a pending op reading the old value
    host = numpy.asarray(a)  # a NumPy copy
    a[12] = -5.0
    assert float(c[12]) == 24.0
    assert float(view[2]) == -5.0
    assert float(pending[12]) == 25.0
    assert host[12] == 24.0
    ref = numpy.arange(n, dtype=numpy.float64) * 2.0
    ref[12] = -5.0
    numpy.testing.assert_array_equal(np.asarray(a), ref)


def test_element_write_conversions_and_errors():
    a = np.arange(2000, dtype=numpy.int32) + 0
    a[0]
    a[5] = numpy.float64(3.7)  # NumPy's setitem truncates
    assert int(a[5]) == 3
    a[-1] = True
    assert int(a[1999]) == 1
    with pytest.raises(IndexError):
        a[2000] = 1
    with pytest.raises(TypeError):
        a[3] = 1j
    with pytest.raises(OverflowError):
        a[3] = 2 ** 40
    u = np.zeros(2000, numpy.uint8) + 1
    u[0]
    with pytest.raises(OverflowError):
        u[4] = -1
    r = np.zeros(2000) + 1.0
    r[0]
    r.flags.writeable = False
    with pytest.raises(ValueError):
        r[4] = 2.0


def test_element_write_2d_and_facts():
    ref = numpy.arange(40 * 40, dtype=numpy.float64).reshape(40, 40)
    ref = ref + ref.T  # symmetric
    a = np.asarray(ref) + 0.0
    v = np.ones(40)
    for _ in range(3):  # products that may learn the matrix is symmetric
        (a @ v)[0]
    before = np.stats()["ops_recorded"]
    a[3, 7] = 100.0
    assert np.stats()["ops_recorded"] == before  # written in place
    ref[3, 7] = 100.0
    numpy.testing.assert_allclose(np.asarray(a @ numpy.ones(40)), ref @ numpy.ones(40))
    numpy.testing.assert_allclose(np.asarray(a.T @ numpy.ones(40)), ref.T @ numpy.ones(40))


def _rows(lib, n=120, m=300):
    A = lib.zeros((n, m))
    x = lib.linspace(0, 1, m)
    for i in range(1, n):
        A[i, :] = lib.sin(x * (i + 1)) + 0.5 * A[i - 1, :]
    return A


def test_row_loop_runs_without_compiling(baseline):
    got = numpy.asarray(_rows(np))
    s = np.stats()
    assert s["compilations"] == 0 and s["baseline_windows"] > 0
    numpy.testing.assert_allclose(got, _rows(numpy), rtol=1e-13, atol=1e-13)


def test_column_loop_and_sizes(baseline):
    A = numpy.arange(60.0 * 7).reshape(60, 7) / 7.0
    a = np.asarray(A)
    out = np.zeros(7)
    for j in range(7):
        out[j] = np.sqrt((a[:, j] ** 2).sum())
    numpy.testing.assert_allclose(np.asarray(out), numpy.sqrt((A ** 2).sum(axis=0)))
    for n in (0, 1, 2, 3, 17, 64, 101):
        x = np.arange(n, dtype=numpy.float32) * 0.5
        y = (x * x + 1.0).astype(numpy.float64).cumsum()
        r = numpy.arange(n, dtype=numpy.float32) * 0.5
        numpy.testing.assert_allclose(np.asarray(y), (r * r + 1.0).astype(numpy.float64).cumsum())
    # Nothing compiled that the program waited for. A window that repeated
    # may have been compiled on the compiler thread meanwhile: on a loaded
    # machine the baseline tier's time on it can pay for that compile (a
    # suite run beside two fuzz jobs saw one).
    s = np.stats()
    assert s["compilations"] == s["background_compiles"]
    assert s["compile_wait_seconds"] == 0


def test_repeated_window_compiles_once_and_agrees_bit_for_bit(baseline):
    x = numpy.linspace(-3, 3, 5000)
    y = numpy.cos(x) * 3.0
    results = []
    # baseline runs until their time pays for a compile, then the kernel
    for k in range(20000):
        a, b = np.asarray(x), np.asarray(y)
        r = numpy.asarray((a * b + a) * 0.5 - b)
        if k == 0 or np.stats()["compilations"]:
            results.append(r)
        if len(results) == 3:
            break
    s = np.stats()
    assert s["baseline_windows"] >= 1 and s["compilations"] == 1
    want = (x * y + x) * 0.5 - y
    for r in results:
        numpy.testing.assert_array_equal(r, want)


def test_library_calls_and_scatters(baseline):
    rng = numpy.random.default_rng(3)
    idx = rng.integers(0, 50, 400)
    h = np.zeros(50)
    href = numpy.zeros(50)
    for k in range(6):
        numpy.add.at(href, idx[k::6], 1.0)
        np.add.at(h, np.asarray(idx[k::6]), 1.0)
    numpy.testing.assert_array_equal(np.asarray(h), href)
    v = rng.standard_normal(3001)
    numpy.testing.assert_array_equal(np.asarray(np.sort(np.asarray(v))), numpy.sort(v))
    numpy.testing.assert_array_equal(np.asarray(np.asarray(v)[np.asarray(idx)]), v[idx])
    m = rng.standard_normal((40, 40)) + 40 * numpy.eye(40)
    numpy.testing.assert_allclose(np.asarray(np.linalg.solve(np.asarray(m), np.ones(40))),
                                  numpy.linalg.solve(m, numpy.ones(40)))
    # the scatter loop's two bodies (67 and 66 indices) come again: compiled
    assert np.stats()["compilations"] <= 2
    # a failing call is compiled instead, which raises NumPy's error
    with pytest.raises(numpy.linalg.LinAlgError):
        np.linalg.inv(np.zeros((3, 3)) + np.zeros((3, 3)))


def test_random_draws_match_the_compiled_kernel(baseline):
    def draws():
        g = np.random.default_rng(11)
        return (numpy.asarray(g.random(4000)), numpy.asarray(g.integers(0, 1000, 3000)),
                numpy.asarray(g.standard_normal(4000)))
    first = draws()
    np._cpn.set_baseline_work(0)
    compiled = draws()
    numpy.testing.assert_array_equal(first[0], compiled[0])  # the same words
    numpy.testing.assert_array_equal(first[1], compiled[1])
    # NumPy's log and cos against libmvec's: within an ulp or two
    numpy.testing.assert_allclose(first[2], compiled[2], rtol=1e-14, atol=1e-15)


def test_fp_errors_reported(baseline):
    big = np.asarray(numpy.full(3000, 800.0))
    with pytest.warns(RuntimeWarning, match="overflow"):
        with np.errstate(over="warn"):
            r = np.exp(big)
            numpy.asarray(r)
    with pytest.raises(FloatingPointError):
        with np.errstate(divide="raise"):
            numpy.asarray(np.log(np.zeros(3000) + 0.0))
    with np.errstate(all="ignore"):
        numpy.testing.assert_array_equal(np.asarray(np.exp(big)), numpy.full(3000, numpy.inf))


def test_donated_updates_in_a_loop(baseline):
    u = np.zeros((50, 50))
    u[0, :] = 1.0
    ref = numpy.zeros((50, 50))
    ref[0, :] = 1.0
    for _ in range(5):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        ref[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                  + ref[1:-1, 2:])
    numpy.testing.assert_array_equal(np.asarray(u), ref)
    w = np.arange(3000.0)
    keep = w[::2]
    w += 1.0
    numpy.testing.assert_array_equal(np.asarray(keep), numpy.arange(3000.0)[::2] + 1.0)


@pytest.mark.parametrize("n", [0, 1, 5, 3000])
def test_iteration_reads_the_buffer_and_sees_writes(n):
    for lib in (numpy, np):
        a = lib.arange(n, dtype=numpy.float64) * 1.0
        seen = []
        for k, x in enumerate(a):
            if k == 2 and n > 40:
                a[10] = -1.0                       # an element written in place
                a[30:40] = a[30:40] * 0 + 7.0      # a traced write: a new version
            seen.append(x)
        if lib is numpy:
            want = seen
        else:
            assert [type(v) for v in seen] == [type(v) for v in want]
            assert seen == want
    b = np.arange(24).reshape(4, 6)[:, ::-2]
    assert [list(r) for r in b] == [list(r) for r in numpy.arange(24).reshape(4, 6)[:, ::-2]]
    assert list(np.arange(30)[::-4]) == list(numpy.arange(30)[::-4])


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64, numpy.int32,
                                   numpy.bool_, numpy.uint16, numpy.complex64])
def test_element_reads_and_writes_of_views(dtype):
    ref = (numpy.arange(40 * 50) % 7).astype(dtype).reshape(40, 50)
    a = np.asarray(ref) + numpy.zeros((), dtype)  # a computed value
    a[0, 0]
    v, rv = a[3:, ::-2], ref[3:, ::-2]
    for key in [(0, 0), (5, -1), (-1, 3), (36, 24)]:
        got, want = v[key], rv[key]
        assert type(got) is type(want) and got == want
    for key, value in [((1, 2), 3), ((2, -1), 1.5), ((0, 0), True), ((-1, -1), numpy.float64(2.25))]:
        if dtype in (numpy.int64, numpy.int32, numpy.uint16, numpy.bool_) and isinstance(value, float):
            value = 2
        v[key] = value
        rv[key] = value
    numpy.testing.assert_array_equal(numpy.asarray(a), ref)
    with pytest.raises(IndexError, match="out of bounds"):
        v[37, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        v[0, -26] = 1


def test_element_write_errors_are_numpys():
    a = np.arange(3000, dtype=numpy.int32) + 0
    a[0]
    with pytest.raises(OverflowError):
        a[1] = 2 ** 31
    with pytest.raises(ValueError):
        a[1] = float("nan")
    f = np.zeros(3000, numpy.float32) + 0
    f[0]
    f[1] = 0.1
    assert f[1] == numpy.float32(0.1)
    with pytest.warns(RuntimeWarning, match="overflow"):
        f[2] = 10 ** 40  # too large for float32: inf and NumPy's warning
    for big in (1e39, -1e39, numpy.float64(3.40282357e38)):
        with pytest.warns(RuntimeWarning, match="overflow"):
            f[3] = big
        assert numpy.isinf(f[3])
    f[4] = float("inf")
    f[5] = 3.4028235e38
    assert numpy.isinf(f[4]) and f[5] == numpy.float32(3.4028235e38)
    assert numpy.isinf(f[2])


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
@pytest.mark.parametrize("c", [-2, 1.5, -1.5, -0.5, 0.5, 2])
def test_constant_powers(dtype, c):
    v = numpy.array([0.0, -0.0, 1.0, 2.5, 1e-30, 1e30, numpy.inf, -numpy.inf,
                     numpy.nan, -2.0, 4.0, 7.0] * 300).astype(dtype)
    with numpy.errstate(all="ignore"):
        want = v ** c
    a = np.asarray(v) * dtype(1)  # computed (traced); -0.0 stays -0.0
    with np.errstate(all="ignore"):
        got = numpy.asarray(a ** c)
        b = np.asarray(v) * dtype(1)
        b **= c
    assert got.dtype == want.dtype
    numpy.testing.assert_allclose(got, want, rtol=8 * numpy.finfo(dtype).eps,
                                  atol=2 * numpy.finfo(dtype).smallest_subnormal)
    numpy.testing.assert_array_equal(numpy.signbit(got), numpy.signbit(want))
    numpy.testing.assert_array_equal(numpy.asarray(b), got)


def test_baseline_review_regressions(baseline):
    # a view of a splat held as one element (it raised in the tier, which
    # then compiled the window on an input it had already updated in place)
    a = np.arange(1.0, 6.0) * 1.0
    a.tolist()
    s = a.sum()
    a[1:] = a[:-1] * 10
    u = (np.broadcast_to(s, (4,)) * 2.0)[1:3] + 0.0
    r = numpy.arange(1.0, 6.0)
    r[1:] = r[:-1] * 10
    assert a.tolist() == r.tolist()
    assert numpy.asarray(u).tolist() == [30.0, 30.0]
    # an op that fails after a donated input was written in place fails the
    # window's values, as a failing kernel does; later work is unaffected
    b = np.arange(1.0, 6.0) * 1.0
    b.tolist()
    b[1:] = b[:-1] * 10
    with pytest.raises(numpy.linalg.LinAlgError):
        np.linalg.inv(np.zeros((3, 3)) + 0.0)
    assert b.tolist() == r.tolist()
    c = np.arange(4.0) + 1.0
    assert c.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_baseline_failure_after_an_in_place_write_is_reported():
    from cpnumeric import _baseline
    base = numpy.arange(5.0)      # a donated input: writable
    value = numpy.full(4, 7.0)
    dest = numpy.empty(5)
    ops = [("update", (-1, -2), (1, 1), "", (5,), "f8", 0),
           ("libcall", (0,), (), "no_such_call_f8", (5,), "f8", 0)]
    # nothing written yet when the first op fails: the exception propagates
    with pytest.raises(Exception):
        _baseline.run([("libcall", (-1,), (), "no_such_call_f8", (5,), "f8", 0)],
                      [numpy.arange(5.0)], [0], [numpy.empty(5)], [])
    # written in place, then failed: the exception, whose class gives the
    # kind the window's values fail with (python/src/errors.cpp)
    r = _baseline.run(ops, [base, value], [1], [dest], [])
    assert isinstance(r, ValueError) and "no_such_call" in str(r)
    # a library call's error is its class already (call_library raises it by
    # its kind), not a RuntimeError to parse
    ops = [("update", (-1, -2), (0, 2, 1), "", (2, 2), "f8", 0),
           ("libcall", (0,), (0,), "inv_f64", (2, 2), "f8", 0)]
    r = _baseline.run(ops, [numpy.eye(2), numpy.zeros((2, 2))], [1],
                      [numpy.empty((2, 2))], [])
    assert type(r) is numpy.linalg.LinAlgError and str(r) == "Singular matrix"


def test_constant_powers_of_minus_inf_raise_nothing():
    v = numpy.array([-numpy.inf, 4.0, numpy.inf, 0.25] * 800)
    a = np.asarray(v) * 1.0
    with np.errstate(all="raise"):
        for c in (1.5, -1.5, -0.5):
            with numpy.errstate(all="raise"):
                want = v ** c
            numpy.testing.assert_allclose(numpy.asarray(a ** c), want, rtol=1e-15)


@pytest.fixture
def background(baseline):
    """The baseline tier with the compiler thread, on traced arrays."""
    from cpnumeric import _core
    threshold = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    old = np._cpn.set_background_compile(True)
    yield
    np._cpn.wait_compiles()
    np._cpn.set_background_compile(old)
    _core.EAGER["threshold"] = threshold


def _window(a, b):
    return numpy.asarray((a * b + a) * 0.5 - b)


def test_background_compile_then_the_kernel_agrees_bit_for_bit(background):
    x = numpy.linspace(-3, 3, 1001)
    y = numpy.cos(x) * 3.0
    want = (x * y + x) * 0.5 - y
    a, b = np.asarray(x), np.asarray(y)
    first = _window(a, b)  # seen once: the baseline tier, nothing queued
    np._cpn.wait_compiles()
    s = np.stats()
    assert s["background_compiles"] == 0 and s["compilations"] == 0
    second = _window(a, b)  # seen again: queued, and run in the baseline tier
    s = np.stats()
    assert s["baseline_windows"] == 2 and s["compile_wait_seconds"] == 0
    np._cpn.wait_compiles()
    s = np.stats()
    assert s["compilations"] == 1 and s["background_compiles"] == 1
    third = _window(a, b)  # the kernel, from the memory cache
    s = np.stats()
    assert s["baseline_windows"] == 2 and s["cache_hits"] == 1 and s["compilations"] == 1
    for r in (first, second, third):
        numpy.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_background_compiled_loop_matches_numpy(background, n):
    """A loop whose window switches from the baseline tier to the kernel
    compiled meanwhile gives NumPy's values at every iteration."""
    x = numpy.linspace(0.0, 1.0, n)
    ref, got = numpy.zeros(n), np.zeros(n)
    for k in range(40):
        ref = numpy.sqrt(ref * ref + x) * 0.5 + numpy.float64(k) * 1e-3
        got = np.sqrt(got * got + np.asarray(x)) * 0.5 + numpy.float64(k) * 1e-3
        numpy.testing.assert_allclose(numpy.asarray(got), ref, rtol=1e-14, atol=1e-15)
        if k == 20:
            np._cpn.wait_compiles()  # the rest runs the kernel
    assert np.stats()["background_compiles"] >= 1


def test_background_compile_off_compiles_on_the_calling_thread(baseline):
    from cpnumeric import _core
    threshold = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    old = np._cpn.set_background_compile(False)
    try:
        x = numpy.linspace(-3, 3, 1003)  # a window of its own
        y = numpy.cos(x) * 3.0
        a, b = np.asarray(x), np.asarray(y)
        for _ in range(3000):
            r = _window(a, b)
            if np.stats()["compilations"]:
                break
        s = np.stats()
        assert s["compilations"] == 1 and s["background_compiles"] == 0
        numpy.testing.assert_array_equal(r, (x * y + x) * 0.5 - y)
    finally:
        np._cpn.set_background_compile(old)
        _core.EAGER["threshold"] = threshold


_EXIT_SCRIPT = """
import numpy, cpnumeric as np
x = np.asarray(numpy.linspace(0, 1, 5000))
for k in range(3):
    y = numpy.asarray(np.sin(x * 3.0 + 1.0) * np.cos(x) - x * 0.5)
assert np.stats()["baseline_windows"] == 3, np.stats()  # the second queued it
{tail}
print("ok", float(y.sum()))
"""


@pytest.mark.parametrize("tail", ["", "import os, sys; sys.stdout.flush()\n"
                                  "pid = os.fork()\n"
                                  "if pid == 0:\n"
                                  "    z = numpy.asarray(np.sin(x * 3.0 + 1.0) * np.cos(x) - x * 0.5)\n"
                                  "    os._exit(0 if numpy.allclose(z, y, rtol=1e-14, atol=1e-15) else 3)\n"
                                  "assert os.waitpid(pid, 0)[1] == 0"],
                         ids=["exit", "fork"])
def test_exit_or_fork_while_a_background_compile_runs(tmp_path, tail):
    """The process exits cleanly (and a fork's child computes the window:
    the kernel, whose libmvec sin differs from NumPy's in the last bit)
    while the compiler thread is compiling."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, CPN_EAGER_THRESHOLD="0", CPN_BASELINE_WORK=str(1 << 40),
               CPN_BACKGROUND_COMPILE="1", CPN_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT.format(tail=tail)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")


_LOAD_SAMPLE_SCRIPT = """
import os, time, numpy, cpnumeric as np
x = np.asarray(numpy.linspace(0, 1, 200000))
for k in range(3):   # kernels: the load sampler's thread starts
    y = numpy.asarray(np.sin(x) * 2.0 + x)
time.sleep(0.08)
pid = os.fork()
if pid == 0:
    for k in range(3):
        time.sleep(0.06)   # the first kernel after each pause asks for a sample
        z = numpy.asarray(np.sin(x) * 2.0 + x)
    os._exit(0 if numpy.array_equal(z, y) else 3)
for k in range(3):
    time.sleep(0.06)
    z = numpy.asarray(np.sin(x) * 2.0 + x)
assert numpy.array_equal(z, y)
assert os.waitpid(pid, 0)[1] == 0
print("ok")
"""


def test_kernels_after_pauses_in_a_fork_and_its_parent(tmp_path):
    """The machine's load is sampled on a thread of its own, which a fork's
    child does not have: the child's kernels after pauses start its own
    sampler (no lock of the parent's is waited on), and both compute."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, CPN_EAGER_THRESHOLD="0", CPN_BACKGROUND_COMPILE="0",
               CPN_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", _LOAD_SAMPLE_SCRIPT], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")


def test_baseline_update_chains_write_into_their_destinations():
    """A chain of updates on a fresh copy is built in its output's store;
    an intermediate that is an output too keeps its own value."""
    from cpnumeric import _baseline
    src = numpy.zeros((3, 4))
    row = numpy.arange(4.0)
    ops = [("copy", (-1,), (), "", (3, 4), "f8", 0),
           ("update", (0, -2), (4, 1), "", (3, 4), "f8", 0),     # row 1
           ("update", (1, -2), (8, 1), "", (3, 4), "f8", 0)]     # row 2
    want1 = src.copy()
    want1[1] = row
    want2 = want1.copy()
    want2[2] = row
    for outputs, wants in (([2], [want2]), ([1, 2], [want1, want2]), ([2, 1], [want2, want1])):
        dests = [numpy.full((3, 4), -7.0) for _ in outputs]
        assert _baseline.run(ops, [src, row], outputs, dests, []) == []
        for d, w in zip(dests, wants):
            numpy.testing.assert_array_equal(d, w)
    numpy.testing.assert_array_equal(src, 0.0)  # the input is not written


def _life_step(xp, g):
    r = xp.roll
    nb = (r(g, 1, 0) + r(g, -1, 0) + r(g, 1, 1) + r(g, -1, 1)
          + r(r(g, 1, 0), 1, 1) + r(r(g, 1, 0), -1, 1)
          + r(r(g, -1, 0), 1, 1) + r(r(g, -1, 0), -1, 1))
    return ((nb == 3) | ((g == 1) & (nb == 2))).astype(numpy.int8)


def test_windows_of_a_loop_start_where_its_body_does():
    """np.roll ends statements inside a loop body (88 ops a step here, not a
    multiple of the statements that end near the 64-op limit): windows are
    cut where their length is a multiple of the body, so every step is the
    same kernel (before: the cuts drifted through the body, a new window
    each step)."""
    rng = numpy.random.default_rng(1)
    ref = (rng.random((61, 67)) < 0.35).astype(numpy.int8)
    g = np.asarray(ref)
    g = g + 0  # a computed value, like every later step's
    ref = ref + 0
    for _ in range(3):  # the body is found once it repeated
        g, ref = _life_step(np, g), _life_step(numpy, ref)
    np.synchronize()
    np.reset_stats()
    for _ in range(30):
        g, ref = _life_step(np, g), _life_step(numpy, ref)
    numpy.testing.assert_array_equal(np.asarray(g), ref)
    s = np.stats()
    assert s["compilations"] + s["disk_hits"] <= 3, s
    assert s["flushes"] <= 32, s


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.float16,
                                   numpy.complex64, numpy.int32])
def test_baseline_aranges_of_floats_agree_bit_for_bit(baseline, dtype):
    # The baseline tier makes an integer iota read only by casts to floats
    # as NumPy's arange in the float dtype, and never the iota itself.
    for n in (0, 1, 7, 70001):
        got = np.arange(n, dtype=dtype).reshape(-1, 1) / 3
        want = numpy.arange(n, dtype=dtype).reshape(-1, 1) / 3
        numpy.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == want.dtype
    # read both as integers and as floats: the iota is made
    i = np.arange(50001)
    got = i * 2 + np.arange(50001, dtype=numpy.float64)
    r = numpy.arange(50001)
    numpy.testing.assert_array_equal(np.asarray(got), r * 2 + r.astype(numpy.float64))
    lin = np.linspace(-1.0, 2.0, 40001, dtype=dtype) if dtype != numpy.int32 else None
    if lin is not None:
        numpy.testing.assert_allclose(np.asarray(lin).astype(numpy.complex128),
                                      numpy.linspace(-1.0, 2.0, 40001, dtype=dtype),
                                      rtol=1e-3 if dtype == numpy.float16 else 1e-6)


@pytest.mark.parametrize("case", ["reshaped_arange", "ufunc_chain", "shifted", "kept",
                                  "int_operand", "float32"])
def test_baseline_chains_made_in_the_output_store(background, case):
    """The baseline tier makes a chain's operands in the output's store (no
    temporary of the output's size) where that is exact, and NumPy's
    values in every case."""
    import tracemalloc

    def run(m):
        n = 1 << 18
        if case == "reshaped_arange":
            return [m.arange(n, dtype=float).reshape(512, -1) / 7.0]
        if case == "ufunc_chain":
            return [m.sqrt(m.arange(n, dtype=float) * 0.5 + xs[m])]
        if case == "shifted":  # an operand at other elements: not in place
            a = m.arange(n, dtype=float) * 2.0
            return [a[1:] - a[:-1] * 0.5]
        if case == "kept":  # the operand is an output too
            a = m.arange(n, dtype=float) * 3.0
            return [a, a + 1.0]
        if case == "int_operand":
            return [m.arange(n) * 0.25 + 1.0]
        return [m.arange(n, dtype=numpy.float32) / numpy.float32(3)]

    xs = {numpy: numpy.linspace(0.0, 1.0, 1 << 18)}
    xs[np] = np.asarray(xs[numpy])
    np.synchronize()
    tracemalloc.start()
    try:
        got = run(np)
        np.synchronize()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    for g, w in zip(got, run(numpy)):
        numpy.testing.assert_array_equal(numpy.asarray(g), w)
    if case in ("reshaped_arange", "ufunc_chain"):
        assert peak < (1 << 21) // 2, peak  # 2 MB output: only a part of it
