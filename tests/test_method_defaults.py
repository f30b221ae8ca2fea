"""Default values of the methods of a class defined in the differentiated function, computed
from its variables (``frontend/local_classes._defaults_as_class_values``): computed by the
function as class values, with their derivatives, once, when the class statement runs (as
Python computes a default), and read by the method through ``__class__`` when the caller gives
none. Checked in reverse, forward and second order against central differences; an argument
the method writes is restored."""
from __future__ import annotations

import numpy as np
import pytest


from .all_modes import check_all_modes
from .restored_arguments import check_restored


def positional_and_keyword_only(x):
    a = x * 2.0

    class M:
        def scaled(self, v, k=a, *, shift=a * a):
            """Its docstring stays first."""
            return v * k + shift
    return M().scaled(x) + M().scaled(x, 3.0) + M().scaled(1.0, shift=x)


def class_and_static_methods(x):
    class M:
        @classmethod
        def scaled(cls, v, k=np.sin(x)):
            return v * k

        @staticmethod
        def shifted(v, s=x * x):
            return v + s
    return M.scaled(x) * M().scaled(2.0) + M.shifted(x)


def overridden_in_a_subclass(x):
    class A:
        def scaled(self, v, k=x * 2.0):
            return v * k

    class B(A):
        def scaled(self, v, k=x * 5.0):  # (super() sees A's default, not B's)
            return super().scaled(v) + v * k
    return B().scaled(x) + A().scaled(1.0)


def computed_once_when_the_class_is_made(x):
    a = x * 3.0

    class M:
        def get(self, k=a):
            return k
    a = 100.0  # (the default was computed before: 3x)
    return M().get() * x + a * 0.0


CASES = [positional_and_keyword_only, class_and_static_methods, overridden_in_a_subclass,
         computed_once_when_the_class_is_made]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_all_modes(f, 0.7)


def writes_its_argument_through_a_default(a):
    class Scaler:
        def apply(self, arr, k=a[1] * 2.0):
            arr[0] = arr[0] * k
            return arr[0]
    return Scaler().apply(a) + a[1]


def test_an_argument_the_method_writes_is_restored():
    check_restored(writes_its_argument_through_a_default, np.array([0.8, 1.3]))
