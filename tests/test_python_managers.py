"""A ``with`` statement whose manager is a class of the function's own module, written in
Python, handed float data (``frontend/with_statements._python_manager_either_way``): entered
as PEP 343 spells the statement out, its ``__enter__`` and ``__exit__`` differentiated, so
what it keeps or returns carries derivatives and an exception it suppresses is kept as a
``try`` keeps it. Handed no floats, it runs as any manager does. Reverse, forward and second
order against central differences; an argument it writes is restored (a manager keeping a
value: ``test_with_statements.py``)."""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import pytest

from .all_modes import check_all_modes
from .restored_arguments import check_restored

LOG = os.path.join(tempfile.mkdtemp(), "managers.log")


class Swallowing:
    """Suppresses a ValueError raised in its block."""

    def __init__(self, s):
        self.s = s

    def __enter__(self):
        return self.s * 2.0

    def __exit__(self, kind, error, traceback):
        return kind is not None and issubclass(kind, ValueError)


class Scaling:
    """Scales an array in place for the block, and back after."""

    def __init__(self, arr, k):
        self.arr, self.k = arr, k

    def __enter__(self):
        self.arr *= self.k
        return self.arr

    def __exit__(self, *exc):
        self.arr /= self.k
        return False


class Logged:
    """Opens a file (a C function without a rule): handed a label only, it runs plainly."""

    def __init__(self, label):
        self.label = label

    def __enter__(self):
        self.start, self.handle = time.perf_counter(), open(LOG, "a")
        return self

    def __exit__(self, *exc):
        self.handle.write(f"{self.label} {time.perf_counter() - self.start}\n")
        self.handle.close()
        return False


def suppressed_after_work(x):
    y = x * x
    with Swallowing(x) as s:
        y = y * s
        if x > 0:
            raise ValueError("stop")  # (y keeps x * x * s)
        y = y * 100.0
    return y * x


def not_suppressed(x):
    y = x
    try:
        with Swallowing(x * 3.0) as s:
            y = y * s
            raise KeyError("out")
    except KeyError:
        y = y + x * x
    return y


def returned_from_inside_beside_another(x):
    label = "inner"
    with Swallowing(x * x) as h, Swallowing(x) as s, Logged(label):
        return h * s


@pytest.mark.parametrize("f", [suppressed_after_work, not_suppressed, returned_from_inside_beside_another],
                         ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def scaled_for_the_block(a):
    with Scaling(a, a[1]) as scaled:
        y = scaled[0] * scaled[1]
    return y + a[0]


def test_an_argument_the_manager_writes_is_restored():
    check_restored(scaled_for_the_block, np.array([0.8, 1.3]))
