"""``collections.deque`` made inside a differentiated function, in every mode: the call
``collections.deque(iterable, maxlen)`` makes a ``TrackedDeque``, a subclass of ``deque`` whose
methods are written in Python over a list of its items (``items``; an object to the tangent model), so they are differentiated
from source like user code: a deque's derivatives are its list's, and each mutation is undone
by the list rules it runs. ``append`` on a full deque drops the item at the other end, as
``maxlen`` says; ``rotate``, ``extendleft``, indexing and iteration do what ``deque``'s do: its
iterators (``DequeIterator``, for ``iter(d)``, ``for``, ``reversed(d)``) read an item when it is
asked for and raise CPython's ``RuntimeError`` once the deque changed size or was rotated (its
``state``, counted as CPython counts it).

The deque's own C storage is kept equal to ``items`` after every change (``_mirror``, no
derivative), so code that reads it in C (``np.asarray(d)``, ``repr``) sees the same values; what
takes derivatives reads ``items``. A deque passed into the function stays a ``deque`` (its
tangent is a deque: ``tangents/deques.py``; its methods: ``deque_arguments.py``).
"""
from __future__ import annotations

import collections
from typing import Any, Iterable

import numpy as np

from ...ir.lazy_iterators import Stepping, listed_reversed
from ...tangents import MutableTangent, NoRData
from ...tangents.deques import register_deque_with_fields
from ..core import CoDual, Dual, frule_for, rrule_for
from ..declare import nondifferentiable
from ..second_order import defined_as, zero


@register_deque_with_fields
class TrackedDeque(collections.deque):
    """A ``deque`` whose items live in the Python list ``items`` (and in the C deque, mirrored)."""

    # deque's own slot is object's generic lookup; naming object's tells the attribute rules so
    __getattribute__ = object.__getattribute__
    REVERSED_WALKS_BACKWARDS = True  # (frontend/loops.py: `for v in reversed(d)` may walk it by index)

    def __init__(self, iterable: Iterable = (), maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen < 0:
            raise ValueError("maxlen must be non-negative")
        self.items = []
        self.limit = maxlen
        self.state = 0  # changed by what CPython's deque counts as a mutation: its iterators check it
        self.extend(iterable)

    @property
    def maxlen(self) -> int | None:
        return self.limit

    # -- adding and removing at the ends ------------------------------------------------------

    def append(self, value: Any) -> None:
        self.state += 1
        self.items.append(value)
        if self.limit is not None and len(self.items) > self.limit:
            del self.items[0]
        _mirror(self, self.items)

    def appendleft(self, value: Any) -> None:
        self.state += 1
        self.items.insert(0, value)
        if self.limit is not None and len(self.items) > self.limit:
            del self.items[-1]
        _mirror(self, self.items)

    def pop(self) -> Any:
        if not self.items:
            raise IndexError("pop from an empty deque")
        self.state += 1
        value = self.items.pop()
        _mirror(self, self.items)
        return value

    def popleft(self) -> Any:
        if not self.items:
            raise IndexError("pop from an empty deque")
        self.state += 1
        value = self.items.pop(0)
        _mirror(self, self.items)
        return value

    def extend(self, iterable: Iterable) -> None:
        values = list(iterable)  # (a list first: d.extend(d) reads what it had)
        if self.limit == 0:  # (CPython only consumes the iterable: no mutation)
            return
        for value in values:
            self.append(value)

    def extendleft(self, iterable: Iterable) -> None:
        values = list(iterable)
        if self.limit == 0:
            return
        for value in values:
            self.appendleft(value)

    def rotate(self, n: int = 1) -> None:
        size = len(self.items)
        if size > 1:
            self.state += 1
            n = n % size
            if n:
                self.items[:] = self.items[size - n:] + self.items[:size - n]
                _mirror(self, self.items)

    def insert(self, index: int, value: Any) -> None:
        if self.limit is not None and len(self.items) >= self.limit:
            raise IndexError("deque already at its maximum size")
        self.state += 1
        self.items.insert(index, value)
        _mirror(self, self.items)

    def remove(self, value: Any) -> None:
        self.items.remove(value)
        self.state += 1
        _mirror(self, self.items)

    def clear(self) -> None:
        if self.items:  # (CPython leaves an empty deque's state alone)
            self.state += 1
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
        return DequeIterator(self, 1)

    def __reversed__(self) -> Any:
        return DequeIterator(self, -1)

    def __contains__(self, value: Any) -> bool:
        return value in self.items

    def __getitem__(self, index: int) -> Any:
        return self.items[_position(index)]

    def __setitem__(self, index: int, value: Any) -> None:
        self.items[_position(index)] = value
        _mirror(self, self.items)

    def __delitem__(self, index: int) -> None:
        self.state += 1
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


class DequeWalk(Stepping):
    """What CPython's deque iterators do, for both kinds of deque: ``counter`` items left from
    ``index`` by ``step``, each read when it is asked for (``_items``), and once the deque was
    mutated (``_mutated``) every step raises ``RuntimeError``, where a list's iterator would go on;
    a reversed one that reached its end stays there first."""

    def _start(self, size: int, step: int) -> None:
        self.counter = size  # the items left
        self.index = 0 if step > 0 else size - 1
        self.step = step

    def advance(self) -> tuple:
        if self.counter == 0 and self.step < 0:  # (CPython's reversed iterator looks for its end first)
            return False, None
        self._check_unchanged()
        if self.counter == 0:
            return False, None
        item = self._items()[self.index]
        self.index += self.step
        self.counter -= 1
        return True, item

    def rest(self) -> list:
        """Every item left, by the list rules (nothing can change the deque in between)."""
        if self.counter == 0 and self.step < 0:
            return []
        self._check_unchanged()
        items = self._items()
        n = self.counter
        self.counter = 0
        if self.step > 0:
            return items[self.index:self.index + n]
        return listed_reversed(items[self.index + 1 - n:self.index + 1])

    def _check_unchanged(self) -> None:
        if self._mutated():
            self.counter = 0
            raise RuntimeError("deque mutated during iteration")


class DequeIterator(DequeWalk):
    """``iter(d)`` and ``reversed(d)`` of a ``TrackedDeque``: its ``items`` read live (``d[i] = v``
    or ``d.reverse()`` meanwhile is seen), its ``state`` counted as CPython counts it."""

    def __init__(self, deque: TrackedDeque, step: int) -> None:
        self.deque = deque
        self.state = deque.state
        self._start(len(deque.items), step)

    def _items(self) -> list:
        return self.deque.items

    def _mutated(self) -> bool:
        return self.deque.state != self.state


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
