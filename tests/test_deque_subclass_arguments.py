"""A subclass of ``collections.deque`` passed into the differentiated function that adds only
methods of new names (``__slots__ = ()``): its items are all it holds, so its tangent is a deque's
(a deque of the items' tangents with its ``maxlen``: ``tangents/deques.is_plain_deque_type``), its
own methods are differentiated as Python code, in every mode. A subclass with fields of its own
(an instance dict or slots) or replacing a method of ``deque`` stays refused by name, as does
making a new deque of the subclass from one (``w.copy()``, ``w + e``, ``w * n``), which Python
makes of the subclass and the deque definitions would make a ``deque``."""
from __future__ import annotations

import copy
from collections import deque

import numpy as np
import pytest

import yuebing as yb

from .test_deque_arguments import check_modes, with_state_after


class Window(deque):
    __slots__ = ()

    def mean(self):
        return sum(self) / len(self)

    def push(self, v):
        self.append(v)

    def spread(self):
        return max(self) - min(self)


class Recent(Window):
    """A subclass of the subclass, still with methods of new names only."""
    __slots__ = ()

    def last_two(self):
        return self[-1] * self[-2]


def pushes_and_reads(w, x):
    w.push(x * x)
    w.append(np.sin(x))
    s = w.mean() + w[0] * w[-1] + w.spread()
    for v in w:
        s = s + v * v
    return s * x + np.sum(np.asarray(w)) * w.popleft()


def through_the_subclass_of_the_subclass(w, x):
    w.appendleft(x)
    w.rotate(1)
    return w.last_two() * w.mean() + sum(w)


@pytest.mark.parametrize("maxlen", [None, 4])
def test_a_subclass_adding_methods_in_every_mode(maxlen):
    check_modes(with_state_after(pushes_and_reads, [0.3, -1.2, 0.7, 2.0, 0.4]),
                Window([0.5, 1.5, 2.0], maxlen=maxlen), 0.7)


def test_a_subclass_of_the_subclass_in_every_mode():
    check_modes(with_state_after(through_the_subclass_of_the_subclass, [1.1, -0.4, 0.6]),
                Recent([0.5, -1.5, 2.0], maxlen=3), 0.9)


def test_the_gradient_is_a_deque_with_the_maxlen():
    w = Window([0.5, 1.5, 2.0], maxlen=4)
    grads = yb.grad(pushes_and_reads, argnums=(0, 1))(w, 0.7)
    assert type(grads[0]) is deque and grads[0].maxlen == 4
    assert type(w) is Window and list(w) == [0.5, 1.5, 2.0]


def _on_a_new_window(derivative, x):
    """``derivative`` (yb.grad, yb.hessian) of ``pushes_and_reads`` in ``x`` at a window made
    outside the differentiated function (it changes it)."""
    w = Window([0.5, 1.5, 2.0], maxlen=4)
    return derivative(lambda y: pushes_and_reads(w, y))(x)


def test_the_hessian_matches_differences_of_the_gradient():
    slope = (_on_a_new_window(yb.grad, 0.7 + 1e-5) - _on_a_new_window(yb.grad, 0.7 - 1e-5)) / 2e-5
    assert _on_a_new_window(yb.hessian, 0.7) == pytest.approx(slope, rel=1e-5, abs=1e-5)


class WithFields(deque):
    pass


class ReplacingAppend(deque):
    __slots__ = ()

    def append(self, v):
        super().append(2.0 * v)


@pytest.mark.parametrize("cls", [WithFields, ReplacingAppend])
def test_a_subclass_with_fields_or_a_replaced_method_is_refused_by_name(cls):
    with pytest.raises(TypeError, match=f"{cls.__name__}, a subclass of collections.deque"):
        yb.grad(lambda d: d[0] * 2.0)(cls([1.0]))


@pytest.mark.parametrize("make", [lambda w: w.copy(), copy.copy, lambda w: w + w, lambda w: w * 2])
def test_a_new_deque_made_from_one_is_refused_by_name(make):
    def f(w, x):
        return sum(make(w)) * x

    for run in (lambda: yb.grad(f, argnums=(0, 1))(Window([1.0, 2.0]), 0.7),
                lambda: yb.jvp(f, (Window([1.0, 2.0]), 0.7), (deque([0.0, 0.0]), 1.0)),
                lambda: yb.hvp(f, (Window([1.0, 2.0]), 0.7), (deque([0.0, 0.0]), 1.0))):
        with pytest.raises(TypeError, match="cannot differentiate making a new Window from a Window"):
            run()
