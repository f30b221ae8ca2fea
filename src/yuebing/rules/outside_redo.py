"""Outside state left as a plain call leaves it, after a top-level reverse pass (DESIGN §2: side
effects outside the arguments happen once per gradient call, as in a plain call).

A reverse pass undoes every mutation its forward part made, outside state's too: each pullback
puts back what its rule changed. The arguments must come back as they were; the world outside
them must not. A plain call appends its line to a global log, counts itself in a module-level
object or dict, pushes into a closure made outside, and so must ``yb.grad`` (a ``global``
counter rebound with ``+=`` already was: ``outside_state._keep_written_globals``).

So when a top-level pass ends its forward part (``outside_state.leave``), ``final_state`` records
the contents of every mutable object reachable from the outside objects the pass reached
(lists, dicts, sets, deques, the ``__dict__`` of objects, the attributes of a class written to,
closure cells; shallow, by reference; writeable arrays, by value),
and after the reverse pass the redo it returns gives each its recorded contents back, in place:
identities are kept, and a container the forward pass made and stored outside (a list appended
to a global list) gets its own contents back too. Objects reachable from the arguments are left
as the reverse pass leaves them (restored), and so are arrays sharing memory with an array they
reach. Arrays are recorded by value: the reverse pass undoes the writes into an array made in the
pass (a scipy.sparse matrix's index arrays, made empty and filled by a C kernel), so one stored
outside would come back empty or as garbage. A global array read directly is a read-only view under
differentiation (not recorded); an array reached through an outside container is copied once a call.
"""
from __future__ import annotations

import collections
import types
from typing import Any, Callable

import numpy as np

from ..tangents.arrays import array_root

_ROLES = frozenset({"fdata", "tangent", "fdata_tangent", "reached"})  # (reached: outside_state.note_reached)
_NOT_RECORDED = (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                 types.CodeType)
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
_ABSENT = object()
_LIMIT = 1_000_000  # objects recorded at most (a larger reachable state is left as the reverse pass leaves it)


def final_state(memo: dict) -> Callable[[tuple], None] | None:
    """The redo of the outside state ``memo`` (an ``outside_state`` scope's) reached, as it is now
    (the end of a forward part); None when it reached none."""
    roots = [hit[0] for key, hit in memo.items() if len(key) == 2 and key[0] in _ROLES]
    if not roots:
        return None
    records: list = []
    seen: set = set()
    stack = roots
    while stack and len(records) < _LIMIT:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        record = _record(value)
        if record is None:
            continue
        records.append((value, record))
        stack.extend(_reached(record))
    if not records:
        return None

    def redo(arguments: tuple = ()) -> None:
        """Give every recorded object its recorded contents back, except what ``arguments``
        reach (the reverse pass restored those, as it must)."""
        kept = _reachable_ids(arguments) if arguments else frozenset()
        for value, record in records:
            if id(value) not in kept and (record[0] != "array" or id(array_root(value)) not in kept):
                _restore(value, record)

    return redo


def _record(value: Any) -> tuple | None:
    if isinstance(value, np.ndarray):
        return ("array", value.copy()) if value.flags.writeable else None
    if isinstance(value, list):
        return "list", list.copy(value)
    if isinstance(value, dict):
        return "dict", dict.copy(value)
    if isinstance(value, set):
        return "set", set.copy(value)
    if isinstance(value, collections.deque):
        return "deque", list(value)
    if isinstance(value, types.CellType):
        try:
            return "cell", value.cell_contents
        except ValueError:  # an empty cell
            return None
    if isinstance(value, tuple):
        return "tuple", value  # (nothing to restore: its elements are followed)
    if isinstance(value, type) and value.__flags__ & _HEAP_TYPE:  # a class written to (Particle.count += 1)
        return "class", dict(value.__dict__)
    if isinstance(value, _NOT_RECORDED) or not hasattr(value, "__dict__") or type(value).__module__ == "numpy":
        return None
    attributes = getattr(value, "__dict__", None)
    return ("object", dict(attributes)) if type(attributes) is dict else None


def _reached(record: tuple) -> list:
    kind, contents = record
    if kind == "dict" or kind == "object" or kind == "class":
        return list(contents.values())
    if kind == "cell":
        return [contents]
    if kind == "set" or kind == "array":
        return []
    return list(contents)


def _restore(value: Any, record: tuple) -> None:
    kind, contents = record
    if kind == "array":
        _restore_array(value, contents)
    elif kind == "list":
        list.__setitem__(value, slice(None), contents)
    elif kind == "dict":
        dict.clear(value)
        dict.update(value, contents)
    elif kind == "set":
        set.clear(value)
        set.update(value, contents)
    elif kind == "deque":
        value.clear()
        value.extend(contents)
    elif kind == "cell":
        value.cell_contents = contents
    elif kind == "object":
        attributes = value.__dict__
        attributes.clear()
        attributes.update(contents)
    elif kind == "class":  # (a class's namespace is read-only: its changed attributes are set again)
        for name in [n for n in value.__dict__ if n not in contents]:
            delattr(value, name)
        for name, held in contents.items():
            if value.__dict__.get(name, _ABSENT) is not held:
                setattr(value, name, held)


def _restore_array(value: np.ndarray, contents: np.ndarray) -> None:
    """Write an array's recorded values back (unless the pass resized it or made it read-only)."""
    if value.shape == contents.shape and value.flags.writeable:
        np.copyto(value, contents)


def _reachable_ids(arguments: tuple) -> frozenset:
    """The ids of the mutable objects ``arguments`` reach (containers, objects, cells), and of
    the memory of the arrays they reach (``array_root``: a view of an argument is the argument's)."""
    seen: set = set()
    stack = list(arguments)
    while stack and len(seen) < _LIMIT:
        value = stack.pop()
        if id(value) in seen:
            continue
        if isinstance(value, np.ndarray):  # (not copied: only its memory's identity matters)
            seen.update((id(value), id(array_root(value))))
            continue
        record = _record(value)
        if record is None:
            continue
        seen.add(id(value))
        stack.extend(_reached(record))
    return frozenset(seen)
