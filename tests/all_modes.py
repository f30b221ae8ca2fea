"""One check of a scalar function in every mode, against central finite differences.

``check_all_modes(f, x)`` compares, for a float or float array ``x``: the value of
``value_and_grad``, ``jvp`` and ``hvp`` with the plain call; the gradient (in direction ``v``)
and the forward tangent with central differences of ``f``; the Hessian-vector product with
central differences of ``yb.grad(f)``. Used by the tests of the front end's rebinding, closure
and source handling, which must hold in every mode.
"""
from __future__ import annotations

import copy

import numpy as np

import yuebing as yb


def _as_input(x, like):
    return float(x) if np.ndim(like) == 0 and not isinstance(like, np.ndarray) else np.asarray(x, float).reshape(np.shape(like))


def _central(f, x, v, h=1e-6):
    return (np.asarray(f(x + h * v), float) - np.asarray(f(x - h * v), float)) / (2 * h)


def _direction(x):
    size = np.size(x)
    v = np.linspace(0.3, 1.1, size) if size > 1 else np.array([0.7])
    return v.reshape(np.shape(x)) if np.ndim(x) else float(v[0])


def check_all_modes(f, x, *, tol=1e-5, second_order=True):
    """Assert that every mode of ``f`` at ``x`` agrees with the plain call and finite differences."""
    x0 = copy.deepcopy(x)
    xa = np.asarray(x, float)
    v = _direction(x)
    plain = lambda b: f(_as_input(b, x0))  # noqa: E731
    expected_value = f(copy.deepcopy(x0))
    expected_slope = _central(plain, xa, np.asarray(v, float))

    value, grad = yb.value_and_grad(f)(copy.deepcopy(x0))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12, err_msg="grad: value")
    np.testing.assert_allclose(np.sum(np.asarray(grad, float) * v), expected_slope, rtol=tol, atol=tol,
                               err_msg="grad: directional derivative")

    value, tangent = yb.jvp(f, (copy.deepcopy(x0),), (v,))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12, err_msg="jvp: value")
    np.testing.assert_allclose(tangent, expected_slope, rtol=tol, atol=tol, err_msg="jvp: tangent")

    if not second_order:
        return
    value, (grad2,), (hv,) = yb.hvp(f, (copy.deepcopy(x0),), (v,))
    np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12, err_msg="hvp: value")
    np.testing.assert_allclose(np.sum(np.asarray(grad2, float) * v), expected_slope, rtol=tol, atol=tol,
                               err_msg="hvp: gradient")
    gradient = lambda b: np.asarray(yb.grad(f)(_as_input(b, x0)), float)  # noqa: E731
    np.testing.assert_allclose(np.asarray(hv, float), _central(gradient, xa, np.asarray(v, float), 1e-5),
                               rtol=1e-4, atol=1e-4, err_msg="hvp: Hessian-vector product")
