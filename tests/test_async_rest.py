"""The rest of ``asyncio`` on yuebing's event loop under differentiation
(``ir/event_loop_waiting.py``, ``ir/event_loop_sync.py``, the loops and ``Runner`` of
``ir/event_loop.py``): ``wait``, ``as_completed``, ``timeout``, ``to_thread``, ``Condition``,
``PriorityQueue``/``LifoQueue``, ``shield``, ``Barrier``, ``Runner`` and a new loop's
``run_until_complete``. As in ``test_async_loop.py``, each function folds the order of its side
effects into its value (``ordered``), so comparing values with the plain call (``asyncio.run``
itself) checks the interleaving; derivatives are checked against finite differences in every mode."""
import asyncio

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .test_async_loop import fails, ordered, worker


def in_arrival_order(results):
    """A number that depends on the order of ``results`` as well as on their values."""
    total = 0.0
    for r in results:
        total = total * 0.5 + r
    return total


def waits_for_the_first(x):
    async def main(v):
        log = []
        tasks = [asyncio.create_task(worker(v, k, log, delay=0.3 - 0.1 * k)) for k in range(3)]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        first = sum(t.result() for t in done)
        log.append(len(pending))
        done, pending = await asyncio.wait(tasks, timeout=0.15)
        log.append(len(pending))
        rest, _ = await asyncio.wait(tasks)
        return first * v + sum(t.result() * (k + 1) for k, t in enumerate(tasks)) + len(rest) + ordered(log)

    return asyncio.run(main(x))


def waits_for_the_first_exception(x):
    async def main(v):
        log = []
        slow = asyncio.create_task(worker(v, 1, log, delay=1.0))
        bad = asyncio.create_task(fails(v, log))
        done, pending = await asyncio.wait([slow, bad], return_when=asyncio.FIRST_EXCEPTION)
        log.append(len(done))
        return (await slow) * v + isinstance(bad.exception(), ValueError) + ordered(log)

    return asyncio.run(main(x))


def takes_results_as_completed(x):
    async def main(v):
        log = []
        tasks = [asyncio.create_task(worker(v * (k + 1), k, log, delay=0.1 * ((k * 2) % 3))) for k in range(3)]
        results = []
        for arriving in asyncio.as_completed(tasks):
            results.append(await arriving)
            log.append(5)
        late = 0.0
        try:
            for arriving in asyncio.as_completed([worker(v, 4, log, delay=2.0)], timeout=1.0):
                late = await arriving
        except TimeoutError:
            log.append(6)
        return in_arrival_order(results) + late + ordered(log)

    return asyncio.run(main(x))


def bounds_time_with_timeout(x):
    async def main(v):
        log = []
        async with asyncio.timeout(1.0) as bound:
            quick = await worker(v, 1, log, delay=0.5)
        log.append(bound.expired())
        slow = 0.0
        try:
            async with asyncio.timeout(1.0):
                slow = await worker(v, 2, log, delay=2.0)
        except TimeoutError:
            log.append(6)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(loop.time() + 0.5) as bound:
                bound.reschedule(loop.time() + 3.0)  # later: the work finishes in time
                slow = await worker(v * v, 3, log, delay=1.0)
        except TimeoutError:
            log.append(7)
        return quick * v + slow + ordered(log)

    return asyncio.run(main(x))


def times_out_a_task_group(x):
    async def main(v):
        log = []
        try:
            async with asyncio.timeout(1.0):
                async with asyncio.TaskGroup() as group:
                    quick = group.create_task(worker(v, 1, log, delay=0.5))
                    slow = group.create_task(worker(v, 2, log, delay=2.0))
        except TimeoutError:
            log.append(6)
        return quick.result() * v + slow.cancelled() + ordered(log)

    return asyncio.run(main(x))


def runs_in_a_thread(x):
    def heavy(v, k, scale=1.0):
        return np.exp(v) * k * scale

    async def main(v):
        log = []
        a = await asyncio.to_thread(heavy, v, 2.0, scale=v)
        b, c = await asyncio.gather(asyncio.to_thread(heavy, v * v, 1.0), worker(v, 1, log))
        return a * b + c + ordered(log)

    return asyncio.run(main(x))


def waits_on_a_condition(x):
    async def consumer(condition, box, k, log):
        async with condition:
            await condition.wait_for(lambda: len(box) > 0)
            log.append(k)
            return box.pop(0) * (k + 1)

    async def main(v):
        log = []
        condition = asyncio.Condition()
        box = []
        tasks = [asyncio.create_task(consumer(condition, box, k, log)) for k in range(3)]
        await asyncio.sleep(0)
        for j in range(3):
            async with condition:
                box.append(np.sin(v * (j + 1)))
                condition.notify()
                log.append(5)
            await asyncio.sleep(0)
        async with condition:
            condition.notify_all()
        return in_arrival_order(await asyncio.gather(*tasks)) + ordered(log)

    return asyncio.run(main(x))


def orders_priority_and_lifo_queues(x):
    async def main(v):
        priority = asyncio.PriorityQueue()
        for k, p in enumerate([3.0, 1.0, 2.0, 1.0, 0.5]):
            await priority.put((p * v, k, np.sin(v * (k + 1))))
        by_priority = [priority.get_nowait()[2] for _ in range(5)]
        lifo = asyncio.LifoQueue(maxsize=3)
        for k in range(3):
            lifo.put_nowait(v ** (k + 1))
        by_lifo = [await lifo.get() for _ in range(3)]
        return in_arrival_order(by_priority) + in_arrival_order(by_lifo)

    return asyncio.run(main(x))


def shields_a_task(x):
    async def main(v):
        log = []
        task = asyncio.create_task(worker(v, 1, log, delay=2.0))
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=1.0)
        except TimeoutError:
            log.append(6)
        log.append(task.cancelled())
        return (await task) * v + ordered(log)

    return asyncio.run(main(x))


def meets_at_a_barrier(x):
    async def party(barrier, v, k, log):
        log.append(k)
        await asyncio.sleep(0.1 * (3 - k))
        index = await barrier.wait()
        log.append(5 + index)
        return v * (k + 1) * (index + 1)

    async def main(v):
        log = []
        barrier = asyncio.Barrier(3)
        results = await asyncio.gather(*(party(barrier, v, k, log) for k in range(3)))
        return in_arrival_order(results) + ordered(log) + barrier.n_waiting

    return asyncio.run(main(x))


async def _scaled(v, log):
    log.append(len(log))
    await asyncio.sleep(0.1)
    return np.sin(v) * v


def runs_on_a_runner_and_a_new_loop(x):
    log = []
    with asyncio.Runner() as runner:
        a = runner.run(_scaled(x, log))
        b = runner.run(_scaled(a, log))
    loop = asyncio.new_event_loop()
    try:
        c = loop.run_until_complete(_scaled(b * x, log))
    finally:
        loop.close()
    return a + b * c + ordered(log)


def steps_a_simulation(x):
    """A scientist's time stepping: each step a coroutine that lets the others run. (Its variable
    ``state`` once collided with the coroutine's own resume state.)"""
    async def step(state, dt):
        await asyncio.sleep(0)
        return state + dt * np.sin(state) * x

    async def main():
        state = x
        for _ in range(20):
            state = await step(state, 0.1)
        return state

    return asyncio.run(main())


FUNCTIONS = [steps_a_simulation, waits_for_the_first, waits_for_the_first_exception, takes_results_as_completed,
             bounds_time_with_timeout, times_out_a_task_group, runs_in_a_thread, waits_on_a_condition,
             orders_priority_and_lifo_queues, shields_a_task, meets_at_a_barrier, runs_on_a_runner_and_a_new_loop]


# These wait on real timers (asyncio.run sleeps for real in every mode's reference run), 7-13 s
# each: the slow step runs them, the default run keeps the rest.
_TIMED = {"waits_for_the_first", "waits_for_the_first_exception", "takes_results_as_completed",
          "bounds_time_with_timeout", "times_out_a_task_group", "waits_on_a_condition", "shields_a_task",
          "meets_at_a_barrier"}


@pytest.mark.parametrize("f", [pytest.param(f, marks=pytest.mark.slow) if f.__name__ in _TIMED else f
                               for f in FUNCTIONS], ids=[f.__name__ for f in FUNCTIONS])
def test_the_rest_of_asyncio_agrees_with_asyncio_run_in_every_mode(f):
    check_all_modes(f, 0.7)


def collects_done_tasks_in_a_set(x):
    async def main(v):
        done, _ = await asyncio.wait([asyncio.create_task(worker(v, 1, []))])
        return sum(t.result() for t in set(done))

    return asyncio.run(main(x))


def test_a_set_of_tasks_keeps_their_derivatives():  # (a set's tangent keeps a task's: tests/test_set_elements_with_tangents.py)
    check_all_modes(collects_done_tasks_in_a_set, 0.7)
