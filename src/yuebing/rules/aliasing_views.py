"""Read-only views whose entries repeat an array's (``np.broadcast_to``, ``sliding_window_view``,
``as_strided``), made in reverse mode and second order. Their cotangent is gathered where they
were made (a sum over the entries that are one element), so a write into the array after that,
read through the view, would send the derivative to the values the view was made of, silently.
Each such array is watched for the pass (a copy of its values); at the end of the pass's forward
part one whose values changed is refused, before the reverse pass runs. The write rules
(``a[i] = v``, ``out=``, ``fill``) also note each write into a watched array, so a write of the
very values already there (a converged fixed point written back), which comparing values cannot
see, is refused too. Forward mode needs no watch: the view's tangent is the same view of the
array's tangent, which sees the write."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import outside_state

#: per open scope (``outside_state.scope_id``): the watched arrays, each ``[name, array, its values
#: when watched, whether a write rule wrote into it]``
_WATCHED: dict[int, list] = {}


def watch(source: np.ndarray, view: Any, name: str) -> None:
    """Watch ``source`` for the open pass when ``view``, made from it by ``name``, shares its memory."""
    key = outside_state.scope_id()
    if key is None or not isinstance(view, np.ndarray) or not np.may_share_memory(view, source):
        return
    if key not in _WATCHED:
        _WATCHED[key] = []
        outside_state.at_close(lambda: _first_written(_WATCHED.pop(key, [])))
    _WATCHED[key].append([name, source, source.copy(), False])


def note_write(target: Any) -> None:
    """Called by the write rules before writing into ``target``: a watched array it shares memory
    with is refused at the end of the forward part, whatever values the write leaves."""
    if not _WATCHED:  # the usual case: no repeating view made in any open pass
        return
    for entry in _WATCHED.get(outside_state.scope_id(), ()):
        if isinstance(target, np.ndarray) and np.may_share_memory(target, entry[1]):
            entry[3] = True


def forward_ended() -> str | None:
    """The check made when the open scope closes, for a pass that runs its reverse part before
    closing it (the reverse part puts the values back): made, and forgotten, at the end of the
    forward part."""
    return _first_written(_WATCHED.pop(outside_state.scope_id(), []))


def _first_written(watched: list) -> str | None:
    for name, source, before, written in watched:
        if written or not np.array_equal(source, before, equal_nan=True):
            return (f"{name}: yuebing cannot differentiate a write into an array after this call made a view of it "
                    "whose entries repeat its elements: the view's derivative is taken where it was made, so what "
                    "the view reads after the write would send it to the old values. What to do: make the view after "
                    "the last write, or take a copy of it where it is made (np.broadcast_to(v, shape).copy())")
    return None
