"""Keys and predicates that may change data (issue 13): ``sorted``/``min``/``max``/``list.sort``
given a ``key=``, and ``filter`` given a predicate, that is Python code writing or calling
something (``def key(v): log.append(v * w); return v``).

Only the order or the choice depends on a key's value, which has zero derivative; what the key
*does* on its way (appends, writes into an array or an attribute, accumulates into a closure
cell) does have derivatives. So such a call runs as the Python definitions below, which the
transforms differentiate like user code in every mode: each key is called through the
differentiated machinery (as ``map`` calls its function), its value's primal part orders the
items (``key_order``: zero derivative), and the items are gathered. An
exception a key raises after changing data carries that work to the caller's handler like any
differentiated call's.

``calls_through(key)`` is the static check that decides (``_pure_code.py``): a key whose code
writes nothing and calls nothing but a few pure functions (``lambda p: p[0]``,
``lambda v: abs(v)``, ``lambda p: np.linalg.norm(p - c)``), and every builtin (``abs``, ``len``,
``operator.itemgetter``, ``str.lower``), stays on the plain path of the rules, which calls it
as plain Python on the primals. The values compared are checked too (``_comparisons.py``):
objects of user classes whose comparison dunders may change data (or ``cmp_to_key`` of a
``cmp`` that may) are compared by differentiated code, in the order CPython's own algorithm
compares them (``compared_order``, ``less``/``greater``), so what the dunders write keeps its
derivatives.

This module is not part of the machinery (``transform/protocols._MACHINERY``): its definitions
are ordinary code for the transforms to differentiate.
"""
from __future__ import annotations

from typing import Any

from ._comparisons import comparison_plan, compares_through, greater, holds_sequences, is_builtin_key, less, \
    next_comparison, planned_order, python_key
from ..ir.lazy_iterators import iterator_of
from ..ir.lazy_itertools import GroupBy
from ._pure_code import calls_through  # noqa: F401 - the check, read from here by the rules


# --------------------------------------------------------------------------------------------
# The orders (zero derivative: only the primal values of the keys decide them; declared in
# ``ordering.py``)
# --------------------------------------------------------------------------------------------


def key_order(keys: list, reverse: bool) -> list:
    """The positions of ``keys`` in the order ``sorted`` puts their items (stable, reversed too)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def _empty_message(which: Any) -> str:
    try:
        which([])
    except ValueError as error:
        return str(error)
    raise AssertionError("unreachable")


_EMPTY = {"max": _empty_message(max), "min": _empty_message(min)}
_MISSING = object()  # no default= given


# --------------------------------------------------------------------------------------------
# The definitions (differentiated like user code)
# --------------------------------------------------------------------------------------------


def compared_order(values, reverse):
    """The positions of ``values`` in ``sorted``'s order, each comparison CPython's sort makes
    made here (``values[i] < values[j]`` reaching the user's dunders like user code)."""
    plan = comparison_plan(len(values), reverse)
    pair = next_comparison(plan, None)
    if holds_sequences(values):  # (tuples: their elements compared one by one)
        while pair is not None:
            pair = next_comparison(plan, less(values[pair[0]], values[pair[1]]))
    while pair is not None:
        pair = next_comparison(plan, values[pair[0]] < values[pair[1]])
    return planned_order(plan)


def sorted_calling_key(iterable, /, *, key=None, reverse=False):
    """``sorted(iterable, key=key, reverse=reverse)``, each key called once per item, in order."""
    if is_builtin_key(key):  # (cmp_to_key made outside, attrgetter: as Python code)
        key = python_key(key)
    items = list(iterable)
    keys = items if key is None else [key(item) for item in items]
    if compares_through(keys):
        order = compared_order(keys, reverse)
    else:
        order = key_order(keys, reverse)
    return [items[i] for i in order]


def _extreme(name: str, largest: bool, args: tuple, key: Any, default: Any) -> Any:
    if is_builtin_key(key):
        key = python_key(key)
    if len(args) == 1:
        items = list(args[0])
    elif default is not _MISSING:
        raise TypeError(f"Cannot specify a default for {name}() with multiple positional arguments")
    else:
        items = list(args)
    if not items:
        if default is _MISSING:
            raise ValueError(_EMPTY[name])
        return default
    # as CPython's min_max: each key, then its comparison with the best so far
    best_item = items[0]
    best = best_item if key is None else key(best_item)
    for item in items[1:]:
        value = item if key is None else key(item)
        if greater(value, best) if largest else less(value, best):
            best_item, best = item, value
    return best_item


def max_calling_key(*args, key=None, default=_MISSING):
    """``max(..., key=key)`` with its key called once per item, in order."""
    return _extreme("max", True, args, key, default)


def min_calling_key(*args, key=None, default=_MISSING):
    """``min(..., key=key)`` with its key called once per item, in order."""
    return _extreme("min", False, args, key, default)


def filter_calling_predicate(function, iterable):
    """``filter(function, iterable)`` as the list the rules return, the predicate called once per
    item (also ``filter``'s second order, with any predicate)."""
    if function is None:
        return [item for item in iterable if item]
    if is_builtin_key(function):
        function = python_key(function)
    return [item for item in iterable if function(item)]


def sort_calling_key(lst, key=None, reverse=False):
    """``lst.sort(key=key, reverse=reverse)`` (also ``list.sort``'s second order)."""
    lst[:] = sorted(lst, key=key, reverse=reverse)


def groupby_calling_key(iterable, key=None):
    """``itertools.groupby(iterable, key)``: CPython's lazy iterator (``ir/lazy_itertools.GroupBy``),
    the key called once per item as it is read, keys compared by ``is`` then ``==`` (user classes'
    dunders differentiated as user code)."""
    if is_builtin_key(key):
        key = python_key(key)
    return GroupBy(iterator_of(iterable), key)
