"""A user object that a rule's C code puts in the exception it raises (``KeyError(box)`` of
``d[box]`` or ``d.pop(box)``, ``AttributeError.obj`` of ``getattr(box, name)``), read back in the
handler: recorded with the derivative data of the object the rule was handed
(``rules/exception_data.carry_handed``, called by ``transform/protocols.dispatch``). It was refused:
"cannot differentiate the float data the KeyError exception carries in 'args'". Reverse, forward
and second order against central differences; the caller's array written through the object is
restored. A number carried so stays refused by name (its cotangent would need the pullback of the
rule that raised, which never runs)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import RuleArgumentError

from .exception_modes import MODES, run_in_mode
from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7


class Box:
    def __init__(self, value):
        self.value = value


def _look_up(table, key):
    return table[key]


def missing_in_a_helper(x):
    box = Box(np.sin(x) * x)
    table = {"other": 1.0}
    try:
        _look_up(table, box)  # (the KeyError leaves a Python function first)
    except KeyError as e:
        return e.args[0].value ** 2 + x
    return 0.0


def popped(x):
    box = Box(x * x)
    try:
        {}.pop(box)
    except KeyError as e:
        found = e.args[0]
        found.value = found.value * np.exp(x)  # (a write through it: the box's own field)
    return box.value * x


def getattr_builtin(x):
    box = Box(np.cos(x))
    try:
        getattr(box, "missing")
    except AttributeError as e:
        return e.obj.value * x * x
    return 0.0


def in_a_loop(x):
    boxes = [Box(x ** (k + 1)) for k in range(3)]
    seen = {boxes[1]: 10.0}
    total = 0.0
    for box in boxes:
        try:
            total = total + seen[box] * box.value
        except KeyError as e:
            total = total + np.sin(e.args[0].value)
    return total


@pytest.mark.parametrize("f", [missing_in_a_helper, popped, getattr_builtin, in_a_loop], ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_every_mode(f, X)


def writes_through_the_key(a):
    box = Box(a)  # (the caller's array itself)
    try:
        {}[box]
    except KeyError as e:
        e.args[0].value *= 2.0
    return float(np.sum(np.sin(a) * a))


def test_the_callers_array_written_through_the_carried_object_is_restored():
    check_every_mode_restoring(writes_through_the_key, np.array([0.5, -0.8]))


def float_key(x):
    try:
        {}[x * 2.0]
    except KeyError as e:
        return e.args[0] * 3.0
    return 0.0


@pytest.mark.parametrize("mode", MODES)
def test_a_number_carried_so_is_refused_by_name(mode):
    with pytest.raises(RuleArgumentError, match="the float data the KeyError exception carries in 'args'"):
        run_in_mode(float_key, mode, X)


@pytest.mark.parametrize("f", [popped, getattr_builtin, in_a_loop], ids=lambda f: f.__name__)
def test_third_order_refuses_the_read_by_name(f):
    """In a pass nested in another the record would not carry the outer derivative (it gave a
    third derivative of 14.65 for 47.03): the read is refused there, as it was everywhere."""
    with pytest.raises(RuleArgumentError, match="exception carries in"):
        yb.hvp(yb.grad(f), (X,), (1.0,))
