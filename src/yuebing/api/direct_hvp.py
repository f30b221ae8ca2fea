"""``yb.hvp``'s direct path: a plain function on plain arguments runs its dual passes without dispatch.

A call of ``yb.hvp(f, ...)`` goes through ``call_rrule2``, whose dispatch tries, for every call,
the operators, the registered rules and the second-order declarations before it finds ``f``'s
dual rule (``transform/second_order.DualRule``), binds the arguments, and wraps the reverse pass
in a pullback closure; the output is then checked and seeded by general helpers and each
gradient joined by a tangent walk. For a function taking a few arrays that is most of the call.

When ``f`` is a plain Python function whose dual rule dispatch has already run (noted in
``direct_calls.SECOND``, as call sites inside generated code find their callees), called with
exactly its parameters, with no rule registered or second order declared for it, and when the
arguments are float64 arrays and floats (``plain_arguments.plain_duals``), this module runs the
rule's generated forward and reverse passes itself: the same passes dispatch would run, on the
same 4-tuples, so the results are the same to the bit. Anything else returns None and takes the
general path, which also reports every error with its context.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import numpy as np

from ..rules import outside_state
from ..rules.core import RRULES
from ..rules.second_order import _BY_FUNCTION as SECOND_ORDER_DECLARATIONS
from ..tangents import NoFData, NoRData, NoTangent
from ..transform import buffers
from ..transform.argument_writes import writes_nothing
from ..transform.direct_calls import SECOND, note_user_lines
from ..transform.exceptions import TRACKING, mark_partial

_FUNCTION, _ND = types.FunctionType, np.ndarray


_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def plain_function(f: Any) -> bool:
    """Whether ``f`` is a plain ``def`` or lambda that is not async (what ``check_function``
    asks of it, read from its code's flags as ``inspect`` does, without ``inspect``'s unwrapping)."""
    return type(f) is _FUNCTION and not f.__code__.co_flags & _ASYNC and not hasattr(f, "_is_coroutine_marker")


def detached_value(value: Any) -> Any:
    """The value of the pass, copied before its reverse pass runs: a 0-d array may be a view of
    an array the function wrote (``r[0] = s; return r.reshape(())``), which the reverse pass puts
    back as it was before the write (reverse mode copies its output likewise)."""
    return value.copy() if isinstance(value, np.ndarray) else value


def direct_passes(f: Any, n_args: int) -> tuple | None:
    """``(rule, forward pass, reverse pass)`` of ``f``'s dual rule when a call of ``f`` with
    ``n_args`` positional arguments dispatches to it and may run it directly, else None."""
    if type(f) is not _FUNCTION or TRACKING.depth:  # (inside a try body: the tracked variant)
        return None
    entry = SECOND.entry_of(f)
    if entry is None or entry[1] != n_args \
            or f in RRULES.by_function or f in SECOND_ORDER_DECLARATIONS or hasattr(f, "__yuebing_gradient__"):
        return None
    forward = entry[2]
    rule = SECOND.rules_by_file.get(forward.__code__.co_filename)
    return None if rule is None else (rule, forward, entry[3])


#: elements of array arguments below which copying them costs less than checking the proof
#: (a dictionary look-up per global the function reads: 2-12 us; a copy of 4096 floats: ~2 us)
COPY_CHEAPER_BELOW = 4096


def copies_needed(passes: tuple | None, f: Any, args: tuple) -> bool:
    """Whether the pass must run on copies of the arguments: not when ``f``'s dual rule runs
    directly and provably writes into no array (``transform/argument_writes.py``), and the
    arguments are large enough for the copies to cost more than the proof's check."""
    if passes is None or sum(x.size for x in args if type(x) is _ND) < COPY_CHEAPER_BELOW:
        return True
    return not writes_nothing(passes[0].ir, f.__globals__)


def direct_hvp(passes: tuple, f: Callable, duals: list, pull_unit: Callable, name: str, fresh: bool = False) -> tuple:
    """``(value, gradients, hvps)`` of ``f`` on the plain 4-tuples ``duals`` by its dual rule's
    passes; ``pull_unit`` checks and seeds the output as the general path does. ``fresh``: the
    fdata are buffers the caller reuses (a prepared HVP), so every result is a new array."""
    rule, forward, reverse = passes
    flat = [part for d in duals for part in d]
    tape: list = []
    scope = outside_state.enter()  # one tangent per outside object for the pass
    try:
        out = forward(tape, f, NoFData, NoTangent, NoFData, *flat)
    except Exception as error:
        note_user_lines(rule, error, SECOND, " (second order)")
        mark_partial(error, rule.name, tape)
        raise
    finally:
        redo = outside_state.leave(scope, lambda: reverse(tape, NoRData, NoRData))  # (a refusal: the arguments put back first)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = reverse(tape, dy, dy_d)
        return (NoRData, *rs), (NoRData, *rsd)

    value = detached_value(out[0])
    rs, rsd = pull_unit(out, pullback, f, name)
    if redo is not None:  # outside state as a plain call leaves it (rules/outside_redo.py)
        redo(tuple(d[0] for d in duals))
    if fresh:
        grads = tuple(d[1] + (0.0 if r is NoRData else r) for d, r in zip(duals, rs[1:]))
        hvps = tuple(d[3] + (0.0 if r is NoRData else r) for d, r in zip(duals, rsd[1:]))
    else:
        grads = tuple(_joined(d[1], r) for d, r in zip(duals, rs[1:]))
        hvps = tuple(_joined(d[3], r) for d, r in zip(duals, rsd[1:]))
    # the pass's large temporaries (and the arguments' copies, whose 4-tuples the caller reads
    # no more: its list is emptied) back to the buffer pool for the next call
    del tape, out, flat
    duals.clear()
    sweep()
    return value, grads, hvps


def _joined(fdata: Any, rdata: Any) -> Any:
    """A plain argument's gradient (or HVP): an array's fdata (plus any rdata), a float's rdata."""
    if type(fdata) is _ND:
        return fdata if rdata is NoRData else fdata + rdata
    return 0.0 if rdata is NoRData else rdata


def sweep() -> None:
    """The large temporaries of this call back to the buffer pool, for the next."""
    if buffers.lent():
        buffers.sweep()
