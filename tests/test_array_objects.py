"""Objects NumPy converts through ``__array__`` (a ``np.poly1d``, a user class) given to a ufunc:
the derivative is followed or refused by name, never a silent zero (found by the NumPy coverage
work: ``np.sin(Box(x))`` gave a zero gradient)."""
import numpy as np
import pytest

import yuebing as yb


class Box:
    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return self.values


def through_a_ufunc(x):
    return np.sum(np.sin(Box(x)))


def through_a_poly1d(x):
    return np.sum(np.exp(np.poly1d(x)))


@pytest.mark.parametrize("f", [through_a_ufunc, through_a_poly1d])
def test_an_array_object_given_to_a_ufunc_is_refused_by_name(f):
    x = np.array([0.5, 1.0, 2.0])
    for run in (lambda: yb.grad(f)(x), lambda: yb.jvp(f, (x,), (np.ones(3),))):
        with pytest.raises(Exception, match="__array__"):
            run()


def test_arrays_and_numbers_are_not_array_objects():
    from yuebing.rules.array_like import _array_object

    assert not any(_array_object(v) for v in (np.ones(2), np.float64(1.0), 1.0, [1.0], (1.0,), "a", None))
    assert _array_object(Box(np.ones(2))) and _array_object(np.poly1d([1.0, 2.0]))
