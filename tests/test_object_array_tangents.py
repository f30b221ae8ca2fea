"""Object-dtype arrays holding float data (issue 13): their tangent is an object array of the
elements' tangents (docs/tangents.md, "Object arrays"; ``tangents/object_arrays.py``), and what
NumPy does to them -- creation, item and slice writes, indexing, views, iteration, element
arithmetic, ``sum``/``mean``/``prod``, ``tolist``, ``astype`` -- is differentiated in reverse,
forward and second order (``rules/object_arrays.py``, ``rules/object_array_calls.py``), against
central differences, the caller's arguments left as they were."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import RuleArgumentError
from yuebing.testing import check_tangent_interface

from .test_deque_arguments import check_modes

X = np.array([0.7, -0.4, 1.3, 0.25])

# ------------------------------------------------------------------------------------------------
# Made in the function
# ------------------------------------------------------------------------------------------------


def items_written(x):
    a = np.empty(3, dtype=object)
    a[0] = x[0] * 2
    a[1] = np.array([x[1], 3.0 * x[2]])
    a[2] = "label"
    return a[0] * 3 + np.sum(a[1] ** 2) * (a[2] == "label")


def made_from_a_list(x):
    a = np.array([x[0], "a", x[1] * x[2]], dtype=object)
    return a[0] * a[2] + len(a[1])


def ragged_cells(x):
    cells = np.empty(len(x), dtype=object)
    for i in range(len(x)):
        cells[i] = x[: i + 1] * (i + 1.0)
    return sum(np.sum(c ** 2) for c in cells)


def iterated(x):
    a = np.array([x[0], x[1] ** 2, np.sin(x[2])], dtype=object)
    total = 0.0
    for v in a:
        total = total + v * v
    return total


def arithmetic(x):
    a = np.array([x[0], x[1], x[2] * x[3]], dtype=object)
    b = a * 2.0 + 1.0
    c = 3.0 / (a + x[3]) - b ** 2
    return (c * -a).sum() + np.sum(a * x[:3])


def array_elements_times(x):
    a = np.empty(2, dtype=object)
    a[0], a[1] = x[:2], x[2:] * x[0]
    b = a * x[3]  # each element array times the float
    return np.sum(b[0] * b[1]) + np.sum(np.sum(a)[::-1] * x[:2])


def reductions(x):
    a = np.array([[x[0], x[1]], [x[2], x[3] * x[0]]], dtype=object)
    return a.sum() * np.mean(a) + a.prod() + np.sum(a, axis=0)[1] * a.sum(axis=1)[0]


def as_list(x):
    a = np.array([[x[0], x[1]], [x[2], 2.0]], dtype=object)
    rows = a.tolist()
    return rows[0][1] * rows[1][0] + sum(rows[1])


def views(x):
    a = np.array([x[0], x[1], x[2], x[3]], dtype=object).reshape(2, 2)
    t = a.T
    row = a[1]
    row[0] = row[0] * x[0]  # through the view: a[1, 0] changes
    col = a[:, 1]
    return t[0, 1] * col[0] + a[1, 0] + a.ravel()[3] * x[2]


def selected(x):
    a = np.array([x[0], x[1], x[2], x[3]], dtype=object)
    b = a[[3, 0]]
    b[0] = b[0] * 5.0  # a copy: a is unchanged
    return b[0] * b[1] + a[3] + np.sum(a[a.astype(float) > 0.5] * 1.0)


def slices_written(x):
    a = np.empty(4, dtype=object)
    a[:] = x[0]
    a[1:3] = [x[1], x[2] * x[1]]
    a[3:] = x[3:] * 2.0
    return (a * a).sum()


def in_place(x):
    a = np.array([x[0], x[1]], dtype=object)
    a += x[2]
    a *= np.array([x[3], 2.0], dtype=object)
    return a[0] * a[1]


def converted(x):
    a = np.array([x[0], x[1] * x[2], 2.0], dtype=object)
    f = a.astype(float)
    return float(np.sum(np.exp(f) * np.asarray(a, dtype=float)))


def copied(x):
    a = np.array([x[0], x[1]], dtype=object)
    b = a.copy()
    b[0] = b[0] * x[2]
    return a[0] + b[0] * b[1]


MADE_INSIDE = [items_written, made_from_a_list, ragged_cells, iterated, arithmetic, array_elements_times,
               reductions, as_list, views, selected, slices_written, in_place, converted, copied]


@pytest.mark.parametrize("f", MADE_INSIDE, ids=lambda f: f.__name__)
def test_object_arrays_made_in_the_function(f):
    check_modes(f, X.copy())


# ------------------------------------------------------------------------------------------------
# Passed in: the gradient is an object array, the caller's array is left as it was
# ------------------------------------------------------------------------------------------------


def _argument():
    a = np.empty(3, dtype=object)
    a[0], a[1], a[2] = 0.6, np.array([0.3, -1.1]), "name"
    return a


def read_argument(a, x):
    return a[0] * x + np.sum(a[1] * a[1]) * x


def written_argument(a, x):
    a[0] = a[0] * x
    a[1] *= x  # the element array, in place
    a[2] = x  # a label replaced by a float
    return a[0] * a[2] + np.sum(a[1]) + (a * 2.0)[0]


def shared_element(a, x):
    a[2] = a[1]  # one array held twice
    a[2][0] = x * a[0]
    return np.sum(a[1] * a[2])


@pytest.mark.parametrize("f", [read_argument, written_argument, shared_element], ids=lambda f: f.__name__)
def test_object_array_arguments(f):
    check_modes(f, _argument(), 0.9)


def test_gradient_of_an_object_array_is_an_object_array():
    g = yb.grad(read_argument)(_argument(), 0.9)
    assert g.dtype == object and g.shape == (3,)
    assert g[0] == pytest.approx(0.9) and g[2] is yb.tangents.NoTangent
    np.testing.assert_allclose(g[1], 2 * 0.9 * np.array([0.3, -1.1]))


@pytest.mark.parametrize("value", [_argument(), np.array([[1.5, "a"], [None, [2.0, 3]]], dtype=object)],
                         ids=["flat", "nested"])
def test_object_array_tangent_interface(value):
    check_tangent_interface(value)
    check_tangent_interface([value, value, value.ravel()[0]])


# ------------------------------------------------------------------------------------------------
# Refused: what is not covered says so
# ------------------------------------------------------------------------------------------------


def uncovered(x):
    a = np.array([x[0], x[1]], dtype=object)
    return np.cumsum(a)[1]


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_uncovered_numpy_call_is_refused_by_name(mode):
    with pytest.raises(RuleArgumentError, match="cumsum.*object-dtype array"):
        if mode == "grad":
            yb.grad(uncovered)(X.copy())
        else:
            yb.jvp(uncovered, (X.copy(),), (np.ones(4),))
