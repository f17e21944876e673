"""The baseline tier: a window whose kernel is not compiled runs op by op.

The Engine (lib/Engine/Baseline.cpp, runBaseline) calls `run` for a window
whose kernel is in neither cache when running it op by op is expected to
take less than waiting for its compile (docs/tuning.md, "When cpnumeric
compiles"): each `cpn` op is computed with NumPy's loop for it, and each
library call (sorting, gathers, scatters, LAPACK) with the runtime's own
entry point, the one a compiled kernel calls. A window that comes again is
compiled meanwhile on the Engine's compiler thread, and its kernel runs
once it is ready. `stats()` counts these windows (`baseline_windows`); the
profile shows them as "baseline" events.

Values are NumPy arrays: the inputs are read-only views of their stores,
the outputs are copied into the stores the Engine gives (a donated input's
own store for an update in place).
"""

import itertools as _itertools
import math as _math
import os as _os

import numpy as _np

from . import _config, _cpn

_DTYPES = {}

# Elements per block of a run of elementwise ops (CPN_BASELINE_BLOCK; 0: off).
_BLOCK = _config.get_int("CPN_BASELINE_BLOCK")
# Runs computed a block at a time so far, and of them on several threads
# (the tests read them).
BLOCKED_RUNS = [0, 0]


def _dtype(key):
    dt = _DTYPES.get(key)
    if dt is None:
        dt = _DTYPES[key] = _np.dtype("?" if key == "b1" else "<" + key)
    return dt


_UFUNC_NAMES = """negative positive absolute sign square reciprocal sqrt cbrt exp exp2
expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh
arccosh arctanh floor ceil trunc rint logical_not invert isnan isinf isfinite signbit
conjugate bitwise_count spacing add gcd lcm nextafter subtract multiply divide
floor_divide remainder fmod power maximum minimum fmax fmin arctan2 hypot copysign
logaddexp logaddexp2 equal not_equal less less_equal greater greater_equal logical_and
logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift""".split()
_UFUNCS = {name: getattr(_np, name) for name in _UFUNC_NAMES}

# np.errstate's categories as the kernels' FpError bits.
_FP_BITS = {"divide by zero": 1, "overflow": 2, "invalid value": 4}


def _flat(a):
    """`a`'s elements in C order, 1-D (a view when it already is)."""
    return a.reshape(-1) if a.flags.c_contiguous else _np.ascontiguousarray(a).reshape(-1)


def _strided(flat, iattrs, shape):
    """The view (offset, element strides in iattrs) of a flat array."""
    item = flat.itemsize
    return _np.ndarray(shape, flat.dtype, buffer=flat, offset=iattrs[0] * item,
                       strides=[s * item for s in iattrs[1:]])


def _view(args, iattrs, sattr, shape, dt):
    if 0 in shape:
        return _np.empty(shape, dt)
    return _strided(_flat(args[0]), iattrs, shape)


def _copy(args, iattrs, sattr, shape, dt):
    return _np.array(args[0], dtype=dt, order="C", copy=True)


def _complex(args, iattrs, sattr, shape, dt):
    out = _np.empty(shape, dt)  # no inf * 0 terms: the parts are set apart
    out.real = args[0]
    out.imag = args[1]
    return out


def _bitcast(args, iattrs, sattr, shape, dt):
    # Not ascontiguousarray: it makes a 0-d array (1,) (fuzz 810:18258).
    a = args[0] if args[0].flags.c_contiguous else args[0].copy(order="C")
    return a.view(dt).reshape(shape)


def _cast(args, iattrs, sattr, shape, dt):
    return args[0].astype(dt)


def _select(args, iattrs, sattr, shape, dt):
    return _np.where(args[0], args[1], args[2])


_REDUCE = {"sum": _np.add.reduce, "prod": _np.multiply.reduce}


def _reduce(args, iattrs, sattr, shape, dt):
    x, axes = args[0], tuple(iattrs)
    f = _REDUCE.get(sattr)
    if f is not None:
        r = f(x, axis=axes, dtype=dt)
    elif sattr in ("min", "max"):
        # An empty axis (a max with initial=, whose check was at the call)
        # gives the compiled kernel's identity: -inf/+inf, the dtype's limits.
        initial = _np._NoValue
        if any(x.shape[a] == 0 for a in axes):
            t = x.dtype
            if t.kind in "fc":
                initial = _np.inf if sattr == "min" else -_np.inf
            elif t.kind == "b":
                initial = sattr == "min"
            else:
                info = _np.iinfo(t)
                initial = info.max if sattr == "min" else info.min
        f = _np.minimum if sattr == "min" else _np.maximum
        r = f.reduce(x, axis=axes, initial=initial)
    elif sattr == "any":
        r = _np.any(x, axis=axes)
    elif sattr == "all":
        r = _np.all(x, axis=axes)
    elif sattr == "argmin":
        r = _np.argmin(x, axis=axes[0])
    elif sattr == "argmax":
        r = _np.argmax(x, axis=axes[0])
    else:
        raise NotImplementedError(f"reduce kind {sattr}")
    return _np.asarray(r).reshape(shape)


def _iota(args, iattrs, sattr, shape, dt):
    dim = iattrs[0]
    line = _np.arange(shape[dim], dtype=dt).reshape(
        [-1 if k == dim else 1 for k in range(len(shape))])
    return _np.broadcast_to(line, shape)


def _matmul(args, iattrs, sattr, shape, dt):
    return _np.matmul(args[0], args[1])


_WORD_MASK = (1 << 64) - 1


def _random_bits(args, iattrs, sattr, shape, dt):
    n = 1
    for d in shape:
        n *= d
    words = _cpn.philox_words(int(args[0]) & _WORD_MASK, int(args[1]) & _WORD_MASK, n)
    return words.view(_np.int64).reshape(shape)


def _libcall(args, iattrs, sattr, shape, dt):
    out = _np.empty(shape, dt)
    _cpn.call_library(sattr, out, list(args), list(iattrs))
    return out


def _part(name):
    def part(args, iattrs, sattr, shape, dt):
        return getattr(args[0], name)
    return part


_SPECIAL = {"view": _view, "copy": _copy, "complex": _complex, "bitcast": _bitcast,
            "cast": _cast, "select": _select, "reduce": _reduce, "iota": _iota,
            "matmul": _matmul, "random_bits": _random_bits, "libcall": _libcall,
            "real": _part("real"), "imag": _part("imag")}
# Ops whose result is a new array of their own.
_FRESH = frozenset(_UFUNC_NAMES) | {"copy", "complex", "cast", "select", "matmul",
                                   "libcall", "update", "random_bits"}
# Ops whose result is a view of their first operand's memory.
_ALIASING = frozenset(("view", "real", "imag", "bitcast"))


class _Flags:
    """np.errstate's callback: the FpError bits of the current op."""
    __slots__ = ("bits",)

    def __init__(self):
        self.bits = 0

    def __call__(self, kind, flag):
        self.bits |= _FP_BITS.get(kind, 0)


_IN_PLACE_CALLS = {}


def _rewrites_first(op):
    """Whether op's value is its first operand with some elements rewritten:
    an update, or a library call that scatters (put, ufunc.at)."""
    return op[0] == "update" or (op[0] == "libcall" and _updates_first_input(op[3]))


def _updates_first_input(callee):
    """Whether library call `callee` rewrites some elements of a copy of its
    first operand (put, ufunc.at: cpnrt::updatesFirstInput)."""
    r = _IN_PLACE_CALLS.get(callee)
    if r is None:
        r = _IN_PLACE_CALLS[callee] = _cpn.updates_first_input(callee)
    return r


# Ops that need their operands at their full shapes (a splat is otherwise
# kept as its one element, which NumPy's ufuncs broadcast).
_SHAPED = frozenset(("reduce", "matmul", "libcall", "copy", "bitcast", "update"))


def run(ops, inputs, outputs, dests, sites, threads=1):
    """Computes the window `ops` (name, operands, iattrs, sattr, shape, dtype
    key, fp checks) on `inputs` and writes the values of ops `outputs` into
    `dests`. Returns the fp status words (bits of the checked ops' errors, as
    a kernel sets them); None, having written nothing, when an op is not one
    this tier runs; raises, having written nothing, when an op fails (the
    window is then compiled and its kernel reports the error); or returns
    the exception when an op fails after a donated input was written in
    place (the Engine then fails the window's values with it, of the kind of
    its class: a LinAlgError stays one, not a message to parse)."""
    ufuncs, special = _UFUNCS, _SPECIAL
    for op in ops:
        if op[0] not in ufuncs and op[0] not in special and op[0] != "update":
            return None
    n = len(ops)
    # Where each value's memory comes from (an op result i, or input k as
    # -k-1), and the last op that reads that memory (outputs: the end).
    root = list(range(n))
    last = [-1] * n
    last_in = [-1] * len(inputs)
    aliasing = _ALIASING
    for i, op in enumerate(ops):
        operands = op[1]
        if op[0] in aliasing:
            r = operands[0]
            root[i] = root[r] if r >= 0 else r
        for r in operands:
            if r >= 0:
                last[r] = i
                r = root[r]
                if r >= 0:
                    last[r] = i
                    continue
            last_in[-r - 1] = i
    ends = [(o, n) for o in outputs] + [(root[i], last[i]) for i in range(n) if root[i] != i]
    for r, at in ends:
        if r >= 0:
            if at > last[r]:
                last[r] = at
            r = root[r]
        if r >= 0:
            if at > last[r]:
                last[r] = at
        elif at > last_in[-r - 1]:
            last_in[-r - 1] = at
    # An output made by a chain of updates on a fresh copy (`A = zeros(...)`
    # then `A[i, :] = ...`, or scatters: `b = a * 2; b[idx] = v`): the
    # chain's first fresh buffer is the output's own destination (no copy
    # into it at the end), when that destination is a new store (not a
    # donated input's); each destination once (`taken`).
    # An output that a ufunc computes is written by the ufunc into its
    # destination likewise.
    chain_dest, taken = {}, set()
    for o, d in zip(outputs, dests):
        r = o
        while _rewrites_first(ops[r]) and ops[r][1][0] >= 0:
            r = ops[r][1][0]
        fits = ops[o][4] == d.shape and _dtype(ops[o][5]) == d.dtype and not any(
            _np.may_share_memory(d, x) for x in inputs)
        if fits and (r != o or ops[r][0] == "copy"):
            r = o
            while True:
                chain_dest[r] = d
                if not _rewrites_first(ops[r]) or ops[r][1][0] < 0:
                    break
                r = ops[r][1][0]
        elif fits and ops[o][0] in ufuncs and o not in chain_dest:
            chain_dest[o] = d  # the ufunc writes its output's store itself
    # An integer iota read only by casts to floats (np.arange(n, dtype=float),
    # linspace): each cast is NumPy's arange in its own dtype (the same
    # values: an integer rounds to a float as its product by 1 does), and
    # the iota itself is never made: one pass and one buffer fewer.
    lazy_iota = {i for i, op in enumerate(ops)
                 if op[0] == "iota" and _dtype(op[5]).kind in "iu"}
    for i, op in enumerate(ops):
        for r in op[1]:
            if r in lazy_iota and not (op[0] == "cast" and _dtype(op[5]).kind in "fc"):
                lazy_iota.discard(r)
    lazy_iota.difference_update(outputs)
    into = _made_in_outputs(ops, outputs, chain_dest, taken, root, last, lazy_iota)
    blocked = _blockable(ops, lazy_iota) if _BLOCK > 0 else None
    seg = None  # the run of blocked ops waiting to be computed (_Run)
    site = {name: k for k, name in enumerate(sites)}
    status = [0] * ((len(sites) + 9) // 10)
    flags = _Flags()

    def finish(run, pos):
        """Computes the pending run before op `pos`; returns None (no run)."""
        run.compute(pos, ops, inputs, outputs, vals, compact, last, into, chain_dest,
                    taken, flags, site, status, threads, checking)
    vals = [None] * n
    # Values held smaller than their op's shape: a splat's one element.
    compact = [False] * n
    checking = any(op[6] for op in ops)
    ndarray, special_names, shaped = _np.ndarray, _SPECIAL, _SHAPED
    # Set once a donated input's store is written in place: from then on a
    # failure cannot fall back to compiling the window (the kernel would read
    # the changed input), so it fails the window's values instead.
    dirty = False
    try:
        with (_np.errstate(divide="call", over="call", invalid="call", under="ignore",
                           call=flags) if checking else _np.errstate(all="ignore")):
            for i, (name, operands, iattrs, sattr, shape, key, checks) in enumerate(ops):
                if i in lazy_iota:
                    continue
                if blocked:
                    if seg is not None and (_rewrites_first(ops[i]) or any(
                            r in seg.ops for r in operands) or seg.overwrites(
                            into.get(i), into)) and not (
                            i in blocked and shape == seg.shape):
                        seg = finish(seg, i)
                    if i in blocked and _rows_operand(operands, shape, seg, vals, compact,
                                                      inputs):
                        if seg is not None and seg.shape != shape:
                            seg = finish(seg, i)
                        if seg is None:
                            seg = _Run(shape)
                        seg.add(i, ops, root)
                        continue
                if name == "cast" and operands[0] in lazy_iota:
                    r = operands[0]
                    if i in into:
                        vals[i] = _arange_into(into[i].reshape(shape))
                        continue
                    vals[i] = _iota((), ops[r][2], "", ops[r][4], _dtype(key))
                    compact[i] = vals[i].shape != shape
                    continue
                args = [vals[r] if r >= 0 else inputs[-r - 1] for r in operands]
                if name in shaped:
                    for k, r in enumerate(operands):
                        if r >= 0 and compact[r]:
                            args[k] = _np.broadcast_to(args[k], ops[r][4])
                dt = _dtype(key)
                flags.bits = 0
                f = ufuncs.get(name)
                if f is not None:
                    # The buffer of an operand read here for the last time
                    # (an earlier ufunc's result of this shape and dtype) takes
                    # the result: NumPy's own temporary elision, which the
                    # values held here would otherwise prevent (a fresh buffer
                    # per op is slower: page faults, caches).
                    out = None
                    if i in into and all(a.dtype == dt for a in args):
                        out = into[i].reshape(shape)
                    elif i in chain_dest and all(a.dtype == dt for a in args):
                        out = _take(chain_dest, i, taken)
                    for r in (operands if out is None else ()):
                        if (r >= 0 and last[r] == i and root[r] == r and not compact[r]
                                and (seg is None or r not in seg.reads)):
                            c = vals[r]
                            if (ops[r][0] in ufuncs and c.shape == shape and c.dtype == dt
                                    and all(a.dtype == dt for a in args)):
                                out = c
                                break
                    v = f(*args) if out is None else f(*args, out=out)
                elif name == "view" and args[0].size == 1 and (
                        not any(iattrs[1:]) or (operands[0] >= 0 and compact[operands[0]])):
                    # a splat, or any view of one: every element is the same,
                    # kept as one (NumPy broadcasts it)
                    v = args[0].reshape(())
                elif name == "update":
                    base = operands[0]
                    old = args[0]
                    if (base >= 0 and root[base] == base and last[base] == i
                            and ops[base][0] in _FRESH and not compact[base]
                            and old.flags.c_contiguous and old.flags.writeable):
                        new = old  # nothing reads the old value: in place
                    elif (base < 0 and last_in[-base - 1] == i and old.flags.writeable
                          and old.flags.c_contiguous):
                        new = old  # a donated input read no more: in place
                        dirty = True
                    else:
                        new = _fresh_copy(old, _take(chain_dest, i, taken))
                    r = operands[1]
                    vshape = ops[r][4] if r >= 0 else args[1].shape
                    if 0 not in vshape:
                        _strided(new.reshape(-1), iattrs, vshape)[...] = args[1]
                    v = new
                elif name == "copy" and i in chain_dest:
                    v = _fresh_copy(args[0], _take(chain_dest, i, taken))
                elif name == "libcall" and _updates_first_input(sattr):
                    # put, ufunc.at: into the first operand's own buffer where
                    # nothing reads its old value any more (the callee then
                    # skips its copy of it), as a compiled kernel does: `a[idx]
                    # = v` copied all of a, twice (0.10x NumPy for 10^4
                    # indices into 10^5 elements).
                    base, old, out = operands[0], args[0], None
                    # (not where the indices or values are views of the base:
                    # the callee would read what it has already written)
                    if (old.dtype == dt and old.shape == shape and old.flags.c_contiguous
                            and old.flags.writeable
                            and not any(_np.may_share_memory(old, x) for x in args[1:])):
                        if (base >= 0 and root[base] == base and last[base] == i
                                and ops[base][0] in _FRESH and not compact[base]):
                            out = old
                        elif base < 0 and last_in[-base - 1] == i:
                            out = old
                            dirty = True  # a donated input written in place
                    if out is None:
                        v = _libcall(args, iattrs, sattr, shape, dt)
                    else:
                        _cpn.call_library(sattr, out, list(args), list(iattrs))
                        v = out
                else:
                    v = special_names[name](args, iattrs, sattr, shape, dt)
                if type(v) is not ndarray:
                    v = _np.asarray(v)
                if v.dtype != dt:
                    v = v.astype(dt)
                if checks and flags.bits & checks:
                    k = site[name]
                    status[k // 10] |= (flags.bits & checks) << (3 * (k % 10))
                vals[i] = v
                if v.shape != shape:
                    compact[i] = True
                for r in operands:
                    if r >= 0 and last[r] <= i and (seg is None or r not in seg.args):
                        vals[r] = None  # read for the last time
            if seg is not None:
                finish(seg, n)
        values = [vals[o] for o in outputs]
        dirty = True  # destinations written from here
        # A value already in its destination (a donated input updated in place)
        # stays; one that reads a destination's memory otherwise (a view of a
        # donated input) is copied before any destination is written.
        for j, (v, d) in enumerate(zip(values, dests)):
            if _same(v, d):
                values[j] = None
            elif any(_np.may_share_memory(v, e) for e in dests):
                values[j] = _np.array(v, copy=True)
        for v, d in zip(values, dests):
            if v is not None and d.size:
                d[...] = v
        return status
    except Exception as e:
        if not dirty:
            raise  # nothing written: the window is compiled instead
        return e


# Elementwise ops that a run of them computes a block of rows at a time.
_BLOCKED = frozenset(_UFUNC_NAMES) | {"cast", "select", "copy"}


def _blockable(ops, lazy_iota):
    """The ops that may be computed a block of rows at a time (CPN_BASELINE_
    BLOCK): elementwise ops of at least two blocks' elements whose shape has
    more rows than a block holds (a float arange's cast is made whole)."""
    out = set()
    for i, op in enumerate(ops):
        shape = op[4]
        if op[0] not in _BLOCKED or not shape or shape[0] < 2:
            continue
        size = _math.prod(shape)
        if size < 2 * _BLOCK or max(1, _BLOCK * shape[0] // size) >= shape[0]:
            continue
        if op[0] == "cast" and op[1][0] in lazy_iota:
            continue
        out.add(i)
    return out


def _rows_operand(operands, shape, seg, vals, compact, inputs):
    """Whether an op of `shape` reads something it can take a block of rows
    of: a value of the run `seg` (of that shape) or an array with its rows;
    not only splats and broadcast rows (then it is not worth a run). A copy
    reads its one operand at its shape."""
    for r in operands:
        if seg is not None and r in seg.ops:
            if seg.shape == shape:
                return True
            continue
        if r >= 0:
            if compact[r]:
                continue
            a = vals[r]
        else:
            a = inputs[-r - 1]
        if a is not None and a.ndim == len(shape) and a.shape[0] == shape[0]:
            return True
    return False


class _Run:
    """Elementwise ops of one shape computed a block of rows at a time
    (NumPy's histogram computes its bins so, numexpr its expressions): each
    op's temporaries are a block's size, and only the values read after the
    run, or that are outputs, are made whole. Every op of the run is the op
    NumPy's loop computes; its elements are the same."""
    __slots__ = ("shape", "ops", "order", "args", "reads", "skewed")

    def __init__(self, shape):
        self.shape = shape
        self.ops = set()
        self.order = []
        self.args = set()    # the values the run reads (kept until it runs)
        self.reads = set()   # and the values whose memory they are (roots)
        self.skewed = set()  # roots read at other elements than a block's

    def add(self, i, ops, root):
        self.ops.add(i)
        self.order.append(i)
        shape = self.shape
        for r in ops[i][1]:
            if r < 0:
                continue
            self.args.add(r)
            k = root[r]
            self.reads.add(k)
            if k < 0 or k in self.ops:
                continue
            # A block of rows of the op reads the same elements of k's C-order
            # memory: k itself at the run's shape, or a C-order reshape of it.
            view = ops[r]
            if not (r == k and view[4] == shape) and not (
                    view[0] == "view" and view[1][0] == k and view[4] == shape
                    and _math.prod(shape) == _math.prod(ops[k][4])
                    and list(view[2]) == [0] + _c_strides(shape)):
                self.skewed.add(k)

    def overwrites(self, d, into, whole=False):
        """Whether writing output store `d` (an op's `into`) overwrites a
        value made there before the run that the run reads: any such value
        when the op runs before the run, one read at other elements than
        the block's (a shifted view) when the op is of the run."""
        if d is None:
            return False
        reads = self.skewed if whole else self.reads
        return any(k not in self.ops and into.get(k) is d for k in reads)

    def compute(self, pos, ops, inputs, outputs, vals, compact, last, into, chain_dest,
                taken, flags, site, status, threads=1, checking=False):
        """Computes the run before op `pos` (every op before it has run), its
        blocks on up to `threads` threads."""
        members, order, shape = self.ops, self.order, self.shape
        outs = set(outputs)
        # A value is made whole where something after the run reads it.
        whole = {}
        last_in = {}
        for j in order:
            for r in ops[j][1]:
                if r in members:
                    last_in[r] = j
        for j in order:
            if j in outs or last[j] > order[-1] or last_in.get(j, -1) < last[j]:
                dt = _dtype(ops[j][5])
                d = into.get(j)
                if d is not None and d.dtype == dt and not self.overwrites(d, into, True):
                    d = d.reshape(shape)
                elif j in chain_dest:
                    d = _take(chain_dest, j, taken)
                    if d is not None and (d.dtype != dt or d.shape != tuple(shape)):
                        d = None
                else:
                    d = None
                whole[j] = _np.empty(shape, dt) if d is None else d
        n_rows = shape[0]
        if len(whole) == len(order):
            rows = n_rows  # nothing to keep a block's size: one pass per op
        else:
            rows = max(1, _BLOCK * n_rows // _math.prod(shape))
            BLOCKED_RUNS[0] += 1
        blocks = -(-n_rows // rows)
        ctx = (ops, order, members, inputs, vals, compact, whole, last_in, shape, rows, site)
        threads = min(threads, _MAX_THREADS, blocks)
        if threads <= 1:
            for b in range(blocks):
                _block(ctx, b, flags, status)
        else:
            _parallel_blocks(ctx, blocks, threads, flags, status, checking)
        for j, w in whole.items():
            vals[j] = w
            compact[j] = False
        for j in order:
            for r in ops[j][1]:
                if r >= 0 and r not in members and last[r] < pos:
                    vals[r] = None  # read for the last time


def _block(ctx, b, flags, status):
    """Block b (rows [b * rows, (b + 1) * rows)) of a run: each op of it on
    the block's rows, the values kept whole written at those rows."""
    ops, order, members, inputs, vals, compact, whole, last_in, shape, rows, site = ctx
    n_rows, nd = shape[0], len(shape)
    s = b * rows
    e = min(n_rows, s + rows)
    cshape = (e - s,) + tuple(shape[1:])
    cv, owned = {}, set()
    ufuncs = _UFUNCS
    for j in order:
        name, operands, _, _, _, key, checks = ops[j]
        dt = _dtype(key)
        args = []
        for r in operands:
            if r in members:
                a = cv[r]
            else:
                a = vals[r] if r >= 0 else inputs[-r - 1]
                if (r < 0 or not compact[r]) and a.ndim == nd and a.shape[0] == n_rows:
                    a = a[s:e]
            args.append(a)
        flags.bits = 0
        w = whole.get(j)
        target = None if w is None else w[s:e]
        wrote = fresh = False
        f = ufuncs.get(name)
        if f is not None:
            same = all(a.dtype == dt for a in args)
            out = None
            if target is not None and same:
                out, wrote = target, True
            elif same:
                for r in operands:
                    if (r in owned and last_in[r] == j and cv[r].dtype == dt
                            and cv[r].shape == cshape):
                        out = cv[r]
                        break
            v = f(*args) if out is None else f(*args, out=out)
            fresh = not wrote
        elif name == "cast":
            v, fresh = args[0].astype(dt), True
        elif name == "select":
            v, fresh = _np.where(args[0], args[1], args[2]), True
        else:  # copy: the block as it is, unless it is kept
            v = args[0]
            for r in operands:
                owned.discard(r)  # v is its buffer: no later op may take it
        if v.dtype != dt:
            v, fresh = v.astype(dt), True
        if v.shape != cshape:
            v, fresh = _np.broadcast_to(v, cshape), False
        if checks and flags.bits & checks:
            k = site[name]
            status[k // 10] |= (flags.bits & checks) << (3 * (k % 10))
        if target is not None and not wrote:
            target[...] = v
            v, fresh = target, False
        cv[j] = v
        if fresh:
            owned.add(j)
        for r in operands:
            if r in members and last_in[r] == j:
                cv.pop(r, None)  # (an operand may be read twice: x * x)
                owned.discard(r)


# At most this many threads compute a run's blocks: NumPy's loops let the
# GIL go, the Python between them holds it.
_MAX_THREADS = 4


class _Helpers:
    """Daemon threads that run the functions queued to them (the runs'
    blocks): idle in a queue's get, started at the first parallel run."""

    def __init__(self, n):
        import _queue
        import threading
        self.queue = _queue.SimpleQueue()
        self.lock = threading.Lock
        for k in range(n):
            threading.Thread(target=self._serve, daemon=True,
                             name=f"cpnumeric-baseline-{k}").start()

    def _serve(self):
        _cpn.note_helper_thread()  # writes no NumPy array of the program's
        while True:
            fn, box, done = self.queue.get()
            try:
                box.append((True, fn()))
            except BaseException as e:  # given to the caller
                box.append((False, e))
            done.release()

    def submit(self, fn):
        """Queues fn; returns a function that waits for its result (or
        raises its error)."""
        done = self.lock()
        done.acquire()
        box = []
        self.queue.put((fn, box, done))

        def result():
            done.acquire()
            ok, value = box[0]
            if not ok:
                raise value
            return value
        return result


_POOL = [None]


def _reset_pool():
    _POOL[0] = None  # a fork's child has none of the parent's threads


_os.register_at_fork(after_in_child=_reset_pool)


def _parallel_blocks(ctx, blocks, threads, flags, status, checking):
    """The blocks of a run on `threads` threads (this one and pool threads),
    each taking the next block not taken; each thread's fp bits are its own
    (np.errstate is per thread) and are merged at the end."""
    pool = _POOL[0]
    if pool is None:
        pool = _POOL[0] = _Helpers(_MAX_THREADS - 1)
    BLOCKED_RUNS[1] += 1
    taken = _itertools.count()  # next() of it is atomic under the GIL
    stop = []

    def work(fl, st):
        for b in iter(taken.__next__, None):
            if b >= blocks or stop:
                return
            _block(ctx, b, fl, st)

    def helper():
        fl, st = _Flags(), [0] * len(status)
        with (_np.errstate(divide="call", over="call", invalid="call", under="ignore",
                           call=fl) if checking else _np.errstate(all="ignore")):
            work(fl, st)
        return st

    futures = [pool.submit(helper) for _ in range(threads - 1)]
    try:
        work(flags, status)
    finally:
        stop.append(True)  # an error here: the helpers stop at their next block
        # Every helper done before anything returns or raises (they write
        # into output stores), then the first error, if any.
        words, error = [], None
        for result in futures:
            try:
                words.append(result())
            except BaseException as e:
                error = error or e
        if error is not None:
            raise error
    for st in words:
        for k, w in enumerate(st):
            status[k] |= w


def _made_in_outputs(ops, outputs, chain_dest, taken, root, last, lazy_iota):
    """Ops whose values are made in an output's store (op -> the store): an
    output that a ufunc writes into its store, from an operand of its size
    read there for the last time that is a ufunc's result or a float arange
    (`np.arange(n, dtype=float).reshape(r, c) / k`), has that operand made in
    the store too, and so on back along the chain; the ufuncs then run in
    place. NumPy holds the operand and the result at once: here the chain's
    one buffer is the output's."""
    into, outs = {}, set(outputs)
    uses = {}
    for d in chain_dest.values():
        uses[id(d)] = uses.get(id(d), 0) + 1
    for o, d in list(chain_dest.items()):
        if (ops[o][0] not in _UFUNCS or id(d) in taken or uses[id(d)] > 1
                or ops[o][4] != d.shape):
            continue  # (an update chain's store is its own: chain_dest)
        chain, cur = [o], o
        while cur is not None and ops[cur][0] in _UFUNCS:
            cur = _producer(ops, cur, root, last, outs, lazy_iota, d)
            if cur is not None:
                chain.append(cur)
        if len(chain) > 1:
            taken.add(id(d))
            for k in chain:
                chain_dest.pop(k, None)
                into[k] = d
    return into


def _producer(ops, cur, root, last, outs, lazy_iota, d):
    """The operand value of ufunc op `cur` that may live in `cur`'s output
    buffer `d`: read for the last time by `cur`, at the same elements (itself
    at `cur`'s shape, or a C-order reshape of it), by no other operand of
    `cur`, of `d`'s dtype and size, a ufunc's result or a float64 arange; or
    None."""
    operands = ops[cur][1]
    shape = ops[cur][4]
    for r in operands:
        if r < 0:
            continue
        base = root[r]
        if (base < 0 or base in outs or last[base] != cur or last[r] != cur
                or any(x != r and x >= 0 and root[x] == base for x in operands)
                or _dtype(ops[base][5]) != d.dtype):
            continue
        if r != base:
            view = ops[r]
            if (view[0] != "view" or view[1][0] != base or view[4] != shape
                    or _math.prod(shape) != _math.prod(ops[base][4])
                    or list(view[2]) != [0] + _c_strides(shape)):
                continue
        elif ops[base][4] != shape:
            continue
        op = ops[base]
        if op[0] in _UFUNCS:
            return base
        if (op[0] == "cast" and op[1][0] in lazy_iota and d.dtype == _np.float64
                and len(ops[op[1][0]][4]) == 1):
            return base
    return None


def _c_strides(shape):
    strides, step = [], 1
    for e in reversed(shape):
        strides.append(step)
        step *= e
    return strides[::-1]


def _arange_into(a):
    """np.arange(a.size) in float64 array `a` (1-D), a part at a time: no
    temporary of its size."""
    part = 1 << 16
    for s in range(0, a.size, part):
        e = min(a.size, s + part)
        a[s:e] = _np.arange(s, e, dtype=_np.float64)
    return a


def _take(chain_dest, i, taken):
    """The destination op i's fresh buffer may be, if no op has taken it."""
    d = chain_dest.pop(i, None)
    if d is None or id(d) in taken:
        return None
    taken.add(id(d))
    return d


def _fresh_copy(a, dest):
    """A C-ordered copy of `a`: into `dest` (an output's new store) when given."""
    if dest is None:
        return _np.array(a, order="C", copy=True)
    dest[...] = a
    return dest


def _same(a, b):
    """Whether two arrays are the same elements of the same memory."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


_cpn.set_baseline(run)
