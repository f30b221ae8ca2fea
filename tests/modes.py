"""Every derivative mode of a scalar function of one argument, against central finite differences:
``yb.grad``, ``yb.jvp``, ``yb.jacobian(mode="fwd")``, ``yb.hvp`` and ``yb.hessian`` (the last two
against differences of ``yb.grad``). Shared by the tests of powers and of the strong-zero rule."""
from __future__ import annotations

import copy

import numpy as np

import yuebing as yb


def central(f, x, h):
    """Central differences of ``f`` at float or float array ``x``: the gradient (or Jacobian
    rows) as an array shaped like ``f(x)`` times ``x``."""
    x = np.asarray(x, float)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        plus, minus = _like(x + e, x), _like(x - e, x)
        columns.append((np.asarray(f(plus), float) - np.asarray(f(minus), float)) / (2 * h))
    return np.stack(columns, axis=-1).reshape(np.shape(f(_like(x, x))) + x.shape)


def _like(v, x):
    return float(v) if np.ndim(x) == 0 else np.asarray(v, float)


def _seed(x):
    v = np.linspace(0.4, 1.3, np.size(x)).reshape(np.shape(x))
    return float(v) if np.ndim(x) == 0 else v


def check_every_mode(f, x, *, rtol=1e-5, atol=1e-6, second_order=True):
    """Assert that every mode of ``f`` at ``x`` (a float or a float array) gives the derivatives
    central differences give, with no NaN anywhere."""
    scalar = np.ndim(x) == 0
    x = float(x) if scalar else np.asarray(x, float)
    fresh = lambda: copy.deepcopy(x)  # noqa: E731 - functions may mutate their argument
    plain = lambda v: f(copy.deepcopy(v))  # noqa: E731
    expected = central(plain, x, 1e-6)
    v = _seed(x)
    slope = np.sum(expected * v)

    value, g = yb.value_and_grad(f)(fresh())
    np.testing.assert_allclose(value, f(fresh()), rtol=1e-12, err_msg="grad: value")
    np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol, err_msg="grad")

    value, t = yb.jvp(f, (fresh(),), (v,))
    np.testing.assert_allclose(t, slope, rtol=rtol, atol=atol, err_msg="jvp")
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(fresh()), expected, rtol=rtol, atol=atol,
                               err_msg="jacobian(mode='fwd')")
    if not second_order:
        return
    hessian = central(lambda u: yb.grad(f)(copy.deepcopy(u)), x, 1e-5)
    value, (g2,), (hv,) = yb.hvp(f, (fresh(),), (v,))
    np.testing.assert_allclose(g2, expected, rtol=rtol, atol=atol, err_msg="hvp: gradient")
    np.testing.assert_allclose(hv, hessian @ np.ravel(v) if not scalar else hessian * v, rtol=1e-4, atol=1e-5,
                               err_msg="hvp")
    np.testing.assert_allclose(yb.hessian(f)(fresh()), hessian, rtol=1e-4, atol=1e-5, err_msg="hessian")


def run_in_mode(mode, f, x):
    """One call of ``f`` at ``x`` in ``mode`` ("grad", "jvp" or "hvp", the tangent all ones): for
    tests that a mode refuses or raises as the others do."""
    if mode == "grad":
        return yb.grad(f)(x)
    if mode == "jvp":
        return yb.jvp(f, (x,), (np.ones_like(x),))
    return yb.hvp(f, (x,), (np.ones_like(x),))
