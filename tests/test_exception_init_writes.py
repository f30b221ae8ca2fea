"""An exception class whose ``__init__`` writes into an argument holding float data. The write
kept the derivative of the value before it, silently (a gradient of 3.8 where 7.2 is right; 1.96
where 2.94 is), then was refused by name; with the exception's tangent
(``rules/exception_tangents.py``) the ``__init__`` is differentiated and its writes followed, in
every mode, the caller's arguments restored. So is a Python ``__new__`` (it was run without
derivatives, its writes refused by name): its ``super().__new__`` reaches the rules of
``BaseException.__new__``, which register the tangent. The advice the refusal gave (make the change
before raising) stays exact.
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


class Summed(Exception):
    def __new__(cls, xs):
        made = super().__new__(cls, xs[0] * 2.0)  # (args holds a value computed here)
        made.total = xs[0] + xs[1] ** 2
        xs[1] = xs[1] * xs[0]
        return made

    def __init__(self, xs):
        super().__init__(xs[1])  # (args replaced by the written item)
        self.first = xs[0]


def computes_in_new(x):
    xs = [np.sin(x), x * x]
    try:
        raise Summed(xs)
    except Summed as e:
        return e.total * e.args[0] + e.first * xs[1]


class Doubles(Exception):
    def __new__(cls, v):
        v *= 2.0  # (the caller's array)
        return super().__new__(cls, v)


def _new_writes_the_callers_array(v):
    try:
        raise Doubles(v)
    except Doubles as e:
        return float(np.sum(e.args[0] ** 3))


@pytest.mark.parametrize("f", [writes_in_new, computes_in_new], ids=lambda f: f.__name__)
def test_a_python_new_is_differentiated_in_every_mode(f):
    check_every_mode(f, 0.7)


def test_a_write_by_a_python_new_into_the_callers_array_is_followed_and_undone():
    check_every_mode_restoring(_new_writes_the_callers_array, np.array([0.4, -1.2]))


def test_the_advice_works_in_every_mode():
    check_every_mode(as_advised, np.float64(0.7).item())


class Reused(Exception):
    def __new__(cls, xs):
        return REUSED  # (made outside: no tangent to follow its __init__ with)


REUSED = Exception.__new__(Reused, "made once")


def reuses_an_instance(x):
    xs = [x, x * x]
    try:
        raise Reused(xs)
    except Reused:
        return xs[0] * x


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_new_returning_an_instance_made_elsewhere_is_refused_by_name(mode):
    with pytest.raises(RuleArgumentError, match=r"Reused: .*whose __new__ returns an object it did not make"):
        MODES[mode](reuses_an_instance)
