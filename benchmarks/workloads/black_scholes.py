"""Black-Scholes call and put prices for a batch of European options."""

import math

from _common import main, rng

SIZES = {"small": {"n": 1000, "dtype": "float64"},
         "quick": {"n": 1_000_000, "dtype": "float64"},
         "full": {"n": 10_000_000, "dtype": "float64"},
         "full32": {"n": 10_000_000, "dtype": "float32"}}


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


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
