"""``reversed`` of a list or an array is CPython's lazy iterator under differentiation: an item is
read when it is asked for, so a write into the list (or array) after ``reversed`` and before the
iterator reaches it is seen, and a list that shrank below the iterator ends it for good. Before,
``reversed`` listed its argument at once and such code silently took the old values (and their
derivatives). ``reversed`` of a deque made in the function runs its ``__reversed__``: CPython's
deque iterators, which also raise ``RuntimeError`` once the deque changed size. Each case against
central differences in reverse, forward and second order; arguments passed in are restored.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode


def reversed_sees_a_write(x):
    xs = [x[0], x[1], x[2]]
    r = reversed(xs)
    xs[0] = x[3] * x[3]  # read by the iterator when it gets there
    return sum(v * k for k, v in enumerate(r, 1))


def reversed_of_shrinking_list(x):
    xs = [x[0], 2.0 * x[1], x[2], x[3]]
    r = reversed(xs)
    first = next(r)
    xs.pop()
    xs.pop()  # the iterator's index is past the end now: it has ended
    return first * x[0] + sum(r) + len(xs) * x[2]


def reversed_of_growing_list(x):
    xs = [x[0], x[1]]
    r = reversed(xs)
    xs.append(5.0 * x[2])  # not reached: the iterator started at the old end
    return next(r) * x[3] + sum(r)


def reversed_of_written_array(x):
    a = 2.0 * x
    r = reversed(a)
    a[0] = x[1] ** 3
    return sum(v * w for v, w in zip(r, x))


def reversed_of_matrix_rows(x):
    m = np.reshape(x, (2, 2)) * 1.5
    rows = reversed(m)
    m[0, 1] = np.sin(x[2])  # a row is a view, read when it is reached
    return sum(float(np.sum(row * row)) * k for k, row in enumerate(rows, 1))


def reversed_taken_whole(x):
    xs = [x[0] * x[1], x[2], x[3]]
    backwards = list(reversed(xs)) + list(reversed((x[0], 2.0)))
    return sum(v * k for k, v in enumerate(backwards, 1)) + max(reversed(xs)) * sum(reversed(x))


def reversed_of_deque(x):
    d = collections.deque([x[0], x[1]], maxlen=3)
    d.appendleft(x[2] * x[3])
    r = reversed(d)
    first = next(r)
    d[0] = x[3] ** 2  # no change of size: the iterator reads the new item
    return 2.0 * first + sum(v * k for k, v in enumerate(r, 1))


def deque_iterated_and_reversed(x):
    d = collections.deque([x[0], x[1], x[2]])
    d.rotate(1)
    forwards = [v * k for k, v in enumerate(d, 1)]
    return sum(forwards) * sum(reversed(d)) + sum(a * b for a, b in zip(d, reversed(d)))


#: the deque cases step the deque's Python iterators in every mode (2 to 4 s): the slow step (the
#: construct suite's c_deque_reversed covers them in the default run)
CASES = [reversed_sees_a_write, reversed_of_shrinking_list, reversed_of_growing_list, reversed_of_written_array,
         reversed_of_matrix_rows, reversed_taken_whole,
         pytest.param(reversed_of_deque, marks=pytest.mark.slow),
         pytest.param(deque_iterated_and_reversed, marks=pytest.mark.slow)]
X = np.array([0.3, 0.8, 1.3, 0.55])


@pytest.mark.parametrize("f", CASES, ids=lambda f: getattr(f, "__name__", None))
def test_reversed_in_every_mode(f):
    check_every_mode(f, X)


def _reversed_of_argument(xs, w):
    r = reversed(xs)
    xs[1] = xs[1] * w
    xs.pop(0)
    return sum(v * v for v in r) * w


def _differences(f, xs, w, h=1e-6):
    grads = []
    for k in range(len(xs)):
        up, down = list(xs), list(xs)
        up[k] += h
        down[k] -= h
        grads.append((f(up, w) - f(down, w)) / (2 * h))
    return grads, (f(list(xs), w + h) - f(list(xs), w - h)) / (2 * h)


def test_reversed_of_a_list_passed_in_restores_it():
    xs, w = [0.4, -1.1, 0.9], 1.7
    expected = _differences(_reversed_of_argument, xs, w)
    before = list(xs)
    gx, gw = yb.grad(_reversed_of_argument, argnums=(0, 1))(xs, w)
    assert xs == before
    np.testing.assert_allclose(gx, expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, expected[1], rtol=1e-6)
    t = yb.jvp(_reversed_of_argument, (xs, w), ([1.0, 0.5, -2.0], 0.25))[1]
    assert xs == before
    np.testing.assert_allclose(t, np.dot(expected[0], [1.0, 0.5, -2.0]) + 0.25 * expected[1], rtol=1e-6)


def _deque_grown_in_loop(x):
    d = collections.deque([x, 2.0 * x])
    for v in d:
        d.append(v * v)  # CPython: RuntimeError on the next step
    return sum(d)


def _deque_rotated_while_reversed(x):
    d = collections.deque([x, 2.0 * x, 3.0])
    r = reversed(d)
    next(r)
    d.rotate(1)
    return next(r)


@pytest.mark.parametrize("f", [_deque_grown_in_loop, _deque_rotated_while_reversed], ids=lambda f: f.__name__)
def test_deque_changed_while_iterated_raises_as_cpython(f):
    with pytest.raises(RuntimeError, match="deque mutated during iteration"):
        f(0.7)
    for run in (lambda: yb.grad(f)(0.7), lambda: yb.jvp(f, (0.7,), (1.0,)), lambda: yb.hvp(f, (0.7,), (1.0,))):
        with pytest.raises(RuntimeError, match="deque mutated during iteration"):
            run()


def test_a_deque_written_in_place_while_iterated_is_read_as_cpython():
    def f(x):
        d = collections.deque([x, 2.0 * x, 3.0])
        d.reverse()  # CPython counts neither this nor d[i] = v as a change
        it = iter(d)
        a = next(it)
        d[1] = x ** 3
        d.reverse()
        return a * sum(it)

    check_every_mode(f, 0.7)

