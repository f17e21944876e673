"""Issue 22: loops of ordinary NumPy code compile once per code shape, and
element access on a computed array needs no trace at all."""

import numpy
import pytest

import cpnumeric as np


def _compilations():
    s = np.stats()
    return s["compilations"] + s["cache_hits"] + s["disk_hits"]


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.int64,
                                   numpy.uint8, numpy.bool_, numpy.complex128])
def test_element_loop_writes_in_place(dtype):
    n = 3000  # above the eager threshold: the array is traced
    ref = numpy.zeros(n, dtype)
    b = np.zeros(n, dtype)
    b = b + np.ones(n, dtype)  # a computed value
    ref = ref + numpy.ones(n, dtype)
    b[0]  # computed now
    before = np.stats()["ops_recorded"]
    for i in range(1, 200):
        v = (b[i - 1] + ref.dtype.type(1)) if dtype is not numpy.bool_ else not b[i - 1]
        b[i] = v
        ref[i] = v
    assert np.stats()["ops_recorded"] == before  # no trace: written in place
    numpy.testing.assert_array_equal(np.asarray(b), ref)


def test_element_write_keeps_other_values():
    n = 2000
    a = np.arange(n, dtype=numpy.float64) * 2.0
    a[0]
    c = a.copy()            # may share the value: must keep the old element
    view = a[10:20]         # shares the base: sees the write
    pending = a + 1.0       # a pending op reading the old value
    host = numpy.asarray(a)  # a NumPy copy
    a[12] = -5.0
    assert float(c[12]) == 24.0
    assert float(view[2]) == -5.0
    assert float(pending[12]) == 25.0
    assert host[12] == 24.0
    ref = numpy.arange(n, dtype=numpy.float64) * 2.0
    ref[12] = -5.0
    numpy.testing.assert_array_equal(np.asarray(a), ref)


def test_element_write_conversions_and_errors():
    a = np.arange(2000, dtype=numpy.int32) + 0
    a[0]
    a[5] = numpy.float64(3.7)  # NumPy's setitem truncates
    assert int(a[5]) == 3
    a[-1] = True
    assert int(a[1999]) == 1
    with pytest.raises(IndexError):
        a[2000] = 1
    with pytest.raises(TypeError):
        a[3] = 1j
    with pytest.raises(OverflowError):
        a[3] = 2 ** 40
    u = np.zeros(2000, numpy.uint8) + 1
    u[0]
    with pytest.raises(OverflowError):
        u[4] = -1
    r = np.zeros(2000) + 1.0
    r[0]
    r.flags.writeable = False
    with pytest.raises(ValueError):
        r[4] = 2.0


def test_element_write_2d_and_facts():
    ref = numpy.arange(40 * 40, dtype=numpy.float64).reshape(40, 40)
    ref = ref + ref.T  # symmetric
    a = np.asarray(ref) + 0.0
    v = np.ones(40)
    for _ in range(3):  # products that may learn the matrix is symmetric
        (a @ v)[0]
    before = np.stats()["ops_recorded"]
    a[3, 7] = 100.0
    assert np.stats()["ops_recorded"] == before  # written in place
    ref[3, 7] = 100.0
    numpy.testing.assert_allclose(np.asarray(a @ numpy.ones(40)), ref @ numpy.ones(40))
    numpy.testing.assert_allclose(np.asarray(a.T @ numpy.ones(40)), ref.T @ numpy.ones(40))
