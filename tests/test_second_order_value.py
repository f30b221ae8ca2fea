"""The value ``yb.hvp`` returns is the function's, even when it is a 0-d view of an array the
function wrote (``r[0] = s; return r.reshape(())``, as SciPy's ``PPoly.integrate`` returns its
integral): the reverse pass puts such an array back as it was before the write, so the value is
copied before it runs (reverse mode copies its output likewise). Checked on the general path,
the direct path (a function already run) and ``prepare_hvp``, against the plain call; the
gradient and the Hessian-vector product against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import central


def written_then_viewed(x):
    r = np.zeros((1,))
    r[0] = np.sum(x * x * x)
    return r.reshape(())


def written_uninitialised(x):
    r = np.empty((1,))
    r[0] = np.sum(np.sin(x) * x)
    return r.reshape(())


def written_whole(x):
    r = np.zeros(())
    r[...] = np.prod(x)
    return r


X = np.array([1.5, -2.0, 0.7])
V = np.array([0.3, 1.1, -0.4])


@pytest.mark.parametrize("f", [written_then_viewed, written_uninitialised, written_whole], ids=lambda f: f.__name__)
def test_the_value_is_the_functions(f):
    expected_gradient = central(f, X, 1e-6)
    expected_hvp = central(lambda u: yb.grad(f)(u), X, 1e-5) @ V
    prepared = yb.prepare_hvp(f, X.copy())
    for value, (g,), (hv,) in (yb.hvp(f, (X.copy(),), (V,)), yb.hvp(f, (X.copy(),), (V,)), prepared((X.copy(),), (V,))):
        assert float(value) == pytest.approx(float(f(X.copy())), rel=1e-14)
        np.testing.assert_allclose(g, expected_gradient, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hv, expected_hvp, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", [written_then_viewed, written_uninitialised, written_whole], ids=lambda f: f.__name__)
def test_forward_mode_over_value_and_grad_keeps_the_value(f):
    """``yb.jvp`` of ``yb.value_and_grad(f)``'s value (forward mode over reverse): the value and
    its tangent are copied before the inner reverse pass puts the written array back."""
    value_and_grad = yb.value_and_grad(f)
    value, tangent = yb.jvp(lambda x: value_and_grad(x)[0] * 1.0, (X.copy(),), (V,))
    assert float(value) == pytest.approx(float(f(X.copy())), rel=1e-14)
    assert float(tangent) == pytest.approx(float(central(f, X, 1e-6) @ V), rel=1e-6)
