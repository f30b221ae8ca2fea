"""``functools.partial`` given to ``yb.vjp``, ``yb.jvp``, ``yb.linearize``, ``yb.jacobian`` and
``yb.grad`` inside a differentiated function (issue 13/16).

Reverse mode over ``yb.vjp(functools.partial(np.multiply, A), x)`` raised ``StructureError:
_Marker is not a tangent type``: the inner pass zeroed the partial's outer fdata with
``T.scale``, whose ``NoFData`` parts (its numbers, a constant array) are no tangent
(``api/composition._zeroed_fdata``). Behind it, every mode dropped what the partial stored:
reverse mode dropped the rdata of a stored number (over ``yb.grad``, ``yb.jvp``, ``yb.jacobian``),
forward mode over ``yb.jvp``/``yb.linearize``/``yb.grad`` read the partial's tangent as a
closure's (``_dual_tangent``), second order over ``yb.jvp`` and ``yb.grad`` dropped a stored
number's cotangent, and third order refused every partial, even of constants
(``transform/third_order_partials.py`` now follows a call of a partial made outside the function
under the inner ``yb.grad``). Every function is checked in every mode against central
differences (``tests/modes.py``: grad, jvp, jacobian(fwd) against differences of the function;
hvp and hessian against differences of ``yb.grad``, itself checked first).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from tests.modes import check_every_mode

A = np.array([1.5, -0.7, 2.0])
X = np.array([0.3, 0.8, 1.3])


def _scaled(u, v, scale=1.0):
    return u * v * scale


def _wave(a, u, b=0.0):
    return np.sin(a * u) + b * u ** 2


def _loss(c, u, w=1.0):
    return np.sum(np.sin(c * u) * w)


GLOBAL_PARTIAL = functools.partial(_wave, A, b=0.5)


# ------------------------------------------------------------------ yb.vjp of a partial

def brief_example(x):
    y, pb = yb.vjp(functools.partial(np.multiply, A), x)
    return np.sum(pb(np.ones(3))[0] * x)


def multiply_capturing_x(x):
    y, pb = yb.vjp(functools.partial(np.multiply, x * 2.0), x)
    return np.sum(pb(np.ones(3))[0] * x) + np.sum(y * x)


def add_capturing_x(x):
    y, pb = yb.vjp(functools.partial(np.add, x ** 2), x * 1.0)
    return np.sum(pb(x ** 3)[0] * y)


def constant_array_keyword(x):
    y, pb = yb.vjp(functools.partial(_scaled, scale=A), x, x)
    return np.sum(pb(np.ones(3))[0] * x)


def array_keyword_capturing_x(x):
    y, pb = yb.vjp(functools.partial(_scaled, scale=x * 3.0), x, x[::-1] * 1.0)
    a, b = pb(np.cos(x))
    return np.sum(a * x) + np.sum(b ** 2)


def float_keyword_capturing_x(x):
    y, pb = yb.vjp(functools.partial(_scaled, scale=x[0]), x, x)
    return np.sum(pb(np.ones(3))[0] * x ** 2)


def stored_float(x):
    y, pb = yb.vjp(functools.partial(_loss, x[0] * 2.0), x)
    return np.sum(pb(y * x[2])[0] * x)


def partial_of_a_partial(x):
    p = functools.partial(functools.partial(_wave, x ** 2), b=x[0])
    y, pb = yb.vjp(p, x)
    return np.sum(pb(np.ones(3))[0] * x)


def global_partial(x):
    y, pb = yb.vjp(GLOBAL_PARTIAL, x)
    return np.sum(pb(x)[0] * y)


def captured_variables_as_arguments(x):
    s = x[1] * 2.0

    def inner(s, u, w):
        return np.tanh(u * s) * w

    y, pb = yb.vjp(functools.partial(inner, s, w=x ** 2), x)
    return np.sum(pb(x)[0]) + np.sum(y)


# ------------------------------------------------------------------ the other transforms

def jvp_of_a_partial(x):
    y, t = yb.jvp(functools.partial(_wave, x[0] * 1.5, b=x[2]), (x,), (x ** 2,))
    return np.sum(t * x) + np.sum(y)


def jvp_of_a_constant_partial(x):
    y, t = yb.jvp(functools.partial(_wave, A), (x,), (x ** 2,))
    return np.sum(t * x)


def linearize_a_partial(x):
    y, f_jvp = yb.linearize(functools.partial(_wave, x * 1.5), x)
    return np.sum(f_jvp(x ** 2) * x)


def jacobian_of_a_partial(x):
    return np.sum(yb.jacobian(functools.partial(_wave, x[0] * 1.5))(x) * x)


def grad_of_a_partial(x):
    return np.sum(yb.grad(functools.partial(_loss, x * 2.0, w=x[0]))(x) * x)


def grad_of_a_partial_storing_a_float(x):
    return np.sum(yb.grad(functools.partial(_loss, x[0] * 2.0))(x) * x)


def value_and_grad_of_a_partial(x):
    v, g = yb.value_and_grad(functools.partial(_loss, x[1] ** 2))(x)
    return v * np.sum(g * x)


def grad_of_a_partial_with_aux(x):
    g, aux = yb.grad(functools.partial(lambda c, u: (_loss(c, u), c * u[0]), x[0] * 1.5), has_aux=True)(x)
    return np.sum(g * x) + aux


CASES = [brief_example, multiply_capturing_x, add_capturing_x, constant_array_keyword, array_keyword_capturing_x,
         float_keyword_capturing_x, stored_float, partial_of_a_partial, global_partial,
         captured_variables_as_arguments, jvp_of_a_partial, jvp_of_a_constant_partial, linearize_a_partial,
         jacobian_of_a_partial, grad_of_a_partial, grad_of_a_partial_storing_a_float, value_and_grad_of_a_partial,
         grad_of_a_partial_with_aux]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X, rtol=1e-5, atol=1e-6)


def _calls_a_global_partial(x):
    return np.sum(GLOBAL_PARTIAL(x) ** 2) + x[0] * np.sum(functools.partial(_wave, x[1], b=x[2])(x))


def test_third_order_through_partials():
    """A partial made outside the function under the inner ``yb.grad`` (a global) is followed in
    third order (it was refused), beside one made inside."""
    check_third_order(_calls_a_global_partial, X.copy())


def _partial_of_a_closure(x):
    s = x[1] * 2.0

    def inner(u, w):
        return np.tanh(u * s) * w

    y, pb = yb.vjp(functools.partial(inner, w=x ** 2), x)
    return np.sum(pb(x)[0]) + np.sum(y)


class _Model:
    def __init__(self, w):
        self.w = w

    def predict(self, u):
        return np.sin(self.w * u)


MODEL = _Model(A)


def _bound_method(x):
    y, pb = yb.vjp(MODEL.predict, x)
    return np.sum(pb(x)[0])


def _bound_method_wrapped(x):
    y, pb = yb.vjp(lambda u: MODEL.predict(u), x)
    return np.sum(pb(x)[0])


@pytest.mark.parametrize("f", [_partial_of_a_closure, _bound_method], ids=["partial of a closure", "bound method"])
def test_what_second_order_cannot_follow_is_refused_by_name(f):
    """A partial of a function capturing variables carrying derivatives, and a bound method (an
    internal TypeError before), under ``yb.hvp``; first order works."""
    with pytest.raises(yb.NestedDifferentiationError, match=r"cannot differentiate a bound method, or a "
                                                            r"functools.partial of a function capturing variables"):
        yb.hvp(f, (X.copy(),), (X.copy(),))
    check_every_mode(f, X, second_order=False)


@pytest.mark.parametrize("f", [captured_variables_as_arguments, _bound_method_wrapped],
                         ids=["partial of the function taking them", "bound method wrapped"])
def test_the_advice_works(f):
    check_every_mode(f, X)


def stored_values_read_as_attributes(x):
    """``p.args``, ``p.keywords`` and ``p.func`` were read as constants in every mode (the
    gradient through them was 0: ``rules/functools_rules.read_part``)."""
    p = functools.partial(_scaled, x * 2.0, scale=x[0])
    q = GLOBAL_PARTIAL
    return np.sum(p.args[0] ** 2) * p.keywords["scale"] + np.sum(p.func(x, x, scale=1.0)) + np.sum(q.args[0] * x)


def test_stored_values_read_as_attributes():
    check_every_mode(stored_values_read_as_attributes, X)
    check_third_order(stored_values_read_as_attributes, X.copy())
