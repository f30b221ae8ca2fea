"""How a class defined in the differentiated function is built, when what builds it reads the
function's variables (issue 13, ``frontend/local_classes.py``): a base class computed from them
(``class Sub(make_base(a))``), a class nested in the class body whose values and method defaults
read them, and a dataclass field's ``default_factory`` reading them in a class with bases,
``InitVar`` fields or a computed ``frozen=``, or in a base of a class with its own
``__post_init__``. Each in reverse, forward and second order against central differences
(``check_all_modes``), the arguments restored after each mode (``check_restored``).
"""
from __future__ import annotations

import collections
import dataclasses
from dataclasses import InitVar, dataclass, field
from typing import NamedTuple

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend.fence import UnsupportedSyntaxError
from yuebing.testing.second_order import check_second_order

from .all_modes import check_all_modes
from .refusals import refused_in_every_mode
from .restored_arguments import check_restored


def _make_base(k):
    class Base:
        scale = k  # (a class value: its derivative follows reads of the attribute)

        def get(self, v):
            return v * self.scale

    return Base


def base_computed_from_the_function(x):
    a = 2.0 * x

    class Sub(_make_base(a)):
        def more(self, v):
            return self.get(v) * v * a
    return Sub().more(x)


def base_computed_from_a_local_factory(x):
    def layer(k):
        class Layer:
            weight = k * k

            def apply(self, v):
                return self.weight * v
        return Layer

    class Deep(layer(np.sin(x)), _make_base(x * 3.0)):  # (two computed bases, Python's order)
        def out(self, v):
            return self.apply(v) + self.get(v)
    return Deep().out(x)


def nested_class_values_and_defaults(x):
    a = 2.0 * x

    class Outer:
        scale = a + 1.0

        class Inner:
            s = a * 3  # (the nested body sees the function's a, not Outer's names)

            def get(self, k=a * a, *, m=s):
                return k * self.s + m

        def total(self):
            return self.Inner().get() * self.scale
    return Outer().total() + Outer.Inner().get(x)


def nested_class_two_deep(x):
    a = np.cos(x)

    class Outer:
        class Middle:
            class Inner:
                w = a * x

                def get(self, t=a):
                    return self.w * t
    return Outer.Middle.Inner().get() * x


CASES = [base_computed_from_the_function, base_computed_from_a_local_factory, nested_class_values_and_defaults,
         nested_class_two_deep]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_bases_and_nested_classes_in_every_mode(f):
    check_all_modes(f, 0.7)


def base_factory_scaling_its_argument(xs):
    a = xs[0] * 2.0

    class Sub(_make_base(a)):
        def apply(self, arr):
            arr *= self.scale  # (writes the argument: undone after each pass)
            return arr.sum()
    return Sub().apply(xs)


def nested_default_scaling_its_argument(xs):
    a = xs[1] + 1.0

    class Outer:
        class Inner:
            def apply(self, arr, k=a * a):
                arr[0] = arr[0] * k
                return arr[0] * arr[1]
    return Outer.Inner().apply(xs)


@pytest.mark.parametrize("f", [base_factory_scaling_its_argument, nested_default_scaling_its_argument],
                         ids=lambda f: f.__name__)
def test_arguments_are_restored(f):
    check_restored(f, np.array([0.6, 1.4]))


# ---------------------------------------------------------------------------------- default_factory


def factory_in_a_subclass_whose_base_has_a_post_init(x):
    a = 2.0 * x

    @dataclass
    class Base:
        n: float = 1.0

        def __post_init__(self):
            self.n = self.n * a  # (still runs: the __post_init__ made for the factory hands on)

    @dataclass
    class Holder(Base):
        w: list = field(default_factory=lambda: [a, a * x])
    h = Holder()
    return h.w[0] * h.n + h.w[1]


def factory_with_initvars_and_no_post_init(x):
    @dataclass
    class Holder:
        factor: InitVar[float] = 1.0
        w: list = field(default_factory=lambda: [x * x])
    return Holder(3.0).w[0] * x


def factory_in_a_subclass_with_initvars_handed_to_the_base(x):
    a = np.sin(x)

    @dataclass
    class Base:
        k: InitVar[float] = 2.0

        def __post_init__(self, k):
            self.scaled = k * a

    @dataclass
    class Holder(Base):
        w: list = field(default_factory=lambda: [a])
    h = Holder(x)
    return h.scaled * h.w[0]


def factory_with_a_computed_frozen(x):
    frozen = bool(x < 100.0)  # (computed: the filling writes with object.__setattr__)
    a = np.sin(x)

    @dataclasses.dataclass(frozen=frozen)
    class Holder:
        s: float = 2.0
        w: list = field(default_factory=lambda: [a, a * a])
    h = Holder()
    return h.w[0] * h.w[1] * h.s


def subclass_with_its_own_post_init_not_calling_the_bases(x):
    """The base's factory is still called: the subclass's own ``__post_init__`` replaces the one
    that would have called it, so it starts with the filling too."""
    a = 2.0 * x

    @dataclass
    class Base:
        w: list = field(default_factory=lambda: [a])

    @dataclass
    class Sub(Base):
        v: float = 1.0

        def __post_init__(self):
            self.v = self.v * len(self.w) * self.w[0]
    s = Sub()
    return s.w[0] * x + s.v


FACTORIES = [factory_in_a_subclass_whose_base_has_a_post_init, factory_with_initvars_and_no_post_init,
             factory_in_a_subclass_with_initvars_handed_to_the_base, factory_with_a_computed_frozen,
             subclass_with_its_own_post_init_not_calling_the_bases]


@pytest.mark.parametrize("f", FACTORIES, ids=lambda f: f.__name__)
def test_default_factories_in_every_mode(f):
    check_all_modes(f, 0.7)


def factory_reading_an_argument_written_after(xs):
    @dataclass
    class Base:
        n: int = 2

    @dataclass
    class Log(Base):
        seen: list = field(default_factory=lambda: [xs[0] * xs[1]])
    log = Log()
    xs[1] = log.seen[0] * 2.0
    return xs[1] + xs[0] * log.n


def test_an_argument_a_factory_reads_is_restored():
    check_restored(factory_reading_an_argument_written_after, np.array([0.8, 1.3]))


def factory_of_a_class_not_spelled_dataclass(x):
    make = dataclasses.dataclass

    @make
    class Holder:
        w: list = field(default_factory=lambda: [x])
    return Holder().w[0]


def test_a_factory_of_a_class_whose_decorator_is_not_spelled_dataclass_is_refused_with_the_line():
    refused_in_every_mode(factory_of_a_class_not_spelled_dataclass, UnsupportedSyntaxError,
                          r"default_factory(.|\n)*spelled dataclass(.|\n)*test_local_classes_construction.py")


# ---------------------------------------------------------------------------------- NamedTuple defaults


def named_tuple_with_computed_defaults(x):
    a = np.sin(x)

    class Point(NamedTuple):
        w: float = a  # (its default: the construction reads it with its derivative)
        v: float = 1.0
        s: float = a * x

    p, q, r = Point(), Point(v=x), Point(x * x, 2.0)
    return p.w * p.s + q.v * q.w + r.s * r.w + p[2]


def test_named_tuple_defaults_in_every_mode():
    check_all_modes(named_tuple_with_computed_defaults, 0.7)


def named_tuple_scaling_its_argument(xs):
    class Scaled(NamedTuple):
        k: float = xs[0] * 2.0

    xs *= Scaled().k
    return xs.sum()


def test_an_argument_a_named_tuple_default_reads_is_restored():
    check_restored(named_tuple_scaling_its_argument, np.array([0.6, 1.4]))


def reads_the_field_defaults(x):
    class Point(NamedTuple):
        w: float = x * 2.0
    return Point._field_defaults["w"] * x


def test_a_read_of_field_defaults_is_refused():
    """Read directly, the defaults would lose their derivative."""
    refused_in_every_mode(reads_the_field_defaults, TypeError, "_field_defaults of a named tuple")


def namedtuple_called_with_defaults_from_the_function(x):
    """``collections.namedtuple(..., defaults=...)``: its defaults are class values too
    (``rules/local_classes._namedtuple``); it was declared without derivative, and the default's
    was dropped silently."""
    a = np.sin(x)
    Point = collections.namedtuple("Point", ["w", "v", "s"], defaults=(a, a * x))
    p = Point(1.0)
    return p.v * p.s + Point(x, x, x).s + p.w


def test_namedtuple_called_with_defaults_in_every_mode():
    check_all_modes(namedtuple_called_with_defaults_from_the_function, 0.7)
    seen = {}

    def names_its_module(x):
        seen["module"] = collections.namedtuple("Q", "u", defaults=(x,)).__module__
        return x
    yb.grad(names_its_module)(0.7)
    assert seen["module"] == __name__  # (the caller's, as a plain call names it)


# ---------------------------------------------------------------------------------- factories reading globals

WRITTEN = 1.0


@dataclass
class ReadsAGlobal:
    w: list = field(default_factory=lambda: [WRITTEN])


def factory_reading_a_global_the_call_wrote(x):
    global WRITTEN
    WRITTEN = 2.0 * x
    return ReadsAGlobal().w[0] * x


def test_a_factory_reading_a_global_the_call_wrote_is_followed():
    """The factory runs as a derived function: the field gets the global's derivative (it gave
    the value without it, silently: grad 1.4 for 2.8; tests/test_globals_dataclass_factories.py)."""
    check_all_modes(factory_reading_a_global_the_call_wrote, 0.7)

    def advice_followed(x):
        global WRITTEN
        WRITTEN = 2.0 * x
        return ReadsAGlobal(w=[WRITTEN]).w[0] * x
    check_all_modes(advice_followed, 0.7)


def field_default_read_by_introspection(x):
    @dataclass(frozen=True)
    class Params:
        w: float = x * x
        pair: tuple = field(default=(x, 2.0 * x))
        n: int = 3

    defaults = {f.name: f.default for f in dataclasses.fields(Params)}
    return defaults["w"] * sum(defaults["pair"]) * defaults["n"] + Params.__dataclass_fields__["w"].default * x


def test_a_field_default_read_through_the_field_carries_its_derivative():
    """``dataclasses.fields(C)[i].default`` of a default the class body computed (a plain Field the
    dataclass made holds it): it gave the value without its derivative, silently (grad 0.49 for
    1.47 of ``x * x`` read so, times ``x``); ``rules/local_classes.field_default``."""
    check_all_modes(field_default_read_by_introspection, 0.7)
    check_second_order(lambda v: field_default_read_by_introspection(v[0]) * v[1], np.array([0.7, 1.3]))


def reads_the_init_defaults(x):
    @dataclass
    class Params:
        w: float = x * x

    return Params.__init__.__defaults__[0] * x


def test_a_tuple_python_made_from_a_computed_default_is_refused_with_the_line():
    """The generated ``__init__``'s ``__defaults__`` hold the computed default as plain Python: read
    so, it gave the value without its derivative, silently (grad 0.49 for 1.47)."""
    refused_in_every_mode(reads_the_init_defaults, TypeError,
                          r"reading a tuple Python made(.|\n)*test_local_classes_construction.py")


class Registry:
    scales: list = []


def class_value_appended_to_a_class_list(x):
    Registry.scales.clear()  # (a function of x: each call starts again)

    class Model:
        k = x * x
    Registry.scales.append(Model.k)
    return sum(Registry.scales) * x


def test_a_class_value_appended_to_a_list_on_a_class_in_every_mode():
    """The list has a tangent of its own for the call (outside state): read back, not refused."""
    check_all_modes(class_value_appended_to_a_class_list, 0.7)


def reads_a_methods_computed_defaults(x):
    a = x * 3.0

    class M:
        def scale(self, y, k=a):
            return k * y
    d = M.scale.__defaults__
    return d[0] * x


def reads_a_methods_computed_keyword_defaults(x):
    a = x * 3.0

    class M:
        def scale(self, y, *, k=a):
            return k * y
    return M().scale.__kwdefaults__["k"] * x


def reads_a_nested_functions_computed_defaults(x):
    def scale(v, k=2.0 * x):
        return k * v
    return getattr(scale, "__defaults__")[0] * x


@pytest.mark.parametrize("f", [reads_a_methods_computed_defaults, reads_a_methods_computed_keyword_defaults,
                               reads_a_nested_functions_computed_defaults])
def test_a_read_of_computed_defaults_is_refused_by_name(f):
    """The tuple holds the normaliser's placeholder (the calls get the value with its derivative):
    read as data, it is refused instead of handing the placeholder string to the user's code."""
    refused_in_every_mode(f, TypeError, r"reading __defaults__ \(or __kwdefaults__\) of a function or method")


def test_the_refusal_of_computed_defaults_points_at_the_read():
    with pytest.raises(TypeError, match=r"(?s)computed from the function's variables.*d = M.scale.__defaults__"):
        yb.grad(reads_a_methods_computed_defaults)(0.7)
