"""What cpnumeric runs on: its BLAS/LAPACK library and the CPU (show_config)."""

import ctypes
import os
import sys
import warnings

import numpy as _np

from . import _cpn

# OpenBLAS core types whose kernels use AVX2 or AVX-512. On a CPU with AVX2,
# any other (Prescott, Nehalem, Sandybridge, ...) is a generic fallback that
# runs matrix products several times slower.
_VECTOR_CORES = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids",
                 "excavator", "neoversen1", "neoversen2", "neoversev1", "armv8sve"}


def cpu_features():
    """The x86 vector extensions of this CPU that matter to BLAS kernels."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return sorted(flags & {"avx", "avx2", "fma", "avx512f", "avx512bw",
                                           "avx512vl", "avx512_bf16", "amx_tile"})
    except OSError:
        pass
    return []


def _numpy_openblas_core():
    """The core type NumPy's own OpenBLAS chose, when NumPy bundles one."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        if "numpy" not in path:
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def blas_config():
    """A dict: the library the compiled kernels call, its build, the CPU
    kernels it chose (``core``), its threads, the CPU's vector extensions and
    the core NumPy's own OpenBLAS chose (``numpy_core``)."""
    c = _own_config()
    c["numpy_core"] = _numpy_openblas_core()
    return c


def _own_config():
    c = dict(_cpn.blas_config())
    c["cpu_features"] = cpu_features()
    c["generic"] = ("avx2" in c["cpu_features"]
                    and c["core"].strip().lower() not in _VECTOR_CORES)
    return c


_WARNED = []


def warn_if_generic():
    """A one-time RuntimeWarning when the BLAS runs generic kernels on a CPU
    with AVX2/AVX-512 (products would be several times slower than NumPy's)."""
    if _WARNED:
        return
    _WARNED.append(True)
    c = _own_config()
    if c["generic"]:
        warnings.warn(
            f"cpnumeric: {c['library']} runs generic '{c['core']}' kernels on a CPU with "
            f"{', '.join(c['cpu_features'])}; matrix products will be slow. Unset "
            "OPENBLAS_CORETYPE if it is set, or report the CPU.", RuntimeWarning, stacklevel=3)


def show_config(file=None):
    """Print the library versions and CPU kernels cpnumeric uses, as
    ``numpy.show_config()`` does for NumPy."""
    c = blas_config()
    out = file or sys.stdout
    print("cpnumeric configuration", file=out)
    print(f"  numpy: {_np.__version__}", file=out)
    print(f"  BLAS/LAPACK: {c['library']} ({c['config'].strip()})", file=out)
    print(f"    core: {c['core'].strip()}   threads: {c['threads']}", file=out)
    print(f"    NumPy's OpenBLAS core: {c['numpy_core'] or 'unknown'}", file=out)
    print(f"  CPU: {' '.join(c['cpu_features']) or 'no AVX'}   cores: {os.cpu_count()}",
          file=out)
    print("  sort: Highway vqsort (libhwy)", file=out)
    from . import _cpn, _ranks
    if _cpn.borrowing():
        print("  NumPy arrays in: held ones borrowed under userfaultfd write "
              "protection (docs/numpy-api.md)", file=out)
        if _cpn.numpy_allocator_stats()["installed"]:
            print("    NumPy's allocator for array data: cpnumeric's (arrays of "
                  "256 KiB or more on pages of their own)", file=out)
    else:
        why = ("CPN_BORROW=0" if os.environ.get("CPN_BORROW") == "0"
               else "userfaultfd not allowed here")
        print(f"  NumPy arrays in: held ones copied ({why})", file=out)
    if _cpn.mpi_active():
        version = _cpn.mpi_library_version().split(",")[0]
        print(f"  MPI: rank {_ranks.rank()} of {_ranks.ranks()} ({version}; thread level "
              f"{_cpn.mpi_thread_level()}); kernel threads {_cpn.kernel_threads()}", file=out)
    else:
        print("  MPI: not started (one process; run under mpirun for several ranks)", file=out)
    if c["generic"]:
        print("  WARNING: generic BLAS kernels on a CPU with AVX2", file=out)
