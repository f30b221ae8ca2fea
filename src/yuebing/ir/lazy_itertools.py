"""CPython's lazy ``itertools`` iterators that walk other iterables, as Python classes the modes
differentiate like user code: ``chain`` (and ``chain.from_iterable``), ``accumulate``,
``pairwise``, ``starmap``, ``zip_longest``, ``compress``, ``takewhile``, ``dropwhile``,
``filterfalse`` and ``groupby``.

They read an item of what they walk when one is asked for, as CPython's do: a list changed
after the iterator is made and before it reaches an item (``c = chain(xs, ys); xs[0] = v;
sum(c)``) gives the new item and its derivative. (``product``, ``combinations`` and
``permutations`` copy their inputs when they are made, so their eager lists are CPython's.)
Each steps by ``advance`` like ``lazy_iterators.py``'s; a consumer that takes everything lists
them item by item (``Stepping.rest``).
"""
from __future__ import annotations

from typing import Any, Callable

from .generators import step_iterator
from .lazy_iterators import Stepping, iterator_of


class Chain(Stepping):
    """``chain(*iterables)``: each iterable's iterator is asked for when the one before it ends
    (``chain.from_iterable`` takes the iterables from an iterator, one at a time)."""

    def __init__(self, iterables: Any) -> None:
        self.iterables = iterables  # an iterator of the iterables
        self.current = None

    def advance(self) -> tuple:
        while True:
            if self.current is None:
                more, iterable = step_iterator(self.iterables)
                if not more:
                    return False, None
                self.current = iterator_of(iterable)
            more, item = step_iterator(self.current)
            if more:
                return True, item
            self.current = None


class Accumulate(Stepping):
    """``accumulate(iterable, func, initial=...)``: running totals (``+`` without ``func``)."""

    def __init__(self, iterator: Any, function: Callable | None, initial: Any) -> None:
        self.iterator = iterator
        self.function = function
        self.total = initial
        self.started = initial is not None
        self.initial_due = initial is not None

    def advance(self) -> tuple:
        if self.initial_due:
            self.initial_due = False
            return True, self.total
        more, item = step_iterator(self.iterator)
        if not more:
            return False, None
        if not self.started:
            self.started = True
            self.total = item
        elif self.function is None:
            self.total = self.total + item
        else:
            self.total = self.function(self.total, item)
        return True, self.total


class Pairwise(Stepping):
    """``pairwise(iterable)``: successive overlapping pairs."""

    def __init__(self, iterator: Any) -> None:
        self.iterator = iterator
        self.previous = None
        self.started = False

    def advance(self) -> tuple:
        if not self.started:
            self.started = True
            more, self.previous = step_iterator(self.iterator)
            if not more:
                return False, None
        more, item = step_iterator(self.iterator)
        if not more:
            return False, None
        pair = (self.previous, item)
        self.previous = item
        return True, pair


class Starmap(Stepping):
    """``starmap(function, iterable)``: ``function(*args)`` per item taken."""

    def __init__(self, function: Callable, iterator: Any) -> None:
        self.function = function
        self.iterator = iterator

    def advance(self) -> tuple:
        more, args = step_iterator(self.iterator)
        if not more:
            return False, None
        return True, self.function(*args)


class ZipLongest(Stepping):
    """``zip_longest(*iterables, fillvalue=...)``: rows until every iterable has ended."""

    def __init__(self, iterators: list, fillvalue: Any) -> None:
        self.iterators = iterators
        self.ended = [False for _ in iterators]
        self.fillvalue = fillvalue

    def advance(self) -> tuple:
        row = []
        for k, iterator in enumerate(self.iterators):
            item = self.fillvalue
            if not self.ended[k]:
                more, found = step_iterator(iterator)
                if more:
                    item = found
                else:
                    self.ended[k] = True
            row.append(item)
        if not row or all(self.ended):
            return False, None
        return True, tuple(row)


class Compress(Stepping):
    """``compress(data, selectors)``: the items of ``data`` whose selector is true."""

    def __init__(self, data: Any, selectors: Any) -> None:
        self.data = data
        self.selectors = selectors

    def advance(self) -> tuple:
        while True:
            more, item = step_iterator(self.data)
            if not more:
                return False, None
            more, selector = step_iterator(self.selectors)
            if not more:
                return False, None
            if selector:
                return True, item


class TakeWhile(Stepping):
    """``takewhile(predicate, iterable)``: items until the first for which ``predicate`` is false
    (that item is taken from the iterable and dropped, as CPython drops it)."""

    def __init__(self, predicate: Callable, iterator: Any) -> None:
        self.predicate = predicate
        self.iterator = iterator
        self.stopped = False

    def advance(self) -> tuple:
        if self.stopped:
            return False, None
        more, item = step_iterator(self.iterator)
        if more and self.predicate(item):
            return True, item
        self.stopped = True
        return False, None


class DropWhile(Stepping):
    """``dropwhile(predicate, iterable)``: the items from the first for which ``predicate`` is false."""

    def __init__(self, predicate: Callable, iterator: Any) -> None:
        self.predicate = predicate
        self.iterator = iterator
        self.dropping = True

    def advance(self) -> tuple:
        while True:
            more, item = step_iterator(self.iterator)
            if not more:
                return False, None
            if not self.dropping:
                return True, item
            if not self.predicate(item):
                self.dropping = False
                return True, item


class FilterFalse(Stepping):
    """``filterfalse(predicate, iterable)``: the items for which ``predicate`` (truth for None) is false."""

    def __init__(self, predicate: Any, iterator: Any) -> None:
        self.predicate = predicate
        self.iterator = iterator

    def advance(self) -> tuple:
        while True:
            more, item = step_iterator(self.iterator)
            if not more:
                return False, None
            if not (item if self.predicate is None else self.predicate(item)):
                return True, item


_NOTHING = object()  # (groupby: no key or value read yet, or the value given to a group)


class GroupBy(Stepping):
    """``groupby(iterable, key)``, as CPython's: ``(key, group)`` pairs, each group an iterator
    over the shared one that ends at the first item of another key; stepping the ``groupby``
    ends the group before (it gives no more items, as in CPython). Keys are compared by ``is``,
    then ``==``; ``key`` is called once per item read (a builtin key is made Python code first by
    the definition that makes this: ``rules/_key_functions.py``)."""

    def __init__(self, iterator: Any, key: Any) -> None:
        self.iterator = iterator
        self.key = key
        self.current_key = _NOTHING
        self.current_value = _NOTHING
        self.target_key = _NOTHING
        self.group = None

    def read(self) -> bool:
        """The next item and its key; False at the end."""
        more, item = step_iterator(self.iterator)
        if not more:
            return False
        self.current_value = item
        self.current_key = item if self.key is None else self.key(item)
        return True

    def advance(self) -> tuple:
        self.group = None
        while True:
            if self.current_key is _NOTHING:
                pass
            elif self.target_key is _NOTHING:
                break
            elif not (self.target_key is self.current_key or self.target_key == self.current_key):
                break
            if not self.read():
                return False, None
        self.target_key = self.current_key
        self.group = Grouper(self, self.target_key)
        return True, (self.current_key, self.group)


class Grouper(Stepping):
    """One group of a ``GroupBy``: its items while they have its key and it is the current group."""

    def __init__(self, parent: GroupBy, key: Any) -> None:
        self.parent = parent
        self.key = key

    def advance(self) -> tuple:
        parent = self.parent
        if parent.group is not self:
            return False, None
        if parent.current_value is _NOTHING and not parent.read():
            return False, None
        if not (self.key is parent.current_key or self.key == parent.current_key):
            return False, None
        item = parent.current_value
        parent.current_value = _NOTHING
        return True, item


def lazy_chain(*iterables: Any) -> Chain:
    return Chain(iterator_of(list(iterables)))


def lazy_chain_from_iterable(iterables: Any) -> Chain:
    return Chain(iterator_of(iterables))


def lazy_accumulate(iterable: Any, func: Callable | None = None, *, initial: Any = None) -> Accumulate:
    return Accumulate(iterator_of(iterable), func, initial)


def lazy_pairwise(iterable: Any) -> Pairwise:
    return Pairwise(iterator_of(iterable))


def lazy_starmap(function: Callable, iterable: Any) -> Starmap:
    return Starmap(function, iterator_of(iterable))


def lazy_zip_longest(*iterables: Any, fillvalue: Any = None) -> ZipLongest:
    return ZipLongest([iterator_of(it) for it in iterables], fillvalue)


def lazy_compress(data: Any, selectors: Any) -> Compress:
    return Compress(iterator_of(data), iterator_of(selectors))


def lazy_takewhile(predicate: Callable, iterable: Any) -> TakeWhile:
    return TakeWhile(predicate, iterator_of(iterable))


def lazy_dropwhile(predicate: Callable, iterable: Any) -> DropWhile:
    return DropWhile(predicate, iterator_of(iterable))


def lazy_filterfalse(predicate: Any, iterable: Any) -> FilterFalse:
    return FilterFalse(predicate, iterator_of(iterable))
