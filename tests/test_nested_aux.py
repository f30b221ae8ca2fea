"""Nested differentiation through an inner ``yb.grad``/``yb.value_and_grad`` with ``has_aux`` or
called with keyword arguments (``api/composition.py``, ``api/nested.py``): reverse over it,
forward over it, and a Hessian through it.

The aux is an ordinary output of the inner function (first order through it); a keyword argument
is not differentiated by the inner transform but carries the outer derivative. Every derivative is
checked against central differences of the plain function, which calls the inner transform
plainly.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

X = np.array([0.3, -0.7, 1.1])
DIRECTION = np.array([0.5, -1.0, 0.25])


def central(F, x, h=1e-5):
    return np.array([(F(x + h * e) - F(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def central_jacobian(G, x, h=1e-5):
    return np.stack([(G(x + h * e) - G(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


def central_hessian(F, x, h=1e-4):
    return central_jacobian(lambda z: central(F, z, h), x, h)


# ---------------------------------------------------------------- has_aux


def value_and_grad_aux_value(x):
    """The issue's first case: the value of an inner value_and_grad with has_aux."""
    (value, aux), gradient = yb.value_and_grad(lambda y: (np.sum(y ** 3), np.sum(y)), has_aux=True)(x)
    return value + aux * np.sum(gradient)


def grad_aux_captures(x):
    """The inner function captures x; the aux (depending on x through y and the capture) is used."""
    gradient, aux = yb.grad(lambda y: (np.sum(np.sin(y) * y) * x[1], np.cos(y) * x[0]), has_aux=True)(x)
    return np.sum(gradient * aux)


def value_and_grad_dict_aux(x):
    """A structured aux holding an int, used with the value and the gradient."""
    (value, aux), gradient = yb.value_and_grad(lambda y: (np.sum(y ** 4), {"a": y * 3, "n": 2}), has_aux=True)(x)
    return value * np.sum(gradient) + np.sum(aux["a"] ** 2) * aux["n"]


def grad_aux_is_the_argument(x):
    """Vector output; the aux is the inner argument itself (and a label)."""
    gradient, (aux, label) = yb.grad(lambda y: (np.sum(y ** 3) * x[0], (y, "label")), has_aux=True)(x)
    assert label == "label"
    return gradient * aux ** 2


def only_the_aux(x):
    """Two argnums, the gradient unused: only the aux carries a cotangent."""
    _, aux = yb.grad(lambda a, b: (np.sum(a ** 2 * b), a * b), argnums=(0, 1), has_aux=True)(x, x[::-1].copy())
    return np.sum(aux ** 2)


AUX_CASES = [value_and_grad_aux_value, grad_aux_captures, value_and_grad_dict_aux, only_the_aux]


@pytest.mark.parametrize("F", AUX_CASES)
def test_reverse_over_has_aux(F):
    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("F", AUX_CASES)
def test_forward_over_has_aux(F):
    _, tangent = yb.jvp(F, (X,), (DIRECTION,))
    assert tangent == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(yb.jacobian(F, mode="fwd")(X), central(F, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_through_an_aux_that_is_the_argument(mode):
    G = grad_aux_is_the_argument
    np.testing.assert_allclose(yb.jacobian(G, mode=mode)(X), central_jacobian(G, X), rtol=1e-6, atol=1e-8)


def test_the_issue_cases_have_aux():
    x = np.array([0.3, 0.7])
    F = lambda x: yb.value_and_grad(lambda y: (np.sum(y ** 3), np.sum(y)), has_aux=True)(x)[0][0]  # noqa: E731
    G = lambda x: np.sum(yb.grad(lambda y: (np.sum(y ** 3) * x[0], y * 2), has_aux=True)(x)[0])  # noqa: E731
    for f in (F, G):
        np.testing.assert_allclose(yb.grad(f)(x), central(f, x), rtol=1e-6)


def test_forward_mode_runs_the_inner_function_once(capsys):
    def inner(y, scale=1.0):
        print("inner")
        return np.sum(y ** 3) * scale, y

    def F(x):
        gradient, aux = yb.grad(inner, has_aux=True)(x, scale=2.0)
        return np.sum(gradient * aux)

    F(X)
    assert capsys.readouterr().out.count("inner") == 1
    _, tangent = yb.jvp(F, (X,), (DIRECTION,))
    assert capsys.readouterr().out.count("inner") == 1
    assert tangent == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6)


# ---------------------------------------------------------------- keyword arguments


def scaled(y, a, b=2.0, c=3.0):
    return np.sum(y ** 3) * a + np.sum(np.sin(y)) * b * c


def keyword_carries_the_derivative(x):
    return np.sum(yb.grad(scaled)(x, x[0], c=x[1] ** 2))  # b's default bound, c by keyword


def keywords_out_of_order(x):
    gradient = yb.grad(scaled, argnums=(0, 1))(x, x[1], c=np.cos(x[2]), b=x[0])
    return np.sum(gradient[0] ** 2) + gradient[1]


def value_and_grad_keywords(x):
    value, gradient = yb.value_and_grad(scaled)(x, a=1.5, b=x[0])
    return value * np.sum(gradient)


KEYWORD_CASES = [keyword_carries_the_derivative, keywords_out_of_order, value_and_grad_keywords]


@pytest.mark.parametrize("F", KEYWORD_CASES)
def test_reverse_over_keywords(F):
    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("F", KEYWORD_CASES)
def test_forward_over_keywords(F):
    _, tangent = yb.jvp(F, (X,), (DIRECTION,))
    assert tangent == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("F", KEYWORD_CASES)
def test_hessian_through_keywords(F):
    hessian = yb.hessian(F)(X)
    np.testing.assert_allclose(hessian, central_hessian(F, X), rtol=1e-6, atol=1e-6 * np.abs(hessian).max())


def test_the_issue_case_keywords():
    x = np.array([0.3, 0.7])
    F = lambda x: np.sum(yb.grad(lambda y, scale=1.0: np.sum(y ** 3) * scale)(x, scale=2.0))  # noqa: E731
    np.testing.assert_allclose(yb.grad(F)(x), central(F, x), rtol=1e-6)
    _, _, product = yb.hvp(F, (x,), (DIRECTION[:2],))
    np.testing.assert_allclose(product[0], central_hessian(F, x) @ DIRECTION[:2], rtol=1e-5)


def test_keywords_with_aux():
    def F(x):
        (value, aux), gradient = yb.value_and_grad(lambda y, s=1.0: (np.sum(y ** 3) * s, y * s), has_aux=True)(x, s=x[2])
        return value + np.sum(gradient * aux)

    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6)
    assert yb.jvp(F, (X,), (DIRECTION,))[1] == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6)


# ---------------------------------------------------------------- keywords of star and keyword-only parameters


def keyword_only(y, *, scale=1.0):
    return np.sum(y ** 3) * scale


def star_and_keywords(y, *rest, shift=0.0, **options):
    return np.sum(np.sin(y) * sum(rest)) + shift * np.sum(y ** 2) * options["w"]


def keyword_only_parameter(x):
    return np.sum(yb.grad(keyword_only)(x, scale=x[0] ** 2) ** 2)


def star_parameters_by_keyword(x):
    gradient = yb.grad(star_and_keywords, argnums=(0, 1))(x, x[1], 2.0, shift=x[2], w=np.cos(x[0]))
    return np.sum(gradient[0] ** 2) + gradient[1]


def value_and_grad_of_a_closure_by_keyword(x):
    value, gradient = yb.value_and_grad(lambda y, **kw: np.sum(np.sin(y * x[0])) * kw["s"])(x, s=x[1])
    return value * np.sum(gradient)


KEYWORD_ONLY_CASES = [keyword_only_parameter, star_parameters_by_keyword, value_and_grad_of_a_closure_by_keyword]


@pytest.mark.parametrize("F", KEYWORD_ONLY_CASES)
def test_keywords_of_star_and_keyword_only_parameters(F):
    # passed as keywords to the inner pass (reverse: captured by a functools.partial)
    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6, atol=1e-8)
    _, tangent = yb.jvp(F, (X,), (DIRECTION,))
    assert tangent == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6, abs=1e-8)


# (third order through these and through grad_aux_captures: tests/test_higher_order_rows.py)


# ---------------------------------------------------------------- has_aux under second order


def aux_beside_the_gradient(x):
    """The issue 16 case: the gradient and the aux both used (the aux an array)."""
    gradient, aux = yb.grad(lambda y: (np.sum(y ** 3), np.sin(y)), has_aux=True)(x)
    return np.sum(gradient * aux) + np.sum(aux ** 2)


HESSIAN_AUX_CASES = [value_and_grad_aux_value, value_and_grad_dict_aux, only_the_aux, aux_beside_the_gradient]


@pytest.mark.parametrize("F", HESSIAN_AUX_CASES)
def test_hessian_through_has_aux(F):
    # third derivatives (of the inner value) and second (of the aux), against differences of yb.grad
    expected = central_jacobian(yb.grad(F), X)
    np.testing.assert_allclose(yb.hessian(F)(X), expected, rtol=1e-6, atol=1e-7)
    _, _, (hv,) = yb.hvp(F, (X,), (DIRECTION,))
    np.testing.assert_allclose(hv, expected @ DIRECTION, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(yb.jvp(yb.grad(F), (X,), (DIRECTION,))[1], expected @ DIRECTION, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- has_aux of an inner yb.jvp


def jvp_aux_array(x):
    y, t, aux = yb.jvp(lambda z: (np.sin(z) * z, np.cos(z) * z[0]), (x,), (np.cos(x),), has_aux=True)
    return np.sum(t ** 2) + np.sum(aux * y)


def jvp_aux_dict_of_two_arguments(x):
    def inner(z, w):
        return np.sum(np.sin(z) * w), {"a": z * w, "b": w[0]}

    y, t, aux = yb.jvp(inner, (x, x ** 2), (np.cos(x), x), has_aux=True)
    return t * y + np.sum(aux["a"] ** 2) * aux["b"]


def jvp_only_the_aux(x):
    _, _, aux = yb.jvp(lambda z: (np.sum(z), np.exp(z) * z[1]), (x,), (x,), has_aux=True)
    return np.sum(aux ** 2)


@pytest.mark.parametrize("F", [jvp_aux_array, jvp_aux_dict_of_two_arguments, jvp_only_the_aux])
def test_reverse_over_jvp_with_aux(F):
    # the aux is f's output at the primals: its cotangent goes to them as J_aux^T abar
    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jacobian(F)(X), central(F, X), rtol=1e-6, atol=1e-8)
