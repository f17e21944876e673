"""cpnumeric.random: the Philox words (known answer, eager == compiled, any
thread count), distributions against NumPy's by quantiles, np.random's
calling conventions (size, scalars, broadcasting, dtypes), errors and the
declared fallback."""

import warnings

import numpy
import pytest

import cpnumeric as cp

N = 200_000
QUANTILES = [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]


def same_distribution(ours, ref, rel=0.03):
    """Quantiles of two large samples agree (relative to the spread)."""
    ours, ref = numpy.asarray(ours).ravel(), numpy.asarray(ref).ravel()
    qo, qr = numpy.quantile(ours, QUANTILES), numpy.quantile(ref, QUANTILES)
    spread = numpy.quantile(ref, 0.9) - numpy.quantile(ref, 0.1)
    tails = numpy.array([3 if q in (0.01, 0.99) else 1 for q in QUANTILES])
    assert (numpy.abs(qo - qr) <= rel * spread * tails).all(), (qo, qr)


def same_discrete(ours, ref):
    """Two large integer samples have the same law: the largest gap between
    their cumulative frequencies (two-sample Kolmogorov-Smirnov, at the gap
    a false alarm has probability about 1e-7; quantiles of discrete laws
    jump by one at the boundaries, so same_distribution does not apply)."""
    ours, ref = numpy.asarray(ours).ravel(), numpy.asarray(ref).ravel()
    tol = 3.0 * numpy.sqrt(1.0 / ours.size + 1.0 / ref.size)
    lo = min(ours.min(), ref.min())
    top = max(ours.max(), ref.max()) - lo + 1
    fo = numpy.cumsum(numpy.bincount(ours - lo, minlength=top)) / ours.size
    fr = numpy.cumsum(numpy.bincount(ref - lo, minlength=top)) / ref.size
    assert numpy.abs(fo - fr).max() < tol, numpy.abs(fo - fr).max()


def test_philox_known_answer():
    # Random123's known answer for philox4x32-10, counter 0, key 0: the first
    # two words are 0x6627e8d5 0xe169c58d.
    assert int(cp._core._cpn.philox_words(0, 0, 1)[0]) == 0x6627E8D5E169C58D
    g = cp.random.default_rng(0)
    g._key = 0
    assert int(numpy.asarray(g._bits((3,)))[0]) == 0x6627E8D5E169C58D


@pytest.mark.parametrize("shape", [(1000,), (7, 13, 11), (0,), (3, 0)])
def test_compiled_words_equal_numpy_words(shape, monkeypatch):
    g = cp.random.default_rng(123)
    g._counter = (1 << 64) - 500  # the counter wraps inside the draw
    compiled = numpy.asarray(g._bits(shape))
    monkeypatch.setitem(cp._core.EAGER, "threshold", 1 << 30)
    h = cp.random.default_rng(123)
    h._counter = (1 << 64) - 500
    eager = h._bits(shape)
    assert eager._eager() is not None
    assert numpy.array_equal(compiled, numpy.asarray(eager))
    assert compiled.dtype == numpy.uint64


def test_same_seed_same_stream_any_thread_count():
    results = []
    for threads in (1, 2):
        cp.set_num_threads(threads)
        g = cp.random.default_rng([7, 8])
        results.append([numpy.asarray(g.normal(size=(300, 301))),
                        numpy.asarray(g.random(50_000)),
                        numpy.asarray(g.integers(0, 1000, size=4096))])
    cp.set_num_threads(0)
    for a, b in zip(*results):
        assert numpy.array_equal(a, b)
    # consecutive draws differ; a different seed differs
    g = cp.random.default_rng(5)
    a, b = numpy.asarray(g.random(1000)), numpy.asarray(g.random(1000))
    assert not numpy.array_equal(a, b)
    c = numpy.asarray(cp.random.default_rng(6).random(1000))
    assert not numpy.array_equal(a, c)


def test_uniform_words_have_full_range_and_no_bias():
    g = cp.random.default_rng(1)
    u = numpy.asarray(g.random(N))
    assert u.dtype == numpy.float64 and 0.0 <= u.min() and u.max() < 1.0
    same_distribution(u, numpy.random.default_rng(0).random(N))
    f = numpy.asarray(g.random(N, dtype=numpy.float32))
    assert f.dtype == numpy.float32 and f.max() < 1.0
    counts = numpy.bincount(numpy.asarray(g.integers(0, 10, size=N)), minlength=10)
    assert counts.min() > N / 10 * 0.95 and counts.max() < N / 10 * 1.05


@pytest.mark.parametrize("name,args", [
    ("uniform", (-2.0, 5.0)), ("normal", (1.0, 3.0)), ("standard_normal", ()),
    ("lognormal", (0.5, 0.4)), ("exponential", (2.0,)), ("standard_exponential", ()),
    ("logistic", (1.0, 2.0)), ("gumbel", (1.0, 2.0)), ("laplace", (0.0, 2.0)),
    ("weibull", (1.5,)), ("pareto", (3.0,)), ("power", (2.5,)), ("rayleigh", (2.0,)),
    ("standard_cauchy", ()), ("triangular", (-1.0, 0.5, 3.0)), ("wald", (1.0, 2.0)),
    ("geometric", (0.3,)), ("integers", (-5, 17)),
    # rejection sampling in rounds (Marsaglia-Tsang gamma and its family)
    ("standard_gamma", (0.4,)), ("standard_gamma", (1.0,)), ("standard_gamma", (7.5,)),
    ("gamma", (2.5, 3.0)), ("chisquare", (3.0,)), ("beta", (0.5, 0.7)), ("beta", (2.0, 9.0)),
    ("f", (5.0, 12.0)), ("standard_t", (4.0,)),
    # inversion below a mean of 10, transformed rejection (PTRS, BTRS) above
    ("poisson", (0.7,)), ("poisson", (6.0,)), ("poisson", (45.0,)),
    ("binomial", (12, 0.3)), ("binomial", (300, 0.6)), ("binomial", (40, 0.97)),
    # compositions (negative_binomial: Poisson of Gamma; the noncentral laws
    # from chi-squares, normals and Poissons) and more rejection samplers
    ("negative_binomial", (3, 0.4)), ("noncentral_chisquare", (3.0, 2.0)),
    ("noncentral_chisquare", (0.5, 1.5)), ("noncentral_f", (3.0, 20.0, 3.0)),
    ("logseries", (0.6,)), ("vonmises", (0.5, 4.0)), ("vonmises", (-3.0, 1e-9)),
    ("vonmises", (2.0, 1e7)), ("zipf", (2.5,)),
])
def test_distributions_match_numpy(name, args):
    ours = getattr(cp.random.default_rng(11), name)(*args, size=N)
    ref = getattr(numpy.random.default_rng(0), name)(*args, size=N)
    assert numpy.asarray(ours).dtype == ref.dtype, name
    if name == "standard_cauchy":  # heavy tails: compare the middle
        ours, ref = numpy.clip(ours, -20, 20), numpy.clip(ref, -20, 20)
    if name == "zipf":  # heavy tail: compare below 1000
        ours, ref = numpy.minimum(ours, 1000), numpy.minimum(ref, 1000)
    if name in ("poisson", "binomial", "negative_binomial", "logseries", "zipf"):
        same_discrete(ours, ref)
    else:
        same_distribution(ours, ref)


def test_legacy_module_functions_and_seed():
    cp.random.seed(3)
    a = [numpy.asarray(cp.random.rand(4, 5)), numpy.asarray(cp.random.randn(6)),
         numpy.asarray(cp.random.randint(2, 9, size=7)),
         numpy.asarray(cp.random.random_sample((2, 2))), numpy.asarray(cp.random.ranf(3)),
         numpy.asarray(cp.random.sample(3)), numpy.asarray(cp.random.random(2))]
    state = cp.random.get_state()
    nxt = numpy.asarray(cp.random.normal(size=5))
    cp.random.seed(3)
    b = [numpy.asarray(cp.random.rand(4, 5)), numpy.asarray(cp.random.randn(6)),
         numpy.asarray(cp.random.randint(2, 9, size=7)),
         numpy.asarray(cp.random.random_sample((2, 2))), numpy.asarray(cp.random.ranf(3)),
         numpy.asarray(cp.random.sample(3)), numpy.asarray(cp.random.random(2))]
    for x, y in zip(a, b):
        assert numpy.array_equal(x, y)
    assert a[0].shape == (4, 5) and a[2].dtype == numpy.int64
    assert a[2].min() >= 2 and a[2].max() < 9
    cp.random.set_state(state)
    assert numpy.array_equal(numpy.asarray(cp.random.normal(size=5)), nxt)
    assert isinstance(cp.random.rand(), float)
    assert isinstance(cp.random.randn(), float)
    with pytest.warns(DeprecationWarning):
        r = numpy.asarray(cp.random.random_integers(1, 6, size=1000))
    assert r.min() == 1 and r.max() == 6
    rs = cp.random.RandomState(5)
    assert numpy.array_equal(numpy.asarray(rs.rand(3)),
                             numpy.asarray(cp.random.RandomState(5).rand(3)))
    with pytest.raises(ValueError):
        cp.random.set_state(numpy.random.get_state())


def test_size_scalars_and_broadcast_parameters():
    g = cp.random.default_rng(2)
    assert isinstance(g.random(), float)
    assert isinstance(g.normal(1.0, 2.0), float)
    assert isinstance(g.integers(10), numpy.int64)
    assert numpy.asarray(g.normal([0.0, 10.0, 100.0], 1e-3)).shape == (3,)
    r = numpy.asarray(g.normal(cp.array([0.0, 10.0, 100.0]), 1e-3, size=(4, 3)))
    assert r.shape == (4, 3)
    numpy.testing.assert_allclose(r.mean(axis=0), [0, 10, 100], atol=0.01)
    lo = cp.array([0, 100, -50])
    i = numpy.asarray(g.integers(lo, lo + 5, size=(1000, 3)))
    assert (i >= numpy.array([0, 100, -50])).all() and (i < numpy.array([5, 105, -45])).all()
    assert numpy.asarray(g.integers(0, 3, size=100, endpoint=True)).max() == 3
    u8 = numpy.asarray(g.integers(0, 256, size=5000, dtype=numpy.uint8))
    assert u8.dtype == numpy.uint8 and u8.max() == 255
    big = numpy.asarray(g.integers(0, 2**62, size=1000))
    assert big.max() > 2**60
    assert g.random(size=0).shape == (0,)
    out = cp.zeros((3, 4))
    assert g.random(out=out) is out and 0 < float(out.sum()) < 12
    with pytest.raises(ValueError, match="shape mismatch"):
        g.normal([0.0, 1.0], 1.0, size=(3,))


def test_parameter_errors():
    g = cp.random.default_rng(0)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0, -1)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0, cp.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="p <= 0"):
        g.geometric(1.5)
    with pytest.raises(ValueError, match="left > mode"):
        g.triangular(2, 1, 3)
    with pytest.raises(ValueError, match="non-negative"):
        cp.random.default_rng(-1)
    with pytest.raises(TypeError):
        g.integers(0, 5, dtype=numpy.float64)
    with pytest.raises(ValueError, match="high is out of bounds"):
        g.integers(0, 300, dtype=numpy.uint8)


def test_multivariate_normal():
    mean = [1.0, -2.0, 0.5]
    cov = [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]]
    for method in ("svd", "cholesky", "eigh"):
        x = numpy.asarray(cp.random.default_rng(4).multivariate_normal(
            mean, cov, size=(N // 2,), method=method))
        assert x.shape == (N // 2, 3)
        numpy.testing.assert_allclose(x.mean(axis=0), mean, atol=0.02)
        numpy.testing.assert_allclose(numpy.cov(x.T), cov, atol=0.03)
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        cp.random.default_rng(0).multivariate_normal([0, 0], [[1, 2], [2, 1]], size=3)


def test_bytes_and_spawn():
    g = cp.random.default_rng(9)
    b = g.bytes(21)
    assert isinstance(b, bytes) and len(b) == 21
    kids = g.spawn(2)
    assert not numpy.array_equal(numpy.asarray(kids[0].random(10)),
                                 numpy.asarray(kids[1].random(10)))


def test_fallbacks_warn_and_are_seeded():
    g = cp.random.default_rng(0)
    with pytest.warns(RuntimeWarning, match="not implemented natively"):
        h = numpy.asarray(g.hypergeometric(10, 5, 6, size=N))
    assert abs(h.mean() - 4.0) < 0.05
    a = numpy.asarray(cp.random.default_rng(1).negative_binomial(10, 0.5, size=10))
    b = numpy.asarray(cp.random.default_rng(1).negative_binomial(10, 0.5, size=10))
    assert numpy.array_equal(a, b)


def test_multinomial():
    m = numpy.asarray(cp.random.default_rng(3).multinomial(20, [0.2, 0.3, 0.5], size=N // 2))
    assert m.shape == (N // 2, 3) and m.dtype == numpy.int64 and (m.sum(axis=1) == 20).all()
    ref = numpy.random.default_rng(0).multinomial(20, [0.2, 0.3, 0.5], size=N // 2)
    for j in range(3):
        same_discrete(m[:, j], ref[:, j])
    numpy.testing.assert_allclose(numpy.cov(m.T), numpy.cov(ref.T), atol=0.1)
    # the last p is not read (NumPy); n broadcast against size
    assert numpy.asarray(cp.random.default_rng(0).multinomial(5, [0.5, 0.7])).sum() == 5
    rows = numpy.asarray(cp.random.default_rng(0).multinomial(cp.array([3, 10]), [0.5, 0.5]))
    assert (rows.sum(axis=1) == [3, 10]).all()
    with pytest.raises(ValueError, match="pvals < 0"):
        cp.random.default_rng(0).multinomial(3, [-0.1, 1.1])
    with pytest.raises(ValueError, match=r"sum\(pvals\[:-1\]\) > 1.0"):
        cp.random.default_rng(0).multinomial(3, [0.8, 0.7, 0.1])


def test_discrete_with_array_parameters():
    """Means on both sides of the inversion / rejection switch in one call,
    p above 1/2 (by symmetry), the edges 0 and 1, scalars, seeds."""
    lam = cp.array([0.0, 0.5, 4.0, 15.0, 200.0]).reshape(5, 1)
    ours = numpy.asarray(cp.random.default_rng(7).poisson(lam, size=(5, N // 5)))
    ref = numpy.random.default_rng(0).poisson(numpy.asarray(lam), size=(5, N // 5))
    assert ours.dtype == numpy.int64 and (ours[0] == 0).all()
    for row in range(1, 5):
        same_discrete(ours[row], ref[row])
    n = cp.array([0, 5, 60, 1000, 7]).reshape(5, 1)
    p = cp.array([0.3, 0.8, 0.5, 0.02, 1.0]).reshape(5, 1)
    ours = numpy.asarray(cp.random.default_rng(8).binomial(n, p, size=(5, N // 5)))
    ref = numpy.random.default_rng(0).binomial(numpy.asarray(n), numpy.asarray(p),
                                               size=(5, N // 5))
    assert (ours[0] == 0).all() and (ours[4] == 7).all()
    for row in range(1, 4):
        same_discrete(ours[row], ref[row])
    again = numpy.asarray(cp.random.default_rng(8).binomial(n, p, size=(5, N // 5)))
    assert numpy.array_equal(ours, again)
    assert isinstance(cp.random.default_rng(0).poisson(3.0), numpy.int64)
    assert cp.random.binomial(10, 0.5, size=4).shape == (4,)
    with pytest.raises(ValueError, match="lam < 0"):
        cp.random.default_rng(0).poisson(-1.0)
    with pytest.raises(ValueError, match="p < 0, p > 1"):
        cp.random.default_rng(0).binomial(3, 1.5)
    with pytest.raises(ValueError, match="n < 0"):
        cp.random.default_rng(0).binomial(-3, 0.5)


def test_gamma_with_array_parameters_and_seeds():
    """Per-element shapes (broadcast), zero shape, reproducible for a seed."""
    k = cp.array([0.0, 0.3, 1.0, 6.0]).reshape(4, 1)
    ours = numpy.asarray(cp.random.default_rng(5).gamma(k, 2.0, size=(4, N // 4)))
    ref = numpy.random.default_rng(0).gamma(numpy.asarray(k), 2.0, size=(4, N // 4))
    assert (ours[0] == 0).all()
    for row in range(1, 4):
        same_distribution(ours[row], ref[row])
    again = numpy.asarray(cp.random.default_rng(5).gamma(k, 2.0, size=(4, N // 4)))
    assert numpy.array_equal(ours, again)
    d = numpy.asarray(cp.random.default_rng(6).dirichlet([0.5, 2.0, 3.5], size=N // 4))
    numpy.testing.assert_allclose(d.sum(axis=1), 1.0, rtol=1e-12)
    numpy.testing.assert_allclose(d.mean(axis=0), [0.5 / 6, 2.0 / 6, 3.5 / 6], atol=0.01)
    assert isinstance(cp.random.default_rng(0).standard_gamma(2.0), float)
    with pytest.raises(ValueError, match="shape < 0"):
        cp.random.default_rng(0).gamma(-1.0)
    with pytest.raises(ValueError, match="a <= 0"):
        cp.random.default_rng(0).beta(0.0, 1.0)


def test_permutation_shuffle_choice():
    g = cp.random.default_rng(2)
    x = cp.arange(1000)
    g.shuffle(x)
    xs = numpy.asarray(x)
    assert sorted(xs.tolist()) == list(range(1000)) and not (xs == numpy.arange(1000)).all()
    m = cp.arange(24).reshape(4, 6)
    pm = numpy.asarray(g.permutation(m, axis=1))
    assert (numpy.sort(pm, axis=1) == numpy.arange(24).reshape(4, 6)).all()
    assert (numpy.diff(pm, axis=0) == 6).all()  # whole columns moved
    assert sorted(numpy.asarray(cp.random.permutation(5)).tolist()) == list(range(5))
    with pytest.raises(IndexError):
        g.permutation(cp.array(3.0))
    # choice: uniform, weighted, without replacement (weighted: successive
    # sampling, NumPy's law), from an array along an axis, scalars
    c = numpy.asarray(g.choice(5, size=N))
    assert numpy.abs(numpy.bincount(c, minlength=5) / N - 0.2).max() < 0.01
    p = [0.1, 0.0, 0.2, 0.3, 0.4]
    c = numpy.asarray(g.choice(5, size=N, p=p))
    assert numpy.abs(numpy.bincount(c, minlength=5) / N - p).max() < 0.01
    c = numpy.asarray(g.choice(50, size=(5, 10), replace=False))
    assert sorted(c.ravel().tolist()) == list(range(50))
    counts = numpy.zeros(4)
    for _ in range(2000):
        pick = numpy.asarray(g.choice(4, 2, replace=False, p=[0.1, 0.2, 0.3, 0.4]))
        assert pick[0] != pick[1]
        counts[pick] += 1
    first = numpy.array([0.1, 0.2, 0.3, 0.4])
    incl = first + sum(first[j] * first / (1 - first[j]) for j in range(4)) \
        - first * first / (1 - first)
    numpy.testing.assert_allclose(counts / 2000, incl, atol=0.04)
    rows = numpy.asarray(g.choice(cp.arange(12).reshape(3, 4), 5, axis=1))
    assert rows.shape == (3, 5) and (numpy.diff(rows, axis=0) == 4).all()
    assert isinstance(g.choice(5), numpy.integer)
    for kwargs, msg in [({"size": 6, "replace": False}, "larger sample"),
                        ({"p": [0.5, 0.6, 0, 0, 0]}, "do not sum to 1"),
                        ({"p": [1.5, -0.5, 0, 0, 0]}, "non-negative"),
                        ({"p": [0.5, 0.5]}, "same size"),
                        ({"size": 3, "replace": False, "p": [0.5, 0.5, 0, 0, 0]}, "non-zero")]:
        with pytest.raises(ValueError, match=msg):
            g.choice(5, **kwargs)


def test_random_inside_jit_is_refused():
    @cp.jit
    def f(x):
        return x + cp.random.default_rng(0).random(x.shape)
    with pytest.raises(cp.TracingError, match="random"):
        f(cp.zeros(2000))


def test_normal_fuses_into_one_loop():
    g = cp.random.default_rng(0)
    cp.synchronize()
    before = cp.stats()["tasks_run"]
    y = g.normal(size=1_000_000) * 2 + 1
    s = float(y.sum())
    assert abs(s / 1e6 - 1) < 0.01
    assert cp.stats()["tasks_run"] - before == 1


def _open_uniforms(key, counter, parts, shape):
    """The (0, 1) float64 uniforms of `parts` consecutive parts of words of
    `shape` from `counter` on, as _uniform makes them."""
    n = int(numpy.prod(shape))
    w = cp._cpn.philox_words(key, counter, parts * n).reshape((parts,) + tuple(shape))
    return ((w >> numpy.uint64(11)).astype(numpy.float64) + 0.5) * 2.0 ** -53


def _box_muller(u0, u1):
    return numpy.sqrt(numpy.log(u0) * -2.0) * numpy.cos(u1 * (2 * numpy.pi))


def test_normal_words_are_the_streams_halves():
    # Box-Muller reads words [c, c + n) for one uniform and [c + n, c + 2n)
    # for the other (a draw of (2,) + shape split in halves), traced as two
    # cpn.random_bits ops that fuse into the loop: NumPy's formula on those
    # words, to libm's rounding, and the eager path's values.
    g = cp.random.default_rng(31)
    key, counter = g._key, g._counter
    shape = (300, 301)
    got = numpy.asarray(g.standard_normal(shape))
    n = 300 * 301
    u = _open_uniforms(key, counter, 2, shape)
    numpy.testing.assert_allclose(got, _box_muller(u[0], u[1]), rtol=1e-13, atol=1e-13)
    assert g._counter == (counter + 2 * n) % (1 << 64)
    small = cp.random.default_rng(31)
    from cpnumeric import _core
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 1 << 30  # the same draw on the eager path
    try:
        eager = numpy.asarray(small.standard_normal(shape))
    finally:
        _core.EAGER["threshold"] = old
    numpy.testing.assert_allclose(eager, got, rtol=1e-13, atol=1e-13)


def test_cauchy_words_are_a_normal_pairs_parts():
    # standard_cauchy: the ratio of the two halves of a normal draw of
    # (2,) + shape, drawn as four parts of words (each fused, each split by
    # rows under MPI): parts a, b, c, d of n words, z0 from (a, c), z1 from
    # (b, d).
    g = cp.random.default_rng(32)
    key, counter = g._key, g._counter
    shape = (200, 301)
    got = numpy.asarray(g.standard_cauchy(shape))
    u = _open_uniforms(key, counter, 4, shape)
    numpy.testing.assert_allclose(got, _box_muller(u[0], u[2]) / _box_muller(u[1], u[3]),
                                  rtol=1e-10)
