"""``scipy.stats.multivariate_normal`` (``logpdf``, ``pdf``, ``entropy``), ``dirichlet``
(``logpdf``, ``pdf``, ``mean``, ``var``, ``entropy``) and ``multivariate_t`` (``logpdf``,
``pdf``), in both call forms, by definitions in NumPy that yuebing differentiates like user code
(``scipy_stats.derived``): in ``x`` and every parameter (``mean``, ``cov``; ``alpha``; ``loc``,
``shape``, ``df``).

SciPy checks the arguments first (its own ``_process_parameters``, ``_dirichlet_check_input``,
on the primal values: the same errors). The covariance (``cov``, ``shape``) is read, as SciPy reads it,
from its lower triangle (the gradient of a matrix is lower triangular: an off-diagonal entry
stands for both; a scalar or a vector stands for ``c * I`` or ``diag(c)``); it must be
positive definite (``allow_singular=True`` is accepted but a singular matrix is refused by the
solve). A frozen distribution built inside the differentiated code (``multivariate_normal(mean,
cov)``) carries the differentiated parameters; one built outside is a constant.
"""
from __future__ import annotations

import numpy as np

from .cases import Case, randn, randpos, randu
from .declare import nondifferentiable
from .scipy_stats import derived, refused

try:
    import scipy.special as sp
    from scipy.stats import _multivariate as mv
except ImportError:  # pragma: no cover - SciPy is optional
    mv = None

LOG_2PI = float(np.log(2 * np.pi))


# --------------------------------------------------------------------------------------------
# Argument handling (SciPy's own checks, on the primal values)
# --------------------------------------------------------------------------------------------


def _mvn_dim(mean, cov, allow_singular):
    """The dimension, after SciPy's checks of ``mean`` and ``cov``."""
    return mv.multivariate_normal._process_parameters(mean, cov, allow_singular)[0]


def _mvt_dim(loc, shape, df):
    dim, _, _, df = mv.multivariate_t._process_parameters(loc, shape, df)
    return dim, bool(np.isinf(df))


def _dirichlet_check(alpha, x):
    mv._dirichlet_check_parameters(alpha)
    mv._dirichlet_check_input(np.asarray(alpha), x)
    return np.shape(x)[0] != np.shape(alpha)[0]  # x lacks its last entry


def _has(obj, name):
    return name in vars(obj)


def _constant_parameters(frozen, names):
    """The parameters of a frozen distribution built outside differentiated code (constants)."""
    return tuple(getattr(frozen, n) for n in names)


nondifferentiable(_mvn_dim, _mvt_dim, _dirichlet_check, _has, _constant_parameters)


def _matrix(c, dim):
    """A covariance as SciPy reads it: a scalar ``c I``, a vector ``diag(c)``, or the symmetric
    matrix of a matrix's lower triangle."""
    c = np.asarray(c) * 1.0
    if c.ndim == 0:
        return c * np.eye(dim)
    if c.ndim == 1:
        return np.diag(c)
    return np.tril(c) + np.tril(c, -1).T  # SciPy reads the lower triangle only (eigh's default)


def _quantiles(x, dim):
    """``x`` as rows of ``dim`` coordinates (SciPy's ``_process_quantiles``)."""
    x = np.asarray(x) * 1.0
    if x.ndim == 0:
        return x.reshape((1, 1)) if dim == 1 else x.reshape((1,))
    if x.ndim == 1:
        return x.reshape((-1, 1)) if dim == 1 else x.reshape((1, -1))
    return x


def _squeeze(out):
    out = np.squeeze(np.asarray(out))
    return out[()] if out.ndim == 0 else out


def _mahalanobis_logdet(diff, matrix, dim):
    """``(diff_i^T A^-1 diff_i for each row, log det A)``."""
    rows = diff.reshape((-1, dim))
    solved = np.linalg.solve(matrix, rows.T)
    maha = np.sum(rows.T * solved, axis=0).reshape(diff.shape[:-1])
    return maha, np.linalg.slogdet(matrix)[1]


# --------------------------------------------------------------------------------------------
# multivariate_normal
# --------------------------------------------------------------------------------------------


def _mvn_logpdf_of(x, mean, cov, allow_singular):
    dim = _mvn_dim(mean, cov, allow_singular)
    mean = np.zeros(dim) if mean is None else np.asarray(mean) * 1.0
    x = _quantiles(x, dim)
    maha, logdet = _mahalanobis_logdet(x - mean, _matrix(cov, dim), dim)
    return -0.5 * (dim * LOG_2PI + logdet + maha)


def _mvn_logpdf(dist, x, mean=None, cov=1, allow_singular=False):
    return _squeeze(_mvn_logpdf_of(x, mean, cov, allow_singular))


def _mvn_pdf(dist, x, mean=None, cov=1, allow_singular=False):
    return _squeeze(np.exp(_mvn_logpdf_of(x, mean, cov, allow_singular)))


def _mvn_entropy(dist, mean=None, cov=1):
    dim = _mvn_dim(mean, cov, False)
    return 0.5 * (dim * (1.0 + LOG_2PI) + np.linalg.slogdet(_matrix(cov, dim))[1])


def _mvn_shell(dist, mean, cov, allow_singular, seed):
    return dist(mean, cov, allow_singular=allow_singular, seed=seed)


def _mvn_freeze(dist, mean=None, cov=1, allow_singular=False, seed=None):
    frozen = _mvn_shell(dist, mean, cov, allow_singular, seed)
    frozen._yuebing_parameters = (mean, cov)
    return frozen


def _mvn_parameters(frozen):
    if _has(frozen, "_yuebing_parameters"):
        return frozen._yuebing_parameters
    return _constant_parameters(frozen, ("mean", "cov"))


def _mvn_frozen_logpdf(frozen, x):
    mean, cov = _mvn_parameters(frozen)
    return _squeeze(_mvn_logpdf_of(x, mean, cov, frozen.allow_singular))


def _mvn_frozen_pdf(frozen, x):
    return np.exp(_mvn_frozen_logpdf(frozen, x))


def _mvn_frozen_entropy(frozen):
    mean, cov = _mvn_parameters(frozen)
    return _mvn_entropy(None, mean, cov)


# --------------------------------------------------------------------------------------------
# multivariate_t
# --------------------------------------------------------------------------------------------


def _mvt_logpdf_of(x, loc, shape, df):
    dim, normal = _mvt_dim(loc, shape, df)
    if normal:
        return _mvn_logpdf_of(x, loc, shape, False)
    loc = np.zeros(dim) if loc is None else np.asarray(loc) * 1.0
    x = _quantiles(x, dim)
    maha, logdet = _mahalanobis_logdet(x - loc, _matrix(shape, dim), dim)
    h = 0.5 * (df + dim)
    return sp.gammaln(h) - sp.gammaln(0.5 * df) - 0.5 * dim * np.log(df * np.pi) - 0.5 * logdet \
        - h * np.log1p(maha / df)


def _mvt_logpdf(dist, x, loc=None, shape=1, df=1):
    return _squeeze(_mvt_logpdf_of(x, loc, shape, df))


def _mvt_pdf(dist, x, loc=None, shape=1, df=1):
    return _squeeze(np.exp(_mvt_logpdf_of(x, loc, shape, df)))


def _mvt_shell(dist, loc, shape, df, allow_singular, seed):
    return dist(loc, shape, df, allow_singular=allow_singular, seed=seed)


def _mvt_freeze(dist, loc=None, shape=1, df=1, allow_singular=False, seed=None):
    frozen = _mvt_shell(dist, loc, shape, df, allow_singular, seed)
    frozen._yuebing_parameters = (loc, shape, df)
    return frozen


def _mvt_parameters(frozen):
    if _has(frozen, "_yuebing_parameters"):
        return frozen._yuebing_parameters
    return _constant_parameters(frozen, ("loc", "shape", "df"))


def _mvt_frozen_logpdf(frozen, x):
    loc, shape, df = _mvt_parameters(frozen)
    return _squeeze(_mvt_logpdf_of(x, loc, shape, df))


def _mvt_frozen_pdf(frozen, x):
    return np.exp(_mvt_frozen_logpdf(frozen, x))


# --------------------------------------------------------------------------------------------
# dirichlet (its frozen object's methods are SciPy's Python, calling these)
# --------------------------------------------------------------------------------------------


def _dirichlet_logpdf_of(x, alpha):
    alpha = np.asarray(alpha) * 1.0
    x = np.asarray(x) * 1.0
    if _dirichlet_check(alpha, x):
        x = np.concatenate([x, np.expand_dims(1.0 - np.sum(x, axis=0), 0)], axis=0)
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    lnb = np.sum(sp.gammaln(alpha)) - sp.gammaln(np.sum(alpha))
    return np.sum(sp.xlogy(a - 1.0, x), axis=0) - lnb


def _dirichlet_logpdf(dist, x, alpha):
    return _squeeze(_dirichlet_logpdf_of(x, alpha))


def _dirichlet_pdf(dist, x, alpha):
    return _squeeze(np.exp(_dirichlet_logpdf_of(x, alpha)))


def _dirichlet_mean(dist, alpha):
    alpha = np.asarray(alpha) * 1.0
    return alpha / np.sum(alpha)


def _dirichlet_var(dist, alpha):
    alpha = np.asarray(alpha) * 1.0
    a0 = np.sum(alpha)
    return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1.0))


def _dirichlet_entropy(dist, alpha):
    alpha = np.asarray(alpha) * 1.0
    a0 = np.sum(alpha)
    lnb = np.sum(sp.gammaln(alpha)) - sp.gammaln(a0)
    return lnb + (a0 - alpha.shape[0]) * sp.digamma(a0) - np.sum((alpha - 1.0) * sp.digamma(alpha))


def _dirichlet_shell(dist, alpha, seed):
    return dist(alpha, seed=seed)


def _dirichlet_freeze(dist, alpha, seed=None):
    frozen = _dirichlet_shell(dist, alpha, seed)
    frozen.alpha = np.asarray(alpha)
    return frozen


nondifferentiable(_mvn_shell, _mvt_shell, _dirichlet_shell)

if mv is not None:
    for _target, _definition in [
        (mv.multivariate_normal_gen.logpdf, _mvn_logpdf), (mv.multivariate_normal_gen.pdf, _mvn_pdf),
        (mv.multivariate_normal_gen.entropy, _mvn_entropy), (mv.multivariate_normal_gen.__call__, _mvn_freeze),
        (mv.multivariate_normal_frozen.logpdf, _mvn_frozen_logpdf), (mv.multivariate_normal_frozen.pdf, _mvn_frozen_pdf),
        (mv.multivariate_normal_frozen.entropy, _mvn_frozen_entropy),
        (mv.multivariate_t_gen.logpdf, _mvt_logpdf), (mv.multivariate_t_gen.pdf, _mvt_pdf),
        (mv.multivariate_t_gen.__call__, _mvt_freeze), (mv.multivariate_t_frozen.logpdf, _mvt_frozen_logpdf),
        (mv.multivariate_t_frozen.pdf, _mvt_frozen_pdf),
        (mv.dirichlet_gen.logpdf, _dirichlet_logpdf), (mv.dirichlet_gen.pdf, _dirichlet_pdf),
        (mv.dirichlet_gen.mean, _dirichlet_mean), (mv.dirichlet_gen.var, _dirichlet_var),
        (mv.dirichlet_gen.entropy, _dirichlet_entropy), (mv.dirichlet_gen.__call__, _dirichlet_freeze),
    ]:
        derived(_target, _definition)
    for _owner, _names, _supported in [
        (mv.multivariate_normal_gen, ("cdf", "logcdf", "rvs"), "logpdf, pdf, entropy"),
        (mv.multivariate_normal_frozen, ("cdf", "logcdf", "rvs"), "logpdf, pdf, entropy"),
        (mv.multivariate_t_gen, ("cdf", "rvs", "entropy"), "logpdf, pdf"),
        (mv.multivariate_t_frozen, ("cdf", "rvs", "entropy"), "logpdf, pdf"),
        (mv.dirichlet_gen, ("rvs",), "logpdf, pdf, mean, var, cov, entropy"),
    ]:
        for _name in _names:
            if hasattr(_owner, _name):
                refused(getattr(_owner, _name), _name, _supported)

# check_rule on the methods (the distribution object first: its class's function, as a bound
# method calls it) (tests/test_scipy_stats.py checks both call forms of each)
CASES = [] if mv is None else [
    Case(type(mv.multivariate_normal).logpdf, mv.multivariate_normal, randn(4, 3), randn(3), np.diag([2.0, 1.5, 3.0]), name="multivariate_normal.logpdf"),
    Case(type(mv.multivariate_t).logpdf, mv.multivariate_t, randn(2, 2), randn(2), randpos(2), randpos(), name="multivariate_t.logpdf"),
    Case(type(mv.dirichlet).logpdf, mv.dirichlet, randu(2, low=0.2, high=0.4), randpos(3), name="dirichlet.logpdf (short x)"),
]
