"""Second order (``yb.hessian``, ``yb.hvp``) of minima found without the user's gradient
(``scipy.optimize.minimize`` without ``jac=``, ``minimize_scalar``, ``least_squares``: third
derivatives of the objective, ``api/implicit_stationary.py``) and of ``scipy.integrate.quad`` over
infinite ranges (``api/quad.py``), with parameters captured by closures and passed by ``args=``.

Oracles: nested central differences of yuebing's own gradient (the solvers run at tight
tolerances; what is left of their noise sets each tolerance below), the same minimum through the
user's gradient (``jac=``, whose second order is the root finder's) or a root of the derivative,
and closed forms. Bounds: interior optima are differentiated, active bounds refused in first and
second order."""
import functools

import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb

B = np.array([1.3, 0.8])


def nested_central(f, b, h):
    """Central differences of ``yb.grad(f)``: the Hessian, column by column."""
    g = yb.grad(f)
    return np.stack([(g(b + h * e) - g(b - h * e)) / (2 * h) for e in np.eye(b.size)], axis=-1)


def relative_error(actual, expected):
    return np.max(np.abs(actual - expected)) / np.max(np.abs(expected))


def check(f, b, rtol, h=1e-3, product=False):
    """The Hessian against nested central differences (and ``hvp`` against the Hessian)."""
    hessian = yb.hessian(f)(b)
    assert relative_error(hessian, nested_central(f, b, h)) <= rtol
    if product:
        check_product(f, b, hessian)
    return hessian


def check_product(f, b, hessian):
    v = np.linspace(0.5, -0.7, b.size)
    _, _, (product,) = yb.hvp(f, (b,), (v,))
    np.testing.assert_allclose(product, hessian @ v, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------------
# minimize without jac=
# --------------------------------------------------------------------------------------------


def quartic(x, b):
    return np.sum((x - b) ** 4) + np.sum((x - 2.0 * b) ** 2) + x[0] * x[1] * b[0]


def quartic_gradient(x, b):
    return 4 * (x - b) ** 3 + 2 * (x - 2.0 * b) + np.array([x[1], x[0]]) * b[0]


def minimize_closure(b):
    """The objective captures ``b``; the solution and the optimum value are used."""
    res = so.minimize(lambda x: quartic(x, b), np.zeros(2), method="BFGS", jac="3-point", options={"gtol": 1e-12})
    return res.x[0] * res.x[1] ** 2 + np.sin(res.fun) * b[1]


def minimize_with_jac(b):
    res = so.minimize(lambda x: quartic(x, b), np.zeros(2), jac=lambda x: quartic_gradient(x, b), method="BFGS",
                      options={"gtol": 1e-13})
    return res.x[0] * res.x[1] ** 2 + np.sin(res.fun) * b[1]


def test_minimize_closure_without_jac():
    hessian = check(minimize_closure, B, rtol=2e-5, product=True)  # measured 7e-6: the differences' own noise
    # the user's gradient gives the same minimum a root finder's second order: an independent path
    assert relative_error(hessian, yb.hessian(minimize_with_jac)(B)) <= 1e-8  # measured 1e-10


def minimize_args_bounded(b):
    """``args=`` (an array and a float), L-BFGS-B with bounds that are not active, a float out."""
    def objective(x, c, scale):
        return scale * np.sum(np.cosh(x - c)) + 0.3 * x[0] ** 2 * c[1] + np.exp(0.2 * x[1] * c[0])

    res = so.minimize(objective, np.ones(2), args=(b, 2.0), method="L-BFGS-B", jac="3-point",
                      bounds=[(-5.0, 5.0), (None, 4.0)], options={"gtol": 1e-13, "ftol": 1e-15})
    return float(np.sum(res.x ** 3))


def test_minimize_args_interior_bounds():
    check(minimize_args_bounded, B, rtol=2e-6)  # measured 1.4e-7


def test_minimize_zero_d_objective_captured_and_args():
    """A 0-d array objective whose parameters are both captured and passed by args=, its value
    used too (the first order's cotangent of res.fun is a 0-d array then)."""
    def f(b):
        c = b * b

        def objective(x, d):
            return np.asarray(np.sum((x - c) ** 4) + d * np.sum(x ** 2))

        res = so.minimize(objective, np.zeros(2), args=(1.5 * b[1],), method="BFGS", jac="3-point",
                          options={"gtol": 1e-12})
        return res.x[0] * res.x[1] + res.fun

    check(f, B, rtol=1e-5)  # measured 9e-7


# --------------------------------------------------------------------------------------------
# minimize_scalar
# --------------------------------------------------------------------------------------------


def scalar_objective(x, b):
    return (x - b[0]) ** 4 + b[1] * x ** 2 + np.cos(x)


def scalar_derivative(x, b):
    return 4 * (x - b[0]) ** 3 + 2 * b[1] * x - np.sin(x)


def minimize_scalar_brent(b):
    x = so.minimize_scalar(lambda x: scalar_objective(x, b), method="brent", tol=1e-12).x
    return x ** 3 + b[0] * x


def minimize_scalar_bounded(b):
    res = so.minimize_scalar(scalar_objective, bounds=(-3.0, 4.0), args=(b,), method="bounded",
                             options={"xatol": 1e-12})
    return res.x ** 3 + b[0] * res.x


def derivative_root(b):
    """The same minimum as the root of the derivative (second order of brentq)."""
    x = so.brentq(scalar_derivative, -3.0, 4.0, args=(b,), xtol=1e-15)
    return x ** 3 + b[0] * x


@pytest.mark.parametrize("f", [minimize_scalar_brent, minimize_scalar_bounded])
def test_minimize_scalar(f):
    hessian = check(f, B, rtol=1e-4)  # Brent's minimum is found to about sqrt(eps): the differences see it
    assert relative_error(hessian, yb.hessian(derivative_root)(B)) <= 1e-6  # measured 3.5e-8 (brent), 8e-10


# --------------------------------------------------------------------------------------------
# least_squares: the full Hessian of the cost, not Gauss-Newton
# --------------------------------------------------------------------------------------------

T = np.linspace(0.0, 2.0, 9)
DATA = np.cos(T) + 0.3 * T


def model_residual(x, b, t, data, shift=0.0):
    """An exponential fit that cannot reach the data: the residual at the optimum is not 0, so its
    second derivatives are part of the cost's Hessian."""
    return x[0] * np.exp(-b[0] * x[1] * t) + b[1] * t ** 2 - data + shift


def least_squares_closure(b):
    res = so.least_squares(lambda x: model_residual(x, b, T, DATA), np.ones(2), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return res.x[0] * res.x[1] + 0.5 * np.sum(res.fun[:3] ** 2) + res.cost * b[0]


def least_squares_args(b, bounds=([-10.0, 0.0], [10.0, 5.0])):
    """``args=`` and ``kwargs=``, bounds that are not active."""
    res = so.least_squares(model_residual, np.ones(2), args=(b, T, DATA), kwargs={"shift": 0.1}, bounds=bounds,
                           xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return np.sum(res.x ** 2) * b[1]


def least_squares_as_minimum(b):
    """The same minimum through the cost's exact gradient ``J^T r`` (minimize with jac=)."""
    def cost_and_gradient(x):
        e = np.exp(-b[0] * x[1] * T)
        r = x[0] * e + b[1] * T ** 2 - DATA
        jacobian = np.stack([e, -b[0] * T * x[0] * e], axis=1)
        return 0.5 * np.sum(r ** 2), jacobian.T @ r

    res = so.minimize(cost_and_gradient, np.ones(2), jac=True, method="BFGS", options={"gtol": 1e-13})
    r = model_residual(res.x, b, T, DATA)
    return res.x[0] * res.x[1] + 0.5 * np.sum(r[:3] ** 2) + res.fun * b[0]


def test_least_squares_closure_full_hessian():
    x = so.least_squares(lambda x: model_residual(x, B, T, DATA), np.ones(2)).x
    assert np.linalg.norm(model_residual(x, B, T, DATA)) > 0.1  # Gauss-Newton would differ here
    hessian = check(least_squares_closure, B, rtol=1e-5, product=True)  # measured 1e-6
    assert relative_error(hessian, yb.hessian(least_squares_as_minimum)(B)) <= 1e-7  # measured 2e-9


def test_least_squares_args_kwargs_interior_bounds():
    # trf's solution with bounds is found to ~1e-8 only: the differences see 3e-5
    hessian = check(least_squares_args, B, rtol=2e-4)
    unbounded = yb.hessian(lambda b: least_squares_args(b, bounds=(-np.inf, np.inf)))(B)
    assert relative_error(hessian, unbounded) <= 1e-6  # measured 2e-8


# --------------------------------------------------------------------------------------------
# quad over infinite ranges
# --------------------------------------------------------------------------------------------

TIGHT = {"epsabs": 1e-11, "epsrel": 1e-11}


def gaussian_cosine(p):
    """∫_{-∞}^{∞} exp(-a t²) cos(b t) dt = sqrt(π/a) exp(-b²/(4a)), captured parameters."""
    return si.quad(lambda t: np.exp(-p[0] * t ** 2) * np.cos(p[1] * t), -np.inf, np.inf, **TIGHT)[0]


def gaussian_cosine_exact(p):
    return np.sqrt(np.pi / p[0]) * np.exp(-p[1] ** 2 / (4 * p[0]))


def upper_tail(p):
    """∫_c^∞ exp(-a t) / (1 + t²) dt: a moving lower limit, the rate passed by args=."""
    return si.quad(lambda t, a: np.exp(-a * t) * t ** 2, p[1], np.inf, args=(p[0],), **TIGHT)[0]


def upper_tail_exact(p):
    a, c = p
    return np.exp(-a * c) * (c ** 2 / a + 2 * c / a ** 2 + 2 / a ** 3)


def lower_tail(p):
    """∫_{-∞}^c exp(a t) dt = exp(a c) / a."""
    return si.quad(lambda t: np.exp(p[0] * t), -np.inf, p[1], **TIGHT)[0]


def reversed_tail(p):
    """∫_∞^c exp(-a t) dt = -exp(-a c) / a (limits in decreasing order)."""
    return si.quad(lambda t: np.exp(-p[0] * t), np.inf, p[1], **TIGHT)[0]


@pytest.mark.parametrize("f, exact", [
    pytest.param(gaussian_cosine, gaussian_cosine_exact, marks=pytest.mark.slow),  # ~10 s: 231 nodes, each a pass
    (upper_tail, upper_tail_exact),
    (lower_tail, lambda p: np.exp(p[0] * p[1]) / p[0]),
    (reversed_tail, lambda p: -np.exp(-p[0] * p[1]) / p[0]),
])
def test_quad_infinite_ranges(f, exact):
    hessian = yb.hessian(f)(B)
    assert relative_error(hessian, yb.hessian(exact)(B)) <= 1e-10  # measured 7e-16


@pytest.mark.slow  # the closed forms above check the same code; this adds an oracle that is not yuebing's
def test_quad_infinite_range_against_differences():
    assert relative_error(yb.hessian(upper_tail)(B), nested_central(upper_tail, B, 1e-4)) <= 1e-6


# --------------------------------------------------------------------------------------------
# Active bounds, and what is refused
# --------------------------------------------------------------------------------------------


def bounded_scalar_active(b):  # the minimum of (x - b)^2 on [0, 1] for b > 1 is the bound 1
    return so.minimize_scalar(lambda x: (x - b[0]) ** 2 + b[1] * 0.0, bounds=(0.0, 1.0), method="bounded").x


def trust_constr_active(b):  # stops short of the bound (a barrier method), yet the bound is active
    return so.minimize(lambda x: np.sum((x - b) ** 2), np.full(2, 0.5), method="trust-constr",
                       bounds=[(0.0, 1.0), (0.0, 1.0)]).x[0]


def least_squares_active(b):
    return so.least_squares(lambda x: x - b, np.full(2, 0.5), bounds=(0.0, 1.0)).x[0]


@pytest.mark.parametrize("f", [bounded_scalar_active, trust_constr_active, least_squares_active])
def test_active_bound_refused_in_first_and_second_order(f):
    for transform in (yb.grad, yb.hessian):
        with pytest.raises(ValueError, match="bound is active"):
            transform(f)(B)


def test_derivatives_captured_deeper_than_the_objective_refused_with_working_advice():
    def nested(b):  # a helper the objective captures, itself capturing b: followed in every order (5ca35c6)
        def model(x):
            return x - b

        return so.minimize(lambda x: np.sum(model(x) ** 4 + x ** 2), np.zeros(2), method="BFGS",
                           options={"gtol": 1e-12}).x[0]

    def in_args(b):
        model = lambda x: x - b  # noqa: E731
        return so.minimize(lambda x, m: np.sum(m(x) ** 4 + x ** 2), np.zeros(2), args=(model,), method="BFGS").x[0]

    check(nested, B, rtol=1e-5)
    yb.grad(in_args)(B)  # first order follows it
    with pytest.raises(yb.SecondOrderError, match="args="):
        yb.hessian(in_args)(B)

    def as_advised(b):  # the advice as printed: the captured variable passed by args=
        def model(x, c):
            return x - c

        return so.minimize(lambda x, c: np.sum(model(x, c) ** 4 + x ** 2), np.zeros(2), args=(b,), method="BFGS",
                           jac="3-point", options={"gtol": 1e-12}).x[0]

    check(as_advised, B, rtol=1e-5)


def test_nelder_mead_whose_solution_is_a_view_of_its_simplex():
    """Nelder-Mead's ``x`` is a row of its final simplex (not differentiated): x alone is."""
    def f(b):
        return so.minimize(quartic, np.zeros(2), args=(b,), method="Nelder-Mead",
                           options={"xatol": 1e-12, "fatol": 1e-15, "maxiter": 4000}).x[0]

    check(f, B, rtol=2e-5)  # measured 1.5e-6


class Quartic:
    def __init__(self, b):
        self.b = b

    def value(self, x):
        return quartic(x, self.b)

    def gradient(self, x):
        return quartic_gradient(x, self.b)


def test_bound_method_objective():
    """A bound method objective without jac=: its gradient's own derivatives read the object's
    attributes (third order through user objects); with jac= a bound method too."""
    def without_jac(b):
        return so.minimize(Quartic(b).value, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x[0]

    check(without_jac, B, rtol=2e-5)  # measured 4e-6

    def with_jac(b):
        model = Quartic(b)
        return so.minimize(model.value, np.zeros(2), jac=model.gradient, method="BFGS", options={"gtol": 1e-13}).x[0]

    check(with_jac, B, rtol=2e-5)  # measured 4e-6: the differences' truncation at h = 1e-3


def test_functools_partial_objective():
    """A partial's bound arguments and keywords carry their derivatives, its function's captured
    variables too; a function bound in it that captures derivatives is refused."""
    def by_keyword(b):
        return so.minimize(functools.partial(quartic, b=b), np.zeros(2), method="BFGS", jac="3-point",
                           options={"gtol": 1e-12}).x[0]

    def of_closure(b):
        def objective(x, scale):
            return quartic(x, b) * scale

        return so.minimize(functools.partial(objective, scale=b[1]), np.zeros(2), method="BFGS", jac="3-point",
                           options={"gtol": 1e-12}).x[0]

    check(by_keyword, B, rtol=1e-5)  # measured 2e-7
    check(of_closure, B, rtol=1e-5)

    def bound_model(b):
        def objective(x, model):
            return np.sum(model(x) ** 4 + x ** 2)

        return so.minimize(functools.partial(objective, model=lambda x: x - b), np.zeros(2), method="BFGS").x[0]

    with pytest.raises(yb.SecondOrderError, match="args="):
        yb.hessian(bound_model)(B)
