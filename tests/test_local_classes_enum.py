"""An ``Enum`` defined in the differentiated function whose members hold values computed from
its variables (``class Mode(Enum): HIGH = a``): the member holds the very value the class body
computed, and a read of ``.value`` finds its derivative by identity, as a class attribute's read
does (``ir/local_classes._holds_as_member``, ``transform/lifting_objects._getattr``), whichever
way the member is reached: ``Mode.HIGH``, ``Mode["HIGH"]``, ``_member_map_``, iteration, a method.
Second order once read such a value through iteration or ``_member_map_`` with no tangent and
added its fdata tangent's cotangent to the gradient (3.332 where 1.372 is right)."""
from __future__ import annotations

import enum

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes
from .restored_arguments import check_restored


def read_as_an_attribute(x):
    a = np.sin(x)

    class Mode(enum.Enum):
        HIGH = a * 2.0
        LOW = x * x
    return Mode.HIGH.value * x + Mode.LOW.value


def iterated_and_read_as_an_attribute(x):
    a = np.sin(x)

    class Mode(enum.Enum):
        HIGH = a * 2.0
        LOW = x * x
    total = sum(m.value for m in Mode)
    return total * Mode.HIGH.value + Mode._member_map_["LOW"].value * x


def read_by_name_and_in_a_loop(x):
    class Mode(enum.Enum):
        HIGH = x * 2.0
        MID = 0.5
    s = 0.0
    for m in Mode:
        s = s + m.value * m.value
    return s * Mode["HIGH"].value


def read_by_a_method(x):
    a = np.exp(x)

    class Mode(enum.Enum):
        HIGH = a
        LOW = 0.25

        def scaled(self, y):
            return self.value * y * y
    return Mode.HIGH.scaled(x) + Mode.LOW.scaled(x)


def _weight(member, y):
    return member.value * y


def passed_to_a_helper(x):
    class Mode(enum.Enum):
        HIGH = np.cos(x)
    return _weight(Mode.HIGH, x) * _weight(list(Mode)[0], x)


@pytest.mark.parametrize("f", [read_as_an_attribute, iterated_and_read_as_an_attribute, read_by_name_and_in_a_loop,
                               read_by_a_method, passed_to_a_helper])
def test_enum_members_computed_from_the_function_in_every_mode(f):
    check_all_modes(f, 0.7)


def members_from_an_array(xs):
    class Mode(enum.Enum):
        HIGH = xs[0] * xs[1]
        LOW = np.sum(xs * xs)
    xs *= 2.0  # a write the reverse pass undoes
    return sum(m.value for m in Mode) * Mode.HIGH.value + xs[0]


def test_an_array_argument_is_restored():
    check_restored(members_from_an_array, np.array([0.6, 1.4, -0.3]))


def test_the_hessian_matches_differences_of_the_gradient():
    xs = np.array([0.6, 1.4, -0.3])
    hessian = yb.hessian(members_from_an_array)(xs.copy())
    grad = yb.grad(members_from_an_array)
    h = 1e-5
    columns = [(grad(xs + h * e) - grad(xs - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-5)


def mixin_member_from_the_function(x):
    a = 2.0 * x

    class Level(float, enum.Enum):
        HIGH = a
    return Level.HIGH.value * x


def test_a_member_of_a_mixin_enum_is_still_refused_naming_the_attribute():
    """With ``float`` mixed in, the member is a number of its own, not the value computed."""
    for run in (lambda: yb.grad(mixin_member_from_the_function)(0.7),
                lambda: yb.jvp(mixin_member_from_the_function, (0.7,), (1.0,)),
                lambda: yb.hvp(mixin_member_from_the_function, (0.7,), (1.0,))):
        with pytest.raises(TypeError, match=r"'HIGH'(.|\n)*test_local_classes_enum.py"):
            run()
