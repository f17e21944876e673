"""cpnfuzz's shared pieces: test data, the statement classification, the
NumPy-side analysis of a program (which values are exact, the tolerance each
inexact one gets), running a program under a library, and the comparison.

A program is a list of Python statements over `np` (the library under test),
`numpy` (always NumPy) and `D` (test data, below). It is run statement by
statement; each statement's exception (if any) and printed text are recorded,
and at the end every live variable named `a<N>` or `s<N>` is compared.

Exactness. Every input value is a small integer or a multiple of 1/4, so
sums, products, views, comparisons and sorting of them are exact in floating
point whatever the order of the operations. The analysis follows that: a
value is *exact* while it only comes from exact operations on exact values
whose magnitudes stay far below the precision's limit (checked on NumPy's
values); exact values are compared exactly (NaN positions equal, -0.0 ==
0.0). Everything else (division, transcendental functions, means, linear
algebra, ...) is *inexact* and compared within a tolerance:

    |cpn - numpy| <= rtol * (|numpy| + scale)

with rtol by the least precise float dtype the value came from (float16
1e-2, float32 1e-4, float64 1e-9; complex by its component type) and scale
the largest magnitude the value and its inputs had (a product's scale is the
product of its operands' scales). That absorbs summation order, fused
multiply-adds and libm differences but not a wrong element.

A statement is *ill-posed* (the generator never emits it, the reducer never
keeps it) when an inexact value flows into something discontinuous: a
comparison, an integer or bool result (casts, argmax, argsort, masks), floor,
ceil, rint, sign, %, //, or into an operation that amplifies rounding errors
(division, transcendental functions, linear algebra); or when a matrix given
to solve/inv/det/... has a condition number above 1e3.
"""

import ast
import contextlib
import io
import math
import re
import warnings

import numpy

VAR_RE = re.compile(r"^[as]\d+$")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "float16", "float32", "float64", "complex64",
          "complex128"]

RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-9}
# Exact floats stay below this magnitude (multiples of 1/4 need 2 more bits).
EXACT_BOUND = {"float16": 2.0 ** 8, "float32": 2.0 ** 21, "float64": 2.0 ** 50}
PRECISION = {"float16": 0, "float32": 1, "float64": 2}
COND_LIMIT = 1e3

# The data helper. Its source is pasted into reproducers, so it stays short.
D_SOURCE = '''\
def D(seed, shape, dtype, kind=0):
    """Test data: small integers and quarters (kind 0); NaN/inf/-0.0 or
    extreme integers (kind 1); wide magnitudes or full-range integers (2)."""
    r = numpy.random.default_rng(seed)
    t = numpy.dtype(dtype)
    if t.kind == "b":
        return numpy.asarray(r.integers(0, 2, shape)).astype(t)
    if t.kind in "iu":
        i = numpy.iinfo(t)
        if kind == 1:
            v = [x for x in (i.min, i.min + 1, -1, 0, 1, 2, i.max - 1, i.max)
                 if i.min <= x <= i.max]
            return numpy.array(v, dtype=t)[r.integers(0, len(v), shape)]
        if kind == 2:
            return numpy.asarray(r.integers(i.min, i.max, shape, dtype=t,
                                            endpoint=True))
        return numpy.asarray(r.integers(-8 * (t.kind == "i"), 9, shape)).astype(t)
    x = r.integers(-32, 33, shape) / 4
    if t.kind == "c":
        x = x + 1j * (r.integers(-32, 33, shape) / 4)
    if kind == 2:
        x = x * 2.0 ** r.integers(-30, 30, shape)
    x = numpy.asarray(x).astype(t)
    if kind == 1 and x.size:
        s = numpy.array([numpy.nan, numpy.inf, -numpy.inf, -0.0, 0.0]).astype(t)
        m = r.random(shape) < 0.3
        x[m] = s[r.integers(0, 5, int(m.sum()))]
    return x
'''
_d_ns = {"numpy": numpy}
exec(D_SOURCE, _d_ns)
D = _d_ns["D"]


def _overlapping_1d_copy(base, key_text, ns, values):
    """Whether `base[key] = value` is NumPy's forward element copy of a value
    that overlaps the 1-D destination (no temporary: PyArray_AssignArray
    copies first only for several dimensions or strides of opposite sign)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ns["__index_exp"] = numpy.index_exp
            # ast.unparse writes a tuple key with parentheses: "(:, -1)"
            text = key_text[1:-1] if key_text.startswith("(") and \
                key_text.endswith(")") else key_text
            try:
                key = eval(f"__index_exp[{text}]", ns)
            except SyntaxError:
                key = eval(f"__index_exp[{key_text}]", ns)
            dst = base[key]
    except Exception:
        return False
    if not isinstance(dst, numpy.ndarray) or dst.ndim != 1 or dst.size < 2:
        return False
    return any(src.ndim >= 1 and numpy.shares_memory(dst, src)
               and dst.strides[0] * src.strides[-1] >= 0 for src in values)


def _zero_signless(text):
    """A printed value with the sign of its zeros dropped and its spacing
    collapsed: prints compare as values do (-0.0 == 0.0; which zero a max
    of -0.0 and 0.0 picks is its loop's, 960:1440)."""
    return re.sub(r"\s+", " ", re.sub(r"-(0(?:\.0*)?)(?![0-9.eE])", r"\1", text)).strip()


def _both_zeros(a):
    """Whether float array `a` holds both -0.0 and 0.0."""
    if a is None or a.dtype.kind not in "fc":
        return False
    with numpy.errstate(all="ignore"):
        parts = [a.real, a.imag] if a.dtype.kind == "c" else [a]
        for p in parts:
            z = p == 0
            if numpy.any(z & numpy.signbit(p)) and numpy.any(z & ~numpy.signbit(p)):
                return True
    return False


# -- statement classification ------------------------------------------------

# Operations whose float results are not exact, and which amplify rounding
# errors of their operands (they need exact inputs).
HARD = {
    "Div", "Pow", "true_divide", "divide", "power", "float_power", "sqrt",
    "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin",
    "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp",
    "logaddexp2", "deg2rad", "rad2deg", "degrees", "radians", "reciprocal",
    "std", "nanstd", "norm", "solve", "inv", "det", "slogdet", "pinv",
    "lstsq", "eig", "eigh", "eigvals", "eigvalsh", "svd", "cholesky", "qr",
    "matrix_power", "linspace", "logspace", "geomspace", "round", "around",
    "angle", "sinc", "i0", "interp", "cov", "corrcoef", "tensorinv",
    "tensorsolve", "cond", "matrix_rank", "multi_dot",
}
# Exact for real inputs, not for complex ones (|z| is a hypot).
COMPLEX_HARD = {"absolute", "abs", "sign", "fabs", "reciprocal"}
# Inexact, but not amplifying: fine on inexact inputs.
SOFT = {"mean", "average", "var", "nanmean", "nanvar", "median",
        "nanmedian"}
# Discontinuous functions of their float inputs. (maximum, minimum, clip,
# where, sort, max, min, median pick elements: continuous, so fine on inexact
# inputs.)
DISCONT = {
    "FloorDiv", "Mod", "Compare", "IfExp", "BoolOp", "Not", "floor", "ceil",
    "trunc", "rint", "fix", "sign", "heaviside", "copysign", "floor_divide",
    "remainder", "fmod", "divmod", "modf", "nextafter", "spacing", "frexp",
    "ldexp", "signbit", "isnan", "isinf", "isfinite", "isclose", "allclose",
    "array_equal", "nonzero", "argwhere", "flatnonzero", "argmax", "argmin",
    "argsort", "searchsorted", "unique", "count_nonzero", "bool", "int",
    "hash", "nan_to_num", "sort_complex", "any", "all", "logical_and",
    "logical_or", "logical_xor", "logical_not", "greater", "less", "equal",
    "not_equal", "greater_equal", "less_equal",
}
MULT = {"Mult", "MatMult", "Pow", "multiply", "matmul", "dot", "vdot",
        "inner", "outer", "prod", "cumprod", "nanprod", "square", "power",
        "det", "slogdet", "norm", "einsum", "tensordot", "kron", "cross",
        "matrix_power", "multi_dot"}
REDUCE = {"sum", "nansum", "cumsum", "nancumsum", "prod", "cumprod",
          "nanprod", "MatMult", "matmul", "dot", "vdot", "inner", "tensordot",
          "einsum", "trace", "norm", "det", "slogdet", "mean", "average",
          "var", "std", "reduce", "accumulate", "multi_dot", "diff",
          "gradient", "convolve", "correlate", "at",
          # (the NaN-skipping means sum like mean: 870:1652, a float16
          # nanmean whose partial sums overflow)
          "nanmean", "nanvar", "nanstd"}
COND = {"solve", "inv", "det", "slogdet", "pinv", "lstsq", "tensorinv",
        "tensorsolve", "cond", "matrix_power", "cholesky"}
SHAPE_ONLY = {"len", "shape", "ndim", "size", "dtype", "itemsize", "nbytes",
              "str"}
# Sorts, which order equal keys (-0.0 and 0.0) as they like.
SORTS = {"sort", "argsort", "partition", "argpartition", "sort_complex",
         "msort", "lexsort"}
# Functions that order their elements (complex: lexicographically).
LEXICOGRAPHIC = SORTS | {"max", "min", "amax", "amin", "maximum", "minimum",
                         "fmax", "fmin", "median", "nanmedian", "unique",
                         "argmax", "argmin", "clip", "percentile", "quantile",
                         "searchsorted", "ptp"}
# Matrix products, which BLAS computes (complex infinities: kernel-specific).
BLAS_PRODUCTS = {"MatMult", "matmul", "dot", "vdot", "inner", "tensordot",
                 "einsum", "multi_dot", "matrix_power", "kron", "outer"}
# Arrays past this many elements (a broadcast or an outer product of two
# long ones) make the statement ill: the programs stay small and fast.
MAX_ELEMENTS = 1 << 24

# Ops that skip NaNs (a signaling NaN is not skipped by NumPy's).
NAN_SKIPPING = {"fmin", "fmax", "nanmin", "nanmax", "nanargmin", "nanargmax"}
# Variances: squares of deviations from a computed mean.
VARIANCES = {"var", "std", "nanvar", "nanstd"}
# Ops whose result shows a NaN's sign bit, which IEEE leaves to the operation
# that made the NaN (x86's 0/0 sets it; a compiled kernel's NaN need not).
NAN_SIGN = {"signbit", "copysign"}
_QUIET_BIT = {2: 0x200, 4: 0x400000, 8: 1 << 51}


def _complex_inputs(pre_vals):
    """(name, value, array) of the non-empty complex arrays a statement read."""
    for k, v in pre_vals.items():
        a = _as_array(v)
        if a is not None and a.dtype.kind == "c" and a.size:
            yield k, v, a


def _has_signaling_nan(a):
    """Whether the float or complex array a holds a signaling NaN."""
    if a is None or a.dtype.kind not in "fc" or not a.size:
        return False
    if a.dtype.kind == "c":
        return _has_signaling_nan(a.real) or _has_signaling_nan(a.imag)
    nan = numpy.isnan(a)
    if not nan.any():
        return False
    n = a.dtype.itemsize
    bits = numpy.ascontiguousarray(a[nan]).view(f"u{n}").astype(numpy.uint64)
    return bool(((bits & numpy.uint64(_QUIET_BIT[n])) == 0).any())


# Elementwise complex products (NumPy's loops for them differ by layout).
ELEMENT_PRODUCTS = {"Mult", "multiply", "square"}
# Products of many factors: their magnitude bound is max|x| ** count.
PRODUCTS = {"prod", "cumprod", "nanprod", "matrix_power", "Pow", "power",
            "float_power", "accumulate"}
# Statements that convert values to another dtype (a float to an integer out
# of range, NaN or inf is undefined behaviour in C, and NumPy's result is the
# platform's).
CASTS = {"astype", "copyto", "put", "putmask", "fill", "full", "full_like",
         "array", "asarray", "linspace", "arange", "mean", "average",
         "median", "nanmean", "nanmedian", "kw:dtype", "kw:out", "setitem",
         "augassign", "at", "place", "item"}
INT_FROM_FLOAT = {"linspace", "logspace", "geomspace"}
# Arithmetic, whose float results are exact only while the magnitudes stay
# small; everything else exact (creation, views, copies, casts, selection,
# comparisons, sorting) moves or compares values without rounding them.
ARITH = {"Add", "Sub", "Mult", "MatMult", "add", "subtract", "multiply",
         "matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum",
         "sum", "nansum", "cumsum", "nancumsum", "prod", "cumprod", "nanprod",
         "square", "trace", "diff", "reduce", "accumulate", "at", "cross",
         "kron", "convolve", "correlate", "gradient", "ptp"}
# Sums whose float16 partial sums NumPy rounds to float16 as its loops go
# (between the blocks of a multi-axis or strided reduction): where the
# partial sums can pass float16's largest value, the order decides between
# inf, -inf and NaN (cpnumeric sums float16 in float64 and rounds once).
F16_SUMS = REDUCE - PRODUCTS - {"det", "slogdet", "norm", "at"}
# Product reductions, which multiply in an order of their own (NumPy's in
# memory order, with SIMD lanes; cpnumeric's kernels in theirs).
PROD_REDUCTIONS = {"prod", "nanprod", "multiply.reduce", "reduce"}


def _product_order_decides(a):
    """Whether the product of a's elements is 0, finite, inf or NaN as the
    order of its multiplications decides: a running product that overflows
    in some orders only, or before or after a zero (inf * 0: NaN), or that
    underflows to 0 in some orders only (790:4965, 790:4383)."""
    if a is None or a.dtype.kind not in "fc" or not a.size:
        return False
    with numpy.errstate(all="ignore"):
        m = numpy.abs(a.astype(numpy.complex128 if a.dtype.kind == "c"
                               else numpy.float64)).ravel()
        m = m[numpy.isfinite(m)]
        logs = numpy.log(m[m > 0])
    fi = numpy.finfo(a.dtype)
    hi = math.log(float(fi.max)) - 1.0  # a complex part overflows first
    lo = math.log(float(fi.smallest_subnormal))
    up, down = float(logs[logs > 0].sum()), float(logs[logs < 0].sum())
    zero = bool((m == 0).any())
    # (float16: NumPy rounds each partial product to float16, so it can
    # overflow where a wider accumulator does not: 820:19168)
    if a.dtype == numpy.float16 and up > hi:
        return True
    # (complex: once a running product's part overflows, which parts of the
    # next products are inf and which NaN (inf * 0 in ac - bd) depends on
    # the order of the factors: 830:5072)
    if a.dtype.kind == "c" and up > hi:
        return True
    return up > hi and (zero or up + down < hi + 2.0) or \
        down < lo and up + down > lo


_CONST_NAMES = {"np", "numpy", "float", "complex", "int"}


def _constants(tree):
    """The numbers written in a statement (literals, float("nan"),
    np.float32(1.5), ...), evaluated."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Constant, ast.UnaryOp, ast.Call)):
            continue
        if isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or
                not isinstance(node.value, (int, float, complex))):
            continue
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if not names <= _CONST_NAMES or any(
                isinstance(n, (ast.List, ast.Tuple)) for n in ast.walk(node)):
            continue
        try:
            with warnings.catch_warnings(), numpy.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                v = eval(compile(ast.Expression(node), "<const>", "eval"),
                         {"np": numpy, "numpy": numpy, "__builtins__": {
                             "float": float, "complex": complex, "int": int}})
        except Exception:
            continue
        if isinstance(v, (int, float, complex, numpy.number)) and \
                not isinstance(v, bool):
            out.append(v)
    return out


class StmtInfo:
    __slots__ = ("reads", "rebinds", "writes", "ops", "op", "consts", "at_targets",
                 "index_writes", "aug_expr")

    def __init__(self, text):
        tree = ast.parse(text)
        self.reads = set()
        self.rebinds = set()
        self.writes = set()   # arrays written in place (a[i] = v, a += v)
        self.ops = set()
        self.op = None
        self.consts = _constants(tree)
        self.at_targets = set()  # names given to ufunc.at as its array
        # (array written through a subscript, names in its key)
        self.index_writes = []
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg:
                self.ops.add("kw:" + node.arg)
                if node.arg == "out":  # out=a (or a tuple): written in place
                    for n in ast.walk(node.value):
                        if isinstance(n, ast.Name) and VAR_RE.match(n.id):
                            self.writes.add(n.id)
            if isinstance(node, ast.AugAssign):
                self.ops.add("augassign")
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) for t in node.targets):
                self.ops.add("setitem")
            for t in (node.targets if isinstance(node, ast.Assign) else
                      [node.target] if isinstance(node, ast.AugAssign) else []):
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    self.index_writes.append(
                        (t.value.id, {n.id for n in ast.walk(t.slice)
                                      if isinstance(n, ast.Name)},
                         ast.unparse(t.slice),
                         {n.id for n in ast.walk(node.value)
                          if isinstance(n, ast.Name)}))
            if isinstance(node, ast.Name) and VAR_RE.match(node.id):
                if isinstance(node.ctx, ast.Load):
                    self.reads.add(node.id)
            elif isinstance(node, ast.BinOp):
                self.ops.add(type(node.op).__name__)
            elif isinstance(node, ast.AugAssign):
                self.ops.add(type(node.op).__name__)
                base = node.target
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    self.reads.add(base.id)
            elif isinstance(node, ast.Compare):
                self.ops.add("Compare")
            elif isinstance(node, ast.UnaryOp):
                self.ops.add(type(node.op).__name__)
            elif isinstance(node, (ast.IfExp, ast.BoolOp)):
                self.ops.add(type(node).__name__)
            elif isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else (
                    f.attr if isinstance(f, ast.Attribute) else None)
                if name:
                    self.ops.add(name)
                if name == "at" and node.args and isinstance(node.args[0], ast.Name):
                    self.at_targets.add(node.args[0].id)
            elif isinstance(node, ast.Attribute):
                self.ops.add(node.attr)
        body = tree.body[0] if tree.body else None
        if isinstance(body, ast.Assign):
            for t in body.targets:
                for n in ([t] if isinstance(t, ast.Name) else
                          (t.elts if isinstance(t, ast.Tuple) else [])):
                    if isinstance(n, ast.Name):
                        self.rebinds.add(n.id)
            # A subscript target's array is read (the rest of it stays).
            for t in body.targets:
                base = t
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if base is not t and isinstance(base, ast.Name):
                    self.reads.add(base.id)
                    self.writes.add(base.id)
        self.aug_expr = None  # `t op= v` of a subscript t, as `(t) op (v)`
        if isinstance(body, ast.AugAssign):
            base = body.target
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                self.writes.add(base.id)
            if isinstance(body.target, ast.Subscript) and isinstance(base, ast.Name):
                self.aug_expr = (base.id, ast.unparse(ast.BinOp(
                    body.target, body.op, body.value)))
        self.op = stmt_op(body) if body is not None else "?"


def _name_of(node):
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            inner = f.value
            if isinstance(inner, ast.Attribute) and f.attr in (
                    "reduce", "accumulate", "outer", "at", "reduceat"):
                return f"{inner.attr}.{f.attr}"
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
    if isinstance(node, ast.BinOp):
        return type(node.op).__name__
    if isinstance(node, ast.Compare):
        return type(node.ops[0]).__name__
    if isinstance(node, ast.UnaryOp):
        return type(node.op).__name__
    if isinstance(node, ast.Subscript):
        return "getitem[" + _index_kind(node.slice) + "]"
    if isinstance(node, ast.Attribute):
        return "." + node.attr
    if isinstance(node, ast.IfExp):
        return "branch"
    if isinstance(node, ast.Name):
        return "name"
    return type(node).__name__


def _index_kind(sl):
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    kinds = []
    for p in parts:
        if isinstance(p, ast.Slice):
            kinds.append("slice")
        elif isinstance(p, ast.Constant) and p.value is Ellipsis:
            kinds.append("...")
        elif isinstance(p, ast.Constant) and p.value is None:
            kinds.append("None")
        elif isinstance(p, (ast.Constant, ast.UnaryOp)):
            kinds.append("int")
        elif isinstance(p, ast.Compare):
            kinds.append("mask")
        elif isinstance(p, (ast.List, ast.Call)):
            kinds.append("fancy")
        elif isinstance(p, ast.Name):
            kinds.append("array")
        else:
            kinds.append("expr")
    return ",".join(kinds)


def stmt_op(node):
    """A short name for what a statement does, for grouping failures."""
    if isinstance(node, ast.Assign):
        t = node.targets[0]
        if isinstance(t, ast.Subscript):
            return "setitem[" + _index_kind(t.slice) + "]"
        return _name_of(node.value)
    if isinstance(node, ast.AugAssign):
        t = node.target
        pre = ("setitem[" + _index_kind(t.slice) + "]"
               if isinstance(t, ast.Subscript) else "")
        return pre + "i" + type(node.op).__name__
    if isinstance(node, ast.Expr):
        v = node.value
        name = _name_of(v)
        if isinstance(v, ast.Call):
            if any(k.arg == "out" for k in v.keywords):
                return name + "(out=)"
            if name == "print":
                return "print"
        return name
    if isinstance(node, ast.FunctionDef):
        return "jit-body"
    return type(node).__name__


# -- values ------------------------------------------------------------------

def _float_name(dt):
    """The real float dtype name behind a float or complex dtype, or None."""
    dt = numpy.dtype(dt)
    if dt.kind == "f":
        return dt.name
    if dt.kind == "c":
        return {"complex64": "float32", "complex128": "float64"}.get(dt.name)
    return None


def _as_array(v):
    if isinstance(v, (numpy.ndarray, numpy.generic)):
        return numpy.asarray(v)
    if isinstance(v, (bool, int, float, complex)):
        try:
            return numpy.asarray(v)
        except OverflowError:
            return numpy.asarray(v, dtype=object)
    if isinstance(v, (list, tuple)):
        # A regular nested list (tolist() of a big array) at C speed: the
        # walk below took 20 s for 1.2 million elements (750:2995).
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                a = numpy.asarray(v)
            if a.dtype != object:
                return a.ravel()
        except Exception:   # noqa: BLE001 - ragged or out of range: walk
            pass
        flat = []

        def walk(x):
            if isinstance(x, (list, tuple)):
                for y in x:
                    walk(y)
            else:
                flat.append(x)
        walk(v)
        arrs = [_as_array(x) for x in flat]
        arrs = [a for a in arrs if a is not None and a.dtype != object]
        if not arrs:
            return None
        try:
            return numpy.concatenate([a.ravel() for a in arrs])
        except Exception:
            return None
    return None


def _maxabs(a):
    if a is None or a.size == 0 or a.dtype.kind not in "biufc":
        return 0.0
    with numpy.errstate(all="ignore"):
        x = numpy.abs(a.astype(numpy.complex128 if a.dtype.kind == "c"
                               else numpy.float64))
        x = x[numpy.isfinite(x)]
    return float(x.max()) if x.size else 0.0


def _value_kind(v):
    """'int' for bool/int valued, 'float' for float/complex, None otherwise."""
    if isinstance(v, int):   # bool too; a Python int past 64 bits also
        return "int"         # (770:16387: int() of a 2.8e19 float sum)
    a = _as_array(v)
    if a is None:
        return None
    if a.dtype.kind in "biu":
        return "int"
    if a.dtype.kind in "fc":
        return "float"
    return None


def _arith_exact(info, pre_vals, pre_max, pre_size):
    """Whether the arithmetic of a statement that binds nothing (a print of
    `a.sum()`) is exact on its exact float inputs: the same magnitude bound
    as for the values a statement assigns (a complex64 sum of 2**30-sized
    quarters rounds, in an order of each library's own)."""
    if not info.ops & ARITH:
        return True
    arrays = [a for a in (_as_array(v) for v in pre_vals.values())
              if a is not None and a.dtype.kind in "fc"]
    fl = [f for f in (_float_name(a.dtype) for a in arrays) if f]
    if not fl:
        return True
    bound = min(EXACT_BOUND[f] for f in fl)
    return all(_quarter_ok(a, bound) for a in arrays) and \
        _log2_magnitude(info, pre_max, pre_size) <= math.log2(bound)


def _log2_magnitude(info, pre_max, pre_size):
    """log2 of the largest magnitude a statement's arithmetic can reach: the
    product of its operands' and constants' magnitudes (each element's, for
    a product reduction), times the element count of a reduction."""
    prodred = bool(info.ops & PRODUCTS)
    logp = 0.0
    for k in info.reads:
        m = math.log2(max(1.0, pre_max.get(k, 0.0)))
        logp += m * (pre_size.get(k, 1) if prodred else 1)
    for c in info.consts:
        logp += math.log2(max(1.0, min(abs(complex(c)), 2.0 ** 1000)))
    if info.ops & REDUCE:
        logp += math.log2(max([1] + list(pre_size.values())))
    return logp


def _quarter_ok(a, bound):
    if a.dtype.kind not in "fc" or a.size == 0:
        return True
    with numpy.errstate(all="ignore"):
        x = a.astype(numpy.complex128 if a.dtype.kind == "c" else numpy.float64)
        parts = [x.real, x.imag] if a.dtype.kind == "c" else [x]
        for p in parts:
            p = p[numpy.isfinite(p)]
            if p.size and (numpy.abs(p).max() > bound
                           or not numpy.all(p * 4 == numpy.round(p * 4))):
                return False
    return True


def _float_dtypes_of(v):
    a = _as_array(v)
    if a is None:
        return []
    f = _float_name(a.dtype)
    return [f] if f else []


class Meta:
    __slots__ = ("exact", "eps", "scale", "writer", "amp")

    def __init__(self, exact=True, eps=None, scale=0.0, writer=-1, amp=1.0):
        self.exact = exact
        self.eps = eps        # float dtype name whose rtol applies, or None
        self.scale = scale
        self.writer = writer  # index of the last statement that changed it
        self.amp = amp        # rtol multiplier: sqrt(n) per reduction of n

    def as_dict(self):
        return {"exact": self.exact, "eps": self.eps, "scale": self.scale,
                "writer": self.writer, "amp": self.amp}


def _snapshot(v):
    if isinstance(v, numpy.ndarray):
        return (id(v), v.shape, v.dtype.str,
                numpy.ascontiguousarray(v).tobytes())
    if isinstance(v, numpy.generic):
        return (id(v), type(v).__name__, numpy.asarray(v).tobytes())
    if isinstance(v, (list, tuple)) and len(v) > 64:
        a = _as_array(v)   # a long list's repr took 20 s (750:2995)
        if a is not None:
            return (id(v), type(v).__name__, len(v), a.dtype.str, a.tobytes())
    try:
        return (id(v), repr(v))
    except Exception:
        return (id(v),)


def is_var(name):
    return bool(VAR_RE.match(name))


# -- running statements --------------------------------------------------------

def base_namespace(lib):
    return {"np": lib, "numpy": numpy, "D": D,
            "jit": getattr(lib, "jit", None) or (lambda f: f)}


def exc_info(e):
    t = type(e)
    line = None
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<stmt"):
            line = tb.tb_lineno
        tb = tb.tb_next
    return {"type": t.__name__,
            "mro": [f"{c.__module__}.{c.__qualname__}" for c in t.__mro__],
            "msg": str(e)[:300], "line": line}


def public_base(info):
    """The first class of a NumPy exception's MRO a user can name
    (a builtin or numpy.exceptions/numpy.linalg): _UFuncNoLoopError and
    the other private UFuncTypeError subclasses are TypeErrors."""
    for name in info["mro"]:
        mod, _, qual = name.rpartition(".")
        if qual.startswith("_"):
            continue
        if mod == "builtins" or mod in ("numpy.exceptions", "numpy.linalg"):
            return name
    return info["mro"][0]


def exceptions_match(np_info, cp_info):
    """cpnumeric's exception is acceptable for NumPy's when it is an instance
    of NumPy's public class; numpy.exceptions.AxisError (a ValueError and an
    IndexError) may be matched by either base."""
    base = public_base(np_info)
    if base in cp_info["mro"]:
        return True
    if base == "numpy.exceptions.AxisError":
        return ("builtins.ValueError" in cp_info["mro"]
                or "builtins.IndexError" in cp_info["mro"])
    return False


def run_statement(code, ns):
    """Run one compiled statement; returns (exception info or None, stdout)."""
    buf = io.StringIO()
    err = None
    with contextlib.redirect_stdout(buf):
        try:
            exec(code, ns)
        except Exception as e:   # noqa: BLE001 - every exception is data
            err = exc_info(e)
    return err, buf.getvalue()


def errstate_for(lib, prog):
    if prog.get("errstate", "ignore") == "ignore":
        return lib.errstate(all="ignore")
    return contextlib.nullcontext()


def jit_source(prog):
    """The jit mode's function: the body statements of a program in a
    function decorated with `jit`, called with the setup's variables."""
    setup = prog["stmts"][:prog["jit_from"]]
    body = prog["stmts"][prog["jit_from"]:]
    args = []
    for s in setup:
        for n in sorted(StmtInfo(s).rebinds):
            if n.startswith("a") and n not in args:
                args.append(n)
    assigned = list(args)
    for s in body:
        for n in sorted(StmtInfo(s).rebinds):
            if n not in assigned:
                assigned.append(n)
    lines = ["@jit", f"def body({', '.join(args)}):"]
    lines += ["    " + s for s in body] or ["    pass"]
    rets = ", ".join(assigned)
    lines.append(f"    return ({rets}{',' if len(assigned) == 1 else ''})")
    call = f"({rets}{',' if len(assigned) == 1 else ''}) = body({', '.join(args)})"
    if not assigned:
        call = f"body({', '.join(args)})"
    return "\n".join(lines), call


def program_units(prog):
    """The units the program runs as: (index, text) per statement, and in jit
    mode one unit for the function and its call (index jit_from)."""
    if prog.get("jit_from") is None:
        return list(enumerate(prog["stmts"]))
    units = list(enumerate(prog["stmts"][:prog["jit_from"]]))
    fn, call = jit_source(prog)
    units.append((prog["jit_from"], fn + "\n" + call))
    return units


def run_program(prog, lib, progress=None, cpn_ndarray=None):
    """Run a program under `lib`; returns (outcomes, values, stdout per unit).
    outcomes: {index: exception info}; values: {name: encoded value}."""
    ns = base_namespace(lib)
    outcomes = {}
    prints = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with errstate_for(lib, prog):
            for i, text in program_units(prog):
                if progress:
                    progress(i)
                try:
                    code = compile(text, f"<stmt {i}>", "exec")
                except SyntaxError as e:
                    outcomes[i] = exc_info(e)
                    continue
                err, out = run_statement(code, ns)
                if err:
                    outcomes[i] = err
                if out:
                    prints[i] = out
            if progress:
                progress(-1)
            values = {}
            for name in sorted(ns):
                if is_var(name):
                    try:
                        values[name] = encode(ns[name], cpn_ndarray)
                    except Exception as e:   # noqa: BLE001
                        values[name] = ("error", exc_info(e))
    return outcomes, values, prints


def encode(v, cpn_ndarray=None):
    """A picklable description of a value (cpnumeric arrays materialized)."""
    if isinstance(v, numpy.ndarray):
        return ("ndarray", numpy.array(v, copy=True))
    if cpn_ndarray is not None and isinstance(v, cpn_ndarray):
        a = numpy.asarray(v)
        return ("cpnarray", numpy.array(a, copy=True))
    if isinstance(v, numpy.generic):
        return ("generic", v)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float, complex)):
        return (type(v).__name__, v)
    if isinstance(v, str):
        return ("str", v)
    if isinstance(v, (list, tuple)):
        return ("list" if isinstance(v, list) else "tuple",
                [encode(x, cpn_ndarray) for x in v])
    if isinstance(v, numpy.dtype):
        return ("dtype", str(v))
    if isinstance(v, dict):
        return ("dict", repr(sorted(v.items(), key=repr))[:300])
    return ("other", type(v).__name__)


# -- the NumPy-side analysis ------------------------------------------------------

class Analysis:
    """Runs a program under NumPy statement by statement, recording each
    statement's outcome and the exactness, tolerance and scale of every
    variable, and whether the program is ill-posed (see the module doc)."""

    def __init__(self, prog_header):
        self.header = prog_header
        self.ns = base_namespace(numpy)
        self.meta = {}
        self.outcomes = {}
        self.prints = {}
        self.print_exact = {}
        self.ill = None     # (index, reason) of the first ill-posed statement
        self.n = 0
        self._es = None
        self._wc = None

    def __enter__(self):
        self._wc = warnings.catch_warnings()
        self._wc.__enter__()
        warnings.simplefilter("ignore")
        self._es = errstate_for(numpy, self.header)
        self._es.__enter__()
        return self

    def __exit__(self, *exc):
        self._es.__exit__(*exc)
        self._wc.__exit__(*exc)

    def step(self, text):
        """Run one statement; returns (exception info or None, ill reason)."""
        i = self.n
        self.n += 1
        info = StmtInfo(text)
        before = {k: _snapshot(v) for k, v in self.ns.items() if is_var(k)}
        pre_vals = {k: self.ns[k] for k in info.reads if k in self.ns}
        pre_max = {k: _maxabs(_as_array(v)) for k, v in pre_vals.items()}
        pre_size = {k: (_as_array(v).size if _as_array(v) is not None else 1)
                    for k, v in pre_vals.items()}
        # The condition numbers the linear algebra would see.
        ill = None
        if info.ops & COND:
            for k, v in pre_vals.items():
                if isinstance(v, numpy.ndarray) and v.ndim >= 2 and \
                        v.shape[-1] == v.shape[-2] and v.size and \
                        v.dtype.kind in "biufc":
                    with numpy.errstate(all="ignore"):
                        try:
                            c = numpy.linalg.cond(v.astype(
                                numpy.complex128 if v.dtype.kind == "c"
                                else numpy.float64))
                            c = float(numpy.max(c))
                        except Exception:
                            c = math.inf
                    if not (c <= COND_LIMIT):
                        ill = f"condition number {c:.3g} of {k}"
            for k, v in pre_vals.items():
                a = _as_array(v)
                if ill is None and a is not None and a.dtype.kind in "fc" and \
                        a.size and not numpy.isfinite(a).all():
                    # a right-hand side of inf or NaN: which entries come
                    # out inf and which NaN is the elimination's order
                    # (LAPACK's on A, cpnumeric's LU of A^T; 800:4132)
                    ill = f"non-finite {k} given to linear algebra"
        cond_ill = ill
        for k, names, key_text, value_names in info.index_writes:
            v = self.ns.get(k)
            if isinstance(v, numpy.ndarray) and v.size and any(
                    isinstance(self.ns.get(n), numpy.ndarray) and
                    numpy.shares_memory(v, self.ns[n]) for n in value_names):
                try:
                    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        key = eval(key_text, dict(self.ns))
                except Exception:
                    key = None
                keys = key if isinstance(key, tuple) else (key,)
                if any(isinstance(x, numpy.ndarray) and x.dtype == numpy.bool_
                       for x in keys):
                    # NumPy's boolean assignment does not copy a value in
                    # the memory it writes (a6[m] = a6[::-1] reads values
                    # already written); cpnumeric's reads it first
                    ill = f"a mask assignment into {k} of a value in its memory"
                elif _overlapping_1d_copy(v, key_text, dict(self.ns), [
                        self.ns[n] for n in value_names
                        if isinstance(self.ns.get(n), numpy.ndarray)]):
                    # NumPy copies a value that overlaps a 1-D destination
                    # element by element, forward, unless their strides
                    # have opposite signs (PyArray_AssignArray): a0[:, -1]
                    # = a0[-2] reads an element it has just written (880:
                    # 1926); cpnumeric reads the value first
                    ill = f"a 1-D assignment into {k} of a value in its memory"
            for n in names:
                key = self.ns.get(n)
                if n != k and isinstance(v, numpy.ndarray) and \
                        isinstance(key, numpy.ndarray) and key.dtype.kind in "biu" \
                        and key.size and numpy.shares_memory(v, key):
                    # an index array in the memory it indexes for writing:
                    # NumPy's loop reads it as it writes (the order of its
                    # iteration decides), cpnumeric's reads it first
                    ill = f"index {n} shares memory with {k}, written through it"
        if info.aug_expr is not None and ill is None:
            k, expr = info.aug_expr
            v = self.ns.get(k)
            if isinstance(v, numpy.ndarray) and v.dtype.kind in "iu":
                try:
                    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        x = numpy.asarray(eval(expr, dict(self.ns)))
                except Exception:
                    x = None
                if x is not None and x.dtype.kind in "fc" and x.size:
                    it = numpy.iinfo(v.dtype)
                    with numpy.errstate(all="ignore"):
                        x = numpy.real(x).astype(numpy.float64).ravel()
                        bad = not numpy.all(numpy.isfinite(x)) or \
                            float(numpy.trunc(x).min()) < it.min or \
                            float(numpy.trunc(x).max()) > it.max
                    if bad:
                        # `a[k] /= b` of integers: a float result written
                        # back by setitem, NaN or out of range (undefined)
                        ill = f"float to {it.dtype} conversion out of range into {k}"
        for k in info.at_targets:
            v = self.ns.get(k)
            if isinstance(v, numpy.ndarray) and not v.flags.writeable:
                # NumPy's ufunc.at writes into read-only arrays (its check is
                # missing: `a.imag` of a real array); cpnumeric raises, as
                # NumPy's setitem and in-place operators do
                ill = f"ufunc.at into the read-only array {k}"
        code = compile(text, f"<stmt {i}>", "exec")
        err, out = run_statement(code, self.ns)
        if err:
            self.outcomes[i] = err
        if out:
            self.prints[i] = out
        for k, v in self.ns.items():
            if is_var(k) and isinstance(v, numpy.ndarray) and v.size > MAX_ELEMENTS:
                # (the analysis' float64 copies of it would not fit either)
                ill = f"{k} has {v.size} elements, more than the fuzzer's bound"
                if self.ill is None:
                    self.ill = (i, ill)
                return err, ill
        reads_meta = [self.meta[k] for k in info.reads if k in self.meta]
        inputs_exact = all(m.exact for m in reads_meta)
        hard = bool(info.ops & HARD) or (
            bool(info.ops & COMPLEX_HARD) and any(
                _as_array(v) is not None and _as_array(v).dtype.kind == "c"
                for v in pre_vals.values()))
        soft = bool(info.ops & SOFT)
        discont = bool(info.ops & DISCONT)
        self.print_exact[i] = inputs_exact and not hard and not soft and \
            _arith_exact(info, pre_vals, pre_max, pre_size)
        changed = []
        for k, v in self.ns.items():
            if not is_var(k):
                continue
            # A statement that raised did not rebind its targets: only the
            # values it wrote into before raising changed.
            rebound = k in info.rebinds and err is None
            if k not in before or rebound or _snapshot(v) != before[k]:
                changed.append(k)
        shape_only = (info.ops & SHAPE_ONLY) and not discont
        if err is None and ill is None and not inputs_exact and not shape_only:
            if hard or discont:
                ill = "inexact input to " + ",".join(
                    sorted(info.ops & (HARD | DISCONT)))
            else:
                for k in changed:
                    if _value_kind(self.ns[k]) == "int":
                        ill = f"integer/bool result {k} from inexact input"
                        break
        if err is None and ill is None and inputs_exact and not shape_only and \
                info.ops & ARITH and not _arith_exact(info, pre_vals, pre_max, pre_size):
            # exact inputs, but arithmetic that rounds (`int(a.sum())` of a
            # complex64 array of 2**30-sized values): an integer made of it
            # depends on the summation order
            for k in changed:
                if _value_kind(self.ns[k]) == "int":
                    ill = f"integer/bool result {k} of rounded arithmetic"
                    break
        if err is None and ill is None and not inputs_exact and \
                info.ops & LEXICOGRAPHIC and any(
                    _as_array(v) is not None and _as_array(v).dtype.kind == "c"
                    for v in pre_vals.values()):
            # complex order is lexicographic: a rounding of nearly equal real
            # parts swaps elements whose imaginary parts differ by anything
            ill = "inexact complex values ordered"
        if err is None and ill is None and (info.ops & BLAS_PRODUCTS):
            for k, v, a in _complex_inputs(pre_vals):
                with numpy.errstate(all="ignore"):
                    m = float(numpy.nanmax(numpy.abs(a))) if \
                        not numpy.isnan(a).all() else 0.0
                big = m > 0 and math.isfinite(m) and 2 * math.log(m) + \
                    math.log(a.size) > math.log(float(numpy.finfo(a.dtype).max))
                if big or not numpy.isfinite(a).all():
                    # inf * 0 parts (also of products that overflow): NaN
                    # or inf as the BLAS kernel computes
                    ill = f"non-finite complex {k} in a matrix product"
                    break
            for k, v in pre_vals.items():
                a = _as_array(v)
                if ill is None and a is not None and a.dtype.kind == "f" and a.size \
                        and not numpy.isfinite(a).all():
                    # NaN or inf times 0 in a product: BLAS kernels skip
                    # zero factors or not (NumPy's 0 where cpnumeric's NaN;
                    # 820:2957)
                    ill = f"non-finite {k} in a matrix product"
                elif ill is None and a is not None and a.dtype.kind == "f" and a.size:
                    m = float(numpy.max(numpy.abs(a)))
                    if m > 0 and 2 * math.log(m) + math.log(a.size) > \
                            math.log(float(numpy.finfo(a.dtype).max)):
                        # products that overflow: +inf and -inf terms give NaN,
                        # or inf where the kernel accumulates with FMA (the
                        # exact product added to an infinite sum); NumPy's a @
                        # a.T is OpenBLAS's syrk, cpnumeric's a gemm (910:5272)
                        ill = f"{k}'s products overflow in a matrix product"
            if ill is None and any(True for _ in _complex_inputs(pre_vals)):
                # a real operand's inf times a complex one's parts (promoted:
                # inf * 0j parts; 720:11256)
                for k, v in pre_vals.items():
                    a = _as_array(v)
                    if a is not None and a.dtype.kind == "f" and a.size and \
                            not numpy.isfinite(a).all():
                        ill = f"non-finite {k} times complex values in a matrix product"
                        break
        if err is None and ill is None and (info.ops & ELEMENT_PRODUCTS):
            for k, v, a in _complex_inputs(pre_vals):
                with numpy.errstate(all="ignore"):
                    parts = numpy.abs(numpy.concatenate([a.real.ravel(), a.imag.ravel()]))
                    m = float(parts[numpy.isfinite(parts)].max(initial=0.0))
                big = m > 0 and 2 * math.log(m) > math.log(float(numpy.finfo(a.dtype).max))
                strided = "[" in text or not (isinstance(v, numpy.ndarray) and
                                              v.flags.c_contiguous)
                if big and strided:
                    # NumPy's complex multiply loops differ where a part's
                    # products overflow: its SIMD loop (contiguous operands,
                    # which cpnumeric's kernels follow) fuses ac - bd, its
                    # loop for other strides does not (-inf or NaN)
                    ill = f"complex products of {k} overflow on strided operands"
                    break
        if err is None and ill is None and (info.ops & NAN_SKIPPING):
            for k, v in pre_vals.items():
                if _has_signaling_nan(_as_array(v)):
                    # NumPy's float16 casts can leave a signaling NaN
                    # (0x7c01); its fmin/fmax return NaN for one, IEEE's
                    # quiet NaN is skipped
                    ill = f"{k} holds a signaling NaN, given to a NaN-skipping op"
                    break
        if err is None and ill is None and info.ops & {"power", "Pow", "iPow", "float_power"}:
            for k, v, a in _complex_inputs(pre_vals):
                with numpy.errstate(all="ignore"):
                    if (numpy.isnan(a.real) | numpy.isnan(a.imag)).any() and \
                            (numpy.isinf(a.real) | numpy.isinf(a.imag)).any():
                        # exp(w log z) of NaN and infinite parts: C99's
                        # complex product recovers infinities, NumPy's does
                        # not; which of 0, inf or NaN comes out is the
                        # formula's (720:4579: (inf+nanj)**(-inf+nanj))
                        ill = f"a complex power of {k} holding NaN and infinite parts"
                        break
        if err is None and ill is None and (info.ops & VARIANCES):
            for k, v in pre_vals.items():
                a = _as_array(v)
                if a is None or a.dtype.kind not in "fc" or not a.size:
                    continue
                with numpy.errstate(all="ignore"):
                    m = float(numpy.nanmax(numpy.abs(a), initial=0.0)) \
                        if not numpy.isnan(a).all() else 0.0
                fi = numpy.finfo(a.dtype)
                if math.isfinite(m) and float(fi.eps) * m > math.sqrt(float(fi.max)):
                    # a deviation of one rounding of the mean squares to
                    # inf: NumPy's 0 or inf depends on its summation order
                    # (jit 710:1999: std of 1100 x 1e300)
                    ill = f"the squared deviations of {k} can overflow"
                    break
        if err is None and ill is None and (info.ops & NAN_SIGN):
            for k, v in pre_vals.items():
                a = _as_array(v)
                if a is not None and a.dtype.kind in "fc" and numpy.isnan(a).any():
                    ill = f"the sign of a NaN in {k} (600:4367)"
                    break
        if err is None and ill is None and (info.ops & F16_SUMS):
            # float16 values, or any summed in float16 (dtype='float16':
            # 800:4501, int16 extremes summed to inf by NumPy)
            f16_acc = "kw:dtype" in info.ops and ("float16" in text or "half" in text)
            for k, v in pre_vals.items():
                a = _as_array(v)
                if a is None or not a.size or not (
                        a.dtype == numpy.float16 or f16_acc and a.dtype.kind in "biuf"):
                    continue
                with numpy.errstate(all="ignore"):
                    mags = numpy.abs(a.astype(numpy.float64))
                    total = float(mags[numpy.isfinite(mags)].sum())
                if total > float(numpy.finfo(numpy.float16).max):
                    ill = f"float16 sum over {k} whose partial sums can overflow (the order decides)"
                    break
        if err is None and ill is None and (info.ops & PROD_REDUCTIONS):
            for k, v in pre_vals.items():
                if _product_order_decides(_as_array(v)):
                    ill = f"a product over {k} leaves the range in some orders only"
                    break
        if err is None and ill is None and (info.ops & CASTS):
            ill = self._bad_cast(info, changed, pre_vals)
        if err is None and ill is None and (soft or info.ops & INT_FROM_FLOAT):
            for k in changed:
                if _value_kind(self.ns[k]) == "int" and \
                        numpy.asarray(self.ns[k]).dtype.kind in "iu":
                    ill = f"integer result {k} of an inexact operation"
                    break
        if err is None and ill is None:
            for k in changed:
                # a byte other than 0 or 1 written into a bool array through
                # an integer view: cpnumeric's bools are truth values
                # (docs/numpy-api.md), NumPy keeps the byte. The bool array
                # may be k itself or only the base of the view k (its name
                # rebound since: `v = b.view('uint8'); b = ...; v += 4`).
                a = self.ns[k]
                while isinstance(a, numpy.ndarray):
                    if a.dtype == numpy.bool_ and a.size and \
                            a.view(numpy.uint8).max() > 1:
                        ill = f"bool array {k} (or its base) holds a byte other than 0 and 1"
                        break
                    a = a.base
                if ill is not None:
                    break
        if err is None and ill is None and info.ops & SORTS:
            for k in changed:
                a = self.ns[k]
                if not isinstance(a, numpy.ndarray) or a.dtype.kind in "fc":
                    continue
                def _zeros_or_nan(v):
                    with numpy.errstate(all="ignore"):
                        return _both_zeros(v) or bool(numpy.isnan(v).any())
                if any(isinstance(v, numpy.ndarray) and v.dtype.kind in "fc"
                       and numpy.may_share_memory(v, a) and _zeros_or_nan(v)
                       for v in self.ns.values()):
                    # an in-place sort of -0.0 and 0.0 or of NaNs seen through
                    # a view of another dtype: which zero lands first, and
                    # the NaN's bits (NumPy's float16 sort writes 0x7c01),
                    # are the sort's (740:10984, float16 seen as int16)
                    ill = f"{k} views the bits of a sort's zeros or NaNs"
                    break
        if err is None and ill is None:
            for k in changed:
                a = _as_array(self.ns[k])
                if isinstance(self.ns[k], numpy.ndarray) and a.dtype.kind not in "biufc":
                    ill = f"{k} has dtype {a.dtype} (cpnumeric holds numeric and bool only)"
                    break
        if err is not None:
            ill = None
            if cond_ill and err.get("type") == "LinAlgError":
                # whether LAPACK meets an exact zero pivot in a matrix of
                # NaN/inf or of a huge condition number depends on its
                # order of operations (600:3467: NumPy's sgesv raised
                # "Singular matrix")
                ill = cond_ill
            # NumPy's in-place loops stop at the error: what they wrote
            # before it (a0 **= a0, the first elements) is theirs alone.
            if any(k in before for k in changed):
                ill = "a statement that raised wrote part of its result"
            if err.get("type") == "TypeError" and "not 'complex'" in err.get("msg", "") \
                    and info.ops & {"float", "int"}:
                # a documented difference (docs/numpy-api.md): a 0-d array
                # stands for the scalar a reduction returns, whose float()
                # warns and drops the imaginary part
                ill = "float()/int() of a complex 0-d array"
        # Metadata of what changed.
        read_scales = sorted(m.scale for m in reads_meta)
        mult = bool(info.ops & MULT)
        red = bool(info.ops & REDUCE)
        arith = bool(info.ops & ARITH)
        if mult:
            with numpy.errstate(all="ignore"):
                cs = [abs(complex(c)) for c in info.consts]
            read_scales = sorted(read_scales + [c for c in cs if math.isfinite(c)])
        for k in changed:
            v = self.ns[k]
            a = _as_array(v)
            own = _float_dtypes_of(v)
            if hard or soft:
                # NumPy's float loop for small integer inputs is float16
                # (bool, int8, uint8) or float32 (int16, uint16), also when
                # out= or a cast widens the result afterwards
                for x in pre_vals.values():
                    xa = _as_array(x)
                    if xa is not None and xa.dtype.kind in "biu" and xa.dtype.itemsize <= 2:
                        own = own + ["float16" if xa.dtype.itemsize == 1 else "float32"]
            eps_c = own + [m.eps for m in reads_meta if m.eps]
            eps = min(eps_c, key=lambda d: PRECISION[d]) if eps_c else None
            scale = max([_maxabs(a)] + read_scales[-1:])
            if mult and len(read_scales) >= 2:
                scale = max(scale, read_scales[-1] * read_scales[-2])
            if info.ops & {"var", "nanvar"} and read_scales:
                # a variance is a mean of squares: its rounding is the
                # square's (1e76 values: deviations of 1e60, squares 1e120)
                scale = max(scale, min(read_scales[-1], 1e150) ** 2)
            if _value_kind(v) == "float":
                fl = [_float_name(numpy.asarray(x).dtype) for x in [v]
                      if _as_array(x) is not None] + [m.eps for m in reads_meta
                                                     if m.eps]
                fl = [f for f in fl if f]
                bound = min(EXACT_BOUND[f] for f in fl) if fl else 2.0 ** 50
                logp = _log2_magnitude(info, pre_max, pre_size)
                exact = inputs_exact and not hard and not soft
                if exact and arith:
                    # the inputs too: 0.1f * 0.1f summed 50 times may land
                    # on a quarter (0.5) in one order and not in another
                    # (700:5931)
                    exact = _quarter_ok(a, bound) and logp <= math.log2(bound) \
                        and all(_quarter_ok(x, bound) for x in
                                (_as_array(v) for v in pre_vals.values())
                                if x is not None)
                if exact and info.ops & SORTS and _both_zeros(a):
                    # -0.0 and 0.0 are equal keys: a sort leaves them in
                    # an order of its own (NumPy's and cpnumeric's differ)
                    exact = False
                if exact and "unique" in info.ops and any(
                        _both_zeros(_as_array(x)) for x in pre_vals.values()):
                    # unique keeps the first of its sort's equal keys: of
                    # -0.0 and 0.0, either (600:7342)
                    exact = False
            else:
                exact = True    # integers are exact (inexact inputs: ill-posed)
            amp = max([1.0] + [m.amp for m in reads_meta])
            if red:
                amp *= math.sqrt(max([1] + list(pre_size.values())))
            if k not in info.rebinds and k in self.meta:
                old = self.meta[k]
                exact = exact and old.exact
                scale = max(scale, old.scale)
                amp = max(amp, old.amp)
                if old.eps and (eps is None or PRECISION[old.eps] < PRECISION[eps]):
                    eps = old.eps
            self.meta[k] = Meta(exact, eps, scale, i, amp)
        for k in list(self.meta):
            if k not in self.ns:
                del self.meta[k]
        if ill and self.ill is None:
            self.ill = (i, ill)
        return err, ill

    def _bad_cast(self, info, changed, pre_vals):
        """A float value, NaN or inf converted to an integer variable that
        cannot hold it (undefined in C; NumPy gives the platform's value)."""
        # What the statement wrote, also where NumPy's value did not change
        # (-inf into an int16 zero gives 0 on x86: still undefined).
        written = list(changed) + [k for k in info.writes
                                   if k in self.ns and k not in changed]
        targets = [k for k in written if isinstance(self.ns[k], (numpy.ndarray, numpy.generic))
                   and numpy.asarray(self.ns[k]).dtype.kind in "iu"]
        if not targets:
            return None
        sources = [numpy.asarray(v) for v in pre_vals.values()
                   if _as_array(v) is not None and _as_array(v).dtype.kind in "fc"]
        sources += [numpy.asarray(c) for c in info.consts
                    if isinstance(c, (float, complex, numpy.floating,
                                      numpy.complexfloating))]
        if "kw:casting" in info.ops and sources:
            return "a float result cast unsafely into an integer output"
        if "kw:casting" in info.ops:
            # integer operands whose loop is a float one (uint64 with a
            # signed integer: float64; 840:11494)
            types = [numpy.asarray(v).dtype for v in pre_vals.values()
                     if _as_array(v) is not None]
            types += [numpy.asarray(c).dtype for c in info.consts
                      if isinstance(c, numpy.generic)]
            try:
                loop = numpy.result_type(*types) if types else None
            except TypeError:
                loop = None
            if loop is not None and loop.kind in "fc":
                return "a float result cast unsafely into an integer output"
        if info.ops & HARD and info.ops & {"kw:casting", "kw:out", "kw:dtype"}:
            return "a float-valued operation written into an integer output"
        for k in targets:
            it = numpy.iinfo(numpy.asarray(self.ns[k]).dtype)
            for src in sources:
                with numpy.errstate(all="ignore"):
                    x = numpy.real(src).astype(numpy.float64).ravel()
                    if x.size and (not numpy.all(numpy.isfinite(x)) or
                                   # Python compares float and int exactly
                                   # (2.0**64 > 2**64 - 1; NumPy: equal)
                                   float(numpy.trunc(x).min()) < it.min or
                                   float(numpy.trunc(x).max()) > it.max):
                        return f"float to {it.dtype} conversion out of range into {k}"
        return None

    def aliases(self):
        """For each array variable, the others that may share its memory."""
        arrs = {k: v for k, v in self.ns.items() if is_var(k)
                and isinstance(v, numpy.ndarray)}
        out = {k: set() for k in arrs}
        names = sorted(arrs)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if numpy.may_share_memory(arrs[a], arrs[b]):
                    out[a].add(b)
                    out[b].add(a)
        return out

    def values(self):
        out = {}
        for k in sorted(self.ns):
            if is_var(k):
                try:
                    out[k] = encode(self.ns[k])
                except Exception as e:   # noqa: BLE001
                    out[k] = ("error", exc_info(e))
        return out


def analyze(prog):
    """The NumPy run of a whole program: an Analysis after its statements."""
    an = Analysis(prog)
    with an:
        for text in prog["stmts"]:
            an.step(text)
    return an


# -- comparison ------------------------------------------------------------------

def _fmt(a, limit=6):
    try:
        if isinstance(a, numpy.ndarray) and a.size > limit:
            return numpy.array2string(a.ravel()[:limit], threshold=limit)[:-1] + " ...]"
        return repr(a)[:200]
    except Exception:
        return "?"


def compare_arrays(an, ac, meta):
    """None when equal under the rules, else a description."""
    if an.shape != ac.shape:
        return "shape", f"shape {an.shape} vs {ac.shape}"
    if an.dtype != ac.dtype:
        return "dtype", f"dtype {an.dtype} vs {ac.dtype}"
    if an.dtype.kind not in "fc":
        if an.dtype.kind in "biu":
            bad = an != ac
        else:
            try:
                bad = numpy.asarray(an != ac)
            except Exception:
                return None
        if numpy.any(bad):
            idx = numpy.argwhere(numpy.asarray(bad))
            first = tuple(int(x) for x in idx[0]) if idx.size else ()
            return "value", (f"{int(numpy.sum(bad))} of {an.size} differ, first at "
                             f"{first}: numpy {_fmt(an[first])} cpn {_fmt(ac[first])}")
        return None
    with numpy.errstate(all="ignore"):
        nn, nc = numpy.isnan(an), numpy.isnan(ac)
        bad = nn != nc
        both = ~(nn | nc)
        if meta is None or meta.get("exact", True):
            bad |= both & (an != ac)
        else:
            rtol = RTOL.get(meta.get("eps") or _float_name(an.dtype), 1e-9) * \
                meta.get("amp", 1.0)
            inf = numpy.isinf(an) | numpy.isinf(ac)
            if an.dtype.kind == "c":
                # a complex value with an infinite part: that part equal,
                # the other within the tolerance of its own size (750:12049:
                # sinh's inf-1.2700801652893627j against ...363j)
                for pn, pc in ((an.real, ac.real), (an.imag, ac.imag)):
                    pinf = numpy.isinf(pn) | numpy.isinf(pc)
                    d = numpy.abs(pn.astype(numpy.float64) - pc.astype(numpy.float64))
                    ok = ~pinf & (d <= rtol * (numpy.abs(pn.astype(numpy.float64))
                                               + meta.get("scale", 0.0)))
                    bad |= both & inf & ~(ok | (pinf & (pn == pc)))
            else:
                bad |= both & inf & (an != ac)
            fin = both & ~inf
            # (real values compared in float64: a (3600, 3600) result's
            # complex128 copies took the worker past its memory limit, 850:1663)
            wide = numpy.complex128 if an.dtype.kind == "c" or ac.dtype.kind == "c" \
                else numpy.float64
            diff = numpy.abs(an.astype(wide) - ac.astype(wide))
            lim = rtol * (numpy.abs(an.astype(wide)) + meta.get("scale", 0.0))
            bad |= fin & ~(diff <= lim)
    if numpy.any(bad):
        idx = numpy.argwhere(bad)
        first = tuple(int(x) for x in idx[0]) if idx.size else ()
        tol = "exact" if (meta is None or meta.get("exact", True)) else \
            f"rtol {RTOL.get(meta.get('eps') or _float_name(an.dtype), 1e-9) * meta.get('amp', 1.0):.3g}, scale {meta.get('scale', 0):.3g}"
        return "value", (f"{int(numpy.sum(bad))} of {an.size} differ ({tol}), first at "
                         f"{first}: numpy {_fmt(an[first])} cpn {_fmt(ac[first])}")
    return None


def compare_values(vn, vc, meta):
    """Compare two encoded values; None or (kind, detail)."""
    kn, kc = vn[0], vc[0]
    if kc == "error":
        return "cp-raised-read", f"{vc[1]['type']}: {vc[1]['msg'][:160]}"
    if kn == "error":
        return None
    if kn == "ndarray":
        if kc not in ("ndarray", "cpnarray"):
            return "type", f"numpy ndarray vs {kc}"
        return compare_arrays(vn[1], vc[1], meta)
    if kn == "generic":
        if kc == "generic":
            # numpy.uint64 and numpy.ulonglong are one dtype on LP64 (equal
            # dtypes, two scalar types): which one a result has depends on
            # the history of the process, in NumPy as in cpnumeric.
            if numpy.dtype(type(vn[1])) != numpy.dtype(type(vc[1])):
                return "dtype", f"{type(vn[1]).__name__} vs {type(vc[1]).__name__}"
        elif kc == "cpnarray":
            if vc[1].shape != ():
                return "type", f"numpy scalar vs array of shape {vc[1].shape}"
        else:
            return "type", f"numpy scalar {type(vn[1]).__name__} vs {kc}"
        return compare_arrays(numpy.asarray(vn[1]), numpy.asarray(vc[1]), meta)
    if kn in ("bool", "int", "float", "complex"):
        if kc != kn:
            return "type", f"python {kn} vs {kc}"
        if kn in ("bool", "int"):
            return None if vn[1] == vc[1] else ("value", f"{vn[1]!r} vs {vc[1]!r}")
        return compare_arrays(numpy.asarray(vn[1]), numpy.asarray(vc[1]), meta)
    if kn in ("list", "tuple"):
        if kc != kn:
            return "type", f"{kn} vs {kc}"
        if len(vn[1]) != len(vc[1]):
            return "shape", f"{kn} of {len(vn[1])} vs {len(vc[1])}"
        if len(vn[1]) > 64:
            # tolist() of a big array: its numbers compared as one array
            # (element by element took 21 s for 1.2 million; 750:2995)
            ln, lc = _scalar_leaves(vn), _scalar_leaves(vc)
            if ln and lc and ln[0] == lc[0] and len(ln[1]) == 1 and ln[1] == lc[1]:
                kind = next(iter(ln[1]))
                if kind in ("bool", "int"):
                    return None if ln[2] == lc[2] else ("value", f"{kn} of {kind}s differ")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return compare_arrays(numpy.asarray(ln[2]), numpy.asarray(lc[2]), meta)
        for j, (x, y) in enumerate(zip(vn[1], vc[1])):
            r = compare_values(x, y, meta)
            if r:
                return r[0], f"[{j}] {r[1]}"
        return None
    if vn != vc:
        return "value", f"{vn!r:.100} vs {vc!r:.100}"
    return None


def _scalar_leaves(enc):
    """An encoded list of lists of Python numbers as (its structure, the
    kinds of its numbers, the numbers in order); None when it holds
    anything else."""
    shape, kinds, vals = [], set(), []
    stack = [enc]
    while stack:
        kind, v = stack.pop()
        if kind in ("list", "tuple"):
            shape.append((kind, len(v)))
            stack.extend(reversed(v))
        elif kind in ("bool", "int", "float", "complex"):
            kinds.add(kind)
            vals.append(v)
        else:
            return None
    return shape, kinds, vals


def compare(prog, an, cp_outcomes, cp_values, cp_prints):
    """Divergences between the NumPy analysis and cpnumeric's run, in
    statement order: dicts with cat, index, op, var, detail."""
    divs = []
    units = dict(program_units(prog))
    ops = {i: StmtInfo(t).op if "\n" not in t else "jit-body"
           for i, t in units.items()}

    def op_of(i, exc=None):
        if jit_from is not None and i == jit_from and exc and exc.get("line"):
            j = jit_from + exc["line"] - 3     # the body's first line is line 3
            if jit_from <= j < len(prog["stmts"]):
                return StmtInfo(prog["stmts"][j]).op
        if i in ops:
            return ops[i]
        return StmtInfo(prog["stmts"][i]).op if 0 <= i < len(prog["stmts"]) else "?"
    jit_from = prog.get("jit_from")
    np_out = dict(an.outcomes)
    if jit_from is not None:
        body_errs = [k for k in np_out if k >= jit_from]
        if body_errs:
            np_out = {k: v for k, v in np_out.items() if k < jit_from}
            np_out[jit_from] = an.outcomes[min(body_errs)]
    for i in sorted(set(np_out) | set(cp_outcomes)):
        e_n, e_c = np_out.get(i), cp_outcomes.get(i)
        if e_n and not e_c:
            divs.append({"cat": "np-raised", "index": i, "op": op_of(i),
                         "detail": f"NumPy raised {e_n['type']}: {e_n['msg'][:120]}; cpnumeric did not",
                         "np_exc": e_n["type"]})
        elif e_c and not e_n:
            divs.append({"cat": "cp-raised", "index": i, "op": op_of(i, e_c),
                         "detail": f"{e_c['type']}: {e_c['msg'][:200]}",
                         "cp_exc": e_c["type"], "cp_msg": e_c["msg"]})
        elif e_n and e_c and not exceptions_match(e_n, e_c):
            divs.append({"cat": "exc-type", "index": i, "op": op_of(i, e_c),
                         "detail": f"NumPy {e_n['type']} ({e_n['msg'][:80]}), cpnumeric {e_c['type']} ({e_c['msg'][:120]})",
                         "np_exc": e_n["type"], "cp_exc": e_c["type"], "cp_msg": e_c["msg"]})
    if jit_from is None:
        for i, text in an.prints.items():
            if not an.print_exact.get(i):
                continue
            if (_zero_signless(cp_prints.get(i, "")) != _zero_signless(text)
                    and i not in cp_outcomes):
                divs.append({"cat": "print", "index": i, "op": op_of(i),
                             "detail": f"numpy {text[:100]!r} vs cpn {cp_prints.get(i, '')[:100]!r}"})
    np_values = an.values()
    for name in sorted(set(np_values) | set(cp_values)):
        meta = an.meta.get(name)
        md = meta.as_dict() if meta else None
        w = meta.writer if meta else -1
        if jit_from is not None and w >= jit_from:
            widx = jit_from
        else:
            widx = w
        if name not in cp_values:
            divs.append({"cat": "missing", "index": widx, "op": op_of(w), "var": name,
                         "detail": f"{name} undefined in cpnumeric's run"})
            continue
        if name not in np_values:
            divs.append({"cat": "extra", "index": 10 ** 6, "op": "?", "var": name,
                         "detail": f"{name} defined in cpnumeric's run only"})
            continue
        r = compare_values(np_values[name], cp_values[name], md)
        if r:
            d = {"cat": r[0], "index": widx, "op": op_of(w), "var": name,
                 "detail": f"{name}: {r[1]}"}
            if r[0] == "cp-raised-read":
                d["cp_exc"] = cp_values[name][1]["type"]
                d["cp_msg"] = cp_values[name][1]["msg"]
            divs.append(d)
    # A value that differs after a statement that raised in one library
    # only, and that names the variable, is that statement's doing: order
    # it after that exception.
    excs = [d for d in divs if d["cat"] in ("np-raised", "cp-raised", "exc-type")]
    aliases = an.aliases() if excs else {}
    for d in divs:
        d["_key"] = d["index"]
        if d.get("var") and d["cat"] not in ("np-raised", "cp-raised", "exc-type"):
            names = {d["var"]} | aliases.get(d["var"], set())
            for e in excs:
                if e["index"] >= d["index"] and e["index"] < len(prog["stmts"]):
                    text = units.get(e["index"], "")
                    if any(re.search(r"\b" + n + r"\b", text) for n in names):
                        d["_key"] = e["index"] + 0.5
                        break
    divs.sort(key=lambda d: (d["_key"], d["cat"] not in ("np-raised", "cp-raised", "exc-type")))
    for d in divs:
        del d["_key"]
    return divs


_NUM = re.compile(r"0x[0-9a-f]+|\d+")


def signature(d):
    """What groups failures of one kind: the category, the statement's op,
    the exception types and the message without its numbers."""
    parts = [d["cat"], d.get("op", "?")]
    if d.get("np_exc"):
        parts.append("np:" + d["np_exc"])
    if d.get("cp_exc"):
        parts.append("cp:" + d["cp_exc"])
        parts.append(_NUM.sub("N", d.get("cp_msg", ""))[:60])
    if d["cat"] in ("dtype", "type", "shape"):
        parts.append(_NUM.sub("N", d["detail"].split(": ", 1)[-1])[:60])
    if d.get("signal"):
        parts.append(d["signal"])
    return " | ".join(parts)
