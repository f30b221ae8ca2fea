"""Dual array blocks (transform/dual_blocks.py): runs of elementwise array arithmetic in the
second-order program computed as one unit. Checked against central differences of the gradient
and against the statement-by-statement program (the blocks switched off) on random programs,
with the cases the block must hand back to the statements (strong zeros, shapes that differ,
floats dividing by zero, batched passes)."""
import inspect
import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.fuzz import load_function
from yuebing.testing.second_order import check_second_order
from yuebing.transform import dual_blocks

_UNARY = ["np.exp", "np.sin", "np.cos", "np.tanh", "np.log", "np.sqrt", "np.expm1"]


def random_program(seed: int) -> str:
    """A straight-line function of an array ``x`` and a float ``s``: elementwise operations of
    the block's kinds on the values made so far, then the sum of the last (some values handed on
    to a statement after the block)."""
    rng = np.random.default_rng(seed)
    values, lines = ["x", "s"], []
    for k in range(int(rng.integers(3, 9))):
        a, b = (values[int(i)] for i in rng.integers(0, len(values), 2))
        kind = rng.choice(["add", "sub", "mul", "div", "neg", "pow", "unary", "const"])
        if kind == "add":
            expr = f"{a} + {b}"
        elif kind == "sub":
            expr = f"{a} - {b}"
        elif kind == "mul":
            expr = f"{a} * {b}"
        elif kind == "div":
            expr = f"{a} / (1.5 + {b} * {b})"
        elif kind == "neg":
            expr = f"-{a}"
        elif kind == "pow":
            expr = f"{a} ** {int(rng.integers(0, 4))}"
        elif kind == "const":
            expr = f"{a} * {float(rng.uniform(0.5, 2.0))!r} - 0.25"
        else:
            f = str(rng.choice(_UNARY))
            safe = f"(1.0 + {a} * {a})" if f in ("np.log", "np.sqrt") else f"({a} * 0.5)"
            expr = f"{f}({safe})"
        values.append(f"v{k}")
        lines.append(f"    v{k} = {expr}")
    last = values[-1]
    body = "\n".join(lines)
    return f"import numpy as np\n\n\ndef f(x, s):\n{body}\n    t = np.sum({last} + x * 0.0)\n    return t + np.sum(x * {last})\n"


def _hvp_without_blocks(source, args, direction, monkeypatch):
    f = load_function(source + "# statement by statement\n")
    with monkeypatch.context() as m:
        m.setattr(dual_blocks, "MIN_DUAL_BLOCK", 10 ** 9)
        return yb.hvp(f, args, direction)


def _close(a, b):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_as_statement_by_statement(seed, monkeypatch):
    source = random_program(seed)
    rng = np.random.default_rng(seed + 100)
    x, s = rng.normal(size=(3, 4)), float(rng.normal())
    direction = (rng.normal(size=(3, 4)), float(rng.normal()))
    f = load_function(source)
    value, grads, hvps = yb.hvp(f, (x, s), direction)
    value0, grads0, hvps0 = _hvp_without_blocks(source, (x, s), direction, monkeypatch)
    assert value == pytest.approx(value0, rel=1e-12)
    _close(grads, grads0)
    _close(hvps, hvps0)


@pytest.mark.parametrize("seed", range(0, 25, 4))
def test_random_programs_against_central_differences(seed):
    f = load_function(random_program(seed))
    rng = np.random.default_rng(seed + 100)
    check_second_order(f, rng.normal(size=(3, 4)), float(rng.normal()))


def _uses_block(f, *args):
    return "dual array block" in yb.show(f, *args, mode="hvp")


DATA = np.random.default_rng(3).lognormal(size=50)


def lognormal(mu, sigma):
    """Constant data (a global array) with float parameters: their cotangents are sums."""
    z = (np.log(DATA) - mu) / sigma
    return np.sum(-0.5 * z ** 2 - np.log(DATA) - np.log(sigma) - 0.5 * math.log(2.0 * math.pi))


def test_constant_data_and_float_parameters():
    assert _uses_block(lognormal, 0.3, 1.2)
    check_second_order(lognormal, 0.3, 1.2)


def data_as_argument(x, mu, sigma):
    z = (np.log(x) - mu) / sigma
    y = z * z - mu
    return np.sum(y * x)


def test_an_array_and_floats_all_differentiated():
    check_second_order(data_as_argument, DATA, 0.3, 1.2)


def handed_on(x, w):
    y = np.sin(x) * w
    z = np.exp(y) + x
    z[0] = 2.0 * z[1]  # a write into the block's result: its tangent is its own
    return np.sum(z * y) + np.sum(y)


def test_values_handed_on_and_written():
    rng = np.random.default_rng(4)
    check_second_order(handed_on, rng.normal(size=6), rng.normal(size=6))


def looped(x, n):
    acc = x * 0.0
    for _ in range(n):
        acc = acc + np.sin(x) * acc
        acc = acc + 1.0
    return np.sum(acc * acc)


def test_a_block_in_a_loop():
    check_second_order(looped, np.random.default_rng(5).normal(size=5), 3)


def broadcast(x, y):
    return np.sum(np.exp(x) * np.sin(y))


def test_arrays_of_different_shapes_broadcast_in_the_block():
    rng = np.random.default_rng(6)
    assert _uses_block(broadcast, rng.normal(size=(3, 4)), rng.normal(size=4))
    check_second_order(broadcast, rng.normal(size=(3, 4)), rng.normal(size=4))


def random_broadcast_program(seed: int) -> str:
    """``random_program`` on arrays of shapes that broadcast: a column ``x`` (n, 1), a row ``r``
    (1, m), a vector ``v`` (m,) and a float ``s``, some values summed inside the block."""
    rng = np.random.default_rng(seed)
    values, lines = ["x", "r", "v", "s"], []
    for k in range(int(rng.integers(4, 10))):
        a, b = (values[int(i)] for i in rng.integers(0, len(values), 2))
        kind = rng.choice(["add", "sub", "mul", "div", "neg", "square", "unary", "sum"])
        expr = {"add": f"{a} + {b}", "sub": f"{a} - {b}", "mul": f"{a} * {b}", "div": f"{a} / (1.5 + {b} * {b})",
                "neg": f"-{a}", "square": f"{a} ** 2", "unary": f"np.sin({a} * 0.5)", "sum": f"np.sum({a}) * {b}"}[kind]
        values.append(f"u{k}")
        lines.append(f"    u{k} = {expr}")
    body = "\n".join(lines)
    tail = " + ".join(f"np.sum({u} * {u})" for u in values[-3:])
    return f"import numpy as np\n\n\ndef f(x, r, v, s):\n{body}\n    return {tail}\n"


@pytest.mark.parametrize("seed", range(20))
def test_broadcasting_programs_as_statement_by_statement(seed, monkeypatch):
    source = random_broadcast_program(seed)
    rng = np.random.default_rng(seed + 200)
    args = (rng.normal(size=(3, 1)), rng.normal(size=(1, 4)), rng.normal(size=4), float(rng.normal()))
    direction = (rng.normal(size=(3, 1)), rng.normal(size=(1, 4)), rng.normal(size=4), float(rng.normal()))
    f = load_function(source)
    value, grads, hvps = yb.hvp(f, args, direction)
    value0, grads0, hvps0 = _hvp_without_blocks(source, args, direction, monkeypatch)
    assert value == pytest.approx(value0, rel=1e-12)
    for a, b in zip(grads + hvps, grads0 + hvps0):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    if seed % 5 == 0:
        check_second_order(f, *args)


def kernel(x, s):
    """gp_lml's kernel: a column minus a row, squared, through exp, plus a float times eye."""
    d = x[:, None] - x[None, :]
    return np.sum(np.exp(-0.5 * d ** 2) * s + d)


def test_broadcast_kernel_in_a_block_against_differences():
    x = 0.3 * np.arange(5.0)
    assert _uses_block(kernel, x, 1.3)
    check_second_order(kernel, x, 1.3)
    one = yb.hessian(kernel, argnums=(0, 1))(x, 1.3)  # batched passes: the statements
    batched = yb.hessian(kernel, argnums=(0, 1), chunk_size=3)(x, 1.3)
    for row, row_b in zip(one, batched):
        for a, b in zip(row, row_b):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_shapes_that_do_not_broadcast_raise_as_the_function_does():
    with pytest.raises(ValueError, match="broadcast"):
        yb.hvp(broadcast, (np.ones((3, 4)), np.ones(3)), (np.ones((3, 4)), np.ones(3)))


def test_fitted_sums_the_broadcast_axes():
    value, column = np.ones((3, 4)), np.ones((3, 1))
    np.testing.assert_array_equal(dual_blocks.fitted(np.arange(4.0), value, column), np.full((3, 1), 6.0))
    assert dual_blocks.fitted(2.0, value, column) == 8.0  # a number standing for a (3, 4) array
    assert dual_blocks.fitted(np.arange(4.0), value, 1.5) == 18.0
    assert dual_blocks.fitted(2.0, value, 1.5) == 24.0
    np.testing.assert_array_equal(dual_blocks.fitted(np.ones((3, 1)), value, column), np.full((3, 1), 4.0))


def float_division(x, s):
    y = np.exp(x) * (1.0 / s)
    return np.sum(y * y)


def test_a_float_dividing_by_zero_raises_as_before():
    with pytest.raises(ZeroDivisionError):
        yb.hvp(float_division, (np.ones(3), 0.0), (np.ones(3), 1.0))
    check_second_order(float_division, np.ones(3), 2.0)


ZERO_WEIGHTED = """import numpy as np


def f(x, w):
    return np.sum(np.log(x) * w * w) + np.sum(x * x)
"""


def test_strong_zero_as_statement_by_statement(monkeypatch):
    """log at 0 has an infinite partial; where the weight is 0 the cotangent is exactly 0 and
    must contribute 0 to x's gradient and Hessian-vector product, as the statements give (the
    block runs its reverse again by the strong-zero rule)."""
    x = np.array([0.0, 1.0, 2.0])
    w = np.array([0.0, 1.0, 3.0])
    direction = (np.array([0.0, 1.0, 1.0]), np.array([0.0, 0.5, -1.0]))
    f = load_function(ZERO_WEIGHTED)
    assert _uses_block(f, x, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        _, grads, hvps = yb.hvp(f, (x, w), direction)
        _, grads0, hvps0 = _hvp_without_blocks(ZERO_WEIGHTED, (x, w), direction, monkeypatch)
    assert grads[0][0] == 0.0 and hvps[0][0] == 0.0  # not nan: 0 * inf contributes 0
    for a, b in zip(grads + hvps, grads0 + hvps0):
        np.testing.assert_array_equal(a, b)
    eps = 1e-6
    g = yb.grad(f, argnums=(0, 1))
    plus = g(x + eps * direction[0], w + eps * direction[1])
    minus = g(x - eps * direction[0], w - eps * direction[1])
    for i in range(2):  # where the function is smooth
        np.testing.assert_allclose(hvps[i][1:], (plus[i][1:] - minus[i][1:]) / (2 * eps), rtol=1e-5)


def test_batched_hessian_same_as_one_column_at_a_time():
    rng = np.random.default_rng(8)
    x = rng.normal(size=5)
    one = yb.hessian(lambda v: data_as_argument(np.abs(v) + 1.0, 0.3, 1.2))(x)
    batched = yb.hessian(lambda v: data_as_argument(np.abs(v) + 1.0, 0.3, 1.2), chunk_size=5)(x)
    np.testing.assert_allclose(one, batched, rtol=1e-10, atol=1e-12)


def sums(x, w):
    """np.sum of arrays inline (dual_templates.py), inside and outside blocks."""
    total = np.sum(x)
    parts = [total, w]  # (a list between: no block)
    return parts[0] * np.sum(parts[1] * x) + np.sum(x) ** 2


def test_sums_inline_against_central_differences_and_batched():
    rng = np.random.default_rng(9)
    x, w = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    assert "inline: total = np.sum(x)" in yb.show(sums, x, w, mode="hvp")
    check_second_order(sums, x, w)
    one = yb.hessian(sums, argnums=(0, 1))(x, w)
    batched = yb.hessian(sums, argnums=(0, 1), chunk_size=4)(x, w)
    for row, row_b in zip(one, batched):
        for a, b in zip(row, row_b):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


POWER = """import numpy as np


def f(x, w):
    y = x ** 1.5 * w
    return np.sum(np.exp(y) * w)
"""


def test_an_infinite_second_derivative_times_a_zero_tangent(monkeypatch):
    """x ** 1.5 at 0: the first derivative is 0, the second infinite; where the direction is 0
    the partial's tangent is 0 (strong zero), as statement by statement."""
    x, w = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 2.0])
    direction = (np.array([0.0, 1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    f = load_function(POWER)
    assert _uses_block(f, x, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        results = yb.hvp(f, (x, w), direction)
        expected = _hvp_without_blocks(POWER, (x, w), direction, monkeypatch)
    assert np.isfinite(results[2][0]).all()
    for a, b in zip(results[1] + results[2], expected[1] + expected[2]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def float_powers(x, y):
    """Float ** int as float code in the dual program (a dual float block: dual_float_blocks.py)."""
    return x ** 2 * y + (x - y) ** 3 - 0.5 * (y / 2.0) ** 4


def test_float_powers_inline():
    shown = yb.show(float_powers, 0.7, -1.3, mode="hvp")
    assert "dual float block" in shown and "_t1 = operator.pow(x, 2)" not in shown.split("dual float block")[1]
    for point in ((0.7, -1.3), (0.0, 2.0), (1.5, 0.0)):
        check_second_order(float_powers, *point)
    with pytest.raises(OverflowError):  # as the plain call: Python floats raise
        yb.hvp(float_powers, (1e200, 1.0), (1.0, 1.0))


SCALE = 2.5


def with_global_floats(t):
    """Module global floats in float arithmetic, inline (constants: no cotangent)."""
    p = 1.0 / (1.0 + np.exp(-t))
    return SCALE * p + math.log(SCALE - 1.0) * p * p


def test_global_floats_inline():
    assert "inline: _t4 = operator.mul(SCALE, p)" in yb.show(with_global_floats, 0.3, mode="hvp")
    check_second_order(with_global_floats, 0.3)


MODULE_ATTRIBUTES = """import numpy as np
import types

DATA_MODULE = types.ModuleType("data_module")
DATA_MODULE.W = np.linspace(0.5, 1.5, 12).reshape(3, 4)


def f(x):
    y = np.sin(x) * np.pi
    z = y * DATA_MODULE.W
    return np.sum(z * z)
"""


def test_module_attributes(monkeypatch):
    """np.pi (a number) joins the block; a module's array read in it sends the block back to the
    statements (it would broadcast with the block's arrays unchecked)."""
    x = np.random.default_rng(11).normal(size=4)
    direction = (np.random.default_rng(12).normal(size=4),)
    f = load_function(MODULE_ATTRIBUTES)
    assert "type(DATA_MODULE.W) in _FT" in yb.show(f, x, mode="hvp", guards=True)
    value, grads, hvps = yb.hvp(f, (x,), direction)
    value0, grads0, hvps0 = _hvp_without_blocks(MODULE_ATTRIBUTES, (x,), direction, monkeypatch)
    _close(grads + hvps, grads0 + hvps0)
    eps = 1e-6  # the Hessian is constant times sin/cos terms: central differences of the value
    w = (np.pi * np.linspace(0.5, 1.5, 12).reshape(3, 4)) ** 2
    gradient = lambda v: 2.0 * np.sin(v) * np.cos(v) * w.sum(axis=0)
    np.testing.assert_allclose(grads[0], gradient(x), rtol=1e-10)
    np.testing.assert_allclose(hvps[0], (gradient(x + eps * direction[0]) - gradient(x - eps * direction[0])) / (2 * eps),
                               rtol=1e-5)


def location_scale(x, mu, sigma):
    """An array over a float with float tangents: the tangent of ``z = (x - mu) / sigma`` scaled
    and shifted in place (``dual_blocks.divided_tangent``'s two-pass form)."""
    z = (x - mu) / sigma
    w = x / sigma
    return np.sum(z ** 2 * w)



def test_divided_tangent_two_pass_form_as_statement_by_statement(monkeypatch):
    import inspect

    source = "import numpy as np\n\n\n" + inspect.getsource(location_scale).replace("def location_scale", "def f")
    x = np.random.default_rng(13).normal(size=7)
    f = load_function(source)
    assert _uses_block(f, x, 0.3, 1.7)
    assert "_ddiv_t(" in yb.show(f, x, 0.3, 1.7, mode="hvp")
    for direction in ((np.linspace(-1, 1, 7), 0.5, -0.25), (np.zeros(7), 0.5, -0.25), (np.zeros(7), 0.0, 0.7)):
        results = yb.hvp(f, (x, 0.3, 1.7), direction)
        expected = _hvp_without_blocks(source, (x, 0.3, 1.7), direction, monkeypatch)
        _close(results[1] + results[2], expected[1] + expected[2])
    check_second_order(location_scale, x, 0.3, 1.7)


def test_divided_tangent_forms_agree():
    t, b = np.array([1.0, -2.0, np.inf]), 2.0
    for ad, bd in ((None, 0.5), (0.25, 0.5), (0.25, 0.0)):
        fast = dual_blocks.divided_tangent(ad, bd, t, b)
        two_pass = t * (-bd / b) + (0.0 if ad is None else ad / b)
        np.testing.assert_array_equal(fast, two_pass)  # the two-pass form was taken
        with np.errstate(invalid="ignore"):
            plain = dual_blocks.sub(ad, t * bd) / b
        np.testing.assert_allclose(fast, plain, rtol=1e-15)
    # a zero divisor keeps NumPy's arithmetic (inf, nan), the general form
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(dual_blocks.divided_tangent(0.25, 0.5, t, 0.0), dual_blocks.sub(0.25, t * 0.5) / 0.0)


def test_square_partial_tangent_is_a_plain_product():
    """``x ** 2``: the partial 2x has the tangent 2 dx, a plain product (no strong-zero check)."""
    shown = yb.show(data_as_argument, DATA, 0.3, 1.2, mode="hvp")
    assert "_dtimes(" in shown and "_dstrong(_b3_d, 2.0)" not in shown
    check_second_order(data_as_argument, DATA, 0.3, 1.2)


def views(x, w):
    """Views at constant basic indices read inline (dual_templates._view_read): slices, None,
    ``...``, ints with slices, a negative step; a write through a view reaches the array."""
    y = x * w
    col, row = y[:, None], y[None, :]
    part = y[1:-1:2]
    back = y[::-1]
    z = np.exp(x)
    z[...][2:] *= 0.5  # a write through views
    grid = (col - row) ** 2
    return np.sum(np.exp(-grid)) + np.sum(part * back[1:-1:2]) + np.sum(z[..., 1:] * x[1:])


def test_views_read_inline_against_differences():
    x, w = np.linspace(-1.0, 1.5, 6), np.linspace(0.5, 2.0, 6)
    shown = yb.show(views, x, w, mode="hvp")
    inline = [line for line in shown.splitlines() if "# inline:" in line]
    for index in ("(slice(None, None, None), None)", "slice(1, -1, 2)", "Ellipsis", "(Ellipsis, slice(1, None, None))"):
        assert any(f"getitem(y, {index})" in line or f"getitem(z, {index})" in line for line in inline), index
    check_second_order(views, x, w)
    one = yb.hessian(views, argnums=(0, 1))(x, w)  # batched passes: the generic rule
    column = yb.hessian(views, argnums=(0, 1), chunk_size=1)(x, w)
    for row, row_b in zip(one, column):
        for a, b in zip(row, row_b):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_integer_indices_are_not_views():
    from yuebing.transform.dual_templates import _basic_view

    assert _basic_view((slice(None), None)) and _basic_view(slice(1, None)) and _basic_view((0, slice(None)))
    assert _basic_view(Ellipsis) and _basic_view((None,))
    assert not _basic_view(0) and not _basic_view((0, 1)) and not _basic_view([0, 1]) and not _basic_view((slice(None), [0]))
    assert not _basic_view(slice(0.5, None)) and not _basic_view((True, slice(None)))


def partials_shared_then_written(x, w):
    """The sum's cotangent 1.0 times a partial is the partial itself (an input ``w``, the value
    ``np.exp(x)``): the reverse adds it into fdata and never writes into it, and a write into the
    value after the block (its reverse puts the old elements back first) does not reach the
    gradient through it."""
    y = np.exp(x)
    s = np.sum(x * w) + np.sum(y)
    y[1:3] = w[1:3] * s
    return s + np.sum(y * w)


def test_a_unit_cotangent_takes_the_partial_itself(monkeypatch):
    p = np.arange(3.0)
    assert dual_blocks.cotangent_times(1.0, p) is p
    np.testing.assert_array_equal(dual_blocks.cotangent_times(2.0, p), 2.0 * p)
    assert dual_blocks.cotangent_times(None, p) is None and dual_blocks.cotangent_times(1.0, None) is None
    rng = np.random.default_rng(12)
    x, w = rng.normal(size=5), rng.normal(size=5)
    check_second_order(partials_shared_then_written, x, w)
    direction = (rng.normal(size=5), rng.normal(size=5))
    results = yb.hvp(partials_shared_then_written, (x, w), direction)
    with monkeypatch.context() as m:  # the reverse's products all taken (a cotangent 1.0 too)
        m.setitem(dual_blocks.NAMESPACE, "_DPRODUCTS", ((dual_blocks.times, dual_blocks.quotient), dual_blocks.PRODUCTS[1]))
        source = inspect.getsource(partials_shared_then_written).replace("def partials_shared_then_written", "def f")
        f = load_function("import numpy as np\n\n\n" + source + "# products taken\n")
        expected = yb.hvp(f, (x, w), direction)
    _close(results[1] + results[2], expected[1] + expected[2])


def test_dual_nan_pairs_an_adjoint_with_its_tangent():
    """Two arrays of one shape take one dot product: a NaN in either, anywhere, is found."""
    ones = np.ones(6)
    assert not dual_blocks.dual_nan(ones, 2.0 * ones, None, 0.5)
    for k in range(6):
        holed = ones.copy()
        holed[k] = np.nan
        for values in ((ones, holed), (holed, ones), (holed, None), (None, ones, holed), (np.ones(3), ones, holed),
                       (np.zeros(6), holed), (ones, ones, holed)):
            assert dual_blocks.dual_nan(*values)
    assert dual_blocks.dual_nan(ones, float("nan"))


def test_ignoring_errors_is_errstate_all_ignore_inside_and_restores_the_callers_state():
    np.setbufsize(16384)
    try:
        with np.errstate(over="raise", invalid="warn"):
            outside = np.geterr()
            for _ in range(2):  # (the second time from the ignoring state made the first)
                with dual_blocks.ignoring_errors(all="ignore"):
                    assert set(np.geterr().values()) == {"ignore"}
                    assert np.getbufsize() == 16384
                    np.array([1e308]) * 10.0  # no FloatingPointError
                assert np.geterr() == outside
    finally:
        np.setbufsize(8192)


def overflowing_cotangents(x):
    return np.sum(np.sin(x * 1e200) * 1e200)


def test_a_reverse_that_overflows_warns_nothing(monkeypatch):
    """The primal and the tangents (a zero direction) are finite; the cotangents overflow
    (1e200 * 1e200): the block's reverse runs its products ignoring NumPy's errors, and gives
    what the statements give."""
    x, v = np.array([0.3, -0.2]), np.zeros(2)
    overflowing_cotangents(x)  # (no warning from the function itself)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, grads, hvps = yb.hvp(overflowing_cotangents, (x,), (v,))
    source = inspect.getsource(overflowing_cotangents).replace("def overflowing_cotangents", "def f")
    expected = _hvp_without_blocks("import numpy as np\n\n\n" + source, (x,), (v,), monkeypatch)
    np.testing.assert_array_equal(grads[0], expected[1][0])
    np.testing.assert_array_equal(hvps[0], expected[2][0])


def elementwise_loss(x):
    return np.sum(np.tanh(np.sin(x)) * 0.5 + np.log1p(x * x))


def unary_loss(x):
    return np.sum(np.sin(np.cos(np.exp(x))))


def squared_loss(x):
    """The loss's value read again: its tangent (the dot product of the fused sum) matters."""
    return unary_loss(x) ** 2 + np.sin(unary_loss(x))


def weighted_loss(x, w):
    """``np.sum(a * b)``: the sum's tangent is two dot products."""
    return np.sum(np.sin(x) * w)


def tangent_read_twice(x):
    """The last operation's tangent is read by a later operation too: no fused sum."""
    y = np.sin(x)
    s = np.sum(y)
    return s * np.sum(y * y)


def test_a_sums_tangent_of_a_product_is_one_dot_product():
    """A unary operation's tangent read only by the tangent of the sum after it is not made: the
    sum's tangent is the dot product of the operand's tangent and the partial (``_dsum_dot``),
    checked in the HVP and, through a function that squares the loss, as a tangent handed on."""
    rng = np.random.default_rng(21)
    x = rng.normal(size=(6, 7)) * 0.5
    shown = yb.show(unary_loss, x, mode="hvp")
    assert "_dsum_dot(_b2_d, _b3_p, _b3)" in shown and "_b3_d = " not in shown
    for f in (unary_loss, squared_loss, tangent_read_twice):
        check_second_order(f, x)
        check_second_order(f, x[0])
    assert "_dsum_t(_b1_d, _b1)" in yb.show(tangent_read_twice, x, mode="hvp")  # sin's: read by y * y's too
    w = rng.normal(size=x.shape)
    assert "_dadd(_dsum_dot(_b1_d, w, _b2), _dsum_dot(_a5, _b1, _b2))" in yb.show(weighted_loss, x, w, mode="hvp")
    for args in ((x, w), (x, w[0]), (x[0], 1.5), (0.3, w)):  # of one shape, broadcast, a float
        check_second_order(weighted_loss, *args)
    value, gradient, product = yb.hvp(squared_loss, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(value, squared_loss(x))
    np.testing.assert_allclose(gradient[0], yb.grad(squared_loss)(x), rtol=1e-12)
    v = rng.normal(size=x.shape)
    _, jvp = yb.jvp(unary_loss, (x,), (v,))  # forward mode: the same function's first order
    h = 1e-6
    np.testing.assert_allclose(jvp, (unary_loss(x + h * v) - unary_loss(x - h * v)) / (2 * h), rtol=1e-6)


def test_sum_of_product_as_the_sum_of_the_products():
    rng = np.random.default_rng(22)
    d, p = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(dual_blocks.sum_of_product(d, p, p), np.sum(d * p), rtol=1e-13)
    assert type(dual_blocks.sum_of_product(d, p, p)) is float
    assert dual_blocks.sum_of_product(None, p, p) is None and dual_blocks.sum_of_product(d, None, p) is None
    np.testing.assert_allclose(dual_blocks.sum_of_product(d, 2.0, p), 2.0 * np.sum(d))
    row = rng.normal(size=5)  # a tangent standing for its copies along a broadcast axis
    np.testing.assert_allclose(dual_blocks.sum_of_product(row, row, p), 4 * np.sum(row * row))
    with np.errstate(invalid="ignore"):
        assert math.isnan(dual_blocks.sum_of_product(np.array([0.0, 1.0]), np.array([np.inf, 1.0]), d[0, :2]))
