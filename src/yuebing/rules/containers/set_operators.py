"""The in-place operators on sets (``|=``, ``&=``, ``^=``, ``-=``) and the second-order rules of
set mutations and set operators.

``|=`` and friends mutate the set and return it (``set.update`` and friends, ``sets.py``); on ints,
bools and their arrays (masks, as in NumPy's ``setdiff1d``) they are plain values without
derivative, an integer array being updated in place and restored by the pullback; ``-=`` on
anything but sets is the operator rules' (``operators/in_place.py``).

Second order (forward-over-reverse): a mutation changes the primal once, and the set's fdata,
fdata tangent and tangent follow it, each by the elements' origins (``_set_elements.py``); the
dual pullback sends both cotangents back and puts everything back. ``|``, ``&``, ``-``, ``^`` on
two sets select values like ``union`` (the rule once with the fdata, once with the fdata
tangents, the forward rule for the tangent); ``transform/lifting.py`` asks ``SET_OPERATORS_2``
when an operator's operands are sets. Reading a set (``list(s)``, ``for v in s``, ``sum(s)``...)
in second order is a selection too: each element's tangent is found by the element.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent, zero_tangent
from ..cases import Case
from ...ir.primitives import as_sequence
from ..core import FRULES, RRULES, CoDual, Dual, RuleArgumentError, frule, primal, register_frule, register_rrule, rrule
from ..second_order import _register as special
from ..util import output, zero_fdata
from ._set_elements import forward_source, refill, zero_of
from ._set_single import add_rule2, pop_rule2, removal_rule2
from .sets import _MUTATING, SET_OPERATOR_RULES, _move_tangent, _Mutation, _mutating_rules, _refuse_untracked, \
    _reverse_sources, _ReverseChannel

# ------------------------------------------------------------------------------------------------
# In-place operators
# ------------------------------------------------------------------------------------------------

_INTEGRAL = (int, bool, np.integer, np.bool_)


def _integral_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "biu"


def _plain_rules(op: Callable) -> tuple[Callable, Callable]:
    """``op`` on ints, bools and their arrays: no derivative; an array is restored."""
    def plain(a: Any, b: Any) -> Any:
        x, y = primal(a), primal(b)
        if not (isinstance(x, _INTEGRAL) or _integral_array(x)) or not (isinstance(y, _INTEGRAL) or _integral_array(y)):
            raise RuleArgumentError(f"{op.__name__}: yuebing differentiates it on sets, and on ints, bools and "
                                    f"their arrays only (got {type(x).__name__} and {type(y).__name__})")
        return op(x, y)

    def rrule(a, b):
        if _integral_array(primal(a)):
            saved = primal(a).copy()
            plain(a, b)

            def restore(dy):
                primal(a)[...] = saved
                return NoRData, NoRData, NoRData

            return CoDual(primal(a), NoFData), restore
        return output(plain(a, b)), lambda dy: (NoRData, NoRData, NoRData)

    return rrule, lambda a, b: Dual(plain(a, b), NoTangent)


_IN_PLACE = {operator.ior: set.update, operator.iand: set.intersection_update,
             operator.ixor: set.symmetric_difference_update, operator.isub: set.difference_update}
#: a frozenset has no in-place operators: ``fs |= t`` is ``fs = fs | t``
_OUT_OF_PLACE = {operator.ior: operator.or_, operator.iand: operator.and_, operator.ixor: operator.xor,
                 operator.isub: operator.sub}
IN_PLACE_RULES: dict = {}


def _which(op: Any, a: Any, b: Any, ours: tuple, others: tuple) -> tuple:
    x, y = primal(a), primal(b)
    if isinstance(x, set):
        return ours
    if isinstance(x, frozenset) and isinstance(y, (set, frozenset)):
        return SET_OPERATOR_RULES[_OUT_OF_PLACE[op]]
    return others


for _op, _method in _IN_PLACE.items():
    _others = (RRULES.by_function[_op][0], FRULES.by_function[_op][0]) if _op is operator.isub else _plain_rules(_op)
    _ours = _mutating_rules(f"operator.{_op.__name__}", _method, False, "self")
    IN_PLACE_RULES[_op] = (_ours, _others)

    def _rrule(a, b, _op=_op, _ours=_ours, _others=_others):
        return _which(_op, a, b, _ours, _others)[0](a, b)

    def _frule(a, b, _op=_op, _ours=_ours, _others=_others):
        return _which(_op, a, b, _ours, _others)[1](a, b)

    register_rrule(_op, _rrule)
    register_frule(_op, _frule)

# ------------------------------------------------------------------------------------------------
# Second order of the mutations
# ------------------------------------------------------------------------------------------------


def _mutation_rule(name: str, method: Callable, single: bool, returns: str) -> Callable:
    """The 4-tuple rule of a mutating set method: the primal changes once; fdata, fdata tangent
    and tangent follow; the dual pullback undoes all of it."""

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        s4, rest = args[0], args[1:]
        target = s4[0]
        before = list(target)
        codual_args = tuple(CoDual(a[0], a[1]) for a in rest)
        first = _reverse_sources(codual_args, name, single, before, [a[1] for a in rest])
        second = _reverse_sources(codual_args, name, single, before, [a[3] for a in rest])
        t = s4[2] if isinstance(s4[2], dict) else NoTangent
        saved_t = dict(t) if t is not NoTangent else None
        pairs = [[(v, t.get(v, zero_of(v)) if t is not NoTangent else NoTangent) for v in before],
                 *(forward_source(Dual(a[0], a[2]), name, single) for a in rest)]
        change = _Mutation(name, method, target, codual_args, [src.items for src in first[1:]], single)
        channels = (_ReverseChannel(_dict_or_none(s4[1]), change, first, name),
                    _ReverseChannel(_dict_or_none(s4[3]), change, second, name, strict=False))
        _move_tangent(t, change, pairs, name)
        out = _output4(returns, change, s4, dict(pairs[0]))

        def pullback(dy: Any, dy_d: Any) -> tuple:
            popped = returns == "item"
            r1 = channels[0].back(dy if popped else NoRData)
            r2 = channels[1].back(dy_d if popped else NoRData)
            if saved_t is not None:
                refill(t, before, saved_t)
            change.restore()
            return (NoRData, NoRData, *r1), (NoRData, NoRData, *r2)

        return out, pullback

    rule.second_order_kind = "mutation"  # type: ignore[attr-defined]
    return rule


def _dict_or_none(fd: Any) -> Any:
    return fd if isinstance(fd, dict) else NoFData


def _output4(returns: str, change: _Mutation, s4: tuple, before_tangents: dict) -> tuple:
    if returns == "self":
        return s4
    if returns == "item":
        y = change.result
        return y, NoFData, before_tangents.get(y, zero_of(y)), NoFData
    return None, NoFData, NoTangent, NoFData


for _name, (_single, _returns) in _MUTATING.items():
    special(((set, _name),), _mutation_rule(f"set.{_name}", getattr(set, _name), _single, _returns))
# one element at a time (_set_single.py): a loop adding to a set stays linear in second order too
special(((set, "add"),), add_rule2("set.add", _refuse_untracked))
special(((set, "discard"),), removal_rule2(missing_ok=True))
special(((set, "remove"),), removal_rule2(missing_ok=False))
special(((set, "pop"),), pop_rule2)


def _in_place_rule(op: Callable, method: Callable) -> Callable:
    ours = _mutation_rule(f"operator.{op.__name__}", method, False, "self")
    others_r = IN_PLACE_RULES[op][1][0]

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        if isinstance(args[0][0], set):
            return ours(f, args, kwargs)
        if isinstance(args[0][0], frozenset):  # fs |= t: fs = fs | t
            return _selection_rule(SET_OPERATOR_RULES[_OUT_OF_PLACE[op]])(f, args, kwargs)
        out, pullback = others_r(*(CoDual(a[0], a[1]) for a in args))  # ints and masks: zero derivative
        y = out.primal
        result = (y, out.fdata, zero_tangent(y), zero_fdata(y))
        return result, lambda dy, dy_d: (pullback(dy), (NoRData,) * 3)

    rule.second_order_kind = "mutation"  # type: ignore[attr-defined]
    return rule


IN_PLACE_2 = {op: _in_place_rule(op, method) for op, method in _IN_PLACE.items()}
for _op in (operator.ior, operator.iand, operator.ixor):  # (-= on numbers keeps its own class)
    special((_op,), IN_PLACE_2[_op])

# ------------------------------------------------------------------------------------------------
# Second order of |, &, -, ^ on sets (and -= on sets: lifting asks here first)
# ------------------------------------------------------------------------------------------------


def _selection_rule(rules: tuple) -> Callable:
    rrule, frule = rules

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        out1, pullback1 = rrule(*(CoDual(a[0], a[1]) for a in args))
        out2, pullback2 = rrule(*(CoDual(a[0], a[3]) for a in args))
        t = frule(*(Dual(a[0], a[2]) for a in args)).tangent
        return (out1.primal, out1.fdata, t, out2.fdata), lambda dy, dy_d: (pullback1(dy), pullback2(dy_d))

    rule.second_order_kind = "selection"  # type: ignore[attr-defined]
    return rule


def _reading_rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``list(s)``, ``for v in s``, ``enumerate(s)``...: their class (linear) would run the rule on
    the set's tangent, a dict whose order need not be the set's; read as a selection instead (the
    rule with the fdata and with the fdata tangents, the forward rule for the tangent: every
    element's tangent found by the element)."""
    fn = CoDual(f[0], NoFData)
    out1, pullback1 = rrule(fn, *(CoDual(a[0], a[1]) for a in args), **{k: CoDual(v[0], v[1]) for k, v in kwargs.items()})
    out2, pullback2 = rrule(fn, *(CoDual(a[0], a[3]) for a in args), **{k: CoDual(v[0], v[3]) for k, v in kwargs.items()})
    t = frule(Dual(f[0], NoTangent), *(Dual(a[0], a[2]) for a in args),
              **{k: Dual(v[0], v[2]) for k, v in kwargs.items()}).tangent
    if t is NoTangent:
        t = zero_tangent(out1.primal)
    return (out1.primal, out1.fdata, t, out2.fdata), lambda dy, dy_d: (pullback1(dy), pullback2(dy_d))


_reading_rule.second_order_kind = "selection"  # type: ignore[attr-defined]

#: operator -> the second-order rule used when its operands are sets
SET_OPERATORS_2: dict = {op: _selection_rule(rules) for op, rules in SET_OPERATOR_RULES.items()}
SET_OPERATORS_2[operator.isub] = IN_PLACE_2[operator.isub]
_READERS = (list, tuple, enumerate, zip, sum, as_sequence)


def second_order_on_sets(fn: Any, args: tuple) -> Callable | None:
    """The second-order rule of ``fn`` when its arguments (4-tuples) include sets, else None:
    ``| & - ^ -=`` on two sets, and the readers of ``_READERS`` (``transform/lifting.py`` asks
    before a rule's own class, which is for numbers and sequences)."""
    if fn in SET_OPERATORS_2:
        return SET_OPERATORS_2[fn] if len(args) == 2 and all(isinstance(a[0], (set, frozenset)) for a in args) else None
    if fn in _READERS and any(isinstance(a[0], (set, frozenset)) for a in args):
        return _reading_rule
    if fn in (operator.iadd, operator.iconcat) and len(args) == 2 and isinstance(args[0][0], list) \
            and isinstance(args[1][0], (set, frozenset)) and args[1][2] is not NoTangent:
        return _refused_list_extended_by_set
    return None


def _refused_list_extended_by_set(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``lst += s`` in second order: the in-place class would extend the list's tangent by the set's
    tangent, a dict in an order that need not be the set's (a wrong Hessian); refused, as
    ``lst.extend(s)`` is in every mode."""
    raise RuleArgumentError("lst += s: in second order yuebing follows derivatives from a set into a list "
                            "through list(s); write lst += list(s)")


# Random perturbations move each element on its own: equal values in two operands would part,
# so these cases keep the operands' floats apart (tests/test_float_sets.py covers equal values
# that move together).
CASES = [
    Case(operator.ior, {1.5, -2.0}, {0.5, 3.0}, name="set |= set"),
    Case(operator.ixor, {1.5, -2.0}, {0.25, 3.0}, name="set ^= set"),
    Case(operator.isub, {1.5, -2.0, 5}, {0.5, 5}, name="set -= set"),
    Case(operator.ior, 6, 1, name="int |= int"),
]
