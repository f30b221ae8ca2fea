"""Third derivatives through a closure that the function under ``yb.grad`` captures and that
itself captures variables carrying derivatives (``scale = lambda t: t * x[0]``, a model closure
read by a loss closure, both made in the differentiated function).

Third order opens the inner function's plain program (its captured variables as parameters,
``implicit_stationary._user_call``); a captured variable that was itself such a closure was
refused, read as a constant it would have lost its derivatives. It is now called opened in turn
where the opened program calls it (``nested._opened_function_call``), to any depth. A function
nested in either that reads captured variables through cells (a generator expression over the
closure, a lambda the closure returns) is still refused by name. Every mode against central
differences (``tests/modes.py``: Hessians against differences of ``yb.grad``).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

X = np.array([0.3, -0.7, 1.1])


def captured_lambda(x):
    scale = lambda t: t * x[0]  # noqa: E731
    def g(y):
        return np.sum(np.sin(scale(y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


def model_read_by_a_loss(x):
    w = x * 2.0

    def model(y):
        return np.tanh(w * y)

    def loss(y):
        return np.sum((model(y) - 0.3) ** 2) * x[1]
    return np.sum(yb.grad(loss)(x * 0.5) * x)


def two_levels(x):
    a = x[2]

    def inner(t):
        return t * a

    def middle(t):
        return np.exp(inner(t))

    def g(y):
        return np.sum(middle(y) * y)
    return np.sum(yb.grad(g)(x) ** 2)


def pullback_through_a_captured_closure(x):
    scale = lambda t: t * x[0]  # noqa: E731
    def f(y):
        return np.sin(scale(y))
    _, pullback = yb.vjp(f, x)
    return np.sum(pullback(x)[0] ** 2)


def reduced_by_it(x):
    add = lambda a, b: a + b * x[0]  # noqa: E731
    def g(y):
        return np.sum(functools.reduce(add, [y, y ** 2, np.sin(y)]) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


def partial_of_it(x):
    scale = lambda t, k: t * x[0] * k  # noqa: E731
    def g(y):
        return np.sum(np.sin(functools.partial(scale, k=2.0)(y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


def sorted_by_it(x):
    key = lambda t: t * x[0]  # noqa: E731
    def g(y):
        return np.sum(np.array(sorted([y[0], y[1], y[2]], key=key)) * np.arange(3.0) * y)
    return np.sum(yb.grad(g)(x) ** 2)


def passed_to_a_helper(x):
    scale = lambda t: t * x[0]  # noqa: E731
    def apply(f, y):
        return f(y)
    def g(y):
        return np.sum(np.sin(apply(scale, y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


def rebound_after_it_was_made(x):
    c = x[0]
    scale = lambda t: t * c  # noqa: E731 - reads c as last bound (x[1] * 2), late binding
    c = x[1] * 2.0
    def g(y):
        return np.sum(np.sin(scale(y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


FUNCTIONS = [captured_lambda, model_read_by_a_loss, two_levels, pullback_through_a_captured_closure, reduced_by_it,
             partial_of_it, sorted_by_it, passed_to_a_helper, rebound_after_it_was_made]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_mode(function) -> None:
    check_every_mode(function, X)


def mapped_in_a_generator(x):
    scale = lambda t: t * x[0]  # noqa: E731
    def g(y):
        return sum(np.sum(np.sin(v) ** 2) for v in map(scale, [y, 2 * y]))
    return np.sum(yb.grad(g)(x) ** 2)


def returns_a_closure(x):
    def make():
        return lambda t: t * x[1]
    def g(y):
        return np.sum(np.sin(make()(y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


def held_in_a_list(x):
    fs = [lambda t: t * x[0]]
    def g(y):
        return np.sum(np.sin(fs[0](y)) ** 2)
    return np.sum(yb.grad(g)(x) ** 2)


@pytest.mark.parametrize("function, name", [(mapped_in_a_generator, "scale"), (returns_a_closure, "make"),
                                            (held_in_a_list, "fs")])
def test_what_is_still_refused_by_name(function, name) -> None:
    """A function nested in them reading captured variables through cells, or closures in a list:
    refused by name in third order (first order works)."""
    np.testing.assert_allclose(yb.grad(function)(X), yb.jacobian(function, mode="fwd")(X), rtol=1e-10)
    with pytest.raises(yb.NestedDifferentiationError, match=f"not through {name}, a function that captures"):
        yb.hessian(function)(X)
