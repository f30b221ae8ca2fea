"""Frozen dataclasses built by an ``__init__`` of their own, in every mode.

A class's construction (``runtime._construct``, ``forward_runtime._construct``,
``lifting_objects.construct``, third order's ``plain_objects._construct``) runs ``__init__`` on
a new object with a mutable tangent, into which its writes (``object.__setattr__`` for a frozen
class) go. A frozen dataclass is identified by value, though (DESIGN.md §3): its fdata holds only
its fields' fdata and its rdata is a ``Tangent``. Left mutable, the object broke the first rule
that stored it (``[Config(a), Config(b)]``: "cannot join fdata MutableTangent[Config] with rdata
Tangent[Config]"). The construction ends as ``dataclass_construction`` ends a generated one: the
frozen fdata and tangent out, and a pullback that adds the result's rdata into the mutable slots
the field writes' pullbacks read, before running them.
"""
from __future__ import annotations

from typing import Any, Callable

from ..rules.core import CoDual
from ..rules.util import add_rdata_to
from ..tangents import MutableTangent, NoRData, NoTangent, Tangent
from ..tangents import kinds as K
from .dataclass_construction import _frozen_fdata


def is_frozen(obj: Any) -> bool:
    """Whether the object just built is a frozen dataclass's."""
    return K.primal_kind(obj) is K.FROZEN


def frozen_tangent(cls: type, tangent: Any) -> Any:
    """A frozen object's tangent: a ``Tangent`` of its fields' tangents (``NoTangent`` if none)."""
    if not isinstance(tangent, MutableTangent):
        return tangent
    parts = dict(tangent.fields)
    return NoTangent if all(p is NoTangent for p in parts.values()) else Tangent(cls, parts)


def add_into(slots: Any, r: Any) -> None:
    """Rdata ``r`` of the frozen object added into the mutable slots of its construction."""
    if not isinstance(r, Tangent) or not isinstance(slots, MutableTangent):
        return
    for name, part in r.fields.items():
        if name in slots.fields:
            slots.fields[name] = add_rdata_to(slots.fields[name], part)


def frozen_reverse(obj: Any, slots: MutableTangent, pullback: Callable) -> tuple[CoDual, Callable]:
    """Reverse mode: the frozen codual of ``obj`` built with fdata ``slots``."""
    def frozen_pullback(dy: Any) -> tuple:
        add_into(slots, dy)
        return pullback(NoRData)

    return CoDual(obj, _frozen_fdata(type(obj), slots)), frozen_pullback


def frozen_second(self4: tuple, pullback: Callable) -> tuple[tuple, Callable]:
    """Second order: the frozen 4-tuple of the object built as ``self4``."""
    obj, f, t, f_d = self4
    cls = type(obj)

    def frozen_pullback(dy: Any, dy_d: Any) -> tuple:
        add_into(f, dy)
        add_into(f_d, dy_d)
        return pullback(NoRData, NoRData)

    return (obj, _frozen_fdata(cls, f), frozen_tangent(cls, t), _frozen_fdata(cls, f_d)), frozen_pullback


__all__ = ["add_into", "frozen_reverse", "frozen_second", "frozen_tangent", "is_frozen"]
