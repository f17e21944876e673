"""Differential fuzzing against NumPy (tools/fuzz, docs/fuzzing.md): a fixed
set of random programs must give NumPy's values, dtypes, shapes and
exceptions in the default mode, with every op traced and compiled
(CPN_EAGER_THRESHOLD=0, CPN_BASELINE_WORK=0) and with every op traced and
run by the baseline tier, with no crash and no hang.

On a failure the message lists each failing program; to see one, run

    python tools/fuzz/cpnfuzz.py --run SEED:INDEX --mode MODE

and for minimized reproducers of all of them

    python tools/fuzz/cpnfuzz.py --seed SEED -n COUNT --mode MODE --save DIR

CPN_FUZZ_N changes the number of programs per mode (default 300: under a
minute per mode on two cores).
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CPNFUZZ = os.path.join(ROOT, "tools", "fuzz", "cpnfuzz.py")
SEED = 20
COUNT = int(os.environ.get("CPN_FUZZ_N", "300"))


@pytest.mark.parametrize("mode", ["eager0", "default", "baseline", "mixed"])
def test_fuzz(mode, tmp_path):
    out = tmp_path / "summary.json"
    cmd = [sys.executable, CPNFUZZ, "--seed", str(SEED), "-n", str(COUNT),
           "--mode", mode, "--jobs", "2", "--no-minimize", "-q",
           "--json", str(out)]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       timeout=900)
    assert out.exists(), f"cpnfuzz did not finish: {p.stderr[-3000:]}"
    s = json.loads(out.read_text())["modes"][mode]
    assert s["programs"] == COUNT, s["status"]
    gen_errors = s["status"].get("generror", 0) + s["status"].get("illposed", 0)
    assert gen_errors == 0, f"the generator failed on {gen_errors} programs"
    fails = s["failures"]
    lines = [f"{len(fails)} of {COUNT} programs differ from NumPy in mode {mode} "
             f"(seed {SEED}): {s['status']}"]
    for f in fails[:40]:
        lines.append(f"  {f['seed']}:{f['index']} {f['status']}: {f['sig']}")
        lines.append(f"      {f['detail'][:200]}")
    lines.append(f"see one: python tools/fuzz/cpnfuzz.py --run {SEED}:INDEX --mode {mode}")
    assert not fails, "\n".join(lines)
