"""Generators and iterators under differentiation (issue 13 item 3): nothing hangs. An iterator
evaluated eagerly that does not end stops with an error naming it and the user's line; a user
iterator given to ``sum``/``list``/``max`` is walked by its own ``__next__``, differentiated."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.frontend import desugar
from yuebing.rules import iteration

X, H = 0.7, 1e-6


def _difference(f, x=X):
    return (f(x + H) - f(x - H)) / (2 * H)


def _all_modes(f, x=X):
    """grad, jvp and hvp's gradient of ``f`` at ``x`` against central differences."""
    expected = _difference(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.jvp(f, (x,), (1.0,))[1], expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.hvp(f, (x,), (1.0,))[1][0], expected, rtol=1e-5, atol=1e-7)


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(desugar, "EAGER_ITEMS_LIMIT", 50)
    monkeypatch.setattr(iteration, "EAGER_ITEMS_LIMIT", 50)


class _Counting:
    """A user iterator that never ends."""

    def __init__(self, x):
        self.x, self.k = x, 0

    def __iter__(self):
        return self

    def __next__(self):
        self.k += 1
        return self.x * self.k


class _Three(_Counting):
    def __next__(self):
        self.k += 1
        if self.k > 3:
            raise StopIteration
        return self.x * self.k


def test_an_endless_user_iterator_summed_stops_with_an_error(small_limit):
    def f(x):
        return sum(_Counting(x))
    with pytest.raises(RuntimeError, match=r"(?s)stopped iterating over a _Counting after 50 items.*"
                                           r"test_lazy_generators.py.*What to do"):
        yb.grad(f)(X)


@pytest.mark.parametrize("consume", [sum, lambda it: sum(list(it)), max, lambda it: sum(sorted(it))])
def test_a_user_iterator_given_to_a_builtin_is_walked_by_its_next(consume):
    _all_modes(lambda x: consume(_Three(x)) ** 2)


def test_an_endless_generator_drained_stops_with_an_error_naming_it(small_limit):
    def f(x):
        def endless():
            k = 0
            while True:
                yield x * k
                k += 1
        return sum(endless())
    with pytest.raises(RuntimeError, match=r"(?s)endless\(\) after 50 items.*test_lazy_generators.py.*"
                                           r"yield x \* k.*What to do"):
        yb.grad(f)(X)
