"""A cpnfuzz worker: imports NumPy and cpnumeric once, then takes programs
from stdin (one JSON object a line) and answers one JSON line each.

Tasks: {"op": "gen", "seed": S, "index": I} generates program I of seed S;
{"op": "eval", "prog": {...}} runs a given program (the reducer's
candidates). For each, the NumPy run (fuzzlib.analyze) happens here; the
cpnumeric run happens in a fork of this process (so a crash or a hang takes
only that child, and every program starts from the same freshly imported
state), or here with --no-fork (a batch then shares one engine, as a user's
process would; the driver re-runs what a dying worker was running on its
own).

The protocol uses a copy of the original stdout; fd 1 itself points to
stderr, so output written by C++ code cannot corrupt it.
"""

import argparse
import json
import mmap
import os
import pickle
import resource
import select
import signal
import struct
import sys
import tempfile
import time
import traceback

STATS = ("compilations", "fallbacks", "flushes", "jit_traces", "baseline_windows")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="default")
    ap.add_argument("--no-fork", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--mem-limit-gb", type=float, default=4.0)
    args = ap.parse_args()

    if args.mem_limit_gb > 0:
        # The worker itself (NumPy's runs of the programs) stays bounded too.
        set_mem_limit(args.mem_limit_gb)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)

    try:
        import numpy   # noqa: F401
        import fuzzlib
        import gen
        if args.mode == "numpy":
            lib = numpy
            cpn_ndarray = None
        else:
            import cpnumeric as lib
            cpn_ndarray = lib.ndarray
    except BaseException:   # noqa: BLE001 - the driver retries, then stops
        proto.write(json.dumps({"ready": False,
                                "error": traceback.format_exc()[-1500:]}) + "\n")
        proto.flush()
        return 3
    jit = args.mode == "jit"
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()

    for line in sys.stdin:
        task = json.loads(line)
        res = handle(task, args, lib, cpn_ndarray, jit, fuzzlib, gen)
        proto.write(json.dumps(res) + "\n")
        proto.flush()


def handle(task, args, lib, cpn_ndarray, jit, fuzzlib, gen):
    t0 = time.time()
    if task["op"] == "gen":
        try:
            prog = gen.generate(task["seed"], task["index"], jit=jit)
        except Exception:
            return {"seed": task["seed"], "index": task["index"],
                    "status": "generror", "detail": traceback.format_exc()[-2000:]}
    else:
        prog = task["prog"]
    res = {"seed": prog.get("seed"), "index": prog.get("index"), "prog": prog,
           "mode": args.mode}
    try:
        an = fuzzlib.analyze(prog)
    except Exception:
        res.update(status="generror", detail=traceback.format_exc()[-2000:])
        return res
    if an.ill:
        res.update(status="illposed", detail=f"statement {an.ill[0]}: {an.ill[1]}")
        return res
    jf = prog.get("jit_from")
    if jf is not None and any(k >= jf for k in an.outcomes):
        # A jitted body stops at its first exception where NumPy's statement
        # by statement run goes on: not comparable (the generator never
        # writes one; a reducer's candidate may).
        res.update(status="illposed", detail="a jit body statement raises under NumPy")
        return res
    res["np_raised"] = sorted(an.outcomes)
    t1 = time.time()
    if args.no_fork:
        try:
            out = fuzzlib.run_program(prog, lib, None, cpn_ndarray)
            got = ("ok", out)
        except BaseException:   # noqa: BLE001
            got = ("fatal", traceback.format_exc()[-2000:])
    else:
        got = run_forked(prog, lib, cpn_ndarray, args, fuzzlib)
    res["t_gen"] = round(t1 - t0, 3)
    res["t_run"] = round(time.time() - t1, 3)
    kind = got[0]
    if kind in ("crash", "hang"):
        idx = got[1]["index"]
        units = dict(fuzzlib.program_units(prog))
        op = "end" if idx < 0 else (fuzzlib.StmtInfo(units[idx]).op
                                     if idx in units and "\n" not in units[idx]
                                     else "jit-body")
        d = {"cat": kind, "index": idx, "op": op, "signal": got[1].get("signal"),
             "detail": f"{got[1].get('signal')} at statement {idx if idx >= 0 else 'end (reading the results)'}"
                       f"; stderr: {got[1].get('stderr', '')[-600:]}"}
        res.update(status=kind, divs=[d])
    elif kind == "toolarge":
        res.update(status="illposed",
                   detail="results too large to send back under --mem-limit-gb")
    elif kind == "fatal":
        res.update(status="fail", divs=[{"cat": "harness", "index": -1, "op": "?",
                                         "detail": got[1]}])
    else:
        outcomes, values, prints = got[1]
        if len(got) > 2 and got[2]:
            res["stats"] = got[2]
        divs = fuzzlib.compare(prog, an, outcomes, values, prints)
        res.update(status="fail" if divs else "ok", divs=divs)
        if divs and divs[0]["cat"] == "cp-raised" and \
                divs[0].get("cp_exc") == "TypeError" and \
                "spans both parts" in divs[0].get("cp_msg", ""):
            # docs/numpy-api.md: a field (view as a smaller dtype) across
            # the real and imaginary parts of complex elements is a
            # documented TypeError (720:3211)
            res.update(status="illposed",
                       detail="a view across both parts of complex elements (documented)")
            return res
        if jit and divs and divs[0]["cat"] == "cp-raised" and \
                divs[0].get("cp_exc") == "TracingError":
            # docs/jit.md: values needed while tracing and NumPy fallbacks
            # are TracingErrors; jit cannot express this program.
            res["status"] = "jit-unsupported"
    if res.get("divs"):
        for d in res["divs"]:
            d["sig"] = fuzzlib.signature(d)
        res["sig"] = res["divs"][0]["sig"]
    return res


def set_mem_limit(gb):
    lim = int(gb * 2 ** 30)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        lim = min(lim, hard)
    resource.setrlimit(resource.RLIMIT_AS, (lim, hard))


def run_forked(prog, lib, cpn_ndarray, args, fuzzlib):
    shm = mmap.mmap(-1, 8)
    shm[:8] = struct.pack("q", -2)
    rfd, wfd = os.pipe()
    errf = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:   # the child
        try:
            os.close(rfd)
            os.dup2(errf.fileno(), 2)
            if args.mem_limit_gb > 0:
                set_mem_limit(args.mem_limit_gb)

            def progress(i):
                shm[:8] = struct.pack("q", i)
            try:
                out = fuzzlib.run_program(prog, lib, progress, cpn_ndarray)
                st = getattr(lib, "stats", None)
                if st is not None:
                    st = {k: v for k, v in st().items() if k in STATS}
                data = pickle.dumps(("ok", out, st))
            except MemoryError:
                # the values (a tolist() of 10^7 elements) do not fit twice
                # under the memory limit: not a program's failure
                data = pickle.dumps(("toolarge", None))
            except BaseException:   # noqa: BLE001
                data = pickle.dumps(("fatal", traceback.format_exc()[-2000:]))
            with os.fdopen(wfd, "wb") as w:
                w.write(data)
        finally:
            os._exit(0)
    os.close(wfd)
    chunks = []
    deadline = time.time() + args.timeout
    hung = False
    while True:
        left = deadline - time.time()
        if left <= 0:
            hung = True
            break
        r, _, _ = select.select([rfd], [], [], left)
        if not r:
            continue
        b = os.read(rfd, 1 << 20)
        if not b:
            break
        chunks.append(b)
    if hung:
        os.kill(pid, signal.SIGKILL)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    idx = struct.unpack("q", shm[:8])[0]
    errf.seek(0)
    stderr = errf.read()[-4000:].decode("utf-8", "replace")
    errf.close()
    if hung:
        return ("hang", {"index": idx, "signal": f"timeout {args.timeout:g}s",
                         "stderr": stderr})
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return ("crash", {"index": idx, "signal": name, "stderr": stderr})
    data = b"".join(chunks)
    if not data:
        return ("crash", {"index": idx, "signal": f"exit {os.WEXITSTATUS(status)}",
                          "stderr": stderr})
    return pickle.loads(data)


if __name__ == "__main__":
    sys.exit(main())
