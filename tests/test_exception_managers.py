"""Context managers that suppress an exception raised in their block (issue 13,
``ir/suppressing_managers.py``): a class whose Python ``__exit__`` may return a true value, a
``@contextmanager`` function whose generator catches, a manager made before the statement, one of
several items. The statement runs as PEP 343 spells it out, so the ``try`` lowering keeps exactly
the work the block did before the exception (it was refused: "suppressed the ValueError raised in
it"). Every mode against central differences, the caller's array restored; a manager that does
not suppress lets the exception through as before."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

from .exception_modes import MODES, run_in_mode
from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7


class Sup:
    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        return kind is ValueError  # suppresses a ValueError only


class Passing:
    def __enter__(self):
        return "entered"

    def __exit__(self, kind, error, traceback):
        return None  # never suppresses


@contextlib.contextmanager
def ignoring(kind):
    try:
        yield
    except kind:
        pass


def suppressed_by_a_class(x):
    y = x * x
    with Sup():
        y = y * x
        if y > 0.1:
            raise ValueError("large")
        y = y + 1.0
    return y * x


def suppressed_by_a_generator(x):
    y = x * x
    with ignoring(ValueError):
        y = np.sin(y) * x
        if y > 0.1:
            raise ValueError("large")
        y = y + 1.0
    return y * x


def made_before(x):
    m = Sup()
    ys = [x]
    with m:
        ys.append(ys[-1] * x)
        raise ValueError("out")
    return ys[-1] * x + len(ys)


def among_several_items(x):
    y = x
    with Passing() as label, Sup():
        y = y * np.exp(x)
        raise ValueError(label)
    return y * x


def in_a_loop(x):
    total = 0.0
    for k in range(3):
        with Sup():
            total = total + x ** (k + 1)
            if k == 1:
                raise ValueError("skip the rest of this one")
            total = total * x
    return total


CASES = [suppressed_by_a_class, suppressed_by_a_generator, made_before, among_several_items, in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_suppressing_manager_keeps_the_work_before_the_exception(f):
    check_every_mode(f, X)


def writes_the_callers_array(v):
    with Sup():
        v *= 2.0
        raise ValueError("after the write")
    return float(np.sum(v ** 2))


def test_the_callers_array_written_before_a_suppressed_exception():
    check_every_mode_restoring(writes_the_callers_array, np.array([0.3, -1.2]))


def not_suppressed(x):
    with Passing():
        y = x * x
        raise KeyError("through")
    return y


def local_not_suppressed(x):
    @contextlib.contextmanager
    def passing():  # (defined here: entered through contextlib's methods only if it may suppress)
        yield

    with passing():
        y = x * x
        raise KeyError("through")
    return y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [not_suppressed, local_not_suppressed], ids=lambda f: f.__name__)
def test_a_manager_that_does_not_suppress_lets_the_exception_through(f, mode):
    with pytest.raises(KeyError, match="through"):
        run_in_mode(f, mode, X)
