"""Generated code always compiles (issue 12, item 9): the residual lists of float loops, float
blocks and array blocks hold names only (a literal operand such as ``math.cos(-1.480)`` is never
an assignment target), and code that fails to compile anyway raises ``InternalError`` naming the
user's function and line, not a bare ``SyntaxError`` from ``<yuebing reverse ...>``."""
from __future__ import annotations

import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import float_blocks
from yuebing.transform.codegen import InternalError, compile_checked

from .modes import check_every_mode


def issue_program(x, s):
    y = np.zeros(4); acc = []  # noqa: E702 - the issue's program, as reported
    v1 = np.arctan(x[3]) - x[2]
    acc.append(math.sin(x[3]))
    y[1] = (min(s, s * -1.686) * min(s, s * -1.686))
    for v2 in range(3):
        s = s * 0.9 + math.cos(-1.480) * 0.1
    v3 = x[2]
    y[2] = math.hypot(math.exp(0.3 * math.exp(0.3 * v1)), math.hypot(v3, x[2]) + math.exp(0.3 * x[0]))
    return s + v1 + x[2] + np.sum(y * y) + sum(acc)


def loop_with_literal_operand(x):
    y = 0.0
    for i in range(len(x)):
        y += x[i] * math.cos(-1.48) + math.sin(0.5) * x[i] ** 2
    return y


def carried_loop_with_literal_operand(x):
    s = x[0]
    for i in range(3):
        s = s * 0.9 + math.cos(-1.480) * 0.1 + x[i]
    return s


def block_with_literal_operands(x):
    a = x * -1.5
    b = a + math.cos(-1.48)
    c = -2.0 * b
    d = c * c - 0.5
    e = d / 3.0
    f = e * x
    return f


def array_block_with_literal_operands(x):
    return np.sum(np.sin(x) * -1.48 + np.exp(-0.5 * x) ** 2)


X = np.array([0.3, -0.7, 1.1, 0.4])


def test_the_issue_program_in_every_mode():
    s = 0.7
    expected_x = np.array([(issue_program(X + h * e, s) - issue_program(X - h * e, s)) / (2 * h)
                           for h in [1e-6] for e in np.eye(4)])
    expected_s = (issue_program(X, s + 1e-6) - issue_program(X, s - 1e-6)) / 2e-6
    gx, gs = yb.grad(issue_program, argnums=(0, 1))(X.copy(), s)
    np.testing.assert_allclose(gx, expected_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gs, expected_s, rtol=1e-5, atol=1e-6)
    v = np.array([0.5, -0.2, 0.3, 1.0])
    _, t = yb.jvp(issue_program, (X.copy(), s), (v, 0.4))
    np.testing.assert_allclose(t, gx @ v + gs * 0.4, rtol=1e-6)
    _, (gx2, gs2), _ = yb.hvp(issue_program, (X.copy(), s), (v, 0.4))
    np.testing.assert_allclose(gx2, gx, rtol=1e-10)


@pytest.mark.parametrize("f", [loop_with_literal_operand, carried_loop_with_literal_operand])
def test_float_loops_with_literal_operands(f):
    assert "float loop" in yb.show(f)
    check_every_mode(f, X)


def test_float_and_array_blocks_with_literal_operands():
    assert "float block" in yb.show(block_with_literal_operands)
    check_every_mode(block_with_literal_operands, 0.8)
    assert "array block" in yb.show(array_block_with_literal_operands)
    check_every_mode(array_block_with_literal_operands, X)


def test_code_that_does_not_compile_is_reported_as_a_yuebing_bug():
    with pytest.raises(InternalError) as info:
        compile_checked("x = (\n", "<yuebing reverse f #0>", issue_program, {1: 24}, "reverse-mode")
    message = str(info.value)
    assert "yuebing bug" in message and "issue_program" in message
    assert f"{__file__}:24" in message


def broken_loop(x):
    y = 0.0
    for i in range(len(x)):
        y += x[i] * math.cos(-1.25)
    return y


def test_a_generator_bug_surfaces_as_internal_error(monkeypatch):
    """Literals taken for names again (the old bug) must not escape as a SyntaxError."""
    monkeypatch.setattr(float_blocks, "_literal", lambda name: False)
    with pytest.raises(InternalError, match=r"yuebing bug: the reverse-mode code generated for broken_loop \("):
        yb.grad(broken_loop)(X.copy())


def infinite_literal_block(x):  # 1e400 is the float inf: repr(inf) is not a Python literal
    a = x * 2.0
    b = a + 1e400
    c = a * 3.0
    d = c - a
    e = d / 3.0
    f = e * x
    return f + 1.0 / b


def infinite_literal_array(x):
    return np.sum(np.exp(x - 1e400) + x * np.cos(x))


@pytest.mark.parametrize("f, x", [(infinite_literal_block, 0.5), (infinite_literal_array, X)])
def test_infinite_literals_are_named_constants(f, x):
    check_every_mode(f, x)


def test_a_function_whose_name_is_not_an_identifier():
    """Generated code is named after the function: a __name__ such as "L-BFGS-B" or "class" (set
    by a library) used to make it fail to compile."""
    import yuebing as yb

    def f(x):
        return x * x * x

    for name in ("L-BFGS-B", "class", "3d"):
        f.__name__ = name
        assert yb.grad(f)(1.5) == 3 * 1.5 ** 2
        assert yb.jvp(f, (1.5,), (1.0,))[1] == 3 * 1.5 ** 2
        assert yb.hvp(f, (1.5,), (1.0,))[2][0] == 6 * 1.5
