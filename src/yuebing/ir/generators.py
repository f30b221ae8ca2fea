"""What a lazy generator is under differentiation: ordinary Python objects, whose methods the
transforms differentiate like user code (``frontend/generators.py`` makes the state machines).

A generator function that cannot be evaluated eagerly into a list (it uses ``yield``'s value,
returns a value, yields inside a ``while`` loop, or is consumed by ``next``/``send``) is rewritten
into a function that returns a ``Generator``: its local variables are attributes of a ``Frame``,
and ``resume(sent, thrown=None)``, a nested function of the rewritten one, runs it from the
frame's ``state`` (raising ``thrown`` there first, for ``throw``/``close``) to its next ``yield``
and returns ``(True, value)``, ``(False, value)`` when it returns, or ``(None, None)`` when it
left with ``GeneratorExit`` (not raised out of ``resume``: reverse mode would drop the work of a
call that raised a ``BaseException`` that is not an ``Exception``, such as a finally block's). The
engine already differentiates attribute reads and writes (undone on the reverse pass) and calls of
Python functions, in every mode, so nothing here is new derivative machinery.

``resume`` is the protocol without exceptions (``yield from``, loops and ``drain`` call it, as
``step`` does for other callers); ``__next__``/``send``/``throw`` raise ``StopIteration`` as
Python's do, ``close`` runs the finally blocks. A ``for`` loop over
a ``Generator`` walks a ``LazySequence``: items are fetched one at a time as the loop reaches them
(``frontend/loops.py``), so ``break`` out of an endless generator works.
"""
from __future__ import annotations

from typing import Any, Callable

from .primitives import EAGER_ITEMS_LIMIT, _holds_float_data, as_sequence


class Frame:
    """A lazy generator's local variables (attributes) and its ``state``: where it resumes."""


#: the class attribute by which a loop's plain code tells a lazy generator (``frontend/loops.py``)
LAZY_MARK = "__yuebing_lazy_generator__"


class Generator:
    """A generator object under differentiation: ``resume`` runs its body to the next yield."""

    __yuebing_lazy_generator__ = True

    def __init__(self, resume: Callable, name: str, where: str = "", frame: Frame | None = None) -> None:
        self.resume = resume  # a finished generator's returns (False, None), or raises what is thrown in
        self.frame = frame  # (its state 0: not started)
        self.name = name
        self.where = where  # the generator function's file and line, for errors

    def __iter__(self) -> Generator:
        return self

    def step(self, sent: Any, thrown: Any = None) -> tuple:
        """``(True, value)`` for the next value yielded, ``(False, value)`` once it returned,
        ``(None, None)`` when it left with ``GeneratorExit``; ``thrown``: an exception raised
        where it is suspended (``throw``). (Generated code calls ``resume`` itself: one call
        less per item under differentiation.)"""
        return self.resume(sent, thrown)

    def __next__(self) -> Any:
        more, value = self.resume(None, None)
        if more:
            return value
        _ended(more, value, self.name)

    def send(self, sent: Any) -> Any:
        if sent is not None and self.frame is not None and self.frame.state == 0:
            raise TypeError("can't send non-None value to a just-started generator")
        more, value = self.resume(sent, None)
        if more:
            return value
        _ended(more, value, self.name)

    def throw(self, error: Any) -> Any:
        """Raise ``error`` (an exception or its class) where the generator is suspended: its
        ``except``/``finally`` blocks run; the next value it yields is returned."""
        more, value = self.resume(None, error)
        if more:
            return value
        _ended(more, value, self.name)

    def close(self) -> None:
        """Raise ``GeneratorExit`` where the generator is suspended, as Python's ``close`` does
        (its ``finally`` blocks and ``with`` exits run; nothing for a finished one)."""
        try:
            more, value = self.resume(None, GeneratorExit)  # (the class: raising makes the exception)
        except (GeneratorExit, StopIteration):
            return None
        if more:
            raise RuntimeError("generator ignored GeneratorExit")
        return None


def next_closed(generator: Any, *default: Any) -> Any:
    """``next(g(...))`` of a generator with cleanup that nothing keeps: CPython drops it at
    once, closing it (its finally blocks run); so does this."""
    try:
        value = next(generator, *default)
    finally:
        generator.close()
    return value


def _ended(more: Any, value: Any, name: str) -> None:
    """Raise what leaving a generator raises: ``GeneratorExit`` (``more`` None) or
    ``StopIteration`` (exceptions are made by raise statements, which need no rule)."""
    if more is None:
        raise GeneratorExit
    if value is None:
        raise StopIteration
    raise StopIteration(returned_value(value, name))


def returned_value(value: Any, name: str) -> Any:
    """What ``StopIteration.value`` may carry: a value without float data (the exception carries
    no derivative); a float's derivative would be lost, so that is refused."""
    if _holds_float_data(value, 0):
        raise TypeError(
            f"yuebing cannot differentiate the value the generator {name}() returns when it reaches the "
            "caller through StopIteration.value (exceptions carry no derivative). What to do: take it "
            f"with `result = yield from {name}(...)` inside another generator, or yield it as a last item.")
    return value


def delegate(iterable: Any) -> Generator:
    """What ``yield from iterable`` (and a ``for`` loop inside a lazy generator) steps through:
    a ``Generator`` itself, any other iterable by index over its sequence (a list is followed
    live, as Python's list iterator does)."""
    if type(iterable) is Generator:
        return iterable
    return Generator(_over(as_sequence(iterable)), "iter")


def _over(items: Any) -> Callable:
    frame = Frame()
    frame.index = 0

    def resume(sent: Any, thrown: Any = None) -> tuple:
        if thrown is not None:
            raise thrown
        if frame.index < len(items):
            frame.index += 1
            return True, items[frame.index - 1]
        return False, None

    return resume


class LazySequence:
    """What a ``for`` loop walks over a ``Generator``: the items fetched so far, one more fetched
    (``fetch``) each time the loop's index reaches the end, so the generator runs no further than
    the loop (an endless one can be left with ``break``)."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator
        self.items = []

    def fetch(self, k: int) -> None:
        if k == len(self.items):
            more, value = self.generator.resume(None, None)
            if more:
                self.items.append(value)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, k: int) -> Any:
        return self.items[k]


def fetch_items(k: int, *sequences: Any) -> None:
    """Before a loop's test: make item ``k`` of each lazy sequence available, if there is one
    (for ``zip``, the next ones only while the earlier ones have theirs, as ``zip`` stops)."""
    for seq in sequences:
        if type(seq) is LazySequence:
            seq.fetch(k)
            if k >= len(seq.items):
                return


def drain(generator: Generator) -> list:
    """Every item of ``generator`` (``list(g)``, ``sum(g)``, a loop over it in ``iterate_to_list``),
    stopped with an error past ``EAGER_ITEMS_LIMIT`` items rather than run forever."""
    items = []
    while True:
        more, value = generator.resume(None, None)
        if not more:
            return items
        items.append(value)
        if len(items) > EAGER_ITEMS_LIMIT:
            raise RuntimeError(endless(generator))


def is_lazy(x: Any) -> bool:
    """Whether a loop over ``x`` fetches its items one at a time (``frontend/loops.py``)."""
    return type(x) is Generator


def endless(generator: Generator) -> str:
    return (f"yuebing stopped the generator {generator.name}() after {EAGER_ITEMS_LIMIT} items: it was "
            f"consumed whole (list(), sum(), unpacking, ...) and did not end.\n{generator.where}"
            "What to do: take only the items you need, with next() or a for loop with break.")
