"""The discrete ``scipy.stats`` distributions in standardised form (``k - loc``), written with
NumPy and ``scipy.special``: ``poisson``, ``binom``, ``nbinom``, ``geom``, ``bernoulli``.
``scipy_stats.py`` binds the arguments and differentiates these functions like user code.

``k`` is an integer: the functions read ``floor(k)`` (zero derivative), and ``logpmf`` is
``-inf`` at a non-integer ``k``, as SciPy's. ``ppf``/``isf`` are SciPy's own values (piecewise
constant in ``q`` and the shapes: zero derivative, ``loc`` shifts them). ``binom``'s ``n`` is a
count (an int); ``nbinom``'s ``n`` may be real: ``logpmf`` is differentiated in it, ``cdf``/``sf``
are not (``scipy_special``'s convention for ``betainc``'s first arguments). ``entropy`` of
``poisson``, ``binom`` and ``nbinom`` is the sum of ``-pmf log pmf`` over the support, cut where
40 standard deviations past the mean.
"""
from __future__ import annotations

import numpy as np

from .cases import Case, randpos, randu
from .declare import nondifferentiable
from .scipy_stats import Family, register_family

try:
    import scipy.special as sp
    import scipy.stats as st
except ImportError:  # pragma: no cover - SciPy is optional
    st = None


def _integer(k):
    """``(floor(k), k is an integer)``."""
    kf = np.floor(k)
    return kf, kf == k


def _support(k, value, low=0.0):
    """``value`` at integers ``k >= low``, ``-inf`` elsewhere (a log-pmf)."""
    kf, integer = _integer(k)
    return np.where(integer & (kf >= low), value, -np.inf)


def _ppf_of(name):
    """SciPy's ``ppf`` (or ``isf``) of the standard distribution, a zero-derivative function."""

    def quantile(method, q, *shapes):
        return getattr(getattr(st, name), method)(q, *shapes)

    quantile.__qualname__ = f"{name} quantile"
    nondifferentiable(quantile)

    def ppf(q, *shapes):
        return quantile("ppf", q, *shapes)

    def isf(q, *shapes):
        return quantile("isf", q, *shapes)

    return ppf, isf


def _entropy_support(name, *shapes):
    """The ``k`` to sum the entropy over: from 0 to 40 standard deviations past the mean, along
    a new first axis."""
    mean, var = getattr(st, name).stats(*shapes)
    top = np.max(mean + 40.0 * np.sqrt(var) + 40.0)  # past it the mass is far below 1e-17
    top = 0 if not np.isfinite(top) else int(top)
    ndim = max([np.ndim(s) for s in shapes] + [0])
    return np.arange(top + 1.0).reshape((-1,) + (1,) * ndim)


nondifferentiable(_entropy_support)


def _sum_entropy(logpmf, k, *shapes):
    lp = logpmf(k, *shapes)
    finite = np.isfinite(lp)
    lpf = np.where(finite, lp, 0.0)
    return -np.sum(np.where(finite, np.exp(lpf) * lpf, 0.0), axis=0)


# ---- poisson --------------------------------------------------------------------------------

def _poisson_logpmf(k, mu):
    kf, _ = _integer(k)
    kp = np.maximum(kf, 0.0)
    return _support(k, sp.xlogy(kp, mu) - sp.gammaln(kp + 1.0) - mu)


def _poisson_cdf(k, mu):
    kf, _ = _integer(k)
    return np.where(kf >= 0, sp.gammaincc(np.maximum(kf, 0.0) + 1.0, mu), 0.0 * mu)


def _poisson_sf(k, mu):
    kf, _ = _integer(k)
    return np.where(kf >= 0, sp.gammainc(np.maximum(kf, 0.0) + 1.0, mu), 1.0 + 0.0 * mu)


def _poisson_mean(mu):
    return mu + 0.0


def _poisson_entropy(mu):
    return _sum_entropy(_poisson_logpmf, _entropy_support("poisson", mu), mu)


# ---- binom ----------------------------------------------------------------------------------

def _binom_logpmf(k, n, p):
    kf, _ = _integer(k)
    kc = np.clip(kf, 0.0, n)
    value = sp.gammaln(n + 1.0) - sp.gammaln(kc + 1.0) - sp.gammaln(n - kc + 1.0) \
        + sp.xlogy(kc, p) + sp.xlog1py(n - kc, -p)
    return np.where(kf <= n, _support(k, value), -np.inf)


def _binom_cdf(k, n, p):
    kf, _ = _integer(k)
    kc = np.clip(kf, 0.0, n - 1.0)
    inner = sp.betainc(n - kc, kc + 1.0, 1.0 - p)
    return np.where(kf < 0, 0.0 * p, np.where(kf >= n, 1.0 + 0.0 * p, inner))


def _binom_sf(k, n, p):
    kf, _ = _integer(k)
    kc = np.clip(kf, 0.0, n - 1.0)
    inner = sp.betainc(kc + 1.0, n - kc, p)
    return np.where(kf < 0, 1.0 + 0.0 * p, np.where(kf >= n, 0.0 * p, inner))


def _binom_mean(n, p):
    return n * p


def _binom_var(n, p):
    return n * p * (1.0 - p)


def _binom_entropy(n, p):
    return _sum_entropy(_binom_logpmf, _entropy_support("binom", n, p), n, p)


# ---- nbinom ---------------------------------------------------------------------------------

def _nbinom_logpmf(k, n, p):
    kf, _ = _integer(k)
    kp = np.maximum(kf, 0.0)
    value = sp.gammaln(n + kp) - sp.gammaln(n) - sp.gammaln(kp + 1.0) + sp.xlogy(n, p) + sp.xlog1py(kp, -p)
    return _support(k, value)


def _nbinom_cdf(k, n, p):
    kf, _ = _integer(k)
    return np.where(kf >= 0, sp.betainc(n, np.maximum(kf, 0.0) + 1.0, p), 0.0 * p)


def _nbinom_sf(k, n, p):
    kf, _ = _integer(k)
    return np.where(kf >= 0, sp.betaincc(n, np.maximum(kf, 0.0) + 1.0, p), 1.0 + 0.0 * p)


def _nbinom_mean(n, p):
    return n * (1.0 - p) / p


def _nbinom_var(n, p):
    return n * (1.0 - p) / (p * p)


def _nbinom_entropy(n, p):
    return _sum_entropy(_nbinom_logpmf, _entropy_support("nbinom", n, p), n, p)


# ---- geom, bernoulli ------------------------------------------------------------------------

def _geom_logpmf(k, p):
    kf, _ = _integer(k)
    kp = np.maximum(kf, 1.0)
    return _support(k, sp.xlog1py(kp - 1.0, -p) + np.log(p), low=1.0)


def _geom_cdf(k, p):
    kf, _ = _integer(k)
    return np.where(kf >= 1, -np.expm1(np.maximum(kf, 1.0) * np.log1p(-p)), 0.0 * p)


def _geom_sf(k, p):
    kf, _ = _integer(k)
    return np.where(kf >= 1, np.exp(np.maximum(kf, 1.0) * np.log1p(-p)), 1.0 + 0.0 * p)


def _geom_logsf(k, p):
    kf, _ = _integer(k)
    return np.where(kf >= 1, np.maximum(kf, 1.0) * np.log1p(-p), 0.0 * p)


def _geom_mean(p):
    return 1.0 / p


def _geom_var(p):
    return (1.0 - p) / (p * p)


def _geom_entropy(p):
    return (sp.entr(p) + sp.entr(1.0 - p)) / p


def _bernoulli_logpmf(k, p):
    kf, _ = _integer(k)
    kc = np.clip(kf, 0.0, 1.0)
    return np.where(kf <= 1, _support(k, sp.xlogy(kc, p) + sp.xlog1py(1.0 - kc, -p)), -np.inf)


def _bernoulli_cdf(k, p):
    kf, _ = _integer(k)
    return np.where(kf < 0, 0.0 * p, np.where(kf >= 1, 1.0 + 0.0 * p, 1.0 - p))


def _bernoulli_sf(k, p):
    kf, _ = _integer(k)
    return np.where(kf < 0, 1.0 + 0.0 * p, np.where(kf >= 1, 0.0 * p, p + 0.0))


def _bernoulli_mean(p):
    return p + 0.0


def _bernoulli_var(p):
    return p * (1.0 - p)


def _bernoulli_entropy(p):
    return sp.entr(p) + sp.entr(1.0 - p)


def _register() -> None:
    q = {name: _ppf_of(name) for name in ("poisson", "binom", "nbinom", "geom", "bernoulli")}
    families = [
        Family("poisson", ("mu",), True, _poisson_logpmf, _poisson_cdf, q["poisson"][0], _poisson_mean,
               _poisson_mean, _poisson_entropy, sf=_poisson_sf, isf=q["poisson"][1]),
        Family("binom", ("n", "p"), True, _binom_logpmf, _binom_cdf, q["binom"][0], _binom_mean, _binom_var,
               _binom_entropy, sf=_binom_sf, isf=q["binom"][1]),
        Family("nbinom", ("n", "p"), True, _nbinom_logpmf, _nbinom_cdf, q["nbinom"][0], _nbinom_mean,
               _nbinom_var, _nbinom_entropy, sf=_nbinom_sf, isf=q["nbinom"][1]),
        Family("geom", ("p",), True, _geom_logpmf, _geom_cdf, q["geom"][0], _geom_mean, _geom_var,
               _geom_entropy, sf=_geom_sf, logsf=_geom_logsf, isf=q["geom"][1]),
        Family("bernoulli", ("p",), True, _bernoulli_logpmf, _bernoulli_cdf, q["bernoulli"][0],
               _bernoulli_mean, _bernoulli_var, _bernoulli_entropy, sf=_bernoulli_sf, isf=q["bernoulli"][1]),
    ]
    for family in families:
        register_family(getattr(st, family.name), family)


if st is not None:
    _register()

# check_rule on the methods (the distribution object first: its class's function, as a bound
# method calls it) (tests/test_scipy_stats.py checks every method of every family)
CASES = [] if st is None else [
    Case(type(st.poisson).logpmf, st.poisson, np.array([0, 1, 3]), randpos(), name="poisson.logpmf"),
    Case(type(st.binom).pmf, st.binom, np.array([0, 2, 5]), 6, randu(low=0.2, high=0.8), name="binom.pmf"),
    Case(type(st.nbinom).logpmf, st.nbinom, np.array([0, 2, 5]), randpos(), randu(low=0.2, high=0.8), name="nbinom.logpmf"),
    Case(type(st.geom).cdf, st.geom, np.array([1, 2, 5]), randu(low=0.2, high=0.8), name="geom.cdf"),
    Case(type(st.bernoulli).entropy, st.bernoulli, randu(low=0.2, high=0.8), name="bernoulli.entropy"),
]
