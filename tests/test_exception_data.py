"""Float data read back out of an exception (``rules/exception_data.py``): ``e.args[0]`` after
``raise ValueError(x * 2.0)``, a user exception's attribute set to an argument, ``raise ... from``,
a re-raise, an exception raised in a callee, an exception group, a tuple or an array carried, and
``StopIteration``'s value of a generator nothing holds in a variable. Every mode against central
differences (``tests/modes.check_every_mode``: grad, jvp, jacobian(mode='fwd'), hvp, hessian),
arguments restored. (What a Python ``__init__`` computes from its arguments is differentiated with
the exception's tangent: ``tests/test_exception_tangents.py``.)"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

X = 0.7


def carried_by_a_raise(x):
    try:
        raise ValueError(x * 2.0)
    except ValueError as error:
        return error.args[0] * x


class Carrying(Exception):
    def __init__(self, amount, label="carrying"):
        super().__init__(label)
        self.amount = amount


def carried_by_a_user_exception(x):
    try:
        raise Carrying(x * x, label="a label")
    except Carrying as error:
        return error.amount * np.sin(x) + len(error.args[0])


def _fails(v):
    if v > 0.0:
        raise Carrying(v ** 3)
    return v


def raised_in_a_callee(x):
    y = x * 1.5
    try:
        z = _fails(y)
    except Carrying as error:
        z = error.amount + y
    return z * x


def chained_and_raised_again(x):
    try:
        try:
            raise KeyError(np.exp(x), "key")
        except KeyError as inner:
            raise ValueError(inner.args[0] * x) from inner
    except ValueError as outer:
        return outer.args[0] + outer.__cause__.args[0] ** 2


def raised_again_bare(x):
    try:
        try:
            raise ArithmeticError(x ** 2, x)
        except ArithmeticError:
            raise
    except ArithmeticError as error:
        a, b = error.args
        return a * b


def made_then_raised(x):
    error = ValueError((x, 3.0 * x))  # a tuple of floats, made before the raise
    try:
        raise error
    except ValueError as caught:
        pair = caught.args[0]
        return pair[0] * pair[1]


def in_an_exception_group(x):
    y = 0.0
    try:
        raise ExceptionGroup("several", [ValueError(x * 4.0), TypeError("no floats")])
    except* ValueError as group:
        y = group.exceptions[0].args[0] * x
    except* TypeError:
        y = y + 1.0
    return y


def an_array_carried(x):
    v = np.array([x, 2.0 * x, x * x])
    try:
        raise ValueError(v * 2.0, "array")
    except ValueError as error:
        return float(np.sum(error.args[0] ** 2))


def mutated_then_carried(x):
    x *= 2.0
    try:
        raise ValueError(x[0] * x[1], x)
    except ValueError as error:
        return error.args[0] + float(np.sum(error.args[1] ** 2))


def stop_value_of_a_generator_in_a_list(x):
    def g():
        yield x
        return x * x

    made = [g()]
    try:
        next(made[0])
        next(made[0])
    except StopIteration as stop:
        return stop.args[0] * x + stop.value
    return 0.0


def stop_value_of_next_on_a_call(x):
    def g(v):
        yield v
        return v ** 3

    try:
        it = g(x)
        next(it)
        next(it)
    except StopIteration as stop:
        return stop.value
    return 0.0


CASES = [carried_by_a_raise, carried_by_a_user_exception, raised_in_a_callee, chained_and_raised_again,
         raised_again_bare, made_then_raised, in_an_exception_group, stop_value_of_a_generator_in_a_list,
         stop_value_of_next_on_a_call]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_float_data_read_out_of_an_exception_in_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", [an_array_carried, mutated_then_carried], ids=lambda f: f.__name__)
def test_arrays_carried_in_every_mode_arguments_restored(f):
    x = np.array([0.3, -0.8, 1.1])
    check_every_mode(f, x) if f is mutated_then_carried else check_every_mode(lambda x: f(x[0]), x[:1])
    before = x.copy()
    yb.grad(f)(x) if f is mutated_then_carried else yb.grad(lambda v: f(v[0]))(x)
    np.testing.assert_array_equal(x, before)


def _raises_past_a_bound(v):
    if v > 0.5:
        raise ValueError(v * 3.0)
    return v


def raised_through_vectorize(x):
    try:
        return float(np.sum(np.vectorize(_raises_past_a_bound)(np.array([x, 0.2]))))
    except ValueError as error:
        return error.args[0] * x


def _appends(acc, v):
    acc.append(v * v)  # differentiable work on a list the caller holds, then the raise
    if v > 0.5:
        raise ValueError("past the bound")
    return v


def work_then_raised_through_vectorize(x):
    acc = []
    try:
        return float(np.sum(np.vectorize(lambda v: _appends(acc, v), otypes=[float])(np.array([x * 0.5, x, 0.1]))))
    except ValueError:
        return sum(acc) * x  # the first element's square and the second's, which raised


def into_an_array_through_vectorize(x):
    v = np.array([x, 2.0 * x])
    total = np.zeros(1)

    def step(u):
        total[0] += u * v[1]  # a write into an array before the raise
        if u > 0.6:
            raise ValueError(u)
        return u

    try:
        np.vectorize(step)(v)
    except ValueError as error:
        return total[0] * error.args[0]
    return 0.0


@pytest.mark.parametrize("f", [raised_through_vectorize, work_then_raised_through_vectorize,
                               into_an_array_through_vectorize], ids=lambda f: f.__name__)
def test_raised_through_vectorize_after_work_in_every_mode(f):
    """np.vectorize routes the work its elements completed, and that of the element that raised
    (the construction of the exception carrying float data too), to the handler: it was refused in
    reverse mode and second order."""
    check_every_mode(f, X)


def read_by_a_nested_gradient(x):
    try:
        raise ValueError(x * 2.0)
    except ValueError as error:
        return yb.grad(lambda y: error.args[0] * y)(x) * x


def test_a_nested_gradient_reading_the_outer_exception_is_refused_by_name():
    with pytest.raises(TypeError, match="reading float data out of an exception the outer pass made"):
        yb.grad(read_by_a_nested_gradient)(X)
