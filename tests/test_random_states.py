"""``np.random.RandomState(seed)`` and ``random.Random(seed)`` made inside the differentiated function
(``rules/random_states.py``): the draws are constants with respect to the inputs, except through
the parameters that take them. Every mode against central differences (``tests/all_modes.py``),
third order too, and the generator's state is the one a plain call leaves."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from tests.all_modes import check_all_modes


def noise_added(x):
    rs = np.random.RandomState(3)
    return np.sum((x + 0.1 * rs.standard_normal(x.shape)) ** 2)


def draws_taking_x(x):
    rs = np.random.RandomState(7)
    return np.sum(rs.normal(loc=x, scale=2.0) * x)


def projected(x):
    """scikit-learn's random projections in small: a random matrix from a seed."""
    rs = np.random.RandomState(0)
    w = rs.uniform(-1.0, 1.0, size=(4, x.size))
    return np.sum(np.cos(w @ x))


def python_generator(x):
    """``random.Random(seed)`` made inside: its shuffle and sample move values with their derivatives."""
    import random

    r = random.Random(0)
    values = [x[0], x[1] * 2.0, x[2] ** 2]
    r.shuffle(values)
    picked = r.sample(values, 2)
    return values[0] + 3.0 * values[1] + 7.0 * values[2] + picked[0] * picked[1] + r.random() * x[0]


FUNCTIONS = [noise_added, draws_taking_x, projected, python_generator]
X = np.array([0.3, -0.8, 1.1])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode_against_differences(f):
    check_all_modes(f, X.copy())


@pytest.mark.parametrize("f", FUNCTIONS[:3], ids=lambda f: f.__name__)
def test_third_order_refuses_the_draws_by_name(f):
    """Third order refuses random draws under ``yb.grad`` (docs/limitations.md, "Higher order")."""
    with pytest.raises(yb.NestedDifferentiationError, match="random draws"):
        check_third_order(f, X.copy())


def test_third_order_of_pythons_generator():
    """``random.Random``'s draws are Python code over a C bit source: third order follows them."""
    check_third_order(python_generator, X.copy())


def test_the_draws_are_the_plain_calls():
    assert yb.value_and_grad(noise_added)(X.copy())[0] == noise_added(X.copy())
    assert yb.jvp(projected, (X.copy(),), (X.copy(),))[0] == projected(X.copy())
