"""Rules for sets and frozensets: building them (``{a, b}``, ``set(xs)``, ``frozenset(xs)``, set
comprehensions), their operators (``|``, ``&``, ``-``, ``^`` and the in-place ``|=``, ``&=``,
``-=``, ``^=``) and methods (``union``, ``intersection``, ``difference``,
``symmetric_difference``, ``copy``; ``add``, ``discard``, ``remove``, ``pop``, ``clear``,
``update`` and the ``*_update`` methods, whose mutation the pullback undoes).

A set holding floats has a ``SetTangent`` (element value -> tangent, docs/tangents.md); a set of
labels (ints, strings, tuples of them) has none and its rules only undo their mutations. Which
value a result keeps, and so whose derivative, is what Python keeps (``set_elements.py``): for
equal values the first inserted. Reading a set (``sum``, ``sorted``, ``list``, ``max``, ``for``)
is done by the builtins' rules through ``operators.Elements``.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

from ...tangents import NoFData, NoRData, NoTangent, zero_tangent
from .. import zero_derivative  # noqa: F401 - its rules for |, &, ^ on ints are wrapped below
from ..cases import Case
from ..declare import nondifferentiable_methods
from ..core import FRULES, RRULES, CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from ..operators import in_place  # noqa: F401 - its rule for -= on numbers is wrapped below
from ..second_order import selection
from ..util import output
from ._set_single import add_rules, pop_rules, removal_rules
from ._set_elements import (
    Item, add_into, check_elements, element_fresh, fresh_tangent, forward_source, forward_tangent, moves, origins,
    refill, reverse_source, send_back, set_fdata, set_tangent, zero_of,
)
from ..operators.common import fdata_part
from ...ir.primitives import mkset

_SETS = (set, frozenset)

# ------------------------------------------------------------------------------------------------
# Building a new set: constructors, operators, methods that return a new set
# ------------------------------------------------------------------------------------------------


def _value(arg: Any, items: list) -> Any:
    """What the operation is given: the argument itself when its elements are its own objects
    (so Python keeps exactly the objects it would), else the elements walked (arrays' scalars)."""
    x = primal(arg)
    return x if isinstance(x, (set, frozenset, list, tuple)) else items


def _building_rules(name: str, compute: Callable, single: bool = False) -> tuple[Callable, Callable]:
    """Reverse and forward rules of ``compute(*values) -> new set``; ``single``: each argument
    is one element (``{a, b}``), not an iterable of them."""

    def rrule(*args):
        sources = [reverse_source(a, name, single) for a in args]
        y = compute(*(_value(a, s.items) if not single else s.items[0] for a, s in zip(args, sources)))
        for a in args:
            if primal(a) is y:  # frozenset(fs), fs.copy(): the argument itself, with its tangent
                return CoDual(y, a.fdata if isinstance(a, CoDual) else NoFData), lambda dy: (NoRData,) * (len(args) + 1)
        check_elements(name, list(y))
        found = origins(y, [s.items for s in sources])
        out = CoDual(y, fresh_tangent(y, found, [s.fdatas for s in sources]))

        def pullback(dy):
            send_back(out.fdata, found, sources)
            return (NoRData, *(s.rdata() for s in sources))

        return out, pullback

    def frule(*args):
        pairs = [forward_source(a, name, single) for a in args]
        y = compute(*(_value(a, [p for p, _ in ps]) if not single else ps[0][0] for a, ps in zip(args, pairs)))
        for a in args:
            if primal(a) is y:
                return Dual(y, a.tangent if isinstance(a, Dual) else zero_tangent(y))
        check_elements(name, list(y))
        return Dual(y, forward_tangent(y, origins(y, [[p for p, _ in ps] for ps in pairs]), pairs))

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule


def _constructor(kind: type) -> Callable:
    return lambda *values: kind(*values)


def _method(kind: type, name: str) -> Callable:
    method = getattr(kind, name)
    return lambda s, *others: method(s if isinstance(s, kind) else kind(s), *others)


def _register_pair(target: Any, rules: tuple) -> None:
    register_rrule(target, rules[0])
    register_frule(target, rules[1])


_BUILDING: list = []
for _kind in _SETS:
    _register_pair(_kind, _building_rules(_kind.__name__, _constructor(_kind)))
    _BUILDING.append(_kind)
    for _name in ("union", "intersection", "difference", "symmetric_difference", "copy"):
        _register_pair((_kind, _name), _building_rules(f"{_kind.__name__}.{_name}", _method(_kind, _name)))
        _BUILDING.append((_kind, _name))
_register_pair(mkset, _building_rules("{...}", lambda *items: set(items), single=True))
_BUILDING.append(mkset)

# the comparisons between sets (<=, ==, in: the operators' zero rules) as methods: no derivative
for _kind in _SETS:
    nondifferentiable_methods(_kind, "issubset", "issuperset", "isdisjoint")

# ------------------------------------------------------------------------------------------------
# Operators: on sets ours, on anything else the rule that was there
# ------------------------------------------------------------------------------------------------

_OPERATORS = (operator.or_, operator.and_, operator.sub, operator.xor)
#: the rules of ``|``, ``&``, ``-``, ``^`` when an operand is a set (second order looks here too)
SET_OPERATOR_RULES: dict = {}


def _dispatching(op: Callable, ours: tuple) -> tuple[Callable, Callable]:
    previous_r, previous_f = RRULES.by_function[op][0], FRULES.by_function[op][0]

    def rrule(a, b):
        if isinstance(primal(a), _SETS) and isinstance(primal(b), _SETS):
            return ours[0](a, b)
        return previous_r(a, b)

    def frule(a, b):
        if isinstance(primal(a), _SETS) and isinstance(primal(b), _SETS):
            return ours[1](a, b)
        return previous_f(a, b)

    return rrule, frule


for _op in _OPERATORS:
    SET_OPERATOR_RULES[_op] = _building_rules(f"operator.{_op.__name__}", _op)  # (two sets: _dispatching)
    _register_pair(_op, _dispatching(_op, SET_OPERATOR_RULES[_op]))


# ------------------------------------------------------------------------------------------------
# Mutating methods
# ------------------------------------------------------------------------------------------------


class _Mutation:
    """One mutating call on set ``target``: the elements before, the result, and each element's
    origin (0: it was in the set; k > 0: it came from argument k)."""

    def __init__(self, name: str, method: Callable, target: set, args: tuple, items: list, single: bool) -> None:
        self.target, self.before = target, list(target)
        values = [items[k][0] if single else _value(a, items[k]) for k, a in enumerate(args)]
        self.result = method(target, *values)
        check_elements(name, list(target))
        self.found = origins(target, [self.before, *items])
        self.stayed = {v for v, where in self.found.items() if where is not None and where[0] == 0}

    def new_from_arguments(self) -> list:
        return [v for v, where in self.found.items() if where is not None and where[0] > 0]

    def restore(self) -> None:
        self.target.clear()
        self.target.update(self.before)


def _refuse_untracked(name: str) -> RuleArgumentError:
    return RuleArgumentError(
        f"{name}: this set carries no derivatives (it held no float when it was passed in or made), so a "
        "float with a derivative cannot be put into it; start from a set built inside the function "
        "(s = set(s0)) or pass in a set that holds a float")


class _ReverseChannel:
    """The fdata (or, in second order, the fdata tangent) of the mutated set: moved along with the
    primal, and in the pullback sent to the arguments and put back."""

    def __init__(self, fd: Any, change: _Mutation, sources: list, name: str, strict: bool = True) -> None:
        self.fd, self.change, self.sources = fd, change, sources
        if fd is NoFData:
            if strict and change.new_from_arguments():
                change.restore()
                raise _refuse_untracked(name)
            return
        self.old = old = dict(fd)
        moved = {v: old.get(v, zero_of(v)) for v in change.stayed}
        for v in change.new_from_arguments():  # (an object's tangent: the identity data it carries)
            k, i = change.found[v]
            moved[v] = element_fresh(v, sources[k].fdatas[i])
        refill(fd, change.target, moved)

    def back(self, popped_r: Any = NoRData) -> tuple:
        change, fd = self.change, self.fd
        if fd is NoFData:
            return tuple(s.rdata() for s in self.sources[1:])
        after = dict(fd)
        send_back(fd, {v: w for v, w in change.found.items() if w is not None and w[0] > 0}, self.sources)
        refill(fd, change.before, {v: after[v] if v in change.stayed else element_fresh(v, fdata_part(self.old.get(v, NoTangent)))
                                   for v in change.before})
        if popped_r is not NoRData and popped_r is not NoTangent:
            add_into(fd, change.result, popped_r)
        return tuple(s.rdata() for s in self.sources[1:])


def _reverse_sources(args: tuple, name: str, single: bool, before: list, fdatas: list) -> list:
    sources = [Item(None)]  # position 0: the set itself (its elements stay where they are)
    sources[0].items = before
    for a, fd in zip(args, fdatas):
        sources.append(reverse_source(CoDual(primal(a), fd), name, single))
    return sources


def _output_of(returns: str, change: _Mutation, s_fdata: Any) -> CoDual:
    if returns == "self":
        return CoDual(change.target, s_fdata)
    return CoDual(change.result, NoFData) if returns == "item" else output(change.result)


def _mutating_rules(name: str, method: Callable, single: bool, returns: str) -> tuple[Callable, Callable]:
    def rrule(s, *args):
        target = primal(s)
        sources = _reverse_sources(args, name, single, list(target), [_fdata(a) for a in args])
        change = _Mutation(name, method, target, args, [src.items for src in sources[1:]], single)
        channel = _ReverseChannel(set_fdata(s), change, sources, name)

        def pullback(dy):
            rdatas = channel.back(dy if returns == "item" else NoRData)
            change.restore()
            return (NoRData, NoRData, *rdatas)

        return _output_of(returns, change, s.fdata if isinstance(s, CoDual) else NoFData), pullback

    def frule(s, *args):
        target, t = primal(s), set_tangent(s)
        before = [(v, t.get(v, zero_of(v)) if t is not NoTangent else NoTangent) for v in target]
        pairs = [before, *(forward_source(a, name, single) for a in args)]
        change = _Mutation(name, method, target, args, [[p for p, _ in ps] for ps in pairs[1:]], single)
        _move_tangent(t, change, pairs, name)
        if returns == "self":
            return Dual(target, t)
        if returns == "item":
            return Dual(change.result, dict(before).get(change.result, zero_of(change.result)))
        return Dual(change.result, zero_tangent(change.result))

    rrule.__qualname__, frule.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule


def _fdata(a: Any) -> Any:
    return a.fdata if isinstance(a, CoDual) else NoFData


def _move_tangent(t: Any, change: _Mutation, pairs: list, name: str) -> None:
    """Forward mode: the set's tangent follows the mutation (in place: one tangent per set)."""
    moved = forward_tangent(change.target, change.found, pairs)
    if t is NoTangent:
        if any(moves(moved[v]) for v in change.new_from_arguments()):
            change.restore()
            raise _refuse_untracked(name)
        return
    refill(t, change.target, moved)


_MUTATING = {  # name -> (one element per argument, what it returns)
    "add": (True, "none"), "discard": (True, "none"), "remove": (True, "none"), "pop": (False, "item"),
    "clear": (False, "none"), "update": (False, "none"), "difference_update": (False, "none"),
    "intersection_update": (False, "none"), "symmetric_difference_update": (False, "none"),
}
MUTATING_RULES: dict = {}
for _name, (_single, _returns) in _MUTATING.items():
    MUTATING_RULES[_name] = _mutating_rules(f"set.{_name}", getattr(set, _name), _single, _returns)
    _register_pair((set, _name), MUTATING_RULES[_name])
# one element at a time: rules that cost what the call costs (_set_single.py)
_register_pair((set, "add"), add_rules("set.add", _refuse_untracked))
_register_pair((set, "discard"), removal_rules(missing_ok=True))
_register_pair((set, "remove"), removal_rules(missing_ok=False))
_register_pair((set, "pop"), pop_rules())

# ------------------------------------------------------------------------------------------------
# Second order: building a set selects values (the same choice for tangents); mutations are
# written out (the primal changes once, fdata, fdata tangent and tangent follow it)
# ------------------------------------------------------------------------------------------------

selection(*_BUILDING)  # (the mutations' rules: set_operators.py)

# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------

_C = Case

CASES = [
    # sets of labels carry no tangent; their mutations are undone
    _C(set.add, {1, 2}, 3, name="set.add(new)"),
    _C(set.add, {1, 2}, 2, name="set.add(present)"),
    _C(set.discard, {1, 2}, 2, name="set.discard(present)"),
    _C(set.update, {1, 2}, [3, 4], name="set.update"),
    _C(set.remove, {1, 2}, 2, name="set.remove"),
    _C(set.clear, {1, 2}, name="set.clear"),
    _C(set.difference_update, {1, 2, 3}, {2}, name="set.difference_update"),
    # sets of floats: element -> tangent
    _C(set.add, {1.5, -2.0}, 0.25, name="set.add(float)"),
    _C(set.discard, {1.5, -2.0}, 0.25, name="set.discard(absent float)"),
    _C(set.discard, {1.5, -2.0, 3}, 3, name="set.discard(label)"),
    _C(set.update, {1.5, -2.0}, [0.5, 3.0], name="set.update(list of floats)"),
    _C(set.symmetric_difference_update, {1.5, -2.0}, {0.5, 3.0}, name="set.symmetric_difference_update"),
    _C(set, [1.5, -2.0, 0.5], name="set(list of floats)"),
    _C(frozenset, (1.5, -2.0), name="frozenset(tuple of floats)"),
    _C(set.union, {1.5, -2.0}, {0.5}, name="set.union"),
    _C(operator.or_, {1.5, -2.0}, {0.5, 3.0}, name="set | set"),
    _C(operator.sub, {1.5, -2.0, 4}, {0.5, 4}, name="set - set"),
    _C(operator.and_, {1.5, 4, "a"}, {4, "a", 0.5}, name="set & set (labels)"),
    _C(operator.xor, {1.5, -2.0}, frozenset({0.5}), name="set ^ frozenset"),
    # sets of tuples holding floats: element -> its tuple's tangent
    _C(set.add, {(1.5, 1), (-2.0, 2)}, (0.25, 3), name="set.add(tuple of float and int)"),
    _C(set.discard, {(1.5, 1), (-2.0, 2), (3, 4)}, (3, 4), name="set.discard(tuple of labels)"),
    _C(set, [(1.5, "a"), (-2.0, ("b", 0.5))], name="set(list of tuples, nested)"),
    _C(operator.or_, {(1.5, 1)}, {(0.5, 2), (-1.0, 3)}, name="set | set of tuples"),
    _C(set.update, {(1.5, 1)}, [(0.5, 2)], name="set.update(list of tuples)"),
]
