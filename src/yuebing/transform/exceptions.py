"""Exceptions caught inside differentiated code: what every generated ``except`` clause checks.

A ``try`` statement is differentiated as a branch (``Try`` in ir/nodes.py): the forward pass
records which handler ran and how many statements of the ``try`` body completed, and the reverse
pass undoes exactly those. That is only sound when the statement that raised left nothing
behind to undo. ``caught`` is called first thing in every generated handler and makes sure of it:

* yuebing's own errors (a missing rule, an unsupported construct) are raised again: a user's
  ``except Exception`` must not turn "cannot differentiate this" into a silently different path;
* the tape entries of a plain statement that raised (residuals it pushed before failing) are
  dropped (a loop, branch, ``with`` block or inner try of the body that raised part way is undone
  in part by the reverse pass: transform/try_statements.py);
* a function called from a try body (at any depth: ``TRACKING`` counts the try bodies running)
  runs a variant of its code that keeps its progress (transform/partial_calls.py); when it raises
  after doing work, its rule attaches a *partial pullback* to the exception (``attach``), which
  the handler of the caller's frame takes (``claim``) and records with how far its own body got
  (``Progress``): the reverse pass replays the callee's completed work as plain Python kept it.
  Layers in between that regroup the arguments (``*args``, a class's construction, ``map``'s
  per-element calls) route it as they route their pullbacks (rules/_partial_work.py);
* a partial pullback that cannot be placed (it came through a rule that does not route it, such
  as ``np.vectorize``'s, or the function ran without tracking) is undone and the exception
  marked (``mark_partial``, ``_partial_work.lose``): the handler refuses it.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

import numpy as np

from ..frontend.fence import UnsupportedSyntaxError
from ..rules import _partial_work as _work
from ..rules._partial_work import ATTRIBUTE as _PARTIAL_CALL, LOST as _PARTIAL, PartialCall, attach
from ..tangents import NoRData


_ADVICE = ("test for the failing case before the work (an if instead of the try), or catch the exception "
           "before anything is computed; forward mode (yb.jvp) differentiates it as it is")


def _is_ours(error: BaseException) -> bool:
    return type(error).__module__.startswith("yuebing.")


#: Tape markers of inline code that changed existing data (registered by the template modules);
#: other non-callable tape entries are residuals and markers of code that only made new values.
EFFECT_MARKERS: set = set()


def _changed_data(tape: list) -> bool:
    """Whether a forward pass that recorded ``tape`` may have changed data that existed before
    it: an inline write, or any rule's pullback (a rule may mutate its arguments)."""
    markers = {id(m) for m in EFFECT_MARKERS}
    return any(id(item) in markers or callable(item) and not isinstance(item, type)
               and not getattr(item, "changes_nothing", False)  # zero-derivative rules' pullbacks
               for item in tape if not isinstance(item, (float, int, tuple, np.ndarray)))


def mark_partial(error: BaseException, function: str, tape: list) -> None:
    """Record on ``error`` that it left ``function``, whose forward pass recorded ``tape``,
    after work that may have changed existing data (which the rule then undoes)."""
    if not _changed_data(tape):
        return  # comparisons, arithmetic on new values: nothing outlives the call
    if getattr(error, _PARTIAL, None) is None:  # (every exception instance has a __dict__)
        setattr(error, _PARTIAL, function)


class _Tracking:
    """How many try bodies are running in all threads, read on every rule call without a lock
    (a thread-local read costs five times more); ``here`` counts this thread's, read only when
    the first is not zero: a rule call runs its tracked variant when both are."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0

    @staticmethod
    def here() -> bool:
        return _HERE_COUNT.depth > 0


class _ThreadCount(threading.local):
    def __init__(self) -> None:
        self.depth = 0


TRACKING = _Tracking()
_HERE_COUNT = _ThreadCount()
_COUNTING = threading.Lock()


def tracked() -> bool:
    """Whether a try body runs in this thread (a handler may take partial work)."""
    return bool(TRACKING.depth) and TRACKING.here()


_work.tracking = tracked


def track_in() -> None:
    _HERE_COUNT.depth += 1
    with _COUNTING:
        TRACKING.depth += 1


def track_out(leaving: BaseException | None = None) -> None:
    """A try body ended; ``leaving``: the exception its handlers did not match, whose partial
    work no handler can take any more when no other try body runs in this thread (undone)."""
    _HERE_COUNT.depth -= 1
    with _COUNTING:
        TRACKING.depth -= 1
    if leaving is not None and not _HERE_COUNT.depth:
        release(leaving)


def release(error: BaseException) -> None:
    """Undo the partial work attached to ``error`` that no handler took."""
    partial = getattr(error, _PARTIAL_CALL, None)
    if partial is not None:
        delattr(error, _PARTIAL_CALL)
        if partial.undo is not None:
            partial.undo()


def abandon(error: BaseException) -> None:
    """Undo the partial work attached to ``error`` in a frame that cannot hand it on (a pass run
    without tracking), marking ``error`` for a handler to refuse."""
    partial = getattr(error, _PARTIAL_CALL, None)
    if partial is not None:
        delattr(error, _PARTIAL_CALL)
        _work.lose(error, partial)


_HERE = os.path.dirname(os.path.abspath(__file__))
_RULES = os.path.join(os.path.dirname(_HERE), "rules")
# The frames an exception may pass between a call site and the rule of the function it called
# for the partial pullback to fit the call's arguments as written: the runtimes' dispatch, and
# the layers that route it when they regroup arguments (``rules/_partial_work.py``, ``reroute``).
_work.PASS_THROUGH.update((os.path.join(folder, file), name) for folder, file, names in (
    (_HERE, "runtime.py", ("call_rrule", "_dispatch", "<lambda>", "_call_derived", "__call__", "_call_method",
                           "_call_object", "_run_rule", "_derive_for_core", "_operator_on_user_type")),
    (_HERE, "protocols.py", ("dispatch", "run_operator")),  # (a dunder's: routed by _call_dunder)
    (_HERE, "second_order.py", ("call_rrule2", "_call_function", "__call__", "_call_method", "_run_rule",
                                "_run_unbatched", "_construct", "_call_vectorized", "_operator_on_user_type", "_call_python")),
    (_HERE, "lifting.py", ("run_second_order", "rule")),  # (a defined_by function's dual rule)
    (_RULES, "core.py", ("rrule", "run_rrule")),
    (_RULES, "second_order.py", ("rrule",)),  # a defined_as function's rule
    (_RULES, "util.py", ("defined_rrule",)),
    (_RULES, "builtins.py", ("_call_rrule",)),
    (_RULES, "ordering.py", ("rrule", "_sorted_rrule", "_filter_rrule")),  # a key that may change data
    (os.path.join(_RULES, "containers"), "lists.py", ("_list_sort",)),
    # a missing key of a defaultdict (its factory) or of a class with a Python __missing__: that
    # function's rule is the item read's, its arguments as given (trimmed cuts only the rdata of
    # parameters left at their defaults, which the call site does not read)
    (os.path.join(_RULES, "indexing"), "items.py", ("_getitem_rrule", "_dict_getitem")),
    (os.path.join(_RULES, "indexing"), "common.py", ("trimmed",))) for name in names)
_work.METHOD_FRAMES.update((os.path.join(_HERE, file), "_call_method") for file in ("runtime.py", "second_order.py"))


def carry_elements(error: BaseException, pullbacks: list, x: Any, probe: bool = False) -> None:
    """``error`` is leaving ``np.vectorize(pyfunc)(x)`` after the element calls whose pullbacks
    are ``pullbacks`` completed (reverse mode: ``x`` a codual, transform/runtime.py; second order:
    ``x`` a 4-tuple and dual pullbacks, dual_vectorize.py): the rule's partial pullback runs the
    work of the element that raised, then theirs (``_partial_work.carry``), and gives ``x`` what
    they gathered, as the rule's pullback does. ``probe``: the first pullback is NumPy's extra call
    on the first element (``numpy_vectorize.probes_first``), whose cotangent is that element's too."""
    second = type(x) is tuple
    gathered = [[NoRData] * (len(pullbacks) + 1) for _ in range(2 if second else 1)]

    def back_of(pullback: Callable, i: int) -> Callable:
        def back(r: Any) -> None:
            for role, rs in zip(gathered, pullback(NoRData, NoRData) if second else (pullback(r),)):
                role[i] = rs[1]
        return back

    def result() -> tuple:
        roles = [_probe_folded(role) for role in gathered] if probe else gathered
        if second:
            return tuple((NoRData, _gathered_into(x[0], x[k], role)) for k, role in zip((1, 3), roles))
        return NoRData, _gathered_into(x.primal, x.fdata, roles[0])

    _work.carry(error, [back_of(pb, i) for i, pb in enumerate(pullbacks)],
                lambda raised: back_of(raised, len(pullbacks)), result, "np.vectorize")


def _probe_folded(values: list) -> list:
    """The cotangents of the probe call and of the first element, which share an argument, as one."""
    if len(values) < 2:
        return values
    first = [v for v in values[:2] if v is not NoRData]
    return [sum(first) if first else NoRData, *values[2:]]


def _gathered_into(x: Any, fdata: Any, values: list) -> Any:
    """The cotangents of ``x``'s first elements, added into its fdata (an array's) or returned
    (a number's), as ``np.vectorize``'s pullbacks give them."""
    grads = np.array([0.0 if r is NoRData else r for r in values], dtype=float)
    if isinstance(x, np.ndarray) and isinstance(fdata, np.ndarray):
        full = np.zeros(x.size)
        full[:grads.size] = grads
        fdata += full.reshape(x.shape)
        return NoRData
    return float(grads.sum()) if np.ndim(x) == 0 else NoRData


class Progress:
    """Pushed by a handler: the progress locals of the try body (``record``) and the partial
    call that was running (``slot``: ``(call number, pullback)``, or None). Called with a
    cotangent by ``runtime.unwind`` (a failed forward pass), it undoes that call's work."""

    __slots__ = ("slot", "record", "undo", "changes_nothing")

    def __init__(self, running: int, partial: PartialCall | None, record: tuple) -> None:
        self.slot = None if partial is None else (running, partial.pullback)
        self.undo = None if partial is None else partial.undo
        self.record = record
        self.changes_nothing = partial is None

    def __call__(self, _dy: Any) -> None:
        if self.undo is not None:
            self.undo()
            self.undo = None


def claim(error: BaseException, running: int) -> PartialCall | None:
    """The partial call attached to ``error``, if it came from call statement number ``running``
    of the frame now handling it through frames that pass or route the call's arguments
    (``rules/_partial_work.py``); one that came through anything else (a rule calling the
    function that does not route its work) is undone and the exception marked."""
    partial = getattr(error, _PARTIAL_CALL, None)
    if partial is None:
        return None
    delattr(error, _PARTIAL_CALL)
    if running >= 0 and _work.follow(partial, error.__traceback__.tb_next):
        return partial
    _work.lose(error, partial)
    return None


def _refuse_partial(error: BaseException, where: tuple) -> None:
    inside = getattr(error, _PARTIAL, None)
    if inside is not None:
        raise UnsupportedSyntaxError(
            f"an exception ({type(error).__name__}) raised in {inside} after it had done differentiable "
            "work and caught here (it was reached through a rule that calls it, such as np.vectorize's, "
            "which cannot route back the part of its work that ran)", _ADVICE, *where) from error


def caught(tape: list | None, length: int, error: BaseException, simple: bool, where: tuple,
           running: int = -1) -> PartialCall | None:
    """Check an exception a generated handler just caught; ``tape`` is None in forward mode.
    ``length`` is the tape's length when the statement that raised began, ``where`` the
    ``(filename, line, function)`` of the ``try``, ``running`` the number of the call statement
    that ran last. Returns the partial call that raised (``claim``), or None. (``simple`` is no
    longer used: loops and blocks of a try body are undone in part.)"""
    if _is_ours(error):
        raise error
    if tape is None:
        return None
    partial = claim(error, running)
    if getattr(error, _PARTIAL, None) is not None:
        if partial is not None and partial.undo is not None:
            partial.undo()
        _refuse_partial(error, where)
    if len(tape) > length:
        del tape[length:]  # residuals of the plain statement that failed: nothing happened
    return partial


def leave_partially(tape: list, length: int, error: BaseException, running: int, record: tuple) -> None:
    """The handler of a function's tracked body (partial_calls.py): record how far it got on
    its ``tape`` before the exception leaves (yuebing's own errors just leave)."""
    if _is_ours(error):
        return
    partial = claim(error, running)
    if len(tape) > length:
        del tape[length:]
    tape.append(Progress(running, partial, record))


def through_finally(tape: list, length: int, error: BaseException, running: int) -> None:
    """An exception is leaving a try (inside a try body) through a ``finally`` block with work:
    record how far the try got before that block's work follows on the tape (the residuals of
    the statement that raised dropped, the partial call of call statement ``running`` taken)."""
    if _is_ours(error):
        return
    partial = claim(error, running)
    if len(tape) > length:
        del tape[length:]
    tape.append(Progress(running, partial, ()))


#: the names generated handlers use, in every reverse-mode runtime's namespace
TRY_NAMES = {"_through_finally": through_finally, "_track_in": track_in, "_track_out": track_out, "_Progress": Progress}
