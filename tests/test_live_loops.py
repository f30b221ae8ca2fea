"""``for`` loops over containers the body changes follow Python: a list is iterated live
(elements appended during the loop are visited, a list that shrinks ends the loop early), an
array's later elements are read as they are when reached, and a dict or set that changes size
raises Python's ``RuntimeError``. Checked in every mode (``all_modes.check_all_modes``).
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

import numpy as np


def list_grows_in_loop(x):
    l = [x]
    t = 0.0
    for v in l:
        t += v
        if len(l) < 4: l.append(v * 2)
    return t


def list_shrinks_in_loop(x):
    l = [x, x * 2, x * 3, x * 4]
    t = 0.0
    for v in l:
        t += v * v
        l.pop()
    return t


def enumerate_grows(x):
    l = [x]
    t = 0.0
    for i, v in enumerate(l):
        t += v * i
        if len(l) < 3: l.append(v * v)
    return t


def reversed_shrinks(x):
    l = [x, 2.0, 3.0]
    t = 0.0
    for v in reversed(l):
        t = t * v + 1.0
        if len(l) > 1: l.pop()
    return t


def zip_with_growing_list(x):
    a = [x]
    b = [1.0, 2.0, 3.0]
    t = 0.0
    for u, w in zip(a, b):
        t += u * w
        a.append(u * x)
    return t


def array_written_ahead_in_loop(x):
    a = np.array([x, 2 * x, 3 * x])
    t = 0.0
    for v in a:
        a[2] = v * 5.0
        t += v
    return t


def growing_list_with_break(x):
    l = [x, 2.0]
    t = 0.0
    for v in l:
        if v > 100.0:
            break
        l.append(v * 3.0)
        t += v
    return t


def comprehension_over_literal_list(x):
    out = [v * 2.0 for v in [x, x * x]]
    return out[0] + out[1]


def growing_list_with_else(x):
    l = [x]
    t = 0.0
    for v in l:
        t += v
        if len(l) < 4: l.append(v * 2)
    else:
        t = t * 2.0
    return t


CASES = [list_grows_in_loop, list_shrinks_in_loop, enumerate_grows, reversed_shrinks, zip_with_growing_list, array_written_ahead_in_loop, growing_list_with_break, comprehension_over_literal_list, growing_list_with_else]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_loops_over_changing_containers_in_every_mode(f):
    check_all_modes(f, 1.5)


def test_growing_list_from_the_issue():
    value, grad = yb.value_and_grad(list_grows_in_loop)(1.5)
    assert value == list_grows_in_loop(1.5) == 22.5
    assert grad == pytest.approx(15.0)  # x + 2x + 4x + 8x


def dict_grows(x):
    d = {"a": x}
    for k in d:
        d[k + "b"] = x
    return d["a"]


def dict_shrinks_through_values(x):
    d = {"a": x, "b": 2.0}
    for v in d.values():
        d.pop("b", None)
    return d["a"]


def set_grows(x):
    s = {1, 2}
    t = x
    for v in s:
        s.add(v + 10)
        t = t * x
    return t


def dict_values_rewritten(x):
    d = {"a": x, "b": 2.0}
    for k, v in d.items():
        d[k] = v * x  # the same keys: Python allows it
    return d["a"] + d["b"]


def dict_grows_then_breaks(x):
    d = {"a": x}
    for k in d:
        d["z"] = 1.0
        break  # no further next(): Python raises nothing
    return d["a"] * x


@pytest.mark.parametrize("f, message", [
    (dict_grows, "dictionary changed size during iteration"),
    (dict_shrinks_through_values, "dictionary changed size during iteration"),
    (set_grows, "Set changed size during iteration"),
])
def test_dict_or_set_changing_size_raises_as_python(f, message):
    with pytest.raises(RuntimeError, match=message):
        f(1.5)
    for run in (lambda: yb.grad(f)(1.5), lambda: yb.jvp(f, (1.5,), (1.0,)), lambda: yb.hvp(f, (1.5,), (1.0,))):
        with pytest.raises(RuntimeError, match=message):
            run()


@pytest.mark.parametrize("f", [dict_values_rewritten, dict_grows_then_breaks], ids=lambda f: f.__name__)
def test_dict_loops_python_allows(f):
    check_all_modes(f, 1.5)
