"""Python overhead of cpnumeric on small work.

    python benchmarks/overhead.py

1. Recording cost: microseconds to record one elementwise op (`c = a + b`) into
   the trace, measured over many ops with no sync point (arrays above the
   eager threshold, so the op is traced), and the cost of one op on small
   eager arrays (NumPy computes it at once) next to NumPy's own, and of an
   in-place `a += b` on them.
2. The tiny-array loop of issue 3: 1000 iterations of ten ops on 100-element
   arrays, then one sync, with NumPy and with cpnumeric (alternating, median
   of REPS runs each); the target is within 1.5x of NumPy (below
   CPN_EAGER_THRESHOLD elements arrays run eagerly).
"""

import statistics
import time

import numpy

import cpnumeric


REPS = 7


def record_cost(n_ops=20000, n=100_000):
    """Microseconds per `c = a + b` on n-element arrays (per-op cost of the
    traced path for n above the eager threshold, of the eager one below)."""
    a = cpnumeric.ones(n)
    b = cpnumeric.ones(n)
    cpnumeric.synchronize()
    t0 = time.perf_counter()
    for _ in range(n_ops):
        c = a + b  # noqa: F841
    dt = time.perf_counter() - t0
    cpnumeric.synchronize()
    return dt / n_ops * 1e6


def numpy_op_cost(n_ops=20000, n=100):
    a, b = numpy.ones(n), numpy.ones(n)
    t0 = time.perf_counter()
    for _ in range(n_ops):
        c = a + b  # noqa: F841
    return (time.perf_counter() - t0) / n_ops * 1e6


def inplace_cost(np, n_ops=20000, n=100):
    """Microseconds per `a += b` on n-element arrays (eager below the
    threshold: NumPy in place, the array stays eager)."""
    a, b = np.asarray(numpy.ones(n)), np.asarray(numpy.ones(n))
    t0 = time.perf_counter()
    for _ in range(n_ops):
        a += b
    dt = time.perf_counter() - t0
    return dt / n_ops * 1e6


def tiny_loop(np, iters=1000, n=100):
    x = np.asarray(numpy.linspace(0.0, 1.0, n))
    y = np.asarray(numpy.linspace(1.0, 2.0, n))
    for _ in range(iters):
        z = x * y + 1.0
        z = np.sin(z) - x
        z = z / (y + 2.0)
        x = np.sqrt(np.abs(z)) * 0.5
        y = y + x * 0.001
    return float(numpy.asarray(y).sum())


def timed(fn, *args):
    t0 = time.perf_counter()
    r = fn(*args)
    return r, time.perf_counter() - t0


def main():
    record_cost(n_ops=1000)  # warm-up: compiles the window of 64 adds
    print(f"recording one op: {record_cost():.2f} us (target < 5 us)")
    print(f"one op on 100-element eager arrays: {record_cost(n=100):.2f} us "
          f"(NumPy {numpy_op_cost():.2f} us)")
    print(f"a += b on 100-element eager arrays: {inplace_cost(cpnumeric):.2f} us "
          f"(NumPy {inplace_cost(numpy):.2f} us)")
    tiny_loop(cpnumeric)  # warm-up: compiles the cpnumeric windows
    t_np, t_cp = [], []
    for _ in range(REPS):  # alternating; medians (the machine is noisy)
        ref, t = timed(tiny_loop, numpy)
        t_np.append(t)
        res, t = timed(tiny_loop, cpnumeric)
        t_cp.append(t)
        assert abs(ref - res) <= 1e-9 * abs(ref), (ref, res)
    t_np, t_cp = statistics.median(t_np), statistics.median(t_cp)
    print(f"tiny-array loop (1000 x 10 ops, 100 elements, median of {REPS}): NumPy {t_np * 1e3:.1f} ms, "
          f"cpnumeric {t_cp * 1e3:.1f} ms, cpnumeric/NumPy {t_cp / t_np:.2f}x "
          f"(target <= 1.5x; eager threshold {cpnumeric._config.get('CPN_EAGER_THRESHOLD')})")


if __name__ == "__main__":
    main()
