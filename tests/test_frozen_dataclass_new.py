"""A frozen dataclass with a ``__new__`` of its own (``ir/class_construction.made_frozen_by_new``,
``transform/frozen_new.py``): its ``__new__`` and generated ``__init__`` are differentiated, the
object's tangent mutable while ``__init__`` writes the fields and frozen after. Reverse, forward
and second order (``check_all_modes``), the Hessian, the arguments restored; what stays refused
is refused by name (third order; a ``__new__`` returning a cached instance with its fields).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import MissingRuleError
from yuebing.testing.second_order import check_second_order

from .all_modes import check_all_modes
from .refusals import refused_in_every_mode
from .restored_arguments import check_restored


@dataclasses.dataclass(frozen=True)
class Config:
    """A ``__new__`` checking its arguments, as a validated settings object does."""
    w: float
    b: float = 1.0

    def __new__(cls, w, b=1.0, **more):
        if b == 0.0:
            raise ValueError("b must not be 0")
        return super().__new__(cls)


@dataclasses.dataclass(frozen=True)
class Squared:
    """A ``__post_init__`` writing a derived field with ``object.__setattr__``."""
    w: np.ndarray

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __post_init__(self):
        object.__setattr__(self, "norm", float(np.sum(self.w * self.w)))


@dataclasses.dataclass(frozen=True)
class Child(Config):
    c: float = 2.0


def config_fields(x):
    c = Config(np.sin(x), b=x * 3.0)
    return c.w * c.b + Child(x, 2.0, c=x * x).c * x


def post_init_and_arrays(x):
    s = Squared(np.array([x, 2.0 * x, np.cos(x)]))
    return s.norm * x + s.w[2]


def stored_in_a_list(x):
    made = [Config(x * k) for k in (1.0, 2.0)]
    return sum(c.w * c.w for c in made) + dataclasses.replace(made[0], b=x).b


CASES = [config_fields, post_init_and_arrays, stored_in_a_list]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_frozen_dataclass_with_a_new_in_every_mode(f):
    check_all_modes(f, 0.7)


def test_the_hessian():
    check_second_order(lambda v: config_fields(v[0]) * v[1] + post_init_and_arrays(v[1]), np.array([0.7, 1.3]))


def test_third_order_is_refused_by_name():
    with pytest.raises(MissingRuleError, match="frozen dataclass with a __new__ of its own"):
        yb.hvp(lambda v: yb.grad(lambda u: config_fields(u[0]))(v).sum(), (np.array([0.7]),), (np.array([1.0]),))


def scales_its_argument(xs):
    c = Config(xs[0] * xs[1])
    xs *= c.w  # (written: undone after each pass)
    return xs.sum()


def test_arguments_are_restored():
    check_restored(scales_its_argument, np.array([0.6, 1.4]))


@dataclasses.dataclass(frozen=True)
class Interned:
    """A ``__new__`` handing back the instance it made first: ``__init__`` rewrites it."""
    w: float
    made = {}

    def __new__(cls, w):
        return cls.made.setdefault(cls, object.__new__(cls))


def interned(x):
    Interned.made.clear()
    Interned(x)
    return Interned(2.0 * x).w


def test_a_new_returning_an_object_with_fields_is_refused_by_name():
    refused_in_every_mode(interned, TypeError, "frozen dataclass Interned whose __new__ returns an object that "
                                               "already has fields")
