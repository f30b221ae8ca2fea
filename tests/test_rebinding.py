"""Rebinding a name that the same statement reads: parameters and locals alike, in every mode.

``x = x[0]`` used to push the *new* fdata of ``x`` (an inline template bound the target before
recording its operand), and ``xs = [2 * v for v in xs]`` built the list into ``xs`` before
reading it. Each case is checked against the plain call and central finite differences in
reverse, forward and second order (``all_modes.check_all_modes``).
"""
from __future__ import annotations

import numpy as np
import pytest

from .all_modes import check_all_modes

VECTOR = np.array([0.5, 1.0, 1.5])


def index_rebinds_parameter(x):
    x = x[0]
    return np.sin(x)


def index_rebinds_local(x):
    y = x * 1.0
    y = y[1]
    return np.sin(y) * y


def slice_then_index(x):
    x = x[1:]
    x = x[0]
    return x * x


def list_index_rebinds(x):
    x = list(x)
    x = x[2]
    return x * x


def comprehension_over_itself(xs):
    xs = [v * 2.0 for v in xs]
    return xs[0] * xs[1] + xs[2]


def comprehension_with_filter_over_itself(xs):
    xs = [v * v for v in xs if v > 0.7]
    return sum(xs)


def dict_display_reads_itself(x):
    d = {"a": x[0], "b": x[1]}
    d = {"a": d["b"] * 2.0, "b": d["a"]}
    return d["a"] * d["b"]


def generator_over_itself(x):
    x = list(x)
    x = sum(v * v for v in x)
    return x


def dict_comprehension_over_itself(x):
    d = {"a": x[0], "b": x[2]}
    d = {k: v * v for k, v in d.items()}
    return d["a"] + d["b"]


def or_reads_itself(x):
    y = x[0]
    y = x[1] * 0.0 or y
    return y * y


def and_reads_itself(x):
    y = x[0]
    y = y and y * 3.0
    return y * y


def chained_comparison_reads_itself(x):
    y = x[2]
    flag = y
    flag = 0.5 < flag < 1.2
    return x[0] * 2.0 if flag else x[1] * 3.0


def unpack_into_parameter(x):
    x, y = x[0], x[1]
    return x * y


def unpack_swaps(x):
    a, b = x[0], x[1] * 2.0
    a, b = b, a
    return a * a + b


def augmented_assignments(x):
    x = x * x
    x += x
    x *= 2.0
    return np.sum(x)


def for_target_is_parameter(x):
    total = 0.0
    for x in x:
        total = total + x * x
    return total


def delete_then_rebind(x):
    y = x
    del x
    x = y * 3.0
    return np.sum(x * x)


def array_templates_rebind(x):
    x = x * 2.0
    x = np.sin(x)
    x = x ** 2
    x = x * x
    x = -x
    x = np.exp(x)
    return np.sum(x)


def array_rebind_through_mask(x):
    m = (x > 0.7).astype(int)
    x = x * m
    return np.sum(x * x)


def matmul_rebinds(x):
    a = np.outer(x, x)
    a = a @ a
    return np.sum(a)


def float_block_rebinds(x):
    y = x[0]
    y = y * 2.0
    y = y + 1.0
    y = y * y
    y = y / 3.0
    y = y - 0.5
    y = y * y
    y = -y
    return y


def float_loop_rebinds(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i]
        s = s * 0.5
    return s


def float_functions_rebind(x):
    y = x[1]
    y = np.sin(y)
    y = np.exp(y)
    y = np.sqrt(y)
    return y


CASES = [
    index_rebinds_parameter, index_rebinds_local, slice_then_index, list_index_rebinds,
    comprehension_over_itself, comprehension_with_filter_over_itself, dict_display_reads_itself,
    generator_over_itself, dict_comprehension_over_itself, or_reads_itself,
    and_reads_itself, chained_comparison_reads_itself, unpack_into_parameter, unpack_swaps,
    augmented_assignments, for_target_is_parameter, delete_then_rebind, array_templates_rebind,
    array_rebind_through_mask, matmul_rebinds, float_block_rebinds, float_loop_rebinds,
    float_functions_rebind,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_rebinding_in_every_mode(f):
    check_all_modes(f, VECTOR.copy())


def comprehension_on_list_argument(xs):
    xs = [v * 2.0 for v in xs]
    return xs[0] * xs[1]


def test_comprehension_assigned_to_its_list_argument():
    import yuebing as yb

    value, grad = yb.value_and_grad(comprehension_on_list_argument)([1.0, 2.0])
    assert value == comprehension_on_list_argument([1.0, 2.0]) == 8.0
    np.testing.assert_allclose(grad, [8.0, 4.0])  # d(4ab)/da = 4b, d/db = 4a


def chained_comparison_value(x):
    flag = x
    flag = 0.5 < flag < 2.0
    return float(flag) * x


@pytest.mark.parametrize("x", [1.0, 3.0, 0.2])
def test_chained_comparison_rebinding_keeps_python_value(x):
    check_all_modes(chained_comparison_value, x)
