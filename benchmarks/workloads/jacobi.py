"""2-D Jacobi iteration for Laplace's equation on a square, hot top edge."""

from _common import main

SIZES = {"medium": {"n": 200, "iters": 4},
         "small": {"n": 34, "iters": 5},
         "quick": {"n": 1000, "iters": 100},
         "full": {"n": 4000, "iters": 100}}


def traffic(n, iters):
    """Compulsory bytes: each iteration reads the grid and writes its interior."""
    return iters * 2 * 8 * n * n

def inputs(np, n, iters):
    u = np.zeros((n, n))
    u[0, :] = 1.0
    return (u,)


def run(np, u, n=None, iters=100):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return (u,)


# -- peers --------------------------------------------------------------------
def run_numexpr(ne, u, n=None, iters=100):
    tmp = u[1:-1, 1:-1].copy()
    for _ in range(iters):
        env = {"a": u[:-2, 1:-1], "b": u[2:, 1:-1], "c": u[1:-1, :-2], "d": u[1:-1, 2:]}
        ne.evaluate("0.25 * (a + b + c + d)", local_dict=env, out=tmp)
        u[1:-1, 1:-1] = tmp
    return (u,)


_numba_step = None


def run_numba(numba, u, n=None, iters=100):
    global _numba_step
    if _numba_step is None:
        @numba.njit(parallel=True)
        def step(u, v):
            for i in numba.prange(1, u.shape[0] - 1):
                for j in range(1, u.shape[1] - 1):
                    v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
        _numba_step = step
    v = u.copy()
    for _ in range(iters):
        _numba_step(u, v)
        u, v = v, u
    return (u,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
