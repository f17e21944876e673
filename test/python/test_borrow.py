"""Held NumPy arrays borrowed, not copied (docs/numpy-api.md, "NumPy arrays
in"): np.asarray(a) of an array the program still holds reads a's buffer
under write protection; the first write to it, from NumPy, another thread,
read(2) or a forked child, copies the elements for cpnumeric first, so every
value computed from the array is the one NumPy gives for the values at the
call. Compared with NumPy on the same inputs."""

import os
import subprocess
import sys
import threading

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core

pytestmark = pytest.mark.skipif(
    not _core._cpn.borrowing(),
    reason="userfaultfd's write protection is not allowed here (or "
           "CPN_BORROW=0): held NumPy arrays are copied")

# Above glibc's largest mmap threshold (32 MiB): always a mapping of its own,
# so always borrowed, whatever the process freed before.
BIG = 36 << 20


def big(dtype="float64", seed=0):
    dt = numpy.dtype(dtype)
    n = BIG // dt.itemsize
    rng = numpy.random.default_rng(seed)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        return rng.integers(0, 100, n).astype(dt)
    if dt.kind == "c":
        return (rng.random(n // 2) + 1j * rng.random(n // 2)).astype(dt)
    return rng.random(n).astype(dt)


def stats():
    s = cp.stats()
    return s["imports_guarded"], s["import_copies"], s["guard_copies"]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool",
                                   "complex128"])
def test_held_array_is_borrowed_and_never_copied_unwritten(dtype):
    a = big(dtype)
    want = a.copy()
    cp.reset_stats()
    x = cp.asarray(a)
    r = x + x
    assert stats() == (1, 0, 0)
    numpy.testing.assert_array_equal(numpy.asarray(r), want + want)
    assert cp.stats()["guard_copies"] == 0
    del x, r
    cp.synchronize()
    a[0] = a[1]  # writable again without a copy once the values are gone
    assert cp.stats()["guard_copies"] == 0


def test_write_after_the_call_reaches_no_value_computed_from_it():
    a = big()
    want = a.copy()
    cp.reset_stats()
    x = cp.asarray(a)
    y = x * 2.0 + 1.0  # pending when NumPy writes
    s = x.sum()
    a[:] = -1.0
    a[5] = 7.0
    assert stats()[2] == 1 and cp.stats()["guard_copy_bytes"] == a.nbytes
    numpy.testing.assert_array_equal(numpy.asarray(y), want * 2.0 + 1.0)
    assert float(s) == pytest.approx(float(want.sum()), rel=1e-12)
    numpy.testing.assert_array_equal(numpy.asarray(x), want)
    z = x - 1.0  # after the write: still the values at the call
    numpy.testing.assert_array_equal(numpy.asarray(z), want - 1.0)
    assert (a[:5] == -1.0).all() and a[5] == 7.0


def test_write_from_another_thread_while_a_kernel_reads():
    a = big()
    want = numpy.sqrt(a).sum()
    x = cp.asarray(a)
    r = cp.sqrt(x).sum()  # may be running while the thread writes
    t = threading.Thread(target=lambda: a.fill(0.0))
    t.start()
    t.join()
    assert float(r) == pytest.approx(float(want), rel=1e-12)
    assert not a.any()


def test_readinto_a_borrowed_buffer(tmp_path):
    a = big()
    want = a.copy()
    x = cp.asarray(a)
    path = tmp_path / "zeros.bin"
    path.write_bytes(numpy.arange(a.size, dtype=a.dtype).tobytes())
    with open(path, "rb", buffering=0) as f:
        assert f.readinto(a) == a.nbytes  # the kernel's write waits, lands
    numpy.testing.assert_array_equal(a, numpy.arange(a.size, dtype=a.dtype))
    numpy.testing.assert_array_equal(numpy.asarray(x), want)


def test_views_and_layouts_are_borrowed():
    a = big().reshape(2304, -1)
    b = big(seed=3).reshape(2304, -1)
    want, wantb = a.copy(), b.copy()
    cp.reset_stats()
    rows = cp.asarray(a[100:2000])   # a C-ordered part of the buffer
    cols = cp.asarray(b.T)           # the transpose: F order over it
    assert stats()[:2] == (2, 0)
    assert cols.flags.f_contiguous
    head = cp.asarray(a[:150])  # pages `rows` guards: a copy
    assert stats()[:2] == (2, 1)
    r1, r2 = rows * 1.0, cols.sum(axis=1)
    a[50] = 0.0  # outside `rows`, on its pages
    b[:] = 0.0
    numpy.testing.assert_array_equal(numpy.asarray(r1), want[100:2000])
    numpy.testing.assert_allclose(numpy.asarray(r2), wantb.T.sum(axis=1),
                                  rtol=1e-12)
    numpy.testing.assert_array_equal(numpy.asarray(rows), want[100:2000])
    numpy.testing.assert_array_equal(numpy.asarray(head), want[:150])


def test_read_only_array_made_writable_again():
    a = big()
    a.flags.writeable = False
    want = a.copy()
    cp.reset_stats()
    x = cp.asarray(a)
    assert stats()[0] == 1
    a.flags.writeable = True
    a *= 2.0
    numpy.testing.assert_array_equal(numpy.asarray(x), want)


def test_our_writes_go_to_our_copy():
    a = big()
    want = a.copy()
    x = cp.asarray(a)
    x[0] = -5.0
    x += 1.0
    y = cp.asarray(a)
    y[1:3] = 0.0
    numpy.testing.assert_array_equal(a, want)  # NumPy's array unchanged
    w = want + 1.0
    w[0] = -4.0
    numpy.testing.assert_array_equal(numpy.asarray(x), w)
    numpy.testing.assert_array_equal(numpy.asarray(y)[:4],
                                     [want[0], 0.0, 0.0, want[3]])


def test_export_of_a_borrowed_value_is_its_own_memory():
    a = big()
    want = a.copy()
    x = cp.asarray(a)
    e = numpy.asarray(x)
    assert not numpy.shares_memory(e, a)
    a[:3] = 9.0
    numpy.testing.assert_array_equal(e, want)
    e[0] = 1.0  # the export aliases x, as NumPy's asarray would
    assert float(x[0]) == 1.0


def test_numpy_operands_of_functions_are_borrowed_and_shared():
    a, b = big(seed=1), big(seed=2)
    cp.reset_stats()
    acc = cp.sin(a) + cp.multiply(a, b)
    for _ in range(5):
        acc = acc + cp.sin(a)  # one store for `a` while the others live
    s = cp.stats()
    assert s["import_copies"] == 0 and s["guard_copies"] == 0
    want = numpy.sin(a) * 6 + a * b
    b[:] = 0.0
    numpy.testing.assert_allclose(numpy.asarray(acc), want, rtol=1e-12)


def test_values_sharing_a_borrow_stay_apart():
    a = numpy.ones(BIG // 8)
    x1, x2 = cp.asarray(a), cp.asarray(a)  # one buffer for both
    e = numpy.asarray(x1)
    e[0] = 99.0  # the export is x1's alone
    assert float(x1[0]) == 99.0 and float(x2[0]) == 1.0
    b = numpy.ones(BIG // 8)
    y1, y2 = cp.asarray(b), cp.asarray(b)
    b[0] = 5.0  # copied for both
    z = y1 * 2.0
    del y1  # z's window must not write the shared store in place
    numpy.testing.assert_array_equal(numpy.asarray(z)[:2], [2.0, 2.0])
    assert float(y2[0]) == 1.0 and float(y2[1]) == 1.0


def test_export_while_another_thread_writes():
    a = numpy.ones(BIG // 8)
    x = cp.asarray(a)
    go = threading.Event()

    def write():
        go.wait()
        a[0] = 2.0

    t = threading.Thread(target=write)
    t.start()
    go.set()
    got = x._numpy()  # the copy reads without the GIL: must not hang
    t.join(timeout=60)
    assert not t.is_alive()
    assert got[0] == 1.0 and a[0] == 2.0


def test_jit_entry_keeps_no_argument_of_its_first_call():
    @cp.jit
    def f(a):
        return (a * 2.0).sum()

    b = big()
    want = float((b * 2.0).sum())
    assert float(f(b)) == pytest.approx(want, rel=1e-12)
    cp.synchronize()
    cp.reset_stats()
    b[:] = 1.0  # nothing reads the borrowed buffer any more: no copy
    assert cp.stats()["guard_copies"] == 0
    assert float(f(b)) == 2.0 * b.size


def test_small_views_read_without_copying_the_buffer():
    a = big()
    want = a.copy()
    cp.reset_stats()
    x = cp.asarray(a)
    head, row = x[:10], x[1000:1003] * 1.0
    numpy.testing.assert_array_equal(numpy.asarray(head), want[:10])
    numpy.testing.assert_array_equal(numpy.asarray(row), want[1000:1003])
    assert float(x[5]) == want[5] and x[:4].tolist() == list(want[:4])
    assert cp.stats()["guard_copies"] == 0
    a[:10] = 0.0
    numpy.testing.assert_array_equal(numpy.asarray(head), want[:10])


def test_out_is_the_borrowed_array():
    a = big()
    want = a.copy()
    x = cp.asarray(a)
    cp.add(x, 1.0, out=a)  # NumPy's array written from its own values
    numpy.testing.assert_array_equal(a, want + 1.0)
    numpy.testing.assert_array_equal(numpy.asarray(x), want)


def _run(code, **env):
    e = dict(os.environ, **env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_forked_child_keeps_the_values():
    out = _run("""
import os, numpy, cpnumeric as cp
a = numpy.random.default_rng(0).random(5_000_000)
want = float(a.sum())
x = cp.asarray(a)
pid = os.fork()
if pid == 0:
    # Protected again in the child, not copied at the fork.
    before = cp.stats()["guard_copies"]
    a[:] = 0.0
    ok = abs(float(x.sum()) - want) <= 1e-9 * want
    ok = ok and before == 0 and cp.stats()["guard_copies"] == 1
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
a[:] = 1.0
print(os.waitstatus_to_exitcode(status), abs(float(x.sum()) - want) <= 1e-9 * want)
""")
    assert out.split() == ["0", "True"]


def test_table_full_and_switched_off_copy():
    code = """
import ctypes, numpy, cpnumeric as cp
# Arrays of 256 KiB as glibc mappings: its mmap threshold fixed at 128 KiB
# (M_MMAP_THRESHOLD), not raised by frees.
ctypes.CDLL(None).mallopt(-3, 1 << 17)
arrs = [numpy.full(1 << 15, float(i)) for i in range(200)]
cp.reset_stats()
xs = [cp.asarray(q) for q in arrs]
s = cp.stats()
for q in arrs:
    q[:] = -1.0
ok = all(float(x[7]) == float(i) for i, x in enumerate(xs))
print(s["imports_guarded"], s["imports_guarded"] + s["import_copies"], ok)
"""
    g, total, ok = _run(code).split()
    assert 0 < int(g) <= 128 and int(total) == 200 and ok == "True"
    assert _run(code, CPN_BORROW="0").split() == ["0", "200", "True"]


def test_random_programs_over_borrowed_buffers():
    # tools/fuzz/borrowfuzz.py: values from held arrays, pending work, and
    # NumPy writes (parts, threads, read(2)) in between, against NumPy.
    fuzz = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fuzz",
                        "borrowfuzz.py")
    r = subprocess.run([sys.executable, fuzz, "--seed", "54", "-n", "60"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "60/60 ok" in r.stdout


# cpnumeric's allocator for NumPy's array data (NEP 49, python/src/
# allocator.cpp): arrays of 256 KiB or more on pages of their own within
# malloc's memory, so that held ones are borrowed wherever glibc puts them.

def test_numpy_arrays_on_the_heap_are_borrowed_too():
    out = _run("""
import ctypes, numpy, cpnumeric as cp
from numpy._core import multiarray as m
t = numpy.ones(3 << 20)   # 24 MiB freed: glibc's mmap threshold rises to it
del t
a = numpy.random.default_rng(1).random(1 << 21)   # 16 MiB: on malloc's heap
assert not ctypes.c_size_t.from_address(a.ctypes.data - 8).value & 2
want = numpy.sin(a) * 2.0 + a
cp.reset_stats()
x = cp.sin(a) * 2.0 + a
s = cp.stats()
a[::7] = -5.0            # the write copies for x first
print(m.get_handler_name(), s["imports_guarded"], s["import_copy_bytes"] < 1024,
      numpy.allclose(numpy.asarray(x), want, rtol=1e-13, atol=0),
      cp.stats()["guard_copies"])
""")
    assert out.split() == ["cpnumeric", "1", "True", "True", "1"]
    out = _run("""
import numpy, cpnumeric as cp
from numpy._core import multiarray as m
print(m.get_handler_name())
""", CPN_BORROW="0")
    assert out.split() == ["default_allocator"]


def test_numpy_allocator_keeps_numpy_semantics():
    out = _run("""
import os, threading, numpy, cpnumeric as cp
from numpy._core import multiarray as m
ok = []
# Made before cpnumeric's allocator, freed after it: NumPy's own frees it.
pre = numpy.ones(1 << 18)
for n in (0, 1, 1000, 32767, 32768, 40000, 1 << 20, 5_000_000):
    a = numpy.full(n, 3.0)
    del a
    z = numpy.zeros(n)     # a reused mapping is zeroed
    ok.append(not z.any() and z.shape == (n,))
    e = numpy.empty(n); e[:] = 2.0
    ok.append(e.sum() == 2.0 * n)
del pre
# Realloc: ndarray.resize across the 256 KiB boundary, both ways.
r = numpy.arange(1000, dtype=numpy.float64)
for n in (40000, 2_000_000, 50000, 100, 3_000_000):
    k = min(r.size, n)
    head = r[:k].copy()
    r.resize(n, refcheck=False)
    ok.append(numpy.array_equal(r[:k], head) and r.size == n)
    r[:] = numpy.arange(n)
# Growing by realloc (fromiter of unknown length) and by append.
f = numpy.fromiter((float(i) for i in range(300_000)), dtype=float)
ok.append(f[-1] == 299_999.0 and f.sum() == 299_999 * 300_000 / 2)
g = numpy.ones(1 << 15)
for i in range(100):
    g = numpy.append(g, numpy.full(3000, float(i)))
ok.append(g.size == (1 << 15) + 300_000 and g[-1] == 99.0)
# Another thread's arrays (a fresh context: NumPy's allocator) and ours,
# freed on either side.
box = []
th = threading.Thread(target=lambda: box.append(numpy.ones(1 << 20)))
th.start(); th.join()
ok.append(m.get_handler_name(box[0]) == "default_allocator")
mine = numpy.ones(1 << 20)
th = threading.Thread(target=lambda: box.append(mine.sum()))
th.start(); th.join()
del box[:]
ok.append(m.get_handler_name(mine) == "cpnumeric")
del mine
# A forked child allocates and frees on its own.
pid = os.fork()
if pid == 0:
    q = [numpy.full(1 << 19, float(i)) for i in range(8)]
    os._exit(0 if sum(float(v.sum()) for v in q) == 28.0 * (1 << 19) else 3)
_, status = os.waitpid(pid, 0)
ok.append(os.waitstatus_to_exitcode(status) == 0)
print(all(ok), ok)
""")
    assert out.split()[0] == "True", out


def test_data_freed_under_a_borrowed_value_is_copied_first():
    # ndarray.resize(refcheck=False) frees the buffer a value still reads:
    # the value gets its copy before malloc may write the freed pages.
    out = _run("""
import numpy, cpnumeric as cp
t = numpy.ones(3 << 20); del t
a = numpy.arange(1 << 21, dtype=numpy.float64)
want = float(a.sum())
x = cp.asarray(a)
cp.reset_stats()
a.resize(3 << 20, refcheck=False)
copies = cp.stats()["guard_copies"]
junk = [numpy.full(1 << 18, 7.0) for _ in range(20)]
a[:] = -1.0
print(copies, cp.stats()["guard_copies"], float(x.sum()) == want)
""")
    assert out.split() == ["1", "1", "True"]


def test_numpy_zeros_are_zero_under_malloc_perturb():
    out = _run("""
import numpy, cpnumeric as cp
ok = True
for n in (1 << 15, 1 << 17, 1 << 22):
    z = numpy.zeros(n)
    ok = ok and not z.any()
    del z
print(ok)
""", MALLOC_PERTURB_="165")
    assert out.split() == ["True"]
