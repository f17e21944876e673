"""The benchmark runner: every workload with NumPy and with cpnumeric in one
process, alternating repetitions after a warm-up, plus NumExpr, Numba and Dask
columns where a workload has a peer version and the peer is installed
(`make bench-peers`).

    python benchmarks/run.py [--quick] [--only NAME,...] [--reps N]
                             [--json FILE] [--markdown FILE]

Per workload it reports the median time of each library, the ratio
NumPy / cpnumeric, cpnumeric's compile time on the first call, the peak memory
of one run of each (resident-set high-water above the level before the run,
of a warm run in a fresh process), and the fraction of the memory
bandwidth bound each reaches: the workload's compulsory bytes over its time,
against a STREAM triad measured in the same run.
"""

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "workloads"))

# A fresh kernel cache, so that the first call's compile time is measured and
# the memory children measure the warm-process (disk cache) start.
if "CPN_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile
    os.environ["CPN_CACHE_DIR"] = tempfile.mkdtemp(prefix="cpn-bench-cache-")
    atexit.register(shutil.rmtree, os.environ["CPN_CACHE_DIR"], True)

import cpnumeric  # noqa: E402
from cpnumeric import _cpn  # noqa: E402

# (workload module, size key) for the full run and for --quick.
FULL = [("black_scholes", "full"), ("black_scholes", "full32"), ("jacobi", "full"),
        ("stencil", "full"), ("cavity_flow", "full"), ("cg", "full"), ("kmeans", "full"),
        ("logreg", "full"), ("lstm", "full"), ("gemm", "full"), ("reductions", "full")]
QUICK = [(m, "quick32" if s == "full32" else "quick") for m, s in FULL]

PEERS = {"numexpr": "numexpr", "numba": "numba", "dask": "dask.array"}


def sync(lib, out):
    """Makes sure the results exist (cpnumeric is asynchronous)."""
    if lib is cpnumeric:
        cpnumeric.synchronize()
    return out


def one_run(run, lib, mod, params):
    data = mod.inputs(lib if lib in (numpy, cpnumeric) else numpy, **params)
    sync(cpnumeric, None)
    t0 = time.perf_counter()
    sync(lib, run(*data, **params))
    return time.perf_counter() - t0


def peak_memory(name, size, lib):
    """Peak resident bytes of one warm run above the level before it, measured
    in a fresh process (in this one, freed memory kept by malloc or by
    cpnumeric's pool would hide new allocations). That process's first run
    finds the kernels in the disk cache this process wrote: its compilations,
    disk hits and load time are returned too (the warm-process cost)."""
    code = (
        "import sys, importlib, numpy\n"
        f"sys.path.insert(0, {os.path.join(HERE, 'workloads')!r})\n"
        f"import {lib} as lib\n"
        f"mod = importlib.import_module({name!r}); params = mod.SIZES[{size!r}]\n"
        "import cpnumeric, gc\n"
        "data = mod.inputs(lib, **params); cpnumeric.synchronize()\n"
        "out = mod.run(lib, *data, **params)  # as the timed runs call it\n"
        "cpnumeric.synchronize(); cpnumeric._cpn.wait_compiles(); del out, data\n"
        "s = cpnumeric.stats()\n"
        "data = mod.inputs(lib, **params)\n"
        "cpnumeric.synchronize(); gc.collect(); cpnumeric._cpn.trim_pool()\n"
        "def kib(f):\n"
        "    return int([l for l in open('/proc/self/status') if l.startswith(f)][0].split()[1])\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        "base = kib('VmRSS')\n"
        "out = mod.run(lib, *data, **params)\n"
        "cpnumeric.synchronize()\n"
        "print(max(0, kib('VmHWM') - base) * 1024, s['compilations'], s['disk_hits'],"
        " s['disk_load_seconds'])\n")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=600, check=True)
        peak, compilations, hits, load = r.stdout.split()[-4:]
        return int(peak), {"compilations": int(compilations), "disk_hits": int(hits),
                           "disk_load_s": float(load)}
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None, None


def runners(mod, peers):
    r = {"numpy": (numpy, lambda *a, **k: mod.run(numpy, *a, **k)),
         "cpnumeric": (cpnumeric, lambda *a, **k: mod.run(cpnumeric, *a, **k))}
    for name, peer in peers.items():
        fn = getattr(mod, "run_" + name, None)
        if fn is not None:
            r[name] = (peer, lambda *a, _fn=fn, _p=peer, **k: _fn(_p, *a, **k))
    return r


def bench(name, size, reps, peers, bandwidth):
    mod = importlib.import_module(name)
    params = mod.SIZES[size]
    libs = runners(mod, peers)
    row = {"workload": name, "size": size, "params": params}
    # First call: cpnumeric compiles here (reported separately), peers JIT.
    cpnumeric.reset_stats()
    first = {k: one_run(fn, lib, mod, params) for k, (lib, fn) in libs.items()}
    # Windows the baseline tier ran are compiled on the compiler thread once
    # they come again: a second untimed call, so that the timed ones run the
    # kernels a long-running program would (the compiles are counted).
    cpnumeric._cpn.wait_compiles()
    if cpnumeric.stats()["baseline_windows"]:
        one_run(libs["cpnumeric"][1], cpnumeric, mod, params)
        cpnumeric._cpn.wait_compiles()
    s = cpnumeric.stats()
    row["cpnumeric_first_call_s"] = first["cpnumeric"]
    row["compile_s"] = s["compile_seconds"]
    row["compile_per_trace_s"] = s["compile_seconds"] / max(1, s["compilations"])
    row["compilations"] = s["compilations"]
    cpnumeric.reset_stats()
    times = {k: [] for k in libs}
    for _ in range(reps):  # alternating
        for k, (lib, fn) in libs.items():
            times[k].append(one_run(fn, lib, mod, params))
    s = cpnumeric.stats()
    row["warm_compilations"] = s["compilations"]
    row["fallbacks"] = s["fallbacks"]
    for k in libs:
        row[k + "_s"] = statistics.median(times[k])
    traffic = mod.traffic(**params)
    for k in ("numpy", "cpnumeric"):
        row[k + "_peak_bytes"], warm = peak_memory(name, size, k)
        if k == "cpnumeric" and warm:
            row["warm_process"] = warm
        row[k + "_bw_fraction"] = traffic / row[k + "_s"] / (bandwidth * 1e9)
    row["speedup"] = row["numpy_s"] / row["cpnumeric_s"]
    for k in peers:
        if k + "_s" in row:
            row[k + "_speedup"] = row["numpy_s"] / row[k + "_s"]
    return row


def fmt_mb(b):
    return "n/a" if b is None else f"{b / 2**20:.0f}"


def markdown(rows, meta):
    peer_cols = [p for p in PEERS if any(p + "_speedup" in r for r in rows)]
    head = ["workload", "size", "NumPy s", "cpnumeric s", "NumPy/cpn", "compile s (traces)",
            "warm-process load ms",
            "peak MB NumPy", "peak MB cpn", "BW NumPy", "BW cpn"]
    head += [f"{p} ×" for p in peer_cols]
    lines = [f"Machine: {meta['machine']}; STREAM triad {meta['triad_gbs']:.1f} GB/s "
             f"({meta['threads']} threads); NumPy {meta['numpy']}; {meta['date']}.", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [r["workload"], r["size"], f"{r['numpy_s']:.3f}", f"{r['cpnumeric_s']:.3f}",
                 f"{r['speedup']:.2f}×", f"{r['compile_s']:.2f} ({r['compilations']})",
                 (f"{1e3 * r['warm_process']['disk_load_s']:.0f}"
                  + ("" if r["warm_process"]["compilations"] == 0
                     else f" (+{r['warm_process']['compilations']} compiled)"))
                 if r.get("warm_process") else "n/a",
                 fmt_mb(r["numpy_peak_bytes"]), fmt_mb(r["cpnumeric_peak_bytes"]),
                 f"{100 * r['numpy_bw_fraction']:.0f}%", f"{100 * r['cpnumeric_bw_fraction']:.0f}%"]
        cells += [f"{r[p + '_speedup']:.2f}×" if p + "_speedup" in r else "–" for p in peer_cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, under 2 minutes")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--reps", type=int, default=None, help="timed repetitions (median)")
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    ap.add_argument("--markdown", default=None, help="write the table here")
    args = ap.parse_args()
    entries = QUICK if args.quick else FULL
    if args.only:
        keep = set(args.only.split(","))
        entries = [e for e in entries if e[0] in keep]
    reps = args.reps or (3 if args.quick else 5)
    peers = {}
    for name, module in PEERS.items():
        try:
            peers[name] = importlib.import_module(module)
        except ImportError:
            pass
    threads = os.cpu_count() or 1
    triad = _cpn.stream_triad(20_000_000, threads, 5)
    meta = {"machine": f"{platform.processor() or platform.machine()}, {threads} CPUs",
            "triad_gbs": triad, "threads": threads, "numpy": numpy.__version__,
            "date": time.strftime("%Y-%m-%d"), "peers": sorted(peers),
            "quick": args.quick}
    print(f"STREAM triad: {triad:.1f} GB/s; peers: {', '.join(peers) or 'none installed'}",
          flush=True)
    rows = []
    for name, size in entries:
        t0 = time.perf_counter()
        rows.append(bench(name, size, reps, peers, triad))
        r = rows[-1]
        print(f"  {name:14s} {size:8s} NumPy {r['numpy_s']:.3f}s  cpnumeric "
              f"{r['cpnumeric_s']:.3f}s  ({r['speedup']:.2f}x, compile {r['compile_s']:.2f}s,"
              f" {time.perf_counter() - t0:.0f}s)", flush=True)
    table = markdown(rows, meta)
    print()
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
