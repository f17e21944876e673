"""x.T @ f(x @ w): cpn-fuse-row-products runs both products per block of
rows (one pass over x). Values against NumPy on the same inputs: gradients
of linear models, chain values read after the product, shapes the pass
leaves alone (rows no block divides, views, a reader before the product)."""

import numpy
import pytest

import cpnumeric as cp


def close(got, want, dtype):
    tol = 1e-4 if numpy.dtype(dtype) == numpy.float32 else 1e-10
    got = cp.asnumpy(got)
    assert got.shape == numpy.shape(want)
    assert got.dtype == numpy.asarray(want).dtype
    numpy.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def logistic_gradient(np, x, w, y):
    z = x @ w
    prob = 1.0 / (1.0 + np.exp(-z))
    return x.T @ (prob - y) / x.shape[0], z, prob


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("rows,cols", [(4096, 8), (20000, 32), (300, 3),
                                       (2053, 4), (65536, 1)])
def test_logistic_gradient(dtype, rows, cols):
    g = numpy.random.default_rng(rows + cols)
    xn = g.normal(size=(rows, cols)).astype(dtype)
    wn = g.normal(size=cols).astype(dtype)
    yn = (g.random(rows) > 0.5).astype(dtype)
    want = logistic_gradient(numpy, xn, wn, yn)
    got = logistic_gradient(cp, cp.asarray(xn), cp.asarray(wn),
                            cp.asarray(yn))
    for a, b in zip(got, want):    # the gradient, and z and prob read after
        close(a, b, dtype)


def test_training_loop_matches_numpy():
    # Gradient descent: w feeds the next iteration's x @ w; the loss reads
    # prob after the loop.
    g = numpy.random.default_rng(1)
    xn = g.normal(size=(10000, 16))
    yn = (xn @ g.normal(size=16) > 0).astype(float)

    def train(np, x, y):
        w = np.zeros(x.shape[1])
        for _ in range(6):
            z = x @ w
            prob = 1.0 / (1.0 + np.exp(-z))
            w -= 0.5 * (x.T @ (prob - y) / x.shape[0])
        return w, -np.mean(y * np.log(prob + 1e-12))

    want = train(numpy, xn, yn)
    got = train(cp, cp.asarray(xn), cp.asarray(yn))
    close(got[0], want[0], "float64")
    close(got[1], want[1], "float64")


def test_least_squares_and_normal_products():
    # x.T @ (x @ w - y) (a linear regression's gradient) and x.T @ (x @ v)
    # (the normal equations' product), with a (rows, 1) right-hand side.
    g = numpy.random.default_rng(2)
    xn = g.normal(size=(8192, 12))
    wn = g.normal(size=12)
    yn = g.normal(size=8192)
    vn = g.normal(size=(12, 1))
    x, w, y, v = (cp.asarray(a) for a in (xn, wn, yn, vn))
    close(x.T @ (x @ w - y), xn.T @ (xn @ wn - yn), "float64")
    close(x.T @ (x @ v), xn.T @ (xn @ vn), "float64")
    close(x.T @ (2.0 * (x @ v) + 1.0), xn.T @ (2.0 * (xn @ vn) + 1.0),
          "float64")


def test_shapes_left_alone_are_still_right():
    g = numpy.random.default_rng(3)
    xn = g.normal(size=(8192, 8))
    wn = g.normal(size=8)
    x, w = cp.asarray(xn), cp.asarray(wn)
    # a non-contiguous x (a view: not stored data)
    close(x[::2].T @ (numpy.tanh(1.0) * (x[::2] @ w)),
          xn[::2].T @ (numpy.tanh(1.0) * (xn[::2] @ wn)), "float64")
    # the chain read before the product
    z = x @ w
    s = float(z.sum())
    close(x.T @ cp.sin(z), xn.T @ numpy.sin(xn @ wn), "float64")
    assert s == pytest.approx(float((xn @ wn).sum()), rel=1e-10, abs=1e-9)
    # no columns (stored, as the pass needs): x @ w is zeros, x.T @ v empty
    en = numpy.zeros((4096, 0))
    e = cp.asarray(en)
    close(e.T @ (e @ cp.zeros(0) + 1.0), en.T @ (en @ numpy.zeros(0) + 1.0),
          "float64")


UNARY = ["negative", "exp", "tanh", "absolute", "sqrt", "square", "sin", "log1p"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@pytest.mark.parametrize("seed", range(12))
def test_random_chains(seed):
    # x.T @ f(x @ w, y, scalars) for random row-by-row chains f, with z (and
    # sometimes a chain value) read after the product; some shapes the pass
    # takes, some it leaves alone.
    import random
    pick = random.Random(seed)
    rows = pick.choice([256, 300, 1024, 4096, 2053, 6000])
    cols = pick.choice([1, 3, 8, 32])
    dtype = pick.choice(["float64", "float32"])
    column = pick.random() < 0.3
    steps = [(pick.random(), pick.choice(UNARY), pick.choice(BINARY),
              pick.random(), pick.choice([0.5, 2.0, -1.0]), pick.choice([0.0, 1.0]))
             for _ in range(pick.randint(0, 4))]
    keep = pick.random() < 0.3

    def f(np, x, w, y):
        z = x @ (w[:, None] if column else w)
        yy = y[:, None] if column else y
        v = z
        for k, un, bi, side, a, b in steps:
            if k < 0.4:
                v = getattr(np, un)(v)
            elif k < 0.7:
                v = getattr(np, bi)(v, yy if side < 0.5 else z)
            else:
                v = v * a + b
        out = [x.T @ v, z]
        if keep:
            out.append(v * 1)
        return out

    g = numpy.random.default_rng(seed)
    xn = (g.normal(size=(rows, cols)) * 0.3).astype(dtype)
    wn = g.normal(size=cols).astype(dtype)
    yn = g.normal(size=rows).astype(dtype)
    with numpy.errstate(all="ignore"), cp.errstate(all="ignore"):
        want = f(numpy, xn, wn, yn)
        got = f(cp, cp.asarray(xn), cp.asarray(wn), cp.asarray(yn))
        tol = 2e-3 if dtype == "float32" else 1e-8
        for a, b in zip(got, want):
            a = cp.asnumpy(a)
            assert a.shape == b.shape and a.dtype == b.dtype
            finite = numpy.abs(b[numpy.isfinite(b)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            numpy.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale,
                                          equal_nan=True)
