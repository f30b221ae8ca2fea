"""A dict's ``values()`` or ``items()`` view kept in a variable, stored, passed on or returned: its
tangent is the same view of the dict's tangent (``tangents/dict_views.py``), in reverse, forward
and second order. A view kept by a generator expression consumed later, or put in a tuple, had
no tangent type (StructureError). Each function is checked against central differences in every
mode, its arguments left as they were (``check_modes``); ``f(*view)`` is in
``test_deque_arguments.py``.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import yuebing as yb
from yuebing import tangents as T
from yuebing.testing import check_tangent_interface
from yuebing.tangents.dict_views import dict_of_view
from yuebing.tangents.validate import validate_tangent

from tests.test_deque_arguments import check_modes


def _made(x):
    return {"a": x[0], "b": x[1] * x[0], "c": 2.0}


def kept_generator(x):
    vw = _made(x).values()
    g = (v * v for v in vw)
    return sum(g)


def kept_items_generator(x):
    vw = _made(x).items()
    g = (v * v for _, v in vw)
    return sum(g) * x[1]


def consumed_generator(x):
    vw = _made(x).values()
    return sum(v * v for v in vw)


def listed(x):
    vw = _made(x).values()
    return sum(list(vw)) * x[0]


def looped(x):
    vw = _made(x).items()
    total = 0.0
    for k, v in vw:
        total = total + v * v if k != "c" else total + v * x[1]
    return total


def zipped(x):
    vw = _made(x).values()
    return sum(u * v for u, v in zip(vw, [x[1], x[0], 3.0]))


def _values_of(d):
    return d.values()


def from_helper(x):
    vw = _values_of(_made(x))
    g = (v * x[1] for v in vw)
    return sum(g)


def in_a_tuple(x):
    pair = (_made(x).values(), 1)
    return sum(v * v for v in pair[0])


def in_an_attribute(x):
    class Box:
        pass

    box = Box()
    box.view = _made(x).items()
    return sum(v * x[0] for _, v in box.view)


def _squares(values):
    for v in values:
        yield v * v


def into_a_generator_function(x):
    g = _squares(_made(x).values())
    return next(g) + sum(g)


def written_after_the_view(x):
    d = _made(x)
    vw = d.values()
    g = (v * x[1] for v in vw)
    d["a"] = x[1] ** 3  # (a dict view is live: the value written is the one seen)
    return sum(g)


MADE_INSIDE = [kept_generator, kept_items_generator, consumed_generator, listed, looped, zipped, from_helper,
               in_a_tuple, in_an_attribute, into_a_generator_function, written_after_the_view]


@pytest.mark.parametrize("f", MADE_INSIDE, ids=[f.__name__ for f in MADE_INSIDE])
def test_a_view_of_a_dict_made_inside_every_mode(f):
    check_modes(f, np.array([1.3, 0.7]))


def kept_of_passed(d, x):
    vw = d.values()
    g = (v * x for v in vw)
    return sum(g)


def tuple_of_passed(d, x):
    pair = (d.items(), x)
    return sum(v * pair[1] * v for _, v in pair[0])


def ordered_kept(d, x):
    vw = d.values()
    g = (v * x for v in vw)
    return sum(g) * d["b"]


@pytest.mark.parametrize("f", [kept_of_passed, tuple_of_passed], ids=lambda f: f.__name__)
def test_a_view_of_a_dict_passed_in_every_mode(f):
    check_modes(f, {"a": 1.5, "b": -0.5, "k": 3}, 0.8)


def test_a_view_of_an_ordered_dict_passed_in_every_mode():
    check_modes(ordered_kept, collections.OrderedDict([("b", 0.4), ("a", 1.2)]), 0.8)


def test_a_view_passed_in_has_the_view_of_the_dicts_gradient():
    d = {"a": 1.5, "b": -0.5}
    view = d.values()
    g = yb.grad(lambda vw: sum(v * v for v in vw))(view)
    assert type(g) is type({}.values()) and list(g) == [3.0, -1.0]
    check_modes(lambda vw, x: sum(v * x for _, v in vw), d.items(), 0.3)


def test_tangent_operations_of_a_view_follow_its_dict():
    d = {"a": 1.5, "b": -0.5}
    structure = (d, d.values(), [d.items()])
    check_tangent_interface(structure)
    t = T.zero_tangent(structure)
    validate_tangent(structure, t)
    assert list(t[1]) == [0.0, 0.0] and dict_of_view(t[1]) is t[0]  # the view of the dict's tangent
    moved = T.add_to_primal(structure, T.randn_tangent(np.random.default_rng(1), structure))
    assert dict_of_view(moved[1]) is moved[0] and dict_of_view(moved[2][0]) is moved[0]


def test_a_keys_view_of_float_keys_is_refused_at_the_users_line():
    def f(x):
        vw = {x[0]: 1.0}.keys()
        g = (k * k for k in vw)
        return sum(g)

    for call in (lambda: yb.grad(f)(np.array([1.5])), lambda: yb.hvp(f, (np.array([1.5]),), (np.ones(1),))):
        with pytest.raises(TypeError, match="dict_keys") as info:
            call()
        assert "test_dict_view_tangents.py" in _printed(info.value)  # the user's file and line


def _printed(error: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception_only(error))
