"""The main demo: a 2-D Jacobi stencil run with NumPy and with cpnumeric in the
same process; prints both results and the time ratio.

    python benchmarks/jacobi_demo.py [--size N] [--iters K]
"""

import argparse
import time

import numpy

import cpnumeric


def jacobi(np, n, iters):
    u = np.zeros((n, n))
    u[0, :] = 1.0
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return float(u.sum())


def timed(np, n, iters):
    t0 = time.perf_counter()
    r = jacobi(np, n, iters)
    return r, time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--iters", type=int, default=100)
    args = p.parse_args()
    jacobi(cpnumeric, 64, 4)  # compile the kernels of this program once (warm-up)
    cpnumeric.reset_stats()
    ref, t_np = timed(numpy, args.size, args.iters)
    res, t_cpn = timed(cpnumeric, args.size, args.iters)
    s = cpnumeric.stats()
    res2, t_warm = timed(cpnumeric, args.size, args.iters)
    print(f"Jacobi {args.size}x{args.size}, {args.iters} iterations")
    print(f"  numpy:                sum = {ref:.12g}   {t_np * 1e3:8.1f} ms")
    print(f"  cpnumeric first call: sum = {res:.12g}   {t_cpn * 1e3:8.1f} ms   "
          f"({s['compilations']} compilations, {s['compile_seconds'] * 1e3:.0f} ms; "
          f"{s['disk_hits']} kernels from the disk cache)")
    print(f"  cpnumeric again:      sum = {res2:.12g}   {t_warm * 1e3:8.1f} ms")
    print(f"  ratio numpy/cpnumeric: {t_np / t_cpn:.2f}x first call, "
          f"{t_np / t_warm:.2f}x again")
    if max(abs(res - ref), abs(res2 - ref)) > 1e-9 * max(1.0, abs(ref)):
        raise SystemExit("results differ")


if __name__ == "__main__":
    main()
