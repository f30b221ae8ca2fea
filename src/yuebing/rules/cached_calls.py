"""Calls of ``functools.cache``/``lru_cache`` functions that no derivative can reach: run as a
plain call runs them, the cache consulted and filled.

A cached function is differentiated through the function it wraps, its cache bypassed
(``transform/protocols.py``), whenever a derivative could reach the call: a value taken from the
cache would carry none. None can when no argument holds float data (they are labels: None,
bools, ints, strings, enum members, classes, modules, tuples of them), the wrapped function
captures none (closure cells, default values), and the pass has left none in the state outside
the function that it could read (``outside_state.reached``: a global written, a module-level
list appended to). Then the call is ``cached_call(cached, *args, **kwargs)``: one call of the
cache's wrapper, so its side effects happen once per miss, as without yuebing. scikit-learn's
``check_array`` reaches narwhals' cached plugin discovery (``importlib.metadata.entry_points``)
this way, once per process instead of at every gradient.

The result lives in the cache, outside the function, as a global's value does: a value that
can change in place (a list, an array, an object) has one tangent for the whole pass
(``outside_state.shared``), so what one call's result is given is there when a later call
returns the same object.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent, zero_tangent
from . import outside_state
from ._float_reach import captures_labels, holds_floats, is_label
from .cases import Case, randn
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .objects import _constant as outside_codual
from .second_order import _register
from .util import call_on_primals

GENERATED_FILES = ("<yuebing ", "<plain forward")  # the files of the code yuebing generates (third order's too)


def cached_call(cached: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``cached(*args, **kwargs)``: a cached function's call that no derivative reaches
    (``answered_by_cache``), run with its cache as a plain call runs it."""
    return cached(*args, **kwargs)


def answered_by_cache(cached: functools._lru_cache_wrapper, args: list, kwargs: dict) -> bool:
    """Whether a call of ``cached`` on these primals carries no derivative in or out, so that its
    cache may answer it (see the module docstring)."""
    if not (all(is_label(a) for a in args) and all(is_label(v) for v in kwargs.values())):
        return False
    if not captures_labels(getattr(cached, "__wrapped__", None)):
        return False
    return not holds_floats(outside_state.reached())


def refuse_captured_floats(cached: functools._lru_cache_wrapper) -> None:
    """A cache's wrapper of a nested function of the differentiated code capturing float data of
    its variables is refused: it carries no tangent for what the function captures (the
    derivative would be lost, cached or not). ``functools.lru_cache`` called in differentiated
    code returns such a function itself (``function_wrappers.py``); this catches a wrapper made
    another way (by code yuebing does not differentiate)."""
    inner = getattr(cached, "__wrapped__", None)
    if type(inner) is not types.FunctionType or not inner.__code__.co_filename.startswith(GENERATED_FILES):
        return  # defined outside: its cells are outside state, followed (outside_state.py)
    for name, cell in zip(inner.__code__.co_freevars, inner.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet
            continue
        if not is_label(value):
            raise RuleArgumentError(
                f"{inner.__name__}: yuebing cannot differentiate a functools.cache/lru_cache function defined in "
                f"the differentiated function that captures its variable {name!r}: the cache's wrapper carries no "
                f"derivative of what the function captures. What to do: define {inner.__name__} at module level "
                f"and pass {name} to it as an argument (a float argument is differentiated), or drop the decorator")


# --------------------------------------------------------------------------------------------
# Rules: the result is outside state, read as a global's value is
# --------------------------------------------------------------------------------------------


def _outside_tangent(y: Any, role: str) -> Any:
    """The zero tangent of the cache's ``y`` in ``role``: one for the whole pass when it can
    change in place."""
    def make(v: Any) -> Any:
        try:
            return zero_tangent(v)
        except TypeError:  # metadata without a tangent type (an entry point's mappingproxy...)
            return NoTangent

    return outside_state.shared(role, y, make) if outside_state.is_mutable(y) else make(y)


def _cached_rrule(cached: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    y = call_on_primals(primal(cached), args, kwargs)
    n = 2 + len(args) + len(kwargs)  # cached_call itself, the cached function, its arguments

    def pullback(dy: Any) -> tuple:
        return (NoRData,) * n

    pullback.changes_nothing = True  # type: ignore[attr-defined] - (transform/exceptions.py)
    return outside_codual(y), pullback


def _cached_frule(cached: Any, *args: Any, **kwargs: Any) -> Dual:
    y = call_on_primals(primal(cached), args, kwargs)
    return Dual(y, _outside_tangent(y, "tangent"))


def _cached_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: the cache called once; fdata, tangent and fdata tangent, each one for the
    pass (``outside_state``'s three roles)."""
    y = call_on_primals(args[0][0], tuple(a[0] for a in args[1:]), {k: v[0] for k, v in kwargs.items()})
    fdata = outside_codual(y).fdata
    with outside_state.fdata_tangent_pass():
        fdata_tangent = outside_codual(y).fdata
    n = 1 + len(args) + len(kwargs)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return (NoRData,) * n, (NoRData,) * n

    pullback.changes_nothing = True  # type: ignore[attr-defined]
    return (y, fdata, _outside_tangent(y, "tangent"), fdata_tangent), pullback


_cached_dual.second_order_kind = "zero"  # type: ignore[attr-defined] - (docs/rules.md's class)
register_rrule(cached_call, _cached_rrule)
register_frule(cached_call, _cached_frule)
_register((cached_call,), _cached_dual)


@functools.cache
def _legendre_weight(degree: int) -> float:
    return float(np.polynomial.legendre.leggauss(degree)[1].sum())  # 2.0, from a cached quadrature


@functools.lru_cache(maxsize=4)
def _scaled(x: float, power: int) -> float:
    return x ** power


def _through_caches(x: float) -> float:
    return _legendre_weight(3) * x + _scaled(x, 3) + _scaled(x, 3) * _legendre_weight(4)


CASES = [
    Case(_through_caches, 0.7, name="functools.cache called with labels and with a differentiated float"),
    Case(_through_caches, randn() + 1.5, name="functools.cache called with labels and with a float (random point)"),
]
