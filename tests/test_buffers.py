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
