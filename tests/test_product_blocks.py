"""Matrix products in reverse mode's array blocks (transform/array_blocks.py): a straight-line run
mixing ``a @ b`` (``np.matmul``, ``np.dot``), comparisons (masks) and elementwise code runs as one
block with value cotangents -- no zero-filled fdata for the intermediates, each product's
cotangent added into its operands' fdata by gemm. Checked to run, and against central
differences, forward mode and Hessian-vector products of the same function."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import array_blocks

from .block_guards import counting_guard, directional_fd

_RNG = np.random.default_rng(11)
W_CONST = _RNG.standard_normal((5, 4)) * 0.5  # module constants: no derivative


def _counting_guard(monkeypatch) -> list:
    return counting_guard(monkeypatch, "_product_shapes", array_blocks.product_shapes)


def _every_mode(f, args, rel=1e-5, second_order=True):
    """The gradient (plain and prepared), one JVP and one HVP of ``f`` against central differences."""
    argnums = tuple(range(len(args)))
    rng = np.random.default_rng(5)
    direction = tuple(rng.standard_normal(np.shape(a)) if isinstance(a, np.ndarray) else float(rng.standard_normal())
                      for a in args)
    slope = directional_fd(f, args, direction)
    value, grads = yb.value_and_grad(f, argnums=argnums)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    assert sum(float(np.sum(g * d)) for g, d in zip(grads, direction)) == pytest.approx(slope, rel=rel, abs=1e-8)
    prepared = yb.prepare_gradient(f, *args, argnums=argnums)
    for _ in range(2):
        for g, p in zip(grads, prepared(*args)[1]):
            np.testing.assert_allclose(p, g, rtol=1e-12, atol=1e-12)
    assert yb.jvp(f, args, direction)[1] == pytest.approx(slope, rel=rel, abs=1e-8)
    if not second_order:
        return grads
    hvps = yb.hvp(f, args, direction)[2]
    step = 1e-5
    up = yb.grad(f, argnums=argnums)(*[a + step * d for a, d in zip(args, direction)])
    down = yb.grad(f, argnums=argnums)(*[a - step * d for a, d in zip(args, direction)])
    for hv, u, d in zip(hvps, up, down):
        np.testing.assert_allclose(hv, (u - d) / (2 * step), rtol=1e-4, atol=1e-5)
    return grads


def relu_mlp(W2, W1, Y, X):
    H = W1 @ X
    H = H * (0 <= H)
    return np.sum((Y - W2 @ H) ** 2)


def products_and_elementwise(w, x, c):
    """``w`` in a product with itself and elementwise; a float times a product; np.dot and np.matmul."""
    a = w @ w.T
    b = np.sin(a) * c + np.dot(w, x)[:, :1].sum()
    m = np.matmul(x.T, w.T)
    return np.sum(b * b) + np.sum(np.cos(m) * m) + c * np.sum(w)


def broadcast_bias(w, x, bias):
    """A product plus a bias broadcast along its rows: its cotangent summed down to the bias."""
    h = w @ x + bias
    return np.sum(np.tanh(h) * h)


def mask_used_later(w, x):
    """A comparison's result read after the block (no derivative) and a module constant operand."""
    h = W_CONST @ (w @ x)
    keep = h > 0.1
    r = np.sum(h * keep)
    return r + float(np.sum(keep))


def summed_product(w, x):
    """A product summed: its adjoint a float standing for a matrix of that value."""
    h = w @ x
    return np.sum(h) + np.sum(np.sin(w))


def recurrent(w, h):
    """A product block in a loop body, its result carried to the next iteration."""
    for _ in range(3):
        a = w @ h
        h = np.tanh(a) * 0.9 + h
    return np.sum(h * h)


def kron_sums(x, y):
    """np.kron in blocks: a sum's float adjoint (g sum(other), no pass over the kron) and an
    array adjoint (the kron squared), of 2-D and 1-D factors."""
    return np.sum(np.kron(x, y)) + np.sum(np.kron(y, x) ** 2) + np.sum(np.kron(x[0], y[1]) * 0.5)


def vector_operand(w, v):
    """A 1-D operand: the block's guard refuses it, statement by statement runs."""
    y = w @ v
    return np.sum(np.exp(0.1 * y) * y)


@pytest.mark.parametrize("sizes", [(6, 8, 5, 4), (128, 256, 70, 128)], ids=["small", "large"])
def test_relu_mlp(sizes):
    out, hidden, batch, inputs = sizes
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((out, hidden)) * 0.2, rng.standard_normal((hidden, inputs)) * 0.2,
            rng.standard_normal((out, batch)), rng.standard_normal((inputs, batch)))
    # (large: a step of the differences of the gradient flips some units' masks, each changing a
    # row of the gradient: the Hessian-vector product is checked on the small case)
    _every_mode(relu_mlp, args, second_order=out < 100)
    shown = yb.show(relu_mlp, *args)  # one block: no fdata made for H, its mask or W2 @ H
    assert "_product_shapes" in shown and "_zeros_like" not in shown.split("_reverse(")[0]


@pytest.mark.parametrize("f, shapes", [
    (products_and_elementwise, [(4, 3), (3, 5), ()]),
    (broadcast_bias, [(4, 3), (3, 5), (5,)]),
    (mask_used_later, [(4, 3), (3, 6)]),
    (summed_product, [(4, 3), (3, 6)]),
    (recurrent, [(4, 4), (4, 3)]),
    (kron_sums, [(3, 2), (2, 4)]),
])
def test_products_in_blocks(f, shapes, monkeypatch):
    ran = _counting_guard(monkeypatch)
    rng = np.random.default_rng(2)
    args = tuple(float(rng.uniform(0.5, 1.5)) if s == () else rng.standard_normal(s) * 0.7 for s in shapes)
    _every_mode(f, args)
    assert ran, "the product block did not run"


def test_vector_operand_takes_the_statements(monkeypatch):
    ran = _counting_guard(monkeypatch)
    rng = np.random.default_rng(3)
    _every_mode(vector_operand, (rng.standard_normal((4, 3)), rng.standard_normal(3)))
    assert not ran


def test_shapes_that_do_not_chain_raise_numpy_s_error():
    with pytest.raises(ValueError, match="matmul"):
        yb.grad(relu_mlp)(np.ones((3, 4)), np.ones((5, 6)), np.ones((3, 2)), np.ones((5, 2)))


def test_product_shapes():
    """The guard: operands must be matrices that chain; groups broadcast; floats are scalars."""
    a, b = np.ones((3, 4)), np.ones((4, 2))
    assert array_blocks.product_shapes((a, b), (((0,), (1,)),), ((0,), (1,), (2,))) == \
        ([(3, 4), (4, 2), (3, 2)], True, [(3, 2)])
    assert array_blocks.product_shapes((a, a), (((0,), (1,)),), ((0,), (1,), (2,))) is None  # 4 != 3
    assert array_blocks.product_shapes((a, np.ones(4)), (((0,), (1,)),), ((0,), (1,), (2,))) is None  # a vector
    assert array_blocks.product_shapes((a, 2.0), (((0,), (1,)),), ((0,), (1,), (2,))) is None  # a float
    bias = np.ones(2)
    assert array_blocks.product_shapes((a, b, bias), (((0,), (1,)),), ((0,), (1,), (2, 3))) == \
        ([(3, 4), (4, 2), (3, 2)], False, [(3, 2)])
