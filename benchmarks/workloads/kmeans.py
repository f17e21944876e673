"""k-means clustering (Lloyd's algorithm) of 3-D points."""

from _common import main, rng

SIZES = {"small": {"n": 500, "k": 4, "iters": 5},
         "quick": {"n": 200_000, "k": 16, "iters": 10},
         "full": {"n": 1_000_000, "k": 16, "iters": 10}}


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


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
