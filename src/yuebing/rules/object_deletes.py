"""Rules for deleting attributes: ``delattr`` and ``object.__delattr__`` (``del obj.name``, which
the normaliser turns into ``delattr(obj, "name")``).

They follow the mutation convention (docs/writing-rules.md) as ``objects.py``'s ``setattr`` does:
the object's tangent field goes with the attribute, and the pullback puts the old value back in
its place in the instance dict (keeping the attribute order) with its old slot. The checks of what
may be written are ``objects._check_user_write``'s.
"""
from __future__ import annotations

from typing import Any

from ..tangents import MutableTangent, NoFData, NoRData, NoTangent
from .containers import _reinsert, _restored, _slot
from .core import CoDual, Dual, frule_for, primal, rrule_for
from .objects import _MISSING, _check_user_write, _dict_position, _instance_value, _raw_delattr, _raw_setattr
from .util import output


def _delattr_rrule_impl(obj: CoDual, name: Any, plain: bool, who: str):
    o, n = obj.primal, primal(name)
    _check_user_write(o, n, who, plain)
    fields = obj.fdata.fields if isinstance(obj.fdata, MutableTangent) else {}
    existed, old = _instance_value(o, n)
    position = _dict_position(o, n)
    (_raw_delattr if plain else delattr)(o, n)  # raises AttributeError if absent
    old_slot = fields.pop(n, _MISSING)

    def pullback(dy):
        if position is not None:
            o.__dict__.pop(n, None)  # set again by code run without derivatives (a with manager)
            _reinsert(o.__dict__, n, old, position)  # keep the attribute order
        else:
            _raw_setattr(o, n, old)
        fields[n] = _slot(old, NoFData) if old_slot is _MISSING else _restored(old_slot, old)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@rrule_for(delattr)
def _delattr_rrule(obj, name):
    return _delattr_rrule_impl(obj, name, plain=False, who="delattr")


@rrule_for(object.__delattr__, (object, "__delattr__"))  # (object, name): super().__delattr__ bound to self
def _object_delattr_rrule(self, name):
    return _delattr_rrule_impl(self, name, plain=True, who="object.__delattr__")


def _delattr_frule_impl(obj: Dual, name: Any, plain: bool, who: str) -> Dual:
    o, n = obj.primal, primal(name)
    _check_user_write(o, n, who, plain)
    (_raw_delattr if plain else delattr)(o, n)
    if isinstance(obj.tangent, MutableTangent):
        obj.tangent.fields.pop(n, None)
    return Dual(None, NoTangent)


@frule_for(delattr)
def _delattr_frule(obj, name):
    return _delattr_frule_impl(obj, name, plain=False, who="delattr")


@frule_for(object.__delattr__, (object, "__delattr__"))  # (object, name): super().__delattr__ bound to self
def _object_delattr_frule(self, name):
    return _delattr_frule_impl(self, name, plain=True, who="object.__delattr__")
