"""Tangent arrays laid out in memory as their primals are.

A forward rule applies to the tangent what it applies to the primal: ``x.reshape(-1)`` is a view
of a C-ordered ``x``, and a write through it reaches ``x``; the same reshape of a Fortran-ordered
tangent is a copy, and the tangent of that write is lost. So the tangents given to a forward pass
(``yb.jvp``, ``yb.hvp``, forward Jacobians: a user's ``np.ones(shape)`` for an ``x.T`` argument)
are first copied into their primal's layout. Rules keep the layout from then on
(``np.zeros_like`` and friends follow the primal's).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .types import MutableTangent, Tangent


def match_layouts(primal: Any, tangent: Any) -> Any:
    """``tangent`` with each array that owns its memory and is laid out unlike its primal replaced
    by a copy in the primal's layout; the rest (views, whose layout follows their base, and
    everything else) as it is. A tangent array met twice is replaced by one copy both times."""
    return _match(primal, tangent, {}, 0)


def _match(primal: Any, tangent: Any, memo: dict, depth: int) -> Any:
    if isinstance(tangent, np.ndarray):
        return _array_like_primal(primal, tangent, memo)
    if depth > 64 or id(tangent) in memo:  # deep structures are left as they are; a container met
        return tangent  # before (cycles, shared parts) is walked once
    if isinstance(tangent, (list, dict, Tangent, MutableTangent)):
        memo[id(tangent)] = tangent
    if type(tangent) in (tuple, list) and type(primal) in (tuple, list) and len(primal) == len(tangent):
        parts = [_match(p, t, memo, depth + 1) for p, t in zip(primal, tangent)]
        if all(a is b for a, b in zip(parts, tangent)):
            return tangent
        if type(tangent) is list:
            tangent[:] = parts  # a list tangent keeps its identity (aliasing)
            return tangent
        return tuple(parts)
    if type(tangent) is dict and isinstance(primal, dict):
        for key, t in list(tangent.items()):
            if key in primal:
                tangent[key] = _match(primal[key], t, memo, depth + 1)
        return tangent
    if isinstance(tangent, (Tangent, MutableTangent)):
        for name, t in list(tangent.fields.items()):
            field = getattr(primal, name, None) if isinstance(name, str) else None
            if field is not None:
                tangent.fields[name] = _match(field, t, memo, depth + 1)
        return tangent
    return tangent


def _array_like_primal(primal: Any, tangent: np.ndarray, memo: dict) -> np.ndarray:
    if not isinstance(primal, np.ndarray) or primal.shape != tangent.shape or tangent.base is not None \
            or primal.base is not None or tangent.strides == primal.strides:
        return tangent
    found = memo.get(id(tangent))
    if found is None:
        found = np.empty_like(primal, dtype=tangent.dtype)  # empty_like keeps the primal's order
        found[...] = tangent
        memo[id(tangent)] = found
    return found
