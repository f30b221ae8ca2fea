"""``asyncio``'s functions and synchronisation classes on yuebing's event loop (``event_loop.py``),
written as CPython 3.11 writes them, so that values and the order of side effects agree with
``asyncio.run``; ``rules/asyncio_rules.py`` declares the ``asyncio`` names to be these.

Their coroutines are ``async def`` functions, rewritten under differentiation as a user's are; they
run only under differentiation (plain calls use ``asyncio`` itself).
"""
from __future__ import annotations

import asyncio
from typing import Any

from .event_loop import Future, Task, bare_yield, done_future, running_loop


async def sleep(delay: Any, result: Any = None) -> Any:
    """``asyncio.sleep``: ``sleep(0)`` lets the others run once; a delay waits on the virtual clock."""
    if delay <= 0:
        await bare_yield()
        return result
    future = Future(running_loop())
    future.loop.call_later(delay, _finish_unless_done, future, result)
    return await future


def _finish_unless_done(future: Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)


def ensure_future(aw: Any, *, loop: Any = None) -> Future:
    if isinstance(aw, Future):
        return aw
    return Task(aw, loop if loop is not None else running_loop())


def create_task(coro: Any, *, name: Any = None, context: Any = None) -> Task:
    return Task(coro, running_loop(), name)


def current_task(loop: Any = None) -> Any:
    return (loop if loop is not None else running_loop()).current


def get_running_loop() -> Any:
    return running_loop()


async def next_or_default(iterator: Any, default: Any) -> Any:
    """``anext(iterator, default)``."""
    try:
        return await type(iterator).__anext__(iterator)
    except StopAsyncIteration:
        return default


class _Gathering(Future):
    """What ``asyncio.gather`` gives: finished when every child is (or, without
    ``return_exceptions``, at the first exception)."""

    def __init__(self, loop: Any, children: list, return_exceptions: bool) -> None:
        Future.__init__(self, loop)
        self.children, self.return_exceptions = children, return_exceptions
        self.finished = 0
        for child in children:
            child.add_done_callback(self.child_done)

    def child_done(self, child: Future) -> None:
        self.finished += 1
        if self.done():
            return
        if not self.return_exceptions:
            if child.cancelled():
                self.set_exception(asyncio.CancelledError())
                return
            if child.exception() is not None:
                self.set_exception(child.exception())
                return
        if self.finished == len(self.children):
            self.set_result([_outcome(c) for c in self.children])

    def cancel(self, msg: Any = None) -> bool:
        if self.done():
            return False
        cancelled = False
        for child in self.children:
            if child.cancel(msg):
                cancelled = True
        return cancelled


def _outcome(child: Future) -> Any:
    if child.cancelled():
        return asyncio.CancelledError()
    if child.exception() is not None:
        return child.exception()
    return child.result()


def gather(*aws: Any, return_exceptions: bool = False) -> Future:
    """``asyncio.gather``: each coroutine a task (the same one once), their results in order."""
    loop = running_loop()
    if not aws:
        return done_future([])
    made = {}
    children = []
    for aw in aws:
        if id(aw) not in made:
            made[id(aw)] = ensure_future(aw, loop=loop)
        children.append(made[id(aw)])
    return _Gathering(loop, children, return_exceptions)


async def wait_for(aw: Any, timeout: Any) -> Any:
    """``asyncio.wait_for``: the result, or ``TimeoutError`` once ``timeout`` (virtual seconds)
    passed, after cancelling the task."""
    if timeout is None:
        return await aw
    loop = running_loop()
    task = ensure_future(aw, loop=loop)
    if not task.done():
        waiter = Future(loop)
        timer = loop.call_later(timeout, _finish_unless_done, waiter, None)
        task.add_done_callback(lambda _: _finish_unless_done(waiter, None))
        await waiter
        timer.cancel()
    if task.done():
        return task.result()
    task.cancel()
    while not task.done():
        await bare_yield()
    raise TimeoutError()


class Event:
    """``asyncio.Event``."""

    def __init__(self) -> None:
        self.waiters = []
        self.flag = False

    def is_set(self) -> bool:
        return self.flag

    def set(self) -> None:
        if not self.flag:
            self.flag = True
            for future in self.waiters:
                if not future.done():
                    future.set_result(True)

    def clear(self) -> None:
        self.flag = False

    async def wait(self) -> Any:
        if not self.flag:
            future = Future(running_loop())
            self.waiters.append(future)
            try:
                await future
            finally:
                self.waiters.remove(future)
        return True


class Lock:
    """``asyncio.Lock`` (first come, first served)."""

    def __init__(self) -> None:
        self.held = False
        self.waiters = []

    def locked(self) -> bool:
        return self.held

    async def acquire(self) -> Any:
        if not self.held and all(w.cancelled() for w in self.waiters):
            self.held = True
            return True
        future = Future(running_loop())
        self.waiters.append(future)
        try:
            try:
                await future
            finally:
                self.waiters.remove(future)
        except asyncio.CancelledError:
            if not self.held:
                self.wake_first()
            raise
        self.held = True
        return True

    def release(self) -> None:
        if not self.held:
            raise RuntimeError("Lock is not acquired.")
        self.held = False
        self.wake_first()

    def wake_first(self) -> None:
        if self.waiters and not self.waiters[0].done():
            self.waiters[0].set_result(True)

    async def __aenter__(self) -> Any:
        await self.acquire()
        return None

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        self.release()


class Semaphore:
    """``asyncio.Semaphore``."""

    def __init__(self, value: int = 1) -> None:
        if value < 0:
            raise ValueError("Semaphore initial value must be >= 0")
        self.value = value
        self.waiters = []

    def locked(self) -> bool:
        return self.value == 0 or any(not w.cancelled() for w in self.waiters)

    async def acquire(self) -> Any:
        if not self.locked():
            self.value -= 1
            return True
        future = Future(running_loop())
        self.waiters.append(future)
        try:
            try:
                await future
            finally:
                self.waiters.remove(future)
        except asyncio.CancelledError:
            if not future.cancelled():
                self.value += 1
                self.wake_next()
            raise
        if self.value > 0:
            self.wake_next()
        return True

    def release(self) -> None:
        self.value += 1
        self.wake_next()

    def wake_next(self) -> bool:
        for future in self.waiters:
            if not future.done():
                self.value -= 1
                future.set_result(True)
                return True
        return False

    async def __aenter__(self) -> Any:
        await self.acquire()
        return None

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        self.release()


class BoundedSemaphore(Semaphore):
    def __init__(self, value: int = 1) -> None:
        self.bound = value
        Semaphore.__init__(self, value)

    def release(self) -> None:
        if self.value >= self.bound:
            raise ValueError("BoundedSemaphore released too many times")
        Semaphore.release(self)


def _wake_next(waiters: list) -> None:
    while waiters:
        waiter = waiters.pop(0)
        if not waiter.done():
            waiter.set_result(None)
            return


class Queue:
    """``asyncio.Queue`` (first in, first out)."""

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self.items = []
        self.getters = []
        self.putters = []
        self.unfinished = 0
        self.finished = Event()
        self.finished.set()

    def qsize(self) -> int:
        return len(self.items)

    def empty(self) -> bool:
        return not self.items

    def full(self) -> bool:
        return 0 < self.maxsize <= len(self.items)

    async def put(self, item: Any) -> Any:
        while self.full():
            await _wait_in(self.putters, self.full)
        return self.put_nowait(item)

    def put_nowait(self, item: Any) -> None:
        if self.full():
            raise asyncio.QueueFull
        self.put_item(item)
        self.unfinished += 1
        self.finished.clear()
        _wake_next(self.getters)

    async def get(self) -> Any:
        while self.empty():
            await _wait_in(self.getters, self.empty)
        return self.get_nowait()

    def get_nowait(self) -> Any:
        if self.empty():
            raise asyncio.QueueEmpty
        item = self.take_item()
        _wake_next(self.putters)
        return item

    def put_item(self, item: Any) -> None:
        """(``_put``: where ``PriorityQueue`` and ``LifoQueue`` differ.)"""
        self.items.append(item)

    def take_item(self) -> Any:
        return self.items.pop(0)

    def task_done(self) -> None:
        if self.unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self.unfinished -= 1
        if self.unfinished == 0:
            self.finished.set()

    async def join(self) -> Any:
        if self.unfinished > 0:
            await self.finished.wait()
        return None


async def _wait_in(waiters: list, blocked: Any) -> Any:
    """Wait for a turn in ``waiters`` (a queue's getters or putters)."""
    future = Future(running_loop())
    waiters.append(future)
    try:
        await future
    except BaseException:
        future.cancel()
        if future in waiters:
            waiters.remove(future)
        if not blocked() and not future.cancelled():
            _wake_next(waiters)
        raise
    return None


class TaskGroup:
    """``asyncio.TaskGroup``: ``async with`` waits for every task created in it; the first failure
    cancels the others (and the body), and the failures are raised as an ``ExceptionGroup``."""

    def __init__(self) -> None:
        self.tasks = []
        self.errors = []
        self.loop = None
        self.parent = None
        self.exiting = False
        self.aborting = False
        self.parent_cancelled = False
        self.all_done = None

    async def __aenter__(self) -> TaskGroup:
        self.loop = running_loop()
        self.parent = self.loop.current
        return self

    def create_task(self, coro: Any, *, name: Any = None, context: Any = None) -> Task:
        task = Task(coro, self.loop, name)
        self.tasks.append(task)
        task.add_done_callback(self.task_done)
        return task

    def abort(self) -> None:
        self.aborting = True
        for task in self.tasks:
            if not task.done():
                task.cancel()

    def task_done(self, task: Task) -> None:
        if self.all_done is not None and all(t.done() for t in self.tasks) and not self.all_done.done():
            self.all_done.set_result(True)
        if task.cancelled() or task.exception() is None:
            return
        self.errors.append(task.exception())
        if not self.aborting:
            self.abort()
            if not self.exiting and self.parent is not None:
                self.parent_cancelled = True
                self.parent.cancel()

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> Any:
        self.exiting = True
        propagated = error if kind is asyncio.CancelledError else None
        if self.parent_cancelled and self.parent.uncancel() == 0:
            propagated = None  # the cancel was the group's own (an enclosing timeout counts the others)
        if error is not None and not self.aborting:
            self.abort()
        while not all(t.done() for t in self.tasks):
            self.all_done = Future(self.loop)
            try:
                await self.all_done
            except asyncio.CancelledError as cancelled:  # the group's task cancelled while it waits
                if not self.aborting:
                    propagated = cancelled
                    self.abort()
        if propagated is not None and not self.errors:
            raise propagated  # the group's task itself was cancelled: that goes on
        if error is not None and not isinstance(error, asyncio.CancelledError):
            self.errors.append(error)  # (after the tasks' errors, as CPython does)
        if self.errors:
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", self.errors)
        return False  # the group's task itself was cancelled: that goes on
        if error is not None and not isinstance(error, asyncio.CancelledError):
            self.errors.append(error)  # (after the tasks' errors, as CPython does)
        if self.errors:
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", self.errors)
        return False
