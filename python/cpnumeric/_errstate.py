"""np.errstate, seterr and friends for compiled code.

NumPy reports divide by zero, overflow and invalid operations of each ufunc
call as its error state says (warn, raise, ignore, call, print, log). The
error state lives in NumPy; these wrappers also tell the engine which
categories to check in the ops recorded next, and flush the pending work at
each change, so that every compiled kernel was recorded under one error
state. Kernels report the checked ops that found errors; the reports are
turned into warnings or FloatingPointError at the next sync point (a value
read back, `synchronize()`, the end of an `errstate` block).
"""

import contextlib
import functools
import os
import sys
import warnings

import numpy as _np

from . import _cpn

# (errstate key, FpError bit, NumPy's message) per category the engine checks;
# underflow is not checked (NumPy ignores it by default).
_CATEGORIES = (("divide", 1, "divide by zero"), ("over", 2, "overflow"),
               ("invalid", 4, "invalid value"))
_ACTIONS = {"ignore": 0, "warn": 1, "raise": 2, "call": 3, "print": 4, "log": 5}
# The package's directory as frames name it (sys.path may hold it unnormalized).
_PACKAGE_DIRS = (os.path.dirname(os.path.abspath(__file__)), os.path.dirname(__file__))


# Whether some category raises: then each op runs as it is recorded, so that
# FloatingPointError comes from the statement that caused it, as in NumPy.
RAISING = [False]

# NumPy's error state lives in a ContextVar (private to NumPy, hence the
# guard): its value changes with every numpy.errstate/seterr, so recording
# compares it with the one the engine was last told (SYNCED) and syncs when
# NumPy's own errstate changed it (e.g. a numpy.errstate block around ours).
try:
    from numpy._core.umath import _extobj_contextvar as EXTOBJ
except ImportError:  # pragma: no cover - another NumPy layout: sync on our calls only
    EXTOBJ = None
SYNCED = [None]


def run_now():
    """Runs the pending work and reports its errors (raise mode)."""
    if not _cpn.capturing():
        _cpn.flush()
        _cpn.wait_all()
        report()


def sync_engine():
    """Tells the engine NumPy's current error state."""
    err = _np.geterr()
    checks = 0
    actions = []
    for key, bit, _ in _CATEGORIES:
        a = _ACTIONS.get(err[key], 1)
        if a:
            checks |= bit
        actions.append(a)
    _cpn.set_fp_state(checks, actions)
    RAISING[0] = 2 in actions
    if EXTOBJ is not None:
        SYNCED[0] = EXTOBJ.get()


def _user_stacklevel():
    """warnings.warn's stacklevel of the first frame outside cpnumeric."""
    level, f = 1, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIRS):
        f = f.f_back
        level += 1
    return level


# Data-dependent warnings of library functions (NumPy's "All-NaN slice
# encountered", ...) whose condition is pending work: (0-d bool array,
# message), warned at the next sync point.
_DEFERRED = []


def warn_if(flag, message):
    """RuntimeWarning(message) when the 0-d boolean array `flag` is true: at
    once when its value is known (an eager array), else at the next sync point
    with the kernels' floating-point errors, so that no sync is added. Not
    reported under @jit (the captured function has no sync points)."""
    value = flag._eager()
    if value is not None:
        if bool(value):
            warnings.warn(message, RuntimeWarning, stacklevel=_user_stacklevel())
    elif not _cpn.capturing():
        _DEFERRED.append((flag, message))


_REGISTRIES = {}


def _warn_at(msg, file, line):
    """A RuntimeWarning attributed to the line that recorded the op (the
    kernel ran later, at a sync point), shown once per line as
    warnings.warn would."""
    module = os.path.splitext(os.path.basename(file))[0] or "<unknown>"
    registry = _REGISTRIES.setdefault(file, {})
    if len(_REGISTRIES) > 1024:
        _REGISTRIES.clear()
    warnings.warn_explicit(msg, RuntimeWarning, file, line, module=module,
                           registry=registry)


def report():
    """Warns or raises for the errors of the kernel runs finished so far, and
    for the pending warnings whose condition holds."""
    reports = _cpn.take_fp_reports()
    for op, bits, a0, a1, a2, file, line in reports:
        for (key, bit, text), action in zip(_CATEGORIES, (a0, a1, a2)):
            if not (bits & bit) or not action:
                continue
            msg = f"{text} encountered in {op}"
            if action == 2:
                raise FloatingPointError(msg)
            if action == 3:
                _np.geterrcall()(text, bit)
            elif action == 4:
                print(f"Warning: {msg}")
            elif action == 5:
                _np.geterrcall().write(f"Warning: {msg}\n")
            elif line:
                _warn_at(msg, file, line)
            else:
                warnings.warn(msg, RuntimeWarning, stacklevel=_user_stacklevel())
    if _DEFERRED:
        pending = list(_DEFERRED)
        _DEFERRED.clear()
        for flag, message in pending:
            if bool(flag._numpy()):
                warnings.warn(message, RuntimeWarning, stacklevel=_user_stacklevel())


class errstate(contextlib.ContextDecorator):
    """numpy.errstate for cpnumeric arrays as well: the pending work is
    flushed on entry and on exit, and errors of the kernels recorded inside
    are reported by the end of the block when any category raises (else at
    the next sync point, with the block's actions)."""

    def __init__(self, *, call=_np._NoValue, all=None, divide=None, over=None,
                 under=None, invalid=None):
        kwargs = dict(all=all, divide=divide, over=over, under=under,
                      invalid=invalid)
        if call is not _np._NoValue:
            kwargs["call"] = call
        self._kwargs = kwargs
        self._states = []

    def __enter__(self):
        _cpn.flush()
        state = _np.errstate(**self._kwargs)
        state.__enter__()
        self._states.append(state)
        sync_engine()
        return self

    def __exit__(self, *exc):
        state = self._states.pop()
        try:
            _cpn.flush()
            if RAISING[0]:
                _cpn.wait_all()
            if exc[0] is None:
                report()
        finally:
            state.__exit__(*exc)
            sync_engine()


def seterr(all=None, divide=None, over=None, under=None, invalid=None):
    """numpy.seterr; the pending work keeps the error state it was recorded
    under."""
    _cpn.flush()
    old = _np.seterr(all=all, divide=divide, over=over, under=under,
                     invalid=invalid)
    sync_engine()
    return old


geterr = _np.geterr
seterrcall = _np.seterrcall
geterrcall = _np.geterrcall


_QUIET = [0]


@contextlib.contextmanager
def quiet():
    """No floating-point error checks in the ops recorded inside: library
    code whose intermediate NaNs and infinities NumPy does not report (the
    small arrays that NumPy computes eagerly inside are quiet too)."""
    _QUIET[0] += 1
    _cpn.set_fp_quiet(True)
    try:
        with _np.errstate(all="ignore"):
            yield
    finally:
        _QUIET[0] -= 1
        if not _QUIET[0]:
            _cpn.set_fp_quiet(False)


def quietly(f):
    """f's ops are recorded under quiet(): a function whose intermediate
    NaNs and infinities NumPy's version does not report."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        with quiet():
            return f(*args, **kwargs)
    return wrapper


NATIVE = ["seterr", "errstate"]
