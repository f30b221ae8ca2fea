"""Second order (``yb.hessian``, ``yb.hvp``) of implicit differentiation
(``api/implicit_second_order.py``): ``scipy.optimize``'s root finders, ``minimize`` with the
user's gradient, the optimum value of any minimiser, and ``yb.custom_root``, with parameters
captured by closures and passed by ``args=``, against nested central differences of yuebing's own
gradient (each solve to near machine precision, so the differences see no solver noise). Minima
found without the user's gradient: tests/test_optimize_second_order.py."""
import numpy as np
import pytest
import scipy.optimize as so

import yuebing as yb


def nested_central(f, b, h):
    """Central differences of ``yb.grad(f)``: the Hessian, column by column."""
    g = yb.grad(f)
    return np.stack([(g(b + h * e) - g(b - h * e)) / (2 * h) for e in np.eye(b.size)], axis=-1)


def check(f, b, rtol=1e-6, h=1e-4):
    """The Hessian and one Hessian-vector product against nested central differences."""
    expected = nested_central(f, b, h)
    hessian = yb.hessian(f)(b)
    scale = np.max(np.abs(expected))
    assert np.max(np.abs(hessian - expected)) <= rtol * scale, (hessian, expected)
    v = np.linspace(0.5, -0.7, b.size)
    _, _, (product,) = yb.hvp(f, (b,), (v,))
    np.testing.assert_allclose(product, expected @ v, rtol=0, atol=rtol * scale * np.sum(np.abs(v)))


B = np.array([1.3, 0.8])


def root_vector(b):
    """Two unknowns, one parameter captured, one passed by args, a nonlinear use of the solution."""
    def fun(x, s):
        return np.array([x[0] + 0.5 * np.sin(x[1]) - b[0], x[1] * x[0] - s * b[1]])

    x = so.root(fun, np.ones(2), args=(2.0 * b[0],), tol=1e-14).x
    return np.sum(x ** 2) + x[0] * x[1] * b[1]


def root_jac_true(b):
    def fun(x):
        return x ** 3 - b, np.diag(3 * x ** 2)

    return np.sum(np.sin(so.root(fun, np.ones(2), jac=True, tol=1e-14).x))


def fsolve_list(b):
    return np.sum(so.fsolve(lambda x: [x[0] ** 3 - b[0], x[1] - x[0] * b[1]], np.ones(2), xtol=1e-13) ** 2)


def newton_args(b):
    return so.newton(lambda x, c: x ** 3 - c * b[0], 1.0, args=(b[1],), tol=1e-15) * b[0]


def brentq_closure(b):
    return so.brentq(lambda x: x ** 3 + x - b[0] * b[1], 0.0, 5.0, xtol=1e-15) ** 2


def root_scalar_fprime(b):
    res = so.root_scalar(lambda x, c: (x ** 3 - c, 3 * x ** 2), args=(b[0] * b[1],), x0=1.0, fprime=True, xtol=1e-15)
    return res.root * b[1]


def custom_root_newton(b):
    def newton(f, x):
        for _ in range(60):
            x = x - f(x) / (2.0 * x)
        return x

    return yb.custom_root(lambda x: x * x - b[0] * b[1] - 1.0, 1.0, newton) ** 3


def custom_root_tangent_solve(b):
    """A user's linear solver: the tangent solves go through it too."""
    def tangent_solve(g, y):
        return y / g(np.ones(2))  # ∂f/∂x is diagonal here

    def solve(f, x):
        return so.fsolve(f, x, xtol=1e-13)

    x = yb.custom_root(lambda x: x ** 3 - b, np.ones(2), solve, tangent_solve)
    return np.sum(x ** 2 * b[::-1])


@pytest.mark.parametrize("f", [root_vector, root_jac_true, fsolve_list, newton_args, brentq_closure,
                               root_scalar_fprime, custom_root_newton, custom_root_tangent_solve])
def test_root_finders(f):
    check(f, B)


def objective_and_gradient(x, b):
    value = np.sum((x - b) ** 4) + np.sum((x - 2.0 * b) ** 2) + x[0] * x[1] * b[0]
    gradient = 4 * (x - b) ** 3 + 2 * (x - 2.0 * b) + np.array([x[1], x[0]]) * b[0]
    return value, gradient


def minimize_jac_true(b):
    """The user's gradient makes the minimum a root: its solution has second order."""
    res = so.minimize(objective_and_gradient, np.zeros(2), args=(b,), jac=True, method="BFGS",
                      options={"gtol": 1e-13})
    return np.sum(res.x ** 3) + res.fun


def minimize_jac_callable(b):
    res = so.minimize(lambda x: objective_and_gradient(x, b)[0], np.zeros(2),
                      jac=lambda x: objective_and_gradient(x, b)[1], method="BFGS", options={"gtol": 1e-13})
    return res.x[0] * res.x[1]


def minimize_value(b):
    """Without a gradient, the optimum value still has second order (envelope theorem)."""
    return so.minimize(lambda x: objective_and_gradient(x, b)[0], np.zeros(2), method="BFGS",
                       options={"gtol": 1e-13}).fun


def least_squares_cost(b):
    res = so.least_squares(lambda x: np.array([x[0] - b[0], x[1] ** 2 - b[1], x[0] * x[1] - 1.0]), np.ones(2),
                           xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return res.cost


@pytest.mark.parametrize("f", [minimize_jac_true, minimize_jac_callable, minimize_value, least_squares_cost])
def test_minimisers(f):
    # BFGS stops near 1e-9 in x: larger steps keep its noise out of the differences
    check(f, B, rtol=2e-5, h=1e-3)


def test_hessian_matches_closed_form_composition():
    """sqrt by brentq inside a larger function: the exact Hessian of sum(sqrt(b) * b) is known
    through yuebing itself (the same function written with np.sqrt)."""
    def implicit(b):
        return sum(so.brentq(lambda x, c: x * x - c, 0.0, 10.0, args=(v,), xtol=1e-15) * v for v in b)

    def explicit(b):
        return np.sum(np.sqrt(b) * b)

    np.testing.assert_allclose(yb.hessian(implicit)(B), yb.hessian(explicit)(B), rtol=1e-10, atol=1e-12)


def test_minimum_without_gradient_matches_the_jac_route():
    """Without jac= the solution has second order too (tests/test_optimize_second_order.py): the
    same minimum as through the user's gradient."""
    def solution(b):
        res = so.minimize(lambda x: objective_and_gradient(x, b)[0], np.zeros(2), method="BFGS",
                          options={"gtol": 1e-12})
        return res.x[0] * res.x[1]

    check(minimize_jac_callable, B, rtol=2e-5, h=1e-3)
    np.testing.assert_allclose(yb.hessian(solution)(B), yb.hessian(minimize_jac_callable)(B), rtol=1e-6)
