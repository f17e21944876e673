"""Profiling timelines: CPN_PROFILE=trace.json and cpnumeric.profile().

Both write Chrome / Perfetto trace-event JSON (open it in chrome://tracing or
https://ui.perfetto.dev): one complete event per executed kernel (cat
"kernel", on the runtime worker that ran it), per compilation and disk-cache
load (cat "compile", on the thread that flushed), and per copy between NumPy
and cpnumeric (cat "copy"), each on the thread it ran on.
"""

import atexit
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
