"""A SciPy solver's or integrator's callable reading a string captured from a function outside
the differentiation (``method = "decay"``, ``if method == "decay": ...``), in every mode against
central differences.

Forward mode gives a variable captured from outside no tangent at all, so the callable's tangent
held ``NoTangent`` where its string cell's box belongs, and the rules' ``yb.jvp`` of the callable
refused it ("the tangent of a cell must be a MutableTangent, got NoTangent")
(``api/callable_tangents.py``)."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb

X = np.array([0.4, 0.9])
V = np.array([1.0, -0.5])


def _solver_call(kind, method):
    """``g(x)`` calling ``kind`` on a callable that branches on the captured string ``method``."""
    def sign():
        return -1.0 if method == "decay" else 1.0

    def g(x):
        if kind == "solve_ivp":
            return si.solve_ivp(lambda t, y: sign() * x[0] * y if method == "decay" else y, (0, 1), [1.0, 2.0],
                                rtol=1e-11, atol=1e-12).y[:, -1].sum() * x[1]
        if kind == "odeint":
            return si.odeint(lambda y, t: -x[0] * y if method == "decay" else y, [1.0, 2.0], [0.0, 1.0],
                             rtol=1e-11, atol=1e-12)[-1].sum() * x[1]
        if kind == "quad":
            return si.quad(lambda t: np.sin(t * x[0]) * x[1] if method == "decay" else t, 0.0, 1.0,
                           epsabs=1e-12, epsrel=1e-12)[0]
        if kind == "quad_vec":
            return si.quad_vec(lambda t: np.sin(t * x) if method == "decay" else t * x, 0.0, 1.0,
                               epsabs=1e-12, epsrel=1e-12)[0].sum()
        if kind == "minimize":
            return so.minimize(lambda p: np.sum((p - x) ** 2) + np.sum(p ** 4) * (1.0 if method == "decay" else 2.0),
                               np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x.sum()
        if kind == "brentq":
            return so.brentq(lambda r: (r ** 3 if method == "decay" else r) + r - x[0] * x[1], 0.0, 3.0, xtol=1e-14)
        if kind == "root":
            return so.root(lambda p: (p ** 3 if method == "decay" else p) + p - x * x[1], np.zeros(2), tol=1e-14).x.sum()
        return so.least_squares(lambda p: (p ** 3 if method == "decay" else p) + p - x, np.zeros(2),
                                xtol=1e-15, ftol=1e-15, gtol=1e-15).x.sum()
    return g


KINDS = ["solve_ivp", "odeint", "quad", "quad_vec", "minimize", "brentq", "root", "least_squares"]


def _differences(f, x, v, h=1e-4):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("kind", KINDS)
def test_reverse_and_forward_mode(kind):
    g = _solver_call(kind, "decay")
    expected = _differences(g, X, V)
    assert yb.jvp(g, (X.copy(),), (V,))[1] == pytest.approx(expected, rel=1e-5)
    assert yb.grad(g)(X.copy()) @ V == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_second_order(kind):
    g = _solver_call(kind, "decay")
    gradient = yb.grad(g)
    _, (first,), (product,) = yb.hvp(g, (X.copy(),), (V,))
    np.testing.assert_allclose(first, gradient(X.copy()), rtol=1e-8)
    np.testing.assert_allclose(product, _differences(gradient, X, V), rtol=1e-5, atol=1e-7)
