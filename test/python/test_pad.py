"""np.pad against NumPy: every mode and its keywords, pad widths in every
spelling (large ones reflect and wrap several periods), dtypes, 0-d, empty,
length-1 and non-contiguous inputs, errors."""

import numpy
import pytest

import cpnumeric as cp

pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")

MODES = {
    "constant": [{}, {"constant_values": ((7, 8), (-1, 2))}, {"constant_values": 2.5}],
    "edge": [{}],
    "wrap": [{}],
    "reflect": [{}, {"reflect_type": "odd"}],
    "symmetric": [{}, {"reflect_type": "odd"}],
    "linear_ramp": [{}, {"end_values": (5, -3)}],
    "maximum": [{}, {"stat_length": 2}],
    "minimum": [{}, {"stat_length": ((1, 2), (3, 1))}],
    "mean": [{}, {"stat_length": 2}],
    "median": [{}, {"stat_length": (3, 1)}],
}
WIDTHS = [1, (2, 3), ((1, 0), (5, 9)), 11, 0]
CASES = [(m, kw) for m, kws in MODES.items() for kw in kws]


def check(x, *args, **kw):
    """cp.pad(x, ...) gives numpy.pad's result, or raises its exception."""
    try:
        ref = numpy.pad(x, *args, **kw)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            cp.pad(cp.asarray(x), *args, **kw)
        return
    same(cp.pad(cp.asarray(x), *args, **kw), ref)


def same(ours, ref):
    o = numpy.asarray(ours)
    assert o.shape == ref.shape and o.dtype == ref.dtype, (o.shape, o.dtype, ref.shape,
                                                           ref.dtype)
    numpy.testing.assert_allclose(o, ref, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64"])
@pytest.mark.parametrize("mode, kw", CASES)
def test_modes_and_widths(mode, kw, dtype):
    x = (numpy.arange(1, 13).reshape(3, 4) * 5 % 11).astype(dtype)
    for w in WIDTHS:
        check(x, w, mode, **kw)


@pytest.mark.parametrize("mode, kw", CASES)
def test_short_axes_views_and_1d(mode, kw):
    for x in [numpy.array([3.0]), numpy.array([2.0, 5.0]), numpy.arange(5.0)]:
        check(x, 7, mode, **kw)
    y = numpy.arange(30.0).reshape(5, 6)
    same(cp.pad(cp.asarray(y)[::2, ::-1], 3, mode, **kw), numpy.pad(y[::2, ::-1], 3, mode,
                                                                   **kw))


def test_zero_d_empty_and_empty_mode():
    z = numpy.float64(4.0)
    same(cp.pad(cp.asarray(z), 2), numpy.pad(z, 2))
    e = numpy.zeros((0, 3))
    same(cp.pad(cp.asarray(e), 1), numpy.pad(e, 1))
    same(cp.pad(cp.asarray(e), ((0, 0), (2, 1)), "edge"),
         numpy.pad(e, ((0, 0), (2, 1)), "edge"))
    assert cp.pad(cp.ones((2, 2)), 1, "empty").shape == (4, 4)


def test_errors_and_callable_mode():
    x = cp.ones((2, 3))
    with pytest.raises(ValueError, match="negative"):
        cp.pad(x, -1)
    with pytest.raises(ValueError, match="not supported"):
        cp.pad(x, 1, "bogus")
    with pytest.raises(ValueError, match="unsupported keyword"):
        cp.pad(x, 1, "edge", constant_values=3)
    with pytest.raises(ValueError, match="can't extend empty axis"):
        cp.pad(cp.zeros((0, 2)), 1, "reflect")
    with pytest.raises(ValueError, match="stat_length of 0"):
        cp.pad(x, 1, "maximum", stat_length=0)
    with pytest.raises(ValueError):
        cp.pad(x, ((1, 2, 3),))

    def ten(vector, width, axis, kwargs):
        vector[:width[0]] = 10
        vector[vector.size - width[1]:] = 10
    with pytest.warns(RuntimeWarning, match="pad"):
        r = cp.pad(x, 1, ten)
    same(r, numpy.pad(numpy.ones((2, 3)), 1, ten))


def test_pad_fuses_with_its_consumer():
    u = numpy.random.default_rng(0).random((50, 60))
    cu = cp.asarray(u)
    p = cp.pad(cu, 1, "wrap")
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * cu
    pu = numpy.pad(u, 1, "wrap")
    same(lap, pu[:-2, 1:-1] + pu[2:, 1:-1] + pu[1:-1, :-2] + pu[1:-1, 2:] - 4 * u)
