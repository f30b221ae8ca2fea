"""Cycle-safe, aliasing-aware structural copy and equality."""
import numpy as np
import pytest

from yuebing.testing import assert_structurally_equal, compare, structural_copy, structurally_equal
from yuebing.testing.strategies import Box


def test_copy_of_cycle_is_a_new_cycle():
    x = [1.0]
    x.append(x)
    y = structural_copy(x)
    assert y is not x and y[1] is y
    assert structurally_equal(x, y)


def test_copy_keeps_shared_sub_objects():
    shared = Box(np.ones(2))
    x = {"a": shared, "b": shared, "c": [shared]}
    y = structural_copy(x)
    assert y["a"] is y["b"] is y["c"][0] and y["a"] is not shared
    assert y["a"].value is not shared.value


def test_copy_keeps_views():
    base = np.arange(6.0)
    x = [base, base[2:], base[::-1]]
    y = structural_copy(x)
    assert structurally_equal(x, y)
    y[0][3] = -1.0
    assert y[1][1] == -1.0 and y[2][2] == -1.0 and base[3] == 3.0


def test_copy_of_int_array_views():
    base = np.arange(6)
    y = structural_copy((base, base[1:]))
    y[0][1] = 99
    assert y[1][0] == 99


def test_equality_detects_value_change_with_path():
    x = {"w": [1.0, np.zeros(3)]}
    y = structural_copy(x)
    y["w"][1][2] = 1e-3
    assert compare(x, y).startswith("x['w'][1]: array values differ, first at index (2,)")
    assert structurally_equal(x, y, atol=1e-2)


def test_equality_detects_broken_aliasing():
    shared = [1.0]
    x = [shared, shared]
    y = [[1.0], [1.0]]
    assert "aliasing differs" in compare(x, y)
    assert "aliasing differs" in compare(y, x)


def test_equality_detects_broken_view():
    base = np.arange(4.0)
    x = [base, base[1:]]
    y = [base.copy(), base[1:].copy()]
    assert "view relation differs" in compare(x, y)


def test_equality_detects_type_and_key_changes():
    assert "type" in compare([1.0], [np.float32(1.0)])
    assert "keys" in compare({"a": 1.0}, {"b": 1.0})
    b1, b2 = Box(1.0), Box(1.0)
    b2.extra = 2.0
    assert "keys" in compare(b1, b2)


def test_equality_nan_equals_nan():
    assert structurally_equal([float("nan"), np.array([np.nan])], [float("nan"), np.array([np.nan])])


def test_assert_structurally_equal_message():
    with pytest.raises(AssertionError, match=r"restored: x\[0\]: 1.0 != 2.0"):
        assert_structurally_equal([1.0], [2.0], what="restored")


def test_deep_copy_and_compare_beyond_recursion_limit():
    x = [0.0]
    for _ in range(10_000):
        x = [x]
    y = structural_copy(x)
    assert structurally_equal(x, y)
