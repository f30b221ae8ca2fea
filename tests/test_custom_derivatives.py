"""``yb.custom_vjp``, ``yb.custom_jvp``, ``yb.stop_gradient``, ``yb.checkpoint`` and ``yb.linearize``
in every mode, against central differences (where the custom rule is the true derivative), the
custom rule itself (where it is not), and the dot-product identity between forward and reverse."""
from __future__ import annotations

import functools
import tracemalloc

import numpy as np
import pytest

import yuebing as yb
from tests.modes import central

X = np.array([0.3, -1.2, 2.0])
Y = np.array([2.0, 1.0, 3.0])
V = np.array([1.0, 0.5, -0.3])


# --------------------------------------------------------------------------------------------
# custom_vjp
# --------------------------------------------------------------------------------------------


@yb.custom_vjp
def softplus(x):
    return np.log1p(np.exp(x))


def _softplus_fwd(x):
    return softplus(x), x


def _softplus_bwd(x, g):
    return (g / (1.0 + np.exp(-x)),)


softplus.defvjp(_softplus_fwd, _softplus_bwd)


@functools.partial(yb.custom_vjp, nondiff_argnums=(0,))
def scaled_product(k, x, y):  # k is not differentiated: bwd receives it first
    return k * x * y


def _scaled_fwd(k, x, y):
    return scaled_product(k, x, y), (x, y)


def _scaled_bwd(k, residuals, g):
    x, y = residuals
    return k * g * y, k * g * x


scaled_product.defvjp(_scaled_fwd, _scaled_bwd)


def softplus_loss(x):
    return np.sum(softplus(x) * x)


def test_custom_vjp_gradient_matches_central_differences():
    np.testing.assert_allclose(yb.grad(softplus_loss)(X), central(softplus_loss, X, 1e-6), rtol=1e-6)
    scalar = lambda a: softplus(a) * 2.0  # noqa: E731
    np.testing.assert_allclose(yb.grad(scalar)(0.7), central(scalar, 0.7, 1e-6), rtol=1e-6)


def test_custom_vjp_hvp_and_hessian_match_differences_of_the_gradient():
    hessian = central(yb.grad(softplus_loss), X, 1e-5)
    np.testing.assert_allclose(yb.hvp(softplus_loss, (X,), (V,))[2][0], hessian @ V, rtol=1e-5)
    np.testing.assert_allclose(yb.hessian(softplus_loss)(X), hessian, rtol=1e-5, atol=1e-8)


def test_custom_vjp_rule_is_what_reverse_mode_uses():
    @yb.custom_vjp
    def clipped(x):
        return x * 1.0

    clipped.defvjp(lambda x: (clipped(x), None), lambda res, g: (np.clip(g, -1.0, 1.0),))
    g = yb.grad(lambda x: np.sum(clipped(x) * np.array([3.0, 0.5, -2.0])))(X)
    np.testing.assert_array_equal(g, [1.0, 0.5, -1.0])  # the clip the rule applies, not the derivative (3, .5, -2)


def test_custom_vjp_nondiff_argnums_and_keywords():
    f = lambda x, y: np.sum(scaled_product(2.5, x, y=y) ** 2)  # noqa: E731
    gx, gy = yb.grad(f, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, central(lambda x: f(x, Y), X, 1e-6), rtol=1e-6)
    np.testing.assert_allclose(gy, central(lambda y: f(X, y), Y, 1e-6), rtol=1e-6)


def test_custom_vjp_on_a_dict_argument():
    @yb.custom_vjp
    def energy(p):
        return np.sum(p["w"] ** 2) * p["s"]

    energy.defvjp(lambda p: (energy(p), p), lambda p, g: ({"w": 2 * g * p["w"] * p["s"], "s": g * np.sum(p["w"] ** 2)},))
    params = {"w": np.array([1.0, -2.0]), "s": 0.5}
    g = yb.grad(lambda p: energy(p) * 3.0)(params)
    np.testing.assert_allclose(g["w"], 3.0 * 2 * params["w"] * 0.5)
    np.testing.assert_allclose(g["s"], 3.0 * 5.0)


def test_custom_vjp_refuses_forward_mode_and_bad_rules():
    with pytest.raises(TypeError, match="custom reverse rule.*custom_jvp"):
        yb.jvp(softplus_loss, (X,), (V,))

    @yb.custom_vjp
    def two(x, y):
        return x * y

    two.defvjp(lambda x, y: (two(x, y), None), lambda res, g: (g,))
    with pytest.raises(TypeError, match="1 cotangents for 2 differentiable arguments"):
        yb.grad(lambda x: two(x, 2.0))(1.0)
    with pytest.raises(TypeError, match="pair"):
        bad = yb.custom_vjp(lambda x: x)
        bad.defvjp(lambda x: x, lambda res, g: (g,))
        yb.grad(lambda x: bad(x))(1.0)


def test_custom_vjp_called_plainly_is_the_function():
    assert softplus(0.5) == np.log1p(np.exp(0.5))
    assert softplus.__name__ == "softplus"


# --------------------------------------------------------------------------------------------
# custom_jvp
# --------------------------------------------------------------------------------------------


@yb.custom_jvp
def sin_times(x, y):
    return np.sin(x) * y


@sin_times.defjvp
def _sin_times_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return sin_times(x, y), np.cos(x) * x_dot * y + np.sin(x) * y_dot


def jvp_loss(x, y):
    return np.sum(sin_times(x, y) ** 2)


def test_custom_jvp_forward_and_reverse_match_central_differences():
    expected_x = central(lambda x: jvp_loss(x, Y), X, 1e-6)
    expected_y = central(lambda y: jvp_loss(X, y), Y, 1e-6)
    value, slope = yb.jvp(jvp_loss, (X, Y), (V, np.zeros(3)))
    np.testing.assert_allclose(slope, expected_x @ V, rtol=1e-6)
    gx, gy = yb.grad(jvp_loss, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, expected_x, rtol=1e-6)
    np.testing.assert_allclose(gy, expected_y, rtol=1e-6)
    scalar = lambda a: sin_times(a, 3.0)  # noqa: E731
    np.testing.assert_allclose(yb.grad(scalar)(0.4), central(scalar, 0.4, 1e-6), rtol=1e-7)


def test_custom_jvp_second_order_matches_differences_of_the_gradient():
    gradient = yb.grad(jvp_loss, argnums=(0, 1))
    hxx = central(lambda x: gradient(x, Y)[0], X, 1e-5)
    hyx = central(lambda x: gradient(x, Y)[1], X, 1e-5)
    hxy = central(lambda y: gradient(X, y)[0], Y, 1e-5)
    _, _, (hv_x, hv_y) = yb.hvp(jvp_loss, (X, Y), (V, V))
    np.testing.assert_allclose(hv_x, hxx @ V + hxy @ V, rtol=1e-5)
    np.testing.assert_allclose(hv_y, hyx @ V + central(lambda y: gradient(X, y)[1], Y, 1e-5) @ V, rtol=1e-5)
    cube = lambda a: sin_times(a, 3.0) ** 3  # noqa: E731
    np.testing.assert_allclose(yb.hessian(cube)(0.4), central(yb.grad(cube), 0.4, 1e-5), rtol=1e-6)


def test_custom_jvp_reverse_is_the_transpose_of_the_custom_rule():
    @yb.custom_jvp
    def straight_through(x):
        return np.round(x)

    @straight_through.defjvp
    def _(primals, tangents):
        return straight_through(primals[0]), 2.0 * tangents[0]  # a made-up slope: 2

    f = lambda x: straight_through(x) * np.array([1.0, -1.0, 0.5])  # noqa: E731
    w = np.array([0.7, 0.2, -1.1])
    _, jv = yb.jvp(f, (X,), (V,))
    _, pullback = yb.vjp(f, X)
    (jtw,) = pullback(w)
    np.testing.assert_allclose(np.dot(jv, w), np.dot(V, jtw), rtol=1e-12)
    np.testing.assert_allclose(jtw, 2.0 * np.array([1.0, -1.0, 0.5]) * w)


# --------------------------------------------------------------------------------------------
# stop_gradient, linearize
# --------------------------------------------------------------------------------------------


def test_stop_gradient_in_every_mode():
    f = lambda x: np.sum(yb.stop_gradient(x) * x)  # noqa: E731
    np.testing.assert_allclose(yb.grad(f)(X), X)
    np.testing.assert_allclose(yb.jvp(f, (X,), (V,))[1], X @ V)
    np.testing.assert_allclose(yb.hvp(f, (X,), (V,))[2][0], 0.0 * V)
    assert yb.grad(lambda a: yb.stop_gradient(a) * a)(1.5) == 1.5


def test_stop_gradient_returns_a_copy_of_arrays():
    x = X.copy()
    y = yb.stop_gradient(x)
    y[0] = 100.0
    np.testing.assert_array_equal(x, X)


def test_linearize_is_the_jvp_at_the_saved_point():
    x = X.copy()
    value, f_jvp = yb.linearize(lambda x: np.sin(x) * x, x)
    x[:] = 0.0  # the caller's later writes do not move the point
    np.testing.assert_allclose(value, np.sin(X) * X)
    np.testing.assert_allclose(f_jvp(V), (np.cos(X) * X + np.sin(X)) * V)
    with pytest.raises(TypeError, match="takes 1 tangents"):
        f_jvp(V, V)


# --------------------------------------------------------------------------------------------
# checkpoint
# --------------------------------------------------------------------------------------------


@yb.checkpoint
def block(x, w):
    for _ in range(50):
        x = np.sin(x * w) * 0.9 + 0.05
    return x


def chain(x, w, steps=10):
    for _ in range(steps):
        x = block(x, w)
    return np.sum(x ** 2)


def chain_plain(x, w, steps=10):
    for _ in range(steps):
        x = block.fun(x, w)
    return np.sum(x ** 2)


def test_checkpoint_gives_the_same_derivatives_in_every_mode():
    x = np.linspace(0.1, 1.0, 5)
    g, g_plain = yb.grad(chain, argnums=(0, 1))(x, 1.3), yb.grad(chain_plain, argnums=(0, 1))(x, 1.3)
    np.testing.assert_allclose(g[0], g_plain[0], rtol=1e-12)
    np.testing.assert_allclose(g[1], g_plain[1], rtol=1e-12)
    np.testing.assert_allclose(g[1], central(lambda w: chain(x, w), 1.3, 1e-6), rtol=1e-5)
    np.testing.assert_allclose(yb.jvp(chain, (x, 1.3), (V[:1].repeat(5), 0.5))[1],
                               yb.jvp(chain_plain, (x, 1.3), (V[:1].repeat(5), 0.5))[1], rtol=1e-12)
    np.testing.assert_allclose(yb.hvp(chain, (x, 1.3), (x, 1.0))[2][1],
                               yb.hvp(chain_plain, (x, 1.3), (x, 1.0))[2][1], rtol=1e-10)


def _peak_memory(f, *args):
    tracemalloc.start()
    try:
        yb.grad(f, argnums=(0, 1))(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpoint_keeps_less_memory_than_the_tape():
    x = np.linspace(0.1, 1.0, 2000)
    with_checkpoints = _peak_memory(chain, x, 1.3)
    taped = _peak_memory(chain_plain, x, 1.3)
    assert with_checkpoints < taped / 4, (with_checkpoints, taped)


def test_checkpoint_refuses_a_function_that_mutates_and_restores_the_argument():
    @yb.checkpoint
    def writes(x):
        x[0] = 5.0
        return np.sum(x)

    x = np.zeros(3)
    with pytest.raises(ValueError, match="mutated its arguments"):
        yb.grad(writes)(x)
    np.testing.assert_array_equal(x, np.zeros(3))


def test_checkpoint_replays_numpy_random_state():
    @yb.checkpoint
    def noisy(x):
        return x * np.random.normal(size=x.shape)

    np.random.seed(3)
    g = yb.grad(lambda x: np.sum(noisy(x) ** 2))(X)
    np.random.seed(3)
    noise = np.random.normal(size=3)
    np.testing.assert_allclose(g, 2 * X * noise ** 2)


@pytest.mark.slow
def test_checkpoint_memory_on_a_hundred_thousand_steps():
    """10^5 steps (100 checkpointed blocks of 1000): the memory the issue asks to show."""
    @yb.checkpoint
    def thousand(x, w):
        for _ in range(1000):
            x = np.sin(x * w) * 0.9 + 0.05
        return x

    def run(x, w, body):
        for _ in range(100):
            x = body(x, w)
        return np.sum(x)

    x = np.linspace(0.1, 1.0, 200)
    with_checkpoints = _peak_memory(lambda x, w: run(x, w, thousand), x, 1.1)
    taped = _peak_memory(lambda x, w: run(x, w, thousand.fun), x, 1.1)
    print(f"10^5 steps: peak {with_checkpoints / 1e6:.1f} MB checkpointed, {taped / 1e6:.1f} MB taped")
    assert with_checkpoints < taped / 20
