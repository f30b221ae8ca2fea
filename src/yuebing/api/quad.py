"""Derivatives of ``scipy.integrate.quad`` called inside differentiated code (``docs/scipy.md``,
"quad"): ``I = ∫_a^b f(t, θ) dt`` with ``θ`` the integrand's ``args=`` and the state it captures (a
closure's cells, a bound method's object), as ``api/ode.py`` and ``api/implicit.py`` treat callables.

* In ``θ``, by differentiating under the integral sign: ``∂I/∂θ = ∫_a^b ∂f/∂θ dt``, a second
  adaptive quadrature of yuebing's own derivative of ``f`` at the call's ``epsabs``/``epsrel`` and
  break ``points`` (reverse mode: the vector ``∫ ∂f/∂θ dt`` by ``scipy.integrate.quad_vec``; forward
  mode: ``∫ ∂f/∂θ θ̇ dt`` by ``quad``).
* In the limits, by the fundamental theorem: ``∂I/∂b = f(b)``, ``∂I/∂a = -f(a)``. An infinite limit
  does not move (its derivative is 0, as finite differences give).

Only the value is differentiated: a nonzero cotangent on the error estimate (or ``full_output``'s
fields) is refused in reverse mode and gets a NaN tangent in forward mode, never a silent zero.
Refused (``ValueError``): ``weight=`` (write the weight into the integrand), ``complex_func=True``.
The derivative is as accurate as the second quadrature's tolerance (tests/test_scipy_integrate.py
measures it).

* Second order (``yb.hvp``, ``yb.hessian``): the forward rule of the reverse rule. The cotangent
  ``θ̄ = Ī ∫ ∂f/∂θ dt`` is an integral of the integrand's own pullback, so its tangent is the
  integral of the integrand's *dual* pullback (yuebing's second-order rule of ``f`` at each node,
  cotangent ``(Ī, Ī̇)``, delivered in place like any argument's) plus the limits' terms
  ``Ī (ḃ ∂f/∂θ(b) - ȧ ∂f/∂θ(a))``; ``ā̇ = -(Ī̇ f(a) + Ī ḟ(a))`` and likewise for ``b``. The nodes:
  21-point Gauss-Legendre on each subinterval ``quad_vec`` chose for ``(f, ∂f/∂θ)`` at the call's
  tolerances (tests/test_integrate_second_order.py measures the accuracy). An infinite range is
  mapped to a finite one as ``quad_vec`` maps it (``_Range``: ``t = a + (1 - u)/u``, ``dt = du/u²``)
  and its subintervals taken in that variable; an infinite limit does not move (as in first order).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..rules import _integrate_definitions as D
from ..rules import array_like
from ..rules.core import CoDual, Dual
from ..rules.core import frule
from ..rules.second_order import _register, defined_as
from ..rules.util import sum_rdata
from ..transform.lifting import _output_cotangents
from ..transform.second_order import SecondOrderError
from . import implicit_second_order as S
from ..rules.util import out_cotangent, output
from ..tangents import NoRData, NoTangent, add_to_primal, zero_tangent
from ..tangents import stale
from .callback_writes import watched_second_order
from .custom import _deliver
from .flatten import _vector, _zeroed, flatten
from .forward import jvp
from .ode import _register_primitive, _theta_dot
from .reverse import vjp

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed: no rules to register
    _integrate = None

_QUAD = "scipy.integrate.quad"


class _Integrand:
    """``f(t, θ) = func(t, *args)`` with ``θ = (func, args)`` laid out as a flat vector."""

    def __init__(self, func: Any, args: tuple) -> None:
        self.params = (func, args)
        vector, _ = flatten(self.params)
        self.size = int(vector.size)
        self._zeroed = _zeroed(self.params)

    def value(self, t: float) -> float:
        return float(D.quad_integrand(t, *self.params))

    def pull(self, t: float, seed: Any = None) -> np.ndarray:
        """``∂f/∂θ`` at ``t``, flat (``∂(seed·f)/∂θ`` for a vector integrand)."""
        value, pullback = vjp(D.quad_integrand, float(t), *self.params)
        if seed is None:
            seed = np.ones_like(value) if isinstance(value, np.ndarray) else 1.0
        elif not isinstance(value, np.ndarray):
            seed = float(seed)
        _, func_bar, args_bar = pullback(seed)
        return _vector(add_to_primal(self._zeroed, (func_bar, args_bar)))

    def push(self, t: float, theta_dot: tuple) -> float:
        """``∂f/∂θ θ̇`` at ``t``."""
        return float(np.real(self.push_array(t, theta_dot)))

    def push_array(self, t: float, theta_dot: tuple) -> Any:
        """``∂f/∂θ θ̇`` at ``t`` of a vector integrand."""
        return jvp(D.quad_integrand, (float(t), *self.params), (0.0, *theta_dot))[1]

    def cotangents(self, theta_bar: np.ndarray) -> tuple:
        if not self.size:
            return zero_tangent(self.params[0]), zero_tangent(self.params[1])
        return tuple(flatten(self.params)[1].tangent(theta_bar))


def _settings(settings: dict) -> dict:
    if settings.get("weight") is not None:
        raise ValueError(f"{_QUAD}: yuebing does not differentiate weight={settings['weight']!r}; write the weight "
                         "into the integrand (quad(lambda t: w(t) * f(t), a, b))")
    if settings.get("complex_func"):
        raise ValueError(f"{_QUAD}: yuebing does not differentiate complex_func=True; integrate the real and "
                         "imaginary parts as two real integrals")
    return settings


def _tolerances(settings: dict) -> dict:
    return {"epsabs": settings.get("epsabs", 1.49e-8), "epsrel": settings.get("epsrel", 1.49e-8)}


def _endpoint(integrand: _Integrand, limit: float) -> float:
    """``f(limit)``: what moving a finite limit adds per unit; an infinite limit does not move."""
    return integrand.value(limit) if math.isfinite(limit) else 0.0


def _refuse_other_fields(cot: Any, name: str = _QUAD) -> None:
    for i, field in enumerate(cot[1:], start=1):
        leaves = field.values() if isinstance(field, dict) else [field]
        if any(isinstance(v, (float, np.ndarray)) and np.any(v) for v in leaves):
            what = "the error estimate" if i == 1 else f"result[{i}]"
            raise ValueError(f"{name}: yuebing differentiates the integral's value only, not {what}, which the "
                             "differentiated code uses")


def _quad_rrule(func: CoDual, a: CoDual, b: CoDual, args: CoDual, settings: CoDual) -> tuple:
    given = _settings(dict(settings.primal))
    lower, upper = float(a.primal), float(b.primal)
    result = D.quad_call(func.primal, a.primal, b.primal, args.primal, given)  # (its writes: api/callback_writes.py)
    out = output(result)

    def pullback(dy: Any) -> tuple:
        cot = out_cotangent(out, dy)
        _refuse_other_fields(cot)
        value_bar = 0.0 if cot[0] is NoTangent else float(cot[0])
        if value_bar == 0.0:  # strong zero: no second quadrature, no endpoint evaluation
            return NoRData, NoRData, 0.0, 0.0, NoRData, NoRData
        integrand = _Integrand(func.primal, args.primal)
        theta_bar = np.zeros(0)
        if integrand.size:
            theta_bar, _ = _integrate.quad_vec(integrand.pull, lower, upper, points=given.get("points"),
                                               **_tolerances(given))
            theta_bar = value_bar * np.asarray(theta_bar, dtype=float)
        func_bar, args_bar = integrand.cotangents(theta_bar)
        return (NoRData, _deliver(func, func_bar), -value_bar * _endpoint(integrand, lower),
                value_bar * _endpoint(integrand, upper), _deliver(args, args_bar), NoRData)

    return out, pullback


def _number_tangent(v: Any) -> float:
    t = v.tangent if isinstance(v, Dual) else NoTangent
    return 0.0 if t is NoTangent or t is None else float(t)


def _nan_tangent(x: Any) -> Any:
    """A tangent of ``x`` whose float leaves are NaN: no derivative was computed for them."""
    if isinstance(x, dict):
        return {k: _nan_tangent(v) for k, v in x.items()}
    if isinstance(x, float):
        return math.nan
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return np.full(x.shape, np.nan)
    return zero_tangent(x)


def _forward_run(func: Dual, args: Dual, call: Callable[[], Any]) -> tuple:
    """``call()``, the plain run of the integrand; the integrand; and ``θ̇``, NaN where that run
    changed the integrand's state (nquad's error estimate on its object: ``tangents/stale.py``)."""
    before = stale.snapshot((func.primal, args.primal))
    result = call()
    theta_dot = stale.mark_changed((func.primal, args.primal), _theta_dot(func, args), before)
    return result, _Integrand(func.primal, args.primal), theta_dot


def _quad_frule(func: Dual, a: Dual, b: Dual, args: Dual, settings: Dual) -> Dual:
    given = _settings(dict(settings.primal))
    lower, upper = float(a.primal), float(b.primal)
    result, integrand, theta_dot = _forward_run(func, args, lambda: D.quad_call(func.primal, a.primal, b.primal,
                                                                                 args.primal, given))
    value_dot = 0.0
    if integrand.size and any(t is not NoTangent for t in theta_dot):
        options = {k: given[k] for k in ("limit", "points") if given.get(k) is not None}
        value_dot, _ = _integrate.quad(integrand.push, lower, upper, args=(theta_dot,), **_tolerances(given), **options)
    for limit, sign, dot in ((upper, 1.0, _number_tangent(b)), (lower, -1.0, _number_tangent(a))):
        if dot != 0.0:  # strong zero: a limit that does not move adds nothing, even where f is infinite
            value_dot += sign * dot * _endpoint(integrand, limit)
    return Dual(result, (float(value_dot), *(_nan_tangent(field) for field in result[1:])))


_GAUSS = np.polynomial.legendre.leggauss(21)
_TINY = np.finfo(float).tiny ** 0.5  # below it 1/t**2 overflows: the integrand is taken as 0 there


class _Range:
    """``[lower, upper]`` as a finite variable ``u``: ``t(u)`` and ``dt/du``. A finite range is
    itself; an infinite one is mapped as ``quad_vec`` maps it (``t = a ± (1 - u)/u`` on ``(0, 1]``,
    ``t = (1 - |u|)/u`` on ``[-1, 1]`` split at 0), so its subintervals are finite."""

    def __init__(self, lower: float, upper: float) -> None:
        self.sign = -1.0 if upper < lower else 1.0  # ∫_a^b = -∫_b^a: integrate upwards
        self.a, self.b = min(lower, upper), max(lower, upper)
        self.kind = ("finite" if math.isfinite(self.a) and math.isfinite(self.b) else "double"
                     if not (math.isfinite(self.a) or math.isfinite(self.b)) else "upper" if math.isfinite(self.a)
                     else "lower")

    def bounds(self) -> tuple[float, float]:
        return {"finite": (self.a, self.b), "double": (-1.0, 1.0)}.get(self.kind, (0.0, 1.0))

    def t(self, u: float) -> float:
        if self.kind == "finite":
            return u
        if self.kind == "double":
            return (1.0 - abs(u)) / u
        return self.a + (1.0 - u) / u if self.kind == "upper" else self.b - (1.0 - u) / u

    def jacobian(self, u: float) -> float:
        return 1.0 if self.kind == "finite" else 1.0 / (u * u)

    def points(self, points: Any) -> Any:
        """Break points in ``u`` (the sign change at ``u = 0`` of a doubly infinite range too)."""
        if self.kind == "finite":
            return points
        mapped = [self.u(float(p)) for p in (points or ()) if self.a < float(p) < self.b]
        return tuple(mapped) + ((0.0,) if self.kind == "double" else ()) or None

    def u(self, t: float) -> float:
        if self.kind == "double":
            return math.copysign(1.0, t) / (abs(t) + 1.0)
        return 1.0 / (1.0 + (t - self.a if self.kind == "upper" else self.b - t))


def _nodes(integrand: _Integrand, lower: float, upper: float, given: dict) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights for the dual pullback's integral: Gauss-Legendre on each
    subinterval that ``quad_vec`` needs for the value and first derivative of the integrand (in
    the finite variable of ``_Range`` for an infinite range; its weights carry ``dt/du``)."""
    span = _Range(lower, upper)
    if lower == upper:  # an empty range (two equal infinite limits too)
        return np.zeros(0), np.zeros(0)

    def first_order(u: float) -> np.ndarray:
        if span.kind != "finite" and abs(u) < _TINY:  # t = ±inf: the integrand has decayed
            return np.zeros(1 + integrand.size)
        t, scale = span.t(u), span.jacobian(u)
        value = np.array([integrand.value(t)])
        return scale * (np.concatenate([value, integrand.pull(t)]) if integrand.size else value)

    info = _integrate.quad_vec(first_order, *span.bounds(), points=span.points(given.get("points")),
                               full_output=True, **_tolerances(given))[2]
    nodes, weights = [], []
    for left, right in info.intervals:
        half = 0.5 * (right - left)
        u = left + half * (_GAUSS[0] + 1.0)
        nodes.append(np.array([span.t(v) for v in u]))
        weights.append(span.sign * half * _GAUSS[1] * np.array([span.jacobian(v) for v in u]))
    return np.concatenate(nodes), np.concatenate(weights)


def _refuse_nquad(func: Any) -> None:
    """SciPy's nquad (dblquad, tplquad) integrates a partial of its ``_NQuad`` object's bound method:
    second order's tangent of that object is not one forward mode reads yet (its closures' cells, one
    opts dict shared by its ``_OptFunc``s), so it is refused with advice that works."""
    owner = getattr(getattr(func, "func", None), "__self__", None)
    if type(owner).__name__ == "_NQuad" and type(owner).__module__.startswith("scipy.integrate"):
        raise SecondOrderError("yb.hvp/yb.hessian: yuebing does not differentiate scipy.integrate.nquad (dblquad, "
                               "tplquad) in second order yet; nest quad, whose second order is defined: "
                               "quad(lambda t: quad(lambda y: f(y, t), c, d)[0], a, b)[0]")


def _quad_second_order(f4: tuple, args4: tuple, kwargs4: dict) -> tuple:
    """Forward over the reverse rule (module docstring)."""
    if kwargs4 or len(args4) != 5:
        raise SecondOrderError(f"yb.hvp/yb.hessian: {_QUAD}'s primitive takes five positional arguments")
    func4, a4, b4, params4, settings4 = args4
    _refuse_nquad(func4[0])
    lower, upper = float(a4[0]), float(b4[0])
    given = _settings(dict(settings4[0]))
    duals = [S.tangent4(a) for a in args4]
    out = _quad_frule(*duals)
    out4 = S.output4(out.primal, out.tangent)
    theta4 = (func4, params4)

    def pullback(dy: Any, dy_dot: Any) -> tuple:
        cot, cot_dot = _output_cotangents(out4, dy, dy_dot)  # 0.0 for an unused result
        for c in (cot, cot_dot):
            if isinstance(c, tuple):
                _refuse_other_fields(c)
        bar, bar_dot = (float(c[0]) if isinstance(c, tuple) and c[0] is not NoTangent else 0.0 for c in (cot, cot_dot))
        rs, rsd = [NoRData, NoRData], [NoRData, NoRData]
        if bar == 0.0 and bar_dot == 0.0:  # strong zero: no quadrature, no endpoint evaluation
            return (NoRData, NoRData, 0.0, 0.0, NoRData, NoRData), (NoRData, NoRData, 0.0, 0.0, NoRData, NoRData)
        integrand = _Integrand(func4[0], params4[0])

        def add(t: float, c: float, c_dot: float) -> None:
            _, _, r, rd = S.pull_second(D.quad_integrand, S.constant4(float(t)), theta4, c, c_dot)
            for k in range(2):
                rs[k], rsd[k] = sum_rdata(rs[k], r[k]), sum_rdata(rsd[k], rd[k])

        if integrand.size:
            for t, w in zip(*_nodes(integrand, lower, upper, given)):
                add(t, w * bar, w * bar_dot)
        limits = []
        for limit4, sign in ((b4, 1.0), (a4, -1.0)):
            limit_dot = _number_tangent(S.tangent4(limit4))
            if not math.isfinite(float(limit4[0])):  # an infinite limit does not move (as in first order)
                limits.append((0.0, 0.0))
                continue
            if integrand.size and bar != 0.0 and limit_dot != 0.0:  # Ī ṫ ∂f/∂θ(t) at a moving limit
                add(float(limit4[0]), 0.0, sign * bar * limit_dot)
            moving = S.tangent4(limit4)
            f = frule(D.quad_integrand, moving, duals[0], duals[3])
            f_dot = 0.0 if f.tangent is NoTangent else float(f.tangent)
            limits.append((sign * bar * float(f.primal), sign * (bar_dot * float(f.primal) + bar * f_dot)))
        (b_bar, b_bar_dot), (a_bar, a_bar_dot) = limits
        return ((NoRData, rs[0], a_bar, b_bar, rs[1], NoRData),
                (NoRData, rsd[0], a_bar_dot, b_bar_dot, rsd[1], NoRData))

    return out4, pullback


if _integrate is not None:
    _register_primitive(_QUAD, D.quad_call, _quad_rrule, _quad_frule)
    _register((D.quad_call,), watched_second_order(_QUAD, _quad_second_order, SecondOrderError))
    array_like._APPLIES[_integrate.quad] = False  # args=(a, b) is the user's tuple
    defined_as(_integrate.quad, D.quad)
    from . import nquad as _nquad  # noqa: F401, E402 - nquad's second order, as nested quad calls
