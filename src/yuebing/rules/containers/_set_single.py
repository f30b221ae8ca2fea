"""First-order rules of the set methods that change one element: ``add``, ``discard``,
``remove``, ``pop``. They cost what the plain call costs (a loop that adds to a set stays linear),
where the general rule of ``sets.py`` walks the whole set.

They update the set's ``SetTangent`` by one entry (rules read a set's tangent by element, so the
order of its entries does not matter).

This module registers no rule (``sets.py`` does).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent, zero_tangent
from ..core import CoDual, Dual, primal
from ..operators.common import fdata_part
from ..util import output, tangent
from ._set_elements import (
    add_into, carries, check_elements, element_fresh, element_rdata, element_tangent, moves, set_fdata, set_tangent,
    zero_of,
)

_ABSENT = object()


def _nothing(dy: Any) -> tuple:
    return NoRData, NoRData, NoRData


def add_rules(name: str, refuse: Callable) -> tuple[Callable, Callable]:
    """``s.add(x)``: nothing changes if an equal element is present (Python keeps it); else ``x``
    joins with its derivative, and the pullback returns the element's cotangent as ``x``'s."""

    def rrule(s, item):
        target, x, fd = primal(s), primal(item), set_fdata(s)
        if x in target:
            return output(None), _nothing
        check_elements(name, [x])
        if fd is NoFData and carries(x):
            raise refuse(name)
        target.add(x)
        if fd is not NoFData:  # (an object's tangent is its identity data: the one it carries)
            fd[x] = element_fresh(x, item.fdata if isinstance(item, CoDual) else NoFData)

        def pullback(dy):
            g = fd.pop(x, NoTangent) if fd is not NoFData else NoTangent
            target.discard(x)
            return NoRData, NoRData, element_rdata(g) if carries(x) and g is not NoTangent else NoRData

        return output(None), pullback

    def frule(s, item):
        target, x, t = primal(s), primal(item), set_tangent(s)
        if x in target:
            return Dual(None, NoTangent)
        check_elements(name, [x])
        dx = element_tangent(x, tangent(item))
        if t is NoTangent and carries(x) and moves(dx):  # (batched: one value per direction)
            raise refuse(name)
        target.add(x)
        if t is not NoTangent:
            t[x] = dx
        return Dual(None, NoTangent)

    return rrule, frule


def _stored(target: set, x: Any, missing_ok: bool) -> Any:
    """The element of ``target`` equal to ``x`` (the object the set holds: ``1`` and ``1.0`` are
    equal), ``_ABSENT`` if none; ``remove`` raises Python's ``KeyError``."""
    if x not in target:
        if not missing_ok:
            target.remove(x)
        return _ABSENT
    for v in target:
        if v == x:
            return v
    raise AssertionError("an element equal to x is in the set")


def removal_rules(missing_ok: bool) -> tuple[Callable, Callable]:
    """``s.discard(x)`` / ``s.remove(x)``: the element goes with its tangent; the pullback puts
    it back with cotangent zero (nothing after the call reads it)."""

    def rrule(s, item):
        target, fd = primal(s), set_fdata(s)
        stored = _stored(target, primal(item), missing_ok)
        if stored is _ABSENT:
            return output(None), _nothing
        target.discard(stored)
        kept = fdata_part(fd.pop(stored, NoTangent)) if fd is not NoFData else NoFData

        def pullback(dy):
            target.add(stored)
            if fd is not NoFData:
                fd[stored] = element_fresh(stored, kept)
            return NoRData, NoRData, NoRData

        return output(None), pullback

    def frule(s, item):
        target, t = primal(s), set_tangent(s)
        stored = _stored(target, primal(item), missing_ok)
        if stored is not _ABSENT:
            target.discard(stored)
            if t is not NoTangent:
                t.pop(stored, None)
        return Dual(None, NoTangent)

    return rrule, frule


def pop_rules() -> tuple[Callable, Callable]:
    """``s.pop()``: the element Python pops, with its tangent; its cotangent goes back into the
    restored set's tangent."""

    def rrule(s):
        target, fd = primal(s), set_fdata(s)
        y = target.pop()
        kept = fdata_part(fd.pop(y, NoTangent)) if fd is not NoFData else NoFData

        def pullback(dy):
            target.add(y)
            if fd is not NoFData:
                fd[y] = element_fresh(y, kept)
                if carries(y) and dy is not NoRData:
                    add_into(fd, y, dy)
            return NoRData, NoRData

        return CoDual(y, kept), pullback

    def frule(s):
        target, t = primal(s), set_tangent(s)
        y = target.pop()
        ty = t.pop(y, zero_of(y)) if t is not NoTangent else zero_tangent(y)
        return Dual(y, ty)

    return rrule, frule


# ------------------------------------------------------------------------------------------------
# Second order (4-tuples: primal, fdata, tangent, fdata tangent): the same, one entry in each
# ------------------------------------------------------------------------------------------------


def _dicts(s4: tuple) -> tuple:
    """The set's fdata, tangent and fdata tangent when they are ``SetTangent``s, else None."""
    return tuple(d if isinstance(d, dict) else None for d in (s4[1], s4[2], s4[3]))


def _none4() -> tuple:
    return None, NoFData, NoTangent, NoFData


def _own(x: Any, g: Any) -> Any:
    return element_rdata(g) if carries(x) and g is not None and g is not NoTangent else NoRData


def add_rule2(name: str, refuse: Callable) -> Callable:
    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        (s4, item4), nothing = args, ((NoRData,) * 3, (NoRData,) * 3)
        target, x = s4[0], item4[0]
        if x in target:
            return _none4(), lambda dy, dy_d: nothing
        check_elements(name, [x])
        fd, t, fdt = _dicts(s4)
        if fd is None and carries(x):
            raise refuse(name)
        target.add(x)
        for d, value in ((fd, element_fresh(x, item4[1])), (fdt, element_fresh(x, item4[3])),
                         (t, element_tangent(x, item4[2]))):
            if d is not None:
                d[x] = value

        def pullback(dy: Any, dy_d: Any) -> tuple:
            g, g_d = (d.pop(x, None) if d is not None else None for d in (fd, fdt))
            if t is not None:
                t.pop(x, None)
            target.discard(x)
            return (NoRData, NoRData, _own(x, g)), (NoRData, NoRData, _own(x, g_d))

        return _none4(), pullback

    return rule


def removal_rule2(missing_ok: bool) -> Callable:
    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        s4, item4 = args
        target = s4[0]
        stored = _stored(target, item4[0], missing_ok)
        if stored is _ABSENT:
            return _none4(), lambda dy, dy_d: ((NoRData,) * 3, (NoRData,) * 3)
        fd, t, fdt = _dicts(s4)
        target.discard(stored)
        saved_t = t.pop(stored, zero_of(stored)) if t is not None else None
        kept, kept_d = (fdata_part(d.pop(stored, NoTangent)) if d is not None else NoFData for d in (fd, fdt))

        def pullback(dy: Any, dy_d: Any) -> tuple:
            target.add(stored)
            for d, value in ((fd, element_fresh(stored, kept)), (fdt, element_fresh(stored, kept_d)), (t, saved_t)):
                if d is not None:
                    d[stored] = value
            return (NoRData,) * 3, (NoRData,) * 3

        return _none4(), pullback

    return rule


def pop_rule2(f: tuple, args: tuple, kwargs: dict) -> tuple:
    s4 = args[0]
    target = s4[0]
    fd, t, fdt = _dicts(s4)
    y = target.pop()
    saved_t = t.pop(y, zero_of(y)) if t is not None else zero_tangent(y)
    kept, kept_d = (fdata_part(d.pop(y, NoTangent)) if d is not None else NoFData for d in (fd, fdt))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        target.add(y)
        for d, g, f in ((fd, dy, kept), (fdt, dy_d, kept_d)):
            if d is not None:
                d[y] = element_fresh(y, f)
                if carries(y) and g is not NoRData and g is not NoTangent:
                    add_into(d, y, g)
        if t is not None:
            t[y] = saved_t
        return (NoRData, NoRData), (NoRData, NoRData)

    return (y, kept, saved_t, kept_d), pullback
