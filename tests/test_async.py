"""``async``/``await`` under differentiation (``frontend/async_functions.py``,
``rules/asyncio_rules.py``): coroutines, async with/for, async generators and comprehensions run on
yuebing's event loop and are differentiated in every mode; values agree with ``asyncio.run``
(``test_async_loop.py``: queues, locks, task groups and the rest of what needs the loop)."""
import asyncio

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes


async def square(v):
    await asyncio.sleep(0.001)
    return v * v


async def scaled(v, k=2.0):
    s = await square(v)
    if s > 0.25:
        return k * s + np.sin(v)
    return s


def awaits_and_gathers(x):
    async def main(v):
        a = await scaled(v)
        b, c = await asyncio.gather(square(np.sin(v)), scaled(2.0 * v, k=3.0))
        task = asyncio.create_task(square(v))
        d = await task
        e = await asyncio.wait_for(square(v + 1.0), timeout=1.0)
        return a * b + c + d * e + await task  # a task may be awaited again

    return asyncio.run(main(x))


class Accumulator:
    """An async context manager and iterator written by a user."""

    def __init__(self, values):
        self.values, self.total, self.index = values, 0.0, 0

    async def __aenter__(self):
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, kind, error, traceback):
        self.total = self.total * 2.0
        return kind is ZeroDivisionError  # swallows that one

    def __aiter__(self):
        self.index = 0
        return self

    async def __anext__(self):
        if self.index >= len(self.values):
            raise StopAsyncIteration
        self.index += 1
        return self.values[self.index - 1]


def async_with_and_for(x):
    async def main(v):
        async with Accumulator([v, v * v, 3.0]) as acc:
            async for item in acc:
                if item == 3.0:
                    continue
                acc.total += np.exp(item)
        async with Accumulator([v]) as other:
            other.total = v
            other.total / 0.0  # swallowed by __aexit__, after it doubled the total
        total = acc.total + other.total
        async for item in Accumulator([v, 2.0 * v]):
            total += item * v
            if item > 1.0:
                break
        else:
            total += 1.0  # runs only when the loop was not broken
        return total

    return asyncio.run(main(x))


class Model:
    def __init__(self, w):
        self.w = w

    async def predict(self, v):
        return self.w * await square(v)


def methods_and_exceptions(x):
    async def risky(v):
        if v > 0.5:
            raise ValueError("too big")
        return v

    async def main(v):
        model = Model(np.cos(v))
        y = await model.predict(v)
        try:
            y = y + await risky(v)
        except ValueError:
            y = y * v
        return y

    return asyncio.run(main(x))


def exceptions_surface_at_the_await(x):
    async def fails(v, log):
        log.append(v)
        raise KeyError("late")

    async def main(v):
        log = []
        pending = fails(v, log)  # runs when awaited; its exception is raised at the await
        y = v * v
        try:
            y = y + await pending
        except KeyError:
            y = y * np.exp(v)
        try:
            y = y + sum(await asyncio.gather(square(v), fails(2.0 * v, log), square(3.0 * v)))
        except KeyError:
            y = y + v * len(log)  # every coroutine of the gather ran, as in Python
        task = asyncio.create_task(fails(v, log))
        for _ in range(2):
            try:
                await task
            except KeyError:
                y = y + np.sin(v)
        return y

    return asyncio.run(main(x))


class Logged:
    """An async context manager that logs its calls (and swallows nothing)."""

    def __init__(self, log):
        self.log = log

    async def __aenter__(self):
        self.log.append("enter")
        return 2.0

    async def __aexit__(self, kind, error, traceback):
        self.log.append(("exit", kind))
        return False


def async_with_left_by_jumps(x):
    async def inner(v, log):
        for k in range(4):
            async with Logged(log) as two:
                if k == 0:
                    continue  # __aexit__ still runs, as for break and return
                if k == 2:
                    break
                v = v * two * np.sin(v)
        async with Logged(log) as two:
            return v * v * two

    async def main(v):
        log = []
        y = await inner(v, log)
        return y * len(log) + (log[-1] == ("exit", None))

    return asyncio.run(main(x))


FUNCTIONS = [awaits_and_gathers, async_with_and_for, methods_and_exceptions, exceptions_surface_at_the_await,
             async_with_left_by_jumps]


@pytest.mark.parametrize("x", [0.3, 0.7])
@pytest.mark.parametrize("f", [pytest.param(f, marks=pytest.mark.slow) if f.__name__ == "awaits_and_gathers" else f
                               for f in FUNCTIONS], ids=[f.__name__ for f in FUNCTIONS])  # (7-14 s: slow step)
def test_async_code_in_every_mode(f, x):
    check_all_modes(f, x)  # (its values are compared with the plain call, which asyncio.run runs)


def test_coroutines_interleave_at_their_awaits_as_under_asyncio_run():
    async def record(order, name, v):
        order.append(name + "1")
        await asyncio.sleep(0)
        order.append(name + "2")
        return v

    def f(x):
        async def main(v):
            order = []
            never_awaited = record(order, "n", v)  # noqa: F841 - never runs, as in Python
            a, b = await asyncio.gather(record(order, "a", v), record(order, "b", 2.0 * v))
            weights = {"a1": 1.0, "a2": 2.0, "b1": 3.0, "b2": 4.0, "n1": 5.0, "n2": 6.0}
            return sum(weights[name] * (k + 1) for k, name in enumerate(order)) * a * b + len(order) * v

        return asyncio.run(main(x))

    value, _ = yb.value_and_grad(f)(0.7)
    interleaved = ["a1", "b1", "a2", "b2"]  # what asyncio.run does: each runs to its await in turn
    weights = {"a1": 1.0, "a2": 2.0, "b1": 3.0, "b2": 4.0}
    expected = sum(weights[name] * (k + 1) for k, name in enumerate(interleaved)) * 0.7 * 1.4 + 4 * 0.7
    assert value == pytest.approx(expected, rel=1e-14)
    assert f(0.7) == pytest.approx(expected, rel=1e-14)
    check_all_modes(f, 0.7)


async def async_itself(x):
    return x * x


def test_an_async_function_itself_gets_advice_that_works():
    for transform in (yb.grad, lambda f: (lambda x: yb.jvp(f, (x,), (1.0,)))):
        with pytest.raises(TypeError, match=r"asyncio.run\(async_itself\(x\)\)"):
            transform(async_itself)(0.7)
    with pytest.raises(TypeError, match="async function"):
        yb.hvp(async_itself, (0.7,), (1.0,))
    check_all_modes(lambda x: asyncio.run(async_itself(x)), 0.7)  # the advice, as printed


async def ticks(v, n, log):
    for i in range(n):
        await asyncio.sleep(0)
        log.append(i)
        if i == 3:
            return
        yield v * (i + 1)


async def failing(v):
    yield v
    yield np.sin(v)
    raise ValueError("done")


def async_generators(x):
    async def main(v):
        log = []
        total = 0.0
        async for t in ticks(v, 6, log):
            total += t * t
        else:
            total += 1.0  # the generator ended: the else block runs
        async for t in ticks(np.cos(v), 3, log):
            if t > 10.0:
                break
            total += t
        try:
            async for t in failing(v):
                total += t * v  # both values first, then the exception, as in Python
        except ValueError:
            total += len(log)
        return total

    return asyncio.run(main(x))


def test_async_generators_in_every_mode():
    check_all_modes(async_generators, 0.7)


def async_comprehensions(x):
    async def numbered(it):
        k = 0
        async for t in it:
            yield k, t
            k += 1

    async def main(v):
        log = []
        a = [t * v async for t in ticks(v, 5, log) if t > 0.5]
        b = {k: await square(t) async for k, t in numbered(Accumulator([v, 2.0 * v]))}
        return sum(a) + sum(b.values()) + sum([await square(t) for t in (v, v * v)])

    return asyncio.run(main(x))


@pytest.mark.slow  # 11 s
def test_async_comprehensions_in_every_mode():
    check_all_modes(async_comprehensions, 0.7)
