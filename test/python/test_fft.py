"""cpnumeric.fft against numpy.fft: every transform, the three norms, n
padding and truncation, axes, dtypes (results in NumPy's precision),
non-contiguous and empty inputs, out=, errors."""

import numpy
import pytest

import cpnumeric as cp

pytestmark = pytest.mark.usefixtures("runtime_warnings_are_errors")

NORMS = [None, "backward", "ortho", "forward"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def signal(shape, dtype, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if numpy.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    if numpy.dtype(dtype).kind in "biu":
        x = (x * 4).round()
    return x.astype(dtype)


def same(ours, ref):
    o, ref = numpy.asarray(ours), numpy.asarray(ref)
    assert o.shape == ref.shape and o.dtype == ref.dtype, (o.shape, o.dtype, ref.shape,
                                                           ref.dtype)
    single = ref.dtype in (numpy.complex64, numpy.float32, numpy.float16)
    scale = max(1.0, float(numpy.abs(ref).max())) if ref.size else 1.0
    numpy.testing.assert_allclose(o, ref, rtol=0, atol=scale * (3e-3 if ref.dtype ==
                                  numpy.float16 else 2e-5 if single else 1e-12))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional(name, norm):
    dtype = "float64" if name in REAL_IN else "complex128"
    x = signal((4, 9), dtype)
    c = cp.asarray(x)
    f, g = getattr(cp.fft, name), getattr(numpy.fft, name)
    same(f(c, norm=norm), g(x, norm=norm))
    same(f(c, axis=0, norm=norm), g(x, axis=0, norm=norm))
    for n in (1, 5, 9, 16):  # truncated, equal, zero-padded
        same(f(c, n=n, norm=norm), g(x, n=n, norm=norm))
    same(f(c[::-1, 1::2], norm=norm), g(x[::-1, 1::2], norm=norm))
    same(f(c.T, norm=norm), g(x.T, norm=norm))


@pytest.mark.parametrize("name", N_D)
def test_n_dimensional(name):
    dtype = "float64" if name in REAL_IN else "complex128"
    x = signal((3, 4, 6), dtype)
    c = cp.asarray(x)
    f, g = getattr(cp.fft, name), getattr(numpy.fft, name)
    for norm in NORMS:
        same(f(c, norm=norm), g(x, norm=norm))
    same(f(c, axes=(0, 2)), g(x, axes=(0, 2)))
    same(f(c, s=(5, 8), axes=(1, 2)), g(x, s=(5, 8), axes=(1, 2)))
    same(f(c[:, ::2, ::-1]), g(x[:, ::2, ::-1]))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_dtypes(name, dtype):
    if name in REAL_IN and dtype.startswith("complex"):
        pytest.skip("NumPy's rfft/ihfft take real input only")
    x = signal((3, 8), dtype)
    same(getattr(cp.fft, name)(cp.asarray(x)), getattr(numpy.fft, name)(x))


def test_roundtrips_and_out():
    x = signal((5, 12), "float64")
    c = cp.asarray(x)
    same(cp.fft.irfft(cp.fft.rfft(c), n=12), x)
    same(cp.fft.ifft(cp.fft.fft(c)).real, x)
    out = cp.zeros((5, 12), complex)
    r = cp.fft.fft(c, out=out)
    assert r is out
    same(out, numpy.fft.fft(x))
    same(cp.fft.fftshift(cp.fft.fftfreq(12)), numpy.fft.fftshift(numpy.fft.fftfreq(12)))


def test_zero_d_empty_and_errors():
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        cp.fft.fft(cp.zeros(0))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        cp.fft.rfft(cp.ones(4), n=0)
    with pytest.raises(ValueError, match="Invalid norm"):
        cp.fft.fft(cp.ones(4), norm="bad")
    with pytest.raises(numpy.exceptions.AxisError):
        cp.fft.fft(cp.ones(4), axis=1)
    with pytest.raises(Exception):
        cp.fft.fft(cp.asarray(numpy.float64(1.0)))
    same(cp.fft.fft(cp.zeros((0, 4))), numpy.fft.fft(numpy.zeros((0, 4))))
    same(cp.fft.rfft(cp.zeros((3, 0, 4))), numpy.fft.rfft(numpy.zeros((3, 0, 4))))


def test_fused_with_elementwise_work():
    t = numpy.linspace(0, 1, 256, endpoint=False)
    sig = numpy.sin(2 * numpy.pi * 5 * t) + 0.5 * numpy.cos(2 * numpy.pi * 20 * t)
    c = cp.asarray(t)
    ours = cp.abs(cp.fft.rfft(cp.sin(2 * cp.pi * 5 * c) + 0.5 * cp.cos(2 * cp.pi * 20 * c)))
    same(ours, numpy.abs(numpy.fft.rfft(sig)))
    assert int(cp.argmax(ours)) == 5
