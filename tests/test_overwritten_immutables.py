"""A tuple (or another value whose cotangent is rdata) read out of a mutable place, then
overwritten there by a value without derivatives, keeps its derivatives in second order.
``yb.hvp`` dropped the cross term: the second-order ``setattr`` ran its first-order rule twice
(with the fdata, then with the fdata tangents), and the second run saw the None the first had
just written, so its pullback restored the fdata tangent's slot from None and dropped the
tuple's (hvp [0, 0.4, 0] where differences give [0.85, 0.4, 0]). Each function is checked in every
mode against central differences."""
import dataclasses

import numpy as np
import pytest

from .modes import check_every_mode

X = np.array([0.3, 1.2, 2.0])


class Box:
    def __init__(self):
        self.a = None


class Slotted:
    __slots__ = ("a",)


def attribute_then_none(x):
    q = Box()
    q.a = (x[0], 2.0)
    item = q.a
    q.a = None
    return item[0] * x[1]


def attribute_then_int(x):
    q = Box()
    q.a = (1, x[0] * x[2])
    item = q.a
    q.a = 3
    return item[1] * x[1] + q.a


def slot_then_none(x):
    q = Slotted()
    q.a = (x[0], x[2])
    item = q.a
    q.a = None
    return item[0] * item[1] * x[1]


def attribute_deleted(x):
    q = Box()
    q.a = (x[0], 2.0)
    item = q.a
    del q.a
    return item[0] * x[1]


def set_twice_in_a_loop(x):
    q = Box()
    total = 0.0
    for v in (x[0], x[1], x[2]):
        q.a = (v, v * v)
        item = q.a
        q.a = None
        total = total + item[1] * x[0]
    return total


def nonlocal_tuple_then_none(x):
    held = (x[0], x[2])

    def take():
        nonlocal held
        item = held
        held = None
        return item

    item = take()
    return item[0] * item[1] * x[1]


def object_setattr_then_none(x):
    q = Box()
    object.__setattr__(q, "a", (x[0], x[1]))
    item = q.a
    object.__setattr__(q, "a", None)
    return item[0] * item[1] * x[2]


@pytest.mark.parametrize("f", [attribute_then_none, attribute_then_int, slot_then_none, attribute_deleted,
                               set_twice_in_a_loop, nonlocal_tuple_then_none, object_setattr_then_none],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


@dataclasses.dataclass(frozen=True)
class Scaled:
    value: float
    scale: float = 2.0

    def __post_init__(self):
        object.__setattr__(self, "value", self.value * self.scale)


def frozen_post_init(x):  # object.__setattr__ in __post_init__: batched forward mode (jacobian(mode="fwd")) too
    s = Scaled(x[0] * x[1])
    return s.value * x[2]


def test_object_setattr_in_a_frozen_post_init():
    check_every_mode(frozen_post_init, X)
