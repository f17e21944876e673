"""Run under `mpirun -n P` with CPN_PARTITION=rows: workloads whose arrays
are split in blocks of rows over the ranks (cpn-localize: each rank computes
its block, halo rows exchanged, sums combined) give NumPy's results.

Usage: CPN_PARTITION=rows CPN_PARTITION_THRESHOLD=1024 CPN_HALO_OVERLAP=1 \
       mpirun --oversubscribe -n P python test/mpi/partitioned.py P
"""

import importlib
import os
import sys

import numpy

import cpnumeric as cp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "workloads"))

SIZES = {"jacobi": {"n": 200, "iters": 6}, "stencil": None,
         "black_scholes": None,
         # pn = p.copy(); p[1:-1, 1:-1] = f(pn, b); boundary copies of p's
         # own columns and rows (donation and cpn-localize's chain views).
         "cavity_flow": {"n": 96, "nt": 2, "nit": 5}}


def halo_bytes(ranks):
    """A stencil loop moves its halo rows once per iteration, nothing else:
    each body is a window of its own (ghost zones otherwise), after a sync
    point too, and no input is gathered."""
    n, cols, iters = 300, 40, 6
    u = cp.zeros((n, cols))
    u[0, :] = 1.0
    ref = numpy.asarray(u).copy()
    for it in range(2 * iters):
        if it == iters:
            float(u.sum())  # a sync point inside the loop
            cp.reset_stats()
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        ref[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                  + ref[1:-1, 2:])
    total = float(u.sum())
    s = cp.stats()
    neighbours = (cp.rank() > 0) + (cp.rank() < ranks - 1)
    # One row from each neighbour per iteration, and the sum's 8 bytes.
    expect = iters * neighbours * cols * 8 + 8
    assert s["comm_bytes_received"] == expect, (s["comm_bytes_received"], expect)
    assert s["comm_messages"] == iters * neighbours, s["comm_messages"]
    numpy.testing.assert_allclose(total, ref.sum(), rtol=1e-12)
    # Each iteration's kernel computes its block's interior while the halo
    # rows travel and its border rows after (CPN_HALO_OVERLAP=1: blocks of
    # any size): the same elements, bit for bit (compared at the end: a
    # gather here would replicate u).
    if os.environ.get("CPN_HALO_OVERLAP") == "1":  # split at any size
        assert s["halo_overlap_windows"] == iters, s["halo_overlap_windows"]
    # The loop entered again after other work (a time step's pressure
    # iterations after its velocity updates): its body is known, so its
    # first iterations are windows of their own too, one halo message per
    # neighbour each (before, the first three were one window with ghost
    # zones: one message for the three).
    def other(lib, u, k):
        v = lib.zeros_like(u)
        v[1:-1, 1:-1] = (u[2:, 1:-1] - u[:-2, 1:-1]) * k
        w = v * 2.0 + u
        v[1:-1, 1:-1] = w[1:-1, 2:] - w[1:-1, :-2] + v[1:-1, 1:-1]
        return v

    def loop(u):
        for _ in range(iters):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                    + u[1:-1, 2:])

    cp.reset_stats()
    for step in range(2):
        v = other(cp, u, step + 1.0)
        vr = other(numpy, ref, step + 1.0)
        loop(u)
        loop(ref)
    total = float(u.sum() + v.sum())
    s = cp.stats()
    assert s["comm_messages"] >= 2 * iters * neighbours, s["comm_messages"]
    numpy.testing.assert_allclose(total, ref.sum() + vr.sum(), rtol=1e-12)
    numpy.testing.assert_array_equal(numpy.asarray(u), ref)
    numpy.testing.assert_array_equal(numpy.asarray(v), vr)
    return 4


def draws_by_rows(ranks):
    """Random draws and aranges split over the ranks compute each rank's
    rows only (cpn-localize): the words are those of the elements' places in
    the stream, as drawing row by row (small, replicated draws) gives them,
    whatever the number of ranks."""
    big = cp.random.default_rng(11).random((300, 40)) * 2.0 + cp.arange(300 * 40).reshape(300, 40)
    g = cp.random.default_rng(11)
    rows = numpy.stack([numpy.asarray(g.random(40)) for _ in range(300)])
    numpy.testing.assert_array_equal(numpy.asarray(big),
                                     rows * 2.0 + numpy.arange(300 * 40).reshape(300, 40))
    ints = cp.random.default_rng(12).integers(0, 1000, (301, 40))
    g = cp.random.default_rng(12)
    ref = numpy.stack([numpy.asarray(g.integers(0, 1000, 40)) for _ in range(301)])
    numpy.testing.assert_array_equal(numpy.asarray(ints), ref)
    # Normals: each rank draws its rows of both halves of the words
    # (words [c, c + n) and [c + n, c + 2n), Box-Muller on the pair).
    g = cp.random.default_rng(13)
    key, counter = g._key, g._counter
    z = g.standard_normal((301, 40)) * 1.0
    words = cp._cpn.philox_words(key, counter, 2 * 301 * 40).reshape(2, 301, 40)
    u = ((words >> numpy.uint64(11)).astype(numpy.float64) + 0.5) * 2.0 ** -53
    ref = numpy.sqrt(numpy.log(u[0]) * -2.0) * numpy.cos(u[1] * (2 * numpy.pi))
    numpy.testing.assert_allclose(numpy.asarray(z), ref, rtol=1e-13, atol=1e-13)
    return 3


def _kth(p):
    """The elements a partition put in places 3 and 9 (row-aligned views)."""
    return p[..., 3] * 2.0 + p[..., 9]


def row_library_calls(ranks):
    """Sorts, partitions, scans and FFTs along the rows of a split array are
    called on each rank's block of rows (cpn-localize's rowwiseCall): NumPy's
    values, and nothing gathered (only the sum's 8 bytes move)."""
    rng = numpy.random.default_rng(21)
    data = rng.standard_normal((1201, 40))  # a partition's kth column split too
    data3 = rng.standard_normal((31, 7, 12))
    x = cp.asarray(data) * 1.0      # computed: split by rows
    x3 = cp.asarray(data3) * 1.0
    cp.synchronize()
    cases = [
        ("sort", lambda m, a: m.sort(a, axis=1)),
        ("argsort", lambda m, a: m.argsort(a, axis=-1, kind="stable")),
        ("partition", lambda m, a: _kth(m.partition(a, [3, 9], axis=-1))),
        ("cumsum", lambda m, a: m.cumsum(a, axis=1)),
        ("cumprod", lambda m, a: m.cumprod(a * 0.1 + 1.0, axis=-1)),
        ("maximum.accumulate", lambda m, a: m.maximum.accumulate(a, axis=1)),
        ("fft", lambda m, a: m.fft.fft(a).imag),
        ("rfft", lambda m, a: m.abs(m.fft.rfft(a))),
        ("irfft", lambda m, a: m.fft.irfft(m.fft.rfft(a), n=a.shape[-1])),
    ]
    checks = 0
    for name, f in cases:
        for a, ref_in in ((x, data), (x3, data3)):
            ref = f(numpy, ref_in)
            cp.reset_stats()
            total = float(f(cp, a).sum())
            moved = cp.stats()["comm_bytes_received"]
            numpy.testing.assert_allclose(total, ref.sum(), rtol=1e-9, atol=1e-9,
                                          err_msg=name)
            if a is x and ranks > 1:
                assert moved <= 8, (name, moved)  # the sum's all-reduce at most
            numpy.testing.assert_allclose(numpy.asarray(f(cp, a)), ref, rtol=1e-12,
                                          atol=1e-12, err_msg=name)
            checks += 1
    return checks


def large_gather_warns(ranks):
    """Reading a split array above CPN_GATHER_WARN_BYTES gathers it onto
    every rank (one all-gather) with a RuntimeWarning; a reduction of it and
    a small array do not warn."""
    import warnings
    a = cp.arange(300 * 40, dtype=numpy.float64).reshape(300, 40) * 2.0
    os.environ["CPN_GATHER_WARN_BYTES"] = str(300 * 40 * 8)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            total = float(a.sum())
            small = numpy.asarray(a[0] + 1.0)
            assert not caught, [str(w.message) for w in caught]
            before = cp.stats()
            whole = numpy.asarray(a)
            after = cp.stats()
        if ranks > 1:
            assert len(caught) == 1 and "CPN_GATHER_WARN_BYTES" in str(caught[0].message), \
                [str(w.message) for w in caught]
            # One in-place all-gather: the other ranks' blocks received, no
            # point-to-point message.
            mine = (300 * (cp.rank() + 1) // ranks - 300 * cp.rank() // ranks) * 40 * 8
            assert after["comm_collectives"] - before["comm_collectives"] == 1
            assert after["comm_messages"] == before["comm_messages"]
            assert (after["comm_bytes_received"] - before["comm_bytes_received"]
                    == 300 * 40 * 8 - mine)
        else:
            assert not caught
    finally:
        del os.environ["CPN_GATHER_WARN_BYTES"]
    ref = numpy.arange(300 * 40, dtype=numpy.float64).reshape(300, 40) * 2.0
    numpy.testing.assert_array_equal(whole, ref)
    numpy.testing.assert_array_equal(small, ref[0] + 1.0)
    assert total == ref.sum()
    return 1


def held_copies(ranks):
    """`pn = p.copy()` still held when a window ends, a stencil reading pn at
    shifted rows: pn's output takes p's old buffer and is computed once on
    every row the rank holds, halo rows included (cpn-localize's spans).
    Windows are cut at several places of the body (a sync inside it moves
    the cut), with the copy before and after the boundary updates."""
    def run(np, p, copy_first, syncs):
        sums = []
        pn = None
        for i in range(7):
            if copy_first:
                pn = p.copy()
            p[:, -1] = p[:, -2]
            p[0, :] = p[1, :]
            if not copy_first:
                pn = p.copy()
            p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2]
                                    + pn[2:, 1:-1] + pn[:-2, 1:-1]) - 0.1 * pn[1:-1, 1:-1]
            p[-1, :] = 0.5
            if i in syncs:
                sums.append(float(pn.sum()))
        return p, pn, sums

    checks = 0
    for copy_first in (True, False):
        for syncs in ((), (1,), (2, 4)):
            start = (numpy.arange(121 * 50, dtype=numpy.float64).reshape(121, 50) % 11) / 3
            rp, rpn, rs = run(numpy, start.copy(), copy_first, syncs)
            gp, gpn, gs = run(cp, cp.asarray(start), copy_first, syncs)
            numpy.testing.assert_allclose(gs, rs, rtol=1e-12)
            numpy.testing.assert_allclose(numpy.asarray(gpn), rpn, rtol=1e-12)
            numpy.testing.assert_allclose(numpy.asarray(gp), rp, rtol=1e-12)
            checks += 3
    return checks


def reductions_by_dtype(ranks):
    """Partial reductions over split rows combined over the ranks for the
    dtypes where MPI's own ops differ from NumPy's: a NaN in one rank's
    rows (NumPy's max and min give NaN; MPI_MAX dropped it), bools (max is
    any, min all: there was no such all-reduce), complex max and min
    (computed whole: MPI has no order of complex numbers)."""
    n = 48 * ranks
    ref = (numpy.arange(n * 40, dtype=numpy.float64).reshape(n, 40) % 13) - 6
    ref[1, 3] = numpy.nan          # rank 0's rows
    ref[n - 2, 7] = numpy.nan      # the last rank's
    got = cp.asarray(ref)
    checks = 0
    for f in (lambda x: x.max(axis=0), lambda x: x.min(axis=0),
              lambda x: numpy.ptp(x, axis=0) if x is ref else cp.ptp(x, axis=0),
              lambda x: x.max(), lambda x: x.min()):
        numpy.testing.assert_array_equal(numpy.asarray(f(got)), f(ref))
        checks += 1
    bref, bgot = ref > 5, got > 5
    for f in (lambda x: x.max(axis=0), lambda x: x.min(axis=0),
              lambda x: x.sum(axis=0, dtype=bool), lambda x: x.prod(axis=0, dtype=bool),
              lambda x: x.max(), lambda x: x.min()):
        numpy.testing.assert_array_equal(numpy.asarray(f(bgot)), f(bref))
        checks += 1
    cref = numpy.nan_to_num(ref) + 1j * (ref[::-1] % 3)
    cgot = cp.asarray(cref)
    for f in (lambda x: x.max(axis=0), lambda x: x.min(axis=0), lambda x: x.sum(axis=0)):
        numpy.testing.assert_array_equal(numpy.asarray(f(cgot)), f(cref))
        checks += 1
    # 8- and 16-bit sums that wrap (Open MPI 4.1's vectorized MPI_SUM
    # saturates them: 200 + 200 gave 255 in uint8; mpifuzz 29:236).
    big = numpy.arange(n * 40).reshape(n, 40) % 7 * 37 + 180
    for dt in ("uint8", "int8", "uint16", "int16"):
        iref = (big * (300 if "16" in dt else 1)).astype(dt)
        igot = cp.asarray(iref)
        for f in (lambda x: x.sum(axis=0, dtype=x.dtype), lambda x: x.sum(dtype=x.dtype),
                  lambda x: x.prod(axis=0, dtype=x.dtype)):
            numpy.testing.assert_array_equal(numpy.asarray(f(igot)), f(iref))
            checks += 1
    return checks


def contractions_and_stages(ranks):
    """Products that contract over split rows (`x.T @ v`, `y @ v`, `x @ y` of
    vectors) are each rank's partial products summed over the ranks, and a
    window that uses a value combined over the ranks (`x / x.sum()`, k-means'
    counts and sums) runs in stages: nothing split is gathered. k-means,
    logistic regression's gradient and normalizations against NumPy."""
    n = 600 * ranks
    rs = numpy.random.default_rng(5)
    pts = rs.standard_normal((n, 3))
    y = (rs.random(n) > 0.5).astype(float)
    cpts, cy = cp.asarray(pts), cp.asarray(y)
    checks = 0

    def kmeans(np, points, k, iters):
        cen = points[:k].copy()
        for _ in range(iters):
            diff = points[:, None, :] - cen[None, :, :]
            labels = (diff * diff).sum(axis=2).argmin(axis=1)
            onehot = (labels[:, None] == np.arange(k)[None, :]).astype(points.dtype)
            counts = onehot.sum(axis=0)
            cen = (onehot.T @ points) / np.maximum(counts, 1.0)[:, None]
        return cen, labels

    def logreg(np, x, t, iters):
        w = np.zeros(x.shape[1])
        for _ in range(iters):
            prob = 1.0 / (1.0 + np.exp(-(x @ w)))
            w = w - 0.5 * (x.T @ (prob - t)) / x.shape[0]
        return w

    cp.reset_stats()
    for got, ref in [(kmeans(cp, cpts, 4, 4), kmeans(numpy, pts, 4, 4)),
                     ((logreg(cp, cpts, cy, 5),), (logreg(numpy, pts, y, 5),)),
                     ((cpts / cpts.sum(axis=0), cy @ cy, cy @ cpts, cpts.T @ cy),
                      (pts / pts.sum(axis=0), y @ y, y @ pts, pts.T @ y))]:
        for g, r in zip(got, ref):
            numpy.testing.assert_allclose(numpy.asarray(g), r, rtol=1e-10, atol=1e-12)
            checks += 1
    s = cp.stats()
    # Partials and the results read above are all that moves: no split
    # array (n x 3 float64: 14 kB per rank and more) is gathered.
    assert s["comm_messages"] == 0, s["comm_messages"]
    read = 8 * (n + n * 3)  # labels and x / x.sum() gathered when read
    assert s["comm_bytes_received"] < read + 4096 * ranks, (s["comm_bytes_received"], read)
    return checks


def overlap_with_partials(ranks):
    """A stencil window that also reduces over its rows (a convergence
    check every iteration: the largest change, the squared norm) runs as
    an interior beside its halo round and a border after it, each part
    reducing its rows; the border combines the two partials before the
    ranks combine theirs. Same elements as NumPy's, bit for bit for the
    stencil and the max; the sum to rounding. Also on the swapped-buffer
    stencil (written in place into the other array), and a min over rows
    that a wide stencil (two rows each side) reads."""
    n, cols, iters = 400, 64, 5
    ref = numpy.fromfunction(lambda i, j: numpy.sin(i * 0.05) * numpy.cos(j * 0.1),
                             (n, cols))
    u = cp.asarray(ref.copy())
    cp.synchronize()
    cp.reset_stats()
    for _ in range(iters):
        un = u.copy()
        un[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                 + u[1:-1, 2:])
        change = float(abs(un - u).max())
        norm = float((un * un + u).sum())
        u = un
        rn = ref.copy()
        rn[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                 + ref[1:-1, 2:])
        assert change == abs(rn - ref).max(), change
        numpy.testing.assert_allclose(norm, (rn * rn + ref).sum(), rtol=1e-12)
        ref = rn
    s = cp.stats()
    if os.environ.get("CPN_HALO_OVERLAP") == "1":  # split at any size
        assert s["halo_overlap_windows"] >= iters, s["halo_overlap_windows"]
    # Two arrays swapped: v[1:-1, 1:-1] = f(u) writes into v in place.
    a, b = cp.asarray(ref.copy()), cp.asarray(ref.copy())
    ra, rb = ref.copy(), ref.copy()
    for _ in range(iters):
        for x, y in ((a, b), (ra, rb)):
            y[1:-1, 1:-1] = x[1:-1, 1:-1] + 0.1 * (x[:-2, 1:-1] + x[2:, 1:-1]
                                                    - 2.0 * x[1:-1, 1:-1])
        a, b, ra, rb = b, a, rb, ra
    lo = float((a[:-4] + a[4:]).min())
    assert lo == (ra[:-4] + ra[4:]).min(), lo
    numpy.testing.assert_array_equal(numpy.asarray(a), ra)
    numpy.testing.assert_array_equal(numpy.asarray(u), ref)
    return 2 * iters + 3


def random_stencils(ranks):
    """Stencils of random shapes (row offsets up to 3 each way, column
    offsets of one), sizes (blocks of uneven rows) and forms (a fresh
    result, in place, into the other of two swapped arrays, with a max or
    a sum over the rows in the window): NumPy's elements, bit for bit, with
    the interior and border split wherever it applies."""
    rng = numpy.random.default_rng(2349)  # the same cases on every rank
    checks = 0
    cp.reset_stats()
    for case in range(16):
        n, m = int(rng.integers(60, 200)), int(rng.integers(17, 40))
        h = int(rng.integers(1, 4))
        offs = [(int(rng.integers(-h, h + 1)), int(rng.integers(-1, 2)))
                for _ in range(int(rng.integers(2, 5)))]
        coef = [float(c) for c in rng.uniform(-1, 1, len(offs))]
        form = ["fresh", "inplace", "swap", "max", "sum"][case % 5]
        start = rng.uniform(-1, 1, (n, m))

        def f(x):
            out = None
            for (dr, dc), c in zip(offs, coef):
                t = c * x[h + dr:n - h + dr, 1 + dc:m - 1 + dc]
                out = t if out is None else out + t
            return out

        def run(lib):
            x = lib.asarray(start.copy()) if lib is cp else start.copy()
            y = x.copy()
            red = []
            for _ in range(3):
                if form == "fresh":
                    x = lib.pad(f(x), ((h, h), (1, 1)))
                elif form == "inplace":
                    x[h:n - h, 1:m - 1] = f(x)
                elif form == "swap":
                    y[h:n - h, 1:m - 1] = f(x)
                    x, y = y, x
                else:
                    new = x.copy()
                    new[h:n - h, 1:m - 1] = f(x)
                    d = abs(new - x)
                    red.append(float(d.max() if form == "max" else d.sum()))
                    x = new
            return x, red

        got, gred = run(cp)
        ref, rred = run(numpy)
        numpy.testing.assert_array_equal(numpy.asarray(got), ref,
                                         err_msg=f"case {case}: {form} {offs}")
        if form == "max":
            assert gred == rred, (case, gred, rred)
        else:
            numpy.testing.assert_allclose(gred, rred, rtol=1e-12)
        checks += 1
    if os.environ.get("CPN_HALO_OVERLAP") == "1":  # split at any size
        assert cp.stats()["halo_overlap_windows"] > 0
    return checks


def main():
    ranks = int(sys.argv[1])
    assert cp.ranks() == ranks, (cp.ranks(), ranks)
    checks = 0
    for name, size in SIZES.items():
        w = importlib.import_module(name)
        size = size or w.SIZES["medium"]
        ref = w.run(numpy, *w.inputs(numpy, **size), **size)
        got = w.run(cp, *w.inputs(cp, **size), **size)
        for i, (g, r) in enumerate(zip(got, ref)):
            numpy.testing.assert_allclose(numpy.asarray(g), r, rtol=1e-9,
                                          atol=1e-12, err_msg=f"{name}[{i}]")
            checks += 1
    # A stencil written in place in a loop, a sum of a split array, a
    # boundary row read by every rank.
    n = 300
    ref = numpy.arange(n * 40, dtype=numpy.float64).reshape(n, 40) % 7
    got = cp.asarray(ref)
    for _ in range(5):
        ref[1:-1, 1:-1] = 0.2 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2]
                                 + ref[1:-1, 2:] + ref[1:-1, 1:-1])
        got[1:-1, 1:-1] = 0.2 * (got[:-2, 1:-1] + got[2:, 1:-1] + got[1:-1, :-2]
                                 + got[1:-1, 2:] + got[1:-1, 1:-1])
        numpy.testing.assert_allclose(float(got.sum()), ref.sum(), rtol=1e-12)
        checks += 1
    numpy.testing.assert_allclose(numpy.asarray(got), ref, rtol=1e-12)
    numpy.testing.assert_allclose(numpy.asarray(got[0] + got[-1]), ref[0] + ref[-1])
    numpy.testing.assert_allclose(numpy.asarray((got * 2).max(axis=0)),
                                  (ref * 2).max(axis=0))
    checks += 3
    checks += draws_by_rows(ranks)
    checks += large_gather_warns(ranks)  # (first: its array's gather warns once)
    checks += row_library_calls(ranks)
    checks += halo_bytes(ranks)
    checks += held_copies(ranks)
    checks += reductions_by_dtype(ranks)
    checks += contractions_and_stages(ranks)
    checks += overlap_with_partials(ranks)
    checks += random_stencils(ranks)
    print(f"mpi partitioned: {checks} checks passed on each of {ranks} ranks")


main()
