"""Frozen dataclasses made in a plain forward program (third derivatives through ``yb.grad``).

``plain_objects._construct`` builds an object of a user class as second order builds one under
construction: a mutable tangent for its fdata, its tangent and its fdata tangent, into which the
generated ``__init__`` (``object.__setattr__`` for frozen fields) and ``__post_init__`` write.
Second order identifies a frozen object by value, though: its fdata holds only the fields'
fdata, its rdata is a ``Tangent`` returned by pullbacks. Left mutable, the object broke every
rule that stores it, (``[Config(a), Config(b)]``: "cannot join fdata MutableTangent[Config] with
rdata Tangent[Config]"). ``freeze`` ends the construction as ``dataclass_construction.
construct_second_order`` ends it: the frozen 4-tuple out, and a pullback that adds the frozen
result's rdata (and rdata tangent) into the mutable slots the field writes' pullbacks read.
"""
from __future__ import annotations

from typing import Any

from ..rules.util import add_rdata_to
from ..tangents import MutableTangent, NoRData, NoTangent, Tangent
from .dataclass_construction import _frozen_fdata


def _frozen_tangent(cls: type, tangent: Any) -> Any:
    """Second order's tangent of the frozen object: a ``Tangent`` of its fields' tangents."""
    if not isinstance(tangent, MutableTangent):
        return tangent
    parts = dict(tangent.fields)
    return NoTangent if all(p is NoTangent for p in parts.values()) else Tangent(cls, parts)


def _add_into(slots: Any, r: Any) -> None:
    """Rdata ``r`` of the frozen object added into the mutable slots of its construction."""
    if not isinstance(r, Tangent) or not isinstance(slots, MutableTangent):
        return
    for name, part in r.fields.items():
        if name in slots.fields:
            slots.fields[name] = add_rdata_to(slots.fields[name], part)


def freeze(composition: Any, obj: int) -> int:
    """The slot of the frozen dataclass built in slot ``obj`` (a ``third_order._Composition``),
    its construction's mutable tangents turned into a frozen object's fdata and tangent."""
    value, f, t, f_d = composition.values[obj]
    cls = type(value)
    frozen = (value, _frozen_fdata(cls, f), _frozen_tangent(cls, t), _frozen_fdata(cls, f_d))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        _add_into(f, dy)
        _add_into(f_d, dy_d)
        return (NoRData, NoRData), (NoRData, NoRData)

    composition.steps.append((pullback, [obj], len(composition.values)))
    return composition.add(frozen)


__all__ = ["freeze"]
