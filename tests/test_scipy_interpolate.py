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
from yuebing.rules.scipy_interpolate import _evaluate, _fix_continuity, _integrate


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


def test_integrate_and_fix_continuity_give_scipys_values():
    """The NumPy definitions of ``_ppoly.integrate`` and ``_ppoly.fix_continuity``, on random
    piecewise polynomials (ascending and descending breakpoints, bounds inside and outside)."""
    rng = np.random.default_rng(2)
    for _ in range(200):
        k, m, n = int(rng.integers(2, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 3))
        c = rng.standard_normal((k, m, n))
        x = np.sort(rng.choice(np.arange(0.0, 10.0, 0.5), m + 1, replace=False))
        if rng.random() < 0.3:
            x = x[::-1].copy()
        a, b = np.sort(rng.uniform(x.min() - 1, x.max() + 1, 2))
        extrapolate = bool(rng.integers(0, 2))
        expected, got = np.zeros(n), np.zeros(n)
        _ppoly.integrate(c, x, a, b, extrapolate, expected)
        _integrate(c, x, a, b, extrapolate, got)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11, equal_nan=True)
        order = int(rng.integers(0, k - 1))
        expected, got = c.copy(), c.copy()
        _ppoly.fix_continuity(expected, x, order)
        _fix_continuity(got, x, order)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11)


@pytest.mark.slow  # (over 2 s on a loaded machine: the CI's slow step; _ppoly.integrate's rule cases run by default)
def test_the_integral_of_a_spline_in_every_mode():
    """``CubicSpline(...).integrate(a, b)`` with respect to the data, and to the bounds (reversed
    bounds and extrapolation included)."""
    y0 = np.array([0.3, -0.2, 0.9, 0.4, 0.1])
    check_all_modes(lambda y: CubicSpline(KNOTS, y).integrate(0.2, 2.6) ** 2, y0)
    check_all_modes(lambda y: CubicSpline(KNOTS, y, bc_type="natural").integrate(2.9, 0.4), y0)
    spline = CubicSpline(KNOTS, y0)
    check_all_modes(lambda t: spline.integrate(t[0], t[1]) * t[0], np.array([0.3, 2.6]))
    check_all_modes(lambda t: spline.integrate(t[1], t[0]) + spline.integrate(-0.3, t[1]), np.array([-0.5, 3.4]))


@pytest.mark.slow  # (over 2 s on a loaded machine: the CI's slow step)
def test_antiderivative_and_derivative_of_a_spline_in_every_mode():
    y0 = np.array([0.3, -0.2, 0.9, 0.4, 0.1])

    def f(y):
        spline = CubicSpline(KNOTS, y)
        return np.sum(spline.antiderivative()(POINTS) ** 2) + np.sum(spline.antiderivative(2)(POINTS[:3])) \
            + np.sum(spline.derivative()(POINTS) * spline.derivative(2)(POINTS))

    check_all_modes(f, y0)
    check_all_modes(lambda t: np.sum(CubicSpline(KNOTS, y0).antiderivative()(t) * t), POINTS.copy())


def test_integrate_with_periodic_extrapolation():
    """Several periods and a remainder (SciPy's own Python: ``divmod`` of the length by the period)."""
    def f(y):
        return CubicSpline(KNOTS, np.append(y, y[0]), bc_type="periodic").integrate(0.5, 7.9)

    check_all_modes(f, np.array([0.3, -0.2, 0.9, 0.4]))
