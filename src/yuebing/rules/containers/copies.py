"""Rules for ``copy.copy`` and ``copy.deepcopy`` of arrays, lists, dicts, objects and values
(the mutation convention: ``common.py``).
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ... import tangents as T
from ...tangents import MutableTangent, NoRData, NoTangent
from ...tangents import kinds as K
from ..cases import Case, randn
from ..core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from ..second_order import selection
from ..util import output
from .common import _NOT_PASSED, _counted, _self_containing, _shallow_copy_rrule, _shared_array_list

# ------------------------------------------------------------------------------------------------
# copy.copy and copy.deepcopy
# ------------------------------------------------------------------------------------------------


def _children_shared(x: Any, y: Any, kind: str) -> bool:
    """Whether ``y`` is a shallow copy of ``x``: same keys, every child the same object (or an
    equal number)."""
    x_keys, x_children, _ = K.parts(x, kind)
    y_keys, y_children, _ = K.parts(y, kind)
    if x_keys != y_keys:
        return False
    for a, b in zip(x_children, y_children):
        if a is not b and not (isinstance(a, (float, complex, np.number)) and type(a) is type(b) and a == b):
            return False
    return True


def _copy_kind(x: Any, y: Any) -> str:
    kind = K.primal_kind(x)
    if kind in (K.FLOAT, K.COMPLEX, K.NONDIFF, K.ARRAY) or y is x:
        return kind
    if not _children_shared(x, y, kind):
        raise RuleArgumentError(
            f"copy.copy: {type(x).__qualname__} defines a copy that does not share its parts with "
            "the original (a custom __copy__ or __reduce__); yuebing cannot follow derivatives "
            "through it. Write the copy in Python (it will be differentiated from source)"
        )
    return kind


@rrule_for(copy.copy)
def _copy_rrule(x):
    v = x.primal
    y = copy.copy(v)
    kind = _copy_kind(v, y)
    if kind is K.ARRAY:
        out = output(y)

        def pullback(dy):
            x.fdata += out.fdata
            return NoRData, NoRData

        return out, pullback
    if kind is K.LIST:
        return _shallow_copy_rrule(y, list(enumerate(y)), x.fdata, [NoTangent] * len(y))
    if kind is K.DICT:
        return _shallow_copy_rrule(y, list(y.items()), x.fdata, {})
    if kind is K.OBJECT or kind is K.CELL:
        new_fd = MutableTangent(type(y))
        out, pullback = _shallow_copy_rrule(y, list(K.object_fields(y).items()), _FieldsView(x.fdata),
                                            _FieldsView(new_fd))
        return CoDual(y, new_fd), pullback
    # immutable (numbers, tuples, frozen objects, functions): every part is shared
    return CoDual(y, x.fdata), lambda dy: (NoRData, dy)


class _FieldsView:
    """Item access to a ``MutableTangent``'s fields (missing fields read as NoTangent)."""

    __slots__ = ("fields",)

    def __init__(self, t: MutableTangent) -> None:
        self.fields = t.fields

    def __getitem__(self, name: str) -> Any:
        return self.fields.get(name, NoTangent)

    def __setitem__(self, name: str, value: Any) -> None:
        self.fields[name] = value


@frule_for(copy.copy)
def _copy_frule(x):
    v, t = x.primal, x.tangent
    y = copy.copy(v)
    kind = _copy_kind(v, y)
    if kind is K.ARRAY:
        return Dual(y, t.copy())
    if kind is K.LIST:
        return Dual(y, list(t))
    if kind is K.DICT:
        return Dual(y, dict(t))
    if kind is K.OBJECT or kind is K.CELL:
        return Dual(y, MutableTangent(type(y), dict(t.fields)))
    return Dual(y, t)


def _mutable_ids(x: Any) -> dict[int, Any]:
    """Every object with a tangent of its own (lists, dicts, objects, cells, float arrays)
    reachable from ``x``, by id."""
    found: dict[int, Any] = {}
    stack = [x]
    while stack:
        v = stack.pop()
        kind = K.primal_kind(v)
        if kind in (K.FLOAT, K.COMPLEX, K.NONDIFF):
            continue
        mutable = kind in K.MUTABLE_KINDS or kind is K.ARRAY
        if mutable:
            if id(v) in found:
                continue
            found[id(v)] = v
        if kind is not K.ARRAY:
            stack.extend(K.parts(v, kind)[1])
    return found


def _deepcopy(x: Any, memo: Any) -> Any:
    if memo is not _NOT_PASSED and primal(memo) is not None:
        raise RuleArgumentError(
            "copy.deepcopy: yuebing does not support the memo argument (a custom __deepcopy__ "
            "calling copy.deepcopy(value, memo)); call copy.deepcopy(value) instead"
        )
    y = copy.deepcopy(x)
    shared = _mutable_ids(x).keys() & _mutable_ids(y).keys()
    if shared:
        raise RuleArgumentError(
            "copy.deepcopy: the copy shares a mutable part with the original (a custom "
            "__deepcopy__, or a closure's cells); yuebing cannot give them one tangent. "
            "Copy the parts explicitly instead"
        )
    return y


@rrule_for(copy.deepcopy)
def _deepcopy_rrule(x, memo=_NOT_PASSED):
    y = _deepcopy(x.primal, memo)
    out = CoDual(y, T.fdata(T.zero_tangent(y)))  # mirrors the copy's aliasing, cycles and views

    def pullback(dy):
        x_full = T.join(x.fdata, T.zero_rdata(x.primal))
        # the copy depends on the original element by element: add its tangent into the
        # original's (arrays and float slots in place; value-typed parts come back as rdata)
        total = T.increment(x_full, T.join(out.fdata, dy))
        return _counted(NoRData, T.rdata(total), memo if memo is _NOT_PASSED else NoRData)

    return out, pullback


@frule_for(copy.deepcopy)
def _deepcopy_frule(x, memo=_NOT_PASSED):
    y = _deepcopy(x.primal, memo)
    return Dual(y, T.increment(T.zero_tangent(y), x.tangent))


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

# a copy is linear in what it copies: the forward rule copies the tangent (a copy of a user
# object's MutableTangent too, which copy.copy itself cannot make), the ordinary rule the fdata
selection(copy.copy, copy.deepcopy)


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


@__import__("dataclasses").dataclass
class _Point:
    x: float
    y: Any


_C = Case

CASES = [
    _C(copy.copy, [randn(), randn(2), [randn()]]),
    _C(copy.copy, {"a": randn(), "b": randn(2)}, name="copy.copy(dict)"),
    _C(copy.copy, randn(3, 2), name="copy.copy(array)"),
    _C(copy.copy, randn(), name="copy.copy(float)"),
    _C(copy.copy, (randn(), randn(2)), name="copy.copy(tuple)"),
    _C(copy.copy, _Point(randn(), randn(2)), name="copy.copy(object)"),
    _C(copy.deepcopy, [randn(), randn(2), [randn()], (randn(), 1)]),
    _C(copy.deepcopy, _shared_array_list()[0], name="copy.deepcopy(aliased arrays)"),
    _C(copy.deepcopy, _self_containing(), name="copy.deepcopy(list containing itself)"),
    _C(copy.deepcopy, {"a": randn(), "b": (randn(2), randn())}, name="copy.deepcopy(dict)"),
    _C(copy.deepcopy, _Point(randn(), [randn(), randn(2)]), name="copy.deepcopy(object)"),
    _C(copy.deepcopy, (lambda a: [a, a[1:]])(randn(4)), name="copy.deepcopy(array and its view)"),
    _C(copy.deepcopy, randn(), name="copy.deepcopy(float)"),
]
