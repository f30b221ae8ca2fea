"""Derivatives of ``scipy.integrate.quad_vec`` called inside differentiated code: ``I = ∫_a^b f(t, θ) dt``
of a vector (or scalar) integrand, differentiated as ``quad`` is (``api/quad.py``) with vectors:

* In ``θ`` (``args=`` and what the integrand captures), under the integral sign: reverse mode
  ``θ̄ = ∫ ∂(Ī·f)/∂θ dt``, forward mode ``İ = ∫ ∂f/∂θ θ̇ dt``, each one more ``quad_vec`` of
  yuebing's own derivative of ``f`` at the call's ``epsabs``/``epsrel``/``norm``/``limit``/``points``/
  ``quadrature``.
* In the limits: ``∂I/∂b = f(b)``, ``∂I/∂a = -f(a)``; an infinite limit does not move.

The error estimate is not differentiated (a cotangent on it is refused, its tangent is NaN).
Refused (``ValueError``): ``full_output=True`` (its ``info`` holds the subinterval values).
Second order (``yb.hvp``, ``yb.hessian``) is that of one ``quad`` per component
(``quad_vec_by_components``: the value agrees to the tolerance), whose second order is defined
(``api/quad.py``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..rules import _integrate_definitions as D
from ..rules import array_like
from ..rules.core import CoDual, Dual
from ..rules.second_order import defined_as, defined_by
from ..rules.util import out_cotangent, output
from ..tangents import NoRData, NoTangent
from .custom import _deliver
from .ode import _register_primitive
from .quad import _Integrand, _forward_run, _nan_tangent, _number_tangent, _refuse_other_fields

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed: no rules to register
    _integrate = None

_QUAD_VEC = "scipy.integrate.quad_vec"
_PASSED_ON = ("epsabs", "epsrel", "norm", "limit", "points", "quadrature")  # the derivative's quad_vec takes them


def _options(given: dict) -> dict:
    """The call's settings the derivative's ``quad_vec`` takes (``full_output=True`` refused)."""
    if given.get("full_output"):
        raise ValueError(f"{_QUAD_VEC}: yuebing does not differentiate full_output=True (its info holds the "
                         "subintervals' values); call quad_vec without it")
    return {k: given[k] for k in _PASSED_ON if given.get(k) is not None}


def _endpoint(integrand: _Integrand, limit: float) -> Any:
    """``f(limit)``: what moving a finite limit adds per unit; an infinite limit does not move."""
    return np.asarray(D.quad_integrand(limit, *integrand.params), dtype=float) if math.isfinite(limit) else 0.0


def _quad_vec_rrule(func: CoDual, a: CoDual, b: CoDual, args: CoDual, settings: CoDual) -> tuple:
    given = dict(settings.primal)
    options = _options(given)
    lower, upper = float(a.primal), float(b.primal)
    result = D.quad_vec_call(func.primal, a.primal, b.primal, args.primal, given)  # (its writes: api/callback_writes.py)
    out = output(result)

    def pullback(dy: Any) -> tuple:
        cot = out_cotangent(out, dy)
        _refuse_other_fields(cot, _QUAD_VEC)
        value_bar = 0.0 if cot[0] is NoTangent else np.asarray(cot[0], dtype=float)
        if not np.any(value_bar):  # strong zero: no second quadrature, no endpoint evaluation
            return NoRData, NoRData, 0.0, 0.0, NoRData, NoRData
        integrand = _Integrand(func.primal, args.primal)
        theta_bar = np.zeros(0)
        if integrand.size:
            theta_bar, _ = _integrate.quad_vec(lambda t: integrand.pull(t, value_bar), lower, upper, **options)
            theta_bar = np.asarray(theta_bar, dtype=float)
        func_bar, args_bar = integrand.cotangents(theta_bar)
        a_bar = -float(np.sum(value_bar * _endpoint(integrand, lower)))
        b_bar = float(np.sum(value_bar * _endpoint(integrand, upper)))
        return NoRData, _deliver(func, func_bar), a_bar, b_bar, _deliver(args, args_bar), NoRData

    return out, pullback


def _like(value: Any, tangent: Any) -> Any:
    """``tangent`` in the value's type: an array of its shape, or a float."""
    if isinstance(value, np.ndarray):
        return np.broadcast_to(np.asarray(tangent, dtype=value.dtype), value.shape).copy()
    return float(np.real(tangent))


def _quad_vec_frule(func: Dual, a: Dual, b: Dual, args: Dual, settings: Dual) -> Dual:
    given = dict(settings.primal)
    options = _options(given)
    lower, upper = float(a.primal), float(b.primal)
    result, integrand, theta_dot = _forward_run(func, args, lambda: D.quad_vec_call(
        func.primal, a.primal, b.primal, args.primal, given))
    value_dot: Any = 0.0
    if integrand.size and any(t is not NoTangent for t in theta_dot):
        value_dot, _ = _integrate.quad_vec(integrand.push_array, lower, upper, args=(theta_dot,), **options)
    for limit, sign, dot in ((upper, 1.0, _number_tangent(b)), (lower, -1.0, _number_tangent(a))):
        if dot != 0.0:  # strong zero: a limit that does not move adds nothing
            value_dot = value_dot + sign * dot * _endpoint(integrand, limit)
    return Dual(result, (_like(result[0], value_dot), *(_nan_tangent(field) for field in result[1:])))


if _integrate is not None:
    _register_primitive(_QUAD_VEC, D.quad_vec_call, _quad_vec_rrule, _quad_vec_frule)
    defined_by(D.quad_vec_call, D.quad_vec_by_components)
    array_like._APPLIES[_integrate.quad_vec] = False  # args=(a, b) is the user's tuple
    defined_as(_integrate.quad_vec, D.quad_vec)
