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


@pytest.fixture
def baseline():
    """The baseline tier on for every window (the suite compiles them all);
    the test fails unless some window ran in it."""
    import cpnumeric as np
    old = np._cpn.set_baseline_work(1 << 62)
    np.synchronize()
    np.reset_stats()
    yield
    np.synchronize()
    ran = np.stats()["baseline_windows"]
    np._cpn.set_baseline_work(old)
    assert ran > 0, "no window ran in the baseline tier"


@pytest.fixture
def eager0():
    """Every array traced and compiled, however small (CPN_EAGER_THRESHOLD=0
    for the test)."""
    from cpnumeric import _core
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    yield
    _core.EAGER["threshold"] = old
