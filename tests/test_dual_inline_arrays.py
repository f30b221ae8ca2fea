"""Second order's inline templates for ``len``, new arrays (``np.eye``, ``identity``, ``zeros``,
``ones``) and ``np.diag`` of a matrix (``dual_templates._new_array_or_diagonal``), each a generic
call of the zero or linear class before: Hessian-vector products and dense Hessians (the batched
pass, where new arrays take the generic call) against central differences of the gradient, in
every mode, and writes into new arrays and through the diagonal's views."""
from __future__ import annotations

import math
import re

import numpy as np

import yuebing as yb

from .all_modes import check_all_modes


def _kernel_and_diagonal(x):
    n = len(x)
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.7 * np.eye(n)  # a constant eye
    e = np.identity(n)  # written into: zero fdata and tangents of its own
    e[0, 1] = x[2] * x[3]
    z = np.zeros((n,))
    z[1] = x[0] ** 2
    o = np.ones(n)
    return np.sum(np.log(np.diag(k @ k))) + np.sum(e @ x) * np.sum(z) + np.sum(o * x) ** 2


def _hessian_by_differences(f, x, h=1e-5):
    grad = yb.grad(f)
    return np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_new_arrays_and_diagonal_in_every_mode():
    x = np.linspace(-0.6, 1.1, 5)
    check_all_modes(_kernel_and_diagonal, x)
    expected = _hessian_by_differences(_kernel_and_diagonal, x)
    np.testing.assert_allclose(yb.hessian(_kernel_and_diagonal)(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yb.hessian(_kernel_and_diagonal, chunk_size=1)(x), expected, rtol=1e-5, atol=1e-6)
    source = yb.show(_kernel_and_diagonal, mode="hvp")
    for text in ("inline: n = len(x)", "inline: _t7 = np.eye(n)", "inline: e = np.identity(n)",
                 "inline: z = np.zeros(", "inline: o = np.ones(n)", "np.diag("):
        assert text in source


def _writes_through_the_diagonal(a):
    m = a.reshape(3, 3) * 1.0
    d = np.diag(m)  # NumPy's read-only view; its derivative parts are views of m's
    return np.sum(d * d) + np.sum(np.sin(d)) * m[0, 1]


def test_the_diagonal_of_a_matrix_in_every_mode():
    a = np.linspace(0.2, 1.4, 9)
    check_all_modes(_writes_through_the_diagonal, a)
    np.testing.assert_allclose(yb.hessian(_writes_through_the_diagonal)(a),
                               _hessian_by_differences(_writes_through_the_diagonal, a), rtol=1e-5, atol=1e-6)


def _lengths_and_module_floats(x):
    n = len(x)
    a = x[0] * x[1]
    b = a / n + n * a - 0.5 * n + a * math.pi - 2 * math.pi
    m = n * 2  # ints only: the generic call, an int
    return b * b + m * x[2]


def test_arithmetic_with_a_length_or_a_module_float_in_every_mode():
    """``0.5 * n``, ``a / n``, ``2 * math.pi`` run inline (``n`` bound only by ``len``: an int
    without rdata; ``math.pi`` a module's float), ``n * 2`` takes the generic call."""
    x = np.linspace(0.4, 1.3, 4)
    check_all_modes(_lengths_and_module_floats, x)
    np.testing.assert_allclose(yb.hessian(_lengths_and_module_floats)(x),
                               _hessian_by_differences(_lengths_and_module_floats, x), rtol=1e-5, atol=1e-6)
    source = yb.show(_lengths_and_module_floats, mode="hvp")
    for call in (r"operator.mul\(0.5, n\)", r"operator.truediv\(a, n\)", r"operator.mul\(2, math.pi\)"):
        assert re.search(r"# inline: _t\d+ = " + call, source), call
    assert "# inline: m = operator.mul(n, 2)" not in source
