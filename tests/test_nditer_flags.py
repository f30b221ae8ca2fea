"""``np.nditer`` with flags that change what it yields (issue 13): ``external_loop`` (1-D chunks,
views of the operands, as long as NumPy makes them: ``buffered``/``buffersize`` too), ``buffered``
elements and ``op_dtypes`` casts of read-only operands, in reverse, forward and second order
against central differences (``rules/numpy_nditer_chunks.py``), the caller's array restored when
the loop writes it; a cast of a writable operand is refused by name, NumPy's own errors stay."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import RuleArgumentError

from .modes import check_every_mode
from .test_deque_arguments import check_modes

X = np.array([0.3, -0.8, 1.1, 0.5, 0.9, -0.2])


def chunks(x):
    total = 0.0
    for c in np.nditer(x.reshape(2, 3), flags=["external_loop"]):
        total = total + np.sum(c * c) * c[0]
    return total


def chunks_of_a_transpose(x):
    total = 0.0
    for c in np.nditer(x.reshape(2, 3).T, flags=["external_loop"], order="C"):  # one chunk per row of the transpose
        total = total + np.sum(np.sin(c)) * c[-1]
    return total


def chunks_of_a_strided_view(x):
    total = 0.0
    for c in np.nditer(x.reshape(2, 3)[:, ::2], flags=["external_loop"]):
        total = total + np.sum(c ** 2) * c[-1]
    return total


def broadcast_pairs(x):
    total = 0.0
    for u, v in np.nditer([x.reshape(2, 3), x[:3] * 2.0], flags=["external_loop"]):
        total = total + np.sum(u * v * u)
    return total


def buffered_chunks(x):
    total = 0.0
    for c in np.nditer(x, flags=["external_loop", "buffered"], buffersize=4):
        total = total + np.sum(c ** 3) * c[0]
    return total


def written_chunks(x):
    y = x * 1.0
    for c in np.nditer(y, flags=["external_loop"], op_flags=["readwrite"]):
        c[...] = c * c
    return np.sum(y * x)


def buffered_elements(x):
    total = 0.0
    for v in np.nditer(x, flags=["buffered"]):
        total = total + v ** 3
    return total


def cast_elements(x):
    total = 0.0
    for v in np.nditer(x, flags=["buffered"], op_dtypes=[np.longdouble]):
        total = total + float(v * v * x[0])
    return total


@pytest.mark.parametrize("f", [chunks, chunks_of_a_transpose, chunks_of_a_strided_view, broadcast_pairs,
                               buffered_chunks, written_chunks, buffered_elements, cast_elements],
                         ids=lambda f: f.__name__)
def test_nditer_flags_in_every_mode(f):
    check_every_mode(f, X)


def doubled_in_place(x, s):
    for c in np.nditer(x, flags=["external_loop"], op_flags=["readwrite"]):
        c *= s
    return np.sum(x ** 2) * s


def test_a_loop_writing_the_argument_leaves_the_callers_array():
    check_modes(doubled_in_place, X.copy().reshape(3, 2), 1.3)


def test_a_cast_of_a_writable_operand_is_refused():
    def f(x):
        y = x.astype(np.float32)
        for v in np.nditer(y, flags=["buffered"], op_dtypes=[np.float64], op_flags=["readwrite"], casting="same_kind"):
            v[...] = v * 2
        return float(np.sum(y))

    with pytest.raises(RuleArgumentError, match="op_dtypes casting a writable operand"):
        yb.grad(f)(X)


def test_numpys_own_errors_stay():
    def f(x):
        return sum(np.sum(c) for c in np.nditer(x, flags=["multi_index", "external_loop"]))

    with pytest.raises(ValueError, match="EXTERNAL_LOOP"):
        f(X)
    with pytest.raises(ValueError, match="EXTERNAL_LOOP"):
        yb.grad(f)(X)
