"""Known silent (docs/limitations.md, "Known silent cases"): in third order, a function under
``yb.grad`` that caches a value in a module-level dict and returns the cached value on a later
call (``if "k" not in CACHE: CACHE["k"] = v``; a singleton's metaclass keeps its instance so)
gives a wrong Hessian-vector product (22.4 where central differences of ``yb.grad`` give 50.4).
Reverse, forward and second order are right. The test is a strict xfail: it fails the run when
the mechanism is fixed, so that the entry leaves the limitations."""
import numpy as np
import pytest

import yuebing as yb

CACHE: dict = {}


def cached(v):
    if "k" not in CACHE:
        CACHE["k"] = v
    return CACHE["k"]


def twice_cached(x):
    CACHE.clear()
    c = cached(x * 2.0)
    d = cached(x * 5.0)  # the first call's value, from the cache
    return c * d * x


def scaled_gradient(x):
    return yb.grad(twice_cached)(x) * x


def test_first_and_second_order_are_right():
    x, h = 0.7, 1e-5
    np.testing.assert_allclose(yb.grad(twice_cached)(x), (twice_cached(x + h) - twice_cached(x - h)) / (2 * h), rtol=1e-6)
    gradient = yb.grad(scaled_gradient)
    np.testing.assert_allclose(gradient(x), (scaled_gradient(x + h) - scaled_gradient(x - h)) / (2 * h), rtol=1e-6)


@pytest.mark.xfail(strict=True, reason="known silent: third order over a value cached in a module-level dict")
def test_third_order_over_a_cached_value():
    x, h = 0.7, 1e-5
    gradient = yb.grad(scaled_gradient)
    hvp = yb.hvp(scaled_gradient, (x,), (1.0,))[-1][0]
    np.testing.assert_allclose(hvp, (gradient(x + h) - gradient(x - h)) / (2 * h), rtol=1e-5)
