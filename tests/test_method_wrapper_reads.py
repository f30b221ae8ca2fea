"""An attribute read through the object's bound ``__getattribute__`` (``o.__getattribute__("a")``,
a method-wrapper): pykalman's ``get_params`` reads its filter's matrices so.

Second order (``transform/lifting_objects.py``) gave such a method-wrapper the tangent of a class
attribute (a constant) instead of its object's, so ``yb.hvp``/``yb.hessian`` lost the read value's
tangent: silently wrong (pykalman's filter, smoother and log-likelihood in the model's matrices had
Hessians off by 25-60 %). Third order (``transform/plain_objects.py``) did the same, and its call
then went to the builtin method's rule, unbound from a tangent that was no method's: the read
value's tangent was lost again. It now calls the slot wrapper (``object.__getattribute__``,
``__setattr__``, ``__delattr__``) with the object and its tangent first.

Beside them, every other way of reaching an attribute (``object.__getattribute__(o, "a")``,
``getattr``, ``type(o).__dict__[...]``, ``o.__dict__``, a class's ``__getattr__``), every mode
against central differences and third order against differences of second order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tests.modes import check_every_mode
from yuebing.testing.third_order import check_third_order


class Holder:
    def __init__(self, a):
        self.a = a


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


@dataclass(frozen=True)
class Frozen:
    a: object


def read_by_wrapper(t):
    return np.sum(np.sin(Holder(t * t).__getattribute__("a")))


def read_in_a_comprehension(t):
    """As pykalman's get_params: {name: obj.__getattribute__(name) for name in names}."""
    holder = Holder(t * t)
    fields = {name: holder.__getattribute__(name) for name in ["a"]}
    return np.sum(np.sin(fields["a"]))


def read_from_slots(t):
    return np.sum(np.cos(Slotted(t * t).__getattribute__("a")))


def read_from_a_frozen_dataclass(t):
    return np.sum(Frozen(t * 3.0).__getattribute__("a") ** 3)


def wrapper_kept_then_called(t):
    read = Holder(np.exp(t)).__getattribute__
    return np.sum(read("a") * t)


def wrapper_read_by_getattr(t):
    holder = Holder(t * t)
    read = getattr(holder, "__getattribute__")
    return np.sum(np.sin(read("a")))


def wrapper_in_a_loop(t):
    holder = Holder(t)
    total = 0.0
    for name in ["a"]:
        total = total + np.sum(np.sin(holder.__getattribute__(name) * t))
    return total


def written_by_wrapper(t):
    holder = Holder(t)
    holder.__setattr__("a", np.exp(t))
    return np.sum(holder.__getattribute__("a") * t)


def written_to_slots_by_wrapper(t):
    slotted = Slotted(t)
    slotted.__setattr__("a", t * t)
    return np.sum(np.sin(slotted.a))


def deleted_by_wrapper(t):
    holder = Holder(t)
    holder.b = t * t
    holder.__delattr__("a")
    return np.sum(np.sin(holder.b)) + float(hasattr(holder, "a"))


def read_by_object_getattribute(t):
    return np.sum(np.sin(object.__getattribute__(Holder(t * t), "a")))


def written_by_object_setattr(t):
    holder = Holder(t)
    object.__setattr__(holder, "a", t ** 3)
    return np.sum(np.cos(holder.a))


def read_by_getattr(t):
    return np.sum(np.sin(getattr(Holder(t * t), "a")) + getattr(Holder(t), "missing", t))


class Scaled:
    def __init__(self, a):
        self._a = a

    @property
    def a(self):
        return self._a * 2.0

    def times(self, k):
        return self._a * k


def read_from_the_class_dict(t):
    scaled = Scaled(t * t)
    members = type(scaled).__dict__
    return np.sum(np.sin(members["a"].fget(scaled)) + members["times"](scaled, t))


def method_read_by_wrapper(t):
    return np.sum(np.sin(Scaled(t * t).__getattribute__("times")(t)))


class Fallback:
    """A ``__getattr__`` reading another attribute: looked up before ``b`` is set, it would recurse
    (third order looked for a ``primal`` on the object while ``__init__`` ran: a RecursionError)."""

    def __init__(self, b):
        self.b = b

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.b * 3.0


def read_through_getattr_fallback(t):
    fallback = Fallback(t * t)
    return np.sum(np.sin(fallback.missing) + fallback.__getattribute__("b"))


def read_from_the_instance_dict(t):
    holder = Holder(t * t)
    return np.sum(np.sin(holder.__dict__["a"]) * vars(holder)["a"])


FUNCTIONS = [read_by_wrapper, read_in_a_comprehension, read_from_slots, read_from_a_frozen_dataclass,
             wrapper_kept_then_called, wrapper_read_by_getattr, wrapper_in_a_loop, written_by_wrapper,
             written_to_slots_by_wrapper, deleted_by_wrapper, read_by_object_getattribute,
             written_by_object_setattr, read_by_getattr, read_from_the_class_dict, method_read_by_wrapper,
             read_through_getattr_fallback, read_from_the_instance_dict]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_mode(function) -> None:
    check_every_mode(function, np.array([0.3, -0.7, 1.1]))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_third_order(function) -> None:
    check_third_order(function, np.array([0.3, -0.7, 1.1]))
