"""Methods of Python numbers and NumPy scalars in every mode (``z.conjugate()``, ``loss.item()``,
``np.sum(x).astype(np.float32)``), against central differences (``tests/all_modes.py``).

Second order once dropped the derivative of a method's owner when the owner was an immutable
number (``rules.core`` passes it as the bound method's rdata; ``transform/lifting.py`` did not):
``yb.hessian(lambda x: (x * x).conjugate())`` was 0.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.all_modes import check_all_modes


def _complex_square_norm(x):
    z = complex(x, 2.0 * x)
    return (z.conjugate() * z).real + z.conjugate().imag


METHOD_FUNCTIONS = {
    "complex.conjugate": _complex_square_norm,
    "float.conjugate": lambda x: (x * x).conjugate() * x,
    "float64.item": lambda x: (np.float64(x) ** 3).item() * x,
    "float64.sum": lambda x: (np.sum(np.array([x, 2.0 * x])) ** 2).sum(),
    "float64.astype": lambda x: np.sin(np.float64(x)).astype(np.float64) * x,
    "float64.mean": lambda x: (np.float64(x) ** 3).mean(),
    "float64.reshape": lambda x: np.sum(np.cos(np.float64(x)).reshape(1, 1) * x),
    "float64.squeeze": lambda x: np.exp(np.float64(x)).squeeze() * x,
    "float64.clip": lambda x: (np.float64(x) ** 2).clip(-10.0, 10.0) * x,
    "float64.tolist": lambda x: (np.float64(x) ** 3).tolist() + x,
    "float64.conjugate": lambda x: (np.float64(x) ** 3).conjugate(),
    "complex128.item": lambda x: abs(np.complex128(x + 1j * x * x).item()) ** 2,
}


@pytest.mark.parametrize("name", sorted(METHOD_FUNCTIONS))
def test_number_method_in_every_mode(name):
    check_all_modes(METHOD_FUNCTIONS[name], 1.3)


def test_scalar_method_with_integer_result_has_zero_derivative():
    f = lambda x: x * float(np.float64(x).argmax() + 1)  # noqa: E731
    check_all_modes(f, 0.7)


def test_float32_scalar_method_keeps_its_dtype():
    def f(x):
        s = np.sum(np.asarray([x, x], dtype=np.float32)).astype(np.float32)
        assert isinstance(s, np.float32)
        return float(s * s)

    np.testing.assert_allclose(yb.grad(f)(np.float32(1.5)), 2 * 2 * 2 * 1.5, rtol=1e-5)
