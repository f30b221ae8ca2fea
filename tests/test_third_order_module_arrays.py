"""A module's float array (``mod.W``) read in the function under ``yb.grad`` inside ``yb.hvp``:
the plain forward program reads it through ``read_only``, whose result is a constant (it was
refused as yuebing's own machinery). Third derivatives against differences of reverse over reverse."""
import sys
import types

import numpy as np

import yuebing as yb

_module = types.ModuleType("yb_module_arrays")
_module.W = np.array([0.5, -1.5, 2.0])
sys.modules[_module.__name__] = _module
import yb_module_arrays  # noqa: E402 - the module made above


def _f(x):
    return np.sum(np.sin(x) * yb_module_arrays.W) + np.sum(x ** 3 * yb_module_arrays.W)


def test_module_array_under_grad_inside_hvp():
    x, v, u = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -0.25]), np.array([0.2, 1.0, -0.6])

    def F(x):
        return np.sum(yb.grad(_f)(x) * u)

    _, (gradient,), (product,) = yb.hvp(F, (x,), (v,))
    reverse_over_reverse = yb.grad(F)
    np.testing.assert_allclose(gradient, reverse_over_reverse(x), rtol=1e-10)
    expected = (reverse_over_reverse(x + 1e-5 * v) - reverse_over_reverse(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(product, expected, rtol=1e-6, atol=1e-8)
