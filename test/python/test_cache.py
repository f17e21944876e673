"""The disk kernel cache (CPN_CACHE_DIR): bounded by CPN_CACHE_MAX_BYTES with
least-recently-used eviction, private (0700, refused when others may write to
it), loading only objects this user wrote and whose hashes match, and safe for
processes that share it at the same time."""

import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

# Kernels first..first+count-1 for each (first, count) of the arguments: one
# per length (shapes are static, so each length is a kernel of its own); every
# result compared with NumPy's.
_PROGRAM = textwrap.dedent("""
    import json, sys, numpy, cpnumeric as np
    args = [int(a) for a in sys.argv[1:]]
    kernels = [k for first, count in zip(args[::2], args[1::2])
               for k in range(first, first + count)]
    mismatches = []
    for k in kernels:
        x0 = numpy.linspace(0.0, 1.0, 1000 + k)
        got = np.asnumpy(np.sin(np.asarray(x0)) * 2.0 + np.sqrt(np.asarray(x0)))
        want = numpy.sin(x0) * 2.0 + numpy.sqrt(x0)
        if got.shape != want.shape or not numpy.allclose(got, want, rtol=1e-13, atol=0):
            mismatches.append(k)
    s = np.stats()
    print(json.dumps({"mismatches": mismatches, "compilations": s["compilations"],
                      "disk_hits": s["disk_hits"], "disk_writes": s["disk_writes"]}))
""")


def _env(cache_dir, **extra):
    return dict(os.environ, CPN_CACHE_DIR=str(cache_dir), CPN_EAGER_THRESHOLD="0",
                PYTHONPATH=os.path.join(ROOT, "python"), **extra)


def _start(cache_dir, first, count, *more, **extra):
    ranges = [str(n) for n in (first, count) + more]
    return subprocess.Popen([sys.executable, "-c", _PROGRAM] + ranges,
                            env=_env(cache_dir, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    result["stderr"] = err
    return result


def _run(cache_dir, first, count, **extra):
    result = _finish(_start(cache_dir, first, count, **extra))
    assert result["mismatches"] == []
    return result


def _entry_files(cache_dir):
    """The cache's files (not its `usage` total)."""
    return sorted(p for p in cache_dir.iterdir() if p.name != "usage")


def _stems(cache_dir):
    return {p.name[:16] for p in _entry_files(cache_dir)}


def test_directory_and_files_are_created_private(tmp_path):
    cache = tmp_path / "a" / "b" / "cache"
    first = _run(cache, 0, 3)
    assert first["disk_writes"] == first["compilations"] == 3
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = _entry_files(cache)
    assert {p.suffix for p in files} >= {".o", ".trace"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)
    again = _run(cache, 0, 3)
    assert again["compilations"] == 0 and again["disk_hits"] == 3


def test_eviction_keeps_the_directory_under_the_bound(tmp_path):
    bound = 200_000
    first = _run(tmp_path, 0, 120, CPN_CACHE_MAX_BYTES=str(bound))
    assert first["compilations"] == first["disk_writes"] == 120
    total = sum(p.stat().st_size for p in _entry_files(tmp_path))
    assert 0 < total <= bound
    # Evicted whole: every entry left has its object and its trace.
    names = {p.name for p in _entry_files(tmp_path)}
    assert len(_stems(tmp_path)) < 120
    for stem in _stems(tmp_path):
        assert {stem + ".o", stem + ".trace"} <= names
    # The newest kernels are the ones kept.
    again = _run(tmp_path, 110, 10, CPN_CACHE_MAX_BYTES=str(bound))
    assert again["compilations"] == 0 and again["disk_hits"] == 10


def test_a_hit_keeps_an_entry_from_eviction(tmp_path):
    # A, then newer B0..B29; a later process hits A (recently used again),
    # then one compiles C0..C9, taking the cache over its bound: entries of
    # B go first, A stays.
    _run(tmp_path, 0, 1)
    stems_a = _stems(tmp_path)
    _run(tmp_path, 100, 30)
    stems_b = _stems(tmp_path) - stems_a
    before = sum(p.stat().st_size for p in _entry_files(tmp_path))
    bound = before + before // 20
    hit = _run(tmp_path, 0, 1, CPN_CACHE_MAX_BYTES=str(bound))
    assert hit["disk_hits"] == 1 and hit["compilations"] == 0
    new = _run(tmp_path, 200, 10, CPN_CACHE_MAX_BYTES=str(bound))
    assert new["compilations"] == 10
    left = _stems(tmp_path)
    assert stems_a <= left
    assert stems_b - left, "nothing was evicted"
    assert sum(p.stat().st_size for p in _entry_files(tmp_path)) <= bound


def test_corrupted_object_is_not_loaded(tmp_path):
    first = _run(tmp_path, 0, 4)
    for p in tmp_path.glob("*.o"):
        data = bytearray(p.read_bytes())
        data[len(data) // 2] ^= 0x40
        p.write_bytes(bytes(data))
    again = _run(tmp_path, 0, 4)
    assert again["disk_hits"] == 0 and again["compilations"] == first["compilations"]
    # The bad entries were replaced by good ones.
    third = _run(tmp_path, 0, 4)
    assert third["compilations"] == 0 and third["disk_hits"] == first["compilations"]


def test_object_of_another_entry_is_not_loaded(tmp_path):
    # Files of two writers (or a copy): entry X's .o under entry Y's name.
    _run(tmp_path, 0, 2)
    objects = sorted(tmp_path.glob("*.o"))
    assert len(objects) == 2 and objects[0].read_bytes() != objects[1].read_bytes()
    objects[1].write_bytes(objects[0].read_bytes())
    again = _run(tmp_path, 0, 2)
    assert again["disk_hits"] == 1 and again["compilations"] == 1


def test_entry_without_its_object_is_a_miss(tmp_path):
    # A reader that finds the .trace but not the .o (removed, or not there).
    _run(tmp_path, 0, 2)
    for p in tmp_path.glob("*.o"):
        p.unlink()
    again = _run(tmp_path, 0, 2)
    assert again["disk_hits"] == 0 and again["compilations"] == 2


def test_linked_object_is_not_loaded(tmp_path):
    _run(tmp_path, 0, 2)
    for p in tmp_path.glob("*.o"):
        target = tmp_path / (p.name + ".elsewhere")
        p.rename(target)
        p.symlink_to(target)
    again = _run(tmp_path, 0, 2)
    assert again["disk_hits"] == 0 and again["compilations"] == 2


def test_group_writable_file_is_not_loaded(tmp_path):
    _run(tmp_path, 0, 2)
    for p in tmp_path.glob("*.o"):
        p.chmod(0o620)
    again = _run(tmp_path, 0, 2)
    assert again["disk_hits"] == 0 and again["compilations"] == 2


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o1777])
def test_directory_others_may_write_to_is_refused(tmp_path, mode):
    cache = tmp_path / "cache"
    _run(cache, 0, 2)
    cache.chmod(mode)
    again = _run(cache, 0, 2)
    assert again["disk_hits"] == 0 and again["disk_writes"] == 0
    assert again["compilations"] == 2
    assert again["stderr"].count("not using the kernel cache") == 1
    assert "other users may write to it" in again["stderr"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")
def test_files_and_directory_of_another_user_are_refused(tmp_path):
    cache = tmp_path / "cache"
    _run(cache, 0, 2)
    for p in cache.glob("*.o"):
        os.chown(p, 65534, 65534)
    again = _run(cache, 0, 2)
    assert again["disk_hits"] == 0 and again["compilations"] == 2
    os.chown(cache, 65534, 65534)
    refused = _run(cache, 0, 2)
    assert refused["disk_hits"] == 0 and refused["disk_writes"] == 0
    assert "another user owns it" in refused["stderr"]


@pytest.mark.parametrize("bound", [str(1 << 30), "60000"])
def test_processes_sharing_the_cache_see_no_torn_entry(tmp_path, bound):
    # Four processes at once, three rounds: each compiles or loads the same
    # kernels 0..11 (so that several write one entry at the same time) and
    # three of its own; with the small bound they also evict entries the
    # others are reading or writing.
    for rnd in range(3):
        procs = [_start(tmp_path, 0, 12, 100 + 10 * w + rnd, 3, CPN_CACHE_MAX_BYTES=bound)
                 for w in range(4)]
        for p in procs:
            r = _finish(p)
            assert r["mismatches"] == []
            assert r["compilations"] + r["disk_hits"] == 15
            assert "not using the kernel cache" not in r["stderr"]
    assert not list(tmp_path.glob("*.tmp"))
    if bound == "60000":
        assert sum(p.stat().st_size for p in _entry_files(tmp_path)) <= int(bound)
    else:
        last = _run(tmp_path, 0, 12)
        assert last["compilations"] == 0 and last["disk_hits"] == 12
