"""Outside state: the mutable objects a differentiated function reaches without receiving or
creating them -- module globals, module and class attributes, the cells of closures made outside.

Within one top-level call (a gradient, a JVP, a Hessian-vector product) each such object has one
tangent per role (``"fdata"``, ``"tangent"``, and second order's ``"fdata_tangent"``), so what one
read writes into it (``LOG.append(x)``, ``mod.W[0] = x``, ``push(v)`` of a closure made at module
level) is there at the next read (``sum(LOG)``), in whatever function either happens. The API
layer opens a scope around each top-level pass (``enter``/``leave``); a nested differentiation
opens its own, so two levels never share a tangent. Outside any scope a read gets a fresh zero
tangent, as constants do.
"""
from __future__ import annotations

import threading
import types
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoTangent

_LOCAL = threading.local()


def enter() -> Any:
    """Open a scope (at the start of a top-level pass); returns what ``leave`` restores."""
    saved = getattr(_LOCAL, "memo", None)
    _LOCAL.memo = {}
    return saved


def leave(saved: Any) -> None:
    """Close the scope ``enter`` opened."""
    _LOCAL.memo = saved


def touched() -> bool:
    """Whether the open scope has handed out a tangent (the pass reached outside state)."""
    return bool(getattr(_LOCAL, "memo", None))


def active() -> bool:
    """Whether a scope is open (outside one, closures made outside keep no tangent boxes, so a
    ``nonlocal`` write into one is refused rather than lost)."""
    return getattr(_LOCAL, "memo", None) is not None


def shared(role: str, value: Any, make: Callable[[Any], Any]) -> Any:
    """The tangent of outside object ``value`` in ``role`` for the current scope, made by
    ``make(value)`` at its first read (or at every read outside a scope)."""
    memo = getattr(_LOCAL, "memo", None)
    if memo is None:
        return make(value)
    if role == "fdata":
        role = getattr(_LOCAL, "fdata_role", "fdata")
    key = (role, id(value))
    hit = memo.get(key)
    if hit is None:
        made = make(value)
        if made is NoTangent or made is NoFData:  # nothing to share (and nothing reached: see touched)
            return made
        hit = memo[key] = (value, made)  # the value is kept: its id stays its own for the scope
    return hit[1]


class fdata_tangent_pass:
    """While second order runs a first-order rule on the fdata tangents (``transform/lifting.py``),
    the rule's outside reads are of the ``"fdata_tangent"`` role."""

    __slots__ = ("saved",)

    def __enter__(self) -> None:
        self.saved = getattr(_LOCAL, "fdata_role", "fdata")
        _LOCAL.fdata_role = "fdata_tangent"

    def __exit__(self, *exc: Any) -> None:
        _LOCAL.fdata_role = self.saved


def is_mutable(value: Any) -> bool:
    """Whether an outside value can be changed in place (so its tangent must be shared)."""
    if isinstance(value, (list, dict, set, np.ndarray)):
        return True
    return hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType,
                                                                  types.MethodType, types.BuiltinFunctionType))
