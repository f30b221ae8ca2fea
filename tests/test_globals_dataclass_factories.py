"""A dataclass field's ``default_factory`` reading a global the call wrote a value carrying
derivatives (``global G; G = 2 * x``, then ``H()`` of a module-level ``@dataclass class H: w: list =
field(default_factory=lambda: [G])``): the factory runs as a derived function in every mode, its
value carrying the global's derivative (``transform/dataclass_construction.py``). It gave the
value without its derivative, silently, then was refused. Against central differences in reverse,
forward and second order (``tests/modes.py``), with and without ``__post_init__``, frozen, a
non-linear factory, an ``init=False`` field, and a factory reading a global the call did not write
(a constant, run as plain Python)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

SCALE = 1.0
ROW = np.array([1.0, 2.0])
UNWRITTEN = 3.0


@dataclass
class Linear:
    w: list = field(default_factory=lambda: [SCALE])


@dataclass(frozen=True)
class Curved:
    k: float = 1.5
    w: list = field(default_factory=lambda: [SCALE * SCALE, np.sin(SCALE)])
    hidden: float = field(default_factory=lambda: UNWRITTEN * SCALE, init=False)


@dataclass
class Posted:
    w: np.ndarray = field(default_factory=lambda: ROW * SCALE)
    total: float = 0.0

    def __post_init__(self):
        self.total = float(np.sum(self.w * self.w))


def linear_factory(x):
    global SCALE
    SCALE = 2.0 * x
    return Linear().w[0] * x


def curved_factory(x):
    global SCALE
    SCALE = x * x
    c = Curved()
    return c.w[0] * c.k + c.w[1] * x + c.hidden


def factory_then_post_init(x):
    global SCALE, ROW
    ROW = np.array([x, 1.0])
    SCALE = np.cos(x)
    return Posted().total + Posted(w=ROW).total


def unwritten_read(x):
    global SCALE
    SCALE = x
    return Curved(k=x).hidden * x  # UNWRITTEN * SCALE: SCALE written, UNWRITTEN a constant


CASES = [linear_factory, curved_factory, factory_then_post_init, unwritten_read]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_factory_reading_a_global_the_call_wrote_in_every_mode(f):
    try:
        check_every_mode(f, 0.7)
        value, gradient = yb.value_and_grad(f)(0.7)
        assert value == f(0.7)
    finally:
        globals().update(SCALE=1.0, ROW=np.array([1.0, 2.0]))


def test_the_derivative_is_the_one_the_write_gave():
    try:
        np.testing.assert_allclose(yb.grad(linear_factory)(0.7), 4.0 * 0.7, rtol=1e-12)  # 2 x^2 (it gave 1.4)
        _, slope = yb.jvp(curved_factory, (0.7,), (1.0,))
        x = 0.7
        expected = 1.5 * 4 * x ** 3 + np.sin(x * x) + x * np.cos(x * x) * 2 * x + UNWRITTEN * 2 * x
        np.testing.assert_allclose(slope, expected, rtol=1e-12)
    finally:
        globals().update(SCALE=1.0)
