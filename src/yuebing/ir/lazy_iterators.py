"""The iterators ``map``, ``filter``, ``zip``, ``enumerate``, ``islice``, ``reversed`` and the endless
``itertools`` (``count``, ``cycle``, ``repeat`` without ``times``) make under differentiation
when their laziness can be seen: an argument is itself an iterator (a lazy generator, ``iter(x)``,
a user class's ``__next__``), or ``map``/``filter`` call Python code that may change data, or
``reversed`` is given a list or array, which may change before the iterator reaches an item
(``rules/iteration.py`` decides). Each is an ordinary Python object whose methods the transforms
differentiate like user code, as ``SequenceIterator`` and ``Generator`` (``ir/generators.py``):
an item is made when it is asked for (``next``, a ``for`` loop's step, ``zip`` of them,
``islice``), by the function called on that item alone, so its side effects happen once per item
taken and an iterator handed in is advanced no further than CPython advances it.

Every class steps by ``advance`` (``(True, item)`` or ``(False, None)``, no ``StopIteration``),
marked by ``STEPS_BY_ADVANCE`` so that ``step_iterator`` and ``next`` call it directly; ``rest``
lists what is left for a consumer that takes everything (``list``, ``sum``).
"""
from __future__ import annotations

from typing import Any, Callable

from .generators import Generator, SequenceIterator, step_iterator
from .primitives import EAGER_ITEMS_LIMIT, python_iterable


def iterator_of(iterable: Any) -> Any:
    """What ``iter(iterable)`` gives under differentiation: an iterator itself (a lazy generator,
    one of these), a user class's ``__iter__`` (asked once, as Python asks), else a
    ``SequenceIterator`` over the list, tuple, array, range, dict or set."""
    if type(iterable) is Generator:
        return iterable
    if python_iterable(iterable):
        iterator = type(iterable).__iter__(iterable)
        return SequenceIterator(iterator) if type(iterator) is list else iterator
    return SequenceIterator(iterable)


class Stepping:
    """What the lazy iterators share: Python's iterator protocol on top of ``advance``."""

    __yuebing_lazy_generator__ = True  # a for loop over one fetches an item per step (frontend/loops.py)
    __yuebing_steps_by_advance__ = True  # (ir.generators.STEPS_BY_ADVANCE)

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        more, item = self.advance()
        if more:
            return item
        raise StopIteration

    def rest(self) -> list:
        """Every item left, stepped one at a time (a consumer takes all of them)."""
        items = []
        while True:
            more, item = self.advance()
            if not more:
                return items
            items.append(item)
            if len(items) > EAGER_ITEMS_LIMIT:
                raise RuntimeError(f"yuebing stopped a {type(self).__name__} after {EAGER_ITEMS_LIMIT} items: it was "
                                   "consumed whole (list(), sum(), unpacking, ...) and did not end. What to do: take "
                                   "only the items you need, with next(), islice() or a for loop with break.")


def _step_all(iterators: list) -> Any:
    """One item of each iterator in turn, as ``zip``/``map`` take them; None once one has ended
    (those before it have given an item each, which is lost, as in CPython)."""
    items = []
    for iterator in iterators:
        more, item = step_iterator(iterator)
        if not more:
            return None
        items.append(item)
    return items


class LazyMap(Stepping):
    """``map(function, *iterables)``: ``function`` is called on an item of each when one is asked
    for. A consumer taking every item (``rest``) of sequences has them made by the whole-list
    ``map`` rule (``whole_map``), which calls ``function`` in the same order, as many times."""

    def __init__(self, function: Callable, iterators: list) -> None:
        self.function = function
        self.iterators = iterators

    def advance(self) -> tuple:
        items = _step_all(self.iterators)
        if items is None:
            return False, None
        return True, self.function(*items)

    def rest(self) -> list:
        if not sequences_only(self.iterators):
            return Stepping.rest(self)
        return whole_map(self.function, *_rows_left(self.iterators))


def sequences_only(iterators: list) -> bool:
    """Whether the iterators are ``SequenceIterator``s, no two the same (``zip(it, it)`` deals
    one's items out in turn). Run without derivatives: a test of types and identities."""
    return all(type(it) is SequenceIterator for it in iterators) and len(set(map(id, iterators))) == len(iterators)


def whole_map(function: Callable, *sequences: Any) -> list:
    """``map`` of lists, tuples or arrays, every item made at once (``rules/builtins.py`` gives it
    ``map``'s own rules: it is not checked for laziness again)."""
    return list(map(function, *sequences))


def _rows_left(iterators: list) -> list:
    """The columns of the rows ``zip`` of these ``SequenceIterator``s has left, the iterators
    advanced as CPython's ``zip`` advances them (one more item of each before the first that ends)."""
    n = iterators[0].left()
    for iterator in iterators:
        n = min(n, iterator.left())
    columns = []
    for iterator in iterators:
        columns.append(iterator.take(n))
    _step_all(iterators)
    return columns


class LazyFilter(Stepping):
    """``filter(function, iterable)``: the predicate (truth for None) is called on each item as
    the filter is stepped past it."""

    def __init__(self, function: Any, iterator: Any) -> None:
        self.function = function
        self.iterator = iterator

    def advance(self) -> tuple:
        while True:
            more, item = step_iterator(self.iterator)
            if not more:
                return False, None
            if self.function is None:
                if item:
                    return True, item
            elif self.function(item):
                return True, item


class LazyZip(Stepping):
    """``zip(*iterables, strict=...)``: one item of each per row; ``strict`` raises CPython's
    ``ValueError`` when one ends before the others."""

    def __init__(self, iterators: list, strict: bool) -> None:
        self.iterators = iterators
        self.strict = strict

    def advance(self) -> tuple:
        items = []
        for k, iterator in enumerate(self.iterators):
            more, item = step_iterator(iterator)
            if not more:
                if self.strict:
                    _check_strict(self.iterators, k)
                return False, None
            items.append(item)
        return (True, tuple(items)) if items else (False, None)

    def rest(self) -> list:
        if not self.strict and self.iterators and sequences_only(self.iterators):
            return list(zip(*_rows_left(self.iterators)))
        return Stepping.rest(self)


def _check_strict(iterators: list, k: int) -> None:
    """``zip(strict=True)`` found iterator ``k`` ended: CPython's error unless all end together."""
    if k > 0:
        which = "argument 1" if k == 1 else f"arguments 1-{k}"
        raise ValueError(f"zip() argument {k + 1} is shorter than {which}")
    for j in range(1, len(iterators)):
        more, _ = step_iterator(iterators[j])
        if more:
            which = "argument 1" if j == 1 else f"arguments 1-{j}"
            raise ValueError(f"zip() argument {j + 1} is longer than {which}")


class LazyEnumerate(Stepping):
    """``enumerate(iterable, start)``: ``(count, item)`` per item taken."""

    def __init__(self, iterator: Any, start: Any) -> None:
        self.iterator = iterator
        self.count = start

    def advance(self) -> tuple:
        more, item = step_iterator(self.iterator)
        if not more:
            return False, None
        count = self.count
        self.count = count + 1
        return True, (count, item)


def lazy_map(function: Callable, *iterables: Any) -> LazyMap:
    if not iterables:
        raise TypeError("map() must have at least two arguments.")
    return LazyMap(function, [iterator_of(it) for it in iterables])


def lazy_filter(function: Any, iterable: Any) -> LazyFilter:
    return LazyFilter(function, iterator_of(iterable))


def lazy_zip(*iterables: Any, strict: bool = False) -> LazyZip:
    return LazyZip([iterator_of(it) for it in iterables], strict)


def lazy_enumerate(iterable: Any, start: int = 0) -> LazyEnumerate:
    return LazyEnumerate(iterator_of(iterable), start)


_LAZY_MAKERS = {map: lazy_map, filter: lazy_filter, zip: lazy_zip, enumerate: lazy_enumerate}


def kept_iterator(builtin: Any, *args: Any, **kwargs: Any) -> Any:
    """``builtin(*args, **kwargs)`` where ``frontend/kept_iterators.py`` wrote a ``map``, ``filter``,
    ``zip`` or ``enumerate`` call whose iterator is kept: CPython's lazy iterator when ``builtin``
    is one of these builtins (differentiated like user code, each item made when it is taken),
    else the call itself (a user's own ``map``)."""
    make = _LAZY_MAKERS.get(builtin) if type(builtin) is type else None
    if make is None:
        return builtin(*args, **kwargs)
    return make(*args, **kwargs)


class Islice(Stepping):
    """``itertools.islice(iterator, start, stop, step)`` stepped as CPython steps it: skipping to
    the next index wanted, never advancing the iterator past ``stop``."""

    def __init__(self, iterator: Any, start: int, stop: Any, step: int) -> None:
        self.iterator = iterator
        self.next_index = start  # the index in the iterator of the next item given
        self.stop = stop
        self.step = step
        self.position = 0  # items taken from the iterator so far

    def advance(self) -> tuple:
        if self.iterator is None:
            return False, None
        while self.position < self.next_index:
            more, _ = step_iterator(self.iterator)
            if not more:
                return self._ended()
            self.position += 1
        if self.stop is not None and self.position >= self.stop:
            return self._ended()
        more, item = step_iterator(self.iterator)
        if not more:
            return self._ended()
        self.position += 1
        self.next_index += self.step
        if self.stop is not None and self.next_index > self.stop:
            self.next_index = self.stop
        return True, item

    def _ended(self) -> tuple:
        self.iterator = None  # CPython's islice lets go of its iterator
        return False, None


class Count(Stepping):
    """``itertools.count(start, step)``: endless."""

    def __init__(self, start: Any, step: Any) -> None:
        self.value = start
        self.step = step

    def advance(self) -> tuple:
        value = self.value
        self.value = value + self.step
        return True, value

    def rest(self) -> list:
        raise RuntimeError(_endless("itertools.count()"))


class Cycle(Stepping):
    """``itertools.cycle(iterable)``: the iterable's items as they are first taken from it (kept),
    then the kept ones again and again."""

    def __init__(self, iterator: Any) -> None:
        self.iterator = iterator
        self.saved = []
        self.index = 0

    def advance(self) -> tuple:
        if self.iterator is not None:
            more, item = step_iterator(self.iterator)
            if more:
                self.saved.append(item)
                return True, item
            self.iterator = None
        if not self.saved:
            return False, None
        item = self.saved[self.index]
        self.index = (self.index + 1) % len(self.saved)
        return True, item

    def rest(self) -> list:
        if self.iterator is None and not self.saved:
            return []
        raise RuntimeError(_endless("itertools.cycle()"))


class Repeat(Stepping):
    """``itertools.repeat(value)`` without ``times``: endless."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def advance(self) -> tuple:
        return True, self.value

    def rest(self) -> list:
        raise RuntimeError(_endless("itertools.repeat() without times"))


def _endless(name: str) -> str:
    return (f"yuebing cannot take every item of {name}: it never ends (CPython would run forever). "
            "What to do: take the items you need with next(), itertools.islice(), zip() with a finite "
            "iterable, or a for loop with break.")


def listed_reversed(seq: Any) -> list:
    """``reversed(seq)`` with every item taken at once, as a list: ``rules/ordering.py`` gives it
    ``reversed``'s whole-list rules. Where nobody can tell it from CPython's iterator (a tuple, a
    string, a range) ``reversed`` is this; ``LazyReversed.rest`` hands it what is left."""
    return list(reversed(seq))


class LazyReversed(Stepping):
    """``reversed(seq)`` of a list or an array: CPython's reverse iterator, reading ``seq[i]``
    when the item is asked for, from the last index down, so a write into ``seq`` meanwhile is
    seen. It ends for good once its index falls outside ``seq`` (a list that shrank below it),
    as ``list_reverseiterator`` does; a list that grew is not walked past where it started."""

    def __init__(self, seq: Any) -> None:
        self.seq = seq
        self.index = len(seq) - 1

    def advance(self) -> tuple:
        i = self.index
        if 0 <= i < len(self.seq):
            self.index = i - 1
            return True, self.seq[i]
        self.index = -1
        return False, None

    def rest(self) -> list:
        """What is left, by the whole-list rule: ``seq[i], seq[i - 1], ..., seq[0]``."""
        i = self.index
        self.index = -1
        if i < 0 or i >= len(self.seq):
            return []
        if i == len(self.seq) - 1:
            return listed_reversed(self.seq)
        return listed_reversed(self.seq[:i + 1])
