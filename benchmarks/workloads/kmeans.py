"""k-means clustering (Lloyd's algorithm) of 3-D points."""

from _common import main, rng

SIZES = {"medium": {"n": 20_000, "k": 8, "iters": 3},
         "small": {"n": 500, "k": 4, "iters": 5},
         "quick": {"n": 200_000, "k": 16, "iters": 10},
         "full": {"n": 1_000_000, "k": 16, "iters": 10}}


def traffic(n, k, iters):
    """Compulsory bytes: the points are read twice per iteration (distances,
    then sums), labels written once."""
    return iters * (2 * 24 * n + 8 * n)

def inputs(np, n, k, iters):
    g = rng(3)
    centers = g.random((k, 3)) * 10.0
    points = centers[g.integers(0, k, n)] + g.normal(0.0, 0.5, (n, 3))
    return np.asarray(points), np.asarray(points[:k].copy())


def run(np, points, centroids, n=None, k=16, iters=10):
    for _ in range(iters):
        diff = points[:, None, :] - centroids[None, :, :]
        dist = (diff * diff).sum(axis=2)
        labels = dist.argmin(axis=1)
        onehot = (labels[:, None] == np.arange(k)[None, :]).astype(points.dtype)
        counts = onehot.sum(axis=0)
        sums = onehot.T @ points
        centroids = sums / np.maximum(counts, 1.0)[:, None]
    return centroids, labels


# -- peers --------------------------------------------------------------------
_numba_kernel = None


def run_numba(numba, points, centroids, n=None, k=16, iters=10):
    import numpy as np
    global _numba_kernel
    if _numba_kernel is None:
        @numba.njit(parallel=True)
        def assign(points, centroids, labels):
            for i in numba.prange(points.shape[0]):
                best, arg = np.inf, 0
                for c in range(centroids.shape[0]):
                    d = 0.0
                    for j in range(points.shape[1]):
                        t = points[i, j] - centroids[c, j]
                        d += t * t
                    if d < best:
                        best, arg = d, c
                labels[i] = arg
        _numba_kernel = assign
    labels = np.empty(points.shape[0], dtype=np.int64)
    for _ in range(iters):
        _numba_kernel(points, centroids, labels)
        counts = np.bincount(labels, minlength=k).astype(points.dtype)
        sums = np.zeros((k, points.shape[1]))
        np.add.at(sums, labels, points)
        centroids = sums / np.maximum(counts, 1.0)[:, None]
    return centroids, labels


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
