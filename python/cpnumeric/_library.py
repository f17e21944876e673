"""Recording `cpn.libcall` ops on runtime library functions (sorting,
searching: runtime/lib/Algorithms.cpp; gathering: Indexing.cpp), and the shared helpers of
the functions built on them."""

import numpy as _np

from . import _core, _manip
from ._core import ndarray, prod, record


def libcall(name, inputs, shape, dtype, args=(), key=None):
    """The result (of `shape` and `dtype`, C-contiguous) of runtime entry
    point `cpn_lib_<name>_<key>` on `inputs` (our arrays, read with any
    strides); key: the first input's dtype key unless given."""
    shape = tuple(shape)
    key = key or _core.dtype_key(inputs[0]._dtype)
    if key == "f2":  # float16: the float32 function on exactly widened values
        f32 = _np.dtype(_np.float32)
        inputs = [x.astype(f32) if x._dtype == _np.float16 else x for x in inputs]
        r = libcall(name, inputs, shape, f32 if _np.dtype(dtype) == _np.float16
                    else dtype, args, "f4")
        return r.astype(_np.float16) if _np.dtype(dtype) == _np.float16 else r
    node = record("libcall", [x._node() for x in inputs], shape, _np.dtype(dtype),
                  [int(a) for a in args], f"{name}_{key}")
    return ndarray._from_node(node, shape, _np.dtype(dtype))


def eager(arrays):
    """True when every array is a small eager one (NumPy computes at once)."""
    return all(isinstance(a, ndarray) and a._eager() is not None for a in arrays)


def wrap(result):
    """NumPy's result on eager inputs as our arrays (tuples kept)."""
    if isinstance(result, _np.ndarray):
        if _core.is_supported(result.dtype):
            # NumPy's fresh results (owning, writeable, C-contiguous: every
            # library result here is computed, never one of the inputs) are
            # kept as they are; a view is copied, as its base is NumPy's.
            if (result.base is None and result.flags.c_contiguous
                    and result.flags.writeable and type(result) is _np.ndarray):
                return ndarray._from_eager(result)
            return ndarray._from_eager(_np.array(result))
        return result
    if isinstance(result, tuple):
        items = [wrap(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [wrap(r) for r in result]
    return result


def rows(a, axis):
    """a as a (P, N) view (or copy) with `axis` last, and the function that
    turns a (P, N') result back into a's layout with N' along `axis`."""
    axis = _manip.normalize_axis_index(axis, a.ndim)
    last = axis == a.ndim - 1
    # Along the last axis of a 1-D or 2-D array (the usual call) no view is
    # made: each costs a few us of recording on every call.
    moved = a if last else _manip.moveaxis(a, axis, -1)
    lead = moved._shape[:-1]
    # _manip's functions, not the methods (their eager dispatch costs a few
    # us on a traced array).
    two = moved if len(lead) == 1 else _manip.reshape_to(
        moved, (prod(lead), moved._shape[-1]))

    def back(r):  # C-contiguous, as NumPy's results (a copy if axis moved)
        shape = lead + (r._shape[-1],)
        r = r if r._shape == shape else _manip.reshape_to(r, shape)
        return _core.fresh(r if last else _manip.moveaxis(r, -1, axis))
    return two, back
