"""cpnumeric.random: np.random's API on a counter-based generator.

Random words come from `cpn.random_bits` (Philox4x32-10, counter-based): the
word of draw element i depends only on the generator's key, its counter and
i. Streams are therefore reproducible for a seed whatever the thread count,
loop order or fusion, and the words fuse with the arithmetic that shapes them
into a distribution (uniform, normal by Box-Muller, exponential by inversion,
...): `rng.normal(size=10**8) * 2 + 1` is one loop, with no temporary.

The streams are cpnumeric's own: the same seed does not give NumPy's numbers
(NumPy's MT19937/PCG64 with its ziggurat methods). Distributions that need
rejection sampling (gamma and its family) draw in rounds, each round for the
candidates the last one rejected. Distributions without a native version run
NumPy's Generator, seeded from this generator's state, with a one-time
RuntimeWarning.

Small draws (below CPN_EAGER_THRESHOLD elements) get the same Philox words at
once from the runtime (cpnrt::philoxWords), so a seed gives the same words on
either path.
"""

import fractions
import math
import operator
import secrets
import warnings

import numpy as _np

from . import (_core, _creation, _errstate, _fallback, _jit, _manip, _ranks, _reductions,
               _ufuncs)
from ._core import ndarray, prod, record

_M32 = (1 << 32) - 1
_M64 = (1 << 64) - 1
_U64 = _np.dtype(_np.uint64)


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def _key_from_seed(seed):
    """A 64-bit Philox key from a seed: None (fresh entropy), a non-negative
    integer or a sequence of them."""
    if seed is None:
        # Under several MPI ranks, rank 0's entropy on every rank: the
        # replicated streams must agree.
        return _ranks.shared_entropy(secrets.randbits(64))
    if isinstance(seed, ndarray):
        seed = seed._numpy()
    words = _np.asarray(seed, dtype=object).ravel().tolist()
    key = 0x243F6A8885A308D3
    for w in words:
        try:
            w = operator.index(w)
        except TypeError:
            raise TypeError("SeedSequence expects int or sequence of ints for "
                            f"entropy not {w!r}") from None
        if w < 0:
            raise ValueError("expected non-negative integer")
        while True:
            key = _splitmix(key ^ (w & _M64))
            w >>= 64
            if not w:
                break
    return key


def _signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def _shape_of(size):
    if size is None:
        return None
    try:
        return (operator.index(size),)
    except TypeError:
        return tuple(operator.index(s) for s in size)


def _as(x):
    return x if isinstance(x, ndarray) else _core.asndarray(x)


def _is_scalar(x):
    return isinstance(x, (int, float, _np.integer, _np.floating, bool))


def _stirling_coefficients(count=10):
    """B_2k / (2k (2k - 1)), k = 1..count: the terms of Stirling's series for
    log Gamma (Bernoulli numbers by their recurrence, exactly)."""
    bern = [fractions.Fraction(1)]
    for m in range(1, 2 * count + 1):
        bern.append(-sum(math.comb(m + 1, j) * bern[j] for j in range(m))
                     / fractions.Fraction(m + 1))
    return [float(bern[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, count + 1)]


_STIRLING = _stirling_coefficients()


def _loggam(x):
    """log Gamma(x) for x >= 1 (elementwise, float64): Stirling's series at
    x + s >= 7 (s a whole number), less log(x (x + 1) ... (x + s - 1))."""
    shift = _ufuncs.maximum(_ufuncs.ceil(_ufuncs.subtract(7.0, x)), 0.0)
    x0 = _ufuncs.add(x, shift)
    r = _ufuncs.divide(1.0, _ufuncs.multiply(x0, x0))
    series = _STIRLING[-1]
    for c in reversed(_STIRLING[:-1]):
        series = _ufuncs.add(_ufuncs.multiply(series, r), c)
    gl = _ufuncs.add(_ufuncs.divide(series, x0), 0.5 * math.log(2 * math.pi))
    gl = _ufuncs.add(gl, _ufuncs.subtract(_ufuncs.multiply(_ufuncs.subtract(x0, 0.5),
                                                           _ufuncs.log(x0)), x0))
    for j in range(7):
        gl = _ufuncs.subtract(gl, _ufuncs.where(_ufuncs.less(j, shift),
                                                _ufuncs.log(_ufuncs.add(x, float(j))), 0.0))
    return gl


def _inversion_steps(first, ratio, mean):
    """How many terms an inversion by sequential search needs for the
    largest parameter: terms (first, then times ratio(k)) until they are
    below 2^-64 past the mean, where the tail is beyond a 53-bit uniform."""
    k, term = 0, first
    while not (k > mean and term < 2.0 ** -64):
        k += 1
        term *= ratio(k)
        if term == 0.0 and k > mean:
            break
    return k + 1


class Generator:
    """NumPy's Generator API (`default_rng`): uniform, normal, integers,
    exponential and the other transforms of uniform words, permutations and
    choice, the gamma family by rejection are native; the rest run NumPy's
    Generator seeded from this one."""

    def __init__(self, seed=None):
        self._key = _key_from_seed(seed)
        self._counter = 0

    def __repr__(self):
        return f"Generator(Philox4x32) at {id(self):#x}"

    # -- state ---------------------------------------------------------------
    @property
    def state(self):
        return {"bit_generator": "cpnumeric.Philox4x32", "key": self._key,
                "counter": self._counter}

    @state.setter
    def state(self, value):
        self._key = int(value["key"]) & _M64
        self._counter = int(value["counter"]) & _M64

    def spawn(self, n_children):
        return [Generator([self._key, self._counter, i]) for i in range(n_children)]

    # -- the primitive -----------------------------------------------------------
    def _bits(self, shape):
        """Fresh random 64-bit words of `shape` (uint64)."""
        if _jit.tracing_here():
            raise _jit.tracing_error(
                "drawing random numbers (each call must draw new ones: draw "
                "them outside the function and pass them in)")
        n = prod(shape)
        counter = self._counter
        self._counter = (counter + n) & _M64
        if n < _core.EAGER["threshold"]:
            words = _core._cpn.philox_words(self._key, counter, n)
            return ndarray._from_eager(words.reshape(shape))
        return self._traced_words(counter, shape)

    def _traced_words(self, counter, shape):
        """The words from `counter` on, of `shape`, as a cpn.random_bits op."""
        key = _core.scalar_node(_signed(self._key), _np.dtype(_np.int64))
        ctr = _core._cpn.from_numpy(_np.asarray(_signed(counter), _np.int64))
        node = record("random_bits", [key, ctr], shape, _U64)
        return ndarray._from_node(node, shape, _U64)

    def _bits_parts(self, shape, k=2):
        """k arrays of fresh words of `shape`: the words a draw of (k,) +
        shape takes, part by part. Traced, they are k cpn.random_bits ops
        (counters c, c + n, ...): each fuses into the loop that reads it,
        and each MPI rank draws its own rows of every part (cpn-localize);
        one draw of (k,) + shape would be a buffer of k times the result's
        size whose parts no row split follows."""
        n = prod(shape)
        if k * n < _core.EAGER["threshold"] or _jit.tracing_here():
            bits = self._bits((k,) + tuple(shape))
            return [bits[j] for j in range(k)]
        counter = self._counter
        self._counter = (counter + k * n) & _M64
        return [self._traced_words((counter + j * n) & _M64, shape) for j in range(k)]

    def _uniform(self, shape, dtype=_np.float64, open_interval=False, bits=None):
        """Uniform floats in [0, 1) (or (0, 1) with `open_interval`), from
        `bits` when given."""
        if bits is None:
            bits = self._bits(shape)
        if _np.dtype(dtype) == _np.float32:
            u = _ufuncs.right_shift(bits, 40).astype(_np.float32)
            return _ufuncs.multiply(_ufuncs.add(u, 0.5) if open_interval else u,
                                    _np.float32(2.0 ** -24))
        u = _ufuncs.right_shift(bits, 11).astype(_np.float64)
        return _ufuncs.multiply(_ufuncs.add(u, 0.5) if open_interval else u, 2.0 ** -53)

    def _normal(self, shape, dtype=_np.float64, words=None):
        """Standard normals by Box-Muller on two words per element (`words`:
        the two arrays of words, else fresh ones)."""
        first, second = words or self._bits_parts(shape)
        u0 = self._uniform(shape, dtype, True, first)
        u1 = self._uniform(shape, dtype, True, second)
        radius = _ufuncs.sqrt(_ufuncs.multiply(_ufuncs.log(u0), -2.0))
        return _ufuncs.multiply(radius, _ufuncs.cos(_ufuncs.multiply(u1, 2 * _np.pi)))

    def _exponential(self, shape):
        return _ufuncs.negative(_ufuncs.log1p(_ufuncs.negative(self._uniform(shape))))

    def _draw(self, size, params, make):
        """`make(shape)` for size (None: the parameters' broadcast shape; a
        Python scalar result when every parameter is a scalar)."""
        shape = _shape_of(size)
        params = [p if _is_scalar(p) else _as(p) for p in params]
        pshape = _np.broadcast_shapes(*[() if _is_scalar(p) else p._shape for p in params])
        if shape is None:
            r = make(pshape, params)
            scalar = all(_is_scalar(p) for p in params)
            return r.item() if scalar and isinstance(r, ndarray) else r
        if _np.broadcast_shapes(pshape, shape) != shape:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a "
                             f"single shape.  Mismatch is between arg 0 with shape "
                             f"{shape} and arg 1 with shape {pshape}.")
        return make(shape, params)

    def _draw_int(self, size, params, make):
        """_draw for integer laws: a scalar result is an np.int64, as NumPy's."""
        r = self._draw(size, params, make)
        return r if isinstance(r, ndarray) else _np.int64(r)

    @staticmethod
    def _check(bad, params, msg):
        """ValueError(msg) where bad(x) holds for an element of a parameter
        (bad is written with comparisons that work on Python scalars and on
        arrays; an array parameter makes this a sync point)."""
        for p in params:
            if _is_scalar(p):
                if bad(p):
                    raise ValueError(msg)
            elif bool(_reductions.any(bad(_as(p)))):
                raise ValueError(msg)

    # -- distributions ---------------------------------------------------------
    def random(self, size=None, dtype=_np.float64, out=None):
        dtype = _np.dtype(dtype)
        if dtype not in (_np.float32, _np.float64):
            raise TypeError(f"Unsupported dtype {dtype} for random")
        if out is not None:
            out[...] = self._uniform(out.shape, dtype)
            return out
        return self._draw(size, [], lambda s, p: self._uniform(s, dtype))

    def uniform(self, low=0.0, high=1.0, size=None):
        def make(shape, p):
            lo, hi = p
            return _ufuncs.add(lo, _ufuncs.multiply(_ufuncs.subtract(hi, lo),
                                                    self._uniform(shape)))
        return self._draw(size, [low, high], make)

    def standard_normal(self, size=None, dtype=_np.float64, out=None):
        dtype = _np.dtype(dtype)
        if out is not None:
            out[...] = self._normal(out.shape, dtype)
            return out
        return self._draw(size, [], lambda s, p: self._normal(s, dtype))

    def normal(self, loc=0.0, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")
        return self._draw(size, [loc, scale], lambda s, p: _ufuncs.add(
            p[0], _ufuncs.multiply(p[1], self._normal(s))))

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        self._check(lambda s: s < 0, [sigma], "sigma < 0")
        return self._draw(size, [mean, sigma], lambda s, p: _ufuncs.exp(_ufuncs.add(
            p[0], _ufuncs.multiply(p[1], self._normal(s)))))

    def standard_exponential(self, size=None, dtype=_np.float64, method="zig", out=None):
        r = self._draw(size, [], lambda s, p: self._exponential(s))
        if _np.dtype(dtype) != _np.float64 and isinstance(r, ndarray):
            r = r.astype(dtype)
        if out is not None:
            out[...] = r
            return out
        return r

    def exponential(self, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")
        return self._draw(size, [scale], lambda s, p: _ufuncs.multiply(
            p[0], self._exponential(s)))

    def logistic(self, loc=0.0, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")

        def make(shape, p):
            u = self._uniform(shape, open_interval=True)
            return _ufuncs.add(p[0], _ufuncs.multiply(p[1], _ufuncs.log(
                _ufuncs.divide(u, _ufuncs.subtract(1.0, u)))))
        return self._draw(size, [loc, scale], make)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")

        def make(shape, p):
            u = self._uniform(shape, open_interval=True)
            return _ufuncs.subtract(p[0], _ufuncs.multiply(p[1], _ufuncs.log(
                _ufuncs.negative(_ufuncs.log(u)))))
        return self._draw(size, [loc, scale], make)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")

        def make(shape, p):
            u = self._uniform(shape, open_interval=True)
            low = _ufuncs.log(_ufuncs.add(u, u))
            high = _ufuncs.negative(_ufuncs.log(_ufuncs.subtract(2.0, _ufuncs.add(u, u))))
            return _ufuncs.add(p[0], _ufuncs.multiply(
                p[1], _ufuncs.where(_ufuncs.less(u, 0.5), low, high)))
        return self._draw(size, [loc, scale], make)

    def weibull(self, a, size=None):
        self._check(lambda s: s < 0, [a], "a < 0")

        def make(shape, p):
            e = self._exponential(shape)
            r = _ufuncs.power(e, _ufuncs.divide(1.0, p[0]))
            return _ufuncs.where(_ufuncs.equal(p[0], 0), 0.0, r)
        return self._draw(size, [a], make)

    def pareto(self, a, size=None):
        self._check(lambda s: s <= 0, [a], "a <= 0")
        return self._draw(size, [a], lambda s, p: _ufuncs.expm1(
            _ufuncs.divide(self._exponential(s), p[0])))

    def power(self, a, size=None):
        self._check(lambda s: s <= 0, [a], "a <= 0")
        return self._draw(size, [a], lambda s, p: _ufuncs.power(
            _ufuncs.negative(_ufuncs.expm1(_ufuncs.negative(self._exponential(s)))),
            _ufuncs.divide(1.0, p[0])))

    def rayleigh(self, scale=1.0, size=None):
        self._check(lambda s: s < 0, [scale], "scale < 0")
        return self._draw(size, [scale], lambda s, p: _ufuncs.multiply(
            p[0], _ufuncs.sqrt(_ufuncs.multiply(self._exponential(s), 2.0))))

    def standard_cauchy(self, size=None):
        def make(shape, p):
            # The words of a normal draw of (2,) + shape, part by part.
            a, b, c, d = self._bits_parts(shape, 4)
            return _ufuncs.divide(self._normal(shape, words=(a, c)),
                                  self._normal(shape, words=(b, d)))
        return self._draw(size, [], make)

    def triangular(self, left, mode, right, size=None):
        def bad(x):
            return bool(_reductions.any(x) if isinstance(x, ndarray) else x)
        lo, mo, hi = [x if _is_scalar(x) else _as(x) for x in (left, mode, right)]
        if bad(lo > mo):
            raise ValueError("left > mode")
        if bad(mo > hi):
            raise ValueError("mode > right")
        if bad(lo == hi):
            raise ValueError("left == right")

        def make(shape, p):
            lo, mo, hi = p
            base = _ufuncs.subtract(hi, lo)
            leftbase = _ufuncs.subtract(mo, lo)
            u = self._uniform(shape)
            first = _ufuncs.add(lo, _ufuncs.sqrt(_ufuncs.multiply(
                u, _ufuncs.multiply(leftbase, base))))
            second = _ufuncs.subtract(hi, _ufuncs.sqrt(_ufuncs.multiply(
                _ufuncs.subtract(1.0, u),
                _ufuncs.multiply(_ufuncs.subtract(hi, mo), base))))
            return _ufuncs.where(_ufuncs.less_equal(u, _ufuncs.divide(leftbase, base)),
                                 first, second)
        return self._draw(size, [left, mode, right], make)

    def wald(self, mean, scale, size=None):
        self._check(lambda s: s <= 0, [mean], "mean <= 0")
        self._check(lambda s: s <= 0, [scale], "scale <= 0")

        def make(shape, p):
            mean_, scale_ = p
            y = self._normal(shape)
            y = _ufuncs.multiply(mean_, _ufuncs.multiply(y, y))
            mu_2l = _ufuncs.divide(mean_, _ufuncs.multiply(scale_, 2.0))
            root = _ufuncs.sqrt(_ufuncs.add(
                _ufuncs.multiply(_ufuncs.multiply(scale_, 4.0), y), _ufuncs.multiply(y, y)))
            x = _ufuncs.add(mean_, _ufuncs.multiply(mu_2l, _ufuncs.subtract(y, root)))
            u = self._uniform(shape)
            return _ufuncs.where(
                _ufuncs.less_equal(u, _ufuncs.divide(mean_, _ufuncs.add(mean_, x))),
                x, _ufuncs.divide(_ufuncs.multiply(mean_, mean_), x))
        return self._draw(size, [mean, scale], make)

    def geometric(self, p, size=None):
        self._check(lambda s: (s <= 0) | (s > 1) | (s != s), [p],
                    "p <= 0, p > 1 or p contains NaNs")

        def make(shape, params):
            e = self._exponential(shape)
            k = _ufuncs.ceil(_ufuncs.divide(_ufuncs.negative(e),
                                            _ufuncs.log1p(_ufuncs.negative(params[0]))))
            return _ufuncs.maximum(k, 1.0).astype(_np.int64)
        return self._draw(size, [p], make)

    def integers(self, low, high=None, size=None, dtype=_np.int64, endpoint=False):
        dtype = _np.dtype(dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"Unsupported dtype {dtype.name!r} for integers")
        if high is None:
            low, high = 0, low
        if _is_scalar(low) and _is_scalar(high):
            span = int(high) - int(low) + (1 if endpoint else 0)
            if span <= 0:
                raise ValueError("low > high" if endpoint else "low >= high")
            info = _np.iinfo(dtype)
            if int(low) < info.min or int(high) - (0 if endpoint else 1) > info.max:
                raise ValueError(f"high is out of bounds for {dtype.name}")
        else:
            span = _ufuncs.subtract(high, low)
            if endpoint:
                span = _ufuncs.add(span, 1)
            self._check(lambda s: s <= 0, [span],
                        "low > high" if endpoint else "low >= high")

        def make(shape, p):
            lo, sp = p
            if _is_scalar(sp) and sp > 1 << 53:  # beyond float precision
                off = _ufuncs.remainder(self._bits(shape), _np.uint64(sp))
                return _ufuncs.add(off.astype(_np.int64), lo).astype(dtype)
            u = self._uniform(shape)
            off = _ufuncs.floor(_ufuncs.multiply(u, sp)).astype(_np.int64)
            return _ufuncs.add(off, lo).astype(dtype)
        r = self._draw(size, [low, span], make)
        return dtype.type(r) if not isinstance(r, ndarray) else r

    def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8,
                            *, method="svd"):
        from . import linalg
        if method not in ("svd", "eigh", "cholesky"):
            raise ValueError("method must be one of {'eigh', 'svd', 'cholesky'}")
        mean, cov = _as(mean).astype(_np.float64), _as(cov).astype(_np.float64)
        if mean.ndim != 1:
            raise ValueError("mean must be 1 dimensional")
        n = mean._shape[0]
        if cov.ndim != 2 or cov._shape != (n, n):
            raise ValueError("cov must be 2 dimensional and square")
        shape = _shape_of(size) or ()
        z = self._normal((prod(shape), n))
        if method == "cholesky":
            factor = _manip.swapaxes(linalg.cholesky(cov), 0, 1)
        elif method == "eigh":
            s, v = linalg.eigh(cov)
            factor = _manip.swapaxes(_ufuncs.multiply(
                v, _ufuncs.sqrt(_ufuncs.absolute(s))), 0, 1)
        else:
            u, s, vh = linalg.svd(cov)
            if check_valid != "ignore":
                if check_valid not in ("warn", "raise"):
                    raise ValueError("check_valid must equal 'warn', 'raise', or "
                                     "'ignore'")
                rebuilt = _manip.matmul(_ufuncs.multiply(_manip.swapaxes(vh, 0, 1), s), vh)
                from ._joining import allclose
                if not allclose(rebuilt, cov, rtol=tol, atol=tol):
                    if check_valid == "warn":
                        warnings.warn("covariance is not symmetric positive-"
                                      "semidefinite.", RuntimeWarning, stacklevel=2)
                    else:
                        raise ValueError("covariance is not symmetric positive-"
                                         "semidefinite.")
            factor = _ufuncs.multiply(_manip.expand_dims(_ufuncs.sqrt(s), -1), vh)
        x = _ufuncs.add(_manip.matmul(z, factor), mean)
        return x.reshape(shape + (n,))

    def bytes(self, length):
        words = self._bits(((length + 7) // 8,))
        return _core.asndarray(words)._numpy().tobytes()[:length]

    # -- permutations and samples -------------------------------------------------
    def _permutation_indices(self, n):
        """A uniformly random permutation of range(n): the order of n random
        64-bit keys (a stable sort; ties, of probability n^2 / 2^65, keep
        index order)."""
        from ._sorting import argsort
        return argsort(self._bits((n,)), kind="stable")

    def permutation(self, x, axis=0):
        if isinstance(x, (int, _np.integer)):
            return self._permutation_indices(int(x))
        a = _as(x)
        if a.ndim < 1:
            raise IndexError("x must be an integer or at least 1-dimensional")
        axis = _manip.normalize_axis_index(axis, a.ndim)
        from ._indexing import take
        return take(a, self._permutation_indices(a._shape[axis]), axis=axis)

    def shuffle(self, x, axis=0):
        if not isinstance(x, ndarray):
            _fallback._warn("random shuffle of a non-cpnumeric sequence")
            self._numpy_generator().shuffle(x, axis=axis)
            return
        if x.ndim < 1:
            raise TypeError("shuffle needs an array of at least one dimension")
        x[...] = self.permutation(x, axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        from ._indexing import take
        if isinstance(a, (int, _np.integer)):
            pool, n = None, int(a)
            if n < 0:
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            pool = _as(a)
            if pool.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not "
                                 f"{type(a)}")
            axis = _manip.normalize_axis_index(axis, pool.ndim)
            n = pool._shape[axis]
        shape = _shape_of(size)
        k = 1 if shape is None else prod(shape)
        if n == 0 and k:
            raise ValueError("a cannot be empty unless no samples are taken")
        if p is not None:
            p = _as(p).astype(_np.float64)
            if p.ndim != 1:
                raise ValueError("p must be 1-dimensional")
            if p._shape[0] != n:
                raise ValueError("a and p must have same size")
            pn = p._numpy()  # n floats: checked here, as NumPy does (a sync)
            if _np.isnan(pn).any() or (pn < 0).any():
                raise ValueError("probabilities are not non-negative")
            if abs(pn.sum() - 1.0) > _np.sqrt(_np.finfo(_np.float64).eps):
                raise ValueError("probabilities do not sum to 1")
        if not replace and k > n:
            raise ValueError("Cannot take a larger sample than population when "
                             "replace is False")
        flat = (k,)
        if replace and p is None:
            idx = self.integers(0, n, flat) if k else _core.asndarray(_np.zeros(0, _np.int64))
        elif replace:  # inversion of the cumulative distribution
            from ._sorting import cumsum, searchsorted
            cdf = cumsum(p)
            cdf = _ufuncs.divide(cdf, cdf[-1])
            idx = searchsorted(cdf, self._uniform(flat), side="right")
            idx = _ufuncs.minimum(idx, n - 1)
        elif p is None:
            idx = self._permutation_indices(n)[:k]
        else:  # successive sampling in proportion to p: the top k of
            # log(p) + Gumbel noise (Efraimidis-Spirakis)
            if int(_np.count_nonzero(pn)) < k:
                raise ValueError("Fewer non-zero entries in p than size")
            from ._sorting import argsort
            u = self._uniform((n,), open_interval=True)
            with _errstate.quiet(), _np.errstate(divide="ignore"):
                keys = _ufuncs.subtract(_ufuncs.log(p), _ufuncs.log(_ufuncs.negative(
                    _ufuncs.log(u))))
            idx = argsort(_ufuncs.negative(keys), kind="stable")[:k]
        if shape is None:
            idx = idx.reshape(())
            if pool is None:
                return _np.int64(idx.item())
        else:
            idx = idx.reshape(shape)
        if pool is None:
            return idx
        if shape is None:
            return _manip.basic_view(pool, (slice(None),) * axis + (int(idx.item()),))
        return take(pool, idx, axis=axis)

    # -- rejection sampling --------------------------------------------------------
    def _rejection(self, n, propose):
        """n values (flat) by rejection in rounds: `propose(idx, m)` returns
        (candidates, accepted) for the m elements `idx` (None: all n, in the
        first round). Each round reads how many were rejected (a sync) and
        draws again for those only, padded to a power of two (with index n, a
        sink slot) so that the rounds' kernels have a few sizes that the
        kernel cache keeps. The methods here accept most candidates: a
        million values take about five rounds."""
        from ._joining import concatenate
        from ._indexing import put
        from ._library import libcall
        i64 = _np.dtype(_np.int64)
        vals, ok = propose(None, n)
        out = concatenate([_ufuncs.where(ok, vals, 0.0), _creation.zeros(1)])
        idx = _creation.arange(n, dtype=i64)
        rejected = _ufuncs.logical_not(ok)
        while True:
            count = int(_reductions.count_nonzero(rejected))
            if not count:
                return out[:n]
            m = 1 << (count - 1).bit_length()
            got = libcall("compress", [idx, rejected], (m,), i64)
            idx = _ufuncs.where(_ufuncs.less(_creation.arange(m, dtype=i64), count), got, n)
            vals, ok = propose(idx, m)
            put(out, idx, _ufuncs.where(ok, vals, 0.0), mode="clip")
            rejected = _ufuncs.logical_and(_ufuncs.logical_not(ok), _ufuncs.less(idx, n))

    @staticmethod
    def _at(param, idx):
        """A flat parameter array's elements at `idx` (indices past the end,
        the padding, read the last)."""
        if idx is None or _is_scalar(param):
            return param
        from ._indexing import take
        return take(param, idx, mode="clip")

    def _standard_gamma(self, shape, k):
        """Gamma(k, 1) variates of `shape` for shapes k >= 0 (Marsaglia and
        Tsang's squeeze-free method on normal and uniform words; k < 1 through
        Gamma(k + 1) * U^(1/k))."""
        n = prod(shape)
        k = _manip.ravel(_manip.broadcast_to(_as(k).astype(_np.float64), shape)) \
            if not _is_scalar(k) else float(k)
        boosted = _ufuncs.where(_ufuncs.less(k, 1.0), _ufuncs.add(k, 1.0), k)
        d = _ufuncs.subtract(boosted, 1.0 / 3.0)
        c = _ufuncs.divide(1.0, _ufuncs.sqrt(_ufuncs.multiply(d, 9.0)))

        def propose(idx, m):
            dd, cc = self._at(d, idx), self._at(c, idx)
            x = self._normal((m,))
            u = self._uniform((m,), open_interval=True)
            t = _ufuncs.add(_ufuncs.multiply(cc, x), 1.0)
            v = _ufuncs.multiply(_ufuncs.multiply(t, t), t)
            with _errstate.quiet():
                bound = _ufuncs.add(_ufuncs.multiply(_ufuncs.multiply(x, x), 0.5),
                                    _ufuncs.multiply(dd, _ufuncs.add(_ufuncs.subtract(
                                        1.0, v), _ufuncs.log(v))))
                ok = _ufuncs.logical_and(_ufuncs.greater(v, 0.0),
                                         _ufuncs.less(_ufuncs.log(u), bound))
            return _ufuncs.multiply(dd, v), ok
        g = self._rejection(n, propose)
        if _is_scalar(k) and k >= 1:
            return g.reshape(shape)
        with _errstate.quiet():
            u = self._uniform((n,), open_interval=True)
            boost = _ufuncs.power(u, _ufuncs.divide(1.0, k))
            g = _ufuncs.where(_ufuncs.less(k, 1.0), _ufuncs.multiply(g, boost), g)
            g = _ufuncs.where(_ufuncs.equal(k, 0.0), 0.0, g)
        return g.reshape(shape)

    def standard_gamma(self, shape, size=None, dtype=_np.float64, out=None):
        self._check(lambda s: (s < 0) | (s != s), [shape], "shape < 0")
        r = self._draw(size, [shape], lambda s, p: self._standard_gamma(s, p[0]))
        if _np.dtype(dtype) != _np.float64:
            r = r.astype(dtype) if isinstance(r, ndarray) else _np.dtype(dtype).type(r)
        if out is not None:
            out[...] = r
            return out
        return r

    def gamma(self, shape, scale=1.0, size=None):
        self._check(lambda s: (s < 0) | (s != s), [shape], "shape < 0")
        self._check(lambda s: s < 0, [scale], "scale < 0")
        return self._draw(size, [shape, scale], lambda s, p: _ufuncs.multiply(
            self._standard_gamma(s, p[0]), p[1]))

    def _chisquare(self, shape, df):
        return _ufuncs.multiply(self._standard_gamma(shape, _ufuncs.multiply(df, 0.5)
                                                     if not _is_scalar(df) else df / 2), 2.0)

    def chisquare(self, df, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [df], "df <= 0")
        return self._draw(size, [df], lambda s, p: self._chisquare(s, p[0]))

    def beta(self, a, b, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [a], "a <= 0")
        self._check(lambda s: (s <= 0) | (s != s), [b], "b <= 0")

        def make(shape, p):
            x = self._standard_gamma(shape, p[0])
            y = self._standard_gamma(shape, p[1])
            with _errstate.quiet():  # both tiny: 0 / 0; NumPy's Johnk gives a or b's side
                r = _ufuncs.divide(x, _ufuncs.add(x, y))
                return _ufuncs.where(_ufuncs.isnan(r), _ufuncs.less_equal(
                    self._uniform(shape), _ufuncs.divide(p[0], _ufuncs.add(p[0], p[1]))
                ).astype(_np.float64), r)
        return self._draw(size, [a, b], make)

    def f(self, dfnum, dfden, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [dfnum], "dfnum <= 0")
        self._check(lambda s: (s <= 0) | (s != s), [dfden], "dfden <= 0")

        def make(shape, p):
            num = _ufuncs.divide(self._chisquare(shape, p[0]), p[0])
            den = _ufuncs.divide(self._chisquare(shape, p[1]), p[1])
            return _ufuncs.divide(num, den)
        return self._draw(size, [dfnum, dfden], make)

    def standard_t(self, df, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [df], "df <= 0")

        def make(shape, p):
            z = self._normal(shape)
            return _ufuncs.divide(z, _ufuncs.sqrt(_ufuncs.divide(
                self._chisquare(shape, p[0]), p[0])))
        return self._draw(size, [df], make)

    def dirichlet(self, alpha, size=None):
        alpha = _as(alpha).astype(_np.float64)
        if alpha.ndim != 1:
            raise ValueError("object of too small depth for desired array")
        self._check(lambda s: (s < 0) | (s != s), [alpha], "alpha < 0, or alpha contains NaNs")
        shape = (_shape_of(size) or ()) + alpha._shape
        g = self._standard_gamma(shape, _manip.broadcast_to(alpha, shape))
        with _errstate.quiet():
            return _ufuncs.divide(g, _reductions.sum(g, axis=-1, keepdims=True))

    # -- discrete distributions: inversion for small means, transformed
    # rejection with squeeze (Hoermann 1993: PTRS, BTRS) for large ones -----------
    def _flat_param(self, x, shape):
        if _is_scalar(x):
            return float(x)
        return _manip.ravel(_manip.broadcast_to(_as(x).astype(_np.float64), shape))

    def _inversion(self, n, first, ratio, steps):
        """Sequential-search inversion of one uniform per element: the least
        k with F(k) >= U, F summing first * ratio(1) * ... * ratio(k), over
        `steps` terms (float64 counts)."""
        u = self._uniform((n,))
        term, cdf, x = first, first, _creation.zeros(n)
        with _errstate.quiet():
            for k in range(1, steps):
                x = _ufuncs.add(x, _ufuncs.less(cdf, u))
                term = _ufuncs.multiply(term, ratio(k))
                cdf = _ufuncs.add(cdf, term)
        return x

    def _poisson(self, shape, lam):
        n = prod(shape)
        lam = self._flat_param(lam, shape)
        top = float(lam) if _is_scalar(lam) else float(_reductions.max(lam)) if n else 0.0
        out = None
        if not _is_scalar(lam) or lam < 10:
            small = _ufuncs.minimum(lam, 10.0)
            m = min(top, 10.0)
            steps = _inversion_steps(math.exp(-m), lambda k: m / k, m)
            out = self._inversion(n, _ufuncs.exp(_ufuncs.negative(small)),
                                  lambda k: _ufuncs.divide(small, float(k)), steps)
        if top >= 10:
            big = _ufuncs.maximum(lam, 10.0)
            ptrs = self._ptrs(n, big)
            out = ptrs if out is None else _ufuncs.where(_ufuncs.less(lam, 10.0), out, ptrs)
        return out.astype(_np.int64).reshape(shape)

    def _ptrs(self, n, lam):
        """Poisson(lam >= 10) by PTRS."""
        slam, loglam = _ufuncs.sqrt(lam), _ufuncs.log(lam)
        b = _ufuncs.add(_ufuncs.multiply(slam, 2.53), 0.931)
        a = _ufuncs.add(_ufuncs.multiply(b, 0.02483), -0.059)
        log_inv_alpha = _ufuncs.log(_ufuncs.add(_ufuncs.divide(1.1328, _ufuncs.subtract(
            b, 3.4)), 1.1239))
        vr = _ufuncs.subtract(0.9277, _ufuncs.divide(3.6224, _ufuncs.subtract(b, 2.0)))

        def propose(idx, m):
            L, B, A, LIA, VR, LL = (self._at(v, idx) for v in (lam, b, a, log_inv_alpha,
                                                                vr, loglam))
            u = _ufuncs.subtract(self._uniform((m,)), 0.5)
            v = self._uniform((m,))
            with _errstate.quiet():
                us = _ufuncs.subtract(0.5, _ufuncs.absolute(u))
                k = _ufuncs.floor(_ufuncs.add(_ufuncs.multiply(_ufuncs.add(
                    _ufuncs.divide(_ufuncs.multiply(A, 2.0), us), B), u), _ufuncs.add(L, 0.43)))
                squeeze = _ufuncs.logical_and(_ufuncs.greater_equal(us, 0.07),
                                              _ufuncs.less_equal(v, VR))
                valid = _ufuncs.logical_and(_ufuncs.greater_equal(k, 0.0), _ufuncs.logical_not(
                    _ufuncs.logical_and(_ufuncs.less(us, 0.013), _ufuncs.greater(v, us))))
                lhs = _ufuncs.subtract(_ufuncs.add(_ufuncs.log(v), LIA), _ufuncs.log(
                    _ufuncs.add(_ufuncs.divide(A, _ufuncs.multiply(us, us)), B)))
                kk = _ufuncs.where(valid, k, 0.0)
                rhs = _ufuncs.subtract(_ufuncs.subtract(_ufuncs.multiply(kk, LL), L),
                                       _loggam(_ufuncs.add(kk, 1.0)))
                ok = _ufuncs.logical_or(squeeze, _ufuncs.logical_and(
                    valid, _ufuncs.less_equal(lhs, rhs)))
            return kk, ok
        return self._rejection(n, propose)

    def poisson(self, lam=1.0, size=None):
        self._check(lambda s: (s < 0) | (s != s), [lam], "lam < 0 or lam is NaN")
        self._check(lambda s: s >= 1e10, [lam], "lam value too large")
        return self._draw_int(size, [lam], lambda s, p: self._poisson(s, p[0]))

    def _binomial(self, shape, trials, p):
        n = prod(shape)
        trials, p = self._flat_param(trials, shape), self._flat_param(p, shape)
        if _is_scalar(trials) and _is_scalar(p):
            flip = p > 0.5
            q = 1.0 - p if flip else p  # q <= 1/2
            if trials * q >= 10:
                out = self._btrs(n, trials, q)
            else:
                out = self._binomial_inversion(n, trials, q, trials * q, trials)
            return (_ufuncs.subtract(trials, out) if flip else out).astype(
                _np.int64).reshape(shape)
        flip = _ufuncs.greater(p, 0.5)
        q = _ufuncs.where(flip, _ufuncs.subtract(1.0, p), p)
        mean = _ufuncs.multiply(trials, q)
        top = float(_reductions.max(mean)) if n else 0.0
        small = _ufuncs.less(mean, 10.0)
        tmax = float(trials) if _is_scalar(trials) else float(_reductions.max(trials)) if n \
            else 0.0
        out = self._binomial_inversion(n, trials, _ufuncs.where(small, q, 0.0), min(top, 10.0),
                                       tmax)
        if top >= 10:
            btrs = self._btrs(n, _ufuncs.where(small, 40.0, trials),
                              _ufuncs.where(small, 0.5, q))
            out = _ufuncs.where(small, out, btrs)
        out = _ufuncs.where(flip, _ufuncs.subtract(trials, out), out)
        return out.astype(_np.int64).reshape(shape)

    def _binomial_inversion(self, n, trials, q, mean, tmax):
        """Binomial(trials, q <= 1/2) by inversion, for means below 10: the
        steps of Poisson(mean)'s inversion (a binomial's tail is the lighter),
        at most trials + 1."""
        m = min(float(mean), 10.0)
        steps = min(int(tmax) + 1, _inversion_steps(math.exp(-m), lambda k: m / k, m))
        with _errstate.quiet():
            ratio = _ufuncs.divide(q, _ufuncs.subtract(1.0, q))
            first = _ufuncs.power(_ufuncs.subtract(1.0, q), trials)
        return self._inversion(n, first, lambda k: _ufuncs.multiply(ratio, _ufuncs.divide(
            _ufuncs.maximum(_ufuncs.subtract(trials, k - 1.0), 0.0), float(k))), max(steps, 2))

    def _btrs(self, n, trials, p):
        """Binomial(trials, p <= 1/2) with trials * p >= 10 by BTRS."""
        q = _ufuncs.subtract(1.0, p)
        spq = _ufuncs.sqrt(_ufuncs.multiply(_ufuncs.multiply(trials, p), q))
        b = _ufuncs.add(_ufuncs.multiply(spq, 2.53), 1.15)
        a = _ufuncs.add(_ufuncs.add(_ufuncs.multiply(b, 0.0248), _ufuncs.multiply(p, 0.01)),
                        -0.0873)
        c = _ufuncs.add(_ufuncs.multiply(trials, p), 0.5)
        vr = _ufuncs.subtract(0.92, _ufuncs.divide(4.2, b))
        log_alpha = _ufuncs.log(_ufuncs.multiply(_ufuncs.add(_ufuncs.divide(5.1, b), 2.83),
                                                 spq))
        lpq = _ufuncs.log(_ufuncs.divide(p, q))
        mode = _ufuncs.floor(_ufuncs.multiply(_ufuncs.add(trials, 1.0), p))
        h = _ufuncs.add(_loggam(_ufuncs.add(mode, 1.0)),
                        _loggam(_ufuncs.add(_ufuncs.subtract(trials, mode), 1.0)))

        def propose(idx, m):
            N, A, B, C, VR, LA, LPQ, M, H = (self._at(v, idx) for v in (
                trials, a, b, c, vr, log_alpha, lpq, mode, h))
            u = _ufuncs.subtract(self._uniform((m,)), 0.5)
            v = self._uniform((m,))
            with _errstate.quiet():
                us = _ufuncs.subtract(0.5, _ufuncs.absolute(u))
                k = _ufuncs.floor(_ufuncs.add(_ufuncs.multiply(_ufuncs.add(
                    _ufuncs.divide(_ufuncs.multiply(A, 2.0), us), B), u), C))
                valid = _ufuncs.logical_and(_ufuncs.greater_equal(k, 0.0),
                                            _ufuncs.less_equal(k, N))
                squeeze = _ufuncs.logical_and(_ufuncs.greater_equal(us, 0.07),
                                              _ufuncs.less_equal(v, VR))
                kk = _ufuncs.where(valid, k, 0.0)
                lhs = _ufuncs.subtract(_ufuncs.add(_ufuncs.log(v), LA), _ufuncs.log(
                    _ufuncs.add(_ufuncs.divide(A, _ufuncs.multiply(us, us)), B)))
                rhs = _ufuncs.add(_ufuncs.subtract(_ufuncs.subtract(
                    H, _loggam(_ufuncs.add(kk, 1.0))), _loggam(_ufuncs.add(
                        _ufuncs.subtract(N, kk), 1.0))), _ufuncs.multiply(
                            _ufuncs.subtract(kk, M), LPQ))
                ok = _ufuncs.logical_and(valid, _ufuncs.logical_or(
                    squeeze, _ufuncs.less_equal(lhs, rhs)))
            return kk, ok
        return self._rejection(n, propose)

    def binomial(self, n, p, size=None):
        self._check(lambda s: s < 0, [n], "n < 0")
        self._check(lambda s: (s < 0) | (s > 1) | (s != s), [p], "p < 0, p > 1 or p is NaN")
        return self._draw_int(size, [n, p], lambda s, q: self._binomial(s, q[0], q[1]))

    def negative_binomial(self, n, p, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [n], "n <= 0")
        self._check(lambda s: (s <= 0) | (s > 1) | (s != s), [p],
                    "p <= 0, p > 1 or p contains NaNs")

        def make(shape, q):  # a Poisson of Gamma(n, (1 - p) / p) mean
            lam = _ufuncs.multiply(self._standard_gamma(shape, q[0]), _ufuncs.divide(
                _ufuncs.subtract(1.0, q[1]), q[1]))
            return self._poisson(shape, lam)
        return self._draw_int(size, [n, p], make)

    def _noncentral_chisquare(self, shape, df, nonc):
        """df > 1: chi2(df - 1) + (Z + sqrt(nonc))^2; df <= 1: chi2(df + 2 K),
        K ~ Poisson(nonc / 2); nonc == 0: chi2(df)."""
        n = prod(shape)
        df, nonc = self._flat_param(df, shape), self._flat_param(nonc, shape)
        with _errstate.quiet():
            z = _ufuncs.add(self._normal((n,)), _ufuncs.sqrt(nonc))
            wide = _ufuncs.add(self._chisquare((n,), _ufuncs.maximum(
                _ufuncs.subtract(df, 1.0), 1.0)), _ufuncs.multiply(z, z))
            k = self._poisson((n,), _ufuncs.multiply(nonc, 0.5))
            narrow = self._chisquare((n,), _ufuncs.add(df, _ufuncs.multiply(k, 2.0)))
            r = _ufuncs.where(_ufuncs.greater(df, 1.0), wide, narrow)
            r = _ufuncs.where(_ufuncs.equal(nonc, 0.0), self._chisquare((n,), df), r)
        return r.reshape(shape)

    def noncentral_chisquare(self, df, nonc, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [df], "df <= 0")
        self._check(lambda s: (s < 0) | (s != s), [nonc], "nonc < 0")
        return self._draw(size, [df, nonc],
                          lambda s, p: self._noncentral_chisquare(s, p[0], p[1]))

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        self._check(lambda s: (s <= 0) | (s != s), [dfnum], "dfnum <= 0")
        self._check(lambda s: (s <= 0) | (s != s), [dfden], "dfden <= 0")
        self._check(lambda s: (s < 0) | (s != s), [nonc], "nonc < 0")

        def make(shape, p):
            t = _ufuncs.multiply(self._noncentral_chisquare(shape, p[0], p[2]), p[1])
            return _ufuncs.divide(t, _ufuncs.multiply(self._chisquare(shape, p[1]), p[0]))
        return self._draw(size, [dfnum, dfden, nonc], make)

    def multinomial(self, n, pvals, size=None):
        """Sequential binomials: category j gets Binomial(n left, p_j / mass
        left); the last category takes the rest (its p is not read)."""
        pv = _as(pvals).astype(_np.float64)
        if pv.ndim != 1:
            raise ValueError("pvals must have a single dimension; use a loop for stacks")
        pn = pv._numpy()  # k floats: checked here, as NumPy does
        if (pn < 0).any() or (pn > 1).any() or _np.isnan(pn).any():
            raise ValueError("pvals < 0, pvals > 1 or pvals contains NaNs")
        if pn[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("sum(pvals[:-1]) > 1.0")
        self._check(lambda s: s < 0, [n], "n < 0")
        shape = _shape_of(size) or ()
        nshape = () if _is_scalar(n) else _as(n)._shape
        shape = _np.broadcast_shapes(shape, nshape) if size is None else shape
        k = len(pn)
        left = float(n) if _is_scalar(n) else _manip.broadcast_to(
            _as(n).astype(_np.float64), shape)
        mass, counts = 1.0, []
        for j in range(k - 1):
            q = min(max(pn[j] / mass, 0.0), 1.0) if mass > 0 else 0.0
            x = self._binomial(shape, left, q) if prod(shape) else \
                _creation.zeros(shape, _np.int64)
            counts.append(x)
            left = _ufuncs.subtract(left, x)
            mass -= pn[j]
        counts.append(_ufuncs.add(_creation.zeros(shape, _np.int64), left).astype(_np.int64))
        from ._joining import stack
        return stack(counts, axis=-1)

    def logseries(self, p, size=None):
        self._check(lambda s: (s < 0) | (s >= 1) | (s != s), [p],
                    "p < 0, p >= 1 or p is NaN")

        def make(shape, params):
            n = prod(shape)
            prob = self._flat_param(params[0], shape)
            r = _ufuncs.log1p(_ufuncs.negative(prob))

            def propose(idx, m):  # Kemp's second accelerated generator
                P, R = self._at(prob, idx), self._at(r, idx)
                v = self._uniform((m,))
                u = self._uniform((m,))
                with _errstate.quiet():
                    q = _ufuncs.negative(_ufuncs.expm1(_ufuncs.multiply(R, u)))
                    tail = _ufuncs.floor(_ufuncs.add(_ufuncs.divide(_ufuncs.log(v),
                                                                    _ufuncs.log(q)), 1.0))
                    in_tail = _ufuncs.logical_and(_ufuncs.less(v, P),
                                                  _ufuncs.less_equal(v, _ufuncs.multiply(q, q)))
                    one = _ufuncs.logical_or(_ufuncs.greater_equal(v, P),
                                             _ufuncs.greater_equal(v, q))
                    x = _ufuncs.where(in_tail, tail, _ufuncs.where(one, 1.0, 2.0))
                    ok = _ufuncs.logical_not(_ufuncs.logical_and(in_tail, _ufuncs.logical_or(
                        _ufuncs.less(tail, 1.0), _ufuncs.equal(v, 0.0))))
                return x, ok
            return self._rejection(n, propose).astype(_np.int64).reshape(shape)
        return self._draw_int(size, [p], make)

    def vonmises(self, mu, kappa, size=None):
        self._check(lambda s: (s < 0) | (s != s), [kappa], "kappa < 0")

        def make(shape, params):
            n = prod(shape)
            mu_, kap = self._flat_param(params[0], shape), self._flat_param(params[1], shape)
            with _errstate.quiet():
                # Best and Fisher's wrapped-Cauchy envelope; its s by a Taylor
                # expansion below 1e-5, where rho underflows
                t = _ufuncs.add(_ufuncs.sqrt(_ufuncs.add(_ufuncs.multiply(
                    _ufuncs.multiply(kap, kap), 4.0), 1.0)), 1.0)
                rho = _ufuncs.divide(_ufuncs.subtract(t, _ufuncs.sqrt(_ufuncs.multiply(t, 2.0))),
                                     _ufuncs.multiply(kap, 2.0))
                s_big = _ufuncs.divide(_ufuncs.add(_ufuncs.multiply(rho, rho), 1.0),
                                       _ufuncs.multiply(rho, 2.0))
                s_small = _ufuncs.add(_ufuncs.divide(1.0, kap), kap)
                s_ = _ufuncs.where(_ufuncs.less(kap, 1e-5), s_small, s_big)
                s_ = _ufuncs.where(_ufuncs.less(kap, 1e-8), 2.0, s_)  # unused there

            def propose(idx, m):
                S, K = self._at(s_, idx), self._at(kap, idx)
                u = self._uniform((m,))
                v = self._uniform((m,))
                with _errstate.quiet():
                    z = _ufuncs.cos(_ufuncs.multiply(u, _np.pi))
                    w = _ufuncs.divide(_ufuncs.add(_ufuncs.multiply(S, z), 1.0),
                                       _ufuncs.add(S, z))
                    y = _ufuncs.multiply(K, _ufuncs.subtract(S, w))
                    ok = _ufuncs.logical_or(
                        _ufuncs.greater_equal(_ufuncs.subtract(_ufuncs.multiply(
                            y, _ufuncs.subtract(2.0, y)), v), 0.0),
                        _ufuncs.greater_equal(_ufuncs.add(_ufuncs.subtract(_ufuncs.log(
                            _ufuncs.divide(y, v)), y), 1.0), 0.0))
                    ok = _ufuncs.logical_or(ok, _ufuncs.less(K, 1e-8))
                return w, ok
            w = self._rejection(n, propose)
            sign = _ufuncs.where(_ufuncs.less(self._uniform((n,)), 0.5), -1.0, 1.0)
            with _errstate.quiet():
                theta = _ufuncs.multiply(_ufuncs.arccos(_ufuncs.clip(w, -1.0, 1.0)), sign)
                flat = _ufuncs.where(_ufuncs.less(kap, 1e-8), _ufuncs.multiply(
                    _ufuncs.subtract(_ufuncs.multiply(self._uniform((n,)), 2.0), 1.0), _np.pi),
                    theta)
                wide = _ufuncs.greater(kap, 1e6)  # a wrapped normal there
                flat = _ufuncs.where(wide, _ufuncs.multiply(self._normal((n,)), _ufuncs.sqrt(
                    _ufuncs.divide(1.0, kap))), flat)
                x = _ufuncs.add(flat, mu_)
                # into [-pi, pi], keeping the sign as NumPy does
                mod = _ufuncs.subtract(_ufuncs.fmod(_ufuncs.add(_ufuncs.absolute(x), _np.pi),
                                                    2 * _np.pi), _np.pi)
                x = _ufuncs.where(_ufuncs.less(x, 0.0), _ufuncs.negative(mod), mod)
            return x.reshape(shape)
        return self._draw(size, [mu, kappa], make)

    def zipf(self, a, size=None):
        self._check(lambda s: (s <= 1) | (s != s), [a], "a <= 1 or a is NaN")

        def make(shape, params):
            n = prod(shape)
            am1 = _ufuncs.subtract(self._flat_param(params[0], shape), 1.0)
            b = _ufuncs.power(2.0, am1)

            def propose(idx, m):  # Devroye's rejection from a Pareto envelope
                A, B = self._at(am1, idx), self._at(b, idx)
                u = _ufuncs.subtract(1.0, self._uniform((m,)))
                v = self._uniform((m,))
                with _errstate.quiet():
                    x = _ufuncs.floor(_ufuncs.power(u, _ufuncs.divide(-1.0, A)))
                    t = _ufuncs.power(_ufuncs.add(_ufuncs.divide(1.0, x), 1.0), A)
                    ok = _ufuncs.logical_and(
                        _ufuncs.logical_and(_ufuncs.greater_equal(x, 1.0),
                                            _ufuncs.less(x, 9.2e18)),
                        _ufuncs.less_equal(
                            _ufuncs.divide(_ufuncs.multiply(_ufuncs.multiply(v, x),
                                                            _ufuncs.subtract(t, 1.0)),
                                           _ufuncs.subtract(B, 1.0)), _ufuncs.divide(t, B)))
                    x = _ufuncs.where(ok, x, 1.0)
                return x, ok
            return self._rejection(n, propose).astype(_np.int64).reshape(shape)
        return self._draw_int(size, [a], make)

    # -- the rest: NumPy's Generator, seeded from this one ---------------------
    def _numpy_generator(self):
        gen = _np.random.Generator(_np.random.PCG64([self._key, self._counter]))
        self._counter = (self._counter + (1 << 40)) & _M64
        return gen

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(_np.random.Generator, name):
            raise AttributeError(f"'Generator' object has no attribute {name!r}")

        def method(*args, **kwargs):
            _fallback._warn(f"random.Generator.{name}")
            func = getattr(self._numpy_generator(), name)
            return _fallback._from_numpy(func(*_fallback._to_numpy(args),
                                              **_fallback._to_numpy(kwargs)))
        method.__name__ = name
        return method


def default_rng(seed=None):
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


class RandomState(Generator):
    """The legacy np.random API (np.random.seed, rand, randn, randint, ...)
    on the same counter-based words."""

    def __init__(self, seed=None):
        super().__init__(seed)

    def __repr__(self):
        return f"RandomState(Philox4x32) at {id(self):#x}"

    def seed(self, seed=None):
        self._key = _key_from_seed(seed)
        self._counter = 0

    def get_state(self, legacy=True):
        return ("cpnumeric.Philox4x32", self._key, self._counter)

    def set_state(self, state):
        if isinstance(state, dict):
            self.state = state
            return
        if len(state) != 3 or state[0] != "cpnumeric.Philox4x32":
            raise ValueError("set_state takes a state from cpnumeric's get_state "
                             "(NumPy's MT19937 states do not apply)")
        self._key, self._counter = int(state[1]) & _M64, int(state[2]) & _M64

    def random_sample(self, size=None):
        return self.random(size)

    def rand(self, *args):
        return self.random(args or None)

    def randn(self, *args):
        return self.standard_normal(args or None)

    def randint(self, low, high=None, size=None, dtype=int):
        return self.integers(low, high, size, dtype=dtype)

    def random_integers(self, low, high=None, size=None):
        if high is None:
            warnings.warn("This function is deprecated. Please call randint(1, "
                          f"{low} + 1) instead", DeprecationWarning, stacklevel=2)
            low, high = 1, low
        else:
            warnings.warn(f"This function is deprecated. Please call randint({low}, "
                          f"{high} + 1) instead", DeprecationWarning, stacklevel=2)
        return self.integers(low, high, size, endpoint=True)

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(_np.random.RandomState, name):
            raise AttributeError(f"'RandomState' object has no attribute {name!r}")
        if hasattr(_np.random.Generator, name):
            return Generator.__getattr__(self, name)

        def method(*args, **kwargs):
            _fallback._warn(f"random.RandomState.{name}")
            state = _np.random.RandomState((self._key ^ self._counter) & _M32)
            self._counter = (self._counter + (1 << 40)) & _M64
            return _fallback._from_numpy(getattr(state, name)(
                *_fallback._to_numpy(args), **_fallback._to_numpy(kwargs)))
        method.__name__ = name
        return method


_global = RandomState()

NATIVE = ["default_rng", "seed", "get_state", "set_state", "random", "random_sample",
          "ranf", "sample", "rand", "randn", "randint", "random_integers", "uniform",
          "normal", "standard_normal", "lognormal", "exponential",
          "standard_exponential", "logistic", "gumbel", "laplace", "weibull", "pareto",
          "power", "rayleigh", "standard_cauchy", "triangular", "wald", "geometric",
          "multivariate_normal", "bytes", "permutation", "shuffle", "choice",
          "standard_gamma", "gamma", "chisquare", "beta", "f", "standard_t", "dirichlet",
          "poisson", "binomial", "negative_binomial", "noncentral_chisquare",
          "noncentral_f", "multinomial", "logseries", "vonmises", "zipf"]

for _name in NATIVE:
    if _name not in ("default_rng", "ranf", "sample"):
        globals()[_name] = getattr(_global, _name)
ranf = sample = _global.random_sample


def __getattr__(name):
    """Other np.random functions (binomial, poisson, choice, permutation,
    shuffle, ...): NumPy's, seeded from the global state, with a one-time
    RuntimeWarning."""
    if name.startswith("__") or not hasattr(_np.random, name):
        raise AttributeError(f"module 'cpnumeric.random' has no attribute {name!r}")
    attr = getattr(_np.random, name)
    if callable(attr) and not isinstance(attr, type):
        if hasattr(_np.random.RandomState, name):
            return getattr(_global, name)

        def fallback(*args, **kwargs):
            return _fallback.call_numpy(f"random.{name}", args, kwargs, func=attr)
        fallback.__name__ = name
        return fallback
    return attr
