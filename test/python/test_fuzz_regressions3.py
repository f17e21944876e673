"""Regressions found by the differential fuzzer (tools/fuzz/cpnfuzz.py, the
findings of issue 20, seeds 101 and 202): each test compares cpnumeric with
NumPy on one behaviour. They pass with CPN_EAGER_THRESHOLD=0 (every op
traced) and 1024."""

import itertools
import warnings

import numpy
import pytest

import cpnumeric as cp
from test_fuzz_regressions import same

SPECIAL = [0.0, -0.0, 0.5, -1.0, 1.0, 3.0, -20.0, 30.0, 700.0, -800.0, 1e300,
           numpy.inf, -numpy.inf, numpy.nan]


def _close_or_same_nan(got, want, rtol):
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        assert (numpy.isnan(g) == numpy.isnan(w)).all(), (part, got, want)
        ok = ~numpy.isnan(w)
        numpy.testing.assert_allclose(g[ok], w[ok], rtol=rtol)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("f", ["sin", "cos", "sinh", "cosh", "tan", "tanh", "log1p",
                               "exp", "exp2", "log", "log2", "log10", "sqrt"])
def test_complex_functions_at_special_values(dt, f):
    # 202:2352: sin(0 + 1e300j) is infj (NumPy's -i sinh(iz)), was nan+infj;
    # 202:138: log1p(-1+0j) is -inf+0j (NumPy's log(hypot(x + 1, y))), was 0j;
    # 413:308: exp(-inf + nanj) is 0j (glibc's cexp), was nan+nanj, and
    # sqrt(-2+0j) had a rounding error for its real part 0.
    z = numpy.array([complex(a, b) for a, b in itertools.product(SPECIAL, SPECIAL)])
    z = numpy.tile(z, 8).astype(dt)  # 1568 elements: traced at 1024 too
    with numpy.errstate(all="ignore"):
        want = getattr(numpy, f)(z)
        got = numpy.asarray(getattr(cp, f)(cp.asarray(z)))
    assert got.dtype == want.dtype
    _close_or_same_nan(got, want, 1e-5 if dt == "complex64" else 1e-12)
    # Zero parts with NumPy's sign for finite arguments (csqrt(-0 + 0j) is
    # +0 + 0j; the compiled sqrt gave -0 + 0j: session 37). With an infinite
    # or NaN part C99 leaves some signs unspecified (ccosh(0 + i inf)).
    finite = numpy.isfinite(z)
    for part in ("real", "imag"):
        g, w = getattr(got, part)[finite], getattr(want, part)[finite]
        zero = w == 0
        assert (numpy.signbit(g[zero]) == numpy.signbit(w[zero])).all(), (f, part)


@pytest.mark.parametrize("n", [4, 1500])
def test_float16_sum_and_mean_cast_their_input_first(n):
    # 101:245: mean(dtype=float16) of float64 values beyond float16's range:
    # NumPy casts them to +-inf first (the loop's dtype), so -inf + inf is NaN.
    x = numpy.zeros(n)
    x[:4] = [-335544320.0, 54525952.0, -2.3283064365386963e-08, 128.0]
    y = numpy.arange(n, dtype=numpy.int64).reshape(-1, 2) * 37 - 500
    a, b = cp.asarray(x), cp.asarray(y)
    with numpy.errstate(all="ignore"):
        same(a.mean(axis=0, dtype="float16"), x.mean(axis=0, dtype="float16"))
        same(a.sum(dtype="float16"), x.sum(dtype="float16"))
        same(b.mean(axis=0, dtype="float16"), y.mean(axis=0, dtype="float16"))
        same(b.sum(axis=1, dtype="float16"), y.sum(axis=1, dtype="float16"))
        h = (y % 50).astype(numpy.float16)
        same(cp.asarray(h).mean(axis=0), h.mean(axis=0))
        same(cp.asarray(h).mean(axis=1, dtype="float16"), h.mean(axis=1, dtype="float16"))


VALUES = [-2, 2.5, [1, -2], 2**70, 1j, numpy.array([-3]), numpy.array([1], numpy.uint8),
          numpy.array(7), numpy.float64(-1.5), numpy.int64(3)]


@pytest.mark.parametrize("n", [12, 1500])
@pytest.mark.parametrize("how", ["putmask", "place", "put"])
def test_put_values_convert_as_numpy(how, n):
    # 202:1590: putmask(uint64 array, mask, -2) raises OverflowError in NumPy
    # (Python values are converted element by element; arrays cast unsafely).
    def run(m, v):
        a = m.ones(n, "uint64")
        try:
            if how == "putmask":
                m.putmask(a, a > 0, v)
            elif how == "place":
                m.place(a, a > 0, v)
            else:
                m.put(a, [0, 1], v)
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            return type(e)
        return numpy.asarray(a)

    for v in VALUES:
        want, got = run(numpy, v), run(cp, v)
        if isinstance(want, type):
            assert got is want, (v, got, want)
        else:
            same(got, want)


@pytest.mark.parametrize("dt", ["complex64", "complex128", "float32", "float64"])
def test_sign_at_special_values(dt):
    # 303:45: NumPy 2's complex sign is z/|z| with +-1 on the axis of an
    # infinite part (was NaN); 303:604: sign(-0.0) is +0.0 (was -0.0, so
    # x / sign(x) had the other infinity).
    v = SPECIAL
    if dt.startswith("complex"):
        z = numpy.array([complex(a, b) for a, b in itertools.product(v, v)])
    else:
        z = numpy.array(v)
    z = numpy.tile(z, 1500 // z.size + 1).astype(dt)
    with numpy.errstate(all="ignore"):
        want = numpy.sign(z)
        got = numpy.asarray(cp.sign(cp.asarray(z)))
    same(got, want)
    for part in ("real", "imag"):
        assert (numpy.signbit(getattr(got, part)) == numpy.signbit(getattr(want, part))).all()



@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_nan_to_num_of_complex_replaces_each_part(dt):
    # 303:1384: complex arrays were returned unchanged (inf+0j stayed inf).
    nan, inf = numpy.nan, numpy.inf
    z = numpy.tile(numpy.array([complex(inf, nan), complex(nan, -inf), 1 + 2j,
                                complex(-inf, 3)], dt), 400)
    for kw in ({}, {"nan": 1.5, "posinf": 7, "neginf": -7}):
        same(cp.nan_to_num(cp.asarray(z), **kw), numpy.nan_to_num(z, **kw))
    a = cp.asarray(z)
    assert cp.nan_to_num(a, copy=False) is a
    same(a, numpy.nan_to_num(z))


def test_ufunc_dtype_without_a_loop_is_a_type_error_before_the_int_check():
    # 303:1253: divide(x, 2**53 + 1, dtype=uint16): NumPy finds no loop
    # (TypeError) before converting the Python int (OverflowError for add).
    x = numpy.ones(1500)
    for f in ("true_divide", "add", "floor_divide"):
        def run(m):
            return getattr(m, f)(m.asarray(x), 9007199254740993, dtype="uint16")
        with pytest.raises(Exception) as want:
            run(numpy)
        with pytest.raises(type(want.value)):
            run(cp)


@pytest.mark.parametrize("dt", ["float64", "float32", "float16", "int64"])
def test_clip_with_scalar_bounds_keeps_numpys_zeros(dt):
    # 303:1298: clip(x, 0, -0.0) is 0.0 where x < 0 (NumPy's loop for scalar
    # bounds: lo > x ? lo : x, then hi < v ? hi : v), was -0.0.
    x = numpy.array([-4., 8., 0., -0., numpy.nan, 0.5, numpy.inf, -numpy.inf])
    if dt == "int64":
        x = numpy.array([-4, 8, 0, 3])
    x = numpy.tile(x, 200).astype(dt)
    for lo, hi in ((0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0), (1.0, 0.0),
                   (numpy.nan, 1.0), (0, 1), (numpy.float32(-1.5), 2),
                   (0, numpy.float64(-0.0)), (numpy.array(0.0), numpy.array(-0.0)),
                   (numpy.array(numpy.nan), 2)):
        with numpy.errstate(all="ignore"):
            want = numpy.clip(x, lo, hi)
            got = numpy.asarray(cp.clip(cp.asarray(x), lo, hi))
        same(got, want)
        assert (numpy.signbit(got) == numpy.signbit(want)).all(), (lo, hi)


def test_read_only_out_is_checked_before_the_output_cast():
    # 303:3191: subtract(int64, 300, out=read-only bool view): NumPy's
    # ValueError (read-only) comes before its casting TypeError.
    def run(m):
        v = m.broadcast_to(m.asarray(numpy.ones(1500, bool)), (2, 1500))
        m.subtract(m.asarray(numpy.arange(1500)), 300, out=v)
    with pytest.raises(ValueError, match="read-only"):
        run(numpy)
    with pytest.raises(ValueError, match="read-only"):
        run(cp)


@pytest.mark.parametrize("how", ["add.at", "put"])
def test_jit_in_place_call_on_a_copy_leaves_the_original(how):
    # 303:1271 (jit): a5 = a4.copy(); np.add.at(a5, ...); +a4 saw the
    # update: canonicalize folded the copy and the call wrote into the buffer
    # of a4's stored value.
    def body(m, a1):
        a4 = a1 * 2
        a5 = a4.copy()
        if how == "add.at":
            m.add.at(a5, [0, 0, -1], 3)
        else:
            m.put(a5, [0], 7)
        return a5, +a4, a4
    x = numpy.arange(1500)
    want = body(numpy, x)
    got = cp.jit(lambda a1: body(cp, a1))(cp.asarray(x))
    for g, w in zip(got, want):
        same(g, w)


@pytest.mark.usefixtures("baseline")  # conftest.py
def test_baseline_max_over_an_empty_axis_with_initial():
    # 303:2484: norm(zeros((6, 0)), 1) is max(..., initial=0) over an empty
    # axis; the baseline tier's NumPy max raised at the next sync, in an
    # unrelated array's window.
    x = numpy.ones((6, 0))
    a = cp.asarray(x)
    b = cp.ones((3, 700), dtype="int16")
    r = cp.linalg.norm(a, 1)
    assert b.tolist() == numpy.ones((3, 700), "int16").tolist()
    same(r, numpy.linalg.norm(x, 1))
    for dt in ("float32", "int16", "uint8", "bool"):
        y = numpy.zeros((4, 0), dt)
        same(cp.max(cp.asarray(y), axis=1, initial=0 if dt != "bool" else False),
             numpy.max(y, axis=1, initial=0 if dt != "bool" else False))
        same(cp.min(cp.asarray(y), axis=1, initial=5 if dt != "bool" else True),
             numpy.min(y, axis=1, initial=5 if dt != "bool" else True))


def test_jit_power_into_an_element_is_a_scalar_power():
    # 303:3681 (jit): `a4[-1] **= np.uint64(3)` on a bool array is NumPy's
    # scalar power then a cast into the element, not an in-place power.
    def body(m, a4):
        a4 = a4 >= 2.0
        a4[-1] **= m.uint64(3)
        b = a4.astype(float)
        b[0] **= 2
        return a4, b
    x = numpy.arange(1500.0)
    want = body(numpy, x)
    got = cp.jit(lambda a: body(cp, a))(cp.asarray(x))
    for g, w in zip(got, want):
        same(g, w)


@pytest.mark.parametrize("dt", ["uint16", "float64"])
def test_jit_library_call_does_not_see_a_later_update_of_its_operand(dt):
    # 407:337 (jit): the masked update of a4 was fused into the loop that
    # computes a2 == a4, before the argsort, and bufferized into the buffer
    # of a4 (a take's result) that the argsort reads directly: the argsort
    # sorted the updated values.
    def body(m, a2):
        a4 = a2[m.array([0, 0, 0, -1])]
        a9 = a2 == a4
        a14 = a4.argsort(axis=None, kind="stable")
        a4[a9] = 1
        return a9, a14, a4
    x = numpy.array([[1, 0, 5, 5, 4]], dtype=dt)
    want = body(numpy, x.copy())
    got = cp.jit(lambda a: body(cp, a))(cp.asarray(x))
    for g, w in zip(got, want):
        same(g, w)


def test_complex_power_overflowing_to_a_real_infinity():
    # 410:132: 1e10 ** 1e10 in complex128 is inf+0j in NumPy (glibc's
    # cexp(w clog z)); complex.pow's lowering gave inf+nanj.
    for z, w in [(1e10 + 0j, 1e10 + 0j), (400 + 0j, 400 + 0j), (-3 + 0j, 0.5 + 0j),
                 (2 + 3j, 2.5 + 1j), (1e300 + 1e300j, 1.5 + 0j)]:
        # Above the eager threshold, so that the compiled kernel computes it.
        a, b = numpy.full(40000, z), numpy.full(40000, w)
        with numpy.errstate(all="ignore"):
            want = numpy.power(a, b)
            got = cp.power(cp.asarray(a), cp.asarray(b))
            same(got, want)
            c = cp.asarray(a)
            c **= cp.asarray(b)
            same(c, want)


@pytest.mark.parametrize("jit", [False, True])
def test_complex_power_with_an_infinite_real_part(jit):
    # 413:308: z ** z of complex64 with z = -inf + 3j is 0j in NumPy
    # (cexp(-inf + nan j) of glibc's cpow); the compiled kernel gave nan+nanj.
    inf = numpy.inf
    z = numpy.array([complex(-inf, 3), complex(inf, 3), complex(-inf, -2.5),
                     complex(inf, 0), complex(-inf, 0), complex(2, 0.5)] * 7000,
                    numpy.complex64)

    def body(a):
        a **= a
        return a
    with numpy.errstate(all="ignore"):
        want = body(z.copy())
        got = (cp.jit(body) if jit else body)(cp.asarray(z))
        _close_or_same_nan(numpy.asarray(got), want, 1e-5)


def test_complex_log_and_sqrt_near_the_unit_circle_and_the_largest_float():
    rng = numpy.random.default_rng(5)
    th = rng.uniform(0, 6.3, 40000)
    near = numpy.exp(1j * th) * (1 + rng.standard_normal(40000) * 1e-9)
    huge = (rng.standard_normal(40000) + 1j * rng.standard_normal(40000)) * 1e307
    for z in (near, huge):
        for f, tol in (("log", 4e-15), ("sqrt", 4e-16)):
            want = getattr(numpy, f)(z)
            got = numpy.asarray(getattr(cp, f)(cp.asarray(z)))
            err = numpy.abs(got - want) / numpy.abs(want)
            assert err.max() < tol, (f, err.max())


@pytest.mark.parametrize("shape", [(3, 4), (5,), (2, 3, 4), (2, 0, 3), (300, 400)])
def test_argwhere_and_nonzero_have_numpys_layout(shape):
    # 413:640: argwhere's result is the transpose of an (ndim, count) array in
    # NumPy, so its reshape copies; cpnumeric's was C-contiguous and a write
    # through the reshape changed it. nonzero's are columns of one array.
    x = numpy.random.default_rng(0).integers(0, 2, shape)
    a = cp.asarray(x)
    got, want = cp.argwhere(a), numpy.argwhere(x)
    same(got, want)
    if want.size:
        assert got.strides == want.strides
    r, rn = got.reshape(-1), want.reshape(-1)
    if r.size:
        r[0], rn[0] = 99, 99
    same(got, want)
    for g, w in zip(cp.nonzero(a), numpy.nonzero(x)):
        same(g, w)
        if w.size:
            assert g.strides == w.strides


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_multiply_is_numpys_fused_array_loop(dt):
    # 412:543: (2.4e213 - 3.1e213j) ** 2 by multiply is -inf-infj in NumPy's
    # array loop (fmaddsub: fma(a, c, -bd)), was nan-infj (ac - bd = inf - inf).
    inf, nan = numpy.inf, numpy.nan
    parts = [0.0, -0.0, 1.5, -2.0, inf, -inf, nan, 3e200, -2.5e200, 1e-200,
             3e30, -2e30, 1.7e308]
    vals = numpy.array([complex(a, b) for a, b in itertools.product(parts, parts)])
    with numpy.errstate(all="ignore"):
        x = numpy.repeat(vals, len(vals)).astype(dt)
        y = numpy.tile(vals, len(vals)).astype(dt)
        for want, got in [(x * y, cp.asarray(x) * cp.asarray(y)),
                          (numpy.square(x), cp.square(cp.asarray(x)))]:
            # (NumPy's loop for other strides is unfused: a complex64
            # x[::-3] * y[::-3] differs from its contiguous product there)
            got = numpy.asarray(got)
            for p in ("real", "imag"):
                g, w = getattr(got, p), getattr(want, p)
                assert ((numpy.isnan(g) & numpy.isnan(w)) | (g == w)).all(), p


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("f", ["minimum", "maximum", "fmin", "fmax"])
def test_min_max_of_signed_zeros_and_nans_pick_numpys_operand(dt, f):
    # 414:516: minimum(0.0, -0.0) of float16 is 0.0 in NumPy (its half loop
    # keeps the first operand on a tie), of float32/float64 -0.0 (the second:
    # its SIMD min/max); cpnumeric's IEEE minimum gave -0.0 for every dtype.
    inf, nan = numpy.inf, numpy.nan
    p = [0.0, -0.0, nan, 1.0, -inf]
    x = numpy.array([u for u, v in itertools.product(p, p)] * 40, dt)
    y = numpy.array([v for u, v in itertools.product(p, p)] * 40, dt)
    for a, b in [(x, y), (x[::-3], y[::-3])]:
        want = getattr(numpy, f)(a, b)
        got = numpy.asarray(getattr(cp, f)(cp.asarray(a), cp.asarray(b)))
        assert (numpy.signbit(got) == numpy.signbit(want)).all()
        assert ((got == want) | (numpy.isnan(got) & numpy.isnan(want))).all()


@pytest.mark.parametrize("jit", [False, True])
def test_assignment_drops_the_values_leading_unit_axes(jit):
    # 415:1854 (jit): np.copyto(a1, a2) of a (1, 1) a2 into a (1,) a1 raised
    # "could not broadcast"; NumPy's assignment drops leading unit axes.
    def body(m, x):
        a = m.zeros((2, 3))
        a[...] = x
        b = m.zeros(3)
        m.copyto(b, x[:, :, :1, :])
        c = m.ones((1,))
        m.copyto(c, m.ones((1, 1)) * 9)
        return a, b, c
    x = numpy.arange(6.0).reshape(1, 1, 2, 3)
    want = body(numpy, x)
    f = cp.jit(lambda v: body(cp, v)) if jit else (lambda v: body(cp, v))
    for g, w in zip(f(cp.asarray(x)), want):
        same(g, w)


def test_zero_d_integer_array_key_gives_a_copy():
    # 500:8506, 500:12175: a[np.array(-2)] of a 3-D array is advanced
    # indexing in NumPy (a copy); cpnumeric gave a view, and `v /= 2` then
    # changed a.
    a0, a = numpy.ones((2, 3, 4)), cp.ones((2, 3, 4))
    for key in [lambda m: m.array(-2), lambda m: (m.array(1), 2),
                lambda m: (0, slice(1, None), m.array(-1))]:
        v0, v = a0[key(numpy)], a[key(cp)]
        v0 *= 3
        v *= 3
        same(a, a0)
        same(v, v0)
    assert type(a[cp.array(1), cp.array(1), cp.array(1)]) is numpy.float64


@pytest.mark.parametrize("key", [2 ** 63, 2 ** 64, -2 ** 63 - 1, "u8", "u8-0d"])
def test_integer_index_outside_int64_raises_numpys_error(key):
    # 500:6104: NumPy raises OverflowError for indices in [2**63, 2**64)
    # (it tries an unsigned long) and IndexError beyond; cpnumeric raised
    # IndexError "out of bounds" for all.
    def k(m):
        if key == "u8":
            return numpy.uint64(2 ** 63 + 5)
        if key == "u8-0d":
            return m.array(2 ** 63 + 5, dtype="uint64")
        return key
    for shape in [(3,), (2, 3)]:
        with pytest.raises(Exception) as want:
            numpy.ones(shape)[k(numpy)]
        with pytest.raises(want.type):
            cp.ones(shape)[k(cp)]


def test_empty_view_of_a_read_only_array_stays_read_only():
    # 500:13271: np.positive(a, out=a) for a = broadcast_to(...).T of an
    # empty eager array did not raise NumPy's "output array is read-only".
    for x in [cp.broadcast_to(cp.zeros((6, 0)), (3, 6, 0)).T,
              cp.broadcast_to(cp.zeros((6, 0)), (3, 6, 0))[1:],
              cp.broadcast_to(cp.ones(3), (2, 3)).T]:
        with pytest.raises(ValueError, match="read-only"):
            cp.positive(x, out=x)


@pytest.mark.parametrize("f", ["log", "log2", "log10", "log1p"])
def test_complex_log_of_constant_zeros(f):
    # 500:15280: log2(zeros(4, bool) > 0, dtype=complex64) is -inf+0j; the
    # kernel's input was a constant, and MLIR folds math.atan2(0, 0) to NaN.
    for dt in ("complex64", "complex128"):
        z = numpy.zeros(4, bool)
        want = getattr(numpy, f)(z > z, dtype=dt)
        a = cp.asarray(z)
        got = getattr(cp, f)(a > a, dtype=dt)
        same(got, want)
        for v in (complex(-0.0, 0.0), complex(-0.0, -0.0), complex(0.0, -0.0)):
            x = numpy.full(4, v, dt) - (1 if f == "log1p" else 0)
            with numpy.errstate(all="ignore"):
                w = getattr(numpy, f)(x)
                g = numpy.asarray(getattr(cp, f)(cp.full(4, v, dt) - (1 if f == "log1p" else 0)))
            assert numpy.array_equal(numpy.signbit(g.imag), numpy.signbit(w.imag))
            numpy.testing.assert_allclose(g.imag, w.imag, rtol=1e-6)


@pytest.mark.parametrize("f", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ufuncs_refuse_python_ints_outside_int64(f):
    # 500:9834, 500:16503: NumPy's logical loops take a Python int as a C
    # long: OverflowError for 2**63 and beyond; cpnumeric computed.
    a = cp.ones(3, "float32")
    for v in (2 ** 63, 2 ** 64, -2 ** 63 - 1):
        with pytest.raises(OverflowError):
            getattr(numpy, f)(numpy.ones(3, "float32"), v)
        with pytest.raises(OverflowError):
            getattr(cp, f)(a, v)
    same(getattr(cp, f)(a, 2 ** 62), getattr(numpy, f)(numpy.ones(3, "float32"), 2 ** 62))


@pytest.mark.parametrize("args", [(0, -4, -0.5), (0, -3), (0.0, -2.0, -1), (0, 4, 0.5),
                                  (0, -1e-3, -1e-4), (5, 0, -1)])
def test_arange_starting_at_zero_with_a_negative_step(args, eager0):
    # 604:545: arange(0, -4, -0.5) began with -0.0 (0 * -0.5, the +0 start
    # not added), so 3.25 / a began with -inf; NumPy's is +0.0.
    got, want = cp.arange(*args), numpy.arange(*args)
    g = numpy.asarray(got)
    assert g.dtype == want.dtype
    numpy.testing.assert_array_equal(g, want)
    assert (numpy.signbit(g) == numpy.signbit(want)).all()


def test_copyto_checks_in_numpys_order():
    # 600:4576: a read-only destination is a ValueError before the casting
    # check's TypeError; a Python int out of bounds is an OverflowError first.
    def outcomes(m):
        ro16 = m.broadcast_to(m.zeros(2, m.float16), (1, 2))
        ro8 = m.broadcast_to(m.zeros(2, m.uint8), (1, 2))
        cases = [(ro16, numpy.complex64(-1)), (ro16, 1j), (ro16, -1), (ro8, -1),
                 (ro8, 300), (ro8, 1.5), (m.zeros(2, m.uint8), 1.5),
                 (m.zeros(2, m.float16), 1j), (m.zeros(2, m.float16), numpy.complex64(1)),
                 (ro16, m.zeros(2, m.complex64))]
        out = []
        for d, v in cases:
            try:
                m.copyto(d, v)
                out.append("ok")
            except Exception as e:  # noqa: BLE001 - the type is compared
                out.append(type(e).__name__)
        return out
    with numpy.errstate(all="ignore"):
        assert outcomes(cp) == outcomes(numpy)


def test_copyto_between_the_same_empty_read_only_elements():
    # 700:15147: d = a.diagonal(-1) of a (1, 1) array is empty and read-only;
    # np.copyto(d, d[:]) copies nothing in NumPy (the same memory). Eager
    # views of no elements were fresh buffers, so NumPy saw two arrays and
    # raised for the read-only destination.
    for m in (numpy, cp):
        d = m.sort(m.zeros((1, 1)), axis=-1).diagonal(-1)
        m.copyto(d, d[:])
    d = cp.zeros((3, 3)).diagonal()
    cp.copyto(d, d[:])
    with pytest.raises(ValueError, match="read-only"):
        cp.copyto(d, d[::-1])


@pytest.mark.parametrize("dt,e", [("int8", -129), ("int8", -1), ("uint8", -1),
                                  ("int8", 200), ("int16", -129), ("uint8", 300)])
def test_integer_power_checks_the_python_int_first(dt, e):
    # 700:6017: a **= -129 on int8 is NumPy's OverflowError (-129 does not
    # fit int8) before the negative-power ValueError.
    def outcome(m, inplace):
        a = m.ones(3, dtype=dt)
        try:
            if inplace:
                a **= e
            else:
                m.power(a, e)
            return "ok"
        except Exception as ex:  # noqa: BLE001 - the type is compared
            return type(ex).__name__
    for inplace in (True, False):
        assert outcome(cp, inplace) == outcome(numpy, inplace)


def test_a_sorted_copy_of_an_array_whose_buffer_an_output_takes(eager0):
    # 700:8531 (eager 0): a0 = a0.copy(); a0.sort() with a0's old value
    # dead: its buffer was donated to a same-typed output of the window
    # (a1.astype(int8)), and the sort, reading the copy that folded to the
    # old value, read that output instead (all zeros).
    def program(m):
        a0 = m.array([8, 6, 3, 7], dtype="int8")
        a2 = m.less(a0, a0).astype("int8")
        a0 = a0.copy()
        a0.sort(axis=-1)
        return numpy.asarray(a0), numpy.asarray(a2)
    for g, w in zip(program(cp), program(numpy)):
        numpy.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("v", [2 ** 70, -2 ** 70, 2 ** 63, 5])
@pytest.mark.parametrize("dtype", [None, "bool", "float64", "int64"])
def test_ufunc_dtype_with_a_python_int_beyond_c_long(v, dtype):
    # 720:17256: np.minimum(int64_array, 2**70, dtype='bool') is NumPy's
    # OverflowError (the int as a C long) before the casting check.
    def outcome(m):
        try:
            m.minimum(m.arange(5), v, **({} if dtype is None else {"dtype": dtype}))
            return "ok"
        except Exception as ex:  # noqa: BLE001 - the type is compared
            return "TypeError" if isinstance(ex, TypeError) else type(ex).__name__
    assert outcome(cp) == outcome(numpy)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_absolute_of_an_infinite_part_beside_a_nan(dt, eager0):
    # 730:1471 (eager 0): |inf + nan i| is +inf (C99's hypot, NumPy's);
    # the complex dialect's abs gave NaN.
    inf, nan = numpy.inf, numpy.nan
    got, want = _unary_of(numpy.array(
        [complex(inf, nan), complex(nan, -inf), complex(-inf, 0),
         complex(nan, 1), 3 + 4j, complex(0, -inf)] * 3, dtype=dt), "absolute")
    numpy.testing.assert_array_equal(got, want)


def _unary_of(z, name):
    """cpnumeric's and NumPy's `name`(z) (NumPy arrays; errors ignored)."""
    with numpy.errstate(all="ignore"):
        return (numpy.asarray(getattr(cp, name)(cp.asarray(z))),
                getattr(numpy, name)(z))


@pytest.mark.parametrize("f", ["mean", "var", "std", "nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("dt", ["float16", "float32", "complex64"])
def test_means_of_more_elements_than_float16_holds(f, dt):
    # 740:9369: a float16 variance of 1100 x 1100 elements was NaN; its
    # count, divided as a float16, is inf past 65504 (NumPy divides a sum
    # by an intp count in float64 and casts back).
    x = ((numpy.arange(100000) % 7) / 8).astype(dt)
    x[5] = numpy.nan if f.startswith("nan") else x[5]
    with numpy.errstate(all="ignore"):
        want = getattr(numpy, f)(x)
        got = numpy.asarray(getattr(cp, f)(cp.asarray(x)))
        got_ddof = numpy.asarray(getattr(cp, f)(cp.asarray(x), ddof=1)) \
            if "var" in f or "std" in f else None
    assert got.dtype == numpy.asarray(want).dtype
    numpy.testing.assert_allclose(got, want, rtol=2e-3)
    if got_ddof is not None:
        numpy.testing.assert_allclose(got_ddof, getattr(numpy, f)(x, ddof=1), rtol=2e-3)


def test_a_computed_float_scalar_into_an_integer_element_raises_as_numpy(eager0):
    # 740:10583 (eager 0): a 0-d float or complex result assigned into an
    # integer array converts as NumPy's scalar: OverflowError past int64,
    # ValueError for NaN (it was cast, wrapping).
    a = cp.zeros(3, "int64")
    big = cp.asarray(numpy.array([-9.2e18], "complex64")).reshape(()) * 2
    with pytest.raises(OverflowError), numpy.errstate(all="ignore"):
        a[-1] = big
    with pytest.raises(ValueError):
        a[0] = cp.sum(cp.asarray(numpy.array([numpy.nan, 1.0])))
    a[1] = cp.sum(cp.asarray(numpy.array([2.5, 1.0])))  # in range: truncated
    assert numpy.asarray(a).tolist() == [0, 3, 0]


@pytest.mark.parametrize("x1, x2", [(2 ** 70, [-4.75]), ([-4.75, 0.0, 2.0], 2 ** 70),
                                    (3, [1.5]), ([0.0, numpy.nan], 2)])
def test_heaviside_of_a_python_int_beyond_int64(x1, x2, eager0):
    # 750:15237 (eager 0): heaviside(2**70, float array) converts the int to
    # the float loop's dtype (it became an object array: TypeError).
    def args(m):
        return [m.asarray(v) if isinstance(v, list) else v for v in (x1, x2)]
    want = numpy.heaviside(*args(numpy))
    got = cp.heaviside(*args(cp))
    assert got.dtype == want.dtype
    numpy.testing.assert_array_equal(numpy.asarray(got), want)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_reciprocal_is_numpys_loop(dt, eager0):
    # 770:6356 (eager 0): reciprocal(0j) is nan+nanj in NumPy (its loop
    # scales by the larger part); 1 / z gave inf+nanj.
    inf, nan = numpy.inf, numpy.nan
    got, want = _unary_of(numpy.array(
        [0j, complex(-0.0, 0), complex(inf, 0), complex(0, inf), complex(inf, inf),
         complex(nan, 0), 1 + 2j, 3 - 1j, complex(1e-310, 0), -2 + 0j] * 4,
        dtype=dt), "reciprocal")
    numpy.testing.assert_array_equal(got, want)
    numpy.testing.assert_array_equal(numpy.signbit(got.imag), numpy.signbit(want.imag))


@pytest.fixture(params=[1024, 0], ids=["eager", "traced"])
def eager_threshold(request):
    """The test once with small arrays eager (threshold 1024), once traced."""
    from cpnumeric import _core
    old, _core.EAGER["threshold"] = _core.EAGER["threshold"], request.param
    yield request.param
    _core.EAGER["threshold"] = old


_ZERO_D = {
    "array of 2**63": lambda m: m.array(2 ** 63),
    "array of 1e300": lambda m: m.array(1e300),
    "array of NaN": lambda m: m.array(numpy.nan),
    "array of -1.5": lambda m: m.array(-1.5),
    "ufunc of 0-d arrays, inf": lambda m: m.array(1e308) * m.array(10.0),
    "ufunc of 0-d arrays, NaN": lambda m: m.array(numpy.inf) - m.array(numpy.inf),
    "ufunc of 0-d uint64 past int64": lambda m: m.array(2 ** 63) + m.array(numpy.uint64(1)),
    "NumPy scalar past int64": lambda m: numpy.uint64(2 ** 63),
    # 800:12355: a keepdims reduction squeezed is a 0-d array (cast)
    "squeezed keepdims sum": lambda m: m.squeeze(
        m.array([[2 ** 14, 3]], dtype="int64").sum(keepdims=True)),
    "sum past int8": lambda m: m.array([2 ** 14, 3], dtype="int64").sum(),
    "mean NaN": lambda m: m.array([numpy.nan, 1.0]).mean(),
}


@pytest.mark.parametrize("name", sorted(_ZERO_D))
def test_a_0d_array_is_cast_and_a_scalar_converts_into_integers(name, eager_threshold):
    # 790:2355: np.array(2**63) (a 0-d array) assigned into an int64 array
    # is cast as NumPy casts arrays (wraps); a value NumPy gives as a scalar
    # (a ufunc of 0-d operands, a reduction) converts as int() does:
    # OverflowError, ValueError for NaN. The 0-d array raised OverflowError.
    # Eager (threshold 1024) and traced (0).

    def run(m, dt, key):
        a = m.zeros(5, dt)
        try:
            a[key] = _ZERO_D[name](m)
        except (OverflowError, ValueError) as e:
            return type(e).__name__
        return numpy.asarray(a)

    with numpy.errstate(all="ignore"):
        v = numpy.asarray(_ZERO_D[name](numpy))
        for dt in ("int64", "int32", "uint8", "float32", "bool"):
            for key in (1, slice(None), Ellipsis, (1,)):
                got, want = run(cp, dt, key), run(numpy, dt, key)
                assert type(got) is type(want), (dt, key, got, want)
                t = numpy.dtype(dt)
                # A float outside the integer type: C leaves the value
                # undefined (NumPy gives x86's); ints wrap, defined.
                defined = t.kind in "fb" or v.dtype.kind in "iu" or (
                    numpy.isfinite(v) and numpy.iinfo(t).min <= numpy.trunc(v.real)
                    <= numpy.iinfo(t).max)
                if isinstance(want, numpy.ndarray) and defined:
                    numpy.testing.assert_array_equal(got, want, err_msg=f"{dt} {key}")


def test_unsigned_exponents_cast_negative_by_the_loop_raise(eager_threshold):
    # 800:4012: power(u64, u64, dtype='int64') reads the exponents as int64:
    # 2**64 - 1 is -1 there, and NumPy raises ValueError; the check looked
    # at the operand's unsigned dtype and let it through.
    big = numpy.array([2, 0, 2 ** 64 - 1, 1], dtype=numpy.uint64)
    for m in (numpy, cp):
        with pytest.raises(ValueError, match="negative integer powers"):
            numpy.asarray(m.power(m.asarray(big), m.asarray(big), dtype="int64"))
    small = numpy.array([2, 0, 3, 1], dtype=numpy.uint64)
    want = numpy.power(big, small, dtype="int64")
    got = cp.power(cp.asarray(big), cp.asarray(small), dtype="int64")
    numpy.testing.assert_array_equal(numpy.asarray(got), want)
    want = numpy.power(numpy.int8(3), small.astype(numpy.uint8))  # int16 loop
    numpy.testing.assert_array_equal(
        numpy.asarray(cp.power(numpy.int8(3), cp.asarray(small.astype(numpy.uint8)))),
        want)


def test_baseline_bitcast_of_a_0d_value_stays_0d(baseline):
    # 810:18258: the baseline tier's bitcast went through ascontiguousarray,
    # which makes a 0-d array (1,); the negation after it then failed to
    # write its 0-d output ("non-broadcastable output operand").
    x = numpy.array(-9.2e18, dtype=numpy.float32)
    a = cp.asarray(x)
    b = a.view("int32")
    t = cp.tile(b, 2)
    n = -b
    assert numpy.asarray(n).shape == ()
    assert int(n) == int(-x.view(numpy.int32))
    numpy.testing.assert_array_equal(numpy.asarray(t), numpy.tile(x.view(numpy.int32), 2))


def test_imag_of_a_real_array_keeps_its_layout(eager_threshold):
    # 810:14767: np.imag of a real array is read-only zeros in the array's
    # own layout (order 'K'), so a reshape of it for a transposed array
    # copies and the copy is writeable (it was a read-only view: `+=` on it
    # raised "output array is read-only").
    x = numpy.arange(2100, dtype=numpy.float16).reshape(3, 700)
    for m in (numpy, cp):
        im = m.imag(m.asarray(x).T)
        assert not im.flags.writeable
        r = m.reshape(im, (3, 50, 14))
        assert r.flags.writeable
        r += 1
        assert float(r.sum()) == 2100.0
        assert im.strides == numpy.imag(x.T).strides


def test_ravel_of_a_same_size_complex_view_is_a_view(eager_threshold):
    # 810:19321: float64.view('complex64') is C-contiguous as NumPy's (each
    # element one base element's bits), so ravel/reshape of it are views
    # that see later writes to the base (ravel copied: stale values).
    out = []
    for m in (numpy, cp):
        a = m.asarray(numpy.sinh(numpy.arange(-6.0, 0.0).reshape(3, 1, 2)))
        v = a.view("complex64")
        assert v.flags.c_contiguous
        r, k = v.ravel(), v.ravel(order="K")
        m.reshape(a, (3, 1, -1))[[-2, 0]] = 1.5
        out.append((numpy.asarray(r), numpy.asarray(k)))
    for got, want in zip(out[1], out[0]):
        numpy.testing.assert_array_equal(got, want)


def test_searchsorted_of_a_huge_int_in_a_complex_array(eager_threshold):
    # 820:16558: an int outside int64/uint64 is compared by NumPy as a
    # Python object: against real elements exactly (the float stand-in
    # gives the same positions), against complex ones a TypeError.
    for dt in ("float64", "uint8", "bool"):
        a = numpy.array([0, 1, 1], dt)
        for v in (2**64, -2**64):
            assert int(cp.searchsorted(cp.asarray(a), v)) == numpy.searchsorted(a, v)
    a = numpy.array([1 + 0j, 2])
    with pytest.raises(TypeError):
        numpy.searchsorted(a, 2**64)
    with pytest.raises(TypeError):
        cp.searchsorted(cp.asarray(a), 2**64)


@pytest.mark.parametrize("acc", ["minimum", "add", "maximum", "logical_or"])
def test_accumulate_of_a_transposed_array_keeps_its_layout(eager_threshold, acc):
    # 830:2893: ufunc.accumulate of a transposed array has NumPy's order 'K'
    # layout (as cumsum already had), so a C-order reshape of it copies and
    # a later write to the result does not reach the reshaped copy.
    x = numpy.arange(11 * 13 * 17.0).reshape(11, 13, 17) % 5
    if acc == "logical_or":
        x = x > 2
    out = []
    for m in (numpy, cp):
        r = getattr(m, acc).accumulate(m.asarray(x).T, axis=2)
        flat = m.reshape(r, (-1, 2431))
        flat[...] = 0
        r[-3::2] = 1
        out.append((r.strides, numpy.asarray(flat)))
    assert out[0][0] == out[1][0]
    numpy.testing.assert_array_equal(out[1][1], out[0][1])


@pytest.mark.parametrize("key", [(5, 0), 7, (slice(None), 9), (Ellipsis, slice(None, None, -1), 99),
                                 "array"])
def test_read_only_before_the_key(eager_threshold, key):
    # 840:19275, 840:19512: NumPy checks that the destination is writeable
    # before it reads the key: an out-of-bounds key into a broadcast view
    # is a ValueError (read-only), not an IndexError.
    for m in (numpy, cp):
        x = m.broadcast_to(m.arange(3.0), (2, 3))
        k = m.asarray([7]) if key == "array" else key
        with pytest.raises(ValueError, match="read-only"):
            x[k] = 1


@pytest.mark.parametrize("dt", ["uint16", "int32", "float32"])
def test_scan_in_place_beside_a_twin_of_its_input(dt, eager0):
    # 890:515: cumsum's cast of `a` and the index cast of `a.T` were the same
    # op once lowered; the scan ran in place in its output, CSE merged the
    # two casts, and the index read the scanned values (IndexError).
    a0n = numpy.ones((3, 3), dtype=dt)
    a0 = cp.asarray(a0n)
    a1 = cp.cumsum(a0, axis=-1)
    idx = cp.moveaxis(a0, 1, 0).astype(numpy.intp)
    same(a1[idx], numpy.cumsum(a0n, axis=-1)[numpy.moveaxis(a0n, 1, 0)
                                              .astype(numpy.intp)])
    b = cp.add.accumulate(cp.ones((3, 3), dtype="uint16"), axis=-1)
    c = b[cp.moveaxis(cp.ones((3, 3), dtype="uint16"), 1, 0)]
    want = numpy.add.accumulate(numpy.ones((3, 3), numpy.uint16), axis=-1)
    same(c, want[numpy.ones((3, 3), numpy.uint16)])


@pytest.mark.parametrize("dt", ["uint32", "int8", "bool"])
def test_fix_and_copies_of_a_transposed_integer_array_keep_its_layout(dt, eager0):
    # 1010:1967: np.fix of an integer array is NumPy's ceil/floor, a ufunc
    # result in the operand's layout (order K); a C-ordered copy made
    # reshape(-1, 7, 4) of it a view, and writes through that view changed it.
    import copy
    base = (numpy.arange(2100) % 9).astype(dt).reshape(3, 700)
    for f in (lambda m, a: m.fix(a), lambda m, a: copy.copy(a), lambda m, a: copy.deepcopy(a)):
        ref = f(numpy, base.T)
        got = f(cp, cp.asarray(base).T)
        assert got.flags["F_CONTIGUOUS"] == ref.flags["F_CONTIGUOUS"]
        r14, g14 = ref.reshape(-1, 7, 4), got.reshape(-1, 7, 4)
        r14[5:80] = 1
        g14[5:80] = 1
        same(got, ref)


def test_real_if_close_is_a_view_of_the_real_parts(eager0):
    ref = numpy.array([1 + 0j, 2 + 1e-20j, 3.5 + 0j])
    c = cp.asarray(ref)
    r, rn = cp.real_if_close(c), numpy.real_if_close(ref)
    r[0], rn[0] = 5.0, 5.0
    same(c, ref)
    same(r, rn)


def test_fancy_index_result_has_numpys_layout(eager0):
    # 1020:103: a[[i...], -9:] of a swapped-axes view: NumPy lays the result
    # out with the indexed dimensions outermost and the others in the view's
    # stride order, so a later reshape copies; ours was C-ordered, the
    # reshape a view, and a write through `a4` reached `a7`.
    a0 = cp.full((11, 13, 17), 3.25).reshape(1, 187, 13)
    n0 = numpy.full((11, 13, 17), 3.25).reshape(1, 187, 13)
    a4, n4 = cp.swapaxes(a0, 1, 2)[[-1, -1, -1, -1], -9:], numpy.swapaxes(n0, 1, 2)[[-1, -1, -1, -1], -9:]
    a7, n7 = a4.reshape(748, 9), n4.reshape(748, 9)
    a4[[0, 1, -3]] = 1.5
    n4[[0, 1, -3]] = 1.5
    same(a7, n7)
    same(a4, n4)
    base = numpy.arange(120.0).reshape(2, 3, 4, 5)
    for lay in (lambda x: x.transpose(3, 2, 1, 0), lambda x: x[:, ::-1, :, ::2],
                lambda x: x.transpose(1, 3, 0, 2)):
        for key in ([0, 1], ([1, 0], slice(1, None)), (slice(None), [0, 2], [1, 1]),
                    (1, slice(None), [1, 0])):
            want = lay(base)[key]
            got = lay(cp.asarray(base))[key]
            same(got, want)
            assert got.strides == want.strides, (key, got.strides, want.strides)


def test_bool_dtype_without_a_bool_loop_is_a_type_error_first(eager0):
    # 1020:2412: logaddexp has no bool loop: NumPy's TypeError comes before
    # the Python int's conversion (an OverflowError for a bool loop).
    a = cp.zeros((2, 3), bool)
    with pytest.raises(TypeError):
        cp.logaddexp(a, 2 ** 64, dtype="bool")
    with pytest.raises(OverflowError):
        cp.logical_and(a, 2 ** 64, dtype="bool")
    with pytest.raises(OverflowError):
        numpy.logical_and(numpy.zeros((2, 3), bool), 2 ** 64, dtype="bool")
    # 1030:10841: a logical ufunc with a dtype it has no loop for
    with pytest.raises(TypeError):
        cp.logical_or(2 ** 63, cp.zeros(3), dtype="complex64")
    with pytest.raises(OverflowError):
        cp.logical_or(2 ** 63, cp.zeros(3))


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_fused_complex_add_of_a_difference_keeps_inf_minus_inf(eager0, dt):
    # 1030:6640: x + (x - x) in one window was folded to x by the complex
    # dialect's add(b, sub(a, b)) -> a; inf - inf is NaN, so NumPy gives NaN.
    vals = numpy.array([numpy.inf, -numpy.inf, numpy.nan, 1.5, -0.0])
    for x, n in ((cp.asarray(vals), vals), (cp.asarray(vals)[::-1], vals[::-1])):
        got = x + cp.subtract(x, x, dtype=dt)
        want = n + numpy.subtract(n, n, dtype=dt)
        same(got, want)
        got = cp.subtract(x, x, dtype=dt) + x
        want = numpy.subtract(n, n, dtype=dt) + n
        same(got, want)
        z = cp.asarray(vals.astype(dt))
        zn = vals.astype(dt)
        same((z + 1j) - 1j, (zn + 1j) - 1j)
        same(z - (z - z), zn - (zn - zn))


def test_copy_order_k_puts_broadcast_axes_innermost(eager0):
    # 1040:13695: astype/copy/zeros_like of a broadcast view follow NumPy's
    # sorted-stride order (PyArray_CreateSortedStridePerm: 0 strides
    # innermost), so a later reshape copies where NumPy's does.
    n2 = numpy.arange(6.0).reshape(3, 1, 2)
    for make in (lambda np, x: np.broadcast_to(x, (3, 3, 3, 2)),
                 lambda np, x: np.broadcast_to(x, (3, 3, 3, 2))[:, ::-1].swapaxes(1, 3),
                 lambda np, x: np.broadcast_to(x[:, :, :1], (4, 3, 5, 2))):
        n = make(numpy, n2)
        c = make(cp, cp.asarray(n2))
        for f in (lambda np, x: x.astype(numpy.float32), lambda np, x: np.copy(x),
                  lambda np, x: np.zeros_like(x), lambda np, x: x.copy(order="K"),
                  lambda np, x: np.log1p(x[None], dtype="complex64")):
            rn, rc = f(numpy, n), f(cp, c)
            same(rc, rn)
            assert rc.strides == rn.strides, (rc.strides, rn.strides)
    a10 = cp.log1p(cp.broadcast_to(cp.asarray(n2), (3, 3, 3, 2)).astype(cp.float32)[None],
                   dtype="complex64")
    a11 = a10.reshape(9, 6)
    a11.imag[...] = numpy.inf
    assert not numpy.isinf(cp.asnumpy(a10).imag).any()


def test_tile_of_empty_is_a_view_and_reshape_takes_any_negative(eager0):
    # 1040:13717: NumPy's tile reshapes an empty array (no copy), so the
    # result of a read-only view stays read-only; reps of ones copy in order K.
    a1 = cp.array([[], []]).diagonal(-1)
    t = cp.tile(a1, 2)
    assert t.shape == (0,) and not t.flags.writeable
    with pytest.raises(ValueError):
        t[:] = 0
    x = cp.arange(6.0).reshape(2, 3).T
    same(cp.tile(x, 1), numpy.tile(numpy.arange(6.0).reshape(2, 3).T, 1))
    assert cp.tile(x, 1).strides == (8, 24)
    # any negative dimension is the unknown one, as in NumPy
    assert cp.arange(6.0).reshape(2, -3).shape == (2, 3)
    with pytest.raises(ValueError, match="one unknown"):
        cp.arange(6.0).reshape(-2, -3)
    with pytest.raises(ValueError):
        cp.tile(cp.zeros((0, 3)), (2, -1))


def test_copy_order_k_of_contiguous_arrays_with_size_one_axes(eager0):
    # NumPy's NewLikeArray keeps C order for a C-contiguous prototype and F
    # order for an F-contiguous one (size-1 axes ignored) before sorting
    # strides: a newaxis (stride 0) is not moved innermost.
    x = numpy.arange(3.0)
    f = numpy.zeros((3, 4)).T
    for make in (lambda np, b: b[None], lambda np, b: b[:, None],
                 lambda np, b: np.asarray(b)[None, :, None]):
        for base in (x, f):
            n, c = make(numpy, base), make(cp, cp.asarray(base))
            for fn in (lambda np, v: np.zeros_like(v), lambda np, v: v.astype("f4"),
                       lambda np, v: np.copy(v)):
                rn, rc = fn(numpy, n), fn(cp, c)
                same(rc, rn)
                big = [s for s, d in zip(rn.strides, rn.shape) if d > 1]
                assert [s for s, d in zip(rc.strides, rc.shape) if d > 1] == big
    with pytest.raises(ValueError, match=r"into shape \(2\)$"):
        cp.arange(5).reshape(-1, 2)


@pytest.mark.parametrize("dt", ["int64", "float64"])
def test_two_updates_of_one_merged_product_stay_apart(eager0, dt):
    # 1050:9103: CSE merged two equal products; each was then updated in
    # place (`a6 += 1; x[:] = 5`) and stored: x read a6's buffer.
    n1 = numpy.array([[2, 0, -6], [-5, -6, -7]], dt)
    for np, a1 in ((numpy, n1), (cp, cp.asarray(n1))):
        x = np.absolute(a1[-1])
        a6 = a1 @ x
        x = a1 @ x
        a6 += 1
        x[:] = 5
        if np is numpy:
            want = (x, a6)
        else:
            same(x, want[0])
            same(a6, want[1])


def test_float16_arange_past_its_range_does_not_warn(eager0):
    # NumPy fills an arange in its dtype: past float16's range the values
    # are inf, without the overflow warning of a cast.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cp.arange(70001, dtype=numpy.float16)
        same(got, numpy.arange(70001, dtype=numpy.float16))


def test_imag_of_a_real_array_is_c_ordered_unless_fortran(eager0):
    # 1080:12593: the imaginary part of a real array is NumPy's zeros in F
    # order for an F-contiguous array and in C order otherwise (not the
    # array's own order 'K'): concatenating that of a diagonal gives a
    # C-ordered array whose reshape is a view, and a write through it
    # reaches the concatenation.
    n0 = numpy.arange(8, dtype="float32").reshape(2, 2, 2)
    for np, a in ((numpy, n0), (cp, cp.asarray(n0))):
        d = a.diagonal(0)
        c = np.concatenate([np.imag(d), np.imag(d)], axis=0)
        v = np.squeeze(np.reshape(c, (2, -1)))
        v -= np.int16(16384)
        parts = [x.imag for x in (a.T, a[:, ::2], a[:, :1].T, a.reshape(2, 4).T, d)]
        if np is numpy:
            want = c
            want_strides = [p.strides for p in parts]
        else:
            same(c, want)
            assert [p.strides for p in parts] == want_strides
            assert not any(p.flags.writeable for p in parts)


def test_sort_and_partition_keep_numpys_copy_order(eager0):
    # 1080:7990, 1080:3688: np.sort and np.partition sort a.copy(order='K')
    # in place: of a transposed or broadcast array the result is not
    # C-ordered, so a reshape of it copies and a write through the reshape
    # does not reach it (argsort and argpartition are C-ordered).
    n0 = numpy.array([[-4, 4, 2, 4], [-1, 4, -7, -7], [-1, -8, 3, 3]], "int64")
    for np, a in ((numpy, n0), (cp, cp.asarray(n0))):
        t = np.moveaxis(a, 0, 1)
        s = np.sort(t)
        v = s.reshape(3, 1, 4)
        v[:1, :, ::-1] = 1
        b = np.broadcast_to(a, (2, 3, 4))
        got = [s, np.sort(b, axis=0), np.partition(t, 1, axis=0),
               np.argsort(t), np.sort(t, axis=None)]
        strides = [x.strides for x in got]
        if np is numpy:
            want, want_strides = got, strides
        else:
            for g, w in zip(got[:2], want[:2]):
                same(g, w)
            same(numpy.sort(numpy.asarray(got[2]), axis=0),
                 numpy.sort(want[2], axis=0))
            same(got[3], want[3])
            assert strides == want_strides
        # The axis is checked as NumPy's (helper review): a float is a
        # TypeError, one out of range an AxisError, for partition too.
        for bad, err in ((1.0, TypeError), (5, numpy.exceptions.AxisError),
                         (-3, numpy.exceptions.AxisError)):
            with pytest.raises(err):
                np.sort(t, axis=bad)
            with pytest.raises(err):
                np.partition(t, 1, axis=bad)


@pytest.mark.parametrize("base,exp", [(2**70, [-5]), ([2], 2**63), (2**63, [-1]),
                                      ([2], 2**64), ([2], -3)])
def test_power_of_python_ints_past_a_c_long(eager0, base, exp):
    # 1080:18435: a Python int operand of an integer power that is no C long
    # is NumPy's OverflowError before the negative-exponent check.
    def call(np):
        b = np.asarray(base) if isinstance(base, list) else base
        e = np.asarray(exp) if isinstance(exp, list) else exp
        try:
            return np.power(b, e)
        except (OverflowError, ValueError) as err:
            return type(err), str(err)
    want, got = call(numpy), call(cp)
    if isinstance(want, tuple):
        assert got == want
    else:
        same(got, want)


@pytest.mark.parametrize("make", [lambda m: m.imag(m.array(0.0)),
                                  lambda m: m.imag(m.arange(3.0)),
                                  lambda m: m.array(2.5)])
def test_copyto_of_the_same_elements_checks_a_0d_destination(eager0, make):
    # 1220:3398: np.copyto(x, x.T) with x = np.imag(0-d real) (read-only):
    # NumPy copies nothing for the same elements, except from a 0-d source,
    # which it assigns as a scalar after checking the destination.
    def call(np):
        x = make(np)
        out = []
        for src in (x, x.T, x[...]):
            try:
                np.copyto(x, src)
                out.append("ok")
            except ValueError as err:
                out.append(str(err))
        return out
    assert call(cp) == call(numpy)


def test_complex_clip_takes_the_bound_where_x_equals_it():
    """NumPy's complex clip loop gives the bound where x equals it (-0-0j
    clipped at 0 is 0j, whose log2 has no -pi/ln 2 imaginary part), keeps a
    NaN x and takes a NaN bound (fuzz 1250:957)."""
    vals = numpy.array([complex(-0.0, -0.0), 0j, 1 + 2j, 3.25 + 0j, 5 - 1j,
                        complex(numpy.nan, 1), complex(-2, numpy.nan), complex(-0.0, 0.0)])
    for lo, hi in [(0, 3.25), (1j, 3 + 0j), (numpy.nan, 1.0), (0, numpy.nan)]:
        for lo_arg in (lo, numpy.full(vals.shape, lo, complex)):
            ref = numpy.clip(vals, lo_arg, hi)
            got = cp.asnumpy(cp.clip(cp.asarray(vals), lo_arg if numpy.ndim(lo_arg) == 0
                                     else cp.asarray(lo_arg), hi))
            numpy.testing.assert_array_equal(got, ref)
            numpy.testing.assert_array_equal(numpy.signbit(got.real), numpy.signbit(ref.real))
            numpy.testing.assert_array_equal(numpy.signbit(got.imag), numpy.signbit(ref.imag))
    a = cp.clip(-cp.asarray(numpy.array([0j, 0j])), 0, 3.25)
    same(cp.log2(a), numpy.log2(numpy.clip(-numpy.array([0j, 0j]), 0, 3.25)))


def test_complex_max_accumulate_takes_a_nan_imaginary_part():
    """NumPy's complex maximum/minimum (and fmax/fmin) compare by real part
    only where neither imaginary part is NaN: maximum(3, -inf+nanj) is
    -inf+nanj, and an accumulation carries it on (mpifuzz 11:188)."""
    nan, inf = numpy.nan, numpy.inf
    a = numpy.array([[1 + 1j, 2], [complex(nan, 0), 1], [3, complex(-inf, nan)],
                     [0, 5j], [complex(2, nan), -1]], dtype=numpy.complex64)
    for name in ("maximum", "minimum", "fmax", "fmin"):
        for axis in (0, 1):
            ref = getattr(numpy, name).accumulate(a, axis=axis)
            got = cp.asnumpy(getattr(cp, name).accumulate(cp.asarray(a), axis=axis))
            numpy.testing.assert_array_equal(got, ref, err_msg=f"{name} axis {axis}")


def test_uint64_kinds_keep_their_own_result_types():
    # dtype('Q') == dtype('L') (cp.array(2 ** 63) is the first, uint64
    # arrays the second): the ufuncs' resolution cache gave a later uint64
    # sum NumPy's result for the other one, and its elements were
    # numpy.ulonglong, not numpy.uint64.
    q = cp.array(2 ** 63) + cp.array(numpy.uint64(1))
    q_ref = numpy.array(2 ** 63) + numpy.array(numpy.uint64(1))
    assert q.dtype.char == q_ref.dtype.char
    x = cp.asarray(numpy.arange(5, dtype=numpy.uint64)) + cp.zeros((), numpy.uint64)
    ref = numpy.arange(5, dtype=numpy.uint64) + numpy.zeros((), numpy.uint64)
    assert x.dtype.char == ref.dtype.char
    assert type(x[1]) is type(ref[1])


def test_uint64_kinds_through_dtype_jit_and_asarray():
    # dtype= of either kind, @jit signatures and NumPy exports keep the
    # kind (a review of session 50: each gave the other kind's result).
    aQ = numpy.arange(100, dtype=numpy.ulonglong)
    aL = aQ.astype(numpy.uint64)
    cL = cp.asarray(aL) * 1
    for first, second in (("L", "Q"), ("Q", "L")):
        r1 = cp.add(cL, 1, dtype=numpy.dtype(first))
        r2 = cp.add(cL, 1, dtype=numpy.dtype(second))
        assert (r1.dtype.char, r2.dtype.char) == (first, second)
    f = cp.jit(lambda x: x + x)
    assert f(cp.asarray(aL)).dtype.char == (aL + aL).dtype.char
    assert f(cp.asarray(aQ)).dtype.char == (aQ + aQ).dtype.char
    r = cp.asarray(aQ) + cp.asarray(aQ)
    assert r.dtype.char == "Q" and numpy.asarray(r).dtype.char == "Q"


def test_add_at_of_a_python_int_into_uint64_rounds_as_numpys():
    # NumPy's ufunc.at takes a Python int as an int64 array: with uint64
    # that is a float64 loop, and values above 2**53 come back rounded
    # (fuzz 1334:1277: our exact uint64 scatter differed by 7). The declared
    # fallback runs NumPy's.
    base = numpy.array([239674342661067410, 5, 2 ** 63 + 3] * 700, dtype=numpy.uint64)
    ref = base.copy()
    numpy.add.at(ref, [-1025, 159, 1755], 7)
    got = cp.asarray(base)
    with warnings.catch_warnings():  # warned once per process
        warnings.simplefilter("ignore", RuntimeWarning)
        cp.add.at(got, [-1025, 159, 1755], 7)
    numpy.testing.assert_array_equal(numpy.asarray(got), ref)
    # int64 keeps its exact native scatter.
    ri = base.astype(numpy.int64)
    gi = cp.asarray(ri)
    numpy.add.at(ri, [3, 3, 9], 7)
    cp.add.at(gi, [3, 3, 9], 7)
    numpy.testing.assert_array_equal(numpy.asarray(gi), ri)
