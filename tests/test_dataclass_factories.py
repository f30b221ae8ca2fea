"""A dataclass defined in the differentiated function whose field's ``default_factory`` reads
the function's variables (``frontend/local_classes._factories_in_post_init``): the class's
``__post_init__`` calls the factory, which the construction differentiates, with the function's
variables read when it is called (late binding, as the generated ``__init__`` would call it).
Reverse, forward and second order against central differences; arguments restored."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .restored_arguments import check_restored


def read_late(x):
    @dataclass
    class Box:
        ws: list = field(default_factory=lambda: [x, 2.0 * x])
        s: float = 1.0
    b = Box()
    x = x * 3.0
    c = Box()  # (the factory reads x when it is called: 3x)
    d = Box([1.0, x])  # (given a value: the factory is not called)
    return b.ws[0] * b.ws[1] + c.ws[1] * b.s + d.ws[1]


def frozen_with_its_own_post_init(x):
    a = np.array([x, 1.0])

    @dataclasses.dataclass(frozen=True)
    class Box:
        scale: float
        arr: np.ndarray = dataclasses.field(default_factory=lambda: a * 2.0)

        def __post_init__(self):
            """Sees the factory's value."""
            object.__setattr__(self, "scale", self.scale * self.arr[0])
    b = Box(x)
    return b.scale + np.sum(b.arr)


def a_local_function_as_factory_and_a_field_not_in_init(x):
    def make():
        return {"w": x * x}

    @dataclass
    class Holder:
        k: float
        table: dict = field(default_factory=make)
        total: list = field(default_factory=lambda: [x], init=False)
    h = Holder(x)
    return h.table["w"] * h.k + h.total[0]


@pytest.mark.parametrize("f", [read_late, frozen_with_its_own_post_init, a_local_function_as_factory_and_a_field_not_in_init],
                         ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def appends_to_its_argument(a):
    @dataclass
    class Log:
        seen: list = field(default_factory=lambda: [a[0] * a[1]])
    log = Log()
    a[1] = log.seen[0] * 2.0
    return a[1] + a[0]


def test_an_argument_written_after_is_restored():
    check_restored(appends_to_its_argument, np.array([0.8, 1.3]))


def with_an_initvar(x):
    @dataclass
    class Holder:
        factor: dataclasses.InitVar[float] = 1.0
        w: list = field(default_factory=lambda: [x])
    return Holder().w[0]


def test_an_initvar_class_with_or_without_post_init():
    check_all_modes(with_an_initvar, 0.7)

    def advice_followed(x):
        @dataclass
        class Holder:
            factor: dataclasses.InitVar[float] = 1.0
            w: list = field(default_factory=lambda: [x])

            def __post_init__(self, factor):
                self.w = [self.w[0] * factor]
        return Holder(2.0).w[0]
    check_all_modes(advice_followed, 0.7)
