"""Generators evaluated eagerly only where that is provably Python's result (issue 13).

A generator expression used to be made into a list wherever it stood, and a generator function
whose body looked pure by its syntax too: a consumer that stops early (``any``, ``next``,
``break``) then saw the effects of items Python never makes, a user object's ``.sum()`` or
``__add__`` named like a reading operation wrote anyway, and a ``for`` loop writing what the
generator reads saw the items computed before its writes (gradient [1, 1, 1] where differences
give [3, 2, 1]). Now a generator runs eagerly only when drained at once, or when its body is pure,
its consumer is quiet and the values it reaches are plain data at run time
(``frontend/generator_eagerness.py``); everything else runs lazily. Each case is checked in every
mode against finite differences, with the count of side effects inside the value.
"""
from __future__ import annotations

import ast

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend.desugar import desugar
from yuebing.frontend.fence import UnsupportedSyntaxError
from yuebing.frontend.generator_eagerness import called_generator_definitions
from yuebing.frontend.source import function_node

from .all_modes import check_all_modes


def _rewritten(fn) -> str:
    node, filename = function_node(fn)
    return ast.unparse(desugar(node, filename, called=called_generator_definitions(fn, node)))


# ---------------------------------------------------------------- generator expressions with effects

def _counted(consume):
    """``f(x)``: a generator expression whose items append to a list, consumed by ``consume``;
    the value holds how many items were made (so a derivative sees an extra one)."""
    def f(x):
        log = []

        def h(v):
            log.append(v)
            return v * x
        result = consume(h(v) for v in [1.0, 2.0, 3.0, 4.0])
        return float(result) * x + x * len(log) + sum(log) * x * x
    return f


def _first_over(it):
    for v in it:
        if v > 1.0:
            return v
    return 0.0


CONSUMERS = {
    "any": lambda it: any(v > 1.0 for v in it),
    "all": lambda it: all(v < 3.0 for v in it),
    "next": lambda it: next(it),
    "zip": lambda it: sum(a * b for a, b in zip(it, [1.0, 2.0])),
    "break": _first_over,
    "in": lambda it: 1.0 in (float(w > 1.0) for w in it),
}


@pytest.mark.parametrize("name", CONSUMERS)
def test_effectful_generator_expression_stopped_early(name):
    consume = CONSUMERS[name]
    check_all_modes(_counted(consume), 0.7)


def test_the_issue_reproduction():
    log = []

    def f(x):
        log.clear()

        def h(v):
            log.append(1)
            return v
        return float(any(h(v) * x > 1 for v in [1.0, 2.0, 3.0])) + x * len(log)
    assert yb.grad(f)(2.0) == pytest.approx(1.0)
    check_all_modes(f, 2.0)


def test_walrus_in_a_generator_expression_under_any_binds_the_first_match():
    def f(x):
        m = 0.0
        if any((m := v * x) > 1.0 for v in [1.0, 2.0, 3.0]):
            return m * m
        return m
    check_all_modes(f, 0.7)


# ---------------------------------------------------------------- user objects reaching pure-looking code

class Acc:
    """Its reading-looking methods and operators write."""

    def __init__(self):
        self.n = 0.0

    def sum(self):
        self.n += 1.0
        return self.n

    def items(self):
        self.n += 1.0
        return [("a", self.n)]

    def __add__(self, other):
        self.n += 1.0
        return self.n + other

    def __abs__(self):
        self.n += 1.0
        return self.n

    def __lt__(self, other):
        self.n += 1.0
        return self.n < other


def test_the_issue_reproduction_of_a_writing_sum():
    def g(x):
        a = Acc()

        def gen(o, x):
            for i in range(3):
                yield o.sum() * x
        for v in gen(a, x):
            if v > 0:
                break
        return a.n * x
    assert yb.grad(g)(2.0) == pytest.approx(1.0)
    check_all_modes(g, 2.0)


READS = {
    "sum": lambda o, x: o.sum() * x,
    "items": lambda o, x: o.items()[0][1] * x,
    "add": lambda o, x: (o + x) * x,
    "abs": lambda o, x: abs(o) * x,
    "lt": lambda o, x: x * (2.0 if o < 2.5 else 1.0),
}


@pytest.mark.parametrize("how", ["sum", "items", "add", "abs", "lt"])
def test_user_object_given_to_a_pure_looking_generator(how):
    def f(x):
        a = Acc()

        def gen(o, x, n):
            for k in range(n):
                if how == "sum":
                    yield o.sum() * x
                elif how == "items":
                    yield o.items()[0][1] * x
                elif how == "add":
                    yield (o + x) * x
                elif how == "abs":
                    yield abs(o) * x
                else:
                    yield x * (2.0 if o < 2.5 else 1.0)
        first = 0.0
        for v in gen(a, x, 4):
            first = v
            if v > 0.0:
                break
        return first + a.n * x * x
    check_all_modes(f, 1.3)


def test_user_object_reaching_a_generator_through_a_closure():
    def f(x):
        a = Acc()

        def gen(n):
            for k in range(n):
                yield a.sum() * x
        return float(any(v > 0.0 for v in gen(5))) * x + a.n * x
    check_all_modes(f, 0.9)


# ---------------------------------------------------------------- consumers that write what the generator reads

def test_the_issue_reproduction_of_a_loop_writing_the_array():
    def k(arr):
        def gen(a):
            for i in range(3):
                yield a[i]
        s = 0.0
        for i, v in enumerate(gen(arr)):
            if i < 2:
                arr[i + 1] = arr[i + 1] + v
            s = s + v
        return s
    np.testing.assert_allclose(yb.grad(k)(np.array([1.0, 2.0, 3.0])), [3.0, 2.0, 1.0])
    check_all_modes(k, np.array([1.0, 2.0, 3.0]))


def _module_gen(a):
    for i in range(3):
        yield a[i] * a[i]


def test_loop_writing_what_a_module_generator_reads():
    def k(arr):
        s = 0.0
        for i, v in enumerate(_module_gen(arr)):
            if i < 2:
                arr[i + 1] = arr[i + 1] * v
            s = s + v
        return s
    check_all_modes(k, np.array([0.5, 1.5, 0.8]))


def test_loop_adding_in_place_into_what_a_generator_reads():
    def f(arr):
        def gen(a):
            for i in range(3):
                yield a[i] * a[i]
        acc = arr
        total = 0.0
        for v in gen(arr):
            acc += v  # writes arr: the next item is made from the new values
            total = total + v
        return total + np.sum(arr)
    check_all_modes(f, np.array([0.5, -0.4, 0.3]))


def test_loop_adding_in_place_into_an_alias_made_inside():
    def f(arr):
        def gen(a):
            for i in range(3):
                yield a[i] * a[i]
        total = 0.0
        for v in gen(arr):
            acc = arr
            acc += v
            total = total + v
        return total + np.sum(arr)
    check_all_modes(f, np.array([0.5, -0.4, 0.3]))


def test_loop_adding_to_a_float_stays_eager():
    def f(x):
        def gen(n):
            for k in range(n):
                yield x * k
        s = 0.0
        for v in gen(4):
            s += v * v
        return s
    assert "_yb_eager_gen(((), (s,)), gen, 4)" in _rewritten(f)
    check_all_modes(f, 0.8)


def test_loop_rebinding_what_a_generator_reads_as_a_closure_variable():
    def f(x):
        scale = x

        def gen(n):
            for k in range(n):
                yield scale * k
        s = 0.0
        for v in gen(4):
            s = s + v
            scale = scale * x
        return s
    check_all_modes(f, 0.8)


def test_generator_expression_reading_a_rebound_variable():
    def f(x):
        t = x
        s = 0.0
        for v in (u * t for u in [1.0, 2.0, 3.0]):
            s = s + v
            t = v * x
        return s
    check_all_modes(f, 0.6)


# ---------------------------------------------------------------- lazy generators under eager consumers

def _effects(log):
    def g(x):
        for k in range(5):
            log.append(k)
            yield x * (k + 1.0)
    return g


@pytest.mark.parametrize("shape", ["any", "next", "pure_function"])
def test_lazy_generator_stepped_by_an_eager_looking_one(shape):
    def f(x):
        log = []
        g = _effects(log)

        def h(it):
            for v in it:
                yield 2.0 * v
        if shape == "any":
            taken = float(any(v > 1.0 for v in g(x)))
        elif shape == "next":
            taken = next(2.0 * v for v in g(x))
        else:
            taken = next(h(g(x)))
        return taken * x + len(log) * x * x
    check_all_modes(f, 0.7)


# ---------------------------------------------------------------- an item that raises

def test_item_that_raises_after_the_items_taken():
    def f(x):
        return next(x / v for v in [1.0, 0.0])
    check_all_modes(f, 1.5)


def test_item_that_raises_after_a_break():
    def f(x):
        def gen(vs):
            for v in vs:
                yield x / v
        s = 0.0
        for w in gen([2.0, 4.0, 0.0]):
            s = s + w
            if s > 0.1:
                break
        return s
    check_all_modes(f, 1.5)


def test_item_that_raises_is_seen_after_the_items_before_it():
    def f(x):
        def gen(vs):
            for v in vs:
                yield x / v
        s = 0.0
        try:
            for w in gen([2.0, 4.0, 0.0]):
                s = s + w
        except ZeroDivisionError:
            s = s * 3.0
        return s
    check_all_modes(f, 1.5)


# ---------------------------------------------------------------- what stays eager, what is refused

def test_drained_and_quiet_generators_stay_eager():
    def f(x):
        def gen(n):
            for k in range(n):
                yield x * k
        s = 0.0
        for v in gen(5):
            s = s + v * v
        return s + sum(v for v in gen(3)) + float(any(v > 1 for v in [x, 2.0 * x]))
    text = _rewritten(f)
    assert "_yb_eager_gen(((s,), ()), gen, 5)" in text and "Generator(" in text  # (the lazy twin, for the fallback)
    assert "sum((v for v in _yb_eager_gen(((), ()), gen, 3)))" in text
    check_all_modes(f, 0.9)


def test_a_comprehension_variable_read_by_a_generator_kept_for_later_is_refused():
    def f(x):
        gens = [(v * t for v in [1.0, 2.0]) for t in [x, 2.0 * x]]
        return sum(sum(g) for g in gens)
    with pytest.raises(UnsupportedSyntaxError, match=r"(?s)generator expression reading t.*test_generator_exactness.py"):
        yb.grad(f)(0.5)


class _Bumper:
    """Its ``__radd__`` writes the array it was given."""

    def __init__(self, arr):
        self.arr = arr

    def __radd__(self, v):
        self.arr[0] = self.arr[0] * 1.5
        return v


def test_generator_expression_stepping_a_pure_generator():
    def f(arr):
        def gen(a):
            for i in range(4):
                yield a[0] * (i + 1.0) + a[1]
        plain = float(any(v > 2.0 for v in gen(arr))) * arr[1]
        w = _Bumper(arr)
        bumped = float(any(v + w > 2.0 for v in gen(arr)))  # (each item seen after the write of the one before)
        return plain + bumped * arr[0] + arr[0] * arr[1]
    assert "_yb_eager__yb_genexpr(((), ()), _yb_genexpr, _yb_eager_gen(((), ()), gen, arr))" in _rewritten(f)  # both eager: plain data
    check_all_modes(f, np.array([0.6, 0.3]))


def test_drained_generator_expressions_stay_comprehensions():
    def f(x):
        xs = [x * k for k in range(4)]
        return sum(x ** 2 for v in xs) + max(v * v for v in xs) + np.sum(np.array([v for v in xs]))
    text = _rewritten(f)
    assert "_yb_" not in text  # nothing rewritten: the fast path of comprehensions
    check_all_modes(f, 0.4)
