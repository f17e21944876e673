"""The one registry of cpnumeric's environment variables.

Each variable is documented in docs/environment.md. ``cache_key`` says whether
it changes compiled code (and so belongs in the kernel cache key).
"""

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Knob:
    name: str
    default: str
    cache_key: bool
    doc: str

    def get(self) -> str:
        return os.environ.get(self.name, self.default)


KNOBS = {
    k.name: k
    for k in [
        Knob("CPN_DUMP_IR", "", False,
             "Directory: write the trace, the IR after every pass and the LLVM IR "
             "of each compiled trace."),
        Knob("CPN_TRACE_LIMIT", "64", False,
             "Cut the trace into a compiled window once it holds this many ops, "
             "at the end of the next statement that writes an array."),
        Knob("CPN_OPT_LEVEL", "3", True, "LLVM optimization level of kernels (0-3)."),
        Knob("CPN_EAGER_THRESHOLD", "32768", False,
             "Arrays with fewer elements run eagerly on NumPy (0: never)."),
        Knob("CPN_BASELINE_WORK", str(1 << 26), False,
             "A window with at least this much work (per op the elements it "
             "computes or reads; a product's multiply-adds) is always "
             "compiled; below it, one whose kernel is not compiled yet runs "
             "op by op in the baseline tier (NumPy's loops) when that is "
             "expected to take less than waiting for the compile (0: always "
             "compile; the default under several MPI ranks, whose values "
             "must not depend on timing)."),
        Knob("CPN_BASELINE_BLOCK", "32768", False,
             "Elements per block of the baseline tier's runs of elementwise "
             "ops over big arrays: such a run is computed a block of rows at "
             "a time, its temporaries a block's size (0: each op over the "
             "whole array, as NumPy computes it)."),
        Knob("CPN_BACKGROUND_COMPILE", "1", False,
             "1: a window the baseline tier runs is compiled meanwhile on a "
             "thread of its own once it repeats, and its kernel runs from "
             "then on; 0: compiled on the calling thread once the baseline "
             "tier has spent a compile's expected time on it."),
        Knob("CPN_POOL_LIMIT", str(1 << 30), False,
             "Bytes of freed array buffers the runtime keeps for reuse; a "
             "buffer freed beyond it goes back to the system (0: none kept)."),
        Knob("CPN_RT_WORKERS", "1", False, "Runtime worker threads that run tasks."),
        Knob("CPN_CACHE_DIR", "~/.cache/cpnumeric", False,
             "Compiled kernels on disk, shared by processes ('' or 'off': none)."),
        Knob("CPN_CACHE_MAX_BYTES", str(1 << 30), False,
             "Bound of the disk cache in bytes: above it, the least recently "
             "used kernels are removed (0: no bound)."),
        Knob("CPN_THREADS", "0", False,
             "OpenMP threads each compiled kernel runs on, and threads of the "
             "runtime's sorts (0: all cores; under an MPI launcher, this "
             "rank's share of the node's cores)."),
        Knob("CPN_PRINT_RANKS", "0", False,
             "Under several MPI ranks, which ranks' standard output and "
             "warnings are shown: '0' (rank 0 only) or 'all'."),
        Knob("CPN_EXIT_WAIT", "300", False,
             "Under several MPI ranks, seconds a rank that reached the end of "
             "the program waits for the others before it ends them all "
             "(0: no limit)."),
        Knob("CPN_PROFILE", "", False,
             "File: write a Chrome/Perfetto trace-event timeline of kernels, "
             "compilations and copies at exit (see cpnumeric.profile)."),
        Knob("CPN_DETECT_SYMMETRY", "1", False,
             "Check a square matrix multiplied by vectors twice for symmetry; "
             "a symmetric one is then read as one triangle (0: never)."),
        Knob("CPN_SIMULATE_RANKS", "0", False,
             "P > 1: every window run is also partitioned for P MPI ranks "
             "(cpn-partition, without running on them) and the bytes and "
             "communication operations each rank would take part in are "
             "counted in stats() (simulated_*); docs/scaling.md."),
        Knob("CPN_PARTITION", "rows", False,
             "Under several MPI ranks: 'rows' (the default) splits arrays "
             "of at least CPN_PARTITION_THRESHOLD elements in blocks of rows, "
             "each rank computing its block (docs/mpi.md); 'off' keeps every "
             "array whole on every rank (each rank computes everything)."),
        Knob("CPN_PARTITION_THRESHOLD", "262144", False,
             "Arrays with fewer elements are replicated on every rank, larger "
             "ones split in blocks of rows (the partition's threshold; "
             "docs/mpi.md says why this default)."),
        Knob("CPN_HALO_OVERLAP", "1048576", False,
             "Under CPN_PARTITION=rows, a window that reads rows of other "
             "ranks' blocks (a stencil's halo) and whose rank's blocks hold "
             "at least this many elements computes the rows that need none "
             "while those rows travel, and its border rows after (0: never, "
             "the whole block after the halo rows; docs/mpi.md)."),
        Knob("CPN_LOG", "", False,
             "Comma-separated log topics printed to stderr: 'retrace' (a @jit "
             "function traced again, and which argument changed)."),
    ]
}


def get(name: str) -> str:
    return KNOBS[name].get()


def get_int(name: str) -> int:
    value = get(name)
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected an integer") from None


def get_choice(name: str, choices=("rows", "off")) -> str:
    value = get(name).strip().lower()
    if value not in choices:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def cache_dir():
    """CPN_CACHE_DIR with ~ expanded; '' when the disk cache is off."""
    d = get("CPN_CACHE_DIR").strip()
    if d.lower() in ("", "off", "0", "none"):
        return ""
    return os.path.expanduser(d)
