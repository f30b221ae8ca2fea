"""``refused_in_every_mode(f, error, pattern)``: ``yb.grad``, ``yb.jvp`` and ``yb.hvp`` of ``f``
each raise ``error`` with a message matching ``pattern`` (a construct refused by name, pointing
at the user's line)."""
from __future__ import annotations

import pytest

import yuebing as yb


def refused_in_every_mode(f, error: type, pattern: str, x: float = 0.7) -> None:
    for run in (lambda: yb.grad(f)(x), lambda: yb.jvp(f, (x,), (1.0,)), lambda: yb.hvp(f, (x,), (1.0,))):
        with pytest.raises(error, match=pattern):
            run()
