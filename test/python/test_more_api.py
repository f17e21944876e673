"""gcd/lcm/bitwise_count/nextafter/spacing (compiled ufuncs), packbits and
unpackbits, histogram2d/histogramdd, roots and polydiv against NumPy."""

import numpy
import pytest

import cpnumeric as cp

pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"]


def same(ours, ref, rtol=1e-12):
    o, ref = numpy.asarray(ours), numpy.asarray(ref)
    assert o.shape == ref.shape and o.dtype == ref.dtype, (o.shape, o.dtype, ref.shape,
                                                           ref.dtype)
    if ref.dtype.kind in "fc":
        numpy.testing.assert_allclose(o, ref, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        numpy.testing.assert_array_equal(o, ref)


@pytest.mark.parametrize("dtype", INTS)
def test_gcd_lcm_bitwise_count(dtype):
    a = (numpy.arange(-20, 20) * 7).astype(dtype)
    b = (numpy.arange(40) * 3 - 11).astype(dtype)
    ca, cb = cp.asarray(a), cp.asarray(b)
    same(cp.gcd(ca, cb), numpy.gcd(a, b))
    same(cp.lcm(ca, cb), numpy.lcm(a, b))
    same(cp.gcd(ca[::3], 12), numpy.gcd(a[::3], 12))
    same(cp.lcm(ca.reshape(5, 8), cb[:8]), numpy.lcm(a.reshape(5, 8), b[:8]))
    same(cp.bitwise_count(ca), numpy.bitwise_count(a))
    same(cp.gcd(ca[:0], cb[:0]), numpy.gcd(a[:0], b[:0]))
    same(cp.gcd(cp.asarray(a[3]), cp.asarray(b[5])), numpy.gcd(a[3], b[5]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nextafter_spacing(dtype):
    x = numpy.array([0.0, -0.0, 1.0, -3.5, 1e30, numpy.inf, -numpy.inf, numpy.nan,
                     1e-40], dtype)
    cx = cp.asarray(x)
    with numpy.errstate(all="ignore"):
        same(cp.spacing(cx), numpy.spacing(x), rtol=0)
        same(cp.nextafter(cx, cx[::-1]), numpy.nextafter(x, x[::-1]), rtol=0)
        same(cp.nextafter(cx, 0), numpy.nextafter(x, x.dtype.type(0)),
             rtol=0)


def test_float16_nextafter_falls_back():
    x = numpy.linspace(0, 1, 2000).astype(numpy.float16)
    with pytest.warns(RuntimeWarning, match="nextafter"):
        r = cp.nextafter(cp.asarray(x), numpy.float16(2))
    same(r, numpy.nextafter(x, numpy.float16(2)), rtol=0)


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(bitorder):
    rng = numpy.random.default_rng(0)
    for a in [numpy.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], bool),
              rng.integers(0, 3, (3, 11)), numpy.zeros((0, 4), numpy.uint8)]:
        for axis in [None, 0, -1]:
            same(cp.packbits(cp.asarray(a), axis=axis, bitorder=bitorder),
                 numpy.packbits(a, axis=axis, bitorder=bitorder))
    b = rng.integers(0, 256, (2, 3)).astype(numpy.uint8)
    for axis in [None, 0, 1]:
        for count in [None, 3, -2, 30, 0]:
            same(cp.unpackbits(cp.asarray(b), axis=axis, count=count, bitorder=bitorder),
                 numpy.unpackbits(b, axis=axis, count=count, bitorder=bitorder))
    with pytest.raises(TypeError):
        cp.packbits(cp.ones(3))
    with pytest.raises(TypeError):
        cp.unpackbits(cp.ones(3, numpy.int32))


@pytest.mark.parametrize("kw", [{}, {"bins": 5}, {"bins": [3, 4]},
                                {"bins": (numpy.linspace(-3, 3, 7), 4)},
                                {"range": [(-1, 1), (-2, 2)]}, {"density": True},
                                {"weights": True}])
def test_histogram2d(kw):
    rng = numpy.random.default_rng(1)
    x, y, w = rng.standard_normal(500), rng.standard_normal(500), rng.random(500)
    ours_kw = dict(kw)
    if "weights" in kw:
        kw, ours_kw = {"weights": w}, {"weights": cp.asarray(w)}
    r = cp.histogram2d(cp.asarray(x), cp.asarray(y), **ours_kw)
    e = numpy.histogram2d(x, y, **kw)
    for a, b in zip(r, e):
        same(a, b)


def test_histogramdd():
    rng = numpy.random.default_rng(2)
    s = rng.random((100, 3))
    for bins in [(2, 3, 4), 5]:
        r, re_ = cp.histogramdd(cp.asarray(s), bins=bins), numpy.histogramdd(s, bins=bins)
        same(r[0], re_[0])
        for a, b in zip(r[1], re_[1]):
            same(a, b)
    same(cp.histogramdd([1, 2, 3, 3])[0], numpy.histogramdd([1, 2, 3, 3])[0])
    same(cp.histogramdd(cp.asarray(s[:0]))[0], numpy.histogramdd(s[:0])[0])
    with pytest.raises(ValueError, match="monotonically"):
        cp.histogramdd(cp.asarray(s[:, :1]), bins=[[3, 2, 1]])
    # NumPy's edges: the sample's dtype (float32 here), no bin-width check
    # (a constant float32 sample of 1e8: its +-0.5 rounds away, zero widths)
    for s32 in [s.astype(numpy.float32), numpy.full((5, 2), 1e8, numpy.float32)]:
        r, re_ = cp.histogramdd(cp.asarray(s32), bins=3), numpy.histogramdd(s32, bins=3)
        same(r[0], re_[0])
        for a, b in zip(r[1], re_[1]):
            same(a, b)
    with pytest.raises(TypeError, match="must be an integer"):
        cp.histogramdd(cp.asarray(s), bins=2.5)


def test_roots_and_polydiv():
    for p in [[1, -6, 11, -6], [0, 0, 1, 2, 0, 0], [1, 0, 1], [2], [0, 0], [3, 1]]:
        r, e = numpy.asarray(cp.roots(p)), numpy.roots(p)
        assert r.dtype == e.dtype and r.shape == e.shape
        numpy.testing.assert_allclose(numpy.sort_complex(r), numpy.sort_complex(e),
                                      atol=1e-9)
    for u, v in [([1, 2, 3, 4], [1, 1]), ([3.0, 5], [2, 1, 1]), ([1, 0, -1], [1, -1]),
                 ([2, 4, 6], [2])]:
        q, r = cp.polydiv(cp.asarray(u), v)
        Q, R = numpy.polydiv(u, v)
        same(q, Q)
        same(r, R)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int8", "bool"])
def test_frexp(dtype):
    if numpy.dtype(dtype).kind == "f":
        tiny = {"float16": 1e-7, "float32": 1e-40, "float64": 5e-324}[dtype]
        big = 6e4 if dtype == "float16" else 1e30
        x = numpy.array([0.0, -0.0, 1.0, -3.5, 0.5, 0.75, 1024, big, numpy.inf, -numpy.inf,
                         numpy.nan, tiny, 7, -1e-5]).astype(dtype)
    else:
        x = numpy.arange(-5, 6).astype(dtype)
    m, e = cp.frexp(cp.asarray(x))
    rm, re_ = numpy.frexp(x)
    same(m, rm, rtol=0)
    same(e, re_)
    assert numpy.array_equal(numpy.signbit(numpy.asarray(m)), numpy.signbit(rm))
