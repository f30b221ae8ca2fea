"""The rules of ``ir/class_construction.made_frozen_by_new``'s two steps, in reverse, forward and second order:
a frozen dataclass with a ``__new__`` of its own gets a mutable tangent while its ``__init__``
writes the fields (``under_construction``), and the frozen tangent of its fields after
(``constructed``), as ``frozen_objects.py`` ends the construction of one built by ``__init__``
alone. ``constructed``'s pullback adds the result's rdata into the mutable slots the field
writes' pullbacks then read.

An object ``__new__`` returns with fields already set (an instance it cached) is refused: its
``__init__`` would rewrite a frozen object that may be in use, identified by value.
"""
from __future__ import annotations

from typing import Any, Callable

from ..ir.class_construction import constructed, under_construction
from ..rules.core import CoDual, Dual, register_frule, register_rrule
from ..rules.second_order import _register
from ..tangents import MutableTangent, NoRData
from .dataclass_construction import _frozen_fdata
from .frozen_objects import add_into, frozen_tangent

_NOTHING = (NoRData, NoRData)  # (the primitive, the object): the object's rdata is in its slots


def _empty(obj: Any) -> MutableTangent:
    """The mutable tangent of ``obj`` before its ``__init__`` runs (it has no fields yet)."""
    if getattr(obj, "__dict__", None):
        raise TypeError(f"yuebing cannot differentiate constructing the frozen dataclass {type(obj).__qualname__} "
                        f"whose __new__ returns an object that already has fields ({', '.join(vars(obj))}): "
                        "its __init__ would rewrite a frozen object that may be in use. What to do: return a new "
                        "object from __new__ (super().__new__(cls)), or keep the cache outside the class and "
                        "look it up before calling it")
    return MutableTangent(type(obj), {})


def _under_construction_rrule(obj: CoDual) -> tuple[CoDual, Callable]:
    return CoDual(obj.primal, _empty(obj.primal)), lambda dy: _NOTHING


def _under_construction_frule(obj: Dual) -> Dual:
    return Dual(obj.primal, _empty(obj.primal))


def _under_construction_second(f: tuple, args: tuple, kwargs: dict) -> tuple:
    obj = args[0][0]
    return (obj, _empty(obj), _empty(obj), _empty(obj)), lambda dy, dy_d: (_NOTHING, _NOTHING)


def _constructed_rrule(obj: CoDual) -> tuple[CoDual, Callable]:
    slots = obj.fdata

    def pullback(dy: Any) -> tuple:
        add_into(slots, dy)
        return _NOTHING

    return CoDual(obj.primal, _frozen_fdata(type(obj.primal), slots)), pullback


def _constructed_frule(obj: Dual) -> Dual:
    return Dual(obj.primal, frozen_tangent(type(obj.primal), obj.tangent))


def _constructed_second(f: tuple, args: tuple, kwargs: dict) -> tuple:
    obj, slots, tangent, slots_d = args[0]
    cls = type(obj)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        add_into(slots, dy)
        add_into(slots_d, dy_d)
        return _NOTHING, _NOTHING

    return (obj, _frozen_fdata(cls, slots), frozen_tangent(cls, tangent), _frozen_fdata(cls, slots_d)), pullback


register_rrule(under_construction, _under_construction_rrule)
register_frule(under_construction, _under_construction_frule)
_register((under_construction,), _under_construction_second)
register_rrule(constructed, _constructed_rrule)
register_frule(constructed, _constructed_frule)
_register((constructed,), _constructed_second)
