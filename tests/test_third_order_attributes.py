"""Third order (yb.hvp over yb.grad) of an attribute read from a value without derivatives:
``getattr(np, "pi")`` is a constant, whose tangent was the attribute's own value (the hvp was
28.27 where differences of the gradient give 18.85: transform/third_order._linear). Checked
against differences of reverse over reverse; a read from a value with derivatives keeps them."""
import numpy as np
import pytest

import yuebing as yb

class Config:
    def __init__(self, scale, name):
        self.scale = scale
        self.name = name


class Box:
    def __init__(self, v):
        self.v = v


CONFIG = Config(1.5, "c")


def _module_constant(x):
    return np.sum(x ** 3) * getattr(np, "pi")


def _namespace_constant(x):
    return np.sum(x ** 3) * getattr(CONFIG, "scale") + len(getattr(CONFIG, "name"))


def _method_of_a_constant(x):
    k = np.array([0.5, 1.5])
    return np.sum(x ** 3) * getattr(k, "sum")()


def _attribute_with_derivatives(x):
    box = Box(x[0] * x[1])
    return np.sum(x ** 3) * getattr(box, "v")


@pytest.mark.parametrize("f", [_module_constant, _namespace_constant, _method_of_a_constant, _attribute_with_derivatives])
def test_third_order_attribute_reads(f):
    def total(x):
        return np.sum(yb.grad(f)(x))

    x = np.array([0.5, 1.0])
    gradient = yb.grad(total)
    for v in (np.array([1.0, 0.0]), np.array([0.3, -0.7])):
        hv = yb.hvp(total, (x,), (v,))[2][0]
        want = (gradient(x + 1e-5 * v) - gradient(x - 1e-5 * v)) / 2e-5
        np.testing.assert_allclose(hv, want, rtol=1e-6, atol=1e-8)
