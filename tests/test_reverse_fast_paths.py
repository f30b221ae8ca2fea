"""Reverse mode's shortcuts give what the general paths give: ``np.vectorize(f)(x)`` run once on
the whole array when ``f`` is elementwise (``runtime._vectorized_on_array``), and the rules' zero
fdata of large arrays taken from the buffer pool (``rules.util.ZEROS_LIKE``). Each against
central differences in every mode, and against the path it replaces."""
import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import buffers, dual_vectorize

from .all_modes import check_all_modes

rng = np.random.default_rng(11)
X = rng.normal(size=(4, 5))


def chained(x):
    return np.sum(np.vectorize(lambda v: np.sin(np.cos(np.exp(v))))(x))


def mixed(x):
    """Elementwise arithmetic with constants, then used beside ``x`` itself."""
    return np.sum(np.vectorize(lambda v: np.tanh(-v * 0.5 + 1.0) * np.log(v * v + 2.0) / 3.0)(x) * x)


def capturing(x, w):
    """Captures data: element by element (``whole_array`` refuses it)."""
    return np.sum(np.vectorize(lambda v: np.sin(v * w[0]))(x))


@pytest.mark.parametrize("f", [chained, mixed])
def test_vectorize_on_the_whole_array_in_every_mode(f):
    check_all_modes(f, X)


@pytest.mark.parametrize("f", [chained, mixed])
def test_vectorize_on_the_whole_array_as_element_by_element(f, monkeypatch):
    value, gradient = yb.value_and_grad(f)(X)
    assert value == f(X)  # the same floats, bit for bit
    with monkeypatch.context() as m:
        m.setattr(dual_vectorize, "whole_array", lambda fn: False)
        m.setattr("yuebing.transform.runtime.whole_array", lambda fn: False)
        value_1, gradient_1 = yb.value_and_grad(f)(X)
    assert value_1 == value
    np.testing.assert_allclose(gradient, gradient_1, rtol=1e-13, atol=1e-15)


def test_vectorize_of_a_0d_array_and_captured_data_go_element_by_element():
    g = yb.grad(lambda x: np.vectorize(lambda v: np.sin(np.exp(v)))(x) * 1.0)(np.array(0.3))
    assert g == pytest.approx(math.cos(math.exp(0.3)) * math.exp(0.3), rel=1e-12)
    w = np.array([1.5])
    gx, gw = yb.grad(capturing, argnums=(0, 1))(X, w)
    np.testing.assert_allclose(gx, np.cos(X * 1.5) * 1.5, rtol=1e-12)
    np.testing.assert_allclose(gw, [np.sum(np.cos(X * 1.5) * X)], rtol=1e-12)


def kron_sum(x, y):
    return np.sum(np.kron(x, y) * 1.5)


def test_large_rule_outputs_take_pooled_zero_fdata():
    """np.kron's output (160k elements) gets a pooled fdata; repeated gradients stay right and
    the pool takes the buffer back after each call."""
    x, y = rng.normal(size=(20, 20)), rng.normal(size=(20, 20))
    expected = (1.5 * y.sum() * np.ones_like(x), 1.5 * x.sum() * np.ones_like(y))
    prepared = yb.prepare_gradient(kron_sum, x, y, argnums=(0, 1))
    for _ in range(3):
        _, (gx, gy) = prepared(x, y)
        np.testing.assert_allclose(gx, expected[0], rtol=1e-12)
        np.testing.assert_allclose(gy, expected[1], rtol=1e-12)
    assert buffers.pooled((400, 400)) >= 1


def long_chain(x):
    return np.sum(np.sin(np.cos(np.exp(np.tanh(np.sin(np.cos(np.exp(np.tanh(x * 0.1)))))))))


def test_array_block_reverse_frees_spent_cotangents():
    """An array block's reverse drops each value's cotangent once it has been passed on: the peak
    is the residuals (about one array per operation) plus a few, not one more array per value
    (15 arrays of 200k floats for this chain before, 9 now)."""
    import tracemalloc

    check_all_modes(long_chain, np.linspace(-1.0, 1.0, 7))
    x = np.linspace(-1.0, 1.0, 200_000)
    prepared = yb.prepare_gradient(long_chain, x)
    prepared(x)
    tracemalloc.start()
    try:
        prepared(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 11 * x.nbytes


def short_chain(x):
    return np.sum(np.exp(-0.5 * x ** 2) * x)


def test_short_array_block_reverse_frees_spent_cotangents():
    """A short block (no line spent per freed cotangent) also drops each cotangent on the line that
    passes it on: this chain's gradient peaked at 6 arrays of its size, now 4 (gp_lml's kernel
    block: 3.04 -> 2.71 times the function's peak memory)."""
    import tracemalloc

    check_all_modes(short_chain, np.linspace(-1.0, 1.0, 7))
    x = np.linspace(-1.0, 1.0, 200_000)
    prepared = yb.prepare_gradient(short_chain, x)
    prepared(x)
    tracemalloc.start()
    try:
        prepared(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * x.nbytes
