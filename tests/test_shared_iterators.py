"""``iter(x)`` is one iterator however many consumers advance it, and so is a user class's
iterator: a ``for`` loop and a ``next`` in its body, ``zip(it, it)`` and ``zip(*[it] * 2)``, a
second loop resuming where a ``break`` left the first, ``islice`` taking a head and a loop taking
the rest, a list appended after the iterator was made or while a loop walks it. Each was
silently wrong (values included) when ``iter(x)`` was ``list(x)`` and a loop listed a user
iterator before its first step. Checked in every mode against differences."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from .modes import check_every_mode


def _pairs_by_next(it):
    total = 0.0
    for a in it:
        total += a * next(it)
    return total


def _pairs_by_zip(it):
    return sum(a * b for a, b in zip(it, it))


def _resumed_after_break(it):
    s = 0.0
    for a in it:
        s += a
        if a > 0.5:
            break
    for b in it:
        s += 3 * b * b
    return s


def loop_and_next(x):
    return _pairs_by_next(iter(x))


def zip_of_one_iterator(x):
    return _pairs_by_zip(iter(x))


def zip_star_pairs(x):
    return sum(a / b for a, b in zip(*[iter(x)] * 2))


def loop_resumed_after_break(x):
    return _resumed_after_break(iter(x))


def islice_head_then_rest(x):
    it = iter(x)
    head = list(itertools.islice(it, 2))
    return head[0] * head[1] + sum(v * v for v in it)


def appended_after_iter(x):
    vals = list(x)
    it = iter(vals)
    vals.append(x[0] * 5)
    return sum(it)


def next_with_default_then_max(x):
    it = iter(x)
    return next(it) * 2 + next(it, 0.0) + max(it)


def dict_keys_by_next(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d)
    k = next(it)
    return d[k] * 3 + d[next(it)]


def map_of_one_iterator(x):
    it = iter(list(x))
    return sum(map(lambda a, b: a * b * b, it, it))


def zip_beside_shorter_list(x):
    it = iter(x)
    pairs = list(zip([1.0, 2.0], it))
    return sum(w * v for w, v in pairs) + 10 * next(it)


def iter_until_sentinel(x):
    values = [x[0], x[1], 0.0, x[2]]
    position = [0]

    def read():
        position[0] += 1
        return values[position[0] - 1]
    return sum(v * v for v in iter(read, 0.0))


@pytest.mark.parametrize("f", [loop_and_next, zip_of_one_iterator, zip_star_pairs, loop_resumed_after_break,
                               islice_head_then_rest, appended_after_iter, next_with_default_then_max,
                               dict_keys_by_next, map_of_one_iterator, zip_beside_shorter_list,
                               iter_until_sentinel], ids=lambda f: f.__name__)
def test_one_iterator_advanced_by_every_consumer(f):
    check_every_mode(f, np.array([0.3, 0.8, 1.3, 0.55]))


class _Walker:
    """A user iterator: ``__iter__`` returns itself, ``__next__`` steps through ``xs``."""

    def __init__(self, xs):
        self.xs = xs
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.xs):
            raise StopIteration
        self.i += 1
        return self.xs[self.i - 1]


class _GrowingBag:
    """A user container whose ``__iter__`` is a generator over a list the loop appends to."""

    def __init__(self, xs):
        self.xs = list(xs)

    def __iter__(self):
        for v in self.xs:
            yield v


def user_iterator_loop_and_next(x):
    return _pairs_by_next(_Walker(x))


def user_iterator_zipped_with_itself(x):
    return _pairs_by_zip(_Walker(x))


def user_iterator_resumed_after_break(x):
    return _resumed_after_break(_Walker(x))


def user_container_growing_in_its_loop(x):
    bag = _GrowingBag(x)
    s = 0.0
    for v in bag:
        if len(bag.xs) < 6:
            bag.xs.append(v * 0.5)
        s += v * v
    return s


@pytest.mark.parametrize("f", [user_iterator_loop_and_next, user_iterator_zipped_with_itself,
                               user_iterator_resumed_after_break, user_container_growing_in_its_loop],
                         ids=lambda f: f.__name__)
def test_user_iterators_are_walked_one_item_at_a_time(f):
    check_every_mode(f, np.array([0.3, 0.8, 1.3, 0.55]))
