"""An exception class whose ``__init__`` (Python code, run without derivatives:
``rules/exception_data.py``) writes into an argument holding float data. The write kept the
derivative of the value before it, silently (a gradient of 3.8 where 7.2 is right; 1.96 where
2.94 is); it is refused by name in every mode, and the advice (make the change before raising)
is exact. An ``__init__`` that keeps what it is given, or reads it, works."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode


class Triples(Exception):
    def __init__(self, xs):
        super().__init__(xs)
        xs[0] = xs[0] * 3.0


class Grows(Exception):
    def __init__(self, xs):
        super().__init__(xs)
        xs.append(xs[0] * 2.0)


class _Box:
    def __init__(self, v):
        self.v = v


class Scales(Exception):
    def __init__(self, box):
        super().__init__(box)
        box.v = box.v * 2.0


class Keeps(Exception):
    def __init__(self, xs, label="kept"):
        super().__init__(xs)
        self.xs = xs
        self.label = label + str(len(xs))  # reads its argument: no write


def writes_a_list_item(x):
    xs = [x, x * x]
    try:
        raise Triples(xs)
    except Triples as e:
        return e.args[0][0] * x + xs[0]


def grows_a_list(x):
    xs = [x, x * x]
    try:
        raise Grows(xs)
    except Grows:
        return xs[-1] * x


def writes_an_attribute(x):
    b = _Box(x * x)
    try:
        raise Scales(b)
    except Scales:
        return b.v * x


def as_advised(x):
    xs = [x, x * x]
    xs[0] = xs[0] * 3.0  # the change made before the raise
    try:
        raise Keeps(xs)
    except Keeps as e:
        return e.xs[0] * x + xs[0] + e.args[0][1]


MODES = {
    "grad": lambda f: yb.grad(f)(0.7),
    "jvp": lambda f: yb.jvp(f, (0.7,), (1.0,)),
    "hvp": lambda f: yb.hvp(f, (0.7,), (1.0,)),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f", [writes_a_list_item, grows_a_list, writes_an_attribute], ids=lambda f: f.__name__)
def test_a_write_into_an_argument_is_refused_by_name(f, mode):
    with pytest.raises(RuleArgumentError, match=r"exception whose __init__ \(or __new__\) writes into an argument"):
        MODES[mode](f)


def test_the_advice_works_in_every_mode():
    check_every_mode(as_advised, np.float64(0.7).item())
