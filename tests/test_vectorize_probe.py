"""``np.vectorize`` without ``otypes`` calls its function once more, on the first element, before
its loop (NumPy learns the output type from it). A function with side effects shows that call: a
list it appends to gets one more item. Every mode makes the same calls as the plain call
(``rules/numpy_vectorize.probes_first``); it was skipped, so the value and the derivative were
those of a call NumPy does not make (plain 2.058, jvp's value 1.715)."""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .restored_arguments import check_restored


def appended_squares(x):
    acc = []

    def square_kept(v):
        acc.append(v * v)
        return v

    np.vectorize(square_kept)(np.array([x, 2.0 * x]))
    return sum(acc) * x


def counted_calls(x):
    calls = [0.0]

    def weigh(v):
        calls[0] += v  # every call, the probe's too, adds its element
        return np.sin(v) * v

    y = np.vectorize(weigh)(x)
    return np.sum(y) + calls[0] * x[0]


def two_arguments(x):
    seen = []

    def scaled(v, w):
        seen.append(v * w)
        return v + w

    z = np.vectorize(scaled)(x, 2.0 * x)
    return np.sum(z * z) + sum(seen)


def cached(x):
    acc = []

    def square_kept(v):
        acc.append(v * v)
        return v

    np.vectorize(square_kept, cache=True)(x)  # the probe's result is used: no extra call
    return sum(acc) * x[0]


def typed(x):
    acc = []

    def square_kept(v):
        acc.append(v * v)
        return v

    np.vectorize(square_kept, otypes=[float])(x)  # otypes given: no probe
    return sum(acc) * x[0]


def test_the_probe_call_is_made_in_every_mode():
    check_all_modes(appended_squares, 0.7)


@pytest.mark.parametrize("f", [counted_calls, two_arguments, cached, typed])
def test_side_effects_as_the_plain_call_makes_them(f):
    check_restored(f, np.array([0.3, -0.8, 1.1]))


@pytest.mark.parametrize("f", [counted_calls, two_arguments])
def test_the_probe_in_third_order(f):
    """The Hessian-vector product of a function calling ``yb.grad`` of ``f`` (third order's own
    vectorize loop), against central differences of its gradient."""
    x, v = np.array([0.3, -0.8, 1.1]), np.array([0.5, -0.4, 1.1])

    def squared_gradient(z):
        return np.sum(yb.grad(f)(z) ** 2)

    hvp = np.asarray(yb.hvp(squared_gradient, (x,), (v,))[-1]).ravel()
    gradient = yb.grad(squared_gradient)
    central = (gradient(x + 1e-5 * v) - gradient(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(hvp, central, rtol=1e-5, atol=1e-6)
