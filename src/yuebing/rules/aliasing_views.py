"""Read-only views whose entries repeat an array's (``np.broadcast_to``, ``sliding_window_view``,
``as_strided``), made in reverse mode and second order. Their cotangent is gathered where they
were made (a sum over the entries that are one element), so a write into the array after that,
read through the view, would send the derivative to the values the view was made of, silently.
Each such array is watched for the pass (a copy of its values); at the end of the pass's forward
part one whose values changed is refused, before the reverse pass runs. Forward mode needs no
watch: the view's tangent is the same view of the array's tangent, which sees the write."""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

_LOCAL = threading.local()


def _scopes() -> list:
    scopes = getattr(_LOCAL, "scopes", None)
    if scopes is None:
        scopes = _LOCAL.scopes = []
    return scopes


def start_watching() -> None:
    """Open a pass's watch (``outside_state.enter``)."""
    _scopes().append([])


def watch(source: np.ndarray, view: Any, name: str) -> None:
    """Watch ``source`` for the open pass when ``view``, made from it by ``name``, shares its memory."""
    scopes = _scopes()
    if scopes and isinstance(view, np.ndarray) and np.may_share_memory(view, source):
        scopes[-1].append((name, source, source.copy()))


def written_after_view() -> str | None:
    """Close the open pass's watch: the error text for the first watched array whose values
    changed since its view was made, or None."""
    scopes = _scopes()
    return _first_written(scopes.pop() if scopes else [])


def forward_ended() -> str | None:
    """``written_after_view`` for a pass that runs its reverse part before closing its scope (the
    reverse part puts the values back): checked, and forgotten, at the end of the forward part."""
    scopes = _scopes()
    if not scopes:
        return None
    watched, scopes[-1] = scopes[-1], []
    return _first_written(watched)


def _first_written(watched: list) -> str | None:
    for name, source, before in watched:
        if not np.array_equal(source, before, equal_nan=True):
            return (f"{name}: yuebing cannot differentiate a write into an array after this call made a view of it "
                    "whose entries repeat its elements: the view's derivative is taken where it was made, so what "
                    "the view reads after the write would send it to the old values. What to do: make the view after "
                    "the last write, or take a copy of it where it is made (np.broadcast_to(v, shape).copy())")
    return None
