"""The libraries cpnumeric runs on: its OpenBLAS chooses the same CPU kernels
as NumPy's, never a generic one on a CPU with AVX2, and show_config says so."""

import io
import os
import re
import subprocess
import sys

import pytest

import cpnumeric as cp


def _forced_generic(config):
    """Skip when the machine forces a generic core type on purpose."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    if forced and config["generic"]:
        pytest.skip(f"OPENBLAS_CORETYPE={forced} forces OpenBLAS's generic kernels here")


def test_blas_kernels_are_not_generic_on_a_cpu_with_avx2():
    c = cp._sysinfo.blas_config()
    if "avx2" not in c["cpu_features"]:
        pytest.skip("this CPU has no AVX2: OpenBLAS's generic kernels are the right ones")
    _forced_generic(c)
    assert c["library"] == "scipy-openblas64"
    assert "USE64BITINT" in c["config"] and "DYNAMIC_ARCH" in c["config"]
    assert not c["generic"], c
    if c["numpy_core"] is not None:
        assert c["core"].strip().lower() == c["numpy_core"].strip().lower()


def test_openblas_verbose_names_the_same_core_as_numpys():
    """OPENBLAS_VERBOSE=2 makes each OpenBLAS in the process print the core it
    chose: NumPy's and the one compiled kernels call."""
    code = ("import numpy; import cpnumeric as cp; a = cp.ones((64, 64)); "
            "print(float((a @ a).sum()))")
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("262144.0")
    cores = re.findall(r"Core: (\S+)", r.stdout + r.stderr)
    assert len(cores) == 2, r.stdout + r.stderr
    assert cores[0] == cores[1]


def test_show_config_reports_library_version_and_core():
    buf = io.StringIO()
    cp.show_config(file=buf)
    text = buf.getvalue()
    c = cp._sysinfo.blas_config()
    assert "scipy-openblas64" in text
    assert re.search(r"OpenBLAS \d+\.\d+\.\d+", text)
    assert f"core: {c['core'].strip()}" in text
    assert isinstance(c["threads"], int) and c["threads"] >= 1
