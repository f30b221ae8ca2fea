"""How often a ``collections.deque`` made outside the differentiated function has been changed,
as its iterators need to know (``deque_arguments.ArgumentDequeIterator``). CPython's deque counts
its mutations in a C field Python cannot read (``state``: appends, pops, rotations, inserts,
removals, clearing), and its iterators raise ``RuntimeError: deque mutated during iteration``
once it moved; yuebing counts the same mutations here, made by its own rules and definitions,
and also every write (``d[i] = v``, ``d.reverse()``), after which an iterator reads the items
again. The counts are kept by the deque's id while it lives (deques are not hashable).
"""
from __future__ import annotations

import collections
import weakref

from ..declare import nondifferentiable

_COUNTS: dict[int, list] = {}  # id(deque) -> [weak reference, mutations, writes]


def _counts(d: collections.deque) -> list:
    key = id(d)
    entry = _COUNTS.get(key)
    if entry is None or entry[0]() is not d:
        entry = _COUNTS[key] = [weakref.ref(d, lambda ref: _forget(key, ref)), 0, 0]
    return entry


def _forget(key: int, ref: weakref.ref) -> None:
    if _COUNTS.get(key, [None])[0] is ref:
        del _COUNTS[key]


def mutations(d: collections.deque) -> int:
    """The mutations of ``d`` CPython's deque would have counted so far (in yuebing's rules)."""
    return _counts(d)[1]


def writes(d: collections.deque) -> int:
    """The changes of ``d``'s items so far (mutations and writes in place)."""
    return _counts(d)[2]


def count_mutation(d: collections.deque) -> None:
    entry = _counts(d)
    entry[1] += 1
    entry[2] += 1


def count_write(d: collections.deque) -> None:
    _counts(d)[2] += 1


nondifferentiable(mutations, writes, count_mutation, count_write)
