"""Weak and strong scaling over MPI ranks (issue 23), one run, one machine.

    python benchmarks/scaling.py [--ranks 2] [--iters 20] [--json F] [--markdown F]
    make bench-scaling

Each workload runs per rank count P in {1, ranks} as:
- cpnumeric, `mpirun -n P`, CPN_PARTITION=rows, one kernel thread per rank
  (arrays split in blocks of rows by cpn-localize, halo rows sent by the
  runtime as tasks);
- cpnumeric in one process on P threads at the same size (the reference
  when the machine's memory bandwidth does not grow with its cores);
- a hand-written mpi4py + NumPy program (each rank its block plus halo rows,
  blocking Sendrecv of the halos every iteration), where one is written;
- Dask (distributed LocalCluster, P single-thread worker processes;
  map_overlap of depth 1 for the stencils and each of cavity flow's
  pressure iterations), where one is written.
Weak scaling keeps the work per rank (rows x P; cavity flow's square grid
n x sqrt(P)); strong scaling keeps the P = 1 size. The STREAM triad (the
runtime's compiled one) on 1 and P cores in the same run says how much the
memory bandwidth grows: where it does not double, the target is the same
program on 1 rank x P threads (issue 23).
cpnumeric's runs (1 rank, P ranks, 1 x P threads, strong P ranks) are
repeated (--repeat, 3), each round running the configurations one after
another, and the run with the median time is reported (the JSON keeps
every run's time): on a shared 2-vCPU VM one run of Jacobi on 2 ranks
took 5.4-8.6 ms per iteration, too wide for a 5% comparison.
Bytes per iteration: what one rank received (stats()'s comm_bytes_received
over the timed iterations) beside CPN_SIMULATE_RANKS's prediction for the
same program in one process.

mpi4py and dask[distributed] are benchmark-only requirements (`make
bench-scaling` installs them); a peer that is missing leaves its column
empty.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "workloads"))

# Per rank: rows x columns of the stencils, cavity flow's n, Black-Scholes'
# options.
DEFAULTS = {"jacobi": {"rows": 2000, "cols": 4000},
            "stencil": {"rows": 2000, "cols": 4000},
            "cavity_flow": {"n": 800, "nit": 50},
            "black_scholes": {"n": 10_000_000}}


def sizes(name, ranks, weak, scale):
    d = dict(DEFAULTS[name])
    p = ranks if weak else 1
    if name in ("jacobi", "stencil"):
        d["rows"] = max(2 * ranks, int(d["rows"] * scale)) * p
        d["cols"] = max(4, int(d["cols"] * scale))
    elif name == "cavity_flow":
        d["n"] = max(2 * ranks, int(round(d["n"] * scale * math.sqrt(p))))
    else:
        d["n"] = max(ranks, int(d["n"] * scale)) * p
    return d


# -- the programs: setup(np, **size) -> (step(), result()) --------------------
# step() runs one iteration (Black-Scholes: one pricing of all options);
# result() is a float every implementation computes alike (a sync point).

def jacobi(np, rows, cols):
    u = np.zeros((rows, cols))
    u[0, :] = 1.0

    def step():
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return step, lambda: float(u.sum())


def stencil(np, rows, cols):
    import numpy
    st = {"u": np.asarray(numpy.random.default_rng(1).random((rows, cols)))}
    st["v"] = st["u"].copy()

    def step():
        u, v = st["u"], st["v"]
        c = u[1:-1, 1:-1]
        v[1:-1, 1:-1] = c + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                   + u[1:-1, 2:] - 4.0 * c)
        st["u"], st["v"] = v, u
    return step, lambda: float(st["u"].sum())


def cavity_flow(np, n, nit):
    import cavity_flow as w
    st = dict(zip("uvp", w.inputs(np, n, 1, nit)))

    def step():
        st["u"], st["v"], st["p"] = w.run(np, st["u"], st["v"], st["p"], n=n, nt=1, nit=nit)
    return step, lambda: float(st["u"].sum() + st["p"].sum())


def black_scholes(np, n):
    import black_scholes as w
    s, k, t = w.inputs(np, n, "float64")
    st = {"i": 0}

    def step():
        # A new rate each time: Dask would answer a repeated graph from the
        # results it holds.
        st["i"] += 1
        st["out"] = w.run(np, s, k, t, r=0.02 + 1e-6 * st["i"])
    return step, lambda: float(st["out"][0].sum() + st["out"][1].sum())


PROGRAMS = {f.__name__: f for f in (jacobi, stencil, cavity_flow, black_scholes)}


# -- hand-written mpi4py + NumPy (each rank its rows and two halo rows) --------

def _mpi_block(comm, rows):
    p, r = comm.size, comm.rank
    return rows * r // p, rows * (r + 1) // p


def _halos(comm, u):
    """Blocking exchange of the first and last owned rows (u[1], u[-2]) into
    the neighbours' halo rows (u[0], u[-1])."""
    up = comm.rank - 1 if comm.rank > 0 else None
    down = comm.rank + 1 if comm.rank < comm.size - 1 else None
    if up is not None:
        comm.Sendrecv(u[1], dest=up, recvbuf=u[0], source=up)
    if down is not None:
        comm.Sendrecv(u[-2], dest=down, recvbuf=u[-1], source=down)


def mpi_jacobi(numpy, comm, rows, cols):
    lo, hi = _mpi_block(comm, rows)
    u = numpy.zeros((hi - lo + 2, cols))  # row k+1 is global row lo + k
    if lo == 0:
        u[1, :] = 1.0
    first = 2 if lo == 0 else 1            # global rows 1 .. rows-2 are updated
    last = hi - lo if hi < rows else hi - lo - 1

    def step():
        _halos(comm, u)
        a, b = first, last + 1
        u[a:b, 1:-1] = 0.25 * (u[a - 1:b - 1, 1:-1] + u[a + 1:b + 1, 1:-1]
                               + u[a:b, :-2] + u[a:b, 2:])
    return step, lambda: comm.allreduce(float(u[1:-1].sum()))


def mpi_stencil(numpy, comm, rows, cols):
    lo, hi = _mpi_block(comm, rows)
    full = numpy.random.default_rng(1).random((rows, cols))
    u = numpy.zeros((hi - lo + 2, cols))
    u[1:-1] = full[lo:hi]
    del full
    st = {"u": u, "v": u.copy()}
    first = 2 if lo == 0 else 1
    last = hi - lo if hi < rows else hi - lo - 1

    def step():
        u, v = st["u"], st["v"]
        _halos(comm, u)
        a, b = first, last + 1
        c = u[a:b, 1:-1]
        v[a:b, 1:-1] = c + 0.2 * (u[a - 1:b - 1, 1:-1] + u[a + 1:b + 1, 1:-1]
                                  + u[a:b, :-2] + u[a:b, 2:] - 4.0 * c)
        st["u"], st["v"] = v, u
    return step, lambda: comm.allreduce(float(st["u"][1:-1].sum()))


def mpi_black_scholes(numpy, comm, n):
    import black_scholes as w
    lo, hi = _mpi_block(comm, n)
    s, k, t = (x[lo:hi].copy() for x in w.inputs(numpy, n, "float64"))
    st = {"i": 0}

    def step():
        st["i"] += 1
        st["out"] = w.run(numpy, s, k, t, r=0.02 + 1e-6 * st["i"])
    return step, lambda: comm.allreduce(float(st["out"][0].sum() + st["out"][1].sum()))


def mpi_cavity_flow(numpy, comm, n, nit, rho=1.0, nu=0.1):
    """The workload's step (nt=1) on each rank's rows of the n x n grid, with
    a halo row above and below: u and v exchanged once a step, p before each
    pressure iteration and before the velocity update."""
    lo, hi = _mpi_block(comm, n)
    u, v, p = (numpy.zeros((hi - lo + 2, n)) for _ in range(3))  # row k+1: lo + k
    dx = dy = 2 / (n - 1)
    dt = min(0.001, 0.2 * dx * dx / nu)
    first, last = comm.rank == 0, comm.rank == comm.size - 1
    a, z = max(lo, 1) - lo + 1, min(hi, n - 1) - lo + 1  # global rows 1 .. n-2
    I, N, S = slice(a, z), slice(a - 1, z - 1), slice(a + 1, z + 1)
    C, E, W = slice(1, -1), slice(2, None), slice(0, -2)

    def step():
        _halos(comm, u)
        _halos(comm, v)
        un, vn = u.copy(), v.copy()
        b = numpy.zeros_like(u)
        b[I, C] = rho * (1 / dt * ((u[I, E] - u[I, W]) / (2 * dx)
                                   + (v[S, C] - v[N, C]) / (2 * dy))
                         - ((u[I, E] - u[I, W]) / (2 * dx)) ** 2
                         - 2 * ((u[S, C] - u[N, C]) / (2 * dy)
                                * (v[I, E] - v[I, W]) / (2 * dx))
                         - ((v[S, C] - v[N, C]) / (2 * dy)) ** 2)
        for _ in range(nit):
            _halos(comm, p)
            pn = p.copy()
            p[I, C] = (((pn[I, E] + pn[I, W]) * dy ** 2 + (pn[S, C] + pn[N, C]) * dx ** 2)
                       / (2 * (dx ** 2 + dy ** 2))
                       - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[I, C])
            p[1:-1, -1] = p[1:-1, -2]
            if first:
                p[1, :] = p[2, :]
            p[1:-1, 0] = p[1:-1, 1]
            if last:
                p[-2, :] = 0
        _halos(comm, p)
        u[I, C] = (un[I, C] - un[I, C] * dt / dx * (un[I, C] - un[I, W])
                   - vn[I, C] * dt / dy * (un[I, C] - un[N, C])
                   - dt / (2 * rho * dx) * (p[I, E] - p[I, W])
                   + nu * (dt / dx ** 2 * (un[I, E] - 2 * un[I, C] + un[I, W])
                           + dt / dy ** 2 * (un[S, C] - 2 * un[I, C] + un[N, C])))
        v[I, C] = (vn[I, C] - un[I, C] * dt / dx * (vn[I, C] - vn[I, W])
                   - vn[I, C] * dt / dy * (vn[I, C] - vn[N, C])
                   - dt / (2 * rho * dy) * (p[S, C] - p[N, C])
                   + nu * (dt / dx ** 2 * (vn[I, E] - 2 * vn[I, C] + vn[I, W])
                           + dt / dy ** 2 * (vn[S, C] - 2 * vn[I, C] + vn[N, C])))
        if first:
            u[1, :] = 0
        u[1:-1, 0] = 0
        u[1:-1, -1] = 0
        if last:
            u[-2, :] = 1  # the lid moves
        if first:
            v[1, :] = 0
        if last:
            v[-2, :] = 0
        v[1:-1, 0] = 0
        v[1:-1, -1] = 0
    return step, lambda: comm.allreduce(float(u[1:-1].sum() + p[1:-1].sum()))


MPI_PROGRAMS = {"jacobi": mpi_jacobi, "stencil": mpi_stencil,
                "cavity_flow": mpi_cavity_flow, "black_scholes": mpi_black_scholes}


# -- Dask (LocalCluster of single-thread workers) ------------------------------

def _jacobi_block(b):
    out = b.copy()
    out[1:-1, 1:-1] = 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])
    return out


def _stencil_block(b):
    out = b.copy()
    c = b[1:-1, 1:-1]
    out[1:-1, 1:-1] = c + 0.2 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2]
                                 + b[1:-1, 2:] - 4.0 * c)
    return out


def _cavity_b_block(u, v, dt, dx, dy, rho, workloads=os.path.join(HERE, "workloads")):
    # The workload's own build_up_b on a block. A Dask worker is a process of
    # its own: the workloads folder goes on its path here.
    import numpy
    if workloads not in sys.path:
        sys.path.insert(0, workloads)
    from cavity_flow import build_up_b
    return build_up_b(numpy, rho, dt, dx, dy, u, v)


def _edges(block_info):
    """Whether this block holds the grid's first row, and its last."""
    i, n = block_info[0]["chunk-location"][0], block_info[0]["num-chunks"][0]
    return i == 0, i == n - 1


def _cavity_p_block(p, b, dx, dy, block_info=None):
    first, last = _edges(block_info)
    out = p.copy()
    out[1:-1, 1:-1] = (((p[1:-1, 2:] + p[1:-1, 0:-2]) * dy ** 2
                        + (p[2:, 1:-1] + p[0:-2, 1:-1]) * dx ** 2)
                       / (2 * (dx ** 2 + dy ** 2))
                       - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
    out[:, -1] = out[:, -2]
    if first:
        out[0, :] = out[1, :]
    out[:, 0] = out[:, 1]
    if last:
        out[-1, :] = 0
    return out


def _cavity_uv_block(u, v, p, which, dt, dx, dy, rho, nu, block_info=None):
    first, last = _edges(block_info)
    if which == "u":
        out = u.copy()
        out[1:-1, 1:-1] = (u[1:-1, 1:-1]
                           - u[1:-1, 1:-1] * dt / dx * (u[1:-1, 1:-1] - u[1:-1, 0:-2])
                           - v[1:-1, 1:-1] * dt / dy * (u[1:-1, 1:-1] - u[0:-2, 1:-1])
                           - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                           + nu * (dt / dx ** 2 * (u[1:-1, 2:] - 2 * u[1:-1, 1:-1] + u[1:-1, 0:-2])
                                   + dt / dy ** 2 * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[0:-2, 1:-1])))
        if first:
            out[0, :] = 0
        out[:, 0] = 0
        out[:, -1] = 0
        if last:
            out[-1, :] = 1  # the lid moves
        return out
    out = v.copy()
    out[1:-1, 1:-1] = (v[1:-1, 1:-1]
                       - u[1:-1, 1:-1] * dt / dx * (v[1:-1, 1:-1] - v[1:-1, 0:-2])
                       - v[1:-1, 1:-1] * dt / dy * (v[1:-1, 1:-1] - v[0:-2, 1:-1])
                       - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                       + nu * (dt / dx ** 2 * (v[1:-1, 2:] - 2 * v[1:-1, 1:-1] + v[1:-1, 0:-2])
                               + dt / dy ** 2 * (v[2:, 1:-1] - 2 * v[1:-1, 1:-1] + v[0:-2, 1:-1])))
    if first:
        out[0, :] = 0
    if last:
        out[-1, :] = 0
    out[:, 0] = 0
    out[:, -1] = 0
    return out



def dask_program(name, ranks, size):
    import numpy
    import dask.array as da
    from distributed import wait
    if name in ("jacobi", "stencil"):
        rows, cols = size["rows"], size["cols"]
        if name == "jacobi":
            u0 = numpy.zeros((rows, cols))
            u0[0, :] = 1.0
            f = _jacobi_block
        else:
            u0 = numpy.random.default_rng(1).random((rows, cols))
            f = _stencil_block
        st = {"u": da.from_array(u0, chunks=(-(-rows // ranks), cols)).persist()}
        del u0

        def step():
            # Depth 1 on the split axis; the global border rows are kept by
            # the block function (boundary="none" gives the edge blocks no
            # ghost rows there).
            st["u"] = st["u"].map_overlap(f, depth={0: 1, 1: 0}, boundary="none",
                                          dtype=float).persist()
            wait(st["u"])
        return step, lambda: float(st["u"].sum().compute())
    if name == "cavity_flow":
        # The workload's step on blocks of rows (full width): b from u and v,
        # then each pressure iteration a map_overlap of depth 1 persisted (a
        # halo exchange per iteration, as the mpi4py program and cpnumeric
        # make), then u and v; the grid's first and last rows are the edge
        # blocks' (block_info), the columns every block's.
        n, nit, rho, nu = size["n"], size["nit"], 1.0, 0.1
        dx = dy = 2 / (n - 1)
        dt = min(0.001, 0.2 * dx * dx / nu)
        chunks = (-(-n // ranks), n)
        st = {k: da.zeros((n, n), chunks=chunks).persist() for k in "uvp"}
        halo = dict(depth={0: 1, 1: 0}, boundary="none", dtype=float)

        def step():
            u, v, p = st["u"], st["v"], st["p"]
            b = da.map_overlap(_cavity_b_block, u, v, dt=dt, dx=dx, dy=dy, rho=rho,
                               **halo).persist()
            for _ in range(nit):
                p = da.map_overlap(_cavity_p_block, p, b, dx=dx, dy=dy, **halo).persist()
            kw = dict(dt=dt, dx=dx, dy=dy, rho=rho, nu=nu, **halo)
            st["u"] = da.map_overlap(_cavity_uv_block, u, v, p, which="u", **kw).persist()
            st["v"] = da.map_overlap(_cavity_uv_block, u, v, p, which="v", **kw).persist()
            st["p"] = p
            wait([st["u"], st["v"], st["p"]])
        return step, lambda: float((st["u"].sum() + st["p"].sum()).compute())
    if name == "black_scholes":
        import black_scholes as w
        n = size["n"]
        s, k, t = (da.from_array(x, chunks=-(-n // ranks)).persist()
                   for x in w.inputs(numpy, n, "float64"))
        st = {"i": 0}

        def step():
            st["i"] += 1
            out = w.run(da, s, k, t, r=0.02 + 1e-6 * st["i"])
            st["out"] = [o.persist() for o in out]
            wait(st["out"])
        return step, lambda: float((st["out"][0].sum() + st["out"][1].sum()).compute())
    return None


# -- children -------------------------------------------------------------------

def _time(step, result, warm, iters):
    for _ in range(2):  # as cpnumeric's warm-up (child): the same steps
        for _ in range(warm):
            step()
        check = result()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    check = result()
    return (time.perf_counter() - t) / iters, check


def child(args):
    name, size = args.child, json.loads(args.size)
    iters = max(1, args.iters // 5) if name == "cavity_flow" else args.iters
    # As many iterations untimed first: every window shape the timed ones
    # make is compiled then (a loop's windows span several iterations).
    warm = iters
    out = {}
    if args.impl == "cpnumeric":
        import cpnumeric as cp
        step, result = PROGRAMS[name](cp, **size)
        # Twice, each ending at the sync point that ends the timed steps: the
        # windows right after a sync point are cut there (their shapes are
        # not the loop's steady ones) and compile in the second round, not
        # in the timed steps (cavity flow compiled 2-3 windows there).
        for _ in range(2):
            for _ in range(warm):
                step()
            result()
        cp.reset_stats()
        t = time.perf_counter()
        for _ in range(iters):
            step()
        check = result()
        dt = (time.perf_counter() - t) / iters
        s = cp.stats()
        out = {"s": dt, "check": check, "rank": cp.rank(),
               "bytes": s["comm_bytes_received"] / iters,
               "messages": s["comm_messages"] / iters,
               "simulated_bytes": (s["simulated_bytes"] / iters
                                   if s.get("simulated_ranks", 0) > 1 else None),
               "compilations": s["compilations"],
               "baseline_windows": s["baseline_windows"]}
    elif args.impl == "numpy":
        import numpy
        step, result = PROGRAMS[name](numpy, **size)
        dt, check = _time(step, result, warm, iters)
        out = {"s": dt, "check": check, "rank": 0}
    elif args.impl == "mpi4py":
        import numpy
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        step, result = MPI_PROGRAMS[name](numpy, comm, **size)
        comm.Barrier()
        dt, check = _time(step, result, warm, iters)
        dt = comm.allreduce(dt, op=MPI.MAX)
        out = {"s": dt, "check": check, "rank": comm.rank}
    elif args.impl == "dask":
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=args.ranks, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            step, result = dask_program(name, args.ranks, size)
            dt, check = _time(step, result, warm, iters)
        out = {"s": dt, "check": check, "rank": 0}
    if out.get("rank", 0) == 0:
        print(json.dumps(out), flush=True)


def triad_child(args):
    """The runtime's compiled STREAM triad (the bound benchmarks/run.py
    reports) on 1 and `ranks` threads, in GB/s."""
    from cpnumeric import _cpn
    n = 20_000_000
    print(json.dumps({"gbs_1": _cpn.stream_triad(n, 1, 5),
                      "gbs_P": _cpn.stream_triad(n, args.ranks, 5)}), flush=True)


# -- the parent -----------------------------------------------------------------

def _env(threads, extra=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1",
               CPN_THREADS=str(threads), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    env.update(extra or {})
    return env


def _run(cmd, env, timeout=1800):
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode or not lines:
        tail = (p.stderr.strip().splitlines() or [f"rc {p.returncode}"])[-1]
        return {"error": tail[:200]}
    return json.loads(lines[-1])


def run_impl(impl, name, size, ranks, threads, iters, extra=None):
    me = [sys.executable, __file__, "--child", name, "--impl", impl,
          "--size", json.dumps(size), "--iters", str(iters), "--ranks", str(ranks)]
    if impl in ("mpi4py",) or (impl == "cpnumeric" and ranks > 1):
        cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", str(ranks)] + me
    else:
        cmd = me
    env = _env(threads, extra)
    if impl == "cpnumeric" and ranks > 1:
        env.update(CPN_PARTITION="rows")
    return _run(cmd, env)


def have(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


def triad(ranks):
    cmd = [sys.executable, __file__, "--triad", "--ranks", str(ranks)]
    r = _run(cmd, _env(ranks))
    return r.get("gbs_1", float("nan")), r.get("gbs_P", float("nan"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each cpnumeric configuration; the median's is reported")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="per-rank sizes times this (0.1: a quick check)")
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--child")
    ap.add_argument("--impl")
    ap.add_argument("--size")
    ap.add_argument("--triad", action="store_true")
    args = ap.parse_args()
    if args.triad:
        return triad_child(args)
    if args.child:
        return child(args)

    P = args.ranks
    bw1, bwP = triad(P)
    print(f"triad: 1 core {bw1:.1f} GB/s, {P} cores {bwP:.1f} GB/s "
          f"({bwP / bw1:.2f}x)", flush=True)
    peers = {"mpi4py": have("mpi4py"), "dask": have("distributed")}
    names = [n for n in PROGRAMS if not args.only or n in args.only.split(",")]
    rows = []
    for name in names:
        r = {"workload": name}
        size1, sizeP = sizes(name, 1, True, args.scale), sizes(name, P, True, args.scale)
        strong = sizes(name, P, False, args.scale)
        r["size_1"], r["size_P"] = size1, sizeP
        configs = {"weak_1": (size1, 1, 1, None), "weak_P": (sizeP, P, 1, None),
                   "threads_P": (sizeP, 1, P, {"CPN_SIMULATE_RANKS": str(P)}),
                   "strong_P": (strong, P, 1, None)}
        runs = {k: [] for k in configs}
        for _ in range(max(1, args.repeat)):
            for k, (size, ranks, threads, extra) in configs.items():
                runs[k].append(run_impl("cpnumeric", name, size, ranks, threads,
                                        args.iters, extra))
        for k, v in runs.items():
            r[k] = _median_run(v)
            r[k + "_runs_s"] = [x.get("s") for x in v]
        r["strong_1"] = r["weak_1"]
        r["numpy_1"] = run_impl("numpy", name, size1, 1, 1, args.iters)
        for peer, ok in peers.items():
            if not ok or (peer == "mpi4py" and name not in MPI_PROGRAMS):
                continue
            r[f"{peer}_1"] = run_impl(peer, name, size1, 1, 1, args.iters)
            r[f"{peer}_P"] = run_impl(peer, name, sizeP, P, 1, args.iters)
        rows.append(r)
        print(_line(r, P), flush=True)
    result = {"ranks": P, "triad_gbs_1": bw1, "triad_gbs_P": bwP, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(_markdown(result))
    print(_markdown(result))


def _median_run(runs):
    """The run with the median time among those that gave one (else the
    first)."""
    ok = sorted((x for x in runs if x and "s" in x), key=lambda x: x["s"])
    return ok[(len(ok) - 1) // 2] if ok else runs[0]


def _ms(x):
    return f"{1e3 * x['s']:.2f}" if x and "s" in x else (x or {}).get("error", "—")


def _ratio(a, b):
    return a["s"] / b["s"] if a and b and "s" in a and "s" in b else None


def _line(r, P):
    eff = _ratio(r["weak_1"], r["weak_P"])
    return (f"{r['workload']}: weak 1 rank {_ms(r['weak_1'])} ms, {P} ranks "
            f"{_ms(r['weak_P'])} ms ({'—' if eff is None else f'{eff:.0%}'}), "
            f"1 x {P} threads {_ms(r['threads_P'])} ms; strong {P} ranks "
            f"{_ms(r['strong_P'])} ms; mpi4py {_ms(r.get('mpi4py_P'))} ms, "
            f"dask {_ms(r.get('dask_P'))} ms")


def _fmt(v, spec):
    return "—" if v is None else format(v, spec)


def _markdown(res):
    P = res["ranks"]
    out = [f"STREAM triad (compiled, 2e7 doubles): 1 core {res['triad_gbs_1']:.1f} GB/s, "
           f"{P} cores {res['triad_gbs_P']:.1f} GB/s ({res['triad_gbs_P'] / res['triad_gbs_1']:.2f}x).",
           "",
           f"| workload | size per rank | cpn 1 rank ms | cpn {P} ranks ms | weak eff. | "
           f"cpn 1 x {P} threads ms | {P} ranks / threads | strong speed-up | "
           f"bytes/iter (simulated) | mpi4py 1 / {P} ms | dask 1 / {P} ms | "
           f"vs mpi4py | vs dask |",
           "|" + " --- |" * 13]
    for r in res["rows"]:
        w1, wP, tP = r["weak_1"], r["weak_P"], r["threads_P"]
        eff = _ratio(w1, wP)
        rt = _ratio(wP, tP)
        strong = _ratio(r["strong_1"], r["strong_P"])
        sim = (tP or {}).get("simulated_bytes")
        got = (wP or {}).get("bytes")
        out.append(
            f"| {r['workload']} | {json.dumps(r['size_1'])} | {_ms(w1)} | {_ms(wP)} | "
            f"{_fmt(eff, '.0%')} | {_ms(tP)} | {_fmt(rt, '.2f')} | {_fmt(strong, '.2f')} | "
            f"{_fmt(got, '.0f')} ({_fmt(sim, '.0f')}) | "
            f"{_ms(r.get('mpi4py_1'))} / {_ms(r.get('mpi4py_P'))} | "
            f"{_ms(r.get('dask_1'))} / {_ms(r.get('dask_P'))} | "
            f"{_fmt(_ratio(r.get('mpi4py_P'), wP), '.1f')}x | "
            f"{_fmt(_ratio(r.get('dask_P'), wP), '.1f')}x |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
