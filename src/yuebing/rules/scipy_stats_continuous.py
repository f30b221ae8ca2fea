"""The continuous ``scipy.stats`` distributions in standardised form (``z = (x - loc) / scale``),
written with NumPy and ``scipy.special``: ``norm``, ``t``, ``cauchy``, ``laplace``, ``logistic``,
``expon``, ``gamma``, ``beta``, ``chi2``, ``lognorm``, ``uniform``, ``weibull_min``,
``invgamma``, ``halfnorm``, ``truncnorm``. ``scipy_stats.py`` binds the arguments and
differentiates these functions like user code. Outside the support the log-density is ``-inf``
and the distribution function 0 or 1, as SciPy's; invalid parameters give NaN.
"""
from __future__ import annotations

import numpy as np

from .cases import Case, randn, randpos, randu
from .scipy_stats import Family, register_family

try:
    import scipy.special as sp
    import scipy.stats as st
except ImportError:  # pragma: no cover - SciPy is optional
    st = None

LOG_2PI = float(np.log(2 * np.pi))
NAN = float("nan")


def _ones(*shapes):
    """1 broadcast to the shapes' shape (moments that do not depend on them)."""
    out = 1.0
    for s in shapes:
        out = out + 0.0 * s
    return out


def _positive(z, value, outside):
    """``value`` where ``z >= 0`` (the support of the one-sided families), ``outside`` elsewhere."""
    return np.where(z >= 0, value, outside)


# ---- norm ----------------------------------------------------------------------------------

def _norm_logpdf(z):
    return -0.5 * z * z - 0.5 * LOG_2PI


def _norm_ppf(q):
    return sp.ndtri(q)


def _norm_isf(q):
    return -sp.ndtri(q)


# ---- t -------------------------------------------------------------------------------------

def _t_logpdf(z, df):
    h = 0.5 * (df + 1.0)
    return sp.gammaln(h) - sp.gammaln(0.5 * df) - 0.5 * np.log(df * np.pi) - h * np.log1p(z * z / df)


def _t_tail(z, df):
    """P(T > |z|)."""
    return 0.5 * sp.betainc(0.5 * df, 0.5, df / (df + z * z))


def _t_cdf(z, df):
    tail = _t_tail(z, df)
    return np.where(z < 0, tail, 1.0 - tail)


def _t_sf(z, df):
    tail = _t_tail(z, df)
    return np.where(z > 0, tail, 1.0 - tail)


def _t_ppf(q, df):
    p = np.minimum(q, 1.0 - q)
    # z^2 = df (1 - x) / x with x = I^-1(df/2, 1/2; 2p); 1 - x from the mirrored inverse, accurate near p = 1/2
    x = sp.betaincinv(0.5 * df, 0.5, 2.0 * p)
    w = sp.betaincinv(0.5, 0.5 * df, 1.0 - 2.0 * p)
    z = np.sqrt(df * w / x)
    return np.where(q < 0.5, -z, z)


def _t_isf(q, df):
    return -_t_ppf(q, df)


def _t_mean(df):
    return np.where(df > 1, 0.0 * df, NAN)


def _t_var(df):
    return np.where(df > 2, df / (df - 2.0), np.where(df > 1, np.inf, NAN))


def _t_entropy(df):
    h = 0.5 * (df + 1.0)
    return h * (sp.digamma(h) - sp.digamma(0.5 * df)) + 0.5 * np.log(df) + sp.betaln(0.5 * df, 0.5)


# ---- cauchy, laplace, logistic -------------------------------------------------------------

def _cauchy_logpdf(z):
    return -np.log(np.pi * (1.0 + z * z))


def _cauchy_cdf(z):
    return 0.5 + np.arctan(z) / np.pi


def _cauchy_sf(z):
    return 0.5 - np.arctan(z) / np.pi


def _cauchy_ppf(q):
    return np.tan(np.pi * (q - 0.5))


def _cauchy_isf(q):
    return np.tan(np.pi * (0.5 - q))


def _laplace_logpdf(z):
    return -np.abs(z) - np.log(2.0)


def _laplace_cdf(z):
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _laplace_sf(z):
    return _laplace_cdf(-z)


def _laplace_ppf(q):
    return np.where(q < 0.5, np.log(2.0 * q), -np.log(2.0 - 2.0 * q))


def _laplace_isf(q):
    return -_laplace_ppf(q)


def _logistic_logpdf(z):
    a = np.abs(z)
    return -a - 2.0 * np.log1p(np.exp(-a))


def _logistic_cdf(z):
    return sp.expit(z)


def _logistic_sf(z):
    return sp.expit(-z)


def _logistic_logcdf(z):
    return sp.log_expit(z)


def _logistic_logsf(z):
    return sp.log_expit(-z)


def _logistic_isf(q):
    return -sp.logit(q)


# ---- expon, gamma, chi2, invgamma, weibull_min, halfnorm, lognorm -----------------------------

def _expon_logpdf(z):
    return _positive(z, -z, -np.inf)


def _expon_cdf(z):
    return _positive(z, -np.expm1(-np.maximum(z, 0.0)), 0.0)


def _expon_sf(z):
    return _positive(z, np.exp(-np.maximum(z, 0.0)), 1.0)


def _expon_logsf(z):
    return _positive(z, -z, 0.0)


def _expon_ppf(q):
    return -np.log1p(-q)


def _expon_isf(q):
    return -np.log(q)


def _gamma_logpdf(z, a):
    return _positive(z, sp.xlogy(a - 1.0, np.maximum(z, 0.0)) - z - sp.gammaln(a), -np.inf)


def _gamma_cdf(z, a):
    return sp.gammainc(a, np.maximum(z, 0.0))


def _gamma_sf(z, a):
    return sp.gammaincc(a, np.maximum(z, 0.0))


def _gamma_ppf(q, a):
    return sp.gammaincinv(a, q)


def _gamma_isf(q, a):
    return sp.gammainccinv(a, q)


def _gamma_mean(a):
    return a + 0.0


def _gamma_entropy(a):
    return a + sp.gammaln(a) + (1.0 - a) * sp.digamma(a)


def _chi2_logpdf(z, df):
    return _gamma_logpdf(0.5 * z, 0.5 * df) - np.log(2.0)


def _chi2_cdf(z, df):
    return _gamma_cdf(0.5 * z, 0.5 * df)


def _chi2_sf(z, df):
    return _gamma_sf(0.5 * z, 0.5 * df)


def _chi2_ppf(q, df):
    return 2.0 * sp.gammaincinv(0.5 * df, q)


def _chi2_isf(q, df):
    return 2.0 * sp.gammainccinv(0.5 * df, q)


def _chi2_var(df):
    return 2.0 * df


def _chi2_entropy(df):
    return _gamma_entropy(0.5 * df) + np.log(2.0)


def _invgamma_logpdf(z, a):
    zp = np.where(z > 0, z, 1.0)
    return np.where(z > 0, -(a + 1.0) * np.log(zp) - sp.gammaln(a) - 1.0 / zp, -np.inf)


def _invgamma_cdf(z, a):
    zp = np.where(z > 0, z, 1.0)
    return np.where(z > 0, sp.gammaincc(a, 1.0 / zp), 0.0)


def _invgamma_sf(z, a):
    zp = np.where(z > 0, z, 1.0)
    return np.where(z > 0, sp.gammainc(a, 1.0 / zp), 1.0)


def _invgamma_ppf(q, a):
    return 1.0 / sp.gammainccinv(a, q)


def _invgamma_isf(q, a):
    return 1.0 / sp.gammaincinv(a, q)


def _invgamma_mean(a):
    return np.where(a > 1, 1.0 / (a - 1.0), np.inf)


def _invgamma_var(a):
    return np.where(a > 2, 1.0 / ((a - 1.0) ** 2 * (a - 2.0)), np.inf)


def _invgamma_entropy(a):
    return a - (a + 1.0) * sp.digamma(a) + sp.gammaln(a)


def _weibull_logpdf(z, c):
    zp = np.maximum(z, 0.0)
    return _positive(z, np.log(c) + sp.xlogy(c - 1.0, zp) - zp ** c, -np.inf)


def _weibull_cdf(z, c):
    return -np.expm1(-np.maximum(z, 0.0) ** c)


def _weibull_sf(z, c):
    return np.exp(-np.maximum(z, 0.0) ** c)


def _weibull_logsf(z, c):
    return -np.maximum(z, 0.0) ** c


def _weibull_ppf(q, c):
    return (-np.log1p(-q)) ** (1.0 / c)


def _weibull_isf(q, c):
    return (-np.log(q)) ** (1.0 / c)


def _weibull_mean(c):
    return sp.gamma(1.0 + 1.0 / c)


def _weibull_var(c):
    return sp.gamma(1.0 + 2.0 / c) - sp.gamma(1.0 + 1.0 / c) ** 2


def _weibull_entropy(c):
    return -np.log(c) + np.euler_gamma * (1.0 - 1.0 / c) + 1.0


def _halfnorm_logpdf(z):
    return _positive(z, 0.5 * np.log(2.0 / np.pi) - 0.5 * z * z, -np.inf)


def _halfnorm_cdf(z):
    return _positive(z, sp.erf(np.maximum(z, 0.0) / np.sqrt(2.0)), 0.0)


def _halfnorm_sf(z):
    return _positive(z, sp.erfc(np.maximum(z, 0.0) / np.sqrt(2.0)), 1.0)


def _halfnorm_ppf(q):
    return sp.ndtri(0.5 * (1.0 + q))


def _halfnorm_isf(q):
    return -sp.ndtri(0.5 * q)


def _lognorm_logpdf(z, s):
    zp = np.where(z > 0, z, 1.0)
    y = np.log(zp) / s
    return np.where(z > 0, -0.5 * y * y - 0.5 * LOG_2PI - np.log(s * zp), -np.inf)


def _lognorm_cdf(z, s):
    zp = np.where(z > 0, z, 1.0)
    return np.where(z > 0, sp.ndtr(np.log(zp) / s), 0.0)


def _lognorm_sf(z, s):
    zp = np.where(z > 0, z, 1.0)
    return np.where(z > 0, sp.ndtr(-np.log(zp) / s), 1.0)


def _lognorm_ppf(q, s):
    return np.exp(s * sp.ndtri(q))


def _lognorm_isf(q, s):
    return np.exp(-s * sp.ndtri(q))


def _lognorm_mean(s):
    return np.exp(0.5 * s * s)


def _lognorm_var(s):
    e = np.exp(s * s)
    return e * (e - 1.0)


def _lognorm_entropy(s):
    return 0.5 * (1.0 + LOG_2PI) + np.log(s)


# ---- uniform, beta, truncnorm ----------------------------------------------------------------

def _uniform_logpdf(z):
    return np.where((z >= 0) & (z <= 1), 0.0 * z, -np.inf)


def _uniform_cdf(z):
    return np.clip(z, 0.0, 1.0)


def _uniform_sf(z):
    return 1.0 - np.clip(z, 0.0, 1.0)


def _beta_logpdf(z, a, b):
    zc = np.clip(z, 0.0, 1.0)
    inside = (z >= 0) & (z <= 1)
    return np.where(inside, sp.xlogy(a - 1.0, zc) + sp.xlog1py(b - 1.0, -zc) - sp.betaln(a, b), -np.inf)


def _beta_cdf(z, a, b):
    return sp.betainc(a, b, np.clip(z, 0.0, 1.0))


def _beta_sf(z, a, b):
    return sp.betaincc(a, b, np.clip(z, 0.0, 1.0))


def _beta_ppf(q, a, b):
    return sp.betaincinv(a, b, q)


def _beta_isf(q, a, b):
    return sp.betainccinv(a, b, q)


def _beta_mean(a, b):
    return a / (a + b)


def _beta_var(a, b):
    s = a + b
    return a * b / (s * s * (s + 1.0))


def _beta_entropy(a, b):
    return sp.betaln(a, b) - (a - 1.0) * sp.digamma(a) - (b - 1.0) * sp.digamma(b) \
        + (a + b - 2.0) * sp.digamma(a + b)


def _truncnorm_logmass(a, b):
    """log(Phi(b) - Phi(a)), from the upper tail when the interval is right of 0."""
    right = np.log(sp.ndtr(-a) - sp.ndtr(-b))
    left = np.log(sp.ndtr(b) - sp.ndtr(a))
    return np.where(a > 0, right, left)


def _truncnorm_logpdf(z, a, b):
    inside = (z >= a) & (z <= b)
    return np.where(inside, _norm_logpdf(z) - _truncnorm_logmass(a, b), -np.inf)


def _truncnorm_cdf(z, a, b):
    zc = np.clip(z, a, b)
    mass = np.exp(_truncnorm_logmass(a, b))
    return np.where(a > 0, (sp.ndtr(-a) - sp.ndtr(-zc)) / mass, (sp.ndtr(zc) - sp.ndtr(a)) / mass)


def _truncnorm_sf(z, a, b):
    zc = np.clip(z, a, b)
    mass = np.exp(_truncnorm_logmass(a, b))
    return np.where(a > 0, (sp.ndtr(-zc) - sp.ndtr(-b)) / mass, (sp.ndtr(b) - sp.ndtr(zc)) / mass)


def _truncnorm_ppf(q, a, b):
    mass = np.exp(_truncnorm_logmass(a, b))
    return np.where(a > 0, -sp.ndtri(sp.ndtr(-a) - q * mass), sp.ndtri(sp.ndtr(a) + q * mass))


def _phi_times(t):
    """t * phi(t), 0 at infinite t."""
    finite = np.isfinite(t)
    tf = np.where(finite, t, 0.0)
    return np.where(finite, tf * np.exp(_norm_logpdf(tf)), 0.0)


def _truncnorm_mean(a, b):
    mass = np.exp(_truncnorm_logmass(a, b))
    return (np.exp(_norm_logpdf(a)) - np.exp(_norm_logpdf(b))) / mass


def _truncnorm_var(a, b):
    mass = np.exp(_truncnorm_logmass(a, b))
    m = _truncnorm_mean(a, b)
    return 1.0 + (_phi_times(a) - _phi_times(b)) / mass - m * m


def _truncnorm_entropy(a, b):
    mass = np.exp(_truncnorm_logmass(a, b))
    return 0.5 * (1.0 + LOG_2PI) + _truncnorm_logmass(a, b) + 0.5 * (_phi_times(a) - _phi_times(b)) / mass


def _constant(value):
    def moment(*shapes):
        return value * _ones(*shapes)
    return moment


def _register() -> None:
    zero, one = _constant(0.0), _constant(1.0)
    families = [
        (st.norm, Family("norm", (), False, _norm_logpdf, sp.ndtr, _norm_ppf, zero, one,
                         _constant(0.5 * (1.0 + LOG_2PI)), sf=lambda z: sp.ndtr(-z), logcdf=sp.log_ndtr,
                         logsf=lambda z: sp.log_ndtr(-z), isf=_norm_isf)),
        (st.t, Family("t", ("df",), False, _t_logpdf, _t_cdf, _t_ppf, _t_mean, _t_var, _t_entropy,
                      sf=_t_sf, isf=_t_isf)),
        (st.cauchy, Family("cauchy", (), False, _cauchy_logpdf, _cauchy_cdf, _cauchy_ppf, _constant(NAN),
                           _constant(NAN), _constant(float(np.log(4 * np.pi))), sf=_cauchy_sf, isf=_cauchy_isf)),
        (st.laplace, Family("laplace", (), False, _laplace_logpdf, _laplace_cdf, _laplace_ppf, zero,
                            _constant(2.0), _constant(1.0 + float(np.log(2.0))), sf=_laplace_sf, isf=_laplace_isf)),
        (st.logistic, Family("logistic", (), False, _logistic_logpdf, _logistic_cdf, sp.logit, zero,
                             _constant(np.pi ** 2 / 3), _constant(2.0), sf=_logistic_sf,
                             logcdf=_logistic_logcdf, logsf=_logistic_logsf, isf=_logistic_isf)),
        (st.expon, Family("expon", (), False, _expon_logpdf, _expon_cdf, _expon_ppf, one, one, one,
                          sf=_expon_sf, logsf=_expon_logsf, isf=_expon_isf)),
        (st.gamma, Family("gamma", ("a",), False, _gamma_logpdf, _gamma_cdf, _gamma_ppf, _gamma_mean,
                          _gamma_mean, _gamma_entropy, sf=_gamma_sf, isf=_gamma_isf)),
        (st.chi2, Family("chi2", ("df",), False, _chi2_logpdf, _chi2_cdf, _chi2_ppf, _gamma_mean, _chi2_var,
                         _chi2_entropy, sf=_chi2_sf, isf=_chi2_isf)),
        (st.invgamma, Family("invgamma", ("a",), False, _invgamma_logpdf, _invgamma_cdf, _invgamma_ppf,
                             _invgamma_mean, _invgamma_var, _invgamma_entropy, sf=_invgamma_sf, isf=_invgamma_isf)),
        (st.weibull_min, Family("weibull_min", ("c",), False, _weibull_logpdf, _weibull_cdf, _weibull_ppf,
                                _weibull_mean, _weibull_var, _weibull_entropy, sf=_weibull_sf,
                                logsf=_weibull_logsf, isf=_weibull_isf)),
        (st.halfnorm, Family("halfnorm", (), False, _halfnorm_logpdf, _halfnorm_cdf, _halfnorm_ppf,
                             _constant(float(np.sqrt(2 / np.pi))), _constant(1 - 2 / np.pi),
                             _constant(0.5 * float(np.log(np.pi / 2)) + 0.5), sf=_halfnorm_sf, isf=_halfnorm_isf)),
        (st.lognorm, Family("lognorm", ("s",), False, _lognorm_logpdf, _lognorm_cdf, _lognorm_ppf, _lognorm_mean,
                            _lognorm_var, _lognorm_entropy, sf=_lognorm_sf, isf=_lognorm_isf)),
        (st.uniform, Family("uniform", (), False, _uniform_logpdf, _uniform_cdf, lambda q: q + 0.0,
                            _constant(0.5), _constant(1 / 12), zero, sf=_uniform_sf, isf=lambda q: 1.0 - q)),
        (st.beta, Family("beta", ("a", "b"), False, _beta_logpdf, _beta_cdf, _beta_ppf, _beta_mean, _beta_var,
                         _beta_entropy, sf=_beta_sf, isf=_beta_isf)),
        (st.truncnorm, Family("truncnorm", ("a", "b"), False, _truncnorm_logpdf, _truncnorm_cdf, _truncnorm_ppf,
                              _truncnorm_mean, _truncnorm_var, _truncnorm_entropy, sf=_truncnorm_sf)),
    ]
    for dist, family in families:
        register_family(dist, family)


if st is not None:
    _register()

# check_rule on the methods (the distribution object first: its class's function, as a bound
# method calls it) (tests/test_scipy_stats.py checks every method of every family);
# a shape without a derivative formula is passed as an int (a constant)
CASES = [] if st is None else [
    Case(type(st.norm).logpdf, st.norm, randn(3), randn(), randpos(), name="norm.logpdf"),
    Case(type(st.norm).cdf, st.norm, randn(3), kwargs={"loc": 0.3}, name="norm.cdf loc="),
    Case(type(st.t).logpdf, st.t, randn(3), randpos(), randn(), randpos(), name="t.logpdf"),
    Case(type(st.t).cdf, st.t, randn(3), 4, randn(), randpos(), name="t.cdf"),
    Case(type(st.gamma).logpdf, st.gamma, randpos(3), randpos(), kwargs={"scale": 2.0}, name="gamma.logpdf scale="),
    Case(type(st.beta).logpdf, st.beta, randu(3, low=0.1, high=0.9), randpos(), randpos(), name="beta.logpdf"),
    Case(type(st.logistic).ppf, st.logistic, randu(3, low=0.1, high=0.9), randn(), randpos(), name="logistic.ppf"),
    Case(type(st.weibull_min).sf, st.weibull_min, randpos(3), randpos(), name="weibull_min.sf"),
    Case(type(st.truncnorm).logpdf, st.truncnorm, randu(3, low=-0.5, high=0.5), -1.0, randpos(), name="truncnorm.logpdf"),
    Case(type(st.lognorm).entropy, st.lognorm, randpos(), randn(), randpos(), name="lognorm.entropy"),
]
