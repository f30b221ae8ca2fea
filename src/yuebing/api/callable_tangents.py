"""The forward-mode tangent of a callable a SciPy rule hands to ``yb.jvp`` (an integrand, an ODE's
right-hand side, an objective), made one that ``yb.jvp`` accepts.

The differentiated code's tangent of a closure follows its variables, not its memory:

* a variable captured from a function outside the differentiation (a string ``method`` the
  callable branches on, a helper function capturing an array) has no tangent at all in forward
  mode (``NoTangent`` where its cell's box belongs), which ``yb.jvp`` refused ("the tangent of a
  cell must be a MutableTangent, got NoTangent": tests/test_solver_string_cells.py);
* two reads of one captured array (``k = c`` in the differentiated code, and the helper capturing
  ``c`` too) may each have a zero of their own, which ``yb.jvp`` refused ("aliasing differs: one
  mutable primal must have exactly one tangent object").

``consistent`` fills the first with zeros and gives the second the first tangent met for that
array where the two are equal (both zero: a constant's); tangents that differ are left for
``yb.jvp`` to refuse. Immutable parts on the way are rebuilt; mutable ones (a cell's box, an
object's tangent) are changed in place, so a rule marking a written slot NaN in them still
reaches the differentiated code's tangent.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import MutableTangent, NoTangent, StructureError, Tangent
from ..tangents import kinds as K
from ..transform.forward_runtime import zero_tangent_of

_WALKED = frozenset({K.FUNCTION, K.CELL, K.PARTIAL, K.METHOD, K.OBJECT, K.TUPLE, K.LIST, K.DICT})
_DEPTH = 12


def consistent(primal: Any, tangent: Any) -> Any:
    """``tangent``, a forward-mode tangent of ``primal``, with a tangent wherever one is due and one
    tangent object per array (see the module docstring)."""
    return _walk(primal, tangent, {}, {}, 0)


def _walk(primal: Any, tangent: Any, found: dict, memo: dict, depth: int) -> Any:
    if isinstance(primal, np.ndarray):
        first = found.setdefault(id(primal), tangent)
        same = isinstance(first, np.ndarray) and isinstance(tangent, np.ndarray) and np.array_equal(first, tangent)
        return first if same else tangent
    if id(primal) in memo:
        return memo[id(primal)]
    try:
        kind = K.primal_kind(primal)
    except StructureError:  # no tangent type: nothing below it has one
        return tangent
    if kind not in _WALKED or depth > _DEPTH:
        return tangent
    if tangent is NoTangent:  # (forward mode's tangent of a captured constant)
        tangent = zero_tangent_of(primal)
    if not isinstance(tangent, (Tangent, MutableTangent, tuple, list, dict)):
        return tangent
    memo[id(primal)] = tangent  # (a cycle back to it)
    keys, children, _ = K.parts(primal, kind)
    parts = {}
    for key, child in zip(keys, children):
        old = _child(tangent, key)
        new = _walk(child, old, found, memo, depth + 1)
        if new is not old:
            parts[key] = new
    memo[id(primal)] = result = _with_parts(tangent, parts) if parts else tangent
    return result


def _child(tangent: Any, key: Any) -> Any:
    if isinstance(tangent, (Tangent, MutableTangent)):
        return tangent.fields.get(key, NoTangent)
    if isinstance(tangent, dict):
        return tangent.get(key, NoTangent)
    return tangent[key] if isinstance(key, int) and key < len(tangent) else NoTangent


def _with_parts(tangent: Any, parts: dict) -> Any:
    """``tangent`` with the children at ``parts``'s keys replaced: in place where it is mutable."""
    if isinstance(tangent, MutableTangent):
        tangent.fields.update(parts)
        return tangent
    if isinstance(tangent, Tangent):
        return Tangent(tangent.primal_type, {**tangent.fields, **parts})
    if isinstance(tangent, (dict, list)):
        for key, value in parts.items():
            tangent[key] = value
        return tangent
    items = [parts.get(k, v) for k, v in enumerate(tangent)]
    return type(tangent)(*items) if hasattr(tangent, "_fields") else tuple(items)
