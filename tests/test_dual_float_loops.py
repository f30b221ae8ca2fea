"""Dual float loops (transform/dual_float_loops.py): ``for`` loops over a range reading floats out
of float64 arrays run in the second-order program as plain Python floats. Checked against the
statement-by-statement program (the loops switched off) and central differences of the gradient,
with the cases the loop must hand back to the statements (Python floats raising, NaN tangents,
batched passes, elements written then put back, arrays sharing memory, other types)."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.fuzz import load_function
from yuebing.testing.second_order import check_second_order
from yuebing.transform import dual_float_loops

LOOPS = {
    "sum": """
def f(x, a):
    y = 0.0
    for i in range(len(x)):
        y += x[i]
    return y * a
""",
    "sin_and_invariant": """
def f(x, a):
    y = 0.0
    for i in range(len(x)):
        y += np.sin(x[i]) * a - a / (2.0 + x[i] ** 2)
    return y
""",
    "functions_and_quotients": """
def f(x, a):
    y = 1.0
    for i in range(1, len(x), 2):
        t = math.exp(x[i] * 0.5) / (a * a + 1.0)
        y = y * 0.5 + np.tanh(t) - np.sqrt(1.0 + x[i] ** 2) + math.log(2.0 + np.cos(t))
    return y + t * a
""",
    "two_arrays_and_rows": """
def f(x, a):
    w = np.linspace(0.5, 1.5, x.shape[1])
    y = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y = y + x[i, j] * w[j] * a - (x[i, j] - a) ** 3 / 4.0
    return y
""",
    "writes_rows": """
def f(x, a):
    y = np.empty_like(x)
    z = np.zeros(x.shape[1])
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s = s + x[i, j] * a
            y[i, j] = np.sin(np.cos(np.exp(x[i, j]))) * a + s
            z[j] = s
            y[i, 0] = 0.5
    return np.sum(y * y) + np.sum(z * x[0]) + s
""",
    "writes_twice_and_invariant": """
def f(x, a):
    y = np.ones(len(x) + 1)
    for i in range(1, len(x), 2):
        y[i] = a
        y[i] = x[i] ** 3 / a
    return np.sum(np.sin(y)) * a
""",
    "empty_range": """
def f(x, a):
    y = a * a
    for i in range(0):
        y += x[i]
    return y
""",
}


def _source(name: str, note: str = "") -> str:
    return "import math\nimport numpy as np\n" + LOOPS[name] + note


def _args(name: str) -> tuple:
    rng = np.random.default_rng(len(name))
    x = rng.normal(size=(3, 4)) if name.endswith("rows") else rng.normal(size=7)
    return x, 0.7


def _hvp_statement_by_statement(source: str, args: tuple, direction: tuple, monkeypatch) -> tuple:
    f = load_function(source + "# statement by statement\n")
    with monkeypatch.context() as m:
        m.setattr(dual_float_loops.DualFloatLoop, "plan_loop", staticmethod(lambda s, gen: None))
        return yb.hvp(f, args, direction)


def _close(results: tuple, expected: tuple) -> None:
    assert results[0] == pytest.approx(expected[0], rel=1e-12)
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loops_as_statement_by_statement_and_differences(name, monkeypatch):
    source = _source(name)
    f = load_function(source)
    args = _args(name)
    if name != "empty_range":
        assert "dual float loop" in yb.show(f, *args, mode="hvp")
    direction = (np.linspace(-1.0, 1.0, args[0].size).reshape(args[0].shape), -0.3)
    _close(yb.hvp(f, args, direction), _hvp_statement_by_statement(source, args, direction, monkeypatch))
    check_second_order(f, *args)


def test_dense_hessians_batched_and_one_column_at_a_time():
    f = load_function(_source("sin_and_invariant"))
    x, a = _args("sin_and_invariant")
    one = yb.hessian(f, argnums=(0, 1))(x, a)
    batched = yb.hessian(f, argnums=(0, 1), chunk_size=4)(x, a)  # batched passes: the statements
    for row, row_b in zip(one, batched):
        for u, v in zip(row, row_b):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


RAISING = """import numpy as np


def f(x):
    y = 0.0
    for i in range(len(x)):
        y += 1.0 / x[i] + x[i] * x[i]
    return y
"""


def test_python_floats_raising_run_the_statements(monkeypatch):
    """1.0 / x[i] at a zero element: Python floats raise, NumPy's give inf; the statements run
    and give what the function gives."""
    f = load_function(RAISING)
    x, v = np.array([1.0, 0.0, 2.0]), np.array([1.0, 1.0, 1.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        results = yb.hvp(f, (x,), (v,))
        expected = _hvp_statement_by_statement(RAISING, (x,), (v,), monkeypatch)
    assert np.isinf(results[0]) and np.isinf(f(x))
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_array_equal(a, b)


NAN_TANGENT = """import numpy as np


def f(x, w):
    y = 0.0
    for i in range(len(x)):
        y += np.sqrt(x[i]) * w[i]
    return y
"""


def test_a_nan_tangent_runs_the_statements(monkeypatch):
    """sqrt at 0 with a zero direction there: the plain product 0 * inf is NaN; the statements'
    strong-zero products give 0, so the loop hands over to them."""
    f = load_function(NAN_TANGENT)
    x, w = np.array([0.0, 1.0, 4.0]), np.array([2.0, 1.0, 0.5])
    direction = (np.array([0.0, 1.0, -1.0]), np.array([1.0, 0.0, 1.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        results = yb.hvp(f, (x, w), direction)
        expected = _hvp_statement_by_statement(NAN_TANGENT, (x, w), direction, monkeypatch)
    assert not np.isnan(results[2][1]).any()
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_array_equal(a, b)


RAISING_AFTER_WRITES = """import numpy as np


def f(x, y):
    s = np.sum(y * y)
    for i in range(len(x)):
        y[i] = 1.0 / x[i] + x[i] * x[i]
    return np.sum(y * y) + s
"""


def test_written_elements_put_back_when_python_floats_raise(monkeypatch):
    """1.0 / x[2] raises after y[0] and y[1] were written: they are put back before the
    statements run, which record the function's old values (the reverse of y * y reads them)."""
    f = load_function(RAISING_AFTER_WRITES)
    x, y = np.array([1.0, 2.0, 0.0, 3.0]), np.array([0.5, -1.0, 2.0, 1.5])
    direction = (np.array([1.0, -1.0, 0.0, 0.5]), np.array([0.3, 0.2, -0.1, 1.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        results = yb.hvp(f, (x, y), direction)
        expected = _hvp_statement_by_statement(RAISING_AFTER_WRITES, (x, y), direction, monkeypatch)
    assert np.isinf(results[0]) and np.isinf(f(x, y.copy()))
    np.testing.assert_array_equal(results[1][1], 2 * y)  # the old y's elements, not those written
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_array_equal(a, b)


NAN_WRITTEN = """import numpy as np


def f(x, w):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = np.sqrt(x[i]) * w[i]
    return np.sum(y * w)
"""


def test_a_nan_tangent_written_runs_the_statements(monkeypatch):
    f = load_function(NAN_WRITTEN)
    x, w = np.array([1.0, 0.0, 4.0]), np.array([2.0, 1.0, 0.5])
    direction = (np.array([1.0, 0.0, -1.0]), np.array([1.0, 0.0, 1.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        results = yb.hvp(f, (x, w), direction)
        expected = _hvp_statement_by_statement(NAN_WRITTEN, (x, w), direction, monkeypatch)
    assert not np.isnan(results[2][1]).any()
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_array_equal(a, b)


def writes_into_a_view_of_the_read(x):
    y = x.copy()
    v = y[1:]
    for i in range(len(x) - 1):
        v[i] = np.sin(y[i]) * 2.0  # reads what the previous iteration wrote: the statements
    return np.sum(y * y)


def writes_read_only(x):
    y = np.broadcast_to(np.zeros(1), x.shape)  # not writable: the statements raise as NumPy does
    for i in range(len(x)):
        y[i] = x[i]
    return np.sum(y)


def other_types(xs):
    y = 0.0
    for i in range(len(xs)):
        y += xs[i] ** 2
    return y


def test_loops_whose_guard_fails_run_as_before():
    x = np.random.default_rng(3).normal(size=5)
    check_second_order(writes_into_a_view_of_the_read, x)
    with pytest.raises(ValueError, match="read-only"):
        yb.hvp(writes_read_only, (x,), (x,))
    check_second_order(other_types, [0.5, -1.5, 2.0])  # a list: the guard fails, the statements run
