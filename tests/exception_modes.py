"""``run_in_mode(f, mode, x)``: ``yb.grad``, ``yb.jvp`` or ``yb.hvp`` of ``f`` at the float ``x``
(direction 1), for the tests that expect an exception or a refusal in each mode."""
from __future__ import annotations

import yuebing as yb

MODES = ("grad", "jvp", "hvp")


def run_in_mode(f, mode: str, x: float):
    if mode == "grad":
        return yb.grad(f)(x)
    if mode == "jvp":
        return yb.jvp(f, (x,), (1.0,))
    return yb.hvp(f, (x,), (1.0,))
