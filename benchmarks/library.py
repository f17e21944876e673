"""The library-backed functions (sorting, searching, indexing, scans and
linear algebra) with NumPy and with cpnumeric in one process.

    python benchmarks/library.py [--quick] [--only SUBSTRING] [--reps N]
                                 [--json FILE] [--markdown FILE]

Each row is one (function, size, dtype): the same deterministic inputs
(``numpy.random.default_rng(0)``) go to ``numpy.<f>`` and ``cpnumeric.<f>``,
and the row reports the median time of each, and the ratio
NumPy time / cpnumeric time (above 1: cpnumeric is faster).

How it is timed
---------------
* The cpnumeric inputs are made from the NumPy ones (``cpnumeric.asarray``)
  and synchronized before any timing, so the conversion is never counted.
* One warm-up call of each library comes first and is not counted: it
  absorbs cpnumeric's compilation (and its kernel-cache lookups) and the first
  touch of NumPy's pages. The first cpnumeric call's time goes to the JSON
  only (``cpnumeric_first_call_s``). A window that call ran on the baseline
  tier (NumPy's loops while its kernel compiles) is compiled when it comes
  again: a second untimed call follows, and the compiler thread's end is
  awaited, as benchmarks/run.py does; the timed calls then run the kernels
  a long-running program runs. Baseline windows or compiles that still
  happen in the timed calls are counted in the row and marked in the table
  (patterns.py measures first calls and compiles).
* Then REPS timed repetitions, alternating NumPy and cpnumeric (the machine is
  noisy; alternation spreads the noise over both), each reporting the median.
  A cpnumeric repetition ends with ``cpnumeric.synchronize()``, so the time
  includes computing the result, not only recording it.
* Each repetition starts SETTLE_S seconds after the previous one ends: the
  process holds two OpenBLAS copies (NumPy's and the one compiled kernels
  call), and an idle OpenBLAS spins its threads for ~0.1 s after a call
  (NumPy's does; ours is told to sleep at once), which would take the cores
  from the next repetition of the other library. A program that uses one of
  the two never sees that.
* Calls much shorter than a millisecond are repeated ``number`` times inside
  one repetition (the same ``number`` for both libraries, from NumPy's
  time for one call; every call synchronized) and the time divided by
  ``number``. That time is the faster of NumPy's warm-up call and a second
  call right after it: the warm-up call, the first after the previous row,
  can take ten times a warm one on this VM (np.unique of 10^3 integers 123
  us against 12), and a ``number`` sized from it made a repetition 0.2 ms of
  calls, not MIN_REP_S, so that the first call after each SETTLE_S pause
  was most of the row. Each repetition still starts with that call.
* In-place rows (``put``: ``a[idx] = v``, ``mask_assign``: ``a[mask] = 0.0``)
  rewrite the same values each call, so repeating them is harmless.

Each row's cpnumeric result is compared with NumPy's (for factorizations
through something basis-independent: the reconstructed matrix, or the
eigenvalues / singular values) and the row is marked WRONG when they differ;
a row that raises is marked ERROR and the run goes on.
"""

import argparse
import faulthandler
import json
import os
import statistics
import sys
import time

import numpy

import cpnumeric

SIZES_1D = [10**3, 10**4, 10**5, 10**6, 10**7]
MATRICES = [64, 256, 1000, 4000]   # 4000 only for the matrix products
STACKS = [(1000, 8, 8), (100, 64, 64)]
QUICK_MAX_1D = 10**6
QUICK_MAX_MATRIX = 1000
MIN_REP_S = 2e-3   # a repetition shorter than this repeats the call inside it
TARGET_NAMES = ("sort", "argsort", "unique", "quantile")   # the 1.5x targets


# -- checks: each raises AssertionError when cpnumeric's result is wrong ----------

def close(res, ref, rtol=1e-7):
    """Relative to the largest reference entry (absolute error near zero)."""
    res, ref = numpy.asarray(res), numpy.asarray(ref)
    atol = rtol * float(numpy.max(numpy.abs(ref))) if ref.size else 0.0
    numpy.testing.assert_allclose(res, ref, rtol=rtol, atol=atol)


def equal(res, ref, inputs):
    numpy.testing.assert_array_equal(res, ref)


def equal_parts(res, ref, inputs):
    for r, e in zip(res, ref):
        numpy.testing.assert_array_equal(r, e)


def check_argsort(res, ref, inputs):
    # Ties may be ordered differently; the values they pick may not.
    a = inputs[0]
    numpy.testing.assert_array_equal(a[res], a[ref])


def check_partition(res, ref, inputs):
    k = len(ref) // 2
    assert res[k] == ref[k], (res[k], ref[k])
    assert numpy.all(res[:k] <= res[k]) and numpy.all(res[k:] >= res[k]), "not partitioned"


def check_qr(res, ref, inputs):
    q, r = res
    close(q @ r, inputs[0], 1e-8)
    close(numpy.abs(r), numpy.abs(ref[1]), 1e-6)   # R is unique up to row signs


def check_svd(res, ref, inputs):
    u, s, vh = res
    close(s, ref[1], 1e-8)
    close((u * s[..., None, :]) @ vh, inputs[0], 1e-8)


def check_eigh(res, ref, inputs):
    w, v = res
    close(w, ref[0], 1e-8)
    close((v * w[..., None, :]) @ numpy.swapaxes(v, -1, -2), inputs[0], 1e-8)


def loose(rtol):
    return lambda res, ref, inputs: close(res, ref, rtol)


# -- inputs -----------------------------------------------------------------------

def rng():
    return numpy.random.default_rng(0)   # the same inputs for every run and row


def values(n, dtype):
    g = rng()
    if numpy.dtype(dtype).kind == "i":
        info = numpy.iinfo(dtype)
        return g.integers(info.min, info.max, n, dtype=dtype)
    return g.standard_normal(n).astype(dtype)


def well_conditioned(shape, dtype=numpy.float64):
    """I + G / (2 sqrt(n)): eigenvalues in the disk |z - 1| <= 1/2, so the
    condition number is small and det stays near 1 even at n = 1000."""
    n = shape[-1]
    g = rng().standard_normal(shape) / (2 * numpy.sqrt(n))
    return (g + numpy.eye(n)).astype(dtype)


def spd(shape):
    b = rng().standard_normal(shape)
    return b @ numpy.swapaxes(b, -1, -2) + shape[-1] * numpy.eye(shape[-1])


def symmetric(shape):
    b = rng().standard_normal(shape)
    return (b + numpy.swapaxes(b, -1, -2)) / 2


def label(shape):
    if isinstance(shape, int):
        return f"1e{len(str(shape)) - 1}" if str(shape).strip("0") == "1" else str(shape)
    return "x".join(map(str, shape))


# -- the rows: (name, size label, dtype, inputs, run(lib, *inputs), check) ---------

def cases(quick):
    sizes = [n for n in SIZES_1D if not quick or n <= QUICK_MAX_1D]
    mats = [n for n in MATRICES if not quick or n <= QUICK_MAX_MATRIX]
    fact = [n for n in mats if n <= 1000]   # factorizations stop at 1000^2
    c = []
    for dt in ("float64", "float32", "int64", "int32"):
        for n in sizes:
            c.append(("sort", n, dt, lambda n=n, dt=dt: (values(n, dt),),
                      lambda np, a: np.sort(a), equal))
    for dt in ("float64", "float32", "int64", "int32"):
        for n in sizes:
            c.append(("argsort", n, dt, lambda n=n, dt=dt: (values(n, dt),),
                      lambda np, a: np.argsort(a), check_argsort))
    for n in sizes:
        # ~100 repeats of each value, the usual use of unique on integers.
        c.append(("unique", n, "int64",
                  lambda n=n: (rng().integers(0, max(10, n // 100), n),),
                  lambda np, a: np.unique(a), equal))
        c.append(("unique", n, "float64", lambda n=n: (values(n, "float64"),),
                  lambda np, a: np.unique(a), equal))
    for n in sizes:
        a64 = (lambda n=n: (values(n, "float64"),))
        c.append(("quantile", n, "float64", a64,
                  lambda np, a: np.quantile(a, [0.1, 0.5, 0.9]), loose(1e-12)))
        c.append(("median", n, "float64", a64, lambda np, a: np.median(a), loose(1e-12)))
        c.append(("partition", n, "float64", a64,
                  lambda np, a: np.partition(a, a.shape[0] // 2), check_partition))
        c.append(("searchsorted", n, "float64",
                  lambda n=n: (numpy.sort(values(n, "float64")),
                               rng().standard_normal(10**5) * 1.5),
                  lambda np, h, v: np.searchsorted(h, v), equal))
    for n in sizes:
        # Group labels (~100 per value), as a group-by over keys uses them.
        labels = (lambda n=n: (rng().integers(0, max(10, n // 100), n),))
        c.append(("unique_inverse", n, "int64", labels,
                  lambda np, a: np.unique(a, return_inverse=True), equal_parts))
        c.append(("bincount", n, "int64",
                  lambda n=n: (rng().integers(0, max(10, n // 100), n), rng().random(n)),
                  lambda np, x, w: np.bincount(x, w), loose(1e-12)))
        c.append(("histogram", n, "float64", lambda n=n: (values(n, "float64"),),
                  lambda np, a: np.histogram(a, bins=100), equal_parts))
    for n in sizes:
        c.append(("take", n, "float64",
                  lambda n=n: (values(n, "float64"), rng().integers(0, n, n)),
                  lambda np, a, i: a[i], equal))
        # Distinct indices: with repeats, which value lands is unspecified.
        c.append(("put", n, "float64",
                  lambda n=n: (values(n, "float64"), rng().permutation(n)[: n // 2],
                               rng().random(n // 2)),
                  lambda np, a, i, v: (a.__setitem__(i, v), a)[1], equal))
        c.append(("take_along_axis", (n // 100, 100), "float64",
                  lambda n=n: (values(n, "float64").reshape(-1, 100),
                               rng().integers(0, 100, (n // 100, 100))),
                  lambda np, a, i: np.take_along_axis(a, i, axis=1), equal))
        c.append(("compress", n, "float64",
                  lambda n=n: (values(n, "float64"), rng().random(n) < 0.5),
                  lambda np, a, m: a[m], equal))
        c.append(("mask_assign", n, "float64",
                  lambda n=n: (values(n, "float64"), rng().random(n) < 0.5),
                  lambda np, a, m: (a.__setitem__(m, 0.0), a)[1], equal))
        c.append(("cumsum", n, "float64", lambda n=n: (values(n, "float64"),),
                  lambda np, a: np.cumsum(a), loose(1e-7)))
        # Factors near 1, so that the product neither overflows nor vanishes.
        c.append(("cumprod", n, "float64",
                  lambda n=n: (1.0 + 1e-4 * (rng().random(n) - 0.5),),
                  lambda np, a: np.cumprod(a), loose(1e-7)))
    for dt, tol in (("float64", 1e-10), ("float32", 1e-4)):
        for shape in [(n, n) for n in mats] + STACKS:
            c.append(("matmul", shape, dt,
                      lambda s=shape, dt=dt: (values(s, dt), values(s, dt)[..., ::-1, :].copy()),
                      lambda np, a, b: a @ b, loose(tol)))
    for n in mats:
        c.append(("matvec", (n, n), "float64",
                  lambda n=n: (values((n, n), "float64"), values(n, "float64")),
                  lambda np, a, x: a @ x, loose(1e-10)))
    linalg = [
        ("solve", lambda s: (well_conditioned(s),
                             values(s[:-1] if len(s) == 2 else s[:-1] + (1,), "float64")),
         lambda np, a, b: np.linalg.solve(a, b), loose(1e-9)),
        ("cholesky", lambda s: (spd(s),), lambda np, a: np.linalg.cholesky(a), loose(1e-9)),
        ("qr", lambda s: (values(s, "float64"),), lambda np, a: np.linalg.qr(a), check_qr),
        ("svd", lambda s: (values(s, "float64"),), lambda np, a: np.linalg.svd(a), check_svd),
        ("eigh", lambda s: (symmetric(s),), lambda np, a: np.linalg.eigh(a), check_eigh),
        ("inv", lambda s: (well_conditioned(s),), lambda np, a: np.linalg.inv(a), loose(1e-9)),
        ("det", lambda s: (well_conditioned(s),), lambda np, a: np.linalg.det(a), loose(1e-9)),
    ]
    for name, make, run, check in linalg:
        for shape in [(n, n) for n in fact] + STACKS:
            c.append((name, shape, "float64", lambda s=shape, make=make: make(s), run, check))
    # One function's rows together, in the order the functions first appear.
    first = {}
    for row in c:
        first.setdefault(row[0], len(first))
    return sorted(c, key=lambda row: first[row[0]])


# -- timing -----------------------------------------------------------------------

SETTLE_S = 0.15


def to_numpy(r):
    if isinstance(r, tuple):   # qr, svd, eigh give (named) tuples
        return tuple(to_numpy(x) for x in r)
    return cpnumeric.asnumpy(r)


def timed(lib, run, args, number):
    """Seconds per call of `number` calls, each finished (synchronized)."""
    sync = cpnumeric.synchronize if lib is cpnumeric else (lambda: None)
    sync()   # nothing pending from before is counted
    t0 = time.perf_counter()
    for _ in range(number):
        out = run(lib, *args)
        sync()
    return (time.perf_counter() - t0) / number, out


def bench(name, size, dtype, make, run, check, reps):
    row = {"function": name, "size": label(size), "dtype": dtype}
    np_args = make()
    # Own copies (asarray copies): the in-place rows must not share a buffer.
    cp_args = tuple(cpnumeric.asarray(a) for a in np_args)
    cpnumeric.synchronize()   # inputs materialized before any timing
    t_np, _ = timed(numpy, run, np_args, 1)                        # warm-up
    t_np = min(t_np, timed(numpy, run, np_args, 1)[0])   # a warm call sizes `number`
    cpnumeric.reset_stats()
    row["cpnumeric_first_call_s"], _ = timed(cpnumeric, run, cp_args, 1)
    # Windows the baseline tier ran are compiled on the compiler thread once
    # they come again (as in run.py): a second untimed call, then the
    # compiles' end, so that the timed calls run the kernels a long-running
    # program would. What the timed calls still compiled or ran on the
    # baseline tier is in the row (and marked in the table).
    cpnumeric._cpn.wait_compiles()
    if cpnumeric.stats()["baseline_windows"]:
        timed(cpnumeric, run, cp_args, 1)
        cpnumeric._cpn.wait_compiles()
    row["compilations"] = cpnumeric.stats()["compilations"]
    cpnumeric.reset_stats()
    number = max(1, min(1000, int(MIN_REP_S / max(t_np, 1e-7))))
    times = {"numpy": [], "cpnumeric": []}
    for _ in range(reps):   # alternating, each after the other's threads went idle
        time.sleep(SETTLE_S)
        t, ref = timed(numpy, run, np_args, number)
        times["numpy"].append(t)
        time.sleep(SETTLE_S)
        t, out = timed(cpnumeric, run, cp_args, number)
        times["cpnumeric"].append(t)
    st = cpnumeric.stats()
    row["timed_baseline_windows"] = st["baseline_windows"]
    row["timed_compilations"] = st["compilations"]
    row["numpy_s"] = statistics.median(times["numpy"])
    row["cpnumeric_s"] = statistics.median(times["cpnumeric"])
    row["ratio"] = row["numpy_s"] / row["cpnumeric_s"]
    row["number"] = number
    try:
        check(to_numpy(out), ref, np_args)
        row["status"] = "ok"
    except AssertionError as e:
        row["status"] = "WRONG"
        row["detail"] = " ".join(str(e).split())[:120]
    return row


# -- report -----------------------------------------------------------------------

def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {os.cpu_count()} cores"


def blas():
    """cpnumeric's BLAS/LAPACK config, where this build reports it."""
    try:
        c = cpnumeric._sysinfo.blas_config()
        return {k: (v.strip() if isinstance(v, str) else v) for k, v in c.items()}
    except Exception as e:   # an older build: no _sysinfo or no blas_config
        return {"error": f"{type(e).__name__}: {e}"}


def cells(r):
    if "numpy_s" not in r:
        return [r["function"], r["size"], r["dtype"], "", "", "", r["status"]]
    status = r["status"] if r["status"] == "ok" else f"WRONG: {r.get('detail', '')}"
    if r.get("timed_baseline_windows") or r.get("timed_compilations"):
        status += (f" (timed: {r['timed_baseline_windows']} baseline windows, "
                   f"{r['timed_compilations']} compiles)")
    return [r["function"], r["size"], r["dtype"], f"{1e3 * r['numpy_s']:.4g}",
            f"{1e3 * r['cpnumeric_s']:.4g}", f"{r['ratio']:.2f}×", status]


def markdown(rows, meta):
    head = ["function", "size", "dtype", "NumPy ms", "cpnumeric ms", "NumPy/cpn", "check"]
    b = meta["blas"]
    lines = [f"Machine: {meta['machine']}; NumPy {meta['numpy']}; cpnumeric BLAS "
             f"{b.get('library', 'n/a')} (core {b.get('core', 'n/a')}, threads "
             f"{b.get('threads', 'n/a')}); median of {meta['reps']}; {meta['date']}.", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def summary(rows):
    timed_rows = [r for r in rows if r["status"] == "ok"]
    tag = lambda r: f"{r['function']} {r['size']} {r['dtype']} ({r['ratio']:.2f}x)"  # noqa: E731
    below = [tag(r) for r in timed_rows if r["ratio"] < 1.0]
    targets = [tag(r) for r in timed_rows
               if r["function"] in TARGET_NAMES and r["ratio"] < 1.5]
    bad = [f"{r['function']} {r['size']} {r['dtype']}" for r in rows if r["status"] != "ok"]
    lines = [f"Summary: {len(timed_rows) - len(below)} of {len(timed_rows)} correct rows "
             f">= 1.0x; {len(bad)} WRONG/ERROR rows.",
             "  below 1.0x: " + ("; ".join(below) or "none"),
             f"  {'/'.join(TARGET_NAMES)} below 1.5x: " + ("; ".join(targets) or "none")]
    if bad:
        lines.append("  WRONG/ERROR: " + "; ".join(bad))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="sizes up to 1e6 elements / 1000^2, fewer repetitions (1-3 minutes)")
    ap.add_argument("--only", default="", help="rows whose function name contains this")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (median)")
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    ap.add_argument("--markdown", default=None, help="write the table here")
    args = ap.parse_args()
    faulthandler.enable()
    reps = args.reps or (3 if args.quick else 5)
    meta = {"machine": machine(), "numpy": numpy.__version__, "blas": blas(),
            "date": time.strftime("%Y-%m-%d"), "quick": args.quick, "reps": reps}
    print(f"Machine: {meta['machine']}; NumPy {meta['numpy']}", flush=True)
    print("cpnumeric BLAS: " + ", ".join(f"{k}={v}" for k, v in meta["blas"].items()),
          flush=True)
    rows = []
    for name, size, dtype, make, run, check in cases(args.quick):
        if args.only not in name:
            continue
        # The row's name first: a crash inside a library call (not an
        # exception; faulthandler prints its stack) then says which row.
        print(f"  {name:16s} {label(size):12s} {dtype:8s}", end=" ", flush=True)
        try:
            row = bench(name, size, dtype, make, run, check, reps)
        except Exception as e:   # one broken function must not end the run
            row = {"function": name, "size": label(size), "dtype": dtype,
                   "status": f"ERROR: {type(e).__name__}: {' '.join(str(e).split())[:160]}"}
        rows.append(row)
        c = cells(row)
        print(f"NumPy {c[3]:>9s} ms  cpnumeric {c[4]:>9s} ms  {c[5]:>7s}  {c[6]}", flush=True)
    table = markdown(rows, meta)
    print()
    print(table)
    print(summary(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n" + summary(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
