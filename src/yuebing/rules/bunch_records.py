"""Recording a tuple bunch's extra keyword arguments beside it, in the record an exception's
arguments use (``exception_data.py``); the predicates and the routing of the rdata are in
``bunch_data.py``, which the batched rules import (this module imports ``exception_data``, which
imports them: kept apart, there is no cycle).

An attribute set on a tuple bunch after its construction (``res.shifted = res.statistic + 1``,
its class's generated ``__setattr__`` for a name that is not a field) is ``set_attribute``,
whose rules add the value to the same record with its derivative data in each role: a read of
it hands that out (``exception_data.carried_read``), and the set's pullback returns what the
reads gathered to the value. A result made outside gets a record at its first such set."""
from __future__ import annotations

from typing import Any

from ..tangents import NoFData, NoRData, NoTangent
from . import outside_state
from ._float_reach import holds_floats
from .batched import _ALWAYS
from .bunch_data import KIND
from .core import CoDual, Dual, primal, register_frule, register_rrule
from .exception_data import Carried, record_carried
from .second_order import _register


def record_extras(role: str, y: tuple, values: list, data: list) -> Carried | None:
    """Record the extra keyword arguments ``values`` tuple bunch ``y`` was made from with their
    derivative data in ``role``; None when they hold no float data (nothing to follow)."""
    if not holds_floats(values):
        return None
    return record_carried(role, y, values, data, KIND)


def taken_rdata(carried: Carried | None, names: list) -> dict:
    """The cotangents the reads of the extra arguments ``names`` gathered, by name (once)."""
    return {} if carried is None else dict(zip(names, carried.take()))


# --------------------------------------------------------------------------------------------
# An attribute set after construction: set_attribute(o, name, v)
# --------------------------------------------------------------------------------------------


def set_attribute(o: tuple, name: str, v: Any) -> None:
    """``o.name = v`` on tuple bunch ``o``: its class's own ``__setattr__``, run plainly."""
    type(o).__setattr__(o, name, v)


class _Slot:
    """Where ``v``'s data sits in ``o``'s record in one role; its gathered cotangent taken once."""

    __slots__ = ("carried", "index")

    def __init__(self, carried: Carried, index: int) -> None:
        self.carried, self.index = carried, index

    def take(self) -> Any:
        r, self.carried.rdata[self.index] = self.carried.rdata[self.index], NoRData
        return r


def _added(role: str, o: tuple, v: Any, data: Any) -> _Slot | None:
    """Add ``v`` with ``data`` to ``o``'s record in ``role`` (made at the first value); None when
    ``v`` holds no float data or no pass is open (a read of it is then refused by name)."""
    if not holds_floats([v]) or not outside_state.active():
        return None
    carried = outside_state.registered(role, o, KIND)
    if not isinstance(carried, Carried):
        return _Slot(record_carried(role, o, [v], [data], KIND), 0)
    carried.values.append(v)
    carried.data.append(data)
    carried.rdata.append(NoRData)
    return _Slot(carried, len(carried.values) - 1)


def _taken(slot: _Slot | None) -> tuple:
    return (NoRData, NoRData, NoRData, NoRData if slot is None else slot.take())


def _set_rrule(o: CoDual, name: CoDual, v: Any) -> tuple[CoDual, Any]:
    set_attribute(primal(o), primal(name), primal(v))
    slot = _added("fdata", primal(o), primal(v), v.fdata if isinstance(v, CoDual) else NoFData)
    return CoDual(None, NoFData), lambda dy: _taken(slot)


def _set_frule(o: Dual, name: Dual, v: Any) -> Dual:
    set_attribute(primal(o), primal(name), primal(v))
    _added("tangent", primal(o), primal(v), v.tangent if isinstance(v, Dual) else NoTangent)
    return Dual(None, NoTangent)


def _set_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: the value recorded with its fdata, fdata tangent and tangent."""
    (o, *_), (name, *_), v = args
    set_attribute(o, name, v[0])
    fdata, fdata_tangent = _added("fdata", o, v[0], v[1]), _added("fdata_tangent", o, v[0], v[3])
    _added("tangent", o, v[0], v[2])
    return (None, NoFData, NoTangent, NoFData), lambda dy, dy_d: (_taken(fdata), _taken(fdata_tangent))


register_rrule(set_attribute, _set_rrule)
register_frule(set_attribute, _set_frule)
_set_dual.second_order_kind = "special"  # type: ignore[attr-defined]  # (as made_exception's)
_register((set_attribute,), _set_dual)
_ALWAYS.add(set_attribute)  # batched passes: it only moves tangents (into the record)

CASES: list = []  # (its output is None: tests/test_scipy_bunch_attributes.py reads the value back in every mode)
