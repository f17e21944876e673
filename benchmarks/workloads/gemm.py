"""Dense matrix multiply C = A @ B."""

from _common import main, rng

SIZES = {"medium": {"n": 200},
         "small": {"n": 48}, "quick": {"n": 1000}, "full": {"n": 4000}}


def traffic(n):
    """Compulsory bytes: A and B read, C written (GEMM is compute-bound)."""
    return 3 * 8 * n * n

def inputs(np, n):
    g = rng(6)
    return np.asarray(g.random((n, n))), np.asarray(g.random((n, n)))


def run(np, a, b, n=None):
    return (a @ b,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
