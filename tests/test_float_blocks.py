"""Float blocks (transform/float_blocks.py): straight-line float arithmetic runs as one unit when
its inputs are floats, and statement by statement otherwise; both give the derivatives of the
same function."""
import numpy as np
import pytest

import yuebing as yb


def formula(x, a):
    y = x * a
    z = y + 2.0
    w = z * z - x / a
    v = -w ** 3
    u = v * 0.5 + y
    t = u / (x + 1.0)
    s = t * a - 3 * x ** 2 + x ** 1 + a ** 0
    return s


def reassigned(x, a):
    y = x
    for _ in range(2):
        y = y * a
        y = y + x
        y = y * y
        y = y - a
        y = y / 3.0
        y = y * 0.5
        y = y + 1.0
    return y


def central(f, args, i, h=1e-6):
    plus, minus = list(args), list(args)
    plus[i] = plus[i] + h
    minus[i] = minus[i] - h
    return (f(*plus) - f(*minus)) / (2 * h)


@pytest.mark.parametrize("f", [formula, reassigned])
def test_float_block_gradients_match_finite_differences(f):
    args = (0.7, 1.3)
    assert "float block" in yb.show(f)
    g = yb.grad(f, argnums=(0, 1))(*args)
    for i in range(2):
        assert g[i] == pytest.approx(central(f, args, i), rel=1e-6)


def test_the_fallback_handles_arrays():
    x, a = np.array([0.7, 0.2]), np.array([1.3, 0.9])
    g = yb.grad(lambda x, a: np.sum(formula(x, a)), argnums=(0, 1))(x, a)
    for i, arg in enumerate((x, a)):
        for k in range(2):
            e = np.zeros(2)
            e[k] = 1e-6
            args = [x, a]
            plus = np.sum(formula(*[v + e if j == i else v for j, v in enumerate(args)]))
            minus = np.sum(formula(*[v - e if j == i else v for j, v in enumerate(args)]))
            assert g[i][k] == pytest.approx((plus - minus) / 2e-6, rel=1e-6)


def test_float_block_derivatives_are_exact_in_forward_and_second_order():
    # the block is a reverse-mode optimisation: jvp and hvp see the same function
    assert yb.jvp(formula, (0.7, 1.3), (1.0, 0.0))[1] == pytest.approx(central(formula, (0.7, 1.3), 0), rel=1e-6)
    _, _, (hx, ha) = yb.hvp(formula, (0.7, 1.3), (1.0, 0.0))
    gx = lambda x: yb.grad(formula)(x, 1.3)  # noqa: E731
    assert hx == pytest.approx((gx(0.7 + 1e-5) - gx(0.7 - 1e-5)) / 2e-5, rel=1e-5)


# ---------------------------------------------------------------- float loops

import math  # noqa: E402


def running_sum(x):
    y = 0.0
    for i in range(len(x)):
        y += x[i]
    return y


def weighted_terms(x, z, w, c):
    s = 0.0
    p = 1.0
    last = c
    for i in range(len(x)):
        j = i
        last = np.exp(x[j]) * w - z[i] / c
        s = s + last * last + math.sqrt(z[j] * z[j] + 1.0)
        p = p * (1.0 + 0.1 * x[i])
    return s + p * last


def reads_nothing_after(x, w):
    t = w
    for i in range(0):
        t = x[i] * w
    return t * 3.0


def finite_gradient(f, args, i, h=1e-6):
    x = args[i]
    if isinstance(x, float):
        plus = list(args); minus = list(args)
        plus[i], minus[i] = x + h, x - h
        return (f(*plus) - f(*minus)) / (2 * h)
    out = np.zeros_like(x)
    for k in range(x.size):
        plus = list(args); minus = list(args)
        e = np.zeros_like(x)
        e.flat[k] = h
        plus[i], minus[i] = x + e, x - e
        out.flat[k] = (f(*plus) - f(*minus)) / (2 * h)
    return out


@pytest.mark.parametrize("f, args", [
    (running_sum, (np.array([0.5, -1.0, 2.0, 0.25]),)),
    (weighted_terms, (np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -0.5]), 0.7, 1.3)),
    (reads_nothing_after, (np.array([1.0, 2.0]), 0.7)),
])
def test_float_loop_gradients_match_finite_differences(f, args):
    source = yb.show(f)
    assert "float loop" in source
    g = yb.grad(f, argnums=tuple(range(len(args))))(*args)
    for i in range(len(args)):
        np.testing.assert_allclose(g[i], finite_gradient(f, args, i), rtol=1e-6, atol=1e-8)


def test_float_loop_falls_back_for_lists_and_matches():
    x = [0.5, -1.0, 2.0]
    assert yb.grad(running_sum)(x) == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(yb.grad(running_sum)(np.array(x)), [1.0, 1.0, 1.0])


def map_into(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = np.sin(np.cos(np.exp(x[i, j])))
    return np.sum(y * y)


def writes_argument(x, out, w):
    for i in range(len(x)):
        out[i] = x[i] * x[i] * w
    return np.sum(out * out) + np.sum(x * out)


def writes_what_it_reads(x):
    y = x * 1.0
    for i in range(len(y)):
        y[i] = y[i] * y[i]  # reads and writes one array: the statement-by-statement loop
    return np.sum(y)


def test_float_loops_writing_into_arrays():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4))
    assert "float loop" in yb.show(map_into)
    np.testing.assert_allclose(yb.grad(map_into)(x), finite_gradient(map_into, (x,), 0), rtol=1e-6, atol=1e-8)

    v, out, w = rng.standard_normal(5), rng.standard_normal(5), 0.8
    before = out.copy()
    g = yb.grad(writes_argument, argnums=(0, 1, 2))(v, out, w)
    np.testing.assert_array_equal(out, before)  # the argument is restored
    np.testing.assert_allclose(g[1], np.zeros(5))  # overwritten before it was read
    for i, arg in enumerate((v, out, w)):
        expected = finite_gradient(writes_argument, (v, out.copy(), w), i)
        np.testing.assert_allclose(g[i], expected, rtol=1e-6, atol=1e-8)

    z = rng.standard_normal(4)
    np.testing.assert_allclose(yb.grad(writes_what_it_reads)(z), 2 * z)


def fails_halfway(x, out, short):
    y = 0.0
    for i in range(len(x)):
        out[i] = x[i] * 2.0
        y = y + short[i]  # IndexError once i passes the end of short
    return np.sum(out) + y


def test_a_failing_float_loop_restores_what_it_wrote():
    x, out, short = np.array([1.0, 2.0, 0.5, 3.0]), np.array([7.0, 8.0, 9.0, 10.0]), np.ones(2)
    assert "float loop" in yb.show(fails_halfway)
    with pytest.raises(IndexError):
        yb.grad(fails_halfway, argnums=(0, 1))(x, out, short)
    np.testing.assert_array_equal(out, [7.0, 8.0, 9.0, 10.0])


def divides(x):
    a, b = x[0], x[1]  # NumPy floats
    c = a * b
    d = c / a
    e = d - b * 2.0
    f = e * e + 1.0 / b
    g = f * a - c
    return g + d / (a - a)  # a - a is 0.0: NumPy gives inf (with a warning), Python floats raise


def test_numpy_floats_run_as_python_floats_with_numpy_semantics():
    assert "float block" in yb.show(divides)
    x = np.array([0.7, 1.3])
    with np.errstate(divide="ignore", invalid="ignore"):
        value, gradient = yb.value_and_grad(divides)(x)
        expected = divides(x)
    assert type(value) is type(expected) and value == expected  # inf, as the function gives
    # finite: the same values bit for bit, NumPy floats in and out
    value, gradient = yb.value_and_grad(lambda v: formula(v[0], v[1]))(x)
    assert type(value) is np.float64 and value == formula(x[0], x[1])
    for i in range(2):
        e = np.zeros(2)
        e[i] = 1e-6
        finite = (formula(*(x + e)) - formula(*(x - e))) / 2e-6
        assert gradient[i] == pytest.approx(finite, rel=1e-6)


def test_python_floats_keep_their_exceptions():
    with pytest.raises(ZeroDivisionError):
        yb.grad(lambda a: formula(a, 0.0))(0.7)


def overflowing_derivative(x):
    a = x[0] * 1.0
    b = a * 1.0
    c = b ** -2  # finite at 1e-120; its derivative, -2 / b**3, overflows
    d = c * 1e-200
    e = d + 1.0
    return e * 2.0


def test_a_derivative_that_overflows_is_infinite_as_in_numpy():
    x = np.array([1e-120])
    with np.errstate(over="ignore"):
        gradient = yb.grad(overflowing_derivative)(x)
        assert np.isneginf(gradient[0]) and np.isneginf(-2.0 * 2e-200 * np.float64(1e-120) ** -3)


# ---------------------------------------------------------------- float loops: recorded columns

def every_other(x, w):
    s = 0.0
    for i in range(1, len(x), 2):  # the columns are filled by iteration number, not by i
        s = s * w + np.sin(x[i])
    return s


def backwards(x, w):
    s = 0.0
    for i in range(len(x) - 1, -1, -1):
        s = s * w + np.exp(x[i])
    return s


def negative_indices(x, w):
    s = 0.0
    for i in range(-len(x), 0):  # x[-3] is x[0]: the same elements as range(len(x))
        s = s * w + x[i] * x[i]
    return s


@pytest.mark.parametrize("f", [every_other, backwards, negative_indices], ids=lambda f: f.__name__)
def test_float_loops_over_any_range_match_finite_differences(f):
    forward = yb.show(f, np.ones(5), 0.5).split("def ")[1]
    assert "float loop" in forward and "enumerate(" in forward  # not range(n): counted iterations
    x, w = np.array([0.3, -0.2, 0.5, 1.1, -0.7]), 0.8
    value, g = yb.value_and_grad(f, argnums=(0, 1))(x, w)
    assert value == f(x, w)
    for i in range(2):
        np.testing.assert_allclose(g[i], finite_gradient(f, (x, w), i), rtol=1e-6, atol=1e-8)


def test_float_loops_read_and_write_strided_arrays():
    """The reverse pass reaches the arrays' elements through memoryviews: strided views too."""
    rng = np.random.default_rng(5)
    big_x, big_out = rng.standard_normal(10), rng.standard_normal(10)
    x, out, w = big_x[::2], big_out[1::2], 0.8
    before = big_out.copy()
    g = yb.grad(writes_argument, argnums=(0, 1, 2))(x, out, w)
    np.testing.assert_array_equal(big_out, before)  # restored through the view
    for i, arg in enumerate((x, out, w)):
        expected = finite_gradient(writes_argument, (x.copy(), out.copy(), w), i)
        np.testing.assert_allclose(g[i], expected, rtol=1e-6, atol=1e-8)
    y = rng.standard_normal((4, 6))[:, ::2]
    np.testing.assert_allclose(yb.grad(map_into)(y), finite_gradient(map_into, (y,), 0), rtol=1e-6, atol=1e-8)


def test_cells_are_memoryviews_only_of_writable_native_doubles():
    from yuebing.tangents import NoFData
    from yuebing.transform.float_blocks import NAMESPACE

    cells = NAMESPACE["_cells"]
    a = np.zeros((2, 3))
    view = cells(a)
    assert type(view) is memoryview
    view[1, 2] += 2.5
    assert a[1, 2] == 2.5 and type(view[1, 2]) is float
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    swapped = np.zeros(3, dtype=">f8" if np.little_endian else "<f8")
    for other in (readonly, swapped, np.zeros(3, dtype=np.float32), NoFData):
        assert cells(other) is other


# ---------------------------------------------------------------- float loops: inlined helpers

def affine(x, a, b):
    return x * a + b


def damped(x, a, b):
    y = x * a
    y = y - b / (x * x + 1.0)
    return -y ** 3 * 0.5 + y


def calls_helpers(x, a, b, n):
    for i in range(n):
        x = affine(x, a, b)
        x = damped(x, 0.9, b)
    return x


OFFSET = 0.25


def reads_a_global(x, a):
    return x * a + OFFSET


def calls_global_reader(x, a, n):
    for i in range(n):
        x = reads_a_global(x, a)
    return x


def test_a_loop_inlines_float_formula_helpers():
    """``x = helper(x, a, b)`` in a float loop: the helper's arithmetic runs in the loop (no call,
    one column of floats per residual), guarded on the function and its code."""
    forward = yb.show(calls_helpers, 0.5, 0.9, 0.1, 3).split("def ")[1]
    assert "float loop" in forward and "_DIRECT" not in forward and "_rrule" not in forward
    args = (0.5, 0.9, 0.1, 4)
    value, g = yb.value_and_grad(calls_helpers, argnums=(0, 1, 2))(*args)
    assert value == calls_helpers(*args)
    for i in range(3):
        assert g[i] == pytest.approx(central(calls_helpers, args, i), rel=1e-6, abs=1e-9)
    # a global read is not a formula: the call stays a call, with the same gradient
    assert "float loop" not in yb.show(calls_global_reader, 0.5, 0.9, 3).split("def ")[1]
    assert yb.grad(calls_global_reader)(0.5, 0.9, 3) == pytest.approx(0.9 ** 3)


def test_an_inlined_helper_changed_after_compiling_is_called_again(monkeypatch):
    gradient = yb.grad(calls_helpers, argnums=(0, 1, 2))
    before = gradient(0.5, 0.9, 0.1, 3)
    monkeypatch.setattr(affine, "__code__", (lambda x, a, b: x * a * a + b).__code__)
    args = (0.5, 0.9, 0.1, 3)
    after = gradient(*args)
    assert after != before
    for i in range(3):
        assert after[i] == pytest.approx(central(calls_helpers, args, i), rel=1e-6, abs=1e-9)
    monkeypatch.setitem(globals(), "affine", lambda x, a, b: x - a * b)
    for i in range(3):
        assert gradient(*args)[i] == pytest.approx(central(calls_helpers, args, i), rel=1e-6, abs=1e-9)


def diamonds(x, a):
    y = x * a
    z = y + x
    w = z * y - a / z
    u = w * w + z
    v = u / (y * y + 1.0) - w
    return v * u + y * z


def long_chain(x, a):
    y = x
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    y = y * a + 0.5
    return y


@pytest.mark.parametrize("f", [diamonds, long_chain, formula])
def test_adjoints_read_for_the_last_time_give_their_names_to_the_next(f):
    """The reverse keeps a few adjoint names (a float dies when its name is next assigned), not
    one per operation; the gradient is the statements' (on one-element arrays, the same IEEE
    operations) to the bit, and the differences'."""
    import re

    shown = yb.show(f, 0.7, 1.3)
    reverse = shown[shown.index("_reverse("):]
    names = set(re.findall(r"\b_g\d+\b", reverse))
    assert "float block" in shown and len(names) <= {long_chain: 4, diamonds: 9, formula: 11}[f]  # (26, 16, 21 before)
    args = (0.7, 1.3)
    g = yb.grad(f, argnums=(0, 1))(*args)
    by_statements = yb.grad(lambda x, a: f(x, a)[0], argnums=(0, 1))(np.array([0.7]), np.array([1.3]))
    for i in range(2):
        if f is not formula:  # (formula's powers are NumPy's on arrays, Python's on floats)
            assert g[i] == by_statements[i][0]
        assert g[i] == pytest.approx(central(f, args, i), rel=1e-6)
