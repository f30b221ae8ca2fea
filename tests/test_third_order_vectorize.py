"""``vec.pyfunc`` (and ``vec.otypes``...) read back from an ``np.vectorize`` object in the function
under ``yb.grad`` inside ``yb.hvp`` (``transform/plain_partials.py``): it was refused. The function
comes with the tangent ``np.vectorize`` gave it in the plain program (its plain program, for a
closure over the function's variables), or none (a function capturing none, or a vectorize object
made outside). Third derivatives against central differences of reverse over reverse; reverse,
forward and second order of the same functions are checked in ``tests/test_decorated_closures.py``
and below.
"""
import numpy as np
import pytest

from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

from .modes import check_every_mode


def closures_read_back(x):
    @np.vectorize
    def g(v):
        return v * x * x
    h = np.vectorize(lambda v: v * np.sin(x))
    return g.pyfunc(2.0) + h.pyfunc(1.0) * x


def _cubed_sine(v):
    return np.sin(v) ** 3


VECTORIZED = np.vectorize(_cubed_sine, otypes=[float])


def made_outside_read_back(x):
    k = np.vectorize(_cubed_sine)
    scale = 1.5 if VECTORIZED.otypes == "d" else 0.0
    return VECTORIZED.pyfunc(x * 2.0) * k.pyfunc(x) * scale


def called_and_read_back(x):
    g = np.vectorize(lambda v: np.exp(v * x))
    return np.sum(g(np.array([0.5, -0.2]))) + g.pyfunc(x) ** 2


FUNCTIONS = [closures_read_back, made_outside_read_back, called_and_read_back]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, 0.7)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_lower_orders(f):
    check_every_mode(f, 0.7)
    check_second_order(f, 0.7)
