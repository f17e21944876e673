"""CPN_PROFILE and cpnumeric.profile(): trace-event JSON timelines."""

import json
import os
import subprocess
import sys

import numpy
import pytest

import cpnumeric as np


def _load(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    for e in events:
        assert {"name", "ph", "pid", "tid"} <= set(e)
        if e["ph"] == "X":
            assert e["cat"] in ("kernel", "task", "compile", "copy")
            assert e["ts"] >= 0 and e["dur"] >= 0
        else:
            assert e["ph"] == "M"
    return events


def _kernels(events):
    return [e for e in events if e.get("cat") == "kernel"]


def test_environment_variable_writes_one_event_per_kernel(tmp_path):
    out = tmp_path / "trace.json"
    prog = ("import cpnumeric as np\n"
            "u = np.zeros((300, 300)); u[0, :] = 1\n"
            "for _ in range(30):\n"
            "    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]"
            " + u[1:-1, 2:])\n"
            "print(float(u.sum()))\n"
            "print(np.stats()['tasks_run'])\n")
    env = dict(os.environ, CPN_PROFILE=str(out), CPN_TRACE_LIMIT="16",
               CPN_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    tasks = int(r.stdout.split()[-1])
    events = _load(out)
    kernels = _kernels(events)
    assert tasks > 1 and len(kernels) == tasks
    compiles = [e for e in events if e["name"].startswith("compile ")]
    assert compiles and all(e["args"]["ops"] > 0 for e in compiles)
    # Kernels run on the runtime's worker, or on the main thread while it
    # waits for them (the runtime's tasks run by the waiter), each thread
    # named in the metadata.
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {names[k["tid"]] for k in kernels} <= {"cpn-worker 1", "main"}
    assert any(e["name"] in ("to_numpy", "host_view", "scalar_value") for e in events)


def test_profile_block_counts_jit_kernels(tmp_path):
    @np.jit
    def step(x, y):
        return np.sqrt(x * x + y * y) + 1.0

    x = numpy.random.default_rng(1).random(5000)
    step(x, x)  # compiled outside the block
    np.synchronize()
    before = np.stats()["tasks_run"]
    with np.profile(tmp_path / "a.json"):
        for _ in range(7):
            r = step(x, x)
        with np.profile(tmp_path / "inner.json"):
            r = step(r, x)
    inside = np.stats()["tasks_run"] - before
    numpy.testing.assert_allclose(
        r, numpy.sqrt(step(x, x).__array__() ** 2 + x * x) + 1.0)
    outer, inner = _load(tmp_path / "a.json"), _load(tmp_path / "inner.json")
    assert len(_kernels(outer)) == 8 == inside
    assert len(_kernels(inner)) == 1
    assert not [e for e in outer if e.get("cat") == "compile"
                and e["name"].startswith("compile")]


def test_unwritable_path_warns(tmp_path):
    with pytest.warns(RuntimeWarning, match="could not write the profile"):
        with np.profile(tmp_path / "missing-dir" / "p.json"):
            (np.ones(2000) * 2).sum().item()
