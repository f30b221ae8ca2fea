"""Recycled buffers for large arrays (transform/templates.py): results and fdata of inline array
operations are reused from one call to the next, but only when nothing else refers to them, so
values the caller keeps (outputs, aux data, arrays stored in containers) are never overwritten."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import buffers

N = 3 * buffers.MIN_SIZE  # large enough to be recycled


def chain(x, w):
    a = np.sin(x) * w
    b = a / (1.5 + w) - x
    c = np.log(np.exp(b) + 2.0) ** 2
    return np.sum(c * x)


def keeps_intermediate(x):
    a = np.sin(x) * 2.0
    kept = [a]
    b = a * x
    return np.sum(b), kept


def test_gradients_of_large_arrays_are_right_and_repeatable():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(N), rng.uniform(0.5, 1.5, N)
    v = rng.standard_normal(N)
    first = yb.grad(chain, argnums=(0, 1))(x, w)
    for _ in range(3):  # later calls run on recycled buffers
        again = yb.grad(chain, argnums=(0, 1))(x, w)
        np.testing.assert_array_equal(again[0], first[0])
        np.testing.assert_array_equal(again[1], first[1])
    h = 1e-6
    finite = (chain(x + h * v, w) - chain(x - h * v, w)) / (2 * h)
    assert np.dot(first[0], v) == pytest.approx(finite, rel=1e-5)
    assert yb.jvp(chain, (x, w), (v, np.zeros(N)))[1] == pytest.approx(finite, rel=1e-5)


def test_values_the_caller_keeps_are_not_recycled():
    x = np.random.default_rng(1).standard_normal(N)
    (value, kept), g = yb.value_and_grad(keeps_intermediate, has_aux=True)(x)
    snapshot = kept[0].copy()
    for _ in range(3):
        yb.grad(keeps_intermediate, has_aux=True)(x * 1.5)
        yb.grad(chain, argnums=0)(x, x * x + 1.0)
    np.testing.assert_array_equal(kept[0], snapshot)
    np.testing.assert_allclose(g, 2.0 * np.cos(x) * x + 2.0 * np.sin(x))


def test_release_pools_only_unreferenced_buffers():
    buffers.clear()
    held = np.zeros(N)
    keeper = [held]
    buffers.release(held)  # also referenced by keeper: not pooled
    assert buffers.pooled((N,)) == 0

    def spent():
        buffer = np.zeros(N)
        buffers.release(buffer)

    spent()
    assert buffers.pooled((N,)) == 1
    assert keeper[0] is held
    view = np.zeros(N)[:]
    buffers.release(view)  # a view: never pooled (its base may be in use)
    assert buffers.pooled((N,)) == 1
    buffers.clear()


def test_sweep_pools_lent_buffers_nothing_else_holds():
    buffers.clear()
    like = np.empty(N)
    kept = buffers.scratch(like)  # lent, and still referred to here
    dropped = buffers.zeros_like(like)
    del dropped  # lent, and now referred to by the pool's records only
    buffers.sweep()
    assert buffers.pooled((N,)) == 1
    reused = buffers.scratch(like)
    assert reused is not kept
    kept[...] = 1.0
    buffers.sweep()  # `kept` and `reused` are still in use: not pooled
    assert buffers.pooled((N,)) == 0 and np.all(kept == 1.0)
    buffers.clear()


_RNG = np.random.default_rng(7)
_X = _RNG.standard_normal((24, 40)) * 0.3
_W2 = _RNG.standard_normal((6, 512)) * 0.1


def _relu_layer(w):
    """A masked product (``h * (0 <= h)``) between two matrix products, large enough for the
    in-place reverse steps: its cotangent is spent once added, so the mask is applied in its
    own memory, and the products' spent operands are dropped."""
    h = w @ _X
    h = h * (0 <= h)
    return np.sum(np.sin(_W2 @ h))


def _relu_shared(w):
    """The masked product read by two products and through a list (its fdata referred to
    elsewhere): the cotangents from both reach ``w``."""
    h = w @ _X
    m = h * (0 <= h)
    box = [m]
    return np.sum(np.cos(_W2 @ m)) + np.sum((box[0] @ _X.T) ** 2)


@pytest.mark.parametrize("f", [_relu_layer, _relu_shared])
def test_masked_products_of_large_matrices_in_every_mode(f):
    from .all_modes import check_all_modes

    w = np.random.default_rng(3).standard_normal((512, 24)) * 0.4  # 512 x 40 products: large
    assert 512 * 40 >= buffers.MIN_SIZE
    first = yb.grad(f)(w)
    np.testing.assert_array_equal(yb.grad(f)(w), first)  # again, on recycled buffers
    check_all_modes(f, w, tol=1e-5, second_order=False)
    v = np.random.default_rng(4).standard_normal(w.shape)
    h = 1e-5
    hvp = yb.hvp(f, (w,), (v,))[2][0]
    slope = (yb.grad(f)(w + h * v) - yb.grad(f)(w - h * v)) / (2 * h)
    np.testing.assert_allclose(hvp, slope, rtol=1e-4, atol=1e-6)


def test_spent_product_leaves_a_held_cotangent_alone():
    """``add_spent_product`` overwrites its cotangent only when nothing but the caller's own
    name refers to it (the caller passes a cotangent it is done with)."""
    target, mask = np.zeros(N), np.arange(N) % 3 == 0
    held = np.random.default_rng(5).standard_normal(N)
    snapshot = held.copy()
    keeper = [held]
    buffers.add_spent_product(target, held, mask)  # also in `keeper`: left alone
    np.testing.assert_array_equal(keeper[0], snapshot)
    np.testing.assert_array_equal(target, snapshot * mask)

    def spent():
        cotangent = snapshot.copy()
        buffers.add_spent_product(target, cotangent, mask)
        return cotangent

    overwritten = spent()
    np.testing.assert_array_equal(target, 2 * snapshot * mask)
    np.testing.assert_array_equal(overwritten, snapshot * mask)  # the product, in its memory
