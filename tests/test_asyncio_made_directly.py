"""``asyncio.Future()`` and ``asyncio.Task(coro)`` made directly belong to the running loop, as in
CPython (``rules/asyncio_rules.py``): under differentiation, yuebing's own. Before, both were
refused ("a Future made directly belongs to asyncio's own loops"). Each case against central
differences in reverse, forward and second order; a future of asyncio's own loop stays refused by
name.
"""
from __future__ import annotations

import asyncio

import pytest

import yuebing as yb

from .all_modes import check_all_modes


async def _tripled(u):
    await asyncio.sleep(0)
    return u * 3.0


def future_set_by_a_callback(x):
    async def main(v):
        future = asyncio.Future()
        asyncio.get_running_loop().call_soon(future.set_result, v * v)
        return await future * v

    return asyncio.run(main(x))


def future_set_by_a_task(x):
    async def main(v):
        future = asyncio.Future(loop=asyncio.get_running_loop())

        async def setter():
            await asyncio.sleep(0.5)
            future.set_result(v ** 3)

        helper = asyncio.create_task(setter())
        value = await future
        await helper
        return value + v

    return asyncio.run(main(x))


def task_made_directly(x):
    async def main(v):
        task = asyncio.Task(_tripled(v * v), name="tripled")
        other = asyncio.Task(_tripled(v))
        return await task * await other + len(task.get_name())

    return asyncio.run(main(x))


@pytest.mark.parametrize("f", [future_set_by_a_callback, future_set_by_a_task, task_made_directly],
                         ids=lambda f: f.__name__)
def test_futures_and_tasks_made_directly_in_every_mode(f):
    check_all_modes(f, 0.7)


class _OtherLoop:
    """Stands for a loop that is not yuebing's (an asyncio loop itself cannot even be reached:
    its selector has no tangent type, refused where it is read)."""


yb.tangents.register_nondifferentiable_type(_OtherLoop)


def _future_of_another_loop(x):
    async def main(v):
        future = asyncio.Future(loop=_OtherLoop())
        future.set_result(v)
        return await future

    return asyncio.run(main(x))


def test_a_future_of_another_loop_is_refused_by_name():
    for run in (lambda: yb.grad(_future_of_another_loop)(0.7), lambda: yb.jvp(_future_of_another_loop, (0.7,), (1.0,))):
        with pytest.raises(TypeError, match=r"asyncio.Future\(loop=_OtherLoop\).*What to do: leave loop= out") as info:
            run()
        assert __file__ in str(info.value) + "".join(getattr(info.value, "__notes__", []))
