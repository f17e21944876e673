"""cpnc: a .py file compiled into an extension module that runs with NumPy
alone (no cpnumeric, no MLIR on the path of the process that imports it)."""

import os
import subprocess
import sys
import textwrap

import numpy
import pytest

PROG = '''\
import cpnumeric as np

SCALE = np.array([1.0, 2.0, 3.0])


# cpnc export axpy(float64, float64[n], float64[n])
def axpy(a, x, y):
    return a * x + y


# cpnc export column_stats(float64[:,3])
# cpnc export column_stats(float32[:,3])
def column_stats(A):
    m = A.mean(axis=0)
    c = A - m
    return m * SCALE, np.sqrt((c * c).sum(axis=0) / A.shape[0]), "stats"


# cpnc export gram(float64[:,:])
def gram(A):
    return A.T @ A


# cpnc export relax(float64[64])
# cpnc export relax(float64[9])
def relax(u):
    u[1:-1] = 0.5 * (u[:-2] + u[2:])


# cpnc export total(int64[:,:])
def total(x):
    return (x * x).sum()
'''

CHECK = '''\
import importlib.util, sys
assert importlib.util.find_spec("cpnumeric") is None, "cpnumeric is importable"
import numpy as np
import prog
assert "cpnumeric" not in sys.modules and "_cpn" not in sys.modules
rng = np.random.default_rng(0)
for n in (1000, 37, 0):
    x, y = rng.random(n), rng.random(n)
    r = prog.axpy(2.5, x, y)
    assert type(r) is np.ndarray and r.dtype == np.float64
    np.testing.assert_allclose(r, 2.5 * x + y, rtol=1e-15)
    np.testing.assert_allclose(prog.axpy(np.float64(-1), x, y), y - x)
scale = np.array([1.0, 2.0, 3.0])
for shape, dt, rtol in (((200, 3), np.float64, 1e-12), ((7, 3), np.float32, 1e-5),
                        ((1, 3), np.float64, 1e-12), ((9, 3), np.float32, 1e-5)):
    A = rng.random(shape).astype(dt)
    m, s, tag = prog.column_stats(A)
    assert tag == "stats"
    np.testing.assert_allclose(m, A.mean(axis=0) * scale, rtol=rtol)
    assert m.dtype == (A.mean(axis=0) * scale).dtype
    np.testing.assert_allclose(s, A.std(axis=0), rtol=rtol * 10)
    assert s.dtype == dt
    At = np.asfortranarray(A)  # another layout: copied in
    np.testing.assert_allclose(prog.column_stats(At)[1], A.std(axis=0), rtol=rtol * 10)
for shape in ((50, 20), (3, 700), (1, 1)):
    A = rng.random(shape)
    np.testing.assert_allclose(prog.gram(A), A.T @ A, rtol=1e-12)
for n in (64, 9):
    u = rng.random(n)
    ref = u.copy()
    ref[1:-1] = 0.5 * (ref[:-2] + ref[2:])
    assert prog.relax(u) is None
    np.testing.assert_array_equal(u, ref)
for shape in ((5, 4), (2, 9), (0, 3)):
    x = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    t = prog.total(x)
    assert isinstance(t, np.int64) and t == (x * x).sum()
try:
    prog.axpy(1.0, np.ones(5, np.float32), np.ones(5, np.float32))
except TypeError as e:
    assert "float64[n]" in str(e) and "float32[5]" in str(e), e
else:
    raise AssertionError("no TypeError for an uncompiled signature")
try:
    prog.axpy(1.0, np.ones(37))
except TypeError:
    pass
else:
    raise AssertionError("no TypeError for a missing argument")
try:  # both dimensions are named n: they must agree
    prog.axpy(1.0, np.ones(3), np.ones(4))
except TypeError as e:
    assert "float64[3], float64[4]" in str(e), e
else:
    raise AssertionError("no TypeError for sizes that differ")
print("ok")
'''


def _numpy_only_env():
    """Environment of a Python that finds NumPy but not cpnumeric: site is
    off (no .pth files), only NumPy's directory is on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(numpy.__file__))
    return env


def _run_numpy_only(code, cwd, **env):
    """Runs `code` in a Python that has NumPy but not cpnumeric."""
    return subprocess.run([sys.executable, "-S", "-c", code], cwd=cwd,
                          capture_output=True, text=True,
                          env={**_numpy_only_env(), **env}, timeout=300)


def _cpnc(args, cwd):
    return subprocess.run([sys.executable, "-m", "cpnumeric._cpnc", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def test_module_runs_with_numpy_only(tmp_path):
    (tmp_path / "prog.py").write_text(PROG)
    r = _cpnc(["prog.py", "--emit", "cpn,llvm,obj"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 function(s), 7 kernel(s)" in r.stdout
    names = os.listdir(tmp_path)
    assert any(n.startswith("prog.cpython") and n.endswith(".so") for n in names)
    assert "prog.relax_1.cpn.mlir" in names and "prog.gram_0.obj.o" in names
    # Shape-generic: dynamic dimensions in the IR.
    gram = (tmp_path / "prog.gram_0.cpn.mlir").read_text()
    assert "cpn.matmul" in gram and "tensor<?x?xf64>" in gram
    for threads in ("1", "2"):
        run = _run_numpy_only(CHECK, tmp_path, CPN_THREADS=threads)
        assert run.returncode == 0 and run.stdout.strip() == "ok", \
            run.stdout + run.stderr


def test_export_flag_target_cpu_and_output_name(tmp_path):
    (tmp_path / "k.py").write_text(textwrap.dedent('''\
        import cpnumeric as np

        @np.jit
        def softplus(x):
            return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)
        '''))
    r = _cpnc(["k.py", "--export", "softplus(float32[3,5])", "--target", "cpu",
               "-O2", "-o", "fast.so", "--dump-ir-after-all", "dump"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    dumped = os.listdir(tmp_path / "dump" / "cpnc_softplus_0")
    assert "001-cpn.mlir" in dumped and "llvm.ll" in dumped
    summary = (tmp_path / "dump" / "cpnc_softplus_0" / "summary.txt").read_text()
    assert "k.py:5" in summary and "peak bytes" in summary
    assert "__kmpc_fork_call" not in (
        tmp_path / "dump" / "cpnc_softplus_0" / "llvm.ll").read_text()
    check = ("import numpy as np, fast\n"
             "x = np.linspace(-30, 30, 15, dtype=np.float32).reshape(3, 5)\n"
             "ref = np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)\n"
             "np.testing.assert_allclose(fast.softplus(x), ref, rtol=1e-6)\n"
             "print('ok')\n")
    run = _run_numpy_only(check, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


@pytest.mark.parametrize("body, line, words", [
    ("def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n", 5,
     "np.where"),
    ("def f(x):\n    y = x + 1\n    return np.fft.hfft(y, 2, 0, 'x')\n", 6, "norm"),
    ("def f(x):\n    return x.reshape(7, 7)\n", 5, "ValueError"),
])
def test_unsupported_construct_names_file_and_line(tmp_path, body, line, words):
    (tmp_path / "bad.py").write_text("import cpnumeric as np\n\n"
                                     "# cpnc export f(float64[10])\n" + body)
    r = _cpnc(["bad.py"], tmp_path)
    assert r.returncode != 0
    assert f"bad.py:{line}:" in r.stderr and words in r.stderr, r.stderr
    assert not any(n.endswith(".so") for n in os.listdir(tmp_path))


@pytest.mark.parametrize("body, line, words", [
    ("def f(x):\n    y = x * 2\n    return y[::2] * 2.0\n", 6,
     "a slice with a step"),
    ("def f(x):\n    return x[::-1] + 1.0\n", 5, "a reversed"),
    ("def f(x):\n    return x + np.arange(x.shape[0])\n", 5, "an arange"),
])
def test_shape_generic_limits_name_the_line(tmp_path, body, line, words):
    (tmp_path / "g.py").write_text("import cpnumeric as np\n\n"
                                   "# cpnc export f(float64[:])\n" + body)
    r = _cpnc(["g.py"], tmp_path)
    assert r.returncode == 1
    assert f"g.py:{line}:" in r.stderr and words in r.stderr, r.stderr


def test_shape_generic_size_constants(tmp_path):
    # A.shape[0] and the count of a mean are recomputed from the sizes at each
    # call; a mean over two dimensions of any size (n * m) is refused.
    (tmp_path / "c.py").write_text(
        "import cpnumeric as np\n\n"
        "# cpnc export f(float32[:, 4])\n"
        "def f(A):\n"
        "    return A.mean(axis=0) + A.shape[0], A.var(axis=0, ddof=1) / A.shape[0]\n"
        "\n# cpnc export g(float64[:, :])\n"
        "def g(A):\n"
        "    return A.mean()\n")
    r = _cpnc(["c.py"], tmp_path)
    assert r.returncode == 1 and "c.py:7:" in r.stderr and "constant" in r.stderr
    (tmp_path / "c.py").write_text(
        (tmp_path / "c.py").read_text().split("\n# cpnc export g")[0])
    r = _cpnc(["c.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    check = ("import numpy as np, c\n"
             "for n in (2, 3, 50):\n"
             "    A = np.random.default_rng(n).random((n, 4)).astype(np.float32)\n"
             "    m, v = c.f(A)\n"
             "    np.testing.assert_allclose(m, A.mean(axis=0) + n, rtol=1e-6)\n"
             "    np.testing.assert_allclose(v, A.var(axis=0, ddof=1) / n, rtol=1e-5)\n"
             "    assert m.dtype == np.float32\n"
             "print('ok')\n")
    run = _run_numpy_only(check, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


def test_complex_and_fft_module(tmp_path):
    # complex arguments and results, and FFTW calls inside the module.
    (tmp_path / "spec.py").write_text(
        "import cpnumeric as np\n\n"
        "# cpnc export power(float64[64])\n"
        "def power(x):\n"
        "    return np.abs(np.fft.rfft(x)) ** 2\n"
        "\n# cpnc export rotate(complex64[:], float32)\n"
        "def rotate(z, t):\n"
        "    return z * np.exp(1j * t), z.real\n")
    r = _cpnc(["spec.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    check = ("import numpy as np, spec\n"
             "x = np.sin(np.arange(64) * 0.7)\n"
             "np.testing.assert_allclose(spec.power(x), np.abs(np.fft.rfft(x)) ** 2,\n"
             "                           rtol=1e-9, atol=1e-9)\n"
             "z = (np.arange(5) + 1j).astype(np.complex64)\n"
             "w, re = spec.rotate(z, np.float32(0.5))\n"
             "assert w.dtype == np.complex64 and re.dtype == np.float32\n"
             "np.testing.assert_allclose(w, z * np.exp(1j * np.float32(0.5)), rtol=1e-6)\n"
             "np.testing.assert_array_equal(re, z.real)\n"
             "print('ok')\n")
    run = _run_numpy_only(check, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


@pytest.mark.parametrize("args, words", [
    (["--export", "f(float64[_x])"], "not a size"),
    (["--export", "f(str[3])"], "not a dtype"),
    (["--export", "g(float64[3])"], "no function 'g'"),
    (["--export", "f(float64[3], float64[3])"], "declares 2 arguments"),
    ([], "nothing to export"),
])
def test_bad_exports(tmp_path, args, words):
    (tmp_path / "m.py").write_text("def f(x):\n    return x\n")
    r = _cpnc(["m.py", *args], tmp_path)
    assert r.returncode != 0 and words in r.stderr, r.stderr


def test_cuda_target_and_help(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return x\n")
    r = _cpnc(["m.py", "--export", "f(float64[3])", "--target", "cuda"], tmp_path)
    assert r.returncode == 2 and "no GPU backend" in r.stderr
    h = _cpnc(["--help"], tmp_path)
    for flag in ("--export", "--emit", "--dump-ir-after-all", "--target", "-O",
                 "-o OUT"):
        assert flag in h.stdout


def test_linalg_in_a_compiled_module(tmp_path):
    """LAPACK calls link into the module (libcpnrt_aot) and their errors are
    numpy.linalg.LinAlgError with NumPy's message; a gather's index out of
    bounds is IndexError (the wrapper picks the class by the error's kind)."""
    (tmp_path / "la.py").write_text(textwrap.dedent('''\
        import cpnumeric as np

        # cpnc export fit(float64[6,3], float64[6])
        def fit(A, b):
            G = A.T @ A
            return np.linalg.solve(G, A.T @ b), np.linalg.det(G), np.linalg.inv(G)

        # cpnc export pick(float64[5], int64[3])
        def pick(x, i):
            return np.take(x, i) * 2
        '''))
    r = _cpnc(["la.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    check = ("import numpy as np, la\n"
             "rng = np.random.default_rng(1)\n"
             "A, b = rng.random((6, 3)), rng.random(6)\n"
             "x, d, gi = la.fit(A, b)\n"
             "G = A.T @ A\n"
             "np.testing.assert_allclose(x, np.linalg.solve(G, A.T @ b), rtol=1e-10)\n"
             "np.testing.assert_allclose(d, np.linalg.det(G), rtol=1e-10)\n"
             "np.testing.assert_allclose(gi, np.linalg.inv(G), rtol=1e-10)\n"
             "try:\n"
             "    la.fit(np.ones((6, 3)), b)\n"
             "except np.linalg.LinAlgError as e:\n"
             "    assert type(e) is np.linalg.LinAlgError, type(e)\n"
             "    assert str(e) == 'Singular matrix', str(e)\n"
             "else:\n"
             "    raise AssertionError('no LinAlgError')\n"
             "assert la.pick(np.arange(5.0), np.array([0, 4, -1])).tolist() == [0, 8, 8]\n"
             "try:\n"
             "    la.pick(np.arange(5.0), np.array([0, 5, 1]))\n"
             "except IndexError as e:\n"
             "    assert type(e) is IndexError, type(e)\n"
             "    assert str(e) == 'index 5 is out of bounds for axis 0 with size 5', str(e)\n"
             "else:\n"
             "    raise AssertionError('no IndexError')\n"
             "print('ok')\n")
    run = _run_numpy_only(check, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


def test_shape_generic_arguments_that_broadcast(tmp_path):
    # Two ':' sizes the program broadcasts against each other become one
    # size (only those: z below keeps its own); at a call they must be
    # equal, else NumPy's ValueError (a size-1 argument is not broadcast:
    # it would change what other uses of it compute).
    (tmp_path / "bc.py").write_text(
        "import cpnumeric as np\n\n"
        "# cpnc export axpby(float64[:], float64[:], float64, float64)\n"
        "def axpby(x, y, a, b):\n"
        "    return a * x + b * y\n\n"
        "# cpnc export shift_rows(float64[:, :], float64[:])\n"
        "def shift_rows(A, v):\n"
        "    return A - v\n\n"
        "# cpnc export three(float64[:], float64[:], float64[:])\n"
        "def three(x, y, z):\n"
        "    return x + y, z * 2, x.sum()\n")
    r = _cpnc(["bc.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    check = ("import numpy as np, bc\n"
             "rng = np.random.default_rng(0)\n"
             "for n in (0, 1, 2, 7, 1000):\n"
             "    x, y = rng.random(n), rng.random(n)\n"
             "    np.testing.assert_array_equal(bc.axpby(x, y, 2.0, -0.5), 2.0 * x - 0.5 * y)\n"
             "    A = rng.random((3, n))\n"
             "    np.testing.assert_array_equal(bc.shift_rows(A, y), A - y)\n"
             "    z = rng.random(n + 3)\n"
             "    s, t, u = bc.three(x, y, z)\n"
             "    np.testing.assert_array_equal(s, x + y)\n"
             "    np.testing.assert_array_equal(t, z * 2)\n"
             "    np.testing.assert_allclose(u, x.sum())\n"
             "np.testing.assert_array_equal(bc.axpby(x[::3], y[::3], 1.5, 2.5), 1.5 * x[::3] + 2.5 * y[::3])\n"
             "for f, args in ((bc.axpby, (rng.random(3), rng.random(4), 1.0, 1.0)),\n"
             "                (bc.axpby, (rng.random(1), rng.random(4), 1.0, 1.0)),\n"
             "                (bc.shift_rows, (rng.random((2, 3)), rng.random(2)))):\n"
             "    try:\n"
             "        f(*args)\n"
             "    except ValueError as e:\n"
             "        assert 'broadcast' in str(e), e\n"
             "    else:\n"
             "        raise AssertionError('no ValueError')\n"
             "try:\n"
             "    bc.axpby(rng.random((2, 2)), rng.random(2), 1.0, 1.0)\n"
             "except TypeError:\n"
             "    pass\n"
             "else:\n"
             "    raise AssertionError('no TypeError')\n"
             "print('ok')\n")
    run = _run_numpy_only(check, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr


STENCILS = """\
import cpnumeric as np

# cpnc export jacobi(float64[:, :])
def jacobi(u):
    u[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
    u[-1, :] = 0.0
    u[:, 0] = u[:, 1]
    return u[1:-1, 1:-1].sum()

# cpnc export laplace(float32[:, :])
def laplace(u):
    return u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]

# cpnc export square(float64[n, n], int64[n])
def square(A, k):
    B = A[1:, 1:] * 2 + A[:-1, :-1].T
    A[0] = k * 1.5
    return B, (k[2:] + k[:-2]).astype(np.float32)

# cpnc export heat3(float64[:, :, :])
def heat3(u):
    u[1:-1, 1:-1, 1:-1] = (u[2:, 1:-1, 1:-1] + u[:-2, 1:-1, 1:-1] + u[1:-1, 2:, 1:-1]
                           + u[1:-1, :-2, 1:-1] + u[1:-1, 1:-1, 2:] + u[1:-1, 1:-1, :-2]) / 6.0
    return u[-1].sum() + u[:, -2, 1:].sum()

# cpnc export grad(float64[:], float64[:, 3])
def grad(x, P):
    y = x * 2
    return (y[1:] - y[:-1], x[3:-2].sum(), x[2:, None] * x[None, 1:-1],
            P[1:, 1:] - P[:-1, :2], P[-1], P[:, 2].max())
"""

CHECK_STENCILS = """\
import numpy as np, sten
exec(open("sten_py.txt").read())  # the same functions under NumPy
rng = np.random.default_rng(0)
for shape in [(2, 2), (3, 3), (2, 9), (3, 7), (64, 33), (257, 301)]:
    u = rng.random(shape)
    v = u.copy()
    r = sten.jacobi(u)
    r2 = jacobi(v)
    np.testing.assert_allclose(u, v, rtol=1e-13)
    np.testing.assert_allclose(r, r2, rtol=1e-12)
    w = rng.random(shape).astype(np.float32)
    got = sten.laplace(w)
    assert got.dtype == np.float32 and got.shape == laplace(w).shape
    np.testing.assert_allclose(got, laplace(w), rtol=1e-5, atol=1e-6)
    # a non-contiguous argument is copied in, and written back
    big = rng.random((shape[0], 2 * shape[1]))
    part, ref = big[:, ::2], big[:, ::2].copy()
    np.testing.assert_allclose(sten.jacobi(part), jacobi(ref), rtol=1e-12)
    np.testing.assert_allclose(big[:, ::2], ref, rtol=1e-13)
for n in (3, 4, 50):
    A, k = rng.random((n, n)), rng.integers(0, 9, n)
    A2 = A.copy()
    got, ref = sten.square(A, k), square(A2, k)
    np.testing.assert_array_equal(A, A2)
    for a, b in zip(got, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-13)
for s in [(3, 3, 3), (4, 5, 6), (30, 20, 11)]:
    u = rng.random(s)
    v = u.copy()
    np.testing.assert_allclose(sten.heat3(u), heat3(v), rtol=1e-12)
    np.testing.assert_allclose(u, v, rtol=1e-13)
for n in (5, 6, 17, 1000):
    x, P = rng.random(n), rng.random((n, 3))
    for a, b in zip(sten.grad(x, P), grad(x, P)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12)
for f, args in ((sten.jacobi, (np.ones((1, 5)),)), (sten.jacobi, (np.ones((0, 3)),)),
                (sten.grad, (np.ones(4), np.ones((4, 3))))):
    try:
        f(*args)
    except ValueError as e:
        assert "too small" in str(e), e
    else:
        raise AssertionError("no ValueError for sizes too small")
print("ok")
"""


def test_shape_generic_stencils(tmp_path):
    # Slices of dimensions of any size: u[1:-1, 1:-1] = ... compiles to one
    # kernel with run-time slice offsets and sizes that gives NumPy's results
    # at every size its slices fit (smaller ones raise ValueError).
    (tmp_path / "sten.py").write_text(STENCILS)
    (tmp_path / "sten_py.txt").write_text(STENCILS.replace(
        "import cpnumeric as np", "import numpy as np"))
    r = _cpnc(["sten.py", "--emit", "cpn"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 function(s), 5 kernel(s)" in r.stdout
    ir = (tmp_path / "sten.jacobi_0.cpn.mlir").read_text()
    assert "tensor.extract_slice" in ir and "tensor.insert_slice" in ir
    assert "tensor<?x?xf64>" in ir
    run = _run_numpy_only(CHECK_STENCILS, tmp_path)
    assert run.stdout.strip() == "ok", run.stdout + run.stderr
