"""``scipy.special.fresnel``, ``airy``, ``sici``, ``shichi`` (several outputs) and ``hyp2f1``
(rules/scipy_special_outputs.py) inside functions: every mode (grad, jvp, jacobian(mode="fwd"),
hvp, hessian) against central differences, third order against differences of the Hessian,
gradients against ``jax.scipy.special`` where JAX has the function, and the refusal of a moving
parameter of ``hyp2f1``. The rules' own cases run in tests/test_rules.py."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import yuebing as yb
from tests.modes import central, check_every_mode
from yuebing.rules.core import RuleArgumentError

X = np.array([0.4, 0.9, 1.7])


def fresnel_mix(x):
    s, c = sp.fresnel(x)
    return np.sum(s * c) + np.sum(s ** 2)


def airy_mix(x):
    ai, aip, bi, bip = sp.airy(x - 1.0)
    return np.sum(ai * bip) + np.sum(aip ** 2) - np.sum(bi)


def sici_mix(x):
    si, ci = sp.sici(2.0 * x)
    return np.sum(si * ci)


def shichi_mix(x):
    shi, chi = sp.shichi(x)
    return np.sum(shi) + np.sum(chi ** 2)


def hyp2f1_mix(x):
    return np.sum(sp.hyp2f1(0.5, 1.5, 2.5, x / 2.0) ** 2) + np.sum(sp.hyp2f1(1, 2, 3, -x))


def scalar_airy(t):
    return sp.airy(t)[0] * sp.fresnel(t)[1]


FUNCTIONS = [fresnel_mix, airy_mix, sici_mix, shichi_mix, hyp2f1_mix]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


def test_scalar_argument_every_mode():
    check_every_mode(scalar_airy, 0.7)


def hyp2f1_integer_parameters(x):
    return np.sum(sp.hyp2f1(1, 2, 3, x / 2.0) ** 2) + np.sum(sp.hyp2f1(2, 1, 4, -x))


def _check_third_order(f):
    direction = np.array([0.3, -0.8, 0.5])
    third = yb.hessian(lambda x: yb.grad(f)(x) @ direction)(X.copy())
    expected = central(lambda x: yb.hessian(f)(x) @ direction, X, 1e-5)
    np.testing.assert_allclose(third, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.slow  # (third order / the jax oracle: the CI's slow step)
@pytest.mark.parametrize("f", [*FUNCTIONS[:4], hyp2f1_integer_parameters], ids=lambda f: f.__name__)
def test_third_order_against_differences_of_the_hessian(f):
    _check_third_order(f)


def struve_and_gammainc(x):
    return np.sum(sp.struve(1.5, x) * sp.gammainc(2.5, x)) + np.sum(sp.betainc(0.5, 1.5, x / 2.0) ** 2)


@pytest.mark.slow  # (third order: the CI's slow step)
@pytest.mark.parametrize("f", [hyp2f1_mix, struve_and_gammainc], ids=lambda f: f.__name__)
def test_third_order_with_float_parameters(f):
    """A float parameter held constant (``hyp2f1(0.5, ...)``, ``struve(1.5, x)``, ``gammainc(2.5,
    x)``): third order runs ``elementwise_fixed``'s forward definition, whose held parameter adds
    ``held_parameter``'s 0 (its NaN partial once met the constant's zero tangent in a plain
    product, and every third derivative came out NaN)."""
    _check_third_order(f)


def test_third_order_refuses_a_moving_parameter_by_name():
    def moving(x):
        return np.sum(sp.gammainc(x[0] + 1.0, x) ** 2)

    with pytest.raises(RuleArgumentError, match="scipy.special.gammainc: yuebing does not differentiate with "
                                                "respect to a"):
        yb.hessian(lambda x: yb.grad(moving)(x) @ np.array([0.3, -0.8, 0.5]))(X.copy())


def test_third_order_of_a_parameter_moving_only_off_the_direction_is_nan_not_zero():
    """The parameter depends on ``x[1]`` only; along ``e0`` its tangent is 0 but its partial is
    still unknown where the derivative reaches ``x[1]``: NaN there (reverse mode's marker)."""
    def off(x):
        return np.sum(sp.gammainc(x[1] * x[2] + 1.0, x) ** 2)

    e0 = np.array([1.0, 0.0, 0.0])
    _, _, (hv,) = yb.hvp(lambda x: yb.grad(off)(x) @ e0, (X.copy(),), (e0,))
    assert np.isnan(hv[1]) and np.isnan(hv[2])
    held = X[1] * X[2] + 1.0  # d^3/dx0^3 does not reach the parameter: that of the constant's function

    def constant(x):
        return np.sum(sp.gammainc(held, x) ** 2)

    expected = central(lambda x: yb.hessian(constant)(x)[0, 0], X, 1e-5)[0]
    np.testing.assert_allclose(hv[0], expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f, order", [(lambda x: sp.sici(x)[0], (1.0, 0.0, -1.0 / 3.0)),
                                      (lambda x: sp.shichi(x)[0], (1.0, 0.0, 1.0 / 3.0))],
                         ids=["Si", "Shi"])
def test_derivatives_at_zero(f, order):
    """``Si'(0) = 1``, ``Si''(0) = 0``, ``Si'''(0) = -1/3`` (``Shi``: ``+1/3``): the Taylor
    polynomial of ``sin x / x`` near 0 carries them; differences of the lower order check each."""
    first = yb.grad(f)
    second = yb.grad(yb.grad(f))
    third = yb.grad(yb.grad(yb.grad(f)))
    np.testing.assert_allclose(first(0.0), central(f, 0.0, 1e-5), rtol=1e-8)
    np.testing.assert_allclose(second(0.0), central(first, 0.0, 1e-4), atol=1e-8)
    np.testing.assert_allclose(third(0.0), central(second, 0.0, 1e-4), rtol=1e-6)
    np.testing.assert_allclose([first(0.0), second(0.0), third(0.0)], order, atol=1e-12)
    assert yb.hessian(f)(0.0) == pytest.approx(second(0.0), abs=1e-14)


def test_complex_argument_is_holomorphic():
    z = 0.6 + 0.3j
    for f in (lambda z: sp.fresnel(z)[0], lambda z: sp.airy(z)[3], lambda z: sp.hyp2f1(1.0, 2.0, 3.0, z)):
        _, tangent = yb.jvp(f, (z,), (1.0 + 0.0j,))
        h = 1e-6
        assert tangent == pytest.approx((f(z + h) - f(z - h)) / (2 * h), rel=1e-7)


@pytest.mark.parametrize("position, name", [(0, "a"), (1, "b"), (2, "c")])
def test_moving_hyp2f1_parameter_is_refused_or_nan(position, name):
    def f(a, b, c, z):
        return np.sum(sp.hyp2f1(a, b, c, z))

    args = (np.array([0.5, 1.5]), np.array([1.0, 2.0]), np.array([2.5, 3.0]), np.array([0.2, -0.4]))
    tangents = tuple(np.ones(2) if k == position else np.zeros(2) for k in range(4))
    with pytest.raises(RuleArgumentError, match=f"hyp2f1.*with respect to {name} .*nonzero tangent"):
        yb.jvp(f, args, tangents)
    with pytest.raises(RuleArgumentError, match=f"with respect to {name}"):
        yb.hvp(f, args, tangents)
    gradients = yb.grad(f, argnums=(0, 1, 2, 3))(*args)
    assert np.all(np.isnan(gradients[position]))  # never a silent 0
    assert np.all(np.isfinite(gradients[3]))


def test_keywords_are_refused():
    with pytest.raises(RuleArgumentError, match="fresnel.*out"):
        yb.grad(lambda x: sp.fresnel(x, out=(np.zeros(2), np.zeros(2)))[0].sum())(X[:2])


jax = pytest.importorskip("jax")


@pytest.mark.slow  # (third order / the jax oracle: the CI's slow step)
@pytest.mark.parametrize("name, ours, theirs, x", [
    ("fresnel", lambda x: np.sum(np.prod(sp.fresnel(x), axis=0)), "fresnel", X),
    ("hyp2f1", lambda x: np.sum(sp.hyp2f1(0.5, 1.5, 2.5, x / 2.0)), "hyp2f1", X),
    ("sici", lambda x: np.sum(sp.sici(x)[0] * sp.sici(x)[1]), "sici", X),
])
def test_against_jax(name, ours, theirs, x):
    jax.config.update("jax_enable_x64", True)
    js = jax.scipy.special
    jnp = jax.numpy
    function = {"fresnel": lambda x: jnp.sum(jnp.prod(jnp.stack(js.fresnel(x)), axis=0)),
                "hyp2f1": lambda x: jnp.sum(js.hyp2f1(0.5, 1.5, 2.5, x / 2.0)),
                "sici": lambda x: jnp.sum(js.sici(x)[0] * js.sici(x)[1])}[theirs]
    expected = np.asarray(jax.grad(function)(jnp.asarray(x)))
    np.testing.assert_allclose(yb.grad(ours)(x.copy()), expected, rtol=1e-7)
    expected_hessian = np.asarray(jax.hessian(function)(jnp.asarray(x)))
    np.testing.assert_allclose(yb.hessian(ours)(x.copy()), expected_hessian, rtol=1e-6, atol=1e-10)


@pytest.mark.slow  # (third order / the jax oracle: the CI's slow step)
def test_third_order_with_float_parameters_against_jax():
    """Third derivatives of ``gammainc(2.5, x)`` and ``betainc(0.5, 1.5, x / 2)`` (float
    parameters held constant) equal JAX's (``jax.hessian`` of the gradient's contraction)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    js = jax.scipy.special
    direction = np.array([0.3, -0.8, 0.5])

    def f(x):
        return np.sum(sp.gammainc(2.5, x) ** 2) + np.sum(sp.betainc(0.5, 1.5, x / 2.0) * x)

    def f_jax(x):
        return jax.numpy.sum(js.gammainc(2.5, x) ** 2) + jax.numpy.sum(js.betainc(0.5, 1.5, x / 2.0) * x)

    third = yb.hessian(lambda x: yb.grad(f)(x) @ direction)(X.copy())
    expected = jax.hessian(lambda x: jax.grad(f_jax)(x) @ direction)(X.copy())
    np.testing.assert_allclose(third, np.asarray(expected), rtol=1e-6, atol=1e-9)
