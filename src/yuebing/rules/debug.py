"""Debug mode (Mooncake's ``DebugMode``): every registered rule call is checked as it runs.

On with ``yuebing.config(debug=True)`` or the environment variable ``YUEBING_DEBUG=1`` (the
test suite turns it on). Rules run through ``rules/core.py``'s ``run_rrule`` and ``frule``,
which call the checks here; off, that costs one attribute read per rule call. On, it checks:

* **types** (the tangent model, docs/tangents.md): a rule's output fdata has the type its primal
  prescribes (an array of the output's shape for a float array, ``NoFData`` for a float, a list
  for a list...), each rdata its pullback returns has its argument's (a float for a float, never
  an array), and a forward rule's output tangent its output's;
* **no dropped derivative**: an argument that carries float data and receives a nonzero
  cotangent through an output never comes back with ``NoRData`` (reverse), and an output with
  float data never has tangent ``NoTangent`` when an argument has a nonzero tangent (forward),
  unless the function is declared with a zero derivative (``yuebing.nondifferentiable``).

A violation raises ``RuleDebugError`` naming the rule and the argument: a bug in that rule.
"""
from __future__ import annotations

import builtins
import math
import operator
import os
import sys
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from . import core as _core
from .batched import BATCH
from .core import CoDual, Dual, describe_callable

ENABLED = os.environ.get("YUEBING_DEBUG", "") not in ("", "0")


class RuleDebugError(AssertionError):
    """A rule broke the tangent model or dropped a derivative (found by debug mode)."""


def config(debug: bool | None = None) -> dict:
    """Set yuebing's options (those given) and return them all: ``debug`` checks every rule
    call (see ``yuebing.rules.debug``); ``YUEBING_DEBUG=1`` sets it at import."""
    global ENABLED
    if debug is not None:
        ENABLED = bool(debug)
        _switch()
    return {"debug": ENABLED}


def _switch() -> None:
    """Point ``rules.core``'s hook at these checks when debug mode is on (core never imports
    this module: it is the checks' caller, and they use its classes)."""
    _core.DEBUG_CHECKS = sys.modules[__name__] if ENABLED else None


#: Arguments whose derivative a rule gives as zero on purpose (by parameter name, by position,
#: "*" for any, "sole" for a lone positional argument), listed in docs/conventions.md: zero by
#: definition (``copysign``'s sign source,
#: ``arange``'s ``stop``, which sets only the length), zero because the argument was not the one
#: selected (``max``/``min`` of floats, a default not used), and parameters yuebing does not
#: differentiate (the shape parameters of random draws, docs/semantics.md, "Random draws"). (Reductions'
#: ``initial=`` and a norm's ``ord`` are differentiated; where ``ord`` is a discrete choice the
#: rule returns an explicit zero.)
ZERO_ARGUMENTS: dict = {
    math.copysign: ("y", 1), np.copysign: ("y", 1), operator.floordiv: ("*",),
    np.arange: ("stop", "sole"),  # arange(n): the sole argument is the stop
    builtins.max: ("*",), builtins.min: ("*",), getattr: ("default",),
    (dict, "get"): ("default",), (dict, "setdefault"): ("default",), (dict, "pop"): ("default",),
    # random draws are not differentiated in their shape parameters (docs/semantics.md, "Random draws"): reverse
    # mode cannot tell them from constants; forward mode and second order refuse a moving one
    **{target: ("*",) for name in ("noncentral_chisquare", "noncentral_f", "vonmises", "wald")
       for target in ((np.random.Generator, name), (np.random.RandomState, name), getattr(np.random, name))},
}
_ZERO_ARGUMENT_RULES: dict = {}  # id(rule) -> the entry above, built on first use


def _zero_arguments(rule: Any) -> tuple:
    if not _ZERO_ARGUMENT_RULES:
        from .core import FRULES, RRULES

        for target, names in ZERO_ARGUMENTS.items():
            for table in (RRULES, FRULES):
                entry = table.by_method.get(target) if isinstance(target, tuple) else table.by_function.get(target)
                if entry is not None:
                    _ZERO_ARGUMENT_RULES[id(entry[0])] = names
    return _ZERO_ARGUMENT_RULES.get(id(rule), ())


_ZERO_RULES: set = set()  # ids of the rules of functions declared with a zero derivative
_ZERO_SEEN = [0]  # how many declarations _ZERO_RULES was built from


def _declared_zero(fn: Any) -> bool:
    """Whether ``fn`` (a function, or the reverse/forward rule registered for one) is declared
    with a zero derivative."""
    from .core import FRULES, RRULES
    from .declare import ZERO_DERIVATIVE

    if _ZERO_SEEN[0] != len(ZERO_DERIVATIVE):
        _ZERO_SEEN[0] = len(ZERO_DERIVATIVE)
        for target in ZERO_DERIVATIVE:
            for table in (RRULES, FRULES):
                entry = table.by_method.get(target) if isinstance(target, tuple) else table.by_function.get(target)
                if entry is not None:
                    _ZERO_RULES.add(id(entry[0]))
    if id(fn) in _ZERO_RULES:
        return True
    try:
        if fn in ZERO_DERIVATIVE:
            return True
    except TypeError:
        return False
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", None)
    if owner is not None and name is not None:
        return any((tp, name) in ZERO_DERIVATIVE for tp in type(owner).__mro__)
    objclass = getattr(fn, "__objclass__", None)
    return objclass is not None and (objclass, name) in ZERO_DERIVATIVE


def _float_scalar(x: Any) -> bool:
    return isinstance(x, (float, complex, np.inexact)) and not isinstance(x, np.ndarray)


def _float_array(x: Any) -> bool:
    # (np.ma.masked, numpy.ma's "no value", is a 0-d float array that carries no derivative:
    # whatever meets it is masked, so a rule returning it drops nothing)
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc" and x is not np.ma.masked


def _fail(fn: Any, what: str) -> None:
    raise RuleDebugError(f"debug mode: the rule of {describe_callable(fn)} {what} (a bug in that rule: "
                         "please report it with the call that triggered it)")


def _labelled(args: tuple, kwargs: dict, names: list, exempt: tuple) -> list[tuple[str, Any, bool]]:
    """``(label, argument, exempt)`` per argument: exempt when declared in ``ZERO_ARGUMENTS``."""
    found = []
    for k, a in enumerate(args):
        name = names[k] if k < len(names) else None
        label = f"argument {k}" + (f" ({name})" if name else "")
        sole = "sole" in exempt and len(args) == 1
        found.append((label, a, sole or "*" in exempt or k in exempt or name in exempt))
    found += [(f"keyword {k}=", a, "*" in exempt or k in exempt) for k, a in kwargs.items()]
    return found


# --------------------------------------------------------------------------------------------
# Reverse mode
# --------------------------------------------------------------------------------------------


def _active(a: Any) -> bool:
    """Whether a reverse-mode argument carries derivative data into the call."""
    if not isinstance(a, CoDual):
        return False
    x = a.primal
    return _float_scalar(x) or _float_array(x) and a.fdata is not NoFData


def _check_fdata(fn: Any, y: Any, f: Any, inputs_active: bool) -> None:
    if _float_array(y):
        if f is NoFData:
            if inputs_active and not _declared_zero(fn):
                _fail(fn, f"returned a float array of shape {y.shape} without fdata although its arguments carry "
                          "derivatives (the derivative would be dropped)")
        elif type(f) is not np.ndarray or f.shape != y.shape and f.shape != (BATCH.size,) + y.shape:
            _fail(fn, f"returned fdata {type(f).__name__} {getattr(f, 'shape', '')} for an array of shape {y.shape}")
    elif _float_scalar(y) and f is not NoFData and not (isinstance(y, np.generic) and type(f) is np.ndarray and f.ndim == 0):
        # (a NumPy scalar with a 0-d array's fdata is tolerated: NumPy turns 0-d arrays into
        # scalars and back freely, and element reads of a tuple built from 0-d results keep them)
        _fail(fn, f"returned fdata {type(f).__name__} for a number (numbers carry rdata, not fdata)")
    elif type(y) is list and not (f is NoFData or type(f) is list and len(f) == len(y)):
        _fail(fn, f"returned fdata {type(f).__name__} for a list of length {len(y)}")
    elif type(y) is dict and not (f is NoFData or type(f) is dict):
        _fail(fn, f"returned fdata {type(f).__name__} for a dict")


def _cotangent_nonzero(out: CoDual, dy: Any) -> bool:
    if _float_array(out.primal):
        return type(out.fdata) is np.ndarray and bool(np.any(out.fdata))
    if _float_scalar(out.primal):  # (a batched pass's cotangent tangent: one per direction)
        return dy is not NoRData and bool(np.any(dy != 0))
    return False


def _check_rdata(fn: Any, label: str, x: Any, r: Any) -> None:
    if r is NoRData:
        return
    batched = BATCH.size > 0 and type(r) is np.ndarray and r.shape == (BATCH.size,)  # one per direction
    if isinstance(x, (float, np.floating)) and not isinstance(r, (float, int, np.floating, np.integer)) and not batched:
        _fail(fn, f"returned rdata {type(r).__name__} {getattr(r, 'shape', '')} for its float {label} (expected a float)")
    if _float_array(x):
        _fail(fn, f"returned rdata {type(r).__name__} for its array {label} (arrays take their cotangent in fdata)")


def _batched_float_tangent(a: CoDual) -> bool:
    """A float's tangent in a batched second-order pass (an array of one value per direction,
    without fdata), which a rule that only moves values (a tuple's, a list's) returns as rdata,
    as it would the float (``transform/batched_second_order.py``)."""
    x = a.primal
    return BATCH.size > 0 and a.fdata is NoFData and type(x) is np.ndarray and x.shape == (BATCH.size,)


def checked_reverse(fn: Any, names: list, args: tuple, kwargs: dict, out: CoDual,
                    pullback: Callable) -> tuple[CoDual, Callable]:
    """Check a reverse rule's output now, and its pullback when it runs (``fn`` is the rule,
    ``names`` its positional parameters)."""
    labelled = _labelled(args, kwargs, names, _zero_arguments(fn))
    zero = _declared_zero(fn)
    _check_fdata(fn, out.primal, out.fdata, any(_active(a) for _, a, _ in labelled))

    def checked_pullback(dy: Any) -> tuple:
        nonzero = not zero and _cotangent_nonzero(out, dy)
        rdatas = pullback(dy)
        # one rdata per argument received; trailing NoRData for parameters left at their
        # defaults are harmless (the runtime reads one per argument)
        if len(rdatas) < 1 + len(labelled) or any(r is not NoRData for r in rdatas[1 + len(labelled):]):
            _fail(fn, f"pullback returned {len(rdatas)} rdata for {len(labelled)} arguments (expected one more, "
                      "the function's own, first)")
        for (label, a, exempt), r in zip(labelled, rdatas[1:]):
            if not isinstance(a, CoDual) or _batched_float_tangent(a):
                continue
            _check_rdata(fn, label, a.primal, r)
            if nonzero and r is NoRData and _float_scalar(a.primal) and not exempt:
                _fail(fn, f"dropped the derivative of its {label} (a {type(a.primal).__name__}): its pullback "
                          "returned NoRData for a nonzero cotangent. If the derivative is zero by definition, "
                          "declare the function with yuebing.nondifferentiable; otherwise the rule must raise")
        return rdatas

    if getattr(pullback, "changes_nothing", False):  # keep what transform/exceptions.py reads
        checked_pullback.changes_nothing = True  # type: ignore[attr-defined]
    return out, checked_pullback


# --------------------------------------------------------------------------------------------
# Forward mode
# --------------------------------------------------------------------------------------------


def _tangent_nonzero(a: Any) -> bool:
    if not isinstance(a, Dual):
        return False
    t = a.tangent
    if _float_scalar(a.primal):
        return isinstance(t, (float, complex, np.number)) and t != 0
    if _float_array(a.primal):
        return type(t) is np.ndarray and bool(np.any(t))
    return False


def checked_forward(fn: Any, names: list, args: tuple, kwargs: dict, out: Any) -> Any:
    """Check a forward rule's output dual."""
    if not isinstance(out, Dual):
        _fail(fn, f"returned {type(out).__name__} instead of a Dual")
    y, t = out.primal, out.tangent
    if _float_array(y):
        if type(t) is np.ndarray and t.shape != y.shape \
                and not (BATCH.size > 0 and t.shape == (BATCH.size,) + y.shape):  # (one per direction)
            _fail(fn, f"returned a tangent of shape {t.shape} for an array of shape {y.shape}")
        if t is not NoTangent and type(t) is not np.ndarray:
            _fail(fn, f"returned a tangent {type(t).__name__} for an array")
    elif isinstance(y, (float, np.floating)) and t is not NoTangent \
            and not isinstance(t, (float, int, np.floating, np.integer)) \
            and not (BATCH.size > 0 and type(t) is np.ndarray and t.shape == (BATCH.size,)):  # (one per direction)
        _fail(fn, f"returned a tangent {type(t).__name__} {getattr(t, 'shape', '')} for a float (expected a float)")
    if t is NoTangent and (_float_array(y) or _float_scalar(y)) and not _declared_zero(fn):
        moving = [label for label, a, exempt in _labelled(args, kwargs, names, _zero_arguments(fn))
                  if _tangent_nonzero(a) and not exempt]
        if moving:
            _fail(fn, f"returned NoTangent for its {type(y).__name__} result although its {moving[0]} has a "
                      "nonzero tangent (the derivative would be dropped)")
    return out


_switch()
