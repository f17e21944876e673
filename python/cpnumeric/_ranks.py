"""Ranks: the same program on every MPI rank (SPMD with control replication).

``mpirun -n P python prog.py`` starts P copies of the program; each imports
cpnumeric, which starts MPI (cpnrt/Comm.h) and makes the copies behave as
one program: output and warnings once (rank 0), unseeded random streams the
same on every rank, files written once, an uncaught error on any rank ends
all of them with its message and rank. Started without a launcher, nothing
here touches MPI. Arrays are replicated on every rank for now: each rank
computes every value (docs/mpi.md says what is and is not distributed).
"""

import os
import sys
import traceback
import warnings

# What a launcher sets (the same list as cpnrt::comm::launchedByMpi).
_LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK")
# How many ranks share this node, before MPI starts.
_LOCAL_SIZE_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE")

# NumPy functions that write files: under several ranks rank 0 writes, the
# others wait for it (a barrier), so every rank can read the file next.
WRITERS = frozenset({"save", "savez", "savez_compressed", "savetxt"})

_state = {"rank": 0, "size": 1, "active": False, "pid": None}


def launched():
    """Whether an MPI launcher started this process (its environment; a
    process a rank started inherits it but is no rank: CPN_MPI_RANK_PID, as
    cpnrt::comm::launchedByMpi reads it)."""
    pid = os.environ.get("CPN_MPI_RANK_PID")
    if pid and pid != str(os.getpid()):
        return False
    return any(os.environ.get(v) for v in _LAUNCHER_VARIABLES)


def local_size():
    for v in _LOCAL_SIZE_VARIABLES:
        try:
            n = int(os.environ.get(v, ""))
        except ValueError:
            continue
        if n > 0:
            return n
    return 1


def threads_per_rank():
    """The cores this rank may use when several ranks share a node and
    CPN_THREADS is not set: its share of the node's cores (at least one), or
    the cores the launcher bound it to if fewer. None outside a launch."""
    if not launched():
        return None
    n = local_size()
    cores = os.cpu_count() or 1
    try:
        bound = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        bound = cores
    return max(1, min(bound, cores // n))


def prepare_environment():
    """Before the runtime loads: OpenBLAS's threads are this rank's share of
    the cores (unless OPENBLAS_NUM_THREADS is set), so that P ranks on one
    node do not start P pools of all cores."""
    share = threads_per_rank()
    if share is not None and local_size() > 1:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(share))
    return share


def start(cpn, print_ranks):
    """Starts MPI under a launcher; with several ranks, installs what makes
    the copies one program. `print_ranks` is CPN_PRINT_RANKS."""
    if not cpn.mpi_start():
        return
    _state.update(rank=cpn.mpi_rank(), size=cpn.mpi_size(), active=True, pid=os.getpid())
    sys.excepthook = _abort_all_hook(cpn, sys.excepthook)
    if _state["size"] > 1 and _state["rank"] != 0 and print_ranks != "all":
        # Python's standard output only: what C code or a child process
        # writes to file descriptor 1 still shows.
        sys.stdout = open(os.devnull, "w")
        warnings.showwarning = _quiet_warning


def kernel_threads(cpn, share):
    """The threads every rank's kernels run on: the smallest share of any
    rank (the replicated ranks run one thread count: a library call's last
    bits may follow it). `share` is this rank's (None: no launch)."""
    if share is None or not _state["active"]:
        return share
    cores = os.cpu_count() or 1
    share = max(1, min(share, cores // max(1, cpn.mpi_local_size())))
    return cpn.mpi_min_max(share)[0]


def per_rank_path(path):
    """A file or directory name of this rank's own under several ranks
    (CPN_PROFILE, CPN_DUMP_IR): prof.json -> prof.rank1.json, dir -> dir/rank1."""
    if not path or not several():
        return path
    r = _state["rank"]
    if os.path.isdir(path) or not os.path.splitext(path)[1]:
        return os.path.join(path, f"rank{r}")
    stem, ext = os.path.splitext(path)
    return f"{stem}.rank{r}{ext}"


def finish(cpn, wait_seconds):
    """At a normal exit, after the last kernels ran: every rank ends MPI,
    once all have got there (CPN_EXIT_WAIT seconds at most)."""
    if _state["active"]:
        _state["active"] = False
        cpn.mpi_finish(float(wait_seconds))


def rank():
    """This process's MPI rank (0 when not started by an MPI launcher)."""
    return _state["rank"]


def ranks():
    """The number of MPI ranks running the program (1 when not started by an
    MPI launcher)."""
    return _state["size"]


def several():
    return _state["size"] > 1


def shared_entropy(value):
    """Rank 0's `value` on every rank: fresh entropy (an unseeded random
    generator) must be the same on every rank, or replicated arrays would
    differ."""
    if not several():
        return value
    from . import _cpn
    return _cpn.mpi_broadcast_u64(value, 0)


def run_writer(call, target):
    """Runs `call`, which writes `target`. Under several ranks a file named
    by a path is written by rank 0 only, and every rank returns once it is
    written (or raises rank 0's error, as OSError where rank 0's was
    another kind: the ranks' control flow stays the same). A file object or
    buffer is each rank's own, so every rank writes its own."""
    if not several() or not isinstance(target, (str, bytes, os.PathLike)):
        return call()
    from . import _cpn
    failure, result = None, None
    if _state["rank"] == 0:
        try:
            result = call()
        except Exception as e:  # noqa: BLE001  (raised below, on every rank)
            failure = e
    # The broadcast is the barrier: a rank gets rank 0's flag once the file
    # is written.
    if _cpn.mpi_broadcast_u64(0 if failure is None else 1, 0):
        if failure is not None:
            raise failure
        raise OSError(f"cpnumeric: rank 0 could not write {os.fsdecode(target)!r} "
                      "(its error is on rank 0's standard error)")
    return result


def _quiet_warning(*args, **kwargs):
    pass


def _abort_all_hook(cpn, previous):
    def hook(kind, value, tb):
        if (issubclass(kind, KeyboardInterrupt) or not _state["active"]
                or _state["pid"] != os.getpid()):  # a forked child is no rank
            return previous(kind, value, tb)
        text = "".join(traceback.format_exception(kind, value, tb))
        prefix = f"[rank {_state['rank']} of {_state['size']}] "
        try:
            sys.stderr.write("".join(prefix + line + "\n" for line in text.rstrip("\n").split("\n")))
            sys.stderr.flush()
        except Exception:  # noqa: BLE001  (a closed stderr must not stop the abort)
            pass
        message = traceback.format_exception_only(kind, value)[-1].strip()
        cpn.mpi_abort(f"uncaught {message}; ending every rank", 1)
    return hook
