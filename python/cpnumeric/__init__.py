"""cpnumeric: NumPy programs, traced and compiled through MLIR.

``import cpnumeric as np`` gives the NumPy API with deferred execution: calls
record ops into a trace; a sync point (print, float(), np.asarray, ...)
compiles the pending trace into fused native kernels and runs them.
"""

import os as _os

import numpy as _np

# The OpenBLAS that compiled kernels call (scipy-openblas64, loaded with the
# runtime below; NumPy's own copy was initialized by the import above and is
# not affected): its idle threads spin 2^20 cycles (~0.3 ms) before they
# sleep, not ~0.1 s (2^28), which took the cores from the OpenMP loops
# between products. 2^4 (sleep at once) made every inner BLAS call of a
# LAPACK routine wake the pool: qr of 1000 x 1000 73 ms against NumPy's
# 46 ms, eigh of 256 x 256 47-50 ms after the program had slept 0.15 s;
# with 2^20 42 ms and 6 ms, and the LSTM, logistic regression and GEMM
# workloads the same. Set OPENBLAS_THREAD_TIMEOUT to override.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

# Under an MPI launcher, this rank's share of the cores (None otherwise); set
# before the runtime loads OpenBLAS (python/cpnumeric/_ranks.py).
from . import _ranks  # noqa: E402
_RANK_THREADS = _ranks.prepare_environment()
# MPI starts before any module draws entropy or prints.
from . import _config, _cpn  # noqa: E402
_ranks.start(_cpn, _config.get("CPN_PRINT_RANKS"))

from . import (_config, _core, _cpn, _creation, _extras, _fallback, _indexing, _jit, _library,
               _joining, _manip, _pad, _products, _reductions, _sorting, _sysinfo, _ufuncs)
from . import fft, linalg, random  # noqa: F401
from ._core import ndarray
from ._jit import Lowered, TracingError, jit  # noqa: F401
from ._profile import merge_profiles, profile  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._manip import (broadcast_to, diag, diagonal, dot, expand_dims, flip, fliplr,  # noqa: F401
                     flipud, inner, matmul, moveaxis, outer, ravel, reshape, squeeze,
                     swapaxes, transpose, vdot)
from ._reductions import (all, amax, amin, any, argmax, argmin, count_nonzero, max,  # noqa: F401,A004
                          mean, min, prod, std, sum, var)
from ._ufuncs import clip, where, ufunc  # noqa: F401
from ._products import cross, einsum, einsum_path, matvec, tensordot, vecdot, vecmat  # noqa: F401,E501
from ._sorting import *  # noqa: F401,F403
from ._indexing import *  # noqa: F401,F403
from ._extras import *  # noqa: F401,F403
from ._pad import *  # noqa: F401,F403
from ._joining import (allclose, append, atleast_1d, atleast_2d, atleast_3d,  # noqa: F401
                       broadcast_arrays, column_stack, concat, concatenate, diff, dstack,
                       permute_dims, tile, repeat, meshgrid, indices, kron, rot90,
                       tri, average, nan_to_num, around, deg2rad, rad2deg,
                       radians, degrees, sinc, array_equal, array_equiv,
                       array_split, split, hsplit, vsplit, dsplit, rollaxis,
                       matrix_transpose, ediff1d, trapezoid, polyval, vander, cov,
                       corrcoef, real, imag, nansum, nanprod, nanmean, nanmax, nanmin,
                       hstack, isclose, ptp, roll, stack, trace, tril, triu, vstack,
                       mgrid, ogrid, r_, c_)

rank, ranks = _ranks.rank, _ranks.ranks


_DUMP_IR = _ranks.per_rank_path(_config.get("CPN_DUMP_IR"))


def _baseline_work():
    if _DUMP_IR:
        return 0  # IR dumps show kernels: every window is compiled then
    if _ranks.several() and "CPN_BASELINE_WORK" not in _os.environ:
        # Every rank must compute the same values: whether a window ran in
        # the baseline tier (NumPy's loops) or compiled depends on timing.
        return 0
    return _config.get_int("CPN_BASELINE_WORK")


_cpn.configure(_DUMP_IR, _config.get_int("CPN_TRACE_LIMIT"),
               _config.get_int("CPN_OPT_LEVEL"),
               _config.get_int("CPN_THREADS") or _ranks.kernel_threads(_cpn, _RANK_THREADS) or 0,
               _config.cache_dir(), _config.get_int("CPN_CACHE_MAX_BYTES"),
               _baseline_work(), _config.get_int("CPN_BACKGROUND_COMPILE") != 0)

_cpn.set_pool_limit(_config.get_int("CPN_POOL_LIMIT"))
_cpn.set_simulate_ranks(_config.get_int("CPN_SIMULATE_RANKS"))
_cpn.set_partition_threshold(_config.get_int("CPN_PARTITION_THRESHOLD"))
_cpn.set_halo_overlap(_config.get_int("CPN_HALO_OVERLAP"))
_cpn.set_partition(_ranks.ranks() > 1 and _config.get_choice("CPN_PARTITION") == "rows",
                   _ranks.ranks(), _ranks.rank())
if _ranks.ranks() == 1:
    # NumPy's big arrays on pages of their own from here on, so that held
    # ones can be borrowed wherever glibc would have put them
    # (docs/numpy-api.md, "NumPy arrays in"); NumPy's huge-page advice kept.
    _madvise = getattr(_np._core.multiarray, "_get_madvise_hugepage", None)
    _cpn.use_numpy_allocator(bool(_madvise()) if _madvise else True)

def _at_exit():
    # The compiler thread's running compile finishes before LLVM's statics
    # go, and the kernels already submitted finish before the OpenMP runtime
    # and OpenBLAS do (a window still running at exit crashed in libomp's
    # teardown).
    _cpn.stop_compiles()
    _cpn.wait_all()


# atexit runs last what it registered first: MPI ends after the kernels.
__import__("atexit").register(_ranks.finish, _cpn, _config.get_int("CPN_EXIT_WAIT"))
__import__("atexit").register(_at_exit)

# The eager path under MPI ranks takes NumPy-held arrays and replicated
# computed stores, each the same on every rank; a split store is traced
# (items.cpp's computedView), so every rank records the same ops.
_core.EAGER["threshold"] = _config.get_int("CPN_EAGER_THRESHOLD")
_core.LOCATIONS = bool(_DUMP_IR)
from . import _baseline  # noqa: E402,F401  (sets the Engine's baseline tier)
from . import _profile  # noqa: E402
_profile._start_from_environment()
from . import _errstate  # noqa: E402
from ._errstate import errstate, geterr, geterrcall, seterr, seterrcall  # noqa: E402,F401
_errstate.sync_engine()

for _name in _ufuncs.NATIVE_UFUNCS:
    globals()[_name] = getattr(_ufuncs, _name)

# NumPy's scalar types, constants and type helpers are NumPy's own.
for _name in ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float32", "float64", "intp", "uintp", "int_", "uint",
              "float16", "complex64", "complex128", "double", "single", "longlong",
              "ulonglong", "byte", "ubyte", "short", "ushort", "intc", "uintc",
              "generic", "number", "integer", "signedinteger", "unsignedinteger",
              "floating", "complexfloating", "inexact", "dtype", "finfo", "iinfo",
              "pi", "e", "inf", "nan", "newaxis", "euler_gamma",
              "result_type", "can_cast", "promote_types", "issubdtype",
              "broadcast_shapes", "set_printoptions",
              "get_printoptions", "printoptions"]:
    globals()[_name] = getattr(_np, _name)
bool = _np.bool_  # noqa: A001
AxisError = _np.exceptions.AxisError


def asnumpy(a):
    """A NumPy copy of an array (a sync point)."""
    return a._numpy() if isinstance(a, ndarray) else _np.asarray(a)


def show_config(file=None):
    """Print the BLAS/LAPACK library, the CPU kernels it chose and the CPU's
    vector extensions (``cpnumeric._sysinfo.blas_config()`` gives them as a
    dict)."""
    _sysinfo.show_config(file)


def stats():
    """Compilations, cache hits, flushes, fallbacks and buffer use so far."""
    s = dict(_cpn.stats())
    s["fallbacks"] = _fallback.FALLBACK_CALLS["count"]
    s["eager_calls"] = _cpn.eager_count(False) + _eager.CALLS[0]
    s.update(_jit.JIT_STATS)
    return s


def reset_stats():
    _cpn.reset_stats()
    _fallback.FALLBACK_CALLS["count"] = 0
    _cpn.eager_count(True)
    _eager.CALLS[0] = 0
    for k in _jit.JIT_STATS:
        _jit.JIT_STATS[k] = 0


def flush():
    """Compile and start the pending work without waiting for it."""
    _cpn.flush()


def synchronize():
    """Wait until all submitted work has finished; reports the floating-point
    errors it found (np.errstate)."""
    if _cpn.sync_if_idle() and not _errstate._DEFERRED:
        return  # nothing recorded, in flight or to report (~0.1 us)
    _cpn.flush_and_wait()
    _errstate.report()


coverage = _fallback.coverage


def set_num_threads(n):
    """Sets the number of threads compiled kernels run on (0: all cores);
    CPN_THREADS sets it at import."""
    _cpn.flush()
    _cpn.wait_all()
    _cpn.set_kernel_threads(int(n))


def get_num_threads():
    """The number of threads compiled kernels run on."""
    return _cpn.kernel_threads()


round = _joining.round  # noqa: A001


_fallback.register_native(
    set(_ufuncs.NATIVE_UFUNCS) | {"clip", "where"} | set(_creation.NATIVE)
    | set(_manip.NATIVE) | set(_reductions.NATIVE) | set(_joining.NATIVE)
    | set(_products.NATIVE) | set(_sorting.NATIVE) | set(_indexing.NATIVE)
    | set(_extras.NATIVE) | set(_pad.NATIVE) | set(_errstate.NATIVE))
# `where(cond)` with one argument is data-dependent and falls back.

# Small arrays: NumPy's own function on their elements (python/cpnumeric/_eager.py).
from . import _eager  # noqa: E402
_eager.install(globals(), _np, sorted(_fallback._native))
_eager.install(vars(linalg), _np.linalg, linalg.NATIVE)
_eager.install(vars(fft), _np.fft, fft.NATIVE)
# Small float products of two eager arrays: OpenBLAS at once, in C (fast.cpp's
# eagerMatmul, as `a @ b` computes them), before NumPy's call.
_cpn.eager_binary(matmul, "matmul")  # noqa: F405
_cpn.eager_binary(dot, "matmul")  # noqa: F405
_cpn.eager_binary(_core._matmul, "matmul")


def __getattr__(name):
    """NumPy functions without a native version: NumPy on materialized inputs,
    with a one-time RuntimeWarning."""
    if name.startswith("__") or not hasattr(_np, name):
        raise AttributeError(f"module 'cpnumeric' has no attribute {name!r}")
    attr = getattr(_np, name)
    if callable(attr) and not isinstance(attr, type):
        f = _fallback.wrap(name)
        globals()[name] = f
        return f
    return attr


_sysinfo.warn_if_generic()
