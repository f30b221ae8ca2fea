"""What library code does on its way to the numbers (found differentiating scikit-learn's metrics
and kernels): a configuration in a ``threading.local``, ``inspect.Signature.bind`` of the
arguments, a C descriptor's ``__get__`` called directly, a walrus in a generator expression
``any`` consumes, an annotated local of a generator function, plugin discovery through
``importlib.metadata``, ``itertools.chain.from_iterable``, ``x.__class__``. Each is differentiated in every
mode against central differences (tests/modes.py)."""
from __future__ import annotations

import importlib.metadata
import inspect
import itertools
import threading

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from tests.modes import check_every_mode

_CONFIG = threading.local()


class _LocalScale(threading.local):
    def __init__(self) -> None:
        self.factor = 2.0


_SCALE = _LocalScale()


def _configured(x):
    if not hasattr(_CONFIG, "settings"):
        _CONFIG.settings = {"power": 3}
    _CONFIG.last = x * 2.0  # a float with a derivative kept on the thread-local, read back
    return np.sum(_CONFIG.last ** _CONFIG.settings["power"]) * _SCALE.factor


def _bound(x):
    def model(a, b, c=1.5):
        return a * b + c

    bound = inspect.signature(model).bind(x[0], b=x[1])
    bound.apply_defaults()
    names = [p.name for p in inspect.signature(model).parameters.values()]
    return bound.arguments["a"] * bound.arguments["b"] ** 2 + model(*bound.args, **bound.kwargs) * len(names)


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


def _descriptors(x):
    o = _Slotted(x[0] * 3.0, x[1])
    a = type(o).__dict__["a"].__get__(o)  # a member descriptor, as inspect.getattr_static reads one
    t = np.ndarray.__dict__["T"].__get__(x.reshape(2, 1))  # a getset descriptor of an array
    mro = type.__dict__["__mro__"].__get__(_Slotted)  # of a class: a constant
    return a * o.b + np.sum(t ** 3) * len(mro)


def _not_a_class(x):
    try:
        type.__dict__["__mro__"].__get__(x)  # CPython's TypeError: x is not a type
    except TypeError:
        return x[0] * x[1]
    return x[0]


def _walrus_in_any(x):
    found = any((m := v * x[0]) > 2.0 for v in [1.0, 2.0, 3.0])
    return m * x[1] if found else x[1]


def _walrus_in_next(x):
    hit = next(w for v in [0.5, 1.5, 2.5] if (w := v * x[0] * x[1]) > 1.0)
    return hit + w * x[0]


def _annotated_generator_local(x):
    def scaled(values):
        for v in values:
            weight: float = v * 2.0
            yield weight * x[0]

    return sum(scaled(x)) + next(scaled(x[1:]))


def _introspected(x):
    plugins = importlib.metadata.entry_points(group="yuebing.no_such_group")  # plugin discovery
    assert x.__class__ is np.ndarray
    return x[0] * x[1] ** 2 + len(plugins)


def _chained(x):
    rows = [[x[0], x[1] * 2.0], [x[0] * x[1]]]
    return sum(v ** 2 for v in itertools.chain.from_iterable(rows))


CASES = [_configured, _bound, _descriptors, _not_a_class, _walrus_in_any, _walrus_in_next, _annotated_generator_local,
         _introspected]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__.strip("_") for f in CASES])
def test_every_mode(f):
    check_every_mode(f, np.array([1.1, 0.7]))


def _chained_arguments(x):
    return sum(v * x[1] for v in itertools.chain.from_iterable([x, [x[0] ** 2]]))


@pytest.mark.parametrize("f", [_chained, _chained_arguments], ids=["lists", "an argument"])
def test_chain_from_iterable(f):
    """A classmethod of a C class (``chain.from_iterable``, bound to its class) finds its rule in
    every mode: second order looked it up among its metaclass's methods and found none."""
    check_every_mode(f, np.array([1.1, 0.7]))


def test_descriptor_of_a_shadowed_attribute_is_refused():
    class Base:
        __slots__ = ("a",)

    class Shadow(Base):
        a = 5.0  # the instance's `a` is now this, not the slot

    o = Shadow()
    Base.__dict__["a"].__set__(o, 2.0)

    def f(x):
        return Base.__dict__["a"].__get__(o) * x

    assert f(1.5) == 3.0
    with pytest.raises(RuleArgumentError, match="shadows the descriptor"):
        yb.grad(f)(1.5)
