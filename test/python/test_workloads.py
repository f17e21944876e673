"""Every program in benchmarks/workloads gives NumPy's results under cpnumeric,
compiled (no fallback), on small sizes."""

import importlib
import os
import sys
import warnings

import numpy
import pytest

import cpnumeric

WORKLOADS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "workloads")
sys.path.insert(0, os.path.abspath(WORKLOADS_DIR))

WORKLOADS = sorted(f[:-3] for f in os.listdir(WORKLOADS_DIR)
                   if f.endswith(".py") and not f.startswith("_"))


def test_the_eight_programs_of_the_issue_are_there():
    for name in ["black_scholes", "jacobi", "stencil", "cavity_flow", "cg", "kmeans",
                 "logreg", "lstm"]:
        assert name in WORKLOADS


@pytest.mark.parametrize("name", WORKLOADS)
def test_workload_matches_numpy(name):
    mod = importlib.import_module(name)
    params = mod.SIZES["small"]
    ref = mod.run(numpy, *mod.inputs(numpy, **params), **params)
    cpnumeric.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning fails the test
        got = mod.run(cpnumeric, *mod.inputs(cpnumeric, **params), **params)
        got = [cpnumeric.asnumpy(g) for g in got]
    s = cpnumeric.stats()
    assert s["fallbacks"] == 0
    assert s["compilations"] + s["cache_hits"] > 0
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        r = numpy.asarray(r)
        assert g.shape == r.shape and g.dtype == r.dtype
        numpy.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", WORKLOADS)
def test_workload_on_one_and_two_threads(name, threads):
    # Sizes above the parallel-loop threshold, so that kernels do fork.
    mod = importlib.import_module(name)
    params = mod.SIZES["medium"]
    ref = mod.run(numpy, *mod.inputs(numpy, **params), **params)
    old = cpnumeric.get_num_threads()
    cpnumeric.set_num_threads(threads)
    try:
        got = mod.run(cpnumeric, *mod.inputs(cpnumeric, **params), **params)
        got = [cpnumeric.asnumpy(g) for g in got]
    finally:
        cpnumeric.set_num_threads(old)
    for g, r in zip(got, ref):
        r = numpy.asarray(r)
        if numpy.issubdtype(r.dtype, numpy.integer):
            numpy.testing.assert_array_equal(g, r)
        else:
            numpy.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)
