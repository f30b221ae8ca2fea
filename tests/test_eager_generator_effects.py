"""Generator functions with side effects, consumed only in part. An eager generator (a list
builder, ``frontend/desugar.py``) runs every item before its consumer sees the first, so a
``break``, ``next``, a shorter ``zip``, ``islice``, ``any``/``all`` or ``in`` saw the side effects
of items Python never made: 10.0 where differences give 3.0. A generator whose body may have
effects now runs lazily (``frontend/generator_effects.py``), and ``any``/``all``/``in`` step a
lazy generator only as far as Python does (``rules/comparing_calls.py``); pure generators stay
eager (the lazy path is an order of magnitude slower)."""
from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend.desugar import desugar
from yuebing.frontend.generator_eagerness import called_generator_definitions
from yuebing.frontend.source import function_node

from .all_modes import check_all_modes

LOG: list = []
TOTAL = 0.0


def logged(x, n):
    """Appends each item to a module-level list before yielding it."""
    for k in range(n):
        LOG.append(x * (k + 1.0))
        yield x * (k + 1.0)


def by_break(x):
    LOG.clear()
    s = 0.0
    for v in logged(x, 5):
        s = s + v
        if len(LOG) >= 2:
            break
    return s * x + sum(LOG)


def by_next(x):
    LOG.clear()
    first = next(logged(x, 5))
    return first * x + sum(LOG) ** 2


def by_short_zip(x):
    LOG.clear()
    s = 0.0
    for v, w in zip(logged(x, 5), [1.0, 2.0]):
        s = s + v * w
    return s * x + sum(LOG)


def by_islice(x):
    LOG.clear()
    return sum(itertools.islice(logged(x, 5), 2)) * x + sum(LOG)


def checked(x, n):
    """Logs a float per item, yields whether the item is one of the first two."""
    for k in range(n):
        LOG.append(x * (k + 1.0))
        yield k < 2


def by_all(x):
    LOG.clear()
    all(checked(x, 5))  # all stops at the third item, the first false one
    return sum(LOG) * x


def by_any(x):
    LOG.clear()
    any(logged(x, 5))  # the first item is true: any stops there
    return sum(LOG) * x


def by_in(x):
    LOG.clear()
    found = 2.0 * x in logged(x, 5)  # the second item
    return sum(LOG) * x if found else x


def by_enumerate_break(x):
    LOG.clear()
    s = 0.0
    for i, v in enumerate(logged(x, 5)):
        s = s + v
        if i == 2:
            break
    return s + sum(LOG) * x


CONSUMERS = [by_break, by_next, by_short_zip, by_islice, by_all, by_any, by_in, by_enumerate_break]


@pytest.mark.parametrize("f", CONSUMERS, ids=lambda f: f.__name__)
def test_consumer_stopping_early_sees_only_the_effects_python_makes(f):
    check_all_modes(f, 1.3)


def test_write_to_an_outer_array():
    def f(x):
        out = np.zeros(5)

        def filling(n):
            for k in range(n):
                out[k] = x * (k + 1.0)
                yield k

        for k in filling(5):
            if k == 1:
                break
        return np.sum(out * out) * x
    check_all_modes(f, 0.7)


class Holder:
    def __init__(self):
        self.total = 0.0


def test_write_to_an_attribute_and_a_nonlocal():
    def f(x):
        holder = Holder()
        count = 0.0

        def stepping(n):
            nonlocal count
            for k in range(n):
                holder.total = holder.total + x * k
                count = count + x
                yield k
        for k in stepping(6):
            if k == 2:
                break
        return holder.total * count
    check_all_modes(f, 0.9)


def adding_to_global(x, n):
    global TOTAL
    for k in range(n):
        TOTAL = TOTAL + x * x
        yield k


def test_write_to_a_global():
    def f(x):
        global TOTAL
        TOTAL = 0.0
        for k in adding_to_global(x, 5):
            if k == 1:
                break
        return TOTAL * x
    check_all_modes(f, 1.1)


def test_random_draws_left_for_the_consumer():
    def f(x):
        rng = np.random.default_rng(7)

        def noisy(n):
            for k in range(n):
                yield x * rng.normal()

        first = 0.0
        for v in noisy(5):
            first = v
            break
        return first * x + rng.normal() * x  # the next draw: the generator's second in eager code
    check_all_modes(f, 0.8)


def squares(x, n):
    """Pure: items from its arguments only."""
    for k in range(n):
        yield np.sin(x * k) + abs(x) ** 2 + float(k)


def pure_break(x):
    s = 0.0
    for v in squares(x, 6):
        s = s + v
        if v > 5.0:
            break
    return s


def _rewritten(fn):
    node, filename = function_node(fn)
    return ast.unparse(desugar(node, filename))


def test_pure_generator_in_a_loop_with_break_stays_eager():
    # the caller, whose loop changes nothing between items, holds an eager copy of the generator
    # (frontend/generator_eagerness.py); the generator itself, lowered alone, runs lazily
    node, filename = function_node(pure_break)
    rewritten = ast.unparse(desugar(node, filename, called=called_generator_definitions(pure_break, node)))
    assert "def _yb_eager_squares(" in rewritten and "_yb_eager_squares(((s,), ()), squares, x, 6)" in rewritten
    assert "Generator(" in _rewritten(logged)  # its twin with an effect runs lazily
    check_all_modes(pure_break, 1.2)


@pytest.mark.parametrize("body, effect", [
    ("for k in range(n):\n        yield np.exp(x * k) + math.sin(k) + xs.sum()", False),
    ("for k, v in enumerate(xs):\n        yield np.linalg.norm(v - x) * len(xs)", False),
    ("for k in range(n):\n        print(k)\n        yield x", True),
    ("for k in range(n):\n        yield np.random.normal() * x", True),
    ("for k in range(n):\n        yield np.add(x, k, out=xs)", True),
    ("for k in range(n):\n        xs[k] = x\n        yield x", True),
    ("for k in range(n):\n        yield helper(x)", True),
    ("yield from other(x)", True),
    ("for k in range(n):\n        if k > 3:\n            raise ValueError(k)\n        yield x", True),
])
def test_which_bodies_count_as_effects(body, effect):
    from yuebing.frontend.generator_effects import may_have_effects
    function = ast.parse(f"def g(x, xs, n):\n    {body}\n").body[0]
    assert may_have_effects(function) is effect


def test_effects_drained_at_once_by_sum_stay_eager():
    def f(x):
        seen = []

        def recorded(n):
            for k in range(n):
                seen.append(x * k)
                yield x * x * k
        return sum(recorded(4)) + sum(seen) * x
    assert "_yb_yielded" in _rewritten(f) and "Generator(" not in _rewritten(f)
    check_all_modes(f, 0.6)


def test_loop_body_reading_effects_between_items():
    def f(x):
        seen = []

        def recorded(n):
            for k in range(n):
                seen.append(x * (k + 1.0))
                yield k
        s = 0.0
        for k in recorded(4):  # drained, but its body reads what each item wrote so far
            s = s + sum(seen) * x
        return s
    assert "Generator(" in _rewritten(f)
    check_all_modes(f, 0.6)
