"""Dense Hessians by batched forward-over-reverse: one pass carries B basis directions, every
tangent part with a leading batch axis (``transform/batched_second_order.py``), and gives B
Hessian columns. ``hessian_columns`` in ``api/second_order.py`` calls ``batched_columns`` for
each group of up to ``chunk_size`` columns (default 64, as ``jacobian(mode="fwd")``).

A pass that meets a call it cannot carry (``Unbatched``: a tangent the looped fallback cannot
slice, a rule without a batched form such as a solver's, a NaN where the strong-zero rule
applies), or raises anything else, is dropped and its columns computed one pass each, which
gives the same Hessian or the error that pass raises. A dropped pass does not undo what it
changed, so the pass keeps a copy of each outside object (a global, a closure's cell, a module's
list) as it was when the pass first reached it; the columns are redone only if every such object
is as it was (for one it changed, or a global it wrote, the pass's error is raised instead; for
``Unbatched``, one advising ``chunk_size=1``).
"""
from __future__ import annotations

import copy
import types
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..rules import outside_state
from ..rules.batched import batched, batched_zeros
from ..tangents import NoFData, NoRData, NoTangent
from ..transform.batched_second_order import Unbatched, start_pass
from ..transform.second_order import call_rrule2
from .argument_checks import separate_arguments

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
    memo = outside_state._LOCAL.memo = _FirstReads()
    start_pass()
    try:
        with batched(k):
            out, pullback = call_rrule2((f, NoFData, NoTangent, NoFData), *duals)
            _, rsd = pull_unit(out, pullback, f, "hessian")
    except Exception as error:  # noqa: BLE001 - Unbatched, or anything the batched pass met: one pass per column
        _remember(signature)
        if memo.unchanged():
            return None
        if isinstance(error, Unbatched):
            raise _refused(f, error) from None
        raise  # (the dropped pass changed outside state: its own error, not a second try)
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


#: outside objects a pass cannot change (functions, modules, classes: their attributes are read
#: through the memo entries of what they hold), and numbers
_UNCHANGING = (float, int, complex, str, bytes, bool, type(None), np.generic, types.FunctionType,
               types.BuiltinFunctionType, types.ModuleType, type)


class _FirstReads(dict):
    """The outside-state memo of a batched pass (``rules/outside_state.py``): a dict that also
    keeps a copy of each outside object as it was when the pass first reached it, so that a
    dropped pass can tell whether it left outside state changed."""

    def __init__(self) -> None:
        super().__init__()
        self.before: dict = {}
        self.written = False

    def __setitem__(self, key: Any, hit: Any) -> None:
        if key[0] == "global":  # a global the pass wrote (made by its first write)
            self.written = True
        else:
            value = hit[0]
            if id(value) not in self.before and not _unchanging(value):
                self.before[id(value)] = (value, _snapshot(value))
        super().__setitem__(key, hit)

    def unchanged(self) -> bool:
        """Whether every outside object the pass reached is as it was (nothing to undo)."""
        if self.written:
            return False
        return all(before is not _UNCOPIED and _same(before, value, 0) for value, before in self.before.values())


_UNCOPIED = object()


def _unchanging(value: Any) -> bool:
    return isinstance(value, _UNCHANGING) or hasattr(value, "__yuebing_gradient__")


def _snapshot(value: Any) -> Any:
    """A copy of outside object ``value`` (a cell: of what it holds), or ``_UNCOPIED``."""
    try:
        if isinstance(value, types.CellType):
            try:
                contents = value.cell_contents
            except ValueError:  # an empty cell
                return ()
            return (contents if _unchanging(contents) else copy.deepcopy(contents),)
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - an object Python cannot copy: taken as changed
        return _UNCOPIED


def _same(before: Any, value: Any, depth: int) -> bool:
    """Whether ``value`` holds what its copy ``before`` held (by value, arrays bit for bit)."""
    if before is value:  # what cannot change is kept, not copied (deepcopy copies every mutable object)
        return True
    if depth > 64:
        return False
    if isinstance(value, types.CellType):
        try:
            contents = value.cell_contents
        except ValueError:  # an empty cell
            return before == ()
        return len(before) == 1 and _same(before[0], contents, depth + 1)
    if type(before) is not type(value):
        return False
    if isinstance(value, np.ndarray):
        return before.shape == value.shape and before.dtype == value.dtype and np.array_equal(
            before, value, equal_nan=value.dtype.kind in "fc")
    if isinstance(value, (list, tuple)):
        return len(before) == len(value) and all(_same(c, v, depth + 1) for c, v in zip(before, value))
    if isinstance(value, dict):
        return list(before) == list(value) and all(_same(before[key], value[key], depth + 1) for key in value)
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return before == value or before != before and value != value
    if isinstance(value, _UNCHANGING):
        return before is value or before == value
    if isinstance(value, (set, frozenset)):
        return before == value
    if isinstance(value, (types.MethodType, np.ufunc, np.vectorize)):  # code and its caches (a
        # scipy.stats distribution's vecentropy fills its cache on first use): no data of the pass
        return type(before) is type(value)
    if isinstance(value, np.random.RandomState):  # (a scipy.stats distribution holds one)
        return _same(before.get_state(legacy=False), value.get_state(legacy=False), depth + 1)
    if isinstance(value, np.random.Generator):
        return _same(before.bit_generator.state, value.bit_generator.state, depth + 1)
    if hasattr(value, "__dict__") and not hasattr(type(value), "__slots__"):
        # (attributes by name: a copy made through __setstate__ may hold them in another order)
        mine, theirs = vars(before), vars(value)
        return mine.keys() == theirs.keys() and all(_same(mine[key], theirs[key], depth + 1) for key in theirs)
    return False  # (an object compared by nothing we can trust: taken as changed)


def _refused(f: Callable, error: Exception) -> Exception:
    from .common import fname

    return NotImplementedError(
        f"hessian({fname(f)}): a batched pass could not carry every direction ({error}) after the function "
        "reached outside state (globals or closures made outside it), which a dropped pass may have left "
        "changed. Pass chunk_size=1 to yb.hessian (one forward-over-reverse pass per column)")


__all__ = ["MAX_BATCH", "batched_columns"]
