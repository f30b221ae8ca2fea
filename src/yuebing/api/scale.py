"""Scale-out (docs/scale-out.md): running the independent pieces of a large derivative -- the rows
of a Jacobian, the columns of a Hessian, the examples of a batch (``map_grad``) -- on any
``concurrent.futures.Executor`` (a thread or process pool, Dask's ``Client.get_executor()``), in
chunks so that no task is tiny, with a tqdm progress bar on a terminal when it takes a while.

``run_chunks`` is the one loop every such computation goes through, with or without an executor:
the same task function computes each piece in both cases, so an executor changes where the
arithmetic runs, never its result. The task functions are module-level functions and what they
are given pickles (``yb.grad`` objects pickle by reference to the user's function), so process
pools and clusters can run them.
"""
from __future__ import annotations

import concurrent.futures
import math
import os
import pickle
import sys
import time
import types
from typing import Any, Callable, Sequence

import numpy as np

from .common import fname
from .pickling import Shipped
from .reverse import grad

#: an auto progress bar (``progress=None``) appears once a computation has run this long
PROGRESS_DELAY = 2.0
#: with an executor, each worker gets about this many tasks by default (so a slow task or a slow
#: worker does not hold up the others for long), each task ``n / (TASKS_PER_WORKER * workers)`` items
TASKS_PER_WORKER = 4
#: without an executor, the work is run in about this many chunks (each a progress bar update)
_LOCAL_CHUNKS = 100


def check_scale_options(executor: Any, chunk_size: Any, progress: Any, name: str) -> None:
    """Refuse what ``executor=``, ``chunk_size=`` and ``progress=`` cannot be, with what they can."""
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"{name}: executor must be a concurrent.futures.Executor (an object with submit(), e.g. a "
            f"ThreadPoolExecutor, ProcessPoolExecutor or distributed.Client(...).get_executor()), got "
            f"{type(executor).__qualname__}"
        )
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer))
                                   or chunk_size < 1):
        raise ValueError(f"{name}: chunk_size must be a positive int (items per task) or None, got {chunk_size!r}")
    if progress not in (None, True, False):
        raise TypeError(f"{name}: progress must be None (a bar on a terminal after {PROGRESS_DELAY:g} s), "
                        f"True or False, got {progress!r}")


def workers_of(executor: Any) -> int:
    """How many tasks ``executor`` runs at once: a pool's ``max_workers``, a Dask executor's
    threads over all workers, else the number of CPUs here."""
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a client that cannot say: fall back
            pass
    return os.cpu_count() or 1


def default_chunk_size(n_items: int, executor: Any) -> int:
    """Items per task: about ``n / (4 * workers)`` with an executor, ``n / 100`` without."""
    if executor is None:
        return max(1, math.ceil(n_items / _LOCAL_CHUNKS))
    return max(1, math.ceil(n_items / (TASKS_PER_WORKER * workers_of(executor))))


def _item_range(start: int, stop: int) -> range:
    return range(start, stop)


def run_chunks(task: Callable, shared: tuple, n_items: int, *, executor: Any = None, chunk_size: int | None = None,
               progress: bool | None = None, name: str = "yuebing",
               part: Callable[[int, int], Any] = _item_range) -> list:
    """The results of items ``0 .. n_items - 1`` in order: ``task(*shared, part(start, stop))``
    returns the list of results of the items ``start:stop`` (``part`` gives the task its piece of
    the work: by default the ``range`` of item indices). Chunks of ``chunk_size`` items go to
    ``executor.submit`` when there is one, else run here one after another."""
    size = chunk_size or default_chunk_size(n_items, executor)
    bounds = [(start, min(start + size, n_items)) for start in range(0, n_items, size)]
    results: list = [None] * len(bounds)
    with _Progress(n_items, progress, name) as bar:
        if executor is None:
            for k, (start, stop) in enumerate(bounds):
                results[k] = task(*shared, part(start, stop))
                bar.update(stop - start)
        else:
            # a lambda or closure goes with its source (api/pickling.py); the task unwraps it
            shared = tuple(Shipped(s) if isinstance(s, types.FunctionType) else s for s in shared)
            _check_picklable(executor, task, shared, name)
            futures = {executor.submit(task, *shared, part(start, stop)): k for k, (start, stop) in enumerate(bounds)}
            try:
                for future in concurrent.futures.as_completed(futures):
                    k = futures[future]
                    results[k] = future.result()
                    bar.update(bounds[k][1] - bounds[k][0])
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    out: list = []
    for (start, stop), chunk in zip(bounds, results):
        if len(chunk) != stop - start:  # a task that lost items would shift every later one
            raise RuntimeError(f"{name}: a task returned {len(chunk)} results for {stop - start} items")
        out.extend(chunk)
    return out


def _check_picklable(executor: Any, task: Callable, shared: tuple, name: str) -> None:
    """A process pool pickles each task with plain ``pickle``: say plainly what cannot be sent
    (a lambda, a closure) and what to do, before the pool fails with a bare PicklingError."""
    if not isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        return  # threads share objects; Dask and others pickle with cloudpickle
    try:
        pickle.dumps((task, shared))
    except Exception as error:  # noqa: BLE001 - pickle raises several kinds
        raise TypeError(
            f"{name}: the work cannot be sent to the ProcessPoolExecutor, which pickles with plain pickle: "
            f"{error}. Define the function at module level (pickled by name), or use an executor that "
            "pickles with cloudpickle, such as distributed.Client().get_executor() (docs/scale-out.md)"
        ) from error


class _Progress:
    """A tqdm bar on stderr: with ``progress=None`` once the work has run ``PROGRESS_DELAY``
    seconds, if tqdm is installed and stderr is a terminal (made only then: a short computation
    pays one clock read per chunk); from the start with ``True``; never with ``False``."""

    def __init__(self, total: int, progress: bool | None, name: str) -> None:
        self._bar: Any = None
        self._total, self._name, self._done = total, name, 0
        self._waiting = progress is None  # auto: decide once the delay has passed
        self._started = time.monotonic()
        if progress:
            self._bar = _tqdm(name, required=True)(total=total, desc=name, file=sys.stderr)

    def update(self, n: int) -> None:
        self._done += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._waiting and time.monotonic() - self._started >= PROGRESS_DELAY:
            self._waiting = False
            tqdm = _tqdm(self._name, required=False) if _is_terminal(sys.stderr) else None
            if tqdm is not None and self._done < self._total:
                self._bar = tqdm(total=self._total, initial=self._done, desc=self._name, file=sys.stderr)

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()


def _tqdm(name: str, required: bool) -> Any:
    """tqdm's bar class, or None when it is not installed (an ImportError when ``required``)."""
    try:
        from tqdm import tqdm
    except ImportError:
        if required:
            raise ImportError(f"{name}: progress=True needs tqdm (pip install tqdm, or yuebing[dask])") from None
        return None
    return tqdm


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


# --------------------------------------------------------------------------------------------
# map_grad: per-example gradients
# --------------------------------------------------------------------------------------------


def map_grad(f: Callable, xs: Any, *, argnums: int | Sequence[int] = 0, executor: Any = None,
             chunk_size: int | None = None, progress: bool | None = None) -> Any:
    """Per-example gradients: ``yb.grad(f, argnums)`` at every example of a batch, stacked.

    ``xs`` is either an array whose leading axis is the batch (example ``i`` is the one argument
    ``xs[i]``: a float for a 1-D array) or a list of examples, each a tuple of positional
    arguments (``f(*xs[i])``) or a single argument (anything but a tuple; write ``(t,)`` to pass a
    tuple as the one argument). The gradients are stacked along a new leading axis: an array for
    array or float gradients, a tuple of stacks for a tuple ``argnums``, a dict of stacks for dict
    gradients, a list of the gradients for any other structure.

    With ``executor`` (any ``concurrent.futures.Executor``), the examples go to it in chunks of
    ``chunk_size`` (default: about ``n / (4 * workers)`` per task); the result is the same as
    without one. ``progress``: see ``yb.jacobian``.
    """
    check_scale_options(executor, chunk_size, progress, "map_grad")
    batch = _batch(xs)
    n_items = len(batch)
    if n_items == 0:
        raise ValueError("map_grad: xs holds no examples")
    g = grad(f, argnums)
    grads = run_chunks(gradients_of, (g,), n_items, executor=executor, chunk_size=chunk_size, progress=progress,
                       name=f"map_grad({fname(f)})", part=lambda start, stop: batch[start:stop])
    return _stack(grads, f)


def _batch(xs: Any) -> Any:
    """``xs`` as something sliced into chunks: a C-contiguous float array (so an example's row is
    laid out the same here and in a worker: sums over it add in the same order) or a list."""
    if isinstance(xs, np.ndarray):
        if xs.ndim == 0:
            raise ValueError("map_grad: xs is a 0-d array; give an array whose leading axis is the batch, or a list")
        return np.ascontiguousarray(xs)
    if isinstance(xs, (list, tuple)):
        return list(xs)
    raise TypeError(
        f"map_grad: xs must be an array whose leading axis is the batch or a list of examples, got "
        f"{type(xs).__qualname__}"
    )


def gradients_of(g: Callable, chunk: Any) -> list:
    """The task of ``map_grad``: ``g`` at each example of ``chunk`` (rows of an array, or list entries)."""
    if isinstance(chunk, np.ndarray):
        if chunk.ndim == 1:
            return [g(float(x)) if chunk.dtype.kind == "f" else g(x) for x in chunk]
        return [g(x) for x in chunk]
    return [g(*x) if type(x) is tuple else g(x) for x in chunk]


def _stack(grads: list, f: Callable) -> Any:
    """The gradients stacked along a new leading axis, structure by structure."""
    first = grads[0]
    if isinstance(first, (np.ndarray, float, np.floating)):
        shapes = {np.shape(g) for g in grads}
        if len(shapes) > 1:
            raise ValueError(
                f"map_grad({fname(f)}): the examples' gradients have different shapes {sorted(shapes)} and cannot "
                "be stacked; give examples of one shape, or call yb.grad(f) on each"
            )
        return np.stack([np.asarray(g) for g in grads])
    if type(first) is tuple:
        return tuple(_stack([g[k] for g in grads], f) for k in range(len(first)))
    if type(first) is dict:
        return {key: _stack([g[key] for g in grads], f) for key in first}
    return grads


__all__ = ["map_grad", "run_chunks"]
