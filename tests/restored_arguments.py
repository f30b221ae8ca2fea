"""``check_restored(f, a)``: ``check_all_modes`` of ``f`` at the float array ``a`` (which ``f``
writes), then ``yb.grad``, ``yb.jvp`` and ``yb.hvp`` called on ``a`` itself, which must be left
as it was (the reverse pass undoes every write it replays)."""
from __future__ import annotations

import numpy as np

import yuebing as yb

from .all_modes import check_all_modes


def check_restored(f, a: np.ndarray) -> None:
    kept = a.copy()
    check_all_modes(f, a)
    v = np.linspace(0.4, -0.9, a.size).reshape(a.shape)
    yb.grad(f)(a)
    yb.jvp(f, (a,), (v,))
    yb.hvp(f, (a,), (v,))
    np.testing.assert_array_equal(a, kept)
