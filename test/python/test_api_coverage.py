"""docs/api-coverage.md is generated; it must match the code, and the
array-API aliases are the native functions they name."""

import os
import subprocess
import sys

import numpy

import cpnumeric as cp
from test_ufuncs import check, data

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def test_coverage_doc_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "api_coverage.py"),
                        "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_array_api_aliases():
    x = data((3, 4), "float64", 1) / 4
    for alias, name in [("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"),
                        ("acosh", "arccosh"), ("asinh", "arcsinh"), ("atanh", "arctanh")]:
        assert getattr(cp, alias) is getattr(cp, name)
        arg = x + 2 if alias == "acosh" else x
        check(getattr(cp, alias)(cp.array(arg)), getattr(numpy, alias)(arg))
    check(cp.atan2(cp.array(x), cp.array(x.T[:3, :3].sum() + x)), numpy.atan2(x, x.T[:3, :3].sum() + x))
    check(cp.pow(cp.array(x), 2), numpy.pow(x, 2))
    check(cp.concat([cp.array(x), cp.array(x)], axis=1), numpy.concat([x, x], axis=1))
    check(cp.permute_dims(cp.array(x), (1, 0)), numpy.permute_dims(x, (1, 0)))
    assert "acos" in cp.coverage()["native"]
