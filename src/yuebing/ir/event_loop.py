"""The event loop async code runs on under differentiation: ``asyncio``'s scheduling, written as
ordinary Python that every mode differentiates like user code.

``frontend/async_functions.py`` rewrites an ``async def`` into a generator whose ``await x``
is ``yield from await_target(x)``; the lazy-generator rewrite (``frontend/generators.py``) makes it
a resumable ``Generator`` (``ir/generators.py``). A ``Task`` steps such a coroutine as CPython's
``Task.__step`` does: a bare ``yield`` (``asyncio.sleep(0)``) puts it back at the end of the ready
queue, a yielded ``Future`` parks it until the future is done, and the future's callbacks put it
back in the order the futures finish. ``Loop.run_once`` runs the ready callbacks in order, as
``BaseEventLoop._run_once`` does, so coroutines interleave at their awaits as under
``asyncio.run``. Time is virtual: a sleep's deadline is the loop's clock plus its delay, and the
clock jumps to the next deadline only when nothing is ready (so ``sleep(0.1)`` wakes before
``sleep(0.2)`` whatever the computing in between costs, and nobody waits).

``run`` (``asyncio.run``), a ``Runner`` and a loop's own ``run_until_complete`` (of
``new_event_loop()``) all run a loop here. ``rules/asyncio_rules.py`` declares ``asyncio.run``,
``gather``, ``sleep``, ``Queue``, ``Lock``, ``TaskGroup``... to be these definitions.
Derivatives cross suspensions as the lazy generators carry them: values are frame attributes,
results attributes of futures, items of queues.
"""
from __future__ import annotations

import asyncio
from typing import Any

from .generators import Frame, Generator

PENDING, FINISHED, CANCELLED = "PENDING", "FINISHED", "CANCELLED"

#: the loops of the ``asyncio.run`` calls running (innermost last)
_RUNNING: list = []


def running_loop() -> Loop:
    """``asyncio.get_running_loop()``: the loop of the innermost ``asyncio.run``."""
    if not _RUNNING:
        raise RuntimeError("no running event loop")
    return _RUNNING[-1]


#: the loop ``asyncio.set_event_loop`` set, which ``get_event_loop`` gives when none runs
_SET: list = [None]


def set_event_loop(loop: Any) -> None:
    _SET[0] = loop


def event_loop() -> Loop:
    """``asyncio.get_event_loop()``: the running loop, else the one set (made if none is)."""
    if _RUNNING:
        return _RUNNING[-1]
    if _SET[0] is None:
        _SET[0] = Loop()
    return _SET[0]


class Future:
    """``asyncio.Future``: a result (or exception) to come, and the callbacks to run then."""

    def __init__(self, loop: Any = None) -> None:
        self.loop = loop if loop is not None else running_loop()
        self.state = PENDING
        self.value = None
        self.error = None
        self.callbacks = []

    def done(self) -> bool:
        return self.state != PENDING

    def cancelled(self) -> bool:
        return self.state == CANCELLED

    def result(self) -> Any:
        if self.state == PENDING:
            raise asyncio.InvalidStateError("Result is not ready.")
        if self.error is not None:
            raise self.error
        return self.value

    def exception(self) -> Any:
        if self.state == PENDING:
            raise asyncio.InvalidStateError("Exception is not set.")
        if self.state == CANCELLED:
            raise self.error
        return self.error

    def set_result(self, value: Any) -> None:
        if self.state != PENDING:
            raise asyncio.InvalidStateError("invalid state")
        self.value = value
        self.state = FINISHED
        self.schedule_callbacks()

    def set_exception(self, error: Any) -> None:
        if self.state != PENDING:
            raise asyncio.InvalidStateError("invalid state")
        if isinstance(error, type):
            error = error()
        self.error = error
        self.state = FINISHED
        self.schedule_callbacks()

    def cancel(self, msg: Any = None) -> bool:
        if self.state != PENDING:
            return False
        self.state = CANCELLED
        self.error = asyncio.CancelledError() if msg is None else asyncio.CancelledError(msg)
        self.schedule_callbacks()
        return True

    def add_done_callback(self, callback: Any, *, context: Any = None) -> None:
        if self.state != PENDING:
            self.loop.call_soon(callback, self)
        else:
            self.callbacks.append(Callback(callback))  # (an object: second order keeps no bound methods in lists)

    def remove_done_callback(self, callback: Any) -> int:
        kept = [c for c in self.callbacks if c.function != callback]
        removed = len(self.callbacks) - len(kept)
        self.callbacks = kept
        return removed

    def schedule_callbacks(self) -> None:
        callbacks = self.callbacks
        self.callbacks = []
        for callback in callbacks:
            self.loop.call_soon(callback.function, self)


class Callback:
    """A function to call when a future is done."""

    def __init__(self, function: Any) -> None:
        self.function = function


def done_future(value: Any) -> Future:
    """An awaitable that is already finished: what ``async`` methods that never suspend give."""
    future = Future(running_loop())
    future.state = FINISHED
    future.value = value
    return future


def waiting(future: Future) -> Any:
    """``Future.__await__``: suspend (yielding the future to the task) until it is done."""
    if not future.done():
        yield future
    if not future.done():
        raise RuntimeError("await wasn't used with future")
    return future.result()


def bare_yield(result: Any = None) -> Generator:
    """What ``asyncio.sleep(0)`` awaits (CPython's ``__sleep0``): one bare ``yield``, so the task
    runs again after those already ready; then ``result`` is returned."""
    frame = Frame()
    frame.yielded = False
    frame.result = result

    def resume(sent: Any, thrown: Any = None) -> tuple:
        if thrown is not None:
            raise thrown
        if frame.yielded:
            return False, frame.result
        frame.yielded = True
        return True, None

    return Generator(resume, "sleep")


def started(coro: Generator) -> None:
    """Mark ``coro`` as awaited (or run by a task): a second time is Python's ``RuntimeError``. (A
    mark of its own: the frame's attributes are the coroutine's variables, a user's ``state`` too.)"""
    if getattr(coro, "awaited", False):
        raise RuntimeError("cannot reuse already awaited coroutine")
    coro.awaited = True


def await_target(x: Any) -> Any:
    """What ``await x`` delegates to (``yield from``): a coroutine itself, a future's ``waiting``,
    or what a user's ``__await__`` gives; anything else (a future of a real event loop, a socket)
    is refused by name."""
    if type(x) is Generator:
        started(x)
        return x
    if isinstance(x, Future):
        return waiting(x)
    if isinstance(x, asyncio.Future) or not hasattr(type(x), "__await__"):
        raise TypeError(
            f"yuebing cannot differentiate awaiting a {type(x).__qualname__}: under differentiation async code runs "
            "on yuebing's own event loop, which runs async defs, tasks and asyncio's sleep, gather, queues, locks, "
            "events and task groups. What to do: await those inside the differentiated code; do I/O (sockets, "
            "files, futures of another loop) outside it and pass the data in.")
    return type(x).__await__(x)


class Task(Future):
    """``asyncio.Task``: steps a coroutine to its next await whenever the loop runs it."""

    def __init__(self, coro: Any, loop: Any = None, name: Any = None) -> None:
        Future.__init__(self, loop)
        if type(coro) is not Generator:
            raise TypeError(f"a coroutine was expected, got {type(coro).__qualname__}")
        started(coro)
        self.coro = coro
        self.name = name
        self.must_cancel = False
        self.cancel_requests = 0
        self.waiting_on = None
        self.loop.tasks.append(self)
        self.loop.call_soon(self.step)

    def get_name(self) -> Any:
        return self.name

    def cancel(self, msg: Any = None) -> bool:
        if self.done():
            return False
        self.cancel_requests += 1
        if self.waiting_on is not None and self.waiting_on.cancel(msg):
            return True  # its wakeup throws CancelledError into the coroutine
        self.must_cancel = True
        return True

    def cancelling(self) -> int:
        return self.cancel_requests

    def uncancel(self) -> int:
        if self.cancel_requests > 0:
            self.cancel_requests -= 1
        return self.cancel_requests

    def step(self, error: Any = None) -> None:
        """Run the coroutine to its next await (``error``: raised there first). After a bare
        yield (``sleep(0)``) with nothing else ready it runs on at once: the loop's next turn
        would run this task first anyway (before any timer), and a turn costs far more."""
        running_on = True
        while running_on and not self.done():
            if self.must_cancel:
                error = asyncio.CancelledError()
                self.must_cancel = False
            self.waiting_on = None
            self.loop.current = self
            running_on = False
            try:
                more, request = self.coro.resume(None, error)
            except asyncio.CancelledError:
                Future.cancel(self)
            except (KeyboardInterrupt, SystemExit) as stop:
                Future.set_exception(self, stop)
                raise
            except BaseException as failure:  # noqa: B036 - kept in the task, raised where it is awaited
                Future.set_exception(self, failure)
            else:
                running_on = bool(more) and request is None and not self.loop.ready
                if not running_on:
                    self.advanced(more, request)
            self.loop.current = None
            error = None

    def advanced(self, more: Any, request: Any) -> None:
        if more is None:
            Future.set_exception(self, RuntimeError("coroutine ignored GeneratorExit"))
        elif not more:
            if self.must_cancel:
                Future.cancel(self)
            else:
                Future.set_result(self, request)
        elif request is None:  # a bare yield (asyncio.sleep(0)): run again after the others
            self.loop.call_soon(self.step)
        elif isinstance(request, Future):
            self.waiting_on = request
            request.add_done_callback(self.wakeup)
            if self.must_cancel and request.cancel():
                self.must_cancel = False
        else:
            self.loop.call_soon(self.step, RuntimeError(f"Task got bad yield: {request!r}"))

    def wakeup(self, future: Future) -> None:
        try:
            future.result()
        except BaseException as failure:  # noqa: B036 - thrown into the coroutine at its await
            self.step(failure)
        else:
            self.step()


class TimerHandle:
    """What ``call_later`` gives: ``cancel`` keeps its callback from running."""

    def __init__(self, when: float, callback: Any, args: tuple) -> None:
        self.when, self.callback, self.args = when, callback, args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Loop:
    """The event loop: a ready queue of callbacks run in order, and timers on a virtual clock."""

    def __init__(self) -> None:
        self.ready = []
        self.timers = []  # by deadline, then by when they were made
        self.clock = 0.0
        self.tasks = []
        self.current = None
        self.closed = False
        self.broken = False

    def time(self) -> float:
        return self.clock

    def call_soon(self, callback: Any, *args: Any, context: Any = None) -> TimerHandle:
        handle = TimerHandle(self.clock, callback, args)
        self.ready.append(handle)
        return handle

    def call_later(self, delay: float, callback: Any, *args: Any, context: Any = None) -> TimerHandle:
        return self.call_at(self.clock + delay, callback, *args)

    def call_at(self, when: float, callback: Any, *args: Any, context: Any = None) -> TimerHandle:
        handle = TimerHandle(when, callback, args)
        k = len(self.timers)
        while k > 0 and self.timers[k - 1].when > when:
            k -= 1
        self.timers.insert(k, handle)
        return handle

    def create_future(self) -> Future:
        return Future(self)

    def create_task(self, coro: Any, *, name: Any = None, context: Any = None) -> Task:
        return Task(coro, self, name)

    def run_in_executor(self, executor: Any, function: Any, *args: Any) -> Future:
        """``function(*args)`` runs here, as a differentiated call (a thread would run it at once
        too); the future finishes on the loop's next turn, as a thread's result arrives."""
        future = Future(self)
        try:
            value = function(*args)
        except Exception as failure:  # noqa: BLE001 - raised where the future is awaited
            self.call_soon(future.set_exception, failure)
        else:
            self.call_soon(future.set_result, value)
        return future

    def run_once(self) -> None:
        """One turn: the timers that are due join the ready queue, then what is ready runs."""
        if not self.ready:
            while self.timers and self.timers[0].cancelled:
                self.timers.pop(0)
            if not self.timers:
                raise RuntimeError(
                    "yuebing's event loop has nothing left to run while a task still waits (on a Queue nobody "
                    "fills, an Event nobody sets, a Lock nobody releases...): asyncio.run would wait forever.")
            self.clock = max(self.clock, self.timers[0].when)
        while self.timers and self.timers[0].when <= self.clock:
            self.ready.append(self.timers.pop(0))
        count = len(self.ready)
        for _ in range(count):
            handle = self.ready.pop(0)
            if not handle.cancelled:
                handle.callback(*handle.args)

    def run_until_complete(self, future: Any) -> Any:
        """Run until ``future`` (a coroutine becomes a task) is done, as the running loop."""
        if self.closed:
            raise RuntimeError("Event loop is closed")
        if self.is_running():
            raise RuntimeError("This event loop is already running")
        _RUNNING.append(self)
        try:
            if type(future) is Generator:
                future = Task(future, self)
            elif not isinstance(future, Future):
                raise TypeError("An asyncio.Future, a coroutine or an awaitable is required")
            while not future.done():
                self.run_once()
        finally:
            _RUNNING.pop()
            if isinstance(future, Future) and not future.done():
                self.broken = True  # stopped part way (an error of the loop's): nothing more runs
        return future.result()

    def is_running(self) -> bool:
        return any(loop is self for loop in _RUNNING)

    def is_closed(self) -> bool:
        return self.closed

    def close(self) -> None:
        if self.is_running():
            raise RuntimeError("Cannot close a running event loop")
        self.closed = True

    async def shutdown_asyncgens(self) -> None:
        return None  # (unfinished async generators are not tracked: docs/semantics.md, "Async")

    async def shutdown_default_executor(self) -> None:
        return None

    def cancel_remaining(self) -> None:
        """What ``asyncio.run`` does after its coroutine: cancel the tasks still running, and
        run them until they end."""
        if self.broken:
            return
        remaining = [t for t in self.tasks if not t.done()]
        for task in remaining:
            task.cancel()
        if remaining:
            _RUNNING.append(self)
            try:
                while any(not t.done() for t in remaining):
                    self.run_once()
            finally:
                _RUNNING.pop()


def run(main: Any, *, debug: Any = None) -> Any:
    """``asyncio.run``: ``main`` as the first task of a new loop, run until it is done; then the
    tasks left are cancelled and the loop closed."""
    if type(main) is not Generator:
        raise ValueError(f"a coroutine was expected, got {main!r}")
    loop = Loop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.cancel_remaining()
        loop.close()


class Runner:
    """``asyncio.Runner``: one loop for several ``run`` calls; ``close`` (or the end of a
    ``with`` block) cancels the tasks left and closes it."""

    def __init__(self, *, debug: Any = None, loop_factory: Any = None) -> None:
        self.state = "created"
        self.loop = None
        self.loop_factory = loop_factory

    def __enter__(self) -> Runner:
        self.lazy_init()
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.state != "initialized":
            return
        try:
            self.loop.cancel_remaining()
            self.loop.close()
        finally:
            self.state = "closed"

    def get_loop(self) -> Loop:
        self.lazy_init()
        return self.loop

    def run(self, coro: Any, *, context: Any = None) -> Any:
        if type(coro) is not Generator:
            raise ValueError(f"a coroutine was expected, got {coro!r}")
        self.lazy_init()
        return self.loop.run_until_complete(coro)

    def lazy_init(self) -> None:
        if self.state == "closed":
            raise RuntimeError("Runner is closed")
        if self.state == "initialized":
            return
        self.loop = Loop() if self.loop_factory is None else self.loop_factory()
        self.state = "initialized"
