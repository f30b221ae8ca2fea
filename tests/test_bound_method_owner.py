"""``m.__self__`` of a bound method read in differentiated code is the object ``m`` is bound to,
with that object's derivative data (a builtin method's: ``a.sum``, ``lst.append``, ``y.__add__``;
a Python method's: ``box.get``). It was read as a constant: ``m = a.sum; np.sum(m.__self__ * x)``
gave half the gradient, silently."""
import numpy as np
import pytest

from .restored_arguments import check_restored


def array_method_owner(x):
    a = x * 2.0
    m = a.sum
    return np.sum(m.__self__ * x) + m()


def slot_wrapper_owner(x):
    a = x * 2.0
    m = a.__add__
    return np.sum(m.__self__ * x)


def list_method_owner(x):
    items = [x[0] * 2.0, x[1]]
    m = items.append
    m(x[2] * x[0])
    return m.__self__[0] * x[0] + m.__self__[2] * x[1]


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def python_method_owner(x):
    box = Box(x * 3.0)
    m = box.get
    return np.sum(m.__self__.v * x) + np.sum(m() * x)


def float_method_owner(x):
    y = x[0] * 2.0
    m = y.__mul__
    return m.__self__ * x[1] + np.sum(x)


@pytest.mark.parametrize("f", [array_method_owner, slot_wrapper_owner, list_method_owner, python_method_owner,
                               float_method_owner])
def test_the_owner_read_back_keeps_its_derivative(f):
    check_restored(f, np.array([1.0, 2.0, -0.5]))
