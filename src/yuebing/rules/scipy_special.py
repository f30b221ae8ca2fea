"""``scipy.special`` (the Bessel functions are in ``scipy_bessel``), in reverse, forward and second
order. Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

* gamma family: ``gamma``, ``gammaln``, ``loggamma``, ``digamma``/``psi``, ``polygamma`` (in x),
  ``rgamma``, ``gammasgn`` (zero derivative), ``multigammaln`` (in a), ``beta``, ``betaln``,
  ``poch``, ``binom``; the incomplete functions ``gammainc``, ``gammaincc``, ``gammaincinv``,
  ``gammainccinv`` (in x or p) and ``betainc``, ``betaincc``, ``betaincinv``, ``betainccinv``
  (in x or p); Wright's ``wright_bessel`` and ``log_wright_bessel`` (in x).
* error functions: ``erf``, ``erfc``, ``erfcx``, ``erfi``, ``dawsn``, ``erfinv``, ``erfcinv``,
  ``ndtr``, ``ndtri``, ``log_ndtr`` (``phi(x)/Phi(x)`` as ``exp(-x^2/2 - log_ndtr(x))``: stable
  for very negative x), ``ndtri_exp``, ``wofz``; ``spence``.
* others: ``expit``, ``logit``, ``log_expit``, ``softplus``, ``xlogy``, ``xlog1py``, ``entr``,
  ``rel_entr``, ``kl_div``, ``zeta`` (in q), ``ellipk``, ``ellipe``, ``lambertw``, the SciPy
  versions of ``expm1``, ``log1p``, ``cbrt``, ``exp2``, ``exp10``, ``cosdg``, ``sindg``,
  ``tandg``, ``cotdg``, ``cosm1``, ``powm1``; the reductions ``logsumexp`` (``b=``,
  ``return_sign=True``), ``softmax``, ``log_softmax``. ``numpy.sinc`` is in ``numpy_elementwise``.

Elementwise functions are declared with their partial derivatives (``declare.elementwise``), so
second order differentiates the partials; the Python functions of SciPy (``multigammaln``,
``zeta``, ``lambertw``, ``logsumexp``, ...) have a cotangent map written in NumPy
(``linalg_rule(vjp=...)`` and ``with_vjp``).

Arguments without a derivative formula (the shape parameters ``a``, ``b`` of the incomplete gamma
and beta functions, the first argument of ``zeta``, a Bessel function's order; ``fixed`` below):
forward mode and second order raise ``RuleArgumentError`` when such an argument has a nonzero
tangent. Reverse mode cannot tell a constant float from a differentiated one, so there the
argument's cotangent is NaN: a gradient that depends on it is NaN, never a silent zero, and a
constant (``gammainc(2.5, x)``) is unaffected. Pass an int (or int array) where you can. Third
order runs each such function's forward derivative written in NumPy (``_jvp_definition``), where
such an argument adds ``held_parameter``'s 0 (refused if its tangent moves, NaN cotangent).

Conventions: ``xlogy(x, y)``, ``xlog1py``: ``d/dy = 0`` where ``x == 0`` (also at ``y = 0``);
``d/dx`` is ``log(y)`` (``-inf`` at ``y = 0``, NumPy's answer). ``rel_entr``, ``kl_div``: ``d/dy
= 0`` where ``x == 0``. ``rgamma`` is differentiated through the reflection formula left of 1/2,
so its derivative at the poles of gamma is finite (``(-1)^n n!`` at ``-n``). ``ellipk``/``ellipe``
use their Taylor series for ``|m| < 1e-3`` (``K'(0) = pi/8``, ``E'(0) = -pi/8``). ``lambertw``:
``W'(z) = 1/(exp(W)(1 + W))`` on every branch ``k``; its result is complex, so a real ``z`` gets
the real part of the cotangent (the real inner product), and a real tangent a complex output
tangent. ``logsumexp``: complex input is refused; where the result is ``-inf`` the gradient is
NaN; with ``return_sign=True`` the sign has zero derivative. ``gammasgn`` has zero derivative.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoTangent
from .cases import Case, randc, randn, randpos, randu
from .complex_polygamma import polygamma
from .core import Dual, RuleArgumentError, describe_callable, primal, register_frule, register_rrule
from .declare import elementwise, make_elementwise_rules, nondifferentiable
from .linalg import add, linalg_rule, real_only, refuse
from .linalg.common import cotangent_entry
from .numpy_arguments import axes_of
from .util import tangent
from .second_order import jvp_defined_by, with_vjp

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

SQRT_PI = np.sqrt(np.pi)
SQRT_2PI = np.sqrt(2 * np.pi)
DEGREE = np.pi / 180


# --------------------------------------------------------------------------------------------
# Helpers: partials, arguments without a derivative
# --------------------------------------------------------------------------------------------


def gaussian(x: Any, rate: float) -> Any:
    """``exp(-rate x^2)``, 0 at an infinite ``x`` with a zero derivative there (its limit): second
    order differentiates this partial, and ``exp(-x^2) * -2x`` at ``x = inf`` is ``0 * inf = NaN``
    (an ordered probit's thresholds at -inf and inf: statsmodels' OrderedModel)."""
    infinite = np.isinf(x)
    finite = np.where(infinite, 0.0, x)
    return np.where(infinite, 0.0, np.exp(-rate * finite * finite))


def safe_ratio(x: Any, y: Any) -> Any:
    """x / y, with 0 where x == 0 (whatever y is). Only 0 / 0 is guarded, so forward mode of this
    partial still gives d(x / y)/dx = 1 / y at x = 0 (second order)."""
    x, y = np.asarray(x), np.asarray(y)
    return x / np.where((x == 0) & (y == 0), 1.0, y)


def no_partial(*inputs_and_output: Any) -> Any:
    """The partial of an argument yuebing does not differentiate in: NaN (see the module
    docstring; forward mode and second order refuse before it is used)."""
    return np.nan * np.ones_like(inputs_and_output[-1])


def _moving(arg: Any) -> bool:
    """Whether a forward-rule argument has a nonzero tangent."""
    if not isinstance(arg, Dual) or arg.tangent is NoTangent:
        return False
    try:
        return bool(np.any(np.asarray(arg.tangent) != 0))
    except (TypeError, ValueError):
        return False


def fixed_message(label: str, name: str, why: str) -> str:
    return (f"{label}: yuebing does not differentiate with respect to {name} ({why}), and {name} has a "
            f"nonzero tangent here. Make {name} a constant: compute it outside the function, or from values "
            f"that are not differentiated. (Reverse mode gives {name} a NaN cotangent, since it cannot tell a "
            "constant float from a differentiated one: a gradient that depends on it comes out NaN.)")


def refuse_moving(label: str, name: str, why: str, tangent: Any) -> None:
    """Raise ``fixed_message`` when ``tangent`` (None: none) is nonzero anywhere."""
    if tangent is not None and bool(np.any(np.asarray(tangent) != 0)):
        raise RuleArgumentError(fixed_message(label, name, why))


def nan_cotangent(g: Any) -> Any:
    """The cotangent of an argument without a derivative: NaN where ``g`` is nonzero (strong zero)."""
    g = np.asarray(g)
    return np.where(g == 0, 0.0, np.nan)


def elementwise_fixed(f: Any, names: tuple, fixed: dict, *partials: Any, real: bool = False) -> None:
    """``elementwise(f, *partials)`` where the arguments at the positions in ``fixed`` (position ->
    why) have no derivative: their partial is ``no_partial`` (NaN in reverse mode) and the forward
    rule, which second order also runs, refuses a nonzero tangent there. ``real``: refuse complex
    arguments (a function that is not holomorphic)."""
    label = f"scipy.special.{describe_callable(f)}"
    partials = tuple(no_partial if i in fixed else p for i, p in enumerate(partials))
    rrule, frule = make_elementwise_rules(f, *partials)

    def check_real(args: tuple) -> None:
        if real and any(np.iscomplexobj(getattr(a, "primal", a)) for a in args[:len(partials)]):
            refuse(label, "yuebing differentiates it for real arguments only (it is not holomorphic)")

    def checked_rrule(*args: Any) -> tuple:
        check_real(args)
        return rrule(*args)

    def checked_frule(*args: Any) -> Any:
        check_real(args)
        for i, why in fixed.items():
            if i < len(args) and _moving(args[i]):
                raise RuleArgumentError(fixed_message(label, names[i], why))
        return frule(*args)

    for checked, rule in ((checked_rrule, rrule), (checked_frule, frule)):
        checked.__signature__ = rule.__signature__  # type: ignore[attr-defined]
        checked.__qualname__ = rule.__qualname__
    register_rrule(f, checked_rrule)
    register_frule(f, checked_frule)
    messages = {i: fixed_message(label, names[i], why) for i, why in fixed.items()}
    jvp_defined_by(f, _jvp_definition(f, partials, messages))


def held_parameter(t: Any, y: Any, message: str) -> Any:
    """The term a parameter without a derivative formula adds to the tangent of ``y`` (in
    ``elementwise_fixed``'s forward definition): 0, for a zero tangent ``t``; a nonzero one is
    refused (``message``), here and, for ``t``'s own tangent, by the forward rule. Reverse mode
    gives ``t`` a NaN cotangent: its partial is unknown (never a silent zero)."""
    refuse_moving_message(message, t)
    return np.zeros_like(y)


def refuse_moving_message(message: str, t: Any) -> None:
    if t is not NoTangent and bool(np.any(np.asarray(t) != 0)):
        raise RuleArgumentError(message)


def _held_parameter_frule(t: Any, y: Any, message: Any) -> Any:
    refuse_moving_message(primal(message), tangent(t))
    return _HELD_FRULE(t, y, message)


def _jvp_definition(f: Any, partials: tuple, messages: dict) -> Any:
    """``f``'s forward derivative as NumPy code, for third order (``jvp_defined_by``): a held
    parameter's term is ``held_parameter``'s 0, so its unknown (NaN) partial never meets a zero
    tangent in a plain product (that made third derivatives NaN)."""

    def jvp(*pairs):
        xs = pairs[0::2]
        y = f(*xs)
        total = np.zeros_like(y)
        for k in range(len(partials)):
            t = pairs[2 * k + 1]
            if t is NoTangent:
                continue
            if k in messages:
                total = total + held_parameter(t, y, messages[k])
            elif partials[k] is not None:
                total = total + partials[k](*xs, y) * t
        return y, total

    jvp.__qualname__ = f"jvp of {describe_callable(f)}"
    return jvp


if sp is not None:
    _HELD_RRULE, _HELD_FRULE = make_elementwise_rules(held_parameter, no_partial, None, None)
    _held_parameter_frule.__signature__ = _HELD_FRULE.__signature__  # type: ignore[attr-defined]
    register_rrule(held_parameter, _HELD_RRULE)
    register_frule(held_parameter, _held_parameter_frule)


# --------------------------------------------------------------------------------------------
# Gamma family
# --------------------------------------------------------------------------------------------


def _rgamma_partial(x: Any, y: Any) -> Any:
    """``-psi(x)/gamma(x)``; left of 1/2 from the reflection ``1/gamma(x) = sin(pi x) gamma(1 - x)
    / pi``, finite at the poles of gamma, where ``psi`` is infinite (each branch is evaluated only
    where it is finite, so forward mode of this partial gives the second derivative)."""
    if np.iscomplexobj(x):
        return -y * sp.digamma(x)
    x = np.asarray(x)
    left = x < 0.5
    xl = np.where(left, x, 0.0)
    xr = np.where(left, 1.0, x)
    g = sp.gamma(1.0 - xl)
    reflected = np.cos(np.pi * xl) * g - np.sin(np.pi * xl) * g * sp.digamma(1.0 - xl) / np.pi
    return np.where(left, reflected, -sp.rgamma(xr) * sp.digamma(xr))


def _gammainc_dx(a: Any, x: Any, y: Any = None) -> Any:
    """``d/dx gammainc(a, x) = x^(a-1) exp(-x) / gamma(a)`` (1 at x = 0 for a = 1)."""
    return np.exp(sp.xlogy(a - 1.0, x) - x - sp.gammaln(a))


def _betainc_dx(a: Any, b: Any, x: Any, y: Any = None) -> Any:
    """``d/dx betainc(a, b, x) = x^(a-1) (1-x)^(b-1) / B(a, b)``."""
    return np.exp(sp.xlogy(a - 1.0, x) + sp.xlog1py(b - 1.0, -x) - sp.betaln(a, b))


def _t_pdf(df: Any, t: Any, y: Any = None) -> Any:
    """Student's t density, ``d/dt stdtr(df, t)``, through logs (no overflow of gamma at large df)."""
    df, t = np.asarray(df, dtype=float), np.asarray(t)
    log_norm = sp.gammaln((df + 1.0) / 2.0) - sp.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi)
    return np.exp(log_norm - (df + 1.0) / 2.0 * np.log1p(t * t / df))


def _spence_partial(z: Any, y: Any) -> Any:
    """``d/dz spence(z) = log(z) / (1 - z)``; near z = 1 its series in ``u = 1 - z``,
    ``-(1 + u/2 + u^2/3 + u^3/4 + u^4/5)`` (error ~u^5), whose own derivatives are right there too
    (second order differentiates this partial)."""
    u = 1.0 - np.asarray(z)
    near = np.abs(u) < _SMALL_M
    un = np.where(near, u, 0.0)
    series = -(1.0 + un * (1 / 2 + un * (1 / 3 + un * (1 / 4 + un / 5))))
    uf = np.where(near, 0.5, u)
    return np.where(near, series, np.log(1.0 - uf) / uf)


def _polygamma_vjp(g, y, n, x):
    return None, g * sp.polygamma(np.asarray(n) + 1, x)


def _multigammaln_slope(a: Any, d: Any) -> Any:
    """``d/da multigammaln(a, d) = sum_j psi(a - j/2)``, j = 0 .. d-1."""
    total = 0.0 * np.asarray(a, dtype=float)
    for j in range(int(d)):
        total = total + sp.digamma(a - 0.5 * j)
    return total


def _multigammaln_vjp(g, y, a, d):
    return g * _multigammaln_slope(a, d), None


_SHAPE = "no closed form for the derivative in a shape parameter"


def _register_gamma() -> None:
    elementwise(sp.gamma, lambda x, y: y * sp.digamma(x))
    elementwise(sp.gammaln, lambda x, y: sp.digamma(x))
    elementwise(sp.loggamma, lambda x, y: sp.digamma(x))
    elementwise(sp.digamma, lambda x, y: polygamma(1, x))  # sp.psi is the same ufunc; complex x too
    elementwise(sp.rgamma, _rgamma_partial)
    nondifferentiable(sp.gammasgn)
    elementwise(sp.beta, lambda a, b, y: y * (sp.digamma(a) - sp.digamma(a + b)),
                lambda a, b, y: y * (sp.digamma(b) - sp.digamma(a + b)))
    elementwise(sp.betaln, lambda a, b, y: sp.digamma(a) - sp.digamma(a + b),
                lambda a, b, y: sp.digamma(b) - sp.digamma(a + b))
    elementwise(sp.poch, lambda z, m, y: y * (sp.digamma(z + m) - sp.digamma(z)),
                lambda z, m, y: y * sp.digamma(z + m))
    # binom(n, k) = Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1)), reached by comb(exact=False)
    elementwise(sp.binom, lambda n, k, y: y * (sp.digamma(n + 1.0) - sp.digamma(n - k + 1.0)),
                lambda n, k, y: y * (sp.digamma(n - k + 1.0) - sp.digamma(k + 1.0)))
    a = {0: _SHAPE}
    elementwise_fixed(sp.gammainc, ("a", "x"), a, None, _gammainc_dx)
    elementwise_fixed(sp.gammaincc, ("a", "x"), a, None, lambda a, x, y: -_gammainc_dx(a, x))
    elementwise_fixed(sp.gammaincinv, ("a", "p"), a, None, lambda a, p, y: 1.0 / _gammainc_dx(a, y))
    elementwise_fixed(sp.gammainccinv, ("a", "q"), a, None, lambda a, q, y: -1.0 / _gammainc_dx(a, y))
    df = {0: "no closed form for the derivative in the degrees of freedom"}
    elementwise_fixed(sp.stdtr, ("df", "t"), df, None, _t_pdf)
    elementwise_fixed(sp.stdtrit, ("df", "p"), df, None, lambda df, p, y: 1.0 / _t_pdf(df, y))
    ab = {0: _SHAPE, 1: _SHAPE}
    elementwise_fixed(sp.betainc, ("a", "b", "x"), ab, None, None, _betainc_dx)
    elementwise_fixed(sp.betaincc, ("a", "b", "x"), ab, None, None, lambda a, b, x, y: -_betainc_dx(a, b, x))
    elementwise_fixed(sp.betaincinv, ("a", "b", "p"), ab, None, None, lambda a, b, p, y: 1.0 / _betainc_dx(a, b, y))
    elementwise_fixed(sp.betainccinv, ("a", "b", "q"), ab, None, None,
                      lambda a, b, q, y: -1.0 / _betainc_dx(a, b, y))
    # Wright's function Phi(a, b; x) = sum_k x^k / (k! Gamma(a k + b)): d/dx is Phi(a, a + b; x)
    # (the Tweedie density's series, statsmodels' GLM Tweedie)
    elementwise_fixed(sp.wright_bessel, ("a", "b", "x"), ab, None, None,
                      lambda a, b, x, y: sp.wright_bessel(a, a + b, x))
    elementwise_fixed(sp.log_wright_bessel, ("a", "b", "x"), ab, None, None,
                      lambda a, b, x, y: np.exp(sp.log_wright_bessel(a, a + b, x) - y))

    @linalg_rule(sp.polygamma, diff=(1,), vjp=_polygamma_vjp)
    def _polygamma(n, x):
        y = sp.polygamma(n, x)
        return y, lambda dx: _polygamma_vjp(dx, y, n, x)[1]  # elementwise and real: the map applied to dx

    @linalg_rule(sp.multigammaln, diff=(0,), vjp=_multigammaln_vjp)
    def _multigammaln(a, d):
        real_only("scipy.special.multigammaln", a)
        y = sp.multigammaln(a, d)  # SciPy's checks of a and d
        return y, lambda da: da * _multigammaln_slope(a, d)


# --------------------------------------------------------------------------------------------
# Error functions
# --------------------------------------------------------------------------------------------


def _register_error_functions() -> None:
    elementwise(sp.erf, lambda x, y: 2 / SQRT_PI * gaussian(x, 1.0))
    elementwise(sp.erfc, lambda x, y: -2 / SQRT_PI * gaussian(x, 1.0))
    elementwise(sp.erfcx, lambda x, y: 2 * x * y - 2 / SQRT_PI)
    elementwise(sp.erfi, lambda x, y: 2 / SQRT_PI * np.exp(x * x))
    elementwise(sp.dawsn, lambda x, y: 1 - 2 * x * y)
    elementwise(sp.erfinv, lambda x, y: SQRT_PI / 2 * np.exp(y * y))
    elementwise(sp.erfcinv, lambda x, y: -SQRT_PI / 2 * np.exp(y * y))
    elementwise(sp.ndtr, lambda x, y: gaussian(x, 0.5) / SQRT_2PI)
    elementwise(sp.ndtri, lambda p, y: SQRT_2PI * np.exp(0.5 * y * y))
    # phi(x)/Phi(x) without forming either: finite where Phi(x) underflows
    elementwise(sp.log_ndtr, lambda x, y: np.exp(-0.5 * x * x - y) / SQRT_2PI)
    elementwise(sp.ndtri_exp, lambda t, y: SQRT_2PI * np.exp(t + 0.5 * y * y))
    elementwise(sp.wofz, lambda z, y: 2j / SQRT_PI - 2.0 * z * y)  # Faddeeva w(z) = exp(-z^2) erfc(-iz)
    elementwise(sp.spence, _spence_partial)


# --------------------------------------------------------------------------------------------
# Logistic, entropies, elementary functions, elliptic integrals, zeta, Lambert W
# --------------------------------------------------------------------------------------------

# Taylor coefficients about m = 0: K(m) = pi/2 sum c_n^2 m^n, E(m) = pi/2 (1 - sum c_n^2 m^n / (2n-1))
_C2 = np.array([1.0, 1 / 4, 9 / 64, 25 / 256, 1225 / 16384, 3969 / 65536])
_SMALL_M = 1e-3  # below it the series (to m^4 in the derivative: error ~1e-16) replaces the formula


def _series_slope(m: Any, weights: np.ndarray) -> Any:
    return np.pi / 2 * sum(k * weights[k] * m ** (k - 1) for k in range(1, len(weights)))


def _ellipk_partial(m: Any, y: Any) -> Any:
    """``K'(m) = (E(m) - (1 - m) K(m)) / (2 m (1 - m))``, its Taylor series near 0."""
    m = np.asarray(m)
    small = np.abs(m) < _SMALL_M
    mf = np.where(small, 0.5, m)
    formula = (sp.ellipe(mf) - (1 - mf) * sp.ellipk(mf)) / (2 * mf * (1 - mf))
    return np.where(small, _series_slope(np.where(small, m, 0.0), _C2), formula)


def _ellipe_partial(m: Any, y: Any) -> Any:
    """``E'(m) = (E(m) - K(m)) / (2 m)``, its Taylor series near 0."""
    m = np.asarray(m)
    small = np.abs(m) < _SMALL_M
    mf = np.where(small, 0.5, m)
    formula = (sp.ellipe(mf) - sp.ellipk(mf)) / (2 * mf)
    weights = -_C2 / (2 * np.arange(len(_C2)) - 1)
    return np.where(small, _series_slope(np.where(small, m, 0.0), weights), formula)


def _powm1_dx(x: Any, p: Any, y: Any) -> Any:
    return p * np.power(x, p - 1.0)


def _zeta_vjp(g, y, x, q=None, out=None):
    gq = None if q is None else -g * np.asarray(x) * sp.zeta(np.asarray(x) + 1.0, q)
    return nan_cotangent(g), gq


def _lambertw_slope(w: Any) -> Any:
    """``W'(z) = 1 / (exp(W) (1 + W))``, on every branch (1 at z = 0)."""
    return 1.0 / (np.exp(w) * (1.0 + w))


def _lambertw_vjp(g, y, z, k=0, tol=1e-8):
    return (g * np.conj(_lambertw_slope(y)),)


def _register_others() -> None:
    elementwise(sp.expit, lambda x, y: y * (1 - y))
    elementwise(sp.logit, lambda x, y: 1 / (x * (1 - x)))
    elementwise(sp.log_expit, lambda x, y: sp.expit(-x))
    elementwise(sp.softplus, lambda x, y: sp.expit(x), ufunc_keywords=False)
    elementwise(sp.xlogy, lambda x, y, out: np.log(y), lambda x, y, out: safe_ratio(x, y))
    elementwise(sp.xlog1py, lambda x, y, out: np.log1p(y), lambda x, y, out: safe_ratio(x, 1 + np.asarray(y)))
    elementwise(sp.entr, lambda x, y: -np.log(x) - 1.0)
    elementwise(sp.rel_entr, lambda x, y, out: np.log(x / y) + 1.0, lambda x, y, out: -safe_ratio(x, y))
    elementwise(sp.kl_div, lambda x, y, out: np.log(x / y), lambda x, y, out: 1.0 - safe_ratio(x, y))
    elementwise(sp.expm1, lambda x, y: y + 1.0)
    elementwise(sp.log1p, lambda x, y: 1.0 / (1.0 + x))
    elementwise(sp.cbrt, lambda x, y: 1.0 / (3.0 * y * y))  # inf at 0, as numpy.cbrt's rule
    elementwise(sp.exp2, lambda x, y: y * np.log(2.0))
    elementwise(sp.exp10, lambda x, y: y * np.log(10.0))
    elementwise(sp.cosdg, lambda x, y: -DEGREE * sp.sindg(x))
    elementwise(sp.sindg, lambda x, y: DEGREE * sp.cosdg(x))
    elementwise(sp.tandg, lambda x, y: DEGREE * (1.0 + y * y))
    elementwise(sp.cotdg, lambda x, y: -DEGREE * (1.0 + y * y))
    elementwise(sp.cosm1, lambda x, y: -np.sin(x))
    # d/dp x^p = x^p log x: 0 at x = 0 (the convention of powers, docs/conventions.md)
    elementwise(sp.powm1, _powm1_dx, lambda x, p, y: sp.xlogy(y + 1.0, x))
    elementwise(sp.ellipk, _ellipk_partial)
    elementwise(sp.ellipe, _ellipe_partial)

    @linalg_rule(sp.zeta, diff=(0, 1), vjp=_zeta_vjp)
    def _zeta(x, q=None, out=None):
        label = "scipy.special.zeta"
        if out is not None:
            refuse(label, "yuebing does not support out= here; assign the result instead")
        real_only(label, x, q)
        y = sp.zeta(x, q)

        def jvp(dx: Any, dq: Any) -> Any:
            refuse_moving(label, "x", "no closed form for the derivative in the exponent", dx)
            return None if dq is None else -dq * np.asarray(x) * sp.zeta(np.asarray(x) + 1.0, q)

        return y, jvp

    @linalg_rule(sp.lambertw, vjp=_lambertw_vjp)
    def _lambertw(z, k=0, tol=1e-8):
        y = sp.lambertw(z, k, tol)
        return y, lambda dz: dz * _lambertw_slope(y)


# --------------------------------------------------------------------------------------------
# Reductions: logsumexp, softmax, log_softmax
# --------------------------------------------------------------------------------------------


def _logsumexp_weights(res, a, axes, b, keepdims, sign=None):
    """``d res / d a`` and ``d res / d b``: ``exp(a - res)`` (times ``sign`` with
    ``return_sign=True``), times ``b`` for ``a`` (NaN where ``res`` is -inf)."""
    res_kept = res if keepdims else np.expand_dims(res, axes)
    weight_b = np.exp(np.asarray(a) - res_kept)
    if sign is not None:
        weight_b = weight_b * (sign if keepdims else np.expand_dims(sign, axes))
    return (weight_b if b is None else weight_b * b), weight_b


def _logsumexp_vjp(g, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    sign = None
    if return_sign:  # y is (res, sign); the sign has zero derivative
        g, sign, y = cotangent_entry(g, 0), y[1], y[0]
        if g is None:
            return None, None, None
    axes = axes_of(axis, np.ndim(a))
    weight_a, weight_b = _logsumexp_weights(y, a, axes, b, keepdims, sign)
    g_kept = g if keepdims else np.expand_dims(g, axes)
    return g_kept * weight_a, None, None if b is None else g_kept * weight_b


def _logsumexp_quiet_vjp(g, y, *args):
    """``_logsumexp_vjp`` without NumPy's warning for ``-inf - -inf`` (the NaN gradient of a
    slice whose result is -inf), for the reverse rule."""
    with np.errstate(invalid="ignore"):
        return _logsumexp_vjp(g, y, *args)


def _logsumexp_jvp(a, a_t, axis=None, axis_t=NoTangent, b=None, b_t=NoTangent, keepdims=False,
                   keepdims_t=NoTangent, return_sign=False, return_sign_t=NoTangent):
    """Third order: the value and tangent of ``logsumexp`` (through its cotangent map, the tuple
    result of ``return_sign=True`` came out wrong there)."""
    y = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    res = y[0] if return_sign else y
    sign = y[1] if return_sign else None
    axes = axes_of(axis, np.ndim(a))
    weight_a, weight_b = _logsumexp_weights(res, a, axes, b, keepdims, sign)
    dy = 0.0 * weight_b
    if a_t is not NoTangent:
        dy = dy + weight_a * a_t
    if b is not None and b_t is not NoTangent:
        dy = dy + weight_b * b_t
    dres = np.sum(dy, axis=axes, keepdims=keepdims)
    if return_sign:
        return y, (dres, 0.0 * sign)
    return y, dres


def _softmax_vjp(g, y, x, axis=None):
    return (y * (g - np.sum(g * y, axis=axes_of(axis, np.ndim(x)), keepdims=True)),)


def _log_softmax_vjp(g, y, x, axis=None):
    return (g - np.exp(y) * np.sum(g, axis=axes_of(axis, np.ndim(x)), keepdims=True),)


def _register_reductions() -> None:
    @linalg_rule(sp.logsumexp, diff=(0, 2), vjp=_logsumexp_quiet_vjp)
    def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
        real_only("scipy.special.logsumexp", a, b)
        y = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
        res, sign = y if return_sign else (y, None)
        axes = axes_of(axis, np.ndim(a))

        def jvp(da: Any, db: Any) -> Any:
            with np.errstate(invalid="ignore"):  # -inf - -inf: the NaN gradient of an all -inf slice
                weight_a, weight_b = _logsumexp_weights(res, a, axes, b, keepdims, sign)
            dy = add(None if da is None else weight_a * da, None if db is None else weight_b * db)
            dres = np.sum(dy, axis=axes, keepdims=keepdims)
            return [dres, None] if return_sign else dres

        return y, jvp

    @linalg_rule(sp.softmax, vjp=_softmax_vjp)
    def _softmax(x, axis=None):
        real_only("scipy.special.softmax", x)
        y = sp.softmax(x, axis=axis)
        # the Jacobian diag(y) - y y^T is symmetric: the tangent is the cotangent map applied to dx
        return y, lambda dx: _softmax_vjp(dx, y, x, axis)[0]

    @linalg_rule(sp.log_softmax, vjp=_log_softmax_vjp)
    def _log_softmax(x, axis=None):
        real_only("scipy.special.log_softmax", x)
        y = sp.log_softmax(x, axis=axis)

        def jvp(dx: Any) -> Any:
            return dx - np.sum(np.exp(y) * dx, axis=axes_of(axis, np.ndim(x)), keepdims=True)

        return y, jvp


if sp is not None:
    _register_gamma()
    _register_error_functions()
    _register_others()
    _register_reductions()


# --------------------------------------------------------------------------------------------
# Second order: the elementwise functions by their partials (declared above); these by their
# cotangent maps
# --------------------------------------------------------------------------------------------

if sp is not None:
    with_vjp(sp.polygamma, _polygamma_vjp)
    with_vjp(sp.multigammaln, _multigammaln_vjp)
    with_vjp(sp.zeta, _zeta_vjp)
    with_vjp(sp.lambertw, _lambertw_vjp)
    with_vjp(sp.logsumexp, _logsumexp_vjp)
    jvp_defined_by(sp.logsumexp, _logsumexp_jvp)
    with_vjp(sp.softmax, _softmax_vjp)
    with_vjp(sp.log_softmax, _log_softmax_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    f32 = np.float32
    ints = np.array([1, 2, 5])
    p = randu(4, low=0.1, high=0.9)
    return [
        # gamma family
        Case(sp.gamma, randpos(4)),
        Case(sp.gamma, np.array([-0.5, -1.5, -2.3])),
        Case(sp.gammaln, randpos(4)),
        Case(sp.gammaln, randpos()),
        Case(sp.gammaln, np.array([-0.5, -1.3, -2.7]), name="gammaln of negative x: log|gamma|"),
        Case(sp.loggamma, randpos(4) * 3),
        Case(sp.loggamma, randc(3) + 2.0),
        Case(sp.digamma, randpos(4)),
        Case(sp.polygamma, 1, randpos(4)),
        Case(sp.polygamma, np.array([0, 1, 2]), randpos(3)),
        Case(sp.rgamma, randu(5, low=-3.0, high=3.0)),
        Case(sp.rgamma, np.array([0.0, -1.0, -2.0, -3.0]), name="rgamma at the poles of gamma"),
        Case(sp.rgamma, randc(2) + 1.0),
        Case(sp.gammasgn, randpos(3)),
        Case(sp.multigammaln, randpos(3) + 2.0, 3),
        Case(sp.multigammaln, 4.5, 4),
        Case(sp.beta, randpos(3), randpos(3)),
        Case(sp.betaln, randpos(3), randpos(2, 1)),
        Case(sp.poch, randpos(3), randpos(3)),
        Case(sp.poch, randpos(3), 2.0),
        Case(sp.binom, randpos(3) * 4 + 2, randpos(3)),
        Case(sp.binom, 5.5, 2.3),
        Case(sp.gammainc, ints, randpos(3) * 2),
        Case(sp.gammainc, 3, randpos(2, 3)),
        Case(sp.gammaincc, 2, randpos(4) * 2),
        Case(sp.gammaincinv, ints, randu(3, low=0.1, high=0.9)),
        Case(sp.gammainccinv, 3, randu(3, low=0.1, high=0.9)),
        Case(sp.stdtr, np.array([2, 4, 7]), randn(3) * 2),  # (an int df: it has no derivative)
        Case(sp.stdtr, 3, randn(2, 3)),
        Case(sp.stdtr, 10 ** 6, randn(3), name="stdtr at a large df (the normal's cdf)"),
        Case(sp.stdtrit, np.array([2, 5, 30]), randu(3, low=0.05, high=0.95)),
        Case(sp.betainc, 2, 3, p),
        Case(sp.betainc, ints, np.array([2, 1, 3]), randu(3, low=0.1, high=0.9)),
        Case(sp.betaincc, 3, 2, randu(3, low=0.1, high=0.9)),
        Case(sp.betaincinv, 2, 4, randu(3, low=0.1, high=0.9)),
        Case(sp.betainccinv, 3, 3, randu(3, low=0.1, high=0.9)),
        Case(sp.wright_bessel, ints, np.array([0, 1, 2]), randpos(3) * 2),
        Case(sp.log_wright_bessel, 1, 0, randpos(3) * 3),
        # error functions
        Case(sp.erf, randn(2, 3)),
        Case(sp.erf, randc(3)),
        Case(sp.erfc, randn(4)),
        Case(sp.erfcx, randn(4) * 3),
        Case(sp.erfi, randn(4)),
        Case(sp.dawsn, randn(4) * 2),
        Case(sp.erfinv, randu(4, low=-0.9, high=0.9)),
        Case(sp.erfcinv, randu(4, low=0.1, high=1.9)),
        Case(sp.ndtr, randn(4)),
        Case(sp.ndtr, randc(2)),
        Case(sp.ndtri, randu(4, low=0.05, high=0.95)),
        Case(sp.log_ndtr, randn(4) * 3),
        Case(sp.log_ndtr, np.array([-40.0, -20.0, -8.0]), name="log_ndtr far in the left tail"),
        Case(sp.ndtri_exp, -randpos(3) * 3),
        Case(sp.wofz, randc(3)),
        Case(sp.wofz, randn(3) * 2),
        Case(sp.spence, randpos(4) * 2),
        Case(sp.spence, np.array([1.0, 1.0 + 4e-4, 0.3]), name="spence at and near 1 (the partial's series)"),
        # logistic, entropies, elementary functions
        Case(sp.expit, randn(4)),
        Case(sp.expit, randn()),
        Case(sp.expit, randn(3, dtype=f32)),
        Case(sp.logit, randu(4, low=0.1, high=0.9)),
        Case(sp.log_expit, randn(4) * 3),
        Case(sp.softplus, randn(4) * 3),
        Case(sp.xlogy, randn(4), randpos(4)),
        Case(sp.xlogy, randn(3), randpos(1)),
        Case(sp.xlogy, np.zeros(3), randpos(3), name="xlogy(0, y): d/dy = 0"),
        Case(sp.xlogy, 0.0, 1.5),
        Case(sp.xlog1py, randn(4), randpos(4)),
        Case(sp.entr, randpos(4)),
        Case(sp.rel_entr, randpos(4), randpos(4)),
        Case(sp.kl_div, randpos(4), randpos(4)),
        Case(sp.expm1, randn(3)),
        Case(sp.log1p, randpos(3)),
        Case(sp.cbrt, randn(3)),
        Case(sp.exp2, randn(3)),
        Case(sp.exp10, randn(3)),
        Case(sp.cosdg, randn(3) * 60),
        Case(sp.sindg, randn(3) * 60),
        Case(sp.tandg, randn(3) * 30),
        Case(sp.cotdg, randu(3, low=20.0, high=160.0)),
        Case(sp.cosm1, randn(3)),
        Case(sp.powm1, randpos(3), randn(3)),
        Case(sp.ellipk, randu(4, low=-2.0, high=0.9)),
        Case(sp.ellipk, np.array([0.0, 3e-4, -8e-4, 2e-3]), name="ellipk near 0 (series)"),
        Case(sp.ellipe, randu(4, low=-2.0, high=0.9)),
        Case(sp.ellipe, np.array([0.0, 3e-4, -8e-4, 2e-3]), name="ellipe near 0 (series)"),
        Case(sp.zeta, 3, randpos(3)),
        Case(sp.zeta, np.array([2, 3, 4]), randpos(3) * 2),
        Case(sp.lambertw, randpos(3)),
        Case(sp.lambertw, randu(3, low=-0.3, high=0.0), name="lambertw(real, k=0) on (-1/e, 0)"),
        Case(sp.lambertw, randc(3)),
        Case(sp.lambertw, randc(2), kwargs={"k": 1}),
        # reductions
        Case(sp.logsumexp, randn(5)),
        Case(sp.logsumexp, randn(3, 4), kwargs={"axis": 1}),
        Case(sp.logsumexp, randn(3, 4), kwargs={"axis": 0, "keepdims": True}),
        Case(sp.logsumexp, randn(2, 3, 4), kwargs={"axis": (0, 2)}),
        Case(sp.logsumexp, randn(3, 4), None, randpos(3, 4)),
        Case(sp.logsumexp, randn(3, 4), 1, randpos(4)),
        Case(sp.logsumexp, randn(4, dtype=f32)),
        Case(sp.logsumexp, randn(3, 4), 1, randn(4), kwargs={"return_sign": True}),
        Case(sp.logsumexp, randn(5), None, -randpos(5), kwargs={"return_sign": True}),
        Case(sp.logsumexp, randn(2, 3), kwargs={"axis": 0, "keepdims": True, "return_sign": True}),
        Case(sp.softmax, randn(5)),
        Case(sp.softmax, randn(3, 4), kwargs={"axis": 1}),
        Case(sp.softmax, randn(3, 4, dtype=f32), kwargs={"axis": 0}),
        Case(sp.log_softmax, randn(5)),
        Case(sp.log_softmax, randn(3, 4), kwargs={"axis": -1}),
    ]


CASES = _cases() if sp is not None else []
