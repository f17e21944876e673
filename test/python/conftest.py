import atexit
import os
import shutil
import sys
import tempfile
import warnings

import pytest

# The package under test: the source tree's, or another build's copy of it
# (make test-asan's sanitized binaries).
sys.path.insert(0, os.environ.get("CPN_TEST_PACKAGE_ROOT") or
                os.path.join(os.path.dirname(__file__), "..", "..", "python"))
os.environ.setdefault("CPN_EAGER_THRESHOLD", "0")
# Every window compiled, so that each test exercises the compiler on its ops;
# test_patterns.py and the fuzzer's default and baseline modes run the
# baseline tier.
os.environ.setdefault("CPN_BASELINE_WORK", "0")
# A fresh kernel disk cache per test session, so that compilation counts do
# not depend on what earlier runs left in ~/.cache/cpnumeric.
_cache = tempfile.mkdtemp(prefix="cpn-test-cache-")
os.environ["CPN_CACHE_DIR"] = _cache
atexit.register(shutil.rmtree, _cache, True)


@pytest.fixture
def runtime_warnings_are_errors():
    """Every RuntimeWarning (a fallback to NumPy among them) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield
