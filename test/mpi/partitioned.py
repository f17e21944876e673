"""Run under `mpirun -n P` with CPN_PARTITION=rows: workloads whose arrays
are split in blocks of rows over the ranks (cpn-localize: each rank computes
its block, halo rows exchanged, sums combined) give NumPy's results.

Usage: CPN_PARTITION=rows CPN_PARTITION_THRESHOLD=1024 \
       mpirun --oversubscribe -n P python test/mpi/partitioned.py P
"""

import importlib
import os
import sys

import numpy

import cpnumeric as cp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "workloads"))

SIZES = {"jacobi": {"n": 200, "iters": 6}, "stencil": None,
         "black_scholes": None}


def main():
    ranks = int(sys.argv[1])
    assert cp.ranks() == ranks, (cp.ranks(), ranks)
    checks = 0
    for name, size in SIZES.items():
        w = importlib.import_module(name)
        size = size or w.SIZES["medium"]
        ref = w.run(numpy, *w.inputs(numpy, **size), **size)
        got = w.run(cp, *w.inputs(cp, **size), **size)
        for i, (g, r) in enumerate(zip(got, ref)):
            numpy.testing.assert_allclose(numpy.asarray(g), r, rtol=1e-9,
                                          atol=1e-12, err_msg=f"{name}[{i}]")
            checks += 1
    # A stencil written in place in a loop, a sum of a split array, a
    # boundary row read by every rank.
    n = 300
    ref = numpy.arange(n * 40, dtype=numpy.float64).reshape(n, 40) % 7
    got = cp.asarray(ref)
    for _ in range(5):
        ref[1:-1, 1:-1] = 0.2 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                 + ref[1:-1, 2:] + ref[1:-1, 1:-1])
        got[1:-1, 1:-1] = 0.2 * (got[:-2, 1:-1] + got[2:, 1:-1] + got[1:-1, :-2]
                                 + got[1:-1, 2:] + got[1:-1, 1:-1])
        numpy.testing.assert_allclose(float(got.sum()), ref.sum(), rtol=1e-12)
        checks += 1
    numpy.testing.assert_allclose(numpy.asarray(got), ref, rtol=1e-12)
    numpy.testing.assert_allclose(numpy.asarray(got[0] + got[-1]), ref[0] + ref[-1])
    numpy.testing.assert_allclose(numpy.asarray((got * 2).max(axis=0)),
                                  (ref * 2).max(axis=0))
    checks += 3
    print(f"mpi partitioned: {checks} checks passed on each of {ranks} ranks")


main()
