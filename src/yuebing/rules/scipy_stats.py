"""``scipy.stats`` distributions, by a definition per distribution method that yuebing
differentiates like user code, in reverse, forward and second order.

SciPy's own Python cannot be derived (``_parse_args`` is generated with ``exec``, and its
methods go through ``argsreduce``, ``place``, ``lazywhere``...), so each distribution here is a
``Family``: its shape parameters' names and its methods in standardised form written with NumPy
and ``scipy.special`` (``scipy_stats_continuous.py``, ``scipy_stats_discrete.py``). This module
registers, on SciPy's shared method functions (``rv_continuous.logpdf``, ``rv_discrete.cdf``,
``rv_generic.entropy``...), rules that differentiate a generic Python definition (``_logpdf``,
``_cdf``...): it binds the call's arguments as SciPy does (shapes, then ``loc``, ``scale``,
positionally or by keyword), standardises ``x`` and calls the family's function. A call
``norm.logpdf(x, 0, 2)`` reaches the rule as ``rv_continuous.logpdf(norm, x, 0, 2)`` (a bound
method dispatches on its function with the owner first; second order's dispatch of a bound
method consults the declaration of its function: ``transform/second_order._call_method``).
First order binds a plain call (numbers and arrays) itself, outside the differentiated code
(``_bound_call``): the definition then receives every parameter positionally, which halves the
cost of a gradient. Distribution objects (``rv_generic``, ``multi_rv_generic``) have no tangent.

Frozen distributions: ``norm(loc, scale)`` (``rv_generic.__call__``/``freeze``) is defined as the
real frozen object built from the primal values, whose ``args`` and ``kwds`` are then set to the
differentiated arguments; its methods are SciPy's Python (``self.dist.logpdf(x, *self.args,
**self.kwds)``), derived from source as usual, and reach the rules above.

Derivatives with respect to a shape parameter that enters only through an incomplete gamma or
beta function (``gamma.cdf`` in ``a``, ``t.cdf`` in ``df``, every ``ppf``/``isf`` in a shape)
follow ``scipy_special``'s convention: forward mode and second order raise ``RuleArgumentError``
when that argument's tangent is nonzero, reverse mode gives a NaN cotangent. Discrete
distributions: ``k`` (and ``q`` of ``ppf``/``isf``) have zero derivative (piecewise constant).
A distribution or method without a definition here (``rvs``, ``stats``, ``moment``...) raises
``UnsupportedDistributionError`` in every mode (``interval`` is SciPy's Python calling ``ppf``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from . import core
from ..tangents import register_nondifferentiable_type
from .core import CoDual, Dual, MissingRuleError, RuleArgumentError, primal, register_frule, register_rrule
from .declare import nondifferentiable, nondifferentiable_as
from .second_order import _register as second_order_special, defined_as, defined_by
from .util import defined_rrule

try:
    from scipy.stats._distn_infrastructure import rv_continuous, rv_discrete, rv_generic
except ImportError:  # pragma: no cover - SciPy is optional
    rv_continuous = rv_discrete = rv_generic = None


DEFAULT_METHODS = "logpdf/logpmf, pdf/pmf, cdf, logcdf, sf, logsf, ppf, isf, entropy, mean, var, std, median"


class UnsupportedDistributionError(MissingRuleError):
    """A ``scipy.stats`` distribution or method yuebing has no definition for."""

    def __init__(self, name: str, method: str, supported: list[str]) -> None:
        which = f"{method} of {', '.join(sorted(supported))}" if supported else DEFAULT_METHODS
        TypeError.__init__(
            self, f"yuebing has no derivative for scipy.stats.{name}.{method}: it differentiates {which}. "
            "Write the function with NumPy and scipy.special instead (yuebing differentiates that like any code)")
        self.function = name


@dataclasses.dataclass(frozen=True)
class Family:
    """A univariate distribution in standardised form: ``z = (x - loc) / scale`` (continuous) or
    ``k - loc`` (discrete), the shape parameters after it. Each method is ``f(z, *shapes)`` (or
    ``f(*shapes)`` for the moments and the entropy); None where a default relation serves
    (``sf = 1 - cdf``, ``logcdf = log(cdf)``, ``isf(q) = ppf(1 - q)``)."""

    name: str
    shapes: tuple[str, ...]
    discrete: bool
    logpdf: Callable  # logpmf for a discrete family
    cdf: Callable
    ppf: Callable
    mean: Callable
    var: Callable
    entropy: Callable
    sf: Callable | None = None
    logcdf: Callable | None = None
    logsf: Callable | None = None
    isf: Callable | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return self.shapes + (("loc",) if self.discrete else ("loc", "scale"))


#: distribution type -> its family (filled by the scipy_stats_* modules)
FAMILIES: dict[type, Family] = {}


def register_family(dist: Any, family: Family) -> None:
    FAMILIES[type(dist)] = family


def _family(dist: Any, method: str, n_args: int, keywords: tuple) -> Family:
    """The family of ``dist`` after checking a call's arguments as SciPy's ``_parse_args`` would
    (too many, unknown or missing ones are TypeErrors)."""
    family = FAMILIES.get(type(dist))
    name = getattr(dist, "name", type(dist).__name__)
    if family is None:
        raise UnsupportedDistributionError(name, method, [f.name for f in FAMILIES.values()])
    names = family.names
    if n_args > len(names):
        raise TypeError(f"scipy.stats.{name}.{method}() takes at most {len(names)} parameters after x "
                        f"({', '.join(names)}), got {n_args}")
    for key in keywords:
        if key not in names:
            raise TypeError(f"scipy.stats.{name}.{method}() got an unexpected keyword argument {key!r}")
        if names.index(key) < n_args:
            raise TypeError(f"scipy.stats.{name}.{method}() got multiple values for argument {key!r}")
    missing = [s for i, s in enumerate(family.shapes) if i >= n_args and s not in keywords]
    if missing:
        raise TypeError(f"scipy.stats.{name}.{method}() missing required argument(s) {', '.join(map(repr, missing))}")
    return family


nondifferentiable(_family)


def _plain(values: tuple) -> bool:
    """Whether every value is a number or an array (no list to convert)."""
    return all(isinstance(v, (int, float, np.number, np.ndarray)) for v in values)


nondifferentiable(_plain)


def _bind(family: Family, args: tuple, kwds: dict) -> list:
    """The parameters in the order ``shapes..., loc[, scale]``, as arrays (differentiated)."""
    if not kwds and len(args) == len(family.names) and _plain(args):
        return list(args)  # the first-order rules bind calls to this form (``_bound_call``)
    values = []
    names = family.names
    for i in range(len(names)):
        if i < len(args):
            values.append(np.asarray(args[i]))
        elif names[i] in kwds:
            values.append(np.asarray(kwds[names[i]]))
        elif names[i] == "loc":
            values.append(0.0)
        else:
            values.append(1.0)
    return values


def _standard(dist: Any, method: str, x: Any, args: tuple, kwds: dict) -> tuple:
    """``(family, z, shapes, loc, scale)`` for a call ``method(x, *args, **kwds)``."""
    family = _family(dist, method, len(args), tuple(kwds))
    values = _bind(family, args, kwds)
    x = np.asarray(x)
    if family.discrete:
        return family, x - values[-1], values[:-1], values[-1], 1.0
    loc, scale = values[-2], values[-1]
    return family, (x - loc) / scale, values[:-2], loc, scale


# --------------------------------------------------------------------------------------------
# The generic definitions (differentiated like user code)
# --------------------------------------------------------------------------------------------


def _logpdf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "logpdf", x, args, kwds)
    return family.logpdf(z, *shapes) - np.log(scale)


def _density(log_density: Any) -> Any:
    """``exp(log_density)``, 0 with a zero derivative where the log-density is -inf (outside the
    support, or at an infinite point): there ``exp(logpdf) * dlogpdf`` would be ``0 * inf = NaN``
    (``norm.pdf(inf - x)``, an ordered probit's outer thresholds)."""
    vanishing = np.isneginf(log_density)
    return np.where(vanishing, 0.0, np.exp(np.where(vanishing, 0.0, log_density)))


def _pdf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "pdf", x, args, kwds)
    return _density(family.logpdf(z, *shapes)) / scale


def _logpmf(dist, k, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "logpmf", k, args, kwds)
    return family.logpdf(z, *shapes)


def _pmf(dist, k, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "pmf", k, args, kwds)
    return _density(family.logpdf(z, *shapes))


def _cdf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "cdf", x, args, kwds)
    return family.cdf(z, *shapes)


def _sf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "sf", x, args, kwds)
    if family.sf is None:
        return 1.0 - family.cdf(z, *shapes)
    return family.sf(z, *shapes)


def _logcdf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "logcdf", x, args, kwds)
    if family.logcdf is None:
        return np.log(family.cdf(z, *shapes))
    return family.logcdf(z, *shapes)


def _logsf(dist, x, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "logsf", x, args, kwds)
    if family.logsf is not None:
        return family.logsf(z, *shapes)
    if family.sf is not None:
        return np.log(family.sf(z, *shapes))
    return np.log1p(-family.cdf(z, *shapes))


def _ppf(dist, q, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "ppf", 0.0, args, kwds)
    return loc + scale * family.ppf(np.asarray(q), *shapes)


def _isf(dist, q, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "isf", 0.0, args, kwds)
    q = np.asarray(q)
    if family.isf is None:
        return loc + scale * family.ppf(1.0 - q, *shapes)
    return loc + scale * family.isf(q, *shapes)


def _entropy(dist, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "entropy", 0.0, args, kwds)
    return family.entropy(*shapes) + np.log(scale) + 0.0 * loc


def _mean(dist, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "mean", 0.0, args, kwds)
    return loc + scale * family.mean(*shapes)


def _var(dist, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "var", 0.0, args, kwds)
    return scale * scale * family.var(*shapes) + 0.0 * loc


def _std(dist, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "std", 0.0, args, kwds)
    return np.abs(scale) * np.sqrt(family.var(*shapes)) + 0.0 * loc


def _median(dist, *args, **kwds):
    family, z, shapes, loc, scale = _standard(dist, "median", 0.0, args, kwds)
    return loc + scale * family.ppf(np.asarray(0.5), *shapes)


def _frozen_shell(dist: Any, args: tuple, kwds: dict) -> Any:
    """SciPy's frozen distribution for these (primal) arguments."""
    return dist.freeze(*args, **kwds)


nondifferentiable(_frozen_shell)


def _freeze(dist, *args, **kwds):
    """``dist(*args, **kwds)``: SciPy's frozen object, holding the differentiated arguments."""
    frozen = _frozen_shell(dist, args, kwds)
    frozen.args = args
    frozen.kwds = kwds
    return frozen


def _bound_call(lead: int, args: tuple, kwargs: dict, default: Callable) -> tuple | None:
    """A univariate method's call ``(dist, [x,] *params, **kwds)`` with every parameter
    positional, defaults filled in (``default(value)`` in the mode's values): ``(arguments,
    where each keyword went)``; None when the call is not that simple (lists, a missing shape,
    bad keywords: the definition's own binding then runs, and raises SciPy's errors). Binding
    here, outside the differentiated code, saves first order most of its work per call."""
    if len(args) < lead:
        return None
    family = FAMILIES.get(type(primal(args[0])))
    names = family.names if family is not None else ()
    rest = args[lead:]
    if family is None or len(rest) > len(names) or any(k not in names[len(rest):] for k in kwargs):
        return None
    params = list(rest)
    for name in names[len(rest):]:
        if name in kwargs:
            params.append(kwargs[name])
        elif name in ("loc", "scale"):
            params.append(default(0.0 if name == "loc" else 1.0))
        else:
            return None
    if not _plain(tuple(primal(p) for p in params)):
        return None
    return (*args[:lead], *params), [lead + names.index(k) for k in kwargs]


def derived(target: Any, definition: Callable, lead: int | None = None) -> None:
    """Rules for ``target`` (a Python function of SciPy's) that differentiate ``definition``
    (same arguments, same values) like user code, in every mode. ``lead``: for a univariate
    method, the number of arguments before the parameters (the distribution, ``x``); first
    order then binds the call itself (``_bound_call``)."""

    def rrule_(*args, **kwargs):
        bound = None if lead is None else _bound_call(lead, args, kwargs, CoDual)
        if bound is None:
            return defined_rrule(definition, *args, **kwargs)
        values, keyword_slots = bound
        out, pullback = defined_rrule(definition, *values)

        def bound_pullback(dy):
            rdatas = pullback(dy)  # f's, then one per value
            return (*rdatas[: 1 + len(args)], *(rdatas[1 + slot] for slot in keyword_slots))

        return out, bound_pullback

    def frule_(*args, **kwargs):
        bound = None if lead is None else _bound_call(lead, args, kwargs, lambda v: Dual(v, 0.0))
        if bound is not None:
            args, kwargs = bound[0], {}
        try:
            return core.frule(definition, *args, **kwargs)
        except RuleArgumentError as error:  # a shape parameter without a derivative formula
            owner = primal(args[0]) if args else None
            name = getattr(owner, "name", type(owner).__name__)
            raise RuleArgumentError(f"scipy.stats.{name}.{getattr(target, '__name__', target)}: {error}") from None

    rrule_.__qualname__ = frule_.__qualname__ = f"{getattr(target, '__qualname__', target)} rule"
    register_rrule(target, rrule_)
    register_frule(target, frule_)
    defined_by(target, definition)


def refused(target: Any, method: str, supported: str | None = None) -> None:
    """A method yuebing does not differentiate: a clear error in every mode (SciPy's own code
    would fail on its ``exec``-generated ``_parse_args``)."""

    def rule(dist, *args, **kwargs):
        owner = primal(dist)
        name = getattr(owner, "name", None) or type(owner).__name__.removesuffix("_gen").removesuffix("_frozen")
        error = UnsupportedDistributionError(name, method, [])
        if supported is not None:
            error.args = (error.args[0].replace(DEFAULT_METHODS, supported),)
        raise error

    def second_order_rule(f4, args4, kwargs4):
        return rule(CoDual(args4[0][0]))

    register_rrule(target, rule)
    register_frule(target, rule)
    second_order_special((target,), second_order_rule)


if rv_generic is not None:
    from scipy.stats._multivariate import multi_rv_generic

    # a distribution object (norm, multivariate_normal) carries no parameter of a derivative:
    # its parameters are the call's arguments, or a frozen object's args/kwds
    register_nondifferentiable_type(rv_generic)
    register_nondifferentiable_type(multi_rv_generic)
    for _target, _definition, _lead in [
        (rv_continuous.logpdf, _logpdf, 2), (rv_continuous.pdf, _pdf, 2), (rv_discrete.logpmf, _logpmf, 2),
        (rv_discrete.pmf, _pmf, 2), (rv_generic.entropy, _entropy, 1), (rv_generic.mean, _mean, 1),
        (rv_generic.var, _var, 1), (rv_generic.std, _std, 1), (rv_generic.median, _median, 1),
        (rv_generic.__call__, _freeze, None), (rv_generic.freeze, _freeze, None),
    ]:
        derived(_target, _definition, _lead)
    for _owner in (rv_continuous, rv_discrete):
        for _target, _definition in [(_owner.cdf, _cdf), (_owner.sf, _sf), (_owner.logcdf, _logcdf),
                                     (_owner.logsf, _logsf), (_owner.ppf, _ppf), (_owner.isf, _isf)]:
            derived(_target, _definition, 2)
    for _owner in (rv_continuous, rv_discrete):
        for _name in ("rvs", "stats", "moment", "support", "expect", "nnlf"):
            if hasattr(_owner, _name):
                refused(getattr(_owner, _name), _name)



def _entropy_of(pk, qk=None, base=None, axis=0, *, nan_policy="propagate", keepdims=False):
    """``scipy.stats.entropy`` in NumPy (its own code goes through ``_axis_nan_policy``'s wrapper,
    which inspects signatures and reshapes by hand): Shannon entropy of the normalised ``pk``, or
    the relative entropy to ``qk``, in nats or ``base``."""
    if nan_policy != "propagate":
        raise RuleArgumentError(f"scipy.stats.entropy: yuebing differentiates nan_policy='propagate' only, not "
                                f"{nan_policy!r}")
    pk = np.asarray(pk, dtype=float)
    pk = pk / np.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        vec = _special.entr(pk)
    else:
        qk = np.asarray(qk, dtype=float)
        pk, qk = np.broadcast_arrays(pk, qk)
        vec = _special.rel_entr(pk, qk / np.sum(qk, axis=axis, keepdims=True))
    entropy = np.sum(vec, axis=axis, keepdims=keepdims)
    return entropy if base is None else entropy / np.log(base)


def _kde_points(kde: Any, x: Any) -> Any:
    """The points of ``gaussian_kde.logpdf(x)``, shaped ``(d, m)`` as SciPy shapes them."""
    points = np.atleast_2d(x)
    d, m = points.shape
    if d != kde.d:
        if d != 1 or m != kde.d:
            raise ValueError(f"points have dimension {d}, dataset has dimension {kde.d}")
        points = np.reshape(points, (kde.d, 1))
    return points


def _kde_logpdf(kde: Any, x: Any) -> Any:
    """``gaussian_kde.logpdf`` in NumPy (SciPy's kernel sum is a fused Cython function): the log
    of the weighted sum of Gaussian kernels, in coordinates whitened by the covariance's Cholesky
    factor, through logsumexp."""
    from scipy.linalg import solve_triangular

    points = _kde_points(kde, x)
    data = solve_triangular(kde.cho_cov, kde.dataset, lower=True)  # (d, n)
    where = solve_triangular(kde.cho_cov, points, lower=True)  # (d, m)
    squared = np.sum((where[:, :, None] - data[:, None, :]) ** 2, axis=0)  # (m, n)
    log_norm = -0.5 * kde.d * np.log(2 * np.pi) - np.sum(np.log(np.diag(kde.cho_cov)))
    return _special.logsumexp(-0.5 * squared + np.log(kde.weights), axis=1) + log_norm


def _siegelslopes_of(y: Any, x: Any, method: str) -> tuple:
    """Siegel's repeated medians (SciPy's kernel is Pythran): for each point, the median slope to
    the others of a different x; the slope is the median of those. The intercept is the median of
    ``y - slope x`` ("hierarchical"), or the repeated median of the pairs' intercepts ("separate")."""
    slopes, intercepts = [], []
    for j in range(len(x)):
        others = np.nonzero(x != x[j])[0]
        run = x[others] - x[j]
        slopes.append(np.median((y[others] - y[j]) / run))
        if method == "separate":
            intercepts.append(np.median((y[j] * x[others] - y[others] * x[j]) / run))
    slope = np.median(np.asarray(slopes))
    if method == "separate":
        return slope, np.median(np.asarray(intercepts))
    return slope, np.median(y - slope * x)


def _kde_evaluate(kde: Any, points: Any) -> Any:
    return np.exp(_kde_logpdf(kde, points))


def _kendalltau_of_ranks(*args: Any, **kwargs: Any) -> Any:
    """``scipy.stats.kendalltau``, whose statistic and p-value depend on the data through their
    ranks only (a piecewise constant function: zero derivative), with ``correlation`` the
    statistic object itself (SciPy sets it to an equal copy), so that reading it is an item's
    read, not refused as float data beside the tuple (``bunch_data.py``)."""
    result = _stats.kendalltau(*args, **kwargs)
    result.correlation = result.statistic
    return result


if rv_generic is not None:
    import scipy.special as _special
    import scipy.stats as _stats

    defined_as(_stats.entropy, _entropy_of, validate=True)
    from scipy.stats import _stats as _stats_c

    nondifferentiable(_stats_c._kendall_dis)  # kendalltau's count of discordant pairs (an int)
    nondifferentiable_as(_stats.kendalltau, _kendalltau_of_ranks)  # rank-based: zero derivative
    defined_as(_stats.gaussian_kde.logpdf, _kde_logpdf)
    defined_as(_stats.gaussian_kde.evaluate, _kde_evaluate)
    from scipy.stats import _stats_pythran

    defined_as(_stats_pythran.siegelslopes, _siegelslopes_of)

CASES: list = []  # tests/test_scipy_stats.py checks every distribution against finite differences
