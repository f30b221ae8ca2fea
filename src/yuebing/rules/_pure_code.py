"""The static check of ``calls_through`` (issue 13): whether a key, predicate, comparison
dunder or ``cmp`` function is Python code that may change data (it writes, or calls anything
but a few pure functions), read from its bytecode. Code that passes stays on the plain path of
the rules that call it; code that fails is called through the differentiated machinery
(``_key_functions.py``, ``_comparisons.py``).

The check is conservative: a call it cannot name (a local, a closure cell, a method of the
data, keywords) counts as one that may change data.
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


#: callables whose calls only wrap their argument for another function to compare
#: (``functools.cmp_to_key``'s key): the type, and how to reach the function that may write
WRAPPING_KEYS: dict = {}


def calls_through(key: Any) -> bool:
    """Whether ``key`` (a key, predicate, dunder or ``cmp``) is Python code that may change data:
    it writes, or calls anything but the pure functions above (resolved on each call: a global
    may be rebound). The rules then call it through the differentiated definitions of
    ``_key_functions.py``."""
    if key is None:
        return False
    unwrap = WRAPPING_KEYS.get(type(key))
    if unwrap is not None:
        return calls_through(unwrap(key))
    function = _python_function(key)
    if function is None:
        return False
    chains = _callees(function.__code__)
    return chains is None or not all(_pure(_resolve(chain, function.__globals__)) for chain in chains)
