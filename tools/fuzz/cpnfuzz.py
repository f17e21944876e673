#!/usr/bin/env python3
"""cpnfuzz: a differential fuzzer of cpnumeric against NumPy.

Random NumPy programs (gen.py) run once under NumPy and once under cpnumeric
(worker.py); values, dtypes, shapes, printed text and exceptions are compared
(fuzzlib.py; the rules are in docs/fuzzing.md).

    python tools/fuzz/cpnfuzz.py --seed 1 -n 1000 --mode default,eager0 --jobs 2
    python tools/fuzz/cpnfuzz.py --show 1:17           # print program 17
    python tools/fuzz/cpnfuzz.py --run 1:17 --mode eager0   # run it, verbose

Modes: default (cpnumeric as it is), eager0 (CPN_EAGER_THRESHOLD=0 and
CPN_BASELINE_WORK=0: every op traced and compiled), baseline (every op
traced, every window seen once run by the baseline tier, elementwise runs
of 16+ elements in blocks of 8), mixed (CPN_EAGER_THRESHOLD=48: small
arrays eager beside traced ones, small views of computed arrays read and
written by NumPy), jit (the program's body in one @cpnumeric.jit
function), numpy (NumPy against itself: checks the harness). A comma list
runs several; `all` is default,eager0,baseline,jit.

Exit status: 0 when every program agreed, 1 otherwise.
"""

import argparse
import collections
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository whose python/ is tested (CPNFUZZ_ROOT: run a copy of these
# tools against a checkout elsewhere).
ROOT = os.environ.get("CPNFUZZ_ROOT") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FAIL_STATUSES = ("fail", "crash", "hang")


def mode_env(mode, cache_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["CPN_CACHE_DIR"] = cache_dir
    env.pop("CPN_EAGER_THRESHOLD", None)
    env.pop("CPN_BASELINE_WORK", None)
    env.pop("CPN_BASELINE_BLOCK", None)
    if mode == "eager0":
        env["CPN_EAGER_THRESHOLD"] = "0"
        env["CPN_BASELINE_WORK"] = "0"
    elif mode == "baseline":
        env["CPN_EAGER_THRESHOLD"] = "0"
        env["CPN_BASELINE_WORK"] = str(1 << 62)
        env["CPN_BASELINE_BLOCK"] = "8"  # runs of 16+ elements in blocks
    elif mode == "mixed":
        env["CPN_EAGER_THRESHOLD"] = "48"
    env.setdefault("PYTHONHASHSEED", "0")
    return env


class StartError(RuntimeError):
    """A worker could not import NumPy or cpnumeric (a rebuild in progress?)."""


class Worker:
    """One worker process (worker.py) and its pipe. A worker whose imports
    fail (the shared library being relinked, say) is started again after a
    pause, a few times, before the run stops: that is not a program's crash."""

    def __init__(self, mode, args, cache_dir, log, tries=6):
        self.mode, self.args, self.log = mode, args, log
        cmd = [sys.executable, os.path.join(HERE, "worker.py"), "--mode", mode,
               "--timeout", str(args.timeout), "--mem-limit-gb", str(args.mem_limit_gb)]
        if args.no_fork:
            cmd.append("--no-fork")
        for attempt in range(tries):
            self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=log, env=mode_env(mode, cache_dir),
                                      text=True, bufsize=1, cwd=ROOT)
            r, _, _ = select.select([self.p.stdout.fileno()], [], [], 300)
            line = self.p.stdout.readline() if r else ""
            try:
                hello = json.loads(line) if line else {"ready": False, "error": "no answer"}
            except ValueError:
                hello = {"ready": False, "error": line[-500:]}
            if hello.get("ready"):
                break
            self.kill()
            err = hello.get("error", "")
            if attempt == tries - 1:
                raise StartError(f"a {mode} worker could not start: {err}")
            print(f"cpnfuzz: a worker could not start ({err.strip().splitlines()[-1] if err.strip() else '?'}); "
                  "trying again in 20 s", file=sys.stderr, flush=True)
            time.sleep(20)
        self.done = 0

    def call(self, task, timeout):
        """The worker's answer, or ('died', returncode) / ('timeout', None)."""
        try:
            self.p.stdin.write(json.dumps(task) + "\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            return ("died", self.p.wait())
        fd = self.p.stdout.fileno()
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            self.kill()
            return ("timeout", None)
        line = self.p.stdout.readline()
        if not line:
            return ("died", self.p.wait())
        self.done += 1
        return ("ok", json.loads(line))

    def kill(self):
        try:
            self.p.kill()
        except OSError:
            pass
        self.p.wait()

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


def _signame(rc):
    if rc is not None and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit {rc}"


class Pool:
    """`jobs` threads, each with its own worker process, running tasks."""

    def __init__(self, mode, args, cache_dir, log):
        self.mode, self.args, self.cache_dir, self.log = mode, args, cache_dir, log

    def worker_timeout(self):
        return self.args.timeout + 120

    def run_task(self, state, task):
        """Run one task on this thread's worker; handles a dying worker."""
        args = self.args
        if state.get("w") is None or state["w"].done >= args.batch:
            if state.get("w") is not None:
                state["w"].close()
            state["w"] = Worker(self.mode, args, self.cache_dir, self.log)
        kind, res = state["w"].call(task, self.worker_timeout())
        if kind == "ok":
            return res
        # The worker died (or hung) while running this task. Run the task
        # again alone in a fresh process to see whether it is the cause.
        first = _signame(res) if kind == "died" else "timeout"
        state["w"] = None
        w = Worker(self.mode, args, self.cache_dir, self.log)
        kind2, res2 = w.call(task, self.worker_timeout())
        if kind2 == "ok":
            w.close()
            res2.setdefault("divs", [])
            if res2["status"] == "ok":
                res2["status"] = "crash"
                d = {"cat": "crash" if kind == "died" else "hang", "index": -1,
                     "op": "batch", "signal": first,
                     "detail": f"the worker died ({first}) running this program after "
                               "others; alone it runs through"}
                d["sig"] = f"{d['cat']} | batch | {first}"
                res2["divs"] = [d]
                res2["sig"] = d["sig"]
            return res2
        rc = res2 if kind2 == "died" else None
        if kind2 != "died":
            w.kill()
        cat = "crash" if kind2 == "died" else "hang"
        sig = _signame(rc) if kind2 == "died" else "timeout"
        d = {"cat": cat, "index": -1, "op": "?", "signal": sig,
             "detail": f"the worker process died ({sig}) on this program alone"}
        d["sig"] = f"{cat} | worker | {sig}"
        return {"seed": task.get("seed", task.get("prog", {}).get("seed")),
                "index": task.get("index", task.get("prog", {}).get("index")),
                "status": cat, "divs": [d], "sig": d["sig"],
                "prog": task.get("prog")}

    def map(self, tasks, on_result):
        q = queue.Queue()
        for t in tasks:
            q.put(t)

        errors = []

        def loop():
            state = {}
            while not errors:
                try:
                    t = q.get_nowait()
                except queue.Empty:
                    break
                try:
                    res = self.run_task(state, t)
                except StartError as e:
                    errors.append(e)
                    break
                on_result(t, res)
            if state.get("w") is not None:
                state["w"].close()
        threads = [threading.Thread(target=loop, daemon=True)
                   for _ in range(max(1, self.args.jobs))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            raise errors[0]

    def map_fn(self, items, fn):
        """Run fn(item, call) on the threads, call(task) running a task on
        that thread's worker."""
        q = queue.Queue()
        for it in items:
            q.put(it)
        out = {}
        lock = threading.Lock()

        def loop():
            state = {}
            while True:
                try:
                    it = q.get_nowait()
                except queue.Empty:
                    break
                try:
                    r = fn(it, lambda task: self.run_task(state, task))
                except StartError:
                    r = None
                with lock:
                    out[id(it)] = r
            if state.get("w") is not None:
                state["w"].close()
        threads = [threading.Thread(target=loop, daemon=True)
                   for _ in range(max(1, self.args.jobs))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return [out.get(id(it)) for it in items]


# -- minimizing -------------------------------------------------------------

def reduce_program(prog, target_sig, call, budget):
    """Delete statements (chunks, then single ones) while the program still
    fails with the same signature. Returns (program, result, evaluations)."""
    stmts = list(prog["stmts"])
    jf = prog.get("jit_from")

    def make(keep):
        p = dict(prog)
        p["stmts"] = [stmts[i] for i in keep]
        if jf is not None:
            p["jit_from"] = sum(1 for i in keep if i < jf)
        return p

    evals = 0
    best_res = None

    def still_fails(keep):
        nonlocal evals, best_res
        evals += 1
        res = call({"op": "eval", "prog": make(keep)})
        ok = res.get("status") in FAIL_STATUSES and target_sig in [
            d.get("sig") for d in res.get("divs", [])[:1]]
        if ok:
            best_res = res
        return ok

    keep = list(range(len(stmts)))
    chunk = max(1, len(keep) // 2)
    while evals < budget:
        changed = False
        i = 0
        while i < len(keep) and evals < budget:
            cand = keep[:i] + keep[i + chunk:]
            if cand and still_fails(cand):
                keep = cand
                changed = True
            else:
                i += chunk
        if not changed:
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
    return make(keep), best_res, evals


def render(prog, res, mode):
    """A standalone reproducer script."""
    import fuzzlib
    d0 = (res.get("divs") or [{}])[0]
    env = {"eager0": "CPN_EAGER_THRESHOLD=0 CPN_BASELINE_WORK=0 ",
           "baseline": f"CPN_EAGER_THRESHOLD=0 CPN_BASELINE_WORK={1 << 62} "
                       "CPN_BASELINE_BLOCK=8 ",
           "mixed": "CPN_EAGER_THRESHOLD=48 "}.get(mode, "")
    raised = set(res.get("np_raised", [])) | {d["index"] for d in res.get("divs", [])
                                              if d["cat"] in ("cp-raised", "exc-type",
                                                              "np-raised")}
    lines = [f"# cpnfuzz program {prog.get('seed')}:{prog.get('index')} (mode {mode}), "
             f"{d0.get('cat')} at statement {d0.get('index')}:",
             "#   " + d0.get("detail", "").replace("\n", " ")[:300],
             f"# cpnumeric: {env}python THIS.py    NumPy: FUZZ_NUMPY=1 python THIS.py",
             "import os, warnings",
             "import numpy",
             "warnings.simplefilter('ignore')",
             "np = numpy if os.environ.get('FUZZ_NUMPY') else __import__('cpnumeric')"]
    if prog.get("errstate", "ignore") == "ignore":
        lines.append("np.seterr(all='ignore')")
    if any("D(" in s for s in prog["stmts"]):
        lines += fuzzlib.D_SOURCE.rstrip().split("\n")

    def stmt_lines(i, s, indent=""):
        if i in raised:
            return [f"{indent}try:", f"{indent}    {s}",
                    f"{indent}except Exception as e:",
                    f"{indent}    print('statement {i} raised', type(e).__name__, e)"]
        return [indent + s]
    jf = prog.get("jit_from")
    n_plain = len(prog["stmts"]) if jf is None else jf
    for i, s in enumerate(prog["stmts"][:n_plain]):
        lines += stmt_lines(i, s)
    if jf is not None:
        fn, call = fuzzlib.jit_source(prog)
        lines.append("jit = getattr(np, 'jit', lambda f: f)")
        lines += fn.split("\n")
        lines.append(call)
    vars_ = [d["var"] for d in res.get("divs", []) if d.get("var")
             and d["cat"] in ("value", "dtype", "shape", "type", "cp-raised-read")]
    for v in dict.fromkeys(vars_):
        lines.append(f"print('{v} =', repr({v}))")
    return "\n".join(lines) + "\n"


# -- the run ------------------------------------------------------------------

def summarize(mode, results, elapsed, out):
    st = collections.Counter(r["status"] for r in results)
    cats = collections.Counter(r["divs"][0]["cat"] for r in results
                               if r["status"] in FAIL_STATUSES and r.get("divs"))
    out(f"mode {mode}: {len(results)} programs in {elapsed:.0f} s: "
        + ", ".join(f"{st[k]} {k}" for k in ("ok", "fail", "crash", "hang", "illposed",
                                              "generror", "jit-unsupported") if st[k]))
    tot = collections.Counter()
    for r in results:
        tot.update(r.get("stats") or {})
    if tot:
        out("  cpnumeric stats summed over programs: "
            + ", ".join(f"{k} {v}" for k, v in sorted(tot.items())))
    uns = collections.Counter(r.get("sig") for r in results if r["status"] == "jit-unsupported")
    for sig, n in uns.most_common(12):
        out(f"    jit-unsupported {n:4d}  {sig}")
    if cats:
        out("  first divergence by category: " +
            ", ".join(f"{k} {v}" for k, v in cats.most_common()))
    sigs = collections.OrderedDict()
    for r in sorted(results, key=lambda r: r["index"]):
        if r["status"] in FAIL_STATUSES and r.get("sig"):
            sigs.setdefault(r["sig"], []).append(r)
    if sigs:
        out(f"  {len(sigs)} distinct signatures (count, first program, signature):")
        for sig, rs in sorted(sigs.items(), key=lambda kv: -len(kv[1])):
            out(f"    {len(rs):4d}  {rs[0]['seed']}:{rs[0]['index']:<6} {sig}")
    for r in results:
        if r["status"] == "generror":
            out(f"  generror {r['seed']}:{r['index']}: {r.get('detail', '')[-300:]}")
    return sigs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-n", "--count", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="first program index")
    ap.add_argument("--mode", default="default,eager0")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--save", metavar="DIR", help="write results.jsonl, summary.txt "
                    "and one reproducer script per minimized failure")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per program (a longer one is a hang)")
    ap.add_argument("--batch", type=int, default=200,
                    help="programs per worker process before it is replaced")
    ap.add_argument("--no-fork", action="store_true",
                    help="run programs in the worker process itself (a batch shares "
                         "one engine); a dying worker's program is re-run alone")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--minimize-max", type=int, default=30,
                    help="distinct failure signatures to minimize per mode")
    ap.add_argument("--minimize-budget", type=int, default=120,
                    help="candidate programs per minimization")
    ap.add_argument("--mem-limit-gb", type=float, default=4.0,
                    help="address-space limit of the worker processes and of each "
                         "program's process (0: none)")
    ap.add_argument("--show", metavar="SEED:INDEX", help="print one program and exit")
    ap.add_argument("--run", metavar="SEED:INDEX", help="run one program, verbose")
    ap.add_argument("--replay", metavar="JSONL", help="run the failing programs of a "
                    "results-MODE.jsonl again (each as stored) instead of generating")
    ap.add_argument("--json", metavar="FILE", help="write the summary as JSON")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)

    modes = ["default", "eager0", "baseline", "jit"] if args.mode == "all" else args.mode.split(",")
    for m in modes:
        if m not in ("default", "eager0", "baseline", "mixed", "jit", "numpy"):
            ap.error(f"unknown mode {m}")

    if args.show:
        import gen
        s, i = map(int, args.show.split(":"))
        p = gen.generate(s, i, jit=(modes[0] == "jit"))
        print(render(p, {"divs": []}, modes[0]), end="")
        return 0

    cache_dir = tempfile.mkdtemp(prefix="cpnfuzz-cache-")
    logpath = os.path.join(args.save, "workers.log") if args.save else \
        os.path.join(cache_dir, "workers.log")
    if args.save:
        os.makedirs(os.path.join(args.save, "repro"), exist_ok=True)
    log = open(logpath, "a")
    lines = []

    def out(s=""):
        lines.append(s)
        if not args.quiet:
            print(s, flush=True)

    summary = {"seed": args.seed, "count": args.count, "modes": {}}
    any_fail = False
    try:
        if args.run:
            s, i = map(int, args.run.split(":"))
            for mode in modes:
                w = Worker(mode, args, cache_dir, log)
                kind, res = w.call({"op": "gen", "seed": s, "index": i},
                                   args.timeout + 120)
                w.close()
                print(f"== mode {mode}: {kind} {res.get('status') if kind == 'ok' else res}")
                if kind == "ok":
                    print(render(res["prog"], res, mode))
                    for d in res.get("divs", []):
                        print(f"  [{d['cat']}] statement {d['index']} ({d['op']}): {d['detail']}")
                    any_fail |= res["status"] in FAIL_STATUSES
            return 1 if any_fail else 0

        out(f"cpnfuzz: " + (f"replaying the failures of {args.replay}" if args.replay else
                            f"seed {args.seed}, programs {args.start}..{args.start + args.count - 1}")
            + f", modes {','.join(modes)}, jobs {args.jobs}"
            + (", no fork" if args.no_fork else ""))
        for mode in modes:
            pool = Pool(mode, args, cache_dir, log)
            if args.replay:
                tasks = []
                with open(args.replay) as f:
                    for line in f:
                        r = json.loads(line)
                        if r["status"] in FAIL_STATUSES and r.get("prog"):
                            tasks.append({"op": "eval", "prog": r["prog"]})
            else:
                tasks = [{"op": "gen", "seed": args.seed, "index": i}
                         for i in range(args.start, args.start + args.count)]
            results = []
            lock = threading.Lock()
            t0 = time.time()
            progress_every = max(50, args.count // 10)

            def on_result(t, res):
                with lock:
                    results.append(res)
                    if res["status"] in FAIL_STATUSES and not args.quiet:
                        d = (res.get("divs") or [{}])[0]
                        print(f"  {mode} {res['seed']}:{res['index']} {res['status']}: "
                              f"[{d.get('cat')}] stmt {d.get('index')} {d.get('op')}: "
                              f"{d.get('detail', '')[:160]}", flush=True)
                    if len(results) % progress_every == 0 and not args.quiet:
                        nf = sum(r["status"] in FAIL_STATUSES for r in results)
                        print(f"  {mode}: {len(results)}/{len(tasks)} done, {nf} failing, "
                              f"{time.time() - t0:.0f} s", flush=True)
            pool.map(tasks, on_result)
            elapsed = time.time() - t0
            results.sort(key=lambda r: r.get("index") or 0)
            sigs = summarize(mode, results, elapsed, out)
            st = collections.Counter(r["status"] for r in results)
            msum = {"programs": len(results), "seconds": round(elapsed, 1),
                    "status": dict(st),
                    "signatures": {k: len(v) for k, v in sigs.items()},
                    "failures": [{"seed": r["seed"], "index": r["index"],
                                  "status": r["status"], "sig": r.get("sig"),
                                  "detail": (r.get("divs") or [{}])[0].get("detail", "")[:300]}
                                 for r in results if r["status"] in FAIL_STATUSES]}
            any_fail |= any(r["status"] in FAIL_STATUSES for r in results)
            if args.save:
                with open(os.path.join(args.save, f"results-{mode}.jsonl"), "w") as f:
                    for r in results:
                        f.write(json.dumps(r) + "\n")
            # Minimize the first program of each signature.
            if sigs and not args.no_minimize and args.minimize_max > 0:
                items = [(sig, rs[0]) for sig, rs in
                         sorted(sigs.items(), key=lambda kv: -len(kv[1]))][:args.minimize_max]
                t1 = time.time()

                def reduce_one(item, call):
                    sig, r = item
                    prog = r.get("prog")
                    if not prog:
                        return None
                    small, res, n = reduce_program(prog, sig, call, args.minimize_budget)
                    return {"sig": sig, "prog": small, "res": res or r, "evals": n,
                            "count": len(sigs[sig]), "orig_len": len(prog["stmts"])}
                reduced = pool.map_fn(items, reduce_one)
                out(f"  minimized {len([x for x in reduced if x])} signatures in "
                    f"{time.time() - t1:.0f} s")
                msum["minimized"] = []
                for k, red in enumerate(reduced):
                    if not red:
                        continue
                    text = render(red["prog"], red["res"], mode)
                    msum["minimized"].append({"sig": red["sig"], "count": red["count"],
                                              "statements": len(red["prog"]["stmts"]),
                                              "from": red["orig_len"], "script": text})
                    if args.save:
                        name = f"{mode}-{k:02d}-{red['prog']['seed']}-{red['prog']['index']}.py"
                        with open(os.path.join(args.save, "repro", name), "w") as f:
                            f.write(text)
                    out()
                    out(f"  --- [{red['count']}x] {red['sig']}  "
                        f"({red['orig_len']} -> {len(red['prog']['stmts'])} statements)")
                    for ln in text.rstrip().split("\n"):
                        out("  " + ln)
            summary["modes"][mode] = msum
            out()
    finally:
        log.close()
        if args.save:
            with open(os.path.join(args.save, "summary.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(summary, f, indent=1)
        shutil.rmtree(cache_dir, ignore_errors=True)
    return 1 if any_fail else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except StartError as e:
        print(f"cpnfuzz: {e}", file=sys.stderr)
        sys.exit(2)
