"""``ndarray.setflags``: no derivative, but a change of state that a reverse pass undoes.

A reverse pass (and second order, through it) puts every array back as it was, by pullbacks run
in reverse order: the pullback of ``w += v`` writes ``w``'s old contents back into ``w``. When
``w.setflags(write=False)`` came after (SciPy's ``ShortTimeFFT`` makes the window it was given
read-only, ``scipy.signal.windows`` having computed it in place), that write failed ("assignment
destination is read-only"). Its pullback now gives the array back the flags it had first, before
the earlier pullbacks run. Forward mode sets the flags (nothing to undo); second order runs the
rule as it runs any zero-derivative one (``ZERO_DERIVATIVE``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoRData, NoTangent
from .core import Dual, primal, register_frule, register_rrule
from .declare import ZERO_DERIVATIVE
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


def _setflags_frule(a: Any, write: Any = None, align: Any = None, uic: Any = None) -> Dual:
    primal(a).setflags(primal(write), primal(align), primal(uic))
    return Dual(None, NoTangent)


register_rrule((np.ndarray, "setflags"), _setflags_rrule)
register_frule((np.ndarray, "setflags"), _setflags_frule)
ZERO_DERIVATIVE.add((np.ndarray, "setflags"))  # second order: no derivative, the rule's undo

CASES: list = []  # (no derivative to check: tests/test_scipy_spectral.py checks the undo in every mode)
