"""Ordering objects of user classes whose comparison dunders change data (issue 13): ``sorted``,
``list.sort``, ``min``, ``max``, ``heapq``, ``bisect`` of such objects, keys returning them (or
tuples holding them), ``functools.cmp_to_key`` of a ``cmp`` that writes, and
``itertools.groupby``. Python runs the dunders once per comparison its algorithm makes; they used
to run as plain Python and what they wrote lost its derivatives (every mode disagreed with
finite differences, silently). Each idiom runs in every mode (``tests/modes.py``) and its batched Hessian
equals the per-column one; pure dunders (``dataclass(order=True)``, a ``__lt__`` that writes
nothing) stay on the plain path of the rules."""
from __future__ import annotations

import bisect
import dataclasses
import functools
import heapq
import itertools
import operator

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import _comparisons, ordering
from yuebing.rules.core import RuleArgumentError
from tests.modes import central, check_every_mode

POINT = np.array([0.3, 1.2, 2.0])


class Tally:
    def __init__(self):
        self.total = 0.0


class Weighed:
    """Compared by value; each ``<`` (and ``==``) adds to a tally shared by all."""

    def __init__(self, value, tally):
        self.value = value
        self.tally = tally

    def __lt__(self, other):
        self.tally.total = self.tally.total + self.value * other.value
        return self.value < other.value

    def __eq__(self, other):
        self.tally.total = self.tally.total + 0.5 * self.value * other.value ** 2
        return self.value == other.value

    __hash__ = object.__hash__


class Logged:
    """Each ``<`` appends to a list (its ``>`` is the reflected ``<`` of the other)."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __lt__(self, other):
        self.log.append(self.value - other.value ** 2)
        return self.value < other.value


def _weighed(x, tally):
    return [Weighed(x[2], tally), Weighed(x[0], tally), Weighed(x[1], tally)]


def _sorted_objects(x):
    tally = Tally()
    ys = sorted(_weighed(x, tally))
    return ys[0].value * tally.total + ys[2].value


def _sorted_reverse_logged(x):
    log = []
    ys = sorted([Logged(x[1], log), Logged(x[0], log), Logged(x[2], log)], reverse=True)
    return ys[0].value * sum(log)


def _list_sort_objects(x):
    tally = Tally()
    items = _weighed(x, tally)
    items.sort()
    return items[0].value + tally.total * items[1].value


def _list_sort_reverse(x):
    log = []
    items = [Logged(x[0], log), Logged(x[2], log), Logged(x[1], log)]
    items.sort(reverse=True)
    return items[0].value + sum(log)


def _min_objects(x):
    tally = Tally()
    return min(_weighed(x, tally)).value * tally.total


def _max_reflected(x):
    log = []
    return max(Logged(x[0], log), Logged(x[1], log), Logged(x[2] * 0.3, log)).value + sum(log) ** 2


def _key_returning_objects(x):
    tally = Tally()
    pairs = [(x[0], Weighed(x[1], tally)), (x[1], Weighed(x[0], tally)), (x[2], Weighed(x[2] * 0.5, tally))]
    ys = sorted(pairs, key=lambda p: p[1])
    return ys[0][0] * tally.total


def _key_returning_tuples(x):
    tally = Tally()
    items = _weighed(x, tally)
    order = sorted(range(3), key=lambda i: (1, items[i]))
    return x[order[0]] + tally.total * x[order[2]]


def _key_attrgetter(x):
    tally = Tally()
    boxes = [Box(w) for w in _weighed(x, tally)]
    return max(boxes, key=_ITEM).item.value * tally.total


class Box:
    def __init__(self, item):
        self.item = item


_ITEM = operator.attrgetter("item")


def _long_sort(x):
    """Seventy objects: CPython's sort merges runs, galloping (the comparisons it makes there)."""
    log = []
    values = [x[k % 3] * np.sin(1.0 + 7.3 * k) for k in range(70)]
    ys = sorted(Logged(v, log) for v in values)
    return ys[0].value * ys[-1].value + sum(log) * 0.01


def _cmp_inside(x):
    total = 0.0

    def cmp(a, b):
        nonlocal total
        total += a * b
        return int(a > b) - int(a < b)

    ys = sorted([x[0], x[2], x[1]], key=functools.cmp_to_key(cmp))
    return ys[0] * total


def _cmp_writing(a, b):
    a.tally.total = a.tally.total + a.value * b.value
    return int(a.value > b.value) - int(a.value < b.value)


_CMP_KEY = functools.cmp_to_key(_cmp_writing)  # made outside the differentiated function


def _cmp_outside(x):
    tally = Tally()
    items = _weighed(x, tally)
    return sorted(items, key=_CMP_KEY)[1].value + tally.total


def _cmp_min_outside(x):
    tally = Tally()
    return min(_weighed(x, tally), key=_CMP_KEY).value * tally.total


def _nsmallest_one(x):
    tally = Tally()
    return heapq.nsmallest(1, _weighed(x, tally))[0].value + tally.total


def _nlargest_all(x):
    log = []
    ys = heapq.nlargest(5, [Logged(x[0], log), Logged(x[1], log)])
    return ys[0].value * sum(log)


def _insort_objects(x):
    tally = Tally()
    items = sorted(_weighed(x, tally))
    bisect.insort(items, Weighed(x[0] * 1.5, tally))
    return items[1].value * tally.total


def _nsmallest_heap(x):
    """heapq.nsmallest's heap path (2 of 4): its comparisons of (item, order) pairs."""
    tally = Tally()
    return heapq.nsmallest(2, [*_weighed(x, tally), Weighed(1.0, tally)])[1].value * tally.total


def _nlargest_heap_keyed(x):
    tally = Tally()
    items = [*_weighed(x, tally), Weighed(1.0, tally)]
    return sum(p[0] for p in heapq.nlargest(2, [(w.value, w) for w in items], key=lambda p: p[1])) * tally.total


def _heap_of_objects(x):
    tally = Tally()
    heap = _weighed(x, tally)
    heapq.heapify(heap)
    heapq.heappush(heap, Weighed(x[1] * 0.5, tally))
    return heapq.heappop(heap).value * tally.total + heapq.heappushpop(heap, Weighed(x[0], tally)).value


def _dijkstra(x):
    """heapq of (distance, node) pairs: float priorities through heappush/heappop."""
    edges = {0: [(1, x[0]), (2, x[1] * 3.0)], 1: [(2, x[1])], 2: []}
    dist = {0: 0.0}
    queue = [(0.0, 0)]
    while queue:
        d, u = heapq.heappop(queue)
        if d > dist.get(u, np.inf):
            continue
        for v, w in edges[u]:
            nd = d + w * x[2]
            if nd < dist.get(v, np.inf):
                dist[v] = nd
                heapq.heappush(queue, (nd, v))
    return dist[2] * dist[1]


def _dunder_writes_the_argument(x):
    """The dunder writes into the argument array (restored after each call)."""
    class Slot:
        def __init__(self, i):
            self.i = i

        def __lt__(self, other):
            x[self.i] = x[self.i] + 0.1 * x[other.i] ** 2
            return x[self.i] < x[other.i]

    order = sorted([Slot(2), Slot(0), Slot(1)])
    return x[order[0].i] * np.sum(x ** 2)


def _groupby_pure_key(x):
    values = [x[0], x[0] + 0.1, x[1], x[2], x[2] * 1.01]
    return sum(k * len(group) + sum(group) for k, group in
               ((k, list(g)) for k, g in itertools.groupby(values, key=lambda v: round(v))))


def _groupby_key_with_derivative(x):
    pairs = [(1, x[0]), (1, x[1]), (2, x[2]), (1, x[0] * x[1])]
    return sum(first * sum(p[1] for p in g) for first, g in itertools.groupby(pairs, key=lambda p: p[0] * x[2]))


def _groupby_writing_key(x):
    log = []

    def key(v):
        log.append(v * x[1])
        return v > 1.0

    groups = [(k, list(g)) for k, g in itertools.groupby(list(x) + [x[0]], key=key)]
    return sum(len(g) * g[0] for _, g in groups) * sum(log)


def _groupby_no_key(x):
    values = [x[0], x[0], x[1]]
    return sum(k * len(list(g)) for k, g in itertools.groupby(values))


IDIOMS = {
    "sorted_objects": _sorted_objects, "sorted_reverse_logged": _sorted_reverse_logged,
    "list_sort_objects": _list_sort_objects, "list_sort_reverse": _list_sort_reverse,
    "min_objects": _min_objects, "max_reflected": _max_reflected,
    "key_returning_objects": _key_returning_objects, "key_returning_tuples": _key_returning_tuples,
    "key_attrgetter": _key_attrgetter, "long_sort": _long_sort,
    "cmp_inside": _cmp_inside, "cmp_outside": _cmp_outside, "cmp_min_outside": _cmp_min_outside,
    "nsmallest_one": _nsmallest_one, "nlargest_all": _nlargest_all, "insort_objects": _insort_objects,
    "heap_of_objects": _heap_of_objects, "dijkstra": _dijkstra, "nsmallest_heap": _nsmallest_heap,
    "nlargest_heap_keyed": _nlargest_heap_keyed,
    "dunder_writes_the_argument": _dunder_writes_the_argument,
    "groupby_pure_key": _groupby_pure_key, "groupby_key_with_derivative": _groupby_key_with_derivative,
    "groupby_writing_key": _groupby_writing_key, "groupby_no_key": _groupby_no_key,
}


def _slow_long_sort(names):
    """The idioms, the 70-object sort marked slow (hundreds of comparisons, each differentiated)."""
    return [pytest.param(n, marks=pytest.mark.slow) if n == "long_sort" else n for n in names]


@pytest.mark.parametrize("name", _slow_long_sort(sorted(IDIOMS)))
def test_every_mode(name):
    check_every_mode(IDIOMS[name], POINT)


@pytest.mark.parametrize("name", _slow_long_sort(sorted(IDIOMS)))
def test_batched_hessian_is_per_column_hessian(name):
    f = IDIOMS[name]
    per_column = yb.hessian(f, chunk_size=1)(POINT.copy())
    batched = yb.hessian(f, chunk_size=3)(POINT.copy())
    np.testing.assert_allclose(batched, per_column, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["dunder_writes_the_argument", "sorted_objects"])
def test_arguments_are_restored(name):
    f = IDIOMS[name]
    for run in (lambda x: yb.grad(f)(x), lambda x: yb.jvp(f, (x,), (np.ones(3),)),
                lambda x: yb.hvp(f, (x,), (np.ones(3),)), lambda x: yb.hessian(f)(x)):
        x = POINT.copy()
        run(x)
        np.testing.assert_array_equal(x, POINT)


def test_the_dunders_run_as_often_as_in_a_plain_call():
    """Side effects happen once per call, as many comparisons as CPython's sort makes."""
    plain_log = []
    sorted(Logged(v, plain_log) for v in np.sin(np.arange(40.0)))

    def f(x):
        log = []
        sorted(Logged(v * x, log) for v in np.sin(np.arange(40.0)))
        return len(log) * 1.0

    assert yb.value_and_grad(f)(1.0)[0] == len(plain_log)
    assert yb.jvp(f, (1.0,), (1.0,))[0] == len(plain_log)
    assert yb.hvp(f, (1.0,), (1.0,))[0] == len(plain_log)


@pytest.mark.parametrize("n", [2, 7, 40, 63, 64, 150])
@pytest.mark.parametrize("reverse", [False, True])
def test_the_plan_asks_the_comparisons_cpythons_sort_makes(n, reverse):
    """Written out below 64 values, CPython's own sort in a thread beyond: the same pairs, in
    the same order, and the same order of the values (ties included)."""
    values = list(np.random.default_rng(n).integers(0, n // 3 + 1, n))
    asked = []
    expected = sorted(range(n), key=lambda i: _comparisons._Recorded(i, values, asked), reverse=reverse)
    plan = _comparisons.comparison_plan(n, reverse)
    pairs, pair = [], _comparisons.next_comparison(plan, None)
    while pair is not None:
        pairs.append(pair)
        pair = _comparisons.next_comparison(plan, values[pair[0]] < values[pair[1]])
    assert pairs == asked
    assert _comparisons.planned_order(plan) == expected


# ---------------------------------------------------------------------- the plain path


@dataclasses.dataclass(order=True)
class Ordered:
    value: float
    label: str = "a"


class PureLess:
    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        return self.value < other.value


@functools.total_ordering
class TotallyOrdered:
    def __init__(self, value):
        self.value = value

    def __lt__(self, other):
        return self.value < other.value

    def __eq__(self, other):
        return self.value == other.value

    __hash__ = object.__hash__


def _pure_comparisons(x):
    a = sorted([Ordered(x[2]), Ordered(x[0]), Ordered(x[1])])
    b = max([PureLess(x[1]), PureLess(x[2] * 0.1)])
    c = min(TotallyOrdered(x[0] * 3.0), TotallyOrdered(x[1]))
    d = sorted([x[1], x[0]], key=functools.cmp_to_key(lambda u, v: int(u > v) - int(u < v)))
    return a[0].value * b.value + c.value * d[0]


def test_pure_dunders_take_the_plain_rules(monkeypatch):
    """Dunders that write nothing never reach the differentiated definitions (the fast path)."""
    def refuse(*args, **kwargs):
        raise AssertionError("pure comparisons went through the differentiated definitions")

    monkeypatch.setattr(ordering, "defined_rrule", refuse)
    monkeypatch.setattr(ordering, "_through_key_frule", refuse)
    check_every_mode(_pure_comparisons, POINT)


PLAIN_VALUES = {
    "floats": [1.5, 2.5], "arrays": [np.ones(2), np.zeros(2)], "tuples of floats": [(1.0, "a"), (2.0, "b")],
    "dataclass(order=True)": [Ordered(1.0), Ordered(2.0)], "pure __lt__": [PureLess(1.0)],
    "total_ordering": [TotallyOrdered(1.0)], "cmp_to_key of a pure cmp": [_comparisons.CmpKey(1.0, lambda a, b: 0)],
}
THROUGH_VALUES = {
    "__lt__ writing": [Weighed(1.0, Tally())], "in a tuple": [(1, Logged(1.0, []))],
    "an attribute a pure dunder compares": [Ordered(Logged(1.0, []))],
    "cmp_to_key of a writing cmp": [_comparisons.CmpKey(1.0, _cmp_writing)],
}


@pytest.mark.parametrize("name", sorted(PLAIN_VALUES))
def test_values_compared_plainly(name):
    assert not _comparisons.compares_through(PLAIN_VALUES[name])


@pytest.mark.parametrize("name", sorted(THROUGH_VALUES))
def test_values_compared_through(name):
    assert _comparisons.compares_through(THROUGH_VALUES[name])


# ---------------------------------------------------------------------- groupby of objects whose dunders write


def _groupby_of_writing_objects(x):
    tally = Tally()
    return sum(len(list(g)) for _, g in itertools.groupby(_weighed(x, tally))) * tally.total


def test_groupby_follows_dunders_that_write():  # (refused by name when groupby was eager)
    check_every_mode(_groupby_of_writing_objects, POINT)


# ---------------------------------------------------------------------- third order

THIRD_ORDER_REFUSED = {"sorted_objects": "of sorted comparing objects", "min_objects": "of max or min comparing",
                       "max_reflected": "of max or min comparing", "long_sort": "of sorted comparing objects"}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER_REFUSED))
def test_third_order_refuses_writing_dunders_by_name(name):
    g = IDIOMS[name]
    with pytest.raises(RuleArgumentError, match=THIRD_ORDER_REFUSED[name]) as raised:
        yb.hessian(lambda x: np.sum(yb.grad(g)(x) ** 2))(POINT.copy())
    assert any("test_ordering_objects.py" in note for note in raised.value.__notes__)  # the user's line


def test_third_order_of_groupby_with_a_pure_key():
    g = IDIOMS["groupby_pure_key"]
    F = lambda x: np.sum(yb.grad(g)(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(yb.hessian(F)(POINT.copy()), central(lambda u: yb.grad(F)(u), POINT, 1e-5),
                               rtol=1e-5, atol=1e-5)
