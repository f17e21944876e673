"""The small-array eager path for library functions (issue 22).

A NumPy function called on small arrays costs NumPy 1-5 us; traced, the same
call costs cpnumeric 5-100 us (recording, a window, a flush when its result is
read), and a program of small arrays is then many times slower than NumPy. So
a cpnumeric function whose array arguments are all eager (cpnumeric arrays
below CPN_EAGER_THRESHOLD elements, held as NumPy arrays) or small NumPy arrays
calls NumPy's function on their elements, as the C ufunc path already does for
ufuncs, and wraps what it returns:

- an array that lies in the memory of an eager argument (a view NumPy made of
  it) becomes the cpnumeric view of that argument's base (same offset and
  strides), and `out=` is returned as the cpnumeric array that was passed;
- an array that lies in a NumPy argument's memory is copied (cpnumeric arrays
  never alias NumPy's);
- a fresh array becomes an eager array below the threshold; a larger one
  (a broadcast copied, a concatenation of small arrays) is discarded and the
  traced path makes it, where it fuses with what reads it;
- NumPy scalars, Python values and tuples of these come back as NumPy gives
  them (NumPy's semantics: `a.sum()` of a small array is a NumPy scalar).

Calls with a traced argument, a callable, a large NumPy array or long list,
inside @jit tracing, or with CPN_EAGER_THRESHOLD=0, take cpnumeric's traced
path. The calls are counted in stats()' `eager_calls` and are `eager` events
of a profile.
"""

import math as _math
import types as _types

import numpy as _np

from . import _core, _cpn, _jit, _profile

ndarray = _core.ndarray
_NPND = _np.ndarray
_EAGER = _core.EAGER
_TRACING = _jit.TRACING
_PROFILING = _profile.SESSIONS
_SCALARS = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis),
                      _np.dtype, type))
_CALLABLES = (_types.FunctionType, _types.LambdaType, _types.MethodType,
              _types.BuiltinFunctionType, _types.GeneratorType)
_SUPPORTED = _core.is_supported
_wrap_eager = _core.ndarray._from_eager
_from_node = _core.ndarray._from_node

# NumPy calls made by this module (stats()' eager_calls adds the C path's).
CALLS = [0]


class _Traced(Exception):
    """An argument or result that the eager path does not take."""


def _root(a):
    while True:
        b = a.base
        if not isinstance(b, _NPND):
            return a
        a = b


class _Args:
    """The arguments of one call with cpnumeric arrays replaced by NumPy views
    of their eager elements (_Traced when one is not eager)."""
    __slots__ = ("views", "budget", "fresh")

    def __init__(self):
        self.views = []  # (cpnumeric array or None, its NumPy view)
        self.budget = _EAGER["threshold"]
        self.fresh = None  # id of an array NumPy made -> it held eager

    def unwrap(self, x):
        t = type(x)
        if t is ndarray:
            b = x._base
            if b.np is None:
                raise _Traced
            v = b.np if x._whole else x._np_view(b.np)
            if x._readonly:
                v = v.view()
                v.flags.writeable = False
            self.views.append((x, v))
            return v
        if t in _SCALARS or isinstance(x, _np.generic):
            return x
        if t is list or t is tuple:
            self.budget -= len(x)
            if self.budget < 0:
                raise _Traced
            return t([self.unwrap(e) for e in x])
        if isinstance(x, ndarray):  # a subclass
            raise _Traced
        if isinstance(x, _NPND):
            self.budget -= x.size
            if self.budget < 0 or x.dtype.kind == "O" or t is not _NPND:
                raise _Traced
            self.views.append((None, x))
            return x
        if isinstance(x, _CALLABLES) or callable(x) and not isinstance(x, _np.ufunc):
            raise _Traced  # a function NumPy would call with NumPy arrays
        if hasattr(x, "__array_function__") or hasattr(x, "__array__"):
            raise _Traced  # another array type: the general path converts it
        return x

    def wrap(self, r):
        t = type(r)
        if t is _NPND:
            return self._wrap_array(r)
        if isinstance(r, _np.generic) or t in _SCALARS:
            return r
        if t is tuple or t is list:
            return t([self.wrap(e) for e in r])
        if isinstance(r, tuple) and hasattr(r, "_fields"):  # a namedtuple
            return t(*(self.wrap(e) for e in r))
        if isinstance(r, _NPND):
            raise _Traced  # a subclass (a matrix, a masked array)
        return r

    def _wrap_array(self, r):
        for x, v in self.views:
            if r is v and x is not None:
                return x  # out=, or an argument returned: the array passed
        if r.size:
            root = _root(r)
            for x, v in self.views:
                if root is _root(v):
                    if x is None:
                        r = r.copy()  # a view of the caller's NumPy array
                        break
                    return _view_of(x, r)
        if not _SUPPORTED(r.dtype) or r.size >= _EAGER["threshold"]:
            # A large result of small arguments (a broadcast copied, a
            # concatenation): cpnumeric's path makes it, traced, where it
            # fuses with what reads it (a copy into a store would cost more).
            raise _Traced
        if r.base is not None:
            v = self._fresh_view(r)
            if v is not None:
                return v
        w = _wrap_eager(r)
        if not r.size and not r.flags.writeable:
            # an empty view of a read-only argument (its elements are a
            # stand-in, not the base's memory): read-only as NumPy's view is
            w = w._view(w._shape, w._strides, w._offset, readonly=True)
        return w

    def _fresh_view(self, r):
        """r, a view of an array NumPy made in this call (argwhere's
        transpose, nonzero's columns of one (count, ndim) array), as the
        same view of that array held eager: its layout is NumPy's, so what
        copies or aliases (a reshape of it) does as NumPy's; None when its
        root cannot be held (not C-contiguous and owning, another dtype)."""
        root = _root(r)
        if (type(root) is not _NPND or root.dtype != r.dtype
                or not root.flags.c_contiguous or not root.flags.owndata
                or root.size >= _EAGER["threshold"]):
            return None
        if self.fresh is None:
            self.fresh = {}
        x = self.fresh.get(id(root))
        if x is None:
            x = self.fresh[id(root)] = _wrap_eager(root)
        return _cpn.eager_view_of(x, r)


def _view_of(x, r):
    """The cpnumeric view of x's base that the NumPy array r (in x's base's
    memory) is."""
    v = _cpn.eager_view_of(x, r)
    if v is None:
        raise _Traced
    return v


def _call(npf, args, kwargs):
    """npf on the eager elements of args, wrapped; _Traced before npf runs
    when the call is not eager."""
    if not _EAGER["threshold"] or (_TRACING["function"] is not None and _jit.tracing_here()):
        raise _Traced
    a = _Args()
    unwrap = a.unwrap
    uargs = [unwrap(x) for x in args]
    if kwargs:
        kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    if not a.views:
        raise _Traced
    CALLS[0] += 1
    if _PROFILING[0]:
        start = _cpn.profile_now_us()
        try:
            r = npf(*uargs, **kwargs)
        finally:
            _cpn.profile_complete(getattr(npf, "__name__", "call"), "eager", start)
    else:
        r = npf(*uargs, **kwargs)
    if type(r) is _NPND and r.base is None:  # the common case: a fresh array
        if (r.size < _EAGER["threshold"] and _SUPPORTED(r.dtype)
                and all(r is not v for _, v in a.views)):
            return _wrap_eager(r)
    elif isinstance(r, _np.generic):
        return r
    try:
        return a.wrap(r)
    except _Traced:
        if "out" in kwargs:  # NumPy has written: its result as NumPy gave it
            return r
        raise


# The common calls run in C (python/src/fast.cpp, eager_call): eager arrays,
# small NumPy arrays, scalars and sequences of them, a fresh small result
# wrapped there; any other result comes to _finish. DECLINED: C called
# nothing (_call then decides, with NumPy inputs' aliasing and read-only
# arrays).
DECLINED = object()
# The traced path makes the result: an argument is traced, or NumPy was called
# and its result is not one to hold eagerly.
TRACED = object()
_eager_call = _cpn.eager_call


def _finish(r, views, out):
    a = _Args()
    a.views = views
    try:
        return a.wrap(r)
    except _Traced:
        return r if out else TRACED


# NumPy's functions that are the method of their first argument (fromnumeric's
# _wrapfunc), and sort/partition, a copy sorted in place: called as methods on
# a NumPy array (python/src/eager.cpp, callAsMethod), which skips the
# function's dispatch (np.take of 1000 elements 1.4 us, a.take 0.8 us).
# Entries: (method name, None), or for the copied ones the position of their
# axis argument (axis=None flattens first: NumPy's function then).
_METHODS = {getattr(_np, name): (name, None) for name in (
    "take", "put", "cumsum", "cumprod", "argsort", "argpartition", "searchsorted",
    "nonzero", "argmax", "argmin")}
_METHODS.update({_np.sort: ("sort", 1), _np.partition: ("partition", 2)})

_cpn.eager_init(DECLINED, _finish, _PROFILING, _METHODS, TRACED)


# ndarray's methods take the same path in front of NumPy's method of their
# name: _core._eager_method.
def function(npf, cpf):
    """cpf (cpnumeric's function) with the eager path of NumPy's npf in front."""
    def f(*args, **kwargs):
        r = _eager_call(npf, args, kwargs)
        if r is DECLINED:
            try:
                return _call(npf, args, kwargs)
            except _Traced:
                return cpf(*args, **kwargs)
        return cpf(*args, **kwargs) if r is TRACED else r
    return _front(_named(f, npf, cpf), npf, None, cpf)


def _named(f, npf, cpf):
    """f, standing in for cpf: its name, docstring and __wrapped__."""
    f.__name__ = f.__qualname__ = getattr(cpf, "__name__", getattr(npf, "__name__", "f"))
    f.__doc__ = getattr(cpf, "__doc__", None)
    f.__wrapped__ = cpf
    return f


def _front(f, npf, kind, cpf=None):
    """f behind its C front (_cpn.EagerFunction): NumPy's npf on small eager
    operands without a Python frame (eager_call; creation_call with `kind`),
    cpf at once when eager_call finds a traced argument (as f would), f for
    what it declines. Named as f."""
    g = _cpn.EagerFunction(npf, f, kind, cpf)
    for name in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
        setattr(g, name, getattr(f, name))
    return g


def _real(x):
    return type(x) in (int, float, bool) or isinstance(x, (_np.integer, _np.floating))


def _arange_size(start=None, stop=None, step=None, *a, **k):
    if stop is None:
        start, stop = 0, start
    elif start is None:
        start = 0
    step = 1 if step is None else step
    if not (_real(start) and _real(stop) and _real(step)) or not step:
        return None
    n = (float(stop) - float(start)) / float(step)
    return max(int(_math.ceil(n)), 0) if _math.isfinite(n) else None


def _space_size(start, stop, num=50, *a, **k):
    if not (_real(start) and _real(stop)) or type(num) is not int:
        return None
    return num


def _eye_size(N, M=None, *a, **k):
    if type(N) is not int or M is not None and type(M) is not int:
        return None
    return N * (N if M is None else M)


def _shape_size(shape, *a, **k):
    if type(shape) is int:
        return shape
    if type(shape) is tuple and all(type(d) is int for d in shape):
        n = 1
        for d in shape:
            n *= d
        return n
    return None


# Creation functions: the size of what they make (None: not known here),
# and the kind of size python/src/eager.cpp's creation_call computes for
# positional Python numbers (its common case, without a Python call).
CREATION = {"arange": (_arange_size, 1), "linspace": (_space_size, 2),
            "logspace": (_space_size, 2), "geomspace": (_space_size, 2),
            "eye": (_eye_size, 3), "tri": (_eye_size, 3),
            "identity": (lambda n, *a, **k: _eye_size(n), 4),
            "zeros": (_shape_size, 0), "ones": (_shape_size, 0), "empty": (_shape_size, 0)}
_creation_call = _cpn.creation_call


def creation(npf, cpf, size_of, kind):
    """cpf, a creation function, with NumPy's npf in front when what it makes
    is small (size_of's count of its elements below the threshold)."""
    def f(*args, **kwargs):
        r = _creation_call(npf, kind, args, kwargs)
        if r is not DECLINED:
            return r
        t = _EAGER["threshold"]
        if t and (_TRACING["function"] is None or not _jit.tracing_here()) and not kwargs.get("like"):
            try:
                n = size_of(*args, **kwargs)
            except TypeError:
                n = None
            if n is not None and 0 <= n < t:
                CALLS[0] += 1
                r = npf(*args, **kwargs)
                if type(r) is _NPND and _SUPPORTED(r.dtype):
                    return _wrap_eager(r)
                if type(r) is tuple and type(r[0]) is _NPND and _SUPPORTED(r[0].dtype):
                    return (_wrap_eager(r[0]),) + r[1:]  # linspace's retstep
        return cpf(*args, **kwargs)
    return _front(_named(f, npf, cpf), npf, kind)


# Functions that stay on cpnumeric's path: conversions and views that it makes
# as fast itself, functions whose result can be much larger than their
# arguments (NumPy would do large work), and cpnumeric's own.
_KEEP = frozenset("""
    array asarray asanyarray ascontiguousarray asnumpy
    moveaxis rollaxis expand_dims
    broadcast_to broadcast_arrays matrix_transpose permute_dims atleast_1d
    atleast_2d atleast_3d real imag
    outer kron tile repeat meshgrid indices pad resize diagflat vander
    tri tril_indices triu_indices mask_indices diag_indices
    arange linspace logspace geomspace eye identity zeros ones empty full
    fromfunction apply_along_axis apply_over_axes piecewise
    shape ndim size isscalar iterable result_type can_cast promote_types
    issubdtype broadcast_shapes may_share_memory
""".split())

def install(namespace, npmod, names):
    """Puts the eager path in front of each function of `names` in
    `namespace` (a module dict) that NumPy's module `npmod` also has."""
    for name in names:
        cpf = namespace.get(name)
        # A function may name the NumPy code its eager path runs, where
        # NumPy's own function is slower than another NumPy call that gives
        # the same result (_sorting._numpy_unique).
        npf = getattr(cpf, "_eager_numpy", None) or getattr(npmod, name, None)
        if name in CREATION and cpf is not None and npf is not None:
            namespace[name] = creation(npf, cpf, *CREATION[name])
            namespace[name].__module__ = namespace.get("__name__")
            continue
        if name in _KEEP or name.startswith("_"):
            continue
        if (cpf is None or npf is None or not callable(npf) or isinstance(cpf, type)
                or isinstance(npf, type) or not callable(cpf)
                or hasattr(cpf, "nin") or getattr(cpf, "__wrapped__", None) is not None):
            continue
        namespace[name] = function(npf, cpf)
        namespace[name].__module__ = namespace.get("__name__")
