"""Walking a ``collections.deque`` while it changes (issue 13): ``iter(d)``, ``reversed(d)`` and
``for v in d`` read each item when it is reached (``d[i] = v`` or ``d.reverse()`` meanwhile is
seen) and raise CPython's ``RuntimeError: deque mutated during iteration`` once the deque was
added to, popped, rotated or cleared, for a deque passed in (``rules/containers/deque_arguments.
ArgumentDequeIterator``, counting mutations in ``_deque_states.py``) as for one made in the
function (``TrackedDeque``). Values equal the plain call's, derivatives central differences' in
reverse, forward and second order, errors CPython's.
"""
from __future__ import annotations

import copy
from collections import deque

import numpy as np
import pytest

import yuebing as yb

from tests.modes import check_every_mode
from tests.test_deque_arguments import check_modes


def kept_iterator_sees_a_write(d, x):
    it = iter(d)
    a = next(it)
    d[1] = x ** 3 * a
    return a * next(it) + next(it) * x


def kept_reversed_sees_a_write(d, x):
    it = reversed(d)
    d[0] = x * d[2]
    return sum(v * v for v in it)


def loop_body_writes(d, x):
    s = 0.0
    for v in d:
        s = s + v * x
        d[2] = s * x
    return s


def loop_body_reverses(d, x):
    s = 0.0
    for v in d:
        s = s * x + v
        if s > -1e9:
            d.reverse()  # (no mutation to CPython: the walk goes on over the reversed items)
    return s


def rest_after_a_write(d, x):
    it = iter(d)
    first = next(it)
    d[2] = first * x
    return sum(list(it)) * first


def next_and_loop_share(d, x):
    it = iter(d)
    s = 0.0
    for v in it:
        s = s + v * next(it, x)
        d[-1] = s
    return s


WALKS = [kept_iterator_sees_a_write, kept_reversed_sees_a_write, loop_body_writes, loop_body_reverses,
         rest_after_a_write, next_and_loop_share]


@pytest.mark.parametrize("f", WALKS, ids=lambda f: f.__name__)
def test_a_deque_passed_in_is_read_live(f):
    d = deque([0.7, -1.2, 0.4, 1.1])
    assert yb.value_and_grad(f, argnums=(0, 1))(copy.deepcopy(d), 0.9)[0] == pytest.approx(f(copy.deepcopy(d), 0.9))
    check_modes(f, d, 0.9)


@pytest.mark.parametrize("f", WALKS, ids=lambda f: f.__name__)
def test_a_deque_made_inside_is_read_live(f):
    check_every_mode(lambda x: f(deque([x[0], x[1], x[0] * x[1], 1.1]), x[2]), np.array([0.7, -1.2, 0.9]))


def appended_in_loop(d, x):
    s = 0.0
    for v in d:
        s = s + v * x
        d.append(s)
    return s


def popped_after_iter(d, x):
    it = iter(d)
    d.popleft()
    return next(it) * x


def rotated_under_reversed(d, x):
    it = reversed(d)
    next(it)
    d.rotate(0)  # (counted even when nothing moves, as CPython counts it)
    return next(it) * x


def cleared_after_the_end(d, x):
    it = iter(d)
    total = sum(it)
    d.clear()  # an exhausted iterator raises on its next step too
    return total * x + sum(it)


def extended_in_loop(d, x):
    s = 0.0
    for v in d:
        s = s + v
        d.extend([x])
    return s


def removed_in_loop(d, x):
    s = 0.0
    for v in d:
        s = s + v * x
        if len(d) > 3:
            d.remove(d[0])
    return s


def inserted_in_loop(d, x):
    s = 0.0
    for v in iter(d):
        s = s + v * x
        d.insert(1, s)
    return s


MUTATIONS = [appended_in_loop, popped_after_iter, rotated_under_reversed, cleared_after_the_end,
             extended_in_loop, removed_in_loop, inserted_in_loop]
MODES = {
    "grad": lambda f, d, x: yb.grad(f, argnums=(0, 1))(d, x),
    "jvp": lambda f, d, x: yb.jvp(f, (d, x), (deque(np.ones(len(d))), 1.0)),
    "hvp": lambda f, d, x: yb.hvp(f, (d, x), (deque(np.ones(len(d))), 1.0)),
    "grad_inside": lambda f, d, x: yb.grad(lambda y: f(deque([y, *list(d)[1:]]), y))(x),
    "jvp_inside": lambda f, d, x: yb.jvp(lambda y: f(deque([y, *list(d)[1:]]), y), (x,), (1.0,)),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", MUTATIONS, ids=lambda f: f.__name__)
def test_a_mutation_raises_as_cpython(f, mode):
    with pytest.raises(RuntimeError) as plain:
        f(deque([0.7, -1.2, 0.4, 1.1]), 0.9)
    with pytest.raises(RuntimeError) as differentiated:
        MODES[mode](f, deque([0.7, -1.2, 0.4, 1.1]), 0.9)
    assert str(differentiated.value) == str(plain.value) == "deque mutated during iteration"


def reversed_loop_over_argument_writes(d, x):
    s = 0.0
    for v in reversed(d):
        s = s + v * x
        d[0] = s  # (read live when the walk reaches it, as CPython's reversed iterator reads it)
    return s


def reversed_loop_over_argument_as_iterator(d, x):
    s = 0.0
    r = reversed(d)
    for v in r:
        s = s + v * x
        d[0] = s
    return s


def reversed_loop_over_argument_grows_at_its_end(d, x):
    s = 0.0
    for v in reversed(d):
        s = s + v * x
        if v is d[0]:
            d.append(x * x)  # (CPython's reversed iterator finds its end before it checks)
    return s + sum(d)


def reversed_loop_over_argument_with_break(d, x):
    s = 1.0
    for v in reversed(d):
        if v * x < -0.5:
            break
        s = s * (1.0 + v * x)
    return s


REVERSED_ARGUMENT_LOOPS = [reversed_loop_over_argument_writes, reversed_loop_over_argument_as_iterator,
                           reversed_loop_over_argument_grows_at_its_end, reversed_loop_over_argument_with_break]


@pytest.mark.parametrize("f", REVERSED_ARGUMENT_LOOPS, ids=lambda f: f.__name__)
def test_a_for_loop_over_reversed_deque_passed_in_every_mode(f):
    """``for v in reversed(d)`` of a deque passed in walks it itself, live (it was refused)."""
    check_modes(f, deque([0.7, -1.2, 0.4], maxlen=4), 0.9)
    assert f(deque([0.7, -1.2, 0.4]), 0.9) == yb.value_and_grad(f)(deque([0.7, -1.2, 0.4]), 0.9)[0]


def reversed_loop_over_argument_appends(d, x):
    s = 0.0
    for v in reversed(d):
        s = s + v * x
        d.appendleft(s)
    return s


def reversed_loop_over_argument_rotates(d, x):
    s = 0.0
    for v in reversed(d):
        s = s + v * x
        d.rotate(1)
    return s


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [reversed_loop_over_argument_appends, reversed_loop_over_argument_rotates],
                         ids=lambda f: f.__name__)
def test_a_mutation_in_a_reversed_loop_over_a_deque_passed_in_raises_as_cpython(f, mode):
    test_a_mutation_raises_as_cpython(f, mode)


def reversed_loop_writes(x):
    d = deque([x[0], x[1], x[0] * x[1]])
    s = 0.0
    for v in reversed(d):
        s = s + v * v
        d[0] = s * x[1]
    return s


def reversed_loop_grows_at_its_end(x):
    d = deque([x[0], x[1]])
    s = 0.0
    for v in reversed(d):
        s = s + v * x[1]
        if v is d[0]:
            d.append(x[0])  # (CPython's reversed iterator finds its end before it checks)
    return s + sum(d)


def exhausted_reversed_then_grown(x):
    d = deque([x[0], x[1]])
    r = reversed(d)
    total = sum(r)
    d.append(x[0] * x[1])
    return total * x[0] + sum(r)


@pytest.mark.parametrize("f", [reversed_loop_writes, reversed_loop_grows_at_its_end, exhausted_reversed_then_grown],
                         ids=lambda f: f.__name__)
def test_a_reversed_walk_of_a_deque_made_inside_reads_live(f):
    check_every_mode(f, np.array([0.7, -1.2]))


def test_an_exhausted_reversed_iterator_of_a_deque_passed_in_does_not_raise():
    def f(d, x):
        r = reversed(d)
        total = sum(r)
        d.append(x)
        return total * x + sum(r)

    check_modes(f, deque([0.7, -1.2, 0.4]), 0.9)


def reversed_loop_pops(x):
    d = deque([x[0], x[1], x[0] * x[1]])
    s = 0.0
    for v in reversed(d):
        s = s + v
        d.popleft()
    return s


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_reversed_loop_over_a_deque_made_inside_raises_as_cpython(mode):
    x = np.array([0.7, -1.2])
    run = {"grad": lambda: yb.grad(reversed_loop_pops)(x), "jvp": lambda: yb.jvp(reversed_loop_pops, (x,), (x,)),
           "hvp": lambda: yb.hvp(reversed_loop_pops, (x,), (x,))}[mode]
    with pytest.raises(RuntimeError, match="deque mutated during iteration"):
        reversed_loop_pops(x)
    with pytest.raises(RuntimeError, match="deque mutated during iteration"):
        run()


# ------------------------------------------------------------------------------------------------
# for loops walk a deque by index (frontend/loops.py): under enumerate and zip too, made inside too
# ------------------------------------------------------------------------------------------------


def enumerate_loop_writes(d, x):
    s = 0.0
    for i, v in enumerate(d):
        s = s + v * x * (i + 1.0)
        d[-1] = s * x  # (read live when the loop reaches it)
    return s


def zip_loop_with_a_list(d, x):
    s = 0.0
    for v, w in zip(d, [x, 2.0, x * x, 5.0]):
        s = s + v * w
    return s


def loop_over_a_deque_made_inside(d, x):
    e = deque([v * x for v in d], maxlen=3)
    e.append(x * x)
    s = 0.0
    for i, v in enumerate(e):
        s = s + v * v * (i + 1.0)
        e[0] = s  # (already passed: not seen)
    return s + e[0]


@pytest.mark.parametrize("f", [enumerate_loop_writes, zip_loop_with_a_list, loop_over_a_deque_made_inside],
                         ids=lambda f: f.__name__)
def test_a_loop_under_enumerate_or_zip_walks_the_deque_live(f):
    check_modes(f, deque([0.7, -1.2, 0.4], maxlen=4), 0.9)


def enumerate_loop_appends(d, x):
    s = 0.0
    for i, v in enumerate(d):
        s = s + v * x
        if i == 1:
            d.append(s)
    return s


def zip_loop_pops_made_inside(d, x):
    e = deque(d)
    s = 0.0
    for v, w in zip(e, d):
        s = s + v * w * x
        e.pop()
    return s


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [enumerate_loop_appends, zip_loop_pops_made_inside], ids=lambda f: f.__name__)
def test_a_mutation_under_enumerate_or_zip_raises_as_cpython(f, mode):
    test_a_mutation_raises_as_cpython(f, mode)
