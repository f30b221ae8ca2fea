"""The completed work of a call that raised, carried by its exception (issue 13).

Inside a try body, a differentiated function that raises after doing work attaches a
``PartialCall`` to the exception (transform/partial_calls.py): a pullback of the work it
completed, shaped like its rule's pullback (the rdata of the function, then of each argument),
and how to undo that work. The handler of the caller takes it (transform/exceptions.py,
``claim``) only when every frame in between passed the call's arguments on as they were
written. A layer that regroups them (a ``*args`` expansion, a class's construction, a keyword
reordering) routes the partial pullback as it routes its pullback (``reroute``); a rule that
calls a function several times (``map``) adds the calls it completed (``carry``). Either
becomes the frame the handler checks from. A layer that does neither is not looked through:
the work is undone and the handler refuses the exception, naming the function.

This module sits under ``rules/`` (which ``transform/`` builds on) so that rules can route the
work of the functions they call.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ..tangents import NoRData, Tangent

#: the attribute of an exception holding its ``PartialCall``
ATTRIBUTE = "_yuebing_partial_call"
#: the attribute naming the function whose work could not be routed (the handler refuses it)
LOST = "_yuebing_partial_work"

#: ``(file, function name)`` of the frames that pass a call's arguments on as written (the
#: runtimes' dispatch), and of those that bind a method's object as its first argument: filled by
#: ``transform/exceptions.py``
PASS_THROUGH: set = set()
METHOD_FRAMES: set = set()
#: whether a try body runs in this thread, so that a handler may take partial work (set by
#: ``transform/exceptions.py``); without one, a rule undoes its completed calls at once
tracking: Callable[[], bool] = lambda: False


class PartialCall:
    """The completed work of a function that raised: ``pullback(dy)`` gives the rdata of the
    call's arguments as a rule's pullback does; ``undo()`` restores what the work changed;
    ``entry`` is the traceback entry of the frame that attached or last routed it."""

    __slots__ = ("pullback", "undo", "entry", "function")

    def __init__(self, pullback: Callable, undo: Callable | None, entry: Any, function: str) -> None:
        self.pullback, self.undo, self.entry, self.function = pullback, undo, entry, function


def _frame(tb: Any) -> tuple:
    return tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name


def follow(partial: PartialCall, tb: Any) -> bool:
    """Whether the frames from traceback entry ``tb`` down to the one that attached or last
    routed ``partial`` all pass the arguments on as written; a method's frame makes the
    pullback's object rdata the bound method's, as its pullback does."""
    methods = 0
    while tb is not None and tb is not partial.entry and _frame(tb) in PASS_THROUGH:
        methods += _frame(tb) in METHOD_FRAMES
        tb = tb.tb_next
    if tb is not partial.entry:
        return False
    for _ in range(methods):
        partial.pullback = _as_method(partial.pullback)
    return True


def lose(error: BaseException, partial: PartialCall) -> None:
    """Undo work that cannot be routed to the handler, and mark ``error`` for it to refuse."""
    if partial.undo is not None:
        partial.undo()
    if getattr(error, LOST, None) is None:  # (every exception instance has a __dict__)
        setattr(error, LOST, partial.function)


def _method_rdata(owner_rdata: Any) -> Any:
    return NoRData if owner_rdata is NoRData else Tangent(types.MethodType, {"__self__": owner_rdata})


def _as_method(pullback: Callable) -> Callable:
    """The partial pullback of a function called as a bound method: its object's rdata made the
    method's (the runtimes' ``_call_method`` pullbacks do the same for a call that returned)."""
    def method_pullback(*cotangents: Any) -> tuple:
        result = pullback(*cotangents)
        if len(cotangents) == 2:  # second order: (rdata, rdata tangents)
            return tuple((_method_rdata(rs[1]), *rs[2:]) for rs in result)
        return (_method_rdata(result[1]), *result[2:])

    return method_pullback


def attach(error: BaseException, pullback: Callable, undo: Callable | None, function: str) -> None:
    """Attach the completed work of ``function``, whose rule's frame ``error`` is leaving."""
    setattr(error, ATTRIBUTE, PartialCall(pullback, undo, error.__traceback__, function))


def _taken(error: BaseException) -> PartialCall | None:
    """The partial call on ``error`` if it reached the frame handling ``error`` through frames
    that pass arguments on (else it is undone and ``error`` marked)."""
    partial = getattr(error, ATTRIBUTE, None)
    if partial is None:
        return None
    if follow(partial, error.__traceback__.tb_next):
        return partial
    delattr(error, ATTRIBUTE)
    lose(error, partial)
    return None


def reroute(error: BaseException, route: Callable[[Callable], Callable]) -> None:
    """``error`` is leaving (at its ``except`` clause) a layer that regroups its callee's
    arguments: ``route(pullback)`` is the callee's partial pullback as the layer's caller sees
    it (the layer routes its own pullback the same way)."""
    partial = _taken(error)
    if partial is not None:
        partial.pullback = route(partial.pullback)
        partial.entry = error.__traceback__


def carry(error: BaseException, backs: list, back_of: Callable[[Callable], Callable], result: Callable[[], tuple],
          function: str) -> None:
    """``error`` is leaving a rule that calls a function once per element (``map``), after the
    calls whose reverse steps are ``backs`` completed (each takes its output's rdata): the rule's
    partial pullback runs the step of the call that raised (``back_of(its partial pullback)``),
    then ``backs`` newest first with no cotangent (their outputs were dropped), and returns
    ``result()``; undoing the rule's work runs ``backs`` alone (a pullback restores what it
    changed)."""
    def undo() -> None:
        for back in reversed(backs):
            back(NoRData)

    def route(raised: Callable | None) -> Callable:
        def pullback(*_cotangents: Any) -> tuple:
            if raised is not None:
                back_of(raised)(NoRData)
            undo()
            return result()
        return pullback

    partial = _taken(error)
    if not tracking() or getattr(error, LOST, None) is not None:
        if partial is not None:  # no handler can take it, or the handler refuses it: the data is
            delattr(error, ATTRIBUTE)  # restored first, newest work first
            lose(error, partial)
        undo()
        return
    if partial is None:
        attach(error, route(None), undo, function)
        return
    partial.pullback = route(partial.pullback)
    partial.entry = error.__traceback__
    first = partial.undo

    def undo_both() -> None:
        if first is not None:
            first()
        undo()

    partial.undo = undo_both
