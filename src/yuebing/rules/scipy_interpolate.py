"""``scipy.interpolate``'s piecewise polynomials: their C evaluation kernel written in NumPy.

``PPoly``, ``CubicSpline``, ``PchipInterpolator``, ``Akima1DInterpolator`` and
``CubicHermiteSpline`` are built in Python (differentiated like user code: a spline's linear
system goes through ``solve_banded``'s rule) and evaluated by ``_ppoly.evaluate``, a Cython
function. It is declared ``defined_as`` the NumPy code below, so a spline's values and derivatives
are differentiated in every mode with respect to its coefficients, its breakpoints and the
points: each point's interval is the one SciPy's search finds (``x_i <= p < x_{i+1}``, the last
interval closed; outside, the first or last interval when extrapolating, else none and NaN), and
its polynomial ``sum_j c[j] s**(k-1-j)``, ``s = p - x_i``, or its ``dx``-th derivative, is
evaluated there. The interval is piecewise constant in the points: at a breakpoint the derivative
is that of the interval SciPy picks.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .cases import Case
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as

try:
    from scipy.interpolate import CubicSpline, _ppoly
except ImportError:  # SciPy is optional
    _ppoly = None


def _intervals(x: Any, xp: Any, extrapolate: Any) -> np.ndarray:
    """Each point's interval, as SciPy's ``find_interval`` gives it; -1 for none."""
    x, xp = np.asarray(x, dtype=float), np.asarray(xp, dtype=float)
    last = len(x) - 2
    if x[0] <= x[-1]:
        found = np.searchsorted(x, xp, side="right") - 1
    else:  # descending breakpoints: x_i >= p > x_{i+1}
        found = np.searchsorted(-x, -xp, side="right") - 1
    found = np.clip(found, 0, last)  # the end point is in the last interval; outside: the nearest
    inside = (xp >= min(x[0], x[-1])) & (xp <= max(x[0], x[-1]))
    return np.where(np.isnan(xp) | (~inside & (not extrapolate)), -1, found)


def _factor(power: int, dx: int) -> int:
    """``(power + dx)! / power!``: the constant the ``dx``-th derivative of ``s**(power + dx)`` has."""
    return math.prod(range(power + 1, power + dx + 1))


def _check_order(dx: Any) -> None:
    if dx < 0:
        raise RuleArgumentError("scipy.interpolate._ppoly.evaluate: yuebing differentiates derivatives "
                                f"(dx >= 0) of a piecewise polynomial, not dx={dx}; use PPoly.antiderivative")


nondifferentiable(_intervals, _factor, _check_order)


def _evaluate(c, x, xp, dx, extrapolate, out):
    """``_ppoly.evaluate``: ``out[p] = d^dx/ds^dx sum_j c[j, i] s**(k-1-j)`` at ``s = xp[p] - x[i]``."""
    _check_order(dx)
    interval = _intervals(x, xp, extrapolate)
    found = interval >= 0
    i = np.where(found, interval, 0)
    s = xp - x[i]
    k = c.shape[0]
    value = np.zeros(out.shape, dtype=out.dtype)
    for j in range(k - dx):
        power = k - 1 - j - dx
        value = value + _factor(power, dx) * c[j, i, :] * (s ** power)[:, None]
    out[...] = np.where(found[:, None], value, np.nan)


if _ppoly is not None:
    defined_as(_ppoly.evaluate, _evaluate)


_RNG = np.random.default_rng(7)
_C = _RNG.standard_normal((4, 3, 2))
_BREAKS = np.array([0.0, 1.0, 2.5, 3.0])
_POINTS = np.array([0.25, 1.3, 2.6, 2.9, -0.5, 3.4])  # inside each interval, and outside (not at a
# knot: there the pieces differ, so differences straddling it are not a derivative)

CASES = [] if _ppoly is None else [
    Case(_ppoly.evaluate, _C, _BREAKS, _POINTS, dx, True, np.zeros((6, 2)),
         name=f"_ppoly.evaluate(dx={dx}, extrapolate=True)") for dx in (0, 1, 2)
] + [
    Case(_ppoly.evaluate, _C, _BREAKS[::-1].copy(), _POINTS[:4], 1, False, np.zeros((4, 2)),
         name="_ppoly.evaluate(descending breakpoints, extrapolate=False)"),
]

__all__ = ["CASES"]
