"""``map``, ``filter``, ``zip``, ``enumerate`` and ``islice`` made inside a differentiated function
are CPython's lazy iterators wherever the difference can be seen (an argument is an iterator, or
the function called may change data): an item is made when it is taken, so a function's side
effects happen once per item taken and an iterator handed in is advanced no further than CPython
advances it. The endless ``itertools`` (``count``, ``cycle``, ``repeat`` without ``times``) are
lazy too, and ``np.ndindex`` can be looped over. Before, ``next(map(h, xs))`` ran ``h`` on every
item and a generator zipped in a generator expression stopped early was drained (gradient 4.0
where differences give 6.0). Each case is checked against differences in every mode, with the
side effects counted inside the function (so that a wrong count changes the value and the
derivatives) and on a global counter in forward mode, which leaves it as the plain call does.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode
from .test_third_order import check_hessian

CALLS = [0]


def _logged(log):
    """A function with a side effect per call: it appends what it is given to ``log``."""
    def h(v):
        log.append(v)
        CALLS[0] += 1
        return v * v
    return h


def _rows(x):
    """A lazy generator (it uses next, so it runs step by step) over multiples of ``x[0]``."""
    k = 1.0
    while k < 5:
        yield x[0] * k + x[1]
        k += 1


def first_of_map(x):
    log = []
    first = next(map(_logged(log), [x[0], 2 * x[1], 3 * x[2]]))
    return first + sum(log) * len(log)  # h ran once: log holds one item


def map_stopped_by_break(x):
    log = []
    total = 0.0
    for v in map(_logged(log), x):
        total += v
        if v > 0.5:
            break
    return total * len(log) + sum(log)


def zip_stopped_in_generator_expression(x):
    """The reported case: the generator advanced once by the expression, once by next."""
    gen = _rows(x)
    ws = [1.0, 2.0, 3.0]
    first = next(a * b for a, b in zip(gen, ws))
    return first + 2 * next(gen)


def zip_of_generator_then_rest(x):
    gen = _rows(x)
    pairs = list(zip(gen, [x[2], x[3]]))
    return pairs[0][0] * pairs[1][1] + sum(v * v for v in gen)


def filter_with_side_effects(x):
    log = []

    def positive(v):
        log.append(v)
        return v > 0.5

    kept = filter(positive, x)
    return next(kept) * len(log) + sum(log)


def filter_of_generator(x):
    gen = _rows(x)
    big = filter(lambda v: v > 1.0, gen)
    return next(big) + 3 * next(gen)


def enumerate_of_generator(x):
    gen = _rows(x)
    i, first = next(enumerate(gen, 1))
    return i * first + next(gen) ** 2


def map_of_map(x):
    log = []
    squares = map(_logged(log), x)
    halves = map(lambda v: v / 2, squares)
    return next(halves) + next(halves) * len(log)


def islice_of_map(x):
    log = []
    head = itertools.islice(map(_logged(log), x), 1, 3)
    return sum(head) + len(log) * x[3]


def map_of_one_iterator_taken_whole(x):
    """A pure function over ``iter(x)``: listed at once, the iterator advanced as in CPython."""
    it = iter(list(x) + [1.5])
    pairs = list(map(lambda a, b: a * b, it, [x[1], x[2]]))
    return sum(pairs) + 2 * next(it)


def zip_strict_of_generator(x):
    return sum(a * b for a, b in zip(_rows(x), [x[0], x[1], x[2], x[3]], strict=True))


def counted(x):
    c = itertools.count(x[0], 0.5)
    return sum(v * next(c) for v in x)


def count_zipped(x):
    return sum(k * v for k, v in zip(itertools.count(), x))


def cycled(x):
    return sum(a * b for a, b in zip(itertools.cycle([x[0], x[1]]), x))


def repeated(x):
    return sum(a * b for a, b in zip(itertools.repeat(x[0]), x)) + sum(itertools.islice(itertools.repeat(x[1]), 3))


def count_until_break(x):
    total = 0.0
    for k in itertools.count(1):
        total += x[k % 4] * k
        if k >= 6:
            break
    return total


def over_ndindex(x):
    m = np.reshape(x, (2, 2))
    return sum(m[i, j] * m[j, i] for i, j in np.ndindex(2, 2))


def product_as_value(x):
    pairs = itertools.product([x[0], 2.0], [x[1], x[2]])
    a, b = next(pairs)
    return a * b + sum(c * d for c, d in pairs)


LAZY = [first_of_map, map_stopped_by_break, zip_stopped_in_generator_expression, zip_of_generator_then_rest,
        filter_with_side_effects, filter_of_generator, enumerate_of_generator, map_of_map, islice_of_map,
        map_of_one_iterator_taken_whole, zip_strict_of_generator]
ENDLESS = [counted, count_zipped, cycled, repeated, count_until_break, over_ndindex, product_as_value]
X = np.array([0.3, 0.8, 1.3, 0.55])


@pytest.mark.parametrize("f", LAZY + ENDLESS, ids=lambda f: f.__name__)
def test_lazy_iterators_in_every_mode(f):
    check_every_mode(f, X)


#: third order is slow to check (its plain programs follow every step): one case of each kind
THIRD_ORDER = [first_of_map, map_stopped_by_break, map_of_map, zip_stopped_in_generator_expression,
               filter_with_side_effects, enumerate_of_generator, count_until_break]


@pytest.mark.slow  # (third order / the jax oracle: the CI's slow step)
@pytest.mark.parametrize("f", THIRD_ORDER, ids=lambda f: f.__name__)
def test_third_order(f):
    check_hessian(lambda y: np.sum(yb.grad(f)(y) ** 2), X, rtol=1e-5, atol=1e-5)


def test_third_order_of_ndindex_is_refused_by_name():
    with pytest.raises(yb.NestedDifferentiationError, match="getattr on objects"):
        yb.hessian(lambda y: np.sum(yb.grad(over_ndindex)(y) ** 2))(X)


def _endless_multiples(x):
    k = 1.0
    while True:
        yield x * k
        k += 1


def test_reported_zip_case_against_differences():
    """The generator of the report is endless: drained, it stopped with an error past the limit
    of eager items or, cut at the zip's shortest argument, left nothing for ``next``."""
    def f(x):
        gen = _endless_multiples(x)
        first = next(a * b for a, b in zip(gen, [1.0, 2.0, 3.0]))
        return first * next(gen)

    h = 1e-6
    assert yb.grad(f)(1.5) == pytest.approx((f(1.5 + h) - f(1.5 - h)) / (2 * h), rel=1e-7)
    assert yb.jvp(f, (1.5,), (1.0,))[1] == pytest.approx(yb.grad(f)(1.5), rel=1e-12)


@pytest.mark.parametrize("f", [first_of_map, map_stopped_by_break, filter_with_side_effects, map_of_map,
                               islice_of_map], ids=lambda f: f.__name__)
def test_side_effects_happen_once_per_item_taken(f):
    CALLS[0] = 0
    f(X.copy())
    plain = CALLS[0]
    CALLS[0] = 0
    yb.jvp(f, (X.copy(),), (np.ones(4),))
    assert CALLS[0] == plain


def test_arguments_are_restored():
    x = X.copy()
    xs = list(x)

    def consumes(v):
        it = iter(xs)
        m = map(lambda a: a * v, it)
        return next(m) + next(m) * next(it)

    yb.grad(consumes)(0.7)
    assert xs == list(x)
    np.testing.assert_array_equal(x, X)


def test_endless_iterators_taken_whole_are_refused():
    """``sum``/``list`` handed an endless iterator itself say so (CPython would run forever). A
    generator expression or ``map`` over one, taken whole, runs on as CPython's does: not tested."""
    for taken_whole in (lambda v: sum(itertools.count()) * v, lambda v: len(list(itertools.cycle([v]))) * v):
        with pytest.raises(RuntimeError, match="never ends"):
            yb.grad(taken_whole)(0.5)


def _map_growing_its_list(x):
    xs = [x, 2.0 * x]

    def h(v):
        if len(xs) < 4:
            xs.append(v * 0.5)
        return v * v

    return sum(map(h, xs))


def _loop_growing_its_list(x):
    xs = [x, 2.0 * x]
    total = 0.0
    for v in xs:  # the advice of the refusal: a for loop sees the appended items, as CPython's map does
        if len(xs) < 4:
            xs.append(v * 0.5)
        total = total + v * v
    return total


def test_a_map_whose_function_changes_its_list_is_refused_in_every_mode():
    """Taken whole (``sum``), map's rules read every item at once: a function that appends to the
    list it walks gave the snapshot's value and gradient (8.45 and 13.0 where CPython gives 10.56
    and 16.25). Refused by name in every mode; the for loop it advises is exact."""
    for run in (lambda: yb.grad(_map_growing_its_list)(1.3), lambda: yb.jvp(_map_growing_its_list, (1.3,), (1.0,)),
                lambda: yb.hessian(_map_growing_its_list)(1.3)):
        with pytest.raises(Exception, match="changed a list it iterates"):
            run()
    assert _loop_growing_its_list(1.3) == pytest.approx(_map_growing_its_list(1.3))
    check_every_mode(_loop_growing_its_list, 1.3)


def map_raising_on_an_item_not_taken(x):
    """A pure function raising on a later item (the fuzzer's next(map(math.log, [1, -1]))): CPython
    raises only if that item is taken."""
    logs = map(math.log, [x[0], -1.0])
    inverses = map(lambda v: 1.0 / v, [x[1] * x[2], 0.0])
    return next(logs) * x[3] + next(inverses)


def test_map_raising_on_an_item_not_taken():
    check_every_mode(map_raising_on_an_item_not_taken, X)


def test_map_raising_on_an_item_taken_raises_in_every_mode():
    def f(x):
        return sum(map(math.log, [x, -1.0]))

    for run in (lambda: f(0.7), lambda: yb.grad(f)(0.7), lambda: yb.jvp(f, (0.7,), (1.0,)),
                lambda: yb.hvp(f, (0.7,), (1.0,))):
        with pytest.raises(ValueError, match="math domain error"):
            run()
