"""A ufunc writing into an int or bool array (``out=``) inside a function under second order:
the values written carry no derivative, NumPy's own call writes them, the pullback restores the
array. Every mode against central differences (tests/modes.py), with ``where=``, ``out=(a,)``,
a buffer written again in a loop, a buffer passed in by the caller (left as it was), and third
order through ``check_third_order``."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from .modes import central, check_every_mode
from yuebing.testing.third_order import check_third_order


def indices_summed(x):
    buffer = np.zeros(3, dtype=np.int64)
    np.add(np.arange(3), np.array([2, 0, -1]), out=buffer)
    return np.sum(x[buffer] ** 2 * x)


def exponents_where(x):
    buffer = np.ones(3, dtype=np.int64)
    np.multiply(np.array([1, 2, 3]), 2, out=buffer, where=np.array([True, False, True]))
    return np.sum(x ** buffer)


def out_tuple(x):
    buffer = np.ones(3, dtype=np.int32)
    y = np.subtract(np.array([4, 2, 3]), 1, out=(buffer,))
    assert y is buffer  # NumPy returns the array, not the tuple
    return np.sum(x ** y)


def bools_combined(x):
    flags = np.zeros(3, dtype=bool)
    np.logical_and(x > 0.5, x < 1.0, out=flags)
    np.add(flags, np.array([False, True, False]), out=flags)  # bool + bool: logical or
    return np.sum(np.where(flags, np.sin(x) * x, x ** 3))


def written_in_a_loop(x):
    index = np.array([0, 1, 2])
    total = 0.0
    for _ in range(3):
        np.remainder(np.add(index, 1), 3, out=index)  # the rotation, into the same int array
        np.add(index, 0, out=index)
        total = total + np.dot(x[index], x) * x[index[0]]
    return total


@pytest.mark.parametrize("f", [indices_summed, exponents_where, out_tuple, bools_combined, written_in_a_loop])
def test_every_mode(f):
    check_every_mode(f, np.array([0.7, 0.3, 1.2]))


def rolled_by(x, shift):
    np.add(shift, 1, out=shift)  # the caller's int array: written, and restored by yb
    return np.sum(np.roll(x, int(shift[0])) * x ** 2)


def test_caller_buffer_is_left_as_it_was():
    x, v = np.array([0.7, 0.3, 1.2]), np.array([0.4, -0.2, 0.9])
    shift = np.array([1], dtype=np.int64)
    _, (gradient, _), (product, _) = yb.hvp(rolled_by, (x, shift), (v, yb.NoTangent))
    assert shift[0] == 1
    expected_gradient = central(lambda u: rolled_by(u, shift.copy()), x, 1e-6)
    hessian = central(lambda u: yb.grad(rolled_by)(u, shift.copy()), x, 1e-5)
    np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(product, hessian @ v, rtol=1e-5, atol=1e-6)


def float_into_ints(x):
    buffer = np.zeros(3, dtype=np.int64)
    np.multiply(x, 2.0, out=buffer)
    return np.sum(buffer * x)


def test_float_values_into_ints_is_numpys_error():
    with pytest.raises(TypeError, match="Cannot cast ufunc 'multiply' output"):
        yb.hvp(float_into_ints, (np.array([0.7, 0.3, 1.2]),), (np.ones(3),))


@pytest.mark.parametrize("f", [indices_summed, exponents_where, written_in_a_loop])
def test_third_order(f):
    check_third_order(f, np.array([0.7, 0.3, 1.2]))
