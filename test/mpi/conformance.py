"""Run under `mpirun -n P`: the workloads of benchmarks/workloads and a
conformance subset give NumPy's results on every rank, and every rank holds
the same values (control replication: the ranks never disagree).

Usage: mpirun --oversubscribe -n P python test/mpi/conformance.py P
Exits 0 when every check passed on every rank; an assertion on any rank ends
all of them with its message (cpnumeric's uncaught-error hook).
"""

import importlib
import os
import sys
import zlib

import numpy

import cpnumeric as cp
from cpnumeric import _cpn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "workloads"))

CHECKS = {"count": 0}


def same_on_every_rank(name, value):
    """Every rank holds the same bytes for `value`."""
    a = numpy.ascontiguousarray(value)
    digest = zlib.crc32(a.tobytes()) ^ (zlib.crc32(repr((a.shape, a.dtype.str)).encode()) << 31)
    lo, hi = _cpn.mpi_min_max(digest)
    assert lo == hi, f"{name}: ranks hold different values"


def check(name, got, ref, exact=False):
    got = cp.asnumpy(got) if isinstance(got, cp.ndarray) else numpy.asarray(got)
    ref = numpy.asarray(ref)
    assert got.shape == ref.shape, f"{name}: shape {got.shape} != {ref.shape}"
    assert got.dtype == ref.dtype, f"{name}: dtype {got.dtype} != {ref.dtype}"
    if exact or not numpy.issubdtype(ref.dtype, numpy.inexact):
        numpy.testing.assert_array_equal(got, ref, err_msg=name)
    else:
        numpy.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12, err_msg=name)
    same_on_every_rank(name, got)
    CHECKS["count"] += 1


def workloads():
    folder = os.path.join(ROOT, "benchmarks", "workloads")
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".py") or f.startswith("_"):
            continue
        mod = importlib.import_module(f[:-3])
        for size in ("small", "medium"):
            params = mod.SIZES[size]
            ref = mod.run(numpy, *mod.inputs(numpy, **params), **params)
            got = mod.run(cp, *mod.inputs(cp, **params), **params)
            for i, (g, r) in enumerate(zip(got, ref)):
                check(f"{f}[{size}][{i}]", g, r)


def subset():
    rs = numpy.random.default_rng(7)
    # Sizes around the ranks' counts, uneven blocks included.
    for shape in [(0,), (1,), (7,), (5, 3), (33, 31), (4, 6, 5), (1000,), (257, 129)]:
        x = rs.standard_normal(shape)
        y = rs.standard_normal(shape)
        i = rs.integers(-50, 50, shape).astype(numpy.int32)
        cx, cy, ci = cp.asarray(x), cp.asarray(y), cp.asarray(i)
        tag = f"{shape}"
        check("ufuncs " + tag, cp.sin(cx) * cy + cp.exp(-cx * cx), numpy.sin(x) * y + numpy.exp(-x * x))
        check("int ops " + tag, (ci * 3) // 7 + ci % 5, (i * 3) // 7 + i % 5)
        check("where " + tag, cp.where(cx > 0, cx, cy), numpy.where(x > 0, x, y))
        for axis in [None] + list(range(len(shape))):
            check(f"sum {tag} axis {axis}", cx.sum(axis=axis), x.sum(axis=axis))
            check(f"max {tag} axis {axis}", ci.max(axis=axis, initial=-100),
                  i.max(axis=axis, initial=-100))
            check(f"mean {tag} axis {axis}", cy.mean(axis=axis) if x.size else cp.zeros(()),
                  y.mean(axis=axis) if x.size else numpy.zeros(()))
        if len(shape) >= 1:
            check("sort " + tag, cp.sort(cx, axis=-1), numpy.sort(x, axis=-1))
            check("argsort " + tag, cp.argsort(ci, axis=-1, kind="stable"),
                  numpy.argsort(i, axis=-1, kind="stable"))
            check("reverse " + tag, cx[::-1] + 1, x[::-1] + 1)
            check("cumsum " + tag, cp.cumsum(cx, axis=0), numpy.cumsum(x, axis=0))
        if len(shape) >= 2:
            check("transpose " + tag, cx.T * 2 + cy.T, x.T * 2 + y.T)
            check("reshape " + tag, cx.reshape(-1)[:: 3], x.reshape(-1)[:: 3])
            check("matmul " + tag, cx @ cy.swapaxes(-1, -2), x @ y.swapaxes(-1, -2))
            if shape[0] > 2 and shape[1] > 2:
                u, un = cp.asarray(x), x.copy()
                for _ in range(3):
                    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
                    un[1:-1, 1:-1] = 0.25 * (un[:-2, 1:-1] + un[2:, 1:-1] + un[1:-1, :-2]
                                             + un[1:-1, 2:])
                check("stencil " + tag, u, un)
        if x.size:
            idx = rs.integers(0, x.shape[0], 17)
            check("take " + tag, cx[idx], x[idx])
            m = x > 0.3
            check("mask " + tag, cx[cp.asarray(m)], x[m])
            cz, z = cp.asarray(x), x.copy()
            cz[cp.asarray(m)] = -1.0
            z[m] = -1.0
            check("mask assign " + tag, cz, z)
    # Linear algebra.
    a = rs.standard_normal((40, 40)) + 40 * numpy.eye(40)
    b = rs.standard_normal((40, 3))
    ca, cb = cp.asarray(a), cp.asarray(b)
    check("solve", cp.linalg.solve(ca, cb), numpy.linalg.solve(a, b))
    check("inv", cp.linalg.inv(ca), numpy.linalg.inv(a))
    check("det", cp.linalg.det(ca), numpy.linalg.det(a))
    check("cholesky", cp.linalg.cholesky(ca @ ca.T), numpy.linalg.cholesky(a @ a.T))
    check("eigvalsh", cp.linalg.eigvalsh(ca + ca.T), numpy.linalg.eigvalsh(a + a.T))
    check("norm", cp.linalg.norm(ca), numpy.linalg.norm(a))
    # A stored value updated after a matrix power read it (the power wrote
    # the update's values when the store came first: mpifuzz seed 24).
    for shape in ((2, 4, 4), (3, 6, 6)):
        r = rs.integers(-32, 33, shape) / 4
        cm, m = cp.asarray(r) + cp.eye(shape[-1]) * 36, r + numpy.eye(shape[-1]) * 36
        cpw, pw = cp.linalg.matrix_power(cm, 3), numpy.linalg.matrix_power(m, 3)
        cm[-2::3] = cp.array(5.0)
        m[-2::3] = 5.0
        check(f"matrix_power before an update {shape}", cpw, pw)
        check(f"updated after matrix_power {shape}", cm, m)
    # Random: seeded streams are the seed's, unseeded ones agree on every rank.
    for seed in (0, 12345, None):
        g = cp.random.default_rng(seed)
        same_on_every_rank(f"default_rng({seed}).random", cp.asnumpy(g.random(1001)))
        same_on_every_rank(f"default_rng({seed}).normal", cp.asnumpy(g.normal(size=(31, 7))))
        same_on_every_rank(f"default_rng({seed}).integers",
                           cp.asnumpy(g.integers(0, 1000, 513)))
    cp.random.seed(None)
    same_on_every_rank("random.rand", cp.asnumpy(cp.random.rand(300)))


def main():
    expected = int(sys.argv[1]) if len(sys.argv) > 1 else None
    if expected is not None:
        assert cp.ranks() == expected, f"ranks() is {cp.ranks()}, mpirun -n {expected}"
    assert 0 <= cp.rank() < cp.ranks()
    assert _cpn.mpi_active()
    workloads()
    subset()
    print(f"mpi conformance: {CHECKS['count']} checks passed on each of {cp.ranks()} ranks")


if __name__ == "__main__":
    main()
