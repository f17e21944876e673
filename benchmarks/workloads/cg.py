"""Conjugate gradient on a dense symmetric positive definite system."""

from _common import main, rng

SIZES = {"medium": {"n": 300, "iters": 10},
         "small": {"n": 40, "iters": 30},
         "quick": {"n": 2000, "iters": 50},
         "full": {"n": 4000, "iters": 100}}


def traffic(n, iters):
    """Compulsory bytes: the matrix is read once per iteration."""
    return iters * 8 * n * n

def inputs(np, n, iters):
    g = rng(2)
    m = g.random((n, n))
    # Symmetric, shifted to be positive definite with a condition number of a
    # few tens: CG needs tens of iterations, as on a real problem.
    a = (m + m.T) * 0.5 + 2.0 * n ** 0.5 * __import__("numpy").eye(n)
    b = g.random(n)
    return np.asarray(a), np.asarray(b)


def run(np, a, b, n=None, iters=100, tol=1e-10, check_every=10):
    x = np.zeros_like(b)
    r = b - a @ x
    p = r.copy()
    rr = r @ r
    for i in range(iters):
        ap = a @ p
        alpha = rr / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        rr_new = r @ r
        if (i + 1) % check_every == 0 and np.sqrt(rr_new) < tol:
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
    return (x,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
