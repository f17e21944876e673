"""Ordinary NumPy code that cpnumeric was not tuned on: element loops, row
and column loops, many sizes, growing arrays, scatter loops, varying
scalars, tiny arrays, iteration, linear algebra in a loop, a Monte Carlo
program's memory, and NumPy data brought in (issue 22).

    python benchmarks/patterns.py [--only NAME,...] [--json FILE] [--markdown FILE]

Each case runs in a fresh process twice: first with an empty kernel disk
cache (cold), then with the cache the first run left (warm); that pair is
repeated (--repeat, 3) and the run with the median ratio is reported. In each process
the case runs once with NumPy and once with cpnumeric, NumPy first, and the
row reports NumPy time / cpnumeric time (above 1: cpnumeric is faster), the
kernels compiled, the windows run by the baseline tier, and the results
compared. Peak resident memory comes from two more processes per case (NumPy
alone, cpnumeric alone, warm cache): resource.getrusage's ru_maxrss above the
level after imports.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# -- the cases: f(np) -> a result (NumPy or cpnumeric array, or a number) ----

def elem_loop(np):
    b = np.zeros(3000)
    c = 0.5
    for i in range(1, 3000):
        b[i] = b[i - 1] * c + 1.0
    return b


def iterate(np):
    a = np.arange(20000.0)
    s = 0.0
    for x in a:
        s += x
    return s


def row_loop(np):
    A = np.zeros((300, 1000))
    x = np.linspace(0, 1, 1000)
    for i in range(1, 300):
        A[i, :] = np.sin(x * (i + 1)) + 0.5 * A[i - 1, :]
    return A


def column_loop(np):
    A = np.arange(1000 * 200, dtype=float).reshape(1000, 200) / 1e5
    out = np.zeros(200)
    for j in range(200):
        out[j] = np.sqrt((A[:, j] ** 2).sum())
    return out


def many_sizes(np):
    def f(x):
        return np.sqrt(x * x + 1.0).sum() / x.size
    return sum(float(f(np.linspace(0, 1, 1000 + 37 * k))) for k in range(40))


def growing(np):
    a = np.zeros(0)
    for k in range(400):
        a = np.append(a, np.arange(k % 7 + 1) * 0.5)
    return a


def scatter_loop(np):
    rng = __import__("numpy").random.default_rng(0)
    idx = np.asarray(rng.integers(0, 10000, 100000))
    h = np.zeros(10000)
    for _ in range(50):
        np.add.at(h, idx, 1.0)
    return h


def varying_scalar(np):
    x = np.linspace(0, 1, 1_000_000)
    acc = np.zeros_like(x)
    for t in range(100):
        acc += np.exp(-x * (t * 0.01))
    return acc


def tiny(np):
    v = np.ones(64)
    for _ in range(3000):
        v = v * 1.0001 + 0.0001
    return v


def stencil_sizes(np):
    total = 0.0
    for n in (50, 64, 77, 90, 128):
        u = np.zeros((n, n))
        u[0, :] = 1.0
        for _ in range(20):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        total += float(u.sum())
    return total


def linalg_loop(np):
    base = np.arange(60 * 60, dtype=float).reshape(60, 60) % 7.0 + 60 * np.eye(60)
    b = np.ones(60)
    for k in range(100):
        b = np.linalg.solve(base + k * 0.01 * np.eye(60), b) * 60.0
    return b


def tolist_item(np):
    a = np.arange(5000.0) * 0.5
    s = 0.0
    for k in range(200):
        s += a.item(k) + a.tolist()[k]
    return s


def monte_carlo(np):
    # Issue 22's memory case: 200,000 paths x 64 steps of geometric Brownian
    # motion (NumPy's normal draws, brought in), cumulated along the rows;
    # means, percentiles and a histogram of the final prices.
    import numpy
    z = np.asarray(numpy.random.default_rng(7).standard_normal((200_000, 64)))
    dt, mu, sigma = 1.0 / 64, 0.05, 0.2
    log_paths = np.cumsum((mu - 0.5 * sigma ** 2) * dt + sigma * dt ** 0.5 * z, axis=1)
    paths = 100.0 * np.exp(log_paths)
    final = paths[:, -1]
    mean_path = paths.mean(axis=0)
    pct = np.percentile(final, [5.0, 50.0, 95.0])
    hist, _ = np.histogram(final, bins=50, range=(50.0, 200.0))
    return np.concatenate([mean_path, pct, hist.astype(float)])


def numpy_in(np):
    # Issue 22's NumPy data in: a program that makes its data with NumPy and
    # keeps it (three 32 MB arrays), brings it in with np.asarray (NumPy: the
    # same arrays; cpnumeric: borrowed, not copied, when glibc mapped them)
    # and prices Black-Scholes calls on it once.
    import numpy
    g = numpy.random.default_rng(11)
    s0 = g.random(4_000_000) * 50 + 50
    k0 = g.random(4_000_000) * 50 + 50
    t0 = g.random(4_000_000) * 2 + 0.1
    s, k, t = np.asarray(s0), np.asarray(k0), np.asarray(t0)
    r, v = 0.02, 0.3
    sq = v * np.sqrt(t)
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / sq
    d2 = d1 - sq
    cdf1 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d1 + 0.044715 * d1 ** 3)))
    cdf2 = 0.5 * (1.0 + np.tanh(0.7978845608 * (d2 + 0.044715 * d2 ** 3)))
    call = s * cdf1 - k * np.exp(-r * t) * cdf2
    return np.array([call.sum(), call.max(), s0[0] + k0[-1] + t0[1]])


CASES = {f.__name__: f for f in (elem_loop, iterate, row_loop, column_loop, many_sizes,
                                 growing, scatter_loop, varying_scalar, tiny, stencil_sizes,
                                 linalg_loop, tolist_item, monte_carlo, numpy_in)}


# -- one process -------------------------------------------------------------

def _child(name, which):
    import numpy
    f = CASES[name]
    out = {}
    if which in ("both", "numpy"):
        t = time.perf_counter()
        ref = f(numpy)
        out["numpy_s"] = time.perf_counter() - t
    if which in ("both", "cpnumeric"):
        import cpnumeric
        cpnumeric.reset_stats()
        t = time.perf_counter()
        got = f(cpnumeric)
        got = numpy.asarray(got)
        cpnumeric.synchronize()
        out["cpnumeric_s"] = time.perf_counter() - t
        s = cpnumeric.stats()
        out.update(compilations=s["compilations"], baseline_windows=s["baseline_windows"],
                   disk_hits=s["disk_hits"])
        if which == "both":
            out["agrees"] = bool(numpy.allclose(got, numpy.asarray(ref), rtol=1e-9, atol=1e-9))
    return out


def _peak_child(name, which):
    import resource
    import numpy  # noqa: F401
    if which == "cpnumeric":
        import cpnumeric as lib
    else:
        lib = numpy
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = CASES[name](lib)
    numpy.asarray(r)
    return {"peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}


def run_child(name, which, cache, peak=False):
    env = dict(os.environ, CPN_CACHE_DIR=cache,
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, __file__, "--child", name, "--which", which] + (["--peak"] if peak else [])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"rc {p.returncode}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--repeat", type=int, default=3,
                    help="fresh processes per case and cache state; the median ratio's run is "
                         "reported (a case of a few milliseconds varies by half between runs)")
    ap.add_argument("--child")
    ap.add_argument("--which", default="both")
    ap.add_argument("--peak", action="store_true")
    args = ap.parse_args()
    if args.child:
        r = (_peak_child if args.peak else _child)(args.child, args.which)
        print(json.dumps(r))
        return
    names = args.only.split(",") if args.only else list(CASES)
    rows = []
    for name in names:
        colds, warms = [], []
        row = {"case": name}
        for k in range(args.repeat):
            cache = tempfile.mkdtemp(prefix="cpn-patterns-")
            try:
                colds.append(run_child(name, "both", cache))
                warms.append(run_child(name, "both", cache))
                if k == args.repeat - 1 and not args.no_memory:
                    row["numpy_peak_kb"] = run_child(name, "numpy", cache, True).get("peak_kb")
                    row["cpnumeric_peak_kb"] = run_child(name, "cpnumeric", cache,
                                                         True).get("peak_kb")
            finally:
                shutil.rmtree(cache, True)
        row["cold"], row["cold_ratios"] = _median(colds)
        row["warm"], row["warm_ratios"] = _median(warms)
        rows.append(row)
        print(_line(row), flush=True)
    ratios = [r["cold"]["numpy_s"] / r["cold"]["cpnumeric_s"] for r in rows
              if "cpnumeric_s" in r["cold"]]
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geomean cold {g:.2f}x")
    text = _markdown(rows)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


def _median(runs):
    """The run with the median NumPy/cpnumeric ratio, and every run's ratio."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0], []
    ok.sort(key=lambda r: r["numpy_s"] / r["cpnumeric_s"])
    return ok[(len(ok) - 1) // 2], [round(r["numpy_s"] / r["cpnumeric_s"], 3) for r in runs
                                    if "error" not in r]


def _ratio(r):
    if "error" in r:
        return "ERROR"
    return f"{r['numpy_s'] / r['cpnumeric_s']:.2f}x"


def _line(row):
    c, w = row["cold"], row["warm"]
    mem = ""
    if row.get("numpy_peak_kb") is not None and row.get("cpnumeric_peak_kb") is not None:
        mem = f"  peak MB numpy {row['numpy_peak_kb'] / 1024:.0f} cpnumeric {row['cpnumeric_peak_kb'] / 1024:.0f}"
    if "error" in c:
        return f"{row['case']:16s} ERROR {c['error']}"
    ok = "" if c.get("agrees") and w.get("agrees") else "  WRONG"
    return (f"{row['case']:16s} numpy {1e3 * c['numpy_s']:8.1f} ms  cold {_ratio(c):>8s} "
            f"({c['compilations']} compiled, {c['baseline_windows']} baseline)  warm {_ratio(w):>8s} "
            f"({w['compilations']} compiled){mem}{ok}")


def _markdown(rows):
    out = ["| case | NumPy ms | cold | compiled | baseline windows | warm | peak MB NumPy / cpnumeric |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        c, w = r["cold"], r["warm"]
        if "error" in c:
            out.append(f"| {r['case']} | | ERROR | | | | |")
            continue
        mem = (f"{r['numpy_peak_kb'] / 1024:.0f} / {r['cpnumeric_peak_kb'] / 1024:.0f}"
               if r.get("numpy_peak_kb") is not None and r.get("cpnumeric_peak_kb") is not None
               else "")
        out.append(f"| {r['case']} | {1e3 * c['numpy_s']:.1f} | {_ratio(c)} | {c['compilations']} | "
                   f"{c['baseline_windows']} | {_ratio(w)} | {mem} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
