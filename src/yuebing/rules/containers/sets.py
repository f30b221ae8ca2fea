"""Rules for building sets and for the mutating methods of ``set``. Sets carry no tangent (their
elements are hashable, so not arrays): building one from floats that may carry derivatives is
refused, as reading floats out of one is (``operators/common.py``); the mutating methods' rules
only undo the mutation in the pullback.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent
from ..cases import Case
from ..core import CoDual, Dual, RuleArgumentError, frule_for, primal, register_frule, register_rrule, rrule_for
from ..second_order import zero
from ..util import output

# ------------------------------------------------------------------------------------------------
# set
# ------------------------------------------------------------------------------------------------


@rrule_for((set, "add"))
def _set_add_rrule(s, item):
    target, value = primal(s), primal(item)
    added = value not in target
    target.add(value)

    def pullback(dy):
        if added:
            target.discard(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "add"))
def _set_add_frule(s, item):
    primal(s).add(primal(item))
    return Dual(None, NoTangent)


@rrule_for((set, "discard"))
def _set_discard_rrule(s, item):
    target, value = primal(s), primal(item)
    present = value in target
    target.discard(value)

    def pullback(dy):
        if present:
            target.add(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "discard"))
def _set_discard_frule(s, item):
    primal(s).discard(primal(item))
    return Dual(None, NoTangent)


def _tangent_free_elements(kind: type, iterable: Any) -> list:
    from ..operators.common import tangent_free

    items = list(iterable)
    if not all(map(tangent_free, items)):
        raise RuleArgumentError(
            f"{kind.__name__}(...): yuebing cannot follow derivatives through the elements of a set "
            "(a set of floats would lose them); keep the values in a list or tuple")
    return items


def _constructor_rrule(kind: type) -> Any:
    def rrule(*args):
        items = _tangent_free_elements(kind, primal(args[0])) if args else []
        n = len(args) + 1
        return output(kind(items)), lambda dy: (NoRData,) * n

    return rrule


def _constructor_frule(kind: type) -> Any:
    def frule(*args):
        items = _tangent_free_elements(kind, primal(args[0])) if args else []
        return Dual(kind(items), NoTangent)

    return frule


for _kind in (set, frozenset):
    register_rrule(_kind, _constructor_rrule(_kind))
    register_frule(_kind, _constructor_frule(_kind))


def _restoring_rrule(method: Any) -> Any:
    """The rule of a mutating set method: run it on tangent-free items; the pullback puts the
    set's old elements back."""
    def rrule(s, *args):
        target = primal(s)
        values = [primal(a) for a in args]
        for v in values:
            if not isinstance(v, (int, str, bytes, type(None))):
                _tangent_free_elements(set, v if isinstance(v, (set, frozenset, list, tuple)) else [v])
        before = set(target)
        result = method(target, *values)

        def pullback(dy):
            target.clear()
            target.update(before)
            return (NoRData,) * (len(args) + 2)  # the method, the set, its arguments

        return output(result), pullback

    return rrule


def _plain_frule(method: Any) -> Any:
    def frule(s, *args):
        return Dual(method(primal(s), *(primal(a) for a in args)), NoTangent)

    return frule


_MUTATING = (set.update, set.remove, set.clear, set.pop, set.difference_update, set.intersection_update,
             set.symmetric_difference_update)
for _method in _MUTATING:
    register_rrule((set, _method.__name__), _restoring_rrule(_method))
    register_frule((set, _method.__name__), _plain_frule(_method))


_INTEGRAL = (int, bool, np.integer, np.bool_)


def _integral_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "biu"


def _in_place_operator(op: Any, method: Any) -> tuple[Any, Any]:
    """``s |= t`` (and ``&=``, ``^=``): on a set, ``method``'s rule (the set itself is the
    result); on ints and bools a plain value without derivative; on a bool or integer array (a
    mask, as in NumPy's ``setdiff1d`` and ``histogram``) the array updated in place, without
    derivative, and restored by the pullback; anything else is refused."""
    restoring = _restoring_rrule(method)

    def plain(a: Any, b: Any) -> Any:
        x, y = primal(a), primal(b)
        if not (isinstance(x, _INTEGRAL) or _integral_array(x)) or not (isinstance(y, _INTEGRAL) or _integral_array(y)):
            raise RuleArgumentError(f"{op.__name__}: yuebing differentiates it on sets, and on ints, bools and "
                                    f"their arrays only (got {type(x).__name__} and {type(y).__name__})")
        return op(x, y)

    def rrule(a, b):
        if isinstance(primal(a), set):
            _, pullback = restoring(a, b)
            return output(primal(a)), pullback  # (the operator, the set, the other): as the method's
        if _integral_array(primal(a)):
            saved = primal(a).copy()
            plain(a, b)

            def restore(dy):
                primal(a)[...] = saved
                return NoRData, NoRData, NoRData

            return CoDual(primal(a), NoFData), restore
        return output(plain(a, b)), lambda dy: (NoRData, NoRData, NoRData)

    def frule(a, b):
        if isinstance(primal(a), set):
            return Dual(op(primal(a), primal(b)), NoTangent)
        return Dual(plain(a, b), NoTangent)

    return rrule, frule


for _op, _method in ((operator.ior, set.update), (operator.iand, set.intersection_update),
                     (operator.ixor, set.symmetric_difference_update)):
    _r, _f = _in_place_operator(_op, _method)
    register_rrule(_op, _r)
    register_frule(_op, _f)


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

zero((set, "add"), (set, "discard"), set, frozenset, operator.ior, operator.iand, operator.ixor, *((set, m.__name__) for m in _MUTATING))


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


_C = Case

CASES = [
    # sets carry no tangent; their mutations are undone
    _C(set.add, {1, 2}, 3, name="set.add(new)"),
    _C(set.add, {1, 2}, 2, name="set.add(present)"),
    _C(set.discard, {1, 2}, 2, name="set.discard(present)"),
    _C(set.update, {1, 2}, [3, 4], name="set.update"),
    _C(set.remove, {1, 2}, 2, name="set.remove"),
    _C(set.clear, {1, 2}, name="set.clear"),
    _C(set.difference_update, {1, 2, 3}, {2}, name="set.difference_update"),
]
