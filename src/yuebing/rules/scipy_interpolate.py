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

``griddata`` (``method`` 'linear' and 'nearest', ``rescale`` too) is defined in NumPy: a
point's value is the barycentric combination of its simplex's values in SciPy's Delaunay
triangulation (the simplex held fixed: piecewise linear in the points, and differentiable in the
values and the data sites), or the nearest site's value; in one dimension it is SciPy's
``interp1d`` of the sorted sites ('cubic' too). ``RBFInterpolator``'s Pythran kernels and
LAPACK solve are defined as SciPy's own array-API form of them (NumPy code and
``np.linalg.solve``). FITPACK's ``UnivariateSpline`` fit with ``s=0`` is the not-a-knot
interpolating spline on FITPACK's knots (``make_interp_spline``'s definition), evaluated by
``splev``/``splder`` defined with ``scipy_bsplines._evaluate``; its other fits (``s > 0``, a
``bbox``) are ``scipy_smoothing_spline``'s.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .array_like import takes_sequences
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


# --------------------------------------------------------------------------------------------
# griddata: 'linear' is piecewise linear (barycentric weights in the simplex SciPy's Delaunay
# triangulation finds, held fixed), 'nearest' selects a value (the nearest site, held fixed)
# --------------------------------------------------------------------------------------------


def _coordinates(p: Any) -> Any:
    """``_ndim_coords_from_arrays``: a tuple of coordinate arrays broadcast and stacked last."""
    if isinstance(p, tuple):
        shape = np.broadcast_shapes(*(np.shape(a) for a in p))
        return np.stack([np.broadcast_to(np.asarray(a, dtype=float), shape) for a in p], axis=-1)
    return np.asarray(p, dtype=float)


def _enclosing_simplices(points: np.ndarray, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of each point's simplex in SciPy's Delaunay triangulation of ``points`` (as
    ``LinearNDInterpolator`` finds it), and whether there is one (outside the hull: none)."""
    from scipy.spatial import Delaunay

    simplex = Delaunay(points).find_simplex(xi)
    inside = simplex >= 0
    return Delaunay(points).simplices[np.where(inside, simplex, 0)], inside


def _nearest_sites(points: np.ndarray, xi: np.ndarray) -> np.ndarray:
    from scipy.spatial import cKDTree

    return cKDTree(points).query(xi)[1]


def _barycentric(points, values, xi, fill_value):
    """Each point's value linearly interpolated in its simplex: the weights ``c`` solve
    ``sum_k c_k (v_k - v_last) = x - v_last`` and the last is ``1 - sum c``."""
    vertices, inside = _enclosing_simplices(points, xi)
    corners = points[vertices]  # (m, ndim + 1, ndim)
    edges = np.swapaxes(corners[:, :-1, :] - corners[:, -1:, :], 1, 2)
    c = np.linalg.solve(edges, (xi - corners[:, -1, :])[..., None])[..., 0]
    weights = np.concatenate([c, 1.0 - np.sum(c, axis=1, keepdims=True)], axis=1)
    vals = values[vertices]  # (m, ndim + 1, ...)
    weights = np.reshape(weights, weights.shape + (1,) * (vals.ndim - 2))
    found = np.reshape(inside, inside.shape + (1,) * (vals.ndim - 2))
    return np.where(found, np.sum(weights * vals, axis=1), fill_value)


def _rescaled(points, xi):
    """``rescale=True``: both point sets moved by the sites' mean and divided by their extent per
    axis (1 where it is 0), as SciPy's interpolators rescale before triangulating."""
    offset = np.mean(points, axis=0)
    extent = np.max(points, axis=0) - np.min(points, axis=0)
    scale = np.where(extent > 0, extent, 1.0)
    return (points - offset) / scale, (xi - offset) / scale


def _griddata_1d(points, values, xi, method, fill_value):
    """One-dimensional ``griddata``: ``interp1d`` of the sites in order (``'nearest'``
    extrapolating), as SciPy does it."""
    from scipy.interpolate import interp1d

    points = np.ravel(points)
    if isinstance(xi, tuple):
        if len(xi) != 1:
            raise ValueError("invalid number of dimensions in xi")
        xi = xi[0]
    order = np.argsort(points)
    fill = "extrapolate" if method == "nearest" else fill_value
    return interp1d(points[order], np.asarray(values)[order], kind=method, axis=0, bounds_error=False,
                    fill_value=fill)(xi)


def _griddata(points, values, xi, method="linear", fill_value=np.nan, rescale=False):
    """``scipy.interpolate.griddata``: ``method`` 'linear' and 'nearest' in two or more dimensions
    (differentiable in the values, the points ``xi`` and, linear, the data sites; ``rescale``
    too), and 'linear', 'nearest' and 'cubic' in one (``interp1d``)."""
    points = _coordinates(points)
    ndim = points.shape[-1] if points.ndim >= 2 else points.ndim
    if ndim == 1 and method in ("linear", "nearest", "cubic"):
        return _griddata_1d(points, values, xi, method, fill_value)
    if method not in ("linear", "nearest"):
        raise RuleArgumentError(
            f"scipy.interpolate.griddata: yuebing differentiates method='linear' and 'nearest' (and 'cubic' in one "
            f"dimension), not method={method!r} in {ndim} dimensions; use method='linear', or "
            "scipy.interpolate.RBFInterpolator(points, values, kernel='cubic')(xi) for a smooth interpolant")
    values = np.asarray(values)
    xi = _coordinates(xi)
    flat = np.reshape(xi, (-1, ndim))
    if rescale:
        points, flat = _rescaled(points, flat)
    if method == "nearest":
        out = values[_nearest_sites(points, flat)]
    else:
        out = _barycentric(points, values, flat, fill_value)
    return np.reshape(out, xi.shape[:-1] + values.shape[1:])


def _rbf_system(y, d, smoothing, kernel, epsilon, powers, xp):
    """``RBFInterpolator``'s coefficients: SciPy's array-API form (NumPy code and a linear solve)
    of its Pythran kernels and LAPACK solve; a kernel's value at distance 0 (``r**2 * log(r)``
    under ``where``) computes an unused NaN: its warnings are silenced, as the Pythran code is."""
    from scipy.interpolate import _rbfinterp_xp

    with np.errstate(divide="ignore", invalid="ignore"):
        return _rbfinterp_xp._build_and_solve_system(y, d, smoothing, kernel, epsilon, powers, xp)


def _rbf_values(x, y, kernel, epsilon, powers, shift, scale, coeffs, xp):
    """``RBFInterpolator``'s values at ``x``, in SciPy's array-API form (see ``_rbf_system``)."""
    from scipy.interpolate import _rbfinterp_xp

    with np.errstate(divide="ignore", invalid="ignore"):
        return _rbfinterp_xp.compute_interpolation(x, y, kernel, epsilon, powers, shift, scale, coeffs, xp)


def _fitpack_fit(x, y, k, w, xb, xe, s, nest):
    """FITPACK's own fit on the values (its knots, sizes and flags)."""
    from scipy.interpolate import _fitpack2

    keywords = {name: v for name, v in (("w", w), ("xb", xb), ("xe", xe), ("s", s), ("nest", nest)) if v is not None}
    return _fitpack2.dfitpack.fpcurf0(x, y, k, **keywords)


def _univariate_spline_fit(x, y, k, w=None, xb=None, xe=None, s=None, nest=None):
    """FITPACK's ``fpcurf0`` (``UnivariateSpline``, ``InterpolatedUnivariateSpline``). With
    ``s=0`` and the data's own bounds it interpolates at knots FITPACK places at the data (odd
    ``k``) or their midpoints (even ``k``): the not-a-knot spline ``make_interp_spline`` makes on
    those knots, differentiated in ``x`` and ``y``; its arrays padded as FITPACK pads them. Any
    other fit (``s > 0``, ``s=None``, a ``bbox``) is ``scipy_smoothing_spline.spline_fit`` on
    FITPACK's knots (``fitted_data``)."""
    from .scipy_bsplines import _not_a_knot
    from .scipy_smoothing_spline import fitted_data

    data = _fitpack_fit(x, y, k, w, xb, xe, s, nest)
    x_, y_ = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if data[6] != 0 or data[3] != x_[0] or data[4] != x_[-1]:
        return fitted_data(x_, y_, k, w, xb, xe, s, data)
    from scipy.interpolate import make_interp_spline

    spline = make_interp_spline(x_, y_, k=k, t=_not_a_knot(x_, k))
    nest_size = data[8].size
    t = np.concatenate([spline.t, np.zeros(nest_size - spline.t.size)])
    c = np.concatenate([spline.c, np.zeros(nest_size - spline.c.size)])
    return (x_, y_) + tuple(data[2:8]) + (t, c) + tuple(data[10:])


def _splder(t, c, k, x, nu=0, e=0):
    """FITPACK's ``splder`` (``splev`` for ``nu=0``): the B-spline of knots ``t`` and the first
    ``len(t) - k - 1`` coefficients, with its outside modes (``e``: 0 extrapolate, 1 zero, 2
    refuse: ``ier=1``, 3 the boundary value)."""
    from .scipy_bsplines import _evaluate as _bspline_values

    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    n = t.size
    low, high = t[k], t[n - k - 1]
    outside = (x < low) | (x > high)
    if e == 2 and bool(np.any(outside)):
        return np.zeros_like(x), 1
    at = np.clip(x, low, high) if e == 3 else x
    y = _bspline_values(t, np.reshape(c[:n - k - 1], (-1, 1)), k, at, nu, True)[:, 0]
    return (np.where(outside, 0.0, y) if e == 1 else y), 0


def _splev(t, c, k, x, e=0):
    return _splder(t, c, k, x, 0, e)


def _splev_of_tck(x, tck, der=0, ext=0):
    """``scipy.interpolate.splev`` (``UnivariateSpline.__call__``): SciPy's checks, then ``_splder``;
    a parametric spline (a list of coefficient arrays) coordinate by coordinate."""
    t, c, k = tck
    if isinstance(c, (list, tuple)) or np.ndim(c) > 1:
        return [_splev_of_tck(x, (t, part, k), der, ext) for part in c]
    if not 0 <= der <= k or ext not in (0, 1, 2, 3):
        raise ValueError(f"0<=der={der}<=k={k} and ext={ext} in (0, 1, 2, 3) must hold")
    x = np.asarray(x)
    y, ier = _splder(t, c, k, np.ravel(x), der, ext)
    if ier == 1:
        raise ValueError("Found x value not in the domain")
    return np.reshape(y, x.shape)


def _splint(t, c, k, a, b):
    """FITPACK's ``splint`` (``UnivariateSpline.integral``): the integral from ``a`` to ``b`` of the
    B-spline of knots ``t`` and its first ``m = len(t) - k - 1`` coefficients, zero outside
    ``[t[k], t[m]]``, and ``wrk``, the integral of each B-spline (FITPACK's array has ``len(t)``
    entries: the last ``k + 1`` are zero here). The antiderivative of B-spline ``j`` is
    ``(t[j+k+1] - t[j]) / (k+1)`` times the sum of the degree ``k + 1`` B-splines after ``j`` on the
    knots with each end repeated once more."""
    from .scipy_bsplines import _evaluate as _bspline_values

    t = np.asarray(t, dtype=float)
    m = t.size - k - 1
    ends = np.clip(np.array([a, b], dtype=float), t[k], t[m])
    steps = np.tril(np.ones((m + 1, m)), -1) * ((t[k + 1:] - t[:m]) / (k + 1))
    antiderivatives = _bspline_values(np.concatenate([t[:1], t, t[-1:]]), steps, k + 1, ends, 0, True)
    wrk = antiderivatives[1] - antiderivatives[0]
    return wrk @ np.asarray(c, dtype=float)[:m], np.concatenate([wrk, np.zeros(k + 1)])


if _ppoly is not None:
    defined_as(_ppoly.evaluate, _evaluate)
    defined_as(_ppoly.integrate, _integrate)
    defined_as(_ppoly.fix_continuity, _fix_continuity)
    defined_as(PPoly.construct_fast.__func__, _construct_fast)
    from scipy.interpolate import _ndgriddata, _rbfinterp_np

    nondifferentiable(_enclosing_simplices, _nearest_sites)
    defined_as(_ndgriddata.griddata, _griddata)
    takes_sequences(_ndgriddata.griddata)  # (a tuple of coordinate arrays is points or xi, as SciPy reads it)
    from scipy.interpolate import _fitpack2

    defined_as(_fitpack2.dfitpack.fpcurf0, _univariate_spline_fit)
    defined_as(_fitpack2.dfitpack.splev, _splev)
    defined_as(_fitpack2.dfitpack.splder, _splder)
    defined_as(_fitpack2.dfitpack.splint, _splint)
    from scipy.interpolate import _fitpack_impl

    defined_as(_fitpack_impl.splev, _splev_of_tck)  # (its test c[0][0] indexes a float)
    nondifferentiable(_fitpack_fit)
    # RBFInterpolator: SciPy's array-API form of its system and evaluation (NumPy code) for the
    # Pythran kernels and the LAPACK solve of its NumPy form
    defined_as(_rbfinterp_np._build_and_solve_system, _rbf_system)
    defined_as(_rbfinterp_np.compute_interpolation, _rbf_values)


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
