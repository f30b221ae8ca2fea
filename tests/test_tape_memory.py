"""What a long scalar loop keeps on the tape (issue 16, item 6): the peak memory a gradient call
allocates, per loop step, measured with tracemalloc at n = 10^5, for a ``for`` loop over a range
(a float loop: its residuals are float64 in columns sized to the range), a ``while`` loop (a float
while loop: its integer counter and test are plain code, its residuals float64 appended to a
growing column) and a loop calling a small helper (a float formula: inlined into the float loop);
and their gradients against central differences, on the float loops' path and the generic one."""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import yuebing as yb

STEPS = 100_000


def for_loop(x, a, b, n):
    for i in range(n):
        x = x * a + b
    return x


def while_loop(x, a, b, n):
    i = 0
    while i < n:
        x = x * a + b
        i += 1
    return x


def while_float_test(x, a, b, n):
    """A while loop whose test compares a float the body computes (trip count from the values)."""
    k = 0
    while x < b and k < n:
        x = x * a + b
        k += 1
    return x * a


def while_read_after(x, a, b, n):
    """The counter read after the loop, and a value assigned only in the loop."""
    i = 0
    y = 0.0
    while i < n:
        y = x * b
        x = x * a - y * 0.5
        i = i + 1
    return x + y * 2.0 + i


def helper(x, a, b):
    return x * a + b


def call_loop(x, a, b, n):
    for i in range(n):
        x = helper(x, a, b)
    return x


def array_read_loop(x, a):
    y = 0.0
    for i in range(len(x)):
        y = y * a + np.sin(x[i])
    return y


# bytes per step each form may keep; a Python float on a list costs 32 (the pointer and the object)
BOUNDS = {
    for_loop: 10,  # one float64 per step (x before the update), in a column made before the loop
    while_loop: 24,  # a float while loop: one float64 per step, in a column that grows (8 bytes a float)
    call_loop: 10,  # the helper's arithmetic inlined: one float64 per step, as for_loop
}


def bytes_per_step(gradient, args: tuple, steps: int) -> float:
    """Peak traced bytes of one ``gradient(*args)`` call, per loop step (after a warm-up call)."""
    gradient(*args[:-1], 10)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        gradient(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - before) / steps


@pytest.mark.parametrize("loop", list(BOUNDS), ids=lambda f: f.__name__)
def test_bytes_per_step(loop):
    gradient = yb.value_and_grad(loop, argnums=(0, 1, 2))
    per_step = bytes_per_step(gradient, (0.5, 0.9, 0.1, STEPS), STEPS)
    assert per_step < BOUNDS[loop], f"{loop.__name__}: {per_step:.1f} bytes per step"


def test_float_loop_keeps_one_float64_per_residual():
    """A float loop reading an array: x[i] (sin's partial needs it, not sin's value) and y (the
    product's partial): two float64 per step, not a tuple of NumPy floats."""
    x = np.random.default_rng(0).standard_normal(STEPS)
    gradient = yb.value_and_grad(array_read_loop, argnums=(0, 1))
    gradient(x[:10], 0.5)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        gradient(x, 0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 8 bytes of gradient per element, 2 floats of residuals (columns sized before the loop: no slack)
    assert (peak - before) / STEPS < 8 + 2 * 8 + 2


def central_difference(f, args: tuple, k: int, h: float = 1e-6) -> float:
    up, down = list(args), list(args)
    up[k] += h
    down[k] -= h
    return (f(*up) - f(*down)) / (2 * h)


LOOPS = list(BOUNDS) + [while_float_test, while_read_after]


@pytest.mark.parametrize("loop", LOOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 7, np.int64(3), 2.5])
def test_loop_gradients_match_finite_differences(loop, n):
    """Ints take the float loops; an np.int64 or float bound takes the generic path (the range
    refuses a float bound: not the while loops); both must match central differences."""
    args = (0.5, 0.9, 0.1, n)
    try:
        expected = loop(*args)
    except TypeError:
        return  # range(2.5): the function itself fails
    value, gradient = yb.value_and_grad(loop, argnums=(0, 1, 2))(*args)
    assert value == expected
    for k in range(3):
        assert gradient[k] == pytest.approx(central_difference(loop, args, k), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("loop", [while_loop, while_float_test, while_read_after], ids=lambda f: f.__name__)
def test_while_float_loop_on_numpy_floats_matches_finite_differences(loop):
    """NumPy float64 inputs take the float while loop too (their arithmetic stays NumPy's)."""
    args = (np.float64(0.5), np.float64(0.9), np.float64(0.1), 5)
    value, gradient = yb.value_and_grad(loop, argnums=(0, 1, 2))(*args)
    assert value == loop(*args)
    for k in range(3):
        assert gradient[k] == pytest.approx(central_difference(loop, args, k), rel=1e-6, abs=1e-8)


def test_while_loops_take_the_float_loop():
    """The generated forward pass of each while loop has the float loop (not only the generic path)."""
    for loop in (while_loop, while_float_test, while_read_after):
        assert "# float loop" in yb.show(loop), loop.__name__


def test_array_read_loop_gradient_matches_finite_differences():
    x = np.random.default_rng(1).standard_normal(6)
    value, (gx, ga) = yb.value_and_grad(array_read_loop, argnums=(0, 1))(x, 0.7)
    assert value == pytest.approx(array_read_loop(x, 0.7))
    h = 1e-6
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        assert gx[i] == pytest.approx((array_read_loop(x + e, 0.7) - array_read_loop(x - e, 0.7)) / (2 * h), rel=1e-6)
    assert ga == pytest.approx((array_read_loop(x, 0.7 + h) - array_read_loop(x, 0.7 - h)) / (2 * h), rel=1e-6)


def test_float_loop_division_by_a_numpy_zero_gives_inf_not_an_error():
    """Residuals read back from the float64 buffer are NumPy floats when the loop had NumPy
    values, so the reverse pass divides as the forward pass did (inf, not ZeroDivisionError)."""
    def f(x, d):
        y = 0.0
        for i in range(len(x)):
            y = y + x[i] / d[i]
        return y

    x, d = np.array([1.0, 2.0]), np.array([1.0, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        value, (gx, gd) = yb.value_and_grad(f, argnums=(0, 1))(x, d)
    assert value == np.inf
    assert gx[1] == np.inf and gd[1] == -np.inf
    assert gx[0] == 1.0 and gd[0] == -1.0
