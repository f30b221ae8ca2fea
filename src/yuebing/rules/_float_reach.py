"""Whether values hold float data anywhere they reach: in containers, object attributes, closure
cells and default values, to any depth, each object looked at once.

The question of data that leaves the pass's sight: a cached function's answer that no derivative
may reach (``cached_calls.py``: the outside state the pass left), an exception's attribute that
is not what it was made from (``exception_data.py``: a user object holding floats in
``e.args``). Both must err on the side of "it does": past ``BUDGET`` values, it is taken to.
"""
from __future__ import annotations

import enum
import types
from typing import Any

import numpy as np

#: values that are no float data and hold none
LABEL_TYPES = frozenset({type(None), bool, int, str, bytes, type(Ellipsis), np.dtype, types.ModuleType})
BUDGET = 5000  # how many values are looked through before they are taken to hold floats
_NESTING = 6  # how deep labels are looked into (a tuple of tuples of enum members...)


def holds_floats(values: list) -> bool:
    """Whether ``values`` hold float data (a float, a complex, a float array) anywhere."""
    pending, seen = list(values), set()
    while pending:
        value = pending.pop()
        if isinstance(value, (float, complex, np.inexact)):
            return True
        if type(value) in LABEL_TYPES or isinstance(value, (type, np.integer, np.bool_)) or id(value) in seen:
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc" or len(seen) >= BUDGET:
            return True
        seen.add(id(value))
        pending.extend(_held(value))
    return False


def _held(value: Any) -> list:
    """The values ``value`` holds directly."""
    if isinstance(value, np.ndarray):
        return list(value.flat) if value.dtype.kind == "O" else []
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    if isinstance(value, types.CellType):
        try:
            return [value.cell_contents]
        except ValueError:  # an empty cell
            return []
    if isinstance(value, types.FunctionType):
        return [*(value.__closure__ or ()), *(value.__defaults__ or ()), *(value.__kwdefaults__ or {}).values()]
    if isinstance(value, (types.ModuleType, types.BuiltinFunctionType)):
        return []  # (a module's globals: what a pass writes there it keeps as a global slot, outside_state.py)
    return _attributes(value)


def _attributes(value: Any) -> list:
    """An object's instance attributes (``__dict__`` and the ``__slots__`` set), read without
    running its class's ``__getattr__``/``__getattribute__``."""
    try:
        namespace = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        namespace = None
    found = list(namespace.values()) if isinstance(namespace, dict) else []
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            try:
                found.append(object.__getattribute__(value, name))
            except (AttributeError, TypeError):  # a slot not set
                continue
    return found


def is_label(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is data without floats that cannot lead to any (the types of
    ``LABEL_TYPES``, classes, NumPy integers, enum members, and tuples and functions of them)."""
    kind = type(value)
    if kind in LABEL_TYPES or isinstance(value, (type, np.integer, np.bool_)):
        return True
    if depth >= _NESTING:
        return False
    if kind is tuple or kind is frozenset or isinstance(value, tuple) and hasattr(kind, "_fields"):
        return all(is_label(v, depth + 1) for v in value)
    if isinstance(value, enum.Enum):  # (an IntEnum member too): its value
        return is_label(value.value, depth + 1)
    if kind is types.BuiltinFunctionType:  # len, math.factorial; not a method bound to a list
        return value.__self__ is None or isinstance(value.__self__, types.ModuleType)
    return kind is types.FunctionType and captures_labels(value, depth + 1)


def captures_labels(function: Any, depth: int = 0) -> bool:
    """Whether ``function`` holds labels only: in its closure cells and default values (a
    function made in the differentiated code may capture a float with a derivative). A builtin
    function holds nothing."""
    if isinstance(function, types.BuiltinFunctionType):
        return is_label(function, depth)
    if type(function) is not types.FunctionType:  # a bound method (self), a callable object...
        return False
    held = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
    for cell in function.__closure__ or ():
        try:
            held.append(cell.cell_contents)
        except ValueError:  # an empty cell: a variable not bound yet
            continue
    return all(is_label(v, depth + 1) for v in held)
