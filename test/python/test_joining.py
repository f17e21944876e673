"""Joining, rearranging and comparison functions against NumPy: dtypes,
shapes with empty and 0-d cases, non-contiguous views, errors."""

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
