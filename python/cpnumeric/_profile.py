"""Profiling timelines: CPN_PROFILE=trace.json and cpnumeric.profile().

Both write Chrome / Perfetto trace-event JSON (open it in chrome://tracing or
https://ui.perfetto.dev): one complete event per executed kernel (cat
"kernel", on the runtime worker that ran it), per compilation and disk-cache
load (cat "compile", on the thread that flushed), and per copy between NumPy
and cpnumeric (cat "copy"), each on the thread it ran on.
"""

import atexit
import json
import warnings

from . import _config, _cpn

# Open sessions (the eager path times its NumPy calls only while one is).
SESSIONS = [0]


class profile:
    """Records a timeline of the work done inside the block into `path`.

        with cpnumeric.profile("step.json"):
            step(u)

    Entering and leaving the block are sync points: work recorded before the
    block finishes first (so that its kernels are not counted in the block),
    and on exit the block's own work finishes before the file is written.
    Blocks nest; each file gets the events of its block.
    """

    def __init__(self, path="cpnumeric-profile.json"):
        self.path = str(path)
        self._first = None

    def __enter__(self):
        _cpn.flush()
        _cpn.wait_all()
        self._first = _cpn.profile_begin()
        SESSIONS[0] += 1
        return self

    def __exit__(self, *exc):
        try:
            _cpn.flush()
            _cpn.wait_all()
        finally:
            SESSIONS[0] -= 1
            if not _cpn.profile_end(self._first, self.path):
                warnings.warn(f"cpnumeric: could not write the profile "
                              f"{self.path!r}", RuntimeWarning, stacklevel=2)
        return False


def merge_profiles(out, paths):
    """Writes the timelines of several ranks (CPN_PROFILE's prof.rank0.json,
    prof.rank1.json, ...) into one file `out`, one process track per rank,
    on one clock: each file's events are shifted by its steady-clock epoch
    (exact for ranks of one machine; ranks of other machines keep their own
    clock's offset). Files without an epoch (older ones) keep their times,
    and so do all the others then. Returns the number of events written.

        cpnumeric.merge_profiles("prof.json", glob.glob("prof.rank*.json"))
    """
    files = []
    for path in paths:
        with open(path) as f:
            files.append(json.load(f))
    if not files:
        raise ValueError("merge_profiles needs at least one profile file")
    epochs = [d.get("cpnEpochUs") for d in files]
    if any(e is None for e in epochs):
        warnings.warn("merge_profiles: a file has no clock epoch (cpnEpochUs): "
                      "the files' times are kept as they are", RuntimeWarning,
                      stacklevel=2)
        epochs = [0.0] * len(files)
    zero = min(epochs)
    events, used = [], set()
    for n, (d, epoch) in enumerate(zip(files, epochs)):
        # One track per file: its rank as the pid (processes of two machines
        # can share a pid), or a number of its own where two files have the
        # same rank (two launches, runs without MPI).
        pid = d.get("cpnRank", n)
        while pid in used:
            pid = max(used) + 1
        used.add(pid)
        for e in d.get("traceEvents", []):
            e = dict(e, pid=pid)
            if "ts" in e:
                e["ts"] = round(e["ts"] + epoch - zero, 3)
            events.append(e)
    with open(out, "w") as f:
        json.dump({"displayTimeUnit": "ms", "traceEvents": events}, f)
    return len(events)


def _start_from_environment():
    from . import _ranks
    path = _ranks.per_rank_path(_config.get("CPN_PROFILE"))
    if not path:
        return
    session = profile(path).__enter__()

    def finish():
        try:
            session.__exit__(None, None, None)
        except Exception as e:  # a failed task: still write what ran
            warnings.warn(f"cpnumeric: CPN_PROFILE: {e}", RuntimeWarning)

    atexit.register(finish)
