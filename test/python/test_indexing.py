"""Integer-array and boolean indexing, gathers, scatters and index helpers
against NumPy: dtypes, empty arrays, views, negative indices, modes, errors,
and writes through a[mask] = v / a[idx] = v reaching the base."""

import numpy
import pytest

import cpnumeric as cp
from test_sorting import both, same
from test_ufuncs import data

DTYPES = ["bool", "int16", "int64", "uint8", "float32", "float64"]


# A fallback (or any other RuntimeWarning) fails the test (conftest.py).
pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_and_fancy_reads(dtype):
    a = data((5, 6, 4), dtype, 1)
    ca = cp.array(a)
    idx = numpy.array([[3, 0], [-1, 2]])
    both("take", a, idx)
    for axis in (0, 1, -1):
        both("take", a, idx, axis=axis)
    both("take", a, 2, axis=1)
    both("take", a, [7, -9, 3], axis=1, mode="wrap")
    both("take", a, [7, -9, 3], axis=1, mode="clip")
    both("take", a[:, ::-2], [1, 0], axis=1)
    both("take", a, numpy.zeros(0, int), axis=0)
    same(ca.take([1, 3], axis=2), a.take([1, 3], axis=2))
    same(ca[cp.array([3, 0, -1])], a[[3, 0, -1]])
    same(ca[[1, 1, 2]], a[[1, 1, 2]])
    same(ca[:, cp.array([5, 0])], a[:, [5, 0]])
    same(ca[:, :, [0, 3]], a[:, :, [0, 3]])
    same(ca[cp.array([0, 4]), cp.array([1, 2]), cp.array([3, 3])], a[[0, 4], [1, 2], [3, 3]])
    same(ca[cp.array([[0], [4]]), cp.array([1, 2]), 0 * cp.arange(2)],
         a[numpy.array([[0], [4]]), [1, 2], [0, 0]])
    m = data((5, 6, 4), "bool", 2)
    same(ca[cp.array(m)], a[m])
    same(ca[cp.array(m[:, :, 0])], a[m[:, :, 0]])
    same(ca[cp.array(m[:, 0, 0])], a[m[:, 0, 0]])


def test_index_errors():
    a = cp.arange(10.0)
    with pytest.raises(IndexError, match="out of bounds"):
        cp.take(a, [10])
    with pytest.raises(IndexError, match="out of bounds"):
        a[cp.array([0, -11])]
    with pytest.raises(IndexError):
        a[cp.array([0.5])]
    with pytest.raises(IndexError, match="non-empty take"):
        cp.take(cp.zeros((3, 0)), [0], axis=1)
    with pytest.raises(ValueError, match="clipmode"):
        cp.take(a, [1], mode="bad")
    # indices computed by pending work: checked at the call too (a sync)
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        cp.take(a, cp.arange(2000) % 11)
    assert float(cp.take(a, cp.arange(2000) % 11, mode="clip")[10]) == 9.0

    # under @jit the gather checks: the error comes when the result is read
    @cp.jit
    def gather(x, i):
        return cp.take(x, i) * 2
    with pytest.raises(IndexError, match="out of bounds"):
        numpy.asarray(gather(a, cp.arange(2000) % 11))
    assert float(gather(a, cp.arange(2000) % 10)[3]) == 6.0
    # The gather's error keeps its kind to the sync point: the binding raises
    # IndexError with NumPy's message, no RuntimeError parsed (issue 21).
    from cpnumeric import _cpn
    r = gather(a, cp.arange(2000) % 11)
    with pytest.raises(IndexError) as info:
        _cpn.wait(r._base.node)
    assert type(info.value) is IndexError
    assert str(info.value) == "index 10 is out of bounds for axis 0 with size 10"
    assert info.value.__context__ is None


# Keys mixing integer arrays, masks, ints, slices, None and Ellipsis: the
# result's layout (the index block first unless the advanced items are
# adjacent), negative and repeated indices, empty results, 0-d booleans.
MIXED_KEYS = [
    (0, slice(None), [1, 2]),
    ([0, 1], None, [0, 1]),
    ([0, 1], slice(1, 4), [2, 3]),
    (slice(None), [0, 2, -1], slice(None)),
    (Ellipsis, [1, 3]),
    (Ellipsis, [[1], [3]], None),
    ([4, 0], Ellipsis, [3, 0]),
    (slice(None, None, 2), [1, 1, 2], slice(1, None, 2)),
    (numpy.array([True, False, True, False, True]), slice(1, 3)),
    (slice(None), numpy.array([True, False] * 3)),
    (slice(None), numpy.arange(24).reshape(6, 4) % 3 == 0),
    (True, [0, 1]),
    (False,),
    (Ellipsis, True),
    (None, [1, 2], 3),
    ([[0, 1], [2, 3]], [0, 1], 3),
    (1, [0, 1], [2, 3]),
    ([1, 2], 0, [2, 3]),
    ([], slice(None)),
    (slice(0, 0), [1]),
    (numpy.array([-1, -5]), slice(None, None, -1), 2),
]


def _key_for(key, traced):
    """The key with its index arrays as cpnumeric arrays (traced: computed
    by pending work) or as they are."""
    if not traced:
        return key
    return tuple(cp.array(k) + 0 if isinstance(k, (list, numpy.ndarray)) and len(k)
                 and numpy.asarray(k).dtype != bool else k for k in key)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex128",
                                   "bool"])
@pytest.mark.parametrize("traced", [False, True])
def test_mixed_advanced_indexing(dtype, traced):
    a = data((5, 6, 4), dtype, 7) if dtype != "complex128" else \
        data((5, 6, 4), "float64", 7) + 1j * data((5, 6, 4), "float64", 8)
    ca = cp.array(a)
    for key in MIXED_KEYS:
        k = _key_for(key, traced)
        same(ca[k], a[key])
        # through a non-contiguous view
        view, cview = a[1:, ::-1, 1::2], ca[1:, ::-1, 1::2]
        try:
            want = view[key]
        except IndexError:
            with pytest.raises(IndexError):
                cview[k]
            continue
        same(cview[k], want)
        # writes: values of the result's shape, a scalar, through the view
        b, cb = a.copy(), cp.array(a)
        vals = numpy.resize(a.ravel()[::-1], a[key].shape)
        b[key] = vals
        cb[k] = cp.array(vals)
        same(cb, b)
        b[key] = a.flat[3]
        cb[k] = a.flat[3]
        same(cb, b)
        b[1:, ::-1, 1::2][key] = a.flat[5]
        cview = cb[1:, ::-1, 1::2]
        cview[k] = a.flat[5]
        same(cb, b)
    # .real of a complex array, and an index that repeats (the last write wins)
    if dtype == "complex128":
        b, cb = a.copy(), cp.array(a)
        b.real[[0, 0, 2], 1:3] = numpy.arange(24.0).reshape(3, 2, 4)
        cb.real[[0, 0, 2], 1:3] = cp.arange(24.0).reshape(3, 2, 4)
        same(cb, b)
        same(cb.imag[1:, [1, 0]], b.imag[1:, [1, 0]])


def test_mixed_advanced_indexing_errors():
    a = data((5, 6, 4), "float64", 9)
    ca = cp.array(a)
    for key in [(False, [0, 1]), ([0, 1], [0, 1, 2]), (numpy.ones(2, bool),),
                (slice(None), numpy.ones(5, bool)), (1.5,), ([1.5],), (0, 0, 0, [0]),
                ([7],), (slice(None), [-7]), (0, slice(None), [4]),
                (Ellipsis, Ellipsis, [0]), (numpy.array([0.0]),)]:
        with pytest.raises(IndexError) as ref:
            a[key]
        with pytest.raises(IndexError) as ours:
            ca[key]
        assert str(ours.value) == str(ref.value)
    for vals in [numpy.ones(3), numpy.ones((1, 2, 6, 4)), numpy.ones((2, 1, 4)),
                 numpy.ones((2, 2, 6, 4))]:
        b, cb = a.copy(), cp.array(a)
        try:
            b[[0, 1]] = vals
            cb[[0, 1]] = cp.array(vals)
            same(cb, b)
        except ValueError as ref:
            with pytest.raises(ValueError) as ours:
                cb[[0, 1]] = cp.array(vals)
            assert str(ours.value) == str(ref)
    with pytest.raises(ValueError, match="read-only"):
        cp.broadcast_to(ca[0], (3, 6, 4))[:, [0]] = 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_axis_and_put(dtype):
    a = data((4, 7), dtype, 3)
    order = numpy.argsort(data((4, 7), "float64", 4), axis=1)
    both("take_along_axis", a, order, axis=1)
    both("take_along_axis", a, order[:, :3], axis=1)
    both("take_along_axis", a, order[:1, :].T[:4, :1].repeat(7, 1) % 4, axis=0)
    both("take_along_axis", a, order.ravel()[:5], axis=None)
    b, cb = a.copy(), cp.array(a)
    numpy.put(b, [0, 9, -1], a.ravel()[:3])
    cp.put(cb, [0, 9, -1], cp.array(a.ravel()[:3]))
    same(cb, b)
    numpy.put(b, [1, 2, 3, 40], a.ravel()[5:7], mode="wrap")
    cb.put([1, 2, 3, 40], cp.array(a.ravel()[5:7]), mode="wrap")
    same(cb, b)
    numpy.put_along_axis(b, order[:, :2], a[:, :1], axis=1)
    cp.put_along_axis(cb, cp.array(order[:, :2]), cp.array(a[:, :1]), axis=1)
    same(cb, b)
    with pytest.raises(IndexError):
        cp.put(cb, [100], cp.array(a.ravel()[:1]))


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_fancy_writes_reach_the_base(dtype):
    a = data((6, 5), dtype, 5)
    m = data((6, 5), "bool", 6)
    b, cb = a.copy(), cp.array(a)
    b[m] = a[0, 0]
    cb[cp.array(m)] = a[0, 0]
    same(cb, b)
    b[m] = a[m][::-1]
    cb[cp.array(m)] = cp.array(a[m][::-1])
    same(cb, b)
    v, cv = b[2].copy(), cb[2]  # a view: the write reaches cb
    v[[0, 3]] = a[1, :2]
    cv[cp.array([0, 3])] = cp.array(a[1, :2])
    b[2] = v
    same(cb, b)
    b[[0, 5], [1, 4]] = a[3, 0]
    cb[cp.array([0, 5]), cp.array([1, 4])] = a[3, 0]
    same(cb, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_family(dtype):
    a = data((4, 5), dtype, 7)
    both("nonzero", a)
    both("flatnonzero", a)
    both("argwhere", a)
    same(cp.array(a).nonzero(), a.nonzero())
    same(cp.where(cp.array(a)), numpy.where(a))
    both("nonzero", numpy.zeros((3, 0), dtype))
    both("argwhere", numpy.zeros(4, dtype))
    with pytest.raises(ValueError, match="0d"):
        cp.nonzero(cp.array(1))
    cond = data((4,), "bool", 8)
    both("compress", cond, a, axis=0)
    both("compress", data((5,), "bool", 9), a, axis=1)
    both("compress", data((20,), "bool", 10), a)
    same(cp.array(a).compress(cp.array(cond), axis=0), a.compress(cond, axis=0))
    both("extract", a > a.mean() if dtype != "bool" else a, a)


def test_putmask_place_choose_select():
    a = numpy.arange(12.0).reshape(3, 4)
    m = a % 3 == 0
    b, cb = a.copy(), cp.array(a)
    numpy.putmask(b, m, [100.0, 200.0])
    cp.putmask(cb, cp.array(m), cp.array([100.0, 200.0]))
    same(cb, b)
    numpy.place(b, m, [-1.0, -2.0, -3.0])
    cp.place(cb, cp.array(m), cp.array([-1.0, -2.0, -3.0]))
    same(cb, b)
    choices = [numpy.arange(4) * k for k in range(3)]
    idx = numpy.array([2, 0, 1, 2])
    both("choose", idx, choices)
    both("choose", numpy.array([5, -1, 1, 2]), choices, mode="wrap")
    both("choose", numpy.array([5, -1, 1, 2]), choices, mode="clip")
    with pytest.raises(ValueError, match="invalid entry"):
        cp.choose(cp.array([0, 3]), [cp.zeros(2), cp.ones(2)])
    x = numpy.arange(10)
    both("select", [x < 3, x > 5], [x, x ** 2], 42)
    both("select", [x < 3], [x * 1.5])
    with pytest.raises(TypeError):
        cp.select([cp.array(x)], [cp.array(x)])


def test_index_helpers():
    both("ix_", numpy.array([0, 2]), numpy.array([1, 3, 4]))
    both("ix_", numpy.array([True, False, True]))
    idx = (numpy.array([3, 6, 6]), numpy.array([4, 5, 1]))
    both("ravel_multi_index", idx, (7, 6))
    both("ravel_multi_index", idx, (7, 6), order="F")
    both("ravel_multi_index", (numpy.array([3, 9]), numpy.array([-1, 8])), (7, 6),
         mode=("clip", "wrap"))
    with pytest.raises(ValueError, match="invalid entry"):
        cp.ravel_multi_index((cp.array([7]), cp.array([0])), (7, 6))
    both("unravel_index", numpy.array([22, 41, 37]), (7, 6))
    both("unravel_index", numpy.array([22, 41, 37]), (7, 6), order="F")
    with pytest.raises(ValueError, match="out of bounds"):
        cp.unravel_index(cp.array([42]), (7, 6))
    both("diag_indices", 4)
    both("diag_indices", 3, 3)
    both("diag_indices_from", numpy.zeros((3, 3)))
    for k in (-1, 0, 2):
        both("tril_indices", 4, k)
        both("triu_indices", 4, k, 5)
        both("tril_indices_from", numpy.zeros((3, 5)), k)
        both("triu_indices_from", numpy.zeros((5, 3)), k)
    both("mask_indices", 3, numpy.triu)


@pytest.mark.parametrize("shape,wrap", [((4, 4), False), ((7, 3), False), ((7, 3), True),
                                        ((3, 3, 3), False)])
def test_fill_diagonal(shape, wrap):
    a = numpy.zeros(shape)
    ca = cp.array(a)
    numpy.fill_diagonal(a, 5.0, wrap=wrap)
    cp.fill_diagonal(ca, 5.0, wrap=wrap)
    same(ca, a)
    if len(shape) == 2 and shape[0] == shape[1]:
        numpy.fill_diagonal(a, [1.0, 2.0])
        cp.fill_diagonal(ca, cp.array([1.0, 2.0]))
        same(ca, a)


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex128"])
def test_long_masked_reads_split_over_threads(dtype):
    """Boolean-mask reads long enough to be counted and copied in chunks on
    several threads (64 mask bytes at a time), on flat and strided views."""
    rng = numpy.random.default_rng(4)
    n = 1_000_003
    a = (rng.random(n) * 100).astype(dtype)
    m = rng.random(n) < 0.3
    same(cp.array(a)[cp.array(m)], a[m])
    same(cp.array(a)[::-2][cp.array(m)[::-2]], a[::-2][m[::-2]])
    same(cp.compress(cp.array(m[:5000]), cp.array(a)), numpy.compress(m[:5000], a))
    same(cp.extract(cp.array(m), cp.array(a)), numpy.extract(m, a))


def test_long_nonzero_and_bincount_split_over_threads():
    """nonzero (1-D and 3-D) and unweighted bincount long enough to be
    counted in chunks on several threads; weighted bincount keeps NumPy's
    summation order."""
    rng = numpy.random.default_rng(6)
    flat = (rng.random(1_000_003) < 0.2).astype(numpy.int32)
    same(cp.nonzero(cp.array(flat)), numpy.nonzero(flat))
    cube = rng.random((70, 90, 110)) < 0.1
    same(cp.nonzero(cp.array(cube)), numpy.nonzero(cube))
    same(cp.argwhere(cp.array(cube[::-1])), numpy.argwhere(cube[::-1]))
    x = rng.integers(0, 5000, 1_200_000)
    same(cp.bincount(cp.array(x), minlength=6000), numpy.bincount(x, minlength=6000))
    w = rng.random(1_200_000)
    same(cp.bincount(cp.array(x), cp.array(w), minlength=5000),
         numpy.bincount(x, w, minlength=5000))


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128"])
def test_scatter_in_place_keeps_old_readers(dtype):
    """a[idx] = v writes into a's buffer when nothing reads the old value
    (cpn.libcall {in_place}); a view, a pending copy and a pending
    expression of the old value must still see what they saw."""
    a = data((4000,), dtype, 1)
    idx = numpy.random.default_rng(3).integers(-4000, 4000, 1500)
    v = data((1500,), dtype, 2)
    ca = cp.array(a)
    view = ca[10:30]
    old_copy = ca.copy()
    old_expr = ca * 2
    ca[cp.array(idx)] = cp.array(v)
    a_ref = a.copy()
    old = a.copy()
    a_ref[idx] = v
    same(ca, a_ref)
    same(view, a_ref[10:30])
    same(old_copy, old)
    same(old_expr, old * 2)
    # ufunc.at and np.put go the same way
    cp.add.at(ca, cp.array(idx), 1)
    numpy.add.at(a_ref, idx, 1)
    same(ca, a_ref)
    cp.put(ca, cp.array([0, -1, 5]), cp.array(v[:3]))
    numpy.put(a_ref, [0, -1, 5], v[:3])
    same(ca, a_ref)


def test_scatter_repeated_index_array_checks_bounds_again():
    """The bounds of a traced index array are kept on its value: the same
    array again costs no sync, and the array changed in place is checked
    anew."""
    a = numpy.arange(50.0)
    ca = cp.array(a)
    idx = cp.array(numpy.arange(0, 50, 7))
    for k in range(3):
        ca[idx] = k
    a[numpy.arange(0, 50, 7)] = 2
    same(ca, a)
    idx += 10  # now 59 > 49
    with pytest.raises(IndexError, match="out of bounds"):
        ca[idx] = 1.0
    same(ca, a)
    idx -= 70  # -70 < -50
    with pytest.raises(IndexError, match="out of bounds"):
        ca[idx] = 1.0
    idx += 40  # -20..22: negative indices count from the end
    ca[idx] = -1.0
    a[numpy.arange(0, 50, 7) - 20] = -1.0
    same(ca, a)


def test_long_scatter_split_over_threads_last_write_wins():
    """Into a destination bigger than the caches the scatter is split by
    destination over threads; repeated indices keep their last value."""
    n = 5 * 10**6  # 40 MB of float64
    rng = numpy.random.default_rng(7)
    idx = rng.integers(0, n, 2 * 10**5)
    idx[::3] = idx[0]  # many writes to one element
    v = rng.random(idx.size)
    a = numpy.zeros(n)
    ca = cp.array(a)
    ca[cp.array(idx)] = cp.array(v)
    a[idx] = v
    same(ca, a)
    bad = idx.copy()
    bad[-1] = n
    with pytest.raises(IndexError):
        ca[cp.array(bad)] = cp.array(v)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_long_take_split_over_threads(mode):
    """take of one element per index (the tight loop per mode, over
    threads): negative, wrapped and clipped indices as NumPy's."""
    n = 300_000
    rng = numpy.random.default_rng(11)
    a = rng.random(n)
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    idx = rng.integers(lo, hi, 400_000)
    ca, ci = cp.array(a), cp.array(idx)
    same(cp.take(ca, ci, mode=mode), numpy.take(a, idx, mode=mode))
    same(ca[::-2].take(ci // 2, mode=mode), a[::-2].take(idx // 2, mode=mode))
    if mode == "raise":
        same(ca[ci], a[idx])
        bad = idx.copy()
        bad[-7] = n
        with pytest.raises(IndexError, match="out of bounds"):
            cp.take(ca, cp.array(bad))


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex128"])
def test_one_dimensional_scatter_variants(dtype):
    """a[idx] = v into a 1-D array (the scatter's short path): strided and
    offset views, negative and unsigned indices, 2-D index arrays, values
    broadcast or cast, empty keys, and NumPy's errors."""
    base = data((300,), dtype, 1)
    idx = numpy.random.default_rng(4).permutation(100)[:40] - 50   # negatives too
    idx2 = numpy.random.default_rng(5).permutation(100)[:30].reshape(5, 6)
    vals = data((40,), dtype, 2)
    for view in (slice(None), slice(3, 203, 2), slice(None, None, -3), slice(150, 250)):
        ref, ca = base.copy(), cp.array(base)
        rv, cv = ref[view], ca[view]
        rv[idx] = vals
        cv[cp.array(idx)] = cp.array(vals)
        same(ca, ref)
        rv[idx2] = vals[:6]                               # a row broadcast over a 2-D key
        cv[cp.array(idx2)] = cp.array(vals[:6])
        same(ca, ref)
        rv[idx2.astype(numpy.uint32)] = vals[0]           # a scalar value, unsigned indices
        cv[cp.array(idx2.astype(numpy.uint32))] = vals[0]
        same(ca, ref)
        rv[idx[:5]] = numpy.array([[1], [2], [3], [4], [5]])[:, 0].astype(numpy.int64)
        cv[cp.array(idx[:5])] = cp.array(numpy.array([1, 2, 3, 4, 5]))  # cast to the dtype
        same(ca, ref)
        rv[idx[:0]] = vals[:0]
        cv[cp.array(idx[:0])] = cp.array(vals[:0])
        same(ca, ref)
    ca = cp.array(base)
    with pytest.raises(IndexError):
        ca[cp.array([0, 300])] = 1
    with pytest.raises(IndexError):
        ca[cp.array([-301])] = 1
    with pytest.raises(ValueError):
        ca[cp.array([0, 1, 2])] = cp.array(vals[:2])
    same(ca, base)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_the_last_axis(dtype):
    # runtime/lib/Indexing.cpp take_along, Q == 1: one row's indices per row
    # (negative ones too), indices broadcast over rows (row stride 0), a
    # transposed index array (element stride != 1), a reversed source.
    rng = numpy.random.default_rng(11)
    a = (rng.integers(-50, 50, (9, 13)) % (2 if dtype == "bool" else 100)).astype(dtype)
    ind = rng.integers(-13, 13, (9, 6))
    cases = [(a, ind), (a, ind[:1]), (a, numpy.ascontiguousarray(ind.T).T),
             (a[::-1, ::-2], ind % 7)]
    for x, i in cases:
        want = numpy.take_along_axis(x, i, axis=1)
        cx = cp.asarray(x) if x.flags.c_contiguous else \
            cp.asarray(a)[::-1, ::-2]
        ci = cp.asarray(numpy.ascontiguousarray(i))
        if not i.flags.c_contiguous:
            ci = cp.asarray(numpy.ascontiguousarray(i.T)).T
        got = cp.take_along_axis(cx, ci, axis=1)
        numpy.testing.assert_array_equal(numpy.asarray(got), want)
    with pytest.raises(IndexError):
        numpy.asarray(cp.take_along_axis(cp.asarray(a), cp.asarray(ind + 13), axis=1))


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum"])
def test_ufunc_at_with_one_value(name, dtype):
    """ufunc.at with one value for every index (`np.add.at(h, idx, 1.0)`),
    on flat and 2-D targets, a 0-d array or a scalar: the value is passed
    once, not broadcast to one element per index."""
    if dtype == "complex128" and name in ("maximum", "minimum"):
        pytest.skip("complex maximum.at is NumPy's fallback")
    rng = numpy.random.default_rng(7)
    a = data((300,), dtype, 1)
    idx = rng.integers(-300, 300, 2000)
    ca = cp.array(a)
    getattr(cp, name).at(ca, cp.array(idx), cp.array(numpy.asarray(data((1,), dtype, 2)[0])))
    ref = a.copy()
    getattr(numpy, name).at(ref, idx, data((1,), dtype, 2)[0])
    same(ca, ref)
    b = data((20, 15), dtype, 3)
    rows, cols = rng.integers(0, 20, (40, 3)), rng.integers(-15, 15, (40, 3))
    cb = cp.array(b)
    getattr(cp, name).at(cb, (cp.array(rows), cp.array(cols)), 3)
    ref = b.copy()
    getattr(numpy, name).at(ref, (rows, cols), 3)
    same(cb, ref)


def test_ufunc_at_with_one_value_allocates_no_values_array():
    """The one value of `np.add.at(h, idx, 1.0)` is not broadcast into an
    array of one value per index (a million indices: 8 MB)."""
    idx = cp.array(numpy.random.default_rng(5).integers(0, 1000, 1 << 20))
    h = cp.zeros(1000)
    cp.synchronize()
    cp.reset_stats()
    live = cp.stats()["bytes_live"]
    cp.add.at(h, idx, 1.0)
    cp.synchronize()
    assert cp.stats()["bytes_peak"] - live < (1 << 20) * 8 // 2
    ref = numpy.zeros(1000)
    numpy.add.at(ref, numpy.asarray(idx), 1.0)
    same(h, ref)
