"""Issue 22: one kernel per code shape whatever the view offsets. A window
that repeats with other offsets (`A[i, :]`, `A[:, j]`, `b[k:k + m]` in a
loop) runs a kernel that takes those offsets as arguments; its values are
NumPy's at every offset, box or not, reversed or not."""

import numpy
import pytest

import cpnumeric as np


@pytest.fixture
def compiled():
    """Every window compiled on this thread (the suite's default), stats from
    zero, traced arrays whatever their size."""
    from cpnumeric import _core
    threshold = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    old = np._cpn.set_baseline_work(0)
    np.synchronize()
    np.reset_stats()
    yield
    np.synchronize()
    np._cpn.set_baseline_work(old)
    _core.EAGER["threshold"] = threshold


def _flush():
    np._cpn.flush()


def _loop_stats():
    s = np.stats()
    return s["compilations"], s["offset_arg_windows"]


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64])
def test_row_loop_compiles_once(compiled, dtype):
    n, m = 40, 37
    ref = numpy.zeros((n, m), dtype)
    ref[0] = numpy.arange(m)
    A = np.asarray(ref.copy())
    x = numpy.arange(m, dtype=dtype) % 5
    xa = np.asarray(x)
    for i in range(1, n):
        ref[i, :] = ref[i - 1, :] * 2 + x
        ref[i, :] %= 1000
        A[i, :] = A[i - 1, :] * 2 + xa
        A[i, :] %= 1000
        _flush()
    compilations, shared = _loop_stats()
    # The first window (its offsets constants) and one kernel for the rest.
    assert compilations <= 2
    assert shared >= n - 3
    numpy.testing.assert_array_equal(np.asarray(A), ref)


def test_column_loop_with_reductions(compiled):
    ref = numpy.arange(300 * 23, dtype=numpy.float64).reshape(300, 23) / 7.0
    A = np.asarray(ref) + 0.0
    ref = ref + 0.0
    want = numpy.empty(23)
    got = np.zeros(23)
    for j in range(23):
        want[j] = numpy.sqrt((ref[:, j] ** 2).sum())
        got[j] = np.sqrt((A[:, j] ** 2).sum())
        _flush()
    numpy.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)
    compilations, shared = _loop_stats()
    assert compilations <= 3 and shared >= 20


@pytest.mark.parametrize("step", [1, -1, 2, -3])
def test_moving_strided_and_reversed_views(compiled, step):
    base = numpy.arange(12 * 50, dtype=numpy.float64).reshape(12, 50)
    A = np.asarray(base) * 1.0
    ref = base * 1.0
    for i in range(1, 12):
        ref[i, ::step] = ref[i - 1, ::step] * 0.5 + ref[i, ::abs(step)][: ref[i, ::step].size]
        A[i, ::step] = A[i - 1, ::step] * 0.5 + A[i, ::abs(step)][: A[i, ::step].size]
        _flush()
    numpy.testing.assert_array_equal(np.asarray(A), ref)
    assert np.stats()["offset_arg_windows"] >= 8


def test_views_that_cross_rows_at_some_offsets(compiled):
    """flat[k:k + 3] of a 5-column array is a box of the 2-D base when it
    stays in one row and a gather when it crosses one: both kinds of kernel
    give NumPy's values, and neither is used at the other's offsets."""
    base = numpy.arange(8 * 5, dtype=numpy.float64).reshape(8, 5)
    A = np.asarray(base) + 0.0
    ref = base + 0.0
    flat, rflat = A.reshape(-1), ref.reshape(-1)
    for k in range(0, 35):
        rflat[k:k + 3] = rflat[k + 1:k + 4] * 0.5 + 1.0
        flat[k:k + 3] = flat[k + 1:k + 4] * 0.5 + 1.0
        _flush()
    numpy.testing.assert_array_equal(np.asarray(A), ref)
    assert np.stats()["offset_arg_windows"] > 0


def test_3d_views_and_scalar_offsets(compiled):
    ref = numpy.arange(6 * 7 * 8, dtype=numpy.int32).reshape(6, 7, 8)
    T = np.asarray(ref) + 0
    ref = ref + 0
    for i in range(6):
        for j in range(1, 8):
            ref[i, :, j] = ref[i, :, j - 1] * 3 - ref[(i + 1) % 6, ::-1, j]
            T[i, :, j] = T[i, :, j - 1] * 3 - T[(i + 1) % 6, ::-1, j]
            _flush()
    numpy.testing.assert_array_equal(np.asarray(T), ref)
    compilations, shared = _loop_stats()
    assert shared > 20 and compilations <= 6


@pytest.mark.parametrize("m", [0, 1, 7])
def test_small_and_empty_rows(compiled, m):
    n = 9
    ref = numpy.ones((n, m))
    A = np.asarray(ref) * 1.0
    for i in range(1, n):
        ref[i] = ref[i - 1] + i
        A[i] = A[i - 1] + i
        _flush()
    numpy.testing.assert_array_equal(np.asarray(A), ref)


def test_offsets_that_stop_moving_and_the_disk_cache(compiled, tmp_path):
    """A window seen again at its first offsets runs its own kernel; the
    shared kernel's disk entry serves a new process (text with `?`)."""
    import subprocess, sys, os
    prog = (
        "import numpy, cpnumeric as np\n"
        "from cpnumeric import _core\n"
        "_core.EAGER['threshold'] = 0\n"
        "A = np.asarray(numpy.zeros((30, 64))) + 1.0\n"
        "for i in range(1, 30):\n"
        "    A[i] = A[i - 1] * 1.5 + 1.0\n"
        "    np._cpn.flush()\n"
        "ref = numpy.ones((30, 64))\n"
        "for i in range(1, 30):\n"
        "    ref[i] = ref[i - 1] * 1.5 + 1.0\n"
        "assert (numpy.asarray(A) == ref).all()\n"
        "s = np.stats()\n"
        "print(s['compilations'], s['disk_hits'], s['offset_arg_windows'])\n")
    env = dict(os.environ, CPN_CACHE_DIR=str(tmp_path), CPN_BASELINE_WORK="0",
               PYTHONPATH=os.pathsep.join(sys.path))
    runs = [subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    c0, d0, s0 = map(int, runs[0].stdout.split())
    c1, d1, s1 = map(int, runs[1].stdout.split())
    assert c0 <= 3 and s0 >= 25
    assert c1 == 0 and d1 >= 2 and s1 >= 25
