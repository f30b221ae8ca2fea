"""``yb.jacobian``, ``yb.hessian`` and ``yb.hvp`` called inside a differentiated function (issue 16
item 5; api/composed_transforms.py), checked against central differences of the plain call."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

X = np.array([0.3, 0.7, -0.4])
V = np.array([1.0, -0.5, 0.25])


def vector_field(x):
    return np.sin(x) * x[0] + np.array([x[1] ** 2, x[2], x[0] * x[2]])


def energy(x):
    return np.sum(np.sin(x) * x[0] ** 2) + x[1] * x[2] ** 3


JACOBIAN_OUTSIDE = yb.jacobian(vector_field)


def jacobian_penalty(x):
    return np.sum(yb.jacobian(vector_field)(x) ** 2)


def forward_jacobian_penalty(x):
    return np.sum(np.cos(yb.jacobian(vector_field, mode="fwd")(x)))


def jacobian_made_outside(x):
    return np.sum(JACOBIAN_OUTSIDE(x) * x)


def jacobian_of_a_closure(x):
    scale = x[0] * x[1]
    return np.sum(yb.jacobian(lambda y: np.sin(y * scale))(x) ** 2)


def two_argnums(x):
    jx, jy = yb.jacobian(lambda a, b: a * b[0] + np.sin(a), argnums=(0, 1))(x, x[::-1] * 2.0)
    return np.sum(jx) + np.sum(jy ** 2)


def hessian_trace(x):
    return np.trace(yb.hessian(energy)(x)) * x[1]


def hvp_norm(x):
    value, (g,), (hv,) = yb.hvp(energy, (x,), (V,))
    return np.sum(hv ** 2) + value * np.sum(g)


SCALARS = [jacobian_penalty, forward_jacobian_penalty, jacobian_made_outside, jacobian_of_a_closure,
           two_argnums, hessian_trace, hvp_norm]


def _directional(f, x, d, h=1e-5):
    return (np.asarray(f(x + h * d)) - np.asarray(f(x - h * d))) / (2 * h)


@pytest.mark.parametrize("f", SCALARS, ids=lambda f: f.__name__)
def test_gradient_and_jvp_of_a_function_calling_a_transform(f):
    expected = _directional(f, X, V)
    np.testing.assert_allclose(np.dot(yb.grad(f)(X), V), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jvp(f, (X,), (V,))[1], expected, rtol=1e-6, atol=1e-8)


def test_jacobian_of_a_jacobian_and_of_a_gradient():
    nested = yb.jacobian(yb.jacobian(vector_field))(X)
    columns = [_directional(yb.jacobian(vector_field), X, e) for e in np.eye(3)]
    np.testing.assert_allclose(nested, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-8)
    forward = yb.jacobian(yb.jacobian(vector_field), mode="fwd")(X)
    np.testing.assert_allclose(forward, nested, rtol=1e-10, atol=1e-12)


def test_perturbations_are_not_confused():
    # d/dx [x * d/dy (x * y)]: the inner derivative holds x fixed (the plain call's differences agree)
    f = lambda x: x * yb.jacobian(lambda y: x * y + y)(1.0)  # noqa: E731
    np.testing.assert_allclose(yb.grad(f)(0.7), _directional(f, 0.7, 1.0), rtol=1e-8)


@pytest.mark.parametrize("f", [jacobian_penalty, forward_jacobian_penalty, two_argnums, jacobian_made_outside,
                               jacobian_of_a_closure], ids=lambda f: f.__name__)
def test_second_order_over_a_jacobian(f):
    # third derivatives of the Jacobian's function, against differences of the gradient
    expected = np.stack([_directional(yb.grad(f), X, e) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(yb.hessian(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.hvp(f, (X,), (V,))[2][0], expected @ V, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [hessian_trace, hvp_norm], ids=lambda f: f.__name__)
def test_second_order_refusals_name_the_transform(f):
    # fourth derivatives (second order over a Hessian): refused, never wrong
    match = {"hessian_trace": "fourth derivatives.*yb.hessian", "hvp_norm": "fourth derivatives.*yb.hvp"}[f.__name__]
    with pytest.raises(yb.NestedDifferentiationError, match=match):
        yb.hvp(f, (X,), (V,))
