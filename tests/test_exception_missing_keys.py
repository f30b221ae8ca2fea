"""An exception raised after differentiable work by a defaultdict's ``default_factory``, run for a
missing key, and caught in the function: the item read's rule passes the factory's partial work
to the handler as the call's own (``transform/exceptions.py``'s frames, ``transform/lifting.py``
in second order). It was refused: "raised in _default_inserted after it had done differentiable
work and caught here". Reverse, forward and second order against central differences; the
caller's array restored."""
from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest

from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7


def factory_raising_after_work(x):
    log = [x]

    def factory():
        log.append(log[-1] * x)  # (the work done before the exception)
        if len(log) > 2:
            raise ValueError("too many defaults")
        return log[-1] * 2.0

    d = collections.defaultdict(factory)
    total = 0.0
    for k in range(3):
        try:
            total = total + d[k]
        except ValueError:
            total = total + np.sin(x)
    return total + log[-1] * x + len(d)


def factory_writing_an_array_then_raising(x):
    acc = np.array([x, 2.0 * x])
    calls = [0]

    def factory():
        calls[0] += 1
        acc[calls[0] % 2] = acc[calls[0] % 2] * np.exp(x)  # (written before the exception)
        if calls[0] % 2:
            raise ArithmeticError("odd call")
        return acc.sum()

    d = collections.defaultdict(factory)
    total = 0.0
    for k in ["a", "b", "c", "b"]:
        try:
            total = total + d[k] * x
        except ArithmeticError:
            total = total - x
    return total + acc[0] * acc[1]


@pytest.mark.parametrize("f", [factory_raising_after_work, factory_writing_an_array_then_raising], ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    check_every_mode(f, X)


def _raising_after_work(apply):
    """A function catching what ``apply(key, x)`` raises after ``key`` did work on its second call."""
    def f(x):
        log = [x]

        def key(v):
            log.append(log[-1] * x)
            if len(log) > 2:
                raise ValueError("stop")
            return v * log[-1]

        try:
            r = apply(key, x)
        except ValueError:
            r = np.cos(x)
        return r + log[-1] * x

    f.__name__ = apply.__name__
    return f


def max_with_a_key(key, x):
    return max([x, 2 * x, 3 * x], key=key)


def sorted_with_a_key(key, x):
    return sorted([x, 2 * x, 3 * x], key=key)[0]


def filtered(key, x):
    return list(filter(key, [x, 2 * x, 3 * x]))[0]


def accumulated(key, x):
    return list(itertools.accumulate([x, 2 * x, 3 * x], lambda a, b: key(a) + b))[-1]


def starmapped(key, x):
    return sum(itertools.starmap(key, [(x,), (2 * x,), (3 * x,)]))


def over_axes(key, x):
    return float(np.apply_over_axes(lambda a, axis: key(a), np.array([[x, 2 * x]]), [0]).sum())


def from_function(key, x):
    return float(np.fromfunction(lambda i: key(i * x), (3,)).sum())


ROUTED = [max_with_a_key, sorted_with_a_key, filtered, accumulated, starmapped, over_axes, from_function]


@pytest.mark.parametrize("apply", ROUTED, ids=lambda f: f.__name__)
def test_other_rules_calling_a_function_route_its_work(apply):
    check_every_mode(_raising_after_work(apply), X)


def factory_writing_the_callers_array(v):
    def factory():
        v[0] = v[0] * v[1]  # (the caller's array, written before the exception)
        raise LookupError("no default")

    d = collections.defaultdict(factory)
    try:
        d["missing"]
    except LookupError:
        pass
    return float(np.sum(v ** 3))


def test_the_callers_array_written_by_a_factory_that_raised_is_restored():
    check_every_mode_restoring(factory_writing_the_callers_array, np.array([0.4, -1.3]))
