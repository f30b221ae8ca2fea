"""Second order (``yb.hessian``, ``yb.hvp``) of ``scipy.integrate.quad`` (``api/quad.py``): in the
integrand's parameters (closures, ``args=``) and in the limits, against nested central differences
of yuebing's own gradient and against the Hessian of the integral's closed form (infinite ranges:
tests/test_optimize_second_order.py)."""
import numpy as np
import pytest
import scipy.integrate as si

import yuebing as yb

TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}
P = np.array([0.7, 1.3])


def nested_central(f, p, h=1e-4):
    g = yb.grad(f)
    return np.stack([(g(p + h * e) - g(p - h * e)) / (2 * h) for e in np.eye(p.size)], axis=-1)


def closure(p):
    return si.quad(lambda t: np.exp(-p[0] * t) * np.sin(p[1] * t), 0.0, 2.0, **TIGHT)[0]


def args_squared(p):
    return si.quad(lambda t, a, c: np.cos(a * t ** 2) + c * t, 0.0, 1.5, args=(p[0], p[1]), **TIGHT)[0] ** 2


def moving_limits(p):
    return si.quad(lambda t: np.exp(-p[0] * t * t), p[1], 2.0 * p[0], **TIGHT)[0]


def break_points(p):
    return si.quad(lambda t: np.abs(t - 1.0) * p[0] ** 2 + np.sin(p[1] * t), 0.0, 2.0, points=[1.0], **TIGHT)[0]


@pytest.mark.parametrize("f", [closure, args_squared, moving_limits, break_points])
def test_against_nested_differences(f):
    expected = nested_central(f, P)
    hessian = yb.hessian(f)(P)
    assert np.max(np.abs(hessian - expected)) <= 1e-7 * np.max(np.abs(expected))
    v = np.array([0.3, -1.1])
    _, _, (product,) = yb.hvp(f, (P,), (v,))
    np.testing.assert_allclose(product, hessian @ v, rtol=1e-12, atol=1e-14)


def closed_forms():
    """Integrals with closed forms, the closed form differentiated by yuebing's np rules."""
    def limits(p):
        return si.quad(np.sin, p[1], p[0] ** 2, **TIGHT)[0] * p[1]

    def limits_exact(p):
        return (np.cos(p[1]) - np.cos(p[0] ** 2)) * p[1]

    def exponential(p):
        return si.quad(lambda t, a: np.exp(a * t) * p[1], 0.0, p[1], args=(p[0],), **TIGHT)[0]

    def exponential_exact(p):
        return p[1] * (np.exp(p[0] * p[1]) - 1.0) / p[0]

    return [(limits, limits_exact), (exponential, exponential_exact)]


@pytest.mark.parametrize("pair", closed_forms())
def test_against_closed_form(pair):
    """The accuracy: the quadrature's tolerance (1e-13 asked), well below finite differences'."""
    f, exact = pair
    np.testing.assert_allclose(yb.hessian(f)(P), yb.hessian(exact)(P), rtol=1e-10, atol=1e-12)


def test_default_tolerances_accuracy():
    """At quad's default tolerances (1.49e-8) the Hessian is as accurate as the integral."""
    def f(p):
        return si.quad(lambda t: np.exp(-p[0] * t) * t ** p[1], 0.5, 3.0)[0]

    def g(p):  # the same integral by a 2001-point Gauss-Legendre rule, differentiated by yuebing
        nodes, weights = np.polynomial.legendre.leggauss(60)
        t = 1.75 + 1.25 * nodes
        return 1.25 * np.sum(weights * np.exp(-p[0] * t) * t ** p[1])

    np.testing.assert_allclose(yb.hessian(f)(P), yb.hessian(g)(P), rtol=1e-8, atol=1e-10)


def test_unused_integral_and_infinite_range():
    def unused(p):
        si.quad(lambda t: p[0] * t, 0.0, 1.0)
        return p[0] * p[1]

    np.testing.assert_allclose(yb.hessian(unused)(P), [[0.0, 1.0], [1.0, 0.0]])
    # an infinite range (tests/test_optimize_second_order.py): ∫_0^∞ exp(-p t) dt = 1/p
    np.testing.assert_allclose(yb.hessian(lambda p: si.quad(lambda t: np.exp(-p[0] * t), 0.0, np.inf)[0])(P)[0, 0],
                               2.0 / P[0] ** 3, rtol=1e-8)
