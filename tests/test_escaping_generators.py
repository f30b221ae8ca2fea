"""Lazy generators with cleanup (a yield inside ``try``/``finally`` or ``with``) that the
differentiated function drops unfinished. CPython runs their ``finally`` blocks when it frees
them; yuebing closes them where the source shows the drop (``frontend/generator_closing.py``),
now also for generator functions defined outside the function (module level, or captured) and
for ``list(...)``/``tuple(...)`` of them, and refuses, naming the generator and the yield it is
suspended at, one that escaped where it cannot see (stored in a dict or an attribute, passed
to a function) and was never closed (``ir/generators.watch``/``unclosed``). Before, these ran
without their ``finally`` blocks: a gradient of 2.0 where differences give 6.0."""
from __future__ import annotations

import re

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

LOG: list = []


def counting(x):
    """A module-level generator function with cleanup."""
    try:
        k = 1.0
        while True:
            yield x * k
            k += 1.0
    finally:
        LOG.append(x * x)


def finite(x):
    """One that a list could stand for, but for its finally block (it runs when it is dropped)."""
    try:
        for k in range(4):
            yield x * k
    finally:
        LOG.append(x ** 3)


def _held_and_rebound(x):
    LOG.clear()
    it = counting(x)
    a = next(it) + next(it)
    it = counting(2.0 * x)  # the first one is dropped here: its finally runs
    b = next(it) + sum(LOG)
    return a * b + sum(LOG)


def _loop_with_break(x):
    LOG.clear()
    t = 0.0
    for v in counting(x):
        t += v
        if t > 2.0:
            break
    return t + sum(LOG) * x


def _next_of_a_call(x):
    LOG.clear()
    a = next(counting(x))
    return a * sum(LOG)


def _finally_read_while_iterating(x):
    LOG.clear()
    t = 0.0
    for v in finite(x):
        t += v * (1.0 + sum(LOG))  # (its finally runs after the last item, not before the first)
    return t + sum(LOG)


def _captured(x):
    log = []

    def g(s):
        try:
            while True:
                yield x * s
        finally:
            log.append(x * s * s)

    def f(y):
        it = g(y)
        first = next(it)
        it = None  # dropped: closed
        return first + sum(log)
    return f(2.0) * x


def _tuple_of_generators(x):
    LOG.clear()
    pair = tuple([counting(s * x) for s in (1.0, 2.0)])
    a = next(pair[0]) * next(pair[1])
    pair = None  # both dropped: closed, the last first
    return a + sum(LOG) ** 2


def _closed_as_advised(x):
    log = []

    def g(s):
        try:
            while True:
                yield x * s
        finally:
            log.append(x * s)
    d = {"a": g(2.0)}
    a = next(d["a"])
    d["a"].close()
    d["a"] = g(3.0)
    b = next(d["a"])
    d["a"].close()
    return a * b + sum(log)


def _escapes_without_cleanup_pending(x):
    def g(s):
        yield x * s  # suspended here, outside the try: closing runs nothing
        try:
            yield x
        except ValueError:
            yield -x
    d = {"a": g(2.0)}
    return next(d["a"]) * x


RIGHT = [_held_and_rebound, _loop_with_break, _next_of_a_call, _finally_read_while_iterating, _captured,
         _tuple_of_generators, _closed_as_advised, _escapes_without_cleanup_pending]


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__.lstrip("_"))
def test_a_dropped_generator_is_closed_where_cpython_closes_it(f):
    check_all_modes(f, 0.7)


def _stored_in_a_dict(x):
    log = []

    def g(s):
        try:
            k = 1.0
            while True:
                yield x * s * k
                k += 1.0
        finally:
            log.append(x * s)
    d = {"a": g(2.0)}
    a = next(d["a"])
    d["a"] = g(3.0)  # the first one is dropped here
    return a + next(d["a"]) + sum(log)


def _passed_to_a_function(x):
    def take(it):
        return next(it)
    LOG.clear()
    a = take(counting(x))  # dropped when take returns
    return a + sum(LOG)


class _Holder:
    pass


def _kept_in_an_attribute(x):
    log = []

    def g():
        with np.errstate(all="ignore"):
            while True:
                yield x
                log.append(x)
    h = _Holder()
    h.it = g()
    a = next(h.it)
    del h
    return a + sum(log)


REFUSED = [(_stored_in_a_dict, "g", "yield x * s * k"), (_passed_to_a_function, "counting", "yield x * k"),
           (_kept_in_an_attribute, "g", "yield x")]
MODES = {"grad": lambda f: yb.grad(f)(0.7), "jvp": lambda f: yb.jvp(f, (0.7,), (1.0,)),
         "hvp": lambda f: yb.hvp(f, (0.7,), (1.0,)), "hessian": lambda f: yb.hessian(f)(0.7)}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("f, name, line", REFUSED, ids=lambda v: v.__name__.lstrip("_") if callable(v) else "")
def test_a_generator_dropped_where_yuebing_cannot_see_is_refused_by_name(f, name, line, mode):
    with pytest.raises(TypeError, match=rf"(?s)the generator {name}\(\) dropped while suspended at a yield.*"
                                        rf"test_escaping_generators.py\", line \d+, in {name}\n    {re.escape(line)}\n"
                                        r"What to do: call the generator's close\(\)"):
        MODES[mode](f)


def test_a_refusal_leaves_no_watch_open():
    """After a refused pass, the next one is not refused for the generators of the one before."""
    with pytest.raises(TypeError):
        yb.grad(_stored_in_a_dict)(0.7)
    check_all_modes(_closed_as_advised, 0.7)


def _writes_its_argument(x, a):
    log = []

    def g(s):
        try:
            while True:
                yield x * s
        finally:
            log.append(x)
    a[0] = a[0] * x
    d = {"k": g(2.0)}
    v = next(d["k"])
    d["k"] = None  # dropped: its finally would run here
    return v + a[0] + sum(log)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "vjp", "prepared"])
def test_a_refusal_leaves_the_arguments_restored(mode):
    a = np.array([1.5, 2.0])
    calls = {"grad": lambda: yb.grad(_writes_its_argument)(0.7, a),
             "value_and_grad": lambda: yb.value_and_grad(_writes_its_argument)(0.7, a),
             "vjp": lambda: yb.vjp(_writes_its_argument, 0.7, a),
             "prepared": lambda: yb.prepare_gradient(_writes_its_argument, 0.7, a)(0.7, a)}
    for _ in range(2):  # (the second time through the compiled passes)
        with pytest.raises(TypeError, match=r"the generator g\(\) dropped"):
            calls[mode]()
        np.testing.assert_array_equal(a, [1.5, 2.0])


def _refused_on(a):
    """``_writes_its_argument`` on the caller's array ``a``, captured rather than passed."""
    return lambda x: _writes_its_argument(x, a)


NESTED = {"hvp": lambda a: yb.hvp(_refused_on(a), (0.7,), (1.0,)),
          "hessian": lambda a: yb.hessian(_refused_on(a))(0.7),
          "hessian of a vector": lambda a: yb.hessian(lambda x: _writes_its_argument(x[0] * x[1], a))(np.array([0.7, 1.1])),
          "grad in grad": lambda a: yb.grad(lambda x: yb.grad(_refused_on(a))(x))(0.7),
          "grad in jvp": lambda a: yb.jvp(lambda x: yb.grad(_refused_on(a))(x), (0.7,), (1.0,)),
          "grad in hessian": lambda a: yb.hessian(lambda x: yb.grad(_writes_its_argument)(x, a))(0.7),
          "hessian in grad": lambda a: yb.grad(lambda x: yb.hessian(_refused_on(a))(x))(0.7),
          "grad in grad, passed": lambda a: yb.grad(lambda x, b: yb.grad(_writes_its_argument)(x, b) * x)(0.7, a)}


@pytest.mark.parametrize("mode", list(NESTED))
def test_a_refusal_leaves_the_callers_array_restored_in_second_order_and_nested(mode):
    """Second order's passes (and a ``yb.grad`` inside another differentiation) put back what
    the function wrote, as a successful call does, before raising the refusal: an array the
    function captured was left written ([1.05, 2.0] for [1.5, 2.0])."""
    a = np.array([1.5, 2.0])
    for _ in range(2):  # (the second time through the compiled passes)
        with pytest.raises(TypeError, match=r"the generator g\(\) dropped"):
            NESTED[mode](a)
        np.testing.assert_array_equal(a, [1.5, 2.0])
