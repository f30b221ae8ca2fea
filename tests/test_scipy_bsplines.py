"""``scipy.interpolate.make_interp_spline`` and ``BSpline`` (rules/scipy_bsplines.py) inside
functions: every mode (grad, jvp, jacobian(mode="fwd"), hvp, hessian) against central differences,
in the data ``y``, the abscissae ``x`` (and the knots made from them), the evaluation points and
boundary derivative values; ``bc_type="periodic"`` refused by name. The evaluation kernel's own
cases run in tests/test_rules.py."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import BSpline, make_interp_spline

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.core import RuleArgumentError

XK = np.array([0.0, 0.4, 1.1, 1.5, 2.2, 2.6, 3.0])
POINTS = np.array([0.3, 1.2, 1.9, 2.7])  # inside intervals, not at a knot


def in_data(y):
    spline = make_interp_spline(XK, y)
    return np.sum(spline(POINTS) ** 2) + np.sum(spline(POINTS, 1))


def in_abscissae(x):
    spline = make_interp_spline(x, np.cos(XK), bc_type="natural")
    return np.sum(spline(POINTS) ** 2)


def in_points(t):
    spline = make_interp_spline(XK, np.sin(XK), k=5)
    return np.sum(spline(t) ** 3) + np.sum(spline.derivative(2)(t))


def clamped_in_data(y):
    spline = make_interp_spline(XK, y, bc_type="clamped")
    return np.sum(spline(POINTS) * POINTS)


def boundary_slopes(s):
    spline = make_interp_spline(XK, np.cos(XK), bc_type=([(1, s[0])], [(1, s[1])]))
    return np.sum(spline(POINTS) ** 2)


def columns_along_axis(y):
    data = np.stack([y, y ** 2], axis=0)  # interpolated along axis 1
    spline = make_interp_spline(XK, data, axis=1)
    return np.sum(spline(POINTS) ** 2)


def linear_and_quadratic(y):
    return np.sum(make_interp_spline(XK, y, k=1)(POINTS) ** 2) + np.sum(make_interp_spline(XK, y, k=2)(POINTS))


def extrapolated(t):
    spline = make_interp_spline(XK, np.sin(XK))
    return np.sum(spline(t) ** 2)


def spline_built_by_hand(c):
    knots = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0])
    return np.sum(BSpline(knots, c, 3)(POINTS) ** 2)


CASES = [
    (in_data, np.cos(XK)), (in_abscissae, XK + 0.02 * np.sin(np.arange(7.0))), (in_points, POINTS),
    (clamped_in_data, np.sin(XK)), (boundary_slopes, np.array([0.5, -1.0])), (columns_along_axis, np.cos(XK)),
    (linear_and_quadratic, np.cos(XK)), (extrapolated, np.array([-0.5, 1.3, 3.4])),
    (spline_built_by_hand, np.array([0.5, -1.0, 2.0, 0.3, 1.1, -0.4])),
]


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_every_mode(f, x):
    check_every_mode(f, x)


def test_values_are_scipys():
    y = np.cos(XK)
    spline = make_interp_spline(XK, y)
    value, _ = yb.value_and_grad(lambda v: make_interp_spline(XK, v)(POINTS) @ POINTS)(y)
    assert value == pytest.approx(spline(POINTS) @ POINTS, rel=1e-13)


def test_outside_without_extrapolation_is_nan():
    def f(y):
        return make_interp_spline(XK, y)(np.array([1.0, 3.5]), extrapolate=False)[1]

    assert np.isnan(f(np.cos(XK)))
    assert np.all(np.isnan(yb.grad(f)(np.cos(XK))) | (yb.grad(f)(np.cos(XK)) == 0))


def test_periodic_is_refused():
    y = np.cos(2 * np.pi * XK / 3.0)

    def f(v):
        return np.sum(make_interp_spline(XK, v, bc_type="periodic")(POINTS))

    with pytest.raises(RuleArgumentError, match="periodic.*CubicSpline"):
        yb.grad(f)(y)
    with pytest.raises(RuleArgumentError, match="periodic"):
        yb.jvp(f, (y,), (np.ones(7),))
