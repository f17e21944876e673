"""Explicit 5-point heat-equation stencil with two buffers swapped each step."""

from _common import main, rng

SIZES = {"medium": {"n": 200, "iters": 4},
         "small": {"n": 33, "iters": 6},
         "quick": {"n": 1000, "iters": 100},
         "full": {"n": 4000, "iters": 100}}


def traffic(n, iters):
    """Compulsory bytes: each step reads one grid and writes the other."""
    return iters * 2 * 8 * n * n

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


# -- peers --------------------------------------------------------------------
def run_numexpr(ne, u, n=None, iters=100, alpha=0.2):
    v = u.copy()
    for _ in range(iters):
        env = {"c": u[1:-1, 1:-1], "n_": u[:-2, 1:-1], "s_": u[2:, 1:-1],
               "w_": u[1:-1, :-2], "e_": u[1:-1, 2:], "alpha": alpha}
        ne.evaluate("c + alpha * (n_ + s_ + w_ + e_ - 4.0 * c)", local_dict=env,
                    out=v[1:-1, 1:-1])
        u, v = v, u
    return (u,)


_numba_step = None


def run_numba(numba, u, n=None, iters=100, alpha=0.2):
    global _numba_step
    if _numba_step is None:
        @numba.njit(parallel=True)
        def step(u, v, alpha):
            for i in numba.prange(1, u.shape[0] - 1):
                for j in range(1, u.shape[1] - 1):
                    c = u[i, j]
                    v[i, j] = c + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                           + u[i, j + 1] - 4.0 * c)
        _numba_step = step
    v = u.copy()
    for _ in range(iters):
        _numba_step(u, v, alpha)
        u, v = v, u
    return (u,)


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
