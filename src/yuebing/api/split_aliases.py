"""A callable given to a SciPy solver or integrator (``quad``, ``solve_ivp``, ``odeint``,
``minimize``, ``brentq``, ``nquad``...) whose captured variables hold one array that the
differentiated code keeps as different variables.

``yb.grad(g)(x)`` where ``g``'s integrand reads its argument ``y`` and also ``x``, captured from
an enclosing function that is not differentiated, with ``y is x``: the differentiated code gives
the two cells different derivative data (``y``'s is the argument's, ``x``'s is held constant, as
every captured variable of code outside the differentiation is), but a reverse rule
differentiates the callable as one value, in which the two cells hold one array -- within one
value aliasing is real (docs/conventions.md) -- so ``x``'s path was added into ``y``'s gradient
(silently). Forward mode and second order push each cell's own tangent and were right.

``separated`` gives the reverse rules a copy of the callable whose parts follow the derivative
data instead: an array that an earlier part holds too, under derivative data of its own, is
copied, and so is every function, cell, ``functools.partial``, bound method, tuple and object on
the way to it (nquad hands ``quad`` a partial of its ``_NQuad`` object's bound method, whose
``func`` is the user's integrand). The callable computes the same values (it may not write the
float state it captures: ``callback_writes.py`` refuses that). An object copied on the way keeps
its own fields; what the rule's plain run writes on the copy (nquad's error estimate) is written
back onto the object (``Split.write_back``), so the call's results are SciPy's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..rules.core import CoDual
from ..tangents import MutableTangent, Tangent
from ..tangents import kinds as K
from ..tangents.walk import StructureError

_DEPTH = 12  # how deep the parts of a callable are looked into
_CALLABLES = frozenset({K.FUNCTION, K.PARTIAL, K.METHOD, K.OBJECT})  # inputs looked into
_WALKED = frozenset({K.FUNCTION, K.PARTIAL, K.METHOD, K.OBJECT, K.CELL, K.TUPLE})
_REBUILT = frozenset({K.FUNCTION, K.PARTIAL, K.METHOD, K.TUPLE})  # the rest are copied as shells


def _kind(value: Any) -> str:
    try:
        return K.primal_kind(value)
    except StructureError:  # no tangent type: nothing to follow below it
        return K.NONDIFF


def _child_fdata(fdata: Any, key: Any) -> Any:
    """The derivative data of the part ``key`` (None: none to follow)."""
    if isinstance(fdata, (Tangent, MutableTangent)):
        return fdata.fields.get(key)
    if isinstance(fdata, tuple) and isinstance(key, int) and key < len(fdata):
        return fdata[key]
    return None


class Split:
    """One walk over a rule's callables: the arrays met so far with their derivative data, the
    copies made (one per value reached twice), and the objects copied, for ``write_back``."""

    def __init__(self) -> None:
        self.seen: list = []  # (array, its derivative data)
        self.memo: dict = {}  # id(value) -> its copy, or the value itself
        self.objects: list = []  # (object, its copy, the fields the copy was given)

    def part(self, value: Any, fdata: Any, depth: int = 0) -> Any:
        """``value``, or a copy whose arrays held before under other derivative data are copies."""
        if isinstance(value, np.ndarray):
            return self._array(value, fdata)
        if id(value) in self.memo:
            return self.memo[id(value)]
        kind = _kind(value)
        if kind not in _WALKED or depth > _DEPTH or not isinstance(fdata, (Tangent, MutableTangent, tuple)):
            return value
        self.memo[id(value)] = value  # (a cycle back to it: the value itself)
        keys, children, _ = K.parts(value, kind)
        split = [self.part(child, _child_fdata(fdata, key), depth + 1) for key, child in zip(keys, children)]
        if all(new is old for new, old in zip(split, children)):
            return value
        copy = self._rebuilt(value, kind, keys, split)
        self.memo[id(value)] = copy
        return copy

    def _array(self, value: np.ndarray, fdata: Any) -> np.ndarray:
        if not isinstance(fdata, np.ndarray):
            return value
        if any(np.shares_memory(value, v) and not np.shares_memory(fdata, d) for v, d in self.seen):
            value = value.copy()
        self.seen.append((value, fdata))
        return value

    def _rebuilt(self, value: Any, kind: str, keys: list, parts: list) -> Any:
        if kind in _REBUILT:
            return K.build_immutable(value, kind, keys, parts)
        shell = K.fill_mutable(K.new_mutable_shell(value, kind), kind, keys, parts)
        if kind is K.OBJECT:
            self.objects.append((value, shell, dict(zip(keys, parts))))
        return shell

    def write_back(self) -> None:
        """Write onto each copied object the fields its copy was given since (by the rule's run)."""
        for original, copy, given in self.objects:
            for name, field in K.object_fields(copy).items():
                if name not in given or field is not given[name]:
                    setattr(original, name, field)


def separated(inputs: tuple) -> tuple[tuple, Split]:
    """The rule's inputs, a callable among them copied where its parts alias one array under
    different derivative data (see the module docstring), and the walk (for ``write_back``)."""
    split = Split()
    out = []
    for codual in inputs:
        primal = codual.primal if isinstance(codual, CoDual) else None
        if _kind(primal) in _CALLABLES and callable(primal):
            copy = split.part(primal, codual.fdata)
            out.append(codual if copy is primal else CoDual(copy, codual.fdata))
        else:
            out.append(codual)
    return tuple(out), split
