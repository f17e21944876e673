"""Several MPI ranks behave as one program (python/cpnumeric/_ranks.py,
runtime/lib/Comm.cpp): output once, files written once, unseeded random
streams equal on every rank, and an error, a killed rank or a rank that
leaves early ends every rank within seconds, never a hang. Each test runs a
small program under `mpirun --oversubscribe -n 3`; the conformance of values
on 1-4 ranks is test/mpi/conformance.py (ctest's mpi-n1..mpi-n4)."""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import cpnumeric as cp

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="no mpirun (openmpi-bin) on this machine")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_ranks(code, n=3, timeout=120, script=None, **env):
    """(returncode, stdout, stderr, seconds) of `code` on n ranks (run from
    the file `script` when given: multiprocessing's spawn needs one)."""
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    for k, v in env.items():  # None: unset
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    start = time.monotonic()
    # A session of its own: on a timeout the launcher and every rank go.
    if script is not None:
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
    program = [str(script)] if script is not None else ["-c", textwrap.dedent(code)]
    p = subprocess.Popen([MPIRUN, "--oversubscribe", "-n", str(n), sys.executable, *program],
                         env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return p.returncode, out, err, time.monotonic() - start


def seconds_after_failure(err, ended):
    """Seconds from the moment a rank failed (it wrote `failing at <time>`
    to stderr) to the end of the run (`ended`, time.time())."""
    m = re.search(r"failing at ([0-9.]+)", err)
    assert m, err
    return ended - float(m.group(1))


def test_a_plain_run_is_one_rank_without_mpi():
    assert cp.rank() == 0 and cp.ranks() == 1
    assert not cp._cpn.mpi_active()


def test_ranks_and_output_once():
    code = """
        import sys, cpnumeric as np
        sys.stdout.write(f"rank {np.rank()} of {np.ranks()}\\n")
        sys.stdout.flush()
        x = np.arange(10.0)
        print(float((x * x).sum()))
    """
    rc, out, err, _ = run_ranks(code)
    assert rc == 0, err
    assert out.split("\n") == ["rank 0 of 3", "285.0", ""]
    rc, out, err, _ = run_ranks(code, CPN_PRINT_RANKS="all")
    assert rc == 0, err
    # mpirun interleaves the ranks' lines: count the phrases.
    assert [out.count(f"rank {r} of 3") for r in range(3)] == [1, 1, 1]


def test_each_rank_takes_its_share_of_the_cores():
    code = """
        import os, cpnumeric as np
        t = np.get_num_threads()
        # Three ranks on this node: together no more threads than cores (one
        # each at least), and the same count on every rank.
        assert np._cpn.mpi_local_size() == 3
        assert 1 <= t and 3 * t <= max(3, os.cpu_count()), t
        assert np._cpn.mpi_min_max(t) == (t, t)
    """
    rc, out, err, _ = run_ranks(code, CPN_THREADS=None)
    assert rc == 0, err


def test_unseeded_random_streams_agree_on_every_rank():
    code = """
        import zlib, cpnumeric as np
        a = np.asnumpy(np.random.default_rng().random(1000))
        b = np.asnumpy(np.random.rand(17))
        lo, hi = np._cpn.mpi_min_max(zlib.crc32(a.tobytes() + b.tobytes()))
        assert lo == hi, "ranks drew different numbers"
    """
    rc, out, err, _ = run_ranks(code, CPN_EAGER_THRESHOLD="0")
    assert rc == 0, err


def test_files_are_written_once_and_read_by_every_rank(tmp_path):
    code = f"""
        import numpy, cpnumeric as np
        x = np.arange(12.0).reshape(3, 4) * (np.rank() + 1) ** 0
        np.save({str(tmp_path / 'x.npy')!r}, x)
        np.savez({str(tmp_path / 'y.npz')!r}, a=x, b=x + 1)
        x.tofile({str(tmp_path / 'x.bin')!r})
        y = np.load({str(tmp_path / 'x.npy')!r})
        assert float(abs(y - x).max()) == 0.0
        with np.load({str(tmp_path / 'y.npz')!r}) as z:
            assert (z["b"] - 1 == numpy.asarray(x)).all()
        assert (numpy.fromfile({str(tmp_path / 'x.bin')!r}) == numpy.asarray(x).ravel()).all()
    """
    rc, out, err, _ = run_ranks(code)
    assert rc == 0, err


def test_an_error_on_one_rank_ends_every_rank_with_its_message():
    code = """
        import sys, time, cpnumeric as np
        if np.rank() == 1:
            sys.stderr.write(f"failing at {time.time()}\\n"); sys.stderr.flush()
            np.linalg.inv(np.zeros((3, 3)))
        np._cpn.mpi_barrier()  # the others wait for rank 1 here
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60)
    assert rc != 0 and seconds_after_failure(err, time.time()) < 10, (rc, took)
    assert "not reached" not in out
    assert "rank 1 of 3" in err and "Singular matrix" in err


def test_a_window_one_rank_cannot_compile_ends_every_rank():
    # Rank 2's part of every split window fails to compile (a test knob):
    # the others would wait for it in the window's collectives; it raises
    # instead, and its uncaught error ends every rank.
    code = """
        import cpnumeric as np
        x = np.arange(300000.0) * 2.0
        print(float(x.sum()))
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60, CPN_TEST_FAIL_LOCAL_COMPILE="2",
                                   CPN_PARTITION_THRESHOLD="1000")
    assert rc != 0 and took < 30, (rc, took, err[-2000:])
    assert "not reached" not in out
    assert "rank 2 of 3 could not compile its part" in err, err[-2000:]


def test_a_killed_rank_ends_every_rank():
    code = """
        import os, signal, sys, time, cpnumeric as np
        if np.rank() == 2:
            sys.stderr.write(f"failing at {time.time()}\\n"); sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        np._cpn.mpi_barrier()
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60)
    assert rc != 0 and seconds_after_failure(err, time.time()) < 10, (rc, took)
    assert "not reached" not in out


def test_a_rank_that_leaves_early_ends_every_rank_instead_of_a_hang():
    code = """
        import sys, time, cpnumeric as np
        if np.rank() == 1:
            sys.stderr.write(f"failing at {time.time()}\\n"); sys.stderr.flush()
            sys.exit(0)
        np._cpn.mpi_barrier()  # waits for rank 1 forever, unless ended
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60, CPN_EXIT_WAIT="2")
    assert rc != 0 and seconds_after_failure(err, time.time()) < 10, (rc, took)
    assert "CPN_EXIT_WAIT" in err


def test_ranks_that_end_together_exit_cleanly():
    code = """
        import time, cpnumeric as np
        x = np.ones(100000) * 3  # split over the ranks
        time.sleep(0.5 * np.rank())  # ranks arrive at the end at different times
        assert float(x.sum()) == 300000.0
    """
    rc, out, err, took = run_ranks(code, CPN_EXIT_WAIT="20")
    assert rc == 0, err


def test_a_failed_write_raises_on_every_rank_and_they_go_on_together(tmp_path):
    code = f"""
        import io, numpy, cpnumeric as np
        x = np.arange(6.0)
        try:
            np.save({str(tmp_path / 'missing' / 'x.npy')!r}, x)
        except OSError:
            pass
        else:
            raise AssertionError("saving into a missing directory must raise on every rank")
        b = io.BytesIO()  # each rank's own buffer: each rank writes it
        np.save(b, x)
        b.seek(0)
        assert (numpy.load(b) == numpy.arange(6.0)).all()
        np._cpn.mpi_barrier()  # every rank got here: no barrier is left unmatched
    """
    rc, out, err, _ = run_ranks(code)
    assert rc == 0, err


def test_a_child_process_of_a_rank_is_not_a_rank(tmp_path):
    code = """
        import multiprocessing as mp, cpnumeric as np

        def child(q):
            import cpnumeric as c
            q.put((c.rank(), c.ranks(), c._cpn.mpi_active(), float(c.arange(4.0).sum())))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            got = q.get(timeout=60)
            p.join(60)
            assert got == (0, 1, False, 6.0) and p.exitcode == 0, (got, p.exitcode)
    """
    rc, out, err, _ = run_ranks(code, n=2, script=tmp_path / "prog.py")
    assert rc == 0, err


def _jacobi(n, steps):
    u = cp.zeros((n, n))
    u[0, :] = 1.0
    cp.synchronize()
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return float(cp.abs(u).sum())


def test_simulated_ranks_count_halos_and_reductions():
    """CPN_SIMULATE_RANKS (set_simulate_ranks): each window run is also
    partitioned for P ranks and what they would move is counted per rank:
    a 5-point stencil's halo (two rows of n float64 each exchange, two
    exchanges each) per step, its sum an all-reduce; the values are those
    of a plain run; nothing is counted with the knob off."""
    from cpnumeric import _cpn
    n, steps = 300, 12
    ref = _jacobi(n, steps)
    cp.reset_stats()
    assert cp.stats()["simulated_runs"] == 0
    old = _cpn.set_simulate_ranks(4)
    old_threshold = _cpn.set_partition_threshold(65536)  # n * n is split
    try:
        cp.reset_stats()
        got = _jacobi(n, steps)
        s = cp.stats()
    finally:
        _cpn.set_simulate_ranks(old)
        _cpn.set_partition_threshold(old_threshold)
    assert got == ref
    assert s["simulated_ranks"] == 4 and s["simulated_runs"] >= 1
    halo = s["simulated_bytes_by_kind"]["update_halo"]
    exchanges = s["simulated_operations_by_kind"]["update_halo"]
    assert halo > 0 and halo % (2 * n * 8) == 0
    assert exchanges == 2 * halo // (2 * n * 8)
    assert halo // (2 * n * 8) <= steps
    assert s["simulated_operations_by_kind"]["all_reduce"] == 1
    assert "all_gather" not in s["simulated_bytes_by_kind"]
    assert s["simulated_bytes"] == sum(s["simulated_bytes_by_kind"].values())
    cp.reset_stats()
    _jacobi(n, steps)
    assert cp.stats()["simulated_bytes"] == 0


def test_profiles_of_ranks_merge_into_one_timeline(tmp_path):
    """CPN_PROFILE under 2 ranks writes one file per rank, each track named
    with its rank; merge_profiles puts them on one clock, one process track
    per rank."""
    prof = tmp_path / "prof.json"
    code, out, err, _ = run_ranks("""
        import cpnumeric as np
        a = np.arange(100000.0)
        print(float((a * 2.0).sum()))
    """, n=2, CPN_PROFILE=str(prof))
    assert code == 0, err
    paths = [tmp_path / f"prof.rank{r}.json" for r in range(2)]
    assert all(p.exists() for p in paths), os.listdir(tmp_path)
    merged = tmp_path / "merged.json"
    count = cp.merge_profiles(str(merged), [str(p) for p in paths])
    import json
    events = json.load(open(merged))["traceEvents"]
    assert len(events) == count > 4
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "cpnumeric rank 0 of 2", 1: "cpnumeric rank 1 of 2"}
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {e["pid"] for e in kernels} == {0, 1}
    # One clock: each file's events shifted by its epoch's distance to the
    # earliest one.
    files = [json.load(open(p)) for p in paths]
    zero = min(f["cpnEpochUs"] for f in files)
    for r, f in enumerate(files):
        assert f["cpnRank"] == r
        orig = sorted(e["ts"] for e in f["traceEvents"] if e.get("cat") == "kernel")
        got = sorted(e["ts"] for e in kernels if e["pid"] == r)
        assert got == pytest.approx([t + f["cpnEpochUs"] - zero for t in orig], abs=0.01)
    # The same rank twice (two launches): two tracks all the same.
    assert cp.merge_profiles(str(merged), [str(paths[0]), str(paths[0])]) == 2 * len(
        files[0]["traceEvents"])
    assert len({e["pid"] for e in json.load(open(merged))["traceEvents"]}) == 2
    with pytest.raises(ValueError):
        cp.merge_profiles(str(merged), [])


def test_summaries_of_rank_programs_name_their_messages(tmp_path):
    """CPN_DUMP_IR under 3 ranks: each rank's summary.txt of a stencil
    window says which rows of each input its program reads, the halo rows
    it receives from and sends to each neighbour and their bytes, and the
    interior's and border's programs say which they are; a sum over the
    rows is an all-reduce of its partial."""
    dump = tmp_path / "dump"
    dump.mkdir()
    code, out, err, _ = run_ranks("""
        import cpnumeric as np
        u = np.zeros((90, 40))
        u[0, :] = 1.0
        for _ in range(4):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        print(float(u.sum()))
    """, n=3, CPN_DUMP_IR=str(dump), CPN_CACHE_DIR="off", CPN_EAGER_THRESHOLD="0",
        CPN_PARTITION_THRESHOLD="1024", CPN_HALO_OVERLAP="1")
    assert code == 0, err
    texts = [p.read_text() for p in (dump / "rank1").glob("*/summary.txt")]
    assert texts, os.listdir(dump / "rank1")
    ranks = [t for t in texts if "ranks: the program of rank 1 of 3" in t]
    assert ranks, texts[0]
    # Rank 1 owns rows [30, 60) of u: one halo row from each neighbour
    # (40 float64, 320 B), one row to each.
    halo = [t for t in ranks if "halo rows received: 1 from rank 0, 1 from rank 2" in t]
    assert halo, ranks
    assert any("rows sent: 1 to rank 0, 1 to rank 2" in t for t in halo)
    assert any("640 B received, 640 B sent" in t for t in halo)
    assert any("the interior:" in t for t in halo), halo
    assert any("the border:" in t for t in halo), halo
    assert any("partial sum, combined over the ranks" in t for t in ranks), ranks
