"""An attribute read through the object's bound ``__getattribute__`` (``o.__getattribute__("a")``,
a method-wrapper): pykalman's ``get_params`` reads its filter's matrices so.

Second order (``transform/lifting_objects.py``) gave such a method-wrapper the tangent of a class
attribute (a constant) instead of its object's, so ``yb.hvp``/``yb.hessian`` lost the read value's
tangent: silently wrong (pykalman's filter, smoother and log-likelihood in the model's matrices had
Hessians off by 25-60 %). Every mode against central differences; third order is still wrong there
(``transform/plain_objects.py`` reads the same way: a strict xfail until it is fixed).
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


FUNCTIONS = [read_by_wrapper, read_in_a_comprehension, read_from_slots, read_from_a_frozen_dataclass,
             wrapper_kept_then_called]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_mode(function) -> None:
    check_every_mode(function, np.array([0.3, -0.7, 1.1]))


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="third order: plain_objects._read gives a method-wrapper bound to the object a "
                          "zero tangent (its isinstance(read, types.MethodType) test), as second order did")
def test_third_order() -> None:
    check_third_order(read_by_wrapper, np.array([0.3, -0.7, 1.1]))
