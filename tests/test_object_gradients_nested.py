"""The gradient of an object taken inside differentiated code: ``yb.grad(loss, argnums=1)(x, model)``
inside ``yb.grad``, ``yb.jvp``, ``yb.jacobian(mode="fwd")`` and ``yb.hvp``/``yb.hessian`` (third
derivatives of ``loss``).

That gradient is a tangent object (``MutableTangent[Model]``); as a value its tangent is one level
above the argument's (``api/gradient_objects.py``). Reverse and forward mode passed the levels
across unchanged and read the attributes' derivatives as zero: ``yb.grad`` of
``sum(g.fields["w"] ** 2)`` gave [0.34, 0] where differences give [1.06, 0.65], silently (a
``yb.jvp`` 0.10 for 0.64). Reverse, forward and batched forward against central differences; third
order still refuses an object in ``argnums``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode


class Model:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.name = "linear"  # no derivative: no field in the gradient

    def predict(self, x):
        return np.tanh(self.w * x) + self.b


class Network:
    def __init__(self, layer, scale):
        self.layer = layer
        self.scale = scale


@dataclass(frozen=True)
class Frozen:
    w: object
    b: float


def loss(x, model):
    return np.sum(np.sin(model.w * x) + model.b * x ** 2)


def method_loss(x, model):
    return np.sum(model.predict(x) ** 2)


def network_loss(x, network):
    return network.scale * np.sum(np.cos(network.layer.w * x)) + network.layer.b * np.sum(x)


def frozen_loss(x, frozen):
    return np.sum(np.exp(frozen.w * x)) * frozen.b


def dict_loss(x, params):
    return np.sum(params["model"].w * x ** 3) + params["c"] * np.sum(x)


def model_gradient(x):
    g = yb.grad(loss, argnums=1)(x, Model(x * 2.0, np.sum(x)))
    return np.sum(g.fields["w"] ** 2) + g.fields["b"] * x[0]


def method_gradient(x):
    g = yb.grad(method_loss, argnums=1)(x, Model(x + 0.5, x[1] ** 2))
    return np.sum(np.sin(g.fields["w"])) + g.fields["b"] ** 2


def both_gradients(x):
    gx, gm = yb.grad(loss, argnums=(0, 1))(x, Model(np.cos(x), x[0] * x[2]))
    return np.sum(gx * gm.fields["w"]) + gm.fields["b"]


def value_and_gradient(x):
    value, g = yb.value_and_grad(loss, argnums=1)(x, Model(x ** 2, 0.3))
    return value * np.sum(g.fields["w"])


def nested_object_gradient(x):
    g = yb.grad(network_loss, argnums=1)(x, Network(Model(x * 1.5, x[2]), np.sum(x ** 2)))
    return np.sum(g.fields["layer"].fields["w"] ** 2) + g.fields["scale"] * g.fields["layer"].fields["b"]


def frozen_gradient(x):
    g = yb.grad(frozen_loss, argnums=1)(x, Frozen(x * 0.5, np.sum(x)))
    return np.sum(g.fields["w"] * x) + g.fields["b"] ** 2


def dict_holding_an_object(x):
    g = yb.grad(dict_loss, argnums=1)(x, {"model": Model(np.sin(x), 0.0), "c": x[0] ** 2})
    return np.sum(g["model"].fields["w"] ** 2) + g["c"] * x[1]


FUNCTIONS = [model_gradient, method_gradient, both_gradients, value_and_gradient, nested_object_gradient,
             frozen_gradient, dict_holding_an_object]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_reverse_and_forward(function) -> None:
    check_every_mode(function, np.array([0.3, -0.7, 1.1]), second_order=False)


def test_third_order_refuses_an_object_in_argnums() -> None:
    with pytest.raises(yb.NestedDifferentiationError, match="argument 1 is a Model. Leave it out of argnums"):
        yb.hessian(model_gradient)(np.array([0.3, -0.7, 1.1]))
