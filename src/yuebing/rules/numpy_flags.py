"""``ndarray.setflags``: no derivative, but a change of state that a reverse pass undoes.

A reverse pass (and second order, through it) puts every array back as it was, by pullbacks run
in reverse order: the pullback of ``w += v`` writes ``w``'s old contents back into ``w``. When
``w.setflags(write=False)`` came after (SciPy's ``ShortTimeFFT`` makes the window it was given
read-only, ``scipy.signal.windows`` having computed it in place), that write failed ("assignment
destination is read-only"). Its pullback now gives the array back the flags it had first, before
the earlier pullbacks run. (The zero-derivative declaration of ``numpy_zero.py`` stays: second
order runs this rule as it runs any zero-derivative one.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy_zero  # noqa: F401 - its declaration of setflags first: this rule replaces its rule
from ..tangents import NoRData
from .core import primal, register_rrule
from .util import output


def _setflags_rrule(a: Any, write: Any = None, align: Any = None, uic: Any = None) -> tuple:
    x = primal(a)
    before = (x.flags.writeable, x.flags.aligned)
    x.setflags(primal(write), primal(align), primal(uic))

    def pullback(dy: Any) -> tuple:
        if (x.flags.writeable, x.flags.aligned) != before:
            x.setflags(write=before[0], align=before[1])
        return (NoRData,) * 5  # the function's, the array's and the three flags' (no derivatives)

    return output(None), pullback


register_rrule((np.ndarray, "setflags"), _setflags_rrule)  # (forward mode: numpy_zero's rule, nothing to undo)

CASES: list = []  # (no derivative to check: tests/test_scipy_spectral.py checks the undo in every mode)
