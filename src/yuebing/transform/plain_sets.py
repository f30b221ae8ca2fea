"""Sets of labels in plain forward programs (third derivatives through ``yb.grad``).

A set built inside the function under ``yb.grad`` most often holds labels (ints, strings, tuples
of them): indices already seen, names of the parts done. Such a set carries no derivative, nor
does anything read from it, so in the plain program (``plain_forward.py``) its tangent is
``NoTangent``, and every call that makes, changes or reads a set of labels (``set()``, ``{i, j}``,
``s.add(i)``, ``s | t``, ``i in s``, ``len(s)``, ``sorted(s)``, a loop over it) is run by second
order's own rule on the primal values, its result a constant. A call that would put a number
carrying a derivative into a set goes on to ``third_order.jvp_rule``, which refuses it by name.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..ir.primitives import mkset
from ..tangents import NoTangent
from .lifting import _zero_tangent_of
from .third_order import FOLLOWED_CALLS, _Call, _constant

_SETS = (set, frozenset)
_LABELS = (int, str, bytes, bool, type(None), np.integer, np.bool_)


def _is_label(value: Any, depth: int = 0) -> bool:
    """An int, string, None (or a tuple, frozenset or range of them): nothing to differentiate."""
    if isinstance(value, _LABELS) or isinstance(value, range):
        return True
    if isinstance(value, (tuple, frozenset, set, list)) and depth < 4:
        return all(_is_label(v, depth + 1) for v in value)
    return False


def _touches_a_set(call: _Call, values: list) -> bool:
    f = call.f
    owner = getattr(f, "__self__", None)
    return f in _SETS or f is mkset or isinstance(owner, _SETS) \
        or isinstance(f, types.MethodDescriptorType) and f.__objclass__ in _SETS \
        or any(isinstance(v, _SETS) for v in values)


def label_set_call(call: _Call) -> Any:
    """The value and tangent slots of a call making, changing or reading sets of labels only (its
    tangent a constant ``NoTangent``); None for any other call."""
    values = [call.value(a) for a, _ in call.arg_slots] + [call.value(a) for a, _ in call.keyword_slots.values()]
    if not _touches_a_set(call, values):
        return None
    owner = getattr(call.f, "__self__", None)
    if isinstance(owner, _SETS):
        values.append(owner)
    if not all(_is_label(v) for v in values):
        return None
    c = call.composition
    value = c.call(c.values[call.function_slot], [a for a, _ in call.arg_slots],
                   {k: a for k, (a, _) in call.keyword_slots.items()})
    result = call.value(value)
    return value, c.add(_constant(NoTangent if isinstance(result, _SETS) else _zero_tangent_of(result)))


FOLLOWED_CALLS.append(label_set_call)

__all__ = ["label_set_call"]
