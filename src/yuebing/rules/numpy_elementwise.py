"""NumPy elementwise functions: every differentiable ufunc, plus ``np.sinc``, ``np.clip``,
``np.where``, ``np.nan_to_num``, ``np.real``/``np.imag``/``np.angle``, ``np.conj`` and the ndarray
methods ``conj``, ``conjugate`` and ``clip``.

Most entries are ``elementwise(f, *partials)`` one-liners, ``partial(*inputs, output)``; the
declarative maker handles broadcasting, Python floats, ``out=``, ``dtype=`` and (holomorphic)
complex inputs. Functions that are not holomorphic (``conj``, ``abs`` and ``angle`` of complex
numbers, ``real``, ``imag``) or not ufuncs with more structure (``clip``, ``where``,
``nan_to_num``) have full rules below.

Complex convention (docs/writing-rules.md): the cotangent of ``z`` is ``x̄ + i ȳ`` under the real
inner product ``Re(conj(a) b)``. A real-valued ``f(z)`` with ``df = Re(c dz)`` is written with the
complex "partial" ``c``: the maker multiplies the cotangent by ``conj(c)`` and forward mode takes
the real part of ``c dz``. So ``|z|`` has ``c = conj(z)/|z|`` and ``angle(z)`` has
``c = -i conj(z)/|z|^2``.

Conventions at non-smooth points (docs/conventions.md):
* ``abs'(0) = 0`` (``np.abs``, ``np.absolute``, ``np.fabs``, and ``|z|`` of complex 0); likewise
  ``copysign(a, b)`` has derivative 0 in ``a`` at ``a = 0``;
* ``sqrt'(0) = inf`` and ``cbrt'(0) = inf`` (what NumPy computes);
* ``maximum``/``minimum``/``fmax``/``fmin``: ties split the cotangent evenly (0.5 / 0.5); a NaN
  result sends nothing to either argument; ``fmax``/``fmin`` send it to the non-NaN argument;
* ``power(a, b)``: d/da is 0 where ``b == 0``; d/db is 0 where ``a == 0`` (JAX's convention) and
  NaN for a negative real base (the real power is not differentiable in the exponent there); a
  constant exponent, or one whose tangent/cotangent is exactly 0, contributes nothing (the
  strong-zero rule of ``declare.strong_product``), so ``np.power(x, 3.0)`` is right at ``x < 0``;
* ``hypot``, ``arctan2`` and ``angle`` have derivative 0 at the origin (like ``norm`` at 0);
* ``clip`` is ``minimum(maximum(a, a_min), a_max)`` (as NumPy computes it, so ``a_max`` wins
  when ``a_min > a_max``) and follows the same tie rule: the cotangent goes to ``a`` strictly
  inside the bounds, to the active bound outside them, and splits 0.5 / 0.5 where ``a`` equals a
  bound (what central finite differences see);
* ``heaviside(x1, x2)``: zero in ``x1``; 1 in ``x2`` where ``x1 == 0`` (it returns ``x2`` there);
* ``nan_to_num``: derivative 1 where the input is finite (per real/imaginary part), and the
  replacement values ``nan=``, ``posinf=``, ``neginf=`` receive the cotangent of the entries they
  replaced; ``sinc'(0) = 0``; ``remainder``/``fmod`` are differentiated piecewise (1, -floor(a/b)
  and 1, -trunc(a/b)).

``np.sign``, ``floor``, ``ceil``, comparisons and the other piecewise constants live in
``nondifferentiable.py``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, zero_tangent
from ._ufunc_calls import Params, dense_tangent, run_into_out, write_forward_out
from .cases import Case, randc, randn, randpos, randu
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .declare import _check_where, elementwise, make_elementwise_rules
from .second_order import linear, with_vjp
from .util import accumulate, fit_tangent, out_cotangent, output, tangent

_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))
_NOVALUE = np._NoValue


# --------------------------------------------------------------------------------------------
# Partials that need care at special points
# --------------------------------------------------------------------------------------------


def _safe(x: Any, bad: Any) -> Any:
    """``x`` with the entries where ``bad`` holds replaced by 1 (to divide or log safely)."""
    return np.where(bad, 1, x)


def _abs_partial(x: Any, y: Any) -> Any:
    """``sign(x)`` for reals; ``c = conj(z)/|z|`` for complex (``d|z| = Re(c dz)``); 0 at 0."""
    if not np.iscomplexobj(x):
        return np.sign(x)
    zero = y == 0
    return np.where(zero, 0, np.conj(x) / _safe(y, zero))


def _angle_partial(z: Any, y: Any) -> Any:
    """``c = -i conj(z)/|z|^2`` (``d angle(z) = Re(c dz)``); 0 at the origin and for reals."""
    if not np.iscomplexobj(z):
        return np.zeros(np.shape(z))
    r2 = (z * np.conj(z)).real
    zero = r2 == 0
    return np.where(zero, 0, -1j * np.conj(z) / _safe(r2, zero))


def _power_base(a: Any, b: Any, y: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0, b * np.power(a, b - 1))


def _power_exponent(a: Any, b: Any, y: Any) -> Any:
    zero = a == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(zero, 0, y * np.log(_safe(a, zero)))


def _tie_split(a: Any, b: Any, y: Any) -> Any:
    """Partial of maximum/minimum/fmax/fmin in ``a``: 1 if ``a`` was chosen, 0.5 on ties."""
    return np.where(a == b, 0.5, y == a)


def _tie_split_b(a: Any, b: Any, y: Any) -> Any:
    return np.where(a == b, 0.5, y == b)


def _over_norm(num: Any, den: Any) -> Any:
    """``num / den`` with 0 where ``den == 0`` (hypot and arctan2 at the origin)."""
    zero = den == 0
    return np.where(zero, 0, num / _safe(den, zero))


def _sinc_partial(x: Any, y: Any) -> Any:
    zero = x == 0
    # at 0 the value is 0; written as -(pi^2/3) x so forward mode of this partial gives sinc''(0)
    return np.where(zero, (-np.pi ** 2 / 3.0) * x, (np.cos(np.pi * x) - y) / _safe(x, zero))


def _sqrt_partial(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore"):
        return 0.5 / y


def _cbrt_partial(x: Any, y: Any) -> Any:
    with np.errstate(divide="ignore"):
        return 1.0 / (3.0 * y * y)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

# arithmetic
elementwise(np.add, lambda a, b, y: 1.0, lambda a, b, y: 1.0)
elementwise(np.subtract, lambda a, b, y: 1.0, lambda a, b, y: -1.0)
elementwise(np.multiply, lambda a, b, y: b, lambda a, b, y: a)
elementwise(np.divide, lambda a, b, y: 1.0 / b, lambda a, b, y: -y / b)  # np.true_divide is np.divide
elementwise(np.negative, lambda x, y: -1.0)
elementwise(np.positive, lambda x, y: 1.0)
elementwise(np.power, _power_base, _power_exponent)
elementwise(np.float_power, _power_base, _power_exponent)
elementwise(np.remainder, lambda a, b, y: 1.0, lambda a, b, y: -np.floor(a / b))  # np.mod is np.remainder
elementwise(np.fmod, lambda a, b, y: 1.0, lambda a, b, y: -np.trunc(a / b))
elementwise(np.reciprocal, lambda x, y: -y * y)
elementwise(np.square, lambda x, y: 2.0 * x)
elementwise(np.sqrt, _sqrt_partial)
elementwise(np.cbrt, _cbrt_partial)
elementwise(np.absolute, _abs_partial)  # np.abs is np.absolute
elementwise(np.fabs, lambda x, y: np.sign(x))

# exponentials and logarithms
elementwise(np.exp, lambda x, y: y)
elementwise(np.exp2, lambda x, y: y * _LN2)
elementwise(np.expm1, lambda x, y: y + 1.0)
elementwise(np.log, lambda x, y: 1.0 / x)
elementwise(np.log2, lambda x, y: 1.0 / (x * _LN2))
elementwise(np.log10, lambda x, y: 1.0 / (x * _LN10))
elementwise(np.log1p, lambda x, y: 1.0 / (1.0 + x))
elementwise(np.logaddexp, lambda a, b, y: np.exp(a - y), lambda a, b, y: np.exp(b - y))
elementwise(np.logaddexp2, lambda a, b, y: np.exp2(a - y), lambda a, b, y: np.exp2(b - y))

# trigonometric and hyperbolic
elementwise(np.sin, lambda x, y: np.cos(x))
elementwise(np.cos, lambda x, y: -np.sin(x))
elementwise(np.tan, lambda x, y: 1.0 + y * y)
elementwise(np.arcsin, lambda x, y: 1.0 / np.sqrt(1.0 - x * x))
elementwise(np.arccos, lambda x, y: -1.0 / np.sqrt(1.0 - x * x))
elementwise(np.arctan, lambda x, y: 1.0 / (1.0 + x * x))
elementwise(np.arctan2, lambda a, b, y: _over_norm(b, a * a + b * b), lambda a, b, y: _over_norm(-a, a * a + b * b))
elementwise(np.hypot, lambda a, b, y: _over_norm(a, y), lambda a, b, y: _over_norm(b, y))
elementwise(np.sinh, lambda x, y: np.cosh(x))
elementwise(np.cosh, lambda x, y: np.sinh(x))
elementwise(np.tanh, lambda x, y: 1.0 - y * y)
elementwise(np.arcsinh, lambda x, y: 1.0 / np.sqrt(x * x + 1.0))
elementwise(np.arccosh, lambda x, y: 1.0 / (np.sqrt(x - 1.0) * np.sqrt(x + 1.0)))  # principal branch for complex
elementwise(np.arctanh, lambda x, y: 1.0 / (1.0 - x * x))
for _f in (np.deg2rad, np.radians):
    elementwise(_f, lambda x, y: np.pi / 180.0)
for _f in (np.rad2deg, np.degrees):
    elementwise(_f, lambda x, y: 180.0 / np.pi)

# others
for _f in (np.maximum, np.minimum, np.fmax, np.fmin):
    elementwise(_f, _tie_split, _tie_split_b)
elementwise(np.copysign, lambda a, b, y: np.sign(a) * np.copysign(1.0, b), None)
elementwise(np.ldexp, lambda a, i, y: np.ldexp(1.0, i), None)
elementwise(np.heaviside, None, lambda x1, x2, y: x1 == 0)
elementwise(np.sinc, _sinc_partial)  # not a ufunc: no out=


# --------------------------------------------------------------------------------------------
# conj / conjugate: not holomorphic (d conj(z) = conj(dz); the adjoint is conj too)
# --------------------------------------------------------------------------------------------

_UNARY_UFUNC = Params(lambda x, out=None, where=True, dtype=None: None)


@rrule_for(np.conjugate)  # np.conj is np.conjugate
@_UNARY_UFUNC
def _conj_rrule(*args: Any) -> tuple:
    x, out, where, dtype = _UNARY_UFUNC.fill(args)
    _check_where("numpy.conjugate", where)
    kw = {} if primal(dtype) is None else {"dtype": primal(dtype)}
    result, cotangent = run_into_out(lambda o: np.conjugate(primal(x), out=o, **kw), out)

    def pullback(dy: Any) -> tuple:
        g = cotangent(dy)
        return (NoRData, accumulate(x, np.conj(g))) + (NoRData,) * (len(args) - 1)

    return result, pullback


@frule_for(np.conjugate)
@_UNARY_UFUNC
def _conj_frule(*args: Any) -> Dual:
    x, out, where, dtype = _UNARY_UFUNC.fill(args)
    _check_where("numpy.conjugate", where)
    kw = {} if primal(dtype) is None else {"dtype": primal(dtype)}
    y = np.conjugate(primal(x), **kw)
    return write_forward_out(y, np.conj(dense_tangent(x)), out)


@rrule_for((np.ndarray, "conj"), (np.ndarray, "conjugate"))
def _ndarray_conj_rrule(x: CoDual) -> tuple:
    y = x.primal.conj()
    if y is x.primal:  # real arrays return themselves
        return CoDual(y, x.fdata), lambda dy: (NoRData, NoRData)
    result = output(y)
    return result, lambda dy: (NoRData, accumulate(x, np.conj(out_cotangent(result, dy))))


@frule_for((np.ndarray, "conj"), (np.ndarray, "conjugate"))
def _ndarray_conj_frule(x: Dual) -> Dual:
    y = x.primal.conj()
    if y is x.primal:
        return Dual(y, x.tangent)
    return Dual(y, fit_tangent(np.conj(dense_tangent(x)), y))


# --------------------------------------------------------------------------------------------
# real / imag: views of complex arrays (tangent: the same view of the input's tangent)
# --------------------------------------------------------------------------------------------


def _refuse_sequence(name: str, x: Any) -> None:
    if not isinstance(x, (np.ndarray, float, complex, int, np.number)):
        raise RuleArgumentError(f"numpy.{name}: yuebing differentiates it for arrays and numbers; "
                                f"convert {type(x).__qualname__} with np.asarray first")


@rrule_for(np.real)
def _real_rrule(val: CoDual) -> tuple:
    x = val.primal
    _refuse_sequence("real", x)
    y = np.real(x)
    if y is x and isinstance(x, np.ndarray):  # a real array is returned as is (a float too: its rdata goes back)
        return CoDual(y, val.fdata), lambda dy: (NoRData, NoRData)
    if isinstance(x, np.ndarray):  # complex: y is a view of x
        return CoDual(y, val.fdata.real), lambda dy: (NoRData, NoRData)
    return output(y), lambda dy: (NoRData, accumulate(val, out_cotangent(output(y), dy)))


@frule_for(np.real)
def _real_frule(val: Dual) -> Dual:
    x = val.primal
    _refuse_sequence("real", x)
    y = np.real(x)
    if y is x:
        return Dual(y, val.tangent)
    if isinstance(x, np.ndarray):
        return Dual(y, val.tangent.real)
    return Dual(y, fit_tangent(np.real(dense_tangent(val)), y))


@rrule_for(np.imag)
def _imag_rrule(val: CoDual) -> tuple:
    x = val.primal
    _refuse_sequence("imag", x)
    y = np.imag(x)
    if not np.iscomplexobj(x):  # a fresh (read-only) zero array or 0.0: zero derivative
        zero = NoRData if isinstance(x, np.ndarray) else type(y)(0)  # a number's: an explicit zero
        return output(y), lambda dy: (NoRData, zero)
    if isinstance(x, np.ndarray):  # y is a view of x
        return CoDual(y, val.fdata.imag), lambda dy: (NoRData, NoRData)
    # d Im(z) = Re(-i dz): the cotangent of z is i * ybar
    return output(y), lambda dy: (NoRData, accumulate(val, 1j * out_cotangent(output(y), dy)))


@frule_for(np.imag)
def _imag_frule(val: Dual) -> Dual:
    x = val.primal
    _refuse_sequence("imag", x)
    y = np.imag(x)
    if isinstance(x, np.ndarray) and np.iscomplexobj(x):
        return Dual(y, val.tangent.imag)
    return Dual(y, fit_tangent(np.imag(dense_tangent(val)), y))


# --------------------------------------------------------------------------------------------
# angle(z, deg=False): real-valued, not holomorphic
# --------------------------------------------------------------------------------------------


def _angle_degrees(z: Any) -> Any:
    return np.angle(z, deg=True)


_ANGLE = {
    False: make_elementwise_rules(np.angle, _angle_partial),
    True: make_elementwise_rules(_angle_degrees, lambda z, y: _angle_partial(z, y) * (180.0 / np.pi)),
}
_ANGLE_PARAMS = Params(lambda z, deg=False: None)


@rrule_for(np.angle)
@_ANGLE_PARAMS
def _angle_rrule(*args: Any) -> tuple:
    z, deg = _ANGLE_PARAMS.fill(args)
    return _ANGLE[bool(primal(deg))][0](*args)


@frule_for(np.angle)
@_ANGLE_PARAMS
def _angle_frule(*args: Any) -> Dual:
    z, deg = _ANGLE_PARAMS.fill(args)
    return _ANGLE[bool(primal(deg))][1](*args)


# --------------------------------------------------------------------------------------------
# clip: np.clip(a, a_min, a_max, out=None, *, min=, max=) and ndarray.clip(min, max, out)
# --------------------------------------------------------------------------------------------


def _tie_weight(smaller: Any, larger: Any) -> Any:
    """1 where ``smaller < larger``, 0.5 on ties, else 0 (also 0 where either is NaN)."""
    return np.where(smaller < larger, 1.0, np.where(smaller == larger, 0.5, 0.0))


def _clip_masks(a: Any, lo: Any, hi: Any) -> tuple:
    """Weights of ``a``, ``lo`` and ``hi`` in ``clip = minimum(maximum(a, lo), hi)``.

    Ties split evenly, as for maximum/minimum; a NaN ``a`` keeps its (NaN) cotangent.
    """
    to_lo = _tie_weight(a, lo) if lo is not None else 0.0
    low_clipped = np.maximum(a, lo) if lo is not None else a
    to_hi = _tie_weight(hi, low_clipped) if hi is not None else 0.0
    kept = 1.0 - to_hi
    return kept * (1.0 - to_lo), kept * to_lo, to_hi


def _clip_cotangents(g: Any, masks: tuple, lo: Any, hi: Any) -> tuple:
    """The cotangents of ``a``, ``lo`` and ``hi`` (None for a bound not given) from the weights
    ``_clip_masks`` gives: the reverse rules and the second-order cotangent maps both use them."""
    m_a, m_lo, m_hi = masks
    return g * m_a, None if lo is None else g * m_lo, None if hi is None else g * m_hi


def _clip_core_rrule(name: str, a: CoDual, lo: Any, hi: Any, out: Any, n_args: int, positions: tuple) -> tuple:
    """``positions``: where ``a``, ``lo``, ``hi`` sit among the rule's received arguments."""
    x, lo_p, hi_p = primal(a), primal(lo), primal(hi)
    if np.iscomplexobj(x):
        raise RuleArgumentError(f"{name}: yuebing does not differentiate clip of complex values")
    masks = _clip_masks(x, lo_p, hi_p)  # before the call: out= may overwrite x or a bound
    result, cotangent = run_into_out(lambda o: np.clip(x, lo_p, hi_p, out=o), out)

    def pullback(dy: Any) -> tuple:
        rdatas = [NoRData] * (n_args + 1)
        for arg, c, pos in zip((a, lo, hi), _clip_cotangents(cotangent(dy), masks, lo_p, hi_p), positions):
            if c is not None and pos is not None and pos < n_args:
                rdatas[pos + 1] = accumulate(arg, c)
        return tuple(rdatas)

    return result, pullback


def _clip_core_frule(a: Any, lo: Any, hi: Any, out: Any) -> Dual:
    x, lo_p, hi_p = primal(a), primal(lo), primal(hi)
    masks = _clip_masks(x, lo_p, hi_p)
    dy = sum(w * dense_tangent(v) for v, w in zip((a, lo, hi), masks))
    return write_forward_out(np.clip(x, lo_p, hi_p), dy, out)


_CLIP = Params(lambda a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, min=_NOVALUE, max=_NOVALUE: None)


def _clip_bounds(args: tuple) -> tuple:
    """``(a, lo, hi, out, lo_position, hi_position)`` of a ``np.clip`` call."""
    a, a_min, a_max, out, min_, max_ = _CLIP.fill(args)
    # primal(): second order passes the defaults it fills in wrapped like the other arguments
    lo, lo_pos = (a_min, 1) if primal(a_min) is not _NOVALUE else (min_, 4)
    hi, hi_pos = (a_max, 2) if primal(a_max) is not _NOVALUE else (max_, 5)
    lo = None if primal(lo) is _NOVALUE else lo
    hi = None if primal(hi) is _NOVALUE else hi
    return a, lo, hi, None if primal(out) is None else out, lo_pos, hi_pos


@rrule_for(np.clip)
@_CLIP
def _clip_rrule(*args: Any) -> tuple:
    a, lo, hi, out, lo_pos, hi_pos = _clip_bounds(args)
    return _clip_core_rrule("numpy.clip", a, lo, hi, out, len(args), (0, lo_pos, hi_pos))


@frule_for(np.clip)
@_CLIP
def _clip_frule(*args: Any) -> Dual:
    a, lo, hi, out, _, _ = _clip_bounds(args)
    return _clip_core_frule(a, lo, hi, out)


_NDARRAY_CLIP = Params(lambda self, min=None, max=None, out=None: None)


@rrule_for((np.ndarray, "clip"))
@_NDARRAY_CLIP
def _ndarray_clip_rrule(*args: Any) -> tuple:
    a, lo, hi, out = _NDARRAY_CLIP.fill(args)
    return _clip_core_rrule("ndarray.clip", a, lo, hi, out, len(args), (0, 1, 2))


@frule_for((np.ndarray, "clip"))
@_NDARRAY_CLIP
def _ndarray_clip_frule(*args: Any) -> Dual:
    a, lo, hi, out = _NDARRAY_CLIP.fill(args)
    return _clip_core_frule(a, lo, hi, out)


# --------------------------------------------------------------------------------------------
# where(condition, x, y)
# --------------------------------------------------------------------------------------------

_WHERE = Params(lambda condition, x=_NOVALUE, y=_NOVALUE: None)


@rrule_for(np.where)
@_WHERE
def _where_rrule(*args: Any) -> tuple:
    cond, x, y = _WHERE.fill(args)
    if x is _NOVALUE and y is _NOVALUE:  # np.where(cond): indices, no derivative
        return output(np.where(primal(cond))), lambda dy: (NoRData,) * (len(args) + 1)
    if x is _NOVALUE or y is _NOVALUE:
        raise RuleArgumentError("numpy.where takes either one argument or three")
    c = primal(cond)
    result = output(np.where(c, primal(x), primal(y)))

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        return NoRData, NoRData, accumulate(x, np.where(c, g, 0)), accumulate(y, np.where(c, 0, g))

    return result, pullback


@frule_for(np.where)
@_WHERE
def _where_frule(*args: Any) -> Dual:
    cond, x, y = _WHERE.fill(args)
    if x is _NOVALUE and y is _NOVALUE:
        y = np.where(primal(cond))
        return Dual(y, zero_tangent(y))
    if x is _NOVALUE or y is _NOVALUE:
        raise RuleArgumentError("numpy.where takes either one argument or three")
    c = primal(cond)
    out = np.where(c, primal(x), primal(y))
    return Dual(out, fit_tangent(np.where(c, dense_tangent(x), dense_tangent(y)), out))


# --------------------------------------------------------------------------------------------
# nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None)
# --------------------------------------------------------------------------------------------

_NAN_TO_NUM = Params(lambda x, copy=True, nan=0.0, posinf=None, neginf=None: None)


def _per_part(x: Any, g: Any, test: Callable[[Any], Any]) -> Any:
    """``g`` kept where ``test`` holds, separately for the real and imaginary parts of ``x``."""
    if np.iscomplexobj(x):
        g = np.asarray(g, dtype=np.result_type(x, complex))
        return np.where(test(np.real(x)), g.real, 0) + 1j * np.where(test(np.imag(x)), g.imag, 0)
    return np.where(test(x), g, 0)


def _sum_per_part(x: Any, g: Any, test: Callable[[Any], Any]) -> Any:
    """The real cotangent of a replacement value: ``g``'s parts summed where ``test`` holds."""
    if np.iscomplexobj(x):
        g = np.asarray(g, dtype=np.result_type(x, complex))
        return np.sum(np.where(test(np.real(x)), g.real, 0)) + np.sum(np.where(test(np.imag(x)), g.imag, 0))
    return np.sum(np.where(test(x), g, 0))


# np.isposinf/np.isneginf as comparisons: the forward transform follows these (second and third
# order differentiate _nan_to_num_cotangents), and has no rule for np.isposinf


def _is_posinf(x: Any) -> Any:
    return x == np.inf


def _is_neginf(x: Any) -> Any:
    return x == -np.inf


def _nan_to_num_cotangents(g: Any, x: Any, posinf: Any, neginf: Any) -> tuple:
    """The cotangents of ``x``, ``nan``, ``posinf`` and ``neginf`` (None for a bound not given):
    the reverse rule and the second-order cotangent map both use them."""
    g_pos = None if posinf is None else _sum_per_part(x, g, _is_posinf)
    g_neg = None if neginf is None else _sum_per_part(x, g, _is_neginf)
    return _per_part(x, g, np.isfinite), _sum_per_part(x, g, np.isnan), g_pos, g_neg


_REPLACED = (np.isnan, _is_posinf, _is_neginf)


@rrule_for(np.nan_to_num)
@_NAN_TO_NUM
def _nan_to_num_rrule(*args: Any) -> tuple:
    x, copy, nan, posinf, neginf = _NAN_TO_NUM.fill(args)
    xp = primal(x)
    values = [primal(v) for v in (nan, posinf, neginf)]
    in_place = not primal(copy) and isinstance(xp, np.ndarray) and xp.dtype.kind in "fc"
    if in_place:
        before = xp.copy()  # the overwritten entries are restored from this
        np.nan_to_num(xp, copy=False, nan=values[0], posinf=values[1], neginf=values[2])
        result = x
    else:
        before = xp
        result = output(np.nan_to_num(xp, copy=True, nan=values[0], posinf=values[1], neginf=values[2]))

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        if in_place:
            g = g.copy()
            xp[...] = before
            x.fdata[...] = 0
        g_x, g_nan, g_pos, g_neg = _nan_to_num_cotangents(g, before, values[1], values[2])
        rdatas = [NoRData, accumulate(x, g_x), NoRData, accumulate(nan, g_nan)]
        rdatas += [NoRData if c is None else accumulate(v, c) for v, c in ((posinf, g_pos), (neginf, g_neg))]
        return tuple(rdatas[:len(args) + 1])

    return result, pullback


@frule_for(np.nan_to_num)
@_NAN_TO_NUM
def _nan_to_num_frule(*args: Any) -> Dual:
    x, copy, nan, posinf, neginf = _NAN_TO_NUM.fill(args)
    xp = primal(x)
    values = [primal(v) for v in (nan, posinf, neginf)]
    dy = _per_part(xp, dense_tangent(x), np.isfinite)
    for v, test in zip((nan, posinf, neginf), _REPLACED):
        dy = dy + _per_part(xp, np.ones(np.shape(xp)), test) * dense_tangent(v)
    if not primal(copy) and isinstance(xp, np.ndarray) and xp.dtype.kind in "fc":
        np.nan_to_num(xp, copy=False, nan=values[0], posinf=values[1], neginf=values[2])
        x.tangent[...] = fit_tangent(dy, xp)
        return Dual(xp, x.tangent)
    y = np.nan_to_num(xp, copy=True, nan=values[0], posinf=values[1], neginf=values[2])
    return Dual(y, fit_tangent(dy, y))


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
# conj, imag (and real, declared centrally) are real-linear. clip and nan_to_num: cotangent maps
# that bind the arguments and call the formulas the reverse rules use (_clip_masks and
# _clip_cotangents, _nan_to_num_cotangents: ties split, replacements summed per real/imaginary
# part); out= and nan_to_num(copy=False) write into an argument, which these vjps cannot follow:
# they refuse.


def _refuse_in_place(name: str, writes: bool) -> None:
    """Raise ``SecondOrderError`` when the call wrote into one of its arguments."""
    if writes:
        from yuebing.rules.core import SecondOrderError  # absolute: this runs transformed

        raise SecondOrderError(f"yb.hvp/yb.hessian: {name} writing into an argument (out=, copy=False) is "
                               "not supported in second order; assign the result instead")


def _clip_vjp(g, y, a, a_min=_NOVALUE, a_max=_NOVALUE, out=None, min=_NOVALUE, max=_NOVALUE):
    _refuse_in_place("numpy.clip", out is not None)
    lo = min if a_min is _NOVALUE else a_min
    hi = max if a_max is _NOVALUE else a_max
    lo = None if lo is _NOVALUE else lo
    hi = None if hi is _NOVALUE else hi
    ga, glo, ghi = _clip_cotangents(g, _clip_masks(a, lo, hi), lo, hi)
    if a_min is _NOVALUE or a_max is _NOVALUE:  # a bound given as min=/max= (bound after out)
        return (ga, None if a_min is _NOVALUE else glo, None if a_max is _NOVALUE else ghi, None,
                glo if a_min is _NOVALUE else None, ghi if a_max is _NOVALUE else None)
    return ga, glo, ghi


def _ndarray_clip_vjp(g, y, a, min=None, max=None, out=None):
    _refuse_in_place("ndarray.clip", out is not None)
    ga, glo, ghi = _clip_cotangents(g, _clip_masks(a, min, max), min, max)
    return ga, glo, ghi, None


def _nan_to_num_vjp(g, y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    _refuse_in_place("numpy.nan_to_num", not copy and isinstance(x, np.ndarray) and x.dtype.kind in "fc")
    g_x, g_nan, g_pos, g_neg = _nan_to_num_cotangents(g, x, posinf, neginf)
    return g_x, None, g_nan, g_pos, g_neg


linear(np.conjugate, np.imag, np.ndarray.conj, np.ndarray.conjugate, (np.ndarray, "conj"), (np.ndarray, "conjugate"))
with_vjp(np.clip, _clip_vjp)
with_vjp(np.ndarray.clip, _ndarray_clip_vjp)
with_vjp(np.nan_to_num, _nan_to_num_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _with_nonfinite(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x.flat[0], x.flat[1], x.flat[2] = np.nan, np.inf, -np.inf
    return x


def _away_from_poles(*shape: int, dtype=np.float64) -> np.ndarray:
    """Inputs for tan: randn may land next to pi/2, where differences do not converge."""
    return randu(*shape, low=-1.2, high=1.2, dtype=dtype)


_UNARY_REAL = [
    (np.negative, randn), (np.positive, randn), (np.reciprocal, randpos), (np.square, randn),
    (np.sqrt, randpos), (np.cbrt, randpos), (np.absolute, randn), (np.fabs, randn),
    (np.exp, randn), (np.exp2, randn), (np.expm1, randn), (np.log, randpos), (np.log2, randpos),
    (np.log10, randpos), (np.log1p, randpos), (np.sin, randn), (np.cos, randn), (np.tan, _away_from_poles),
    (np.sinh, randn), (np.cosh, randn), (np.tanh, randn), (np.arcsinh, randn),
    (np.deg2rad, randn), (np.rad2deg, randn), (np.degrees, randn), (np.radians, randn),
    (np.sinc, randn), (np.angle, randn),
]
_BINARY_REAL = [
    (np.add, randn, randn), (np.subtract, randn, randn), (np.multiply, randn, randn),
    (np.divide, randn, randpos), (np.power, randpos, randn), (np.float_power, randpos, randn),
    (np.remainder, randpos, randpos), (np.fmod, randpos, randpos), (np.logaddexp, randn, randn),
    (np.logaddexp2, randn, randn), (np.arctan2, randn, randn), (np.hypot, randn, randn),
    (np.maximum, randn, randn), (np.minimum, randn, randn), (np.fmax, randn, randn),
    (np.fmin, randn, randn), (np.copysign, randn, randn),
]
_UNARY_COMPLEX = [
    np.negative, np.reciprocal, np.square, np.sqrt, np.absolute, np.exp, np.expm1, np.log,
    np.log1p, np.log2, np.log10, np.exp2, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
    np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.sinc, np.angle,
    np.conjugate, np.real, np.imag,
]

CASES = (
    # every real unary function over shapes (), (3,), (2, 3), (0,), float32 and a Python float
    [Case(f, make(*shape)) for f, make in _UNARY_REAL for shape in ((3,), (2, 3), (0,))]
    + [Case(f, make()) for f, make in _UNARY_REAL]
    + [Case(f, make(4, dtype=np.float32)) for f, make in _UNARY_REAL]
    + [Case(f, np.asarray(make(3))[0, ...].copy()) for f, make in _UNARY_REAL[:6]]  # 0-d arrays
    + [
        Case(np.arcsin, randu(4, low=-0.9, high=0.9)), Case(np.arccos, randu(2, 3, low=-0.9, high=0.9)),
        Case(np.arctan, randn(4)), Case(np.arccosh, randu(4, low=1.5, high=3.0)),
        Case(np.arctanh, randu(4, low=-0.9, high=0.9)), Case(np.arcsin, 0.3, name="arcsin(float)"),
    ]
    # every binary function: same shapes, broadcasting (3, 1) with (4,), floats, float32, mixed
    + [Case(f, ma(*s), mb(*s)) for f, ma, mb in _BINARY_REAL for s in ((3,), (2, 3), (0,))]
    + [Case(f, ma(3, 1), mb(4)) for f, ma, mb in _BINARY_REAL]
    + [Case(f, ma(), mb()) for f, ma, mb in _BINARY_REAL]
    + [Case(f, ma(4, dtype=np.float32), mb(4, dtype=np.float32)) for f, ma, mb in _BINARY_REAL]
    + [Case(f, ma(2, 3), mb()) for f, ma, mb in _BINARY_REAL]  # array with a Python float
    + [
        Case(np.power, randn(4), 3, name="power(negative base, int exponent)"),
        Case(np.power, randn(4), 2, name="power(x, int)"),
        Case(np.power, randpos(2, 3), randn(3)),
        Case(np.ldexp, randn(2, 3), np.array([1, -2, 3])), Case(np.ldexp, randn(), 3),
        Case(np.ldexp, randn(3, dtype=np.float32), 2),
        Case(np.heaviside, randn(4), randn(4)),
        # x1 as an int array: not differentiated, so x2's derivative (1 where x1 == 0) is checked
        Case(np.heaviside, np.array([-1, 0, 2, 0]), randn(4), name="heaviside(x1 with zeros, x2)"),
        Case(np.sinc, np.array([0.0, 0.5, -1.5]), name="sinc at 0"),
        Case(np.multiply, randn(2, 3), randn(3), kwargs={"dtype": np.float64}),
        Case(np.add, randn(3, dtype=np.float32), randn(3), name="add(float32, float64)"),
        Case(np.float_power, randpos(3, dtype=np.float32), randn(3, dtype=np.float32)),
    ]
    # complex (holomorphic rules, and the non-holomorphic abs, angle, conj, real, imag)
    + [Case(f, randc(3)) for f in _UNARY_COMPLEX]
    + [Case(f, randc()) for f in _UNARY_COMPLEX]
    + [Case(f, randc(2, 2, dtype=np.complex64)) for f in (np.exp, np.absolute, np.conjugate, np.real)]
    + [Case(f, randc(2, 3), randc(3)) for f in (np.add, np.subtract, np.multiply, np.divide, np.power)]
    + [
        Case(np.multiply, randc(3), randn(3), name="multiply(complex, real)"),
        Case(np.angle, randc(4), kwargs={"deg": True}), Case(np.angle, randc(4), True, name="angle(z, True)"),
        Case(np.real, randn(3), name="real(real array): the same array"),
        Case(np.real, 0.7, name="real(float): the same float, its cotangent returned"),
        Case(np.imag, randn(3), name="imag(real array): zeros"),
        Case(np.conjugate, randn(3)), Case(np.ndarray.conj, randn(3)), Case(np.ndarray.conj, randc(3)),
        Case(np.ndarray.conjugate, randc(2, 2)), Case(np.ndarray.conjugate, randn(2, 2)),
    ]
    # out=: a separate array, the input itself, a tuple, 0-d, via keyword (not differentiated)
    + [
        Case(np.sin, randn(3), np.zeros(3), name="sin(x, out)"),
        Case(np.exp, randn(2, 3), np.zeros((2, 3)), name="exp(x, out)"),
        Case(np.multiply, randn(3), randn(3), np.zeros(3), name="multiply(a, b, out)"),
        Case(np.add, randn(3, 1), randn(4), np.zeros((3, 4)), name="add(broadcast, out)"),
        Case(np.sqrt, randpos(3), np.zeros(3, dtype=np.float32), name="sqrt(x, out float32)"),
        Case(np.conjugate, randc(3), np.zeros(3, dtype=complex), name="conj(z, out)"),
    ]
    # clip (arrays, floats, None bounds, array bounds, min=/max=, out=, the ndarray method)
    + [
        Case(np.clip, randn(10), -0.5, 0.5), Case(np.clip, randn(2, 5), randn(5) - 1, randn(2, 1) + 1),
        Case(np.clip, randn(8), None, 0.3), Case(np.clip, randn(8), -0.3, None),
        Case(np.clip, 1.7, 0.0, 1.0, name="clip(float)"), Case(np.clip, randn(8, dtype=np.float32), -0.5, 0.5),
        Case(np.clip, randn(8), 0.5, -0.5, name="clip(a_min > a_max)"),
        Case(np.clip, randn(8), kwargs={"min": -0.5, "max": 0.5}),
        Case(np.clip, randn(6), -0.4, 0.4, np.zeros(6), name="clip(a, lo, hi, out)"),
        Case(np.clip, np.array([-1.0, 0.5, 2.0, 3.0]), np.array([-1.0, 0.0, 0.0, 1.0]), np.array([2.0, 2.0, 2.0, 1.0]),
             name="clip with a at its bounds (ties split)"),
        Case(np.ndarray.clip, randn(8), -0.5, 0.5), Case(np.ndarray.clip, randn(2, 4), None, randn(4)),
        Case(np.ndarray.clip, randn(6), kwargs={"max": 0.1}),
    ]
    # conventions at non-smooth points that central differences can see
    + [
        Case(np.absolute, np.array([0.0, 1.5, -2.0]), name="abs'(0) = 0"),
        Case(np.absolute, np.array([0j, 1 + 1j]), name="abs'(0j) = 0"),
        Case(np.maximum, np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.0, -1.0]), name="maximum ties split"),
        Case(np.fmin, np.array([1.0, 2.0]), np.array([1.0, 3.0]), name="fmin ties split"),
        Case(np.copysign, np.array([0.0, 1.0]), np.array([-1.0, 2.0]), name="copysign at a = 0"),
    ]
    # where
    + [
        Case(np.where, randn(5) > 0, randn(5), randn(5)),
        Case(np.where, randn(3, 1) > 0, randn(4), 2.0), Case(np.where, True, 1.5, -2.0, name="where(floats)"),
        Case(np.where, randn(4) > 0, randn(4, dtype=np.float32), randn(4)),
        Case(np.where, randn(3) > 0, randc(3), randc(3)), 
        Case(np.where, randn(5) > 0, name="where(cond)"),
    ]
    # nan_to_num. Non-finite inputs cannot go through check_rule: finite differences of the
    # arguments' post-call state give inf - inf = nan (see the module's report); they are checked
    # by _check_nan_to_num_nonfinite below instead.
    + [
        Case(np.nan_to_num, randn(5)), Case(np.nan_to_num, randn(2, 3), True, 1.5, 3.0, -3.0),
        Case(np.nan_to_num, randn(6), False, name="nan_to_num(copy=False)"),
        Case(np.nan_to_num, randc(4)), Case(np.nan_to_num, 0.7, name="nan_to_num(float)"),
    ]
)
# np.sin(x, out=x): out is the input itself (the same array twice; check_rule keeps the aliasing)
_x = randn(4)
CASES += [Case(np.sin, _x, _x, name="sin(x, out=x)"), Case(np.exp, _x, _x, name="exp(x, out=x)")]
_y = randn(2, 3)
CASES += [Case(np.multiply, _y, randn(3), _y, name="multiply(x, b, out=x)"),
          Case(np.clip, _y, -0.5, 0.5, _y, name="clip(x, lo, hi, out=x)")]
