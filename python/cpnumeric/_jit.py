"""@cpnumeric.jit: trace a whole function once per signature, compile it into
one executable, and run later calls without tracing.

A signature is the shapes, dtypes and layouts of the array arguments (NumPy or
cpnumeric arrays, also inside tuples and lists) and the values of everything
else: static arguments, Python scalars (folded into the code as constants,
as NumPy 2's weak scalars), None, strings. A call whose signature was seen
before runs the compiled executable on the new arrays; a new signature traces
the function again (CPN_LOG=retrace prints which argument changed).

While tracing, the values of traced arrays are unknown: `if x.sum() > 0:`,
`float(x)`, printing or a NumPy fallback raise TracingError naming the line.
"""

import functools
import inspect
import os
import sys
import traceback

import threading

import numpy as _np

from . import _config, _core, _cpn
from ._core import ndarray

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# The function being traced (its name), or None, and the thread tracing it:
# another thread's trace does not change what this one does (its ops wait
# for the engine's gate until the trace ends). Checks read "function" first,
# so the thread test costs nothing when no trace runs.
TRACING = {"function": None, "thread": None}


def tracing_here():
    """Whether this thread is tracing a @jit function."""
    return TRACING["function"] is not None and \
        TRACING["thread"] == threading.get_ident()
JIT_STATS = {"jit_traces": 0, "jit_calls": 0}


class TracingError(TypeError):
    """A traced value was needed as a concrete Python value inside @jit."""


def _user_frame():
    """'file:line' of the innermost frame outside cpnumeric."""
    for frame in reversed(traceback.extract_stack()):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return f"{frame.filename}:{frame.lineno}"
    return "<unknown>"


def tracing_error(what):
    """The error for a value needed while tracing (`what` says which use)."""
    return TracingError(
        f"{_user_frame()}: {what} needs the value of a traced array inside "
        f"@cpnumeric.jit function '{TRACING['function']}'; its value is not "
        "known until the compiled function runs. Use np.where(cond, a, b) for a "
        "data-dependent choice, or make the value a static argument "
        "(static_argnames=...) so that each value gets its own compiled version.")


def fallback_error(name):
    return TracingError(
        f"{_user_frame()}: {name} has no native cpnumeric version, so "
        f"@cpnumeric.jit cannot compile function '{TRACING['function']}'; call "
        "it outside the jitted function.")


def _log_retrace():
    return "retrace" in _config.get("CPN_LOG").split(",")


# -- signatures ------------------------------------------------------------

class _Leaf:
    """Where an array argument goes: its index among the arrays."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<array {self.index}>"


def _describe(key_part):
    kind = key_part[0]
    if kind == "array":
        _, dt, _, shape, layout = key_part
        text = f"{dt}[{', '.join(map(str, shape))}]"
        if layout is not None:
            base, strides, offset = layout
            text += (f" (a view of a {list(base)} array, strides {list(strides)},"
                     f" offset {offset})")
        return text
    if kind == "seq":
        return f"{key_part[1].__name__} of {len(key_part[2])}"
    return repr(key_part[1])


def _flatten(value, arrays, static):
    """(key, skeleton) of an argument: arrays become leaves, in order."""
    if not static:
        if isinstance(value, ndarray):
            arrays.append(value)
            b = value._base
            layout = (None if value._whole else
                      (b.shape, value._strides, value._offset))
            # (the dtype's character too: uint64 and ulonglong, int64 and
            # longlong, print alike and give results of their own kind)
            return (("array", str(value._dtype), value._dtype.char, value._shape, layout),
                    _Leaf(len(arrays) - 1))
        if isinstance(value, _np.generic) and _core.is_supported(value.dtype):
            # A NumPy scalar (what a[i] and iteration return) is a 0-d array
            # argument: under NEP 50 it promotes as one, and a loop passing
            # a[i] must not retrace for every value.
            value = _np.asarray(value)
        if isinstance(value, _np.ndarray):
            arrays.append(value)
            return (("array", str(value.dtype), value.dtype.char, value.shape, None),
                    _Leaf(len(arrays) - 1))
        if isinstance(value, (tuple, list)) and any(
                isinstance(v, (ndarray, _np.ndarray, tuple, list)) for v in value):
            parts = [_flatten(v, arrays, False) for v in value]
            return (("seq", type(value), tuple(p[0] for p in parts)),
                    _same_kind(value, [p[1] for p in parts]))
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"@cpnumeric.jit: argument {value!r} of type {type(value).__name__} "
            "is not an array and not hashable, so it cannot be part of a "
            "signature; pass arrays, scalars, tuples, or hashable static "
            "values") from None
    return ("value", value, type(value)), value


def _rebuild(skeleton, leaves):
    if isinstance(skeleton, _Leaf):
        return leaves[skeleton.index]
    if isinstance(skeleton, (tuple, list)):
        return _same_kind(skeleton, [_rebuild(s, leaves) for s in skeleton])
    return skeleton


def _same_kind(seq, items):
    """A tuple, list or namedtuple (SlogdetResult, EighResult) like `seq`
    holding `items`."""
    if hasattr(seq, "_fields"):
        return type(seq)(*items)
    return type(seq)(items)


# -- compiled entries ----------------------------------------------------------

class _Entry:
    """One signature's compiled trace and how to call it.

    inputs: per trace input, ("arg", i) (the base of array i) or
    ("const", node); outputs: per returned leaf, ("result", k) or
    ("arg", i) or ("const", node); mutations: (array i, result k) for
    arguments the function wrote into."""

    def __init__(self, captured, inputs, out_skeleton, outputs, mutations):
        self.captured = captured
        self.inputs = inputs
        self.out_skeleton = out_skeleton
        self.outputs = outputs
        self.mutations = mutations

    def run(self, arrays):
        traced = [_to_traced(a) for a in arrays]
        nodes = []
        for kind, v in self.inputs:
            if kind == "const":
                nodes.append(v)
                continue
            node = traced[v]._base.node
            if not node.materialized:
                _cpn.flush()
            nodes.append(node)
        results = self.captured.call(nodes)
        for i, k in self.mutations:
            a = arrays[i]
            if isinstance(a, _np.ndarray):
                a[...] = _core.to_numpy(results[k]).reshape(a.shape)
            else:
                a._base.node = results[k]
        leaves = []
        for kind, v in self.outputs:
            if kind == "result":
                node = results[v]
                leaves.append(ndarray._from_node(node, node.shape,
                                                 _np.dtype(node.dtype)))
            elif kind == "arg":
                leaves.append(traced[v])
            else:
                leaves.append(v)
        return _rebuild(self.out_skeleton, leaves)


def _to_traced(a):
    """A cpnumeric array for argument `a`, its elements in a store."""
    if isinstance(a, _np.ndarray):
        from ._creation import array
        a = array(a)
    if a._base.np is not None:
        _core._demote(a._base)
    return a


def _capture(fun, name, kwnames, skeletons, arrays, execute):
    """Traces fun once. Returns (entry, the call's actual result)."""
    traced = [_to_traced(a) for a in arrays]
    args = _rebuild(skeletons[0], traced)
    kwargs = {k: _rebuild(s, traced) for k, s in zip(kwnames, skeletons[1])}
    # The engine's gate first (another thread's trace ends before ours
    # begins), then the threshold that trace has restored.
    _cpn.begin_capture()
    threshold = _core.EAGER["threshold"]
    originals = [t._base.node for t in traced]
    TRACING["thread"] = threading.get_ident()
    TRACING["function"] = name
    _core.EAGER["threshold"] = 0
    try:
        out = fun(*args, **kwargs)
        out_arrays = []
        out_key, out_skeleton = _flatten(out, out_arrays, False)
        held = []  # keeps every returned value alive through end_capture
        for o in out_arrays:
            if isinstance(o, _np.ndarray):
                from ._creation import array
                o = array(o)
            held.append(o._node())
        mutated = [(i, t._base.node) for i, t in enumerate(traced)
                   if t._base.node is not originals[i]]
    except BaseException:
        TRACING["function"] = None
        _core.EAGER["threshold"] = threshold
        _cpn.end_capture(False)
        for t, node in zip(traced, originals):
            t._base.node = node
        raise
    TRACING["function"] = None
    _core.EAGER["threshold"] = threshold
    captured = _cpn.end_capture(execute)
    JIT_STATS["jit_traces"] += 1
    if not execute:
        for t, node in zip(traced, originals):
            t._base.node = node
    arg_of = {node.ptr: i for i, node in enumerate(originals)}
    result_of = {node.ptr: k for k, node in enumerate(captured.results)}
    inputs = [("arg", arg_of[n.ptr]) if n.ptr in arg_of else ("const", n)
              for n in captured.inputs]
    outputs = []
    for node in held:
        if node.ptr in result_of:
            outputs.append(("result", result_of[node.ptr]))
        elif node.ptr in arg_of:
            outputs.append(("arg", arg_of[node.ptr]))
        else:
            outputs.append(("const", ndarray._from_node(
                node, node.shape, _np.dtype(node.dtype))))
    mutations = [(i, result_of[node.ptr]) for i, node in mutated
                 if node.ptr in result_of]
    # The entry lives as long as the cache: it keeps the constants, not this
    # call's arguments and results.
    captured.forget_values([j for j, (kind, _) in enumerate(inputs) if kind == "arg"])
    entry = _Entry(captured, inputs, out_skeleton, outputs, mutations)
    if execute:
        for i, a in enumerate(arrays):  # NumPy arguments written by the function
            if isinstance(a, _np.ndarray) and any(m[0] == i for m in mutations):
                a[...] = traced[i]._numpy()
    return entry, out


class Lowered:
    """A function traced for one signature, not run (`f.lower(*args)`)."""

    def __init__(self, jitted, key, entry):
        self._jitted, self._key, self._entry = jitted, key, entry

    def as_text(self, stage="cpn"):
        """The IR at `stage`: trace, cpn, linalg, fused, bufferized, loops,
        llvm-dialect, or llvm (the optimized LLVM IR)."""
        return self._entry.captured.as_text(stage)

    def cost(self):
        """Kernels, temporaries, bytes moved and peak buffer bytes of the
        compiled function (read off its bufferized IR)."""
        return dict(self._entry.captured.cost())

    def compile(self):
        """The compiled function for this signature (also used by later calls
        of the jitted function with it)."""
        self._jitted._cache[self._key] = self._entry
        return self._jitted


class JitFunction:
    """A function compiled whole per signature; see cpnumeric.jit."""

    def __init__(self, fun, static_argnames=(), static_argnums=()):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._sig = inspect.signature(fun)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        params = list(self._sig.parameters)
        for n in static_argnames:
            if n not in params:
                raise ValueError(f"@cpnumeric.jit: static_argnames names '{n}', "
                                 f"which is not a parameter of {fun.__name__}")
        self._static = set(static_argnames) | {
            params[i] for i in static_argnums if i < len(params)}
        self._cache = {}
        self._last_key = None

    def _signature(self, args, kwargs):
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._fun.__name__}(): {e}") from None
        bound.apply_defaults()
        arrays, keys, pos, kw = [], [], [], {}
        for name, value in bound.arguments.items():
            k, skel = _flatten(value, arrays, name in self._static)
            keys.append((name, k))
            kind = self._sig.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:
                pos.extend(skel)
            elif kind == inspect.Parameter.VAR_KEYWORD:
                kw.update(skel)
            elif kind == inspect.Parameter.KEYWORD_ONLY:
                kw[name] = skel
            else:
                pos.append(skel)
        return tuple(keys), (tuple(pos), list(kw.values())), list(kw), arrays

    def _report_retrace(self, key):
        if self._last_key is None or not _log_retrace():
            return
        changed = [f"'{n}' {_describe(old)} -> {_describe(new)}"
                   for (n, old), (_, new) in zip(self._last_key, key)
                   if old != new]
        code = self._fun.__code__
        print(f"cpnumeric: retracing {self._fun.__name__} "
              f"({code.co_filename}:{code.co_firstlineno}): "
              f"{'; '.join(changed) or 'new signature'}", file=sys.stderr)

    def __call__(self, *args, **kwargs):
        key, skeletons, kwnames, arrays = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            JIT_STATS["jit_calls"] += 1
            self._last_key = key
            return entry.run(arrays)
        self._report_retrace(key)
        entry, out = _capture(self._fun, self._fun.__name__, kwnames,
                              skeletons, arrays, execute=True)
        self._cache[key] = entry
        self._last_key = key
        return out

    def lower(self, *args, **kwargs):
        """Traces for these arguments without running; see Lowered."""
        key, skeletons, kwnames, arrays = self._signature(args, kwargs)
        entry, _ = _capture(self._fun, self._fun.__name__, kwnames,
                            skeletons, arrays, execute=False)
        return Lowered(self, key, entry)

    def clear_cache(self):
        self._cache.clear()
        self._last_key = None


def jit(fun=None, *, static_argnames=(), static_argnums=()):
    """Compile `fun` whole, once per signature.

    Use as ``@cpnumeric.jit``, ``@cpnumeric.jit(static_argnames=("n",))`` or
    ``cpnumeric.jit(f, static_argnames=...)``. The first call with a new
    signature (array shapes, dtypes and layouts, static values, scalars)
    traces `fun` into one trace and compiles it (memory and disk cache); later
    calls run the executable directly. Python control flow on static values is
    unrolled while tracing; a branch on a traced value raises TracingError.
    """
    if fun is None:
        return lambda f: JitFunction(f, static_argnames, static_argnums)
    return JitFunction(fun, static_argnames, static_argnums)
