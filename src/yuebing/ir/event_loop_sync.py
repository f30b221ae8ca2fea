"""More of ``asyncio``'s synchronisation on yuebing's event loop (``event_loop.py``):
``Condition``, ``Barrier``, ``PriorityQueue`` and ``LifoQueue``, written as CPython 3.11 writes
them, so that values and the order of side effects agree with ``asyncio.run``;
``rules/asyncio_rules.py`` declares the ``asyncio`` names to be these.

``PriorityQueue`` keeps its heap with ``heapq``'s own sift functions, written out here: the
order in which equal priorities come out is the heap's, as under ``asyncio``.
"""
from __future__ import annotations

import asyncio
from typing import Any

from .event_loop import Future, running_loop
from .event_loop_api import Lock, Queue


class Condition:
    """``asyncio.Condition``: ``wait`` releases the lock until ``notify``, then takes it again."""

    def __init__(self, lock: Any = None) -> None:
        self.lock = Lock() if lock is None else lock
        self.waiters = []

    def locked(self) -> bool:
        return self.lock.locked()

    async def acquire(self) -> Any:
        return await self.lock.acquire()

    def release(self) -> None:
        self.lock.release()

    async def __aenter__(self) -> Any:
        await self.lock.acquire()
        return None

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        self.lock.release()

    async def wait(self) -> Any:
        if not self.locked():
            raise RuntimeError("cannot wait on un-acquired lock")
        self.release()
        try:
            future = Future(running_loop())
            self.waiters.append(future)
            try:
                await future
                return True
            finally:
                self.waiters.remove(future)
        finally:
            await self.reacquire()

    async def reacquire(self) -> None:
        """Take the lock again, even when the wait was cancelled (then cancelled after)."""
        cancelled = False
        while True:
            try:
                await self.lock.acquire()
                break
            except asyncio.CancelledError:
                cancelled = True
        if cancelled:
            raise asyncio.CancelledError

    async def wait_for(self, predicate: Any) -> Any:
        result = predicate()
        while not result:
            await self.wait()
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if not self.locked():
            raise RuntimeError("cannot notify on un-acquired lock")
        woken = 0
        for future in self.waiters:
            if woken >= n:
                break
            if not future.done():
                woken += 1
                future.set_result(False)

    def notify_all(self) -> None:
        self.notify(len(self.waiters))


FILLING, DRAINING, RESETTING, BROKEN = "filling", "draining", "resetting", "broken"


class Barrier:
    """``asyncio.Barrier``: ``wait`` returns (each task its arrival index) once ``parties``
    tasks wait."""

    def __init__(self, parties: int) -> None:
        if parties < 1:
            raise ValueError("parties must be > 0")
        self.cond = Condition()
        self.parties = parties
        self.state = FILLING
        self.count = 0

    async def __aenter__(self) -> Any:
        return await self.wait()

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> None:
        return None

    async def wait(self) -> int:
        async with self.cond:
            await self.block()
            try:
                index = self.count
                self.count += 1
                if index + 1 == self.parties:
                    self.release_all()
                else:
                    await self.wait_filled()
                return index
            finally:
                self.count -= 1
                self.leave()

    def not_draining(self) -> bool:
        return self.state not in (DRAINING, RESETTING)

    def not_filling(self) -> bool:
        return self.state != FILLING

    async def block(self) -> None:
        """Wait while the barrier drains or resets."""
        await self.cond.wait_for(self.not_draining)
        if self.state == BROKEN:
            raise asyncio.BrokenBarrierError("Barrier aborted")

    def release_all(self) -> None:
        self.state = DRAINING
        self.cond.notify_all()

    async def wait_filled(self) -> None:
        await self.cond.wait_for(self.not_filling)
        if self.state in (BROKEN, RESETTING):
            raise asyncio.BrokenBarrierError("Abort or reset of barrier")

    def leave(self) -> None:
        if self.count == 0:
            if self.state in (RESETTING, DRAINING):
                self.state = FILLING
            self.cond.notify_all()

    async def reset(self) -> None:
        async with self.cond:
            if self.count > 0:
                self.state = RESETTING
            else:
                self.state = FILLING
            self.cond.notify_all()

    async def abort(self) -> None:
        async with self.cond:
            self.state = BROKEN
            self.cond.notify_all()

    @property
    def n_waiting(self) -> int:
        return self.count if self.state == FILLING else 0

    @property
    def broken(self) -> bool:
        return self.state == BROKEN


class LifoQueue(Queue):
    """``asyncio.LifoQueue``: the last item put is the first taken."""

    def take_item(self) -> Any:
        return self.items.pop()


class PriorityQueue(Queue):
    """``asyncio.PriorityQueue``: the smallest item first, by ``heapq``'s heap."""

    def put_item(self, item: Any) -> None:
        self.items.append(item)
        _sift_down(self.items, 0, len(self.items) - 1)

    def take_item(self) -> Any:
        last = self.items.pop()
        if not self.items:
            return last
        smallest = self.items[0]
        self.items[0] = last
        _sift_up(self.items, 0)
        return smallest


def _sift_down(heap: list, start: int, pos: int) -> None:
    """``heapq._siftdown``: move ``heap[pos]`` up towards ``start`` until its parent is smaller."""
    item = heap[pos]
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if item < parent:
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


def _sift_up(heap: list, pos: int) -> None:
    """``heapq._siftup``: move the smaller child up until a leaf, then place ``heap[pos]``'s item."""
    end = len(heap)
    start = pos
    item = heap[pos]
    child = 2 * pos + 1
    while child < end:
        right = child + 1
        if right < end and not heap[child] < heap[right]:
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = item
    _sift_down(heap, start, pos)
