"""@cpnumeric.jit: whole-function tracing, the signature cache, retracing,
tracing errors, lower() and the disk cache across processes."""

import os
import re
import subprocess
import sys
import textwrap

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def data(shape, dtype, seed=0):
    g = numpy.random.default_rng(seed)
    if numpy.dtype(dtype).kind == "f":
        return g.standard_normal(shape).astype(dtype)
    return g.integers(-50, 50, size=shape).astype(dtype)


def blend(x, y, w=0.25):
    z = x * w + y * (1 - w)
    return z, (z * z).sum(), cp.maximum(z, y)


def blend_ref(x, y, w=0.25):
    z = x * w + y * (1 - w)
    return z, (z * z).sum(), numpy.maximum(z, y)


def assert_same(got, ref, rtol=1e-6):
    got = cp.asnumpy(got)
    ref = numpy.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.dtype, ref.dtype)
    numpy.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_results_equal_numpy_and_second_call_does_not_trace(dtype, shape):
    f = cp.jit(blend)
    x, y = data(shape, dtype, 1), data(shape, dtype, 2)
    for got, ref in zip(f(cp.asarray(x), cp.asarray(y)), blend_ref(x, y)):
        assert_same(got, ref)
    cp.reset_stats()
    x2, y2 = data(shape, dtype, 3), data(shape, dtype, 4)
    got = f(cp.asarray(x2), y2)  # NumPy and cpnumeric arrays share a signature
    s = cp.stats()
    assert s["jit_calls"] == 1 and s["jit_traces"] == 0
    assert s["compilations"] == 0 and s["ops_recorded"] == 0
    for g, ref in zip(got, blend_ref(x2, y2)):
        assert_same(g, ref)


def test_non_contiguous_arguments():
    f = cp.jit(blend)
    a, b = data((6, 8), "float64", 1), data((8, 6), "float64", 2)
    for got, ref in zip(f(cp.asarray(a)[::2, 1:], cp.asarray(b).T[1::2, 1:]),
                        blend_ref(a[::2, 1:], b.T[1::2, 1:])):
        assert_same(got, ref)
    # Same shape, another layout: a new signature, still right.
    for got, ref in zip(f(cp.asarray(a)[1::2, :-1], cp.asarray(b).T[::2, :-1]),
                        blend_ref(a[1::2, :-1], b.T[::2, :-1])):
        assert_same(got, ref)


def test_retrace_on_new_shape_says_which_argument(monkeypatch, capsys):
    monkeypatch.setenv("CPN_LOG", "retrace")
    f = cp.jit(blend)
    f(cp.ones(10), cp.ones(10))
    cp.reset_stats()
    f(cp.ones(10), cp.ones(10))
    assert cp.stats()["jit_traces"] == 0
    got = f(cp.ones(12), cp.ones(10)[0])
    assert cp.stats()["jit_traces"] == 1
    assert_same(got[0], numpy.ones(12))
    err = capsys.readouterr().err
    assert "retracing blend" in err
    assert "'x' float64[10] -> float64[12]" in err
    assert "'y' float64[10] -> float64[]" in err


def test_branch_on_traced_value_names_the_line():
    @cp.jit
    def f(x):
        if x.sum() > 0:  # the offending line
            return x
        return -x

    with pytest.raises(cp.TracingError) as e:
        f(cp.ones(5))
    line = [i for i, t in enumerate(open(__file__), 1) if "# the offending line" in t][0]
    assert f"test_jit.py:{line}:" in str(e.value)
    assert "np.where" in str(e.value) and "static" in str(e.value)
    # float() and fallbacks inside jit fail the same way; the engine recovers.
    with pytest.raises(cp.TracingError):
        cp.jit(lambda x: float(x[0]))(cp.ones(3))
    with pytest.raises(cp.TracingError, match="no native cpnumeric version"):
        cp.jit(lambda x: cp.array_str(x))(cp.ones(3))
    assert float(cp.ones(3).sum()) == 3.0


def test_static_arguments_unroll_loops():
    @cp.jit(static_argnames=("steps",))
    def smooth(u, steps):
        for _ in range(steps):
            u = u * 0.5 + 1.0
        return u

    x = data((9,), "float64")
    ref = x.copy()
    for _ in range(3):
        ref = ref * 0.5 + 1.0
    assert_same(smooth(x, steps=3), ref)
    cp.reset_stats()
    smooth(x, steps=3)
    assert cp.stats()["jit_traces"] == 0
    assert_same(smooth(x, 1), x * 0.5 + 1.0)
    assert cp.stats()["jit_traces"] == 1
    with pytest.raises(ValueError, match="not a parameter"):
        cp.jit(smooth, static_argnames=("nsteps",))


def test_python_scalars_are_part_of_the_signature():
    f = cp.jit(blend)
    x, y = data((4,), "float32", 1), data((4,), "float32", 2)
    for w in (0.25, 0.5, 0.25):
        for got, ref in zip(f(x, y, w), blend_ref(x, y, w)):
            assert_same(got, ref)  # float32 stays float32 (weak scalars)


def test_arguments_written_in_place():
    @cp.jit
    def relax(u):
        u[1:-1] = 0.5 * (u[2:] + u[:-2])

    ref = numpy.arange(12.0) ** 2
    u = cp.asarray(ref.copy())
    un = ref.copy()
    for _ in range(3):
        relax(u)
        relax(un)  # a NumPy argument is written back, as NumPy would
        ref[1:-1] = 0.5 * (ref[2:] + ref[:-2])
        assert_same(u, ref)
        numpy.testing.assert_allclose(un, ref)


def test_closures_kwargs_and_passthrough():
    table = cp.asarray(numpy.linspace(0, 1, 6))

    @cp.jit
    def f(x, *, scale=2.0, extra=None):
        return x, (x + table) * scale, extra

    x = data((6,), "float64")
    a, b, c = f(x, scale=3.0)
    assert_same(a, x)
    assert_same(b, (x + numpy.linspace(0, 1, 6)) * 3.0)
    assert c is None
    a, b, c = f(x + 1, scale=3.0, extra="tag")
    assert_same(b, (x + 1 + numpy.linspace(0, 1, 6)) * 3.0) and c == "tag"


def test_eager_small_arrays(monkeypatch):
    monkeypatch.setitem(_core.EAGER, "threshold", 1024)
    f = cp.jit(blend)
    x, y = data((5,), "float64", 1), data((5,), "float64", 2)
    for _ in range(2):
        for got, ref in zip(f(cp.asarray(x), cp.asarray(y)), blend_ref(x, y)):
            assert_same(got, ref)
    # The eager path is back on after tracing.
    assert cp.asarray(x)._base.np is not None


def test_lower_shows_stages_and_cost():
    f = cp.jit(blend)
    x = cp.asarray(data((64, 64), "float64"))
    low = f.lower(x, x)
    assert "multiply" in low.as_text("trace")
    assert "cpn.multiply" in low.as_text("cpn")
    assert "linalg.generic" in low.as_text("linalg")
    assert "memref" in low.as_text("bufferized")
    assert "define" in low.as_text("llvm") and "llvm.func" in low.as_text("llvm-dialect")
    with pytest.raises(ValueError, match="unknown stage"):
        low.as_text("ptx")
    cost = low.cost()
    assert cost["kernels"] >= 2  # the fused elementwise kernel and the reduction
    # One 64x64 input (x is passed twice) and two 64x64 outputs; the fused
    # kernel needs no temporary of that size.
    assert 3 * 64 * 64 * 8 <= cost["peak_bytes"] < 4 * 64 * 64 * 8
    assert cost["bytes_moved"] >= cost["argument_bytes"]
    # lower() leaves the arguments as they were.
    assert_same(x, data((64, 64), "float64"))
    g = low.compile()
    cp.reset_stats()
    for got, ref in zip(g(x, x), blend_ref(numpy.asarray(x), numpy.asarray(x))):
        assert_same(got, ref)
    assert cp.stats()["jit_traces"] == 0 and cp.stats()["compilations"] == 0


def test_lower_restores_written_arguments():
    @cp.jit
    def bump(u):
        u += 1.0
        return u * 2

    u = cp.zeros(4)
    bump.lower(u).as_text("cpn")
    assert_same(u, numpy.zeros(4))
    assert_same(bump(u), numpy.full(4, 2.0))
    assert_same(u, numpy.ones(4))


_DISK = textwrap.dedent("""
    import numpy, cpnumeric as cp
    @cp.jit
    def f(x):
        return (cp.exp(x) * 2.0 + x).sum(axis=0)
    r = f(numpy.ones((50, 40)))
    s = cp.stats()
    print(s["compilations"], s["disk_hits"], float(r.sum()))
""")


def test_second_process_compiles_nothing(tmp_path):
    env = dict(os.environ, CPN_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.join(ROOT, "python"))

    def run():
        out = subprocess.run([sys.executable, "-c", _DISK], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        return int(out[0]), int(out[1]), float(out[2])

    c1, h1, r1 = run()
    c2, h2, r2 = run()
    assert c1 >= 1 and h1 == 0
    assert c2 == 0 and h2 >= 1
    assert r1 == r2 and abs(r1 - 50 * 40 * (2 * numpy.e + 1)) < 1e-6


def test_bad_arguments():
    f = cp.jit(blend)
    with pytest.raises(TypeError, match="blend"):
        f(cp.ones(3))
    with pytest.raises(TypeError, match="not hashable"):
        f(cp.ones(3), cp.ones(3), w={"a": 1})
    assert re.search("Compile `fun` whole", cp.jit.__doc__)
