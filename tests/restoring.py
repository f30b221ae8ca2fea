"""``check_every_mode`` of a function of an array that it writes, and that the caller's array is
as it was after ``yb.grad`` and ``yb.hvp`` (shared by the exception tests)."""
from __future__ import annotations

import numpy as np

import yuebing as yb

from .modes import check_every_mode


def check_every_mode_restoring(f, x):
    check_every_mode(f, x)
    before = x.copy()
    yb.grad(f)(x)
    yb.hvp(f, (x,), (x,))
    np.testing.assert_array_equal(x, before)
