"""Rules for the ``math`` and ``cmath`` modules.

``math``: every differentiable function of real numbers. Results are Python floats, as ``math``'s
are. Unary and binary functions are ``elementwise`` one-liners; ``log`` (optional base),
``hypot`` (any number of coordinates) and the functions of iterables (``fsum``, ``prod``,
``dist``, ``sumprod``) are written out. Integer-valued functions (``floor``, ``factorial``...) are
declared in ``nondifferentiable.py``.

``cmath``: holomorphic functions (``exp``, ``log``, ``sqrt``, trigonometric and hyperbolic) use
``elementwise``'s conjugate convention. ``phase`` and ``polar`` are not holomorphic: their rules
work with real and imaginary parts (cotangent of ``z`` is ``dphase/dx + i dphase/dy``, the
convention of the real inner product ``Re(conj(a) * b)``). ``rect`` maps reals to a complex number.

Conventions at non-smooth points (docs/conventions.md): ``fabs'(0) = 0``; ``copysign(x, y)``
has derivative ``sign(x) * sign(y)`` in ``x`` (0 at ``x = 0``) and 0 in ``y``; ``hypot``,
``dist`` and ``abs`` at the origin have gradient 0; ``sqrt'(0) = cbrt'(0) = inf``;
``pow(x, y)`` has ``d/dy = 0`` at ``x = 0`` and ``nan`` for ``x < 0`` (the real function is not
defined near there), which a constant ``y`` never meets (strong zero: ``declare.strong_product``);
``fmod(x, y)`` has ``d/dy = -trunc(x / y)``.
"""
from __future__ import annotations

import cmath
import math
from typing import Any

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, randc, randn, randpos, randu
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .declare import elementwise, make_elementwise_rules
from .second_order import defined_by, jvp_defined_by, linear, with_vjp
from .util import accumulate, is_differentiable, tangent

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _sign(x: float) -> float:
    """sign(x) with sign(0) = 0 (the ``abs'(0) = 0`` convention)."""
    return 0.0 if x == 0 else math.copysign(1.0, x)


def digamma(x: float) -> float:
    """The digamma function (d/dx lgamma), in pure Python: ``math`` has no digamma and SciPy is
    optional. Recurrence up to x >= 10, then the asymptotic series (error below 1e-15)."""
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:  # reflection
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    result = 0.0
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    return result + math.log(x) - 0.5 / x - series


# ------------------------------------------------------------------------------------------------
# math: one-liners (partial(*inputs, output))
# ------------------------------------------------------------------------------------------------

elementwise(math.sqrt, lambda x, y: 0.5 / y if y else math.inf)
elementwise(math.exp, lambda x, y: y)
elementwise(math.expm1, lambda x, y: y + 1.0)
elementwise(math.log1p, lambda x, y: 1.0 / (1.0 + x))
elementwise(math.log2, lambda x, y: 1.0 / (x * _LN2))
elementwise(math.log10, lambda x, y: 1.0 / (x * _LN10))
elementwise(math.sin, lambda x, y: math.cos(x))
elementwise(math.cos, lambda x, y: -math.sin(x))
elementwise(math.tan, lambda x, y: 1.0 + y * y)
elementwise(math.asin, lambda x, y: 1.0 / math.sqrt(1.0 - x * x))
elementwise(math.acos, lambda x, y: -1.0 / math.sqrt(1.0 - x * x))
elementwise(math.atan, lambda x, y: 1.0 / (1.0 + x * x))
elementwise(math.atan2, lambda a, b, y: b / (a * a + b * b), lambda a, b, y: -a / (a * a + b * b))
elementwise(math.sinh, lambda x, y: math.cosh(x))
elementwise(math.cosh, lambda x, y: math.sinh(x))
elementwise(math.tanh, lambda x, y: 1.0 - y * y)
elementwise(math.asinh, lambda x, y: 1.0 / math.sqrt(x * x + 1.0))
elementwise(math.acosh, lambda x, y: 1.0 / math.sqrt(x * x - 1.0))
elementwise(math.atanh, lambda x, y: 1.0 / (1.0 - x * x))
elementwise(math.erf, lambda x, y: _TWO_OVER_SQRT_PI * math.exp(-x * x))
elementwise(math.erfc, lambda x, y: -_TWO_OVER_SQRT_PI * math.exp(-x * x))
elementwise(math.gamma, lambda x, y: y * digamma(x))
elementwise(math.lgamma, lambda x, y: digamma(x))
elementwise(math.fabs, lambda x, y: _sign(x))
elementwise(math.copysign, lambda a, b, y: _sign(a) * math.copysign(1.0, b), None)
elementwise(math.fmod, lambda a, b, y: 1.0, lambda a, b, y: -float(round((a - y) / b)))
elementwise(math.degrees, lambda x, y: 180.0 / math.pi)
elementwise(math.radians, lambda x, y: math.pi / 180.0)
elementwise(math.ldexp, lambda x, i, y: math.ldexp(1.0, i), None)
if hasattr(math, "exp2"):  # Python 3.11+
    elementwise(math.exp2, lambda x, y: _LN2 * y)
if hasattr(math, "cbrt"):  # Python 3.11+
    elementwise(math.cbrt, lambda x, y: 1.0 / (3.0 * y * y) if y else math.inf)


def _pow_dx(x: float, p: float, y: float) -> float:
    if p == 0:
        return 0.0
    if x == 0 and p < 1:  # p * 0 ** (p - 1) is +-inf; math.pow raises for negative powers of 0
        return math.copysign(math.inf, p)
    # also at x = 0 for p >= 1 (0 for p > 1, 1 for p = 1), so that forward mode of this partial
    # gives the second derivative p (p - 1) x ** (p - 2) there
    return p * math.pow(x, p - 1.0)


def _pow_dp(x: float, p: float, y: float) -> float:
    if x > 0:
        return y * math.log(x)
    return 0.0 if x == 0 else math.nan


elementwise(math.pow, _pow_dx, _pow_dp)

# ------------------------------------------------------------------------------------------------
# math.log(x[, base])
# ------------------------------------------------------------------------------------------------

# The partials, named: the elementwise rules, the second-order cotangent map and the third-order
# forward definition all use them.


def _log_dx(x, y):
    return 1.0 / x


def _log_base_dx(x, b, y):
    return 1.0 / (x * math.log(b))


def _log_base_db(x, b, y):
    return -y / (b * math.log(b))


_log1_rrule, _log1_frule = make_elementwise_rules(math.log, _log_dx)
_log2_rrule, _log2_frule = make_elementwise_rules(math.log, _log_base_dx, _log_base_db)


@rrule_for(math.log)
def _log_rrule(x, base=None):
    return _log1_rrule(x) if base is None else _log2_rrule(x, base)


@frule_for(math.log)
def _log_frule(x, base=None):
    return _log1_frule(x) if base is None else _log2_frule(x, base)


# ------------------------------------------------------------------------------------------------
# hypot(*coordinates)
# ------------------------------------------------------------------------------------------------


def _hypot_vjp(g, y, *coordinates):
    """The cotangents ``g x_i / y`` (0 at the origin); second order differentiates this too."""
    cotangents = []
    for x in coordinates:
        cotangents.append(g * x / y if y else 0.0)
    return tuple(cotangents)


@rrule_for(math.hypot)
def _hypot_rrule(*coordinates):
    xs = [primal(c) for c in coordinates]
    y = math.hypot(*xs)

    def pullback(dy):
        cotangents = _hypot_vjp(0.0 if dy is NoRData else dy, y, *xs)
        return (NoRData,) + tuple(accumulate(c, ct) for c, ct in zip(coordinates, cotangents))

    return CoDual(y, NoFData), pullback


@frule_for(math.hypot)
def _hypot_frule(*coordinates):
    xs = [primal(c) for c in coordinates]
    y = math.hypot(*xs)
    partials = _hypot_vjp(1.0, y, *xs)  # a real scalar function: its partials are its cotangents for g = 1
    dy = sum(p * _number_tangent(c) for p, c in zip(partials, coordinates)) if y else 0.0
    return Dual(y, float(dy))


def _number_tangent(d: Any) -> float:
    t = tangent(d)
    return 0.0 if t is NoTangent or not is_differentiable(primal(d)) else t


# ------------------------------------------------------------------------------------------------
# Functions of iterables: fsum, prod, dist, sumprod
# ------------------------------------------------------------------------------------------------
# An iterable argument is a list (element cotangents accumulate in its fdata), a tuple (they are
# returned as its rdata) or a 1-d float array (they accumulate in its fdata). Elements are
# numbers; other iterables (generators, sets) are refused: their elements cannot be traced.


def _number_like(t: Any, y: Any) -> Any:
    """Tangent ``t`` as the tangent type of number ``y`` (float or complex; NoTangent for ints)."""
    if isinstance(y, (complex, np.complexfloating)):
        return complex(t)
    return float(t) if is_differentiable(y) else NoTangent


def _items(arg: Any, name: str) -> list:
    x = primal(arg)
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, np.ndarray) and x.ndim == 1:
        return list(x)
    raise RuleArgumentError(
        f"{name}: yuebing differentiates it for a list, tuple or 1-d array of numbers, not a "
        f"{type(x).__qualname__}; convert the argument with list(...) first"
    )


def _deliver(arg: Any, grads: list) -> Any:
    """Give element ``i`` of sequence ``arg`` the cotangent ``grads[i]``; return ``arg``'s rdata."""
    if not isinstance(arg, CoDual):
        return NoRData
    x, fd = arg.primal, arg.fdata
    if isinstance(x, np.ndarray):
        if fd is not NoFData and x.dtype.kind in "fc":
            fd += np.asarray(grads, dtype=fd.dtype)
        return NoRData
    if isinstance(x, list):
        for i, (v, g) in enumerate(zip(x, grads)):
            if is_differentiable(v) and fd[i] is not NoTangent:
                fd[i] = fd[i] + g
        return NoRData
    rdata = tuple(_number_rdata(v, g) for v, g in zip(x, grads))  # a tuple: cotangents by value
    return NoRData if all(r is NoRData for r in rdata) else rdata


def _number_rdata(v: Any, g: Any) -> Any:
    if isinstance(v, (complex, np.complexfloating)):
        return complex(g)
    return float(g) if is_differentiable(v) else NoRData


def _item_tangents(arg: Any) -> list:
    """Forward mode: the tangents of a sequence argument's elements (0.0 for integers)."""
    x, t = primal(arg), tangent(arg)
    if t is NoTangent:
        return [0.0] * len(x)
    return [0.0 if ti is NoTangent else ti for ti in t]


@rrule_for(math.fsum)
def _fsum_rrule(seq):
    xs = _items(seq, "math.fsum")
    y = math.fsum(xs)

    def pullback(dy):
        g = 0.0 if dy is NoRData else dy
        return NoRData, _deliver(seq, [g] * len(xs))

    return CoDual(y, NoFData), pullback


@frule_for(math.fsum)
def _fsum_frule(seq):
    xs = _items(seq, "math.fsum")
    return Dual(math.fsum(xs), float(math.fsum(_item_tangents(seq))))


def _products_of_others(xs: list, start: Any) -> list:
    """``[start * prod(xs[j] for j != i) for i]`` without division (exact at zeros)."""
    n = len(xs)
    prefix = [start] * (n + 1)
    for i, x in enumerate(xs):
        prefix[i + 1] = prefix[i] * x
    result = [None] * n
    suffix: Any = 1
    for i in range(n - 1, -1, -1):
        result[i] = prefix[i] * suffix
        suffix = suffix * xs[i]
    return result


def _check_prod_items(xs: list, start: Any) -> None:
    if any(isinstance(v, (np.ndarray, list, tuple)) for v in [*xs, start]):
        raise RuleArgumentError("math.prod: yuebing differentiates products of numbers only; use np.prod for arrays")


_NOT_PASSED = object()  # a default that tells whether an optional argument was passed


@rrule_for(math.prod)
def _prod_rrule(seq, start=_NOT_PASSED):
    xs = _items(seq, "math.prod")
    s = 1 if start is _NOT_PASSED else primal(start)
    _check_prod_items(xs, s)
    y = math.prod(xs, start=s)

    def pullback(dy):
        g = 0.0 if dy is NoRData else dy
        others = _products_of_others(xs, s)
        rdatas = (NoRData, _deliver(seq, [g * o for o in others]))
        if start is _NOT_PASSED:  # one rdata per argument received
            return rdatas
        return rdatas + (accumulate(start, g * math.prod(xs)) if is_differentiable(s) else NoRData,)

    return CoDual(y, NoFData), pullback


@frule_for(math.prod)
def _prod_frule(seq, start=_NOT_PASSED):
    xs = _items(seq, "math.prod")
    s = 1 if start is _NOT_PASSED else primal(start)
    _check_prod_items(xs, s)
    y = math.prod(xs, start=s)
    others = _products_of_others(xs, s)
    dy = sum(o * t for o, t in zip(others, _item_tangents(seq))) + math.prod(xs) * _number_tangent(start)
    return Dual(y, _number_like(dy, y))


@rrule_for(math.dist)
def _dist_rrule(p, q):
    ps, qs = _items(p, "math.dist"), _items(q, "math.dist")
    y = math.dist(ps, qs)

    def pullback(dy):
        g = 0.0 if dy is NoRData else dy
        partials = [(a - b) / y if y else 0.0 for a, b in zip(ps, qs)]
        return NoRData, _deliver(p, [g * d for d in partials]), _deliver(q, [-g * d for d in partials])

    return CoDual(y, NoFData), pullback


@frule_for(math.dist)
def _dist_frule(p, q):
    ps, qs = _items(p, "math.dist"), _items(q, "math.dist")
    y = math.dist(ps, qs)
    if not y:
        return Dual(y, 0.0)
    dy = sum((a - b) / y * (da - db) for a, b, da, db in zip(ps, qs, _item_tangents(p), _item_tangents(q)))
    return Dual(y, float(dy))


if hasattr(math, "sumprod"):  # Python 3.12+

    @rrule_for(math.sumprod)
    def _sumprod_rrule(p, q):
        ps, qs = _items(p, "math.sumprod"), _items(q, "math.sumprod")
        y = math.sumprod(ps, qs)

        def pullback(dy):
            g = 0.0 if dy is NoRData else dy
            return NoRData, _deliver(p, [g * b for b in qs]), _deliver(q, [g * a for a in ps])

        return CoDual(y, NoFData), pullback

    @frule_for(math.sumprod)
    def _sumprod_frule(p, q):
        ps, qs = _items(p, "math.sumprod"), _items(q, "math.sumprod")
        y = math.sumprod(ps, qs)
        dy = math.sumprod(_item_tangents(p), qs) + math.sumprod(ps, _item_tangents(q))
        return Dual(y, _number_like(dy, y))


# ------------------------------------------------------------------------------------------------
# cmath
# ------------------------------------------------------------------------------------------------

elementwise(cmath.exp, lambda z, y: y)
elementwise(cmath.log, lambda z, y: 1.0 / z)  # the optional base is handled below
elementwise(cmath.log10, lambda z, y: 1.0 / (z * _LN10))
elementwise(cmath.sqrt, lambda z, y: 0.5 / y)
elementwise(cmath.sin, lambda z, y: cmath.cos(z))
elementwise(cmath.cos, lambda z, y: -cmath.sin(z))
elementwise(cmath.tan, lambda z, y: 1.0 + y * y)
elementwise(cmath.asin, lambda z, y: 1.0 / cmath.sqrt(1.0 - z * z))
elementwise(cmath.acos, lambda z, y: -1.0 / cmath.sqrt(1.0 - z * z))
elementwise(cmath.atan, lambda z, y: 1.0 / (1.0 + z * z))
elementwise(cmath.sinh, lambda z, y: cmath.cosh(z))
elementwise(cmath.cosh, lambda z, y: cmath.sinh(z))
elementwise(cmath.tanh, lambda z, y: 1.0 - y * y)
elementwise(cmath.asinh, lambda z, y: 1.0 / cmath.sqrt(z * z + 1.0))
elementwise(cmath.acosh, lambda z, y: 1.0 / (cmath.sqrt(z - 1.0) * cmath.sqrt(z + 1.0)))
elementwise(cmath.atanh, lambda z, y: 1.0 / (1.0 - z * z))

_clog1_rrule, _clog1_frule = make_elementwise_rules(cmath.log, lambda z, y: 1.0 / z)
_clog2_rrule, _clog2_frule = make_elementwise_rules(
    cmath.log,
    lambda z, b, y: 1.0 / (z * cmath.log(b)),
    lambda z, b, y: -y / (b * cmath.log(b)),
)


@rrule_for(cmath.log)
def _clog_rrule(x, base=None):
    return _clog1_rrule(x) if base is None else _clog2_rrule(x, base)


@frule_for(cmath.log)
def _clog_frule(x, base=None):
    return _clog1_frule(x) if base is None else _clog2_frule(x, base)


def _complex_cotangent(z: Any, g: complex) -> Any:
    """rdata for argument ``z`` from cotangent ``g = d/dx + i d/dy`` (real part only for reals)."""
    if not isinstance(z, CoDual) or not is_differentiable(z.primal):
        return NoRData
    if isinstance(z.primal, (complex, np.complexfloating)):
        return complex(g)
    return float(g.real)


def _phase_cotangent(z: complex) -> complex:
    """d phase = (x dy - y dx) / |z|^2, so its cotangent is (-y + i x) / |z|^2 = i / conj(z).
    (Attributes, not ``z.conjugate()``: second order differentiates this, and the forward transform
    has no rule for ``float.conjugate``.)"""
    return 1j / complex(z.real, -z.imag) if z else 0j


def _abs_cotangent(z: complex) -> complex:
    """d|z| = (x dx + y dy) / |z|, so its cotangent is z / |z| (0 at the origin)."""
    return z / abs(z) if z else 0j


def _real_dot(c: complex, dz: complex) -> float:
    """Re(conj(c) * dz): the directional derivative given a cotangent ``c`` (written with
    attributes, which the forward transform follows, for second order)."""
    return c.real * dz.real + c.imag * dz.imag


def _phase_vjp(g, y, z):
    """The cotangent of ``z`` (for a real ``z``, the rules keep its real part)."""
    return (g * _phase_cotangent(z),)


@rrule_for(cmath.phase)
def _phase_rrule(z):
    x = complex(primal(z))
    y = cmath.phase(primal(z))

    def pullback(dy):
        g = 0.0 if dy is NoRData else dy
        return NoRData, _complex_cotangent(z, _phase_vjp(g, y, x)[0])

    return CoDual(y, NoFData), pullback


@frule_for(cmath.phase)
def _phase_frule(z):
    x = complex(primal(z))
    return Dual(cmath.phase(primal(z)), _real_dot(_phase_cotangent(x), complex(_number_tangent(z))))


@rrule_for(cmath.polar)
def _polar_rrule(z):
    x = complex(primal(z))
    y = cmath.polar(primal(z))

    def pullback(dy):
        if dy is NoRData:
            return NoRData, NoRData
        d_abs, d_phase = (0.0 if d is NoRData else d for d in dy)
        return NoRData, _complex_cotangent(z, d_abs * _abs_cotangent(x) + d_phase * _phase_cotangent(x))

    return CoDual(y, NoFData), pullback


@frule_for(cmath.polar)
def _polar_frule(z):
    x = complex(primal(z))
    dz = complex(_number_tangent(z))
    return Dual(cmath.polar(primal(z)), (_real_dot(_abs_cotangent(x), dz), _real_dot(_phase_cotangent(x), dz)))


def _rect_partials(r, phi):
    """``d rect / dr`` (the unit number at angle ``phi``) and ``d rect / dphi`` (``i r`` times it)."""
    unit = cmath.rect(1.0, phi)
    return unit, 1j * r * unit


def _rect_vjp(g, y, r, phi):
    d_r, d_phi = _rect_partials(r, phi)
    return _real_dot(d_r, g), _real_dot(d_phi, g)


@rrule_for(cmath.rect)
def _rect_rrule(r, phi):
    rr, pp = primal(r), primal(phi)
    y = cmath.rect(rr, pp)

    def pullback(dy):
        g_r, g_phi = _rect_vjp(0j if dy is NoRData else complex(dy), y, rr, pp)
        return NoRData, accumulate(r, g_r), accumulate(phi, g_phi)

    return CoDual(y, NoFData), pullback


@frule_for(cmath.rect)
def _rect_frule(r, phi):
    rr, pp = primal(r), primal(phi)
    d_r, d_phi = _rect_partials(rr, pp)
    return Dual(cmath.rect(rr, pp), complex(d_r * _number_tangent(r) + d_phi * _number_tangent(phi)))


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------
# log, hypot, phase and rect: the cotangent maps their reverse rules call (defined with the
# rules above), differentiated by the forward transform; fsum is linear; prod and dist are written
# as Python loops over their (list or tuple) arguments; polar as its two parts (a vjp could not
# compute with the NoRData its output cotangent holds for an unused part). cmath.log, with or
# without a base, by its elementwise partials in a cotangent map (an elementwise declaration has
# one number of arguments).


def _prod(iterable, *, start=1):
    result = start
    for value in iterable:
        result = result * value
    return result


def _dist(p, q):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q)))


defined_by(math.prod, _prod)
defined_by(math.dist, _dist)


def _polar(z):
    return abs(z), cmath.phase(z)


defined_by(cmath.polar, _polar)


def _log_vjp(g, y, x, base=None):
    """The elementwise rules' partials times ``g``."""
    if base is None:
        return (g * _log_dx(x, y),)
    return g * _log_base_dx(x, base, y), g * _log_base_db(x, base, y)


def _log_jvp(x, x_t, base=None, base_t=NoTangent):
    """Third order: the tangent of ``math.log(x[, base])`` (its cotangent map logs again)."""
    x_t = 0.0 if x_t is NoTangent else x_t
    if base is None:
        y = math.log(x)
        return y, x_t * _log_dx(x, y)
    y = math.log(x, base)
    tangent = x_t * _log_base_dx(x, base, y)
    if base_t is not NoTangent:
        tangent = tangent + base_t * _log_base_db(x, base, y)
    return y, tangent


def _complex_conjugate(w):
    """``w.conjugate()`` written with attributes (second order differentiates the maps using it)."""
    return complex(w.real, -w.imag)


def _clog_vjp(g, y, z, base=None):
    """``g`` times the conjugate of each partial of ``cmath.log`` (docs/conventions.md)."""
    if base is None:
        return (g * _complex_conjugate(1.0 / z),)
    log_base = cmath.log(base)
    return g * _complex_conjugate(1.0 / (z * log_base)), g * _complex_conjugate(-y / (base * log_base))


def _clog_jvp(z, z_t, base=None, base_t=NoTangent):
    """Third order: the tangent of ``cmath.log(z[, base])`` (its cotangent map logs again)."""
    y = cmath.log(z) if base is None else cmath.log(z, base)
    log_base = 1.0 if base is None else cmath.log(base)
    tangent = 0j if z_t is NoTangent else 0j + z_t / (z * log_base)  # complex, as y: of a real z too
    if base is not None and base_t is not NoTangent:
        tangent = tangent - base_t * y / (base * log_base)
    return y, tangent


def _phase_jvp(z, z_t):
    """Third order: ``d phase(z) = Im(dz / z) = (x dy - y dx) / |z|^2`` (its cotangent is complex)."""
    w, dw = 0j + z, 0j if z_t is NoTangent else 0j + z_t
    return cmath.phase(z), (w.real * dw.imag - w.imag * dw.real) / (w.real * w.real + w.imag * w.imag)


def _rect_jvp(r, r_t, phi, phi_t):
    """Third order: ``d rect(r, phi) = (dr + i r dphi) e^{i phi}`` (it returns a complex)."""
    dr = 0.0 if r_t is NoTangent else r_t
    dphi = 0.0 if phi_t is NoTangent else phi_t
    return cmath.rect(r, phi), cmath.rect(1.0, phi) * (dr + 1j * r * dphi)


# ``z.conjugate()`` of a Python number: ``x - iy`` for a complex, the number itself for a float or
# an int. Not holomorphic: its tangent is ``conj(dz)`` and so is its cotangent.
_NUMBER_CONJUGATES = ((complex, "conjugate"), (float, "conjugate"), (int, "conjugate"))


@rrule_for(*_NUMBER_CONJUGATES)
def _number_conjugate_rrule(z):
    def pullback(g):
        return NoRData, _complex_cotangent(z, complex(0.0 if g is NoRData else g).conjugate())

    return CoDual(primal(z).conjugate(), NoFData), pullback


@frule_for(*_NUMBER_CONJUGATES)
def _number_conjugate_frule(z):
    dz = tangent(z)
    return Dual(primal(z).conjugate(), dz if dz is NoTangent else dz.conjugate())


with_vjp(math.log, _log_vjp)
jvp_defined_by(math.log, _log_jvp)
with_vjp(math.hypot, _hypot_vjp)
with_vjp(cmath.phase, _phase_vjp)
with_vjp(cmath.log, _clog_vjp)
jvp_defined_by(cmath.log, _clog_jvp)
with_vjp(cmath.rect, _rect_vjp)
jvp_defined_by(cmath.phase, _phase_jvp)
jvp_defined_by(cmath.rect, _rect_jvp)
linear(math.fsum, data=(0,))  # ints in the sequence are values
# Second order: not ``linear`` (its tangent call would be the method bound to the primal).
defined_by((complex, "conjugate"), lambda z: complex(z.real, -z.imag))
defined_by((float, "conjugate"), lambda x: x + 0.0)
defined_by((int, "conjugate"), lambda x: x)


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


def _unit() -> float:
    return randu(low=-0.9, high=0.9)


def _pos() -> float:
    return randpos()


CASES = [
    *(Case(f, _pos()) for f in (math.sqrt, math.log1p, math.log2, math.log10, math.lgamma, math.gamma)),
    *(Case(f, randn()) for f in (math.exp, math.expm1, math.sin, math.cos, math.atan, math.sinh, math.cosh,
                                math.tanh, math.asinh, math.erf, math.erfc, math.degrees, math.radians)),
    *(Case(f, _unit()) for f in (math.tan, math.asin, math.acos, math.atanh)),
    Case(math.acosh, 1.5 + _pos()),
    Case(math.gamma, -1.5, name="math.gamma(negative)"),
    Case(math.lgamma, -2.3, name="math.lgamma(negative)"),
    Case(math.gamma, 12.7, name="math.gamma(large)"),
    Case(math.exp, 2, name="math.exp(int): no derivative"),
    Case(math.sqrt, np.float32(2.0), name="math.sqrt(float32 scalar)"),
    Case(math.fabs, -1.3),
    Case(math.fabs, 0.7),
    Case(math.atan2, randn(), randn()),
    Case(math.atan2, -0.5, -2.0, name="math.atan2(third quadrant)"),
    Case(math.copysign, 1.5, -2.0),
    Case(math.copysign, -1.5, 3.0),
    Case(math.fmod, 7.3, 2.1),
    Case(math.fmod, -7.3, 2.1),
    Case(math.ldexp, randn(), 3),
    Case(math.pow, _pos(), randn()),
    Case(math.pow, 2.5, 2, name="math.pow(float, int)"),
    Case(math.pow, -1.7, 3, name="math.pow(negative, int)"),  # a float exponent would leave the domain
    Case(math.log, _pos()),
    Case(math.log, _pos(), 1.5 + _pos(), name="math.log(x, base)"),
    Case(math.log, _pos(), kwargs={}, name="math.log(x)"),
    Case(math.hypot, 3.0, -4.0),
    Case(math.hypot, randn(), randn(), randn(), name="math.hypot(3 args)"),
    Case(math.hypot, randn(), name="math.hypot(1 arg)"),
    Case(math.hypot, 2.0, 1, name="math.hypot(float, int)"),
    Case(math.fsum, [randn() for _ in range(5)]),
    Case(math.fsum, (randn(), 2, randn()), name="math.fsum(tuple with int)"),
    Case(math.fsum, randn(4), name="math.fsum(array)"),
    Case(math.fsum, [], name="math.fsum(empty)"),
    Case(math.prod, [randn() for _ in range(4)]),
    Case(math.prod, [randn(), 0.0, randn()], name="math.prod(with a zero)"),
    Case(math.prod, (randn(), randn()), kwargs={"start": 2.5}, name="math.prod(start keyword)"),
    Case(math.prod, [randn(), randn(), 3], name="math.prod(with an int)"),
    Case(math.prod, randn(3), name="math.prod(array)"),
    Case(math.dist, [randn() for _ in range(3)], (randn(), randn(), randn())),
    Case(math.dist, randn(4), randn(4), name="math.dist(arrays)"),
    # cmath: holomorphic, with complex and real arguments
    *(Case(f, randc()) for f in (cmath.exp, cmath.log, cmath.log10, cmath.sqrt, cmath.sin, cmath.cos,
                                cmath.tan, cmath.asin, cmath.acos, cmath.atan, cmath.sinh, cmath.cosh,
                                cmath.tanh, cmath.asinh, cmath.acosh, cmath.atanh)),
    Case(cmath.exp, randn(), name="cmath.exp(real)"),
    Case(cmath.sqrt, -2.0, name="cmath.sqrt(negative real)"),
    Case(cmath.log, randc(), 2.0 + randc(), name="cmath.log(z, base)"),
    Case(cmath.phase, randc()),
    Case(complex.conjugate, randc()),
    Case(float.conjugate, randn()),
    Case(cmath.phase, -1.0 + 0.5j, name="cmath.phase(second quadrant)"),
    Case(cmath.phase, _pos(), name="cmath.phase(real)"),
    Case(cmath.polar, randc()),
    Case(cmath.rect, _pos(), randn()),
]
if hasattr(math, "exp2"):
    CASES.append(Case(math.exp2, randn()))
if hasattr(math, "cbrt"):
    CASES += [Case(math.cbrt, randn()), Case(math.cbrt, -_pos(), name="math.cbrt(negative)")]
if hasattr(math, "sumprod"):
    CASES += [Case(math.sumprod, [randn() for _ in range(3)], (randn(), randn(), randn())),
              Case(math.sumprod, randn(4), [randn() for _ in range(4)], name="math.sumprod(array, list)")]
