"""A set's iterator kept and stepped after the set changed size raises CPython's ``RuntimeError:
Set changed size during iteration`` in every mode (``ir/generators.SequenceIterator``); it walked
a snapshot of the set instead (the old elements, silently). Values and derivatives of the
walks that do not raise are checked in every mode against central differences."""
import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode


def grown_after_next(x):
    s = {x[0], x[1] * 2.0}
    it = iter(s)
    first = next(it)
    s.add(x[0] * 3.0)
    return first * x[1] + sum(it)


def grown_before_sum(x):
    s = {x[0], x[1]}
    it = iter(s)
    s.discard(x[0])
    return sum(it)


def zipped_after_growth(x):
    s = {x[0], x[1]}
    pairs = zip(iter(s), [1.0, 2.0])
    s.add(5.0)
    return sum(a * b for a, b in pairs)


@pytest.mark.parametrize("f", [grown_after_next, grown_before_sum, zipped_after_growth], ids=lambda f: f.__name__)
def test_a_changed_set_raises_as_in_cpython(f):
    x = np.array([0.3, 0.7])
    with pytest.raises(RuntimeError, match="Set changed size during iteration"):
        f(x.copy())
    for run in (lambda: yb.grad(f)(x.copy()), lambda: yb.jvp(f, (x.copy(),), (np.ones(2),)),
                lambda: yb.hvp(f, (x.copy(),), (np.ones(2),))):
        with pytest.raises(RuntimeError, match="Set changed size during iteration"):
            run()


def walked_unchanged(x):
    s = {x[0] * x[1], np.sin(x[1]), 2.0}
    it = iter(s)
    first = next(it)
    return first * first + sum(v * v for v in it) + x[0]  # (whatever order the set walks in)


def exhausted_then_grown(x):  # an exhausted iterator checks nothing, as CPython's
    s = {x[0], x[1] * x[1]}
    it = iter(s)
    total = sum(it)
    s.add(4.0)
    return total * x[0] + sum(it)


@pytest.mark.parametrize("f", [walked_unchanged, exhausted_then_grown], ids=lambda f: f.__name__)
def test_walks_that_do_not_raise(f):
    check_every_mode(f, np.array([0.3, 0.7]))
