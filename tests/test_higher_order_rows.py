"""The rows lifted from the "Higher order" table of docs/limitations.md: ``has_aux`` of an inner
``yb.jvp`` under forward mode and second order; keywords to an inner gradient function whose
function has ``*args``, ``**kwargs`` or keyword-only parameters, in third order; third derivatives
with respect to the variables an inner ``yb.grad``, ``yb.jvp``, ``yb.vjp``, ``yb.linearize`` or
``yb.jacobian`` function captures (closures over differentiated variables), perturbation confusion
included; cotangent maps calling their own primitive on constants or without recursing (``qr``,
``svd``, ``arange``, SciPy's ``solve``).

First derivatives are checked against central differences of the function, second derivatives
(Hessians, Hessian-vector products, forward over reverse) against central differences of its
reverse-mode gradient (reverse over reverse needs only second derivatives of the inner function),
and every function is checked to leave its argument as it was.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.linalg

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from tests.test_nested_aux import (jvp_aux_array, jvp_aux_dict_of_two_arguments, jvp_only_the_aux,
                                   keyword_only_parameter, star_parameters_by_keyword,
                                   value_and_grad_of_a_closure_by_keyword, grad_aux_captures)

X = np.array([0.3, -0.7, 1.1])
DIRECTION = np.array([0.5, -1.0, 0.25])
H = 1e-5


def central(F, x, h=H):
    return np.array([(F(x + h * e) - F(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def central_jacobian(G, x, h=H):
    return np.stack([(G(x + h * e) - G(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


def check_first_order(F, x=X):
    """Forward mode (jvp, forward Jacobian) against differences of ``F``; ``x`` left unchanged."""
    before = x.copy()
    expected = central(F, x)
    _, tangent = yb.jvp(F, (x,), (DIRECTION,))
    assert tangent == pytest.approx(expected @ DIRECTION, rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(yb.jacobian(F, mode="fwd")(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, before)


def check_second_order(F, x=X, rtol=1e-6, atol=1e-7):
    """yb.hessian, yb.hvp and forward over reverse against differences of ``yb.grad(F)``."""
    before = x.copy()
    expected = central_jacobian(yb.grad(F), x)
    hessian = yb.hessian(F)(x)
    np.testing.assert_allclose(hessian, expected, rtol=rtol, atol=atol)
    _, _, (hv,) = yb.hvp(F, (x,), (DIRECTION,))
    np.testing.assert_allclose(hv, expected @ DIRECTION, rtol=rtol, atol=atol)
    np.testing.assert_allclose(yb.jvp(yb.grad(F), (x,), (DIRECTION,))[1], expected @ DIRECTION, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(x, before)
    return hessian


# ---------------------------------------------------------------- 1. has_aux of an inner yb.jvp


def jvp_aux_int(x):
    """The aux is an int: no tangent, no cotangent."""
    return yb.jvp(lambda y: (np.sum(y ** 2) * y[0], 1), (x,), (x,), has_aux=True)[1]


def jvp_aux_positional(x):
    """has_aux given by position; a float value and a 0-d array aux."""
    y, t, aux = yb.jvp(lambda z: (np.sum(np.tanh(z) * z), np.asarray(np.sum(z ** 3))), (x,), (np.sin(x),), True)
    return y * t + aux * t


JVP_AUX_CASES = [jvp_aux_array, jvp_aux_dict_of_two_arguments, jvp_only_the_aux, jvp_aux_int, jvp_aux_positional]


@pytest.mark.parametrize("F", JVP_AUX_CASES, ids=lambda F: F.__name__)
def test_forward_mode_over_jvp_with_aux(F):
    check_first_order(F)


@pytest.mark.parametrize("F", JVP_AUX_CASES, ids=lambda F: F.__name__)
def test_second_order_over_jvp_with_aux(F):
    check_second_order(F)


# ---------------------------------------------------------------- 2. keywords, third order

KEYWORD_CASES = [keyword_only_parameter, star_parameters_by_keyword, value_and_grad_of_a_closure_by_keyword]


@pytest.mark.parametrize("F", KEYWORD_CASES, ids=lambda F: F.__name__)
def test_third_order_through_keywords_of_star_and_keyword_only_parameters(F):
    check_second_order(F)


def only_keywords(y, **options):
    return np.sum(np.sin(y) * options["a"]) * options["b"] ** 2


def test_third_order_through_keywords_with_has_aux():
    def F(x):
        def inner(y, *, s):
            return np.sum(np.cos(y * s) * y), y * s ** 2

        (value, aux), gradient = yb.value_and_grad(inner, has_aux=True)(x, s=x[1])
        return value * np.sum(gradient * aux) + np.sum(yb.grad(only_keywords)(x, a=x ** 2, b=x[2]))

    check_second_order(F)


# ---------------------------------------------------------------- 4. closures over differentiated variables


def grad_of_a_closure(x):
    return np.sum(yb.grad(lambda y: np.sum(np.sin(x * y) * y))(x ** 2))


def jvp_of_a_closure(x):
    y, t = yb.jvp(lambda y: np.cos(x * y) * y, (x ** 2,), (x,))
    return np.sum(y * t)


def value_and_grad_of_a_def(x):
    s = np.sum(x ** 2)

    def inner(w, v):
        return np.sum(np.exp(-s * w) * v) + x[0] * np.sum(w ** 3)

    value, (gw, gv) = yb.value_and_grad(inner, argnums=(0, 1))(x * 0.5, np.cos(x))
    return value * np.sum(gw) + np.sum(gv ** 2)


def closure_over_a_float_and_a_list(x):
    a, parts = x[0] * x[1], [x, x[2]]
    return np.sum(yb.grad(lambda y: a * np.sum(y ** 3) + np.sum(parts[0] * y) * parts[1])(x) ** 2)


def closure_with_keywords(x):
    def inner(y, *, scale):
        return np.sum(np.sin(y * x[1]) * scale)

    return np.sum(yb.grad(inner)(x, scale=x[0] ** 2) * x)


def closure_called_twice(x):
    """Two calls of one gradient function, the captured variable used beside them."""
    gradient = yb.grad(lambda y: np.sum(np.tanh(x * y) ** 2))
    return np.sum(gradient(x) * gradient(x[::-1].copy())) * x[2]


CLOSURE_CASES = [grad_of_a_closure, jvp_of_a_closure, value_and_grad_of_a_def, closure_over_a_float_and_a_list,
                 closure_with_keywords, closure_called_twice, grad_aux_captures]


@pytest.mark.parametrize("F", CLOSURE_CASES, ids=lambda F: F.__name__)
def test_third_order_with_respect_to_captured_variables(F):
    check_second_order(F, rtol=1e-6, atol=1e-6)


def test_perturbation_confusion_at_third_order():
    # d/dx [x * d/dy (x * y)]|_{y=x} = 2x: second derivative 2; x * d/dy (x * y**2)|_{y=x} = 2x**3:
    # second derivative 12x; x * d/dy (x + y) = x: second derivative 0. Each exact and by differences
    def product(x):
        return x[0] * yb.grad(lambda y: x[0] * y)(x[0])

    def cubic(x):
        return x[0] * yb.grad(lambda y: x[0] * y ** 2)(x[0])

    def plain_sum(x):
        return x[0] * yb.grad(lambda y: x[0] + y)(0.4) + x[0] * yb.jvp(lambda y: x[0] + y, (0.4,), (1.0,))[1]

    x0 = np.array([1.3])
    for F, exact in ((product, 2.0), (cubic, 12 * x0[0]), (plain_sum, 0.0)):
        hessian = yb.hessian(F)(x0)
        assert hessian[0, 0] == pytest.approx(exact, rel=1e-12, abs=1e-12)
        assert hessian[0, 0] == pytest.approx(central_jacobian(yb.grad(F), x0)[0, 0], rel=1e-7, abs=1e-7)
        assert yb.hvp(F, (x0,), (np.ones(1),))[2][0][0] == pytest.approx(exact, rel=1e-12, abs=1e-12)


@pytest.mark.slow
def test_transforms_over_a_hessian_through_a_closure_are_refused_by_name():
    # d3/dx3 of x * d/dy (x * y**2) at y = x: a first-order transform over a Hessian runs the
    # closure's yb.grad inside a plain program (fourth order of its function), refused by name
    def cubic(x):
        return x[0] * yb.grad(lambda y: x[0] * y ** 2)(x[0])

    x0 = np.array([0.7])
    with pytest.raises(yb.NestedDifferentiationError, match=r"nested functions capturing variables \(<lambda>\) "
                                                            r"passed to yuebing.api.reverse.grad"):
        yb.jvp(lambda x: yb.hessian(cubic)(x)[0, 0], (x0,), (np.ones(1),))
    with pytest.raises(yb.NestedDifferentiationError, match=r"nested functions capturing variables \(<lambda>\) "
                                                            r"passed to yuebing.api.reverse.grad"):
        yb.grad(lambda x: yb.hessian(cubic)(x)[0, 0])(x0)


def captures_a_closure(x):
    scale = lambda t: t * x[0]  # noqa: E731 - a closure capturing x, captured by the inner function
    return np.sum(yb.grad(lambda y: np.sum(scale(y) ** 2))(x) ** 2)


def test_a_captured_closure_carrying_derivatives():
    """Third derivatives through it (refused before): its plain program is opened where the inner
    function's calls it (more: tests/test_third_order_captured_closures.py)."""
    check_second_order(captures_a_closure, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(yb.grad(captures_a_closure)(X), central(captures_a_closure, X), rtol=1e-6)


def pullback_of_a_closure(x):
    y, pullback = yb.vjp(lambda y: np.sin(x * y), x + 1.0)
    return np.sum(pullback(x)[0] * y)


def pullback_with_the_variable_passed(x):
    y, pullback = yb.vjp(lambda y, s: np.sin(s * y), x + 1.0, x)
    return np.sum(pullback(x)[0] * y)


def linearized_closure(x):
    y, linear = yb.linearize(lambda y: np.sin(x * y), x)
    return np.sum(linear(x) * y)


def jacobian_of_a_closure(x):
    return np.sum(yb.jacobian(lambda y: np.sin(x * y))(x) ** 2)


def writes_what_it_captures(x):
    count = 0.0

    def inner(y):
        nonlocal count
        count = count + 1.0
        return np.sum(np.sin(x * y)) * count

    return np.sum(yb.grad(inner)(x))


@pytest.mark.parametrize("F", [pullback_of_a_closure, linearized_closure, pullback_with_the_variable_passed,
                               pytest.param(jacobian_of_a_closure, marks=pytest.mark.slow)], ids=lambda F: F.__name__)
def test_third_order_through_pullbacks_of_closures(F):
    # the pulled-back function is an argument of a pairing: opened where the pairing calls it
    check_second_order(F, rtol=1e-6, atol=1e-6)


def test_a_nonlocal_write_of_a_captured_variable_is_refused_by_name():
    with pytest.raises(yb.NestedDifferentiationError, match=r"writes \(nonlocal\) count, a variable it captures.*"
                                                           r"pass count to inner as an argument"):
        yb.hessian(writes_what_it_captures)(X)


# ---------------------------------------------------------------- 5. cotangent maps calling their primitive

A3 = np.array([[2.0, 0.3, -0.4], [0.1, 1.5, 0.2], [-0.3, 0.4, 1.2]])
B43 = np.array([[1.0, 0.2, -0.3], [0.4, -1.1, 0.5], [0.3, 0.7, 1.3], [-0.6, 0.1, 0.8]])


@pytest.mark.slow
def test_third_order_through_arange():
    # arange's cotangent map calls arange on ints (no derivative): followed, not refused by name
    check_third_order(np.arange, 0.3, 2.9, 0.7)
    check_third_order(np.arange, 0.4, 3.1)


@pytest.mark.slow
@pytest.mark.parametrize("f, args, kwargs", [
    (np.linalg.qr, (A3,), {}), (np.linalg.qr, (B43,), {"mode": "r"}), (np.linalg.svd, (B43,), {"full_matrices": False}),
    (np.linalg.svd, (B43,), {"compute_uv": False})], ids=["qr", "qr mode r", "svd", "singular values"])
def test_third_order_through_decompositions(f, args, kwargs):
    check_third_order(f, *args, kwargs=kwargs)


@pytest.mark.slow
def test_third_order_through_scipy_solve():
    check_third_order(scipy.linalg.solve, A3, np.array([0.5, -1.0, 2.0]))
    check_third_order(scipy.linalg.solve, A3 @ A3.T, np.array([[0.5, 1.0], [-1.0, 0.2], [2.0, 0.3]]),
                      kwargs={"assume_a": "pos"})


def pullback_of_a_partial(x):
    y, pullback = yb.vjp(functools.partial(np.multiply, np.sin(x)), x + 1.0)
    return np.sum(pullback(x)[0] * y)


def test_a_partial_carrying_derivatives_through_a_pullback():
    """Refused by name before its stored values were followed (transform/third_order_partials.py)."""
    np.testing.assert_allclose(yb.grad(pullback_of_a_partial)(X), central(pullback_of_a_partial, X), rtol=1e-6)
    check_second_order(pullback_of_a_partial, rtol=1e-5, atol=1e-6)


def test_a_cotangent_map_needing_its_own_third_derivatives_is_refused_by_name():
    # scipy.linalg.eig's map calls eig again: its third derivatives would need its own again
    # (solve_triangular's and eigh's, refused here before, have forward definitions: rules/scipy_linalg_third_order.py)
    def F(x):
        return np.sum(yb.grad(lambda y: np.sum(scipy.linalg.eigvals(A3 + np.diag(y)).real ** 3))(x) ** 2)

    with pytest.raises(yb.NestedDifferentiationError, match=r"do not support scipy.linalg._decomp.eig "
                                                            r"\(its cotangent map calls it again\)"):
        yb.hessian(F)(X)


@pytest.mark.parametrize("f, args, kwargs", [
    (np.cumprod, (np.array([0.5, 0.0, -1.3, 0.0, 2.0]),), {}), (np.cumprod, (B43,), {"axis": 1}),
    pytest.param(np.prod, (B43,), {"axis": 0}, marks=pytest.mark.slow),
    (np.prod, (np.array([[0.5, 0.0, 1.5], [0.0, 0.0, 2.0]]),), {})],
    ids=["cumprod with zeros", "cumprod axis", "prod axis", "prod with zeros"])
def test_third_order_through_cumprod_and_prod(f, args, kwargs):
    # cumprod has a forward definition (the recurrence, exact at zeros); prod's map calls cumprod
    check_third_order(f, *args, kwargs=kwargs)
