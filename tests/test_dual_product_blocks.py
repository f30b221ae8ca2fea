"""Dual product blocks (transform/dual_product_blocks.py): matrix products and masks in the dual
array blocks of the second-order program, so a layer and its loss run as one unit in an HVP.
Checked against the statement-by-statement program (product kinds switched off), against
central differences of the gradient, the prepared HVP, the batched Hessian, and that the block
ran (or, for operands that are not matrices, that it handed back to the statements)."""
import inspect

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.fuzz import load_function
from yuebing.transform import dual_blocks

from . import test_product_blocks as _reverse_cases

# The reverse mode's product-block cases (tests/test_product_blocks.py) as source text, and this
# file's own: compiled afresh per tag, so a test can switch the product kinds off first
_SHARED = ("relu_mlp", "products_and_elementwise", "broadcast_bias", "mask_used_later", "summed_product",
           "recurrent")
SOURCE = '''
import numpy as np

W_CONST = np.random.default_rng(11).standard_normal((5, 4)) * 0.5


''' + "\n\n".join(inspect.getsource(getattr(_reverse_cases, name)) for name in _SHARED) + '''

def scaled_chain(w, x, s):
    h = np.exp(0.3 * (w @ x)) * s
    g = (h @ x.T) / s
    return np.sum(g * w) - s * s


def kron_sum(x, y):
    return np.sum(np.kron(x, y))


def kron_view_sum(x, y):
    return kron_sum(x[:3, :3], np.triu(y))


def kron_squared(x, y, s):
    k = np.kron(x * s, y)
    return np.sum(k * k) + np.sum(np.kron(y, x))


def kron_vectors(x, y):
    return np.sum(np.sin(np.kron(x, y)))


def vector_operand(w, v):
    y = w @ v
    return np.sum(np.exp(0.1 * y) * y)
'''

CASES = [
    ("relu_mlp", [(6, 8), (8, 5), (6, 4), (5, 4)]),
    ("products_and_elementwise", [(4, 3), (3, 5), ()]),
    ("broadcast_bias", [(4, 3), (3, 5), (5,)]),
    ("mask_used_later", [(4, 3), (3, 6)]),
    ("summed_product", [(4, 3), (3, 6)]),
    ("recurrent", [(4, 4), (4, 3)]),
    ("scaled_chain", [(4, 3), (3, 5), ()]),
    ("kron_sum", [(3, 2), (2, 4)]),
    ("kron_view_sum", [(4, 3), (4, 4)]),
    ("kron_squared", [(3, 2), (2, 4), ()]),
    ("kron_vectors", [(3,), (4,)]),
]


def _load(name: str, tag: str):
    return load_function(SOURCE + f"# {tag}\n", name)


def _arguments(shapes: list, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return tuple(float(rng.uniform(0.5, 1.5)) if s == () else rng.standard_normal(s) * 0.5 for s in shapes)


def _counting(monkeypatch) -> list:
    """The product blocks' guard, recording each run it let through."""
    ran: list = []
    guard = dual_blocks.dual_product_inputs

    def counted(*args):
        found = guard(*args)
        if found is not None:
            ran.append(found[-1])
        return found

    monkeypatch.setitem(dual_blocks.NAMESPACE, "_dual_product_inputs", counted)
    return ran


def _statement_by_statement(name: str, args: tuple, direction: tuple, monkeypatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(dual_blocks, "PRODUCT_KINDS", ())
        return yb.hvp(_load(name, "statements"), args, direction)


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name, shapes", CASES, ids=[c[0] for c in CASES])
def test_as_statement_by_statement_and_differences(name, shapes, monkeypatch):
    ran = _counting(monkeypatch)
    f = _load(name, "blocks")
    args = _arguments(shapes, 1)
    direction = _arguments(shapes, 2)
    before = _copies(args)
    value, grads, hvps = yb.hvp(f, args, direction)
    assert ran, "the product block did not run"
    for a, b in zip(args, before):  # the arguments are left as they were
        np.testing.assert_array_equal(a, b)
    value0, grads0, hvps0 = _statement_by_statement(name, args, direction, monkeypatch)
    assert value == pytest.approx(value0, rel=1e-12)
    for got, want in zip(grads + hvps, grads0 + hvps0):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    # against central differences of the gradient (reverse mode), and the gradient against a JVP
    argnums = tuple(range(len(args)))
    step = 1e-5
    up = yb.grad(f, argnums=argnums)(*[a + step * d for a, d in zip(args, direction)])
    down = yb.grad(f, argnums=argnums)(*[a - step * d for a, d in zip(args, direction)])
    for hv, u, d in zip(hvps, up, down):
        np.testing.assert_allclose(hv, (u - d) / (2 * step), rtol=1e-5, atol=1e-6)
    slope = yb.jvp(f, args, direction)[1]
    assert sum(float(np.sum(g * d)) for g, d in zip(grads, direction)) == pytest.approx(slope, rel=1e-10)
    prepared = yb.prepare_hvp(f, *args)
    for _ in range(2):  # the prepared HVP (buffers reused) gives the same, call after call
        for got, want in zip(prepared(args, direction)[2], hvps):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_the_hessian_batched_and_column_by_column():
    f = _load("products_and_elementwise", "hessian")
    w, x, c = _arguments([(3, 2), (2, 3), ()], 3)
    batched = yb.hessian(f, argnums=0)(w, x, c)
    columns = yb.hessian(f, argnums=0, chunk_size=1)(w, x, c)
    np.testing.assert_allclose(batched, columns, rtol=1e-10, atol=1e-12)
    direction = np.random.default_rng(4).standard_normal(w.shape)
    hvp = yb.hvp(f, (w, x, c), (direction, np.zeros_like(x), 0.0))[2][0]
    np.testing.assert_allclose(np.tensordot(batched, direction, axes=2), hvp, rtol=1e-10, atol=1e-12)


def test_a_vector_operand_takes_the_statements(monkeypatch):
    ran = _counting(monkeypatch)
    f = _load("vector_operand", "vector")
    args, direction = _arguments([(4, 3), (3,)], 5), _arguments([(4, 3), (3,)], 6)
    hvps = yb.hvp(f, args, direction)[2]
    assert not ran
    step = 1e-5
    up = yb.grad(f, argnums=(0, 1))(*[a + step * d for a, d in zip(args, direction)])
    down = yb.grad(f, argnums=(0, 1))(*[a - step * d for a, d in zip(args, direction)])
    for hv, u, d in zip(hvps, up, down):
        np.testing.assert_allclose(hv, (u - d) / (2 * step), rtol=1e-5, atol=1e-6)


STRONG = '''
import numpy as np


def f(w, x, s):
    h = w @ x
    return np.sum(np.sqrt(h * h) * s)
'''


@pytest.mark.parametrize("zero_direction", [True, False])
def test_strong_zero_as_statement_by_statement(zero_direction, monkeypatch):
    """A zero column of ``x`` makes a zero column of ``h``, where sqrt's derivative is infinite
    and the products are zero by the strong-zero rule: in the block as statement by statement."""
    rng = np.random.default_rng(7)
    w, x = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    x[:, 1] = 0.0
    direction = (rng.standard_normal(w.shape), rng.standard_normal(x.shape), 0.5)
    if zero_direction:
        direction[1][:, 1] = 0.0
    ran = _counting(monkeypatch)
    got = yb.hvp(load_function(STRONG + f"# blocks {zero_direction}\n"), (w, x, 1.5), direction)
    assert ran
    with monkeypatch.context() as m:
        m.setattr(dual_blocks, "PRODUCT_KINDS", ())
        want = yb.hvp(load_function(STRONG + f"# statements {zero_direction}\n"), (w, x, 1.5), direction)
    for a, b in zip(got[1] + got[2], want[1] + want[2]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_the_mlp_is_one_block():
    f = _load("relu_mlp", "shown")
    args = _arguments(CASES[0][1], 8)
    shown = yb.show(f, *args, mode="hvp")
    forward = shown.split("_dual_reverse(")[0]  # the whole body in one block: no rule called
    assert forward.count("dual array block") == 1 and "_dual_product_inputs" in forward and "_rrule2" not in forward


def random_product_program(seed: int) -> str:
    """A straight-line function of 4x4 matrices ``w``, ``x`` and a float ``s``: products, masks
    and elementwise operations of the values made so far, then a sum."""
    rng = np.random.default_rng(seed)
    values, arrays, lines = ["w", "x", "s"], {"w", "x"}, []
    for k in range(int(rng.integers(4, 9))):
        a, b = (values[int(i)] for i in rng.integers(0, len(values), 2))
        kind = str(rng.choice(["matmul", "dot", "mask", "mul", "add", "tanh", "square", "kron"]))
        pair = [v for v in (a, b) if v in arrays] or ["w"]
        if kind in ("matmul", "dot"):
            left, right = pair[0], pair[-1]
            expr = f"{left} @ {right}.T" if kind == "matmul" else f"np.dot({left}, {right}) * 0.5"
        elif kind == "kron":
            expr = f"np.kron({pair[0]}, {pair[-1]})[:4, :4]"
        elif kind == "mask":
            expr = f"{pair[0]} * ({pair[0]} > 0.1)"
        elif kind == "mul":
            expr = f"{a} * {b}"
        elif kind == "add":
            expr = f"{a} + {b}"
        elif kind == "tanh":
            expr = f"np.tanh({a})"
        else:
            expr = f"{a} ** 2"
        values.append(f"v{k}")
        if kind in ("matmul", "dot", "mask", "kron") or a in arrays or b in arrays:
            arrays.add(f"v{k}")
        lines.append(f"    v{k} = {expr}")
    last = values[-1]
    body = "\n".join(lines)
    return f"import numpy as np\n\n\ndef f(w, x, s):\n{body}\n    return np.sum({last} * x) + s * np.sum(w @ x)\n"


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_as_statement_by_statement(seed, monkeypatch):
    source = random_product_program(seed)
    rng = np.random.default_rng(seed + 300)
    args = (rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5, float(rng.normal()))
    direction = (rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), float(rng.normal()))
    value, grads, hvps = yb.hvp(load_function(source + "# blocks\n"), args, direction)
    with monkeypatch.context() as m:
        m.setattr(dual_blocks, "PRODUCT_KINDS", ())
        value0, grads0, hvps0 = yb.hvp(load_function(source + "# statements\n"), args, direction)
    assert value == pytest.approx(value0, rel=1e-12)
    for got, want in zip(grads + hvps, grads0 + hvps0):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
