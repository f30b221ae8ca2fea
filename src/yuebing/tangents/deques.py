"""The tangent type of ``collections.deque`` (docs/tangents.md, "Deques").

A deque's tangent is a ``collections.deque`` of its items' tangents with the same ``maxlen``, as a
list's is a list: identity data (fdata), one tangent deque per primal deque, incremented in place,
its items read and written by position. The gradient of a deque argument is therefore a deque a
caller can index, iterate or ``np.asarray`` like the argument itself.

A subclass adding only methods of new names (``__slots__ = ()``) is a deque like any other: its items
are all it holds. Other subclasses of ``deque`` have no tangent type (their items live in C, their
own fields in Python: a tangent of either alone would drop the other's derivatives; a replaced
method would be bypassed by the deque rules), except those whose items live in Python fields
(``rules/containers/deques.py``'s ``TrackedDeque``, registered there), which are objects like any
other.
"""
from __future__ import annotations

import collections

DEQUE = "deque"

#: deque subclasses whose items live in Python fields: classified as objects (their fields)
_ITEMS_IN_FIELDS: set[type] = set()


def register_deque_with_fields(tp: type) -> type:
    """Declare deque subclass ``tp`` an object whose fields hold its items (its C storage only
    mirrors them, with no derivative)."""
    _ITEMS_IN_FIELDS.add(tp)
    return tp


def is_plain_deque_type(tp: type) -> bool:
    """Whether values of ``tp`` are deques whose items live in C and nothing else: ``deque`` itself,
    or a subclass adding only methods of new names (``__slots__ = ()``: no instance dict, no slot
    of its own; none of ``deque``'s methods replaced, which the deque rules would bypass)."""
    if tp is collections.deque:
        return True
    if not issubclass(tp, collections.deque) or tp.__dictoffset__ or tp.__basicsize__ != collections.deque.__basicsize__:
        return False
    own = {name for cls in tp.__mro__[:tp.__mro__.index(collections.deque)] for name in vars(cls)}
    return not (own & set(dir(collections.deque))) - _CLASS_BOOKKEEPING


#: what a class statement puts in every class's namespace (no behaviour of the deque's)
_CLASS_BOOKKEEPING = frozenset({"__module__", "__qualname__", "__doc__", "__slots__", "__firstlineno__",
                                "__static_attributes__", "__annotations__", "__orig_bases__", "__parameters__"})


def refused_subclass(tp: type) -> bool:
    """Whether ``tp`` is a deque subclass without a tangent type (see the module docstring)."""
    return issubclass(tp, collections.deque) and tp is not collections.deque and tp not in _ITEMS_IN_FIELDS


def subclass_advice(tp: type) -> str:
    return (f"yuebing has no tangent type for {tp.__module__}.{tp.__qualname__}, a subclass of "
            "collections.deque (its items live in C, its fields in Python, or it replaces a method of deque); "
            "pass a collections.deque (or a list) and keep the other fields beside it, or give the subclass "
            "__slots__ = () and methods of new names only")


def tangent_deque(items: list, like: collections.deque) -> collections.deque:
    """The tangent deque holding ``items``, with the maxlen of deque ``like``."""
    return collections.deque(items, maxlen=like.maxlen)
