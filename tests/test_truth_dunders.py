"""A user class's ``__bool__`` (or ``__len__``, used for truth) that does float work, run by the
implicit truth tests of ``if``, ``while``, ``not``, ``and``/``or``, ``x if obj else y``,
comprehension filters and ``assert`` (``frontend/truth_tests.py``, ``rules/comparing_calls.py``),
and by ``any``, ``all`` and ``filter(None, items)``.
These ran as the generated code's plain ``if obj:``, so the dunder's writes had no derivative
(a gradient of 0.0 where differences give 4.2); each case is checked against central
differences in every mode, and the value against the plain call (the dunder runs as often as in
CPython: it accumulates, so running it twice would change the value)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from yuebing.testing.third_order import check_third_order

from .all_modes import check_all_modes


class Tally:
    """Truth by ``__bool__``, which accumulates the square of the value it was made with."""

    def __init__(self, v):
        self.v, self.seen = v, 0.0

    def __bool__(self):
        self.seen = self.seen + self.v * self.v
        return self.v > 0


class Sized:
    """Truth by ``__len__`` (no ``__bool__``), which accumulates."""

    def __init__(self, v):
        self.v, self.seen = v, 0.0

    def __len__(self):
        self.seen = self.seen + 3.0 * self.v
        return 1 if self.v > 0 else 0


class Both(Sized):
    """``__bool__`` wins over ``__len__``, as in CPython."""

    def __bool__(self):
        self.seen = self.seen + self.v ** 3
        return True


def _if(x):
    a = Tally(x)
    if a:
        r = a.seen * 2.0
    else:
        r = a.seen * -5.0
    return r + a.seen


def _while(x):
    a = Tally(x)
    n = 0
    while a and n < 3:
        n += 1
    return a.seen * x


def _not(x):
    a = Tally(x)
    b = not a
    return a.seen + float(b) * x


def _and_or(x):
    a, b = Tally(x), Sized(2.0 * x)
    c = x and a
    d = a or x
    e = b and a
    return a.seen * b.seen + float(c is a) + float(d is a) * float(e is a)


def _nested_and_or(x):
    """Each operand tested once, as CPython's jumps test them: an inner ``and``/``or``'s value
    is not tested again by the outer one."""
    a, b, c = Tally(x), Tally(-2.0 * x), Sized(3.0 * x)
    r = (a or b) and c
    s = (b or a) and c
    t = not (a and c)
    if (a and b) or c:
        t = not t
    return (a.seen + b.seen) * c.seen + float(r is c) + float(s is c) * x + float(t)


def _by_length(x):
    a = Sized(x)
    if a:
        r = x
    else:
        r = 2.0 * x
    return a.seen * r + float(not a)


def _bool_over_length(x):
    a = Both(x)
    return (a.seen if a else -1.0) + a.seen * x


def _conditional_expression(x):
    a = Tally(x)
    r = 1.0 if a else 2.0
    return r * a.seen


def _asserted(x):
    a = Tally(x + 10.0)
    assert a, "never fails"
    return a.seen * x


def _comprehension_filter(x):
    items = [Tally(x), Tally(2.0 * x), Tally(-x)]
    kept = [b for b in items if b]
    return sum(b.seen for b in items) + len(kept) * x


def _any_all_filter(x):
    items = [Tally(x), Sized(2.0 * x), Tally(-x)]
    first = any(items)  # (stops at the first true item: Tally(-x) when x < 0)
    every = all(items)
    kept = list(filter(None, items))
    return sum(b.seen for b in items) * (1.0 + len(kept)) + float(first) + float(every) * x


def _writes_an_array(x, a):
    class Flag:
        def __bool__(self):
            a[0] = a[0] * x
            return True
    flag = Flag()
    while flag and a[0] < 4.0:
        a[1] = a[1] + a[0]
    return a[0] * a[1]


CASES = [_if, _while, _not, _and_or, _nested_and_or, _by_length, _bool_over_length, _conditional_expression, _asserted,
         _comprehension_filter, _any_all_filter]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__.lstrip("_"))
@pytest.mark.parametrize("x", [0.7, -1.3])
def test_a_truth_test_runs_a_writing_dunder_with_its_derivative(f, x):
    check_all_modes(f, x)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__.lstrip("_"))
def test_third_order_runs_a_writing_dunder_with_its_derivative(f):
    """Third order follows the dunder too: it ran as plain Python there (a third derivative of
    0.0 where differences of the gradient give 72.0)."""
    check_third_order(f, 0.7)


# ---------------------------------------------------------------- comparisons tested for truth


class Verdict:
    """What ``Ranked.__lt__`` returns: its truth by a ``__bool__`` that updates a shared box."""

    def __init__(self, box, holds):
        self.box, self.holds = box, holds

    def __bool__(self):
        self.box[0] = self.box[0] * 2.0 + 0.5 * self.box[0] ** 2
        return self.holds


class Ranked:
    """Compares by ``v``, returning a ``Verdict`` rather than a bool."""

    def __init__(self, v, box):
        self.v, self.box = v, box

    def __lt__(self, other):
        return Verdict(self.box, self.v < other.v)


def _ranked(x, *values):
    box = [x]
    return box, [Ranked(v, box) for v in values]


def _chain_in_if(x):
    box, (a, b, c) = _ranked(x, 1.0, 2.0, 3.0)
    if a < b < c:  # (a < b) tested, then b < c, then the if's own test: two __bool__ calls
        box[0] = box[0] + 1.0
    return box[0]


def _chain_failing_early(x):
    box, (a, b, c) = _ranked(x, 1.0, 3.0, 2.0)
    if b < c < a:  # stops at b < c: one __bool__ call
        box[0] = box[0] + 1.0
    return box[0]


def _single_in_if(x):
    box, (a, b) = _ranked(x, 1.0, 2.0)
    if a < b:
        box[0] = box[0] * 3.0
    return box[0]


def _negated(x):
    box, (a, b) = _ranked(x, 1.0, 2.0)
    r = not (a < b)
    return box[0] + float(r)


def _chain_as_value(x):
    box, (a, b, c) = _ranked(x, 1.0, 2.0, 3.0)
    r = a < b < c  # the first link tested; r is the second link's Verdict, untested
    return box[0] + float(isinstance(r, Verdict))


def _chain_in_while(x):
    box, (a, b, c) = _ranked(x, 1.0, 2.0, 3.0)
    n = 0
    while a < b < c and n < 2:
        n += 1
    return box[0]


def _chain_in_and_or(x):
    box, (a, b, c) = _ranked(x, 1.0, 2.0, 3.0)
    r = (a < b < c) or x
    s = x and (a < b)
    if (a < b) and (b < c < a):
        box[0] = box[0] + x
    return box[0] + float(isinstance(r, Verdict)) + float(isinstance(s, Verdict))


def _chain_in_filter(x):
    box, (a, b, c) = _ranked(x, 1.0, 2.0, 3.0)
    kept = [k for k in range(3) if a < b < c]
    return box[0] * len(kept)


def _comparison_kept_then_tested(x):
    box, (a, b) = _ranked(x, 1.0, 2.0)
    flag = a < b
    if flag:
        box[0] = box[0] + x
    return box[0]


def _conditional_on_comparison(x):
    box, (a, b) = _ranked(x, 1.0, 2.0)
    r = 2.0 if a < b else 3.0
    return box[0] * r


def _asserted_comparison(x):
    box, (a, b) = _ranked(x, 1.0, 2.0)
    assert a < b
    return box[0]


class Bag:
    """``x in bag`` by a ``__contains__`` returning a ``Verdict`` (CPython tests its truth)."""

    def __init__(self, box):
        self.box = box

    def __contains__(self, item):
        return Verdict(self.box, item > 0)


class CountingBag(Bag):
    """A ``__contains__`` that writes, returning a bool."""

    def __contains__(self, item):
        self.box[0] = self.box[0] * 1.5 + item
        return True


class Equated:
    """``__eq__`` only: ``a != b`` is ``object.__ne__``, which negates the truth of ``a == b``."""

    def __init__(self, v, box):
        self.v, self.box = v, box

    def __eq__(self, other):
        return Verdict(self.box, self.v == other.v)


def _contains_by_a_dunder(x):
    box = [x]
    r = 3 in Bag(box)
    if 2 not in CountingBag(box):
        box[0] = -box[0]
    return box[0] + float(r is True)


def _not_equal_by_eq(x):
    box = [x]
    a, b = Equated(1.0, box), Equated(2.0, box)
    r = a != b
    if a != b:
        box[0] = box[0] + x
    return box[0] + float(r is True)


COMPARISONS = [_contains_by_a_dunder, _not_equal_by_eq, _chain_in_if, _chain_failing_early, _single_in_if, _negated, _chain_as_value, _chain_in_while,
               _chain_in_and_or, _chain_in_filter, _comparison_kept_then_tested, _conditional_on_comparison,
               _asserted_comparison]


@pytest.mark.parametrize("f", COMPARISONS, ids=lambda f: f.__name__.lstrip("_"))
def test_a_comparison_tested_for_truth_runs_the_writing_dunder_of_its_result(f):
    """``a < b < c`` is ``(a < b) and (b < c)`` with ``b`` evaluated once; a comparison deciding
    a branch calls ``__bool__`` of what ``__lt__`` returned. These ran as plain tests (a gradient
    of 1.0 where differences give 4.0); checked in every mode, the value against the plain call
    (each ``__bool__`` call updates the box: one call too many or too few changes it)."""
    check_all_modes(f, 0.7)
    check_third_order(f, 0.7)


def test_a_comparison_of_numbers_tested_for_truth_is_inlined():
    """``if x < 3.0:`` of floats stays ``x < 3.0`` in the generated code (no generic call)."""
    def f(x):
        return x * 2.0 if x < 3.0 else x
    assert "_tested_lt, _NF" not in yb.show(f, 0.7) and "x < 3.0" in yb.show(f, 0.7)


def test_a_dunder_writing_an_argument_leaves_it_restored():
    a, x, h = np.array([1.5, -0.5]), 1.3, 1e-6
    expected = (_writes_an_array(x + h, a.copy()) - _writes_an_array(x - h, a.copy())) / (2 * h)
    np.testing.assert_allclose(yb.grad(_writes_an_array)(x, a), expected, rtol=1e-5)
    np.testing.assert_array_equal(a, [1.5, -0.5])
    np.testing.assert_allclose(yb.jvp(_writes_an_array, (x, a), (1.0, np.zeros(2)))[1], expected, rtol=1e-5)
    np.testing.assert_array_equal(a, [1.5, -0.5])
    left = a.copy()
    _writes_an_array(x, left)  # what a plain call leaves in an array the function captures
    np.testing.assert_allclose(yb.hvp(lambda v: _writes_an_array(v, a), (x,), (1.0,))[1][0], expected, rtol=1e-5)
    np.testing.assert_array_equal(a, left)  # captured, not an argument: it keeps the call's writes (semantics.md)


def _tests_ints(x):
    s = 0.0
    for i in range(5):
        if i % 2:
            s = s + x * i
    return s


def test_a_plain_value_is_tested_without_the_generic_call():
    """Numbers, lists and bools are tested as they are (a generic call costs microseconds in a
    loop); an object whose ``__bool__`` writes takes the call."""
    assert "_operator_truth" not in yb.show(_tests_ints, 0.7)
    assert "_operator_truth" in yb.show(_if, 0.7)
    check_all_modes(_tests_ints, 0.7)
