"""Class decorators reading the function's variables, and values carrying derivatives written on a
class (``frontend/local_classes._hoist_decorators``, ``rules/local_classes.class_write_rrule``).

Such a decorator is computed by the function and called by it after the class statement,
differentiated, where the class statement would call it with plain values; a write
``cls.factor = k`` registers the value as a class body's computed values are, so reads through
the class or its instances carry its derivative. Reverse, forward and second order against
central differences (``check_all_modes``), the Hessian, the arguments restored, a class of the
module left as a plain call leaves it; third order and class keywords stay refused by name.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order

from .all_modes import check_all_modes
from .refusals import refused_in_every_mode
from .restored_arguments import check_restored


def scaled_by(k):
    def decorate(cls):
        cls.factor = k * 2.0
        return cls
    return decorate


def totals(k):
    """Computes from what the class body computed (``cls.w``, a class value)."""
    def decorate(cls):
        cls.total = cls.w * k + k
        return cls
    return decorate


def decorators_with_a_dataclass_above(x):
    a = np.sin(x)

    @dataclasses.dataclass
    @totals(x)
    @scaled_by(a)
    class Model:
        w: float = 3.0 * x

        def value(self, t):
            return self.factor * t + self.w * self.total
    return Model().value(x) + Model(x * x).value(2.0) * Model.factor


def written_in_the_function(x):
    class Box:
        pass
    Box.k = x * 2.0
    for cls in (Box, type("Other", (), {})):  # (the same value written twice)
        cls.m = np.cos(x)
    return Box.k * x + Box().m * Box.k


class Shared:
    """A class of the module: what the function writes on it stays after the call, as after a plain one."""
    scale = 1.0


def written_on_a_module_class(x):
    Shared.scale = x * x
    return Shared.scale * x + Shared().scale


CASES = [decorators_with_a_dataclass_above, written_in_the_function, written_on_a_module_class]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_in_every_mode(f):
    check_all_modes(f, 0.7)


def test_the_hessian():
    check_second_order(lambda v: decorators_with_a_dataclass_above(v[0]) * v[1] + written_in_the_function(v[1]),
                       np.array([0.7, 1.3]))


def class_body_value(x):
    a = x[0] * x[1]

    class Scaled:
        scale = a * 2.0
    return np.sum(x) * Scaled.scale


def class_write_of_an_item(x):
    class Box:
        pass
    Box.scale = x[0]
    return np.sum(x) * Box.scale


@pytest.mark.parametrize("f", [class_body_value, class_write_of_an_item], ids=lambda f: f.__name__)
def test_yb_hessian_against_differences_of_the_gradient(f):
    """(Its batched pass read a class attribute as a constant: the Hessian of a class body's value was
    zero; such a pass is now dropped for the per-column one.)"""
    x, h = np.array([0.7, 0.35, 1.2]), 1e-6
    columns = [(yb.grad(f)(x + h * e) - yb.grad(f)(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(yb.hessian(f)(x), np.array(columns).T, rtol=1e-5, atol=1e-6)


def test_a_module_class_is_left_as_a_plain_call_leaves_it():
    Shared.scale = 1.0
    yb.grad(written_on_a_module_class)(0.4)
    assert Shared.scale == 0.4 * 0.4 and type(Shared.scale) is float


def scales_its_argument(xs):
    @scaled_by(xs[0])
    class Scaled:
        pass
    xs *= Scaled.factor  # (written: undone after each pass)
    return xs.sum()


def test_arguments_are_restored():
    check_restored(scales_its_argument, np.array([0.6, 1.4]))


def test_third_order_is_refused_by_name():
    with pytest.raises(Exception, match="setattr"):
        yb.hvp(lambda v: yb.grad(lambda u: written_in_the_function(u[0]))(v).sum(), (np.array([0.7]),),
               (np.array([1.0]),))


class Base:
    def __init_subclass__(cls, k=1.0, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.k = k


def class_keyword(x):
    a = 2.0 * x

    class Sub(Base, k=a):
        pass
    return Sub.k


def test_a_class_keyword_carrying_a_derivative_is_refused_with_the_line():
    refused_in_every_mode(class_keyword, TypeError, r"keywords read its variable 'a'(.|\n)*test_local_classes_decorators.py")
