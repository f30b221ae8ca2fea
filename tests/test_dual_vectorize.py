"""np.vectorize in second order, element by element (transform/dual_vectorize.py): against
central differences of the gradient, with captured variables and outputs that are not floats."""
import math

import numpy as np

from yuebing.testing.second_order import check_second_order

rng = np.random.default_rng(5)
X, W = rng.normal(size=(3, 4)), rng.normal(size=3)


def plain(x):
    return np.sum(np.vectorize(lambda v: np.sin(np.cos(np.exp(v))))(x))


def capturing(x, w):
    """The element function reads a differentiable array and float of the caller."""
    scale = w[1] * 2.0
    return np.sum(np.vectorize(lambda v: math.tanh(v * scale) + w[0] * v * v)(x) ** 2)


def integer_valued(x):
    """An element function returning ints: no derivative through it (the general rule)."""
    return np.sum(np.vectorize(lambda v: 1 if v > 0 else 0)(x) * x * x)


def test_plain_element_function():
    check_second_order(plain, X)


def test_captured_variables():
    check_second_order(capturing, X, W)


def test_integer_outputs_take_the_general_rule():
    check_second_order(integer_valued, X)
