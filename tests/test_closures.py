"""Nested functions that read and write variables of the functions around them, in every mode.

Captured variables are found by Python's own scoping (a nested function's local that shares a
name with ours is not captured), and a nested function gets the very cells of the variables it
captures from further out (``MakeClosure.shared``), so ``nonlocal`` writes at any depth and
reads after them see one variable. Checked against the plain call and central differences in
reverse, forward and second order (``all_modes.check_all_modes``).
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

from .all_modes import check_all_modes

def make_adder():
    total = 0.0

    def add(v):
        nonlocal total
        total += v
        return total
    return add


def factory_at_module_level(x):
    add = make_adder()
    add(x)
    return add(x * x)


def nonlocal_two_levels_deep(x):
    total = 0.0

    def outer():
        def inner(v):
            nonlocal total
            total += v
        inner(x)
        inner(x * x)
    outer()
    return total


def nonlocal_in_both_levels(x):
    total = x

    def outer():
        nonlocal total

        def inner(v):
            nonlocal total
            total = total * v
        inner(x)
        total = total + 1.0
        inner(x)
    outer()
    return total


def nested_local_shares_enclosing_name(x):
    def g(h):
        output = h*2.0
        return output
    output = g(x)
    return output


def make_accumulator(scale):
    acc = [0.0]
    count = 0

    def step(v):
        nonlocal count
        acc[0] += scale * v
        count += 1
        return acc[0] * count
    return step


def factory_with_list_and_counter(x):
    s = make_accumulator(x)
    s(x)
    s(2.0)
    return s(x * x)


def nonlocal_written_in_loop(x):
    n = 0.0

    def bump():
        nonlocal n
        n = n + x
    for i in range(3):
        bump()
    return n * x


def two_closures_from_one_factory(x):
    def counter():
        c = x

        def inc():
            nonlocal c
            c = c * x
            return c
        return inc
    a = counter()
    b = counter()
    a(); a()
    return a() + b()


def reader_and_writer_closures(x):
    y = x

    def f():
        return y * y

    def g():
        nonlocal y
        y = y + 1.0
    g()
    return f() + y


def read_after_sibling_writes(x):
    y = x

    def g():
        nonlocal y
        y = y * 2.0

    def outer():
        def reader():
            return y * y
        g()
        return reader()
    return outer()


def nested_factory_called_in_loop(x):
    def make_adder(scale):
        total = 0.0

        def add(v):
            nonlocal total
            total += scale * v
            return total
        return add
    add = make_adder(x)
    for i in range(3):
        add(x * i)
    return add(1.0)


def closure_appends_to_captured_list(x):
    vals = []

    def push(v):
        vals.append(v * x)
    push(x); push(2.0)
    return sum(vals)


def nonlocal_three_levels_deep(x):
    t = 1.0

    def a():
        def b():
            def c():
                nonlocal t
                t = t * x + 1.0
            c()
            c()
        b()
    a()
    return t


def lambdas_capturing_lambdas(x):
    f = lambda v: v * x
    g = lambda v: f(v) + x
    return g(x) * f(2.0)


def factory_called_twice(x):
    def outer():
        total = x

        def inner():
            nonlocal total
            total = total * total
        inner()
        return total
    return outer() + outer()


CASES = [factory_at_module_level, nonlocal_two_levels_deep, nonlocal_in_both_levels, nested_local_shares_enclosing_name, factory_with_list_and_counter, nonlocal_written_in_loop, two_closures_from_one_factory, reader_and_writer_closures, read_after_sibling_writes, nested_factory_called_in_loop, closure_appends_to_captured_list, nonlocal_three_levels_deep, lambdas_capturing_lambdas, factory_called_twice]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_closures_in_every_mode(f):
    check_all_modes(f, 1.3)


def test_factory_from_the_issue_gives_python_value_and_gradient():
    def make():
        total = 0.0

        def add(v):
            nonlocal total
            total += v
            return total
        return add

    def f(x):
        add = make()
        add(x)
        return add(x * x)

    value, grad = yb.value_and_grad(f)(1.5)
    assert value == f(1.5)
    assert grad == pytest.approx(1.0 + 2 * 1.5)


def comprehension_run_in_a_loop_with_a_walrus(x):
    total = 0.0
    for k in range(2):
        fs = [lambda t: a * t for a in [x, k * x] if (last := a) is not None]
        total = total + fs[0](x) + last
    return total


def test_capture_of_a_comprehension_variable_run_in_a_loop_with_a_walrus():
    """Python gives each run of a comprehension fresh cells: it is made by a function of its
    own, which declares what ``:=`` binds ``nonlocal`` (our variable, kept in a cell)."""
    check_all_modes(comprehension_run_in_a_loop_with_a_walrus, 1.0)


def int_defaults_in_a_comprehension(x):
    fs = [lambda v, k=k: v * k for k in range(3)]
    return fs[1](x) + fs[2](x * x)


def string_default(x):
    mode = "double"

    def inner(v, how=mode, n=3):
        return v * 2.0 if how == "double" else v
    return inner(x)


@pytest.mark.parametrize("f", [int_defaults_in_a_comprehension, string_default], ids=lambda f: f.__name__)
def test_defaults_without_derivatives_in_every_mode(f):
    check_all_modes(f, 1.3)


def float_default_from_a_local(x):
    y = x * 3.0

    def inner(v, s=y):
        return v * s
    return inner(x)


def float_defaults_in_a_comprehension(x):
    fs = [lambda v, w=w: v * w for w in [x, 2 * x]]
    return fs[0](1.0) + fs[1](1.0)


def default_from_an_enclosing_cell(x):
    def outer():
        def inner(v, s=x):
            return v * s
        return inner(2.0)
    return outer()


def kw_only_and_lambda_defaults(x):
    def g(v, *, k=x * x, m=2):
        return v * k * m
    h = lambda v, s=np.sin(x): v * s  # noqa: E731
    return g(x) + g(1.0, k=3.0) + h(x) + h(x, 2.0)


def defaults_made_in_a_loop(x):
    fs = []
    for i in range(3):
        def g(v, c=x * (i + 1.0)):
            return v * c
        fs.append(g)
    return fs[0](x) + fs[2](1.0)


def recursive_function_with_a_default(x):
    def g(n, s=x * 2.0):
        """The default is read when the call gives none."""
        return s if n == 0 else s * g(n - 1)
    return g(2) + g(1, x)


def default_next_to_nonlocal(x):
    total = 0.0

    def add(v, w=x):
        nonlocal total
        total += v * w
    add(x)
    add(1.0, 3.0)
    return total


def _made_with_a_default(x):
    def g(v, s=np.exp(x)):
        return v * s
    return g


def default_of_a_returned_function(x):
    return _made_with_a_default(x)(x)


def _same(g):
    return g


def decorated_with_a_float_default(x):
    def scaled(h):
        return lambda v: x * h(v)

    @_same
    @scaled
    def inner(v, s=x):
        return v * s
    return inner(x)


@pytest.mark.parametrize("f", [float_default_from_a_local, float_defaults_in_a_comprehension,
                               default_from_an_enclosing_cell, kw_only_and_lambda_defaults,
                               defaults_made_in_a_loop, recursive_function_with_a_default,
                               default_next_to_nonlocal, default_of_a_returned_function,
                               decorated_with_a_float_default],
                         ids=lambda f: f.__name__)
def test_default_values_carry_their_derivative_in_every_mode(f):
    """Defaults computed from the function's variables are made by a factory (closures.py)."""
    check_all_modes(f, 1.3)


@pytest.mark.parametrize("f", [float_default_from_a_local, kw_only_and_lambda_defaults, defaults_made_in_a_loop,
                               recursive_function_with_a_default, default_next_to_nonlocal,
                               default_of_a_returned_function, decorated_with_a_float_default],
                         ids=lambda f: f.__name__)
def test_third_order_of_defaults_made_by_a_factory(f):
    """Third derivatives (yb.hessian over yb.grad) follow the factory's default into the nested
    function (its plain program captures the default and its tangent): against central
    differences of reverse over reverse."""
    F = lambda x: yb.grad(f)(x) ** 2  # noqa: E731
    h = 1e-5
    expected = (yb.grad(F)(0.7 + h) - yb.grad(F)(0.7 - h)) / (2 * h)
    assert yb.hessian(F)(0.7) == pytest.approx(expected, rel=1e-6, abs=1e-6)


def _make_outside_adder():
    total = 0.0

    def add(v):
        nonlocal total
        total += v
        return total
    return add


OUTSIDE_ADD = _make_outside_adder()


def writes_a_cell_of_an_outside_closure(x):
    y = OUTSIDE_ADD(x)
    OUTSIDE_ADD(-y)  # back to where it started
    return y * x


def test_nonlocal_float_write_in_a_closure_made_outside():
    """Its cell is outside state (rules/outside_state.py): one tangent box for the whole call, so
    the value written keeps its derivative to the next read, in every mode."""
    check_every_mode(writes_a_cell_of_an_outside_closure, 1.3)
    assert OUTSIDE_ADD.__closure__[0].cell_contents == 0.0


def _make_outside_counter():
    calls = 0

    def square(v):
        nonlocal calls
        calls += 1
        return v * v
    return square


OUTSIDE_SQUARE = _make_outside_counter()


def counts_calls_in_an_outside_closure(x):
    return OUTSIDE_SQUARE(x) + OUTSIDE_SQUARE(2.0 * x)


def test_int_counter_in_a_closure_made_outside_in_every_mode():
    check_all_modes(counts_calls_in_an_outside_closure, 1.3)


def _make_cubic(a):
    return lambda x: (x - a) ** 2 * x


def test_hvp_direction_in_a_closures_captured_value():
    """A direction given in a closure argument's cell (its tangent in the tangent model's format)
    reaches second order; it used to be read as zero, silently (found by the implicit work)."""
    from yuebing.tangents import zero_tangent

    f = _make_cubic(2.0)
    direction = zero_tangent(f)
    direction.fields["a"].fields["cell_contents"] = 1.0
    _, (g_x, g_f), (hv_x, hv_f) = yb.hvp(lambda x, f: f(x), (0.8, f), (0.0, direction))
    h = 1e-6
    grad_x = lambda a: yb.grad(lambda x: _make_cubic(a)(x))(0.8)  # noqa: E731
    assert hv_x == pytest.approx((grad_x(2.0 + h) - grad_x(2.0 - h)) / (2 * h), rel=1e-6)
    assert hv_f.fields["a"].fields["cell_contents"] == pytest.approx(2 * 0.8)  # d2f/da2 = 2x


def test_a_partials_stored_keyword_gets_its_gradient():
    import functools

    def f(x, k=1.0):
        return x * k * k

    g = yb.grad(lambda p, x: p(x))(functools.partial(f, k=1.5), 0.7)
    assert g.fields["keywords"]["k"] == pytest.approx(2 * 0.7 * 1.5)


def test_lambdas_capturing_an_inner_comprehension_s_variable_beside_a_walrus():
    def f(b):
        return sum(sum((lambda x: x * v)(2.0) for v in [b, w * b] if (u := v)) for w in [1.0, 2.0])  # noqa: F841

    check_all_modes(f, 1.0)
