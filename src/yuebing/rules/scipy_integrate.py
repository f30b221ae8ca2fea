"""``scipy.integrate``'s rules for sampled data: ``trapezoid``, ``simpson`` and
``cumulative_trapezoid``, each differentiated in ``y``, the sample points ``x`` (1-D, or shaped like
``y``), the spacing ``dx``, along any ``axis`` (and ``initial=0`` for the cumulative one).

SciPy's own code cannot be derived (a ``try``/``except`` around the sum, the array-API dispatch,
``where=`` divisions), so each is declared (``defined_as``) to be the same computation written in
plain NumPy below, which every mode (reverse, forward, second and third order) differentiates like
user code. SciPy itself runs first on the primals (``validate``), so bad arguments raise SciPy's
errors. Values agree with SciPy's to rounding; simpson's divisions by a zero spacing give 0 as
SciPy's ``where=`` divisions do, and so do their derivatives.

``quad`` and the ODE solvers call back into differentiation of the user's function: they are in
``api/quad.py`` and ``api/ode.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randn, randpos
from .second_order import defined_as

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed: no rules to register
    _integrate = None


def _along(nd: int, axis: int, index: Any) -> tuple:
    """The index tuple taking ``index`` along ``axis`` and everything elsewhere."""
    key = [slice(None)] * nd
    key[axis] = index
    return tuple(key)


def _sample_points(y: np.ndarray, x: Any, axis: int) -> Any:
    """``x`` as an array that broadcasts against ``y`` along ``axis`` (a 1-D ``x`` stood on it)."""
    x = np.asarray(x)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[axis] = x.shape[0]
        return np.reshape(x, tuple(shape))
    return x


def _safe_divide(a: Any, b: Any) -> Any:
    """``a / b``, and 0 where ``b == 0`` (SciPy's ``true_divide(..., where=b != 0)`` into zeros)."""
    nonzero = b != 0
    return np.where(nonzero, a / np.where(nonzero, b, 1.0), 0.0)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """``scipy.integrate.trapezoid``: an ``x`` of ``y``'s rank is broadcast to ``y`` first."""
    y = np.asarray(y)
    if x is None:
        return np.trapezoid(y, dx=dx, axis=axis)
    x = np.asarray(x)
    if x.ndim > 1:
        x = np.broadcast_to(x, y.shape)
    return np.trapezoid(y, x=x, axis=axis)  # dx is not used (NumPy's rule would see it unused)


def cumulative_trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1, initial: Any = None) -> Any:
    """``scipy.integrate.cumulative_trapezoid`` (``initial`` is None or 0, as SciPy checks)."""
    y = np.asarray(y)
    axis = axis % y.ndim
    if x is None:
        d = dx
    else:
        d = np.diff(_sample_points(y, x, axis), axis=axis)
    upper = y[_along(y.ndim, axis, slice(1, None))]
    lower = y[_along(y.ndim, axis, slice(None, -1))]
    result = np.cumsum(d * (upper + lower) / 2.0, axis=axis)
    if initial is None:
        return result
    shape = list(result.shape)
    shape[axis] = 1
    first = np.zeros(tuple(shape), dtype=result.dtype) + initial  # SciPy allows only 0; its derivative is 1
    return np.concatenate((first, result), axis=axis)


def _basic_simpson(y: np.ndarray, stop: int, x: Any, dx: Any, axis: int) -> Any:
    """Simpson's 1/3 rule over the intervals ``[0, stop)`` in pairs (SciPy's ``_basic_simpson``)."""
    nd = y.ndim
    first = _along(nd, axis, slice(0, stop, 2))
    middle = _along(nd, axis, slice(1, stop + 1, 2))
    last = _along(nd, axis, slice(2, stop + 2, 2))
    if x is None:
        return np.sum(y[first] + 4.0 * y[middle] + y[last], axis=axis) * (dx / 3.0)
    h = np.diff(x, axis=axis)
    h0 = h[first]
    h1 = h[middle]
    hsum = h0 + h1
    hprod = h0 * h1
    h0_over_h1 = _safe_divide(h0, h1)
    weighted = (y[first] * (2.0 - _safe_divide(1.0, h0_over_h1)) + y[middle] * (hsum * _safe_divide(hsum, hprod))
                + y[last] * (2.0 - h0_over_h1))
    return np.sum(hsum / 6.0 * weighted, axis=axis)


def _last_interval(y: np.ndarray, x: Any, dx: Any, axis: int) -> Any:
    """Cartwright's correction for the last interval of an even number of samples (SciPy's)."""
    nd = y.ndim
    if x is None:
        h0 = dx
        h1 = dx
    else:
        h = np.diff(x, axis=axis)
        h0 = np.squeeze(h[_along(nd, axis, slice(-2, -1))], axis=axis)
        h1 = np.squeeze(h[_along(nd, axis, slice(-1, None))], axis=axis)
    alpha = _safe_divide(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _safe_divide(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _safe_divide(1 * h1 ** 3, 6 * h0 * (h0 + h1))
    return alpha * y[_along(nd, axis, -1)] + beta * y[_along(nd, axis, -2)] - eta * y[_along(nd, axis, -3)]


def simpson(y: Any, x: Any = None, *, dx: Any = 1.0, axis: int = -1) -> Any:
    """``scipy.integrate.simpson``: composite Simpson's rule; with an even number of samples,
    Simpson on all but the last interval plus Cartwright's correction (the trapezoid for 2)."""
    y = np.asarray(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    if x is not None:
        x = _sample_points(y, x, axis)
    if n % 2 == 1:
        return _basic_simpson(y, n - 2, x, dx, axis)
    if n == 2:
        upper = y[_along(y.ndim, axis, -1)]
        lower = y[_along(y.ndim, axis, -2)]
        width = dx if x is None else x[_along(y.ndim, axis, -1)] - x[_along(y.ndim, axis, -2)]
        return 0.0 + 0.5 * width * (upper + lower)
    return _basic_simpson(y, n - 3, x, dx, axis) + _last_interval(y, x, dx, axis) + 0.0


if _integrate is not None:
    defined_as(_integrate.trapezoid, trapezoid, validate=True)
    defined_as(_integrate.cumulative_trapezoid, cumulative_trapezoid, validate=True)
    defined_as(_integrate.simpson, simpson, validate=True)


def _sorted_points(n: int) -> np.ndarray:
    return np.cumsum(randpos(n))


CASES = [] if _integrate is None else [
    Case(_integrate.trapezoid, randn(7), name="trapezoid(y)"),
    Case(_integrate.trapezoid, randn(7), _sorted_points(7), name="trapezoid(y, x)"),
    Case(_integrate.trapezoid, randn(3, 5), _sorted_points(5), name="trapezoid(y 2-D, x 1-D)"),
    Case(_integrate.trapezoid, randn(4, 3), randn(4, 3), kwargs={"axis": 0}, name="trapezoid(y, x same shape, axis=0)"),
    Case(_integrate.trapezoid, randn(4, 3), randn(1, 3), kwargs={"axis": 0}, name="trapezoid(x broadcast to y)"),
    Case(lambda y, dx: _integrate.trapezoid(y, dx=dx), randn(6), randpos(), name="trapezoid(y, dx=)"),
    Case(_integrate.cumulative_trapezoid, randn(6), name="cumulative_trapezoid(y)"),
    Case(_integrate.cumulative_trapezoid, randn(6), _sorted_points(6), name="cumulative_trapezoid(y, x)"),
    Case(_integrate.cumulative_trapezoid, randn(3, 4), randn(3, 4), kwargs={"axis": 0, "initial": 0},
         name="cumulative_trapezoid(y, x 2-D, axis=0, initial=0)"),
    Case(lambda y, dx: _integrate.cumulative_trapezoid(y, dx=dx, initial=0.0), randn(2, 5), randpos(),
         name="cumulative_trapezoid(y, dx=, initial=0)"),
    Case(_integrate.simpson, randn(7), name="simpson(y) odd"),
    Case(_integrate.simpson, randn(6), _sorted_points(6), name="simpson(y, x) even (Cartwright)"),
    Case(_integrate.simpson, randn(7), _sorted_points(7), name="simpson(y, x) odd, uneven spacing"),
    Case(_integrate.simpson, randn(2), _sorted_points(2), name="simpson(y, x) two samples"),
    Case(_integrate.simpson, randn(3, 6), randn(3, 6) + np.arange(6.0) * 3, kwargs={"axis": 1},
         name="simpson(y, x 2-D, axis=1)"),
    Case(lambda y, dx: _integrate.simpson(y, dx=dx, axis=0), randn(6, 2), randpos(), name="simpson(y, dx=, axis=0) even"),
]
