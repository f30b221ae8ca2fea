"""Outside state (``rules/outside_state.py``): mutable objects a function reaches without receiving
or creating them -- a global list, a closure made at module level that mutates what it captured,
a class attribute mutated through an instance, a module's array -- in every mode, against central
differences. Each used to be silently wrong (a zero derivative): the derivative written into the
object at one read was lost by the next."""
from __future__ import annotations

import types

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

LOG: list = []


def _append_twice(x):
    LOG.append(x * 2.0)
    LOG.append(x * x)


def global_list_across_functions(x):
    LOG.clear()
    _append_twice(x)
    return sum(LOG) + LOG[0] * LOG[1]


def _make_history():
    history = []

    def push(v):
        history.append(v)

    def total():
        return sum(history) + history[-1] ** 2

    def clear():
        history.clear()

    return push, total, clear


PUSH, TOTAL, CLEAR = _make_history()


def closure_made_outside(x):
    CLEAR()
    PUSH(x * 3.0)
    PUSH(np.sin(x))
    return TOTAL()


class Registry:
    entries: list = []  # a class attribute, shared by every instance


def class_attribute_through_an_instance(x):
    r = Registry()
    r.entries.append(x * 4.0)
    r.entries.append(x ** 3)
    value = sum(Registry.entries) * x
    r.entries.clear()
    return value


SETTINGS = {"scale": [1.0]}


def global_dict_of_lists(x):
    SETTINGS["scale"].append(x * x)
    value = np.prod(SETTINGS["scale"]) + x
    SETTINGS["scale"].pop()
    return value


@pytest.mark.parametrize("f", [global_list_across_functions, closure_made_outside, class_attribute_through_an_instance,
                               global_dict_of_lists])  # a nonlocal float of an outside closure: test_closures.py
def test_outside_state_in_every_mode(f):
    check_every_mode(f, 0.7)


def test_outside_state_is_left_as_the_plain_call_leaves_it():
    closure_made_outside(0.7)
    after_plain = TOTAL()
    closure_made_outside(0.3)
    yb.grad(closure_made_outside)(0.7)  # its clear and pushes stay, as a plain call's (rules/outside_redo.py)
    assert TOTAL() == after_plain
    yb.grad(class_attribute_through_an_instance)(0.7)
    assert Registry.entries == []


MODULE = types.ModuleType("outside_module")
MODULE.W = np.zeros(2)


def writes_a_module_array(x):
    MODULE.W[0] = x * 5.0
    return np.sum(MODULE.W * MODULE.W)


def test_writing_into_a_module_array_is_refused_as_for_a_global_array():
    for run in (lambda: yb.grad(writes_a_module_array)(0.7), lambda: yb.jvp(writes_a_module_array, (0.7,), (1.0,)),
                lambda: yb.hvp(writes_a_module_array, (0.7,), (1.0,))):
        with pytest.raises(ValueError, match="read-only"):
            run()
    np.testing.assert_array_equal(MODULE.W, [0.0, 0.0])


def reads_a_module_array(x):
    return np.sum(MODULE.W * x) + x


def test_reading_a_module_array_is_a_constant():
    MODULE.W[:] = [1.5, -2.0]
    try:
        check_every_mode(reads_a_module_array, 0.7)
    finally:
        MODULE.W[:] = 0.0


NESTED_LOG: list = []


def _inner_with_state(y):
    NESTED_LOG.append(y * y)
    value = sum(NESTED_LOG)
    NESTED_LOG.pop()
    return value


def gradient_inside_with_state(x):
    NESTED_LOG.append(x)
    g = yb.grad(_inner_with_state)(x * 2.0)
    value = g * sum(NESTED_LOG)
    NESTED_LOG.pop()
    return value


def test_a_gradient_inside_has_outside_state_of_its_own():
    """The inner yb.grad's pass reads the same global list as the outer pass: each level keeps
    its own tangents of it (a scope per pass)."""
    check_every_mode(gradient_inside_with_state, 0.7, second_order=False)
