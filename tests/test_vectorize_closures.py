"""``np.vectorize`` of a function capturing variables that carry derivatives (a lambda over a
parameter): the object carries the closure's derivative data (rules/numpy_vectorize.py), in
reverse, forward, batched forward and second order, checked against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

GRID = np.linspace(0.0, 1.0, 5)


def captures_a_scalar(a):
    g = np.vectorize(lambda v: np.sin(v * a))
    return np.sum(g(GRID)) * a


def captures_an_element(x):
    a = x[0]
    return np.sum(np.vectorize(lambda v: v * a + np.cos(v))(x))


def captures_through_a_def(x):
    scale = np.sum(x ** 2)

    def bump(v):
        return np.exp(-v * scale)

    return np.sum(np.vectorize(bump)(x) * x)


def made_once_called_twice(x):
    a = x[1] * 2.0
    g = np.vectorize(lambda v: v * v * a)
    return np.sum(g(x)) + np.sum(g(x[::-1] + 1.0))


OUTSIDE = np.vectorize(lambda v: np.tanh(2.0 * v))


def made_outside(x):
    return np.sum(OUTSIDE(x) * x)


CASES = [(captures_a_scalar, 0.7), (captures_an_element, np.array([0.3, -0.5, 0.9])),
         (captures_through_a_def, np.array([0.2, 0.4])), (made_once_called_twice, np.array([0.5, 1.5, -0.3])),
         (made_outside, np.array([0.1, -0.6]))]
IDS = [f.__name__ for f, _ in CASES]


def _direction(x):
    return np.linspace(0.5, 1.5, np.size(x)).reshape(np.shape(x)) if np.ndim(x) else 1.0


def _directional(f, x, d, h=1e-6):
    return (f(x + h * d) - f(x - h * d)) / (2 * h)


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_gradient_and_jvp_match_differences(f, x):
    d = _direction(x)
    expected = _directional(f, x, d)
    np.testing.assert_allclose(np.sum(yb.grad(f)(x) * d), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(yb.jvp(f, (x,), (d,))[1], expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_hvp_matches_differences_of_the_gradient(f, x):
    d = _direction(x)
    _, _, hv = yb.hvp(f, (x,), (d,))
    h = 1e-5
    expected = (yb.grad(f)(x + h * d) - yb.grad(f)(x - h * d)) / (2 * h)
    np.testing.assert_allclose(hv[0], expected, rtol=1e-5, atol=1e-8)


def test_forward_jacobian_is_batched_and_right():
    x = np.array([0.3, -0.5, 0.9])
    g = lambda x: np.vectorize(lambda v: v * x[0] + v * v)(x)  # noqa: E731
    jac = yb.jacobian(g, mode="fwd")(x)
    np.testing.assert_allclose(jac, yb.jacobian(g)(x), rtol=1e-12)
    columns = [_directional(g, x, e) for e in np.eye(3)]
    np.testing.assert_allclose(jac, np.stack(columns, axis=1), rtol=1e-6, atol=1e-9)
