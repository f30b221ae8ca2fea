"""The direct second-order rules of products of two float64 matrices (transform/dual_multilinear.py),
against central differences of the gradient."""
import operator

import numpy as np
import pytest

from yuebing.testing.second_order import check_second_order
from yuebing.transform import dual_multilinear

rng = np.random.default_rng(3)
P, Q, S = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 3))


@pytest.mark.parametrize("f, a, b", [(operator.matmul, P, Q), (np.matmul, P, Q), (np.dot, P, Q), (np.kron, P, Q),
                                     (np.kron, S, P)], ids=["matmul", "np.matmul", "dot", "kron", "kron2"])
def test_against_central_differences(f, a, b):
    assert f in dual_multilinear.PRODUCTS
    check_second_order(f, a, b)


def square_and_constant(x):
    """A product of a matrix with itself (shared fdata) and with constant data."""
    return np.sum((x @ x) * np.kron(x, S[:2, :2]).sum()) + np.sum(np.tanh(x @ S))


def test_shared_factors_and_constants():
    check_second_order(square_and_constant, S)


def mlp(w1, w2, x):
    h = w1 @ x
    h = h * (0 <= h)
    return np.sum((1.0 - w2 @ h) ** 2)


def test_a_small_network():
    check_second_order(mlp, rng.normal(size=(5, 3)), rng.normal(size=(2, 5)), rng.normal(size=(3, 4)))
