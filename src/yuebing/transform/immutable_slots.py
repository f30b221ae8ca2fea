"""Second order's fdata tangents of lists and dicts holding immutable objects with fields.

A linear primitive's second-order rule (``lifting._linear``) runs its first-order rule twice: on
the primals with their fdata, then on the *tangents* with their fdata tangents, the tangents
standing in for the primals. A list's fdata keeps a *slot* per element (``rules/containers/
common.py``): the element's own fdata object for what is identified by identity (arrays, lists,
mutable objects), a value starting at zero for what is identified by value (floats, tuples, frozen
dataclasses: a ``Tangent`` with a zero for every float field), where reads put their cotangents
and whence the list's maker returns them. In the tangent call the element is a frozen object's
tangent, a ``Tangent``, which the rule classifies as a mutable object (it has ``__slots__``): the
slot it makes in the fdata tangent is a ``MutableTangent`` of the ``Tangent``'s own attributes
(or ``NoTangent``, or the fdata part alone). A read's cotangent tangent then had nowhere to go,
and the Hessian through ``[Config(a, b)][0].rate * ...`` came out zero.

This module gives those slots the form the primal's rule gives them, pairing each with its
primal element (``whole_slot``): after a tangent call that made a list or dict, or wrote such
elements into one (``after_call``), and after a pullback that put back elements a call removed
or overwrote (``removed``, ``put_back``). Floats, arrays, lists and mutable objects are left
alone, and lists of them cost one pass over their element types in C.
"""
from __future__ import annotations

import operator
import types
from typing import Any

import numpy as np

from .. import tangents as T
from ..tangents import MutableTangent, NoFData, NoTangent, Tangent
from ..tangents import kinds as K
from ..rules.core import CoDual

#: kinds whose tangent is a value with parts (a ``Tangent``, a tuple): what the slot functions of
#: the first-order rules mistake when the element is a tangent (a frozen object's, a partial's)
_VALUE_KINDS = frozenset({K.FROZEN, K.TUPLE, K.PARTIAL, K.METHOD})
#: element types that never hold such a value (a list of them needs no look at its elements)
_PLAIN = frozenset({float, int, bool, complex, str, bytes, type(None), np.ndarray, np.float64, np.float32,
                    np.int64, np.complex128, np.bool_, list, dict, set})


def _kind(p: Any) -> Any:
    try:
        return K.primal_kind(p)
    except Exception:  # noqa: BLE001 - no tangent type (an object array): not ours to judge here
        return None


def holds_values(p: Any, depth: int = 0) -> bool:
    """Whether primal ``p`` is an immutable object with fields (a frozen dataclass, a partial, a
    bound method) or a tuple holding one: an element whose slot a tangent call gets wrong."""
    if type(p) in _PLAIN:
        return False
    kind = _kind(p)
    if kind is K.TUPLE:
        return depth < 8 and any(holds_values(e, depth + 1) for e in p)
    return kind in _VALUE_KINDS


def _may_hold(values: Any) -> bool:
    """A quick look (the set of element types, made in C) before looking at each element."""
    return not _PLAIN.issuperset(set(map(type, values)))


def _misread(slot: Any) -> bool:
    """The slot a first-order rule makes for a ``Tangent`` it takes for a mutable object."""
    return slot is NoTangent or type(slot) is MutableTangent and slot.primal_type is Tangent


def whole_slot(slot: Any, p: Any, depth: int = 0) -> Any:
    """``slot`` as the primal's own rule makes it for element ``p``: a misread slot becomes ``p``'s
    zero tangent (it is made only where the element has no fdata, so nothing shared is lost);
    a ``Tangent`` or tuple slot gets a zero for each float part it lacks. ``slot`` itself when
    it is whole."""
    kind = _kind(p)
    if kind is K.FLOAT:
        return 0.0 if slot is NoTangent else slot
    if kind is K.COMPLEX:
        return 0j if slot is NoTangent else slot
    if kind not in _VALUE_KINDS or depth > 16:
        return slot
    if _misread(slot):
        return T.zero_tangent(p)
    keys, children, _ = K.parts(p, kind)
    if kind is K.TUPLE:
        if not isinstance(slot, tuple) or len(slot) != len(children):
            return slot
        parts = [whole_slot(s, c, depth + 1) for s, c in zip(slot, children)]
        if all(n is o for n, o in zip(parts, slot)):
            return slot
        return tuple(parts) if type(slot) is tuple else tuple.__new__(type(slot), parts)
    if type(slot) is not Tangent:  # a MutableTangent of the class itself (built by its __init__): shared
        return slot
    fields = slot.fields
    changed = {}
    for key, child in zip(keys, children):
        old = fields.get(key, NoTangent)
        new = whole_slot(old, child, depth + 1)
        if new is not old:
            changed[key] = new
    return slot if not changed else Tangent(slot.primal_type, {**fields, **changed})


def repair(fd: Any, primal: Any) -> bool:
    """Make whole the slots of list or dict fdata tangent ``fd`` whose elements in ``primal``
    hold immutable values; whether it holds any."""
    if type(primal) is list and type(fd) is list and len(fd) == len(primal):
        if not _may_hold(primal):
            return False
        found = False
        for j, e in enumerate(primal):
            if holds_values(e):
                found = True
                s = whole_slot(fd[j], e)
                if s is not fd[j]:
                    fd[j] = s
        return found
    if isinstance(primal, dict) and isinstance(fd, dict):
        if not _may_hold(primal.values()):
            return False
        found = False
        for k, e in primal.items():
            if k in fd and holds_values(e):
                found = True
                s = whole_slot(fd[k], e)
                if s is not fd[k]:
                    fd[k] = s
        return found
    return False


def _writes_values(args: tuple) -> bool:
    """Whether the arguments written into a container hold immutable values (directly, or as the
    elements of a list, tuple or dict whose elements the call copies)."""
    for a in args:
        p = a[0]
        if type(p) is list or type(p) is tuple:
            if _may_hold(p) and any(holds_values(e) for e in p):
                return True
        elif type(p) is dict:
            if _may_hold(p.values()) and any(holds_values(e) for e in p.values()):
                return True
        elif holds_values(p):
            return True
    return False


def after_call(out1: CoDual, out2: CoDual, args: tuple, mutated: bool, handed_out: bool) -> CoDual:
    """After the tangent call of a linear rule: the slots of the list or dict it made (``out2``'s
    fdata, the fdata tangent of ``out1``'s primal), and of the one it wrote values holding
    immutable objects into (its first argument, when ``mutated``). Returns ``out2``, with the
    fdata of the element it hands out made whole when that came from a slot it made itself
    (``d.setdefault(k, Config(a, b))``)."""
    y = out1.primal
    if not handed_out and (type(y) is list or isinstance(y, dict)):
        repair(out2.fdata, y)
    if mutated and args and (type(args[0][0]) is list or isinstance(args[0][0], dict)) \
            and _writes_values(args[1:]):
        repair(args[0][3], args[0][0])
        if out2.fdata is not NoFData and holds_values(y):
            fd = T.fdata(whole_slot(out2.fdata, y))
            return out2 if fd is out2.fdata else CoDual(out2.primal, fd)
    return out2


# --------------------------------------------------------------------------------------------
# What a call removes from its container, put back by its pullback
# --------------------------------------------------------------------------------------------


def _at(target: Any, index: Any) -> list:
    if type(target) is list and type(index) is slice:
        positions = range(*index.indices(len(target)))
        return [(j, target[j]) for j in positions]
    if type(target) is list:
        j = operator.index(index)
        return [(j % len(target) if target else j, target[j])]
    return [(index, target[index])] if index in target else []


def _indexed(target: Any, args: tuple) -> list:
    return _at(target, args[1][0]) if len(args) >= 2 else []


def _popped(target: Any, args: tuple) -> list:
    if type(target) is list:
        return _at(target, args[1][0] if len(args) >= 2 else -1)
    return _indexed(target, args)


def _everything(target: Any, args: tuple) -> list:
    if not _may_hold(target if type(target) is list else target.values()):
        return []
    return list(enumerate(target)) if type(target) is list else list(target.items())


def _last_item(target: Any, args: tuple) -> list:
    return _at(target, next(reversed(target))) if target else []


_REMOVES = {
    operator.setitem: _indexed, operator.delitem: _indexed, list.__setitem__: _indexed,
    list.__delitem__: _indexed, dict.__setitem__: _indexed, dict.__delitem__: _indexed,
    list.pop: _popped, dict.pop: _popped, list.clear: _everything, dict.clear: _everything,
    dict.popitem: _last_item,  # (list.remove and dict.update are written with these: rules/containers/)
}


def removed(fn: Any, args: tuple) -> list:
    """Before a call: ``(position, element)`` of each element holding immutable values that the
    call removes from, or overwrites in, its first argument (a list or dict). Its pullback puts
    them back with slots the tangent call's rule misreads (``put_back`` mends them)."""
    how = _REMOVES.get(fn) if isinstance(fn, (types.BuiltinFunctionType, types.MethodDescriptorType,
                                              types.WrapperDescriptorType)) else None
    if how is None or not args:
        return []
    target = args[0][0]
    if type(target) is not list and type(target) is not dict or type(args[0][3]) is not type(target):
        return []
    try:  # (an index or key: one element looked at, so a write into a list of floats costs nothing)
        return [(j, e) for j, e in how(target, args) if holds_values(e)]
    except (LookupError, TypeError, ValueError):  # the call itself raises it
        return []


def put_back(fd: Any, elements: list) -> None:
    """After the pullback of a call that removed ``elements``: their slots in fdata tangent ``fd``
    made whole."""
    for j, e in elements:
        if type(fd) is list and -len(fd) <= j < len(fd) or type(fd) is dict and j in fd:
            fd[j] = whole_slot(fd[j], e)
