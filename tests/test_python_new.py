"""Classes whose ``__new__`` is Python code, constructed as ``type.__call__`` does
(``ir/class_construction.py``, ``transform/new_construction.py``): ``__new__`` differentiated from
source, then ``__init__`` when the result is an instance of the class.

Before, every such class was refused ("a class whose construction yuebing cannot derive (a custom
__new__ ...)"), scikit-learn's ``Hyperparameter`` among them (a namedtuple subclass whose
``__new__`` fills defaults, then calls ``super(Hyperparameter, cls).__new__``), blocking 17 cases
of the sklearn corpus. Each construct is checked in reverse, forward and second order against
central differences (``tests/all_modes.py``) and in third order (``check_third_order``); the
refusals that remain are asserted by name.
"""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from tests.all_modes import check_all_modes


class Bounded(collections.namedtuple("Bounded", ("name", "value", "bounds", "fixed"))):
    """scikit-learn's ``Hyperparameter`` in small: defaults computed before ``super(C, cls).__new__``."""
    __slots__ = ()

    def __new__(cls, name, value, bounds, fixed=None):
        if not isinstance(bounds, str) or bounds != "fixed":
            bounds = np.atleast_2d(bounds)
        if fixed is None:
            fixed = isinstance(bounds, str) and bounds == "fixed"
        return super(Bounded, cls).__new__(cls, name, value, bounds, fixed)


class Scaled(collections.namedtuple("Scaled", ("a", "b"))):
    """Zero-argument ``super().__new__`` reaching the namedtuple's generated ``__new__``."""
    __slots__ = ()

    def __new__(cls, a, b=2.0):
        return super().__new__(cls, a * 3.0, b)


class Particle:
    """``object.__new__(cls)`` and attribute writes in ``__new__``, then ``__init__`` reading them."""

    def __new__(cls, v, scale=1.0):
        obj = object.__new__(cls)
        obj.v = v * scale
        return obj

    def __init__(self, v, scale=1.0):
        self.m = 0.5 + 0.1 * scale * scale + np.sum(self.v)

    def energy(self):
        return self.m * np.sum(self.v * self.v)


class Elsewhere:
    """A ``__new__`` returning an object of another class: ``__init__`` is not run."""

    def __new__(cls, v):
        return (v, 2.0 * v)

    def __init__(self, v):
        raise AssertionError("type.__call__ runs no __init__ on an object of another class")


class Positive(float):
    """A float subclass made by ``float.__new__`` (``rules/builtin_new.py``)."""

    def __new__(cls, v):
        return super().__new__(cls, v * v + 0.1)

    def half(self):
        return self * 0.5


class Base:
    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return self.w * x


class Derived(Base):
    """Two-argument ``super(C, self)`` in ordinary methods (``frontend/normalise.py``)."""

    def __init__(self, w):
        super(Derived, self).__init__(w * w)

    def predict(self, x):
        return super(Derived, self).predict(x) + np.sin(self.w)


@dataclasses.dataclass
class Tagged:
    """A dataclass with a ``__new__`` of its own: its generated ``__init__`` runs after it."""
    a: float
    b: float

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj.made = 1.5
        return obj


def with_bounded(x):
    h = Bounded("length_scale", x[0] * x[1], (1e-5, 1e5))
    return np.sum(x ** 2) * (1.0 if h.fixed else 2.0) + h.value ** 2 + np.sum(h.bounds) * 0.0


def with_scaled(x):
    s = Scaled(x[0] * x[1], b=np.sin(x[2]))
    return s.a * s.b + s[0] ** 2


def with_particle(x):
    return Particle(x, 0.7).energy()


def with_elsewhere(x):
    t = Elsewhere(x[0] * x[1])
    return t[1] * t[0] + np.cos(t[0])


def with_positive(x):
    return Positive(x[0] * x[1]).half() * x[2]


def with_super_two_arguments(x):
    return np.sum(Derived(x[0]).predict(x) ** 2)


def with_tagged(x):
    t = Tagged(x[0], b=x[1] * 2.0)
    return t.a * t.b * t.made + x[2]


FUNCTIONS = [with_bounded, with_scaled, with_particle, with_elsewhere, with_positive, with_super_two_arguments,
             with_tagged]
X = np.array([0.7, -1.3, 0.4])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode_against_differences(f):
    check_all_modes(f, X.copy())


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy())


def test_a_float_through_the_namedtuple_field_keeps_its_derivative():
    def value_of(x):
        return Bounded("s", x * 3.0, "fixed").value

    assert Bounded("s", 1.0, "fixed").fixed is True  # the __new__ ran
    np.testing.assert_allclose(yb.grad(value_of)(0.5), (value_of(0.5 + 1e-6) - value_of(0.5 - 1e-6)) / 2e-6)
    assert yb.jvp(value_of, (0.5,), (1.0,))[1] == yb.grad(value_of)(0.5)
    _, (g,), (h,) = yb.hvp(value_of, (0.5,), (1.0,))
    assert g == yb.grad(value_of)(0.5) and h == 0.0


@dataclasses.dataclass(frozen=True)
class FrozenMade:
    a: float

    def __new__(cls, a):
        return object.__new__(cls)


def _frozen(x):
    return FrozenMade(x * 2.0).a


def test_a_frozen_dataclass_with_a_new_of_its_own_in_every_mode():
    check_all_modes(_frozen, 0.3)  # (more: tests/test_frozen_dataclass_new.py)


class Counted(type):
    def __call__(cls, *args):
        return super().__call__(*args)


class Metered(metaclass=Counted):
    def __new__(cls, v):
        obj = object.__new__(cls)
        obj.v = v
        return obj


class Single(type):
    """A singleton's metaclass: ``type.__call__`` once, then the same instance."""
    def __call__(cls, *args):
        if "instance" not in vars(cls):
            cls.instance = super().__call__(*args)
        return cls.instance


class Config(metaclass=Single):
    def __init__(self, v):
        self.v = v


def test_a_metaclass_call_of_its_own_is_followed_with_the_new():
    """What the call returns is the metaclass's to decide: its ``__call__`` is differentiated, its
    ``super().__call__`` builds through ``__new__`` (more: test_metaclass_calls.py)."""
    check_all_modes(lambda x: Metered(x * x).v, 0.3)


def _singleton_made(x):
    return Config(x * x).v


def _fresh(run):
    if "instance" in vars(Config):
        delattr(Config, "instance")
    return run()


def test_a_singleton_caching_on_its_class_follows_its_first_call():
    """Its cached instance is written on the class, with its derivative (more: test_metaclass_calls.py)."""
    h = 1e-6
    slope = (_fresh(lambda: _singleton_made(0.3 + h)) - _fresh(lambda: _singleton_made(0.3 - h))) / (2 * h)
    np.testing.assert_allclose(_fresh(lambda: yb.grad(_singleton_made)(0.3)), slope, rtol=1e-6)
    np.testing.assert_allclose(_fresh(lambda: yb.jvp(_singleton_made, (0.3,), (1.0,))[1]), slope, rtol=1e-6)
    np.testing.assert_allclose(_fresh(lambda: yb.hvp(_singleton_made, (0.3,), (1.0,))[1][0]), slope, rtol=1e-6)


def test_an_error_in_new_points_at_the_users_line():
    class Checked:
        def __new__(cls, v):
            if v < 0:
                raise ValueError("negative")
            return object.__new__(cls)

    def f(x):
        return Checked(x - 1.0) and x

    with pytest.raises(ValueError, match="negative") as caught:
        yb.grad(f)(0.5)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "raise ValueError" in notes and "return Checked(x - 1.0)" in notes
    assert "class_construction" not in notes


@pytest.mark.parametrize("run", [lambda f: yb.grad(f)(0.3), lambda f: yb.jvp(f, (0.3,), (1.0,)),
                                 lambda f: yb.hvp(f, (0.3,), (1.0,))], ids=["grad", "jvp", "hvp"])
@pytest.mark.parametrize("make,text", [(lambda x: np.matrix([[x, 1.0], [2.0, x]]), "np.matrix objects"),
                                       (lambda x: np.rec.recarray((2,), dtype=[("a", float)]), "structured")],
                         ids=["matrix", "recarray"])
def test_numpy_classes_the_coverage_table_refuses_stay_refused(run, make, text):
    """``np.matrix`` has a Python ``__new__``: built from source, its ``*`` would be a matrix
    product that the array rules took elementwise."""
    with pytest.raises(TypeError, match=f"yuebing does not construct it.*{text}"):
        run(lambda x: float(np.sum(make(x))) * x)
