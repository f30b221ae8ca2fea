"""The gradient of an object taken inside differentiated code: ``yb.grad(loss, argnums=1)(x, model)``
inside ``yb.grad``, ``yb.jvp``, ``yb.jacobian(mode="fwd")`` and ``yb.hvp``/``yb.hessian`` (third
derivatives of ``loss``).

That gradient is a tangent object (``MutableTangent[Model]``); as a value its tangent is one level
above the argument's (``api/gradient_objects.py``). Reverse and forward mode passed the levels
across unchanged and read the attributes' derivatives as zero: ``yb.grad`` of
``sum(g.fields["w"] ** 2)`` gave [0.34, 0] where differences give [1.06, 0.65], silently (a
``yb.jvp`` 0.10 for 0.64); third order refused an object in ``argnums``, and, let in, lost the
term of the gradient's cotangent's tangent (its direction of the forward program ``u`` is at the
argument's level, ``u``'s own tangent at the level of ``u`` as a value). Every mode against
central differences (``tests/modes.py``: Hessians against differences of ``yb.grad``). The
gradient's fields are read as ``g.w`` (refused before, as yuebing's own ``__getattr__``) or
``g.fields["w"]``.
"""
from __future__ import annotations

import collections
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
    return np.sum(g.w ** 2) + g.b * x[0]


def fields_read(x):
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
    return np.sum(g.layer.w ** 2) + g.scale * g.fields["layer"].fields["b"]


def frozen_gradient(x):
    g = yb.grad(frozen_loss, argnums=1)(x, Frozen(x * 0.5, np.sum(x)))
    return np.sum(g.fields["w"] * x) + g.fields["b"] ** 2


def dict_holding_an_object(x):
    g = yb.grad(dict_loss, argnums=1)(x, {"model": Model(np.sin(x), 0.0), "c": x[0] ** 2})
    return np.sum(g["model"].fields["w"] ** 2) + g["c"] * x[1]


FUNCTIONS = [model_gradient, fields_read, method_gradient, both_gradients, value_and_gradient, nested_object_gradient,
             frozen_gradient, dict_holding_an_object]


def model_only_loss(model):
    return np.sum(np.sin(model.w) ** 2 * model.b)


def model_only(x):
    g = yb.grad(model_only_loss)(Model(x * 2.0, x[0]))
    return np.sum(g.fields["w"] ** 2) + g.fields["b"] * x[1]


def aux_loss(x, model):
    prediction = model.predict(x)
    return np.sum(prediction ** 2), prediction


def with_aux(x):
    g, prediction = yb.grad(aux_loss, argnums=1, has_aux=True)(x, Model(x * 0.7, 0.2))
    return np.sum(g.fields["w"] * prediction) + g.fields["b"]


class Tally:
    def __init__(self, w):
        self.w = w
        self.total = 0.0


def mutating_loss(x, tally):
    tally.total = tally.total + np.sum(tally.w * x)
    tally.w = tally.w * 2.0
    return tally.total ** 2 + np.sum(tally.w ** 2 * x)


def mutated_in_the_loss(x):
    g = yb.grad(mutating_loss, argnums=(0, 1))(x, Tally(np.cos(x)))
    return np.sum(g[0] * g[1].fields["w"]) + g[1].fields["total"]


Pair = collections.namedtuple("Pair", "model c")


def pair_loss(x, pair):
    return np.sum(np.sin(pair.model.w * x)) * pair.c


def namedtuple_holding_an_object(x):
    """A namedtuple's gradient is a namedtuple: its object was passed across unconverted (reverse
    mode [1.18, -1.56, -3.30] for differences' [1.78, -1.48, -2.72]); third order refused it."""
    g = yb.grad(pair_loss, argnums=1)(x, Pair(Model(x * 2.0, 0.1), x[0]))
    return np.sum(g.model.w ** 2) + g.c


def namedtuple_of_arrays(x):
    g = yb.grad(lambda y, p: np.sum(np.cos(p.model * y)) * p.c, argnums=1)(x, Pair(x ** 2, x[2]))
    return np.sum(g.model * x) + g.c ** 2


FUNCTIONS += [model_only, with_aux, mutated_in_the_loss, namedtuple_holding_an_object, namedtuple_of_arrays]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_mode(function) -> None:
    """Reverse, forward and batched forward over ``yb.grad``, and third order (``yb.hvp`` and
    ``yb.hessian``, against differences of ``yb.grad``)."""
    check_every_mode(function, np.array([0.3, -0.7, 1.1]))


def test_an_object_holding_what_has_no_derivative_but_is_no_number_is_refused_in_third_order() -> None:
    """An object in ``argnums`` holding, beside its numbers, something that is neither a number nor
    an object of them (a list of strings) is refused by name in third order, as before."""
    def loss_of_tagged(x, model):
        return np.sum(model.w * x)

    def F(x):
        model = Model(x, 0.0)
        model.tags = ["a", "b"]
        return np.sum(yb.grad(loss_of_tagged, argnums=1)(x, model).fields["w"] ** 2)

    with pytest.raises(yb.NestedDifferentiationError,
                       match=r"argument 1 \(a Model\) is or holds something else. Leave it out of argnums"):
        yb.hessian(F)(np.array([0.3, -0.7, 1.1]))


# ------------------------------------------------------------- the pullback of yb.vjp, taking an object


def boxed(model, x):
    return np.sin(model.w * x) + model.b * x


def pullback_of_an_object(x):
    y, pullback = yb.vjp(boxed, Model(x * 2.0, x[0]), x)
    g_model, g_x = pullback(np.cos(x))
    return np.sum(g_model.w ** 2) + g_model.b * x[1] + np.sum(g_x * y)


def pullback_of_a_constant_object(x):
    _, pullback = yb.vjp(boxed, Model(np.array([1.0, 2.0, 3.0]), 0.5), x)
    g_model, g_x = pullback(x ** 2)
    return np.sum(g_x ** 2) + np.sum(g_model.fields["w"])


def frozen_boxed(frozen, x):
    return np.exp(frozen.w * x) * frozen.b


def pullback_of_a_frozen_dataclass(x):
    _, pullback = yb.vjp(frozen_boxed, Frozen(x * 0.5, np.sum(x)), x)
    g_frozen, g_x = pullback(np.sin(x))
    return np.sum(g_frozen.w * x) + g_frozen.b ** 2 + np.sum(g_x)


@pytest.mark.parametrize("function", [pullback_of_an_object, pullback_of_a_constant_object,
                                      pullback_of_a_frozen_dataclass])
def test_pullback_of_a_function_taking_an_object(function) -> None:
    """Second order of a function calling ``yb.vjp``'s pullback (the gradient of a pairing) of a
    function taking an object: refused before, as an object in ``argnums``."""
    check_every_mode(function, np.array([0.3, -0.7, 1.1]))


def test_a_pullback_of_an_object_holding_strings_is_refused_in_second_order() -> None:
    def F(x):
        model = Model(x, 0.0)
        model.tags = ["a", "b"]
        _, pullback = yb.vjp(boxed, model, x)
        return np.sum(pullback(x)[1] ** 2)

    with pytest.raises(yb.NestedDifferentiationError, match=r"the pullback of yb.vjp\) .* argument 0 \(a Model\) is or "
                                                            r"holds something else"):
        yb.hessian(F)(np.array([0.3, -0.7, 1.1]))
