"""Classes defined inside the differentiated function (issue 13), in every mode.

Their methods read the function's variables through cells whose tangent boxes the class
statement registers (``class_cells``), and values the class body computes from them (class
attributes, dataclass defaults) are computed by the function's code (``class_level``):
``frontend/local_classes.py``, ``rules/local_classes.py``. Each function is checked against the
plain call and central differences in reverse, forward and second order
(``all_modes.check_all_modes``; ``modes.check_every_mode`` adds ``yb.hessian`` and array inputs).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

from .all_modes import check_all_modes


def model_from_the_issue(x):
    a = 2.0 * x

    class Model:
        scale = a * 3  # a class attribute from a differentiated variable

        def __init__(self, w):
            self.w = w

        def __call__(self, t):
            return self.w * t * a + self.scale  # a method reading a (closure)

        @property
        def twice(self):
            return 2 * a * self.w
    m = Model(x)
    return np.sum(m(x) + m.twice)


def method_writes_with_nonlocal(x):
    total = x

    class Accumulator:
        def add(self, v):
            nonlocal total
            total = total * v + 1.0
    acc = Accumulator()
    acc.add(x)
    acc.add(2.0)
    return total


def class_built_in_a_loop(x):
    """Each iteration makes a fresh class: its attribute holds that iteration's value, its
    method reads ``a`` when called (the last value, after the loop), as in Python."""
    made = []
    a = x
    for k in range(3):
        a = a * x + k

        class Level:
            level = a

            def read(self):
                return a * self.level
        made.append(Level())
        if k == 0:
            first = made[0].read()  # called before a changes again: this iteration's a
    return first + sum(m.read() for m in made)


def class_inside_a_nested_function(x):
    a = 2.0 * x

    def inner(t):
        b = t * t

        class Shifted:
            offset = b + 1.0

            def __call__(self, s):
                return a * s + b * self.offset  # a: of the function further out; b: inner's own
        return Shifted()(t)
    return inner(x) + inner(3.0 * x)


def dataclass_with_defaults_from_the_function(x):
    a = 2.0 * x

    @dataclasses.dataclass
    class Point:
        w: float = a
        v: float = dataclasses.field(default=a * a)
        n: int = 2

        def total(self, t):
            return self.w * t + self.v * a * self.n
    return Point().total(x) + Point(w=x).total(1.0)


def frozen_dataclass_with_post_init(x):
    a = np.sin(x)

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        w: float = a

        def scaled(self, t):
            return self.w * t * a

    @dataclasses.dataclass
    class WithPostInit:
        w: float = a * a

        def __post_init__(self):
            self.z = self.w * a
    return Frozen().scaled(x) + WithPostInit().z


class ModuleBase:
    def __init__(self, w):
        self.w = w

    def value(self, t):
        return self.w * t


def subclass_of_a_module_class_with_super(x):
    a = np.sin(x)

    class Sub(ModuleBase):
        def __init__(self, w):
            super().__init__(w * a)

        def value(self, t):
            return super().value(t) + a * t
    return Sub(x).value(x)


def method_reads_a_variable_reassigned_after_the_class(x):
    a = x

    class Reader:
        def get(self):
            return a * a
    r = Reader()
    before = r.get()
    a = 3.0 * x  # late binding: the method now sees this value
    return before + r.get()


def classmethod_and_staticmethod(x):
    a = x * x

    class Tools:
        scale = a + 1.0
        double = scale * 2  # reads the class's own earlier value
        n = 2
        triple = n * a

        @classmethod
        def make(cls, t):
            return cls.scale * t + cls.double

        @staticmethod
        def helper(t):
            return a * t
    return Tools.make(x) + Tools.helper(x) + Tools.scale + Tools().triple


def method_appends_to_a_captured_list(x):
    buffer = [x]

    class Pusher:
        def push(self, v):
            buffer.append(v * x)
    p = Pusher()
    p.push(x)
    p.push(2.0)
    return sum(buffer)


def method_calls_a_local_closure(x):
    def scaled(t):
        return t * x

    class Caller:
        def apply(self, t):
            return scaled(t) * x
    return Caller().apply(x)


def method_returns_an_instance_of_its_class(x):
    a = 2.0 * x

    class Vec:
        def __init__(self, v):
            self.v = v

        def grown(self):
            return Vec(self.v * a)  # the class's own name, read by its method
    return Vec(x).grown().grown().v


def lambdas_and_a_comprehension_in_the_class_body(x):
    a = 2.0 * x

    class Table:
        scaled = lambda self, t: a * t  # noqa: E731 - a method made by a lambda
        squared = staticmethod(lambda t: a * t * t)
        rows = [a * i for i in range(3)]  # computed by the function, as class values are
    return Table().scaled(x) + Table.squared(x) + sum(Table.rows)


CASES = [lambdas_and_a_comprehension_in_the_class_body, model_from_the_issue, method_writes_with_nonlocal, class_built_in_a_loop, class_inside_a_nested_function,
         dataclass_with_defaults_from_the_function, frozen_dataclass_with_post_init,
         subclass_of_a_module_class_with_super, method_reads_a_variable_reassigned_after_the_class,
         classmethod_and_staticmethod, method_appends_to_a_captured_list, method_calls_a_local_closure,
         method_returns_an_instance_of_its_class]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_local_classes_in_every_mode(f):
    check_all_modes(f, 1.3)


@pytest.mark.parametrize("f", [model_from_the_issue, class_inside_a_nested_function, classmethod_and_staticmethod],
                         ids=lambda f: f.__name__)
def test_hessians_against_differences_of_the_gradient(f):
    check_every_mode(f, 0.7)


def test_the_issue_example_on_an_array():
    check_every_mode(model_from_the_issue, np.array([0.3, 0.9, -0.4]))


def scales_its_argument_in_place(x):
    a = 2.0 * x[0]

    class Scaler:
        def apply(self, arr):
            arr *= a
            return arr.sum()
    return Scaler().apply(x)


def test_arguments_are_restored_after_the_call():
    x = np.array([0.5, 1.5])
    check_all_modes(scales_its_argument_in_place, x)
    kept = x.copy()
    yb.grad(scales_its_argument_in_place)(x)
    yb.hessian(scales_its_argument_in_place)(x)
    np.testing.assert_array_equal(x, kept)


def method_default_from_the_function(x):
    a = 2.0 * x

    class WithDefault:
        def get(self, k=a):
            return k
    return WithDefault().get()


def field_with_a_default_factory_from_the_function(x):
    a = 2.0 * x

    @dataclasses.dataclass
    class Holder:
        w: list = dataclasses.field(default_factory=lambda: [a])
    return Holder().w[0]


def class_value_read_by_a_default(x):
    a = 2.0 * x

    class Reads:
        scale = a * 3

        def get(self, k=scale):
            return k
    return Reads().get()


def _scaled_by(factor):
    def decorate(cls):
        cls.factor = factor
        return cls
    return decorate


def decorator_from_the_function(x):
    a = 2.0 * x

    @_scaled_by(a)
    class Scaled:
        def get(self, v):
            return v * self.factor
    return Scaled().get(x)


def test_a_method_default_computed_from_the_function_carries_its_derivative():
    """A method's default value is computed by the function, as a class value the method reads
    (``local_classes._defaults_as_class_values``), also when it reads one (``k=scale``); a
    dataclass's default_factory is called by its ``__post_init__`` (more: test_dataclass_factories.py)."""
    check_all_modes(method_default_from_the_function, 0.7)
    check_all_modes(class_value_read_by_a_default, 0.7)
    check_all_modes(field_with_a_default_factory_from_the_function, 0.7)


def test_a_decorator_reading_the_function_s_variables_is_differentiated():
    """A class decorator reading the function's variables is called by the function, its write
    ``cls.factor = factor`` followed (more: test_local_classes_decorators.py)."""
    check_all_modes(decorator_from_the_function, 0.7)


def default_factory_of_a_subclass(x):
    a = 2.0 * x

    @dataclasses.dataclass
    class Base:
        n: int = 1

    @dataclasses.dataclass
    class Holder(Base):
        w: list = dataclasses.field(default_factory=lambda: [a])
    return Holder().w[0]


def test_a_default_factory_of_a_subclass_without_post_init_is_called_with_its_derivative():
    """The ``__post_init__`` made to call the factory hands on to the base's (none here:
    more in test_local_classes_construction.py)."""
    check_all_modes(default_factory_of_a_subclass, 0.7)


def test_a_plain_call_is_unchanged():
    """The class statement runs as Python runs it: the plain function is not rewritten."""
    assert model_from_the_issue(1.3) == pytest.approx(2.0 * 1.3 * 1.3 * 1.3 + 6 * 1.3 + 4 * 1.3 * 1.3)


def test_third_order_refuses_naming_the_construct_and_the_users_line():
    line = model_from_the_issue.__code__.co_firstlineno + 4  # (scale = a * 3)
    with pytest.raises(yb.NestedDifferentiationError,
                       match=rf"classes defined inside it(.|\n)*test_local_classes.py\", line {line}"):
        yb.hvp(lambda x: yb.grad(model_from_the_issue)(x), (0.7,), (1.0,))


def test_batched_hessian_equals_one_pass_per_column():
    """``chunk_size`` batches the directions: the registered boxes then carry every direction."""
    x = np.array([0.3, 0.9, -0.4])

    def f(v):
        return classmethod_and_staticmethod(v[0]) * dataclass_with_defaults_from_the_function(v[1]) \
            + model_from_the_issue(v[2])
    np.testing.assert_allclose(yb.hessian(f, chunk_size=3)(x), yb.hessian(f)(x), rtol=1e-12, atol=1e-12)


class _Root:
    pass


def super_reads_a_computed_class_value(x):
    a = 2.0 * x

    class Parent(_Root):
        scale = a * 3

    class Child(Parent):
        scale = 1.0

        def get(self):
            return super().scale * x + Parent.scale * self.scale
    return Child().get()


def test_super_reads_a_computed_class_value_in_first_order():
    """(Second order reads only methods through super(), and says so.)"""
    check_all_modes(super_reads_a_computed_class_value, 1.3, second_order=False)


def inner_gradient_through_an_outer_class(x):
    a = 2.0 * x

    class Curve:
        def at(self, y):
            return a * y * y
    return yb.grad(lambda y: Curve().at(y))(x) * x


def test_a_nested_gradient_reaching_an_outer_class_is_refused():
    """The inner pass would take the outer derivative of ``a`` for a constant."""
    for run in (lambda: yb.grad(inner_gradient_through_an_outer_class)(0.7),
                lambda: yb.jvp(inner_gradient_through_an_outer_class, (0.7,), (1.0,))):
        with pytest.raises(TypeError, match="nested differentiation"):
            run()
