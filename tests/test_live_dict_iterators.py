"""``iter(d)``, ``iter(d.values())`` and ``iter(d.items())`` kept while the dict is written
(issue 13): under differentiation such an iterator reads each value from the dict when its item is
taken, as CPython's does, so a value written meanwhile is the one seen (with its derivative), and
it raises CPython's ``RuntimeError`` once the dict changed size (``ir/generators.SequenceIterator``,
``ir/dict_views.py``). Values equal the plain call's, derivatives central differences' in every
mode (``tests/modes.check_every_mode``), errors CPython's.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

import yuebing as yb

from tests.modes import check_every_mode


def _sum_after_write(x):
    d = {"a": x[0], "b": 2 * x[1]}
    it = iter(d.values())
    d["a"] = x[0] ** 3 * x[1]
    return sum(it)


def _items_loop_after_write(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d.items())
    d["b"] = np.sin(x[0] * x[1])
    s = 0.0
    for k, v in it:
        s = s + v * v if k == "b" else s + v
    return s


def _next_between_writes(x):
    d = {"a": x[0], "b": x[1], "c": x[0] * x[1]}
    it = iter(d.values())
    first = next(it)
    d["b"] = first * x[1] ** 2
    second = next(it)
    d["c"] = second * x[0]
    return first * second + next(it)


def _first_of_fresh_iterator(x):
    d = {"a": x[0] * x[1], "b": x[1]}
    return next(iter(d.values())) ** 2 + next(iter(d.items()))[1]


def _kept_zip(x):
    d = {"a": x[0], "b": x[1]}
    pairs = zip(d.values(), [2.0, 3.0])
    d["b"] = x[1] ** 3
    return sum(v * w for v, w in pairs)


def _body_writes_values(x):
    d = {"a": x[0], "b": x[1], "c": x[0] + x[1]}
    it = iter(d.values())
    s = 0.0
    for v in it:
        s = s + v * v
        d["c"] = s * x[0]  # a value written (no size change) is allowed and seen when reached
    return s


def _keys_then_read(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d)
    d["a"] = x[0] * x[1]
    return sum(d[k] ** 2 for k in it)


def _ordered_dict(x):
    d = collections.OrderedDict(a=x[0], b=x[1])
    it = iter(d.items())
    d["a"] = np.exp(x[1])
    return sum(k_v[1] * k_v[1] for k_v in it)


def _exhausted_then_grown(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d.values())
    total = sum(it)
    d["c"] = x[0]  # an exhausted iterator stays exhausted: no error
    return total * x[1] + sum(it)


PROGRAMS = [_sum_after_write, _items_loop_after_write, _next_between_writes, _first_of_fresh_iterator,
            _kept_zip, _body_writes_values, _keys_then_read, _ordered_dict, _exhausted_then_grown]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_reads_the_current_value_in_every_mode(f):
    check_every_mode(f, np.array([0.7, 1.3]))


def _grown_before_step(x):
    d = {"a": x[0], "b": x[1]}
    it = iter(d.values())
    d["c"] = x[0]
    return next(it)


def _shrunk_in_loop(x):
    d = {"a": x[0], "b": x[1], "c": x[0]}
    s = 0.0
    it = iter(d.items())
    for k, v in it:
        s = s + v
        if k == "a":
            del d["c"]
    return s


def _grown_in_loop(x):
    d = {"a": x[0], "b": x[1]}
    s = 0.0
    for k in iter(d):
        s = s + d[k]
        d[k + "!"] = s
    return s


def _grown_at_the_end(x):
    d = {"a": x[0]}
    it = iter(d)
    next(it)
    d["b"] = x[1]  # the next step (which would have ended) raises too
    return sum(d[k] for k in it)


def _sticky_error(x):
    d = {"a": x[0]}
    it = iter(d.values())
    d["b"] = x[1]
    try:
        next(it)
    except RuntimeError:
        pass
    del d["b"]  # the size is back, but CPython's iterator keeps raising
    return next(it)


SIZE_CHANGES = [_grown_before_step, _shrunk_in_loop, _grown_in_loop, _grown_at_the_end, _sticky_error]
MODES = {
    "grad": lambda f, x: yb.grad(f)(x),
    "jvp": lambda f, x: yb.jvp(f, (x,), (np.ones(2),)),
    "hvp": lambda f, x: yb.hvp(f, (x,), (np.ones(2),)),
    "jacobian_fwd": lambda f, x: yb.jacobian(f, mode="fwd")(x),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", SIZE_CHANGES, ids=lambda f: f.__name__)
def test_a_size_change_raises_as_cpython(f, mode):
    x = np.array([0.7, 1.3])
    with pytest.raises(RuntimeError) as plain:
        f(x.copy())
    with pytest.raises(RuntimeError) as differentiated:
        MODES[mode](f, x.copy())
    assert str(differentiated.value) == str(plain.value)


def test_a_key_replaced_before_it_is_reached_is_refused_not_misread():
    """CPython's iterator may go on to the new key; yuebing raises rather than guess (docs/limitations.md)."""
    def f(x):
        d = {"a": x, "b": 2 * x}
        it = iter(d.values())
        first = next(it)
        del d["b"]
        d["c"] = x * x
        return first + sum(it)

    f(0.7)  # CPython: no error
    with pytest.raises(RuntimeError, match="dictionary keys changed during iteration"):
        yb.grad(f)(0.7)
