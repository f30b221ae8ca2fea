"""rules/numpy_nan_statistics.py against ``jax.numpy``'s twins (gradients, forward tangents and
Hessian-vector products, JAX in float64) and against central differences where JAX has no
twin of an option; the rule cases (check_rule, second and third order) run from the module's
CASES in tests/test_rules.py, test_second_order.py and test_third_order.py."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 7))
A_NAN = np.where(np.arange(28).reshape(4, 7) % 5 == 2, np.nan, A)  # a NaN or two in every row
W = RNG.standard_normal(4)  # weights of the per-row results
Q = np.array([0.31, 0.77])

# (name, call(xp, a)) with a NaN-free or a NaN-holding input; every call reduces along axis 1
CALLS = {
    "nanvar": (lambda xp, a: xp.nanvar(a, axis=1), A_NAN),
    "nanvar ddof": (lambda xp, a: xp.nanvar(a, axis=1, ddof=1), A_NAN),
    "nanstd": (lambda xp, a: xp.nanstd(a, axis=1), A_NAN),
    "nanprod": (lambda xp, a: xp.nanprod(a, axis=1), A_NAN),
    "nancumsum": (lambda xp, a: xp.nancumsum(a, axis=1)[:, -3], A_NAN),
    "nancumprod": (lambda xp, a: xp.nancumprod(a, axis=1)[:, -2], A_NAN),
    "nanmedian": (lambda xp, a: xp.nanmedian(a, axis=1), A_NAN),
    "nanmedian odd": (lambda xp, a: xp.nanmedian(a[:, 1:], axis=1), A_NAN),
    "quantile": (lambda xp, a: xp.quantile(a, 0.37, axis=1), A),
    "quantile midpoint": (lambda xp, a: xp.quantile(a, 0.37, axis=1, method="midpoint"), A),
    "quantile nearest": (lambda xp, a: xp.quantile(a, 0.37, axis=1, method="nearest"), A),
    "percentile": (lambda xp, a: xp.percentile(a, 64.0, axis=1), A),
    "nanquantile": (lambda xp, a: xp.nanquantile(a, 0.41, axis=1), A_NAN),
    "nanpercentile": (lambda xp, a: xp.nanpercentile(a, 23.0, axis=1), A_NAN),
}


@pytest.fixture(scope="module")
def jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.numpy


def _loss(xp, call):
    return lambda a: xp.sum(xp.sin(call(xp, a * a)) * W)


@pytest.mark.parametrize("name", CALLS)
def test_against_jax_in_every_mode(name, jnp):
    import jax

    call, a = CALLS[name]
    ours, theirs = _loss(np, call), _loss(jnp, call)
    read = ~np.isnan(a)  # JAX's gradient at a NaN input is its own business; ours is exactly 0
    grad = yb.grad(ours)(a)
    np.testing.assert_allclose(grad[read], np.asarray(jax.grad(theirs)(a))[read], rtol=1e-9, atol=1e-12)
    assert np.all(grad[~read] == 0)
    v = np.where(read, RNG.standard_normal(a.shape), 0.0)
    np.testing.assert_allclose(yb.jvp(ours, (a,), (v,))[1], jax.jvp(theirs, (a,), (v,))[1], rtol=1e-9, atol=1e-12)
    hvp = yb.hvp(ours, (a,), (v,))[2][0]
    expected = np.asarray(jax.jvp(jax.grad(theirs), (a,), (v,))[1])
    np.testing.assert_allclose(hvp[read], expected[read], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_quantiles_in_q_against_jax(fn, jnp):
    import jax

    a = A if fn in ("quantile", "percentile") else A_NAN
    scale = 100.0 if "percentile" in fn else 1.0
    ours = lambda q: np.sum(getattr(np, fn)(a, q * scale, axis=1) ** 2 * W[None, :])  # noqa: E731
    theirs = lambda q: jnp.sum(getattr(jnp, fn)(a, q * scale, axis=1) ** 2 * W[None, :])  # noqa: E731
    np.testing.assert_allclose(yb.grad(ours)(Q), jax.grad(theirs)(Q), rtol=1e-9)
    np.testing.assert_allclose(yb.hessian(ours)(Q), jax.hessian(theirs)(Q), rtol=1e-8, atol=1e-10)


def central(f, x, h=1e-6):
    flat = np.zeros(np.size(x))
    out = []
    for i in range(np.size(x)):
        flat[:] = 0
        flat[i] = h
        step = flat.reshape(np.shape(x))
        out.append((f(x + step) - f(x - step)) / (2 * h))
    return np.array(out).reshape(np.shape(x))


def test_nan_results_pass_no_derivative():
    """A slice with no value (all NaN) or no more than ddof values gives NaN; a derivative taken
    through a mask of the NaN results is the finite differences' (zero from those slices)."""
    a = np.where(np.arange(12).reshape(3, 4) < 4, np.nan, A[:3, :4])  # row 0 all NaN
    a[1, :3] = np.nan  # row 1: one value

    def f(x):
        total = 0.0
        for y in (np.nanmedian(x, axis=1), np.nanvar(x, axis=1, ddof=1), np.nanquantile(x, 0.6, axis=1),
                  np.nanstd(x, axis=1)):
            total = total + np.sum(np.where(np.isnan(y), 0.0, y * y))
        return total

    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nan_to_num(central(f, a))
        np.testing.assert_allclose(yb.grad(f)(a), expected, atol=1e-7)


GLOBAL_SAMPLES = RNG.standard_normal(11)  # module level: a read-only view inside differentiated code


def test_module_level_samples():
    """Reported with a module-level array: np.percentile(X, q) failed inside yb.grad."""
    f = lambda q: np.percentile(GLOBAL_SAMPLES, q) * np.nanquantile(GLOBAL_SAMPLES, q / 100)  # noqa: E731
    assert yb.grad(f)(37.0) == pytest.approx(central(f, 37.0), rel=1e-6)


def test_out_and_overwrite_input_leave_the_input_alone():
    a = A.copy()
    out = np.zeros(4)

    def f(x):
        np.quantile(x, 0.37, axis=1, out=out, overwrite_input=True)
        return np.sum(out * W) + np.sum(np.nanmedian(x, axis=1, overwrite_input=True))

    g = yb.grad(f)(a)
    np.testing.assert_array_equal(a, A)
    np.testing.assert_allclose(g, central(f, A.copy()), atol=1e-7)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "inverted_cdf"}, r"numpy.quantile: yuebing does not differentiate method='inverted_cdf'.*'linear'"),
    ({"method": "closest_observation"}, "closest_observation"),
    ({"method": "inverted_cdf", "weights": np.ones(7)}, "weights="),
])
def test_step_function_methods_are_refused_with_advice(kwargs, message):
    with pytest.raises(RuleArgumentError, match=message):
        yb.grad(lambda a: np.sum(np.quantile(a, 0.4, axis=1, **kwargs)))(A)


def test_numpys_own_errors():
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        yb.grad(lambda a: np.quantile(a, 1.5))(A)
    with pytest.raises(TypeError):
        yb.grad(lambda a: np.real(np.quantile(a + 1j, 0.5)))(A)
