"""The derivative of ``scipy.special.digamma`` at a complex argument (``rules/complex_polygamma.py``).

SciPy's ``polygamma`` takes real arguments only, so differentiating ``digamma(z)`` (and the Hessian
of ``loggamma(z)``: lmfit's Pearson IV lineshape) crashed with a TypeError from ``zeta``. Checked:
the complex polygamma against SciPy on the real axis and against differences of ``digamma``
(holomorphic, so a difference along the real axis is the complex derivative); then every mode of
functions reaching it against central differences, and third order.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.complex_polygamma import polygamma
from yuebing.testing.third_order import check_third_order

POINTS = np.array([1.3 + 0.4j, 0.7 - 1.2j, -1.4 + 0.3j, 25.0 + 3.0j, 0.05 + 0.02j, 3.7 + 15.0j])


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_complex_polygamma_on_the_real_axis_is_scipys(order: int) -> None:
    x = np.array([0.3, 1.7, 4.2, -2.5, 30.0])
    np.testing.assert_allclose(polygamma(order, x + 0j).real, sp.polygamma(order, x), rtol=1e-11)
    assert np.max(np.abs(polygamma(order, x + 0j).imag)) == 0.0


@pytest.mark.parametrize("order", [1, 2])
def test_complex_polygamma_is_the_derivative_of_the_one_below(order: int) -> None:
    h = 1e-6
    below = sp.digamma if order == 1 else (lambda z: polygamma(order - 1, z))
    differences = (below(POINTS + h) - below(POINTS - h)) / (2 * h)
    np.testing.assert_allclose(polygamma(order, POINTS), differences, rtol=1e-7)


def test_complex_polygamma_takes_an_array_of_orders() -> None:
    orders = np.array([1, 2, 3])
    expected = [polygamma(int(n), z) for n, z in zip(orders, POINTS[:3])]
    np.testing.assert_allclose(polygamma(orders, POINTS[:3]), expected, rtol=1e-15)


def digamma_real_part(t):
    return np.real(sp.digamma(t[0] + 0.5j * t[1]))


def log_gamma_real_part(t):
    """As lmfit's pearson4: the log of |Gamma(m + i s / 2)|^2 / Gamma(m)^2."""
    return 2.0 * (np.real(sp.loggamma(t[0] + 0.5j * t[1])) - sp.loggamma(t[0]))


def gamma_and_digamma_mixed(t):
    z = t[1] + 1j * t[0]
    return np.imag(sp.digamma(z * z)) + np.real(sp.gamma(z)) * t[2]


@pytest.mark.parametrize("function", [digamma_real_part, log_gamma_real_part, gamma_and_digamma_mixed])
@pytest.mark.parametrize("point", [np.array([1.3, 0.4, 0.8]), np.array([0.6, -2.1, -1.1])])
def test_every_mode_through_digamma_at_complex_arguments(function, point) -> None:
    """grad, jvp, jacobian, hvp and hessian against central differences (was: TypeError in
    every second-order mode, and in reverse and forward mode for digamma itself)."""
    check_every_mode(function, point)


@pytest.mark.parametrize("function", [digamma_real_part, log_gamma_real_part])
def test_third_order_through_digamma_at_complex_arguments(function) -> None:
    check_third_order(function, np.array([1.3, 0.4, 0.8]))


def test_polygamma_itself_at_complex_arguments_is_still_scipys_error() -> None:
    """The user's own polygamma call at a complex argument fails as the plain call does: yuebing
    does not compute a value SciPy refuses."""
    with pytest.raises(TypeError):
        yb.grad(lambda t: np.real(sp.polygamma(1, t[0] + 1j * t[1])))(np.array([1.0, 0.5]))
