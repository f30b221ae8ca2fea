"""Keys and predicates that may change data (issue 13): ``sorted``/``min``/``max``/``list.sort``
given a ``key=``, and ``filter`` given a predicate, that is Python code writing or calling
something (``def key(v): log.append(v * w); return v``).

Only the order or the choice depends on a key's value, which has zero derivative; what the key
*does* on its way (appends, writes into an array or an attribute, accumulates into a closure
cell) does have derivatives. So such a call runs as the Python definitions below, which the
transforms differentiate like user code in every mode: each key is called through the
differentiated machinery (as ``map`` calls its function), its value's primal part orders the
items (``key_order``, ``extreme_position``: zero derivative), and the items are gathered. An
exception a key raises after changing data carries that work to the caller's handler like any
differentiated call's.

``calls_through(key)`` is the static check that decides: a key whose code writes nothing and
calls nothing (``lambda p: p[0]``), and every builtin (``abs``, ``len``,
``operator.itemgetter``, ``str.lower``), stays on the plain path of the rules, which calls it
as plain Python on the primals.

This module is not part of the machinery (``transform/protocols._MACHINERY``): its definitions
are ordinary code for the transforms to differentiate.
"""
from __future__ import annotations

import dis
import functools
import types
from typing import Any


#: what a function's own code does that may change data existing before the call (anything it
#: calls may too)
_MAY_WRITE = ("STORE_SUBSCR", "STORE_SLICE", "STORE_ATTR", "STORE_GLOBAL", "STORE_DEREF", "DELETE_SUBSCR",
              "DELETE_ATTR", "DELETE_GLOBAL", "DELETE_DEREF", "CALL", "IMPORT_NAME")


def _may_write(code: types.CodeType) -> bool:
    return any(i.opname.startswith(_MAY_WRITE) for i in dis.get_instructions(code)) \
        or any(isinstance(c, types.CodeType) and _may_write(c) for c in code.co_consts)


@functools.lru_cache(maxsize=1024)
def _code_may_write(code: types.CodeType) -> bool:
    return _may_write(code)


def _python_code(key: Any) -> types.CodeType | None:
    """The code object of the Python function behind ``key`` (a function or lambda, a bound
    method, a ``functools.partial`` of one, an object with a Python ``__call__``), or None."""
    for _ in range(8):  # (partials of partials: a few levels)
        if type(key) is types.FunctionType:
            return key.__code__
        if type(key) is types.MethodType:
            key = key.__func__
        elif type(key) is functools.partial:
            key = key.func
        else:
            call = getattr(type(key), "__call__", None)
            return call.__code__ if type(call) is types.FunctionType else None
    return None


def calls_through(key: Any) -> bool:
    """Whether ``key`` (a key or predicate) is Python code that may change data: the rules then
    call it through the differentiated definitions of this module."""
    if key is None:
        return False
    code = _python_code(key)
    return code is not None and _code_may_write(code)


# --------------------------------------------------------------------------------------------
# The orders (zero derivative: only the primal values of the keys decide them; declared in
# ``ordering.py``)
# --------------------------------------------------------------------------------------------


def key_order(keys: list, reverse: bool) -> list:
    """The positions of ``keys`` in the order ``sorted`` puts their items (stable, reversed too)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def extreme_position(keys: list, largest: bool) -> int:
    """Where ``max`` (``largest``) or ``min`` finds its item: the first extreme key."""
    return (max if largest else min)(range(len(keys)), key=keys.__getitem__)


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


def sorted_calling_key(iterable, /, *, key=None, reverse=False):
    """``sorted(iterable, key=key, reverse=reverse)``, each key called once per item, in order."""
    items = list(iterable)
    keys = [key(item) for item in items]
    return [items[i] for i in key_order(keys, reverse)]


def _extreme(name: str, largest: bool, args: tuple, key: Any, default: Any) -> Any:
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
    keys = [key(item) for item in items]
    return items[extreme_position(keys, largest)]


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
    return [item for item in iterable if function(item)]


def sort_calling_key(lst, key=None, reverse=False):
    """``lst.sort(key=key, reverse=reverse)`` (also ``list.sort``'s second order)."""
    lst[:] = sorted(lst, key=key, reverse=reverse)
