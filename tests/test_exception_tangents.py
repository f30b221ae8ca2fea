"""Exceptions with a tangent (``rules/exception_tangents.py``, issue 13): a class whose
``__init__`` is Python has it differentiated as a user class's is, so what it computes from its
arguments (``self.amount = 2.0 * amount``), hands to ``super().__init__`` or writes into them
keeps its derivative. Every mode against central differences (``tests/modes.check_every_mode``:
grad, jvp, jacobian(mode='fwd'), hvp, hessian), the arguments restored, and an exception leaving
the differentiated function as plain Python raised it, with the caller's arguments restored.
Before, the values were refused by name (``float data the Computing exception carries``)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform.forward_runtime import NestedDifferentiationError

from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7


class Computing(Exception):
    def __init__(self, amount, label="computing"):
        super().__init__(label, amount * amount)  # what super().__init__ is given: e.args
        self.amount = np.sin(amount) * 2.0  # computed from the argument


class Refining(Computing):
    def __init__(self, amount, steps):
        super().__init__(amount * steps, label="refining")  # a Python __init__ reached by super()
        self.rate = self.amount / steps  # a read of what the base class's __init__ set


class Inheriting(Computing):
    """No __init__ of its own: Computing's runs."""


class Direct(ValueError):
    def __init__(self, v):
        ValueError.__init__(self, v * 3.0)  # the C __init__ called unbound


def computed_by_init(x):
    try:
        raise Computing(x)
    except Computing as error:
        return error.amount * x + error.args[1] ** 2


def chained_inits(x):
    try:
        raise Refining(x, 3.0)
    except Computing as error:
        return error.rate * error.amount + error.args[1] * x


def inherited_init(x):
    try:
        raise Inheriting(x * x, label="inherited")
    except Inheriting as error:
        return error.amount + len(error.args[0])


def unbound_c_init(x):
    try:
        raise Direct(np.exp(x))
    except ValueError as error:
        return error.args[0] * x


def _fails(v):
    if v > 0.0:
        raise Computing(v * 1.5)
    return v


def raised_in_a_callee(x):
    y = x * x
    try:
        z = _fails(y)
    except Computing as error:
        z = error.amount * y
    return z + x


def made_then_raised(x):
    error = Computing(x, label="made first")  # made outside the raise statement
    try:
        raise error
    except Computing as caught:
        return caught.amount ** 2


def keyword_arguments(x):
    try:
        raise Refining(steps=2.0, amount=x)
    except Refining as error:
        return error.rate * error.args[1]


class Noted(Exception):
    def __init__(self, amount):
        super().__init__(f"amount {amount:.3f}")  # a message formatting the float
        self.add_note("noted")  # a C method of the exception, without derivative
        self.amount = amount ** 2


def formatted_and_noted(x):
    try:
        raise Noted(x)
    except Noted as error:
        return error.amount * x + len(error.__notes__)


CASES = [computed_by_init, chained_inits, inherited_init, unbound_c_init, raised_in_a_callee, made_then_raised,
         keyword_arguments, formatted_and_noted]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_what_init_computes_is_differentiated_in_every_mode(f):
    check_every_mode(f, X)


class Normalising(Exception):
    def __init__(self, v):
        super().__init__("normalising")
        self.unit = v / np.sqrt(np.sum(v * v))  # an array computed from an array argument


def an_array_computed(x):
    v = x * 2.0
    try:
        raise Normalising(v)
    except Normalising as error:
        return float(np.sum(error.unit * x))


def test_an_array_init_computes_in_every_mode_arguments_restored():
    check_every_mode_restoring(an_array_computed, np.array([0.3, -0.8, 1.1]))


class _Grade(Exception):
    def __init__(self, xs, scale=2.0):
        super().__init__("too close", xs[0] * scale)
        self.gap = np.sum(xs ** 2) * scale
        xs[1] = xs[1] * 3.0  # a write into the argument


def _escapes(x):
    x *= 2.0
    raise _Grade(x)


ESCAPING = {
    "grad": lambda x: yb.grad(_escapes)(x),
    "jvp": lambda x: yb.jvp(_escapes, (x,), (np.ones(3),)),
    "hvp": lambda x: yb.hvp(_escapes, (x,), (np.ones(3),)),
    "hessian": lambda x: yb.hessian(_escapes)(x),
}


@pytest.mark.parametrize("mode", sorted(ESCAPING))
def test_an_exception_leaving_the_function_is_as_raised_and_the_arguments_restored(mode):
    x = np.array([0.3, -0.8, 1.1])
    plain = copy.deepcopy(x)
    with pytest.raises(_Grade) as expected:
        _escapes(plain)
    before = x.copy()
    with pytest.raises(_Grade) as info:
        ESCAPING[mode](x)
    np.testing.assert_array_equal(x, before)  # the caller's argument, written twice, restored
    assert info.value.args == expected.value.args  # what __init__ computed, not undone with the pass
    assert info.value.gap == expected.value.gap


def test_third_order_refuses_an_exception_made_with_a_tangent_by_name():
    """Third order (yb.hvp of a function calling yb.grad) does not follow it: refused by name,
    not read as a constant."""
    with pytest.raises(NestedDifferentiationError, match=r"an exception made of values carrying derivatives \(Computing"):
        yb.hvp(yb.grad(computed_by_init), (X,), (1.0,))
