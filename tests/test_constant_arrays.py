"""New constant arrays inside elementwise arithmetic (transform/constant_arrays.py): ``np.eye(n)``
between two runs of elementwise statements is moved ahead, so the runs make one array block in
every mode; a temporary only that block reads gets no fdata. Derivatives in every mode against
differences, the shape of the generated code, and the memory it saves."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.bench.cases import CASES
from yuebing.bench.memory import peak_ratio

from .all_modes import check_all_modes

X = np.linspace(-1.0, 1.3, 6)


def _kernel(x, s):
    n = len(x)
    return np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + s * np.eye(n)


def kernel_of_points(x):
    k = _kernel(x, 0.7)
    return np.sum(k * k * np.cos(k)) + np.linalg.slogdet(k)[1]


def kernel_of_noise(s):
    k = _kernel(X, s)
    return np.sum(np.sin(k) * k) + np.sum(np.log(np.diag(np.linalg.cholesky(k))))


def ones_and_zeros(x):
    n = len(x)
    y = np.sin(x) * 2.0 + np.ones(n) * x[0] - np.zeros(n)
    return np.sum(y * y * np.identity(n)[0])


def identity_kept_and_written(x):
    """``e`` is a variable the function reads again and writes into: moved, but it keeps its fdata."""
    d = x * x
    e = np.eye(len(x))
    k = d + e
    e[0, 0] = x[1]
    return np.sum(k * np.sin(k)) + np.sum(e @ x)


@pytest.mark.parametrize("f, x", [
    (kernel_of_points, X), (kernel_of_noise, 0.7), (ones_and_zeros, X), (identity_kept_and_written, X[:4]),
])
def test_every_mode_against_differences(f, x):
    check_all_modes(f, x, tol=1e-5)


def test_the_two_runs_make_one_block_and_the_identity_has_no_fdata():
    shown = yb.show(_kernel, X, 0.7)
    assert shown.count("# array block: lines") == 1
    assert "= np.eye(n); _t" in shown and "_f = _NF" in shown.split("= np.eye(n);")[1].split("\n")[0]
    assert "_zeros_like(_t" not in shown  # no fdata for the exponential, none for the identity
    forward = yb.show(_kernel, X, 0.7, mode="forward")
    assert forward.count("# array block: lines") == 1


def test_a_variable_read_again_keeps_its_fdata():
    shown = yb.show(identity_kept_and_written, X[:4])
    assert "e = np.eye(_t" in shown or "e = np.eye(" in shown
    assert "_NF" not in shown.split("= np.eye(")[1].split("\n")[0]


def test_gp_lml_gradient_memory():
    """The gradient of the bench's GP likelihood holds at most three times the function's peak
    memory (the Cholesky pullback keeps the factor, not the matrix; the kernel's block frees its
    intermediates as the function does and zero-fills no fdata for the exponential or the
    identity): 4.02 before."""
    case = next(c for c in CASES if c.name == "gp_lml")
    args = case.args()
    gradient = yb.value_and_grad(case.function, argnums=(0, 1, 2))
    yb.config(debug=False)  # (debug mode, on in the suite, keeps every rule's arguments for its checks)
    try:
        ratio, _, _ = peak_ratio(lambda: gradient(*args), lambda: case.function(*args))
    finally:
        yb.config(debug=True)
    assert ratio <= 3.0
    value, grads = gradient(*args)
    h = 1e-6
    for k, a in enumerate(args):  # the gradient against differences along one direction
        v = np.linspace(0.2, 1.0, np.size(a)).reshape(np.shape(a)) if np.ndim(a) else 0.5
        plus, minus = list(args), list(args)
        plus[k], minus[k] = a + h * v, a - h * v
        slope = (case.function(*plus) - case.function(*minus)) / (2 * h)
        assert np.sum(grads[k] * v) == pytest.approx(slope, rel=1e-5, abs=1e-5)
