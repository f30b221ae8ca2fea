"""Dense Hessians by batched forward-over-reverse: one pass carries B basis directions, every
tangent part with a leading batch axis (``transform/batched_second_order.py``), and gives B
Hessian columns. ``hessian_columns`` in ``api/second_order.py`` calls ``batched_columns`` for
each group of up to ``chunk_size`` columns (default 64, as ``jacobian(mode="fwd")``).

A pass that meets a call it cannot carry (``Unbatched``: a tangent the looped fallback cannot
slice, a rule without a batched form such as a solver's, scalar code), or raises anything else,
is dropped and its columns computed one pass each, which gives the same Hessian or the error that
pass raises. A dropped pass may have changed outside state (a global, a closure's variable, a
module's list, an outside object's evaluation counter): its memo (``api/outside_snapshot.py``)
keeps a copy of each outside object as the pass first reached it and puts everything back before
the columns are redone, so they start where the pass started. An outside object it could not put
back drops the pass at its first read, before anything can change it. Never refused.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..rules import aliasing_views, outside_state
from ..rules.core import RuleArgumentError
from ..rules.batched import batched, batched_zeros
from ..tangents import NoFData, NoRData, NoTangent
from ..transform.batched_second_order import Unbatched, start_pass
from ..transform.second_order import call_rrule2
from .argument_checks import separate_arguments
from .outside_snapshot import FirstReads

#: directions per batched forward-over-reverse pass of ``hessian`` when ``chunk_size`` is not
#: given (past this the pass's arrays, 64 times the primal's, stop paying for themselves)
MAX_BATCH = 64


def batched_columns(f: Callable, args: tuple, nums: tuple, items: list, pull_unit: Callable) -> list | None:
    """The Hessian's columns for the flat coordinates ``items`` (over the arguments ``nums``, in
    order), each as one flat array per argument of ``nums``, from one batched pass on copies of
    ``args``; None when the pass cannot be batched (the caller then runs one pass per column).
    ``pull_unit(out, pullback, f, name)`` runs the dual pullback with the unit cotangent."""
    if any(type(args[i]) is float for i in nums):
        return None  # a float's batched tangent cannot go through f(*args) (second_order_calls.py): few columns anyway
    signature = _signature(f, args)
    if signature in _PER_COLUMN:
        return None  # a pass on such arguments was dropped before
    xs = T.structural_copy(tuple(args))
    if separate_arguments(xs, "hessian") is not None:
        return None  # arguments sharing memory: differentiated slot by slot, one pass per column
    k = len(items)
    duals = [_batched_dual(x, k) for x in xs]
    _seed(duals, nums, items)
    scope = outside_state.enter()
    memo = outside_state._LOCAL.memo = FirstReads(Unbatched)
    start_pass()
    try:
        with batched(k):
            out, pullback = call_rrule2((f, NoFData, NoTangent, NoFData), *duals)
            written = aliasing_views.forward_ended()  # (before the reverse part puts the values back)
            if written:
                raise RuleArgumentError(written)  # (the columns' own passes refuse it)
            _, rsd = pull_unit(out, pullback, f, "hessian")
    except Exception:  # noqa: BLE001 - Unbatched, or anything the batched pass met: one pass per column
        _remember(signature)
        memo.restore()  # (the columns start from the state the pass started from)
        return None
    finally:
        outside_state.leave(scope)
    stacks = [_hvps(duals[i], rsd[1 + i], k) for i in nums]
    return [[stack[r] for stack in stacks] for r in range(k)]


#: functions and argument kinds whose batched pass was dropped: the next Hessians of them go one
#: pass per column from the start (bounded: closures made per call are new functions each time)
_PER_COLUMN: dict = {}


def _signature(f: Callable, args: tuple) -> tuple:
    kinds = tuple((type(a), np.shape(a), getattr(a, "dtype", None)) if isinstance(a, (np.ndarray, float)) else type(a)
                  for a in args)
    return getattr(f, "__code__", None) or id(f), kinds


def _remember(signature: tuple) -> None:
    if len(_PER_COLUMN) > 256:
        _PER_COLUMN.clear()
    _PER_COLUMN[signature] = True


def _batched_dual(x: Any, k: int) -> tuple:
    """The 4-tuple of argument ``x`` in a pass of ``k`` directions: a float or a float array gets
    zero batched tangents (seeded by ``_seed``) and, an array, a zero batched fdata tangent; any
    other argument its zero tangent without the batch axis (zero in every direction)."""
    fdata = T.fdata(T.zero_tangent(x))
    if type(x) is float:
        return (x, fdata, np.zeros(k), NoFData)
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return (x, fdata, batched_zeros(x, k), batched_zeros(x, k))
    return (x, fdata, T.zero_tangent(x), T.fdata(T.zero_tangent(x)))


def _seed(duals: list, nums: tuple, items: list) -> None:
    """Direction r is the basis vector of flat coordinate ``items[r]`` over the arguments ``nums``."""
    sizes = [int(np.size(duals[i][0])) for i in nums]
    for r, item in enumerate(items):
        b = 0
        while item >= sizes[b]:
            item -= sizes[b]
            b += 1
        tangent = duals[nums[b]][2]
        tangent[(r,) + np.unravel_index(item, tangent.shape[1:])] = 1.0  # any layout: no reshape copy


def _hvps(dual: tuple, rdata_tangent: Any, k: int) -> np.ndarray:
    """The k Hessian-vector products of one argument, as a ``(k, size)`` array: its fdata
    tangent plus its rdata tangent."""
    x, fdata_tangent = dual[0], dual[3]
    total = np.zeros((k,) + np.shape(x)) if fdata_tangent is NoFData else np.array(fdata_tangent)
    if rdata_tangent is not NoRData:
        total = total + np.reshape(rdata_tangent, (k,) + (1,) * np.ndim(x))
    return total.reshape(k, -1)


__all__ = ["MAX_BATCH", "batched_columns"]
