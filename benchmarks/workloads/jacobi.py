"""2-D Jacobi iteration for Laplace's equation on a square, hot top edge."""

from _common import main

SIZES = {"small": {"n": 34, "iters": 5},
         "quick": {"n": 1000, "iters": 100},
         "full": {"n": 4000, "iters": 100}}


def inputs(np, n, iters):
    u = np.zeros((n, n))
    u[0, :] = 1.0
    return (u,)


def run(np, u, n=None, iters=100):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return (u,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
