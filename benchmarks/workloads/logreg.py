"""Logistic regression trained by batch gradient descent."""

from _common import main, rng

SIZES = {"medium": {"n": 20_000, "d": 8, "iters": 3},
         "small": {"n": 300, "d": 8, "iters": 10},
         "quick": {"n": 200_000, "d": 32, "iters": 20},
         "full": {"n": 1_000_000, "d": 32, "iters": 20}}


def traffic(n, d, iters):
    """Compulsory bytes: X is read twice per iteration (X @ w and X.T @ r)."""
    return iters * 2 * 8 * n * d

def inputs(np, n, d, iters):
    g = rng(4)
    x = g.normal(size=(n, d))
    w_true = g.normal(size=d)
    y = (x @ w_true + g.normal(scale=0.5, size=n) > 0).astype(float)
    return np.asarray(x), np.asarray(y)


def run(np, x, y, n=None, d=None, iters=20, lr=0.5):
    w = np.zeros(x.shape[1])
    for _ in range(iters):
        z = x @ w
        prob = 1.0 / (1.0 + np.exp(-z))
        grad = x.T @ (prob - y) / x.shape[0]
        w -= lr * grad
    loss = -np.mean(y * np.log(prob + 1e-12) + (1 - y) * np.log(1 - prob + 1e-12))
    return w, loss


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
