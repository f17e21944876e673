"""Regressions found by the differential fuzzer (tools/fuzz/cpnfuzz.py, the
findings of issue 20, seeds 200/300): each test compares cpnumeric with
NumPy on one behaviour. They pass with CPN_EAGER_THRESHOLD=0 (every op
traced) and 1024."""

import warnings

import numpy
import pytest

import cpnumeric as cp
from test_fuzz_regressions import raises_like, same



def outcome(f):
    """f's result, or the type of the exception it raises."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - compared with NumPy's
        return type(e)


# -- comparisons with Python ints out of the dtype's range (NEP 50) -----------

CMP = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
CMP_INTS = [-2**64 - 1, -2**64, -2**63 - 1, -2**63, -2**31 - 1, -129, -2, -1, 0,
            127, 128, 255, 256, 300, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
            2**64, 2**70]


@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint16", "int32",
                                "uint32", "int64", "uint64", "bool"])
@pytest.mark.parametrize("n", [3, 1500])
def test_compare_with_out_of_range_python_int(dt, n):
    x = (numpy.arange(n) % 7).astype(dt)
    a = cp.asarray(x)
    for name in CMP:
        for v in CMP_INTS:
            for args, wargs in (((a, v), (x, v)), ((v, a), (v, x))):
                want = outcome(lambda: getattr(numpy, name)(*wargs))
                got = outcome(lambda: getattr(cp, name)(*args))
                if isinstance(want, type):
                    assert got is want, (name, dt, v, got)
                else:
                    same(got, want)
    # twice: the second call of a loop takes the C fast path
    for _ in range(2):
        same(a > -2, x > -2)
        same(a == -1, x == -1)
        same(-1 < a if dt != "bool" else a, -1 < x if dt != "bool" else x)


def test_compare_out_of_range_keywords_and_masks():
    x = numpy.arange(1500, dtype="uint8")
    a = cp.asarray(x)
    same(cp.less_equal(a, 300, dtype=bool), numpy.less_equal(x, 300, dtype=bool))
    o, wo = cp.zeros(1500, "uint8"), numpy.zeros(1500, "uint8")
    cp.less(a, 300, out=o)
    numpy.less(x, 300, out=wo)
    same(o, wo)
    o, wo = cp.ones(1500, "float32"), numpy.ones(1500, "float32")
    cp.equal(a, -1, out=o)
    numpy.equal(x, -1, out=wo)
    same(o, wo)
    same(a[a < -2], x[x < -2])
    u, w = cp.asarray(x.astype("uint32")), x.astype("uint32")
    u[u >= -1] *= 0
    w[w >= -1] *= 0
    same(u, w)
    same(cp.arange(3.0) > 2**1000, numpy.arange(3.0) > 2**1000)
    # arithmetic keeps NumPy's OverflowError
    raises_like(lambda np: np.add(np.arange(1500, dtype="uint8"), 300))
    raises_like(lambda np: np.maximum(np.arange(1500, dtype="uint8"), -1))


# -- complex NaN in the nan-functions (NumPy's _replace_nan: any inexact dtype) --

NAN_FUNCS = ["nanmin", "nanmax", "nansum", "nanprod", "nancumsum", "nancumprod",
             "nanmean", "nanvar", "nanstd", "nanargmin", "nanargmax"]


def _complex_with_nans(dt, n):
    re = (numpy.arange(n) * 7 % 11 - 4) / 4
    im = (numpy.arange(n) * 5 % 7 - 3) / 2
    z = (re + 1j * im).astype(dt).reshape(-1, 3)
    z[0, 0] = complex(numpy.nan, 0)
    z[1, 1] = complex(0, numpy.nan)
    z[2, 2] = complex(numpy.nan, numpy.nan)
    z[3, 0] = complex(numpy.inf, 1)
    return z


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [12, 1500])
@pytest.mark.parametrize("name", NAN_FUNCS)
def test_nan_functions_skip_complex_nan(dt, n, name):
    z = _complex_with_nans(dt, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in (None, 0, 1):
            if name.startswith("nanarg") and axis == 1:
                continue
            want = getattr(numpy, name)(z, axis=axis)
            got = getattr(cp, name)(cp.asarray(z), axis=axis)
            if name in ("nanvar", "nanstd", "nanmean", "nanprod", "nancumprod",
                        "nansum", "nancumsum"):
                g, w = numpy.asarray(got), numpy.asarray(want)
                assert g.dtype == w.dtype and g.shape == w.shape
                numpy.testing.assert_allclose(g, w, rtol=1e-5)
            else:
                same(got, want)


def test_nan_extremes_all_nan_complex_slice():
    z = numpy.array([[complex(numpy.nan, 0), 1 + 1j], [complex(0, numpy.nan), 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name in ("nanmin", "nanmax"):
            same(getattr(cp, name)(cp.asarray(z), axis=0), getattr(numpy, name)(z, axis=0))
            same(getattr(cp, name)(cp.asarray(z)), getattr(numpy, name)(z))


# -- initial= converted to the reduction's dtype first (bool(-5) is True) -------

INITIALS = [-5, 0, 0.5, 2.5, 300, -1, 2**70, True, 1e6, numpy.int16(-1),
            numpy.float64(1e10), numpy.nan, 1 + 2j]


@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int64", "uint64",
                                "float16", "float32", "float64"])
@pytest.mark.parametrize("n", [4, 1500])
def test_reduction_initial_takes_the_loop_dtype(dt, n):
    x = numpy.array([True, False] * (n // 2)).reshape(2, -1).astype(dt)
    a = cp.asarray(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for kind in ("min", "max", "sum", "prod"):
            for init in INITIALS:
                for axis in (None, 0):
                    want = outcome(lambda: getattr(x, kind)(axis=axis, initial=init))
                    got = outcome(lambda: getattr(a, kind)(axis=axis, initial=init))
                    if isinstance(want, type):
                        assert got is want, (kind, init, got)
                    else:
                        same(got, want)
    want = outcome(lambda: numpy.minimum.reduce(x, initial=-5))
    got = outcome(lambda: cp.minimum.reduce(a, initial=-5))
    if isinstance(want, type):
        assert got is want
    else:
        same(got, want)


# -- median: NumPy's mean of the middle elements (int64 near the limits) ----------

@pytest.mark.parametrize("dt", ["int64", "uint64", "int8", "bool", "float16",
                                "float32", "float64", "complex128"])
@pytest.mark.parametrize("n", [4, 1500])
def test_median_is_the_mean_of_the_middle(dt, n):
    info = numpy.iinfo(dt) if numpy.dtype(dt).kind in "iu" else None
    x = (numpy.arange(n) * 7 % 11 - 4).astype(dt) if dt != "bool" else \
        (numpy.arange(n) % 3 == 0)
    if info is not None:
        x[::2] = info.min
        x[1::4] = info.max
    elif dt != "bool":
        x[::3] = numpy.finfo(dt.replace("complex128", "float64")).max
    x = x.reshape(2, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in (None, 0, 1):
            for kd in (False, True):
                same(cp.median(cp.asarray(x), axis=axis, keepdims=kd),
                     numpy.median(x, axis=axis, keepdims=kd))
    same(cp.median(cp.asarray(numpy.array([1, 0, -2**63, -2**63]))),
         numpy.median(numpy.array([1, 0, -2**63, -2**63])))


# -- a runtime call's inputs are not donated to an earlier output (np.put) ------

def test_put_after_copy_of_a_view_keeps_its_indices():
    for lib in (numpy, cp):
        a1 = lib.where(lib.array(0, dtype="uint16") > 0, 0, lib.int64(7))
        a3 = lib.roll(a1.T, 1)
        lib.put(a1, [0], 0.5)
        b1 = lib.full((), 7)
        b3 = lib.ravel(b1).copy()
        lib.put(b1, [0], 0)
        if lib is numpy:
            want = (a3, a1, b3, b1)
        else:
            for g, w in zip((a3, a1, b3, b1), want):
                same(g, w)


# -- NumPy 2.4's missing errors ---------------------------------------------------

def test_scalar_conversion_needs_a_0d_array():
    for shape in ((1,), (1, 1), (3,)):
        for conv in (float, int, complex):
            raises_like(lambda np: conv(np.ones(shape)))
    same(float(cp.ones(())), float(numpy.ones(())))


def test_linalg_float16_and_average_errors():
    raises_like(lambda np: np.linalg.solve(np.eye(40, dtype="float16"),
                                           np.ones(40, dtype="float16")))
    raises_like(lambda np: np.average(np.ones((3, 0)), axis=0))
    raises_like(lambda np: np.average(np.ones((3, 1500)), axis=0,
                                      weights=np.array([1.0, -1.0, 0.0])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(cp.average(cp.ones((0, 3)), axis=0), numpy.average(numpy.ones((0, 3)), axis=0))


# -- boolean-mask assignment: NumPy's size and dimension checks --------------------

@pytest.mark.parametrize("n", [4, 1500])
def test_mask_assignment_checks(n):
    def cases(np):
        a = np.arange(n)
        yield lambda: a.__setitem__(a < -1, a)              # n values into 0
        yield lambda: a.__setitem__(a < 2, a)               # n values into 2
        yield lambda: a.__setitem__(a < 2, np.array([5, 6]))
        yield lambda: a.__setitem__(a < 2, np.array([5]))
        yield lambda: a.__setitem__(a < 2, np.array([[5, 6]]))
        yield lambda: a.__setitem__(a >= 0, a[::-1] * 2)    # one per True element
        yield lambda: a.__setitem__(a < 0, np.zeros(0, a.dtype))
        m = np.identity(2, dtype="int16")
        yield lambda: m.__setitem__(m < 0, m[::-1, :])
        yield lambda: m.__setitem__(m > 0, np.array([7, 8]))
        yield lambda: m.__setitem__(m > 0, np.array([7, 8, 9]))
        yield lambda: (a, m)
    for g, w in zip(cases(cp), cases(numpy)):
        want = outcome(w)
        got = outcome(g)
        if isinstance(want, type):
            assert got is want, (got, want)
        elif want is not None:
            for x, y in zip(got, want):
                same(x, y)


def test_matrix_power_one_is_the_array_itself():
    for lib in (numpy, cp):
        a = lib.eye(40) if lib is cp else numpy.eye(40)
        b = lib.linalg.matrix_power(a, 1)
        b += 2
        if lib is numpy:
            want = a
        else:
            same(a, want)


# -- @jit -----------------------------------------------------------------------

def test_jit_returns_namedtuples():
    x = numpy.arange(1600.0).reshape(40, 40) % 7 + numpy.eye(40) * 50

    @cp.jit
    def f(a):
        return cp.linalg.slogdet(a), cp.linalg.eigh(a)

    (sl, eh) = f(cp.asarray(x))
    want = numpy.linalg.slogdet(x)
    assert type(sl).__name__ == "SlogdetResult"
    same(sl.sign, want.sign)
    numpy.testing.assert_allclose(numpy.asarray(sl.logabsdet), want.logabsdet, rtol=1e-12)
    numpy.testing.assert_allclose(numpy.asarray(eh.eigenvalues),
                                  numpy.linalg.eigh(x).eigenvalues, rtol=1e-10)


# -- seed 0 findings, session 21 -----------------------------------------------

@pytest.mark.parametrize("dt", ["uint8", "uint16", "uint32", "uint64"])
def test_unsigned_power_with_large_exponents(dt):
    # exponents with the top bit set are large, not negative: the power
    # modulo 2**bits, as NumPy's repeated multiplication gives
    x = numpy.invert(numpy.arange(40, dtype=dt))
    same(cp.power(cp.asarray(x), cp.asarray(x)), numpy.power(x, x))
    same(cp.asarray(x) ** 3, x ** 3)


@pytest.mark.parametrize("dt", ["bool", "int8", "int16", "uint16", "int32",
                                "float16", "float32", "float64"])
def test_angle_dtype_follows_arctan2(dt):
    x = (numpy.arange(-3, 9) % 5).astype(dt)
    same(cp.angle(cp.asarray(x)), numpy.angle(x))
    same(cp.angle(cp.asarray(x), deg=True), numpy.angle(x, deg=True))


def test_complex_division_by_zero_and_expm1_of_infinities():
    with numpy.errstate(all="ignore"):
        z = numpy.array([2 + 0.25j, -1 - 3j, 0j, complex(numpy.inf, 0),
                         complex(1, numpy.inf), complex(numpy.nan, 1)] * 300)
        for d in (numpy.float32(-0.0), 0.0, -0.0j, 1e-300 + 1e300j, 3 - 4j):
            same(cp.true_divide(cp.asarray(z), d), numpy.true_divide(z, d))
        same(cp.asarray(z) / cp.asarray(z[::-1]), z / z[::-1])
        got, want = numpy.asarray(cp.expm1(cp.asarray(z))), numpy.expm1(z)
        assert got.dtype == want.dtype
        numpy.testing.assert_allclose(got, want, rtol=1e-14)  # NaN where NumPy's


def test_bool_cumsum_is_logical_or():
    a = numpy.array([[[False, False]], [[False, True]], [[True, True]]])
    a1 = a.reshape(1, -1, 3)
    for f in ("cumsum", "cumprod"):
        got = getattr(cp, f)(cp.asarray(a1), axis=2, dtype=bool)
        want = getattr(numpy, f)(a1, axis=2, dtype=bool)
        same(got, want)
        # the stored bools are 0 or 1: an op reading them agrees
        same(cp.maximum(got, False), numpy.maximum(want, False))
        same(cp.logical_xor(got, True), numpy.logical_xor(want, True))


def test_products_multiply_in_numpys_order():
    # a product that overflows before it meets a zero is NaN in NumPy (inf *
    # 0); one that meets the zero first stays 0: never reordered
    with numpy.errstate(all="ignore"):
        x = numpy.ones(64)
        x[1], x[0], x[16], x[32] = 0.0, 1e200, 1e200, 1e200
        same(cp.prod(cp.asarray(x)), numpy.prod(x))
        X = numpy.ones((2048, 3))
        X[1], X[0], X[700], X[1500] = 0.0, 1e200, 1e200, 1e200
        same(cp.prod(cp.asarray(X), axis=0), numpy.prod(X, axis=0))
        same(cp.prod(cp.asarray(X)), numpy.prod(X))
        r = numpy.random.default_rng(3)
        h = (r.integers(-32, 33, (2, 33, 31)) / 4).astype("float16")
        h[r.random(h.shape) < 0.1] = numpy.nan
        for axis in ((0, 1), (1,), None, (2,)):
            same(cp.nanprod(cp.asarray(h), axis=axis),
                 numpy.nanprod(h, axis=axis))


def test_searchsorted_with_huge_python_ints_and_float16_linalg():
    a = numpy.sort(numpy.arange(40.0, dtype=numpy.float32) - 20)
    for v in (2**64, -2**70, 2**63, 5):
        same(cp.searchsorted(cp.asarray(a), v), numpy.searchsorted(a, v))
    a16 = numpy.eye(3, dtype=numpy.float16) * 27
    raises_like(lambda m: m.linalg.solve(m.asarray(a16), m.ones(3)))


def test_complex_zero_to_powers_with_positive_real_part():
    w = numpy.array([1 + 1j, -1 + 1j, 1j, -1, 2, 0.5, -0.5j, 1 + 0j,
                     complex(numpy.inf, 0), complex(numpy.nan, 0)] * 200,
                    numpy.complex64)
    with numpy.errstate(all="ignore"):
        z = numpy.zeros_like(w)
        same(cp.power(cp.asarray(z), cp.asarray(w)), numpy.power(z, w))
        b = numpy.zeros((5, 1), bool)
        same(cp.power(cp.asarray(b), cp.asarray(w)), numpy.power(b, w))


@pytest.mark.parametrize("shape, axis", [((2, 0, 3), (0, 2)), ((2, 0, 3), (1, 2)),
                                         ((0, 3), (0, 1)), ((2, 0, 3), (0,)),
                                         ((0, 2, 3), (1, 2)), ((0,), None),
                                         ((2, 0), 1)])
def test_order_statistics_of_empty_arrays(shape, axis):
    a = numpy.ones(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (lambda m, x: m.median(x, axis=axis),
                  lambda m, x: m.quantile(x, 0.3, axis=axis),
                  lambda m, x: m.percentile(x, [10, 90], axis=axis),
                  lambda m, x: m.nanmedian(x, axis=axis),
                  lambda m, x: m.nanquantile(x, 0.3, axis=axis)):
            want = outcome(lambda: f(numpy, a))
            got = outcome(lambda: f(cp, cp.asarray(a)))
            if isinstance(want, type):
                assert got is want, (got, want)
            else:
                same(got, want)


@pytest.mark.parametrize("f", ["cumsum", "cumprod", "sort", "argsort"])
def test_results_along_an_outer_axis_are_c_contiguous(f):
    # NumPy's result is C-contiguous, so reshapes of it are views and writes
    # through them reach it (a transposed result made the reshape a copy)
    x = numpy.random.default_rng(0).permutation(33 * 33).astype(numpy.uint32)
    x = x.reshape(33, 33) % 4 + 1 if f.startswith("cum") else x.reshape(33, 33)
    got, want = getattr(cp, f)(cp.asarray(x), axis=0), getattr(numpy, f)(x, axis=0)
    assert got.flags.c_contiguous
    g = got.reshape(1, 3, 363).reshape(11, 3, 33)
    w = want.reshape(1, 3, 363).reshape(11, 3, 33)
    g[g > 2] = 7
    w[w > 2] = 7
    same(got, want)


def test_jit_stacks_that_share_their_first_row():
    a = numpy.array([-1, -7])

    def body(m, a0):
        a2 = m.stack([a0, a0], axis=0)
        a4 = a0 * -129
        a5 = m.stack([a0, a4], axis=0)
        return a2, a4, m.flip(a5, axis=-1)
    got = cp.jit(lambda a0: body(cp, a0))(cp.asarray(a))
    for g, w in zip(got, body(numpy, a)):
        same(g, w)


@pytest.mark.parametrize("dt", ["uint32", "int8", "float32", "bool", "complex64"])
def test_copyto_python_scalars_are_weak(dt):
    for v in (0, 5, -1, 2**40, 1.5, True, numpy.int64(3), 1j):
        got = outcome(lambda: cp.copyto(a := cp.zeros(3, dt), v) or a)
        want = outcome(lambda: numpy.copyto(b := numpy.zeros(3, dt), v) or b)
        if isinstance(want, type):
            assert got is want, (dt, v, got, want)
        else:
            same(got, want)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_round_and_rint_part_by_part(dt):
    z = numpy.array([complex(-numpy.inf, 0), complex(numpy.inf, 2.56),
                     complex(1.26, numpy.nan), complex(-numpy.inf, numpy.inf),
                     3.14159 - 2.71828j, 2.5 - 1.5j, -0.5 + 3.5j] * 100, dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # native: no fallback warning
        for d in (0, 1, 2, -1):
            same(cp.round(cp.asarray(z), d), numpy.round(z, d))
        same(cp.rint(cp.asarray(z)), numpy.rint(z))


def test_update_of_an_out_value_that_is_a_stored_product():
    x = numpy.array([[6, 4, 5], [6, 4, 8], [6, 5, 7]], dtype="uint32")
    res = []
    for m in (numpy, cp):
        a0 = m.asarray(x.copy())
        a1 = m.inner(a0, a0)
        m.maximum(a1, a1, out=a0, casting="unsafe")
        a0[::2, :] = 1
        res.append((numpy.asarray(a1), numpy.asarray(a0)))
    for g, w in zip(res[1], res[0]):
        same(g, w)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_integral_powers_multiply_as_numpy(dt):
    z = numpy.array([1j, 1 + 1j, -2 + 0.5j, complex(numpy.inf, 0), 0.3 - 0.7j,
                     3 + 4j, complex(0, numpy.inf)] * 50, dt)
    with numpy.errstate(all="ignore"):
        for w in (0, 1, 2, 3, 4, 5, -1, -2, -3, 7, 64, 99, -99, 1 + 0j, 2.0):
            same(cp.power(cp.asarray(z), w), numpy.power(z, w))
        f = z[numpy.isfinite(z)]
        for w in (2.5, 100, -100, 0.5j):  # exp(w log z): libm's rounding
            numpy.testing.assert_allclose(numpy.asarray(cp.power(cp.asarray(f), w)),
                                          numpy.power(f, w), rtol=1e-5)
        a = cp.asarray(numpy.array(1j, dt))
        a += a
        a **= 1 + 0j
        same(a, numpy.array(2j, dt))


@pytest.mark.parametrize("dt", ["uint16", "int64", "float32", "complex64"])
def test_jit_augmented_assignment_to_an_element(dt):
    # a[i, j] op= v is a[i, j] = a[i, j] op v with setitem's cast (the
    # element is a NumPy scalar), not an in-place ufunc on a 0-d array
    def body(a):
        a[0, 1] *= 3
        a[1, 0] += 2.5
        a[2, 2] -= 1
        return a
    x = numpy.arange(9, dtype=dt).reshape(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
        want = body(x.copy())
        same(cp.jit(body)(cp.asarray(x.copy())), want)
        same(body(cp.asarray(x.copy())), want)


def test_float16_scans_round_every_partial_result():
    r = numpy.random.default_rng(1)
    x = (r.integers(-32, 33, (2, 33, 31)) / 4).astype("float16")
    x[r.random(x.shape) < 0.05] = numpy.inf
    with numpy.errstate(all="ignore"):
        for f in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
            for ax in (0, 1, 2, None):
                same(getattr(cp, f)(cp.asarray(x), axis=ax), getattr(numpy, f)(x, axis=ax))
        for uf in ("add", "multiply"):
            same(getattr(cp, uf).accumulate(cp.asarray(-x), axis=1),
                 getattr(numpy, uf).accumulate(-x, axis=1))


def test_mask_assignment_to_a_0d_array_and_heaviside_weak_scalars():
    for v in (numpy.ones((4, 5)), numpy.ones(1), numpy.ones(3), 5, numpy.ones(0)):
        for fill in (True, False):
            def f(m):
                a = m.asarray(numpy.array(0.0))
                a[(a >= 0) if fill else (a > 0)] = v if not isinstance(
                    v, numpy.ndarray) else m.asarray(v)
                return a
            want, got = outcome(lambda: f(numpy)), outcome(lambda: f(cp))
            if isinstance(want, type):
                assert got is want, (v, fill, got, want)
            else:
                same(got, want)
    x = numpy.zeros((6, 0), numpy.float32)
    same(cp.heaviside(2147483647, cp.asarray(x)), numpy.heaviside(2147483647, x))
    y = numpy.array([-1.5, 0, 2], numpy.float16)
    same(cp.heaviside(cp.asarray(y), 0.5), numpy.heaviside(y, 0.5))


def test_complex_sinh_cosh_of_real_arguments():
    z = numpy.concatenate([numpy.arange(1089.0) - 500,
                           [numpy.inf, -numpy.inf, -0.0]]).astype(numpy.complex64)
    with numpy.errstate(all="ignore"):
        for f in ("sinh", "cosh"):
            for v in (z, z + numpy.complex64(-0.0j)):
                got = numpy.asarray(getattr(cp, f)(cp.asarray(v)))
                want = getattr(numpy, f)(v)
                numpy.testing.assert_allclose(got, want, rtol=1e-5)
                zero = want.imag == 0  # its sign too
                assert (numpy.signbit(got.imag[zero]) == numpy.signbit(want.imag[zero])).all()


def test_float16_matmul_sums_in_float32_and_heaviside_dtype():
    r = numpy.random.default_rng(0)
    a0 = (r.integers(-32, 33, (64, 32)) / 4).astype(numpy.float16) * 40
    with numpy.errstate(all="ignore"):
        a2 = a0 @ a0[::-1].T
        c2 = cp.asarray(a0) @ cp.asarray(a0)[::-1].T
        same(c2, a2)
        same(c2 @ c2.T[:, ::-2], a2 @ a2.T[:, ::-2])
        same(cp.matmul(cp.asarray(a0[:3]), cp.asarray(a0[:3].T)), a0[:3] @ a0[:3].T)
    x = numpy.array([[-1.5, 0, 2]])
    same(cp.heaviside(cp.asarray(x), 0.5, dtype="float16"),
         numpy.heaviside(x, 0.5, dtype="float16"))
