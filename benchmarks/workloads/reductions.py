"""Sums of a matrix along each axis and over all of it."""

from _common import main, rng

SIZES = {"small": {"n": 37}, "quick": {"n": 2000}, "full": {"n": 8000}}


def inputs(np, n):
    return (np.asarray(rng(7).random((n, n))),)


def run(np, a, n=None):
    return a.sum(axis=0), a.sum(axis=1), a.sum()


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
