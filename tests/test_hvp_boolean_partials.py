"""A product with a boolean or integer mask (``x * mask``) under ``yb.hvp``: the HVP's unit seed
through a sum made the mask itself the cotangent of ``x``, so negating it (``(-x) * mask``) raised
numpy's boolean-negative TypeError (fuzz seed 1425). Checked against differences of the gradient."""
import numpy as np
import pytest

import yuebing as yb

X = np.array([0.39963842, -0.76847095, -1.16482676, 0.84159668])
V = np.array([0.3, -0.7, 0.5, 1.1])


def negated_times_mask(x):
    mask = x > 0.115
    return np.sum((-x) * mask) + np.sum(x ** 3 * mask)


def times_int_mask(x):
    mask = (x > 0.115).astype(int)
    return np.sum(-(np.sin(x) * mask)) + np.sum((-x) * mask)


def mask_times_negated(x):
    return np.sum((x < 0.5) * (-x * x))


@pytest.mark.parametrize("f", [negated_times_mask, times_int_mask, mask_times_negated])
def test_hvp_through_a_mask_matches_differences(f):
    h = 1e-6
    expected = (yb.grad(f)(X + h * V) - yb.grad(f)(X - h * V)) / (2 * h)
    _, gradient, (hv,) = yb.hvp(f, (X,), (V,))
    np.testing.assert_allclose(gradient[0], yb.grad(f)(X), rtol=1e-12)
    np.testing.assert_allclose(hv, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.hessian(f)(X) @ V, expected, rtol=1e-6, atol=1e-8)
