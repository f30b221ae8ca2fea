"""A closure copied by the tangent machinery (``tangents.structural_copy``, second order's copies of
a solver's objective) is callable as the original: keyword-only defaults, name and attributes
kept. A copy once lost its keyword-only defaults, and ``minimize`` of an objective
``def obj(x, k=2.0, *, m=0.5)`` failed in ``yb.grad`` with "missing a required argument: 'm'".
"""
from __future__ import annotations

import numpy as np

import yuebing as yb


def _factory(a):
    def g(x, k=2.0, *, m=0.5):
        return a * k * x + m

    g.tag = "kept"
    return g


def test_structural_copy_of_a_closure_keeps_what_the_constructor_does_not_take():
    g = _factory(3.0)
    h = yb.tangents.structural_copy(g)
    assert h is not g and h(1.0) == g(1.0) and h(1.0, m=1.0) == g(1.0, m=1.0)
    assert h.__qualname__ == g.__qualname__ and h.tag == "kept"


def _fitted_sum(theta):
    import scipy.optimize

    def objective(x, k=2.0, *, m=0.5):
        return k * np.sum((x - theta) ** 2) + m * np.sum(x ** 4)

    result = scipy.optimize.minimize(objective, np.zeros(2), method="BFGS", options={"gtol": 1e-11})
    return np.sum(result.x ** 2)


def test_minimize_of_an_objective_with_keyword_only_defaults():
    theta = np.array([0.3, -0.2])
    grad = yb.grad(_fitted_sum)(theta)
    h = 1e-5
    expected = [(_fitted_sum(theta + h * e) - _fitted_sum(theta - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-6)
