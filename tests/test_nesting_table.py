"""The table of nestings (issue 16 item 5): every pair and triple of transforms either gives the
derivative that central differences of the lower-order result give, or is in ``REFUSED`` with
the text of its error, so that no nesting is silently wrong.

A row is a function ``F`` of a vector that calls one transform inside (``INNER``); a pair is an
outer transform applied to ``F`` (first order: checked against differences of ``F``; second
order: against differences of ``yb.grad(F)``); a triple is an outer transform over a middle one
over ``F`` (three derivatives deep: checked against differences of the middle result).
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, -1.0, 0.25])
W = np.array([-0.2, 0.4, 0.9])
H = 1e-5


def scalar_inner(y):
    return np.sum(np.sin(y) * y ** 2)


def vector_inner(y):
    return np.sin(y) * y ** 2 + np.exp(0.3 * y)


def with_aux(y):
    return scalar_inner(y), np.cos(y) * y


def _uses_vjp(x):
    y, pullback = yb.vjp(vector_inner, x)
    return np.sum(pullback(np.cos(x))[0] * y)


def _uses_jvp(x):
    y, t = yb.jvp(vector_inner, (x,), (np.cos(x),))
    return np.sum(y * t)


def _uses_linearize(x):
    y, linear = yb.linearize(vector_inner, x)
    return np.sum(linear(x ** 2) * y)


def _uses_value_and_grad(x):
    value, gradient = yb.value_and_grad(scalar_inner)(x)
    return value * np.sum(gradient * x)


def _uses_grad_with_aux(x):
    gradient, aux = yb.grad(with_aux, has_aux=True)(x)
    return np.sum(gradient * aux) + np.sum(aux ** 2)


def _grad_of_a_closure(x):
    # the inner function captures x, the variable the outer transforms differentiate
    return np.sum(yb.grad(lambda y: np.sum(np.sin(x * y) * y))(x ** 2))


def _jvp_of_a_closure(x):
    y, t = yb.jvp(lambda y: np.cos(x * y) * y, (x ** 2,), (x,))
    return np.sum(y * t)


#: functions of x calling one transform inside
INNER = {
    "grad_of_a_closure": _grad_of_a_closure,
    "jvp_of_a_closure": _jvp_of_a_closure,
    "grad": lambda x: np.sum(yb.grad(scalar_inner)(x) ** 2),
    "value_and_grad": _uses_value_and_grad,
    "grad_has_aux": _uses_grad_with_aux,
    "vjp": _uses_vjp,
    "jvp": _uses_jvp,
    "linearize": _uses_linearize,
    "jacobian": lambda x: np.sum(yb.jacobian(vector_inner)(x) ** 2),
    "jacobian_fwd": lambda x: np.sum(np.cos(yb.jacobian(vector_inner, mode="fwd")(x))),
    "hessian": lambda x: np.trace(yb.hessian(scalar_inner)(x)) * x[1],
    "hvp": lambda x: np.sum(yb.hvp(scalar_inner, (x,), (V,))[2][0] ** 2),
}

#: first-order transforms as directional derivatives of a scalar function along V
FIRST = {
    "grad": lambda F: yb.grad(F)(X) @ V,
    "value_and_grad": lambda F: yb.value_and_grad(F)(X)[1] @ V,
    "vjp": lambda F: yb.vjp(F, X)[1](1.0)[0] @ V,
    "jvp": lambda F: yb.jvp(F, (X,), (V,))[1],
    "jacobian": lambda F: yb.jacobian(F)(X) @ V,
    "jacobian_fwd": lambda F: yb.jacobian(F, mode="fwd")(X) @ V,
    "linearize": lambda F: yb.linearize(F, X)[1](V),
}

#: second-order transforms as Hessian-vector products along V
SECOND = {
    "hessian": lambda F: yb.hessian(F)(X) @ V,
    "hvp": lambda F: yb.hvp(F, (X,), (V,))[2][0],
    "jacobian_of_grad": lambda F: yb.jacobian(yb.grad(F), mode="fwd")(X) @ V,
    "jvp_of_grad": lambda F: yb.jvp(yb.grad(F), (X,), (V,))[1],
    "grad_of_grad": lambda F: yb.grad(lambda x: yb.grad(F)(x) @ V)(X),
}

#: first-order transforms as scalar functions of x (the middle of a triple), read along W
MIDDLE = {
    "grad": lambda F: lambda x: yb.grad(F)(x) @ W,
    "value_and_grad": lambda F: lambda x: (lambda v, g: v * (g @ W))(*yb.value_and_grad(F)(x)),
    "vjp": lambda F: lambda x: yb.vjp(F, x)[1](1.0)[0] @ W,
    "jvp": lambda F: lambda x: yb.jvp(F, (x,), (W,))[1],
    "jacobian": lambda F: lambda x: yb.jacobian(F)(x) @ W,
    "linearize": lambda F: lambda x: yb.linearize(F, x)[1](W),
}

#: the outer transforms of triples (first order: the three-deep derivative along V)
OUTER = {k: FIRST[k] for k in ("grad", "jvp", "jacobian_fwd", "vjp")}

_FOURTH = "fourth derivatives"

#: (outer, inner) pairs and (outer, middle, inner) triples that raise, with their error text.
#: Second order over a transform that is itself second order is a fourth derivative.
REFUSED = {
    **{(outer, inner): _FOURTH for outer in SECOND for inner in ("hessian", "hvp")},
}

#: inners whose triples would be fourth order (second order inside): left out of the triples
_SECOND_ORDER_INNER = ("hessian", "hvp")


def along(F, x, d, h=H):
    """The derivative of ``F`` at ``x`` along ``d`` by central differences."""
    return (np.asarray(F(x + h * d)) - np.asarray(F(x - h * d))) / (2 * h)


def check(key, derivative, lower, *, rtol=1e-6, atol=1e-7):
    """``derivative()`` matches differences of ``lower`` along V, or raises ``REFUSED[key]``."""
    if key in REFUSED:
        with pytest.raises(yb.NestedDifferentiationError, match=REFUSED[key]):
            derivative()
        return
    np.testing.assert_allclose(derivative(), along(lower, X, V), rtol=rtol, atol=atol)


@pytest.mark.parametrize("inner", INNER)
@pytest.mark.parametrize("outer", FIRST)
def test_first_order_over_each_transform(outer, inner):
    F = INNER[inner]
    check((outer, inner), lambda: FIRST[outer](F), F)


@pytest.mark.parametrize("inner", INNER)
@pytest.mark.parametrize("outer", SECOND)
def test_second_order_over_each_transform(outer, inner):
    F = INNER[inner]
    check((outer, inner), lambda: SECOND[outer](F), yb.grad(F))


#: the default run checks every seventh triple (a fixed sample, every outer, middle and inner among
#: them); the slow step (.ci/run) checks them all
TRIPLE_SAMPLE = 7  # (prime to the number of inner functions: every one is sampled)
TRIPLES = [
    pytest.param(outer, middle, inner, id=f"{outer}-{middle}-{inner}",
                 marks=() if k % TRIPLE_SAMPLE == 0 else pytest.mark.slow)
    for k, (outer, middle, inner) in enumerate(
        (o, m, i) for o in OUTER for m in MIDDLE for i in INNER if i not in _SECOND_ORDER_INNER)
]


@pytest.mark.parametrize("outer, middle, inner", TRIPLES)
def test_three_deep(outer, middle, inner):
    G = MIDDLE[middle](INNER[inner])
    check((outer, middle, inner), lambda: OUTER[outer](G), G)


def test_the_refused_list_names_only_real_nestings():
    names = set(FIRST) | set(SECOND) | set(MIDDLE) | set(INNER)
    assert all(set(key) <= names for key in REFUSED)


@pytest.mark.parametrize("outer", ["grad", "jvp", "hessian"])
def test_perturbation_confusion(outer):
    # d/dx [x * d/dy (x + y)] = 1 and d/dx [x * d/dy (x * y)]|_{y=x} = 2x, and their second
    # derivatives (0 and 2), by every outer transform over an inner yb.grad and yb.jvp
    def sum_case(x):
        return x[0] * yb.grad(lambda y: x[0] + y)(0.4) + x[0] * yb.jvp(lambda y: x[0] + y, (0.4,), (1.0,))[1]

    def product_case(x):
        return x[0] * yb.grad(lambda y: x[0] * y)(x[0])

    x0 = np.array([1.3])
    if outer == "hessian":
        # third order through the captured x: second derivatives 0 and 2
        for F, exact in ((sum_case, 0.0), (product_case, 2.0)):
            got = yb.hessian(F)(x0)[0, 0]
            assert got == pytest.approx(along(yb.grad(F), x0, np.ones(1))[0], rel=1e-7, abs=1e-7)
            assert got == pytest.approx(exact, rel=1e-12, abs=1e-12)
        return
    for F, exact in ((sum_case, 2.0), (product_case, 2 * x0[0])):
        got = yb.grad(F)(x0)[0] if outer == "grad" else yb.jvp(F, (x0,), (np.ones(1),))[1]
        assert got == pytest.approx(along(F, x0, np.ones(1)), rel=1e-7)
        assert got == pytest.approx(exact, rel=1e-12)
