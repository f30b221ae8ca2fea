"""``scipy.interpolate``'s B-splines: ``make_interp_spline`` and the evaluation of a ``BSpline``
written in NumPy, so a spline is differentiated in every mode with respect to the data ``y``, the
abscissae ``x`` (and the knots made from them), given knots ``t`` and the points it is evaluated
at.

SciPy builds the collocation matrix in C (``_dierckx._coloc``), solves it with LAPACK's ``gbsv``
and evaluates with ``_dierckx.evaluate_spline``. Here:

* ``_dierckx.evaluate_spline(t, c, k, x, nu, extrapolate)`` is ``defined_as`` ``_evaluate``: each
  point's knot interval is the one SciPy's ``find_interval`` picks (``t[l] <= x < t[l+1]``, the
  last interval closed, the end intervals when extrapolating, else NaN), and its value is
  ``sum_r B_{l-k+r}(x) c[l-k+r]`` with the ``nu``-th derivatives of the ``k + 1`` B-splines not zero
  there (``_basis``: the Cox-de Boor recursion, then the derivative recursion ``nu`` times), all
  NumPy, differentiable in ``t``, ``c`` and ``x``. ``BSpline.__call__``, ``derivative`` (SciPy's
  Python ``splder``) and ``BSpline(t, c, k)`` built by hand follow.
* ``make_interp_spline(x, y, k, t, bc_type, axis)`` is ``defined_as`` ``_make_interp_spline``: the
  same knots (not-a-knot, or the data with ``k`` repeated ends when derivatives are given), the
  banded collocation matrix from ``_basis`` (with the boundary derivative rows), solved by
  ``scipy.linalg.solve_banded`` (whose rule is differentiable in the matrix and the right-hand side),
  and a ``BSpline``. SciPy's own function runs first on the values, for its errors.

``bc_type="periodic"`` is refused by name (``RuleArgumentError``): use ``CubicSpline(x, y,
bc_type="periodic")``. The interval is piecewise constant in the points: at a knot the derivative
is that of the interval SciPy evaluates. Third order goes through ``solve_banded``'s (refused
inside ``yb.grad`` under ``yb.hessian``, as for ``solve_banded`` itself).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .array_like import takes_sequences
from .cases import Case
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as

try:
    import scipy.linalg as sla
    from scipy.interpolate import BSpline, _bsplines, _dierckx
except ImportError:  # pragma: no cover - SciPy is optional
    _dierckx = None


def _intervals(t: Any, k: int, x: Any, extrapolate: Any) -> np.ndarray:
    """Each point's knot interval ``l`` (``k <= l < n``) as SciPy's ``find_interval`` gives it; -1
    for NaN and, without extrapolation, for points outside ``[t[k], t[n]]``."""
    t, x = np.asarray(t, dtype=float), np.asarray(x, dtype=float)
    n = t.size - k - 1
    found = np.clip(np.searchsorted(t, x, side="right") - 1, k, n - 1)
    outside = (x < t[k]) | (x > t[n])
    return np.where(np.isnan(x) | (outside & (not extrapolate)), -1, found)


def _refuse_periodic(bc_type: Any) -> None:
    if isinstance(bc_type, str) and bc_type == "periodic":
        raise RuleArgumentError("scipy.interpolate.make_interp_spline(..., bc_type='periodic'): yuebing does not "
                                "differentiate periodic B-splines yet; use scipy.interpolate.CubicSpline(x, y, "
                                "bc_type='periodic'), which it differentiates")


def _boundary_orders(bc_type: Any, trailing: tuple) -> tuple:
    """SciPy's reading of ``bc_type``: the left and right boundary conditions as lists of
    ``(order, value)`` (string aliases made explicit), or None."""
    if bc_type is None or (isinstance(bc_type, str) and bc_type == "not-a-knot"):
        return None, None
    left, right = (bc_type, bc_type) if isinstance(bc_type, str) else bc_type
    return (_bsplines._convert_string_aliases(left, trailing), _bsplines._convert_string_aliases(right, trailing))


nondifferentiable(_intervals, _refuse_periodic)


def _basis(t: Any, k: int, x: Any, interval: Any, nu: int) -> list:
    """The ``nu``-th derivatives at ``x`` of the ``k + 1`` B-splines of degree ``k`` not zero on each
    point's interval ``l``: entry ``r`` is ``B_{l-k+r}``. Cox-de Boor for degree ``k - nu``, then
    ``B'_{i,p} = p (B_{i,p-1}/(t_{i+p} - t_i) - B_{i+1,p-1}/(t_{i+p+1} - t_{i+1}))`` ``nu`` times (the
    terms whose denominator could vanish are those of B-splines zero there: left out)."""
    if nu > k:
        return [0.0 * x for _ in range(k + 1)]
    values = [1.0 + 0.0 * x]
    for j in range(1, k - nu + 1):
        saved = 0.0 * x
        raised = []
        for r in range(j):
            right = t[interval + r + 1] - x
            left = x - t[interval + r + 1 - j]
            ratio = values[r] / (right + left)
            raised.append(saved + right * ratio)
            saved = left * ratio
        raised.append(saved)
        values = raised
    for p in range(k - nu + 1, k + 1):
        differentiated = []
        for r in range(p + 1):
            term = 0.0 * x
            if r >= 1:
                term = term + values[r - 1] / (t[interval + r] - t[interval - p + r])
            if r < p:
                term = term - values[r] / (t[interval + r + 1] - t[interval - p + r + 1])
            differentiated.append(p * term)
        values = differentiated
    return values


def _evaluate(t, c, k, x, nu, extrapolate):
    """``_dierckx.evaluate_spline``: ``out[p] = sum_r B^(nu)_{l-k+r}(x[p]) c[l-k+r]`` on the point's
    interval ``l``, NaN where it has none. ``c`` has shape ``(n, m)``."""
    interval = _intervals(t, k, x, extrapolate)
    found = interval >= 0
    safe = np.where(found, interval, k)
    basis = _basis(t, k, x, safe, nu)
    value = 0.0 * c[safe - k, :]
    for r, b in enumerate(basis):
        value = value + b[:, None] * c[safe - k + r, :]
    return np.where(found[:, None], value, np.nan)


def _not_a_knot(x, k):
    """SciPy's ``_not_a_knot``, in NumPy (differentiable in ``x``)."""
    inner = x if k % 2 == 1 else (x[1:] + x[:-1]) / 2
    half = (k + 1) // 2 if k % 2 == 1 else k // 2
    return np.concatenate([np.repeat(x[:1], k + 1), inner[half:inner.size - half], np.repeat(x[-1:], k + 1)])


def _augmented_knots(x, k):
    """SciPy's ``_augknt``: the data with its ends repeated ``k`` more times."""
    return np.concatenate([np.repeat(x[:1], k), x, np.repeat(x[-1:], k)])


def _derivative_rows(spec):
    """The orders and values of ``(order, value)`` boundary conditions (none: empty)."""
    if spec is None:
        return [], []
    return [int(order) for order, _ in spec], [np.asarray(value, dtype=float) for _, value in spec]


def _make_interp_spline(x, y, k=3, t=None, bc_type=None, axis=0, check_finite=True):
    """``make_interp_spline``: the interpolating B-spline, its coefficients the solution of the
    collocation system (``solve_banded``), every step NumPy."""
    _refuse_periodic(bc_type)
    x = np.asarray(x, dtype=float)
    y = np.moveaxis(np.asarray(y), axis, 0)
    y = y.astype(np.result_type(y.dtype, float))
    trailing = y.shape[1:]
    if k == 0 or (k == 1 and t is None):
        knots = np.concatenate([x, x[-1:]]) if k == 0 else np.concatenate([x[:1], x, x[-1:]])
        return BSpline(knots, np.moveaxis(y, 0, axis), k, axis=axis)
    left_spec, right_spec = _boundary_orders(bc_type, trailing)
    left_orders, left_values = _derivative_rows(left_spec)
    right_orders, right_values = _derivative_rows(right_spec)
    if t is None:
        t = _not_a_knot(x, k) if left_spec is None and right_spec is None else _augmented_knots(x, k)
    t = np.asarray(t, dtype=float)
    count = t.size - k - 1
    rows, columns, entries = [], [], []

    def add_rows(first_row, points, nu):
        interval = _intervals(t, k, points, False)
        for r, b in enumerate(_basis(t, k, points, interval, nu)):
            rows.append(first_row + np.arange(points.size))
            columns.append(interval - k + r)
            entries.append(b)

    for i, nu in enumerate(left_orders):
        add_rows(i, x[:1], nu)
    add_rows(len(left_orders), x, 0)
    for i, nu in enumerate(right_orders):
        add_rows(count - len(right_orders) + i, x[-1:], nu)
    rows, columns = np.concatenate(rows), np.concatenate(columns)
    band = np.zeros((2 * k + 1, count))
    band[k + rows - columns, columns] = np.concatenate(entries)
    width = int(np.prod(trailing))
    pieces = [np.reshape(v, (1, width)) for v in left_values] + [np.reshape(y, (x.size, width))]
    pieces += [np.reshape(v, (1, width)) for v in right_values]
    coefficients = sla.solve_banded((k, k), band, np.concatenate(pieces, axis=0))
    # BSpline(...) takes the coefficients with the interpolation axis at ``axis``
    return BSpline(t, np.moveaxis(np.reshape(coefficients, (count,) + trailing), 0, axis), k, axis=axis)


def _derivative(self, nu=1):
    """``BSpline.derivative``: SciPy's ``splder`` (``c_i <- k (c_{i+1} - c_i) / (t_{i+k+1} - t_{i+1})``,
    one knot fewer at each end) ``nu`` times, as a new ``BSpline`` (SciPy's ``construct_fast``
    makes it with ``object.__new__``, which yuebing does not follow)."""
    t, c, k = self.t, self.c, self.k
    if nu > k:
        raise ValueError(f"Order of derivative (n = {nu!r}) must be <= order of spline (k = {k!r})")
    c = c[:t.size - k - 1]
    for _ in range(nu):
        step = np.reshape(t[k + 1:-1] - t[1:-k - 1], (-1,) + (1,) * (c.ndim - 1))[:c.shape[0] - 1]
        c = (c[1:] - c[:-1]) * k / step
        t = t[1:-1]
        k -= 1
    return BSpline(t, np.moveaxis(c, 0, self.axis), k, extrapolate=self.extrapolate, axis=self.axis)


if _dierckx is not None:
    defined_as(_dierckx.evaluate_spline, _evaluate)
    defined_as(_bsplines.make_interp_spline, _make_interp_spline, validate=True)
    defined_as(BSpline.derivative, _derivative)
    takes_sequences(_bsplines.make_interp_spline)  # bc_type's pairs stay pairs, not one array


def _cases() -> list:
    if _dierckx is None:
        return []
    rng = np.random.default_rng(11)
    t = np.array([0.0, 0.0, 0.0, 0.0, 0.8, 1.5, 2.0, 3.0, 3.0, 3.0, 3.0])
    c = rng.standard_normal((7, 2))
    points = np.array([0.3, 1.1, 1.7, 2.6, -0.4, 3.3])
    return [
        *[Case(_dierckx.evaluate_spline, t, c, 3, points, nu, True, name=f"evaluate_spline(nu={nu})")
          for nu in (0, 1, 2, 4)],
        Case(_dierckx.evaluate_spline, t, c, 3, points[:4], 0, False, name="evaluate_spline(no extrapolation)"),
        # make_interp_spline and BSpline.derivative return a BSpline, which SciPy makes with
        # object.__new__ (attributes in another order than BSpline(...) gives): they are checked
        # through its values in every mode in tests/test_scipy_bsplines.py
    ]


CASES = _cases()
