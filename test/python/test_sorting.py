"""Sorting, searching, scans, order statistics, sets and counting against
NumPy: dtypes, empty and 0-d inputs, non-contiguous views, NaN, errors."""

import warnings

import numpy
import pytest

import cpnumeric as cp
from test_ufuncs import data

DTYPES = ["bool", "int8", "int32", "int64", "uint16", "uint64", "float32", "float64"]


# A fallback (or any other RuntimeWarning) fails the test (conftest.py).
pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")


def to_np(x):
    if isinstance(x, (tuple, list)):
        return type(x)(to_np(v) for v in x)
    return numpy.asarray(x) if isinstance(x, cp.ndarray) else x


def same(ours, ref):
    ours = to_np(ours)
    if isinstance(ref, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(ref)
        for o, r in zip(ours, ref):
            same(o, r)
        return
    ref = numpy.asarray(ref)
    o = numpy.asarray(ours)
    assert o.shape == ref.shape, (o.shape, ref.shape)
    assert o.dtype == ref.dtype, (o.dtype, ref.dtype)
    if ref.dtype.kind == "f":
        numpy.testing.assert_allclose(o, ref, rtol=1e-6 if ref.dtype == numpy.float32
                                      else 1e-12, equal_nan=True)
    else:
        assert numpy.array_equal(o, ref)


def both(name, *args, **kw):
    ours = getattr(cp, name)(*[cp.array(a) if isinstance(a, numpy.ndarray) else a
                               for a in args], **kw)
    same(ours, getattr(numpy, name)(*args, **kw))


def with_nan(shape, seed=0):
    a = data(shape, "float64", seed)
    if a.size:
        a.ravel()[::5] = numpy.nan
    return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(17,), (4, 9), (3, 4, 5), (0,), (3, 0)])
def test_sort_argsort(dtype, shape):
    a = data(shape, dtype, 1)
    for axis in (-1, 0, None):
        both("sort", a, axis=axis)
        both("argsort", a, axis=axis, kind="stable")
        both("argsort", a, axis=axis, stable=True)
    ca = cp.array(a)
    same(ca.argsort(kind="stable"), a.argsort(kind="stable"))
    b = a.copy()
    b.sort(axis=0)
    cb = cp.array(a)
    cb.sort(axis=0)
    same(cb, b)


def test_sort_nan_views_and_partition():
    a = with_nan((6, 11))
    both("sort", a)
    both("sort", a[::2, ::-3])
    both("argsort", a[:, 1:], kind="stable")
    for kth in (0, 3, (1, 5), -1):
        p = numpy.asarray(cp.partition(cp.array(a[0]), kth))
        for k in numpy.atleast_1d(kth):
            ref = numpy.sort(a[0])[k]
            assert numpy.array_equal(p[k], ref, equal_nan=True)
        ap = numpy.asarray(cp.argpartition(cp.array(a[1]), kth))
        for k in numpy.atleast_1d(kth):
            assert numpy.array_equal(a[1][ap[k]], numpy.sort(a[1])[k], equal_nan=True)
    x = cp.array(a[2])
    x.partition(4)
    assert numpy.array_equal(numpy.asarray(x)[4], numpy.sort(a[2])[4], equal_nan=True)
    with pytest.raises(ValueError, match="out of bounds"):
        cp.partition(cp.array(a[0]), 11)
    with pytest.raises(cp.AxisError):
        cp.sort(cp.array(1.0))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint32", "uint64",
                                   "float32", "float64"])
def test_long_rows_split_over_threads(dtype):
    """Rows long enough for the vectorized sort to split them over threads and
    merge the chunks: ties, extreme values, NaN and -0.0, a strided view, and
    several long rows."""
    rng = numpy.random.default_rng(5)
    info = numpy.iinfo(dtype) if dtype[0] in "iu" else numpy.finfo(dtype)
    a = rng.integers(-300, 300, size=(3, 150_001)).astype(dtype)
    a[:, ::1009] = info.max
    a[:, 7::1013] = info.min
    if dtype[0] == "f":
        a /= 7
        a[:, ::997] = numpy.nan
        a[:, 3::991] = -0.0
    for view in (a, a[:, ::-2], a[1]):
        both("sort", view)
        both("sort", view, axis=None)
        both("argsort", view, kind="stable")
    same(cp.unique(cp.array(a)), numpy.unique(a))


def test_lexsort():
    rng = numpy.random.default_rng(0)
    k1, k2 = rng.integers(0, 3, 50), rng.integers(0, 4, 50)
    both("lexsort", (k1, k2))
    same(cp.lexsort(cp.array(numpy.stack([k1, k2]))), numpy.lexsort(numpy.stack([k1, k2])))


@pytest.mark.parametrize("dtype", ["int32", "float64", "uint8", "float32"])
def test_searchsorted_digitize(dtype):
    s = numpy.sort(data((40,), dtype, 2))
    v = data((5, 6), dtype, 3)
    for side in ("left", "right"):
        both("searchsorted", s, v, side=side)
        same(cp.array(s).searchsorted(cp.array(v), side=side), s.searchsorted(v, side=side))
    assert cp.searchsorted(cp.array(s), s[3]) == numpy.searchsorted(s, s[3])
    perm = numpy.argsort(data((40,), dtype, 4), kind="stable")
    base = data((40,), dtype, 4)
    both("searchsorted", base, v, sorter=perm)
    both("searchsorted", s, numpy.zeros((0,), dtype))
    bins = numpy.array([0.0, 1.0, 2.5, 4.0])
    x = numpy.array([-1.0, 0.0, 0.5, 2.5, 3.9, 4.0, 7.0])
    for right in (False, True):
        both("digitize", x, bins, right=right)
        both("digitize", x, bins[::-1], right=right)
    with pytest.raises(ValueError, match="monotonically"):
        cp.digitize(cp.array(x), cp.array([1.0, 0.0, 2.0]))
    both("searchsorted", with_nan((9,)).__array__()[numpy.argsort(with_nan((9,)))],
         numpy.array([0.0, numpy.nan]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_cumprod(dtype):
    a = data((4, 6), dtype, 5)
    for axis in (None, 0, 1, -1):
        both("cumsum", a, axis=axis)
        both("cumprod", a, axis=axis)
    both("cumsum", a, dtype="float32")
    both("cumsum", a[:, ::-2], axis=1)
    both("cumsum", numpy.zeros((0, 3), dtype), axis=0)
    both("cumsum", numpy.asarray(a[0, 0]))
    same(cp.array(a).cumsum(axis=0), a.cumsum(axis=0))
    same(cp.array(a).cumprod(), a.cumprod())
    if a.ndim == 2:
        both("cumulative_sum", a, axis=1)
        both("cumulative_prod", a, axis=0, include_initial=True)
        with pytest.raises(ValueError, match="axis"):
            cp.cumulative_sum(cp.array(a))


def test_nancumsum_and_out():
    a = with_nan((3, 5))
    both("nancumsum", a, axis=1)
    both("nancumprod", a)
    out = cp.zeros(15)
    r = cp.cumsum(cp.array(a), out=out)
    assert r is out
    same(out, numpy.cumsum(a))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_quantiles(dtype):
    a = data((5, 8), dtype, 6)
    for axis in (None, 0, 1, (0, 1)):
        both("median", a, axis=axis)
        for method in ("linear", "lower", "higher", "nearest", "midpoint"):
            both("quantile", a, [0.0, 0.3, 0.5, 1.0], axis=axis, method=method)
        both("percentile", a, 37.5, axis=axis, keepdims=True)
    both("median", a[:, ::-1], axis=1, keepdims=True)
    with pytest.raises(ValueError, match="range"):
        cp.quantile(cp.array(a), 1.5)


def test_nan_quantiles():
    a = with_nan((4, 7))
    a[3] = numpy.nan  # an all-NaN row: NaN, and NumPy's warning
    both("median", a, axis=1)
    both("quantile", a, 0.25, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref_med = numpy.nanmedian(a, axis=1)
        ref_q = numpy.nanquantile(a, [0.2, 0.9], axis=1)
        ref_p = numpy.nanpercentile(a, 50, axis=1)
    for name, ref, args in [("nanmedian", ref_med, (1,)), ("nanquantile", ref_q, ([0.2, 0.9], 1)),
                            ("nanpercentile", ref_p, (50, 1))]:
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
            same(getattr(cp, name)(cp.array(a), *args), ref)


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool", "uint8"])
def test_unique_family(dtype):
    a = data((6, 7), dtype, 7) if dtype == "bool" else (data((6, 7), "int32", 7) % 5).astype(dtype)
    both("unique", a)
    ours = cp.unique(cp.array(a), return_index=True, return_inverse=True, return_counts=True)
    same(ours, numpy.unique(a, return_index=True, return_inverse=True, return_counts=True))
    for name in ("unique_values",):
        same(getattr(cp, name)(cp.array(a)), numpy.sort(getattr(numpy, name)(a)))
    for name in ("unique_counts", "unique_inverse", "unique_all"):
        same(tuple(getattr(cp, name)(cp.array(a))), tuple(getattr(numpy, name)(a)))
    both("unique", numpy.zeros((0,), dtype))


def test_unique_nan_and_sets():
    a = numpy.array([1.0, numpy.nan, 2.0, numpy.nan, 1.0])
    both("unique", a)
    both("unique", a, equal_nan=False)
    x, y = numpy.array([5, 1, 3, 3, 9, 1]), numpy.array([3, 4, 5, 5, 0])
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        both(name, x, y)
        both(name, x, numpy.zeros(0, x.dtype))
    both("isin", x, y)
    both("isin", x.reshape(2, 3), y, invert=True)
    both("isin", a, numpy.array([numpy.nan, 2.0]))
    both("isin", x, numpy.zeros(0, int))


def test_bincount_histogram():
    rng = numpy.random.default_rng(3)
    x = rng.integers(0, 12, 500)
    w = rng.random(500)
    both("bincount", x)
    both("bincount", x, w)
    both("bincount", x, minlength=20)
    both("bincount", numpy.zeros(0, int), minlength=3)
    with pytest.raises(ValueError, match="negative"):
        cp.bincount(cp.array([1, -1, 2]))
    with pytest.raises(TypeError):
        cp.bincount(cp.array([1.0, 2.0]))
    v = rng.standard_normal(2000)
    both("histogram", v)
    both("histogram", v, bins=13, range=(-1.0, 2.0))
    both("histogram", v, bins=numpy.array([-3.0, -1.0, 0.0, 0.5, 3.0]), weights=w.repeat(4))
    both("histogram", v, bins=5, density=True)
    both("histogram_bin_edges", v, bins=6)
    both("histogram", numpy.ones(10), bins=3)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int8", "uint8"])
def test_histogram_uniform_bins_as_numpy(dtype):
    """Equal-width bins are NumPy's arithmetic element by element (scaled
    offset, then corrected against the edges): the same counts and edges,
    in the edges' dtype NumPy gives (the data's for floats, float64 for
    integers, a float64 step when the range is Python floats)."""
    rng = numpy.random.default_rng(11)
    v = (rng.standard_normal(3000) * 40).astype(dtype)
    for kw in [{}, {"bins": 1}, {"bins": 100}, {"bins": 7, "range": (-20, 30)},
               {"bins": 13, "range": (-1.5, 2.25)}, {"bins": 5, "density": True},
               {"bins": 4, "weights": rng.random(3000).astype(numpy.float32)}]:
        both("histogram", v, **kw)
    same(cp.histogram(cp.array(v)[::-3], bins=9), numpy.histogram(v[::-3], bins=9))
    same(cp.histogram(cp.array(v).reshape(60, 50)[::2, 1::4], bins=6),
         numpy.histogram(v.reshape(60, 50)[::2, 1::4], bins=6))
    both("histogram", numpy.linspace(0, 1, 1001).astype(dtype), bins=10)  # values on edges
    both("histogram", numpy.zeros(0, dtype), bins=3)


def test_histogram_edge_cases_and_errors():
    both("histogram", numpy.array([numpy.iinfo(numpy.int64).min, numpy.iinfo(numpy.int64).max]),
         bins=5)  # the span overflows int64: NumPy subtracts as unsigned
    both("histogram", numpy.array([1e-320, 2e-320, 3e-320]), bins=2)  # denormal steps
    both("histogram", numpy.array([0.0, 1.0, numpy.nan, 2.0]), bins=2, range=(0.0, 2.0))
    both("histogram", numpy.arange(10.0), bins=numpy.array([0, 1, 5]), range=(2, 4))
    with pytest.warns(RuntimeWarning, match="Converting input from bool"):
        got = cp.histogram(cp.array([True, False, True]))
    same(got, numpy.histogram(numpy.array([True, False, True]).astype(numpy.uint8)))
    for kw, exc in [({"bins": 2.5}, TypeError), ({"bins": 0}, ValueError),
                    ({"bins": numpy.array([3.0, 1.0])}, ValueError),
                    ({"range": (5, 1)}, ValueError), ({"range": (0.0, numpy.inf)}, ValueError),
                    ({"bins": 10, "range": (0.0, 2e-323)}, ValueError)]:
        with pytest.raises(exc):
            numpy.histogram(numpy.ones(4), **kw)
        with pytest.raises(exc):
            cp.histogram(cp.ones(4), **kw)
    with pytest.raises(ValueError, match="not finite"):
        cp.histogram(cp.array([1.0, numpy.inf]))


def test_searchsorted_branchless_as_numpy():
    """Binary searches in lockstep: every side, needle count (tails of the
    group of eight), haystack size, NaN and infinities, and strided needles."""
    rng = numpy.random.default_rng(5)
    for n in [1, 2, 3, 8, 9, 101, 1000, 4097, 70001]:  # two levels past 32 KiB
        for dtype in ["float64", "float32", "int64", "uint8", "int16"]:
            h = numpy.sort(rng.integers(0, 50, n).astype(dtype))
            v = rng.integers(-3, 53, 37).astype(dtype)
            if dtype.startswith("float"):
                h[-1:] = numpy.nan
                v[:3] = [numpy.nan, numpy.inf, -numpy.inf]
            for side in ("left", "right"):
                both("searchsorted", h, v, side=side)
                both("searchsorted", h, v[::-2], side=side)


def test_unique_inverse_by_search_and_by_argsort():
    """return_inverse alone is a sort and a binary search of each element
    among the distinct values; with return_index, or NaNs kept apart
    (equal_nan=False), the argsort path. Both give NumPy's arrays (NaNs kept
    apart are numbered in the order of NumPy's unstable argsort: not
    compared)."""
    rng = numpy.random.default_rng(8)
    for v in [rng.integers(0, 30, 5000), rng.standard_normal(7000),
              numpy.where(rng.random(3000) < 0.2, numpy.nan,
                          rng.integers(0, 9, 3000).astype(float)),
              numpy.array([0.0, -0.0, 1.0, -0.0]), rng.integers(0, 4, (40, 25)).astype("uint8")]:
        both("unique", v, return_inverse=True)
        both("unique", v, return_inverse=True, return_counts=True)
        both("unique", v, return_index=True, return_inverse=True)
        if not numpy.isnan(v).any():  # NumPy's NaN order is its quicksort's
            both("unique", v, return_inverse=True, equal_nan=False)


def test_long_scans_gathers_and_searches_split_over_threads():
    """Sizes where scans, gathers and binary searches run on several threads:
    the same values as NumPy's (integers exactly, float sums to rounding), and
    an index out of bounds still raises IndexError."""
    rng = numpy.random.default_rng(9)
    n = 1_200_003
    ints = rng.integers(-1000, 1000, n)
    same(cp.cumsum(cp.array(ints)), numpy.cumsum(ints))
    same(cp.cumsum(cp.array(ints[::-3])), numpy.cumsum(ints[::-3]))
    small = rng.integers(1, 3, 70) * rng.choice([-1, 1], 70)
    same(cp.cumprod(cp.array(numpy.tile(small, 9000))), numpy.cumprod(numpy.tile(small, 9000)))
    x = rng.random(n)
    numpy.testing.assert_allclose(numpy.asarray(cp.cumsum(cp.array(x))), numpy.cumsum(x),
                                  rtol=1e-12)
    idx = rng.integers(-n, n, 700_001)
    same(cp.take(cp.array(x), cp.array(idx)), numpy.take(x, idx))
    same(cp.array(x)[cp.array(idx)], x[idx])
    same(cp.take(cp.array(x), cp.array(idx * 3), mode="wrap"), numpy.take(x, idx * 3, mode="wrap"))
    a2 = x[: 1000 * 1200].reshape(1000, 1200)
    i2 = rng.integers(0, 1200, (1000, 300))
    same(cp.take_along_axis(cp.array(a2), cp.array(i2), axis=1),
         numpy.take_along_axis(a2, i2, axis=1))
    hay = numpy.sort(x)
    needles = rng.random(300_000)
    for side in ("left", "right"):
        same(cp.searchsorted(cp.array(hay), cp.array(needles), side=side),
             numpy.searchsorted(hay, needles, side=side))
    bad = idx.copy()
    bad[650_000] = n + 5
    with pytest.raises(IndexError, match=f"index {n + 5} is out of bounds"):
        numpy.asarray(cp.take(cp.array(x), cp.array(bad)))


@pytest.mark.parametrize("dtype", ["int16", "int64", "float32", "float64"])
def test_partition_and_quantiles_select_on_long_rows(dtype):
    """Rows long enough for the threaded selection (brackets from a sample):
    np.partition's contract at every kth, and quantiles/medians equal to
    NumPy's, with NaN, ties, sorted input and several rows."""
    rng = numpy.random.default_rng(3)
    a = rng.integers(-50, 50, size=(2, 300_001)).astype(dtype)
    if dtype[0] == "f":
        a += rng.random(a.shape).astype(dtype)
    for row in (a[0], numpy.sort(a[1]), a[0][::-2], numpy.zeros(200_000, dtype)):
        n = row.size
        for kth in (0, n // 2, (n // 2, n // 2 + 1), (5, n // 3, n - 1), -1):
            p = numpy.asarray(cp.partition(cp.array(row), kth))
            ref = numpy.sort(row)
            for k in numpy.atleast_1d(kth) % n:
                assert p[k] == ref[k]
                assert (p[:k] <= p[k]).all() and (p[k + 1:] >= p[k]).all()
            assert numpy.array_equal(numpy.sort(p), ref)
    both("median", a)
    both("median", a, axis=1)
    both("quantile", a[0], [0.1, 0.5, 0.9])
    for method in ("lower", "higher", "nearest", "midpoint"):
        both("quantile", a, 0.37, axis=1, method=method)
    both("percentile", a[1], [1, 25, 50, 75, 99], axis=0)
    # No ranks at all: the row comes back whole, and no quantile is empty.
    p = numpy.asarray(cp.partition(cp.array(a[0]), numpy.array([], numpy.int64)))
    assert numpy.array_equal(numpy.sort(p), numpy.sort(a[0]))
    both("quantile", a[0], [])
    both("quantile", a, [], axis=1)
    if dtype[0] == "f":
        b = a.copy()
        b[1, 1234] = numpy.nan
        both("median", b, axis=1)
        both("quantile", b[1], 0.5)


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "int32", "int64", "bool",
                                "complex128"])
def test_scan_of_a_temporary_in_place_in_its_output(dt):
    # The scan of a temporary that only it reads runs in place in the
    # output (no buffer of its own); a result that is also read later is
    # still the scan's value, and updating it does not reach the stored one.
    x = (numpy.arange(-40, 56).reshape(6, 16) % 7).astype(dt)
    for axis in (1, 0, None):
        a = cp.asarray(x)
        t = cp.cumsum(a * 2 if dt != "bool" else ~a, axis=axis)
        e = t + 1
        t2 = cp.cumsum(a - a if dt != "bool" else a & a, axis=axis)
        t2[..., 0] = 5
        ref_t = numpy.cumsum(x * 2 if dt != "bool" else ~x, axis=axis)
        ref_t2 = numpy.cumsum(x - x if dt != "bool" else x & x, axis=axis)
        ref_t2[..., 0] = 5
        numpy.testing.assert_array_equal(numpy.asarray(t), ref_t)
        numpy.testing.assert_array_equal(numpy.asarray(e), ref_t + 1)
        numpy.testing.assert_array_equal(numpy.asarray(t2), ref_t2)


def test_library_calls_between_parallel_loops():
    # A window with sorts, a gather and a scan of 10^5 elements between
    # loops big enough to run on OpenMP's threads: the calls' parts run on
    # those same threads (the Engine's OpenMP team); the values are NumPy's.
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal(200_000)
    idx = rng.integers(0, x.size, 150_000)
    for m in (numpy, cp):
        a = m.asarray(x)
        s = m.sort(a * 2.0 + 1.0)
        g = a[m.asarray(idx)] * 3.0
        c = m.cumsum(m.exp(s[::2]) - g[:100_000], axis=0)
        o = m.argsort(c - s[1::2])
        u = m.unique(m.floor(a * 10.0))
        r = [numpy.asarray(v) for v in (s, g, c, o, u, (s[1:] - s[:-1]).min())]
        if m is numpy:
            want = r
    for got, ref in zip(r, want):
        numpy.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("equal_nan", [True, False])
def test_unique_values_count_and_copy_in_the_runtime(equal_nan):
    """np.unique(x)'s values: the sort, the runtime's count of distinct
    values and their copy (unique_count, unique_values): NaN runs (real and
    complex) one value with equal_nan, the first of equal values kept
    (-0.0 before 0.0), every held dtype, strided and 2-D inputs."""
    nan = numpy.nan
    cases = [numpy.array([3.0, nan, 1.0, nan, -0.0, 0.0, 1.0, -nan]),
             numpy.array([nan, nan, nan]), numpy.array([], numpy.float64),
             numpy.array([7.5]), numpy.array([2, 2, 2], numpy.int8),
             numpy.array([True, False, True, True]),
             numpy.array([1 + 1j, nan + 0j, complex(0, nan), 1 + 1j, 2, complex(nan, nan)]),
             (numpy.arange(60).reshape(6, 10) % 7).astype(numpy.uint16),
             numpy.array([1.5, -2.5, 1.5, nan], numpy.float32),
             numpy.random.default_rng(3).integers(0, 50, 2000),
             numpy.random.default_rng(4).standard_normal(3000)[::3]]
    for x0 in cases:
        ref = numpy.unique(x0, equal_nan=equal_nan)
        got = cp.asnumpy(cp.unique(cp.asarray(x0), equal_nan=equal_nan))
        assert got.dtype == ref.dtype and got.shape == ref.shape, x0
        numpy.testing.assert_array_equal(got, ref)


def test_bincount_keeps_the_bounds_of_its_labels():
    """The labels' least and greatest value are kept on their value (no sync
    when the same labels are counted again); a write makes a new value with
    bounds of its own, and negative labels raise every time."""
    rng = numpy.random.default_rng(5)
    x0 = rng.integers(0, 40, 500)
    x = cp.asarray(x0)
    for _ in range(2):
        numpy.testing.assert_array_equal(cp.asnumpy(cp.bincount(x)), numpy.bincount(x0))
    x[3] = 75
    x0[3] = 75
    numpy.testing.assert_array_equal(cp.asnumpy(cp.bincount(x, minlength=10)),
                                     numpy.bincount(x0, minlength=10))
    w0 = rng.random(500)
    numpy.testing.assert_allclose(cp.asnumpy(cp.bincount(x, cp.asarray(w0))),
                                  numpy.bincount(x0, w0), rtol=1e-12)
    bad = cp.asarray(numpy.array([1, -1, 2]))
    for _ in range(2):
        with pytest.raises(ValueError, match="negative"):
            cp.bincount(bad)
