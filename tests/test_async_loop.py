"""Async code that needs an event loop, under differentiation (``ir/event_loop.py``,
``ir/event_loop_api.py``, ``ir/async_generators.py``): tasks interleave at their awaits as under
``asyncio.run``, with queues, locks, semaphores, events, task groups, executors, timeouts and
``asend``. Each function folds the order of its side effects into its value (``ordered``), so
comparing values with the plain call (``asyncio.run`` itself) checks the order; derivatives are
checked against finite differences in every mode (``check_all_modes``)."""
import asyncio

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes


def ordered(log):
    """A number that tells the order of ``log`` (a list of small ints) apart from any other."""
    return sum((k + 1) * 0.1 ** (i + 1) for i, k in enumerate(log))


async def worker(v, k, log, delay=0.0):
    log.append(k)
    await asyncio.sleep(delay)
    log.append(10 + k)
    return np.sin(v * (k + 1))


async def fails(v, log):
    log.append(7)
    await asyncio.sleep(0)
    raise ValueError("bad")


def gathers_exceptions(x):
    async def main(v):
        log = []
        results = await asyncio.gather(worker(v, 1, log), fails(v, log), worker(v, 2, log), return_exceptions=True)
        total = sum(r for r in results if not isinstance(r, Exception))
        return total * v + ordered(log) + isinstance(results[1], ValueError)

    return asyncio.run(main(x))


def sleeps_wake_by_deadline(x):
    async def main(v):
        log = []
        late = asyncio.create_task(worker(v, 1, log, delay=0.2))
        early = asyncio.create_task(worker(v * v, 2, log, delay=0.1))
        now = asyncio.create_task(worker(2.0 * v, 3, log))
        return (await late) * (await early) + await now + ordered(log)

    return asyncio.run(main(x))


def task_group(x):
    async def main(v):
        log = []
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(worker(v, k, log)) for k in range(3)]
            log.append(5)
        return sum(t.result() * (k + 1) for k, t in enumerate(tasks)) + ordered(log)

    return asyncio.run(main(x))


def task_group_failure(x):
    async def main(v):
        log = []
        try:
            async with asyncio.TaskGroup() as group:
                slow = group.create_task(worker(v, 1, log, delay=1.0))
                group.create_task(fails(v, log))
                log.append(5)
        except* ValueError:
            log.append(6)
        return v * v * (1 + slow.cancelled()) + ordered(log)

    return asyncio.run(main(x))


def producer_consumer(x):
    async def produce(queue, v, log):
        for k in range(4):
            await queue.put(v * (k + 1))
            log.append(k)
        await queue.put(None)

    async def consume(queue, log):
        total = 0.0
        while True:
            item = await queue.get()
            queue.task_done()
            if item is None:
                return total
            log.append(10 + len(log))
            total = total + np.sin(item) * item

    async def main(v):
        log = []
        queue = asyncio.Queue(maxsize=2)
        total, _ = await asyncio.gather(consume(queue, log), produce(queue, v, log))
        await queue.join()
        return total + ordered([k % 10 for k in log])

    return asyncio.run(main(x))


def lock_semaphore_event(x):
    async def guarded(lock, state, v, k, log):
        async with lock:
            log.append(k)
            current = state["value"]
            await asyncio.sleep(0)  # another task runs here, but cannot enter
            state["value"] = current * v + k
            log.append(k + 3)

    async def limited(semaphore, v, k, log):
        async with semaphore:
            log.append(k)
            await asyncio.sleep(0)
            log.append(k + 3)
            return v ** (k + 1)

    async def waits(event, v, log):
        await event.wait()
        log.append(9)
        return v * 3.0

    async def main(v):
        log = []
        state = {"value": v}
        lock = asyncio.Lock()
        await asyncio.gather(*(guarded(lock, state, v, k, log) for k in range(3)))
        semaphore = asyncio.Semaphore(2)
        powers = await asyncio.gather(*(limited(semaphore, v, k, log) for k in range(3)))
        event = asyncio.Event()
        waiter = asyncio.create_task(waits(event, v, log))
        await asyncio.sleep(0)
        log.append(8)
        event.set()
        return state["value"] + sum(powers) + await waiter + ordered(log) + lock.locked()

    return asyncio.run(main(x))


def runs_in_executor(x):
    def heavy(v, k):
        return np.exp(v) * k

    async def main(v):
        loop = asyncio.get_running_loop()
        a = await loop.run_in_executor(None, heavy, v, 2.0)
        b, c = await asyncio.gather(loop.run_in_executor(None, heavy, v * v, 1.0), worker(v, 1, []))
        return a * b + c

    return asyncio.run(main(x))


def sends_to_an_async_generator(x):
    async def running_mean(v):
        total, count = 0.0, 0
        value = yield None
        while value is not None:
            total, count = total + value, count + 1
            await asyncio.sleep(0)
            value = yield total / count
        yield total * v

    async def main(v):
        mean = running_mean(v)
        await mean.asend(None)
        a = await mean.asend(v)
        b = await mean.asend(np.sin(v))
        c = await anext(mean)
        try:
            await mean.athrow(KeyError)
        except KeyError:
            c = c + 1.0
        await mean.aclose()
        return a * b + c

    return asyncio.run(main(x))


def waits_with_timeouts(x):
    async def main(v):
        log = []
        fast = await asyncio.wait_for(worker(v, 1, log, delay=0.1), timeout=1.0)
        try:
            await asyncio.wait_for(worker(v, 2, log, delay=2.0), timeout=1.0)
        except TimeoutError:
            log.append(6)
        return fast * v + ordered(log)

    return asyncio.run(main(x))


class Ticket:
    """An awaitable of a user's own, not a coroutine."""

    def __init__(self, v):
        self.v = v

    def __await__(self):
        yield
        return self.v * 2.0


def awaits_a_users_awaitable(x):
    async def main(v):
        return v * await Ticket(np.cos(v))

    return asyncio.run(main(x))


FUNCTIONS = [gathers_exceptions, sleeps_wake_by_deadline, task_group, task_group_failure, producer_consumer,
             lock_semaphore_event, runs_in_executor, sends_to_an_async_generator, waits_with_timeouts,
             awaits_a_users_awaitable]


# these wait on real timers in the reference runs (4-11 s)
_TIMED = {"lock_semaphore_event", "waits_with_timeouts", "producer_consumer", "task_group"}


@pytest.mark.parametrize("f", [pytest.param(f, marks=pytest.mark.slow) if f.__name__ in _TIMED else f
                               for f in FUNCTIONS], ids=[f.__name__ for f in FUNCTIONS])
def test_event_loop_code_agrees_with_asyncio_run_in_every_mode(f):
    check_all_modes(f, 0.7)


def waits_forever(x):
    async def main(v):
        queue = asyncio.Queue()
        return v * await queue.get()  # nobody puts: asyncio.run would hang

    return asyncio.run(main(x))


def awaits_a_number(x):
    async def main(v):
        return await v

    return asyncio.run(main(x))


def awaits_twice(x):
    async def main(v):
        pending = worker(v, 1, [])
        return await pending + await pending

    return asyncio.run(main(x))


def hands_a_coroutine_to_a_thread(x):
    async def main(v):
        return asyncio.run_coroutine_threadsafe(worker(v, 1, []), asyncio.get_running_loop()).result()

    return asyncio.run(main(x))


@pytest.mark.parametrize("f, words", [
    (waits_forever, "asyncio.run would wait forever"),
    (awaits_a_number, "awaiting a float"),
    (awaits_twice, "cannot reuse already awaited coroutine"),
    (hands_a_coroutine_to_a_thread, "asyncio.run_coroutine_threadsafe: .* What to do: await the coroutine"),
])
def test_what_the_loop_cannot_run_is_refused_by_name(f, words):
    for transform in (yb.grad, lambda g: (lambda x: yb.jvp(g, (x,), (1.0,)))):
        with pytest.raises((RuntimeError, TypeError), match=words) as info:
            transform(f)(0.7)
        assert __file__ in str(info.value) + "".join(getattr(info.value, "__notes__", []))
