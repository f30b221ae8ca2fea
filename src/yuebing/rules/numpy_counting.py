"""``np.bincount``: the counts of non-negative integers, or the sums of ``weights`` per integer.

Zero derivative in ``x`` (integers); linear in ``weights`` (the cotangent of ``weights[i]`` is the
output cotangent at ``x[i]``). NumPy's ``histogram``, ``histogram2d`` and ``histogramdd`` call it
from their source, so they are differentiated in ``weights`` through it in every mode. Complex
weights are refused by NumPy itself.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randn
from .core import Dual, primal
from .numpy_arguments import dense_tangent, deliver, forward, rule
from .second_order import linear
from .util import fit_tangent, out_cotangent, output, tangent


@rule(np.bincount)
def _bincount_rrule(x, weights=None, minlength=0):
    indices, w = np.asarray(primal(x)), primal(weights)
    result = output(np.bincount(indices, weights=w, minlength=primal(minlength)))

    def pullback(dy: Any) -> tuple:
        if w is None:
            return ()
        g = out_cotangent(result, dy)
        return NoRData, deliver(weights, np.asarray(g)[indices.astype(np.intp)])

    return result, pullback


@forward(np.bincount)
def _bincount_frule(x, weights=None, minlength=0):
    indices, w = np.asarray(primal(x)), primal(weights)
    y = np.bincount(indices, weights=w, minlength=primal(minlength))
    dw = None if w is None else dense_tangent(w, tangent(weights))
    if dw is None or y.dtype.kind not in "fc":  # (no weights, or none at all: NumPy counts in ints)
        return Dual(y, fit_tangent(NoTangent, y))
    return Dual(y, np.bincount(indices, weights=dw, minlength=primal(minlength)))


linear(np.bincount)

_X = np.array([0, 1, 1, 3, 0, 5])
CASES = [
    Case(np.bincount, _X, randn(6)),
    Case(np.bincount, _X, randn(6), 8),
    Case(np.bincount, _X, kwargs={"weights": randn(6), "minlength": 2}),
    Case(np.bincount, np.array([2, 2]), [0.5, 1.5]),
    Case(np.bincount, np.array([], dtype=int), randn(0), 3),
]
