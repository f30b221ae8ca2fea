"""A ``with`` header calling a Python method of an object of the function (``with model.scaled(x) as
h:``) whose object or arguments hold float data, or a ``@contextmanager`` method that may suppress:
the call differentiated and its manager entered as one made before the statement, by its Python
methods when it holds floats or may suppress (``frontend/with_statements.py``,
``ir/suppressing_managers.made_by_a_python_method``).
It was refused: "(m.scaled) is handed a value holding float data (Model)". Reverse, forward and
second order against central differences; the caller's array restored; a manager that holds no
floats (a lock, ``np.errstate``) made so, and one made by a method handed none, entered as written."""
from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

from .managers_elsewhere import Holding  # (its __enter__ returns twice what it holds)
from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7
LOCK = threading.Lock()


class Model:
    def __init__(self, w):
        self.w = w

    def scaled(self, v):
        return Holding(v * self.w)

    @contextlib.contextmanager
    def shifted(self, v):
        yield v + self.w
        self.w = self.w * v  # (after the block: __exit__ steps the generator)

    @contextlib.contextmanager
    def skipping(self, kind):
        try:
            yield
        except kind:
            pass

    def guarded(self, v):
        return LOCK  # (a manager of C code)

    def quiet(self):
        return np.errstate(all="ignore")


def a_class_made_by_a_method(x):
    m = Model(3.0)  # (a constant weight: the object holds float data)
    with m.scaled(x * x) as h:
        y = h * np.sin(x)
    return y


def a_generator_method(x):
    m = Model(np.cos(x))
    with m.shifted(x) as h:
        y = h * x
    return y + m.w


def a_suppressing_method(x):
    m = Model(1)
    y = x * x
    with m.skipping(ValueError):
        y = y * np.exp(x)
        raise ValueError("skip the rest")
    return y * x


def among_several_items(x):
    m = Model(x)
    with np.errstate(all="ignore"), m.scaled(x) as h:
        y = h / x
    return y * x


@pytest.mark.parametrize("f", [a_class_made_by_a_method, a_generator_method, a_suppressing_method, among_several_items],
                         ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_every_mode(f, X)


class Doubler:
    def __init__(self, factor):
        self.factor = factor

    @contextlib.contextmanager
    def doubling(self, a):
        yield
        a *= 2.0 * self.factor  # (the caller's array, written by __exit__)


def writes_the_callers_array(v):
    doubler = Doubler(v[0] * 1.0)
    with doubler.doubling(v):
        total = float(np.sum(v ** 2))
    return total + float(np.sum(v * v[1]))


def test_the_callers_array_is_restored():
    check_every_mode_restoring(writes_the_callers_array, np.array([0.3, -1.2]))


def managers_of_c_code_made_so(x):
    m = Model(x)
    with m.guarded(x), m.quiet():  # (a lock, np.errstate: holding no floats, entered as written)
        y = np.log(x) * m.w
    return y


def handed_no_floats(x):
    m = Model(2)
    with m.quiet():  # (entered as written, without derivatives)
        y = np.log(x) * m.w
    return y


@pytest.mark.parametrize("f", [managers_of_c_code_made_so, handed_no_floats], ids=lambda f: f.__name__)
def test_a_manager_holding_no_floats_is_entered_as_written(f):
    check_every_mode(f, X)
