"""The closed-form second-order rules of elementwise operations (transform/dual_elementwise.py):
against central differences of the gradient, and against the generic elementwise class where
strong zeros matter (a zero cotangent times an infinite partial)."""
import operator

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order
from yuebing.transform import dual_elementwise

rng = np.random.default_rng(7)
A, B, C = rng.normal(size=(3, 4)), rng.uniform(0.5, 2.0, size=(3, 4)), rng.normal(size=4)

CASES = [
    (np.exp, A), (np.expm1, A), (np.log, B), (np.sin, A), (np.cos, A), (np.tanh, A),
    (np.add, A, B), (operator.add, A, 1.5), (np.subtract, 1.5, A), (operator.sub, A, C),
    (np.multiply, A, B), (operator.mul, 2.5, A), (operator.mul, A, C),
    (np.divide, A, B), (operator.truediv, A, 1.7), (operator.truediv, 1.3, B), (operator.truediv, A, C + 3.0),
    (operator.pow, A, 2), (operator.pow, B, 3), (np.power, B, -2), (operator.pow, A, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{getattr(c[0], '__name__', c[0])}-{len(c) - 1}")
def test_against_central_differences(case):
    f, *args = case
    assert dual_elementwise.FORMULAS.get(f) is not None
    check_second_order(f, *args)


def chain(x, s):
    """Every formula in one function, with a float variable mixed in."""
    y = np.sin(x) * s + np.exp(x / 3.0) - np.cos(x) ** 2
    z = np.log(y * y + 1.0) / (s + x * x + 1.0) - np.tanh(x) * np.expm1(x * 0.1)
    return np.sum(z * y)


def test_a_chain_against_central_differences():
    check_second_order(chain, A, 0.7)


def _generic_hvp(f, args, direction):
    saved = dict(dual_elementwise.FORMULAS)
    dual_elementwise.FORMULAS.clear()
    try:
        return yb.hvp(f, args, direction)
    finally:
        dual_elementwise.FORMULAS.update(saved)


def zero_weighted_log(x, w):
    return np.sum(np.log(x) * w) + np.sum(x * x)


def test_strong_zero_as_the_generic_rule():
    """log at 0 has an infinite partial; a zero weight there makes the cotangent exactly 0, which
    must contribute 0 (not nan), as in the generic elementwise class."""
    x = np.array([0.0, 1.0, 2.0])
    w = np.array([0.0, 1.0, 3.0])
    args, direction = (x, w), (np.array([0.0, 0.5, -1.0]), np.array([0.0, 0.2, 0.1]))
    fast = yb.hvp(zero_weighted_log, args, direction)
    generic = _generic_hvp(zero_weighted_log, args, direction)
    for a, b in zip(fast[1] + fast[2], generic[1] + generic[2]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        assert not np.isnan(a).any()


def test_outputs_share_no_tangent_with_inputs():
    """``x + c`` with a constant ``c``: the output's tangent equals ``x``'s but must be its own array
    (an in-place update of one would change the other)."""
    def f(x):
        y = x + 1.0
        y *= x
        return np.sum(y * x)

    check_second_order(f, A)


def sums(x, y):
    """``np.sum`` and ``ndarray.sum`` of every element, of a variable and of a constant array."""
    return np.sum(x * y) * x.sum() + np.sum(np.sin(x)) * np.sum(B)


def test_sums_against_central_differences():
    check_second_order(sums, A, B)


def masked(h):
    return np.sum((h * (0 <= h)) ** 2 + h * np.arange(4))


def test_masks_and_int_arrays_are_data():
    check_second_order(masked, A)
