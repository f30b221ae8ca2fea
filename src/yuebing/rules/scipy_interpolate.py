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

``PPoly.integrate(a, b)`` (so ``CubicSpline(...).integrate``) calls ``_ppoly.integrate``, defined
as ``G(b) - G(a)`` with ``G`` the integral from ``x[0]``: each interval's antiderivative at its
bound, plus the whole intervals between, in NumPy (differentiable in the coefficients, the
breakpoints and both bounds). ``PPoly.antiderivative`` calls ``_ppoly.fix_continuity``, defined as
its loop over the intervals writing the new low coefficients in place.
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
    from scipy.interpolate import BPoly, CubicSpline, PPoly, _ppoly
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


def _end_intervals(x: Any, a: Any, b: Any, extrapolate: Any) -> tuple[int, int] | None:
    """The intervals of the bounds of ``_ppoly.integrate`` (None if either has none), after
    SciPy's check of their order."""
    if not b >= a:
        raise ValueError("Integral bounds not in order")
    found = _intervals(x, np.array([a, b], dtype=float), extrapolate)
    return None if np.any(found < 0) else (int(found[0]), int(found[1]))


def _crossings(start: int, end: int, m: int) -> np.ndarray:
    """The sign each whole interval's integral takes in ``G(end) - G(start)``, ``G(p)`` the
    integral from ``x[0]``: +1 for ``start <= i < end``, -1 for ``end <= i < start``."""
    i = np.arange(m)
    return ((start <= i) & (i < end)).astype(float) - ((end <= i) & (i < start)).astype(float)


def _check_continuity(c: Any, x: Any, order: Any) -> None:
    """SciPy's own errors of ``fix_continuity`` (shapes, order)."""
    if c.shape[1] != len(x) - 1:
        raise ValueError("x and c have incompatible shapes")
    if order >= c.shape[0] - 1:
        raise ValueError("order too large")
    if order < 0:
        raise ValueError("order negative")


nondifferentiable(_intervals, _factor, _check_order, _end_intervals, _crossings, _check_continuity)


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


def _antiderivative(c, i, s):
    """Each interval ``i``'s antiderivative (0 at its left end) at ``s``: ``sum_j c[j, i] s**(k-j) / (k-j)``."""
    k = c.shape[0]
    value = np.zeros((len(i), c.shape[2]), dtype=c.dtype)
    for j in range(k):
        value = value + c[j, i, :] * (s ** (k - j) / (k - j))[:, None]
    return value


def _integrate(c, x, a, b, extrapolate, out):
    """``_ppoly.integrate``: ``G(b) - G(a)``, ``G(p)`` the integral from ``x[0]`` (the whole
    intervals between the bounds' own, each with its sign, then the bounds' partial pieces)."""
    ends = _end_intervals(x, a, b, extrapolate)
    if ends is None:
        out[...] = np.nan
        return
    start, end = ends
    m = c.shape[1]
    whole = _antiderivative(c, np.arange(m), x[1:] - x[:-1])
    at_b = _antiderivative(c, np.array([end]), np.reshape(b - x[end], (1,)))
    at_a = _antiderivative(c, np.array([start]), np.reshape(a - x[start], (1,)))
    out[...] = at_b[0] - at_a[0] + _crossings(start, end, m) @ whole


def _fix_continuity(c, x, order):
    """``_ppoly.fix_continuity``: interval by interval, the coefficients of ``s**dx``
    (``dx <= order``) set to the previous interval's ``dx``-th derivative at the breakpoint over
    ``dx!``, in place (the previous interval is already fixed)."""
    _check_continuity(c, x, order)
    k = c.shape[0]
    for ip in range(1, len(x) - 1):
        s = x[ip] - x[ip - 1]
        for dx in range(order, -1, -1):
            value = np.zeros(c.shape[2], dtype=c.dtype)
            for j in range(k - dx):
                power = k - 1 - j - dx
                value = value + _factor(power, dx) * c[j, ip - 1, :] * s ** power
            c[k - dx - 1, ip, :] = value / math.factorial(dx)


def _construct_fast(cls, c, x, extrapolate=None, axis=0):
    """``construct_fast`` (``derivative``, ``antiderivative``), which SciPy makes with
    ``object.__new__`` (not followed): the ``PPoly`` (or ``BPoly``) constructor, given ``c`` in
    the layout it takes (the interpolation axes at ``axis``). The object is a ``PPoly``, not
    ``cls`` (a ``CubicSpline``'s derivative is a ``PPoly``): the same attributes and methods."""
    base = BPoly if issubclass(cls, BPoly) else PPoly
    c = np.asarray(c)
    return base(np.moveaxis(np.moveaxis(c, 0, axis + 1), 0, axis + 1), x, extrapolate, axis)


if _ppoly is not None:
    defined_as(_ppoly.evaluate, _evaluate)
    defined_as(_ppoly.integrate, _integrate)
    defined_as(_ppoly.fix_continuity, _fix_continuity)
    defined_as(PPoly.construct_fast.__func__, _construct_fast)


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
] + [  # bounds in two intervals apart, in one interval, outside (extrapolated), descending breakpoints
    Case(_ppoly.integrate, _C, breaks, a, b, True, np.zeros(2), name=f"_ppoly.integrate({a}, {b}){label}")
    for breaks, a, b, label in ((_BREAKS, 0.3, 2.7, ""), (_BREAKS, 1.2, 2.1, ""), (_BREAKS, -0.4, 3.3, ""),
                                (_BREAKS[::-1].copy(), 0.4, 2.8, " descending"))
] + [
    Case(_ppoly.fix_continuity, _C.copy(), _BREAKS, order, name=f"_ppoly.fix_continuity(order={order})")
    for order in (0, 2)
]

__all__ = ["CASES"]
