"""Tangents left stale by plain code: a rule that runs the user's callable undifferentiated (``quad``'s
primal run of its integrand) may change the state that callable reaches -- SciPy's ``nquad`` keeps
its error estimate on the ``_NQuad`` object whose bound method it integrates, an int ``0`` that
becomes a float while integrating. The tangent taken before that run then no longer describes the
state: a float where it holds ``NoTangent``, or a float whose value moved without a derivative.

``snapshot`` records the float and array leaves a value reaches (per containing object and key)
before the plain run; ``mark_changed`` walks the value and its tangent afterwards and gives every
leaf that appeared or changed a NaN tangent -- its derivative was not computed, so it is unknown,
never a silent zero. Mutable tangents (fdata: one per object) are updated in place, so the
differentiated code that reads the state afterwards sees the NaN too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import kinds as K
from .ops import zero_tangent
from .types import MutableTangent, NoFData, NoTangent, Tangent
from .walk import StructureError

_LEAVES = frozenset({K.FLOAT, K.COMPLEX, K.ARRAY})
_WALKED = frozenset({K.TUPLE, K.LIST, K.DICT, K.OBJECT, K.CELL, K.FUNCTION, K.PARTIAL, K.METHOD, K.FROZEN})


def _kind(x: Any) -> str:
    try:
        return K.primal_kind(x)
    except StructureError:  # no tangent type: nothing to track below it
        return K.NONDIFF


def _parts(x: Any) -> tuple[str, list, list]:
    kind = _kind(x)
    if kind not in _WALKED:
        return kind, [], []
    keys, children, _ = K.parts(x, kind)
    return kind, keys, children


def _leaf_slots(x: Any) -> tuple[dict, list]:
    """``{(id(container), key): leaf}`` over the float leaves ``x`` reaches, and the containers."""
    slots, containers, seen, stack = {}, [], set(), [x]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        _, keys, children = _parts(value)
        if keys:
            containers.append(value)
        for key, child in zip(keys, children):
            if _kind(child) in _LEAVES:
                slots[(id(value), key)] = child
            else:
                stack.append(child)
    return slots, containers


def snapshot(x: Any) -> tuple[dict, list]:
    """The values of the float leaves ``x`` reaches now (copies), for ``mark_changed``."""
    slots, containers = _leaf_slots(x)
    return {slot: np.array(leaf, copy=True) for slot, leaf in slots.items()}, containers


def changed_slots(x: Any, before: tuple[dict, list]) -> set:
    values, _ = before  # (the containers keep their ids from being reused meanwhile)
    now, _ = _leaf_slots(x)
    return {slot for slot, leaf in now.items()
            if slot not in values or not np.array_equal(values[slot], leaf, equal_nan=True)}


def _nan_like(leaf: Any) -> Any:
    if isinstance(leaf, np.ndarray):
        return np.full(leaf.shape, np.nan, dtype=leaf.dtype)
    return complex(np.nan, np.nan) if isinstance(leaf, (complex, np.complexfloating)) else float("nan")


def _tangent_child(t: Any, key: Any) -> Any:
    if t is NoTangent:
        return NoTangent
    if isinstance(t, (MutableTangent, Tangent)):
        return t.fields.get(key, NoTangent)
    if isinstance(t, dict):
        return t.get(key, NoTangent)
    return t[key] if key < len(t) else NoTangent  # (a list the plain run appended to)


def _with_children(t: Any, keys: list, new: list) -> Any:
    """``t`` with the children at ``keys`` replaced: in place for fdata, a new value otherwise."""
    if isinstance(t, Tangent):
        fields = dict(t.fields)
        fields.update(zip(keys, new))
        return Tangent(t.primal_type, fields)
    if isinstance(t, tuple):
        items = list(t)
        for key, child in zip(keys, new):
            items[key] = child
        return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
    for key, child in zip(keys, new):  # list, dict, MutableTangent
        if isinstance(t, MutableTangent):
            t.fields[key] = child
        elif isinstance(t, list) and key >= len(t):  # an item appended: its tangent too (keys ascend)
            t.extend([NoTangent] * (key - len(t)) + [child])
        else:
            t[key] = child
    return t


def _in_place(leaf: Callable[[Any], Any], child: Any, old: Any) -> Any:
    """``leaf(child)``, written into ``old`` when that is an array tangent of ``child``'s shape: the
    array's tangent (or fdata) is shared with the differentiated code's variable holding the array,
    which must see the new entries (a NaN tangent, a cotangent gathered by a later read)."""
    if isinstance(old, np.ndarray) and isinstance(child, np.ndarray) and old.shape == child.shape \
            and old.flags.writeable:
        if leaf is _nan_like:
            old[...] = np.nan
        return old  # (make_room: the fdata already there gathers the later reads' cotangents)
    return leaf(child)


def _refresh(x: Any, t: Any, changed: set, memo: dict, leaf: Callable[[Any], Any] = _nan_like) -> Any:
    _, keys, children = _parts(x)
    if not keys or id(x) in memo or t is NoFData:  # (fdata: a part without mutable data)
        return memo.get(id(x), t)
    memo[id(x)] = t
    old = [_tangent_child(t, key) for key in keys]
    new = [_in_place(leaf, child, tc) if (id(x), key) in changed else _refresh(child, tc, changed, memo, leaf)
           for key, child, tc in zip(keys, children, old)]
    moved = [(key, n) for key, o, n in zip(keys, old, new) if o is not n]
    if not moved:
        return t
    if t is NoTangent:  # a container without a tangent until now: a zero one, then the NaN
        t = zero_tangent(x)
        memo[id(x)] = t
    result = _with_children(t, [key for key, _ in moved], [n for _, n in moved])
    memo[id(x)] = result
    return result


def mark_changed(x: Any, t: Any, before: tuple[dict, list]) -> Any:
    """``t``, the tangent of ``x`` taken when ``before = snapshot(x)`` was, with a NaN tangent for
    every float leaf of ``x`` that appeared or changed since (in place where ``t`` is fdata)."""
    changed = changed_slots(x, before)
    return _refresh(x, t, changed, {}) if changed else t


def _nonzero(t: Any) -> bool:
    return t is not NoTangent and bool(np.any(np.asarray(t) != 0))


def carries_cotangent(x: Any, t: Any, slots: set) -> bool:
    """Whether ``t``, a full cotangent of ``x``, is nonzero at one of ``slots`` (``changed_slots``):
    differentiated code used a value that plain code wrote, whose derivative is unknown."""
    seen, stack = set(), [(x, t)]
    while stack:
        value, tangent = stack.pop()
        if id(value) in seen or tangent is NoTangent:
            continue
        seen.add(id(value))
        _, keys, children = _parts(value)
        for key, child in zip(keys, children):
            child_tangent = _tangent_child(tangent, key)
            if (id(value), key) in slots:
                if _nonzero(child_tangent):
                    return True
            else:
                stack.append((child, child_tangent))
    return False


def _zero_like(leaf: Any) -> Any:
    return np.zeros(leaf.shape, dtype=leaf.dtype) if isinstance(leaf, np.ndarray) else 0.0 * leaf


def make_room(x: Any, fdata: Any, slots: set) -> None:
    """Give each of ``slots`` a zero entry in ``fdata``, ``x``'s reverse-mode fdata, where it has a
    mutable one (an object's, a dict's, a list's): what differentiated code reading the value later
    gathers there, for ``carries_cotangent`` to see instead of it being dropped."""
    if slots and fdata is not NoFData:
        _refresh(x, fdata, slots, {}, _zero_like)
