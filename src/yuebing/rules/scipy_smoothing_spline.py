"""FITPACK's fits of a spline to data on knots it holds (``UnivariateSpline`` with ``s > 0``, the
default ``s=None``, or a ``bbox`` of its own; ``LSQUnivariateSpline``), written in NumPy.

FITPACK (``fpcurf0``) chooses the knots by adding data points until its least-squares spline is
close enough to the data, then fits one of two splines on them:

* the weighted least-squares spline (``ier`` -2: a polynomial, -1: interpolating, 1: the knot
  storage full, or 0 when its residual sum ``fp`` is within FITPACK's tolerance ``0.001 s`` of
  ``s``): linear in ``y``;
* otherwise the smoothing spline: the least-squares fit penalised by the squared jumps of its
  ``k``-th derivative at the interior knots, ``min |w (y - A c)|^2 + lam |P c|^2``, with ``lam``
  the root of ``fp(lam) = s``. FITPACK stops its iteration for ``lam`` within ``0.001 s`` of ``s``;
  here ``lam`` is the root of ``fp(lam) = s + (fp_F - s)`` (``fp_F`` FITPACK's own, the offset held
  constant), found by ``brentq`` and differentiated implicitly: the value is FITPACK's, and the
  derivative is that of the spline meeting its condition exactly. FITPACK's output moves with
  its iteration count too, so finite differences of it agree only to about that tolerance.

The knots are held where FITPACK put them: at data points (or midpoints of two, for an even
``k`` interpolating), as ``x[i]``, so they move with the data sites; their choice is piecewise
constant in the data. The fit is checked against FITPACK's coefficients; a fit it does not
reproduce, or one whose iteration did not meet ``fp = s`` (``ier`` 2, 3, 10), is refused by name.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .core import RuleArgumentError
from .declare import nondifferentiable
from .scipy_bsplines import _evaluate as _bspline_values
from .second_order import defined_as

_TOLERANCE = 0.001  # FITPACK's relative tolerance on fp = s (fpcurf's tol)
_LEAST_SQUARES_CODES = (-2, -1, 1)


def _refuse(reason: str) -> None:
    raise RuleArgumentError(
        f"scipy.interpolate.UnivariateSpline: {reason}. yuebing differentiates FITPACK's fits that it reproduces "
        "(a least-squares spline on FITPACK's knots, or the smoothing spline with fp = s); use a larger s, or "
        "scipy.interpolate.LSQUnivariateSpline(x, y, t) with interior knots t you choose, or "
        "scipy.interpolate.make_interp_spline(x, y, k=3) for an interpolating spline")


def _knot_sources(x: Any, t: Any, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For each interior knot FITPACK chose, the data points ``(i, j)`` it is the midpoint of
    (``i == j``: the knot is a data point)."""
    x = np.asarray(x, dtype=float)
    lows, highs = [], []
    for knot in np.asarray(t, dtype=float)[k + 1:n - k - 1]:
        at = np.flatnonzero(x == knot)
        between = np.flatnonzero((x[1:] + x[:-1]) * 0.5 == knot)
        if at.size:
            lows.append(at[0]), highs.append(at[0])
        elif between.size:
            lows.append(between[0]), highs.append(between[0] + 1)
        else:
            _refuse(f"FITPACK placed a knot at {knot!r}, neither a data point nor the midpoint of two")
    return np.array(lows, dtype=int), np.array(highs, dtype=int)


def _kind(data: tuple, least_squares_fp: Any) -> str:
    """Which spline FITPACK returned: 'least squares' or 'smoothing' (FITPACK's own test)."""
    s, ier = float(data[6]), int(data[-1])
    if ier in _LEAST_SQUARES_CODES:
        return "least squares"
    if ier != 0:
        _refuse(f"FITPACK's fit ended with ier={ier} (its iteration for fp = s did not meet it)")
    return "least squares" if abs(float(least_squares_fp) - s) < _TOLERANCE * s else "smoothing"


def _penalty_scale(normal: Any, penalty: Any) -> float:
    """A constant making ``lam = exp(u)`` of order one near ``u = 0`` (any constant gives the
    same family of fits; only the root's place changes)."""
    return float(np.trace(normal) / max(np.trace(penalty), np.finfo(float).tiny))


def _bracket(normal, penalty, rhs, design, w, y, target) -> tuple[float, float]:
    """``u`` below and above the root of ``fp(exp(u)) = target`` (``fp`` grows with ``u``)."""
    low, high = -4.0, 4.0
    while _excess(low, normal, penalty, rhs, design, w, y, target) > 0 and low > -200:
        low -= 4.0
    while _excess(high, normal, penalty, rhs, design, w, y, target) < 0 and high < 200:
        high += 4.0
    return low, high


def _reproduces(c: Any, fitpack_c: Any) -> bool:
    c, fitpack_c = np.asarray(c, dtype=float), np.asarray(fitpack_c, dtype=float)[:c.size]
    return bool(np.allclose(c, fitpack_c, rtol=1e-7, atol=1e-9 * (1.0 + np.max(np.abs(fitpack_c)))))


def _check_reproduced(c: Any, fitpack_c: Any) -> None:
    if not _reproduces(c, fitpack_c):
        _refuse("its fit on FITPACK's knots does not reproduce FITPACK's coefficients (an ill-conditioned fit)")


def _check_least_squares(c: Any, fitpack_c: Any) -> None:
    if not _reproduces(c, fitpack_c):
        raise RuleArgumentError(
            "scipy.interpolate.LSQUnivariateSpline: yuebing's least-squares fit on these knots does not reproduce "
            "FITPACK's coefficients (an ill-conditioned fit: knots with few data between them); choose fewer "
            "interior knots t, or place them where the data are")


nondifferentiable(_refuse, _knot_sources, _kind, _penalty_scale, _bracket, _reproduces, _check_reproduced,
                  _check_least_squares)


def _knots(x, lows, highs, k, xb, xe):
    """FITPACK's knots as functions of the data sites and the bounds: ``k + 1`` copies of each
    bound around the interior knots."""
    inner = (x[lows] + x[highs]) * 0.5
    return np.concatenate([xb + np.zeros(k + 1), inner, xe + np.zeros(k + 1)])


def _design(t, k, points, nu):
    """The ``nu``-th derivatives of every B-spline of the knots ``t`` at the points (a row each)."""
    size = t.size - k - 1
    return _bspline_values(t, np.eye(size), k, points, nu, True)


def _jumps(t, k):
    """The jumps of every B-spline's ``k``-th derivative (constant between knots) at the interior
    knots: the differences of its values at consecutive intervals' midpoints."""
    n = t.size
    middles = (t[k:n - k - 1] + t[k + 1:n - k]) * 0.5
    constant = _design(t, k, middles, k)
    return constant[1:] - constant[:-1]


def _penalised(normal, penalty, rhs, u):
    return np.linalg.solve(normal + np.exp(u) * penalty, rhs)


def _residual_sum(c, design, w, y):
    """FITPACK's ``fp``: the weighted residual sum of squares."""
    return np.sum((w * (y - design @ c)) ** 2)


def _excess(u, normal, penalty, rhs, design, w, y, target):
    return _residual_sum(_penalised(normal, penalty, rhs, u), design, w, y) - target


def _least_squares(t, k, x, y, w):
    """The weighted least-squares spline of knots ``t``: its normal equations, coefficients and
    design matrix."""
    design = _design(t, k, x, 0)
    weighted = w[:, None] * design
    normal, rhs = weighted.T @ weighted, weighted.T @ (w * y)
    return normal, rhs, np.linalg.solve(normal, rhs), design


def _smoothing(t, k, x, y, w, target, normal, rhs, design):
    """The coefficients of the smoothing spline whose residual sum is ``target``."""
    from scipy.optimize import brentq

    jumps = _jumps(t, k)
    penalty = _penalty_scale(normal, jumps.T @ jumps) * (jumps.T @ jumps)
    low, high = _bracket(normal, penalty, rhs, design, w, y, target)
    u = brentq(_excess, low, high, args=(normal, penalty, rhs, design, w, y, target), xtol=1e-13)
    return _penalised(normal, penalty, rhs, u)


def _padded(values, like):
    return np.concatenate([values, np.zeros(np.size(like) - np.size(values))])


def spline_fit(x, y, k, w, xb, xe, s, data):
    """The spline FITPACK fitted (``data``, ``fpcurf0``'s or ``fpcurf1``'s output) as a function
    of the data: its knots and coefficients padded to FITPACK's lengths, and its residual sum."""
    n = int(data[7])
    lows, highs = _knot_sources(x, data[8], k, n)
    t = _knots(x, lows, highs, k, xb, xe)
    normal, rhs, c, design = _least_squares(t, k, x, y, w)
    if _kind(data, _residual_sum(c, design, w, y)) == "smoothing":
        target = s + (float(data[10]) - float(data[6]))  # FITPACK's fp, moving with s
        c = _smoothing(t, k, x, y, w, target, normal, rhs, design)
    _check_reproduced(c, data[9])
    return _padded(t, data[8]), _padded(c, data[9]), _residual_sum(c, design, w, y)


def fitted_data(x, y, k, w, xb, xe, s, data):
    """FITPACK's output tuple for a fit on its knots: the arguments (differentiable), then the
    knots, coefficients and residual sum of ``spline_fit``, then FITPACK's own bookkeeping."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w = np.ones(x.size) if w is None else np.asarray(w, dtype=float)
    xb = x[0] if xb is None else xb
    xe = x[-1] if xe is None else xe
    s = data[6] if s is None else s
    t, c, fp = spline_fit(x, y, k, w, xb, xe, s, data)
    return (x, y, w, xb, xe, data[5], s, data[7], t, c, fp) + tuple(data[11:])


def _refit_by_fitpack(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier):
    """FITPACK's ``fpcurf1`` on copies of the values (it writes its arrays in place)."""
    from scipy.interpolate import _fitpack2

    arrays = [np.array(a, dtype=float) for a in (x, y, w, t, c, fpint)]
    return _fitpack2.dfitpack.fpcurf1(arrays[0], arrays[1], arrays[2], xb, xe, k, s, n, arrays[3], arrays[4],
                                      fp, arrays[5], np.array(nrdata), ier)


def _least_squares_by_fitpack(x, y, k, t, w, xb, xe):
    from scipy.interpolate import _fitpack2

    keywords = {name: v for name, v in (("w", w), ("xb", xb), ("xe", xe)) if v is not None}
    return _fitpack2.dfitpack.fpcurfm1(x, y, k, np.array(t, dtype=float), **keywords)


nondifferentiable(_refit_by_fitpack, _least_squares_by_fitpack)


def _refit(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier, **overwrite):
    """``fpcurf1`` (``set_smoothing_factor``, a larger ``nest``): FITPACK's fit continued from its
    knots, as a function of the data."""
    data = _refit_by_fitpack(x, y, w, xb, xe, k, s, n, t, c, fp, fpint, nrdata, ier)
    return fitted_data(x, y, k, w, xb, xe, s, data)


def _least_squares_fit(x, y, k, t, w=None, xb=None, xe=None, overwrite_t=1):
    """``fpcurfm1`` (``LSQUnivariateSpline``): the least-squares spline of the given knots ``t``,
    differentiable in ``x``, ``y``, ``w`` and the knots."""
    data = _least_squares_by_fitpack(x, y, k, t, w, xb, xe)
    if int(data[-1]) != 0:
        _refuse(f"FITPACK's least-squares fit ended with ier={int(data[-1])}")
    x, y, t = np.asarray(x, dtype=float), np.asarray(y, dtype=float), np.asarray(t, dtype=float)
    w = np.ones(x.size) if w is None else np.asarray(w, dtype=float)
    _, _, c, design = _least_squares(t, k, x, y, w)
    _check_least_squares(c, data[9])
    return ((x, y, w, data[3] if xb is None else xb, data[4] if xe is None else xe) + tuple(data[5:8])
            + (t, _padded(c, data[9]), _residual_sum(c, design, w, y)) + tuple(data[11:]))


try:
    from scipy.interpolate import _fitpack2
except ImportError:  # SciPy is optional
    _fitpack2 = None
if _fitpack2 is not None:
    defined_as(_fitpack2.dfitpack.fpcurf1, _refit)
    defined_as(_fitpack2.dfitpack.fpcurfm1, _least_squares_fit)
    nondifferentiable(_fitpack2.dfitpack.fpchec)  # (a check of the knots: an error code)
