"""``collections.deque`` made inside a differentiated function, in every mode: the call
``collections.deque(iterable, maxlen)`` makes a ``TrackedDeque``, a subclass of ``deque`` whose
methods are written in Python over a list of its items (``items``), so they are differentiated
from source like user code: a deque's derivatives are its list's, and each mutation is undone
by the list rules it runs. ``append`` on a full deque drops the item at the other end, as
``maxlen`` says; ``rotate``, ``extendleft``, indexing and iteration do what ``deque``'s do.

The deque's own C storage is kept equal to ``items`` after every change (``_mirror``, no
derivative), so code that reads it in C (``np.asarray(d)``, ``repr``) sees the same values; what
takes derivatives reads ``items``. A deque passed into the function has no tangent type (its
items live in a C object): it is refused, naming ``collections.deque`` (docs/limitations.md).
"""
from __future__ import annotations

import collections
from typing import Any, Iterable

import numpy as np

from ...tangents import MutableTangent, NoRData
from ..core import CoDual, Dual, frule_for, rrule_for
from ..declare import nondifferentiable
from ..second_order import defined_as, zero


class TrackedDeque(collections.deque):
    """A ``deque`` whose items live in the Python list ``items`` (and in the C deque, mirrored)."""

    # deque's own slot is object's generic lookup; naming object's tells the attribute rules so
    __getattribute__ = object.__getattribute__

    def __init__(self, iterable: Iterable = (), maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen < 0:
            raise ValueError("maxlen must be non-negative")
        self.items = []
        self.limit = maxlen
        self.extend(iterable)

    @property
    def maxlen(self) -> int | None:
        return self.limit

    # -- adding and removing at the ends ------------------------------------------------------

    def append(self, value: Any) -> None:
        self.items.append(value)
        if self.limit is not None and len(self.items) > self.limit:
            del self.items[0]
        _mirror(self, self.items)

    def appendleft(self, value: Any) -> None:
        self.items.insert(0, value)
        if self.limit is not None and len(self.items) > self.limit:
            del self.items[-1]
        _mirror(self, self.items)

    def pop(self) -> Any:
        if not self.items:
            raise IndexError("pop from an empty deque")
        value = self.items.pop()
        _mirror(self, self.items)
        return value

    def popleft(self) -> Any:
        if not self.items:
            raise IndexError("pop from an empty deque")
        value = self.items.pop(0)
        _mirror(self, self.items)
        return value

    def extend(self, iterable: Iterable) -> None:
        for value in list(iterable):  # (a list first: d.extend(d) reads what it had)
            self.append(value)

    def extendleft(self, iterable: Iterable) -> None:
        for value in list(iterable):
            self.appendleft(value)

    def rotate(self, n: int = 1) -> None:
        size = len(self.items)
        if size:
            n = n % size
            if n:
                self.items[:] = self.items[size - n:] + self.items[:size - n]
                _mirror(self, self.items)

    def insert(self, index: int, value: Any) -> None:
        if self.limit is not None and len(self.items) >= self.limit:
            raise IndexError("deque already at its maximum size")
        self.items.insert(index, value)
        _mirror(self, self.items)

    def remove(self, value: Any) -> None:
        self.items.remove(value)
        _mirror(self, self.items)

    def clear(self) -> None:
        self.items.clear()
        _mirror(self, self.items)

    def reverse(self) -> None:
        self.items.reverse()
        _mirror(self, self.items)

    def copy(self) -> "TrackedDeque":
        return _make_deque(self.items, self.limit)

    __copy__ = copy

    def count(self, value: Any) -> int:
        return self.items.count(value)

    def index(self, value: Any, *bounds: int) -> int:
        return self.items.index(value, *bounds)

    # -- the sequence protocol ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        return iter(self.items)

    def __reversed__(self) -> Any:
        return reversed(self.items)

    def __contains__(self, value: Any) -> bool:
        return value in self.items

    def __getitem__(self, index: int) -> Any:
        return self.items[_position(index)]

    def __setitem__(self, index: int, value: Any) -> None:
        self.items[_position(index)] = value
        _mirror(self, self.items)

    def __delitem__(self, index: int) -> None:
        del self.items[_position(index)]
        _mirror(self, self.items)

    def __iadd__(self, other: Iterable) -> "TrackedDeque":
        self.extend(other)
        return self

    def __add__(self, other: Any) -> "TrackedDeque":
        if not isinstance(other, collections.deque):
            return NotImplemented
        return _make_deque(self.items + list(other), self.limit)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, collections.deque):
            return NotImplemented
        return self.items == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """NumPy reads the items (``rules/numpy_creation.py`` converts them with derivatives)."""
        return np.asarray(self.items, dtype=dtype)

    def __repr__(self) -> str:
        limit = "" if self.limit is None else f", maxlen={self.limit}"
        return f"deque({self.items!r}{limit})"


def _position(index: Any) -> int:
    """A deque takes integer indices only (no slices), as ``deque`` does."""
    if isinstance(index, slice):
        raise TypeError("sequence index must be integer, not 'slice'")
    return index


def _mirror(d: TrackedDeque, items: list) -> None:
    """Make ``d``'s C storage hold ``items`` (for C code reading it; no derivative flows there)."""
    collections.deque.clear(d)
    collections.deque.extend(d, items)


nondifferentiable(_mirror)


def new_deque() -> TrackedDeque:
    """An empty ``TrackedDeque`` without its fields: ``__init__`` (Python) sets them. (Made here
    because the runtimes make an instance with ``object.__new__``, which a ``deque`` refuses.)"""
    return TrackedDeque.__new__(TrackedDeque)


@rrule_for(new_deque)
def _new_deque_rrule():
    d = new_deque()
    return CoDual(d, MutableTangent(TrackedDeque, {})), lambda dy: (NoRData,)


@frule_for(new_deque)
def _new_deque_frule():
    return Dual(new_deque(), MutableTangent(TrackedDeque, {}))


zero(new_deque)


def _make_deque(iterable=(), maxlen=None):
    made = new_deque()
    made.__init__(iterable, maxlen)
    return made


defined_as(collections.deque, _make_deque)

CASES: list = []  # the class is differentiated from source: tests/test_containers_more.py checks it
