"""``scipy.special`` through the public API: non-integer orders and shape parameters held constant
(gradients, JVPs and Hessian-vector products against central differences), the refusals for
orders and shape parameters that move, and the conventions the rule cases cannot reach."""
import numpy as np
import pytest
import scipy.special as sp

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

_rng = np.random.default_rng(151)
X = _rng.uniform(0.6, 3.0, 4)
DIRECTION = _rng.standard_normal(4)


def _central_gradient(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def _check_all_orders(f, x=X, rtol=1e-6):
    """Gradient, JVP and HVP of scalar ``f`` at ``x`` against central differences."""
    direction = DIRECTION[:len(x)]
    g = yb.grad(f)(x.copy())
    np.testing.assert_allclose(g, _central_gradient(f, x), rtol=rtol, atol=1e-8)
    _, tangent = yb.jvp(f, (x.copy(),), (direction,))
    assert tangent == pytest.approx(g @ direction, rel=1e-10, abs=1e-12)
    _, _, (hv,) = yb.hvp(f, (x.copy(),), (direction,))
    h = 1e-5
    finite = (yb.grad(f)(x + h * direction) - yb.grad(f)(x - h * direction)) / (2 * h)
    np.testing.assert_allclose(hv, finite, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- constant non-integer parameters


def bessel_mix(x):
    return np.sum(sp.jv(1.5, x) + sp.yv(0.7, x) * sp.iv(0.3, x) + sp.kv(2.5, x) + sp.ive(1.5, x) - sp.kve(0.5, x))


def incomplete(x):
    return np.sum(sp.gammainc(2.5, x) + sp.gammaincc(0.7, 2 * x) + sp.betainc(1.5, 2.5, x / 4))


def inverses(x):
    p = x / 4
    return np.sum(sp.gammaincinv(1.7, p) + sp.betaincinv(2.5, 1.5, p) + sp.ndtri(p) + sp.erfinv(p))


def hurwitz(x):
    return np.sum(sp.zeta(2.5, x) * x)


def spherical(x):
    return np.sum(sp.spherical_jn(2, x) * sp.spherical_yn(1, x, derivative=True)
                  + sp.spherical_in(3, x / 2, derivative=True) - sp.spherical_kn(0, x))


def elliptic(x):
    m = 0.2 * x - 0.4  # crosses 0, where the series takes over
    return np.sum(sp.ellipk(m) * sp.ellipe(m) + sp.ellipk(m * 1e-3))


def logsumexp_signed(x):
    res, sign = sp.logsumexp(x, b=np.array([1.0, -0.3, 0.5, 2.0]), return_sign=True)
    return res * sign


def lambert(x):
    return np.sum(np.real(sp.lambertw(x)) * x)


@pytest.mark.parametrize("f", [bessel_mix, incomplete, inverses, hurwitz, spherical, elliptic,
                               logsumexp_signed, lambert])
def test_first_and_second_order_match_central_differences(f):
    _check_all_orders(f)


def multigammaln_of_a_list(a):
    return np.sum(sp.multigammaln([a[0], 2 * a[1]], 3)) + sp.multigammaln(a[2] + 1.0, 4)


def test_multigammaln_is_right():
    """It was silently wrong before array_like arguments were differentiated (issue 15)."""
    _check_all_orders(multigammaln_of_a_list, x=X[:3] + 1.5)


# ---------------------------------------------------------------- arguments without a derivative


def bessel_order(v, x):
    return np.sum(sp.jv(v, x))


def gammainc_shape(a, x):
    return np.sum(sp.gammainc(a, x))


def betainc_shape(a, b, x):
    return np.sum(sp.betainc(a, b, x))


def zeta_exponent(s, q):
    return np.sum(sp.zeta(s, q))


def riemann(s):
    return np.sum(sp.zeta(s))


@pytest.mark.parametrize("f, args, position, name", [
    (bessel_order, (np.array([0.5, 1.5]), X[:2]), 0, "v"),
    (gammainc_shape, (np.array([0.5, 1.5]), X[:2]), 0, "a"),
    (betainc_shape, (1.5, np.array([0.5, 1.5]), X[:2] / 4), 1, "b"),
    (zeta_exponent, (np.array([2.5, 3.5]), X[:2]), 0, "x"),
    (riemann, (np.array([2.5, 3.5]),), 0, "x"),
])
def test_moving_parameter_is_refused_or_nan(f, args, position, name):
    tangents = tuple(np.ones_like(a) if k == position else np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0
                     for k, a in enumerate(args))
    with pytest.raises(RuleArgumentError, match=f"with respect to {name} .*nonzero tangent"):
        yb.jvp(f, args, tangents)
    with pytest.raises(RuleArgumentError, match=f"with respect to {name}"):
        yb.hvp(f, args, tangents)
    # reverse mode cannot tell a constant from a moving float: the gradient in it is NaN, never 0
    gradients = yb.grad(f, argnums=tuple(range(len(args))))(*args)
    assert np.all(np.isnan(gradients[position]))
    # and the differentiated argument (the last) is unaffected
    if position != len(args) - 1:
        assert np.all(np.isfinite(gradients[-1]))


def test_zero_tangent_in_the_order_is_fine():
    args = (np.array([0.5, 1.5]), X[:2])
    _, tangent = yb.jvp(bessel_order, args, (np.zeros(2), np.ones(2)))
    assert tangent == pytest.approx(np.sum(0.5 * (sp.jv(args[0] - 1, args[1]) - sp.jv(args[0] + 1, args[1]))))


def test_complex_argument_of_a_scaled_bessel_function_is_refused():
    with pytest.raises(RuleArgumentError, match="ive.*real arguments only"):
        yb.grad(lambda z: np.real(sp.ive(1.0, z * (1 + 1j))))(1.5)


# ---------------------------------------------------------------- conventions and stability


def test_log_ndtr_gradient_far_in_the_left_tail():
    x = np.array([-1e3, -200.0, -40.0])
    g = yb.grad(lambda t: np.sum(sp.log_ndtr(t)))(x)
    assert np.all(np.isfinite(g))
    # phi(x)/Phi(x) = -x + 1/(-x) + O(x^-3) as x -> -inf
    np.testing.assert_allclose(g, -x - 1 / x, rtol=1e-6)


def test_gammainc_at_zero():
    """d/dx gammainc(a, 0) is 1 for a = 1, 0 for a > 1, inf for a < 1."""
    g = yb.grad(lambda x: np.sum(sp.gammainc(np.array([1, 2, 0.5]), x)))(np.zeros(3))
    assert g[0] == 1.0 and g[1] == 0.0 and g[2] == np.inf


def test_gammasgn_has_zero_derivative():
    assert yb.grad(lambda x: sp.gammasgn(x) * x)(-1.5) == sp.gammasgn(-1.5)


def test_rgamma_at_the_poles_of_gamma():
    """(1/gamma)'(-n) = (-1)^n n!, and the second derivative there matches differences."""
    x = np.array([0.0, -1.0, -2.0, -3.0])
    g = yb.grad(lambda t: np.sum(sp.rgamma(t)))(x)
    n = -x
    np.testing.assert_allclose(g, (-1.0) ** n * sp.factorial(n), rtol=1e-12)
    _check_all_orders(lambda t: np.sum(sp.rgamma(t) * t), x=x)


def test_comb_reaches_binom():
    """``comb(exact=False)`` computes ``binom``, which had no rule (MissingRuleError)."""
    from tests.all_modes import check_all_modes

    def f(x):
        return sp.comb(5, 2) * x[0] + sp.comb(x[0] * 3 + 5, 2.0) + np.sum(sp.comb(x * 2 + 6, x + 1.5)) \
            + sp.binom(x[1] + 4, 2)

    check_all_modes(f, np.array([0.3, 0.8, -0.2]))
