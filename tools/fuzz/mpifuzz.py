#!/usr/bin/env python3
"""mpifuzz: cpnfuzz's random NumPy programs on several MPI ranks, arrays
split in blocks of rows (CPN_PARTITION=rows), against NumPy.

Every rank generates the same programs (gen.py), runs each under cpnumeric
in one process, one after another (as a user's program runs: one engine,
control replication), and compares its values, printed text and exceptions
with NumPy's run of the same program (fuzzlib.compare, the rules of
docs/fuzzing.md). With a low threshold (default 64 elements) nearly every
array is split, so every op goes through cpn-localize's rank programs, halo
rows, gathers and combined partials.

    python tools/fuzz/mpifuzz.py --seed 1 -n 300 --ranks 2,3

A run that dies (a crash, an abort of all ranks) or hangs (--timeout per
program) is reported at the program it was running, and the run goes on
from the next one. Exit status: 0 when every program agreed on every rank.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def child(args):
    import fuzzlib
    import gen
    import cpnumeric as cp
    rank = cp.rank()
    out = open(os.path.join(args.out, f"rank{rank}.jsonl"), "a", buffering=1)

    def on_alarm(signum, frame):
        out.write(json.dumps({"index": state["index"], "status": "hang"}) + "\n")
        out.flush()
        os._exit(3)
    state = {"index": -1}
    signal.signal(signal.SIGALRM, on_alarm)
    for index in range(args.start, args.start + args.n):
        state["index"] = index
        res = {"index": index}
        try:
            prog = gen.generate(args.seed, index)
            an = fuzzlib.analyze(prog)
        except Exception:   # noqa: BLE001 - the generator's, not cpnumeric's
            res["status"] = "generror"
            out.write(json.dumps(res) + "\n")
            continue
        if an.ill:
            res["status"] = "illposed"
            out.write(json.dumps(res) + "\n")
            continue
        signal.alarm(int(args.timeout))
        try:
            outcomes, values, prints = fuzzlib.run_program(prog, cp, None, cp.ndarray)
            divs = fuzzlib.compare(prog, an, outcomes, values, prints)
        except BaseException:   # noqa: BLE001
            divs = [{"cat": "harness", "index": -1, "op": "?",
                     "detail": traceback.format_exc()[-1500:]}]
        signal.alarm(0)
        res["status"] = "fail" if divs else "ok"
        if divs:
            res["sig"] = fuzzlib.signature(divs[0])
            res["detail"] = str(divs[0].get("detail", ""))[:600]
        # How the programs ran split: windows with an interior beside its
        # halo round (the summary line reports the sum).
        res["overlap"] = cp.stats().get("halo_overlap_windows", 0)
        cp.reset_stats()
        out.write(json.dumps(res) + "\n")
    return 0


def read_results(folder, ranks):
    """{index: {rank: result}} from every rank's file."""
    got = {}
    for r in range(ranks):
        path = os.path.join(folder, f"rank{r}.jsonl")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                try:
                    res = json.loads(line)
                except ValueError:
                    continue
                got.setdefault(res["index"], {})[r] = res
    return got


def run_ranks(args, ranks):
    """Programs start .. start + n - 1 on `ranks` ranks; returns the
    failures."""
    env = dict(os.environ, CPN_PARTITION="rows",
               CPN_PARTITION_THRESHOLD=str(args.threshold),
               # Interior and border split whatever the blocks' size.
               CPN_HALO_OVERLAP="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONHASHSEED="0",
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    if args.eager0:
        env.update(CPN_EAGER_THRESHOLD="0", CPN_BASELINE_WORK="0")
    elif args.eager is not None:
        env.update(CPN_EAGER_THRESHOLD=str(args.eager))
    failures = []
    end = args.start + args.n
    with tempfile.TemporaryDirectory(prefix="mpifuzz") as folder:
        start = args.start
        while start < end:
            cmd = ["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable,
                   __file__, "--child", "--seed", str(args.seed), "--start",
                   str(start), "-n", str(end - start), "--out", folder,
                   "--timeout", str(args.timeout)]
            try:
                p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                   timeout=args.timeout * (end - start) + 120, cwd=ROOT)
                rc, tail = p.returncode, (p.stderr or "")[-800:]
            except subprocess.TimeoutExpired as e:
                rc, tail = "timeout", str(e.stderr or "")[-800:]
            got = read_results(folder, ranks)
            done = [i for i in got if len(got[i]) == ranks]
            last = max(done) if done else start - 1
            if rc == 0 and last == end - 1:
                break
            # The run ended early at the program after the last every rank
            # finished: report it, go on after it.
            bad = last + 1
            statuses = {r: res.get("status") for r, res in got.get(bad, {}).items()}
            failures.append({"ranks": ranks, "index": bad,
                             "sig": "hang" if "hang" in statuses.values() else f"died ({rc})",
                             "detail": tail.strip().splitlines()[-6:]})
            start = bad + 1
        for index, per in sorted(read_results(folder, ranks).items()):
            for r, res in sorted(per.items()):
                if res["status"] == "fail":
                    failures.append({"ranks": ranks, "rank": r, "index": index,
                                     "sig": res.get("sig"), "detail": res.get("detail")})
        counts = {}
        overlap = 0
        for per in read_results(folder, ranks).values():
            st = per.get(0, {}).get("status", "?")
            counts[st] = counts.get(st, 0) + 1
            overlap += per.get(0, {}).get("overlap", 0)
    print(f"mpifuzz seed {args.seed}, {ranks} ranks: {json.dumps(counts)}, "
          f"{overlap} windows with interior and border", flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--ranks", default="2,3")
    ap.add_argument("--threshold", type=int, default=64,
                    help="CPN_PARTITION_THRESHOLD (64: nearly every array split)")
    ap.add_argument("--eager0", action="store_true",
                    help="every op traced and compiled (CPN_EAGER_THRESHOLD=0)")
    ap.add_argument("--eager", type=int,
                    help="CPN_EAGER_THRESHOLD (default: the library's; a value near "
                    "--threshold mixes eager and split arrays in one program)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a program may take on the ranks")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child:
        return child(args)
    t0 = time.time()
    failures = []
    for ranks in [int(x) for x in args.ranks.split(",") if x]:
        failures += run_ranks(args, ranks)
    for f in failures:
        print(f"FAIL {args.seed}:{f['index']} on {f['ranks']} ranks"
              f"{' (rank %d)' % f['rank'] if 'rank' in f else ''}: {f['sig']}\n"
              f"    {f['detail']}", flush=True)
    print(f"mpifuzz: {len(failures)} failure(s) in {time.time() - t0:.0f} s "
          f"(show one: python tools/fuzz/cpnfuzz.py --show {args.seed}:INDEX)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
