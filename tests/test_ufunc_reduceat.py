"""``ufunc.reduceat`` (rules/ufunc_methods.py) inside functions, in every mode (grad, jvp,
jacobian(mode="fwd"), hvp, hessian) against central differences, and the definitions' values
against NumPy's own on random pieces (overlapping, repeated and decreasing indices, any axis).
The rules' own cases run in tests/test_rules.py."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.ufunc_methods import _ufunc_reduceat

INDICES = np.array([0, 2, 2, 5, 1, 4])


def add_pieces(x):
    return np.sum(np.add.reduceat(x * x, INDICES) ** 2) + np.sum(np.sin(np.add.reduceat(x, [0, 3])))


def multiply_pieces(x):
    return np.sum(np.multiply.reduceat(x, INDICES) ** 2)


def maximum_pieces(x):
    return np.sum(np.maximum.reduceat(np.exp(x), INDICES) * x[:6])


def pieces_of_rows(x):
    m = np.reshape(x, (2, 3))
    return np.sum(np.add.reduceat(m * m, [0, 2], axis=1) * np.cos(m[:, :2]))


X = np.array([0.4, -0.9, 1.3, 0.7, -0.2, 1.1])


@pytest.mark.parametrize("f", [add_pieces, multiply_pieces, maximum_pieces, pieces_of_rows],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


def test_the_definition_gives_numpys_values():
    rng = np.random.default_rng(3)
    for _ in range(100):
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 4)))
        axis = int(rng.integers(-len(shape), len(shape)))
        n = shape[axis]
        indices = rng.integers(0, n, size=rng.integers(1, 6))
        x = rng.standard_normal(shape)
        for ufunc in (np.add, np.multiply, np.maximum, np.subtract):
            np.testing.assert_allclose(_ufunc_reduceat(ufunc, x, indices, axis=axis),
                                       ufunc.reduceat(x, indices, axis=axis), rtol=1e-12, atol=1e-12)


def test_an_index_out_of_range_is_numpys_error():
    with pytest.raises(IndexError):
        yb.grad(lambda x: np.sum(np.add.reduceat(x, [0, 9])))(X.copy())


@pytest.mark.slow  # (third order: the CI's slow step)
def test_add_reduceat_third_order():
    """add.reduceat is linear (its third-order rule is its own); the other ufuncs' reduceat
    reduce each piece with np.prod/np.max, which third order refuses by name."""
    from yuebing.testing.third_order import check_third_order

    def f(x):
        return np.sum(np.add.reduceat(x * x, [0, 2, 2, 4]) ** 2) + np.sum(np.sin(np.add.reduceat(x, [3, 1])))

    check_third_order(f, X[:5].copy(), rtol=1e-4, atol=1e-5)
