"""scipy.integrate's quadrature: trapezoid, simpson, cumulative_trapezoid (rules/scipy_integrate.py,
whose CASES tests/test_rules.py runs through check_rule; here their values against SciPy's and their
derivatives in dx, x and y against finite differences) and quad (api/quad.py: under the integral
sign in args= and captured parameters, the fundamental theorem in the limits, infinite limits),
against closed forms, finite differences and check_rule."""
import math

import numpy as np
import pytest
import scipy.integrate as si

import yuebing as yb
from yuebing.testing import check_rule

RNG = np.random.default_rng(7)


def central_differences(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# --------------------------------------------------------------------------------------------
# Sampled data
# --------------------------------------------------------------------------------------------

SAMPLED = [
    (si.trapezoid, {}), (si.simpson, {}), (si.cumulative_trapezoid, {}), (si.cumulative_trapezoid, {"initial": 0}),
]


@pytest.mark.parametrize("n", [2, 3, 6, 7])
@pytest.mark.parametrize("function,keywords", SAMPLED, ids=["trapezoid", "simpson", "cumtrapz", "cumtrapz0"])
def test_sampled_values_match_scipy(function, keywords, n):
    """The definitions yuebing differentiates compute SciPy's values (to rounding)."""
    y = RNG.standard_normal((3, n))
    x = np.cumsum(RNG.uniform(0.2, 1.0, n))
    calls = (lambda y_: function(y_, x, **keywords), lambda y_: function(y_, x=np.tile(x, (3, 1)), **keywords),
             lambda y_: function(y_.T, x, axis=0, **keywords), lambda y_: function(y_, dx=0.3, **keywords))
    for call in calls:
        plain = call(y)
        np.testing.assert_allclose(yb.vjp(call, y)[0], plain, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(yb.jvp(call, (y,), (np.ones_like(y),))[0], plain, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("function", [si.trapezoid, si.simpson, si.cumulative_trapezoid])
def test_sampled_derivatives_in_x_and_dx(function):
    y = RNG.standard_normal(7)
    x = np.cumsum(RNG.uniform(0.2, 1.0, 7))
    weights = RNG.standard_normal(np.shape(function(y, x)))

    def loss_x(x_):
        return np.sum(weights * function(y, x_))

    def loss_dx(dx):
        return np.sum(weights * function(y, dx=dx))

    np.testing.assert_allclose(yb.grad(loss_x)(x), central_differences(loss_x, x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(yb.grad(loss_dx)(0.4), central_differences(lambda d: loss_dx(float(d[0])), [0.4])[0],
                               rtol=1e-7)
    assert yb.jvp(loss_dx, (0.4,), (1.0,))[1] == pytest.approx(yb.grad(loss_dx)(0.4), rel=1e-12)


def test_sampled_second_order():
    """trapezoid/simpson are differentiated like user code, so Hessians work (against finite
    differences of the gradient)."""
    y = RNG.standard_normal(6)

    def area(x):
        return si.simpson(y * x, x=x) + si.trapezoid(np.sin(x), x)

    x = np.cumsum(RNG.uniform(0.2, 1.0, 6))
    hessian = yb.hessian(area)(x)
    np.testing.assert_allclose(hessian, np.array([central_differences(lambda v: yb.grad(area)(v)[i], x)
                                                  for i in range(6)]), rtol=1e-6, atol=1e-8)


def test_sampled_refusals_are_scipys():
    with pytest.raises(ValueError, match="initial"):
        yb.grad(lambda y: np.sum(si.cumulative_trapezoid(y, initial=1.0)))(np.ones(3))


# --------------------------------------------------------------------------------------------
# quad
# --------------------------------------------------------------------------------------------


def gaussian_piece(c, a, b):
    return si.quad(lambda t: np.exp(-c * t * t), a, b, epsabs=1e-13, epsrel=1e-13)[0]


def gaussian_piece_exact(c, a, b):
    """``∫_a^b exp(-c t²) dt`` by the error function."""
    from scipy.special import erf
    return 0.5 * np.sqrt(np.pi / c) * (erf(np.sqrt(c) * b) - erf(np.sqrt(c) * a))


def test_quad_closure_and_limits_against_closed_form():
    point = (0.7, 0.2, 1.5)
    got = yb.grad(gaussian_piece, argnums=(0, 1, 2))(*point)
    want = yb.grad(gaussian_piece_exact, argnums=(0, 1, 2))(*point)
    np.testing.assert_allclose(got, want, rtol=1e-11)
    direction = (1.0, 0.5, -0.3)
    np.testing.assert_allclose(yb.jvp(gaussian_piece, point, direction)[1],
                               yb.jvp(gaussian_piece_exact, point, direction)[1], rtol=1e-11)


def test_quad_args_and_infinite_limit():
    def tail(c, a):
        return si.quad(lambda t, c: np.exp(-c * t * t), a, np.inf, args=(c,), epsabs=1e-13, epsrel=1e-12)[0]

    def exact(c, a):
        from scipy.special import erfc
        return 0.5 * np.sqrt(np.pi / c) * erfc(np.sqrt(c) * a)

    np.testing.assert_allclose(yb.grad(tail, argnums=(0, 1))(0.7, 0.3), yb.grad(exact, argnums=(0, 1))(0.7, 0.3),
                               rtol=1e-9)
    np.testing.assert_allclose(yb.jvp(tail, (0.7, 0.3), (1.0, 2.0))[1], yb.jvp(exact, (0.7, 0.3), (1.0, 2.0))[1],
                               rtol=1e-9)

    def both_infinite(c):
        return si.quad(lambda t: np.exp(-c * t * t), -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12)[0]

    assert yb.grad(both_infinite)(0.7) == pytest.approx(-0.5 * np.sqrt(np.pi) * 0.7 ** -1.5, rel=1e-9)


def test_quad_array_parameters_check_rule():
    """An integrand with array parameters in args= and in a closure; reversed limits."""
    def moments(w, v, a, b):
        total = si.quad(lambda t, w: np.sin(w[0] * t) * np.exp(w[1] * t) + v @ np.array([t, t * t]), a, b,
                        args=(w,), epsabs=1e-13, epsrel=1e-13)
        return total[0]

    check_rule(moments, np.array([1.3, -0.4]), np.array([0.5, 0.2]), 1.7, 0.3)


def test_quad_against_finite_differences_with_points():
    def kinked(p):
        return si.quad(lambda t: np.abs(t - 0.5) * p[0] + np.cos(p[1] * t), 0.0, 1.0, points=[0.5])[0]

    p = np.array([1.2, 2.3])
    np.testing.assert_allclose(yb.grad(kinked)(p), central_differences(kinked, p), rtol=1e-7)


def test_quad_refusals():
    def error_estimate(c):
        return si.quad(lambda t: np.exp(-c * t), 0.0, 1.0)[1]

    with pytest.raises(ValueError, match="error estimate"):
        yb.grad(error_estimate)(0.5)
    assert math.isnan(yb.jvp(error_estimate, (0.5,), (1.0,))[1])  # no derivative computed: NaN, never 0
    with pytest.raises(ValueError, match="weight"):
        yb.grad(lambda c: si.quad(lambda t: c * t, 0.0, 1.0, weight="cos", wvar=2.0)[0])(0.5)


def test_quad_constant_integrand_and_singular_fixed_endpoint():
    """A limit that does not move contributes nothing, even where the integrand is infinite."""
    def f(c):
        return si.quad(lambda t: c / np.sqrt(t), 0.0, 1.0)[0]

    assert yb.grad(f)(0.5) == pytest.approx(2.0, rel=1e-9)
    assert yb.jvp(f, (0.5,), (1.0,))[1] == pytest.approx(2.0, rel=1e-9)
