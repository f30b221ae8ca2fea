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
calls nothing but a few pure functions (``lambda p: p[0]``, ``lambda v: abs(v)``,
``lambda p: np.linalg.norm(p - c)``), and every builtin (``abs``, ``len``,
``operator.itemgetter``, ``str.lower``), stays on the plain path of the rules, which calls it
as plain Python on the primals. (Operators a key applies to instances of user classes run their
dunder methods as plain Python there: such a method that writes is not looked into.)

This module is not part of the machinery (``transform/protocols._MACHINERY``): its definitions
are ordinary code for the transforms to differentiate.
"""
from __future__ import annotations

import builtins
import dis
import functools
import sys
import types
from typing import Any

import numpy as np


#: what a function's own code does that may change data existing before the call
_WRITES = ("STORE_SUBSCR", "STORE_SLICE", "STORE_ATTR", "STORE_GLOBAL", "STORE_DEREF", "DELETE_SUBSCR",
           "DELETE_ATTR", "DELETE_GLOBAL", "DELETE_DEREF", "IMPORT_NAME")
#: calls whose callee is not a name the code loads from its globals (a local, a closure cell, an
#: item, ``*args``), or that pass keywords (``out=``): anything may happen
_UNNAMED_CALLS = ("PUSH_NULL", "CALL_FUNCTION_EX", "KW_NAMES", "CALL_KW", "CALL_FUNCTION", "CALL_METHOD",
                  "LOAD_SUPER_ATTR")
#: callables that change nothing given numbers, strings or arrays (a key calling only these, as
#: ``lambda v: abs(v)`` or ``lambda p: np.linalg.norm(p - c)``, stays plain)
_PURE = {builtins.abs, builtins.len, builtins.float, builtins.int, builtins.bool, builtins.complex, builtins.round,
         builtins.str, builtins.repr, builtins.tuple, builtins.isinstance, builtins.divmod, builtins.pow,
         builtins.hash, builtins.ord, builtins.min, builtins.max, builtins.sum, builtins.any, builtins.all,
         builtins.sorted, np.linalg.norm}
_PURE_MODULES = ("math", "cmath")


def _is_method_load(instruction: dis.Instruction) -> bool:
    return instruction.opname == "LOAD_METHOD" or \
        instruction.opname == "LOAD_ATTR" and "NULL|self" in instruction.argrepr  # (3.12 and later)


def _global_chain(instructions: list, k: int) -> tuple | None:
    """The names ``np, linalg, norm`` of a method loaded at ``k`` from a global
    (``np.linalg.norm``), or None when its owner is data (``p.lower()``)."""
    names = [instructions[k].argval]
    j = k - 1
    while j >= 0 and instructions[j].opname == "LOAD_ATTR" and not _is_method_load(instructions[j]):
        names.append(instructions[j].argval)
        j -= 1
    if j < 0 or instructions[j].opname != "LOAD_GLOBAL" or instructions[j].argrepr.startswith("NULL"):
        return None
    names.append(instructions[j].argval)
    return tuple(reversed(names))


def _callee_chain(instructions: list, k: int) -> tuple:
    """The names ``math, sin`` of a callee loaded from a global at ``k`` (the attributes read
    right after it: ``math.sin(x)`` of an imported module compiles so)."""
    names = [instructions[k].argval]
    j = k + 1
    while j < len(instructions) and instructions[j].opname == "LOAD_ATTR" and not _is_method_load(instructions[j]):
        names.append(instructions[j].argval)
        j += 1
    return tuple(names)


@functools.lru_cache(maxsize=1024)
def _callees(code: types.CodeType) -> tuple | None:
    """The globals (as chains of names) that ``code`` calls, or None when it writes, calls
    something else, or holds nested functions (the bytecode naming a call's callee, from
    Python 3.11 on; before, any call counts as unknown)."""
    if any(isinstance(c, types.CodeType) for c in code.co_consts):
        return None
    instructions = list(dis.get_instructions(code))
    chains = []
    for k, instruction in enumerate(instructions):
        op = instruction.opname
        if op.startswith(_WRITES) or op in _UNNAMED_CALLS or op == "CALL" and sys.version_info < (3, 11):
            return None
        if op == "LOAD_GLOBAL" and instruction.argrepr.startswith("NULL + "):
            chains.append(_callee_chain(instructions, k))
        elif _is_method_load(instruction):
            chain = _global_chain(instructions, k)
            if chain is None:
                return None
            chains.append(chain)
    return tuple(chains)


_UNBOUND = object()


def _resolve(chain: tuple, globals_: dict) -> Any:
    value = globals_.get(chain[0], _UNBOUND)
    if value is _UNBOUND:
        value = getattr(builtins, chain[0], _UNBOUND)
    for name in chain[1:]:
        if value is _UNBOUND:
            break
        value = getattr(value, name, _UNBOUND)
    return value


def _pure(value: Any) -> bool:
    try:
        if value in _PURE:
            return True
    except TypeError:  # unhashable
        return False
    return type(value) is types.BuiltinFunctionType and getattr(value, "__module__", None) in _PURE_MODULES


def _python_function(key: Any) -> types.FunctionType | None:
    """The Python function behind ``key`` (a function or lambda, a bound method, a
    ``functools.partial`` of one, an object with a Python ``__call__``), or None."""
    for _ in range(8):  # (partials of partials: a few levels)
        if type(key) is types.FunctionType:
            return key
        if type(key) is types.MethodType:
            key = key.__func__
        elif type(key) is functools.partial:
            key = key.func
        else:
            call = getattr(type(key), "__call__", None)
            return call if type(call) is types.FunctionType else None
    return None


def calls_through(key: Any) -> bool:
    """Whether ``key`` (a key or predicate) is Python code that may change data: it writes, or
    calls anything but the pure functions above (resolved on each call: a global may be rebound).
    The rules then call it through the differentiated definitions of this module."""
    if key is None:
        return False
    function = _python_function(key)
    if function is None:
        return False
    chains = _callees(function.__code__)
    return chains is None or not all(_pure(_resolve(chain, function.__globals__)) for chain in chains)


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
