"""Derivatives rules used to drop silently (found by debug mode, rules/debug.py): ``initial=`` of
the reductions, a float ``ord`` of ``np.linalg.norm``, and the shape parameters of random draws.

Each differentiable one is checked in every mode (``yb.grad``, ``yb.jvp``, ``yb.hessian``) against
central finite differences; what yuebing does not differentiate raises an error naming it.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.2, -0.4]])
MASK = np.array([[True, False, True], [False, False, False]])  # row 1: initial= alone


def first_difference(f, a, h=1e-5):
    return (f(a + h) - f(a - h)) / (2 * h)


def second_difference(f, a, h=1e-4):
    return (f(a + h) - 2 * f(a) + f(a - h)) / (h * h)


def check_every_mode(f, a):
    """grad, jvp and hessian of scalar ``f`` at float ``a`` against central differences."""
    slope = first_difference(f, a)
    np.testing.assert_allclose(yb.grad(f)(a), slope, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jvp(f, (a,), (1.0,))[1], slope, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.hessian(f)(a), second_difference(f, a), rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------------
# initial= of sum, nansum, prod, max/amax, min/amin and the ndarray methods
# --------------------------------------------------------------------------------------------

INITIAL = {
    "sum (the issue's example)": lambda a: np.sum(np.ones(3) * a, initial=a * a),
    "sum, axis, where, keepdims": lambda a: np.sum(np.sum(X * a, axis=1, where=MASK, initial=a ** 3, keepdims=True) ** 2),
    "ndarray.sum": lambda a: np.sum((X * a).sum(axis=0, initial=np.sin(a)) ** 2),
    "nansum": lambda a: np.sum(np.nansum(X * a, axis=0, initial=np.sin(a)) ** 2),
    "prod": lambda a: np.prod(X * a, axis=1, initial=a * a).sum(),
    "prod, all axes": lambda a: np.prod(X[0] * a, initial=np.exp(a)),
    "ndarray.prod, where, keepdims": lambda a: (X * a).prod(axis=0, initial=np.exp(a), where=MASK, keepdims=True).sum(),
    "max (the issue's example)": lambda a: np.max(np.ones(3) * 0.1, initial=a),
    "max, axis: initial wins one row": lambda a: np.sum(np.max(X * a, axis=1, initial=a * a) ** 2),
    "amax": lambda a: np.amax(X, initial=a * a) ** 2,
    "amin, where": lambda a: np.sum(np.amin(X * a, axis=1, where=MASK, initial=-a) ** 2),
    "ndarray.min, where, keepdims": lambda a: np.sum((X * a).min(axis=0, initial=-a ** 3, where=MASK, keepdims=True) ** 2),
    "ndarray.max: elements win": lambda a: (X * a).max(initial=-5.0 * a) ** 2,
    "nanmax": lambda a: np.nanmax(X, initial=a * a) ** 2,
    "nanmin, axis": lambda a: np.sum(np.nanmin(X * a, axis=0, initial=-a) ** 2),
}


@pytest.mark.parametrize("name", INITIAL)
def test_initial_is_differentiated(name):
    check_every_mode(INITIAL[name], 1.3)


def test_initial_of_a_vector_function_has_the_right_hessian():
    # x enters both the elements and initial=: the full Hessian, against differences of the gradient
    def f(x):
        return np.sum(x ** 2, initial=x[0] * x[1]) ** 2 + np.max(x, initial=x[2] ** 2) * np.prod(x, initial=x[0])

    x = np.array([0.4, -0.7, 1.3])
    h = 1e-5
    columns = [(yb.grad(f)(x + h * e) - yb.grad(f)(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(yb.hessian(f)(x), np.array(columns), rtol=1e-5, atol=1e-6)
    slope = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(yb.grad(f)(x), slope, rtol=1e-6)


def test_initial_tied_with_elements_shares_evenly():
    # a tie has no derivative; the convention splits evenly among the tied candidates (initial=
    # counts as one), so the candidates' shares are equal and add up to the derivative along the
    # direction that moves all of them together, which finite differences can check
    x = np.array([1.0, 3.0, 3.0, -2.0])

    def f(x, c):
        return np.max(x, initial=c)

    gx, gc = yb.grad(f, argnums=(0, 1))(x, 3.0)
    assert gx[1] == gx[2] == gc and gx[0] == gx[3] == 0
    together = first_difference(lambda t: f(x + t, 3.0 + t), 0.0)
    np.testing.assert_allclose(gx.sum() + gc, together, rtol=1e-9)
    _, tangent = yb.jvp(f, (x, 3.0), (np.ones(4), 1.0))
    np.testing.assert_allclose(tangent, together, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# np.linalg.norm's ord
# --------------------------------------------------------------------------------------------

V = np.array([1.0, -2.0, 0.0, 0.5])

ORD = {
    "the issue's example": lambda p: np.linalg.norm(np.array([1.0, 2.0]), ord=p),
    "a zero entry": lambda p: np.linalg.norm(V, ord=p),
    "ord and x both move, axis": lambda p: np.sum(np.linalg.norm(X * p, ord=p, axis=1) ** 2),
    "axis=0, keepdims": lambda p: np.sum(np.linalg.norm(X, ord=p * p, axis=0, keepdims=True) ** 2),
    "negative ord": lambda p: np.linalg.norm(np.array([1.0, 2.0, 3.0]), ord=-p),
    "ord near 1": lambda p: np.linalg.norm(V, ord=p - 0.7),
}


@pytest.mark.parametrize("name", ORD)
def test_norm_ord_is_differentiated(name):
    check_every_mode(ORD[name], 1.7)


def test_norm_ord_of_complex_vector():
    f = lambda p: np.linalg.norm(np.array([1 + 2j, -0.5j, 0.3]), ord=p)  # noqa: E731
    slope = first_difference(f, 2.3)
    np.testing.assert_allclose(yb.grad(f)(2.3), slope, rtol=1e-6)
    np.testing.assert_allclose(yb.jvp(f, (2.3,), (1.0,))[1], slope, rtol=1e-6)


@pytest.mark.parametrize("order, rows", [(np.inf, True), (-np.inf, True), (1.0, False), (np.inf, False), (-1.0, False)])
def test_norm_discrete_ord_has_zero_derivative(order, rows):
    # ord=inf/-inf of a vector, or a matrix norm: ord picks one of a few functions, so its
    # derivative is 0 by definition, returned explicitly (debug mode would catch a dropped one)
    x = X[0] if rows else X

    def f(p, o):
        return np.linalg.norm(x * p, ord=o)

    gp, go = yb.grad(f, argnums=(0, 1))(1.3, order)
    assert go == 0.0
    np.testing.assert_allclose(gp, first_difference(lambda p: f(p, order), 1.3), rtol=1e-6)
    _, tangent = yb.jvp(f, (1.3, order), (0.0, 1.0))
    assert tangent == 0.0
    assert yb.hessian(lambda o: f(1.3, o))(order) == 0.0


# --------------------------------------------------------------------------------------------
# Random draws: shape parameters are refused when they move (forward mode, Hessians), NaN in reverse
# --------------------------------------------------------------------------------------------

# (gamma, standard_gamma, chisquare, dirichlet, beta, standard_t, f and triangular are differentiated:
# test_random_shape_gradients.py)
DRAWS = {
    "beta (Johnk's method)": (lambda rng, a: rng.beta(0.5, 0.25 * a), "b"),
    "noncentral_chisquare": (lambda rng, a: rng.noncentral_chisquare(a, 1.5), "df"),
    "dirichlet (stick-breaking)": (lambda rng, a: rng.dirichlet(np.array([0.01, 0.02 * a]))[0], "alpha"),
    "vonmises": (lambda rng, a: rng.vonmises(0.5, a), "kappa"),
    "multivariate_normal in cov": (lambda rng, a: rng.multivariate_normal(np.zeros(2), np.eye(2) * a).sum(), "cov"),
    "legacy module function": (lambda rng, a: np.random.wald(a, 1.0), "mean"),
}


@pytest.mark.parametrize("name", DRAWS)
def test_moving_shape_parameter_is_refused(name):
    draw, parameter = DRAWS[name]

    def f(a):
        return draw(np.random.default_rng(0), a)

    with pytest.raises(RuleArgumentError, match=f"{parameter}= has a nonzero tangent") as forward:
        yb.jvp(f, (2.0,), (1.0,))
    assert "does not differentiate random draws" in str(forward.value)
    assert any(__file__ in note for note in getattr(forward.value, "__notes__", ()))  # the user's line
    with pytest.raises(yb.SecondOrderError, match=f"{parameter}= has a nonzero tangent"):
        yb.hessian(f)(2.0)
    # reverse mode cannot tell the parameter from a constant: a NaN gradient, never a silent 0
    assert np.isnan(yb.grad(f)(2.0))


def test_constant_shape_parameter_and_pathwise_scale_still_work():
    # a constant shape parameter: the draw is a constant, and gamma's scale is pathwise; the same
    # seed makes the draws deterministic, so finite differences apply
    def f(s):
        rng = np.random.default_rng(0)
        return rng.gamma(2.5, s, size=3).sum() * rng.chisquare(3.0) + s * rng.beta(2.0, 3.0)

    check_every_mode(f, 1.4)
    _, tangent = yb.jvp(f, (1.4,), (0.0,))  # shape parameters with zero tangent are fine
    assert tangent == 0.0


PATHWISE = {
    "Generator.weibull": lambda a: np.random.default_rng(0).weibull(a),
    "Generator.weibull(array a, size)": lambda a: np.random.default_rng(0).weibull(np.array([a, 2 * a]), size=(3, 2)).sum(),
    "Generator.power": lambda a: np.random.default_rng(1).power(a, size=2).sum(),
    "Generator.pareto": lambda a: np.random.default_rng(2).pareto(a, size=2).sum(),
    "RandomState.pareto (module function)": lambda a: (np.random.seed(0), np.random.pareto(a, 3).sum())[1],
    "RandomState.power (module function)": lambda a: (np.random.seed(0), np.random.power(a, 3).sum())[1],
    "RandomState.weibull (module function)": lambda a: (np.random.seed(0), np.random.weibull(a) ** 2)[1],
}


@pytest.mark.parametrize("name", PATHWISE)
def test_weibull_power_pareto_are_pathwise_in_a(name):
    # one standard exponential draw transformed by a: with the seed fixed, the draw is a smooth
    # function of a that finite differences see
    check_every_mode(PATHWISE[name], 1.7)
