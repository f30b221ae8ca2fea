"""A SciPy solver's or integrator's callable that reads an array ``c`` captured from a function
outside the differentiation, both directly (``k = c`` in the differentiated function) and
through a helper that function made, which captures ``c`` too.

Second order gives each read of a captured constant its own zero tangent, so the callable's
tangent held two tangent objects for the one array, and the rules' ``yb.jvp`` of the callable
refused it ("aliasing differs: one mutable primal must have exactly one tangent object") under
``yb.hvp`` and ``yb.jvp`` of ``yb.grad`` (``implicit_second_order.one_tangent_per_array``).
Checked in every mode against central differences (of ``g``, and of ``yb.grad(g)``)."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb

X = np.array([0.4, 0.9])
V = np.array([1.0, -0.5])


def _solver_call(kind, c):
    """``g(x)`` calling ``kind`` on a callable reading ``c`` directly and through ``helper``."""
    def helper(t):
        return c * t

    def g(x):
        helper_ = helper  # (a callable reading g's free variable itself: third order refuses cell_get)
        k = c
        if kind == "quad":
            return si.quad(lambda t: np.sum(np.sin(x[0] * helper_(t))) * x[1] * np.sum(k), 0.0, 1.0,
                           epsabs=1e-12, epsrel=1e-12)[0]
        if kind == "minimize":
            def objective(p):
                return np.sum((helper_(p) - x) ** 2) + np.sum(p ** 4) * np.sum(k)
            return so.minimize(objective, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x.sum()
        if kind == "solve_ivp":
            return si.solve_ivp(lambda t, u: -x[0] * helper_(u) * np.sum(k), (0.0, 1.0), [1.0, 0.5],
                                rtol=1e-11, atol=1e-12).y[:, -1].sum()
        return so.least_squares(lambda p: helper_(p) - x * np.sum(k) + 0.1 * p ** 3, np.zeros(2),
                                xtol=1e-15, ftol=1e-15, gtol=1e-15).x.sum()
    return g


KINDS = ["quad", "minimize", "solve_ivp", "least_squares"]


def _differences(f, x, v, h=1e-4):  # (minimize's BFGS solution is good to some 1e-10)
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("kind", KINDS)
def test_reverse_and_forward_mode(kind):
    g = _solver_call(kind, np.array([1.5, 2.0]))
    expected = _differences(g, X, V)
    assert yb.grad(g)(X.copy()) @ V == pytest.approx(expected, rel=1e-5)
    assert yb.jvp(g, (X.copy(),), (V,))[1] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_second_order(kind):
    g = _solver_call(kind, np.array([1.5, 2.0]))
    gradient = yb.grad(g)
    expected = _differences(gradient, X, V)
    _, (first,), (product,) = yb.hvp(g, (X.copy(),), (V,))
    np.testing.assert_allclose(first, gradient(X.copy()), rtol=1e-8)
    np.testing.assert_allclose(product, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind", ["quad", "minimize"])
def test_forward_over_the_gradient(kind):
    g = _solver_call(kind, np.array([1.5, 2.0]))
    expected = _differences(yb.grad(g), X, V)
    np.testing.assert_allclose(yb.jvp(lambda x: yb.grad(g)(x), (X.copy(),), (V,))[1], expected, rtol=1e-5, atol=1e-7)
