"""Closures over variables with several values follow Python's cell semantics, in every mode.

A nested function or lambda reads a captured variable when it is called, not when it is made:
lambdas made in a comprehension or a loop all see the variable's last value, a closure called
after the variable is reassigned sees the new value. The normaliser keeps such variables in
cells, as if a nested function wrote them with ``nonlocal`` (``frontend/closures.py``), so the
derivative goes to the value read. Checked against the plain call and central differences in
reverse, forward and second order (``all_modes.check_all_modes``).
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes


def lambdas_in_a_list_comprehension(x):
    coeffs = [x, 2.0 * x, x * x]
    fs = [lambda t: a * t for a in coeffs]  # every lambda sees the last a
    return fs[0](x) + fs[1](1.5)


def lambdas_in_a_comprehension_of_two_loops(x):
    fs = [lambda t: a * b * t for a in [x, 2.0 * x] for b in [x * x, 3.0]]
    return fs[0](x)


def lambda_called_inside_its_comprehension(x):
    return sum((lambda t: t * v)(2.0) for v in [x, 2.0 * x * x])


def lambdas_in_a_for_loop(x):
    fs = []
    for a in [x, x * x, 3.0 * x]:
        fs.append(lambda t: a * t)
    return fs[0](x) + fs[1](2.0)


def lambdas_over_a_range_variable(x):
    fs = []
    for i in range(3):
        fs.append(lambda v: v * i)
    return fs[0](x) + x * fs[1](x)


def variable_rebound_in_a_loop(x):
    fs = []
    for i in range(3):
        y = x * (i + 1.0)
        fs.append(lambda: y)
    return fs[0]() + fs[2]() * x


def lambdas_made_in_a_while_loop(x):
    fs = []
    y = x
    while y < 3.0:
        fs.append(lambda t: y * t)
        y = y * 1.5
    return fs[0](x) + len(fs)


def reassigned_after_capture(x):
    scale = x
    g = lambda t: scale * t  # noqa: E731
    scale = 2.0 * x * x
    return g(1.0) + scale


def parameter_reassigned_after_capture(x):
    g = lambda t: x * t  # noqa: E731
    x = x * x
    return g(3.0)


def array_reassigned_after_capture(x):
    w = x
    g = lambda t: np.sum(w * t)  # noqa: E731
    w = np.array([1.0, 2.0]) * x
    return g(np.array([x, 3.0]))


def helper_called_in_the_loop_that_binds_its_variable(x):
    y = 0.0

    def g(t):
        return y * t
    s = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        s = s + g(x)
    return s


def _make_after_reassigning(x):
    c = x
    g = lambda t: c * t * t  # noqa: E731
    c = np.sin(x)
    return g


def closure_returned_and_called_after_reassignment(x):
    return _make_after_reassigning(x)(x)


def closure_kept_while_reassigned_twice(x):
    c = x

    def g(t):
        return c * t
    c = x * x
    h = g
    c = c + 1.0
    return h(x)


def nested_two_deep(x):
    y = x

    def outer(t):
        def inner(u):
            return y * u
        return inner(t)
    first = outer(x)
    y = np.cos(x)
    return first + outer(2.0)


def reassigned_inside_the_nested_function_too(x):
    y = x

    def outer():
        z = y
        g = lambda: z * y  # noqa: E731
        z = z * 3.0
        return g()
    first = outer()
    y = x * x
    return first + outer()


def comprehension_run_in_a_loop(x):
    kept = []
    for k in range(2):
        fs = [lambda t: a * t for a in [x, (k + 2.0) * x]]  # each run: its own a, its last value
        kept.append(fs[0])
    return kept[0](x) + kept[1](1.0)


def comprehension_in_a_comprehension(x):
    grid = [[lambda: a * b for a in [x, 2.0 * x]] for b in [x * x, 3.0]]
    return grid[0][0]() + grid[1][1]() * x


def dict_comprehension_in_a_loop(x):
    saved = []
    for k in range(3):
        d = {i: (lambda t: v * t) for i, v in enumerate([x, x * k])}
        saved.append(d[0])
    return sum(g(x) for g in saved)


CASES = [comprehension_run_in_a_loop, comprehension_in_a_comprehension, dict_comprehension_in_a_loop,
         lambdas_in_a_list_comprehension, lambdas_in_a_comprehension_of_two_loops,
         lambda_called_inside_its_comprehension, lambdas_in_a_for_loop, lambdas_over_a_range_variable,
         variable_rebound_in_a_loop, lambdas_made_in_a_while_loop, reassigned_after_capture,
         parameter_reassigned_after_capture, array_reassigned_after_capture,
         helper_called_in_the_loop_that_binds_its_variable, closure_returned_and_called_after_reassignment,
         closure_kept_while_reassigned_twice, nested_two_deep, reassigned_inside_the_nested_function_too]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_late_binding_in_every_mode(f):
    check_all_modes(f, 0.7)


def lambdas_over_the_rows_of_an_array(x):
    fs = [lambda t: np.dot(row, t) for row in x.reshape(2, 2)]  # both see the last row
    return fs[0](x[:2]) * fs[1](x[2:])


def array_rebound_in_a_loop_read_after_each_step(x):
    w = x
    g = lambda: np.sum(w ** 2)  # noqa: E731
    total = g()
    for k in range(2):
        w = np.tanh(w) * (k + 1.0)
        total = total + g()
    return total


def list_rebound_in_a_loop(x):
    acc = []
    f = lambda: sum(acc)  # noqa: E731
    for v in x:
        acc = acc + [v * v]
    return f()


@pytest.mark.parametrize("f", [lambdas_over_the_rows_of_an_array, array_rebound_in_a_loop_read_after_each_step,
                               list_rebound_in_a_loop], ids=lambda f: f.__name__)
def test_late_binding_of_arrays_and_lists_in_every_mode(f):
    check_all_modes(f, np.array([0.3, -0.5, 0.8, 1.1]))


def test_arguments_are_restored():
    xs = np.array([0.3, 0.9])

    def f(v):
        w = v[0]
        g = lambda t: w * t  # noqa: E731
        w = v[1] * v[0]
        return g(v[1])
    before = xs.copy()
    grad = yb.grad(f)(xs)
    np.testing.assert_array_equal(xs, before)
    h = 1e-6
    expected = [(f(xs + h * e) - f(xs - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_third_order_follows_the_late_bound_variable():
    """Third derivatives (yb.hvp of a function calling yb.grad) see the last value of the
    comprehension's variable, as Python does: against second differences of the gradient."""
    x, h = 0.7, 1e-3
    third = yb.hvp(lambda t: yb.grad(lambdas_in_a_list_comprehension)(t), (x,), (1.0,))[2][0]
    first = yb.grad(lambdas_in_a_list_comprehension)
    expected = (first(x + h) - 2 * first(x) + first(x - h)) / h ** 2
    assert third == pytest.approx(expected, rel=1e-5)


def class_reading_a_float_of_the_function(x):
    y = x * x

    class Scaled:
        def apply(self, t):
            return y * t
    return Scaled().apply(1.0)


def class_reading_an_int_a_module_and_a_plain_function(x):
    n = 3

    def square(t):
        return t * t

    class Powered:
        def apply(self, t):
            return square(np.sin(t) ** n)
    return Powered().apply(x)


def class_reading_a_function_that_captures_a_float(x):
    def scaled(t):
        return t * x

    class Scaled:
        def apply(self, t):
            return scaled(t)
    return Scaled().apply(1.0)


@pytest.mark.parametrize("f", [class_reading_a_float_of_the_function, class_reading_a_function_that_captures_a_float],
                         ids=lambda f: f.__name__)
def test_a_class_reading_a_variable_that_carries_a_derivative_works_in_every_mode(f):
    """Its methods read the variable's cell, whose tangent box the class statement registers
    (frontend/local_classes.py; more in tests/test_local_classes.py)."""
    check_all_modes(f, 0.7)


def test_a_class_reading_ints_modules_and_plain_functions_works_in_every_mode():
    check_all_modes(class_reading_an_int_a_module_and_a_plain_function, 0.7)


def _calls_a_sibling_defined_later(x):
    def main(v):
        return helper(v) * v

    def helper(v):  # bound after main is made: main reads it when called, as Python does
        return v * np.sin(v)

    return main(x)


def _mutually_recursive_nested_functions(x):
    def even(n, v):
        return v if n == 0 else odd(n - 1, v * x)

    def odd(n, v):
        return v * 2.0 if n == 0 else even(n - 1, v + x)

    return even(5, x)


def test_a_nested_function_calling_one_defined_after_it():
    check_all_modes(_calls_a_sibling_defined_later, 0.7)
    check_all_modes(_mutually_recursive_nested_functions, 0.7)
