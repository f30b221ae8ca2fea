"""Derivatives of gamma draws in their shape parameter, at the draw's fixed quantile.

A draw ``z`` of a distribution with CDF ``F(z; a)`` is differentiated in ``a`` as ``F^-1(u; a)``
at fixed ``u = F(z; a)`` (the implicit reparameterisation of Figurnov et al. 2018)::

    dz/da = -(dF(z; a)/da) / pdf(z; a)

It needs only the drawn value, not the noise NumPy turned into it, so it applies to NumPy's
rejection samplers too (docs/semantics.md, "Random draws"). For the standard gamma distribution
``F = P(a, z)`` (SciPy's ``gammainc``), and from the series ``P(a, z) = sum_n z^(a+n) e^-z /
Gamma(a+n+1)`` (Abramowitz-Stegun 6.5.29), with ``pdf = z^(a-1) e^-z / Gamma(a)``::

    (dP/da) / pdf = sum_n r_n (log z - psi(a+n+1)),  r_n = prod_{k=0..n} z / (a+k)

``gamma_shape_slope`` sums it in NumPy (written so that forward mode differentiates it: second
order). ``gamma`` (``scale * G``) and ``chisquare`` (``2 G(df/2)``) follow by the chain rule, NumPy
drawing them exactly so. ``fixed_quantile_gamma(a, z)`` is the primitive carrying the slope: its
value is the draw ``z``, its partial in ``a`` the slope at its value (in ``z``: 1). ``beta`` is
``X / (X + Y)`` of two such draws, as NumPy draws it where ``a > 1`` or ``b > 1``; ``standard_t(df)``
``sqrt(df/2) N / sqrt(G(df/2))`` and ``f`` a ratio of chi-square draws, as NumPy draws them.

Second order differentiates the draws nonlinear in their parameters as Python definitions (end of
this file): ``lognormal``, ``weibull``, ``power``, ``pareto`` as NumPy's transformations of one
standard draw, and the gamma draws as the draw made with no derivative (``standard_gamma_noise``,
rules in ``numpy_random``) passed through ``fixed_quantile_gamma``.

Accuracy (against mpmath): relative 1e-11 in the bulk of the distribution, 1e-8 at tail
probability 1e-7 (the series cancels there: ``dP/da`` is small against its terms), 1e-4 at
1e-11; beyond, where fewer than four digits would be left, the slope is NaN (never a wrong number).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .declare import elementwise

_SHIFT = 10  # digamma's recurrence step: the asymptotic series is used at x + _SHIFT >= 10
_TAIL_WIDTHS = 10  # terms of the series past its peak, in standard deviations sqrt(z)
_CANCELLATION = 1e-10  # |sum| / sum of |terms| below which rounding leaves fewer than ~4 digits


def _digamma(x: Any) -> Any:
    """``psi(x)`` for ``x > 0`` in NumPy (SciPy stays optional and unimported): the recurrence
    ``psi(x) = psi(x + 10) - sum_k 1/(x + k)`` and the asymptotic series at ``x + 10``."""
    x = np.asarray(x, dtype=float)
    shift = 0.0
    for k in range(_SHIFT):
        shift = shift + 1.0 / (x + k)
    y = x + _SHIFT
    w = 1.0 / (y * y)
    # Bernoulli numbers: B_2k / (2k) = 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12
    series = w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w * (1 / 132 - w * (691 / 32760 - w / 12))))))
    return np.log(y) - 0.5 / y - series - shift


def _series_length(a: Any, z: Any) -> int:
    """Terms enough for every element: the terms grow to a peak near ``n = z - a``, then fall
    like a Gaussian of width ``sqrt(z)``."""
    if np.size(z) == 0:
        return 1
    return int(np.ceil(np.max(np.maximum(z - a, 0.0) + _TAIL_WIDTHS * np.sqrt(z)))) + 25


def gamma_shape_slope(a: Any, z: Any) -> Any:
    """``dz/da`` of a standard gamma draw ``z`` of shape ``a`` at its fixed quantile (0 where
    ``z`` is 0: the draw underflowed, as it does for tiny ``a``)."""
    a, z = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(z, dtype=float))
    positive = z > 0  # (then a > 0 too: shape 0 draws 0)
    # a trailing axis for the terms (kept as arrays, also for 0-d inputs)
    a1, log_z = np.where(positive, a, 1.0)[..., None], np.log(np.where(positive, z, 1.0)[..., None])
    k = np.arange(_series_length(a1[..., 0], np.where(positive, z, 1.0)))
    ak = a1 + k
    log_r = np.cumsum(log_z - np.log(ak), axis=-1)
    # psi(a+n+1) = psi(a+1) + sum_{k=1..n} 1/(a+k): one digamma per element, accurate for tiny a
    steps = np.concatenate([np.zeros_like(a1), 1.0 / ak[..., 1:]], axis=-1)
    psi = _digamma(a1 + 1.0) + np.cumsum(steps, axis=-1)
    terms = np.exp(log_r) * (log_z - psi)
    ratio = np.sum(terms, axis=-1)
    # far in the upper tail the terms cancel: NaN (never a wrong number) where fewer than ~4 digits
    # are left, beyond tail probability ~1e-11 (one draw in 1e11)
    lost = np.abs(ratio) < _CANCELLATION * np.sum(np.abs(terms), axis=-1)
    return np.where(positive, np.where(lost, np.nan, -ratio), 0.0)


def fixed_quantile_gamma(a: Any, z: Any) -> Any:
    """The standard gamma draw ``z`` of shape ``a``, differentiated in ``a`` at its quantile."""
    return z * 1.0 if isinstance(z, np.ndarray) else float(z)


elementwise(fixed_quantile_gamma, lambda a, z, y: gamma_shape_slope(a, y), lambda a, z, y: np.ones_like(y))


def check_reproduced(name: str, ok: bool) -> None:
    """Raise unless a replayed draw gave NumPy's values (``ok``)."""
    if not ok:
        raise RuntimeError(
            f"yuebing could not reproduce what {name} drew (its indices or noise); its derivative cannot be "
            "computed (please report this with your NumPy version)"
        )


def beta_by_gammas(a: Any, b: Any) -> bool:
    """Whether NumPy draws ``beta(a, b)`` as ``X / (X + Y)`` of gamma draws in every element (not
    by Johnk's method, which it uses where ``a`` and ``b`` are both at most 1)."""
    return bool(np.all((np.asarray(a) > 1) | (np.asarray(b) > 1)))


def element_draws(gen: Any, kinds: tuple, size: Any, *parameters: Any) -> Any:
    """The standard draws (``"normal"``, or ``"gamma"`` of shape ``parameters[k]``) that NumPy's
    ``beta``, ``standard_t`` and ``f`` make element by element, in that order, stacked along a first
    axis: zero derivative (``fixed_quantile_gamma`` differentiates the gamma ones)."""
    shape = np.broadcast(*parameters).shape if size is None else tuple(np.atleast_1d(size))
    parameters = [np.broadcast_to(p, shape) for p in parameters]
    out = np.empty((len(kinds),) + shape)
    for i in np.ndindex(*shape):
        for k, (kind, p) in enumerate(zip(kinds, parameters)):
            out[(k,) + i] = gen.standard_normal() if kind == "normal" else gen.standard_gamma(p[i])
    return out


def uniform_noise(gen: Any, size: Any = None) -> Any:
    """A uniform draw on [0, 1), as ``triangular`` makes it: zero derivative."""
    return gen.random(size) if isinstance(gen, np.random.Generator) else gen.random_sample(size)


def beta_refused(gen, a, b, size=None):
    """``gen.beta`` not differentiated (Johnk's method; rules in ``random_dirichlet``)."""
    return gen.beta(a, b, size)


beta_refused.__qualname__ = "Generator.beta (a and b both at most 1: Johnk's method)"  # in its refusal


def standard_gamma_noise(gen: Any, shape: Any, size: Any = None, dtype: Any = None) -> Any:
    """``gen.standard_gamma(shape, size[, dtype])`` with zero derivative (it only advances
    ``gen``): ``fixed_quantile_gamma`` differentiates the draw."""
    if dtype is None:
        return gen.standard_gamma(shape, size)
    return gen.standard_gamma(shape, size, dtype)


# --------------------------------------------------------------------------------------------
# First order: the partials of the pathwise rules (``numpy_random._PATHWISE``): ``p`` the
# parameters, ``y`` the draw, ``replay(**parameters)`` the draw made again from the same state
# --------------------------------------------------------------------------------------------


def standard_gamma_partials(p: dict, y: Any, replay: Callable) -> dict:
    return {"shape": gamma_shape_slope(p["shape"], y)}


def chisquare_partials(p: dict, y: Any, replay: Callable) -> dict:
    """``y = 2 G(df / 2)``: ``dy/ddf = 2 * slope(df/2, y/2) / 2``."""
    return {"df": gamma_shape_slope(0.5 * np.asarray(p["df"], dtype=float), 0.5 * np.asarray(y))}


def beta_partials(p: dict, y: Any, replay: Callable) -> dict:
    """``y = X / (X + Y)`` for gamma draws ``X`` of shape ``a`` and ``Y`` of shape ``b``."""
    x, w = element_draws(replay.generator(), ("gamma", "gamma"), np.shape(y), p["a"], p["b"])
    total = x + w
    check_reproduced("beta", np.array_equal(y, x / total))
    return {"a": gamma_shape_slope(p["a"], x) * w / total ** 2, "b": -gamma_shape_slope(p["b"], w) * x / total ** 2}


def standard_t_partials(p: dict, y: Any, replay: Callable) -> dict:
    """``y = sqrt(df/2) N / sqrt(G)``, ``G`` a gamma draw of shape ``df/2``, ``N`` a normal one."""
    half = np.divide(p["df"], 2)
    n, g = element_draws(replay.generator(), ("normal", "gamma"), np.shape(y), half, half)
    check_reproduced("standard_t", np.array_equal(y, np.sqrt(half) * n / np.sqrt(g)))
    return {"df": y * (0.25 / half - 0.25 * gamma_shape_slope(half, g) / g)}


def f_partials(p: dict, y: Any, replay: Callable) -> dict:
    """``y = (X1 dfden) / (X2 dfnum)`` for chi-square draws ``Xk = 2 Gk``, ``Gk`` gamma draws of
    shapes ``dfnum/2`` and ``dfden/2``."""
    num, den = np.divide(p["dfnum"], 2), np.divide(p["dfden"], 2)
    g1, g2 = element_draws(replay.generator(), ("gamma", "gamma"), np.shape(y), num, den)
    check_reproduced("f", np.array_equal(y, (2.0 * g1 * p["dfden"]) / (2.0 * g2 * p["dfnum"])))
    return {"dfnum": y * (0.5 * gamma_shape_slope(num, g1) / g1 - 1.0 / np.asarray(p["dfnum"])),
            "dfden": y * (1.0 / np.asarray(p["dfden"]) - 0.5 * gamma_shape_slope(den, g2) / g2)}


def triangular_partials(p: dict, y: Any, replay: Callable) -> dict:
    """NumPy's inverse CDF of one uniform draw ``U``: ``y = left + sqrt(U lp)`` below the mode,
    ``right - sqrt((1 - U) rp)`` above, ``lp = (mode - left)(right - left)``, ``rp = (right -
    mode)(right - left)``; ``U`` held (the two branches agree at the mode, values and slopes)."""
    left, mode, right = (np.asarray(p[k], dtype=float) for k in ("left", "mode", "right"))
    base, lower = right - left, np.asarray(y <= mode, dtype=float)
    lp, rp = (mode - left) * base, (right - mode) * base
    # d sqrt(U lp) / d lp = (y - left) / (2 lp), and likewise above (0 where the branch is empty)
    below = lower * (y - left) / (2 * np.where(lp > 0, lp, np.inf))
    above = (1 - lower) * (right - y) / (2 * np.where(rp > 0, rp, np.inf))
    return {"left": lower - below * (base + mode - left) + above * (right - mode),
            "mode": (below + above) * base,
            "right": 1 - lower + below * (mode - left) - above * (base + right - mode)}


def gamma_partials(standard: Callable) -> Callable:
    """``y = scale * G(shape)``; ``standard(num, den, replay)`` recovers ``G = y / scale``."""

    def partials(p: dict, y: Any, replay: Callable) -> dict:
        g = standard(y, p["scale"], lambda: replay(shape=p["shape"], scale=1.0))
        return {"scale": g, "shape": np.asarray(p["scale"]) * gamma_shape_slope(p["shape"], g)}

    return partials


# --------------------------------------------------------------------------------------------
# Second order: draws nonlinear in their parameters, written as the computation NumPy makes (the
# same noise, the same values) and differentiated like user code (``defined_by`` in
# ``numpy_random``)
# --------------------------------------------------------------------------------------------


def _draw_size(size: Any, *parameters: Any) -> Any:
    """The ``size`` of the standard draw NumPy makes for ``parameters``: one per element."""
    if size is not None:
        return size
    shape = np.broadcast(*parameters).shape
    return shape if shape else None


def _lognormal(gen, mean=0.0, sigma=1.0, size=None):
    """``lognormal`` is ``exp`` of ``normal`` with the same parameters."""
    return np.exp(gen.normal(mean, sigma, size))


# weibull, power and pareto transform one standard exponential draw per value
def _weibull(gen, a, size=None):
    return gen.standard_exponential(_draw_size(size, a)) ** (1.0 / a)


def _power(gen, a, size=None):
    return (-np.expm1(-gen.standard_exponential(_draw_size(size, a)))) ** (1.0 / a)


def _legacy_power(gen, a, size=None):
    return (1.0 - np.exp(-gen.standard_exponential(_draw_size(size, a)))) ** (1.0 / a)


def _pareto(gen, a, size=None):
    return np.expm1(gen.standard_exponential(_draw_size(size, a)) / a)


def _legacy_pareto(gen, a, size=None):
    return np.exp(gen.standard_exponential(_draw_size(size, a)) / a) - 1.0


# gamma draws: the draw made with no derivative, differentiated by fixed_quantile_gamma
def _standard_gamma(gen, shape, size=None, dtype=np.float64, out=None):
    if out is not None:  # no derivative in shape: the zero rule refuses a moving one
        return gen.standard_gamma(shape, size, dtype, out)
    noise_dtype = None if np.dtype(dtype) == np.float64 else dtype
    return fixed_quantile_gamma(shape, standard_gamma_noise(gen, shape, size, noise_dtype))


def _gamma(gen, shape=1.0, scale=1.0, size=None):
    return scale * fixed_quantile_gamma(shape, standard_gamma_noise(gen, shape, _draw_size(size, shape, scale)))


def _chisquare(gen, df, size=None):
    half = 0.5 * np.asarray(df, dtype=float) if isinstance(df, (list, tuple, np.ndarray)) else 0.5 * df
    return 2.0 * fixed_quantile_gamma(half, standard_gamma_noise(gen, half, size))


def stick_breaking(gen: Any, alpha: Any) -> bool:
    """Whether NumPy draws ``dirichlet(alpha)`` from beta draws (``Generator``, every alpha below
    0.1), not as normalised gamma draws: not differentiated."""
    return isinstance(gen, np.random.Generator) and np.size(alpha) > 0 and bool(np.max(alpha) < 0.1)


def dirichlet_refused(gen, alpha, size=None):
    """``gen.dirichlet`` not differentiated in ``alpha`` (stick-breaking; rules in ``random_dirichlet``)."""
    return gen.dirichlet(alpha, size)


dirichlet_refused.__qualname__ = "Generator.dirichlet (every alpha below 0.1: stick-breaking)"  # in its refusal


def normalised(g: Any) -> Any:
    """``g / sum(g)`` along the last axis as NumPy's ``dirichlet`` computes it (the same bits): the
    sum added in order, then one reciprocal."""
    total = g[..., 0]
    for j in range(1, np.shape(g)[-1]):
        total = total + g[..., j]
    return g * np.expand_dims(1.0 / total, -1)


def _dirichlet(gen, alpha, size=None):
    if stick_breaking(gen, alpha):
        return dirichlet_refused(gen, alpha, size)
    draw_size = np.shape(alpha) if size is None else tuple(np.atleast_1d(size)) + np.shape(alpha)
    return normalised(fixed_quantile_gamma(alpha, standard_gamma_noise(gen, alpha, draw_size)))


def _beta(gen, a, b, size=None):
    if not beta_by_gammas(a, b):
        return beta_refused(gen, a, b, size)
    g = element_draws(gen, ("gamma", "gamma"), size, a, b)
    x, w = fixed_quantile_gamma(a, g[0]), fixed_quantile_gamma(b, g[1])
    return x / (x + w)


def _standard_t(gen, df, size=None):
    half = np.divide(df, 2)
    g = element_draws(gen, ("normal", "gamma"), size, half, half)
    return np.sqrt(half) * g[0] / np.sqrt(fixed_quantile_gamma(half, g[1]))


def _f(gen, dfnum, dfden, size=None):
    num, den = np.divide(dfnum, 2), np.divide(dfden, 2)
    g = element_draws(gen, ("gamma", "gamma"), size, num, den)
    x1, x2 = 2.0 * fixed_quantile_gamma(num, g[0]), 2.0 * fixed_quantile_gamma(den, g[1])
    return (x1 * dfden) / (x2 * dfnum)


def _triangular(gen, left, mode, right, size=None):
    """As NumPy computes it from one uniform draw per element (the same operations, the same bits)."""
    u = uniform_noise(gen, _draw_size(size, left, mode, right))
    base, left_base = right - left, mode - left
    lower = 1.0 * (u <= left_base / base)
    rise = left + np.sqrt(u * (left_base * base))
    fall = right - np.sqrt((1.0 - u) * ((right - mode) * base))
    return lower * rise + (1.0 - lower) * fall  # exact: one term is 0.0 and the other times 1.0


_GAMMA_DEFINITIONS = {"gamma": _gamma, "standard_gamma": _standard_gamma, "chisquare": _chisquare,
                      "dirichlet": _dirichlet, "beta": _beta, "standard_t": _standard_t, "f": _f,
                      "triangular": _triangular}
GENERATOR_DEFINITIONS = {"lognormal": _lognormal, "weibull": _weibull, "power": _power, "pareto": _pareto,
                         **_GAMMA_DEFINITIONS}
LEGACY_DEFINITIONS = {"lognormal": _lognormal, "weibull": _weibull, "power": _legacy_power,
                      "pareto": _legacy_pareto, **_GAMMA_DEFINITIONS}
