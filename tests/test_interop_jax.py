"""``yuebing.interop.jax.wrap``: a NumPy function differentiated by yuebing as a JAX function,
checked against JAX's own derivatives of the same function written in ``jax.numpy``: first order
and second order in each mode, under ``jax.jit`` and ``jax.vmap``, and the refusals."""
from __future__ import annotations

import importlib
import re
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from yuebing.interop.jax import wrap  # noqa: E402

# float64 throughout, as the external corpus's JAX oracle does
if not jax.config.jax_enable_x64:
    jax.config.update("jax_enable_x64", True)


def model_np(x, w, n, scale=1.0):
    """Two arrays, an int and a keyword held fixed."""
    return np.sum(np.sin(x) * w) ** 2 * n * scale + np.sum(x ** 3 * w) - np.prod(np.cos(w))


def model_jnp(x, w, n, scale=1.0):
    return jnp.sum(jnp.sin(x) * w) ** 2 * n * scale + jnp.sum(x ** 3 * w) - jnp.prod(jnp.cos(w))


def pair_np(x):
    """A tuple of outputs: an array and a float."""
    return np.tanh(x) * x[::-1], float(np.sum(np.exp(-x ** 2)))


def pair_jnp(x):
    return jnp.tanh(x) * x[::-1], jnp.sum(jnp.exp(-x ** 2))


X = jnp.array([0.1, -0.7, 0.3])
W = jnp.array([1.0, 2.0, -0.5])
V = jnp.array([1.0, -1.0, 0.5])


def close(a, b):
    for p, q in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-10, atol=1e-12)


def jit(f, static=(2,)):
    return jax.jit(f, static_argnums=static)


# JAX's own derivatives, jitted: one compilation each instead of op-by-op dispatch
REF_GRAD = jit(jax.value_and_grad(model_jnp, (0, 1)))
REF_HESSIAN = jit(jax.hessian(model_jnp, (0, 1)))
REF_JACFWD = jit(jax.jacfwd(model_jnp, (0, 1)))
REF_BATCH = jit(jax.vmap(jax.grad(model_jnp), (0, None, None)))
REF_PAIR_JACOBIAN = jax.jit(jax.jacrev(pair_jnp))
REF_PAIR_HESSIAN = jax.jit(jax.hessian(pair_jnp))


@pytest.mark.parametrize("mode", ["vjp", "jacobian"])
def test_reverse_mode_matches_jax(mode):
    op = wrap(model_np, mode=mode)
    close(op(X, W, 3, scale=2.0), model_jnp(X, W, 3, scale=2.0))
    close(jax.value_and_grad(op, (0, 1))(X, W, 3), REF_GRAD(X, W, 3))          # eager
    close(jit(jax.value_and_grad(op, (0, 1)))(X, W, 3), REF_GRAD(X, W, 3))     # under jit
    batch = jnp.stack([X, 2 * X])
    close(jit(jax.vmap(jax.grad(op), (0, None, None)))(batch, W, 3), REF_BATCH(batch, W, 3))
    close(jax.jit(jax.jacrev(wrap(pair_np, mode=mode)))(X), REF_PAIR_JACOBIAN(X))


@pytest.mark.parametrize("mode", ["jvp", "jacobian"])
def test_forward_mode_matches_jax(mode):
    op = wrap(model_np, mode=mode)
    tangent = jax.jvp(lambda x, w: op(x, w, 3), (X, W), (V, -V))[1]
    jacobian = REF_JACFWD(X, W, 3)
    close(tangent, jacobian[0] @ V - jacobian[1] @ V)
    close(jit(jax.jacfwd(op, (0, 1)))(X, W, 3), jacobian)
    close(jax.jit(jax.jacfwd(wrap(pair_np, mode=mode)))(X), REF_PAIR_JACOBIAN(X))


def test_second_order_reverse_over_reverse_in_vjp_mode():
    op = wrap(model_np)
    hessian = REF_HESSIAN(X, W, 3)
    close(jit(jax.jacrev(jax.grad(op, (0, 1)), (0, 1)))(X, W, 3), hessian)
    hvp = jax.jit(jax.grad(lambda x: jax.grad(op)(x, W, 3) @ V))
    close(hvp(X), hessian[0][0] @ V)
    # a vector output's pullback differentiated along both the input and the cotangent
    pullback_twice = jax.grad(lambda x, c: jnp.sum(jax.vjp(wrap(pair_np), x)[1]((c, 2.0))[0] ** 2), (0, 1))
    reference = jax.grad(lambda x, c: jnp.sum(jax.vjp(pair_jnp, x)[1]((c, 2.0))[0] ** 2), (0, 1))
    close(jax.jit(pullback_twice)(X, V), jax.jit(reference)(X, V))


def test_jax_hessian_in_jacobian_mode():
    op = wrap(model_np, mode="jacobian")
    hessian = REF_HESSIAN(X, W, 3)
    close(jit(jax.hessian(op, (0, 1)))(X, W, 3), hessian)
    close(jit(jax.jacrev(jax.jacrev(op)))(X, W, 3), hessian[0][0])
    close(jax.jit(jax.hessian(wrap(pair_np, mode="jacobian")))(X), REF_PAIR_HESSIAN(X))


def test_what_each_mode_refuses():
    with pytest.raises(TypeError, match="forward-mode autodiff"):      # JAX's own refusal
        jax.hessian(wrap(model_np))(X, W, 3)
    with pytest.raises(ValueError, match="do not support transpose"):  # JAX's own refusal
        jax.grad(wrap(model_np, mode="jvp"))(X, W, 3)
    with pytest.raises(NotImplementedError, match="forward over forward"):
        jax.jacfwd(jax.jacfwd(wrap(model_np, mode="jvp")))(X, W, 3)
    with pytest.raises(NotImplementedError, match="third-order derivatives"):
        jax.grad(lambda x: jnp.sum(jax.jacrev(jax.grad(wrap(model_np)))(x, W, 3)))(X)
    with pytest.raises(NotImplementedError, match="third-order derivatives"):
        jax.jacfwd(jax.hessian(wrap(model_np, mode="jacobian")))(X, W, 3)


def test_float32_integer_arrays_and_fixed_arguments():
    def scaled(x, k, offset):
        return np.sum((x + offset) * k) ** 2

    x, k = X.astype(jnp.float32), jnp.array([2, 3, 4])
    op = wrap(scaled)
    assert op(x, k, 1).dtype == jnp.float32
    gx = jit(jax.grad(op))(x, k, 1)
    assert gx.dtype == jnp.float32
    np.testing.assert_allclose(gx, jax.grad(lambda x: jnp.sum((x + 1) * k) ** 2)(x), rtol=1e-6)
    hessian = jit(jax.hessian(wrap(scaled, mode="jacobian")))(x, k, 1)
    assert hessian.dtype == jnp.float32
    np.testing.assert_allclose(hessian, jax.hessian(lambda x: jnp.sum((x + 1) * k) ** 2)(x), rtol=1e-6)


def test_bad_inputs_and_outputs_are_refused():
    op = wrap(model_np)
    with pytest.raises(TypeError, match="holding arrays"):
        op([X], W, 3)
    with pytest.raises(TypeError, match="keyword argument 'scale' holds an array"):
        op(X, W, 3, scale=X)
    with pytest.raises(TypeError, match="is complex"):
        op(X.astype(jnp.complex128), W, 3)
    with pytest.raises(TypeError, match="f returned a list"):
        wrap(lambda x: [x, x])(X)
    with pytest.raises(ValueError, match="mode must be"):
        wrap(model_np, mode="fwd")
    with pytest.raises(np.linalg.LinAlgError, match="out_shape="):
        jax.jit(wrap(np.linalg.cholesky))(jnp.eye(2))          # ones are not positive definite
    cholesky = wrap(np.linalg.cholesky, out_shape=jax.ShapeDtypeStruct((2, 2), jnp.float64))
    a = jnp.array([[2.0, 0.5], [0.5, 1.0]])
    close(jax.jit(cholesky)(a), jnp.linalg.cholesky(a))


def test_import_says_how_to_install_jax(monkeypatch):
    # importing yuebing itself imports neither framework: tests/test_interop_torch.py checks it
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.delitem(sys.modules, "yuebing.interop.jax")
    with pytest.raises(ImportError, match=re.escape("pip install -e '.[interop]'")):
        importlib.import_module("yuebing.interop.jax")
