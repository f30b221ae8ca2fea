"""Dual float blocks (``transform/dual_float_blocks.py``): float arithmetic in the second-order
program as straight-line code. Each function runs with the block and with its statements one by
one (the block switched off), on Python and NumPy floats, and the results must agree to the bit
(types included); the HVPs are checked against central differences of the gradient too."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import dual_block_forms
from yuebing.transform.second_order import DualRule

SOURCES = {
    "products": "def f(x, a):\n    y = x * a\n    y = y * a\n    y = y * x\n    return y * a\n",
    "quotients": "def f(x, a):\n    y = x / a\n    z = y - x * a\n    w = -z / (y + 3.0)\n    return w * z\n",
    "mixed": "def f(x, a):\n    y = x * a + 2.0\n    z = y / a - y * y\n    return -z\n",
    "powers_and_math": "def f(x, a):\n    y = x ** 3 + a ** 2\n    z = math.sin(y) * math.exp(a)\n    return z * math.tanh(x)\n",
    "long": "def f(x, a):\n    y = x\n" + "    y = y * a + 0.5\n" * 60 + "    return y\n",
    "diamonds": "def f(x, a):\n    y = x * a\n    z = y + x\n    w = z * y - a / z\n    u = w * w + z\n"
                "    v = u / (y * y + 1.0) - w\n    return v * u + y * z\n",
}


def _compile(source: str):
    namespace = {"math": math, "np": np}
    exec(compile(source, "<dual float block test>", "exec"), namespace)  # a fresh code object per call
    return namespace["f"]


def _both(source: str, primals: tuple, tangents: tuple, monkeypatch):
    with_block = yb.hvp(_compile(source), primals, tangents)
    monkeypatch.setattr(dual_block_forms, "float_capable", lambda block: False)
    without = yb.hvp(_compile(source), primals, tangents)
    return with_block, without


def _same(a, b):
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
        return
    assert type(a) is type(b), (a, b)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("kind", ["python", "numpy"])
def test_block_equals_statements(name, kind, monkeypatch):
    source = SOURCES[name]
    if kind == "python":
        primals, tangents = (0.7, 0.9), (0.3, -1.1)
    else:  # NumPy floats from an array (x[i]), the way large_single_block gets them
        source = source.replace("def f(x, a):\n", "def f(v):\n    x = v[0]\n    a = v[1]\n")
        primals, tangents = (np.array([0.7, 0.9]),), (np.array([0.3, -1.1]),)
    with_block, without = _both(source, primals, tangents, monkeypatch)
    _same(with_block, without)
    assert "dual float block" in yb.show(_compile(source), *primals, mode="hvp")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_hvp_against_differences(name):
    f = _compile(SOURCES[name])
    x, v = (0.7, 0.9), (0.3, -1.1)
    _, _, product = yb.hvp(f, x, v)
    h = 1e-6
    plus = yb.grad(f, argnums=(0, 1))(x[0] + h * v[0], x[1] + h * v[1])
    minus = yb.grad(f, argnums=(0, 1))(x[0] - h * v[0], x[1] - h * v[1])
    for p, q, r in zip(plus, minus, product):
        assert abs((p - q) / (2 * h) - r) <= 1e-5 * max(1.0, abs(r))


@pytest.mark.parametrize("primals, tangents", [
    ((1.0, math.inf), (1.0, 0.0)),  # strong zero: an exactly-zero tangent times an infinite value
    ((0.0, 2.0), (0.0, 1.0)),
    ((3.0, -0.5), (0.0, 0.0)),  # a zero direction
])
def test_edge_values_equal_statements(primals, tangents, monkeypatch):
    source = "def f(x, a):\n    y = x * a\n    z = y * 0.0 + x * x\n    w = z / (a * a)\n    return w * 2.0\n"
    with np.errstate(all="ignore"):
        with_block, without = _both(source, primals, tangents, monkeypatch)
    _same(with_block, without)


def test_division_by_zero_raises_as_the_function():
    f = _compile("def f(x, a):\n    y = x * a\n    return y / (a - a)\n")
    with pytest.raises(ZeroDivisionError):
        f(1.0, 2.0)
    with pytest.raises(ZeroDivisionError):
        yb.hvp(f, (1.0, 2.0), (1.0, 0.0))
    g = _compile("def f(v):\n    x = v[0]\n    a = v[1]\n    y = x * a\n    return y / (a - a)\n")
    with np.errstate(all="ignore"):  # NumPy floats give inf, as the statements do
        value, _, _ = yb.hvp(g, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
    assert value == np.inf and type(value) is np.float64


@pytest.mark.parametrize("primals, tangents", [
    ((np.array([0.7, 0.2]), np.array([0.9, 1.1])), (np.array([0.3, 1.0]), np.array([-1.1, 0.5]))),  # arrays
    ((0.7, np.array([0.9, 1.1])), (0.3, np.array([-1.1, 0.5]))),  # a float and an array
    ((0.7, 0.9), (0.3, -1.1)),
])
def test_long_block_other_forms_deferred(primals, tangents, monkeypatch):
    """A block longer than LONG_BLOCK calls its array form and statements out of line (compiled
    when first called, ``dual_deferred.py``): the same results as inline."""
    source = SOURCES["long"].replace("return y\n", "z = abs(y)\n    return np.sum(z)\n")  # (abs: no block)
    assert "_dfallback" in DualRule(_compile(source)).source
    with_block, without = _both(source, primals, tangents, monkeypatch)
    _same(with_block, without)


def test_adjoints_read_for_the_last_time_give_their_names_to_the_next():
    """The reverse of a chain keeps a few adjoint names (a float dies when its name is next
    assigned), not one pair per operation; the results are the statements' (above)."""
    source = DualRule(_compile(SOURCES["long"])).source
    reverse = source[source.index("_dual_reverse"):]
    assert len(set(re.findall(r"_fg\d+", reverse))) <= 6


def test_long_block_raising_in_its_statements_points_at_the_line():
    body = "".join(f"    y = y * a + {k}.0\n" for k in range(60))
    f = _compile(f"def f(x, a):\n    y = x\n{body}    y = y / (a - a)\n" + body + "    return y\n")
    with pytest.raises(ZeroDivisionError) as info:
        yb.hvp(f, (1.0, 2.0), (1.0, 0.0))
    assert 'File "<dual float block test>", line 63' in "".join(getattr(info.value, "__notes__", []))


def test_names_of_the_normaliser_are_not_taken():
    """A generator over ``zip`` is lowered with variables named ``_a3``, ``_b2``: a block's own
    locals must not take those names (math.dist's definition gave a wrong gradient)."""
    source = "def f(p, q):\n    return math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q)))\n"
    p, q = [0.3, -1.2, 2.0], [1.0, 0.5, -0.7]
    _, gradient, product = yb.hvp(_compile(source), (p, q), ([1.0, 0.0, 0.5], [0.0, 0.0, 0.0]))
    d = math.dist(p, q)
    np.testing.assert_allclose(gradient[0], [(a - b) / d for a, b in zip(p, q)], rtol=1e-12)
    np.testing.assert_allclose(gradient[1], [(b - a) / d for a, b in zip(p, q)], rtol=1e-12)
    f = lambda x: math.dist(x, q)  # noqa: E731
    h = 1e-6
    grad = lambda x: np.array(yb.grad(f)(list(x)))  # noqa: E731
    v = np.array([1.0, 0.0, 0.5])
    expected = (grad(np.array(p) + h * v) - grad(np.array(p) - h * v)) / (2 * h)
    np.testing.assert_allclose(product[0], expected, rtol=1e-5, atol=1e-7)


NAN_CARRIED = {  # a product's tangent NaN by the plain rule (0 * inf), read on by later operations
    "sum_after": "def f(x, a):\n    y = x * a\n    z = y + 1.0\n    w = -z\n    return w - a\n",
    "math_after": "def f(x, a):\n    y = x * a\n    z = math.exp(-y * y)\n    return z * 2.0 + x\n",
    "branches": "def f(x, a):\n    y = x * a\n    z = y * 3.0\n    w = y - x\n    return z * x + w\n",
}


@pytest.mark.parametrize("name", sorted(NAN_CARRIED))
@pytest.mark.parametrize("primals, tangents", [
    ((1.0, math.inf), (0.0, 1.0)),  # x * a's tangent 0 * inf + 1 * 1: NaN plainly, 1 by the rule
    ((math.inf, 2.0), (1.0, 0.0)),
    ((0.5, 2.0), (1.0, -1.0)),
])
def test_nan_in_an_inner_tangent_runs_the_statements(name, primals, tangents, monkeypatch):
    """The forward checks only the tangents no later operation reads (a NaN is carried to them):
    a NaN made inside the block still sends it to its statements, whose results it gives."""
    with np.errstate(all="ignore"):
        with_block, without = _both(NAN_CARRIED[name], primals, tangents, monkeypatch)
    _same(with_block, without)


def test_a_chain_checks_its_last_tangent_only():
    source = DualRule(_compile(SOURCES["long"])).source
    forward = source[:source.index("_dual_reverse")]
    check = re.search(r"(_fs\d+) = (.*)\n\s*if \1 != \1: raise FloatingPointError", forward)
    assert check is not None and check.group(2).count("_d") == 1
