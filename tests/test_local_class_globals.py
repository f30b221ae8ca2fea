"""A class defined in the differentiated function whose body's values or methods' defaults
read a global the module writes with ``global``: they are computed by the function, which reads
the global's current value with its derivative (``frontend/local_classes.py``). Reverse, forward
and second order against central differences. A method reading one when it runs reads the
module's (``test_local_classes_global_methods.py``)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

SCALE = 1.0
OFFSET = 0.5


def set_offset(v):
    global OFFSET
    OFFSET = v


def class_value_from_a_written_global(x):
    global SCALE
    SCALE = x * 2.0

    class Scaled:
        factor = SCALE * x

    return Scaled.factor * x


def method_default_from_a_global_another_function_writes(x):
    set_offset(x * x)

    class Shifted:
        def get(self, v, shift=OFFSET):
            return v + shift * 3.0

    return Shifted().get(x) * x


@pytest.mark.parametrize("f", [class_value_from_a_written_global, method_default_from_a_global_another_function_writes],
                         ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)
