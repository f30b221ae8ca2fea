"""``for v in reversed(obj)`` written in the for statement walks ``obj`` backwards by index. An
object whose ``__reversed__`` is Python code of its own may yield something else: such a loop
gave the backwards walk's value and derivatives (16.3 where CPython gives 3.9), silently. It is
refused by name in every mode, and the advice (make the iterator first) is exact."""
import collections

import numpy as np
import pytest

import yuebing as yb

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


def loops_over_reversed_in_the_for_statement(x):
    r = EveryOtherBackwards([x[0], x[1] * 2.0, x[2] * 3.0])
    s = 0.0
    for v in reversed(r):
        s = s * 2.0 + v
    return s


def makes_the_iterator_first(x):  # the error's advice, as printed
    r = EveryOtherBackwards([x[0], x[1] * 2.0, x[2] * 3.0])
    s = 0.0
    it = reversed(r)
    for v in it:
        s = s * 2.0 + v
    return s


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


@pytest.mark.parametrize("run", [lambda f: yb.grad(f)(X.copy()), lambda f: yb.jvp(f, (X.copy(),), (np.ones(3),)),
                                 lambda f: yb.hessian(f)(X.copy())], ids=["grad", "jvp", "hessian"])
def test_own_reversed_in_the_for_statement_is_refused_by_name(run):
    with pytest.raises(TypeError, match="reversed.. of a EveryOtherBackwards.*make the iterator first"):
        run(loops_over_reversed_in_the_for_statement)


@pytest.mark.parametrize("f", [makes_the_iterator_first, loops_over_a_reversed_deque, loops_over_a_reversed_list],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)
