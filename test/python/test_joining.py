"""Joining, rearranging and comparison functions against NumPy: dtypes,
shapes with empty and 0-d cases, non-contiguous views, errors."""

import warnings

import numpy
import pytest

import cpnumeric as cp
from test_ufuncs import check, data

DTYPES = ["bool", "int32", "int64", "uint8", "float32", "float64"]


def both(f, *arrays, **kw):
    """f on cpnumeric arrays and on NumPy arrays; checks the results agree."""
    ours = getattr(cp, f)(*[cp.array(a) if isinstance(a, numpy.ndarray) else a
                            for a in arrays], **kw)
    ref = getattr(numpy, f)(*arrays, **kw)
    if isinstance(ref, (tuple, list)):
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref):
            check(o, numpy.asarray(r))
    else:
        check(ours, numpy.asarray(ref))


@pytest.mark.parametrize("dtype", DTYPES)
def test_concatenate_and_stacks(dtype):
    a, b = data((3, 4), dtype, 1), data((2, 4), dtype, 2)
    c = data((3, 5), dtype, 3)
    both("concatenate", [a, b])
    both("concatenate", [a, c], axis=1)
    both("concatenate", [a, b], axis=None)
    both("concatenate", [a, a[:, ::-2], c[:, 1::2]], axis=-1)  # views
    both("concatenate", [a, numpy.zeros((0, 4), dtype)])
    both("stack", [a, a, a])
    both("stack", [a, a], axis=-1)
    both("vstack", [a, b])
    both("vstack", [a[0], a[1]])
    both("hstack", [a, c])
    both("hstack", [a[0], c[0]])
    both("dstack", [a, a])
    both("column_stack", [a[0], a[1], a[2]])
    both("append", a, b)
    both("append", a, b, axis=0)


def test_concatenate_mixed_dtypes_and_errors():
    i, f = data((2, 3), "int32", 1), data((2, 3), "float32", 2)
    both("concatenate", [i, f])
    both("concatenate", [i, f], dtype="float64")
    out = cp.zeros((4, 3))
    r = cp.concatenate([cp.array(i), cp.array(f)], out=out)
    assert r is out
    check(out, numpy.concatenate([i, f]).astype("float64"))
    x = cp.array(i)
    with pytest.raises(ValueError, match="must match exactly"):
        cp.concatenate([x, cp.zeros((2, 4))])
    with pytest.raises(ValueError, match="same number of dimensions"):
        cp.concatenate([x, cp.zeros(3)])
    with pytest.raises(ValueError, match="zero-dimensional"):
        cp.concatenate([cp.array(1.0), cp.array(2.0)])
    with pytest.raises(ValueError, match="at least one array"):
        cp.concatenate([])
    with pytest.raises(numpy.exceptions.AxisError):
        cp.concatenate([x, x], axis=2)
    with pytest.raises(TypeError):
        cp.concatenate([cp.array(f), cp.array(f)], dtype="int32")
    with pytest.raises(ValueError, match="same shape"):
        cp.stack([x, cp.zeros((3, 2))])


@pytest.mark.parametrize("dtype", DTYPES)
def test_atleast_and_broadcast_arrays(dtype):
    s, v, m = data((), dtype, 1), data((4,), dtype, 2), data((2, 3), dtype, 3)
    for f in ("atleast_1d", "atleast_2d", "atleast_3d"):
        both(f, s)
        both(f, v)
        both(f, m)
        both(f, s, v, m)
    both("broadcast_arrays", v, m[:, :1], s)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-2, 0, 1])
def test_tril_triu_trace(dtype, k):
    a = data((4, 5), dtype, 4)
    both("tril", a, k)
    both("triu", a, k)
    both("tril", data((2, 3, 3), dtype, 5), k)
    both("triu", data((5,), dtype, 6), k)
    if dtype != "bool":
        both("trace", a, k)
        both("trace", data((3, 4, 5), dtype, 7), k, 1, 2)
        both("trace", a.T, k)  # a view
        check(cp.array(a).trace(k), numpy.asarray(a.trace(k)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_roll(dtype):
    a = data((3, 5), dtype, 8)
    both("roll", a, 2)
    both("roll", a, -1, axis=1)
    both("roll", a, (1, 2), axis=(0, 1))
    both("roll", a, 7, axis=0)
    both("roll", a[:, ::2], 1, axis=1)
    both("roll", numpy.zeros((0, 3), dtype), 1, axis=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_diff_and_ptp(dtype):
    a = data((4, 6), dtype, 9)
    both("diff", a)
    both("diff", a, 2, axis=0)
    both("diff", a[:, ::-1])
    if dtype != "bool":
        both("diff", a, prepend=0)
        both("diff", a, append=a[:, :2])
        both("ptp", a)
        both("ptp", a, axis=1)
        both("ptp", a, axis=0, keepdims=True)
    with pytest.raises(ValueError):
        cp.diff(cp.array(a), -1)
    with pytest.raises(ValueError):
        cp.diff(cp.array(5))


def test_isclose_allclose():
    a = numpy.array([1.0, 1.0 + 1e-9, numpy.nan, numpy.inf, -numpy.inf, 0.0, 2.0])
    b = numpy.array([1.0, 1.0, numpy.nan, numpy.inf, numpy.inf, 1e-9, 2.1])
    both("isclose", a, b)
    both("isclose", a, b, equal_nan=True)
    both("isclose", a, b, rtol=0.1)
    both("isclose", a.astype("float32"), b.astype("float32"))
    both("isclose", numpy.arange(5), numpy.arange(5) + 1, atol=1)  # integers
    assert cp.allclose(cp.array(a[:2]), cp.array(b[:2])) is True
    assert cp.allclose(cp.array(a), cp.array(b)) is False
    assert cp.allclose(cp.array(a[2:4]), cp.array(b[2:4]), equal_nan=True) is True


def test_native_and_no_fallback():
    cov = cp.coverage()
    for name in ("concatenate", "stack", "roll", "tril", "isclose", "diff"):
        assert name in cov["native"]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cp.asnumpy(cp.concatenate([cp.ones(3), cp.zeros(2)]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_repeat_kron_rot90(dtype):
    a = data((2, 3), dtype, 10)
    both("tile", a, 2)
    both("tile", a, (2, 1, 3))
    both("tile", a[:, ::-1], (1, 2))
    both("repeat", a, 3)
    both("repeat", a, 2, axis=0)
    both("repeat", a, 0, axis=1)
    both("repeat", a[::-1], 2, axis=-1)
    if dtype != "bool":
        both("kron", a, data((3, 2), dtype, 11))
        both("kron", a[0], data((2, 2), dtype, 12))
    for k in range(-1, 4):
        both("rot90", a, k)
    both("rot90", data((2, 3, 4), dtype, 13), 1, (2, 0))
    with pytest.raises(ValueError):
        cp.rot90(cp.array(a), 1, (0, 0))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_indices_tri(indexing):
    x, y, z = numpy.arange(3.0), numpy.linspace(0, 1, 4), numpy.arange(2)
    both("meshgrid", x, y, indexing=indexing)
    both("meshgrid", x, y, z, indexing=indexing)
    both("meshgrid", x, y, indexing=indexing, sparse=True)
    check(cp.indices((2, 3)), numpy.indices((2, 3)))
    for o, r in zip(cp.indices((2, 3), sparse=True), numpy.indices((2, 3), sparse=True)):
        check(o, r)
    check(cp.tri(3, 4, 1), numpy.tri(3, 4, 1))
    check(cp.tri(4, dtype=int), numpy.tri(4, dtype=int))


@pytest.mark.parametrize("key", [
    slice(0, 5), slice(1, 9, 3), slice(-1, 1, 5j), slice(2.5, 7), slice(0, 1, 1j),
    (slice(0, 3), slice(1, 5, 2)), (slice(0, 1, 4j), slice(2, 5)),
    (slice(0, 2), slice(0, 3), slice(5, 1, -2)), (slice(0, 0), slice(0, 2)),
    (slice(1.5, 4), slice(0, 2, 3j))])
def test_mgrid_ogrid(key):
    """cpnumeric arrays from NumPy's grid syntax, with its dtypes and shapes."""
    for ours, ref in ((cp.mgrid, numpy.mgrid), (cp.ogrid, numpy.ogrid)):
        got, want = ours[key], ref[key]
        if isinstance(want, (tuple, list)):
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                assert isinstance(g, cp.ndarray)
                check(g, w)
        else:
            assert isinstance(got, cp.ndarray)
            check(got, want)


def test_r_and_c():
    a, b = numpy.arange(3), numpy.array([[1.5, 2.5], [3.5, 4.5]])
    cases = [lambda m, x: m.r_[x(a), 7, x(a[::-1])], lambda m, x: m.r_[1:4, 0.5, x(a)],
             lambda m, x: m.r_[-1:1:5j], lambda m, x: m.r_[x(b), x(b)],
             lambda m, x: m.r_["1", x(b), x(b)], lambda m, x: m.r_["0,2", x(a), x(a)],
             lambda m, x: m.r_["0,2,0", x(a), x(a)], lambda m, x: m.r_["1,3,1", x(b), x(b)],
             lambda m, x: m.c_[x(a), x(a) * 2], lambda m, x: m.c_[x(b), x(b)],
             lambda m, x: m.c_[x(a), 0:3], lambda m, x: m.r_[numpy.int8(3), x(a)],
             lambda m, x: m.r_[True, 2.5]]
    for case in cases:
        got, want = case(cp, cp.array), case(numpy, numpy.asarray)
        assert isinstance(got, cp.ndarray)
        check(got, want)
    with pytest.raises(ValueError, match="first entry"):
        cp.r_[1, "0,2"]
    with pytest.raises(ValueError, match="unknown special directive"):
        cp.r_["x,y", 1]


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_average_round_angles_sinc(dtype):
    a = data((4, 5), dtype, 14)
    w = data((4, 5), "float64", 15, positive=True)
    both("average", a)
    both("average", a, 1)
    both("average", a, weights=w)
    both("average", a, 0, w[:, 0])
    check(cp.average(cp.array(a), 1, returned=True)[1],
          numpy.average(a, 1, returned=True)[1])
    f = data((3, 4), "float64", 16) * 123.456
    for d in (0, 1, 2, -1):
        both("around", f, d)
        both("round", f.astype("float32"), d)
        check(cp.array(f).round(d), f.round(d))
    both("around", a, 1)
    for fn in ("deg2rad", "rad2deg", "radians", "degrees", "sinc"):
        both(fn, a)
    both("sinc", numpy.array([0.0, 0.5, -1.0]))


def test_nan_to_num_and_equality():
    x = numpy.array([numpy.nan, numpy.inf, -numpy.inf, 1.5, -0.0])
    both("nan_to_num", x)
    both("nan_to_num", x.astype("float32"), nan=-1.0, posinf=9.0)
    both("nan_to_num", numpy.arange(4))
    X = cp.array(x)
    assert cp.array_equal(X, cp.array(x)) is False          # nan != nan
    assert cp.array_equal(X, cp.array(x), equal_nan=True) is True
    assert cp.array_equal(cp.ones(3), cp.ones(4)) is False
    assert cp.array_equiv(cp.ones((2, 3)), cp.ones(3)) is True
    assert cp.array_equiv(cp.ones((2, 3)), cp.ones(2)) is False


@pytest.mark.parametrize("dtype", DTYPES)
def test_splits_and_axes(dtype):
    a = data((6, 4, 2), dtype, 17)
    both("split", a, 3)
    both("split", a, [1, 4], axis=1)
    both("array_split", a, 4)
    both("array_split", a, 5, axis=1)
    both("hsplit", a, 2)
    both("vsplit", a, [2])
    both("dsplit", a, 2)
    both("hsplit", a[0, :, 0], 2)
    with pytest.raises(ValueError, match="equal division"):
        cp.split(cp.array(a), 4)
    both("rollaxis", a, 2)
    both("rollaxis", a, 0, 3)
    both("rollaxis", a, -1, 1)
    both("matrix_transpose", a)
    both("real", a)
    both("imag", a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_polynomials_and_integrals(dtype):
    x = data((7,), dtype, 18)
    p = data((4,), dtype, 19)
    both("polyval", p, x)
    both("vander", x)
    both("vander", x, 3, increasing=True)
    both("ediff1d", data((3, 3), dtype, 20))
    both("ediff1d", x, to_end=numpy.array([5], dtype), to_begin=numpy.array([1, 2], dtype))
    y = data((3, 6), dtype, 21)
    both("trapezoid", y)
    both("trapezoid", y, dx=0.5, axis=0)
    both("trapezoid", y, numpy.linspace(0, 1, 6))


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_cov_corrcoef(dtype):
    m = data((3, 8), dtype, 22)
    both("cov", m)
    both("cov", m, rowvar=False)
    both("cov", m, bias=True)
    both("cov", m[0], m[1])
    both("cov", m, ddof=2)
    both("corrcoef", m)
    both("corrcoef", m[0], m[2])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_nan_reductions(dtype):
    a = data((4, 5), dtype, 23)
    if dtype.startswith("float"):
        a[0, 1] = a[2, 3] = numpy.nan
        a[3, :] = numpy.nan  # an all-NaN row: NaN (NumPy also warns)
    x = cp.array(a)
    for f in ("nansum", "nanprod", "nanmean", "nanmax", "nanmin"):
        for axis in (None, 0, 1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ref = getattr(numpy, f)(a, axis=axis)
            check(getattr(cp, f)(x, axis=axis), numpy.asarray(ref))
    check(cp.nansum(x, axis=1, keepdims=True), numpy.nansum(a, axis=1, keepdims=True))


def test_two_concatenations_in_one_kernel_keep_their_own_data():
    """Identical zero fills of two concatenations were merged (CSE) and both
    results were written into the first one's buffer."""
    x = cp.array(numpy.array([0.1, 0.5, 1.2, 1.9]))
    y = cp.array(numpy.array([1.0, 2.0, 3.0, 4.0]))
    a = cp.concatenate([x[-1:], x, x[:1]])
    b = cp.concatenate([y[-1:], y, y[:1]])
    s = a + b
    check(a, numpy.array([1.9, 0.1, 0.5, 1.2, 1.9, 0.1]))
    check(b, numpy.array([4.0, 1.0, 2.0, 3.0, 4.0, 1.0]))
    check(s, numpy.array([5.9, 1.1, 2.5, 4.2, 5.9, 1.1]))


@pytest.mark.parametrize("arrays,axis", [
    (lambda x: [numpy.broadcast_to(x[0, 0], (3, 6))] * 2, -1),
    (lambda x: [x.transpose(2, 0, 1)] * 2, 0),
    (lambda x: [x.T, x.T], 1),
    (lambda x: [x[:, ::2], x[:, 1::2]], 1),
    (lambda x: [x.T, x.T.copy()], 0),
    (lambda x: [x[:1, :1], x[1:2, :1]], 0),
    (lambda x: [x, x], 2),
])
def test_concatenate_takes_numpys_layout(arrays, axis, eager0):
    # NumPy allocates the result in the inputs' stride order (C order wins a
    # conflict); reshape(order='F') of it is then a view or a copy as in
    # NumPy, and a later write shows through or not (fuzzer 920:969).
    xn = numpy.arange(4 * 5 * 6, dtype=float).reshape(4, 5, 6)
    ins = arrays(xn)
    want = numpy.concatenate(ins, axis=axis)
    got = cp.concatenate([cp.asarray(a) for a in ins], axis=axis)
    assert got.strides == want.strides
    numpy.testing.assert_array_equal(cp.asnumpy(got), want)


def test_a_reshape_in_f_order_of_a_concatenation_is_a_view_as_in_numpy(eager0):
    def run(np):
        a7 = np.concatenate([np.broadcast_to(np.linspace(0.0, 1, 50), (3, 50))] * 2,
                            axis=-1)
        a10 = a7.reshape(1, 5, -1, order="F")
        a7 += a7
        return a10
    numpy.testing.assert_array_equal(cp.asnumpy(run(cp)), run(numpy))


def _periodic(np, u, steps):
    """A periodic heat step: ufuncs over np.roll (joins that
    cpn-split-joins computes piece by piece)."""
    for _ in range(steps):
        u = u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


@pytest.mark.parametrize("shape,axis", [((101,), None), ((12, 9), 0), ((12, 9), 1),
                                        ((4, 5, 6), 1), ((1,), None), ((2,), None)])
def test_ufuncs_of_rolls_and_concatenations(shape, axis):
    """Elementwise ops of np.roll, np.concatenate, np.stack and np.append are
    computed per piece of the join (no fill, no copy per piece): NumPy's
    values over several steps, 1-D and along every axis, and with views,
    comparisons, casts and where."""
    x = data(shape, "float64", 4)
    if axis is None:
        check(_periodic(cp, cp.array(x), 7), _periodic(numpy, x, 7))
    for np_ in (numpy, cp):
        u = np_.asarray(x) if np_ is cp else x
        r = np_.roll(u, 2, axis=axis) * 3.0 - np_.roll(u, -1, axis=axis)
        r = np_.where(r > 0, r, np_.roll(r, 1, axis=axis)).astype(numpy.float32)
        if np_ is numpy:
            ref = r
    check(r, ref)
    ax = 0 if axis is None else axis
    a = data(shape, "int32", 5)
    half = numpy.take(a, numpy.arange(shape[ax] // 2), axis=ax)
    rest = numpy.take(a, numpy.arange(shape[ax] // 2, shape[ax]), axis=ax)
    empty = numpy.take(a, numpy.arange(0), axis=ax)
    f = lambda np_, p, q, e: (np_.concatenate([p, e, q], axis=ax) // 3 + np_.asarray(a)) != 4
    check(f(cp, cp.array(half), cp.array(rest), cp.array(empty)), f(numpy, half, rest, empty))
    g = lambda np_, v: np_.sqrt(np_.abs(np_.append(v, v[::-1], axis=ax))) + 1
    check(g(cp, cp.array(a)), g(numpy, a))


def test_ufuncs_of_many_pieces():
    """A join of more pieces than cpn-split-joins splits (8) is computed
    whole; one of five, split."""
    parts = [data((3,), "float64", k) for k in range(12)]
    check(cp.exp(cp.concatenate([cp.array(p) for p in parts])) * 2,
          numpy.exp(numpy.concatenate(parts)) * 2)
    check(cp.stack([cp.array(p) for p in parts[:5]]) - 1, numpy.stack(parts[:5]) - 1)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "uint64", "float64"])
def test_reductions_of_joins(dtype):
    """Reductions over the axis of a join whose partial results combine
    exactly (integer sum, prod, min, max; any, all) are one reduction per
    piece (cpn-split-joins); the rest reduce the join: NumPy's values, with
    wrapping integer sums, unsigned extremes, NaN, along either axis, and
    np.unique's count of a concatenated mask."""
    a = (data((7, 3), "float64", 1) * 90).astype(dtype)
    b = (data((5, 3), "float64", 2) * 90).astype(dtype)
    if dtype == "float64":
        b[1, 2] = numpy.nan
    def f(np_, a, b):
        j = np_.concatenate([a, b])
        c = np_.concatenate([b[:, :1], a[:5, 1:]], axis=1)
        return [j.sum(), j.sum(axis=0), j.sum(axis=1), j.max(axis=0), j.min(),
                j.any(), j.all(axis=0), (j != 0).sum(), j.prod(axis=0),
                c.max(axis=1), c.sum(), np_.logical_not(j).any(axis=0)]
    for o, r in zip(f(cp, cp.array(a), cp.array(b)), f(numpy, a, b)):
        check(o, numpy.asarray(r))
    s = numpy.sort(data((40,), "float64", 3).round(1))
    for np_, x in ((cp, cp.array(s)), (numpy, s)):
        mask = np_.concatenate([np_.ones(1, bool), x[1:] != x[:-1]])
        r = (x[mask], np_.count_nonzero(mask), np_.unique(x))
        if np_ is numpy:
            check(ours[0], r[0]), check(ours[2], r[2])
            assert int(ours[1]) == int(r[1])
        ours = r


def test_join_prefix_read_elsewhere():
    """A chain of writes whose middle result another op reads is not a join
    (the base shows through its gaps there): `a[:1] = h; s = -a; a[1:] = t`,
    and a zeros-then-write that CSE may merge with np.append's first write."""
    x = data((8,), "float64", 1)
    def f(np_, x):
        a = x * 2
        a[:1] = x[:1] + 5
        s = -a
        a[1:] = x[1:] - 3
        y = np_.zeros(8)
        y[:3] = x[:3]
        z = np_.append(x[:3], x[3:]) + 1
        return s, a, y, z
    for o, r in zip(f(cp, cp.array(x)), f(numpy, x)):
        check(o, r)


@pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 6), (1, 5), (6, 1)])
def test_roll_of_a_whole_array_is_a_fresh_c_ordered_copy(shape):
    """np.roll of a C-ordered array writes its two boxes into a fresh result
    directly (python/cpnumeric/_joining.py, _roll_whole): NumPy's values,
    layout and ownership, along every axis and with several shifts."""
    ref = numpy.arange(numpy.prod(shape), dtype=numpy.float64).reshape(shape) * 1.5
    a = cp.asarray(ref) + 0  # computed: a traced whole array
    for ax in range(len(shape)):
        for s in (1, -1, 3, shape[ax] + 2, -shape[ax]):
            r, want = cp.roll(a, s, ax), numpy.roll(ref, s, ax)
            got = cp.asnumpy(r)
            numpy.testing.assert_array_equal(got, want)
            assert r.flags["C_CONTIGUOUS"] and r.flags["WRITEABLE"]
            assert not numpy.shares_memory(got, cp.asnumpy(a)) if got.size else True
    r = cp.roll(a, 1, 0)
    r[...] = -1.0  # the result owns its elements
    numpy.testing.assert_array_equal(cp.asnumpy(a), ref)
    both2 = cp.roll(a, (1, -2), axis=(0, -1))
    numpy.testing.assert_array_equal(cp.asnumpy(both2), numpy.roll(ref, (1, -2), axis=(0, -1)))
