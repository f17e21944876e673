"""Trace windows, the kernel cache, dead temporaries and IR dumps."""

import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy
import pytest

import cpnumeric as cp

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_dead_temporary_is_not_allocated():
    x = cp.arange(1000.0) / 100.0
    float(x.sum())
    cp.reset_stats()
    y = cp.exp(x) * 2.0 + 1.0  # exp(x) and exp(x)*2 die at once
    r = float(y.sum())
    s = cp.stats()
    # Only y and its sum are materialized; the two temporaries are not.
    assert s["values_materialized"] == 2
    assert s["dead_values_skipped"] >= 2
    # Buffers: y, its sum, and at most the 0-d scalars 2.0 and 1.0 (cached
    # across calls); no temporary, not even inside the kernel (kernel
    # temporaries come from the same pool).
    assert 2 <= s["buffer_allocations"] + s["buffer_reuses"] + s["buffers_donated"] <= 4
    ref = (numpy.exp(numpy.arange(1000.0) / 100.0) * 2 + 1).sum()
    assert abs(r - ref) < 1e-9 * abs(ref)


def test_identical_iterations_compile_once():
    def step(u):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])

    u = cp.zeros((32, 32))
    u[0, :] = 1.0
    for _ in range(3):
        step(u)
    float(u.sum())
    cp.reset_stats()
    for _ in range(100):
        step(u)
    float(u.sum())
    s = cp.stats()
    assert s["compilations"] <= 3
    assert s["cache_hits"] >= 1
    ref = numpy.zeros((32, 32))
    ref[0, :] = 1.0
    for _ in range(103):
        ref[1:-1, 1:-1] = 0.25 * (ref[:-2, 1:-1] + ref[2:, 1:-1] + ref[1:-1, :-2] + ref[1:-1, 2:])
    numpy.testing.assert_allclose(numpy.asarray(u), ref, rtol=1e-12)


def test_dump_ir_shows_fused_stencil(tmp_path):
    prog = textwrap.dedent("""
        import cpnumeric as np
        u = np.zeros((40, 40)); u[0, :] = 1.0
        for _ in range(3):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        print(float(u.sum()))
    """)
    env = dict(os.environ, CPN_DUMP_IR=str(tmp_path),
               PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", prog], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert float(out) > 0
    dirs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert dirs
    names = [p.name for p in dirs[-1].iterdir()]
    assert "000-trace.txt" in names and "001-cpn.mlir" in names and "llvm.ll" in names
    fused = [n for n in names if "cpn-fuse-elementwise" in n]
    assert fused
    text = (dirs[-1] / fused[0]).read_text()
    # The stencil's four neighbours and its arithmetic are one generic.
    bodies = [g[:g.index("linalg.yield")] for g in text.split("linalg.generic")[1:]]
    stencils = [b for b in bodies if "arith.mulf" in b]
    assert stencils
    assert all(b.count("arith.addf") == 3 and b.count("arith.mulf") == 1
               for b in stencils)


def test_dump_ir_summary_names_the_lines_of_a_fused_kernel(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""\
        import cpnumeric as np
        x = np.linspace(0.0, 1.0, 5000)
        y = np.exp(-x) * 3.0
        z = np.sqrt(y + x * x)
        del y
        print(float(z.sum()))
        """))
    dump = tmp_path / "ir"
    env = dict(os.environ, CPN_DUMP_IR=str(dump), CPN_CACHE_DIR="",
               PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, str(prog)], env=env, check=True,
                         capture_output=True, text=True).stdout
    x = numpy.linspace(0.0, 1.0, 5000)
    assert float(out) == pytest.approx(numpy.sqrt(numpy.exp(-x) * 3.0 + x * x).sum())
    (d,) = [p for p in dump.iterdir() if p.is_dir()]
    assert re.fullmatch(r"\d{4}-[0-9a-f]{16}", d.name)
    names = sorted(p.name for p in d.iterdir())
    assert names[:2] == ["000-trace.txt", "001-cpn.mlir"]
    passes = [n for n in names if re.fullmatch(r"\d{3}-.+\.mlir", n)][2:]
    assert len(passes) > 10 and any("one-shot-bufferize" in n for n in passes)
    assert "llvm.ll" in names and "summary.txt" in names
    summary = (d / "summary.txt").read_text()
    # One loop nest computes z from lines 2, 3 and 4: y has no buffer.
    froms = [l for l in summary.splitlines() if l.strip().startswith("from:")]
    assert any(f"{prog}:3" in l and f"{prog}:4" in l for l in froms), summary
    assert re.search(r"^kernels: \d+$", summary, re.M)
    assert re.search(r"^temporaries: 0 buffer", summary, re.M)
    assert re.search(r"^peak bytes: \d+", summary, re.M)


def test_compile_error_names_reproducer():
    # A pending trace survives a failed compilation without crashing.
    x = cp.arange(4.0)
    assert float((x + 1).sum()) == 10.0


def test_two_reductions_of_one_array_in_one_trace():
    # CSE used to merge the two accumulator inits, and the second sum overwrote
    # the first one's result after empty-tensor elimination.
    a0 = numpy.arange(12.0).reshape(3, 4)
    a = cp.asarray(a0)
    s0, s1, s = a.sum(axis=0), a.sum(axis=1), a.sum()
    numpy.testing.assert_array_equal(cp.asnumpy(s0), a0.sum(axis=0))
    numpy.testing.assert_array_equal(cp.asnumpy(s1), a0.sum(axis=1))
    assert float(s) == a0.sum()


_DISK_PROGRAM = textwrap.dedent("""
    import json, cpnumeric as np
    u = np.zeros((64, 64)); u[0, :] = 1.0
    for _ in range(20):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    r = float(u.sum())
    s = np.stats()
    print(json.dumps({"r": r, "compilations": s["compilations"], "disk_hits": s["disk_hits"],
                      "disk_writes": s["disk_writes"]}))
""")


def _run_disk_program(cache_dir):
    env = dict(os.environ, CPN_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", _DISK_PROGRAM], env=env, check=True,
                         capture_output=True, text=True).stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_compiles_nothing(tmp_path):
    first = _run_disk_program(tmp_path)
    assert first["compilations"] > 0 and first["disk_writes"] == first["compilations"]
    assert any(p.suffix == ".o" for p in tmp_path.iterdir())
    second = _run_disk_program(tmp_path)
    assert second["compilations"] == 0
    assert second["disk_hits"] == first["compilations"]
    assert second["r"] == first["r"]


def test_disk_cache_entry_that_does_not_match_is_recompiled(tmp_path):
    first = _run_disk_program(tmp_path)
    # A different trace under the same name (as a hash collision would be):
    # the stored trace text does not match, so the kernel is compiled again.
    for p in tmp_path.glob("*.trace"):
        p.write_text("%in0 : f8\n%0 = add %in0, %in0 : f8\n")
    again = _run_disk_program(tmp_path)
    assert again["compilations"] == first["compilations"]
    assert again["disk_hits"] == 0
    assert again["r"] == first["r"]


# Eight independent loop nests with transcendental math: a kernel large
# enough to be compiled in parts on two threads (optimizeAndEmit).
_PARTS_PROGRAM = textwrap.dedent("""
    import json, numpy, cpnumeric as np
    def exprs(m, x):
        # Eight different expressions (equal ones would be one called
        # function: cpn-outline-repeats) over eight lengths (loops over one
        # domain reading x would be one loop: cpn-fuse-horizontal), one
        # kernel of 1000+ instructions.
        v = [x[k:] for k in range(8)]
        w = [a[::-1] for a in v]
        return [m.exp(v[0] * 2) + m.log(v[0] + 1) * m.sin(w[0] - 3),
                m.cos(v[1] * 2) - m.sqrt(v[1] + 1) / m.tanh(w[1] + 3),
                m.arctan(v[2] * 2) + m.log1p(v[2]) * m.cosh(w[2] * 0.5),
                m.expm1(v[3] * 0.5) * m.sinh(v[3]) - m.log10(v[3] + 2),
                m.arcsinh(v[4]) * m.exp2(v[4]) + m.cbrt(w[4]),
                m.log2(v[5] + 3) / m.cos(v[5] * 0.3) + m.tan(v[5] * 0.2),
                m.arccos(v[6] / 3) * m.arcsin(w[6] / 3) - m.exp(-v[6]),
                m.hypot(v[7], w[7]) * m.tanh(v[7]) + m.sqrt(v[7] * 5)]
    x0 = numpy.linspace(0.1, 2.0, 200_000)
    outs = exprs(np, np.asarray(x0))
    r = [float(o.sum()) for o in outs]
    ref = [float(o.sum()) for o in exprs(numpy, x0)]
    s = np.stats()
    print(json.dumps({"r": r, "ref": ref, "compilations": s["compilations"],
                      "disk_hits": s["disk_hits"]}))
""")



def _run_parts_program(cache_dir, threads):
    env = dict(os.environ, CPN_CACHE_DIR=str(cache_dir), CPN_EAGER_THRESHOLD="0",
               CPN_THREADS=str(threads), PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", _PARTS_PROGRAM], env=env, check=True,
                         capture_output=True, text=True).stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_kernel_compiled_in_parts_runs_and_loads_from_disk(tmp_path, threads):
    first = _run_parts_program(tmp_path, threads)
    assert first["compilations"] >= 1
    numpy.testing.assert_allclose(first["r"], first["ref"], rtol=1e-12)
    heads = [p.read_bytes()[:12] for p in tmp_path.glob("*.o")]
    # One object per kernel on one thread; on more, a bundle of the parts.
    if threads == 1:
        assert heads and all(h.startswith(b"\x7fELF") for h in heads)
    else:
        assert any(h == b"CPN-OBJECTS " for h in heads)
    second = _run_parts_program(tmp_path, threads)
    assert second["compilations"] == 0 and second["disk_hits"] == first["compilations"]
    assert second["r"] == first["r"]


def test_malformed_object_bundle_is_recompiled(tmp_path):
    first = _run_parts_program(tmp_path, 2)
    for p in tmp_path.glob("*.o"):
        data = p.read_bytes()
        if data.startswith(b"CPN-OBJECTS "):
            p.write_bytes(data[:-100])  # a truncated entry
    again = _run_parts_program(tmp_path, 2)
    assert again["compilations"] >= 1
    assert again["r"] == first["r"]


_CHECKS_PROGRAM = textwrap.dedent("""
    import json, sys, warnings, numpy, cpnumeric as np
    a0 = numpy.linspace(1.0, 2.0, 4001)
    if sys.argv[1] == "bad":
        a0 = a0 - 1.5
        a0[2000] = 0.0
    a = np.asarray(a0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = float(((1.0 / a) + np.sqrt(a) * 2.0)[::7].sum())
    s = np.stats()
    print(json.dumps({"r": r, "warnings": sorted(str(x.message) for x in w),
                      "compilations": s["compilations"], "disk_hits": s["disk_hits"],
                      "check_compilations": s["check_compilations"]}))
""")


def _run_checks_program(cache_dir, data):
    env = dict(os.environ, CPN_CACHE_DIR=str(cache_dir), CPN_EAGER_THRESHOLD="0",
               PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", _CHECKS_PROGRAM, data], env=env,
                         check=True, capture_output=True, text=True).stdout
    import json
    return json.loads(out.strip().splitlines()[-1])


def _numpy_checks_warnings():
    a0 = numpy.linspace(1.0, 2.0, 4001) - 1.5
    a0[2000] = 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ((1.0 / a0) + numpy.sqrt(a0) * 2.0)[::7].sum()
    return sorted(str(x.message) for x in w)


def test_error_checks_compile_only_when_a_run_needs_them(tmp_path):
    # The exact classification of the errstate checks is compiled when a run
    # first sees a NaN or an infinity, also for a kernel from the disk cache.
    good = _run_checks_program(tmp_path, "good")
    assert good["compilations"] > 0 and good["check_compilations"] == 0
    assert good["warnings"] == []
    assert any(p.suffix == ".checks" for p in tmp_path.iterdir())
    bad = _run_checks_program(tmp_path, "bad")
    assert bad["compilations"] == 0 and bad["disk_hits"] == good["compilations"]
    assert bad["check_compilations"] == 1
    expected = _numpy_checks_warnings()
    assert expected and bad["warnings"] == expected
    # An entry whose checks file is gone is compiled again, checks included.
    for p in tmp_path.glob("*.checks"):
        p.unlink()
    again = _run_checks_program(tmp_path, "bad")
    assert again["compilations"] == good["compilations"] and again["disk_hits"] == 0
    assert again["warnings"] == expected
    assert numpy.isnan(again["r"]) and numpy.isnan(bad["r"])


def test_error_checks_compiled_once_per_kernel():
    cp.reset_stats()
    for shift in (0.0, 1.5, 1.5):
        a0 = numpy.linspace(1.0, 2.0, 3001) - shift
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = cp.asarray(a0)  # alive: the result is not written over it
            got = cp.asnumpy(cp.log(a) * 3.0 - 1.0)
        with warnings.catch_warnings(record=True) as ref:
            warnings.simplefilter("always")
            want = numpy.log(a0) * 3.0 - 1.0
        numpy.testing.assert_allclose(got, want)
        assert sorted(str(x.message) for x in w) == sorted(str(x.message) for x in ref)
    # One kernel; its checks compiled by the first run that had errors.
    assert cp.stats()["check_compilations"] == 1


def test_disk_cache_off(tmp_path):
    off = _run_disk_program("off")
    assert off["disk_writes"] == 0 and off["disk_hits"] == 0


def _lloyd(np, pts, c, iters):
    lab = None
    for _ in range(iters):
        d = ((pts[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
        lab = d.argmin(axis=1)
        onehot = (lab[:, None] == np.arange(c.shape[0])[None, :]).astype(pts.dtype)
        c = (onehot.T @ pts) / np.maximum(onehot.sum(axis=0), 1.0)[:, None]
    return c, lab


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_iterations_of_one_window_match_numpy(dtype):
    # Twelve iterations that write no array are one window; cpn-outline-repeats
    # compiles one iteration and calls it per iteration.
    g = numpy.random.default_rng(4)
    pts = (g.normal(size=(3000, 3)) + g.integers(0, 4, (3000, 1)) * 3.0).astype(dtype)
    c0 = pts[:5].copy()
    c, lab = _lloyd(cp, cp.asarray(pts), cp.asarray(c0), 12)
    rc, rlab = _lloyd(numpy, pts, c0, 12)
    numpy.testing.assert_array_equal(cp.asnumpy(lab), rlab)
    tol = 1e-4 if dtype == "float32" else 1e-10
    numpy.testing.assert_allclose(cp.asnumpy(c), rc, rtol=tol)


def _recurrence(np, xs, w, h, scale):
    for t in range(xs.shape[0]):
        # xs[t] moves with t (a view kept in the kernel and passed in); the
        # Python float changes with t (an input of its own per iteration).
        h = np.tanh(xs[t] @ w + h * (scale * (t + 1)))
        h = h - h.mean(axis=1, keepdims=True)
    return h


def test_iterations_with_moving_views_and_scalars_match_numpy():
    g = numpy.random.default_rng(7)
    xs, w = g.normal(size=(9, 40, 30)), g.normal(size=(30, 50)) / 6.0
    h0 = g.normal(size=(40, 50))
    got = _recurrence(cp, cp.asarray(xs), cp.asarray(w), cp.asarray(h0), 0.1)
    want = _recurrence(numpy, xs, w, h0, 0.1)
    numpy.testing.assert_allclose(cp.asnumpy(got), want, rtol=1e-10, atol=1e-12)


def test_error_in_a_called_iteration_is_reported():
    a0 = numpy.linspace(-1.0, 1.0, 2001)  # a0[1000] == 0
    for mode in ("warn", "raise"):
        a = cp.asarray(a0)
        with warnings.catch_warnings(record=True) as w, cp.errstate(divide=mode):
            warnings.simplefilter("always")
            try:
                x = a
                for _ in range(6):  # (a sum: iterations become calls)
                    x = cp.sin(x) + 1.0 / (a * 3.0) - cp.cos(x) * 0.5
                    x = x - x[:100].mean()
                got = cp.asnumpy(x)
            except FloatingPointError as e:
                assert mode == "raise" and "divide by zero" in str(e)
                continue
        assert mode == "warn"
        assert any("divide by zero" in str(m.message) for m in w)
        with numpy.errstate(divide="ignore"):
            x = a0
            for _ in range(6):
                x = numpy.sin(x) + 1.0 / (a0 * 3.0) - numpy.cos(x) * 0.5
                x = x - x[:100].mean()
        numpy.testing.assert_allclose(got, x, rtol=1e-12, atol=1e-12)


def test_dump_shows_one_function_per_iteration(tmp_path):
    prog = textwrap.dedent("""
        import numpy
        import cpnumeric as np
        g = numpy.random.default_rng(1)
        pts = np.asarray(g.normal(size=(2000, 3)))
        c = pts[:4].copy()
        for _ in range(8):
            d = ((pts[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
            lab = d.argmin(axis=1)
            onehot = (lab[:, None] == np.arange(4)[None, :]).astype(pts.dtype)
            c = (onehot.T @ pts) / np.maximum(onehot.sum(axis=0), 1.0)[:, None]
        print(float(c.sum()))
    """)
    env = dict(os.environ, CPN_DUMP_IR=str(tmp_path), CPN_CACHE_DIR="",
               PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, "-c", prog], env=env, check=True,
                   capture_output=True, text=True)
    texts = [f.read_text() for d in tmp_path.iterdir() if d.is_dir()
             for f in d.glob("*-cpn-outline-repeats.mlir")]
    assert texts
    # One window of eight iterations: one function, a call per iteration
    # but the one cut where fewer bytes cross between calls.
    assert any(t.count("call @kernel_repeat(") >= 7 and
               t.count("func.func private @kernel_repeat(") == 1 for t in texts)


CPN_OPT = os.path.join(ROOT, "build", "bin", "cpn-opt")


@pytest.mark.skipif(not os.path.exists(CPN_OPT),
                    reason="cpn-opt is built by `make` (build/bin), not by pip install")
@pytest.mark.parametrize("workload", ["kmeans", "cg", "black_scholes"])
def test_dump_repro_command_reproduces_the_final_ir(workload, tmp_path):
    """Every CPN_DUMP_IR kernel directory has repro.txt, the cpn-opt command
    of the whole pipeline on its 001-cpn.mlir; run, it prints exactly the
    IR the JIT ended with (the last NNN-<pass>.mlir), byte for byte."""
    prog = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.join(ROOT, "benchmarks", "workloads")!r})
        import cpnumeric, {workload} as w
        p = w.SIZES["small"]
        out = w.run(cpnumeric, *w.inputs(cpnumeric, **p), **p)
        print([float(cpnumeric.asnumpy(o).sum()) for o in out])
    """)
    env = dict(os.environ, CPN_DUMP_IR=str(tmp_path), CPN_CACHE_DIR="",
               PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, "-c", prog], env=env, check=True,
                   capture_output=True, text=True)
    dirs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert dirs
    for d in dirs:
        command = (d / "repro.txt").read_text().strip()
        assert command.startswith("cpn-opt --pass-pipeline='builtin.module(cpn-lower-to-llvm{")
        args = command.split("'")
        assert len(args) == 3 and args[2].strip() == str(d / "001-cpn.mlir")
        passes = sorted(p for p in d.iterdir() if re.fullmatch(r"\d{3}-.+\.mlir", p.name))
        final = passes[-1].read_text()
        got = subprocess.run([CPN_OPT, "--pass-pipeline=" + args[1], str(d / "001-cpn.mlir")],
                             check=True, capture_output=True, text=True).stdout
        assert got == final, f"{d.name}: cpn-opt's output differs from {passes[-1].name}"


def _swap_stencil(m, u, iters):
    v = u.copy()
    for _ in range(iters):
        c = u[1:-1, 1:-1]
        v[1:-1, 1:-1] = c + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                   + u[1:-1, 2:] - 4.0 * c)
        u, v = v, u
    return u


@pytest.mark.parametrize("iters", [1, 2, 5, 19])
def test_swapped_buffers_are_updated_in_place(tmp_path, iters):
    # Two buffers swapped each step: every update is written into the
    # buffer it updates (cpn-unshare-inits leaves an update read before it is
    # updated again alone), and in the loop's last window the buffer no
    # output keeps is updated in place too (planDonations' updated inputs).
    prog = textwrap.dedent(f"""
        import numpy, cpnumeric as np
        import test_compiler as t
        a = numpy.random.default_rng(3).random((130, 120))
        got = t._swap_stencil(np, np.asarray(a), {iters})
        want = t._swap_stencil(numpy, a.copy(), {iters})
        print(numpy.array_equal(numpy.asarray(got), want))
    """)
    env = dict(os.environ, CPN_DUMP_IR=str(tmp_path), CPN_CACHE_DIR="off",
               CPN_BASELINE_WORK="0", CPN_EAGER_THRESHOLD="0",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"),
                                           os.path.dirname(__file__)]))
    out = subprocess.run([sys.executable, "-c", prog], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.split() == ["True"]
    for k, d in enumerate(sorted(tmp_path.iterdir())):
        summary = (d / "summary.txt").read_text()
        # No kernel copies an interior; after the first window (v = u.copy())
        # none copies a whole 130 x 120 grid either.
        assert "copy 128x118" not in summary, summary
        assert k == 0 or "copy 130x120" not in summary, summary


@pytest.mark.parametrize("threshold", [None, 0])
def test_a_dead_input_updated_in_place_waits_for_its_readers(threshold):
    # The window that updates x in place (x dies in it) comes after a
    # window whose task still reads x's old value: the update is ordered
    # after that read.
    from cpnumeric import _core
    old = _core.EAGER["threshold"]
    if threshold is not None:
        _core.EAGER["threshold"] = threshold
    try:
        for n in (1, 7, 100_000):
            a = numpy.linspace(0.0, 1.0, n)
            x = cp.asarray(a) * 3.0
            cp._cpn.flush()
            s1 = x.sum()
            y = x[: n // 2 + 1] * 2.0
            cp._cpn.flush()
            x[1:] = x[:-1] * 2.0
            s2 = x.sum()
            del x
            w = a * 3.0
            want1, want_y = w.sum(), w[: n // 2 + 1] * 2.0
            w[1:] = w[:-1] * 2.0
            assert float(s1) == pytest.approx(want1, rel=1e-12)
            assert float(s2) == pytest.approx(w.sum(), rel=1e-12)
            numpy.testing.assert_array_equal(numpy.asarray(y), want_y)
    finally:
        _core.EAGER["threshold"] = old


def test_exit_waits_for_the_kernels_in_flight():
    # Windows still running when the interpreter exits crashed in libomp's
    # teardown (SIGSEGV or an OMP assertion, mostly with CPN_THREADS=1): at
    # exit cpnumeric waits for the kernels it submitted.
    prog = textwrap.dedent("""
        import numpy, cpnumeric as np
        n = 100_000
        a = np.asarray(numpy.random.rand(n))
        i = np.asarray(numpy.random.default_rng(0).integers(0, n, n))
        np.synchronize()
        for _ in range(400):
            r = a[i] * 2.0 + 1.0
    """)
    env = dict(os.environ, CPN_THREADS="1", CPN_EAGER_THRESHOLD="0",
               PYTHONPATH=os.path.join(ROOT, "python"))
    for _ in range(4):
        r = subprocess.run([sys.executable, "-c", prog], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]


def test_summary_names_scalar_libm_calls_in_loops(tmp_path):
    # summary.txt says which math functions a kernel still calls once per
    # element in a loop (issue 22): exp and arctan2 vectorize (libmvec),
    # fmod does not (no vector fmod).
    prog = textwrap.dedent("""
        import cpnumeric as np
        x = np.linspace(0.1, 1.0, 5000)
        print(float((np.exp(x) + np.sin(x)).sum()))
        print(float(np.arctan2(x, x + 1.0).sum()), float(np.fmod(x * 7.0, 0.3).sum()))
    """)
    env = dict(os.environ, CPN_DUMP_IR=str(tmp_path), CPN_CACHE_DIR="off",
               PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, "-c", prog], env=env, check=True,
                   capture_output=True, text=True)
    lines = {}
    for d in sorted(tmp_path.iterdir()):
        text = (d / "summary.txt").read_text()
        assert "scalar libm calls in loops: " in text, text
        lines[(d / "000-trace.txt").read_text()] = text.split("scalar libm calls in loops: ")[1]
    vector = [v for k, v in lines.items() if "fmod" not in k and ("exp" in k or "arctan2" in k)]
    assert vector and all(v.startswith("none") for v in vector), lines
    scalar = " ".join(v for k, v in lines.items() if "fmod" in k)
    assert re.search(r"fmod( x\d+)? in ", scalar), scalar


@pytest.mark.parametrize("make", ["copy", "astype", "times one", "view"])
@pytest.mark.parametrize("call", ["sort", "svd"])
def test_a_library_call_reads_an_input_before_its_update_in_place(make, call):
    # A library call reads its operand's buffer outside what bufferization
    # checks; an operand that folds to an input (a copy, a same-type cast,
    # x * 1.0) read the input after the window's update of it in place.
    from cpnumeric import _core
    old = _core.EAGER["threshold"]
    _core.EAGER["threshold"] = 0
    try:
        def program(m):
            a = m.asarray(numpy.random.default_rng(0).random((60, 60)))
            c = {"copy": lambda: a.copy(), "astype": lambda: a.astype(numpy.float64),
                 "times one": lambda: a * 1.0, "view": lambda: a[::-1]}[make]()
            a[0, 0] = 1e6  # a view (c = a[::-1]) sees it, as NumPy's does
            t = a.sum()
            del a
            r = m.sort(c, axis=None) if call == "sort" else m.linalg.svd(c, compute_uv=False)
            del c
            return numpy.asarray(r), float(t)
        got, want = program(cp), program(numpy)
        numpy.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        assert got[1] == pytest.approx(want[1], rel=1e-12)
    finally:
        _core.EAGER["threshold"] = old


def test_objects_for_each_target_and_unknown_target():
    # compileObject takes its code generator from cpn/Compiler/Target.h:
    # "openmp" and "cpu" both give an ELF object with the symbol; the cpu
    # target's has no OpenMP call; an unknown name is a ValueError that
    # names the targets.
    f = cp.jit(lambda x: cp.exp(x) * 2.0 + 1.0)
    captured = f.lower(cp.ones(1 << 20))._entry.captured
    omp = captured.object("k_omp", target="openmp")
    seq = captured.object("k_seq", target="cpu")
    for obj, sym in ((omp, b"k_omp"), (seq, b"k_seq")):
        assert obj[:4] == b"\x7fELF" and sym in obj
    assert b"__kmpc_fork_call" in omp and b"__kmpc_fork_call" not in seq
    with pytest.raises(ValueError, match="unknown target 'gpu'; the targets "
                                         "are openmp, cpu"):
        captured.object("k", target="gpu")
