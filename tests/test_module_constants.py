"""Module attributes as operands (``np.pi``, ``math.e``) in array blocks, float blocks and float
loops: the generated reverse pass has no module names bound, so the block reads them once and
keeps what the adjoint needs (``np.sum(x * np.pi)`` raised NameError before). Every mode,
against central finite differences."""
import math

import numpy as np
import pytest

import yuebing as yb


def array_block(x):
    return np.sum(x * np.pi) + np.sum(np.sin(x) * np.e + np.pi)


def array_block_division(x):
    y = x / np.pi
    return np.sum(np.exp(y) / np.e)


def float_block(x):
    y = x * math.pi
    y = y + 1.0
    y = y * y
    y = y - math.e
    y = y / 3.0
    y = y * x
    return y + math.pi


def float_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * math.pi
    return s * s


CASES = [(array_block, np.array([0.3, -1.2, 2.0])), (array_block_division, np.array([0.3, -1.2, 2.0])),
         (float_block, 0.7), (float_loop, np.array([0.3, -1.2, 2.0]))]


def _fd_grad(f, x, h=1e-6):
    if np.ndim(x) == 0:
        return (f(x + h) - f(x - h)) / (2 * h)
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


@pytest.mark.parametrize("f,x", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_every_mode(f, x):
    expected = _fd_grad(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    direction = np.ones_like(x) if np.ndim(x) else 1.0
    _, t = yb.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(t, np.sum(expected * direction), rtol=1e-6, atol=1e-8)
    hessian = yb.hessian(f)(x)
    fd_hessian = _fd_grad(lambda v: _fd_grad(f, v, 1e-4), x, 1e-4) if np.ndim(x) == 0 else \
        np.array([(_fd_grad(f, x + 1e-4 * e) - _fd_grad(f, x - 1e-4 * e)) / 2e-4 for e in np.eye(len(x))])
    np.testing.assert_allclose(hessian, fd_hessian, rtol=1e-4, atol=1e-5)
