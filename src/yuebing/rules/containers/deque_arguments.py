"""A ``collections.deque`` made outside the differentiated function (an argument, something an
argument holds, a global), in every mode. Its tangent is a deque of its items' tangents with the
same ``maxlen`` (``tangents/deques.py``); the deque itself stays the caller's object, so aliasing,
``return d`` and a deque reached twice behave as Python says.

Two primitives carry every derivative: ``deque_items(d)``, a new list of ``d``'s items (fresh
slots whose cotangents go back to ``d``'s, like ``list(lst)``), and ``deque_store(d, items)``,
which makes ``d`` hold ``items`` (like ``lst[:] = items``; the pullback puts the old items and
slots back). ``append``/``appendleft``/``pop``/``popleft`` have rules of their own, O(1) (a full
deque drops an item at the other end, put back by the pullback); each other method of ``deque``
is defined in Python over them (``defined_as``): read the items, change the list as the method
changes the deque, store them back. Calls that read such a deque (``d[i]``, ``sum(d)``, ``for v in d``,
``f(*d)``, ``np.asarray(d)``, NumPy and SciPy, ``xs.extend(d)``...) are made on the list of its items
(``plain_deque_call``, asked by ``transform/protocols.dispatch``), except the operators that
change the deque or make a new one (``d[i] = v``, ``del d[i]``, ``d += xs``, ``d * n``,
``d + e``, ``copy.copy``), which have definitions here; functions without derivatives (``len``,
``isinstance``, comparisons), Python code and what stores the deque (``xs.append(d)``) see the
deque itself. A reader that changed the list it was given instead would be refused, never
silently run on a copy (none of them does).

Each other operation copies the items: O(len(d)) a call (``d[i]`` too; ``for v in d`` copies
once).
"""
from __future__ import annotations

import collections
import copy
import itertools
import math
import operator
import types
from typing import Any, Callable

import numpy as np

from ... import tangents as T
from ...ir.primitives import as_sequence
from ...tangents import NoFData, NoRData, NoTangent
from ...tangents.deques import is_plain_deque_type, tangent_deque
from ..array_like import _ARRAY_OPERATORS as ARRAY_OPERATORS
from ..array_like import _numpy_owned as numpy_owned
from ..batched import _ALWAYS
from ..core import CoDual, Dual, RuleArgumentError, frule_for, rrule_for
from ..declare import ZERO_DERIVATIVE, nondifferentiable, nondifferentiable_methods
from ..second_order import defined_as, linear
from ..util import add_rdata_to
from ._deque_states import count_mutation, count_write, mutations, writes
from .common import _element_fdata, _restored, _slot, _with_rdata
from .deques import DequeWalk

_DEQUE = collections.deque

# ------------------------------------------------------------------------------------------------
# The two primitives
# ------------------------------------------------------------------------------------------------


def deque_items(d: collections.deque) -> list:
    """A new list of ``d``'s items."""
    return list(d)


def deque_store(d: collections.deque, items: list) -> None:
    """Make ``d`` hold ``items`` (no more than its ``maxlen``: the definitions trim first)."""
    count_write(d)  # (the definitions count what CPython counts as a mutation)
    d.clear()
    d.extend(items)


_ALWAYS.update((deque_items, deque_store))  # batched passes: they only move the items' tangents


def _plain(value: Any) -> bool:
    """Whether ``value`` is a deque whose items are all it holds (``deque`` or a subclass adding
    only methods: ``tangents/deques.is_plain_deque_type``)."""
    return isinstance(value, _DEQUE) and is_plain_deque_type(type(value))


def _tangent_deque(fd: Any) -> Any:
    """``fd`` if it is a deque's tangent, else None (a deque read as a constant)."""
    return fd if type(fd) is _DEQUE else None


@rrule_for(deque_items)
def _deque_items_rrule(d):
    items, fd = list(d.primal), _tangent_deque(d.fdata)
    if fd is None:
        return CoDual(items, [T.zero_tangent(v) for v in items]), lambda dy: (NoRData, NoRData)
    slots = [_slot(v, _element_fdata(t)) for v, t in zip(items, fd)]

    def pullback(dy):
        for i, slot in enumerate(slots):
            r = T.rdata(slot)
            if r is not NoRData:
                fd[i] = add_rdata_to(fd[i], r)
        return NoRData, NoRData

    return CoDual(items, slots), pullback


@frule_for(deque_items)
def _deque_items_frule(d):
    items, t = list(d.primal), d.tangent
    if type(t) is not _DEQUE:
        return Dual(items, [T.zero_tangent(v) for v in items])
    return Dual(items, list(t))


@rrule_for(deque_store)
def _deque_store_rrule(d, items):
    target, fd = d.primal, _tangent_deque(d.fdata)
    values, item_fd = items.primal, items.fdata
    old_values = list(target)
    deque_store(target, values)
    if fd is None:
        _refuse_derivatives_into_constant(values, item_fd)

        def plain_pullback(dy):
            deque_store(target, old_values)
            return NoRData, NoRData, NoRData

        return CoDual(None, NoFData), plain_pullback
    old_slots = list(fd)
    deque_store(fd, [_slot(v, _element_fdata(t)) for v, t in zip(values, item_fd)])

    def pullback(dy):
        for i, slot in enumerate(list(fd)):
            r = T.rdata(slot)
            if r is not NoRData:
                item_fd[i] = add_rdata_to(item_fd[i], r)
        deque_store(target, old_values)
        deque_store(fd, [_restored(s, v) for s, v in zip(old_slots, old_values)])
        return NoRData, NoRData, NoRData

    return CoDual(None, NoFData), pullback


@frule_for(deque_store)
def _deque_store_frule(d, items):
    deque_store(d.primal, items.primal)
    if type(d.tangent) is _DEQUE:
        deque_store(d.tangent, list(items.tangent))
    else:
        _refuse_derivatives_into_constant(items.primal, items.tangent)
    return Dual(None, NoTangent)


def _refuse_derivatives_into_constant(values: list, tangents: Any) -> None:
    """A deque without a tangent (read as a constant) cannot take values carrying derivatives."""
    if any(T.primal_kind(v) is not T.kinds.NONDIFF for v in values) and tangents is not NoTangent:
        raise RuleArgumentError(
            "collections.deque: yuebing cannot write values carrying derivatives into a deque it reads "
            "as a constant; pass the deque to the function as an argument")


def deque_item(d: collections.deque, index: int) -> Any:
    """``d[index]`` for an int ``index``: one item, read where CPython reads it (a loop over a
    deque reads its items by index: ``frontend/loops.py``)."""
    return d[index]


@rrule_for(deque_item)
def _deque_item_rrule(d, index):
    i, fd = index.primal, _tangent_deque(d.fdata)
    v = d.primal[i]
    if fd is None:
        return CoDual(v, _element_fdata(T.zero_tangent(v))), lambda dy: (NoRData, NoRData, NoRData)

    def pullback(dy):  # (the deque and its tangent are as they were at the read: pullbacks undo in order)
        if dy is not NoRData:
            fd[i] = add_rdata_to(fd[i], dy)
        return NoRData, NoRData, NoRData

    return CoDual(v, _element_fdata(fd[i])), pullback


@frule_for(deque_item)
def _deque_item_frule(d, index):
    v, t = d.primal[index.primal], d.tangent
    return Dual(v, t[index.primal] if type(t) is _DEQUE else T.zero_tangent(v))


linear(deque_items)
linear(deque_store, data=(1,))
linear(deque_item)
_ALWAYS.add(deque_item)

# ------------------------------------------------------------------------------------------------
# Adding and removing at the ends: rules of their own, O(1) (a loop of appends stays linear)
# ------------------------------------------------------------------------------------------------

_NOTHING = object()  # no item dropped


def _push(d: collections.deque, value: Any, left: bool) -> None:
    count_mutation(d)
    (d.appendleft if left else d.append)(value)


def _pop_end(d: collections.deque, left: bool) -> Any:
    count_mutation(d)
    return d.popleft() if left else d.pop()


def _dropped(d: collections.deque, left: bool) -> Any:
    """The item adding at one end of ``d`` drops from the other (a full deque), else ``_NOTHING``."""
    if not d or d.maxlen is None or len(d) < d.maxlen:
        return _NOTHING
    return d[-1] if left else d[0]


def _push_rrule(self: CoDual, x: CoDual, left: bool) -> tuple:
    d, fd = self.primal, _tangent_deque(self.fdata)
    if d.maxlen == 0:  # (keeps nothing: the value's cotangent is zero)
        count_mutation(d)
        return CoDual(None, NoFData), lambda dy: (NoRData, NoRData, T.zero_rdata(x.primal))
    dropped = _dropped(d, left)
    dropped_slot = NoTangent if fd is None or dropped is _NOTHING else (fd[-1] if left else fd[0])
    _push(d, x.primal, left)
    if fd is not None:
        _push(fd, _slot(x.primal, x.fdata), left)

    def pullback(dy):
        slot = NoTangent if fd is None else _pop_end(fd, left)
        _pop_end(d, left)
        if dropped is not _NOTHING:
            _push(d, dropped, not left)
            if fd is not None:
                _push(fd, _restored(dropped_slot, dropped), not left)
        return NoRData, NoRData, T.rdata(slot) if fd is not None else T.zero_rdata(x.primal)

    return CoDual(None, NoFData), pullback


def _push_frule(self: Dual, x: Dual, left: bool) -> Dual:
    _push(self.primal, x.primal, left)
    if type(self.tangent) is _DEQUE:
        _push(self.tangent, x.tangent, left)
    return Dual(None, NoTangent)


def _pop_rrule(self: CoDual, left: bool) -> tuple:
    d, fd = self.primal, _tangent_deque(self.fdata)
    if not d:
        raise IndexError("pop from an empty deque")
    value = _pop_end(d, left)
    slot = T.zero_tangent(value) if fd is None else _pop_end(fd, left)

    def pullback(dy):
        _push(d, value, left)
        if fd is not None:
            _push(fd, _with_rdata(slot, value, dy), left)
        return NoRData, NoRData

    return CoDual(value, _element_fdata(slot)), pullback


def _pop_frule(self: Dual, left: bool) -> Dual:
    if not self.primal:
        raise IndexError("pop from an empty deque")
    value = _pop_end(self.primal, left)
    t = self.tangent
    return Dual(value, _pop_end(t, left) if type(t) is _DEQUE else T.zero_tangent(value))


rrule_for((_DEQUE, "append"))(lambda self, x: _push_rrule(self, x, False))
rrule_for((_DEQUE, "appendleft"))(lambda self, x: _push_rrule(self, x, True))
frule_for((_DEQUE, "append"))(lambda self, x: _push_frule(self, x, False))
frule_for((_DEQUE, "appendleft"))(lambda self, x: _push_frule(self, x, True))
rrule_for((_DEQUE, "pop"))(lambda self: _pop_rrule(self, False))
rrule_for((_DEQUE, "popleft"))(lambda self: _pop_rrule(self, True))
frule_for((_DEQUE, "pop"))(lambda self: _pop_frule(self, False))
frule_for((_DEQUE, "popleft"))(lambda self: _pop_frule(self, True))
linear((_DEQUE, "append"), (_DEQUE, "appendleft"), stored=(1,))
linear((_DEQUE, "pop"), (_DEQUE, "popleft"))

# ------------------------------------------------------------------------------------------------
# The methods, defined over the primitives
# ------------------------------------------------------------------------------------------------


def _first_kept(d: collections.deque, items: list) -> int:
    """Where the last ``maxlen`` of ``items`` start (what a full deque keeps of them)."""
    return 0 if d.maxlen is None else max(len(items) - d.maxlen, 0)


def _at_limit(d: collections.deque) -> bool:
    return d.maxlen is not None and len(d) >= d.maxlen


def _position_of(items: list, value: Any) -> int:
    """Where ``value`` is in ``items``, or deque's own ``ValueError``."""
    for i, v in enumerate(items):
        if v is value or v == value:
            return i
    raise ValueError(f"{value!r} is not in deque")


def _check_index(index: Any) -> None:
    """A deque takes integer indices only, as ``deque`` does."""
    if isinstance(index, slice):
        raise TypeError("sequence index must be integer, not 'slice'")


def _check_plain_result(d: Any, how: str) -> None:
    """A new deque made from a subclass's instance (``w.copy()``, ``w + e``, ``w * n``) would be of
    the subclass in Python: the definitions make a ``deque``, so they refuse it by name."""
    if type(d) is not _DEQUE:
        name = type(d).__qualname__
        raise RuleArgumentError(
            f"{how}: yuebing cannot differentiate making a new {name} from a {name} (a subclass of "
            f"collections.deque) made outside the differentiated function: it would make a collections.deque "
            f"where Python makes a {name}. What to do: make a collections.deque (collections.deque(d, d.maxlen)), "
            f"or make the new {name} outside the function and pass it in")


nondifferentiable(_first_kept, _at_limit, _position_of, _check_index, _check_plain_result)


def _add_items(d, iterable, left):
    """``d.extend``/``d.extendleft``: each value added at one end by ``append``/``appendleft``
    (their rules below), a full deque dropping one at the other end."""
    values = list(iterable)  # (first: d.extend(d) reads what it had)
    if d.maxlen == 0:  # (CPython only consumes the iterable: no mutation)
        return
    for value in values:
        if left:
            d.appendleft(value)
        else:
            d.append(value)


def _extend(d, iterable):
    _add_items(d, iterable, False)


def _extendleft(d, iterable):
    _add_items(d, iterable, True)


def _rotate(d, n=1):
    items = deque_items(d)
    size = len(items)
    if size > 1:
        count_mutation(d)
        n = n % size
        if n:
            deque_store(d, items[size - n:] + items[:size - n])


def _insert(d, index, value):
    if _at_limit(d):
        raise IndexError("deque already at its maximum size")
    count_mutation(d)
    items = deque_items(d)
    items.insert(index, value)
    deque_store(d, items)


def _remove(d, value):
    items = deque_items(d)
    del items[_position_of(items, value)]
    count_mutation(d)
    deque_store(d, items)


def _clear(d):
    if len(d):  # (CPython leaves an empty deque's state alone)
        count_mutation(d)
    deque_store(d, [])


def _reverse(d):
    items = deque_items(d)
    items.reverse()
    deque_store(d, items)


def _copy(d):
    _check_plain_result(d, "copy")
    return collections.deque(deque_items(d), d.maxlen)


_METHODS = {
    "extend": _extend, "extendleft": _extendleft, "rotate": _rotate, "insert": _insert, "remove": _remove, "clear": _clear,
    "reverse": _reverse, "copy": _copy, "__copy__": _copy,
}
for _name, _definition in _METHODS.items():
    defined_as((_DEQUE, _name), _definition)
nondifferentiable_methods(_DEQUE, "count", "index", "__len__", "__contains__")

# ------------------------------------------------------------------------------------------------
# Operators that change a deque or make one
# ------------------------------------------------------------------------------------------------


def _getitem(d, index):
    _check_index(index)
    return deque_item(d, index)


def _setitem(d, index, value):
    _check_index(index)
    items = deque_items(d)
    items[index] = value
    deque_store(d, items)


def _delitem(d, index):
    _check_index(index)
    items = deque_items(d)
    del items[index]
    count_mutation(d)
    deque_store(d, items)


def _iadd(d, other):
    _extend(d, other)
    return d


def _repeated(d, n):
    """The items of ``d`` ``n`` times, the last ``maxlen`` of them kept (as ``deque * n``)."""
    _check_plain_result(d, "*")
    return collections.deque(deque_items(d) * n, d.maxlen)


def _imul(d, n):
    if len(d) and n != 1:  # (cleared or extended, as CPython counts it)
        count_mutation(d)
    items = deque_items(d) * n
    deque_store(d, items[_first_kept(d, items):])
    return d


def _add(d, other):
    _check_plain_result(d, "+")
    return collections.deque(deque_items(d) + list(other), d.maxlen)


def _plain_deques_only(fn: Callable, args: list) -> None:
    """Python's own ``TypeError`` for ``d + xs`` with ``xs`` not a deque (``list + deque`` too)."""
    if not all(isinstance(a, _DEQUE) for a in args):
        fn(*args)


#: operator -> (definition, whether every operand must be a deque) when the deque comes first
_OPERATORS = {
    operator.getitem: (_getitem, False), operator.setitem: (_setitem, False),
    operator.delitem: (_delitem, False), operator.iadd: (_iadd, False), operator.imul: (_imul, False),
    operator.add: (_add, True), operator.mul: (_repeated, False), copy.copy: (_copy, False),
}

#: calls that see the deque itself: no derivatives, or reading attributes
_AS_IT_IS = frozenset({getattr, setattr, delattr, hasattr, isinstance, type, id, len, repr, str, bool, print,
                       operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
                       operator.is_, operator.is_not, operator.truth, operator.not_, hash,
                       deque_items, deque_store, deque_item})

# ------------------------------------------------------------------------------------------------
# Walking a deque: iter(d), reversed(d), for v in d
# ------------------------------------------------------------------------------------------------


class ArgumentDequeIterator(DequeWalk):
    """``iter(d)`` and ``reversed(d)`` of a deque made outside the function (and the walk of
    ``for v in d``), as CPython's (``deques.DequeWalk``): its items are listed once and again
    after a write (``d[i] = v``, ``d.reverse()``), and its mutations are the ones
    ``_deque_states`` counted."""

    def __init__(self, deque: collections.deque, step: int) -> None:
        self.deque = deque
        self.state = mutations(deque)
        self.seen = writes(deque)
        self.items = deque_items(deque)
        self._start(len(self.items), step)

    def _items(self) -> list:
        if writes(self.deque) != self.seen:
            self.items = deque_items(self.deque)
            self.seen = writes(self.deque)
        return self.items

    def _mutated(self) -> bool:
        return mutations(self.deque) != self.state


def _walk(d):
    return ArgumentDequeIterator(d, 1)


def _walk_reversed(d):
    return ArgumentDequeIterator(d, -1)


#: what walks a deque: its own iterators (a for loop over a deque calls ``deque.__iter__``)
_WALKS = {iter: _walk, reversed: _walk_reversed, _DEQUE.__iter__: _walk, _DEQUE.__reversed__: _walk_reversed}


def _walk_of(fn: Any, args: list) -> Callable | None:
    if len(args) != 1:
        return None
    try:
        return _WALKS.get(fn)
    except TypeError:  # unhashable callables
        return None


# ------------------------------------------------------------------------------------------------
# Which definition a call receiving a deque runs
# ------------------------------------------------------------------------------------------------


def plain_deque_call(fn: Any, args: list) -> Callable | None:
    """For a call of ``fn`` (primals ``args``) receiving a deque made outside the function: the
    Python definition that runs it (see the module docstring), or None: the call receives the
    deque itself (Python code, functions without derivatives, and what stores it: ``xs.append(d)``,
    ``xs[i] = d``; a rule given a deque it cannot read refuses it by name)."""
    positions = tuple(i for i, a in enumerate(args) if _plain(a))
    if not positions:
        return None
    walk = _walk_of(fn, args)
    if walk is not None:
        return walk
    if _sees_deque(fn):
        return None
    with_array = fn in ARRAY_OPERATORS and any(isinstance(a, np.ndarray) for a in args)
    if not with_array:  # (d + a, d * a with an array a: NumPy's, on the items)
        definition = _operator_definition(fn, args, positions)
        if definition is not None:
            return definition
    if fn is operator.setitem:  # xs[i] = d stores the deque; a[:] = d (an array) reads its items
        positions = (2,) if isinstance(args[0], np.ndarray) and positions[-1] == 2 else ()
    elif not (with_array or _reads_items(fn) or _reading_method(fn)):
        return None
    if not positions:
        return None
    if isinstance(getattr(fn, "__self__", None), (list, set, frozenset, dict, str, bytes, np.ndarray)):
        return method_on_items  # (the method passed in by the call site, its owner's derivatives with it)
    key = (fn, positions)
    found = _LISTINGS.get(key)
    if found is None:
        found = _LISTINGS[key] = _call_on_items(fn, positions)
    return found


def _operator_definition(fn: Any, args: list, positions: tuple) -> Callable | None:
    """The definition of an operator that changes a deque or makes one (``_OPERATORS``), or None;
    Python's own ``TypeError`` for ``d + [1.0]`` and ``[1.0] + d``."""
    if positions[0] == 0 and fn in _OPERATORS:
        definition, all_deques = _OPERATORS[fn]
        if all_deques and not all(isinstance(a, _DEQUE) for a in args):
            fn(*args)
        return definition
    if fn is operator.mul and positions == (1,):
        return _repeated_after
    if fn is operator.add:
        fn(*args)
    return None


def _sees_deque(fn: Any) -> bool:
    try:
        return fn in _AS_IT_IS or fn in ZERO_DERIVATIVE or _bound_to_deque(fn)
    except TypeError:  # unhashable callables
        return False


def _bound_to_deque(fn: Any) -> bool:
    """``d.append`` and the other methods of a deque: their own definitions (``defined_as``)."""
    return _plain(getattr(fn, "__self__", None))


def _repeated_after(n, d):
    return _repeated(d, n)


#: builtins that read the items of the iterables they are given (and keep none of them)
_READERS = frozenset({
    list, tuple, set, frozenset, dict, sum, sorted, min, max, any, all, iter, reversed, enumerate, zip,
    map, filter, as_sequence, operator.getitem, operator.contains, operator.countOf, operator.indexOf, operator.iadd,
    operator.concat, operator.iconcat, math.fsum, math.prod, math.dist, math.hypot,
    *(getattr(itertools, name) for name in ("chain", "islice", "accumulate", "product", "combinations",
                                            "permutations", "pairwise", "starmap", "zip_longest", "cycle")),
})
#: methods of builtin types that read the items of an iterable argument
_READING_METHODS = frozenset({"extend", "update", "union", "intersection", "difference", "symmetric_difference",
                              "issubset", "issuperset", "isdisjoint", "join", "fromkeys", "__iadd__",
                              "intersection_update", "difference_update", "symmetric_difference_update"})


def _reads_items(fn: Any) -> bool:
    """Whether ``fn`` reads the items of its deque arguments rather than keeping the deque:
    ``_READERS``, reading methods of lists, sets, dicts and strings, NumPy and SciPy (which
    read a deque as an array_like)."""
    try:
        if fn in _READERS:
            return True
    except TypeError:  # unhashable callables
        return False
    return numpy_owned(fn)


def _reading_method(fn: Any) -> bool:
    """``xs.extend``, ``s.update``, ``", ".join``...: a method of a builtin container reading an
    iterable argument."""
    return isinstance(fn, types.BuiltinMethodType) and getattr(fn, "__name__", "") in _READING_METHODS \
        and isinstance(fn.__self__, (list, set, frozenset, dict, str, bytes, type))


_LISTINGS: dict = {}


def _call_on_items(fn: Callable, positions: tuple) -> Callable:
    """``fn`` called with the deques at ``positions`` replaced by lists of their items; refused
    if ``fn`` changed such a list (it would have changed the deque)."""
    def call_on_items(*args, **kwargs):
        args = list(args)
        for i in positions:
            args[i] = deque_items(args[i])
        before = _identities(args, positions)
        out = fn(*args, **kwargs)
        _check_unchanged(fn, args, positions, before)
        return out

    return call_on_items


def _identities(args: list, positions: tuple) -> list:
    return [[id(v) for v in args[i]] for i in positions]


def _check_unchanged(fn: Any, args: list, positions: tuple, before: list) -> None:
    if _identities(args, positions) != before:
        raise RuleArgumentError(
            f"{getattr(fn, '__qualname__', fn)}: yuebing cannot differentiate a C function that changes a "
            "collections.deque made outside the differentiated function; change it with its own methods, "
            "or make the deque in the function (collections.deque(xs))")


nondifferentiable(_identities, _check_unchanged, _plain)


def method_on_items(method, *args, **kwargs):
    """``method(*args)`` (``xs.extend(d)``, passed in with its owner's derivatives by the call
    site) with each deque argument replaced by the list of its items."""
    return method(*[deque_items(a) if _plain(a) else a for a in args], **kwargs)


CASES: list = []  # the definitions are differentiated from source: tests/test_deque_arguments.py checks them
