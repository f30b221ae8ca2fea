"""scipy.integrate.quad_vec (api/quad_vec.py): a vector integrand differentiated under the integral
sign in what it captures and its args=, and in the limits (the fundamental theorem), in reverse,
forward, forward-Jacobian and second order (one quad per component) against finite differences."""
import numpy as np
import pytest
import scipy.integrate as si

import yuebing as yb

X0 = np.array([0.7, 0.35, 1.2])
V = np.array([0.3, -0.5, 0.8])


def central_differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)]).T


def captured(x):
    return si.quad_vec(lambda t: np.array([np.sin(x[0] * t), t * x[1]]), 0, 1)[0]


def moving_limits(x):
    return si.quad_vec(lambda t: np.array([np.exp(-x[0] * t), t ** 2 * x[2]]), x[1], x[2] + 1)[0]


def with_args(x):
    return si.quad_vec(lambda t, c, d: np.array([c * np.cos(t * d), c + d * t]), 0, 2, args=(x[0], x[1]))[0]


def infinite_limit(x):
    return si.quad_vec(lambda t: np.array([np.exp(-x[0] * t * t), np.exp(-(x[1] + 1) * t)]), x[2], np.inf)[0]


def scalar_integrand(x):
    return si.quad_vec(lambda t: np.sin(x[0] * t) * x[1], 0, x[2])[0]


CASES = [captured, moving_limits, with_args, infinite_limit, scalar_integrand]
IDS = [f.__name__ for f in CASES]


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_reverse_jacobian_matches_differences(f):
    np.testing.assert_allclose(yb.jacobian(f)(X0.copy()), central_differences(f, X0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_jvp_matches_differences(f):
    value, tangent = yb.jvp(f, (X0.copy(),), (V,))
    np.testing.assert_allclose(value, f(X0))
    np.testing.assert_allclose(tangent, central_differences(f, X0) @ V, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", CASES[:3], ids=IDS[:3])
def test_forward_jacobian_matches_differences(f):
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(X0.copy()), central_differences(f, X0), rtol=1e-5,
                               atol=1e-7)


def test_error_estimate_and_full_output_are_not_differentiated():
    with pytest.raises(ValueError, match="error estimate"):
        yb.grad(lambda x: si.quad_vec(lambda t: x[0] * t, 0, 1)[1])(X0.copy())
    with pytest.raises(ValueError, match="full_output"):
        yb.grad(lambda x: si.quad_vec(lambda t: x[0] * t, 0, 1, full_output=True)[0])(X0.copy())


@pytest.mark.parametrize("f", CASES, ids=IDS)
def test_hvp_matches_differences(f):
    """Second order is one quad per component (quad_vec_by_components)."""
    weights = np.arange(1.0, 1.0 + np.size(f(X0)))

    def weighted(x):
        return np.sum(f(x) * weights)

    value, _, (hv,) = yb.hvp(weighted, (X0.copy(),), (V,))
    assert value == pytest.approx(weighted(X0), rel=1e-9)
    h = 1e-4
    want = (central_differences(weighted, X0 + h * V) - central_differences(weighted, X0 - h * V)) / (2 * h)
    np.testing.assert_allclose(hv, want, rtol=2e-3, atol=1e-4)
