"""A nested differentiation (``yb.grad``, ``yb.hvp`` inside the differentiated function) reading
module state the pass around it wrote with derivatives: a module dict, list, object attribute or
class attribute holding ``x``. The inner pass follows the outer derivative through the value it
reads, as it does through a closure's captured variables (``transform/globals_and_cells.outside_global``,
``rules/outside_state.enter``'s link). Before, it read the value as a constant: ``yb.grad`` gave 2.0
where 4.0 is right. Every mode against central differences (``check_every_mode``: reverse over
reverse, forward over reverse, ``yb.hvp`` over ``yb.grad``); third order through a class
attribute is refused by name, and its advice works."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

STORE: dict = {}
LOG: list = []


class Holder:
    v = 0.0


HOLDER = Holder()


def _square_scaled_by_store(y):
    return STORE["k"] * y * y  # a module-level function: reads STORE as a global of its own


def writes_then_nests(x):
    STORE["k"] = x  # written by the outer pass, with x's derivative
    return x * yb.hvp(lambda y: STORE["k"] * y * y, (1.0,), (1.0,))[2][0]  # 2 x^2


def dict_read_by_a_closure(x):
    STORE["k"] = np.sin(x)
    return x * yb.grad(lambda y: STORE["k"] * y ** 3)(x)  # 3 x^3 sin x


def dict_read_by_a_module_function(x):
    STORE["k"] = x * x
    return yb.grad(_square_scaled_by_store)(x) + x  # 2 x^3 + x


def appended_to_a_module_list(x):
    LOG.append(x * 2.0)
    return x * yb.grad(lambda y: LOG[-1] * np.cos(y))(x)  # -2 x^2 sin x


def module_object_attribute(x):
    HOLDER.v = x ** 2
    return yb.grad(lambda y: HOLDER.v * y * y)(x)  # 2 x^3


def class_attribute(x):
    Holder.v = 3.0 * x
    return yb.grad(lambda y: Holder.v * np.exp(y))(x)  # 3 x e^x


def jvp_of_a_module_function(x):
    STORE["k"] = x
    return x * yb.jvp(_square_scaled_by_store, (1.0,), (1.0,))[1]  # 2 x^2


def jvp_of_a_closure(x):
    STORE["k"] = np.cos(x)
    return x * yb.jvp(lambda y: STORE["k"] * y * y, (x,), (1.0,))[1]  # 2 x^2 cos x


def vjp_of_a_module_function(x):
    STORE["k"] = x
    return x * yb.vjp(_square_scaled_by_store, 1.5)[1](1.0)[0]  # 3 x^2


def hvp_of_a_module_function(x):
    STORE["k"] = x
    return x * yb.hvp(_square_scaled_by_store, (1.0,), (1.0,))[2][0]  # 2 x^2


def local_class_attribute(x):
    class Local:
        v = 3.0 * x  # computed by the outer function's class body

    return yb.grad(lambda y: Local.v * np.exp(y))(x)


def local_class_method(x):
    a = 2.0 * x

    class Local:
        def get(self):
            return a

    held = Local()
    return yb.grad(lambda y: held.get() * np.exp(y))(x)


def class_attribute_passed_as_an_argument(x):
    Holder.v = 3.0 * x
    return yb.grad(lambda y, v: v * np.exp(y))(x, Holder.v)  # the refusal's advice


def closure_reads_the_written_dict(x):
    STORE["k"] = x  # first order: a closure made here reads the module dict the call wrote
    scaled = lambda y: STORE["k"] * y  # noqa: E731
    return scaled(2.0) * x  # 2 x^2


@pytest.fixture(autouse=True)
def _fresh_state():
    STORE.clear()
    LOG.clear()
    HOLDER.v = Holder.v = 0.0
    yield
    STORE.clear()
    LOG.clear()
    Holder.v = 0.0


@pytest.mark.parametrize("f", [dict_read_by_a_closure, dict_read_by_a_module_function, appended_to_a_module_list,
                               module_object_attribute, closure_reads_the_written_dict,
                               class_attribute_passed_as_an_argument, jvp_of_a_module_function, jvp_of_a_closure,
                               vjp_of_a_module_function], ids=lambda f: f.__name__)
def test_the_nested_pass_follows_what_the_outer_pass_wrote(f):
    check_every_mode(f, 0.7)


@pytest.mark.parametrize("f, name", [(class_attribute, "Holder.v"), (local_class_attribute, "Local.v")],
                         ids=["module_class", "local_class"])
def test_a_class_attribute_is_followed_in_first_order_and_refused_by_name_in_third(f, name):
    check_every_mode(f, 0.7, second_order=False)  # reverse and forward over yb.grad
    with pytest.raises(yb.NestedDifferentiationError, match=rf"class attribute \S*{name}.*as an argument"):
        yb.hvp(f, (0.7,), (1.0,))


@pytest.mark.parametrize("run", [lambda: yb.grad(local_class_method)(0.7),
                                 lambda: yb.jvp(local_class_method, (0.7,), (1.0,))], ids=["grad", "jvp"])
def test_a_variable_read_by_a_local_class_method_stays_refused(run):
    with pytest.raises(TypeError, match="a variable read by the methods of a class the outer function defined"):
        run()


def test_reverse_over_hvp_reading_a_dict_the_outer_pass_wrote():
    h = 1e-5
    expected = (writes_then_nests(1.3 + h) - writes_then_nests(1.3 - h)) / (2 * h)
    assert yb.grad(writes_then_nests)(1.3) == pytest.approx(expected, rel=1e-6)


def test_reverse_and_forward_over_hvp_of_a_module_function():
    check_every_mode(hvp_of_a_module_function, 0.7, second_order=False)  # (second order over yb.hvp: fourth)


def test_forward_over_hvp_is_refused_by_name():
    with pytest.raises(yb.NestedDifferentiationError, match="third derivatives"):
        yb.jvp(writes_then_nests, (1.3,), (1.0,))
