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
from .second_order import defined_as


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

CASES: list = []  # (exercised by tests/test_async.py and test_async_loop.py: async code needs user code)
