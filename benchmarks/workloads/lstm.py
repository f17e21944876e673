"""LSTM forward pass over a sequence (one layer, batch-first gates)."""

from _common import main, rng

SIZES = {"medium": {"batch": 64, "inp": 32, "hidden": 128, "steps": 3},
         "small": {"batch": 4, "inp": 8, "hidden": 16, "steps": 5},
         "quick": {"batch": 64, "inp": 256, "hidden": 512, "steps": 20},
         "full": {"batch": 256, "inp": 512, "hidden": 1024, "steps": 20}}


def traffic(batch, inp, hidden, steps):
    """Compulsory bytes: both weight matrices are read once per step."""
    return steps * 8 * (inp + hidden) * 4 * hidden

def inputs(np, batch, inp, hidden, steps):
    g = rng(5)
    xs = g.normal(size=(steps, batch, inp)) * 0.5
    w = g.normal(size=(inp, 4 * hidden)) / inp ** 0.5
    u = g.normal(size=(hidden, 4 * hidden)) / hidden ** 0.5
    b = g.normal(size=4 * hidden) * 0.1
    return np.asarray(xs), np.asarray(w), np.asarray(u), np.asarray(b)


def sigmoid(np, z):
    return 1.0 / (1.0 + np.exp(-z))


def run(np, xs, w, u, b, batch=None, inp=None, hidden=None, steps=None):
    hdim = u.shape[0]
    h = np.zeros((xs.shape[1], hdim))
    c = np.zeros((xs.shape[1], hdim))
    for t in range(xs.shape[0]):
        gates = xs[t] @ w + h @ u + b
        i = sigmoid(np, gates[:, :hdim])
        f = sigmoid(np, gates[:, hdim:2 * hdim])
        g = np.tanh(gates[:, 2 * hdim:3 * hdim])
        o = sigmoid(np, gates[:, 3 * hdim:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return h, c


if __name__ == "__main__":
    import sys
    main(sys.modules[__name__])
