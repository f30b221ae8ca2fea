"""``asyncio`` under differentiation: async code runs sequentially (``frontend/async_functions.py``),
so an ``async def`` called gives its result at once, as a ``Finished`` (``ir/primitives.py``), and
the functions that schedule or wait for coroutines take those results, differentiated like user
code (``defined_as``): ``asyncio.run(coro)`` returns the value, ``gather`` the list of values,
``create_task``/``ensure_future`` a task already done, ``wait_for`` the value (the timeout never
expires: nothing waits), ``sleep`` nothing (no derivative). An exception a coroutine raised is
raised where it is awaited (the first of a ``gather``'s, when the gather is awaited);
``gather(..., return_exceptions=True)`` is refused."""
from __future__ import annotations

import asyncio
from typing import Any

from ..ir.primitives import AsyncItems, Finished, async_list, awaitable, awaited, items_end
from .core import register_frule, register_rrule
from .second_order import defined_as, selection, zero


def _run(main: Any, *, debug: Any = None) -> Any:
    return awaited(main).value


def _gather(*aws: Any, return_exceptions: bool = False) -> Finished:
    if return_exceptions:
        raise TypeError(
            "yuebing cannot differentiate asyncio.gather(..., return_exceptions=True): under differentiation "
            "coroutines run when they are called, one after the other. What to do: catch the exception with "
            "try/except inside the async function, and return a value that says it failed.")
    for a in aws:
        awaitable(a)
    errors = [a.error for a in aws if a.error is not None]
    if errors:  # raised by awaiting the gather, as Python raises the first
        return Finished(None, errors[0])
    return Finished([a.value for a in aws])


def _done_task(coro: Any) -> Finished:
    """A task that already ran ``coro``: its result (or exception) for every await."""
    awaitable(coro)
    return Finished(coro.value, coro.error)


def _create_task(coro: Any, *, name: Any = None, context: Any = None) -> Finished:
    return _done_task(coro)


def _ensure_future(coro_or_future: Any, *, loop: Any = None) -> Finished:
    return _done_task(coro_or_future)


def _wait_for(fut: Any, timeout: Any) -> Finished:
    return _done_task(fut)


def _sleep(delay: Any, result: Any = None) -> Finished:
    return Finished(result)


def _async_list(source: Any) -> list:
    if isinstance(source, AsyncItems):
        items_end(source)
        return list(source.items)
    iterator = type(source).__aiter__(source)
    values = []
    more = True
    while more:
        try:
            values.append(awaited(type(iterator).__anext__(iterator)).value)
        except StopAsyncIteration:
            more = False
    return values


defined_as(async_list, _async_list)  # an async comprehension's values (frontend/async_functions.py)
selection(awaited)  # x itself: a selection of its argument (its rules: rules/primitives.py)

for _target, _definition in ((asyncio.run, _run), (asyncio.gather, _gather), (asyncio.create_task, _create_task),
                             (asyncio.ensure_future, _ensure_future), (asyncio.wait_for, _wait_for),
                             (asyncio.sleep, _sleep)):
    defined_as(_target, _definition)



def _no_event_loop(*args: Any, **kwargs: Any) -> Any:
    """What needs an event loop (``asyncio.TaskGroup``, ``Queue``, ``Event``, ``run_in_executor``,
    real futures): refused by name, since sequential async code runs without one."""
    raise TypeError(
        "yuebing cannot differentiate async code that needs a running event loop (asyncio.get_running_loop or "
        "get_event_loop was called: by asyncio.TaskGroup, Queue, Event, Lock, a loop's run_in_executor or "
        "run_until_complete, a real future...): under differentiation async code runs sequentially, without an "
        "event loop. What to do: run coroutines with await, asyncio.run, gather, create_task or wait_for, and do "
        "the rest outside the differentiated function.")


for _needs_loop in (asyncio.get_running_loop, asyncio.get_event_loop, asyncio.new_event_loop):
    register_rrule(_needs_loop, _no_event_loop)
    register_frule(_needs_loop, _no_event_loop)
    zero(_needs_loop)

CASES: list = []  # (exercised by tests/test_async.py: calling async functions needs user code)
