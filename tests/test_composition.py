"""Transforms compose (DESIGN.md §2): ``grad``, ``value_and_grad``, ``vjp`` and its pullback,
``jvp``, ``linearize`` called inside a function that ``grad``, ``jvp``, ``jacobian`` or
``hessian`` differentiates, two and three deep, with the perturbations kept apart.

Every derivative is checked against central differences of the composed function (nested
central differences for third derivatives), and the perturbation-confusion identities of
Siskind and Pearlmutter (``d/dx [x * d/dy (x + y)] = 1``) against differences as well.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

H = 1e-5
X = np.array([0.3, -0.7, 1.1])
DIRECTION = np.array([0.5, -1.0, 0.25])


def central(F, x, h=H):
    """The gradient of scalar ``F`` at ``x`` (a float or an array) by central differences."""
    if isinstance(x, float):
        return (F(x + h) - F(x - h)) / (2 * h)
    return np.array([(F(x + h * e) - F(x - h * e)) / (2 * h) for e in np.eye(x.size)]).reshape(x.shape)


def central_jacobian(G, x, h=H):
    """The Jacobian of array-valued ``G`` at array ``x`` by central differences."""
    return np.stack([(G(x + h * e) - G(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


# ---------------------------------------------------------------- inner functions


def scalar_inner(y):
    return np.sum(np.sin(y) * y ** 2)


def vector_inner(y):
    return np.sin(y) * y ** 2 + np.exp(0.3 * y)


def uses_grad(x):
    return np.sum(yb.grad(scalar_inner)(x) ** 2) + np.sum(x)


def uses_value_and_grad(x):
    value, gradient = yb.value_and_grad(scalar_inner)(x)
    return value * np.sum(gradient * x)


def uses_vjp(x):
    y, pullback = yb.vjp(vector_inner, x)
    (cotangent,) = pullback(np.cos(x))  # the cotangent depends on x too
    return np.sum(cotangent * y)


def uses_jvp(x):
    y, t = yb.jvp(vector_inner, (x,), (np.cos(x),))
    return np.sum(y * t)


def uses_linearize(x):
    y, linear = yb.linearize(vector_inner, x)
    return np.sum(linear(x ** 2) * y)


def captures_with_grad(x):
    # the inner gradient's function captures x, the variable the outer transform differentiates
    return np.sum(yb.grad(lambda y: np.sum(np.sin(x * y) * y))(x ** 2))


def captures_with_vjp(x):
    y, pullback = yb.vjp(lambda y: np.sin(x * y), x + 1.0)
    return np.sum(pullback(x)[0] * y)


def captures_with_jvp(x):
    y, t = yb.jvp(lambda y: np.cos(x * y) * y, (x ** 2,), (x,))
    return np.sum(y * t)


INNER = [uses_grad, uses_value_and_grad, uses_vjp, uses_jvp, uses_linearize, captures_with_grad,
         captures_with_vjp, captures_with_jvp]


@pytest.mark.parametrize("F", INNER, ids=lambda F: F.__name__)
def test_reverse_over_each_transform(F):
    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("F", INNER, ids=lambda F: F.__name__)
def test_value_and_grad_over_each_transform(F):
    value, gradient = yb.value_and_grad(F)(X)
    assert value == pytest.approx(F(X), rel=1e-12)
    np.testing.assert_allclose(gradient, central(F, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("F", INNER, ids=lambda F: F.__name__)
def test_forward_over_each_transform(F):
    value, tangent = yb.jvp(F, (X,), (DIRECTION,))
    assert value == pytest.approx(F(X), rel=1e-12)
    assert tangent == pytest.approx(np.dot(central(F, X), DIRECTION), rel=1e-6)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("F", [uses_vjp, uses_jvp, captures_with_grad], ids=lambda F: F.__name__)
def test_jacobian_over_transforms(F, mode):
    np.testing.assert_allclose(yb.jacobian(F, mode=mode)(X), central(F, X), rtol=1e-6, atol=1e-8)


def test_vector_outputs_of_nested_jvp_under_both_modes():
    def tangent_out(x):
        return yb.jvp(vector_inner, (x,), (x ** 2,))[1]

    for mode in ("fwd", "rev"):
        np.testing.assert_allclose(yb.jacobian(tangent_out, mode=mode)(X), central_jacobian(tangent_out, X),
                                   rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- second order of the gradient


def test_jacobian_of_grad_is_the_hessian():
    for mode in ("fwd", "rev"):
        np.testing.assert_allclose(yb.jacobian(yb.grad(scalar_inner), mode=mode)(X), yb.hessian(scalar_inner)(X),
                                   rtol=1e-10)
    np.testing.assert_allclose(yb.hessian(scalar_inner)(X), central_jacobian(yb.grad(scalar_inner), X), rtol=1e-6)


def test_hessian_of_a_function_calling_grad():
    hessian = yb.hessian(uses_grad)(X)
    np.testing.assert_allclose(hessian, central_jacobian(yb.grad(uses_grad), X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-10)


# ---------------------------------------------------------------- three deep


def cube_sin(x):
    return np.sin(x) * x ** 3


def test_third_derivatives_three_deep():
    x0 = 0.7
    third = yb.grad(yb.grad(yb.grad(cube_sin)))(x0)
    assert third == pytest.approx(central(yb.grad(yb.grad(cube_sin)), x0), rel=1e-6)
    h = 1e-2  # nested central differences of the function itself
    nested = (cube_sin(x0 + 2 * h) - 2 * cube_sin(x0 + h) + 2 * cube_sin(x0 - h) - cube_sin(x0 - 2 * h)) / (2 * h ** 3)
    assert third == pytest.approx(nested, rel=1e-3)
    for outer in (lambda g: yb.jvp(g, (x0,), (1.0,))[1], lambda g: yb.grad(g)(x0)):
        for middle in (lambda x: yb.jvp(yb.grad(cube_sin), (x,), (1.0,))[1], yb.grad(yb.grad(cube_sin))):
            assert outer(middle) == pytest.approx(third, rel=1e-9)


def test_third_derivatives_through_a_pullback():
    def inner(x):
        y, pullback = yb.vjp(vector_inner, x)
        return np.sum(pullback(y)[0])

    def outer(x):  # forward over a pullback, inside reverse mode over it
        return yb.jvp(inner, (x,), (np.ones_like(x),))[1] * np.sum(x)

    # second order through a pullback: third derivatives of vector_inner, against differences of
    # the gradient (which reverse mode over the pullback gives)
    expected = central_jacobian(yb.grad(inner), X)
    for second_order in (yb.hessian(inner), yb.jacobian(yb.grad(inner), mode="fwd")):
        np.testing.assert_allclose(second_order(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.grad(outer)(X), central(outer, X), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- perturbation confusion


def inner_derivative(transform, body):
    """``d/dy body(y)`` at ``y`` by ``transform`` (``grad`` or ``jvp``)."""
    if transform == "grad":
        return lambda y: yb.grad(body)(y)
    return lambda y: yb.jvp(body, (y,), (1.0,))[1]


@pytest.mark.parametrize("inner", ["grad", "jvp"])
@pytest.mark.parametrize("outer", ["grad", "jvp", "jacobian"])
def test_perturbation_confusion(outer, inner):
    def sum_case(x):  # d/dx [x * d/dy (x + y)] = 1, the inner derivative evaluated at y = x0
        return x * inner_derivative(inner, lambda y: x + y)(0.4)

    def product_case(x):  # d/dx [x * d/dy (x * y)]|_{y = x} = 2x
        return x * inner_derivative(inner, lambda y: x * y)(x)

    def differentiate(F, x):
        if outer == "grad":
            return yb.grad(F)(x)
        if outer == "jvp":
            return yb.jvp(F, (x,), (1.0,))[1]
        return float(yb.jacobian(F)(np.float64(x)))

    x0 = 1.3
    for F, exact in ((sum_case, 1.0), (product_case, 2 * x0)):
        assert differentiate(F, x0) == pytest.approx(central(F, x0), rel=1e-7)
        assert differentiate(F, x0) == pytest.approx(exact, rel=1e-12)


def test_perturbation_confusion_through_a_pullback():
    def F(x):  # d/dx [x * (d/dy (x * y))^T 1] = 2x at y = x
        _, pullback = yb.vjp(lambda y: x * y, x)
        return x * pullback(1.0)[0]

    x0 = 0.9
    assert yb.grad(F)(x0) == pytest.approx(central(F, x0), rel=1e-7)
    assert yb.jvp(F, (x0,), (1.0,))[1] == pytest.approx(central(F, x0), rel=1e-7)


# ---------------------------------------------------------------- what is still refused


@pytest.mark.parametrize("F", [uses_vjp, uses_jvp, uses_linearize], ids=lambda F: F.__name__)
def test_hessian_over_forward_mode_and_pullbacks(F):
    expected = central_jacobian(yb.grad(F), X)
    np.testing.assert_allclose(yb.hessian(F)(X), expected, rtol=1e-6, atol=1e-8)
    _, _, (hv,) = yb.hvp(F, (X,), (DIRECTION,))
    np.testing.assert_allclose(hv, expected @ DIRECTION, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("F", [captures_with_grad, captures_with_vjp, captures_with_jvp], ids=lambda F: F.__name__)
def test_hessian_over_transforms_of_closures(F):
    # third order through the variables the inner function captures (tests/test_higher_order_rows.py)
    expected = central_jacobian(yb.grad(F), X)
    np.testing.assert_allclose(yb.hessian(F)(X), expected, rtol=1e-6, atol=1e-7)


def test_has_aux_inside_works_in_reverse_and_forward():
    def F(x):
        return yb.jvp(lambda y: (np.sum(y ** 2), 1), (x,), (x,), has_aux=True)[1]

    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6)
    assert yb.jvp(F, (X,), (DIRECTION,))[1] == pytest.approx(central(F, X) @ DIRECTION, rel=1e-6)


# ---------------------------------------------------------------- pullbacks of several arguments


def _product(a, b, c, d, e, f):
    return np.sin(a) * b * c + d * e * np.cos(f)


def pullback_of_many_aliased(x):
    # one array passed in six places: each slot's own partial, as yb.vjp gives (the pairing of
    # a tuple of primals gave every slot the total derivative: 6x the first-order value)
    _, pullback = yb.vjp(_product, x, x, x, x, x, x)
    return np.sum(pullback(np.cos(x))[0] * x) + np.sum(pullback_second(x))


def pullback_second(x):
    _, pullback = yb.vjp(_product, x, x ** 2, 2.0, x[0], x, x)
    return pullback(x)[1] ** 2


def pullback_with_an_int(x):
    _, pullback = yb.vjp(lambda a, n, b: np.sin(a) ** n * b, x, 3, x[1])
    gradients = pullback(np.cos(x))
    assert gradients[1] is yb.tangents.NoTangent
    return np.sum(gradients[0] ** 2) + gradients[2]


def pullback_of_two(x):
    _, pullback = yb.vjp(lambda a, b: np.sin(a) * b ** 2 + a * b, x, x * 2.0)
    ga, gb = pullback(np.cos(x))
    return np.sum(ga ** 2) + np.sum(gb * x)


@pytest.mark.parametrize("F", [pullback_of_many_aliased, pullback_second, pullback_with_an_int, pullback_of_two],
                         ids=lambda F: F.__name__)
def test_pullbacks_of_several_arguments_in_every_order(F):
    F_sum = (lambda x: np.sum(F(x))) if F is pullback_second else F
    np.testing.assert_allclose(yb.grad(F_sum)(X), central(F_sum, X), rtol=1e-6, atol=1e-8)
    assert yb.jvp(F_sum, (X,), (DIRECTION,))[1] == pytest.approx(central(F_sum, X) @ DIRECTION, rel=1e-6)
    expected = central_jacobian(yb.grad(F_sum), X)
    np.testing.assert_allclose(yb.hessian(F_sum)(X), expected, rtol=1e-6, atol=1e-7)
    _, _, (hv,) = yb.hvp(F_sum, (X,), (DIRECTION,))
    np.testing.assert_allclose(hv, expected @ DIRECTION, rtol=1e-6, atol=1e-7)


def test_a_list_cotangent_holding_the_argument_in_second_order():
    def F(x):
        _, pullback = yb.vjp(lambda a, b: [np.sin(a) * b, a * b], x, x[0])
        return np.sum(pullback([np.cos(x), x])[0] ** 2)

    np.testing.assert_allclose(yb.grad(F)(X), central(F, X), rtol=1e-6)
    np.testing.assert_allclose(yb.hessian(F)(X), central_jacobian(yb.grad(F), X), rtol=1e-6, atol=1e-7)
