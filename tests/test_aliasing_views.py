"""Views whose entries repeat an array's elements (``np.broadcast_to``, ``sliding_window_view``,
``as_strided``): read in every mode against central differences, and a write into the array
after the view was made, read through the view, refused in reverse mode and second order (the
view's cotangent is gathered where it was made: it went silently to the old values) and followed
in forward mode (the view's tangent is the same view of the array's tangent)."""
import numpy as np
import pytest
import scipy.linalg

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2])
as_strided = np.lib.stride_tricks.as_strided


def _rolling_windows(x):
    v = np.concatenate([x, x ** 2])
    w = as_strided(v, shape=(4, 3), strides=(v.strides[0], v.strides[0]))
    return np.sum(w.mean(axis=1) ** 2) + np.sum(w @ np.array([0.2, 0.5, 0.3]))


def _hankel(x):
    return np.sum(scipy.linalg.hankel(x) @ x) + np.sum(scipy.linalg.hankel(x, x[::-1] ** 2) ** 2)


def _strided_rows(x):
    m = np.outer(x, x + 1.0)
    return np.sum(as_strided(m, shape=(2, 2), strides=(m.strides[0], m.strides[1])) ** 3)


@pytest.mark.parametrize("f", [_rolling_windows, _hankel, _strided_rows])
def test_strided_views_are_differentiated(f):
    check_every_mode(f, X)


def _written_after_windows(x):
    v = np.concatenate([x, x])
    w = np.lib.stride_tricks.sliding_window_view(v, 2)
    v[0] = x[1] ** 2  # the windows see the new value
    return np.sum(w ** 2)


def _written_after_broadcast(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    v[1:] += x[:2] ** 2
    return np.sum(w ** 2)


def _written_after_strided(x):
    v = np.concatenate([x, x])
    w = as_strided(v, shape=(3, 2), strides=(8, 8))
    v[0] = x[1] ** 2
    return np.sum(w ** 2)


WRITTEN_AFTER = [_written_after_windows, _written_after_broadcast, _written_after_strided]


# A write of the very values already there: comparing values cannot see it, so the write rules note
# it. In X, x[1] * 2.0 == x[0]: each function writes values computed from other variables over equal
# ones, and what the view reads after the write must be differentiated as those variables.
def _same_values_item(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    v[0] = x[1] * 2.0
    return np.sum(w ** 2)


def _same_values_slice(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    v[:1] = x[1:2] * 2.0
    return np.sum(w ** 2)


def _same_values_out(x):
    v = np.array([x[1] * 2.0, x[1], x[2]])
    w = np.lib.stride_tricks.sliding_window_view(v, 2)
    np.multiply(x, 1.0, out=v)
    return np.sum(w ** 3)


def _same_values_inplace(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    v *= x[1] * 2.0 / x[0]  # 1.0
    return np.sum(w ** 2)


def _same_values_fill(x):
    v = np.full(3, x[0])
    w = np.broadcast_to(v, (2, 3))
    v.fill(x[1] * 2.0)
    return np.sum(w * x)


def _same_values_put(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    np.put(v, [0], x[1] * 2.0)
    return np.sum(w ** 2)


def _same_values_add_at(x):
    v = x * 1.0
    w = np.broadcast_to(v, (2, 3))
    np.add.at(v, [0], x[1] * 2.0 - x[0])  # adds 0.0
    return np.sum(w ** 2)


SAME_VALUES = [_same_values_item, _same_values_slice, _same_values_out, _same_values_inplace, _same_values_fill,
               _same_values_put, _same_values_add_at]


@pytest.mark.parametrize("f", WRITTEN_AFTER + SAME_VALUES)
@pytest.mark.parametrize("run", [lambda f: yb.grad(f)(X.copy()), lambda f: yb.hvp(f, (X.copy(),), (X.copy(),))],
                         ids=["grad", "hvp"])
def test_a_write_after_a_repeating_view_is_refused(f, run):
    with pytest.raises(RuleArgumentError, match="write into an array after this call made a view of it"):
        run(f)


@pytest.mark.parametrize("f", WRITTEN_AFTER + SAME_VALUES)
def test_forward_mode_sees_the_write_through_the_view(f):
    v = np.array([0.3, -0.5, 0.8])
    expected = (f(X + 1e-6 * v) - f(X - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(yb.jvp(f, (X.copy(),), (v,))[1], expected, rtol=1e-6)


def test_a_repeating_view_of_an_array_not_written_after_passes():
    def f(x):
        v = x * 2.0
        v[0] = x[2] ** 2  # written before the view: nothing to refuse
        return np.sum(np.broadcast_to(v, (4, 3)) ** 2)

    check_every_mode(f, X)


def test_as_strided_views_are_read_only():
    def f(x):
        w = as_strided(x * 1.0, shape=(2, 2), strides=(8, 8))
        w[0, 0] = 1.0
        return np.sum(w)

    with pytest.raises(ValueError, match="read-only"):
        yb.grad(f)(X.copy())


def test_the_same_values_premise():
    """SAME_VALUES (refused and followed by the tests above) write values equal to those there."""
    assert X[1] * 2.0 == X[0]


def test_a_write_into_another_array_after_a_repeating_view_passes():
    def f(x):
        v = x * 1.0
        other = np.zeros(3)
        w = np.broadcast_to(v, (2, 3))
        other[:] = x ** 2  # shares no memory with v
        np.multiply(other, 2.0, out=other)
        other[0] = x[2]
        return np.sum(w ** 2) + np.sum(other)

    check_every_mode(f, X)
