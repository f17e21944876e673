"""Window functions, i0, pad-free signal helpers (gradient, convolve,
correlate, unwrap, interp), polynomials, insert/delete/resize/block,
nan-statistics, predicates and small elementwise functions against NumPy."""

import warnings

import numpy
import pytest

import cpnumeric as cp
from cpnumeric import _core
from test_sorting import both, same
from test_ufuncs import data


# A fallback (or any other RuntimeWarning) fails the test (conftest.py).
pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_elementwise_helpers(dtype):
    a = data((4, 6), dtype, 1)
    for name in ("angle", "fix", "isposinf", "isneginf", "iscomplex", "isreal",
                 "real_if_close"):
        both(name, a)
    both("heaviside", a, numpy.asarray(0.5, dtype if dtype != "int32" else "float64"))
    both("divmod", a, numpy.asarray(3, dtype))
    both("modf", a)
    both("ldexp", a.astype("float64"), numpy.array([3, -2, 1000, -1070, 0, 1]))
    both("i0", a.astype("float64") * 5)
    f = numpy.array([numpy.inf, -numpy.inf, numpy.nan, -0.0, 1.5])
    both("isposinf", f)
    both("isneginf", f)
    both("modf", f)
    both("angle", f, deg=True)


@pytest.mark.parametrize("m", [0, 1, 2, 9, 10])
def test_windows(m):
    for name in ("hanning", "hamming", "blackman", "bartlett"):
        both(name, m)
    both("kaiser", m, 14.0)


def test_spaces_and_creation():
    both("logspace", 0, 3, 7)
    both("logspace", 1, 2, 5, base=2.0, endpoint=False)
    both("geomspace", 1, 1000, 4)
    both("geomspace", -1, -1000, 5)
    same(cp.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
         numpy.fromfunction(lambda i, j: i * 10 + j, (3, 4)))
    both("diagflat", numpy.array([[1.0, 2.0], [3.0, 4.0]]), 1)
    same(cp.astype(cp.array([1.5, 2.5]), "int32"), numpy.astype(numpy.array([1.5, 2.5]), "int32"))
    with pytest.raises(ValueError, match="infs or NaNs"):
        cp.asarray_chkfinite(cp.array([1.0, numpy.nan]))
    same(cp.asarray_chkfinite([1.0, 2.0]), numpy.asarray_chkfinite([1.0, 2.0]))
    same(cp.require(cp.arange(6).reshape(2, 3).T, requirements="C"),
         numpy.require(numpy.arange(6).reshape(2, 3).T, requirements="C"))
    dst = cp.zeros(5)
    cp.copyto(dst, cp.arange(5.0), where=cp.arange(5) % 2 == 0)
    same(dst, numpy.array([0.0, 0.0, 2.0, 0.0, 4.0]))
    with pytest.raises(TypeError):
        cp.copyto(cp.zeros(3, dtype="int32"), cp.ones(3))


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_insert_delete_resize_block(dtype):
    a = data((4, 6), dtype, 2)
    both("delete", a, [0, 2], axis=1)
    both("delete", a, slice(1, 3))
    both("delete", a, numpy.array([True, False, False, True]), axis=0)
    both("delete", a, -1, axis=0)
    v = data((6,), dtype, 3)
    both("insert", a, 1, v[0], axis=1)
    both("insert", a, [1, 4, 1], v[:3], axis=1)
    both("insert", a, 2, v, axis=0)
    both("insert", a, -1, v[:2])
    both("insert", a, slice(0, 2), v[:2], axis=1)
    both("resize", a, (5, 7))
    both("resize", a, 3)
    same(cp.block([[cp.array(a), cp.array(a)], [cp.array(a), cp.array(a)]]),
         numpy.block([[a, a], [a, a]]))
    same(cp.block([cp.array(v), cp.array(v)]), numpy.block([v, v]))
    same(cp.unstack(cp.array(a), axis=1), numpy.unstack(a, axis=1))
    with pytest.warns(DeprecationWarning):
        same(cp.row_stack([cp.array(v), cp.array(v)]), numpy.vstack([v, v]))
    with pytest.raises(IndexError):
        cp.delete(cp.array(a), [9], axis=0)
    both("trim_zeros", numpy.array([0, 0, 1, 2, 0, 3, 0], dtype))
    both("trim_zeros", numpy.array([0, 0, 1, 2, 0, 3, 0], dtype), "b")


def test_gradient_convolve_correlate_unwrap_interp():
    a = data((5, 7), "float64", 4)
    both("gradient", a)
    both("gradient", a, 0.5, edge_order=2, axis=1)
    both("gradient", a[0], 2.0)
    v = data((4,), "float64", 5)
    for m in ("full", "same", "valid"):
        both("convolve", a[0], v, m)
        both("correlate", a[0], v, m)
        both("correlate", v, a[0], m)
        both("convolve", v, a[0], m)
    both("convolve", numpy.arange(5), numpy.array([1, -1]))
    with pytest.raises(ValueError, match="empty"):
        cp.convolve(cp.zeros(0), cp.ones(2))
    both("unwrap", numpy.linspace(0, 20, 30) % 6)
    both("unwrap", numpy.linspace(0, 20, 30).reshape(5, 6) % 6, axis=0)
    xp = numpy.sort(data((8,), "float64", 6))
    fp = data((8,), "float64", 7)
    x = data((5, 4), "float64", 8) * 1.5
    both("interp", x, xp, fp)
    both("interp", x, xp, fp, left=-9.0, right=9.0)
    both("interp", x, xp, fp, period=2.0)
    both("interp", xp, xp, fp)


def test_polynomials():
    rng = numpy.random.default_rng(0)
    x = numpy.sort(rng.random(20))
    y = 1 + 2 * x - 3 * x ** 2 + rng.random(20) * 0.01
    both("polyfit", x, y, 2)
    both("polyfit", x, numpy.stack([y, y * 2], axis=1), 3)
    both("polymul", numpy.array([1, 2, 3]), numpy.array([4, 5]))
    both("polyadd", numpy.array([1, 2]), numpy.array([1.0, 2, 3]))
    both("polysub", numpy.array([1, 2, 3]), numpy.array([1, 2]))
    both("polyder", numpy.array([1.0, 2, 3, 4]), 2)
    both("polyint", numpy.array([1.0, 2, 3]), 2, k=[1, 2])
    both("poly", numpy.array([1.0, 2, 3]))


def test_nan_statistics():
    a = data((4, 5), "float64", 9)
    a[1, 2] = a[3, 0] = numpy.nan
    for axis in (None, 0, 1):
        both("nanargmax", a, axis=axis)
        both("nanargmin", a, axis=axis)
        both("nanvar", a, axis=axis)
        both("nanstd", a, axis=axis, ddof=1)
    both("nanvar", a, axis=1, keepdims=True)
    with pytest.raises(ValueError, match="All-NaN"):
        cp.nanargmax(cp.array([numpy.nan, numpy.nan]))
    both("nanvar", data((3, 4), "int32", 1), axis=0)


def test_apply_and_piecewise():
    a = data((4, 6), "float64", 10)
    same(cp.apply_along_axis(lambda r: r.sum() * 2, 1, cp.array(a)),
         numpy.apply_along_axis(lambda r: r.sum() * 2, 1, a))
    same(cp.apply_along_axis(lambda r: r[::-1], 0, cp.array(a)),
         numpy.apply_along_axis(lambda r: r[::-1], 0, a))
    same(cp.apply_over_axes(cp.sum, cp.array(a), [0, 1]),
         numpy.apply_over_axes(numpy.sum, a, [0, 1]))
    ca = cp.array(a)
    same(cp.piecewise(ca, [ca < 0, ca > 1], [lambda x: -x, lambda x: x * 2, 0.5]),
         numpy.piecewise(a, [a < 0, a > 1], [lambda x: -x, lambda x: x * 2, 0.5]))


def test_predicates():
    a = cp.arange(12.0).reshape(3, 4)
    assert cp.ndim(a) == 2 and cp.shape(a) == (3, 4) and cp.size(a) == 12
    assert cp.size(a, 1) == 4 and cp.ndim([[1, 2]]) == 2 and cp.shape([1, 2]) == (2,)
    assert cp.isscalar(3.0) and not cp.isscalar(a) and cp.iterable(a)
    assert cp.isrealobj(a) and not cp.iscomplexobj(a)
    assert cp.isfortran(a.T) and not cp.isfortran(a)
    assert cp.may_share_memory(a[:2], a[1:]) and not cp.may_share_memory(a[:1], a[2:])
    assert not cp.may_share_memory(a, cp.arange(3))


@pytest.mark.parametrize("n", [1, 4, 7])
def test_fft_helpers(n):
    both_fft = [("fftfreq", (n, 0.1)), ("rfftfreq", (n, 0.1))]
    for name, args in both_fft:
        same(getattr(cp.fft, name)(*args), getattr(numpy.fft, name)(*args))
    x = numpy.arange(3.0 * n).reshape(3, n)
    same(cp.fft.fftshift(cp.array(x)), numpy.fft.fftshift(x))
    same(cp.fft.ifftshift(cp.array(x), axes=1), numpy.fft.ifftshift(x, axes=1))
    same(cp.fft.fftshift(cp.array(x), axes=(0,)), numpy.fft.fftshift(x, axes=(0,)))
    with pytest.raises(ValueError):
        cp.fft.fftfreq(0)


def test_fft_transforms_are_native():
    x = numpy.arange(8.0)
    r = cp.fft.rfft(cp.array(x))
    assert isinstance(r, cp.ndarray) and r.dtype == numpy.complex128
    numpy.testing.assert_allclose(numpy.asarray(r), numpy.fft.rfft(x), atol=1e-12)
    back = cp.fft.irfft(r)
    assert isinstance(back, cp.ndarray)
    numpy.testing.assert_allclose(numpy.asarray(back), x, atol=1e-12)


# (dtype, view dtypes of the same size, getfield (dtype, offset) pairs)
FIELDS = [
    ("float64", ["int64", "uint64"], [("int32", 4), ("uint16", 6), ("uint8", 0), ("int8", 3)]),
    ("float32", ["int32", "uint32"], [("int16", 2), ("uint8", 1)]),
    ("int64", ["float64", "uint64"], [("float32", 4), ("int32", 0), ("int16", 5)]),
    ("uint16", ["int16", "float16"], [("uint8", 1), ("bool", 0)]),
    ("uint8", ["int8", "bool"], []),
    ("complex128", [], [("float64", 8), ("int64", 0), ("int32", 12), ("uint8", 9)]),
    ("complex64", [], [("float32", 0), ("int32", 4)]),
]


def _bits_data(dtype, shape):
    """Values whose bytes all differ (NaN-free floats, bools 0 or 1)."""
    dtype = numpy.dtype(dtype)
    if dtype.kind == "c":
        return (_bits_data(dtype.char.lower(), shape)
                + 1j * _bits_data(dtype.char.lower(), shape)[::-1]).astype(dtype)
    if dtype.kind == "b":
        return numpy.arange(numpy.prod(shape)).reshape(shape) % 3 == 0
    rng = numpy.random.default_rng(dtype.itemsize)
    if dtype.kind == "f":
        return rng.uniform(-1e3, 1e3, shape).astype(dtype)
    info = numpy.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype,views,fields", FIELDS)
@pytest.mark.parametrize("eager", [False, True])
def test_reinterpreting_views_and_fields(dtype, views, fields, eager, monkeypatch):
    """view(dtype) of the same size, getfield/setfield: views whose reads
    and writes reinterpret the base's bits (through slices too); compiled,
    and on the eager small-array path."""
    if eager:
        monkeypatch.setitem(_core.EAGER, "threshold", 1024)
    n = _bits_data(dtype, (40, 30) if not eager else (6, 9))
    a = cp.array(n)
    for vt in views:
        same(a.view(vt), n.view(vt))
        same(a[1:, ::-2].view(vt), n[1:, ::-2].view(vt))
        same(a.view(vt).view(dtype), n)
    for ft, off in fields:
        same(a.getfield(ft, off), n.getfield(ft, off))
        same(a[::3, 1:].getfield(ft, off), n[::3, 1:].getfield(ft, off))
    b, nb = a.copy(), n.copy()
    for vt in views:  # writes through a bitcast view of a slice
        vals = _bits_data(vt, (2, 3))
        b[2:4, 5:8].view(vt)[...] = cp.array(vals)
        nb[2:4, 5:8].view(vt)[...] = vals
        same(b, nb)
    for ft, off in fields:  # the other bytes of each element are kept
        vals = _bits_data(ft, nb[1::2, ::5].shape)
        b[1::2, ::5].setfield(cp.array(vals), ft, off)
        nb[1::2, ::5].setfield(vals, ft, off)
        assert numpy.array_equal(numpy.asarray(b).view("u1"), nb.view("u1"))
        field = b.getfield(ft, off)  # a view: writes reach b
        field[0, 0] = vals.flat[1]
        nb.getfield(ft, off)[0, 0] = vals.flat[1]
        assert numpy.array_equal(numpy.asarray(b).view("u1"), nb.view("u1"))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float32", "int64",
                                   "uint64", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("eager", [False, True])
def test_byteswap(dtype, eager, monkeypatch):
    if eager:
        monkeypatch.setitem(_core.EAGER, "threshold", 1024)
    n = _bits_data(dtype, (50, 40) if not eager else (4, 5))
    a = cp.array(n)
    r = a.byteswap()
    assert numpy.array_equal(numpy.asarray(r).view("u1"), n.byteswap().view("u1"))
    assert numpy.array_equal(numpy.asarray(a).view("u1"), n.view("u1"))  # a unchanged
    v = a[::2, 1:]
    assert v.byteswap(inplace=True) is v
    n[::2, 1:].byteswap(inplace=True)
    assert numpy.array_equal(numpy.asarray(a).view("u1"), n.view("u1"))


def test_reinterpreting_view_errors():
    a = cp.zeros(4)
    for args, exc in [((numpy.int16, 7), ValueError), ((numpy.complex128, 0), ValueError),
                      ((numpy.int8, -1), ValueError)]:
        with pytest.raises(exc) as ours:
            a.getfield(*args)
        with pytest.raises(exc) as ref:
            numpy.zeros(4).getfield(*args)
        assert str(ours.value) == str(ref.value)
    with pytest.raises(TypeError, match="both parts"):
        cp.zeros(3, complex).getfield(numpy.int64, 4)
    with pytest.raises(TypeError, match="smaller"):  # views as a smaller dtype
        cp.zeros(3, complex).view(numpy.float64)


def test_flat_view_resize():
    a = cp.arange(12.0).reshape(3, 4)
    n = numpy.arange(12.0).reshape(3, 4)
    for arr in (a, n):
        arr.flat[5] = -1
        arr.flat[[0, 11]] = 7
        arr.T.flat[1] = 99
        arr.flat[2:4] = [20.0, 30.0]
    same(a, n)
    same(a.flat[1:6], n.flat[1:6])
    assert len(a.flat) == 12 and [float(v) for v in a.flat][:3] == list(n.flat)[:3]
    v = a.view()
    v[0, 0] = 5.0
    assert float(a[0, 0]) == 5.0 and a.view(cp.float64).shape == (3, 4)
    n[0, 0] = 5.0
    with pytest.raises(TypeError, match="astype"):
        a.view(numpy.int32)  # a different element size
    b, nb = cp.arange(6.0), numpy.arange(6.0)
    b.resize(2, 5)
    nb.resize(2, 5, refcheck=False)
    same(b, nb)
    b.resize((3,))
    nb.resize((3,), refcheck=False)
    same(b, nb)
    with pytest.raises(ValueError, match="own its data"):
        a[1:].resize(4)
    a.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        a[0, 0] = 1.0
    assert a.tobytes() == n.tobytes() and a.to_device("cpu") is a
