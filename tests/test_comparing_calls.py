"""Builtins that call the dunders of user objects as plain Python (issue 13): ``x in items``,
``list.index``/``count``/``remove``, ``tuple.index``/``count``, ``operator.countOf``, ``==`` and
``<`` of tuples and lists holding objects, ``round``/``math.floor``/``len``/``str``/``bool`` of an
object. A dunder that writes (accumulates into an attribute) used to lose its derivatives
(``rules/comparing_calls.py``); each idiom runs in every mode against finite differences, and
dict lookups with keys whose ``__eq__`` writes are refused by name."""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import comparing_calls
from yuebing.rules.core import RuleArgumentError
from tests.modes import check_every_mode

POINT = np.array([0.3, 1.2, 2.0])


class Tally:
    def __init__(self):
        self.total = 0.0


class Noted:
    """Each dunder adds a different function of its operands to a shared tally."""

    def __init__(self, value, tally):
        self.value = value
        self.tally = tally

    def __eq__(self, other):
        self.tally.total = self.tally.total + self.value * other.value ** 2
        return self.value == other.value

    def __lt__(self, other):
        self.tally.total = self.tally.total + 2.0 * self.value * other.value
        return self.value < other.value

    def __bool__(self):
        self.tally.total = self.tally.total + 3.0 * self.value
        return bool(self.value > 0)

    def __floor__(self):
        self.tally.total = self.tally.total + self.value ** 2
        return math.floor(self.value)

    def __round__(self, digits=None):
        self.tally.total = self.tally.total + 4.0 * self.value
        return round(self.value, digits)

    def __len__(self):
        self.tally.total = self.tally.total + self.value
        return 2

    def __str__(self):
        self.tally.total = self.tally.total + 5.0 * self.value
        return "noted"

    __hash__ = object.__hash__


def _three(x, tally):
    return [Noted(x[0], tally), Noted(x[1], tally), Noted(x[2], tally)]


def _in(x):
    tally = Tally()
    a, b, c = _three(x, tally)
    return (c in [a, b]) + (Noted(x[1] * 1.0, tally) not in (a, b, c)) + tally.total


def _list_index(x):
    tally = Tally()
    items = _three(x, tally)
    return items.index(items[2]) * x[0] + tally.total


def _list_count(x):
    tally = Tally()
    items = _three(x, tally)
    return items.count(items[1]) + tally.total * x[2]


def _list_remove(x):
    tally = Tally()
    items = _three(x, tally)
    items.remove(items[1])
    return items[1].value * tally.total


def _tuple_index_count(x):
    tally = Tally()
    items = tuple(_three(x, tally))
    return items.index(items[1]) + items.count(items[0]) + tally.total


def _count_of(x):
    tally = Tally()
    items = _three(x, tally)
    return operator.countOf(items, items[2]) + operator.indexOf(items, items[1]) + tally.total


def _tuples_compared(x):
    tally = Tally()
    a, b, c = _three(x, tally)
    return ((1, a) == (1, b)) + ((1, a) < (1, c)) + ((2, c) > (2, b)) + ([a] != [c]) + tally.total


def _conversions(x):
    tally = Tally()
    a, b, c = _three(x, tally)
    return math.floor(a) + round(b, 2) * 0.0 + len(c) * x[0] + len(str(a)) + bool(b) + tally.total


IDIOMS = {"in": _in, "list.index": _list_index, "list.count": _list_count, "list.remove": _list_remove,
          "tuple.index and count": _tuple_index_count, "operator.countOf and indexOf": _count_of,
          "tuples compared": _tuples_compared, "round floor len str bool": _conversions}


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_every_mode(name):
    check_every_mode(IDIOMS[name], POINT)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_batched_hessian_is_per_column_hessian(name):
    f = IDIOMS[name]
    np.testing.assert_allclose(yb.hessian(f, chunk_size=3)(POINT.copy()), yb.hessian(f, chunk_size=1)(POINT.copy()),
                               rtol=1e-10, atol=1e-12)


def test_plain_values_take_the_plain_rules():
    """Numbers, and objects whose dunders write nothing, stay plain: no definition runs."""
    assert comparing_calls.comparing_call(operator.contains, [[1.0, 2.0], 1.0]) is None
    assert comparing_calls.comparing_call(operator.eq, [(1.0, "a"), (1.0, "a")]) is None
    assert comparing_calls.comparing_call(round, [1.5]) is None
    assert comparing_calls.comparing_call(operator.contains, [[Noted(1.0, Tally())], 1.0]) is comparing_calls.contains


def _dict_keyed_by_writing_objects(x):
    tally = Tally()
    table = {Noted(x[0], tally): 1.0}
    return table.get(Noted(x[1], tally), 0.0) * tally.total


def test_dict_keys_whose_eq_writes_are_refused_by_name():
    for run in (lambda: yb.grad(_dict_keyed_by_writing_objects)(POINT.copy()),
                lambda: yb.jvp(_dict_keyed_by_writing_objects, (POINT.copy(),), (np.ones(3),)),
                lambda: yb.hvp(_dict_keyed_by_writing_objects, (POINT.copy(),), (np.ones(3),))):
        with pytest.raises(RuleArgumentError, match="a dict looked up .* with a key of class Noted, whose __eq__"):
            run()
