"""``asyncio`` under differentiation: its functions and classes are declared to be the definitions
of yuebing's own event loop (``ir/event_loop.py``, ``ir/event_loop_api.py``), which the transforms
differentiate like user code (``defined_as``). ``asyncio.run`` runs a coroutine (an ``async def``
rewritten by ``frontend/async_functions.py`` into a resumable generator) on a new loop; tasks
interleave at their awaits in ``asyncio.run``'s order; ``sleep`` waits on a virtual clock."""
from __future__ import annotations

import asyncio
from typing import Any

from ..ir import event_loop as L
from ..ir import event_loop_api as A
from .core import register_frule, register_rrule
from .second_order import defined_as, zero


def _run(main: Any, *, debug: Any = None) -> Any:
    return L.run(main)


def _sleep(delay: Any, result: Any = None) -> Any:
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


for _target, _definition in (
        (asyncio.run, _run), (asyncio.sleep, _sleep), (asyncio.gather, _gather),
        (asyncio.create_task, _create_task), (asyncio.ensure_future, _ensure_future),
        (asyncio.wait_for, _wait_for), (asyncio.get_running_loop, _get_running_loop),
        (asyncio.get_event_loop, _get_running_loop), (asyncio.current_task, _current_task),
        (asyncio.Event, _event), (asyncio.Lock, _lock), (asyncio.Semaphore, _semaphore),
        (asyncio.BoundedSemaphore, _bounded_semaphore), (asyncio.Queue, _queue), (asyncio.TaskGroup, _task_group),
        (anext, _anext), (aiter, _aiter)):
    defined_as(_target, _definition)

def _not_on_the_loop(*args: Any, **kwargs: Any) -> Any:
    """The rest of ``asyncio`` (``wait``, ``as_completed``, ``shield``, ``timeout``, ``Condition``,
    threads, other loops): refused by name rather than run against a loop it was not written for."""
    raise TypeError(
        "yuebing cannot differentiate this asyncio function or class: under differentiation async code runs on "
        "yuebing's own event loop, which has asyncio.run, sleep, gather, create_task, ensure_future, wait_for, "
        "get_running_loop (create_task, create_future, call_soon, call_later, run_in_executor), current_task, "
        "Event, Lock, Semaphore, BoundedSemaphore, Queue and TaskGroup. What to do: write it with those (a loop "
        "over gather for wait/as_completed, wait_for for timeout), or do it outside the differentiated function.")


for _refused in (asyncio.wait, asyncio.as_completed, asyncio.shield, asyncio.timeout, asyncio.timeout_at,
                 asyncio.Condition, asyncio.Barrier, asyncio.PriorityQueue, asyncio.LifoQueue, asyncio.to_thread,
                 asyncio.run_coroutine_threadsafe, asyncio.new_event_loop, asyncio.Runner, asyncio.Future,
                 asyncio.Task, asyncio.wrap_future):
    register_rrule(_refused, _not_on_the_loop)
    register_frule(_refused, _not_on_the_loop)
    zero(_refused)

CASES: list = []  # (exercised by tests/test_async.py and test_async_loop.py: async code needs user code)
