"""``for v in reversed(obj)`` written in the for statement walks ``obj`` backwards by index, unless
``obj``'s ``__reversed__`` is Python code of its own, which may yield something else: then the
loop walks what ``reversed(obj)`` returns, the ``__reversed__`` differentiated (the backwards walk
gave 16.3 where CPython gives 3.9, silently, before such loops were refused; they now run). Every
mode against finite differences, and arguments restored and their final state differentiated."""
import collections

import numpy as np
import pytest

from yuebing.testing import check_rule
from yuebing.testing.second_order import check_second_order

from .modes import check_every_mode

X = np.array([0.3, 0.7, 1.1])


class EveryOtherBackwards:
    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return iter(self.xs)

    def __reversed__(self):
        return iter(self.xs[::-2])

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i]


class ScaledBackwards:
    """A ``__reversed__`` that is a generator computing new values, and reads the object live."""

    def __init__(self, xs, scale):
        self.xs = xs
        self.scale = scale

    def __reversed__(self):
        for i in range(len(self.xs) - 1, -1, -1):
            yield self.scale * self.xs[i]


def loops_over_reversed_in_the_for_statement(x):
    r = EveryOtherBackwards([x[0], x[1] * 2.0, x[2] * 3.0])
    s = 0.0
    for v in reversed(r):
        s = s * 2.0 + v
    return s


def makes_the_iterator_first(x):
    r = EveryOtherBackwards([x[0], x[1] * 2.0, x[2] * 3.0])
    s = 0.0
    it = reversed(r)
    for v in it:
        s = s * 2.0 + v
    return s


def breaks_out_of_a_generator(x):
    r = ScaledBackwards([x[0], np.sin(x[1]), x[2] ** 2], x[0] + 1.0)
    s = 0.0
    for v in reversed(r):
        if s > 2.5:
            break
        s = s * 1.5 + v
    else:
        s = -s
    return s


def body_writes_what_the_generator_reads(x):
    r = ScaledBackwards([x[0], x[1], x[2]], 2.0)
    s = 0.0
    for v in reversed(r):
        r.xs[0] = r.xs[0] * v  # read by the generator when it reaches item 0
        s = s + v * x[1]
    return s


def comprehension_over_reversed(x):
    r = ScaledBackwards([x[0], x[1] * x[2]], x[2])
    return sum([v * v for v in reversed(r)]) + max(v for v in reversed(EveryOtherBackwards(list(x))))


def loops_over_a_reversed_deque(x):
    d = collections.deque([x[0], x[1] * x[2]])
    d.appendleft(x[2])
    s = 0.0
    for v in reversed(d):
        s = s * 2.0 + np.sin(v)
    return s


def loops_over_a_reversed_list(x):
    s = 0.0
    for v in reversed([x[0], x[1] ** 2, x[2]]):
        s = s * 2.0 + v
    return s


EVERY_MODE = [loops_over_reversed_in_the_for_statement, makes_the_iterator_first, breaks_out_of_a_generator,
              body_writes_what_the_generator_reads, comprehension_over_reversed, loops_over_a_reversed_deque,
              loops_over_a_reversed_list]


@pytest.mark.parametrize("f", EVERY_MODE, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


def test_what_cpython_gives():
    assert loops_over_reversed_in_the_for_statement(X) == makes_the_iterator_first(X)
    assert breaks_out_of_a_generator(X) != loops_over_a_reversed_list(X)


def scales_an_argument_backwards(obj, x):
    """``obj`` passed in: its list written in the body, so its state after the call is checked and
    it must be restored after the pullback."""
    s = 0.0
    for v in reversed(obj):
        obj.xs.append(v * x)
        s = s + v * np.cos(x)
        if len(obj.xs) > 5:
            break
    return s


def test_an_argument_written_in_the_loop_is_restored():
    make = lambda: ScaledBackwards([0.4, 1.3, -0.6], 0.8)  # noqa: E731
    check_rule(scales_an_argument_backwards, make(), 0.9)
    check_second_order(scales_an_argument_backwards, make(), 0.9)
