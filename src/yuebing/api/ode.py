"""Derivatives of ``scipy.integrate.solve_ivp`` and ``odeint`` called inside differentiated code
(``docs/scipy.md``, "ODE solvers"): with respect to the initial state ``y0``, the output times
(``t_eval``; ``odeint``'s ``t``), the initial time, and the parameters ``θ`` of the right-hand
side: its ``args=`` and the state the callable captures (a closure's cells, a bound method's
object), as ``api/implicit.py`` does for ``scipy.optimize``.

The solution is differentiated, never the solver's steps. With ``y' = F(t, y, θ)``:

* **Reverse mode: the continuous adjoint.** From the last output time back to ``t0`` the adjoint
  ``a`` (the cotangent of ``y(t)``) and the parameters' cotangent ``p`` solve
  ``a' = -(∂F/∂y)^T a``, ``p' = -(∂F/∂θ)^T a``, with each output's cotangent added to ``a`` at its
  time; ``y(t)`` comes from the forward solve's dense output. Each segment is solved by the same
  method at the same ``rtol`` (the smallest ``atol``); ``odeint``'s by ``odeint`` (LSODA), its
  dense output from ``solve_ivp(method="LSODA")`` at ``odeint``'s tolerances. The vector-Jacobian
  products are yuebing's own ``vjp`` of the right-hand side (``rules/_integrate_definitions.py``).
  Then ``ȳ0 = a(t0)``, ``t̄_i = ȳ_i · F(t_i, y_i)``, ``t̄0 = -a(t0) · F(t0, y0)``, ``θ̄ = p(t0)``.
* **Forward mode: the sensitivity equations.** ``s = ẏ`` solves ``s' = ∂F/∂y s + ∂F/∂θ θ̇`` with
  ``s(t0) = ẏ0 - F(t0, y0) ṫ0``, integrated together with ``y`` by the same solver and
  tolerances (``yb.jvp`` of the right-hand side); the output tangent is ``s(t_i) + F(t_i, y_i) ṫ_i``.

Both are as accurate as the solver's tolerances (tests/test_ode.py measures it). Without
``t_eval``, ``solve_ivp`` returns the solver's own step times: the first and last are ``t_span``'s
and differentiated as such; the interior ones are the solver's choice and held fixed (their
tangent is zero; the solution is differentiated at them). Refused (``ValueError`` naming the
option): ``dense_output=True`` (``sol.sol``), ``events``, ``odeint(full_output=True)``, complex
states, a solve that failed. Second order (``yb.hvp``, ``yb.hessian``) is forward over this adjoint:
``api/ode_second_order.py``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..rules import _integrate_definitions as D
from ..rules import array_like
from ..rules.core import CoDual, Dual, register_frule, register_rrule
from ..rules.second_order import defined_as
from ..rules.util import out_cotangent, output
from ..tangents import NoRData, NoTangent, add_to_primal, zero_tangent
from .callable_tangents import consistent
from .callback_writes import watched_frule, watched_rrule
from .custom import _deliver
from .flatten import _vector, _zeroed, flatten
from .forward import jvp
from .reverse import vjp

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed: no rules to register
    _integrate = None


# --------------------------------------------------------------------------------------------
# The flow y' = F(t, y, θ), θ = (the user's callable, its args)
# --------------------------------------------------------------------------------------------


class Flow:
    """The right-hand side ``rhs(t, y, fun, args)`` with its parameters ``θ = (fun, args)``, laid
    out as a flat vector (``yb.flatten``) so an ODE solver can carry their cotangent."""

    def __init__(self, rhs: Callable, fun: Any, args: tuple) -> None:
        self.rhs, self.params = rhs, (fun, args)
        vector, self._layout = flatten(self.params)
        self.size = int(vector.size)
        self._zeroed = _zeroed(self.params)  # flatten_tangent's starting point, built once per solve

    def value(self, t: float, y: np.ndarray) -> np.ndarray:
        return np.asarray(self.rhs(float(t), y, *self.params), dtype=float)

    def pull(self, t: float, y: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(a^T ∂F/∂y, a^T ∂F/∂θ)``, the second flat."""
        _, pullback = vjp(self.rhs, float(t), y, *self.params)
        _, y_bar, fun_bar, args_bar = pullback(a)
        theta_bar = _vector(add_to_primal(self._zeroed, (fun_bar, args_bar))) if self.size else np.zeros(0)
        return np.asarray(y_bar, dtype=float), theta_bar

    def push(self, t: float, y: np.ndarray, s: np.ndarray, theta_dot: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``(F, ∂F/∂y s + ∂F/∂θ θ̇)``."""
        value, tangent = jvp(self.rhs, (float(t), y, *self.params), (0.0, s, *theta_dot))
        return np.asarray(value, dtype=float), np.asarray(tangent, dtype=float)

    def parameter_cotangents(self, theta_bar: np.ndarray) -> tuple:
        """``(fun̄, args̄)`` as tangents of the callable and of its args."""
        if not self.size:
            return zero_tangent(self.params[0]), zero_tangent(self.params[1])
        return tuple(self._layout.tangent(theta_bar))


def adjoint(flow: Flow, times: np.ndarray, ys: np.ndarray, y_bars: np.ndarray, t0: float, y0: np.ndarray,
            state: Callable, segment: Callable) -> tuple:
    """The continuous adjoint (module docstring) for outputs ``ys[i] = y(times[i])`` with
    cotangents ``y_bars[i]``; ``state(t)`` is ``y(t)``, ``segment(rhs, jacobian, ta, tb, z)`` solves
    ``z' = rhs(t, z)`` from ``ta`` to ``tb`` (``jacobian(t, z)`` for an implicit method). Returns ``(ȳ0, t̄ per output time, t̄0, θ̄ flat)``."""
    n = y0.size
    a, p = np.zeros(n), np.zeros(flow.size)
    time_bars = np.array([float(np.dot(y_bars[i], flow.value(times[i], ys[i]))) if np.any(y_bars[i]) else 0.0
                          for i in range(len(times))])
    nonzero = [i for i in range(len(times)) if np.any(y_bars[i])]
    if not nonzero:
        return a, time_bars, 0.0, p

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        y_part, theta_part = flow.pull(t, state(t), z[:n])
        return -np.concatenate([y_part, theta_part])

    def jacobian(t: float, z: np.ndarray) -> np.ndarray:
        """``∂rhs/∂z = -[[J^T, 0], [F_θ^T, 0]]`` from ``n`` vjps (row ``i`` of ``J`` and ``F_θ``
        per unit cotangent), for the implicit methods' Newton iterations."""
        y = state(t)
        rows = [flow.pull(t, y, unit) for unit in np.eye(n)]
        m = np.zeros((n + flow.size, n + flow.size))
        m[:n, :n] = -np.array([r[0] for r in rows]).T
        m[n:, :n] = -np.array([r[1] for r in rows]).reshape(n, flow.size).T
        return m

    now = times[nonzero[-1]]
    for i in range(nonzero[-1], -1, -1):
        if times[i] != now:
            z = segment(rhs, jacobian, now, times[i], np.concatenate([a, p]))
            a, p, now = z[:n], z[n:], times[i]
        a = a + y_bars[i]
    if now != t0:
        z = segment(rhs, jacobian, now, t0, np.concatenate([a, p]))
        a, p = z[:n], z[n:]
    return a, time_bars, -float(np.dot(a, flow.value(t0, y0))), p


def sensitivities(flow: Flow, y0: np.ndarray, y0_dot: np.ndarray, t0: float, t0_dot: float, theta_dot: tuple,
                  augmented: Callable) -> np.ndarray:
    """``s(t_i)`` (one row per output time) of the sensitivity equations (module docstring);
    ``augmented(rhs, z0)`` solves ``z' = rhs(t, z)`` for ``z = (y, s)`` at the output times."""
    n = y0.size
    s0 = y0_dot - flow.value(t0, y0) * t0_dot

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        return np.concatenate(flow.push(t, z[:n], z[n:], theta_dot))

    return augmented(rhs, np.concatenate([y0, s0]))[:, n:]


# --------------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------------


def _primal(v: Any) -> Any:
    return v.primal if isinstance(v, (CoDual, Dual)) else v


def _dense(v: Any, like: np.ndarray) -> np.ndarray:
    """A forward-mode argument's tangent as a float array (zeros for none)."""
    t = v.tangent if isinstance(v, Dual) else NoTangent
    if t is NoTangent or t is None:
        return np.zeros(np.shape(like))
    return np.asarray(t, dtype=float).reshape(np.shape(like))


def _theta_dot(fun: Any, args: Any) -> tuple:
    """The tangents of the callable and of its args (``NoTangent`` for what has none)."""
    found = []
    for v in (fun, args):
        zero = zero_tangent(_primal(v))
        found.append(consistent(v.primal, v.tangent) if isinstance(v, Dual) and zero is not NoTangent else zero)
    return tuple(found)


def _check_state(name: str, y0: np.ndarray) -> None:
    if np.iscomplexobj(y0):
        raise TypeError(f"{name}: yuebing differentiates real ODE states only; write a complex state as its real "
                        "and imaginary parts")


def _refuse_fields(name: str, cot: Any, known: tuple) -> None:
    """A nonzero cotangent on a result field not differentiated is refused, never dropped."""
    for key in cot:
        if key in known:
            continue
        value = cot[key]
        if isinstance(value, (float, np.ndarray)) and np.any(value):
            raise ValueError(f"{name}: yuebing differentiates the result's t and y only, not .{key}, which the "
                             "differentiated code uses")


def _scalar_atol(atol: Any, default: float) -> float:
    return default if atol is None else float(np.min(atol))


# --------------------------------------------------------------------------------------------
# solve_ivp
# --------------------------------------------------------------------------------------------

_IVP = "scipy.integrate.solve_ivp"
_IMPLICIT = ("BDF", "Radau", "LSODA")  # methods that use a Jacobian


class _IvpSolver:
    """Solves the adjoint's segments and the augmented system by the call's method and tolerances."""

    def __init__(self, settings: dict) -> None:
        self.method = settings.get("method", "RK45")
        self.rtol = settings.get("rtol", 1e-3)
        self.atol = settings.get("atol", 1e-6)
        self.extra = {k: settings[k] for k in ("max_step", "min_step") if k in settings}

    def segment(self, rhs: Callable, jacobian: Callable, ta: float, tb: float, z: np.ndarray) -> np.ndarray:
        implicit = self.method in _IMPLICIT or getattr(self.method, "__name__", None) in _IMPLICIT
        sol = _integrate.solve_ivp(rhs, (ta, tb), z, method=self.method, rtol=self.rtol,
                                   atol=_scalar_atol(self.atol, 1e-6), **self.extra, **({"jac": jacobian} if implicit else {}))
        _check_solved(sol, "the adjoint solve")
        return sol.y[:, -1]

    def augmented(self, t_span: np.ndarray, times: np.ndarray) -> Callable:
        def solve(rhs: Callable, z0: np.ndarray) -> np.ndarray:
            atol = self.atol if np.ndim(self.atol) == 0 else np.concatenate([self.atol, self.atol])
            sol = _integrate.solve_ivp(rhs, tuple(t_span), z0, method=self.method, t_eval=times, rtol=self.rtol,
                                       atol=atol, **self.extra)
            _check_solved(sol, "the sensitivity solve")
            return sol.y.T

        return solve


def _check_solved(sol: Any, what: str = "the solve") -> None:
    if sol.status != 0:
        raise ValueError(f"{_IVP}: {what} did not reach the end of the interval ({sol.message}), so its solution "
                         "has no derivative; loosen the tolerances or check the problem")


def _ivp_settings(settings: dict) -> dict:
    if settings.get("dense_output"):
        raise ValueError(f"{_IVP}: yuebing does not differentiate dense_output=True (sol.sol); pass t_eval= with the "
                         "times you need instead")
    if settings.get("events") is not None:
        raise ValueError(f"{_IVP}: yuebing does not differentiate events=; solve up to the event time and "
                         "differentiate that solve (or find the event with scipy.optimize.brentq, which is "
                         "differentiated implicitly)")
    return settings


def _output_time_tangents(t_eval: Any, t_span_dot: np.ndarray, t_eval_dot: Any, count: int) -> np.ndarray:
    """The tangent of each output time: ``t_eval``'s, or the ends of ``t_span`` (interior steps fixed)."""
    if t_eval is not None:
        return np.asarray(t_eval_dot, dtype=float)
    dots = np.zeros(count)
    if count:
        dots[0], dots[-1] = t_span_dot[0], t_span_dot[-1] if count > 1 else t_span_dot[0]
    return dots


def _ivp_rrule(fun: CoDual, t_span: CoDual, y0: CoDual, t_eval: CoDual, args: CoDual, settings: CoDual) -> tuple:
    given = _ivp_settings(dict(settings.primal))
    y0_value, span, times_given = np.asarray(y0.primal), np.asarray(t_span.primal, float), t_eval.primal
    _check_state(_IVP, y0_value)
    result = D.solve_ivp_call(fun.primal, span, y0_value, times_given, args.primal, dict(given, dense_output=True))
    _check_solved(result)
    state = result.sol
    result.sol = None
    out = output(result)

    def pullback(dy: Any) -> tuple:
        cot = out_cotangent(out, dy)
        _refuse_fields(_IVP, cot, ("t", "y"))
        y_bars = np.zeros((result.t.size, y0_value.size)) if cot["y"] is NoTangent else np.asarray(cot["y"]).T
        t_bars = np.zeros(result.t.size) if cot["t"] is NoTangent else np.asarray(cot["t"], dtype=float)
        flow = Flow(D.ivp_rhs, fun.primal, args.primal)
        solver = _IvpSolver(given)
        y0_bar, time_bars, t0_bar, theta_bar = adjoint(flow, result.t, result.y.T, y_bars, float(span[0]), y0_value,
                                                       state, solver.segment)
        time_bars = time_bars + t_bars
        span_bar = np.array([t0_bar, 0.0])
        r_eval = NoRData
        if times_given is not None:
            r_eval = _deliver(t_eval, time_bars)
        elif time_bars.size:
            span_bar[0] += time_bars[0]
            if time_bars.size > 1:
                span_bar[1] += time_bars[-1]
        fun_bar, args_bar = flow.parameter_cotangents(theta_bar)
        return (NoRData, _deliver(fun, fun_bar), _deliver(t_span, span_bar), _deliver(y0, y0_bar.reshape(y0_value.shape)),
                r_eval, _deliver(args, args_bar), NoRData)

    return out, pullback


def _ivp_frule(fun: Dual, t_span: Dual, y0: Dual, t_eval: Dual, args: Dual, settings: Dual) -> Dual:
    given = _ivp_settings(dict(settings.primal))
    y0_value, span, times_given = np.asarray(y0.primal), np.asarray(t_span.primal, float), t_eval.primal
    _check_state(_IVP, y0_value)
    result = D.solve_ivp_call(fun.primal, span, y0_value, times_given, args.primal, given)
    _check_solved(result)
    flow = Flow(D.ivp_rhs, fun.primal, args.primal)
    span_dot = _dense(t_span, span)
    time_dots = _output_time_tangents(times_given, span_dot,
                                      None if times_given is None else _dense(t_eval, times_given), result.t.size)
    augmented = _IvpSolver(given).augmented(span, result.t)
    s = sensitivities(flow, y0_value, _dense(y0, y0_value), float(span[0]), float(span_dot[0]),
                      _theta_dot(fun, args), augmented)
    rates = np.array([flow.value(t, y) for t, y in zip(result.t, result.y.T)]).reshape(s.shape)
    tangent = zero_tangent(result)
    tangent["y"] = (s + rates * time_dots[:, None]).T.copy()
    tangent["t"] = time_dots
    return Dual(result, tangent)


# --------------------------------------------------------------------------------------------
# odeint
# --------------------------------------------------------------------------------------------

_ODEINT = "scipy.integrate.odeint"
_ODEINT_TOLERANCE = 1.49012e-8  # odeint's default rtol and atol


class _OdeintSolver:
    """odeint's tolerances and step limits, for the adjoint's segments and the augmented system."""

    def __init__(self, settings: dict) -> None:
        self.rtol = _ODEINT_TOLERANCE if settings.get("rtol") is None else settings["rtol"]
        self.atol = _ODEINT_TOLERANCE if settings.get("atol") is None else settings["atol"]
        self.extra = {k: settings[k] for k in ("hmax", "hmin", "mxstep", "mxordn", "mxords") if k in settings}

    def _run(self, rhs: Callable, z0: np.ndarray, times: Any, atol: Any, Dfun: Any = None) -> np.ndarray:
        values, info = _integrate.odeint(rhs, z0, times, Dfun=Dfun, rtol=self.rtol, atol=atol, tfirst=True,
                                         full_output=True, **self.extra)
        if info["message"] != "Integration successful.":
            raise ValueError(f"{_ODEINT}: a derivative solve failed ({info['message']}); loosen the tolerances or "
                             "raise mxstep")
        return values

    def segment(self, rhs: Callable, jacobian: Callable, ta: float, tb: float, z: np.ndarray) -> np.ndarray:
        return self._run(rhs, z, [ta, tb], _scalar_atol(self.atol, _ODEINT_TOLERANCE), Dfun=jacobian)[-1]

    def augmented(self, times: np.ndarray) -> Callable:
        def solve(rhs: Callable, z0: np.ndarray) -> np.ndarray:
            atol = self.atol if np.ndim(self.atol) == 0 else np.concatenate([self.atol, self.atol])
            return self._run(rhs, z0, times, atol)

        return solve

    def dense(self, flow: Flow, times: np.ndarray, y0: np.ndarray) -> Callable:
        """``y(t)`` over ``times``' range by LSODA (odeint's method) at odeint's tolerances."""
        sol = _integrate.solve_ivp(flow.value, (times[0], times[-1]), y0, method="LSODA", dense_output=True,
                                   rtol=self.rtol, atol=self.atol)
        _check_solved(sol, "the dense solve for the adjoint")
        return sol.sol


def _odeint_settings(settings: dict) -> dict:
    if settings.get("full_output"):
        raise ValueError(f"{_ODEINT}: yuebing does not differentiate full_output=True (the info dict); call it "
                         "without full_output inside the differentiated function")
    return settings


def _odeint_rhs(settings: dict) -> Callable:
    return D.ivp_rhs if settings.get("tfirst") else D.odeint_rhs


def _odeint_rrule(func: CoDual, y0: CoDual, t: CoDual, args: CoDual, settings: CoDual) -> tuple:
    given = _odeint_settings(dict(settings.primal))
    y0_value, times = np.asarray(y0.primal), np.asarray(t.primal, dtype=float)
    _check_state(_ODEINT, y0_value)
    out = output(D.odeint_call(func.primal, y0_value, times, args.primal, given))

    def pullback(dy: Any) -> tuple:
        y_bars = np.asarray(out_cotangent(out, dy), dtype=float).reshape(times.size, -1)
        flow = Flow(_odeint_rhs(given), func.primal, args.primal)
        solver = _OdeintSolver(given)
        flat_y0 = np.reshape(y0_value, -1).astype(float)
        state = solver.dense(flow, times, flat_y0) if np.any(y_bars[1:]) else None
        y0_bar, time_bars, t0_bar, theta_bar = adjoint(flow, times, out.primal.reshape(times.size, -1), y_bars,
                                                       float(times[0]), flat_y0, state, solver.segment)
        time_bars[0] += t0_bar
        func_bar, args_bar = flow.parameter_cotangents(theta_bar)
        return (NoRData, _deliver(func, func_bar), _deliver(y0, y0_bar.reshape(y0_value.shape)), _deliver(t, time_bars),
                _deliver(args, args_bar), NoRData)

    return out, pullback


def _odeint_frule(func: Dual, y0: Dual, t: Dual, args: Dual, settings: Dual) -> Dual:
    given = _odeint_settings(dict(settings.primal))
    y0_value, times = np.asarray(y0.primal), np.asarray(t.primal, dtype=float)
    _check_state(_ODEINT, y0_value)
    values = D.odeint_call(func.primal, y0_value, times, args.primal, given)
    flow = Flow(_odeint_rhs(given), func.primal, args.primal)
    flat_y0 = np.reshape(y0_value, -1).astype(float)
    time_dots = _dense(t, times)
    s = sensitivities(flow, flat_y0, _dense(y0, y0_value).reshape(-1), float(times[0]), float(time_dots[0]),
                      _theta_dot(func, args), _OdeintSolver(given).augmented(times))
    rates = np.array([flow.value(ti, yi) for ti, yi in zip(times, values.reshape(times.size, -1))]).reshape(s.shape)
    return Dual(values, (s + rates * time_dots[:, None]).reshape(values.shape))


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def _register_primitive(name: str, primitive: Callable, rrule: Callable, frule: Callable) -> None:
    # the callable's writes to float state are watched (api/callback_writes.py)
    register_rrule(primitive, watched_rrule(name, rrule))
    register_frule(primitive, watched_frule(name, frule))  # second order: api/ode_second_order.py (quad's: api/quad.py)


if _integrate is not None:
    _register_primitive(_IVP, D.solve_ivp_call, _ivp_rrule, _ivp_frule)
    _register_primitive(_ODEINT, D.odeint_call, _odeint_rrule, _odeint_frule)
    for _target, _definition in ((_integrate.solve_ivp, D.solve_ivp), (_integrate.odeint, D.odeint)):
        array_like._APPLIES[_target] = False  # args=(a, b) is the user's tuple: the definition converts the arrays
        defined_as(_target, _definition)
