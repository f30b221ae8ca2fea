"""The code dual array blocks generate (``transform/dual_blocks_code.py``), as the bench's HVPs
take it: sin and cos keep their partial's tangent unnegated (``ad * f``, which the reverse
subtracts), and an adjoint's first contribution is assigned instead of added to None. Each
program is checked in every mode against differences (the HVP against differences of the
gradient), and against its statements one by one (the blocks switched off), bit for bit where
the arithmetic is the same."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.fuzz import load_function
from yuebing.transform import dual_blocks
from yuebing.transform.second_order import DualRule

from .all_modes import check_all_modes

PROGRAMS = {
    # sin and cos chained, as broadcast_sin_cos_exp: each partial's tangent negated in the reverse
    "chain": "def f(x):\n    return np.sum(np.sin(np.cos(np.exp(x))))\n",
    # one value read by several operations: its adjoint's first contribution assigned, the
    # others added to it (an alias of another adjoint until then)
    "diamond": "def f(x):\n    y = np.sin(x)\n    z = np.cos(y) * y + y * y\n    return np.sum(z - np.sin(z) * x)\n",
    # a sum's adjoint handed on as it is (aliased), then added to
    "sum_alias": "def f(x):\n    y = np.cos(x)\n    s = np.sum(y)\n    return s * np.sum(y * x)\n",
    # a value also read after the block (handed on): its adjoint comes in from outside
    "handed_on": "def f(x):\n    y = np.sin(x) * 2.0\n    z = np.cos(y)\n    t = [y]\n    return np.sum(z * t[0])\n",
}


def _program(name: str):
    return load_function("import numpy as np\n\n\n" + PROGRAMS[name])


def _without_blocks(name: str, args: tuple, directions: tuple, monkeypatch) -> tuple:
    f = load_function("import numpy as np\n\n\n" + PROGRAMS[name] + "# statement by statement\n")
    with monkeypatch.context() as m:
        m.setattr(dual_blocks, "MIN_DUAL_BLOCK", 10 ** 9)
        return yb.hvp(f, args, directions)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_mode_against_differences(name):
    x = np.random.default_rng(4).normal(size=(3, 4))
    check_all_modes(_program(name), x)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_as_statement_by_statement(name, monkeypatch):
    rng = np.random.default_rng(5)
    x, v = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    f = _program(name)
    assert "dual array block" in yb.show(f, x, mode="hvp")
    value, grads, hvps = yb.hvp(f, (x,), (v,))
    value0, grads0, hvps0 = _without_blocks(name, (x,), (v,), monkeypatch)
    assert value == pytest.approx(value0, rel=1e-13)
    np.testing.assert_allclose(grads[0], grads0[0], rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(hvps[0], hvps0[0], rtol=1e-11, atol=1e-13)


def test_the_chain_makes_no_negated_partial_tangent():
    """broadcast_sin_cos_exp's program: sin and cos's partial tangents are plain products, and
    the reverse assigns each adjoint's first contribution (no ``_dadd`` of None)."""
    source = DualRule(_program("chain")).source
    forward, reverse = source.split("_dual_reverse", 1)
    partial_tangents = [line.strip() for line in forward.splitlines() if "_pd = None if" in line]
    assert partial_tangents and not any("(-" in line for line in partial_tangents)
    assert "_dsub(_m(" in reverse
    first = [line for line in reverse.splitlines() if "_DPRODUCTS" in line]
    assert first and "_dadd(_g" not in reverse.split(first[0])[1].split("break")[0].replace("_dadd(_m(", "")


def test_zero_and_infinite_directions_as_statement_by_statement(monkeypatch):
    """A zero direction where a value is large (sin and cos's partial tangent 0 there) and an
    infinite entry: the same as the statements, NaNs and all."""
    x = np.array([[0.0, 1e300, -2.0], [3.0, np.inf, 0.5]])
    v = np.array([[0.0, 0.0, 1.0], [np.inf, 0.0, -1.0]])
    with np.errstate(all="ignore"):
        for name in ("chain", "diamond"):
            _, grads, hvps = yb.hvp(_program(name), (x,), (v,))
            _, grads0, hvps0 = _without_blocks(name, (x,), (v,), monkeypatch)
            np.testing.assert_array_equal(grads[0], grads0[0])
            np.testing.assert_array_equal(hvps[0], hvps0[0])
