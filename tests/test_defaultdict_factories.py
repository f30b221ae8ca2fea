"""A ``defaultdict`` whose ``default_factory`` captures values carrying derivatives
(``defaultdict(lambda: x * x)``) is differentiated in every mode: the factory's tangent is kept
beside the dict for the pass and a missing key's read calls it with that tangent
(``rules/containers/dict_subclasses.py``). Before, making one was refused ("the dict's tangent has
no place for the factory's"). Each case against central differences in reverse, forward (plain and
batched) and second order; a copy of the dict made in the pass, and the factory read as an
attribute, carry the tangent kept for it; a factory of a defaultdict made outside the pass (passed
in, a global) captures constants of the differentiation, as finite differences of the arguments
see them: its defaults carry no derivative.
"""
from __future__ import annotations

import collections
import copy
import functools

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode


def counts_from_a_closure(x):
    d = collections.defaultdict(lambda: x[0] * x[1])
    for k in "abcab":
        d[k] += x[2]
    d["c"] *= x[3]
    return sum(v * v for v in d.values())


def factory_of_a_partial(x):
    d = collections.defaultdict(functools.partial(max, x[0], 0.5 * x[1]))
    return d["k"] * x[2] + d["j"] * d["k"]


def factory_reads_a_rebound_variable(x):
    y = x[0]
    d = collections.defaultdict(lambda: y * x[1])
    first = d["a"]
    y = x[2] * x[3]  # the closure reads the variable as it is when a key is missing
    return first + 3.0 * d["b"]


def nested_defaultdicts(x):
    rows = collections.defaultdict(lambda: collections.defaultdict(lambda: x[3]))
    rows["r"]["c"] += x[0]
    rows["s"]["c"] *= x[1]
    return rows["r"]["c"] * rows["s"]["c"] + rows["t"]["z"]


CASES = [counts_from_a_closure, factory_of_a_partial, factory_reads_a_rebound_variable, nested_defaultdicts]
X = np.array([0.3, 0.8, 1.3, 0.55])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_defaultdict_factories_in_every_mode(f):
    check_every_mode(f, X)


def factory_of_a_copy(x):
    d = collections.defaultdict(lambda: x[0] * x[1])
    d["a"] = x[2]
    e, f = d.copy(), copy.copy(d)
    return e["z"] * x[3] + f["y"] * e["a"] + d["a"]


def factory_read_as_an_attribute(x):
    d = collections.defaultdict(lambda: x[0] * 2.0)
    made = d.default_factory
    e = collections.defaultdict(d.default_factory, {"k": x[1]})
    return made() * x[2] + d["a"] + e["q"] * e["k"] * x[3]


@pytest.mark.parametrize("f", [factory_of_a_copy, factory_read_as_an_attribute], ids=lambda f: f.__name__)
def test_a_factory_reached_through_a_copy_or_an_attribute_in_every_mode(f):
    check_every_mode(f, X)


def _made_outside(w):  # (its factory's captured w is a constant of the differentiation)
    return collections.defaultdict(lambda: w * 2.0)


OUTSIDE = _made_outside(np.array([0.6, -1.3]))  # a global, its factory's values constants


def reads_a_global_defaultdict(x):
    copied = OUTSIDE.copy()  # (a key read from OUTSIDE itself would be left in it)
    return np.sum(copied["new"] * x * x) + np.sum(np.sin(x) * copied["other"])


def test_a_factory_of_a_global_defaultdict_made_outside_gives_constants_in_every_mode():
    check_every_mode(reads_a_global_defaultdict, np.array([0.4, 0.9]))
    assert dict(OUTSIDE) == {}


def test_a_factory_of_a_defaultdict_passed_in_gives_constants_in_every_mode():
    """Made outside the differentiation, its factory's captured values are constants, as finite
    differences of the arguments see them (a dict's tangent has no place for its factory's)."""
    def f(d, x):
        d["z"] += x * x  # the missing key's default: the factory's constant 1.4
        return d["z"] * np.sin(x) + d["y"] * x

    d, h = _made_outside(0.7), 1e-6
    g = yb.grad(f, argnums=1)(d, 0.7)
    assert dict(d) == {}  # the argument restored
    np.testing.assert_allclose(g, (f(_made_outside(0.7), 0.7 + h) - f(_made_outside(0.7), 0.7 - h)) / (2 * h), rtol=1e-7)
    _, slope = yb.jvp(f, (d, 0.7), ({}, 1.0))
    np.testing.assert_allclose(slope, g, rtol=1e-12)
    assert dict(d) == {}
    _, (_, gradient), (_, hv) = yb.hvp(f, (d, 0.7), ({}, 1.0))
    assert dict(d) == {}
    np.testing.assert_allclose(gradient, g, rtol=1e-12)
    h = 1e-5
    second = (yb.grad(f, argnums=1)(d, 0.7 + h) - yb.grad(f, argnums=1)(d, 0.7 - h)) / (2 * h)
    np.testing.assert_allclose(hv, second, rtol=1e-6)


def test_a_defaultdict_passed_in_is_restored():
    def f(d, x):
        d["new"] += x * x
        return d["new"] * d["old"]

    d = collections.defaultdict(float, {"old": 1.5})
    g = yb.grad(f, argnums=1)(d, 0.7)
    assert dict(d) == {"old": 1.5}
    assert g == pytest.approx(2 * 0.7 * 1.5)


def test_third_order_refuses_the_factory_by_name():
    def f(v):
        d = collections.defaultdict(lambda: v[0] * v[1])
        d["a"] += v[1] ** 2
        return d["a"] ** 2 + d["b"]

    with pytest.raises(yb.NestedDifferentiationError, match="nested functions capturing variables"):
        yb.hessian(lambda y: np.sum(yb.grad(f)(y) ** 2))(np.array([0.4, 0.9]))
