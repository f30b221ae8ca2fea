"""A ufunc writing into an int or bool array (``out=`` a non-float array) beside differentiated
code: the write carries no derivative, the pullback puts the old contents back. Its reverse
pass crashed on the int array's missing fdata (TypeError: '_Marker' object does not support
item assignment)."""
import numpy as np
import pytest

from .modes import check_every_mode


def counts_into_an_int_array(x):
    k = np.zeros(3, dtype=np.int64)
    np.add(np.arange(3), np.arange(3), out=k)
    return np.sum(x * k)


def flags_into_a_bool_array(x):
    mask = np.zeros(3, dtype=bool)
    np.greater(x, 0.5, out=mask)
    np.logical_not(mask, out=mask)
    return np.sum(np.where(mask, x * x, np.sin(x)))


def overwrites_an_int_array_read_before(x):
    k = np.arange(3)
    first = np.sum(x * k)
    np.multiply(k, 2, out=k)
    return first + np.sum(x ** 2 * k)


@pytest.mark.parametrize("f", [counts_into_an_int_array, flags_into_a_bool_array, overwrites_an_int_array_read_before],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, np.array([0.3, 0.7, 1.1]))
