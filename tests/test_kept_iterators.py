"""``map``/``filter``/``zip``/``enumerate`` whose iterator is kept (stored, returned, passed on,
walked by a ``for`` loop) are CPython's lazy iterators under differentiation
(``frontend/kept_iterators.py``): a list changed after the call and before an item is taken gives
the new item and its derivative, as CPython does. So do the ``itertools`` that walk other
iterables lazily in CPython (``ir/lazy_itertools.py``). Each function is checked in every mode against
central differences (``check_every_mode``), with its value against the plain call."""
import itertools
import math

import numpy as np
import pytest

from yuebing.frontend.kept_iterators import keep_iterators
from yuebing.frontend.parsing import parse
from yuebing.testing.third_order import check_third_order

from .modes import check_every_mode

X = np.array([0.3, 0.7, 1.1])


def stored_map(x):
    xs = [x[0], x[1], x[2]]
    m = map(math.sin, xs)
    xs[0] = x[1] * 3.0
    return sum(m)


def stored_zip_grown(x):
    xs, ys = [x[0], x[1]], [x[2], x[0]]
    z = zip(xs, ys)
    xs.append(x[1])
    ys.append(x[2] * 2.0)
    xs[0] = x[2] ** 2
    return sum(a * b for a, b in z)


def for_over_map_body_writes(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for v in map(math.sin, xs):
        t += v
        xs[-1] = v * 5.0
    return t


def for_over_zip_of_map(x):
    xs, ys = [x[0], x[1], x[2]], [1.0, 2.0, 3.0]
    t = 0.0
    for a, b in zip(map(math.exp, xs), ys):
        t += a * b
        xs[-1] = a
    return t


def for_over_enumerate_body_writes(x):
    xs = [x[0], x[1], x[2]]
    t = 0.0
    for i, v in enumerate(xs):
        t += v * (i + 1)
        if i + 1 < len(xs):
            xs[i + 1] = v * 2.0
    return t


def stored_filter(x):
    xs = [x[0], -x[1], x[2]]
    f = filter(lambda v: v > 0, xs)
    xs[1] = x[1]
    return sum(f)


def stored_enumerate(x):
    xs = [x[0], x[1]]
    e = enumerate(xs, start=1)
    xs.append(x[2])
    return sum(k * v for k, v in e)


def returned_by_a_helper(x):
    def sines(values):
        return map(math.sin, values)
    xs = [x[0], x[1]]
    m = sines(xs)
    xs[0] = 2.0 * x[2]
    return sum(m)


def passed_to_a_helper(x):
    def total(items, values):
        values[0] = values[1] * values[1]
        return sum(items)
    xs = [x[0], x[1], x[2]]
    return total(map(math.cos, xs), xs)


def taken_by_next(x):
    xs = [x[0], x[1], x[2]]
    m = map(lambda v: v * v, xs)
    first = next(m)
    xs[1] = first * x[2]
    return first + next(m) + sum(m)


def extend_with_kept(x):
    xs = [x[0], x[1]]
    m = map(math.exp, xs)
    ys = [x[2]]
    xs[1] = x[2]
    ys.extend(m)
    return sum(ys) * ys[-1]


def update_with_kept_zip(x):
    d = {"c": x[2]}
    z = zip(["a", "b"], [x[0], x[1] * 2.0])
    d.update(z)
    return d["a"] * d["b"] + d["c"]


def set_update_with_kept(x):
    s = {1.0}
    m = map(lambda v: v * 2.0, [x[0], x[1]])
    s.update(m)
    return sum(s)


def unpacked(x):
    xs = [x[0], x[1]]
    z = zip(xs, [x[2], x[0]])
    xs[0] = x[1]
    (a, b), (c, d) = z
    return a * b + c * d


def taken_at_once_still_right(x):  # the eager paths: sum/list/dict/extend/star of the call itself
    xs = [x[0], x[1], x[2]]
    ys = []
    ys.extend(map(math.exp, xs))
    d = dict(zip(["a", "b", "c"], xs))
    return sum(map(math.sin, xs)) + sum(list(zip(*zip(xs, ys)))[1]) + d["b"] * max(*map(abs, xs))


def dict_of_kept_zip(x):
    keys, values = ["a", "b"], [x[0], x[1]]
    z = zip(keys, values)
    values[1] = x[2] * x[0]
    d = dict(z)
    return d["a"] * d["b"]


def nested_map_of_map(x):
    xs = [x[0], x[1], x[2]]
    inner = map(math.sin, xs)
    outer = map(lambda v: v * v, inner)
    xs[2] = x[0]
    return sum(outer)


def generator_expression_kept(x):
    xs, ys = [x[0], x[1]], [x[2], x[0]]
    g = (a * b for a, b in zip(xs, ys))
    xs[0] = x[1] ** 2
    return sum(g)


def generator_expression_taken_at_once(x):
    xs, ys = [x[0], x[1]], [x[2], x[0]]
    return sum(a * b for a, b in zip(xs, ys)) + max(v * v for v in map(math.sin, xs))


def product_of_kept_zips(x):  # scipy's RegularGridInterpolator: itertools.product(*zip(zipped1, zipped2))
    zipped1 = zip([0, 1], [1.0 - x[0], 1.0 - x[1]])
    zipped2 = zip([1, 2], [x[0], x[1] * x[2]])
    total = 0.0
    for corner in itertools.product(*zip(zipped1, zipped2)):
        indices, weights = zip(*corner)
        total = total + weights[0] * weights[1] * (indices[0] + 2 * indices[1])
    return total


CASES = [stored_map, stored_zip_grown, for_over_map_body_writes, for_over_zip_of_map,
         for_over_enumerate_body_writes, stored_filter, stored_enumerate, returned_by_a_helper, passed_to_a_helper,
         taken_by_next, extend_with_kept, update_with_kept_zip, set_update_with_kept, unpacked,
         taken_at_once_still_right, dict_of_kept_zip, nested_map_of_map, generator_expression_kept,
         generator_expression_taken_at_once, product_of_kept_zips]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_follows_cpython(f):
    check_every_mode(f, X)


def chain_kept(x):
    xs, ys = [x[0], x[1]], [x[2]]
    c = itertools.chain(xs, ys)
    xs[0] = x[2] * 3.0
    ys.append(x[0] * x[1])
    return sum(c)


def chain_from_iterable_kept(x):
    rows = [[x[0]], [x[1], x[2]]]
    c = itertools.chain.from_iterable(rows)
    rows[1][0] = x[0] ** 3
    return sum(v * v for v in c)


def accumulate_kept(x):
    xs = [x[0], x[1], x[2]]
    a = itertools.accumulate(xs, lambda s, v: s * v + 1.0, initial=0.5)
    xs[1] = x[0] * x[2]
    return sum(a)


def pairwise_kept(x):
    xs = [x[0], x[1], x[2]]
    p = itertools.pairwise(xs)
    xs[2] = x[0] ** 2
    return sum(a * b for a, b in p)


def starmap_kept(x):
    xs = [(x[0], x[1]), (x[1], x[2])]
    s = itertools.starmap(lambda a, b: a * b, xs)
    xs[0] = (x[2], x[2])
    return sum(s)


def islice_of_a_list_kept(x):
    xs = [x[0], x[1], x[2]]
    s = itertools.islice(xs, 1, None)
    xs[1] = x[2] ** 3
    return sum(s)


def zip_longest_kept(x):
    xs, ys = [x[0], x[1]], [x[2]]
    z = itertools.zip_longest(xs, ys, fillvalue=1.5)
    xs[1] = x[2] ** 2
    return sum(a * b for a, b in z)


def itertools_taken_at_once(x):
    xs = [x[0], x[1], x[2]]
    return (sum(itertools.chain(xs, [x[0]])) + sum(itertools.accumulate(xs)) + list(itertools.pairwise(xs))[1][0]
            + sum(itertools.starmap(pow, [(x[0], 2.0), (x[1], 3.0)])) + max(itertools.islice(xs, 2))
            + sum(a * (b or 1.0) for a, b in itertools.zip_longest(xs, [x[2]])))


def compress_takewhile_dropwhile_filterfalse(x):
    xs = [x[0], x[1], x[2], 0.5]
    c = itertools.compress(xs, [1, 0, 1, 1])
    t = itertools.takewhile(lambda v: v < 1.0, xs)
    d = itertools.dropwhile(lambda v: v < 0.5, xs)
    f = itertools.filterfalse(lambda v: v > 1.0, xs)
    xs[2] = x[0] * 4.0
    return sum(c) + 2.0 * sum(t) + 3.0 * sum(v * v for v in d) + 5.0 * sum(f)


ITERTOOLS_CASES = [chain_kept, chain_from_iterable_kept, accumulate_kept, pairwise_kept, starmap_kept,
                   islice_of_a_list_kept, zip_longest_kept, itertools_taken_at_once,
                   compress_takewhile_dropwhile_filterfalse]


@pytest.mark.parametrize("f", ITERTOOLS_CASES, ids=lambda f: f.__name__)
def test_itertools_follow_cpython(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", [stored_map, stored_zip_grown, for_over_map_body_writes, extend_with_kept, chain_kept,
                               accumulate_kept], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X)


def test_a_users_own_map_is_called_as_it_is():
    def map(function, values):  # noqa: A001 - shadows the builtin on purpose
        return [function(v) * 2.0 for v in values]

    def f(x):
        m = map(math.sin, [x[0], x[1]])
        return m[0] + m[1]
    check_every_mode(f, X[:2])


def _rewritten(source: str) -> str:
    import ast
    return ast.unparse(keep_iterators(parse(source).body[0], frozenset()))


def test_which_calls_are_kept():
    text = _rewritten("def f(xs, ys):\n"
                      "    a = sum(map(g, xs))\n"
                      "    b = zip(xs, ys)\n"
                      "    for p, q in zip(xs, map(g, ys)):\n"
                      "        pass\n"
                      "    return list(enumerate(zip(xs, ys))), f(*zip(xs, ys)), h(map(g, xs))\n")
    assert "sum(map(g, xs))" in text
    assert "b = _yb_kept_iterator(zip, xs, ys)" in text
    assert "for p, q in zip(xs, _yb_kept_iterator(map, g, ys))" in text
    assert "list(enumerate(zip(xs, ys)))" in text and "f(*_yb_list(zip(xs, ys)))" in text
    assert "h(_yb_kept_iterator(map, g, xs))" in text


def test_a_generator_expressions_first_iterable_is_kept_unless_it_is_taken_at_once():
    text = _rewritten("def f(xs, ys):\n    g = (a for a in zip(xs, ys))\n    return sum(b for b in zip(ys, xs)), g\n")
    assert "g = (a for a in _yb_kept_iterator(zip, xs, ys))" in text
    assert "sum((b for b in zip(ys, xs)))" in text  # (walked live by the loop it becomes)


def test_a_rebound_consumer_keeps_the_iterator():
    text = _rewritten("def f(xs):\n    sum = g\n    return sum(map(h, xs))\n")
    assert "sum(_yb_kept_iterator(map, h, xs))" in text
