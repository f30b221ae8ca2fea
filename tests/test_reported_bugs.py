"""Regression tests for bugs other engineers reported, each with the family its mechanism broke.

Every derivative is checked against central finite differences of the function itself (or
``check_rule``), never against typed-in numbers.
"""
import numpy as np
import pytest

import yuebing as yb


def central_difference(f, x, h=1e-6):
    """d f / d x at float ``x`` by a central difference."""
    return (f(x + h) - f(x - h)) / (2 * h)


# --------------------------------------------------------------------------------------------
# 1. Rules whose output is an integer array: the pullback's cotangent of that output was a bare
#    0.0, which shape arithmetic (np.diagonal(g, 1), g.reshape(...), g[:, 1:]) refused.
# --------------------------------------------------------------------------------------------

I1 = np.arange(1, 4)
I2 = np.arange(1, 10).reshape(3, 3)

INTEGER_OUTPUTS = {
    "diag offset (the report)": lambda: np.diag(np.arange(1, 3), 1) @ np.ones(3),
    "diag of a vector": lambda: np.diag(I1, -1),
    "diagflat": lambda: np.diagflat(I1, 1),
    "tril": lambda: np.tril(I2, -1),
    "triu": lambda: np.triu(I2, 1),
    "cumsum along an axis": lambda: np.cumsum(I2, axis=0),
    "ndarray.cumsum": lambda: I1.cumsum(),
    "concatenate": lambda: np.concatenate([I1, I1]),
    "stack": lambda: np.stack([I1, I1]),
    "hstack": lambda: np.hstack([I1, I1]),
    "vstack": lambda: np.vstack([I1, I1]),
    "diff": lambda: np.diff(I1),
    "cross": lambda: np.cross(I1, I1[::-1]),
    "split": lambda: np.split(I1, 3)[1],
}


@pytest.mark.parametrize("make", INTEGER_OUTPUTS.values(), ids=INTEGER_OUTPUTS.keys())
def test_integer_array_outputs_in_reverse_mode(make):
    def f(s):
        return np.sum(make() * s * s)

    assert np.isclose(yb.grad(f)(1.5), central_difference(f, 1.5))


@pytest.mark.parametrize("make", INTEGER_OUTPUTS.values(), ids=INTEGER_OUTPUTS.keys())
def test_integer_array_outputs_in_second_order(make):
    def f(s):
        return np.sum(make() * s * s * s)

    _, (gradient,), (curvature,) = yb.hvp(f, (1.5,), (1.0,))
    assert np.isclose(gradient, central_difference(f, 1.5))
    assert np.isclose(curvature, central_difference(yb.grad(f), 1.5), rtol=1e-5)


def test_integer_array_outputs_in_forward_mode():
    def f(s):
        return sum(np.sum(make() * s * s) for make in INTEGER_OUTPUTS.values())

    assert np.isclose(yb.jvp(f, (1.5,), (1.0,))[1], central_difference(f, 1.5))
