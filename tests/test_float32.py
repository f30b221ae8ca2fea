"""float32 arrays throughout: tangents keep the primal's dtype in reverse mode, forward mode,
Hessian-vector products and Hessians, and the derivatives agree with the same functions in
float64 to float32 precision (float64 is the oracle: the same code, more bits)."""
import numpy as np
import pytest

import yuebing as yb


def _elementwise(x):
    return np.sum(np.sin(x) ** 2 + 0.5 * np.exp(-x * x))


def _matrix(x):
    a = x.reshape(2, 3)
    return np.sum(np.tanh(a @ a.T)) + np.float32(0.25) * np.sum(a * a)


def _logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def _statistics(x):
    return np.var(x) + np.mean(np.cumsum(x) ** 2) + np.prod(1.0 + 0.1 * x)


def _loop(x):
    total = x[0] * 0.0
    for i in range(1, x.shape[0]):
        total = total + x[i] * x[i - 1]
    return total + np.sum(np.where(x > 0, x, 0.1 * x) ** 2)


def _casts(x):
    y = x.astype(np.float64)  # a cast up and back: the gradient returns to float32
    return np.float32(np.sum(y ** 3)) + np.sum(x.astype(np.float32) * 2.0)


FUNCTIONS = [_elementwise, _matrix, _logsumexp, _statistics, _loop, _casts]
X64 = np.array([0.3, -0.7, 1.1, 0.4, -1.3, 0.9])
X32 = X64.astype(np.float32)
DIRECTION = np.array([1.0, -0.5, 0.25, 2.0, 0.0, -1.0])
TOLERANCE = {"rtol": 2e-3, "atol": 2e-4}  # float32's epsilon is 1.2e-7: sums of a few terms stay well inside


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_gradient_is_float32(f):
    g32 = yb.grad(f)(X32)
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, yb.grad(f)(X64), **TOLERANCE)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_tangent_matches_float64(f):
    _, t32 = yb.jvp(f, (X32,), (DIRECTION.astype(np.float32),))
    _, t64 = yb.jvp(f, (X64,), (DIRECTION,))
    np.testing.assert_allclose(t32, t64, **TOLERANCE)
    _, jt = yb.jvp(lambda x: np.sin(x) * x, (X32,), (DIRECTION.astype(np.float32),))
    assert jt.dtype == np.float32  # an array output's tangent keeps its dtype


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hvp_is_float32(f):
    _, (g32,), (h32,) = yb.hvp(f, (X32,), (DIRECTION.astype(np.float32),))
    _, (g64,), (h64,) = yb.hvp(f, (X64,), (DIRECTION,))
    assert g32.dtype == np.float32 and h32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, **TOLERANCE)
    np.testing.assert_allclose(h32, h64, **TOLERANCE)


@pytest.mark.parametrize("f", [_elementwise, _matrix, _statistics], ids=lambda f: f.__name__)
def test_hessian_is_float32(f):
    h32 = yb.hessian(f)(X32)
    assert h32.dtype == np.float32 and h32.shape == (6, 6)
    np.testing.assert_allclose(h32, yb.hessian(f)(X64), **TOLERANCE)
    prepared = yb.prepare_hessian(f, X32)
    assert prepared(X32).dtype == np.float32


def test_hessian_of_mixed_dtypes():
    def f(a, b):
        return np.sum(a * a * b[0]) + np.sum(b ** 3)

    b = np.array([0.5, -1.5])
    h = yb.hessian(f, argnums=(0, 1))(X32, b)
    assert h[0][0].dtype == np.float32 and h[1][1].dtype == np.float64
    assert h[0][1].dtype == np.float64  # mixed blocks in the wider dtype
    h64 = yb.hessian(f, argnums=(0, 1))(X64, b)
    for row, row64 in zip(h, h64):
        for block, block64 in zip(row, row64):
            np.testing.assert_allclose(block, block64, **TOLERANCE)


def test_float32_finite_differences():
    """The float32 gradient against central differences taken in float64 on the float32 values."""
    for f in FUNCTIONS:
        g = yb.grad(f)(X32)
        eps = 1e-3  # large enough for the float32 rounding inside _casts, small for truncation
        fd = np.array([(f(X64 + eps * e) - f(X64 - eps * e)) / (2 * eps) for e in np.eye(6)])
        np.testing.assert_allclose(g, fd, **TOLERANCE)
