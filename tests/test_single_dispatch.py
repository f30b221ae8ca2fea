"""``functools.singledispatch`` functions and ``singledispatchmethod`` methods: the call follows
the implementation the registry picks, in every mode against central differences; what the
pick would hold as a constant while it carries derivatives is given its derivative data: an
implementation registered in the differentiated function (its registration keeps the data of what
it captures for the pass), a singledispatchmethod of an instance holding float data (bound to it). Also: the
typing module's bare forms are no data, and a function defined in the differentiated code keeps
its annotations, as strings (which ``register`` evaluates)."""
import functools
import typing

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from yuebing.tangents import NoTangent, zero_tangent

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2])


@functools.singledispatch
def energy(obj):
    raise TypeError(f"no energy for {type(obj).__name__}")


@energy.register
def _(obj: float):
    return obj ** 2


@energy.register
def _(obj: np.ndarray):
    return np.sum(obj ** 2)


@energy.register(list)
def _(obj):
    return sum(energy(v) for v in obj)


def _dispatching_function(x):
    return energy(x) + energy(float(x[0])) + energy([x[1], x[2] * x[0]])


class Meter:
    @functools.singledispatchmethod
    def read(self, v):
        raise TypeError

    @read.register
    def _(self, v: np.ndarray):
        return np.sum(np.sin(v))

    @read.register
    def _(self, v: float):
        return v ** 3


class ScaledMeter(Meter):
    def __init__(self, k):
        self.k = k

    @functools.singledispatchmethod
    def read(self, v):
        raise TypeError

    @read.register
    def _(self, v: np.ndarray):
        return np.sum(np.sin(v)) * self.k


def _dispatching_method(x):
    return Meter().read(x) + Meter().read(float(x[1]))


def _dispatching_method_of_state(x):
    return ScaledMeter(x[0] ** 2).read(x)


class Spring:
    """A singledispatchmethod reading the instance's float data, and written to it."""

    def __init__(self, k):
        self.k = k

    @functools.singledispatchmethod
    def stretch(self, v):
        raise TypeError

    @stretch.register
    def _(self, v: float):
        self.k = self.k * v
        return self.k * v

    @stretch.register
    def _(self, v: np.ndarray):
        return np.sum(v) * self.k


def _dispatching_method_of_a_changed_instance(x):
    spring = Spring(x[0])
    method = spring.stretch  # (read once, called twice: bound to the instance)
    return method(float(x[1])) + method(x * x[2]) + spring.k


# (an instance holding float data was refused: the method read from it held the instance as a constant)
@pytest.mark.parametrize("f", [_dispatching_function, _dispatching_method, _dispatching_method_of_state,
                               _dispatching_method_of_a_changed_instance])
def test_singledispatch_follows_the_registry(f):
    check_every_mode(f, X)


def _registered_inside(x):
    @functools.singledispatch
    def e(obj):
        raise TypeError

    @e.register
    def _(obj: np.ndarray):
        return np.sum(obj ** 2) * x[0]

    return e(x * x[1])


def _registered_inside_in_several_forms(x):
    @functools.singledispatch
    def e(obj):
        raise TypeError

    @e.register(float)
    def _(obj):
        return obj * x[0] * x[1]

    def on_lists(obj):
        return sum(obj) * x[2]

    e.register(list, on_lists)
    return e(2.0) + e([x[0], x[1] ** 2]) + e(3.0) * x[2]


def _registered_inside_a_module_level_registry(x):
    @energy.register(tuple)  # (kept registered after the call: a plain call does the same)
    def _(obj):
        return sum(obj) * x[0] ** 2

    return energy((x[1], 2.0)) + energy(x[2] * 1.0)


# (an implementation registered inside was refused: the registry held it without its captured values' data)
@pytest.mark.parametrize("f", [_registered_inside, _registered_inside_in_several_forms,
                               _registered_inside_a_module_level_registry])
def test_an_implementation_registered_inside_in_every_mode(f):
    check_every_mode(f, X)


@functools.singledispatch
def volume(obj):
    raise TypeError


def _registers_an_implementation(x):
    @volume.register(tuple)
    def _(obj):
        return sum(obj) * x

    return x * 1.0


def _dispatches_to_it(x):
    return volume((x, 2.0))


def test_an_implementation_registered_in_another_call_is_refused_by_name():
    yb.grad(_registers_an_implementation)(0.7)  # (left in the registry, capturing that call's x)
    for run in (lambda: yb.grad(_dispatches_to_it)(0.7), lambda: yb.jvp(_dispatches_to_it, (0.7,), (1.0,)),
                lambda: yb.hvp(_dispatches_to_it, (0.7,), (1.0,))):
        with pytest.raises(RuleArgumentError, match="volume: yuebing cannot differentiate an implementation a "
                                                    "differentiated function registered in another call"):
            run()


@pytest.mark.parametrize("form", [typing.Union, typing.Optional, typing.Callable, typing.List, typing.Tuple,
                                  typing.Literal, typing.TypeVar("T"), typing.ParamSpec("P")])
def test_typing_forms_carry_no_tangent(form):
    assert zero_tangent(form) is NoTangent


def test_a_nested_function_keeps_its_annotations():
    def f(x):
        def g(v: np.ndarray) -> float:
            """g's own."""
            return np.sum(v ** 2) * x[0]
        # strings, as under `from __future__ import annotations` (docs/semantics.md, "Closures")
        assert typing.get_type_hints(g) == {"v": np.ndarray, "return": float} and g.__doc__ == "g's own."
        return g(x)

    check_every_mode(f, X)
