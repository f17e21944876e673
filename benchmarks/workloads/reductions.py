"""Sums of a matrix along each axis and over all of it."""

from _common import main, rng

SIZES = {"medium": {"n": 300},
         "small": {"n": 37}, "quick": {"n": 2000}, "full": {"n": 8000}}


def traffic(n):
    """Compulsory bytes: three sums, one pass each."""
    return 3 * 8 * n * n

def inputs(np, n):
    return (np.asarray(rng(7).random((n, n))),)


def run(np, a, n=None):
    return a.sum(axis=0), a.sum(axis=1), a.sum()


# -- peers --------------------------------------------------------------------
def run_dask(da, a, n=None):
    x = da.from_array(a, chunks=(max(1, a.shape[0] // 4), a.shape[1]))
    return tuple(r.compute() for r in (x.sum(axis=0), x.sum(axis=1), x.sum()))


def run_numexpr(ne, a, n=None):
    return (ne.evaluate("sum(a, axis=0)", local_dict={"a": a}),
            ne.evaluate("sum(a, axis=1)", local_dict={"a": a}),
            ne.evaluate("sum(a)", local_dict={"a": a}))


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
