"""Explicit 5-point heat-equation stencil with two buffers swapped each step."""

from _common import main, rng

SIZES = {"small": {"n": 33, "iters": 6},
         "quick": {"n": 1000, "iters": 100},
         "full": {"n": 4000, "iters": 100}}


def inputs(np, n, iters):
    u = np.asarray(rng(1).random((n, n)))
    return (u,)


def run(np, u, n=None, iters=100, alpha=0.2):
    v = u.copy()
    for _ in range(iters):
        c = u[1:-1, 1:-1]
        v[1:-1, 1:-1] = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                     + u[1:-1, 2:] - 4.0 * c)
        u, v = v, u
    return (u,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
