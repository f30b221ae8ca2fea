"""``scipy.interpolate.RegularGridInterpolator`` and ``interpn`` (rules/scipy_regular_grid.py)
inside functions: every mode (grad, jvp, jacobian(mode="fwd"), hvp, hessian) against central
differences, in the values, the query points and the grid, linear and nearest, 2-d (SciPy's
Cython fast path) and 3-d (its Python path); gradients against ``jax.scipy.interpolate``; the
spline methods still refused by name."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import RegularGridInterpolator, interpn

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.core import MissingRuleError

G0, G1 = np.array([0.0, 1.0, 2.5, 3.0]), np.array([0.0, 2.0, 3.0])
VALUES = np.arange(12.0).reshape(4, 3) ** 1.5
POINTS = np.array([[0.5, 1.5], [1.2, 2.2], [2.7, 0.4]])  # inside cells, not on grid lines


def in_values(v):
    return np.sum(RegularGridInterpolator((G0, G1), v.reshape(4, 3))(POINTS) ** 2)


def in_points(p):
    return np.sum(RegularGridInterpolator((G0, G1), VALUES)(p.reshape(3, 2)) ** 2)


def in_grid(g):
    return np.sum(RegularGridInterpolator((g, G1), VALUES)(POINTS) ** 2)


def three_dimensions(p):
    grid = (np.array([0.0, 1.0]), np.array([0.0, 1.0, 2.0]), np.arange(4.0))
    values = np.arange(24.0).reshape(2, 3, 4) ** 1.3
    return np.sum(RegularGridInterpolator(grid, values)(p.reshape(2, 3)) ** 2)


def with_interpn(p):
    return np.sum(interpn((G0, G1), VALUES * p[0], p[1:].reshape(2, 2)) ** 2)


def coordinate_tuple(p):
    interpolator = RegularGridInterpolator((G0, G1), VALUES)
    return np.sum(interpolator((p[:2], p[2:])) ** 2)


def extrapolated(p):
    interpolator = RegularGridInterpolator((G0, G1), VALUES, bounds_error=False, fill_value=None)
    return np.sum(interpolator(p.reshape(2, 2)) ** 2)


def nearest(v):
    return np.sum(RegularGridInterpolator((G0, G1), v.reshape(4, 3), method="nearest")(POINTS) ** 2)


CASES = [
    (in_values, VALUES.ravel()), (in_points, POINTS.ravel()), (in_grid, G0 + np.array([0.0, 0.1, -0.2, 0.05])),
    (three_dimensions, np.array([0.3, 0.5, 1.2, 0.7, 1.6, 2.2])), (with_interpn, np.array([1.3, 0.5, 1.5, 2.7, 0.4])),
    (coordinate_tuple, np.array([0.5, 2.7, 1.5, 0.4])), (extrapolated, np.array([-0.5, 1.5, 2.7, 3.4])),
    (nearest, VALUES.ravel()),
]


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_every_mode(f, x):
    check_every_mode(f, x)


def test_gradient_in_the_points_is_the_cells_slopes():
    p = POINTS[0]  # in the cell [0, 1] x [0, 2]
    value = lambda q: RegularGridInterpolator((G0, G1), VALUES)(q)[0]  # noqa: E731
    slope_x = ((1 - 0.75) * (VALUES[1, 0] - VALUES[0, 0]) + 0.75 * (VALUES[1, 1] - VALUES[0, 1])) / 1.0
    slope_y = ((1 - 0.5) * (VALUES[0, 1] - VALUES[0, 0]) + 0.5 * (VALUES[1, 1] - VALUES[1, 0])) / 2.0
    np.testing.assert_allclose(yb.grad(value)(p), [slope_x, slope_y], rtol=1e-12)


def test_spline_methods_are_refused_by_name():
    grid = (G0, G0)
    values = np.arange(16.0).reshape(4, 4) ** 1.5

    def cubic(p):
        return np.sum(RegularGridInterpolator(grid, values, method="cubic")(p.reshape(1, 2)))

    with pytest.raises(MissingRuleError, match="scipy.interpolate"):
        yb.grad(cubic)(np.array([0.5, 1.5]))


jax = pytest.importorskip("jax")


@pytest.mark.slow  # (third order / the jax oracle: the CI's slow step)
def test_against_jax():
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator

    def theirs_points(p):
        return jnp.sum(JaxInterpolator((G0, G1), VALUES)(p.reshape(3, 2)) ** 2)

    def theirs_values(v):
        return jnp.sum(JaxInterpolator((G0, G1), v.reshape(4, 3))(POINTS) ** 2)

    np.testing.assert_allclose(yb.grad(in_points)(POINTS.ravel()), jax.grad(theirs_points)(POINTS.ravel()), rtol=1e-12)
    np.testing.assert_allclose(yb.grad(in_values)(VALUES.ravel()), jax.grad(theirs_values)(VALUES.ravel()), rtol=1e-12)
