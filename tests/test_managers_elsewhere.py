"""A ``with`` statement whose manager, handed float data, is a class with Python ``__enter__``
and ``__exit__`` of another module (``mod.M(x)``, ``from mod import M`` at module level or inside
the function), a class defined in the function, or a manager made before the statement
(``m = M(x); with m:``): entered as PEP 343 spells it out, its methods differentiated
(``frontend/with_statements.py``; they were refused: a class of the function's own module called
in the header was). Reverse, forward and second order against central differences; an argument
the manager writes is restored."""
from __future__ import annotations

import numpy as np
import pytest

from . import managers_elsewhere, test_python_managers
from .all_modes import check_all_modes
from .managers_elsewhere import Holding
from .restored_arguments import check_restored


def through_the_module(x):
    with managers_elsewhere.Holding(x * x) as h:
        y = h * x
    return y + x


def imported_by_name(x):
    y = x
    with Holding(x) as h:
        y = y * h
        if x > 0:
            raise ValueError("suppressed by the manager")  # (y keeps x * 2x)
        y = y * 100.0
    return y * np.sin(x)


def imported_in_the_function(x):
    from .managers_elsewhere import Holding as Kept

    with Kept(np.cos(x)) as h:
        return h * x


def defined_in_the_function(x):
    class Local:
        def __init__(self, v):
            self.v = v

        def __enter__(self):
            return self.v * 3.0

        def __exit__(self, *exc):
            return False

    with Local(x * x) as h:
        y = h + x
    return y * x


def made_before_the_statement(x):
    manager = Holding(x * 3.0)
    with manager as h, Holding(x) as g:
        y = x * h * g
    return y + manager.doubled * x


@pytest.mark.parametrize("f", [through_the_module, imported_by_name, imported_in_the_function,
                               defined_in_the_function, made_before_the_statement], ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def scaled_for_the_block(a):
    scaling = test_python_managers.Scaling(a, a[1])  # (a class of another module, made before)
    with scaling as scaled:
        y = scaled[0] * scaled[1]
    return y + a[0]


def test_an_argument_the_manager_writes_is_restored():
    check_restored(scaled_for_the_block, np.array([0.8, 1.3]))
