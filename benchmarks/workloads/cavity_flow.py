"""Lid-driven cavity flow, step 11 of Lorena Barba's '12 steps to Navier-Stokes'."""

from _common import main

SIZES = {"medium": {"n": 192, "nt": 2, "nit": 4},
         "small": {"n": 17, "nt": 5, "nit": 5},
         "quick": {"n": 256, "nt": 20, "nit": 50},
         "full": {"n": 1024, "nt": 20, "nit": 50}}


def traffic(n, nt, nit):
    """Compulsory bytes: each pressure iteration reads p and b and writes p;
    each step also reads u, v, p and writes b, u, v."""
    return nt * (3 * nit + 8) * 8 * n * n

def inputs(np, n, nt, nit):
    return np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))


def build_up_b(np, rho, dt, dx, dy, u, v):
    b = np.zeros_like(u)
    b[1:-1, 1:-1] = (rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)
                                      + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
                            - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
                            - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy)
                                   * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
                            - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2))
    return b


def pressure_poisson(np, p, dx, dy, b, nit):
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2
                          + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2))
                         - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]   # dp/dx = 0 at x = 2
        p[0, :] = p[1, :]     # dp/dy = 0 at y = 0
        p[:, 0] = p[:, 1]     # dp/dx = 0 at x = 0
        p[-1, :] = 0          # p = 0 at y = 2
    return p


def run(np, u, v, p, n=None, nt=20, nit=50, rho=1.0, nu=0.1):
    dx = 2 / (n - 1)
    dy = 2 / (n - 1)
    dt = min(0.001, 0.2 * dx * dx / nu)  # the course's dt, kept stable on fine grids
    for _ in range(nt):
        un = u.copy()
        vn = v.copy()
        b = build_up_b(np, rho, dt, dx, dy, u, v)
        p = pressure_poisson(np, p, dx, dy, b, nit)
        u[1:-1, 1:-1] = (un[1:-1, 1:-1]
                         - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                         + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1]
                                                 + un[1:-1, 0:-2])
                                 + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1]
                                                   + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1]
                         - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                         - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                         - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                         + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1]
                                                 + vn[1:-1, 0:-2])
                                 + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1]
                                                   + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1  # the lid moves
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
