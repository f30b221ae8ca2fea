"""A ``@contextmanager`` function defined in the differentiated function and capturing floats, one
that suppresses, and a manager object a ``with`` header reads from a global (``with SUPPRESSOR:``):
entered as PEP 343 spells the statement out, contextlib's or the class's methods differentiated
(``frontend/with_statements.py``, ``ir/suppressing_managers.py``; they were refused: "is handed
the function scaled, which captures float data", "suppressed the ValueError raised in it").
Reverse, forward and second order against central differences; the caller's array restored."""
from __future__ import annotations

import contextlib
import sys

import numpy as np
import pytest

from .modes import check_every_mode
from .restoring import check_every_mode_restoring
from .test_exception_managers import Sup

X = 0.7


SUPPRESSOR = Sup()  # (its __exit__ suppresses a ValueError only)


class Weighted:
    def __init__(self, weight):
        self.weight = weight

    def __enter__(self):
        return self.weight

    def __exit__(self, *exc):
        return False


WEIGHTED = Weighted(1.5)  # a global manager holding a constant float


def captures_floats(x):
    scale = np.sin(x) * 2.0

    @contextlib.contextmanager
    def scaled(v):
        yield v * scale

    with scaled(x) as s:
        y = s * x
    return y


def handed_an_int(x):
    scale = x * x

    @contextlib.contextmanager
    def scaled(n):
        yield n * scale

    with scaled(3) as s:
        y = s + np.exp(x)
    return y


def writes_after_its_yield(x):
    log = []

    @contextlib.contextmanager
    def recorded(v):
        try:
            yield v * 2.0
        finally:
            log.append(v * np.cos(x))  # (run by __exit__)

    with recorded(x * x) as r:
        y = r * x
    return y + log[0]


def suppresses_locally(x):
    skipped = []

    @contextlib.contextmanager
    def counting(kind):
        try:
            yield
        except kind as error:  # (swallowed, counted)
            skipped.append(str(error))

    y = x * x
    with counting(ValueError):
        y = y * np.sin(x)
        if y > 0.0:
            raise ValueError("large")
        y = y + 100.0
    return y * x * len(skipped)


def global_suppressor(x):
    parts = [np.cos(x)]
    with SUPPRESSOR:
        parts.append(parts[0] * x ** 3)
        raise ValueError("after the append")
    return sum(parts) * x


def global_suppressor_through_the_module(x):
    y = np.exp(x)
    with sys.modules[__name__].SUPPRESSOR as s:
        y = y * x
        raise ValueError(s)
    return y * x


def global_manager_holding_a_float(x):
    with WEIGHTED as w:
        y = w * x * x
    return y


CASES = [captures_floats, handed_an_int, writes_after_its_yield, suppresses_locally, global_suppressor,
         global_suppressor_through_the_module, global_manager_holding_a_float]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_every_mode(f, X)


def writes_the_callers_array(v):
    factor = v[0] * 1.0

    @contextlib.contextmanager
    def doubling(a):
        yield
        a *= 2.0 * factor  # (the caller's array, written by __exit__)

    with doubling(v):
        total = float(np.sum(v ** 2))
    return total + float(np.sum(v * v[1]))


def writes_before_a_global_suppressed_exception(v):
    with SUPPRESSOR:
        v *= 3.0
        raise ValueError("after the write")
    return float(np.sum(np.sin(v)))


@pytest.mark.parametrize("f", [writes_the_callers_array, writes_before_a_global_suppressed_exception],
                         ids=lambda f: f.__name__)
def test_the_callers_array_is_restored(f):
    check_every_mode_restoring(f, np.array([0.3, -1.2]))
