"""Waiting on several tasks and bounding the time spent, on yuebing's event loop
(``event_loop.py``): ``asyncio.wait``, ``as_completed``, ``shield``, ``timeout``/``timeout_at``
and ``to_thread``, written as CPython 3.11 writes them, so that values and the order of side
effects agree with ``asyncio.run``; ``rules/asyncio_rules.py`` declares the ``asyncio`` names to
be these.

Callbacks are bound methods of small objects rather than closures with ``nonlocal`` counters (the
objects' attributes carry their state, as a lazy generator's frame does).
"""
from __future__ import annotations

import asyncio
from typing import Any

from .event_loop import Future, Generator, running_loop
from .event_loop_api import Queue, ensure_future

FIRST_COMPLETED, FIRST_EXCEPTION, ALL_COMPLETED = (asyncio.FIRST_COMPLETED, asyncio.FIRST_EXCEPTION,
                                                   asyncio.ALL_COMPLETED)


def _release(waiter: Future) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Completion:
    """``asyncio.wait``'s ``_on_completion``: releases the waiter when ``return_when`` is met."""

    def __init__(self, waiter: Future, count: int, return_when: str, timer: Any) -> None:
        self.waiter, self.counter, self.return_when, self.timer = waiter, count, return_when, timer

    def on_completion(self, future: Future) -> None:
        self.counter -= 1
        if (self.counter <= 0 or self.return_when == FIRST_COMPLETED
                or self.return_when == FIRST_EXCEPTION and not future.cancelled() and future.exception() is not None):
            if self.timer is not None:
                self.timer.cancel()
            _release(self.waiter)


async def wait(fs: Any, *, timeout: Any = None, return_when: str = ALL_COMPLETED) -> tuple:
    """``asyncio.wait``: ``(done, pending)``, sets of the tasks and futures ``fs``, once
    ``return_when`` is met or ``timeout`` (virtual seconds) passed."""
    if isinstance(fs, (Future, Generator)):
        raise TypeError(f"expect a list of futures, not {type(fs).__name__}")
    if not fs:
        raise ValueError("Set of Tasks/Futures is empty.")
    if return_when not in (FIRST_COMPLETED, FIRST_EXCEPTION, ALL_COMPLETED):
        raise ValueError(f"Invalid return_when value: {return_when}")
    futures = _distinct(fs)
    if any(type(f) is Generator for f in futures):
        raise TypeError("Passing coroutines is forbidden, use tasks explicitly.")
    loop = running_loop()
    waiter = Future(loop)
    timer = None if timeout is None else loop.call_later(timeout, _release, waiter)
    completion = _Completion(waiter, len(futures), return_when, timer)
    for future in futures:
        future.add_done_callback(completion.on_completion)
    try:
        await waiter
    finally:
        if timer is not None:
            timer.cancel()
        for future in futures:
            future.remove_done_callback(completion.on_completion)
    return TaskSet(f for f in futures if f.done()), TaskSet(f for f in futures if not f.done())


class TaskSet:
    """The sets ``wait`` gives: tasks and futures by identity, with a set's methods and operators,
    iterated in the order of ``fs`` (CPython's sets iterate by address; ``set(done)`` is a set of
    them, whose tangent keeps each task's: docs/tangents.md)."""

    def __init__(self, items: Any = ()) -> None:
        self.items = _distinct(items)

    def __iter__(self) -> Any:
        return iter(list(self.items))

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return len(self.items) > 0

    def __contains__(self, item: Any) -> bool:
        return any(item is other for other in self.items)

    def __eq__(self, other: Any) -> bool:
        return len(self) == len(other) and all(item in other for item in self.items)

    def __repr__(self) -> str:
        return "{" + ", ".join(repr(item) for item in self.items) + "}" if self.items else "set()"

    def add(self, item: Any) -> None:
        if not any(item is other for other in self.items):
            self.items.append(item)

    def discard(self, item: Any) -> None:
        self.items = [other for other in self.items if other is not item]

    def remove(self, item: Any) -> None:
        if not any(item is other for other in self.items):
            raise KeyError(item)
        self.discard(item)

    def pop(self) -> Any:
        if not self.items:
            raise KeyError("pop from an empty set")
        return self.items.pop(0)

    def copy(self) -> TaskSet:
        return TaskSet(self.items)

    def union(self, *others: Any) -> TaskSet:
        joined = list(self.items)
        for other in others:
            joined.extend(other)
        return TaskSet(joined)

    def intersection(self, other: Any) -> TaskSet:
        return TaskSet(item for item in self.items if item in other)

    def difference(self, other: Any) -> TaskSet:
        return TaskSet(item for item in self.items if item not in other)

    __or__, __and__, __sub__ = union, intersection, difference


def _distinct(items: Any) -> list:
    """``items`` without repeats (by identity), in their order: the set CPython makes of them,
    iterated in a fixed order (a set of tasks iterates by their addresses)."""
    seen = []
    for item in items:
        if all(item is not other for other in seen):
            seen.append(item)
    return seen


class _Arrivals:
    """``as_completed``'s state: the tasks not done yet, and a queue of those done (``None`` for
    each left when the timeout passes)."""

    def __init__(self, todo: list) -> None:
        self.todo = todo
        self.done = Queue()
        self.timer = None

    def on_timeout(self) -> None:
        for future in self.todo:
            future.remove_done_callback(self.on_completion)
            self.done.put_nowait(None)
        self.todo = []

    def on_completion(self, future: Future) -> None:
        if not self.todo:
            return  # the timeout came first
        self.todo = [f for f in self.todo if f is not future]
        self.done.put_nowait(future)
        if not self.todo and self.timer is not None:
            self.timer.cancel()

    async def wait_for_one(self) -> Any:
        future = await self.done.get()
        if future is None:
            raise TimeoutError
        return future.result()


def as_completed(fs: Any, *, timeout: Any = None) -> Any:
    """``asyncio.as_completed``: an iterator of coroutines, each giving the result of the next
    task to finish (``TimeoutError`` for those left when ``timeout`` passed). Coroutines in ``fs``
    become tasks in the order given (CPython's order is that of a set, by address)."""
    if isinstance(fs, (Future, Generator)):
        raise TypeError(f"expect an iterable of futures, not {type(fs).__name__}")
    loop = running_loop()
    arrivals = _Arrivals([ensure_future(f, loop=loop) for f in _distinct(fs)])
    for future in arrivals.todo:
        future.add_done_callback(arrivals.on_completion)
    if arrivals.todo and timeout is not None:
        arrivals.timer = loop.call_later(timeout, arrivals.on_timeout)
    return iter([arrivals.wait_for_one() for _ in range(len(arrivals.todo))])


class _Shielded:
    """``shield``'s two callbacks: the inner task's outcome passed to the outer future, and the
    link dropped when the outer one is cancelled first."""

    def __init__(self, inner: Future, outer: Future) -> None:
        self.inner, self.outer = inner, outer

    def inner_done(self, inner: Future) -> None:
        if self.outer.cancelled():
            return
        if inner.cancelled():
            self.outer.cancel()
        elif inner.exception() is not None:
            self.outer.set_exception(inner.exception())
        else:
            self.outer.set_result(inner.result())

    def outer_done(self, outer: Future) -> None:
        if not self.inner.done():
            self.inner.remove_done_callback(self.inner_done)


def shield(arg: Any) -> Future:
    """``asyncio.shield``: a future with the result of ``arg`` (a task), whose cancelling leaves
    the task running."""
    inner = ensure_future(arg)
    if inner.done():
        return inner
    outer = Future(inner.loop)
    shielded = _Shielded(inner, outer)
    inner.add_done_callback(shielded.inner_done)
    outer.add_done_callback(shielded.outer_done)
    return outer


CREATED, ENTERED, EXPIRING, EXPIRED, EXITED = "created", "active", "expiring", "expired", "finished"


class Timeout:
    """``asyncio.Timeout`` (what ``timeout`` and ``timeout_at`` give): at its deadline on the
    virtual clock it cancels its task, and turns that ``CancelledError`` into ``TimeoutError``
    when the ``async with`` block ends."""

    def __init__(self, when: Any) -> None:
        self.state = CREATED
        self.handler = None
        self.task = None
        self.deadline = when
        self.cancelling = 0

    def when(self) -> Any:
        return self.deadline

    def reschedule(self, when: Any) -> None:
        if self.state != ENTERED:
            if self.state == CREATED:
                raise RuntimeError("Timeout has not been entered")
            raise RuntimeError(f"Cannot change state of {self.state} Timeout")
        self.deadline = when
        if self.handler is not None:
            self.handler.cancel()
        if when is None:
            self.handler = None
        else:
            loop = running_loop()
            if when <= loop.time():
                self.handler = loop.call_soon(self.on_timeout)
            else:
                self.handler = loop.call_at(when, self.on_timeout)

    def expired(self) -> bool:
        return self.state in (EXPIRING, EXPIRED)

    async def __aenter__(self) -> Timeout:
        if self.state != CREATED:
            raise RuntimeError("Timeout has already been entered")
        task = running_loop().current
        if task is None:
            raise RuntimeError("Timeout should be used inside a task")
        self.state = ENTERED
        self.task = task
        self.cancelling = task.cancelling()
        self.reschedule(self.deadline)
        return self

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> Any:
        if self.handler is not None:
            self.handler.cancel()
            self.handler = None
        if self.state == EXPIRING:
            self.state = EXPIRED
            if self.task.uncancel() <= self.cancelling and kind is asyncio.CancelledError:
                raise TimeoutError from error  # no other cancel request: this one was ours
        elif self.state == ENTERED:
            self.state = EXITED
        return None

    def on_timeout(self) -> None:
        self.task.cancel()
        self.state = EXPIRING
        self.handler = None


def timeout(delay: Any) -> Timeout:
    """``asyncio.timeout``: a deadline ``delay`` virtual seconds from now (``None``: none)."""
    return Timeout(None if delay is None else running_loop().time() + delay)


def timeout_at(when: Any) -> Timeout:
    return Timeout(when)


async def to_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``asyncio.to_thread``: ``function`` runs as ``run_in_executor`` runs it (at once, in the
    loop's thread), its result arriving on the loop's next turn."""
    loop = running_loop()
    return await loop.run_in_executor(None, _Call(function, args, kwargs).run)


class _Call:
    """A call to make later (``functools.partial`` for ``run_in_executor``)."""

    def __init__(self, function: Any, args: tuple, kwargs: dict) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs

    def run(self) -> Any:
        return self.function(*self.args, **self.kwargs)
