"""Frozen dataclasses made in a plain forward program (third derivatives through ``yb.grad``).

``plain_objects._construct`` builds an object of a user class as second order builds one under
construction: a mutable tangent for its fdata, its tangent and its fdata tangent, into which the
generated ``__init__`` (``object.__setattr__`` for frozen fields) and ``__post_init__`` write.
Second order identifies a frozen object by value, though: left mutable, the object broke every
rule that stored it (``[Config(a), Config(b)]``: "cannot join fdata MutableTangent[Config] with
rdata Tangent[Config]"). ``freeze`` ends the construction as the other modes end it
(``frozen_objects.py``), as one step of third order's composition.
"""
from __future__ import annotations

from typing import Any

from ..tangents import NoRData
from .frozen_objects import frozen_second


def freeze(composition: Any, obj: int) -> int:
    """The slot of the frozen dataclass built in slot ``obj`` (a ``third_order._Composition``),
    its construction's mutable tangents turned into a frozen object's fdata and tangent."""
    frozen, pullback = frozen_second(composition.values[obj], lambda dy, dy_d: None)

    def step(dy: Any, dy_d: Any) -> tuple:
        pullback(dy, dy_d)  # (into the construction's slots, which its writes' steps read)
        return (NoRData, NoRData), (NoRData, NoRData)

    composition.steps.append((step, [obj], len(composition.values)))
    return composition.add(frozen)


__all__ = ["freeze"]
