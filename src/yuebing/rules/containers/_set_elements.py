"""Where the elements of a set come from: the machinery the set rules (``sets.py``) share.

A set's tangent is a ``SetTangent``: each element (its primal value) maps to its tangent
(docs/tangents.md). Every set operation -- building a set, ``|``, ``&``, ``-``, ``^``, the methods
-- keeps some of the values it is given and drops the others. Python itself decides which: the
result holds the very objects it kept. So a rule runs the operation on the primals, then finds
each result element's *origin* among its arguments' elements, by identity first (the object
Python kept) and by value after (an element equal to one already present is not added: the
first one stays). The tangent of an element is its origin's tangent; in reverse mode its
cotangent goes back to its origin. What Python drops (an equal value inserted later) loses its
derivative exactly as it loses its value.

Sources of elements: an iterable argument (a list, tuple, array, set, dict's keys) is walked as
``operators.Elements`` (reverse) or ``forward_elements`` (forward) walk it; a single item
(``s.add(x)``, ``{a, b}``) is a source of one element whose cotangent is returned as rdata.

This module registers no rule.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent, SetTangent, StructureError, dot, rdata, zero_tangent
from ...tangents.kinds import primal_kind, set_element_carries
from ..core import CoDual, Dual, RuleArgumentError, primal
from ..operators import Elements, forward_elements
from ..operators import fresh_tangent as operators_fresh_tangent
from ..util import add_rdata_to, sum_rdata, tangent

NUMBERS = (float, complex, np.floating, np.complexfloating)


def carries(v: Any) -> bool:
    """Whether set element ``v`` has a tangent: a float or complex number, a tuple or frozenset
    with one inside, a hashable object holding float data (``tangents/kinds.py``)."""
    return set_element_carries(v)


def zero_of(v: Any) -> Any:
    if isinstance(v, (complex, np.complexfloating)):
        return 0j
    if isinstance(v, NUMBERS):
        return 0.0
    return zero_tangent(v) if carries(v) else NoTangent


def check_elements(name: str, values: list) -> None:
    """Refuse elements of a type that has no tangent (never dropped): ``primal_kind`` names it."""
    for v in values:
        if carries(v):
            try:
                primal_kind(v)
            except StructureError as error:
                raise RuleArgumentError(f"{name}: {error}") from None


def element_tangent(v: Any, dv: Any) -> Any:
    """The tangent a set keeps for element ``v`` whose tangent is ``dv``: a Python number (a
    batched forward pass's array of one value per direction as it is), any other's as it is."""
    if not carries(v) or dv is NoTangent:
        return zero_of(v)
    if not isinstance(v, NUMBERS):
        return dv
    if isinstance(dv, np.ndarray) and dv.ndim:
        return dv
    return complex(dv) if isinstance(v, (complex, np.complexfloating)) else float(dv)


def moves(dv: Any) -> bool:
    """Whether element tangent ``dv`` is not zero (a tuple's: any of its numbers; a batched
    forward pass's: in any direction)."""
    if dv is NoTangent:
        return False
    if isinstance(dv, (float, complex, np.number, np.ndarray)):
        return bool(np.any(dv != 0))
    return dot(dv, dv) != 0


def fresh_tangent(y: Any, found: dict | None = None, fdatas: list | None = None) -> SetTangent:
    """The zero ``SetTangent`` of a new set (labels included, as ``NoTangent``: it may gain floats).
    An element whose tangent is identity data (an object's, a frozenset's) keeps the one its origin
    ``found[v]`` carries in ``fdatas`` (its fields' cotangents gather there)."""
    t = SetTangent()
    for v in y:
        where = None if found is None or isinstance(v, NUMBERS) else found.get(v)
        t[v] = zero_of(v) if where is None else element_fresh(v, fdatas[where[0]][where[1]])
    return t


def element_fresh(v: Any, fd: Any) -> Any:
    """The full tangent of element ``v`` with fdata ``fd`` and zero rdata."""
    return operators_fresh_tangent(v, fd) if carries(v) else NoTangent


class Item:
    """A source of one element (``s.add(x)``): its cotangent is returned as the argument's rdata."""

    __slots__ = ("items", "fdatas", "_r")

    def __init__(self, c: Any) -> None:
        self.items, self.fdatas, self._r = [primal(c)], [c.fdata if isinstance(c, CoDual) else NoFData], NoRData

    def deliver(self, i: int, r: Any) -> None:
        self._r = sum_rdata(self._r, r)

    def rdata(self) -> Any:
        return self._r


def reverse_source(c: Any, name: str, single: bool = False) -> Any:
    """The elements of one argument, for a reverse rule."""
    return Item(c) if single else Elements(c, name)


def forward_source(d: Any, name: str, single: bool = False) -> list:
    """``(primal, tangent)`` of the elements of one argument, for a forward rule."""
    if single:
        return [(primal(d), tangent(d))]
    return forward_elements(d, name)


def origins(y: Any, sources: list) -> dict:
    """For each element of result ``y`` that carries a tangent: ``(source number, position)`` of
    the element it is. Identity first (Python keeps objects), then the first equal value."""
    by_id: dict = {}
    by_value: dict = {}
    for k, items in enumerate(sources):
        for i, v in enumerate(items):
            if carries(v):
                by_id.setdefault(id(v), (k, i))
                by_value.setdefault(v, (k, i))
    found = {}
    for v in y:
        if carries(v):
            where = by_id.get(id(v))
            found[v] = where if where is not None else by_value.get(v)
    return found


def send_back(fd: Any, found: dict, sources: list) -> None:
    """Deliver each element's cotangent in ``fd`` (the result's ``SetTangent``) to its origin."""
    if not isinstance(fd, dict):
        return
    for v, where in found.items():
        g = fd.get(v, NoTangent)
        if where is not None and g is not NoTangent and g is not NoRData:
            k, i = where
            sources[k].deliver(i, element_rdata(g))


def element_rdata(g: Any) -> Any:
    """An element's cotangent as rdata: a number's as it is; a tuple's or an object's, its rdata
    half (an object's fields' cotangents stay in its identity data)."""
    return g if isinstance(g, (float, complex, np.number, np.ndarray)) else rdata(g)


def forward_tangent(y: Any, found: dict, pairs: list) -> SetTangent:
    """The ``SetTangent`` of result ``y``: each element's origin's tangent."""
    t = SetTangent()
    for v in y:
        where = found.get(v)
        if where is None:
            t[v] = zero_of(v)
            continue
        k, i = where
        t[v] = element_tangent(v, pairs[k][i][1])
    return t


def plain_elements(c: Any) -> list:
    """The elements of a set argument without derivative bookkeeping (the set being mutated)."""
    return list(primal(c))


def set_fdata(c: Any) -> Any:
    """The ``SetTangent`` of a set argument, or ``NoFData`` (a set of labels, a constant)."""
    fd = c.fdata if isinstance(c, CoDual) else NoFData
    return fd if isinstance(fd, dict) else NoFData  # (a SetTangent; in second order its tangent)


def set_tangent(d: Any) -> Any:
    t = d.tangent if isinstance(d, Dual) else NoTangent
    return t if isinstance(t, dict) else NoTangent


def refill(target: dict, y: Any, values: dict) -> None:
    """Make ``target`` (in place: it is the set's one tangent object) list ``y``'s elements, in
    its iteration order, with ``values`` (zero where missing)."""
    target.clear()
    target.update((v, values.get(v, zero_of(v))) for v in y)


def add_into(target: dict, v: Any, g: Any) -> None:
    target[v] = add_rdata_to(target.get(v, zero_of(v)), g)
