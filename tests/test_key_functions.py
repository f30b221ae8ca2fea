"""Keys and predicates that change data (issue 13): ``sorted``/``min``/``max``/``list.sort`` with
``key=`` and ``filter``'s predicate, when the key is Python code that appends, accumulates or
writes on its way. Only the order depends on the key's value, but what the key does has
derivatives: it used to run as plain Python and its work was silently dropped (``grad`` 1.0
where finite differences give 8.6). Each idiom runs in every mode (``tests/modes.py``: grad,
jvp, ``jacobian(mode="fwd")``, hvp, hessian) and its batched Hessian (``chunk_size=k``) equals
the per-column one; a pure key stays on the plain path of the rules."""
from __future__ import annotations

import bisect
import functools
import heapq
import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import _key_functions, ordering
from tests.modes import central, check_every_mode

POINT = np.array([0.3, 1.2, 2.0])


def _sorted_appends(x):
    log = []

    def key(v):
        log.append(v * x[0])
        return v

    ys = sorted([x[2], 1.0, x[1]], key=key)
    return sum(log) * x[1] + ys[0] * ys[2]


def _sorted_accumulates_reversed(x):
    acc = [0.0]

    def key(v):
        acc[0] += v ** 2 * x[1]
        return -v

    ys = sorted(x, key=key, reverse=True)
    return acc[0] * ys[0] + ys[1]


def _sorted_writes_array(x):
    buffer = np.zeros(3)

    def key(i):
        buffer[i] = x[i] * x[0]
        return -x[i]

    order = sorted(range(3), key=key)
    return np.sum(buffer ** 2) + x[order[0]]


def _min_nonlocal(x):
    total = 0.0

    def key(v):
        nonlocal total
        total += np.sin(v) * x[2]
        return v

    return min(list(x), key=key) * total


def _max_arguments_attribute(x):
    class Tally:
        def __init__(self):
            self.total = 0.0

        def key(self, v):
            self.total = self.total + v * v
            return v

    tally = Tally()
    best = max(x[0], x[1] * 0.5, x[2] * 0.25, key=tally.key)
    return best * tally.total


def _max_default_unused(x):
    seen = []
    return max([x[0], x[1]], key=lambda v: seen.append(v * v) or v, default=x[2]) + sum(seen)


def _filter_accumulates(x):
    acc = [0.0]

    def keep(v):
        acc[0] += v * x[0]
        return v > 1.0

    return sum(filter(keep, list(x))) * acc[0]


def _list_sort_appends(x):
    log = []
    values = [x[1], x[0] * 3.0, x[2]]

    def key(v):
        log.append(v * x[2])
        return v

    values.sort(key=key)
    return values[0] * sum(log) + values[2]


def _dict_sorted_items(x):
    weights = {"a": x[0], "b": x[1], "c": x[2] * 0.5}
    acc = [0.0]

    def key(item):
        acc[0] += item[1] ** 2
        return item[1]

    ordered = dict(sorted(weights.items(), key=key))
    return list(ordered.values())[0] * acc[0]


def _partial_key(x):
    acc = [0.0]

    def key(scale, v):
        acc[0] += scale * v * v
        return v

    return sorted(list(x), key=functools.partial(key, x[0]))[1] + acc[0]


def _heapq_nsmallest_appends(x):
    log = []

    def key(v):
        log.append(v * x[1])
        return v

    return sum(heapq.nsmallest(2, [x[2], x[0], x[1], 5.0], key=key)) * sum(log)


def _heapq_nlargest(x):
    return sum(heapq.nlargest(2, list(x), key=lambda v: -abs(v - 1.0))) * x[0]


def _insort_with_a_logging_key(x):
    log = []

    def key(v):
        log.append(v * x[0])
        return v

    values = [0.5, 1.0, 2.5]
    bisect.insort(values, x[1], key=key)
    bisect.insort_left(values, x[2] * 0.4)
    return sum(v * (i + 1) for i, v in enumerate(values)) * sum(log)


def _piecewise_linear(x):
    grid = [0.0, 1.0, 2.0, 3.0]
    values = [x[0], x[1] ** 2, x[2], x[0] * x[1]]
    i = bisect.bisect_right(grid, 1.5) - 1
    j = bisect.bisect_left(grid, 2.0, key=lambda g: g + 0.5)
    return values[i] + (values[i + 1] - values[i]) * 0.5 + values[j] ** 2


IDIOMS = {
    "sorted_appends": _sorted_appends,
    "sorted_accumulates_reversed": _sorted_accumulates_reversed,
    "sorted_writes_array": _sorted_writes_array,
    "min_nonlocal": _min_nonlocal,
    "max_arguments_attribute": _max_arguments_attribute,
    "max_default_unused": _max_default_unused,
    "filter_accumulates": _filter_accumulates,
    "list_sort_appends": _list_sort_appends,
    "dict_sorted_items": _dict_sorted_items,
    "partial_key": _partial_key,
    "heapq_nsmallest_appends": _heapq_nsmallest_appends,
    "heapq_nlargest": _heapq_nlargest,
    "insort_with_a_logging_key": _insort_with_a_logging_key,
    "piecewise_linear": _piecewise_linear,
}


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_every_mode(name):
    check_every_mode(IDIOMS[name], POINT)


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_batched_hessian_is_per_column_hessian(name):
    f = IDIOMS[name]
    per_column = yb.hessian(f, chunk_size=1)(POINT.copy())
    batched = yb.hessian(f, chunk_size=2)(POINT.copy())
    np.testing.assert_allclose(batched, per_column, rtol=1e-10, atol=1e-12)


_CALLS = []


def _count_call():
    _CALLS.append(1)  # (a list the reverse pass would restore, were the count differentiated)


yb.nondifferentiable(_count_call)


def test_the_key_runs_once_per_item_in_every_mode():
    """Side effects happen once per call, as in a plain call (DESIGN.md §2)."""
    def f(x):
        def key(v):
            _count_call()
            return v
        return sorted(list(x), key=key)[0] * x[1]

    for run in (lambda: yb.grad(f)(POINT.copy()), lambda: yb.jvp(f, (POINT.copy(),), (POINT.copy(),)),
                lambda: yb.hvp(f, (POINT.copy(),), (POINT.copy(),)),
                lambda: yb.jacobian(f, mode="fwd")(POINT.copy())):
        _CALLS.clear()
        run()
        assert len(_CALLS) == 3


def _raising_key(buffer):
    def key(v):
        buffer[0] = buffer[0] + v * v
        if v > 1.0:
            raise ValueError("stop")
        return v
    return key


RAISING = {
    "sorted": lambda items, key: sorted(items, key=key)[0],
    "min": lambda items, key: min(items, key=key),
    "max of arguments": lambda items, key: max(*items, key=key),
    "filter": lambda items, key: sum(filter(key, items)),
    "list.sort": lambda items, key: items.sort(key=key) or items[0],
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_a_key_that_changes_data_then_raises_keeps_its_work(name):
    """A key raising after it wrote: what it wrote before the handler keeps its derivatives."""
    call = RAISING[name]

    def f(x):
        buffer = np.array([0.5, 0.0])
        total = x
        try:
            total = call([x, 2 * x, 3 * x], _raising_key(buffer))
        except ValueError:
            total = total * buffer[0]
        return total + buffer[0] * x

    check_every_mode(f, 0.7)


_CENTRE = np.array([0.5, -0.5])

PURE_KEYS = {
    "abs": abs, "len": len, "str.lower": str.lower, "np.sum": np.sum, "lambda p: p[0]": lambda p: p[0],
    "lambda p: -p[1]": lambda p: -p[1], "lambda v: abs(v)": lambda v: abs(v),
    "lambda p: np.linalg.norm(p - c)": lambda p: np.linalg.norm(p - _CENTRE),
    "lambda p: math.hypot(p[0], p[1])": lambda p: math.hypot(p[0], p[1]),
}


def _through_helper(v):
    return v


MAY_CHANGE_DATA = {
    "def appending": _sorted_appends, "partial of a def": functools.partial(_partial_key, 1.0),
    "lambda appending": lambda v: v.append(1), "a method of the item": lambda s: s.lower(),
    "np.random.shuffle": lambda v: np.random.shuffle(v), "a keyword (out=)": lambda v: np.abs(v, out=v),
    "a Python helper": lambda v: _through_helper(v), "a generator inside": lambda v: sum(x for x in v),
}


@pytest.mark.parametrize("name", sorted(PURE_KEYS))
def test_builtin_and_pure_keys_stay_plain(name):
    assert not _key_functions.calls_through(PURE_KEYS[name])


@pytest.mark.parametrize("name", sorted(MAY_CHANGE_DATA))
def test_keys_that_may_change_data_are_called_through(name):
    assert _key_functions.calls_through(MAY_CHANGE_DATA[name])


def test_a_pure_key_takes_the_plain_rule(monkeypatch):
    """``key=lambda p: p[0]`` never reaches the differentiated definitions (the fast path)."""
    def f(x):
        pairs = [(x[2], x[0]), (x[1], x[1]), (x[0], x[2])]
        return sorted(pairs, key=lambda p: p[0])[0][1] * max(list(x), key=lambda v: abs(v - 1.0))

    def refuse(*args, **kwargs):
        raise AssertionError("a pure key went through the differentiated definitions")

    monkeypatch.setattr(ordering, "defined_rrule", refuse)
    monkeypatch.setattr(ordering, "_through_key_frule", refuse)
    check_every_mode(f, POINT)


# ---------------------------------------------------------------------- third order


def _appends_its_square(row):
    row.append(row[0] ** 2)
    return row[0] > 0


def _rows_through(call):
    def g(x):
        rows = [[x[0]], [x[1]], [x[2]]]
        kept = call(rows)
        return kept[0][0] ** 3 + sum(r[1] for r in rows) ** 2
    return g


THIRD_ORDER_REFUSED = {
    "sorted": (lambda rows: sorted(rows, key=_appends_its_square), "sorted with key=.*may change data"),
    "max": (lambda rows: [max(rows, key=_appends_its_square)], "max with key=.*may change data"),
    "list.sort": (lambda rows: rows.sort(key=_appends_its_square) or rows, "list.sort with key=.*may change"),
}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER_REFUSED))
def test_third_order_refuses_a_key_by_name(name):
    call, message = THIRD_ORDER_REFUSED[name]
    g = _rows_through(call)
    with pytest.raises(yb.NestedDifferentiationError, match=message):
        yb.hessian(lambda x: np.sum(yb.grad(g)(x) ** 2))(np.array([0.3, -0.7, 1.1]))


def test_third_order_of_a_filter_predicate_that_writes():
    g = _rows_through(lambda rows: list(filter(_appends_its_square, rows)))
    F = lambda x: np.sum(yb.grad(g)(x) ** 2)  # noqa: E731
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(yb.hessian(F)(x.copy()), central(lambda u: yb.grad(F)(u), x, 1e-5),
                               rtol=1e-5, atol=1e-5)


class _CountsItsComparisons:
    def __init__(self, v):
        self.v, self.n = v, 0.0

    def __lt__(self, other):
        self.n = self.n + self.v
        return self.v < other.v


def test_third_order_refuses_sorting_objects_whose_comparisons_write():
    """list.sort() in third order sorts copies: what ``__lt__`` writes would be lost (silently)."""
    def g(x):
        items = [_CountsItsComparisons(x[0]), _CountsItsComparisons(x[1]), _CountsItsComparisons(x[2])]
        items.sort()
        return items[0].v * sum(i.n for i in items) + items[2].v ** 3

    with pytest.raises(yb.NestedDifferentiationError, match="list.sort of objects whose comparisons may change"):
        yb.hessian(lambda x: np.sum(yb.grad(g)(x) ** 2))(np.array([0.3, -0.7, 1.1]))


def test_third_order_refuses_a_pure_key_returning_objects_whose_comparisons_write():
    """``key=lambda o: o`` is pure, but the keys it gives compare by a writing ``__lt__``."""
    def g(x):
        items = [_CountsItsComparisons(x[0]), _CountsItsComparisons(x[1]), _CountsItsComparisons(x[2])]
        ranked = sorted(items, key=lambda o: o)
        return ranked[0].v * sum(i.n for i in items) + ranked[2].v ** 3

    with pytest.raises(yb.NestedDifferentiationError, match="sorted of objects whose comparisons may change"):
        yb.hessian(lambda x: np.sum(yb.grad(g)(x) ** 2))(np.array([0.3, -0.7, 1.1]))
