"""Class decorators reading the function's variables, and values carrying derivatives written on a
class (``frontend/local_classes._hoist_decorators``, ``rules/local_classes.class_write_rrule``).

Such a decorator is computed by the function and called by it after the class statement,
differentiated, where the class statement would call it with plain values; a write
``cls.factor = k`` registers the value as a class body's computed values are, so reads through
the class or its instances carry its derivative. Reverse, forward and second order against
central differences (``check_all_modes``), the Hessian, the arguments restored, a class of the
module left as a plain call leaves it; third order stays refused by name. Class keywords reading
the function's variables (``class Sub(Base, k=a)``) are handed to ``__init_subclass__`` by a call
of the function after the class statement (``_defer_init_subclass``); a metaclass reading them
itself is refused by name.
"""
from __future__ import annotations

import abc
import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

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


def read_through_the_class_and_a_list(x):
    v = x * x

    class Box:
        pass
    Box.k = v
    held = [v]
    return Box.k * held[0] + Box().k * v


def class_value_written_again(x):
    v = x * x

    class Box:
        k = v  # (a class body value, registered first by class_level)
    Box.k2 = Box.k
    return Box.k2 * Box.k * v


def array_written_then_changed_in_place(x):
    a = np.array([x, x * x])

    class Box:
        pass
    Box.arr = a
    a[0] = a[0] * 3.0  # (the class holds the same array: its tangent follows)
    return np.sum(Box.arr * a) + Box.arr[1]


def a_base_and_a_subclass(x):
    v = x * 2.0

    class A:
        pass

    class B(A):
        pass
    A.k = v
    B.k = v * v  # (B's own, shadowing A's for B and its instances)
    return A.k * B.k + B().k


CASES = [decorators_with_a_dataclass_above, written_in_the_function, written_on_a_module_class,
         read_through_the_class_and_a_list, class_value_written_again, array_written_then_changed_in_place,
         a_base_and_a_subclass]


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
    with pytest.raises(Exception, match="do not support setattr(.|\n)*Box.k = x"):
        check_third_order(lambda v: written_in_the_function(v[0]) * v[1], np.array([0.7, 1.3]))


class Base:
    """Handed its subclasses' class keywords: stores what it computes from them, and registers them."""
    registry: list = []

    def __init_subclass__(cls, k=1.0, scale=2.0, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.k = k * scale
        Base.registry.append(cls)


class Abstract(abc.ABC):
    def __init_subclass__(cls, w, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.w = np.sin(w)

    @abc.abstractmethod
    def get(self):
        ...


def class_keywords(x):
    a = 2.0 * x

    class Sub(Base, k=a, scale=x):
        """Its docstring stays its own."""

        def get(self, t):
            return self.k * t

    class Plain(Base):  # (its __init_subclass__ runs in the class statement, as Python runs it)
        pass

    class Impl(Abstract, w=x * x):  # (an abc.ABC: ABCMeta hands the keywords on as type does)
        def get(self):
            return self.w
    return Sub().get(x) + Plain.k * x + Impl().get() * len(Sub.__doc__)


def test_class_keywords_in_every_mode():
    check_all_modes(class_keywords, 0.7)
    assert "once" not in repr(vars(Base)["__init_subclass__"])  # (the base's own is back)


def keywords_scaling_the_argument(xs):
    class Sub(Base, k=xs[0]):
        pass
    xs *= Sub.k  # (written: undone after each pass)
    return xs.sum()


def test_an_argument_a_class_keyword_reads_is_restored():
    check_restored(keywords_scaling_the_argument, np.array([0.6, 1.4]))


class Keyed(type):
    """A metaclass whose ``__new__`` reads the class keywords itself."""
    def __new__(mcls, name, bases, namespace, **kwargs):
        return super().__new__(mcls, name, bases, namespace)

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace)


class WithKeyed(metaclass=Keyed):
    pass


def keywords_a_metaclass_reads(x):
    a = 2.0 * x

    class Sub(WithKeyed, k=a):
        pass
    return x


def test_class_keywords_a_metaclass_of_its_own_reads_are_refused_with_the_line():
    refused_in_every_mode(keywords_a_metaclass_reads, TypeError,
                          r"class keywords read its variables, with a metaclass(.|\n)*test_local_classes_decorators.py")
