"""``scipy.special`` gradients against ``jax.scipy.special``: for every function JAX also has,
``yb.grad`` of a scalar function of SciPy's version equals ``jax.grad`` of the same function of
JAX's version (float64) at random points, in each differentiable argument."""
import numpy as np
import pytest
import scipy.special as sp

import yuebing as yb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
js = jax.scipy.special

_rng = np.random.default_rng(20261202)


def _pos(n=5, low=0.5, high=3.0):
    return _rng.uniform(low, high, n)


def _unit(n=5):
    return _rng.uniform(0.05, 0.95, n)


def _normal(n=5, scale=1.0):
    return scale * _rng.standard_normal(n)


# (id, scipy function, jax function, points); each function is summed over its vector argument.
# The other arguments are constants of the test, the same for both.
A_INT = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
A_SHAPE = _pos(low=0.7, high=4.0)
B_SHAPE = _pos(low=0.7, high=4.0)
Y_POS = _pos()
X_ANY = _normal()
B_WEIGHTS = _pos(n=5)
SIGNED_B = np.array([1.0, -0.5, 2.0, 0.3, -0.1])
Q_FIXED = 2.5

ONE_ARGUMENT = [
    ("gammaln", sp.gammaln, js.gammaln, _pos()),
    ("gammaln negative", sp.gammaln, js.gammaln, np.array([-0.5, -1.3, -2.7, -3.4, -0.2])),
    ("digamma", sp.digamma, js.digamma, _pos()),
    ("gamma", sp.gamma, js.gamma, _pos()),
    ("loggamma", sp.loggamma, js.loggamma, _pos(high=6.0)),
    ("rgamma", sp.rgamma, lambda x: 1.0 / js.gamma(x), np.array([0.3, 1.7, -0.4, -1.6, 2.5])),
    ("polygamma(1)", lambda x: sp.polygamma(1, x), lambda x: js.polygamma(1, x), _pos()),
    ("polygamma(3)", lambda x: sp.polygamma(3, x), lambda x: js.polygamma(3, x), _pos()),
    ("multigammaln", lambda a: sp.multigammaln(a, 3), lambda a: js.multigammaln(a, 3), _pos(low=1.5, high=4.0)),
    ("erf", sp.erf, js.erf, _normal()),
    ("erfc", sp.erfc, js.erfc, _normal()),
    ("erfcx", sp.erfcx, js.erfcx, _normal(scale=3.0)),
    ("erfinv", sp.erfinv, js.erfinv, _rng.uniform(-0.95, 0.95, 5)),
    ("dawsn", sp.dawsn, js.dawsn, _normal(scale=2.0)),
    ("ndtr", sp.ndtr, js.ndtr, _normal(scale=2.0)),
    ("ndtri", sp.ndtri, js.ndtri, _unit()),
    ("log_ndtr", sp.log_ndtr, js.log_ndtr, _normal(scale=3.0)),
    ("log_ndtr tail", sp.log_ndtr, js.log_ndtr, np.array([-35.0, -20.0, -12.5, -7.0, 9.0])),
    ("i0", sp.i0, js.i0, _normal(scale=2.0)),
    ("i0e", sp.i0e, js.i0e, _normal(scale=3.0)),
    ("i1", sp.i1, js.i1, _normal(scale=2.0)),
    ("i1e", sp.i1e, js.i1e, _normal(scale=3.0)),
    ("expit", sp.expit, js.expit, _normal(scale=3.0)),
    ("logit", sp.logit, js.logit, _unit()),
    ("entr", sp.entr, js.entr, _pos()),
    ("xlogy in x", lambda x: sp.xlogy(x, Y_POS), lambda x: js.xlogy(x, Y_POS), _normal()),
    ("xlogy in y", lambda y: sp.xlogy(X_ANY, y), lambda y: js.xlogy(X_ANY, y), _pos()),
    ("xlog1py in x", lambda x: sp.xlog1py(x, Y_POS), lambda x: js.xlog1py(x, Y_POS), _normal()),
    ("xlog1py in y", lambda y: sp.xlog1py(X_ANY, y), lambda y: js.xlog1py(X_ANY, y), _pos()),
    ("rel_entr in x", lambda x: sp.rel_entr(x, Y_POS), lambda x: js.rel_entr(x, Y_POS), _pos()),
    ("rel_entr in y", lambda y: sp.rel_entr(Y_POS, y), lambda y: js.rel_entr(Y_POS, y), _pos()),
    ("kl_div in x", lambda x: sp.kl_div(x, Y_POS), lambda x: js.kl_div(x, Y_POS), _pos()),
    ("kl_div in y", lambda y: sp.kl_div(Y_POS, y), lambda y: js.kl_div(Y_POS, y), _pos()),
    ("beta in a", lambda a: sp.beta(a, B_SHAPE), lambda a: js.beta(a, B_SHAPE), _pos()),
    ("betaln in b", lambda b: sp.betaln(A_SHAPE, b), lambda b: js.betaln(A_SHAPE, b), _pos()),
    ("poch in z", lambda z: sp.poch(z, B_SHAPE), lambda z: js.poch(z, B_SHAPE), _pos()),
    ("poch in m", lambda m: sp.poch(A_SHAPE, m), lambda m: js.poch(A_SHAPE, m), _pos()),
    ("gammainc in x", lambda x: sp.gammainc(A_SHAPE, x), lambda x: js.gammainc(A_SHAPE, x), _pos()),
    ("gammaincc in x", lambda x: sp.gammaincc(A_SHAPE, x), lambda x: js.gammaincc(A_SHAPE, x), _pos()),
    ("betainc in x", lambda x: sp.betainc(A_SHAPE, B_SHAPE, x), lambda x: js.betainc(A_SHAPE, B_SHAPE, x), _unit()),
    ("zeta in q", lambda q: sp.zeta(A_INT + 1.5, q), lambda q: js.zeta(A_INT + 1.5, q), _pos()),
    ("logsumexp", sp.logsumexp, js.logsumexp, _normal(scale=2.0)),
    ("logsumexp in a with b", lambda a: sp.logsumexp(a, b=B_WEIGHTS), lambda a: js.logsumexp(a, b=B_WEIGHTS),
     _normal()),
    ("logsumexp in b", lambda b: sp.logsumexp(X_ANY, b=b), lambda b: js.logsumexp(X_ANY, b=b), _pos()),
    ("logsumexp return_sign", lambda a: sp.logsumexp(a, b=SIGNED_B, return_sign=True)[0],
     lambda a: js.logsumexp(a, b=SIGNED_B, return_sign=True)[0], _normal()),
    ("softmax", lambda x: sp.softmax(x) * Y_POS, lambda x: js.softmax(x) * Y_POS, _normal()),
    ("log_softmax", lambda x: sp.log_softmax(x) * Y_POS, lambda x: js.log_softmax(x) * Y_POS, _normal()),
    ("jv (bessel_jn)", lambda x: sp.jv(A_INT - 1, x), lambda x: js.bessel_jn(x, v=4)[jnp.arange(5), jnp.arange(5)],
     _pos(high=6.0)),
]


def _scalar_yb(f):
    def loss(x):
        return np.sum(f(x))

    return loss


def _scalar_jax(f):
    def loss(x):
        return jnp.sum(f(x))

    return loss


@pytest.fixture(scope="module")
def jax_gradients():
    """JAX's gradient of every row, compiled as one program (one XLA compilation instead of one
    per primitive per row: 12 s instead of 60)."""
    def gradients(xs):
        return [jax.grad(_scalar_jax(g))(x) for (_, _, g, _), x in zip(ONE_ARGUMENT, xs)]

    found = jax.jit(gradients)([jnp.asarray(row[3]) for row in ONE_ARGUMENT])
    return {row[0]: np.asarray(v) for row, v in zip(ONE_ARGUMENT, found)}


@pytest.mark.parametrize("name, f, x", [row[:2] + row[3:] for row in ONE_ARGUMENT], ids=[row[0] for row in ONE_ARGUMENT])
def test_gradient_matches_jax(name, f, x, jax_gradients):
    ours = yb.grad(_scalar_yb(f))(x.copy())
    theirs = jax_gradients[name]
    assert np.all(np.isfinite(theirs)), f"{name}: JAX's gradient is not finite at {x}"
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-12, err_msg=name)


def test_hessian_of_a_log_likelihood_matches_jax():
    """Second order through several special functions at once (a Student-t-like log density)."""
    def ours(w):
        return np.sum(sp.gammaln(w * w + 1.0) + sp.log_ndtr(w) + sp.xlogy(w, w * w + 0.5) - sp.logsumexp(w))

    def theirs(w):
        return jnp.sum(js.gammaln(w * w + 1.0) + js.log_ndtr(w) + js.xlogy(w, w * w + 0.5) - js.logsumexp(w))

    w = _normal(n=4)
    expected = np.asarray(jax.jit(jax.hessian(theirs))(jnp.asarray(w)))
    np.testing.assert_allclose(yb.hessian(ours)(w.copy()), expected, rtol=1e-8, atol=1e-10)
