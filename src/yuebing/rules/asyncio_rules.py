"""``asyncio`` under differentiation: its functions and classes are declared to be the definitions
of yuebing's own event loop (``ir/event_loop.py``, ``ir/event_loop_api.py``), which the transforms
differentiate like user code (``defined_as``). ``asyncio.run`` runs a coroutine (an ``async def``
rewritten by ``frontend/async_functions.py`` into a resumable generator) on a new loop; tasks
interleave at their awaits in ``asyncio.run``'s order; ``sleep`` waits on a virtual clock. What
belongs to threads or to asyncio's own loops (``run_coroutine_threadsafe``, ``wrap_future``,
a future of another loop) is refused by name, with the way that works. ``Future()`` and
``Task(coro)`` made directly belong to the running loop, as in CPython."""
from __future__ import annotations

import asyncio
from typing import Any

from ..ir import event_loop as L
from ..ir import event_loop_api as A
from ..ir import event_loop_sync as S
from ..ir import event_loop_waiting as W
from .core import register_frule, register_rrule
from .declare import nondifferentiable
from .second_order import defined_as, zero


def _run(main: Any, *, debug: Any = None) -> Any:
    return L.run(main)


def _sleep(delay: Any, result: Any = None) -> Any:
    if delay <= 0:  # one bare yield, as CPython's sleep(0) awaits, without a coroutine around it
        return L.bare_yield(result)
    return A.sleep(delay, result)


def _gather(*aws: Any, return_exceptions: bool = False) -> Any:
    return A.gather(*aws, return_exceptions=return_exceptions)


def _create_task(coro: Any, *, name: Any = None, context: Any = None) -> Any:
    return A.create_task(coro, name=name)


def _ensure_future(coro_or_future: Any, *, loop: Any = None) -> Any:
    return A.ensure_future(coro_or_future, loop=loop)


def _wait_for(fut: Any, timeout: Any) -> Any:
    return A.wait_for(fut, timeout)


def _get_running_loop() -> Any:
    return L.running_loop()


def _current_task(loop: Any = None) -> Any:
    return A.current_task(loop)


def _anext(iterator: Any, *default: Any) -> Any:
    if default:
        return A.next_or_default(iterator, default[0])
    return type(iterator).__anext__(iterator)


def _aiter(iterable: Any) -> Any:
    return type(iterable).__aiter__(iterable)


def _event() -> Any:
    return A.Event()


def _lock() -> Any:
    return A.Lock()


def _semaphore(value: int = 1) -> Any:
    return A.Semaphore(value)


def _bounded_semaphore(value: int = 1) -> Any:
    return A.BoundedSemaphore(value)


def _queue(maxsize: int = 0) -> Any:
    return A.Queue(maxsize)


def _task_group() -> Any:
    return A.TaskGroup()


def _wait(fs: Any, *, timeout: Any = None, return_when: str = asyncio.ALL_COMPLETED) -> Any:
    return W.wait(fs, timeout=timeout, return_when=return_when)


def _as_completed(fs: Any, *, timeout: Any = None) -> Any:
    return W.as_completed(fs, timeout=timeout)


def _shield(arg: Any) -> Any:
    return W.shield(arg)


def _timeout(delay: Any) -> Any:
    return W.timeout(delay)


def _timeout_at(when: Any) -> Any:
    return W.timeout_at(when)


def _to_thread(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    return W.to_thread(func, *args, **kwargs)


def _condition(lock: Any = None) -> Any:
    return S.Condition(lock)


def _barrier(parties: int) -> Any:
    return S.Barrier(parties)


def _priority_queue(maxsize: int = 0) -> Any:
    return S.PriorityQueue(maxsize)


def _lifo_queue(maxsize: int = 0) -> Any:
    return S.LifoQueue(maxsize)


def _new_event_loop() -> Any:
    return L.Loop()


def _runner(*, debug: Any = None, loop_factory: Any = None) -> Any:
    return L.Runner(debug=debug, loop_factory=loop_factory)


def _set_event_loop(loop: Any) -> None:
    if loop is not None and not isinstance(loop, L.Loop):
        raise TypeError(f"loop must be an instance of AbstractEventLoop or None, not '{type(loop).__name__}'")
    L.set_event_loop(loop)


def _get_event_loop() -> Any:
    return L.event_loop()


def _our_loop(loop: Any, name: str) -> Any:
    """The loop a future or task made directly belongs to: ``loop=`` if it is ours, else the
    running one (asyncio's own loops do not run under differentiation)."""
    if loop is None or isinstance(loop, L.Loop):
        return loop if loop is not None else L.running_loop()
    raise TypeError(f"yuebing cannot differentiate asyncio.{name}(loop={type(loop).__qualname__}): under "
                    "differentiation async code runs on yuebing's own event loop, in one thread, and this loop is "
                    "asyncio's own. What to do: leave loop= out (the running loop is taken).")


def _future(*, loop: Any = None) -> Any:
    return L.Future(_our_loop(loop, "Future"))


def _task(coro: Any, *, loop: Any = None, name: Any = None, context: Any = None, eager_start: Any = None) -> Any:
    return L.Task(coro, _our_loop(loop, "Task"), name)


for _target, _definition in (
        (asyncio.run, _run), (asyncio.sleep, _sleep), (asyncio.gather, _gather),
        (asyncio.create_task, _create_task), (asyncio.ensure_future, _ensure_future),
        (asyncio.wait_for, _wait_for), (asyncio.get_running_loop, _get_running_loop),
        (asyncio.get_event_loop, _get_event_loop), (asyncio.set_event_loop, _set_event_loop),
        (asyncio.new_event_loop, _new_event_loop), (asyncio.Runner, _runner), (asyncio.current_task, _current_task),
        (asyncio.wait, _wait), (asyncio.as_completed, _as_completed), (asyncio.shield, _shield),
        (asyncio.timeout, _timeout), (asyncio.timeout_at, _timeout_at), (asyncio.to_thread, _to_thread),
        (asyncio.Condition, _condition), (asyncio.Barrier, _barrier), (asyncio.PriorityQueue, _priority_queue),
        (asyncio.LifoQueue, _lifo_queue),
        (asyncio.Event, _event), (asyncio.Lock, _lock), (asyncio.Semaphore, _semaphore),
        (asyncio.BoundedSemaphore, _bounded_semaphore), (asyncio.Queue, _queue), (asyncio.TaskGroup, _task_group),
        (asyncio.Future, _future), (asyncio.Task, _task), (anext, _anext), (aiter, _aiter)):
    defined_as(_target, _definition)


def _refusal(name: str, advice: str) -> Any:
    """A rule that refuses ``asyncio.<name>``, naming it (the user's line is added where it is raised)."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"yuebing cannot differentiate asyncio.{name}: under differentiation async code runs on yuebing's own "
            f"event loop, in one thread: {advice}")

    refused.__qualname__ = f"asyncio.{name} (refused)"
    return refused


for _refused, _advice in (
        (asyncio.run_coroutine_threadsafe, "run_coroutine_threadsafe hands a coroutine to a loop in another thread. "
                                           "What to do: await the coroutine (or asyncio.create_task it) in the "
                                           "differentiated code."),
        (asyncio.wrap_future, "wrap_future wraps a concurrent.futures future of a thread pool. What to do: give the "
                              "function to loop.run_in_executor or asyncio.to_thread, which yuebing runs.")):
    _rule = _refusal(_refused.__name__, _advice)
    register_rrule(_refused, _rule)
    register_frule(_refused, _rule)
    zero(_refused)

# marking a coroutine awaited: a flag, no derivative (run as it is: a call per await, kept cheap)
nondifferentiable(L.started)

CASES: list = []  # (exercised by tests/test_async.py and test_async_loop.py: async code needs user code)
