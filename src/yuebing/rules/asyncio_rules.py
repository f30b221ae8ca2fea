"""``asyncio`` under differentiation: async code runs sequentially (``frontend/async_functions.py``),
so an ``async def`` called gives its result at once, as a ``Finished`` (``ir/primitives.py``), and
the functions that schedule or wait for coroutines take those results, differentiated like user
code (``defined_as``): ``asyncio.run(coro)`` returns the value, ``gather`` the list of values,
``create_task``/``ensure_future`` a task already done, ``wait_for`` the value (the timeout never
expires: nothing waits), ``sleep`` nothing (no derivative). An exception raised by a coroutine is
raised at its call, before any later coroutine of the same ``gather`` starts;
``gather(..., return_exceptions=True)`` is refused."""
from __future__ import annotations

import asyncio
from typing import Any

from ..ir.primitives import Finished, awaitable, awaited
from .second_order import defined_as, defined_by


def _run(main: Any, *, debug: Any = None) -> Any:
    return awaited(main).value


def _gather(*aws: Any, return_exceptions: bool = False) -> Finished:
    if return_exceptions:
        raise TypeError(
            "yuebing cannot differentiate asyncio.gather(..., return_exceptions=True): under differentiation "
            "coroutines run when they are called, so an exception is raised at the call. What to do: catch it "
            "with try/except around the call of the async function.")
    return Finished([awaited(a).value for a in aws], False)


def _create_task(coro: Any, *, name: Any = None, context: Any = None) -> Finished:
    return Finished(awaited(coro).value, False)


def _ensure_future(coro_or_future: Any, *, loop: Any = None) -> Finished:
    return Finished(awaited(coro_or_future).value, False)


def _wait_for(fut: Any, timeout: Any) -> Finished:
    return Finished(awaited(fut).value)


def _sleep(delay: Any, result: Any = None) -> Finished:
    return Finished(result)


def _awaited_once_checked(x: Any) -> Finished:
    """Second order of ``await x`` (``awaited``): second order runs a rule twice per call, so only
    the type is checked; first-order passes also refuse a coroutine awaited twice."""
    awaitable(x)
    return x


defined_by(awaited, _awaited_once_checked)

for _target, _definition in ((asyncio.run, _run), (asyncio.gather, _gather), (asyncio.create_task, _create_task),
                             (asyncio.ensure_future, _ensure_future), (asyncio.wait_for, _wait_for),
                             (asyncio.sleep, _sleep)):
    defined_as(_target, _definition)

CASES: list = []  # (exercised by tests/test_async.py: calling async functions needs user code)
