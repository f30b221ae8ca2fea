"""Object-dtype arrays: an array of labels (``None``, strings, ints: filterpy's
``self.z = np.array([[None] * dim_z]).T``) carries no derivative and is read, reshaped and
replaced as in plain Python. Float data written into one made in the function, or an object
array made of float data, is followed in every mode (its tangent is an object array of the
elements' tangents: tests/test_object_array_tangents.py); the writes not covered (``fill``,
``np.put``, ``np.putmask``, ``np.add.at``) are refused by name in every mode, as is float data
written into an array of labels passed in (it has no tangent), and the caller's array is left as
it was."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import RuleArgumentError
from yuebing.rules.core import SecondOrderError

from .modes import check_every_mode
from .test_deque_arguments import check_modes


class _Filter:
    """The shape of filterpy's ``KalmanFilter``: a measurement slot holding ``None`` until the
    first update writes a float array there."""

    def __init__(self, n):
        self.z = np.array([[None] * n]).T
        self.x = np.zeros(n)

    def update(self, z, gain):
        self.z = np.array(z, dtype=float)
        self.x = self.x + gain * (self.z[:, 0] - self.x)


def _filter(x):
    kf = _Filter(2)
    assert kf.z.T.shape == (1, 2)
    for step in range(3):
        kf.update([[x[0] * step], [np.sin(x[1])]], 0.5 + 0.1 * x[0])
    return float(np.sum(kf.x ** 2))


def _labels(x):
    table = np.array(["a", 1, None], dtype=object)
    kept = table.reshape(3, 1).T.copy()
    kept[0, 0] = "b"  # a label written into the array: no float data
    return x * len(kept[0]) + x * x + (kept[0, 0] == "b") * np.sin(x)


@pytest.mark.parametrize("f, x", [(_filter, np.array([0.7, 0.3])), (_labels, 0.6)], ids=["filter", "labels"])
def test_arrays_of_labels_carry_no_derivative(f, x):
    check_every_mode(f, x)


def _empty():
    return np.array([None, None], dtype=object)


def _setitem(x):
    a = _empty()
    a[0] = x * 2
    return a[0] * 3


def _slice(x):
    a = _empty()
    a[:] = [x, 2 * x]
    return a[0] + a[1]


def _fancy(x):
    a = _empty()
    a[[0, 1]] = np.array([x, x])
    return a[0] * 1.0


def _iadd(x):
    a = np.array([0, 0], dtype=object)
    a[0] += x
    return a[0] * 1.0


def _fill(x):
    a = _empty()
    a.fill(x)
    return a[0] * 1.0


def _put(x):
    a = _empty()
    np.put(a, [0], [x])
    return a[0] * 1.0


def _putmask(x):
    a = _empty()
    np.putmask(a, np.array([True, False]), np.array([x, x]))
    return a[0] * 1.0


def _add_at(x):
    a = np.array([0, 0], dtype=object)
    np.add.at(a, [0], x)
    return a[0] * 1.0


def _ufunc_out(x):
    a = _empty()
    np.multiply(np.array([x, x]), 2.0, out=a)
    return a[0] * 1.0


WRITERS = [_fill, _put, _putmask, _add_at]
FOLLOWED_WRITERS = [_setitem, _slice, _fancy, _iadd, _ufunc_out]
MODES = {
    "grad": lambda f: yb.grad(f)(0.7),
    "jvp": lambda f: yb.jvp(f, (0.7,), (1.0,)),
    "hessian": lambda f: yb.hessian(f)(0.7),
    "jacobian_fwd": lambda f: yb.jacobian(f, mode="fwd")(0.7),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("writer", WRITERS, ids=lambda f: f.__name__)
def test_floats_written_into_object_arrays_are_refused(writer, mode):
    assert writer(0.7) != writer(0.8)  # the plain function depends on x: a zero would be wrong
    with pytest.raises((RuleArgumentError, SecondOrderError), match="object-dtype array|out= a non-float array"):
        MODES[mode](writer)


@pytest.mark.parametrize("writer", FOLLOWED_WRITERS, ids=lambda f: f.__name__)
def test_floats_written_into_object_arrays_are_followed(writer):
    check_every_mode(writer, 0.7)


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_refused_write_leaves_the_callers_array(mode):
    labels = np.array(["keep", None], dtype=object)

    def f(x):
        np.multiply(np.array([x, x]), 2.0, out=labels)
        return labels[0] * 1.0

    with pytest.raises(RuleArgumentError, match="object-dtype array"):
        MODES[mode](f)
    assert list(labels) == ["keep", None]


def test_object_array_argument_holding_floats_is_followed():
    check_modes(lambda x, table: x * len(table) * table[0], 0.5, np.array([1.5, "a"], dtype=object))


# One predicate (``rules.util.holds_float_data``) decides whether an object array's derivatives are
# followed: labels (None, strings, ints, int arrays, lists and tuples of them, nested) carry none;
# float data anywhere inside (a float, a float array, a list holding one) is followed.

def _new_labels(x):
    table = np.array([["a", None], 1, "b"], dtype=object)  # an element that is a list of labels
    ints = np.array([1, 2]).astype(object)
    return x * len(table[0]) + x * x * len(ints) + (table[2] == "b") * np.cos(x)


def _written_labels(x):
    a = _empty()
    a[0] = "b"
    a[1] = None
    a[0] = 3
    a[1] = ["a", (None, 2)]  # a nested list of labels
    a[0] = np.array([1, 2])  # an int array: no float data
    return x * len(a[1]) + np.sin(x) * len(a[0])


@pytest.mark.parametrize("f", [_new_labels, _written_labels], ids=["new", "written"])
def test_labels_pass_into_object_arrays(f):
    check_every_mode(f, 0.6)


def _new_floats(x):
    a = np.array([x, "a"], dtype=object)
    return a[0] * 3.0


def _new_nested_floats(x):
    a = np.array([[x, 2.0], "a"], dtype=object)  # a float inside a list element
    return a[0][0] * 3.0


def _astype_floats(x):
    a = np.array([x, 2 * x]).astype(object)
    return a[0] * 3.0


def _written_nested_floats(x):
    a = _empty()
    a[0] = ["a", [x]]
    return a[0][1][0] * 3.0


@pytest.mark.parametrize("f", [_new_floats, _new_nested_floats, _astype_floats, _written_nested_floats],
                         ids=lambda f: f.__name__)
def test_float_data_in_object_arrays_is_followed(f):
    check_every_mode(f, 0.7)
