"""Several MPI ranks behave as one program (python/cpnumeric/_ranks.py,
runtime/lib/Comm.cpp): output once, files written once, unseeded random
streams equal on every rank, and an error, a killed rank or a rank that
leaves early ends every rank within seconds, never a hang. Each test runs a
small program under `mpirun --oversubscribe -n 3`; the conformance of values
on 1-4 ranks is test/mpi/conformance.py (ctest's mpi-n1..mpi-n4)."""

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

import cpnumeric as cp

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="no mpirun (openmpi-bin) on this machine")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_ranks(code, n=3, timeout=120, **env):
    """(returncode, stdout, stderr, seconds) of `code` on n ranks."""
    e = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMPI_ALLOW_RUN_AS_ROOT="1",
             OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    for k, v in env.items():  # None: unset
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    start = time.monotonic()
    r = subprocess.run([MPIRUN, "--oversubscribe", "-n", str(n), sys.executable, "-c",
                        textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr, time.monotonic() - start


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
        cores = os.cpu_count()
        bound = len(os.sched_getaffinity(0))
        assert np.get_num_threads() == max(1, min(bound, cores // 3)), np.get_num_threads()
        assert np._cpn.mpi_local_size() == 3
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
        import cpnumeric as np
        if np.rank() == 1:
            np.linalg.inv(np.zeros((3, 3)))
        np._cpn.mpi_barrier()  # the others wait for rank 1 here
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60)
    assert rc != 0 and took < 10 + 5, (rc, took)
    assert "not reached" not in out
    assert "rank 1 of 3" in err and "Singular matrix" in err


def test_a_killed_rank_ends_every_rank():
    code = """
        import os, signal, cpnumeric as np
        if np.rank() == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        np._cpn.mpi_barrier()
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60)
    assert rc != 0 and took < 10 + 5, (rc, took)
    assert "not reached" not in out


def test_a_rank_that_leaves_early_ends_every_rank_instead_of_a_hang():
    code = """
        import sys, cpnumeric as np
        if np.rank() == 1:
            sys.exit(0)
        np._cpn.mpi_barrier()  # waits for rank 1 forever, unless ended
        print("not reached")
    """
    rc, out, err, took = run_ranks(code, timeout=60, CPN_EXIT_WAIT="2")
    assert rc != 0 and took < 10 + 5, (rc, took)
    assert "CPN_EXIT_WAIT" in err


def test_ranks_that_end_together_exit_cleanly():
    code = """
        import time, cpnumeric as np
        x = np.ones(100000) * (np.rank() + 1)
        time.sleep(0.5 * np.rank())  # ranks arrive at the end at different times
        assert float(x.sum()) == 100000.0 * (np.rank() + 1)
    """
    rc, out, err, took = run_ranks(code, CPN_EXIT_WAIT="20")
    assert rc == 0, err
