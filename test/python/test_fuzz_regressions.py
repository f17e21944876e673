"""Regressions found by the differential fuzzer (tools/fuzz/cpnfuzz.py, seed
20 unless said): each test compares cpnumeric with NumPy on one behaviour.
They pass with CPN_EAGER_THRESHOLD=0 (every op traced) and 1024."""

import warnings

import numpy
import pytest

import cpnumeric as cp


def same(got, want):
    """cpnumeric's result equals NumPy's: type of scalars, dtype, shape and
    values (NaN where NumPy has NaN)."""
    if isinstance(want, numpy.generic):
        assert type(got) is type(want) or (
            isinstance(got, cp.ndarray) and got.shape == () and got.dtype == want.dtype)
    g = numpy.asarray(got)
    w = numpy.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert numpy.array_equal(g, w, equal_nan=w.dtype.kind in "fc"), (g, w)


def raises_like(f):
    """f(numpy) raises; f(cpnumeric) raises the same exception type."""
    with pytest.raises(Exception) as want:
        f(numpy)
    with pytest.raises(type(want.value)):
        f(cp)


def _data(dt, shape=(3, 5)):
    x = (numpy.arange(numpy.prod(shape)) * 7 % 11 - 4).reshape(shape).astype(dt)
    if numpy.dtype(dt).kind == "f" and x.size > 2:
        x.flat[2] = numpy.nan
    return x


# -- ufunc.accumulate (20:131, 20:97, 20:115, 20:136, 20:130) -----------------

ACC_NATIVE = ["add", "multiply", "maximum", "minimum", "logical_or", "logical_and"]
ACC_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32",
              "float64", "complex128"]


@pytest.mark.parametrize("name", ACC_NATIVE)
@pytest.mark.parametrize("dt", ACC_DTYPES)
def test_accumulate_native_dtypes_and_axes(name, dt, runtime_warnings_are_errors):
    x = _data(dt)
    for axis in (0, 1, -1):
        same(getattr(cp, name).accumulate(cp.asarray(x), axis=axis),
             getattr(numpy, name).accumulate(x, axis=axis))
    same(getattr(cp, name).accumulate(cp.asarray(x[0])),
         getattr(numpy, name).accumulate(x[0]))


@pytest.mark.parametrize("name", ACC_NATIVE)
def test_accumulate_noncontiguous_empty_and_1d_axis_none(name, runtime_warnings_are_errors):
    x = _data("float64", (4, 6))
    same(getattr(cp, name).accumulate(cp.asarray(x)[:, ::-2], axis=1),
         getattr(numpy, name).accumulate(x[:, ::-2], axis=1))
    same(getattr(cp, name).accumulate(cp.asarray(x).T, axis=1),
         getattr(numpy, name).accumulate(x.T, axis=1))
    for shape, axis in (((0, 3), 0), ((3, 0), 1), ((0,), 0)):
        same(getattr(cp, name).accumulate(cp.zeros(shape), axis=axis),
             getattr(numpy, name).accumulate(numpy.zeros(shape), axis=axis))
    same(getattr(cp, name).accumulate(cp.asarray(x[1]), axis=None),
         getattr(numpy, name).accumulate(x[1], axis=None))
    same(getattr(cp, name).accumulate(cp.asarray(x), axis=(1,)),
         getattr(numpy, name).accumulate(x, axis=(1,)))


def test_accumulate_dtype_keyword_and_loop_dtype(runtime_warnings_are_errors):
    i8 = numpy.array([100, 100, 100], numpy.int8)
    same(cp.add.accumulate(cp.asarray(i8)), numpy.add.accumulate(i8))  # int64
    same(cp.add.accumulate(cp.asarray(i8), dtype=numpy.int8),
         numpy.add.accumulate(i8, dtype=numpy.int8))  # wraps in int8
    same(cp.multiply.accumulate(cp.asarray(i8), dtype="float32"),
         numpy.multiply.accumulate(i8, dtype="float32"))
    f = numpy.array([1.5, 0.0, 2.5, -3.0])
    same(cp.add.accumulate(cp.asarray(f), dtype=int), numpy.add.accumulate(f, dtype=int))
    same(cp.add.accumulate(cp.asarray(f), dtype=bool), numpy.add.accumulate(f, dtype=bool))
    same(cp.maximum.accumulate(cp.asarray(f), dtype=int),
         numpy.maximum.accumulate(f, dtype=int))
    b = numpy.array([True, True, False, True])
    same(cp.add.accumulate(cp.asarray(b)), numpy.add.accumulate(b))  # int64 counts
    same(cp.multiply.accumulate(cp.asarray(b)), numpy.multiply.accumulate(b))
    same(cp.add.accumulate([1, 2, 3]), numpy.add.accumulate([1, 2, 3]))
    same(cp.add.accumulate(cp.asarray([-0.0, -0.0])), numpy.add.accumulate([-0.0, -0.0]))


def test_accumulate_out(runtime_warnings_are_errors):
    x = numpy.array([1.5, 2.5, 3.0])
    o = cp.zeros(3, cp.int64)
    r = cp.add.accumulate(cp.asarray(x), out=o)
    assert r is o
    same(o, numpy.add.accumulate(x, out=numpy.zeros(3, numpy.int64)))
    i8 = numpy.array([100, 100, 100], numpy.int8)
    o = cp.zeros(3, cp.int8)
    cp.add.accumulate(cp.asarray(i8), out=(o,))
    same(o, numpy.add.accumulate(i8, out=numpy.zeros(3, numpy.int8)))
    o = cp.zeros(3)
    cp.logical_or.accumulate(cp.asarray([0.0, 2.0, 0.0]), out=o)
    same(o, numpy.logical_or.accumulate([0.0, 2.0, 0.0], out=numpy.zeros(3)))
    a = cp.arange(5.0)
    cp.add.accumulate(a, out=a)  # in place
    same(a, numpy.add.accumulate(numpy.arange(5.0)))
    n = numpy.zeros(4)
    assert cp.maximum.accumulate(cp.asarray([1.0, 3.0, 2.0, 4.0]), out=n) is n
    same(n, numpy.maximum.accumulate([1.0, 3.0, 2.0, 4.0]))


def test_accumulate_errors():
    raises_like(lambda m: m.add.accumulate(m.asarray(1.0)))             # 0-d: TypeError
    raises_like(lambda m: m.add.accumulate(m.ones((2, 3)), axis=None))  # ValueError
    raises_like(lambda m: m.add.accumulate(m.ones((2, 3)), axis=(0, 1)))
    raises_like(lambda m: m.add.accumulate(m.ones((2, 3)), axis=2))     # AxisError
    raises_like(lambda m: m.add.accumulate(m.ones(3), axis=0.5))        # TypeError
    raises_like(lambda m: m.sin.accumulate(m.ones(3)))                  # ValueError
    raises_like(lambda m: m.subtract.accumulate(m.asarray([True, False])))
    raises_like(lambda m: m.equal.accumulate(m.ones(3)))                # no loop
    raises_like(lambda m: m.add.accumulate(m.ones(3), out=m.zeros(4)))
    raises_like(lambda m: m.add.accumulate(m.ones(3), out=[0, 0, 0]))
    raises_like(lambda m: m.add.accumulate(m.ones(3), keepdims=True))
    raises_like(lambda m: m.logical_or.accumulate(m.ones(3), dtype=float))  # no loop


def test_accumulate_long_rows_two_pass():
    """Rows long enough for the runtime's two-pass parallel scan."""
    rng = numpy.random.default_rng(1)
    n = 1 << 20
    x = rng.integers(-1000, 1000, n)
    x[: n // 2] = 1
    x[n // 2 + 77] = 0
    f = x.astype(float)
    f[n // 2 + 5] = numpy.nan
    for name in ("maximum", "minimum", "logical_or", "logical_and", "add"):
        same(getattr(cp, name).accumulate(cp.asarray(x)), getattr(numpy, name).accumulate(x))
    for name in ("maximum", "minimum"):
        same(getattr(cp, name).accumulate(cp.asarray(f)), getattr(numpy, name).accumulate(f))
    c = x.astype(complex) + 1j * (x % 3)
    same(cp.maximum.accumulate(cp.asarray(c)), numpy.maximum.accumulate(c))


def test_accumulate_other_ufuncs_fall_back_with_a_warning():
    x = numpy.array([[5, 1, 2], [4, 3, 9]])
    with pytest.warns(RuntimeWarning, match="subtract.accumulate"):
        same(cp.subtract.accumulate(cp.asarray(x), axis=1),
             numpy.subtract.accumulate(x, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(cp.divide.accumulate(cp.asarray(x * 1.0)), numpy.divide.accumulate(x * 1.0))


@pytest.mark.parametrize("name", ["fmax", "fmin", "bitwise_and", "bitwise_or", "bitwise_xor",
                                  "logical_xor", "not_equal"])
@pytest.mark.parametrize("dt", ACC_DTYPES + ["uint64", "complex64"])
def test_accumulate_fmax_fmin_bitwise_and_xor_scans(name, dt, runtime_warnings_are_errors):
    for n in (7, 1 << 19):  # short rows, and long ones in two passes
        x = (numpy.arange(n) * 7 % 11 - 4).astype(dt)
        if dt[0] in "fc":
            x[2] = x[n // 2 + 3] = numpy.nan
        if dt.startswith("complex"):
            x = x + 1j * (numpy.arange(n) % 3)
            x[5] = complex(1, numpy.nan)
        for xx in (x, x[::-2]):
            try:
                want = getattr(numpy, name).accumulate(xx)
            except TypeError:  # no such loop (bitwise of floats, ...)
                with pytest.raises(TypeError):
                    getattr(cp, name).accumulate(cp.asarray(xx))
                continue
            same(getattr(cp, name).accumulate(cp.asarray(xx)), want)


def test_numpy_accumulate_on_cpnumeric_array(runtime_warnings_are_errors):
    x = numpy.array([3, 1, 4, 1, 5])
    same(numpy.maximum.accumulate(cp.asarray(x)), numpy.maximum.accumulate(x))
    same(numpy.add.accumulate(cp.asarray(x)), numpy.add.accumulate(x))


# -- ufunc.at (20:83) ------------------------------------------------------------

def _at(m, name, dt, key, *b, shape=(7,)):
    a = m.asarray((numpy.arange(numpy.prod(shape)) % 5 - 2).reshape(shape).astype(dt))
    getattr(m, name).at(a, key, *b)
    return a


AT_CASES = [([0, 0, 3, -1], 3, (7,)), ([1, 1, 1], numpy.int16(300), (7,)),
            ([2, 2], numpy.array([1.5, -2.0]), (7,)),
            ((slice(None), [0, 0]), numpy.array([[1], [2]]), (2, 3)),
            (0, 2, (2, 3)), (numpy.array([True, False, True]), 2, (3,)),
            ([], 1, (4,)), (numpy.array([[0, 1], [1, 1]]), numpy.array([[1, 2], [3, 4]]), (3,)),
            (Ellipsis, 1, ())]


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "logical_or", "logical_and"])
@pytest.mark.parametrize("dt", ["bool", "int8", "uint8", "int64", "float32", "float64",
                                "complex128"])
def test_ufunc_at_repeated_indices_in_order(name, dt):
    for key, b, shape in AT_CASES:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = _at(numpy, name, dt, key, b, shape=shape)
        except Exception as e:
            with pytest.raises(TypeError if isinstance(e, TypeError) else type(e)):
                _at(cp, name, dt, key, b, shape=shape)
            continue
        with warnings.catch_warnings():  # mixed loops: the declared fallback
            warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            same(_at(cp, name, dt, key, b, shape=shape), want)


def test_ufunc_at_native_on_views_and_wider_integer_loops(runtime_warnings_are_errors):
    for m in (numpy, cp):
        base = m.arange(12.0).reshape(3, 4)
        m.add.at(base[::-1, 1::2], ([0, 0, 2], [1, 1, 0]), m.asarray([1.0, 2.0, 3.0]))
        m.maximum.at(base, (1, slice(None)), 7.0)
        c = m.zeros(4, m.int8)
        m.add.at(c, [0, 0, 0], 100)          # an int64 loop: wraps as int8
        u = m.zeros(3, m.uint8)
        m.subtract.at(u, [1, 1], 3)
        b = m.zeros(3, bool)
        m.logical_or.at(b, [1], True)
        m.add.at(b, [2], True)
        if m is numpy:
            want = (base, c, u, b)
    for g, w in zip((base, c, u, b), want):
        same(g, w)


def test_ufunc_at_falls_back_for_other_loops():
    for args in [("multiply", "int64", [0, 0], 1.5), ("maximum", "int8", [0], 200),
                 ("divide", "float64", [1, 1], 4.0), ("add", "float16", [0, 0], 0.25)]:
        name, dt, key, b = args
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            same(_at(cp, name, dt, key, b), _at(numpy, name, dt, key, b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(_at(cp, "negative", "float64", [2, 2, 3]), _at(numpy, "negative", "float64", [2, 2, 3]))


def test_ufunc_at_errors():
    raises_like(lambda m: m.add.at(m.zeros(3), [0, 3], 1))             # IndexError
    raises_like(lambda m: m.add.at(m.zeros(3), [0, 1], m.ones(3)))     # not broadcastable
    raises_like(lambda m: m.add.at(m.zeros(3), [0]))                   # second operand needed
    raises_like(lambda m: m.negative.at(m.zeros(3), [0], 1))           # unary with b
    raises_like(lambda m: m.add.at(m.zeros(3), 1.0, 1))                # IndexError
    raises_like(lambda m: m.add.at([1, 2], 0, 1))                      # TypeError
    raises_like(lambda m: m.subtract.at(m.zeros(3, bool), [0], True))  # bool subtract


def test_numpy_ufunc_at_on_cpnumeric_array(runtime_warnings_are_errors):
    a = cp.zeros(4)
    numpy.add.at(a, [0, 0, 2], 1.5)
    same(a, numpy.array([3.0, 0.0, 1.5, 0.0]))


# -- dtypes of float-loop ufuncs, round, conj, norm (20:274, 20:153, 20:271, 20:64,
#    20:138, 20:229) and searchsorted's scalar (20:8) ----------------------------

INT_AND_FLOAT = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                 "float32", "float64"]


@pytest.mark.parametrize("dt", INT_AND_FLOAT)
def test_fabs_and_float_power_use_their_own_loops_not_absolute_and_power(dt):
    x = (numpy.arange(-600, 600) % 7 - 3).astype(dt) if dt != "bool" else \
        numpy.arange(1200) % 3 == 0
    y = (numpy.arange(1200) % 3).astype(dt)
    for _ in range(2):  # the loop cache of absolute/power must not leak in
        same(cp.absolute(cp.asarray(x)), numpy.absolute(x))
        same(cp.fabs(cp.asarray(x)), numpy.fabs(x))
        if dt != "bool":
            same(cp.float_power(cp.asarray(x), cp.asarray(y)), numpy.float_power(x, y))


@pytest.mark.parametrize("name", ["deg2rad", "radians", "rad2deg", "degrees"])
@pytest.mark.parametrize("dt", INT_AND_FLOAT)
def test_deg2rad_family_float_loops_and_constants(name, dt, runtime_warnings_are_errors):
    x = (numpy.arange(-600, 600) * (0.37 if dt[0] == "f" else 1)).astype(dt)
    same(getattr(cp, name)(cp.asarray(x)), getattr(numpy, name)(x))
    same(getattr(cp, name)(cp.asarray(x)[::-3]), getattr(numpy, name)(x[::-3]))
    same(getattr(cp, name)(cp.asarray(x[:0])), getattr(numpy, name)(x[:0]))
    same(getattr(cp, name)(cp.asarray(x[5])), getattr(numpy, name)(x[5]))


def test_deg2rad_keywords_and_errors(runtime_warnings_are_errors):
    x = numpy.arange(-600, 600)
    for dt in ("float32", "float16", numpy.float64):
        same(cp.deg2rad(cp.asarray(x), dtype=dt), numpy.deg2rad(x, dtype=dt))
    o = cp.zeros(1200, cp.float32)
    assert cp.rad2deg(cp.asarray(x * 1.0), out=o) is o
    same(o, numpy.rad2deg(x * 1.0, out=numpy.zeros(1200, numpy.float32)))
    o, w = cp.ones(1200), numpy.ones(1200)
    cp.deg2rad(cp.asarray(x * 1.0), out=o, where=cp.asarray(x > 0))
    same(o, numpy.deg2rad(x * 1.0, out=w, where=x > 0))
    raises_like(lambda m: m.deg2rad(m.asarray([1 + 1j])))   # no complex loop
    raises_like(lambda m: m.fabs(m.asarray([1 + 1j])))


def test_round_of_bool_is_rint_float16_and_decimals_raise(runtime_warnings_are_errors):
    b = numpy.array([True, False] * 700)
    same(cp.round(cp.asarray(b)), numpy.round(b))
    same(cp.asarray(b).round(), b.round())
    same(cp.around(cp.asarray(b[:0])), numpy.around(b[:0]))
    same(cp.round(cp.asarray(b[3])), numpy.round(b[3]))
    raises_like(lambda m: m.round(m.asarray(b), 1))
    raises_like(lambda m: m.round(m.asarray(b), -1))
    o = cp.zeros(1400)
    cp.round(cp.asarray(b), 2, out=o)
    same(o, numpy.round(b, 2, out=numpy.zeros(1400)))


@pytest.mark.parametrize("dt", INT_AND_FLOAT)
def test_ndarray_conj_of_real_array_is_the_array_itself(dt):
    x = (numpy.arange(12) % 5).astype(dt).reshape(3, 4)
    for a in (cp.asarray(x), cp.asarray(x)[::-1, 1::2]):
        c = a.conj()
        assert c is a and a.conjugate() is a
        assert c.dtype == numpy.dtype(dt)
    a = cp.asarray(x)
    v = a.conj()
    v[0, 0] = 1
    assert a[0, 0] == 1
    same(cp.conjugate(cp.asarray(x)), numpy.conjugate(x))  # the ufunc copies
    o = cp.zeros((3, 4), numpy.complex128)
    assert cp.asarray(x).conj(o) is o
    same(o, x.conj(numpy.zeros((3, 4), numpy.complex128)))


def test_ndarray_conj_of_complex_and_out_casting():
    z = numpy.array([1 + 2j, 3 - 1j])
    c = cp.asarray(z)
    assert c.conj() is not c
    same(c.conj(), z.conj())
    raises_like(lambda m: m.asarray([1.0, 2.0]).conj(m.zeros(2, int)))


NORM_DTYPES = ["bool", "int8", "int64", "float16", "float32", "float64", "complex64",
               "complex128"]


@pytest.mark.parametrize("dt", NORM_DTYPES)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0,), (0, 3), (3, 0)])
def test_norm_dtypes_complex_values_and_empty(dt, shape):
    rng = numpy.random.default_rng(3)
    x = rng.integers(-4, 5, shape).astype(dt)
    if dt.startswith("complex"):
        x = x + 1j * rng.integers(-3, 3, shape)
    for ord in [None, "fro", "nuc", numpy.inf, -numpy.inf, 0, 1, -1, 2, -2, 3]:
        for axis in [None, 0, -1, (0, 1)]:
            for keepdims in (False, True):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        want = numpy.linalg.norm(x, ord, axis, keepdims)
                except Exception as e:
                    with pytest.raises(type(e)):
                        cp.linalg.norm(cp.asarray(x), ord, axis, keepdims)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    got = numpy.asarray(cp.linalg.norm(cp.asarray(x), ord, axis, keepdims))
                want = numpy.asarray(want)
                assert got.dtype == want.dtype and got.shape == want.shape, (ord, axis)
                numpy.testing.assert_allclose(got, want, rtol=1e-2 if dt == "float16"
                                              else 1e-6)


def test_norm_of_complex_vector_uses_the_imaginary_part():
    z = numpy.full((3,), 2 + 0.25j)
    numpy.testing.assert_allclose(cp.linalg.norm(cp.asarray(z)), numpy.linalg.norm(z))
    zz = numpy.arange(3000).reshape(30, 100) * (1 - 2j)
    numpy.testing.assert_allclose(cp.linalg.norm(cp.asarray(zz)[:, ::3], axis=1),
                                  numpy.linalg.norm(zz[:, ::3], axis=1))


@pytest.mark.parametrize("dt", ["float16", "float32", "complex128", "int8"])
def test_vector_norm_dtypes(dt):
    x = (numpy.arange(24) - 7).astype(dt).reshape(2, 3, 4)
    for axis in (None, 0, (0, 2)):
        for keepdims in (False, True):
            got = numpy.asarray(cp.linalg.vector_norm(cp.asarray(x), axis=axis,
                                                      keepdims=keepdims))
            want = numpy.linalg.vector_norm(x, axis=axis, keepdims=keepdims)
            assert got.dtype == want.dtype and got.shape == want.shape
            numpy.testing.assert_allclose(got, want, rtol=1e-2)


def test_searchsorted_of_a_scalar_is_an_intp():
    a = numpy.arange(2000) * 0.5
    for v in (3.3, numpy.float32(7), 5, -1.0):
        for side in ("left", "right"):
            got = cp.searchsorted(cp.asarray(a), v, side=side)
            want = numpy.searchsorted(a, v, side=side)
            same(got, want)
            assert int(got) == int(want)
    same(cp.asarray(a).searchsorted(2.5), a.searchsorted(2.5))


# -- median of bool, full with complex fills, complex views of real data
#    (20:82, 20:122, 20:77, 20:269) -------------------------------------------

@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_of_bool_is_the_mean_of_the_middle_elements(name, runtime_warnings_are_errors):
    for x in (numpy.array([True, False, True]), numpy.array([True, False] * 700),
              numpy.array([True, False, True] * 700).reshape(3, -1),
              numpy.array([True, False, False, True]), numpy.array(True),
              numpy.array([[True, False], [False, False]])[:, ::-1]):
        for axis in ([None] + list(range(-x.ndim, x.ndim))):
            for keepdims in (False, True):
                same(getattr(cp, name)(cp.asarray(x), axis=axis, keepdims=keepdims),
                     getattr(numpy, name)(x, axis=axis, keepdims=keepdims))
    raises_like(lambda m: m.quantile(m.asarray([True, False]), 0.5))  # NumPy's TypeError


def test_full_with_complex_fill_into_real_dtypes():
    cases = [((3,), 1 + 2j, float), ((3,), 1 + 2j, None), ((2, 2), 1.5 + 1j, "float32"),
             ((3,), 1 + 2j, bool), ((2000,), 2.5 - 1j, "int8"), ((3,), 300 + 1j, "uint8"),
             ((3,), numpy.complex64(1 + 2j), float), ((1, 1), 1 + 0j, "float64"), ((), 2j, int)]
    for shape, fill, dt in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)
            same(cp.full(shape, fill, dtype=dt), numpy.full(shape, fill, dtype=dt))
            same(cp.full_like(cp.zeros(shape, int), fill),
                 numpy.full_like(numpy.zeros(shape, int), fill))


@pytest.mark.parametrize("dt", ["float64", "int64", "uint64"])
@pytest.mark.parametrize("shape", [(6,), (3, 4), (0,), (), (2000,)])
def test_complex64_view_of_8_byte_real_elements(dt, shape):
    """x.view('complex64') of float64/int64 data: the bits of each element
    as two float32 parts; reads, writes of the whole and of one part through
    the view reach x (bit for bit, NaN payloads included)."""
    x = (numpy.arange(int(numpy.prod(shape))) * 1.75 - 3).reshape(shape).astype(dt)
    results = []
    for m in (numpy, cp):
        a = m.asarray(x.copy())
        v = a.view("complex64")
        got = [v.copy(), v.real.copy(), v.imag.copy()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            v *= 2
        v.imag[...] = 1.5
        if v.ndim and v.size:
            v[..., 0] = 3 - 1j
        got += [a.copy(), (a[::-1] if a.ndim else a).view("complex64") + 1, v.view(dt)]
        results.append([numpy.asarray(r) for r in got])
    for w, g in zip(*results):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()



VIEW_BASES = ["int8", "uint8", "bool", "int16", "float16", "int32", "float32", "int64",
              "float64", "complex64", "complex128"]
VIEW_TARGETS = ["int16", "float16", "int32", "float32", "int64", "uint64", "float64",
                "complex64", "complex128"]


@pytest.mark.parametrize("base,target", [
    (b, t) for b in VIEW_BASES for t in VIEW_TARGETS
    if numpy.dtype(t).itemsize >= numpy.dtype(b).itemsize])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # reinterpreted bits: inf, NaN
def test_view_as_a_larger_or_same_size_dtype(base, target):
    """x.view(dtype) with a dtype at least as large: NumPy's shapes, values
    bit for bit, errors (0-d, non-contiguous last axis, sizes that do not
    divide), writes through the view and its .real/.imag (not into bool
    data: its bytes are kept 0 or 1)."""
    rng = numpy.random.default_rng(5)
    for shape in [(8,), (3, 8), (0, 8), (4, 0), (1,), (6,), ()]:
        x = rng.integers(-100, 100, shape).astype(base)
        for key in [(Ellipsis,), (Ellipsis, slice(2, None)), (Ellipsis, slice(None, None, 2)),
                    (slice(None, None, -1),)]:
            if len(key) - (key[0] is Ellipsis) > len(shape):
                continue
            out = []
            for m in (numpy, cp):
                a = m.asarray(x.copy())[key]
                try:
                    v = a.view(target)
                except ValueError as e:
                    out.append(type(e))
                    continue
                r = [v.copy(), v + v]
                if v.dtype.kind == "c":
                    r += [v.real.copy(), v.imag.copy()]
                if v.size and base != "bool":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if v.dtype.kind == "c":
                            v.imag[...] = 1.5
                        v[(Ellipsis, slice(0, 1)) if v.ndim else ...] = 3
                        v += v.dtype.type(1)
                    r += [a.copy(), v.view(base) if v.dtype.itemsize == a.dtype.itemsize
                          else a]
                out.append([numpy.asarray(t) for t in r])
            want, got = out
            if not isinstance(want, list):
                assert got is want, (shape, key)
                continue
            for w, g in zip(want, got):
                assert g.dtype == w.dtype and g.shape == w.shape, (shape, key)
                assert g.tobytes() == w.tobytes(), (shape, key)

