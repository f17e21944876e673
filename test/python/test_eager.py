"""The eager small-array path (CPN_EAGER_THRESHOLD): arrays below the threshold
are computed by NumPy at once; they become traced values when they meet the
traced world. The rest of the suite runs with the threshold at 0."""

import importlib

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
