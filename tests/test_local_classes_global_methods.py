"""Methods of a class defined in the differentiated function reading a global the module writes
with ``global`` (``frontend/local_classes._rebind_global_readers``): the method reads the
module's global when it runs, with its current value and derivative, as a method of a
module-level class does. Late binding, a write with ``global`` in the method, a property, a
nested class, a base computed from the global; reverse, forward and second order against
central differences, the arguments restored. A condition of the class body reading one is still
refused by name.
"""
from __future__ import annotations

import numpy as np
import pytest

from yuebing.frontend.fence import UnsupportedSyntaxError

from .all_modes import check_all_modes
from .refusals import refused_in_every_mode
from .restored_arguments import check_restored

SCALE = 1.0
COUNT = 0.0


def _fresh():
    global SCALE, COUNT
    SCALE, COUNT = 1.0, 0.0


def a_method_reading_it_late(x):
    global SCALE
    SCALE = x * 2.0
    a = np.sin(x)

    class Scaled:
        def get(self, v):
            return SCALE * v + a  # (SCALE: the module's when it runs; a: the function's cell)

        @property
        def doubled(self):
            return 2.0 * SCALE * np.cos(SCALE)
    s = Scaled()
    before = s.get(x)
    SCALE = SCALE * x  # the method sees this value from now on
    return before + s.get(1.0) + s.doubled


def a_method_writing_it(x):
    global COUNT

    class Counter:
        def add(self, v):
            global COUNT
            COUNT = COUNT * v + v * v

        def reset(self, v):
            global COUNT
            COUNT = v * v  # (written, not read)
    COUNT = x
    c = Counter()
    c.add(x)
    c.add(3.0)
    total = COUNT
    c.reset(x + 1.0)
    return total * COUNT


def _base_from(k):
    class Base:
        scale = k

    return Base


def a_nested_class_and_a_base(x):
    global SCALE
    SCALE = np.exp(x)

    class Outer(_base_from(SCALE * 0.5)):  # (the base: computed by the function, with its derivative)
        class Inner:
            def get(self):
                return SCALE * SCALE

        def total(self):
            return self.Inner().get() + self.scale * SCALE
    return Outer().total()


CASES = [a_method_reading_it_late, a_method_writing_it, a_nested_class_and_a_base]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_methods_reading_a_written_global_in_every_mode(f):
    _fresh()
    check_all_modes(f, 0.7)
    _fresh()


def scales_its_argument(xs):
    global SCALE
    SCALE = xs[0] + 1.0

    class Scaler:
        def apply(self, arr):
            arr *= SCALE
            return arr.sum()
    return Scaler().apply(xs)


def test_arguments_are_restored():
    _fresh()
    check_restored(scales_its_argument, np.array([0.6, 1.4]))
    _fresh()


def a_condition_reading_it(x):
    global SCALE
    SCALE = x * 2.0

    class Signed:
        if SCALE > 0:  # (run by the class statement, which sees plain values)
            sign = 1.0
        else:
            sign = -1.0
    return Signed.sign * x


def test_a_condition_of_the_class_body_reading_it_is_refused_with_the_line():
    refused_in_every_mode(a_condition_reading_it, UnsupportedSyntaxError,
                          r"reading the global 'SCALE'(.|\n)*test_local_classes_global_methods.py")
    _fresh()
