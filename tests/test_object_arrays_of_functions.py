"""Object-dtype arrays of functions and objects (``tangents/kinds.py``, ``rules/util.holds_float_data``).

An array of functions without closures carries no derivative: pykalman's unscented filters keep
``array1d(transition_functions)`` (``np.asarray(np.atleast_1d(f))``, an object array) in a dict of
parameters; that was refused like an array holding float data (StructureError). An array holding a
closure over float data (``lambda x: x * t[0]``) or an object whose attributes hold float data was
silently wrong in every mode (the closure's derivative through ``t[0]`` dropped: gradient
``[0.3, 0.3, 0.3]`` for ``[1.0, 0.3, 0.3]``; the object's: 0), then refused; now followed, as an
object array of numbers is (its tangent holds the closure's and the object's).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.modes import check_every_mode

X = np.array([0.3, -0.7, 1.1])


def _step(x):
    return np.sin(x) * 2.0


def _shift(x):
    return x + 0.5


def through_an_array_of_functions(t):
    parameters = {"functions": np.asarray(np.atleast_1d(_step))}    # as pykalman's array1d, kept in a dict
    steps = np.array([_step, _shift, np.cos], dtype=object)
    return np.sum(parameters["functions"][0](t) * steps[1](t) + steps[0](t ** 2) * steps[2](t))


class Holder:
    def __init__(self, a):
        self.a = a


def closure_in_an_object_array(t):
    scaled = np.array([lambda x: x * t[0], _step], dtype=object)
    return np.sum(scaled[0](t))


def object_with_float_data_in_an_object_array(t):
    boxes = np.array([Holder(t * 2.0), None], dtype=object)
    return np.sum(boxes[0].a)


def closure_written_into_an_object_array(t):
    slots = np.empty(2, dtype=object)
    slots[0] = lambda x: x * t[1]
    return np.sum(slots[0](t))


def test_an_array_of_plain_functions_in_every_mode() -> None:
    check_every_mode(through_an_array_of_functions, X)


@pytest.mark.parametrize("function", [closure_in_an_object_array, object_with_float_data_in_an_object_array,
                                      closure_written_into_an_object_array])
def test_float_data_in_closures_and_objects_is_followed_in_every_mode(function) -> None:
    check_every_mode(function, X)
