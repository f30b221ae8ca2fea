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
* an exception that left a differentiated Python function after it had done work is marked
  (``mark_partial``) by the function's rule, which undoes that work as it leaves: the handler
  refuses it, since plain Python would have kept the work's effects.
"""
from __future__ import annotations

import numpy as np

from ..frontend.fence import UnsupportedSyntaxError

_PARTIAL = "_yuebing_partial_work"  # attribute set on an exception by mark_partial

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


def caught(tape: list | None, length: int, error: BaseException, simple: bool, where: tuple) -> None:
    """Check an exception a generated handler just caught; ``tape`` is None in forward mode.
    ``length`` is the tape's length when the statement that raised began, ``where`` the
    ``(filename, line, function)`` of the ``try``. (``simple`` is no longer used: loops and
    blocks of a try body are undone in part, transform/try_statements.py.)"""
    if _is_ours(error):
        raise error
    inside = getattr(error, _PARTIAL, None)
    if inside is not None and tape is not None:
        raise UnsupportedSyntaxError(
            f"an exception ({type(error).__name__}) raised in {inside} after it had done differentiable "
            f"work and caught here", _ADVICE, *where) from error
    if tape is not None and len(tape) > length:
        del tape[length:]  # residuals of the plain statement that failed: nothing happened


def refuse_finally(error: BaseException, where: tuple, line: int) -> None:
    """Refuse an exception caught after it left a ``try`` (at ``line``) whose ``finally`` block
    did differentiable work on its way out: that work follows the body's partial work on the
    tape, an order the reverse pass does not replay."""
    raise UnsupportedSyntaxError(
        f"an exception ({type(error).__name__}) that left the try at line {line} through a finally block "
        "with differentiable work and caught here", _ADVICE.replace("; forward", " (or move the finally "
        "block's work after the try); forward"), *where) from error
