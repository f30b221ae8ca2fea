"""Class and call protocols (issue 13, items 6 and 8): ``f(*array)`` at a call site, dataclasses
with ``__post_init__`` (frozen ones too), classes overriding ``__getattr__``/``__setattr__``/
``__getattribute__``, ``__slots__`` classes and ``super()`` chains. Each function is checked in
reverse mode (``yb.grad``), forward mode (``yb.jvp``) and second order (``yb.hessian``,
``yb.hvp``) against central finite differences of the plain function."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb

H1, H2 = 1e-6, 1e-4


def _fd_gradient(f, x):
    e = np.eye(len(x))
    return np.array([(f(x + H1 * e[i]) - f(x - H1 * e[i])) / (2 * H1) for i in range(len(x))])


def _fd_hessian(f, x):
    n, e = len(x), np.eye(len(x)) * H2
    return np.array([[(f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j]) + f(x - e[i] - e[j]))
                      / (4 * H2 * H2) for j in range(n)] for i in range(n)])


def check_all_modes(f, x):
    """Gradient, JVP, Hessian and HVP of ``f`` at ``x`` against finite differences; ``x`` restored."""
    x = np.asarray(x, dtype=float)
    before = x.copy()
    gradient = _fd_gradient(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), gradient, rtol=1e-5, atol=1e-7)
    v = np.linspace(0.3, 1.1, len(x))
    np.testing.assert_allclose(yb.jvp(f, (x,), (v,))[1], gradient @ v, rtol=1e-5, atol=1e-7)
    hessian = _fd_hessian(f, x)
    np.testing.assert_allclose(yb.hessian(f)(x), hessian, rtol=1e-4, atol=1e-5)
    _, g, hv = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(g[0], gradient, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hv[0], hessian @ v, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(x, before)


X3 = np.array([0.7, -1.3, 0.4])

# --------------------------------------------------------------------------------------------
# f(*array)
# --------------------------------------------------------------------------------------------


def _three(a, b, c):
    return a * b * b + np.sin(c) * a


def _rows(r0, r1):
    return float(np.sum(r0 * r1 ** 2))


def star_vector(x):
    return _three(*x)


def star_mixed(x):
    return _three(x[0] * 2.0, *x[1:])


def star_rows(x):
    m = np.stack([x, x * x])
    return _rows(*m)


def star_built_inside(x):
    return _three(*np.array([x[1], x[2], x[0]]) ** 2)


@pytest.mark.parametrize("f", [star_vector, star_mixed, star_rows, star_built_inside])
def test_star_array(f):
    check_all_modes(f, X3)


def test_star_int_array_is_constant():
    def f(x):
        return _three(x[0], *np.array([2, 3]))
    check_all_modes(f, X3)
