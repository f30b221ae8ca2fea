"""``scipy.interpolate``'s piecewise polynomials (rules/scipy_interpolate.py): the NumPy definition
of ``_ppoly.evaluate`` gives SciPy's values (intervals, knots, ends, extrapolation, NaN, descending
breakpoints), and splines built and evaluated inside a function are differentiated in every mode
with respect to the data and the points, against central differences."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import Akima1DInterpolator, CubicSpline, PchipInterpolator, _ppoly

import yuebing as yb
from tests.all_modes import check_all_modes
from yuebing.rules.scipy_interpolate import _evaluate


def test_the_definition_gives_scipys_values():
    rng = np.random.default_rng(1)
    for _ in range(200):
        k, m, n = rng.integers(1, 5), rng.integers(1, 5), rng.integers(1, 3)
        c = rng.standard_normal((k, m, n))
        x = np.sort(rng.choice(np.arange(0.0, 10.0, 0.5), m + 1, replace=False))
        if rng.random() < 0.3:
            x = x[::-1].copy()
        xp = np.concatenate([rng.uniform(x.min() - 1, x.max() + 1, 5), x, [np.nan]])
        dx, extrapolate = int(rng.integers(0, 3)), bool(rng.integers(0, 2))
        expected, got = np.zeros((len(xp), n)), np.zeros((len(xp), n))
        _ppoly.evaluate(c, x, xp, dx, extrapolate, expected)
        _evaluate(c, x, xp, dx, extrapolate, got)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, equal_nan=True)


KNOTS = np.array([0.0, 0.7, 1.5, 2.2, 3.0])
POINTS = np.array([0.2, 1.1, 1.9, 2.6, 3.3])  # off the knots; the last one extrapolated


def _through(kind, y, points):
    return kind(KNOTS, y)(points)


@pytest.mark.parametrize("kind", [CubicSpline, PchipInterpolator, Akima1DInterpolator])
def test_a_spline_through_data_in_every_mode(kind):
    y0 = np.array([0.3, -0.2, 0.9, 0.4, 0.1])
    if kind is Akima1DInterpolator:  # it does not extrapolate by default: stay inside
        points = POINTS[:4]
    else:
        points = POINTS
    check_all_modes(lambda y: np.sum(_through(kind, y, points) ** 2), y0)


def test_derivatives_of_the_spline_with_respect_to_the_points():
    y0 = np.array([0.3, -0.2, 0.9, 0.4, 0.1])
    spline = CubicSpline(KNOTS, y0, bc_type="natural")

    def f(t):
        return np.sum(spline(t) * spline(t, 1)) + np.sum(spline(t, 2))

    check_all_modes(f, POINTS.copy())


def test_a_spline_of_the_knots_themselves():
    def f(shift):
        knots = KNOTS * (1.0 + shift)
        return np.sum(CubicSpline(knots, np.sin(knots))(POINTS[:4]))

    check_all_modes(f, 0.1)


def test_interp1d_linear_in_every_mode():
    """interp1d asks numpy.ma whether its data are masked: the question has no derivative."""
    from scipy.interpolate import interp1d

    check_all_modes(lambda y: np.sum(interp1d(KNOTS, y)(POINTS[:4]) ** 2), np.array([0.3, -0.2, 0.9, 0.4, 0.1]))
    check_all_modes(lambda t: np.sum(interp1d(KNOTS, np.cos(KNOTS))(t) * t), POINTS[:4].copy())
