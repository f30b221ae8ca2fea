"""An exception class whose ``__init__`` writes into an argument holding float data. The write
kept the derivative of the value before it, silently (a gradient of 3.8 where 7.2 is right; 1.96
where 2.94 is), then was refused by name; with the exception's tangent
(``rules/exception_tangents.py``) the ``__init__`` is differentiated and its writes followed, in
every mode, the caller's arguments restored. A Python ``__new__`` (run without derivatives,
``rules/exception_data.py``) that writes is still refused by name, and the advice (make the change
before raising) is exact.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode
from .restoring import check_every_mode_restoring


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


def _raised_on_a_list(kind):
    def f(x):
        xs = [x, x * x]
        try:
            raise kind(xs)
        except kind as e:
            return e.args[0][0] * x + xs[0]

    f.__name__ = f"raised_on_a_list_{kind.__name__}"
    return f


writes_a_list_item = _raised_on_a_list(Triples)


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


class TriplesFirst(Exception):
    def __new__(cls, xs):
        xs[0] = xs[0] * 3.0  # written by a Python __new__: not differentiated
        return super().__new__(cls, xs)


writes_in_new = _raised_on_a_list(TriplesFirst)


MODES = {
    "grad": lambda f: yb.grad(f)(0.7),
    "jvp": lambda f: yb.jvp(f, (0.7,), (1.0,)),
    "hvp": lambda f: yb.hvp(f, (0.7,), (1.0,)),
}


@pytest.mark.parametrize("f", [writes_a_list_item, grows_a_list, writes_an_attribute], ids=lambda f: f.__name__)
def test_a_write_into_an_argument_is_followed_in_every_mode(f):
    check_every_mode(f, 0.7)


def _writes_the_callers_array(x):
    try:
        raise Triples(x)  # xs[0] = xs[0] * 3.0 on the caller's array
    except Triples as e:
        return float(np.sum(e.args[0] ** 2))


def test_a_write_into_the_callers_array_is_followed_and_undone():
    check_every_mode_restoring(_writes_the_callers_array, np.array([0.4, -1.2]))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_write_by_a_python_new_is_refused_by_name(mode):
    with pytest.raises(RuleArgumentError, match=r"exception whose __init__ \(or __new__\) writes into an argument"):
        MODES[mode](writes_in_new)


def test_the_advice_works_in_every_mode():
    check_every_mode(as_advised, np.float64(0.7).item())
