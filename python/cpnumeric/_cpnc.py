"""cpnc: compile the functions of a .py file into a native extension module.

    cpnc prog.py --export 'f(float64[100,100], float64[100], int64)'

imports prog.py, traces each exported function with arrays of the declared
types (as @cpnumeric.jit does), compiles every trace into machine code and
links the code, a small C wrapper and libcpnrt_aot.a into
`prog.cpython-311-x86_64-linux-gnu.so`. That module needs only NumPy: it
checks its arguments against the compiled signatures, runs the kernel and
returns NumPy arrays. A function exported with several signatures dispatches
on its arguments' dtypes and shapes. See docs/cpnc.md.
"""

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import traceback

import numpy as _np

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_OPENMP = "/usr/lib/llvm-22/lib/libomp.so.5"
_STAGES = ("trace", "cpn", "linalg", "fused", "bufferized", "loops",
           "llvm-dialect", "llvm", "obj")
_STAGE_SUFFIX = {"trace": "txt", "llvm": "ll", "obj": "o"}
# The dtypes kernels support, with the C type numbers of NumPy's C API.
_DTYPES = {
    "bool": "NPY_BOOL", "int8": "NPY_INT8", "int16": "NPY_INT16",
    "int32": "NPY_INT32", "int64": "NPY_INT64", "uint8": "NPY_UINT8",
    "uint16": "NPY_UINT16", "uint32": "NPY_UINT32", "uint64": "NPY_UINT64",
    "float16": "NPY_FLOAT16", "float32": "NPY_FLOAT32", "float64": "NPY_FLOAT64",
    "complex64": "NPY_COMPLEX64", "complex128": "NPY_COMPLEX128",
}
_CTYPES = {
    "bool": "npy_bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
    "uint32": "uint32_t", "uint64": "uint64_t", "float32": "float",
    "float64": "double",
}
_ALIASES = {"int": "int64", "float": "float64", "bool_": "bool",
            "double": "float64", "float_": "float64", "uint": "uint64"}


class CpncError(Exception):
    """An error to print as `where: message` before exiting with status 1."""


# -- signatures ----------------------------------------------------------------

class ArgType:
    """One declared argument: a dtype and a shape (() for a scalar). A
    dimension is a size, or a name: dimensions of one name have one size at
    run time; ':' is a name of its own ("_K")."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def __str__(self):
        if not self.shape:
            return self.dtype
        dims = [":" if isinstance(d, str) and d.startswith("_") else str(d)
                for d in self.shape]
        return f"{self.dtype}[{','.join(dims)}]"


class Export:
    """`name(types...)`, where it was declared (for messages)."""

    def __init__(self, name, types, where, broadcast=()):
        self.name, self.types, self.where = name, types, where
        # Names of ':' dimensions unified because the program broadcasts
        # them against each other (unify_broadcast): at run time their sizes
        # are equal or 1, and a size-1 argument is broadcast.
        self.broadcast = frozenset(broadcast)

    def __str__(self):
        return f"{self.name}({', '.join(map(str, self.types))})"


_SIG = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_TYPE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\[(.*)\])?\s*$")


def _split_top(text):
    """Splits at commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def parse_export(text, where):
    m = _SIG.match(text)
    if not m:
        raise CpncError(f"{where}: cannot parse export '{text}'; write it as "
                        "name(float64[100,100], float64[100], int64)")
    name, body = m.groups()
    types = []
    for part in _split_top(body):
        t = _TYPE.match(part)
        if not t:
            raise CpncError(f"{where}: cannot parse the type '{part.strip()}' "
                            f"in '{text}'")
        dt, dims = t.groups()
        dt = _ALIASES.get(dt, dt)
        if dt not in _DTYPES:
            raise CpncError(
                f"{where}: '{dt}' in '{text}' is not a dtype cpnc compiles; "
                f"use one of {', '.join(_DTYPES)}")
        shape = ()
        if dims is not None:
            shape = []
            for d in (dims.split(",") if dims.strip() else [":"]):
                d = d.strip() or ":"
                fresh = sum(isinstance(x, str) and x.startswith("_")
                            for x in [*shape, *(y for t in types for y in t.shape)])
                if d == ":":  # a size of its own
                    d = f"_{fresh}"
                elif not (d.isdigit() or (d.isidentifier() and d[0] != "_")):
                    raise CpncError(f"{where}: dimension '{d}' of "
                                    f"'{part.strip()}' is not a size, ':' or "
                                    "a name")
                shape.append(int(d) if d.isdigit() else d)
            shape = tuple(shape)
        types.append(ArgType(dt, shape))
    return Export(name, types, where)


def comment_exports(path, source):
    """Pythran-style `# cpnc export f(...)` lines of the file."""
    out = []
    for i, line in enumerate(source.splitlines(), 1):
        m = re.match(r"^\s*#\s*cpnc\s+export\s+(.+?)\s*$", line)
        if m:
            out.append(parse_export(m.group(1), f"{path}:{i}"))
    return out


# -- tracing ---------------------------------------------------------------------

def _user_error(path, exc):
    """`path:LINE: Type: message` for an exception raised by the user's file."""
    msg = str(exc)
    if re.match(r"^\S+:\d+: ", msg):  # TracingError names its line
        return msg
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno
    where = f"{path}:{line}" if line else path
    return f"{where}: {type(exc).__name__}: {msg}"


def load_module(path):
    import cpnumeric  # noqa: F401  (the file imports it too)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"_cpnc_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise CpncError(_user_error(path, e)) from None
    finally:
        sys.path.pop(0)
    return module


class Traced:
    """An export traced: the jit entry (how trace inputs, outputs and the
    returned structure relate to the arguments) and its captured trace."""

    def __init__(self, export, entry, symbol, sizes):
        self.export, self.entry, self.symbol = export, entry, symbol
        # {dimension name: representative size} of a shape-generic kernel.
        self.sizes = sizes
        self.names = list(sizes)


def _sizes_named(export, points=2):
    """The dimension names of `export` and `points` sets of representative
    sizes for its traces ([{name: size}, ...]; distinct primes, in general
    position for the affine fit of _fit_model)."""
    names = list(dict.fromkeys(d for t in export.types for d in t.shape
                               if isinstance(d, str)))
    static = {d for t in export.types for d in t.shape if isinstance(d, int)}
    primes = [p for p in _PRIMES if p not in static]
    k = len(names)
    if k * points > len(primes):
        raise CpncError(f"{export.where}: {export}: too many dimensions of "
                        "any size to trace it")
    return names, [dict(zip(names, primes[t * k:(t + 1) * k]))
                   for t in range(points)]


def unify_broadcast(export, message):
    """`export` with the ':' dimensions named in NumPy's broadcast error
    `message` (by their representative sizes: "shapes (101,) (103,)") made
    one name: the program broadcasts them against each other (axpby's
    `a * x + b * y`). None when the message names no two ':' dimensions."""
    names, (first, _) = _sizes_named(export)
    by_size = {v: n for n, v in first.items() if n.startswith("_")}
    at = message.find("shapes")
    shapes = [[int(x) for x in re.findall(r"\d+", t)]
              for t in re.findall(r"\(([^)]*)\)", message[at:])] if at >= 0 else []
    # The sizes that meet at one position from the right and differ.
    merged = []
    for k in range(1, max(map(len, shapes), default=0) + 1):
        here = {sh[-k] for sh in shapes if len(sh) >= k} - {1}
        if len(here) > 1 and all(v in by_size for v in here):
            merged = [by_size[v] for v in sorted(here)]
            break
    if len(merged) < 2:
        return None
    keep = merged[0]
    renamed = [ArgType(t.dtype, tuple(keep if d in merged else d for d in t.shape))
               for t in export.types]
    return Export(export.name, renamed, export.where,
                  (export.broadcast - set(merged)) | {keep})


def trace_export(module, path, export):
    """(the traced entry, representative sizes, the export as compiled:
    `export`, or with the ':' dimensions that the program broadcasts
    against each other made one size each)."""
    while True:
        try:
            entry, sizes = _trace_export(module, path, export)
            return entry, sizes, export
        except CpncError as e:
            unified = (unify_broadcast(export, str(e))
                       if "could not be broadcast" in str(e) else None)
            if unified is None:
                raise
            export = unified


def _trace_export(module, path, export):
    from . import _jit
    fun = getattr(module, export.name, None)
    if fun is None or not callable(fun):
        raise CpncError(f"{export.where}: {os.path.basename(path)} has no "
                        f"function '{export.name}'")
    if isinstance(fun, _jit.JitFunction):
        if fun._static:
            raise CpncError(
                f"{export.where}: '{export.name}' has static arguments "
                f"({', '.join(sorted(fun._static))}); a compiled module takes "
                "arrays and scalars only")
        jitted = fun
    else:
        jitted = _jit.JitFunction(fun)
    params = [p for p in jitted._sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in params)
    if not required <= len(export.types) <= len(params):
        raise CpncError(f"{export.where}: {export} declares "
                        f"{len(export.types)} arguments; '{export.name}' takes "
                        f"{required} to {len(params)}")
    names = _sizes_named(export)[0]
    if not names:
        return _trace(jitted, path, export, {}), {}
    # Shape-generic: traced at len(names) + 2 sets of representative sizes;
    # every size and slice start of the traces must be one affine function
    # of the sizes (fitted on all but one set, checked on that one).
    _, points = _sizes_named(export, len(names) + 2)
    entries = [_trace(jitted, path, export, p) for p in points]
    entry, first = entries[0], points[0]
    entry.captured.shape_symbols = {first[n]: i for i, n in enumerate(names)}
    _fit_model(export, names, points, entries)
    try:  # what the import cannot express (a reversed slice): file:line
        entry.captured.as_text("cpn")
    except ValueError as e:
        raise CpncError(f"{e} ({export})") from None
    entry.size_consts = _size_constants(export, entry, entries[1], first,
                                        points[1])
    return entry, first


def _fit(values, points):
    """(c, [k_s]) with values[t] = c + sum_s k_s * points[t][s] for every t,
    all integers, or None. Solved exactly on the first len(points[0]) + 1
    points (in general position), checked on the others."""
    from fractions import Fraction
    if all(v == values[0] for v in values):
        return values[0], [0] * len(points[0])
    n = len(points[0]) + 1
    rows = [[Fraction(1)] + [Fraction(x) for x in p] + [Fraction(v)]
            for p, v in zip(points[:n], values[:n])]
    for col in range(n):  # Gauss-Jordan elimination
        pivot = next((r for r in range(col, n) if rows[r][col]), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col]:
                f = rows[r][col] / rows[col][col]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[col])]
    sol = [rows[i][n] / rows[i][i] for i in range(n)]
    if any(x.denominator != 1 for x in sol):
        return None
    c, ks = int(sol[0]), [int(x) for x in sol[1:]]
    if any(c + sum(k * x for k, x in zip(ks, p)) != v
           for p, v in zip(points, values)):
        return None
    return c, ks


def _fit_model(export, names, points, entries):
    """Fits the traces of `entries` (at the sizes `points`) into one
    shape-generic model: each op's dimensions and each slice's box starts
    as affine functions of the sizes (given to the first entry's captured
    trace, cpn::ShapeSymbols), the results' dimensions (entry.result_dims)
    and the conditions the sizes must meet at a call for the model to be
    NumPy's slicing (entry.size_guards: (expr, [exprs]): expr >= 0 where
    every expr of the list is >= 1). Raises CpncError where the traces
    differ in another way."""
    entry = entries[0]
    P = [[p[n] for n in names] for p in points]
    k = len(names)

    def refuse(where, what):
        raise CpncError(
            f"{where}: {export}: the program uses the size of a dimension of "
            f"any size (':' or a name) in a way a shape-generic kernel cannot "
            f"express ({what}); declare the size")

    def skeleton(e):
        return (re.sub(r"\d+", "#", e.captured.as_text("trace")),
                [o[0] for o in e.outputs], [kd for kd, _ in e.inputs],
                repr(e.out_skeleton), list(e.mutations))
    if any(skeleton(e) != skeleton(entry) for e in entries[1:]):
        refuse(export.where, "the operations traced differ with the sizes")
    fields = [e.captured.op_fields() for e in entries]
    unit = [[int(s == t) for t in range(k)] for s in range(k)]
    # Every dimension of each input (argument or constant) and op: (c, ks).
    input_dims = []
    for kind, v in entry.inputs:
        if kind == "arg":
            input_dims.append([(0, unit[names.index(d)]) if isinstance(d, str)
                               else (d, [0] * k)
                               for d in export.types[v].shape])
        else:
            input_dims.append([(d, [0] * k) for d in v.shape])
    op_dims, shapes, boxes, guards = [], {}, {}, []

    def dims_of(ref):
        return op_dims[ref] if ref >= 0 else input_dims[-ref - 1]

    def dynamic(dims):
        return any(any(ks) for _, ks in dims)

    for i, per in enumerate(zip(*fields)):
        name, operands, shape, iattrs, _, _, file, line = per[0]
        where = f"{os.path.basename(file)}:{line}" if line else export.where
        dims = [_fit([f[2][d] for f in per], P) for d in range(len(shape))]
        if None in dims:
            refuse(where, "a size that is not the size plus a constant, as "
                   "that of a slice with a step (x[::2]) or a reshape")
        op_dims.append(dims)
        if dynamic(dims):
            shapes[i] = dims
            guards += [(e, []) for e in dims if any(e[1])]
        generic = dynamic(dims) or any(dynamic(dims_of(r)) for r in operands)
        if name not in ("view", "update") or not generic:
            if any(f[3] != iattrs for f in per):
                refuse(where, "an operation whose attributes depend on it")
            continue
        found = [f[5] for f in per]
        if None in found or any(b[1:] != found[0][1:] for b in found):
            continue  # no box at some size: the import refuses or remaps
        _, owner, coeffs = found[0]
        starts = [_fit([b[0][j] for b in found], P)
                  for j in range(len(found[0][0]))]
        if None in starts:
            refuse(where, "a slice whose start is not a constant or the "
                   "size plus a constant")
        boxes[i] = (owner, coeffs, starts)
        # In bounds: each base index the box walks lies in its dimension.
        view = dims if name == "view" else dims_of(operands[1])
        base = dims_of(operands[0])
        for j, (c0, ks0) in enumerate(starts):
            hi_c, hi_k = c0, list(ks0)
            for (nc, nk), o, q in zip(view, owner, coeffs):
                if o == j:  # + q * (n - 1)
                    hi_c += q * (nc - 1)
                    hi_k = [a + q * b for a, b in zip(hi_k, nk)]
            bc, bk = base[j]
            guards.append(((c0, ks0), view))
            guards.append(((bc - 1 - hi_c, [a - b for a, b in zip(bk, hi_k)]),
                           view))
    entry.captured.set_shape_model(shapes, boxes)
    results = [[_fit([e.captured.results[r].shape[d] for e in entries], P)
                for d in range(len(entry.captured.results[r].shape))]
               for r in range(len(entry.captured.results))]
    if any(None in dims for dims in results):
        refuse(export.where, "a result whose size is not the size plus a "
               "constant")
    entry.result_dims = results
    # Only conditions that involve the sizes (the others held when traced).
    entry.size_guards = [(e, [v for v in when if any(v[1])])
                         for e, when in guards if any(e[1])]


def _size_constants(export, entry, other, first, second):
    """{input index: (name, op, c)} for the constants the program computed
    from a dynamic size (A.shape[0], the count of a mean): their value at a
    call is size + c ("add") or c / size ("div"). Other constants must not
    depend on the sizes."""
    from . import _cpn
    found = {}
    for j, ((ka, va), (kb, vb)) in enumerate(zip(entry.inputs, other.inputs)):
        if ka != "const":
            continue
        a = _cpn.to_numpy(va).reshape(va.shape)
        b = _cpn.to_numpy(vb).reshape(vb.shape)
        if a.shape == b.shape and _np.array_equal(a, b):
            continue
        if a.shape == b.shape == () and a.dtype.kind in "iuf":
            for n in first:
                x, y = a.item(), b.item()
                if x - first[n] == y - second[n]:
                    found[j] = (n, "add", x - first[n])
                    break
                if a.dtype.kind == "f" and abs(x * first[n] - y * second[n]) <= \
                        1e-12 * abs(x * first[n]):
                    found[j] = (n, "div", x * first[n])
                    break
            if j in found:
                continue
        raise CpncError(
            f"{export.where}: {export}: a constant of the program depends on "
            "dimensions of any size in a way a shape-generic kernel cannot "
            "follow (only size + c and c / size are); declare the sizes")
    return found


# Representative sizes of dynamic dimensions while tracing (distinct primes).
_PRIMES = [p for p in range(101, 400) if all(p % q for q in range(2, 20))]


def _trace(jitted, path, export, sizes):
    from . import _core
    shapes = [tuple(sizes.get(d, d) for d in t.shape) for t in export.types]
    if any(_np.prod(s, dtype=_np.int64) > 50_000_000 for s in shapes):
        raise CpncError(f"{export.where}: {export}: too many dimensions of "
                        "any size in one argument to trace it")
    args = [_np.ones(s, dtype=t.dtype) for s, t in zip(shapes, export.types)]
    locations = _core.LOCATIONS
    _core.LOCATIONS = True  # source lines in IR dumps' summary.txt
    try:
        return jitted.lower(*args)._entry
    except Exception as e:
        raise CpncError(_user_error(path, e)) from None
    finally:
        _core.LOCATIONS = locations


# -- the C wrapper ---------------------------------------------------------------

def _c_bytes(data):
    """A C initializer of the bytes `data` (at least one element)."""
    data = data or b"\0"
    rows = [", ".join(str(b) for b in data[i:i + 32])
            for i in range(0, len(data), 32)]
    return "{\n  " + ",\n  ".join(rows) + "\n}"


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n") + '"'


def _typenum(dtype):
    name = str(_np.dtype(dtype))
    if name not in _DTYPES:
        raise CpncError(f"dtype {name} has no compiled kernels")
    return _DTYPES[name]


class _Writer:
    def __init__(self):
        self.lines = []
        self.consts = 0

    def __call__(self, text=""):
        self.lines.append(text)

    def const_array(self, array):
        """A static copy of `array`; returns (symbol, ndim, shape symbol)."""
        a = _np.ascontiguousarray(array)
        k = self.consts
        self.consts += 1
        self(f"static unsigned char const_{k}[] __attribute__((aligned(64))) = "
             f"{_c_bytes(a.tobytes())};")
        dims = ", ".join(map(str, a.shape)) or "0"
        self(f"static npy_intp const_{k}_shape[] = {{{dims}}};")
        return f"const_{k}", a.ndim, f"const_{k}_shape", _typenum(a.dtype)


def _returned(w, traced, skeleton):
    """A C expression (a new reference, or NULL with an error set) building
    the function's result from the arrays `outs` and the arguments."""
    from ._jit import _Leaf
    from ._core import ndarray
    if isinstance(skeleton, _Leaf):
        kind, v = traced.entry.outputs[skeleton.index]
        if kind == "result":
            return f"cpnc_return_array(out[{v}])"
        if kind == "arg":
            return f"Py_NewRef(argv[{v}])"
        data = v._numpy() if isinstance(v, ndarray) else _np.asarray(v)
        sym, nd, shape, tn = w.const_array(data)
        return f"cpnc_const_array({sym}, {nd}, {shape}, {tn})"
    if isinstance(skeleton, (tuple, list)):
        if not skeleton:
            return "PyTuple_New(0)" if isinstance(skeleton, tuple) else "PyList_New(0)"
        items = [_returned(w, traced, s) for s in skeleton]
        fmt = "N" * len(items)
        fmt = f"({fmt})" if isinstance(skeleton, tuple) else f"[{fmt}]"
        return f'Py_BuildValue("{fmt}", {", ".join(items)})'
    if skeleton is None:
        return "Py_NewRef(Py_None)"
    if isinstance(skeleton, bool):
        return f"Py_NewRef(Py_{skeleton})"
    if isinstance(skeleton, int):
        return f"PyLong_FromString({_c_string(str(skeleton))}, NULL, 10)"
    if isinstance(skeleton, float):
        return f"PyFloat_FromDouble({skeleton!r})"
    if isinstance(skeleton, str):
        return f"PyUnicode_FromString({_c_string(skeleton)})"
    raise CpncError(f"{traced.export.where}: {traced.export.name} returns a "
                    f"{type(skeleton).__name__}, which a compiled module cannot "
                    "return; return arrays, scalars, tuples, lists, str or None")


_PRELUDE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
%(omp)s
/* The error a library call of the last kernel left on this thread
   (libcpnrt_aot) and its kind (cpnrt::ErrorKind), raised as the kind's class:
   numpy.linalg.LinAlgError, IndexError, MemoryError, else RuntimeError; 0
   when there was none. */
const char *cpn_lib_take_error(int *kind);
static int cpnc_raise_kernel_error(void) {
  int kind = %(kind_runtime)d;
  const char *e = cpn_lib_take_error(&kind);
  if (!e[0])
    return 0;
  if (kind == %(kind_linalg)d) {
    PyObject *mod = PyImport_ImportModule("numpy.linalg");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "LinAlgError") : NULL;
    Py_XDECREF(mod);
    if (cls) {
      PyErr_SetString(cls, e);
      Py_DECREF(cls);
    }
    return -1;
  }
  PyErr_SetString(kind == %(kind_index)d    ? PyExc_IndexError
                  : kind == %(kind_memory)d ? PyExc_MemoryError
                                            : PyExc_RuntimeError,
                  e);
  return -1;
}
/* A new reference to `o` as a C-contiguous, aligned array of exactly this
   dtype and shape, or NULL (no error set) when `o` does not match. Dimension
   i with symof[i] >= 0 has any size, the same for every dimension of that
   name (sym[name], -1 until set). */
static PyArrayObject *cpnc_match_array(PyObject *o, int typenum, int ndim,
                                       const npy_intp *shape, const int *symof,
                                       npy_intp *sym, const char *bcast,
                                       int *mismatch) {
  PyArrayObject *a;
  if (PyArray_Check(o)) {
    a = (PyArrayObject *)o;
    Py_INCREF(a);
  } else {
    a = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (!a) {
      PyErr_Clear();
      return NULL;
    }
  }
  int ok = PyArray_EquivTypenums(PyArray_TYPE(a), typenum) &&
           PyArray_NDIM(a) == ndim;
  for (int i = 0; ok && i < ndim; ++i) {
    npy_intp d = PyArray_DIM(a, i);
    int s = symof[i];
    if (s < 0)
      ok = d == shape[i];
    else if (sym[s] < 0)
      sym[s] = d; /* the first array with this dimension name sets it */
    else if (sym[s] == d)
      ;
    else {
      ok = 0;
      if (bcast[s])
        *mismatch = 1; /* sizes the program broadcasts differ */
    }
  }
  if (!ok) {
    Py_DECREF(a);
    return NULL;
  }
  PyArrayObject *c = (PyArrayObject *)PyArray_FromArray(
      a, PyArray_DescrFromType(typenum), NPY_ARRAY_CARRAY_RO);
  Py_DECREF(a);
  if (!c)
    PyErr_Clear();
  return c;
}

/* A scalar argument: a Python or NumPy scalar (or 0-d array) that casts to
   `typenum` safely, or a Python number of the same kind (5 for int8). */
static PyArrayObject *cpnc_match_scalar(PyObject *o, int typenum) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
  if (!a) {
    PyErr_Clear();
    return NULL;
  }
  PyArray_Descr *to = PyArray_DescrFromType(typenum);
  int python = PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o);
  int ok = PyArray_NDIM(a) == 0 &&
           (PyArray_CanCastTypeTo(PyArray_DESCR(a), to, NPY_SAFE_CASTING) ||
            (python && PyArray_CanCastTypeTo(PyArray_DESCR(a), to,
                                             NPY_SAME_KIND_CASTING)));
  if (!ok) {
    Py_DECREF(to);
    Py_DECREF(a);
    return NULL;
  }
  PyArrayObject *c = (PyArrayObject *)PyArray_FromArray(
      a, to, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
  Py_DECREF(a);
  if (c && python && typenum != NPY_BOOL) { /* 300 for int8: an error */
    PyObject *back = PyArray_GETITEM(c, PyArray_DATA(c));
    int same = back ? PyObject_RichCompareBool(back, o, Py_EQ) : -1;
    Py_XDECREF(back);
    if (same != 1 && !PyFloat_Check(o)) {
      Py_DECREF(c);
      c = NULL;
    }
  }
  if (!c)
    PyErr_Clear();
  return c;
}

/* A result: 0-d arrays become NumPy scalars, as NumPy returns them. */
static PyObject *cpnc_return_array(PyArrayObject *a) {
  Py_INCREF(a);
  return PyArray_Return(a);
}

static PyObject *cpnc_const_array(const void *data, int nd, npy_intp *shape,
                                  int typenum) {
  PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(nd, shape, typenum);
  if (a)
    memcpy(PyArray_DATA(a), data, PyArray_NBYTES(a));
  return a ? PyArray_Return(a) : NULL;
}

/* "float64[3,4], int" for the error of a call no signature matches. */
static PyObject *cpnc_describe(PyObject *const *argv, Py_ssize_t n) {
  PyObject *parts = PyList_New(0);
  for (Py_ssize_t i = 0; parts && i < n; ++i) {
    PyObject *s;
    if (PyArray_Check(argv[i])) {
      PyArrayObject *a = (PyArrayObject *)argv[i];
      PyObject *dt = PyObject_Str((PyObject *)PyArray_DESCR(a));
      s = dt ? PyUnicode_FromFormat("%%U[", dt) : NULL;
      Py_XDECREF(dt);
      for (int d = 0; s && d < PyArray_NDIM(a); ++d) {
        PyObject *t = PyUnicode_FromFormat(d ? "%%U,%%zd" : "%%U%%zd", s,
                                           (Py_ssize_t)PyArray_DIM(a, d));
        Py_DECREF(s);
        s = t;
      }
      if (s) {
        PyObject *t = PyUnicode_FromFormat("%%U]", s);
        Py_DECREF(s);
        s = t;
      }
    } else {
      s = PyUnicode_FromString(Py_TYPE(argv[i])->tp_name);
    }
    if (!s || PyList_Append(parts, s) < 0) {
      Py_XDECREF(s);
      Py_DECREF(parts);
      return NULL;
    }
    Py_DECREF(s);
  }
  if (!parts)
    return NULL;
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *text = sep ? PyUnicode_Join(sep, parts) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(parts);
  return text;
}
"""


def _c_size(e):
    """A fitted size (c, [k_s]) as a C expression of the sizes sym[s]."""
    c, ks = e
    terms = [f"{k} * sym[{s}]" for s, k in enumerate(ks) if k]
    return "(" + " + ".join([str(c)] + terms) + ")" if terms else str(c)


def _variant(w, traced):
    """The matcher and runner of one compiled signature. Static kernels take
    one pointer per array; shape-generic ones (dimension names) a memref
    descriptor per array: pointer, pointer, offset, sizes, strides."""
    exp, entry = traced.export, traced.entry
    captured = entry.captured
    nargs = len(exp.types)
    sym = traced.symbol
    index = {n: i for i, n in enumerate(traced.names)}
    w(f"void {sym}(void **slots);")
    w()
    # The matcher: in[i] gets argument i as a contiguous array of its type;
    # sym[s] the size of dimension name s.
    # Returns 1 (matched) or 0; sets *mismatch when arrays of this signature
    # have sizes that the program broadcasts against each other but that
    # differ (NumPy's ValueError if no other signature matches).
    w(f"static int match_{sym}(PyObject *const *argv, Py_ssize_t n, "
      "PyArrayObject **in, npy_intp *sym, int *mismatch) {")
    w(f"  if (n != {nargs}) return 0;")
    w(f"  for (int s = 0; s < {len(index)}; ++s) sym[s] = -1;")
    bcast = ", ".join("1" if n in exp.broadcast else "0" for n in traced.names)
    w(f"  static const char bcast[] = {{{bcast or '0'}}};")
    w("  (void)bcast;")

    def shape_tables(t):
        dims = ", ".join(str(d) if isinstance(d, int) else "-1" for d in t.shape)
        syms = ", ".join(str(index[d]) if isinstance(d, str) else "-1"
                         for d in t.shape)
        w(f"  {{ static const npy_intp shape[] = {{{dims}}};")
        w(f"    static const int symof[] = {{{syms}}};")

    for i, t in enumerate(exp.types):
        if t.shape:
            shape_tables(t)
            w(f"    in[{i}] = cpnc_match_array(argv[{i}], {_DTYPES[t.dtype]}, "
              f"{len(t.shape)}, shape, symof, sym, bcast, mismatch); }}")
        else:
            w(f"  in[{i}] = cpnc_match_scalar(argv[{i}], {_DTYPES[t.dtype]});")
        w(f"  if (!in[{i}]) {{ for (int j = 0; j < {i}; ++j) "
          "Py_DECREF(in[j]); return 0; }")
    # The sizes must be large enough for the slices the kernel takes (at
    # smaller ones NumPy clips them): else *mismatch = 2.
    for e, when in getattr(entry, "size_guards", []):
        cond = " && ".join([f"{_c_size(v)} >= 1" for v in when] +
                           [f"{_c_size(e)} < 0"])
        w(f"  if ({cond}) {{ *mismatch = 2; for (int j = 0; j < {nargs}; "
          "++j) Py_DECREF(in[j]); return 0; }")
    w("  return 1;")
    w("}")
    w()
    # Every array the kernel takes: inputs (arguments and constants: closed-
    # over arrays, scalars folded while tracing), then outputs, each as
    # (C pointer expression, C expressions of its sizes).
    from . import _cpn
    arrays, locals_ = [], []
    size_consts = getattr(entry, "size_consts", {})
    for j, (kind, v) in enumerate(entry.inputs):
        if kind == "arg":
            nd = len(exp.types[v].shape)
            arrays.append((f"PyArray_DATA(in[{v}])",
                           [f"PyArray_DIM(in[{v}], {d})" for d in range(nd)]))
        elif j in size_consts:  # recomputed from the sizes at each call
            name, op, c = size_consts[j]
            ctype = _CTYPES[str(_np.dtype(v.dtype))]
            size = f"sym[{index[name]}]"
            value = f"({size} + ({c!r}))" if op == "add" else f"({c!r} / {size})"
            locals_.append(f"  {ctype} size_const_{j} = ({ctype}){value};")
            arrays.append((f"(void *)&size_const_{j}", []))
        else:
            data = _cpn.to_numpy(v).reshape(v.shape)
            csym, _, _, _ = w.const_array(data)
            arrays.append((f"(void *){csym}", [str(d) for d in data.shape]))
    results = captured.results
    nout = len(results)
    out_dims = [[_c_size(e) for e in dims] for dims in entry.result_dims] \
        if index else [[str(d) for d in node.shape] for node in results]
    arrays += [(f"PyArray_DATA(out[{k}])", dims) for k, dims in enumerate(out_dims)]
    descriptors = bool(index)
    slots = sum(3 + 2 * len(dims) if descriptors else 1 for _, dims in arrays)
    # The runner.
    w(f"static PyObject *run_{sym}(PyObject *const *argv, PyArrayObject **in, "
      "const npy_intp *sym) {")
    w("  (void)sym;")
    w(f"  PyArrayObject *out[{max(nout, 1)}] = {{0}};")
    w("  PyObject *ret = NULL;")
    for line in locals_:
        w(line)
    w(f"  int64_t data[{max(slots, 1)}];")
    w(f"  void *slots[{max(slots, 1)}];")
    for k, (node, dims) in enumerate(zip(results, out_dims)):
        w(f"  {{ npy_intp shape[] = {{{', '.join(dims) or '0'}}};")
        w(f"    out[{k}] = (PyArrayObject *)PyArray_SimpleNew({len(dims)}, "
          f"shape, {_typenum(node.dtype)});")
        w(f"    if (!out[{k}]) goto done; }}")
    at = 0
    for ptr, dims in arrays:
        w(f"  data[{at}] = (int64_t)(intptr_t){ptr};")
        if not descriptors:
            at += 1
            continue
        r = len(dims)
        w(f"  data[{at + 1}] = data[{at}]; data[{at + 2}] = 0;")
        for d, e in enumerate(dims):
            w(f"  data[{at + 3 + d}] = (int64_t)({e});")
        if r:
            w(f"  {{ int64_t stride = 1; for (int d = {r - 1}; d >= 0; --d) {{ "
              f"data[{at + 3 + r} + d] = stride; stride *= data[{at + 3} + d]; }} }}")
        at += 3 + 2 * r
    w(f"  for (int j = 0; j < {slots}; ++j) slots[j] = &data[j];")
    w("  Py_BEGIN_ALLOW_THREADS")
    w(f"  {sym}(slots);")
    w("  Py_END_ALLOW_THREADS")
    w("  if (cpnc_raise_kernel_error()) goto done;")
    for i, k in entry.mutations:  # arguments the function wrote into
        w(f"  if (PyArray_Check(argv[{i}]) && "
          f"PyArray_CopyInto((PyArrayObject *)argv[{i}], out[{k}]) < 0) goto done;")
    w(f"  ret = {_returned(w, traced, entry.out_skeleton)};")
    w("done:")
    w(f"  for (int k = 0; k < {nout}; ++k) Py_XDECREF(out[k]);")
    w("  return ret;")
    w("}")
    w()


def write_wrapper(modname, functions, openmp):
    """C source of the module: `functions` maps a name to its Traced list."""
    w = _Writer()
    w(f"/* Generated by cpnc; the module {modname}. */")
    from . import _cpn
    kinds = _cpn.ErrorKind
    w(_PRELUDE % {"omp": "void omp_set_num_threads(int);\n" if openmp else "",
                  "kind_runtime": int(kinds.Runtime), "kind_linalg": int(kinds.LinAlg),
                  "kind_index": int(kinds.Index), "kind_memory": int(kinds.Memory)})
    methods = []
    for fname, variants in functions.items():
        for traced in variants:
            _variant(w, traced)
        sigs = "\n".join(f"  {t.export}" for t in variants)
        maxargs = max(len(t.export.types) for t in variants)
        w(f"static PyObject *py_{fname}(PyObject *self, PyObject *const *argv, "
          "Py_ssize_t n) {")
        maxsyms = max(len(t.names) for t in variants)
        w(f"  PyArrayObject *in[{max(maxargs, 1)}];")
        w(f"  npy_intp sym[{max(maxsyms, 1)}];")
        w("  int mismatch = 0;")
        for traced in variants:
            sym = traced.symbol
            w(f"  if (match_{sym}(argv, n, in, sym, &mismatch)) {{")
            w(f"    PyObject *r = run_{sym}(argv, in, sym);")
            w(f"    for (int j = 0; j < {len(traced.export.types)}; ++j) "
              "Py_DECREF(in[j]);")
            w("    return r;")
            w("  }")
        w("  PyObject *got = cpnc_describe(argv, n);")
        w("  if (got && mismatch == 2) {")
        w("    PyErr_Format(PyExc_ValueError, " + _c_string(
            f"{fname}(): the arguments' sizes (%U) are too small for the "
            "slices of the compiled shape-generic kernel (NumPy would clip "
            "them); export a signature with these sizes too; compiled "
            "for:\n" + sigs.replace("%", "%%")) + ", got);")
        w("    Py_DECREF(got);")
        w("    return NULL;")
        w("  }")
        w("  if (got && mismatch) {")
        w("    PyErr_Format(PyExc_ValueError, " + _c_string(
            f"{fname}(): operands could not be broadcast together (%U): the "
            "':' sizes the function broadcasts against each other must be "
            "equal (a size-1 argument is not broadcast by the compiled "
            "module; export a signature with that size, e.g. float64[1]); "
            "compiled for:\n" + sigs.replace("%", "%%")) + ", got);")
        w("    Py_DECREF(got);")
        w("    return NULL;")
        w("  }")
        w("  if (got) {")
        w("    PyErr_Format(PyExc_TypeError, "
          + _c_string(f"{fname}(): no compiled signature matches the arguments "
                      "(%U); compiled for:\n" + sigs.replace("%", "%%")
                      + "\nConvert the arguments (np.ascontiguousarray(x, "
                      "dtype=...)) or export this signature too.")
          + ", got);")
        w("    Py_DECREF(got);")
        w("  }")
        w("  return NULL;")
        w("}")
        w()
        doc = f"{fname}: compiled by cpnc for\n{sigs}"
        methods.append(f'  {{"{fname}", (PyCFunction)(void (*)(void))py_{fname}, '
                       f"METH_FASTCALL, {_c_string(doc)}}},")
    w(f"static PyMethodDef methods[] = {{")
    for m in methods:
        w(m)
    w("  {NULL, NULL, 0, NULL}};")
    w(f"static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "
      f'"{modname}", "Compiled by cpnc.", -1, methods}};')
    w(f"PyMODINIT_FUNC PyInit_{modname}(void) {{")
    w("  import_array();")
    if openmp:
        w('  const char *threads = getenv("CPN_THREADS");')
        w("  if (threads && atoi(threads) > 0) omp_set_num_threads(atoi(threads));")
    w("  return PyModule_Create(&module);")
    w("}")
    return "\n".join(w.lines) + "\n"


# -- building ---------------------------------------------------------------------

def _link(c_path, objects, out_path, openmp, workdir):
    aot = os.path.join(_PACKAGE_DIR, "libcpnrt_aot.a")
    if not os.path.exists(aot):
        raise CpncError(f"cpnc: {aot} is missing; build cpnumeric first (make)")
    cc = os.environ.get("CC", "cc")
    cxx = os.environ.get("CXX", "c++")
    includes = [sysconfig.get_paths()["include"], _np.get_include()]
    wrapper_o = os.path.join(workdir, "wrapper.o")
    cmd = [cc, "-c", "-O2", "-fPIC", "-fvisibility=hidden", "-o", wrapper_o,
           c_path] + [f"-I{i}" for i in includes]
    _run(cmd)
    # The same BLAS/LAPACK (scipy-openblas64) and sort (Highway) as the JIT's.
    import scipy_openblas64
    blas = scipy_openblas64.get_lib_dir()
    link = [cxx, "-shared", "-o", out_path, wrapper_o] + objects + [
        aot, f"-L{blas}", "-lscipy_openblas64_", f"-Wl,-rpath,{blas}", "-lhwy_contrib",
        "-lhwy", "-lfftw3", "-lfftw3f", "-lmvec", "-lm"]
    if openmp:
        link += [_OPENMP, f"-Wl,-rpath,{os.path.dirname(_OPENMP)}"]
    _run(link)


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CpncError("cpnc: this command failed:\n  " + " ".join(cmd) + "\n"
                        + r.stdout + r.stderr)


def _module_name(out_path):
    name = os.path.basename(out_path).split(".")[0]
    if not name.isidentifier():
        raise CpncError(f"cpnc: the output name '{os.path.basename(out_path)}' "
                        "does not start with a Python module name")
    return name


def compile_file(args):
    path = os.path.abspath(args.file)
    if not os.path.exists(path):
        raise CpncError(f"cpnc: no such file: {args.file}")
    with open(path) as f:
        source = f.read()
    exports = [parse_export(e, "--export") for e in args.export]
    exports += comment_exports(path, source)
    module = load_module(path)
    if not exports:
        from ._jit import JitFunction
        names = [n for n, v in vars(module).items()
                 if isinstance(v, JitFunction)]
        if names:
            raise CpncError(
                f"{path}: @cpnumeric.jit function(s) {', '.join(names)} need "
                "argument types to be compiled ahead of time: add a line "
                f"'# cpnc export {names[0]}(float64[100])' or --export")
        raise CpncError(f"{path}: nothing to export; add --export "
                        "'f(float64[100])' or a '# cpnc export f(...)' line")
    stem = os.path.splitext(os.path.basename(path))[0]
    out_path = args.output or stem + sysconfig.get_config_var("EXT_SUFFIX")
    modname = _module_name(out_path)
    openmp = args.target == "omp"
    functions = {}
    for exp in exports:
        entry, sizes, exp = trace_export(module, path, exp)
        variants = functions.setdefault(exp.name, [])
        traced = Traced(exp, entry, f"cpnc_{exp.name}_{len(variants)}", sizes)
        variants.append(traced)
    emit = [s for s in (args.emit or "").split(",") if s]
    out_dir = os.path.dirname(os.path.abspath(out_path))
    with tempfile.TemporaryDirectory(prefix="cpnc-") as work:
        objects = []
        for variants in functions.values():
            for t in variants:
                obj = t.entry.captured.object(
                    t.symbol, opt_level=args.opt_level,
                    target="openmp" if openmp else "cpu",
                    dump_dir=args.dump_ir_after_all or "")
                objects.append(os.path.join(work, t.symbol + ".o"))
                with open(objects[-1], "wb") as f:
                    f.write(obj)
                for stage in (e for e in emit if e != "c"):
                    name = f"{modname}.{t.symbol[5:]}.{stage}."
                    name += _STAGE_SUFFIX.get(stage, "mlir")
                    if stage == "obj":
                        data = obj
                    else:
                        data = t.entry.captured.as_text(stage).encode()
                    with open(os.path.join(out_dir, name), "wb") as f:
                        f.write(data)
        source = write_wrapper(modname, functions, openmp)
        c_path = os.path.join(work, modname + ".c")
        for path in [c_path] + ([os.path.join(out_dir, modname + ".c")]
                                if "c" in emit else []):
            with open(path, "w") as f:
                f.write(source)
        tmp_out = os.path.join(work, os.path.basename(out_path))
        _link(c_path, objects, tmp_out, openmp, work)
        _move(tmp_out, out_path)
    return out_path, functions


def _move(src, dst):
    import shutil
    tmp = dst + ".tmp"
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)  # never a half-written module


def _parser():
    p = argparse.ArgumentParser(
        prog="cpnc",
        description="Compile functions of a NumPy program (import cpnumeric "
        "as np) into a native Python extension module that needs only NumPy "
        "at run time.",
        epilog="Types: bool, int8..int64, uint8..uint64, float32, float64 "
        "(scalars), or dtype[d0,d1,...] (C-contiguous arrays of that shape; "
        "other layouts are copied). Exports also come from '# cpnc export "
        "f(...)' lines in the file. See docs/cpnc.md.")
    p.add_argument("file", help="the .py file to compile")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="the module file to write (default: "
                   "<file stem><EXT_SUFFIX> in the current directory); the "
                   "module's name is OUT's name up to the first dot")
    p.add_argument("--export", action="append", default=[], metavar="SIG",
                   help="a function to compile and its argument types, e.g. "
                   "'f(float64[100,100], float64[100], int64)'; repeat for "
                   "several functions or several signatures of one")
    p.add_argument("--emit", metavar="STAGES",
                   help="also write each kernel at these stages next to OUT, "
                   "comma-separated: " + ", ".join(_STAGES) + ", c (the "
                   "wrapper's C source)")
    p.add_argument("--dump-ir-after-all", metavar="DIR",
                   help="write the IR after every pass, per kernel, under DIR "
                   "(as CPN_DUMP_IR)")
    p.add_argument("--target", choices=("cpu", "omp", "cuda"), default="omp",
                   help="cpu: one thread; omp: OpenMP on all cores (default; "
                   "CPN_THREADS or OMP_NUM_THREADS set the count at run time); "
                   "cuda: not available yet")
    p.add_argument("-O", dest="opt_level", type=int, choices=range(4),
                   default=3, metavar="0..3", help="LLVM optimization level "
                   "(default 3)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.target == "cuda":
        print("cpnc: --target cuda is not available: cpnumeric has no GPU "
              "backend yet; use cpu or omp", file=sys.stderr)
        return 2
    bad = [s for s in (args.emit or "").split(",")
           if s and s not in _STAGES + ("c",)]
    if bad:
        print(f"cpnc: unknown --emit stage(s) {', '.join(bad)}; the stages are "
              f"{', '.join(_STAGES)}, c", file=sys.stderr)
        return 2
    try:
        out, functions = compile_file(args)
    except CpncError as e:
        print(str(e), file=sys.stderr)
        return 1
    n = sum(len(v) for v in functions.values())
    print(f"cpnc: wrote {out} ({len(functions)} function(s), {n} kernel(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
