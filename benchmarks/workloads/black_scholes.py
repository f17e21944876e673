"""Black-Scholes call and put prices for a batch of European options."""

import math

import numpy as np

from _common import main, rng

SIZES = {"medium": {"n": 100_000, "dtype": "float64"},
         "small": {"n": 1000, "dtype": "float64"},
         "quick": {"n": 1_000_000, "dtype": "float64"},
         "full": {"n": 10_000_000, "dtype": "float64"},
         "quick32": {"n": 1_000_000, "dtype": "float32"},
         "full32": {"n": 10_000_000, "dtype": "float32"}}


def traffic(n, dtype):
    """Compulsory bytes: three inputs read, two outputs written."""
    return 5 * n * (4 if dtype == "float32" else 8)

def inputs(np, n, dtype):
    g = rng(0)
    s = g.uniform(5.0, 30.0, n).astype(dtype)
    k = g.uniform(1.0, 100.0, n).astype(dtype)
    t = g.uniform(0.25, 10.0, n).astype(dtype)
    return np.asarray(s), np.asarray(k), np.asarray(t)


def cnd(np, d):
    """Cumulative normal distribution (Abramowitz and Stegun 26.2.17)."""
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))))
    w = 1.0 - 1.0 / math.sqrt(2.0 * math.pi) * np.exp(-0.5 * d * d) * poly
    return np.where(d < 0, 1.0 - w, w)


def run(np, s, k, t, n=None, dtype=None, r=0.02, v=0.30):
    sqrt_t = np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    exp_rt = np.exp(-r * t)
    call = s * cnd(np, d1) - k * exp_rt * cnd(np, d2)
    put = k * exp_rt * (1.0 - cnd(np, d2)) - s * (1.0 - cnd(np, d1))
    return call, put


# -- peers (benchmarks/run.py adds them as columns when installed) ----------------
def run_numexpr(ne, s, k, t, n=None, dtype=None, r=0.02, v=0.30):
    env = {"s": s, "k": k, "t": t, "r": r, "v": v}
    sqrt_t = ne.evaluate("sqrt(t)", local_dict=env)
    env["sqrt_t"] = sqrt_t
    d1 = ne.evaluate("(log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)", local_dict=env)
    env["d1"] = d1
    env["d2"] = ne.evaluate("d1 - v * sqrt_t", local_dict=env)
    w = ("(1.0 - 0.3989422804014327 * exp(-0.5 * {d} * {d}) * "
         "(1.0 / (1.0 + 0.2316419 * abs({d}))) * (0.31938153 + (1.0 / (1.0 + 0.2316419 * abs({d}))) * "
         "(-0.356563782 + (1.0 / (1.0 + 0.2316419 * abs({d}))) * (1.781477937 + "
         "(1.0 / (1.0 + 0.2316419 * abs({d}))) * (-1.821255978 + "
         "(1.0 / (1.0 + 0.2316419 * abs({d}))) * 1.330274429)))))")
    c1 = "where(d1 < 0, 1.0 - {w}, {w})".format(w=w.format(d="d1"))
    c2 = "where(d2 < 0, 1.0 - {w}, {w})".format(w=w.format(d="d2"))
    call = ne.evaluate(f"s * {c1} - k * exp(-r * t) * {c2}", local_dict=env)
    put = ne.evaluate(f"k * exp(-r * t) * (1.0 - {c2}) - s * (1.0 - {c1})", local_dict=env)
    return call, put


_numba_kernel = None


def run_numba(numba, s, k, t, n=None, dtype=None, r=0.02, v=0.30):
    global _numba_kernel
    if _numba_kernel is None:
        @numba.njit(parallel=True, fastmath=False)
        def kernel(s, k, t, r, v, call, put):
            for i in numba.prange(s.shape[0]):
                sqrt_t = np.sqrt(t[i])
                d1 = (np.log(s[i] / k[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqrt_t)
                d2 = d1 - v * sqrt_t
                c = [0.0, 0.0]
                for j, d in enumerate((d1, d2)):
                    kk = 1.0 / (1.0 + 0.2316419 * abs(d))
                    w = 1.0 - 0.3989422804014327 * np.exp(-0.5 * d * d) * (
                        kk * (0.31938153 + kk * (-0.356563782 + kk * (
                            1.781477937 + kk * (-1.821255978 + kk * 1.330274429)))))
                    c[j] = 1.0 - w if d < 0 else w
                e = np.exp(-r * t[i])
                call[i] = s[i] * c[0] - k[i] * e * c[1]
                put[i] = k[i] * e * (1.0 - c[1]) - s[i] * (1.0 - c[0])
        _numba_kernel = kernel
    call = np.empty_like(s)
    put = np.empty_like(s)
    _numba_kernel(s, k, t, r, v, call, put)
    return call, put


def run_dask(da, s, k, t, n=None, dtype=None, r=0.02, v=0.30):
    chunks = max(1, s.shape[0] // 8)
    out = run(da, *(da.from_array(x, chunks=chunks) for x in (s, k, t)), r=r, v=v)
    return tuple(o.compute() for o in out)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
