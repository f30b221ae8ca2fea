"""An exception raised after differentiable work in a user comparison dunder (``a < b``, a
reflected ``b > a``, the comparisons of ``sorted``) and caught in the differentiated function
(issue 13): the operator protocol routes the dunder's completed work to the handler
(``_call_dunder`` in transform/runtime.py and second_order.py), as a direct call's is. It was
refused in reverse mode and second order. Every mode against central differences, the
caller's array restored."""
from __future__ import annotations

import numpy as np


from .modes import check_every_mode
from .restoring import check_every_mode_restoring

X = 0.7


class Item:
    def __init__(self, v, log):
        self.v, self.log = v, log

    def __lt__(self, other):
        w = other.v if isinstance(other, Item) else other
        self.log.append(self.v * w)  # work, then the raise
        if len(self.log) > 1:
            raise ValueError("enough comparisons")
        return self.v < w


def compared_directly(x):
    log = []
    a, b = Item(x, log), Item(2.0 * x, log)
    try:
        a < b
        a < b
    except ValueError:
        return sum(log) * x
    return 0.0


def compared_reflected(x):
    log = []
    a = Item(x * x, log)
    try:
        3.0 * x > a  # float's __gt__ declines: Item.__lt__(a, 3.0 * x)
        3.0 * x > a
    except ValueError:
        return sum(log) + x
    return 0.0


def compared_by_sorted(x):
    log = []
    items = [Item(x, log), Item(2.0 * x, log), Item(0.5 * x, log)]
    try:
        sorted(items)
    except ValueError:
        return sum(log) * x
    return 0.0


def test_a_dunder_raising_after_work_in_every_mode():
    for f in (compared_directly, compared_reflected, compared_by_sorted):
        check_every_mode(f, X)


class Scaled:
    def __init__(self, buffer):
        self.buffer = buffer

    def __lt__(self, other):
        self.buffer *= 2.0  # a write into the caller's array, then the raise
        raise ValueError("not comparable")


def writes_the_callers_array(buffer):
    try:
        Scaled(buffer) < Scaled(buffer)
    except ValueError:
        return float(np.sum(buffer ** 2))
    return 0.0


def test_a_dunder_writing_the_callers_array_is_followed_and_undone():
    check_every_mode_restoring(writes_the_callers_array, np.array([0.3, -1.1]))
