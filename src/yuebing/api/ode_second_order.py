"""Second order (``yb.hvp``, ``yb.hessian``) of ``scipy.integrate.solve_ivp`` and ``odeint``
called inside differentiated code: the forward rule of the continuous-adjoint reverse rule of
``api/ode.py`` (forward over adjoint), for every ``solve_ivp`` method and ``odeint``, with respect
to ``y0``, the parameters ``θ`` (``args=`` and what the callable captures), ``t0`` and the output
times.

**The mechanism.** First order maps the outputs' cotangents ``ȳ_i`` to ``ȳ0 = a(t0)``,
``θ̄ = p(t0)`` and the times' cotangents by the adjoint system ``a' = -J^T a``, ``p' = -F_θ^T a``
(``J = ∂F/∂y``) along the trajectory ``y(t)``. Its tangent along the inputs' tangents
``(ẏ0, θ̇, ṫ0, ṫ_i)`` and the cotangents' tangents ``ȳ̇_i`` is obtained by differentiating that
system, solved backward together with it:

* the trajectory's tangent ``s = ẏ`` at fixed ``t`` solves the sensitivity equations
  ``s' = J s + F_θ θ̇``, ``s(t0) = ẏ0 - F(t0, y0) ṫ0`` (forward mode's, ``api/ode.py``), solved
  with ``y`` forward once, with dense output;
* ``ȧ' = -(J^T ȧ + (∂_s J)^T a)``, ``ṗ' = -(F_θ^T ȧ + (∂_s F_θ)^T a)``, where ``∂_s`` is the
  derivative along ``(s(t), θ̇)``: the right-hand side of ``(a, ȧ, p, ṗ)`` is exactly the *dual
  pullback* of ``F`` at ``(t, y(t))`` with tangents ``(s(t), θ̇)``, cotangent ``a`` and cotangent
  tangent ``ȧ``: one call of yuebing's own second-order rule of the user's callable
  (``call_rrule2``), so closures, bound methods and ``args=`` are differentiated as anywhere;
* a moving output time injects its jump ``ȳ_i`` elsewhere: ``ȧ += ṫ_i J_i^T ȳ_i``,
  ``ṗ += ṫ_i F_θ(t_i)^T ȳ_i``; a moving ``t0`` moves where ``a`` and ``p`` are read:
  ``ȳ̇0 = ȧ(t0) - ṫ0 J0^T a(t0)``, ``θ̄̇ = ṗ(t0) - ṫ0 F_θ(t0)^T a(t0)``;
* the times' cotangents ``t̄_i = ȳ_i · F_i``, ``t̄0 = -ȳ0 · F0`` are differentiated directly
  (``F``'s forward rule along the output's tangent).

Why this and not second-order forward sensitivities: ``yb.hvp`` gives the gradient and the
Hessian applied to one direction, and forward sensitivities would need the first-order
sensitivities in every input (``n (n + nθ)`` states) and the second-order ones along the direction
in every input (as many again), while forward over adjoint solves ``2n`` states forward and
``2n + 2nθ`` backward whatever the number of inputs, about 1.3 times the cost of the gradient
(docs/scipy.md); it reuses the first-order adjoint (its segments, tolerances and the implicit
methods' Jacobians) unchanged, and it is what ``yb.hvp`` is for any other code. The parameters' cotangents and their tangents are
integrated as flat vectors (``yb.flatten``'s layout, as in first order) and delivered once at the
end, into the fdata and fdata tangents, as a first-order pullback delivers.

Each backward segment is solved by the call's method at its ``rtol`` and smallest ``atol``
(``odeint``'s by ``odeint``), the implicit methods given the exact Jacobian of the augmented
system (``n`` dual pullbacks); the trajectory and its tangent by the call's method (``odeint``'s
by ``solve_ivp(method="LSODA")`` at its tolerances). The result is as accurate as the solver's
tolerances: tests/test_ode_second_order.py measures it (docs/scipy.md, "scipy.integrate"). The
refusals are first order's (``dense_output``, ``events``, ``full_output``, complex states);
third order (``yb.hessian`` over ``yb.grad`` of a solve) raises ``NestedDifferentiationError``.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..rules import _integrate_definitions as D
from ..rules.core import CoDual, Dual, frule
from ..rules.second_order import _register
from ..rules.util import out_cotangent, zero_fdata
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, add_to_primal, zero_tangent
from ..transform.lifting import _output_cotangents
from ..transform.second_order import SecondOrderError, call_rrule2
from . import implicit_second_order as S
from . import ode as O
from .callback_writes import watched_second_order
from .custom import _deliver
from .flatten import _vector

# --------------------------------------------------------------------------------------------
# F's derivatives along the tangent trajectory
# --------------------------------------------------------------------------------------------


def _scratch(a4: tuple) -> tuple:
    """A parameter's 4-tuple with fresh fdata (and fdata tangent) where one call's cotangents
    gather, so the many evaluations of an adaptive solve never touch the caller's."""
    x, fdata, tangent, fdata_tangent = a4
    return (x, NoFData if fdata is NoFData else zero_fdata(x), tangent,
            NoFData if fdata_tangent is NoFData else zero_fdata(x))


def _missing(c: Any) -> bool:
    return c is NoTangent or c is NoRData or c is NoFData


class _Unsupported(Exception):
    """A parameter structure the direct reading below does not take: flatten's own walk is used."""


def _leaves(x: Any, c: Any, out: list, seen: list) -> None:
    """Append the float leaves of cotangent ``c`` of primal ``x`` in flat order, for the common
    parameters (tuples, floats, float64 arrays, closures over them), or raise ``_Unsupported``.
    Strict: any other structure, an array met twice or sharing memory, a cotangent not shaped
    like its primal, raises, so a reading is never wrong (``DualFlow`` checks it once too)."""
    zero = c is None or _missing(c)
    if isinstance(x, (float, np.floating)):
        out.append(np.zeros(1) if zero else np.array([float(c)]))
    elif isinstance(x, np.ndarray) and x.dtype == np.float64:
        if any(isinstance(other, np.ndarray) and np.shares_memory(x, other) for other in seen):
            raise _Unsupported
        seen.append(x)
        if not zero and np.shape(c) != x.shape:
            raise _Unsupported
        out.append(np.zeros(x.size) if zero else np.ravel(c))
    elif type(x) is tuple:
        if not zero and (type(c) is not tuple or len(c) != len(x)):
            raise _Unsupported
        for i, v in enumerate(x):
            _leaves(v, NoTangent if zero else c[i], out, seen)
    elif isinstance(x, types.FunctionType):
        _closure_leaves(x, c, zero, out, seen)
    elif not (x is None or isinstance(x, (int, str, types.ModuleType))):  # those have no leaves
        raise _Unsupported


def _closure_leaves(fn: types.FunctionType, c: Any, zero: bool, out: list, seen: list) -> None:
    if any(other is fn for other in seen):  # a recursive closure
        raise _Unsupported
    seen.append(fn)
    fields = {} if zero else getattr(c, "fields", None)
    if not isinstance(fields, dict):
        raise _Unsupported
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        box = fields.get(name, NoTangent)
        if _missing(box):
            inner = NoTangent
        elif isinstance(box, MutableTangent) and set(box.fields) <= {"cell_contents"}:
            inner = box.fields.get("cell_contents", NoTangent)
        else:
            raise _Unsupported
        _leaves(cell.cell_contents, inner, out, seen)


def _direct_reading(params: tuple, layout: Any, size: int) -> bool:
    """Whether ``_leaves`` reads ``params``' cotangents in flatten's order (checked on a vector of
    distinct values laid out by flatten itself)."""
    probe = np.arange(1.0, size + 1.0)
    try:
        out: list = []
        _leaves(params, layout.tangent(probe), out, [])
        return np.array_equal(np.concatenate(out) if out else np.zeros(0), probe)
    except Exception:  # noqa: BLE001 - any failure: flatten's own walk
        return False


class DualFlow:
    """The flow ``F`` (``ode.Flow``) with its parameters' 4-tuples: the dual pullback of ``F``,
    flat, and the jvp of ``F`` with a moving time."""

    def __init__(self, flow: O.Flow, theta4: tuple) -> None:
        self.flow, self.theta4 = flow, theta4
        self.theta_dot = O._theta_dot(*(S.tangent4(a4) for a4 in theta4))  # forward mode's format
        # reading the leaves directly costs a third of flatten's walk, at every step of the solve
        self.direct = flow.size > 0 and _direct_reading(flow.params, flow._layout, flow.size)
        self._zeros = tuple(zero_tangent(a4[0]) for a4 in theta4)  # only read: made once

    def _flat(self, theta4: tuple, rdatas: tuple, tangent: bool) -> np.ndarray:
        if not self.flow.size:
            return np.zeros(0)
        full = []
        for a4, r, zero in zip(theta4, rdatas, self._zeros):
            c = out_cotangent(CoDual(a4[0], a4[3] if tangent else a4[1]), r)
            full.append(zero if _missing(c) or zero is NoTangent else c)  # args=() has rdata tangent 0.0
        if self.direct:
            try:
                out: list = []
                _leaves(self.flow.params, tuple(full), out, [])
                return np.concatenate(out).astype(float)
            except (_Unsupported, TypeError, ValueError):  # a cotangent of another form: flatten's walk
                pass
        return _vector(add_to_primal(self.flow._zeroed, tuple(full)))

    def pull2(self, t: float, y: np.ndarray, s: np.ndarray, a: np.ndarray, a_dot: np.ndarray) -> tuple:
        """``(J^T a, J^T ȧ + (∂_s J)^T a, F_θ^T a, F_θ^T ȧ + (∂_s F_θ)^T a)``, flat, at ``(t, y)``
        with ``y``'s tangent ``s`` and ``θ``'s ``θ̇`` (module docstring)."""
        y4 = (y, np.zeros_like(y), s, np.zeros_like(y))
        theta4 = tuple(_scratch(a4) for a4 in self.theta4)
        out4, pullback = call_rrule2(S.constant4(self.flow.rhs), (float(t), NoFData, 0.0, NoFData), y4, *theta4)
        rs, rsd = pullback(*S._seed(out4, a, a_dot))
        return (S.flat(S._full(y4, rs[2], False)), S.flat(S._full(y4, rsd[2], True)),
                self._flat(theta4, rs[3:], False), self._flat(theta4, rsd[3:], True))

    def moving(self, t: float, y: np.ndarray, t_dot: float, y_dot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(F, Ḟ)`` at ``(t, y)`` moving along ``(ṫ, ẏ, θ̇)``: the forward rule of ``F`` (the
        rule itself, not ``yb.jvp``: a third of the cost, called at every step)."""
        params = (Dual(x, d) for x, d in zip(self.flow.params, self.theta_dot))
        out = frule(self.flow.rhs, Dual(float(t), float(t_dot)), Dual(y, y_dot), *params)
        tangent = np.zeros(np.shape(out.primal)) if out.tangent is NoTangent else out.tangent
        return np.asarray(out.primal, dtype=float), np.asarray(tangent, dtype=float)


def trajectory(dual: DualFlow, y0: np.ndarray, s0: np.ndarray, solve: Callable) -> Callable:
    """``t -> (y(t), s(t))`` from one forward solve of ``(y, s)`` with dense output (the
    sensitivity equations); ``solve(rhs, z0)`` returns the dense solution ``t -> z(t)``."""
    n = y0.size

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        return np.concatenate(dual.moving(t, z[:n], 0.0, z[n:]))

    dense = solve(rhs, np.concatenate([y0, s0]))

    def at(t: float) -> tuple[np.ndarray, np.ndarray]:
        z = dense(t)
        return z[:n], z[n:]

    return at


# --------------------------------------------------------------------------------------------
# The adjoint and its tangent
# --------------------------------------------------------------------------------------------


class Outputs:
    """The outputs ``ys[i] = y(times[i])``, their tangents, the times' tangents, and the
    cotangents ``y_bars[i]`` with their tangents (one row per output time)."""

    def __init__(self, times: np.ndarray, ys: np.ndarray, y_dots: np.ndarray, time_dots: np.ndarray,
                 y_bars: np.ndarray, y_bar_dots: np.ndarray) -> None:
        self.times, self.ys, self.y_dots, self.time_dots = times, ys, y_dots, time_dots
        self.y_bars, self.y_bar_dots = y_bars, y_bar_dots

    def used(self, i: int) -> bool:
        return bool(np.any(self.y_bars[i]) or np.any(self.y_bar_dots[i]))


def _system(dual: DualFlow, state: Callable, n: int) -> tuple[Callable, Callable]:
    """The backward system of ``z = (a, ȧ, p, ṗ)`` and its Jacobian (for the implicit methods:
    ``n`` dual pullbacks with unit ``a``; ``ȧ`` enters linearly, ``p`` and ``ṗ`` not at all)."""
    m = dual.flow.size

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        y, s = state(t)
        return -np.concatenate(dual.pull2(t, y, s, z[:n], z[n:2 * n]))

    def jacobian(t: float, z: np.ndarray) -> np.ndarray:
        y, s = state(t)
        size = 2 * n + 2 * m
        matrix = np.zeros((size, size))
        for j, unit in enumerate(np.eye(n)):
            y_part, y_part_dot, theta_part, theta_part_dot = dual.pull2(t, y, s, unit, np.zeros(n))
            matrix[:, j] = -np.concatenate([y_part, y_part_dot, theta_part, theta_part_dot])
            matrix[n:2 * n, n + j] = -y_part
            matrix[2 * n + m:, n + j] = -theta_part
        return matrix

    return rhs, jacobian


def dual_adjoint(dual: DualFlow, out: Outputs, t0: float, t0_dot: float, y0: np.ndarray, state: Callable,
                 segment: Callable) -> tuple:
    """``(ȳ0, ȳ̇0, θ̄, θ̄̇)`` flat (module docstring); ``segment`` as ``ode.adjoint``'s."""
    n, m, flow = y0.size, dual.flow.size, dual.flow
    z = np.zeros(2 * n + 2 * m)
    used = [i for i in range(len(out.times)) if out.used(i)]
    if not used:
        return z[:n], z[n:2 * n], z[2 * n:2 * n + m], z[2 * n + m:]
    rhs, jacobian = _system(dual, state, n)
    now = out.times[used[-1]]
    for i in range(used[-1], -1, -1):
        if out.times[i] != now:
            z, now = segment(rhs, jacobian, now, out.times[i], z).copy(), out.times[i]
        z[:n] += out.y_bars[i]
        z[n:2 * n] += out.y_bar_dots[i]
        if out.time_dots[i] != 0.0 and np.any(out.y_bars[i]):  # the jump ȳ_i moves with t_i
            y_part, theta_part = flow.pull(out.times[i], out.ys[i], out.y_bars[i])
            z[n:2 * n] += out.time_dots[i] * y_part
            z[2 * n + m:] += out.time_dots[i] * theta_part
    if now != t0:
        z = segment(rhs, jacobian, now, t0, z).copy()
    a, a_dot, p, p_dot = z[:n], z[n:2 * n], z[2 * n:2 * n + m], z[2 * n + m:]
    if t0_dot != 0.0 and np.any(a):  # a and p are read where t0 moves to
        y_part, theta_part = flow.pull(t0, y0, a)
        a_dot, p_dot = a_dot - t0_dot * y_part, p_dot - t0_dot * theta_part
    return a, a_dot, p, p_dot


def time_cotangents(dual: DualFlow, out: Outputs) -> tuple[np.ndarray, np.ndarray]:
    """``t̄_i = ȳ_i · F_i`` and their tangents ``ȳ̇_i · F_i + ȳ_i · Ḟ_i``."""
    bars, bar_dots = np.zeros(len(out.times)), np.zeros(len(out.times))
    for i in range(len(out.times)):
        if out.used(i):
            rate, rate_dot = dual.moving(out.times[i], out.ys[i], out.time_dots[i], out.y_dots[i])
            bars[i] = float(np.dot(out.y_bars[i], rate))
            bar_dots[i] = float(np.dot(out.y_bar_dots[i], rate) + np.dot(out.y_bars[i], rate_dot))
    return bars, bar_dots


def start_time_cotangent(dual: DualFlow, t0: float, t0_dot: float, y0: np.ndarray, y0_dot: np.ndarray,
                         y0_bar: np.ndarray, y0_bar_dot: np.ndarray) -> tuple[float, float]:
    """``t̄0 = -ȳ0 · F0`` and its tangent."""
    if not (np.any(y0_bar) or np.any(y0_bar_dot)):
        return 0.0, 0.0
    rate, rate_dot = dual.moving(t0, y0, t0_dot, y0_dot)
    return -float(np.dot(y0_bar, rate)), -float(np.dot(y0_bar_dot, rate) + np.dot(y0_bar, rate_dot))


class Start:
    """The initial time and state with their tangents (flat state)."""

    def __init__(self, t0: float, t0_dot: float, y0: np.ndarray, y0_dot: np.ndarray) -> None:
        self.t0, self.t0_dot, self.y0, self.y0_dot = t0, t0_dot, y0, y0_dot

    def s0(self, dual: DualFlow) -> np.ndarray:
        """The trajectory's tangent at ``t0``: ``ẏ0 - F(t0, y0) ṫ0``."""
        return self.y0_dot - dual.flow.value(self.t0, self.y0) * self.t0_dot


def backward(dual: DualFlow, out: Outputs, start: Start, state: Callable, segment: Callable) -> dict:
    """The dual pullback of one solve, flat: ``y0``'s, ``θ``'s, the output times' and ``t0``'s
    cotangents and their tangents, by name (``"y0"``, ``"theta"``, ``"times"``, ``"t0"``: pairs)."""
    y0_bar, y0_bar_dot, theta_bar, theta_bar_dot = dual_adjoint(dual, out, start.t0, start.t0_dot, start.y0, state,
                                                                segment)
    return {"y0": (y0_bar, y0_bar_dot), "theta": (theta_bar, theta_bar_dot), "times": time_cotangents(dual, out),
            "t0": start_time_cotangent(dual, start.t0, start.t0_dot, start.y0, start.y0_dot, y0_bar, y0_bar_dot)}


def deliver2(a4: tuple, c: Any, c_dot: Any) -> tuple:
    """A full cotangent and its tangent into an argument's fdata and fdata tangent; their rdata."""
    return _deliver(CoDual(a4[0], a4[1]), c), _deliver(CoDual(a4[0], a4[3]), c_dot)


def deliver_parameters(dual: DualFlow, theta_bar: np.ndarray, theta_bar_dot: np.ndarray) -> list:
    """``θ̄`` and ``θ̄̇`` to the callable and its args: ``[(rdata, rdata tangent)] * 2``."""
    bars, bar_dots = dual.flow.parameter_cotangents(theta_bar), dual.flow.parameter_cotangents(theta_bar_dot)
    return [deliver2(a4, c, c_dot) for a4, c, c_dot in zip(dual.theta4, bars, bar_dots)]


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


def _rows(cot: Any, count: int, n: int) -> np.ndarray:
    """A cotangent of the outputs as one row per output time (zeros for none)."""
    if _missing(cot) or cot is None:
        return np.zeros((count, n))
    return np.asarray(cot, dtype=float).reshape(count, n)


def _vector_or_zeros(cot: Any, count: int) -> np.ndarray:
    return np.zeros(count) if _missing(cot) or cot is None else np.asarray(cot, dtype=float).reshape(count)


def _field(cot: Any, key: str) -> Any:
    return cot[key] if isinstance(cot, dict) else NoTangent  # 0.0: the result is not used


def _ivp_forward(dual: DualFlow, solver: O._IvpSolver, span: np.ndarray, y0: np.ndarray, s0: np.ndarray,
                 times: np.ndarray) -> tuple[Callable, np.ndarray]:
    """One forward solve of ``(y, s)``: the trajectory ``t -> (y(t), s(t))`` for the adjoint and
    ``s`` at the output times (forward mode's ``ode.sensitivities``, with dense output)."""
    found: dict = {}

    def solve(rhs: Callable, z0: np.ndarray) -> Callable:
        atol = solver.atol if np.ndim(solver.atol) == 0 else np.concatenate([solver.atol, solver.atol])
        sol = O._integrate.solve_ivp(rhs, tuple(span), z0, method=solver.method, t_eval=times, rtol=solver.rtol,
                                     atol=atol, dense_output=True, **solver.extra)
        O._check_solved(sol, "the sensitivity solve")
        found["s"] = sol.y[y0.size:].T
        return sol.sol

    state = trajectory(dual, y0, s0, solve)
    return state, found["s"]


def _ivp_tangent(result: Any, dual: DualFlow, s: np.ndarray, time_dots: np.ndarray) -> Any:
    """The result's tangent: ``y``'s is ``s(t_i) + F_i ṫ_i`` (as in forward mode), ``t``'s ``ṫ_i``."""
    rates = np.array([dual.flow.value(t, y) for t, y in zip(result.t, result.y.T)]).reshape(s.shape)
    tangent = zero_tangent(result)
    tangent["y"] = (s + rates * time_dots[:, None]).T.copy()
    tangent["t"] = time_dots
    return tangent


def _ivp_times(found: dict, count: int, given_times: bool) -> tuple[list, np.ndarray | None]:
    """The output times' cotangent pair to ``t_span``'s ends (without ``t_eval``: the first and
    last output times are its ends) or to ``t_eval``; ``t0``'s to ``t_span[0]``."""
    span_bars = [np.array([found["t0"][k], 0.0]) for k in range(2)]
    if given_times or not count:
        return span_bars, found["times"]
    for k, bars in enumerate(found["times"]):
        span_bars[k][0] += bars[0]
        if count > 1:
            span_bars[k][1] += bars[-1]
    return span_bars, None


def _ivp_second_order(f4: tuple, args4: tuple, kwargs4: dict) -> tuple:
    """Forward over the adjoint of ``solve_ivp`` (module docstring)."""
    fun4, span4, y04, t_eval4, params4, settings4 = args4
    given = O._ivp_settings(dict(settings4[0]))
    duals = [S.tangent4(a4) for a4 in args4]
    span, times_given = np.asarray(span4[0], dtype=float), t_eval4[0]
    O._check_state(O._IVP, np.asarray(y04[0]))
    result = D.solve_ivp_call(fun4[0], span, np.asarray(y04[0]), times_given, params4[0], given)
    O._check_solved(result)
    dual = DualFlow(O.Flow(D.ivp_rhs, fun4[0], params4[0]), (fun4, params4))
    solver, span_dot = O._IvpSolver(given), O._dense(duals[1], span)
    start = Start(float(span[0]), float(span_dot[0]), np.asarray(y04[0], dtype=float).reshape(-1),
                  O._dense(duals[2], y04[0]).reshape(-1))
    state, s = _ivp_forward(dual, solver, span, start.y0, start.s0(dual), result.t)
    time_dots = O._output_time_tangents(times_given, span_dot,
                                        None if times_given is None else O._dense(duals[3], times_given), result.t.size)
    tangent = _ivp_tangent(result, dual, s, time_dots)
    out4 = S.output4(result, tangent)

    def pullback(dy: Any, dy_dot: Any) -> tuple:
        cot, cot_dot = _output_cotangents(out4, dy, dy_dot)
        for c in (cot, cot_dot):
            if isinstance(c, dict):
                O._refuse_fields(O._IVP, c, ("t", "y"))
        count, n = result.t.size, start.y0.size
        outputs = Outputs(result.t, result.y.T, tangent["y"].T, time_dots,
                          _rows(_transposed(_field(cot, "y")), count, n),
                          _rows(_transposed(_field(cot_dot, "y")), count, n))
        found = backward(dual, outputs, start, state, solver.segment)
        found["times"] = tuple(bars + _vector_or_zeros(_field(c, "t"), count)
                               for bars, c in zip(found["times"], (cot, cot_dot)))
        span_bars, eval_bars = _ivp_times(found, count, times_given is not None)
        r_eval = (NoRData, NoRData) if eval_bars is None else deliver2(t_eval4, *eval_bars)
        (r_fun, rd_fun), (r_args, rd_args) = deliver_parameters(dual, *found["theta"])
        r_span, rd_span = deliver2(span4, *span_bars)
        r_y0, rd_y0 = deliver2(y04, *(c.reshape(np.shape(y04[0])) for c in found["y0"]))
        return ((NoRData, r_fun, r_span, r_y0, r_eval[0], r_args, NoRData),
                (NoRData, rd_fun, rd_span, rd_y0, r_eval[1], rd_args, NoRData))

    return out4, pullback


def _transposed(c: Any) -> Any:
    """``sol.y``'s cotangent (states by times) as rows per time."""
    return c if _missing(c) or c is None else np.asarray(c).T


def _odeint_dense(solver: O._OdeintSolver, times: np.ndarray) -> Callable:
    def solve(rhs: Callable, z0: np.ndarray) -> Callable:
        atol = solver.atol if np.ndim(solver.atol) == 0 else np.concatenate([solver.atol, solver.atol])
        sol = O._integrate.solve_ivp(rhs, (times[0], times[-1]), z0, method="LSODA", dense_output=True,
                                     rtol=solver.rtol, atol=atol)
        O._check_solved(sol, "the dense sensitivity solve")
        return sol.sol

    return solve


def _odeint_tangent(dual: DualFlow, augmented: Callable, start: Start, times: np.ndarray, values: np.ndarray,
                    time_dots: np.ndarray) -> np.ndarray:
    """``odeint``'s output tangent ``s(t_i) + F_i ṫ_i`` (forward mode's, with ``F``'s forward rule)."""
    n = start.y0.size

    def rhs(t: float, z: np.ndarray) -> np.ndarray:
        return np.concatenate(dual.moving(t, z[:n], 0.0, z[n:]))

    s = augmented(rhs, np.concatenate([start.y0, start.s0(dual)]))[:, n:]
    rates = np.array([dual.flow.value(t, y) for t, y in zip(times, values.reshape(times.size, -1))]).reshape(s.shape)
    return (s + rates * time_dots[:, None]).reshape(values.shape)


def _odeint_second_order(f4: tuple, args4: tuple, kwargs4: dict) -> tuple:
    """Forward over the adjoint of ``odeint`` (module docstring)."""
    func4, y04, t4, params4, settings4 = args4
    given = O._odeint_settings(dict(settings4[0]))
    duals = [S.tangent4(a4) for a4 in args4]
    times = np.asarray(t4[0], dtype=float)
    O._check_state(O._ODEINT, np.asarray(y04[0]))
    values = D.odeint_call(func4[0], np.asarray(y04[0]), times, params4[0], given)
    dual = DualFlow(O.Flow(O._odeint_rhs(given), func4[0], params4[0]), (func4, params4))
    solver, time_dots = O._OdeintSolver(given), O._dense(duals[2], times)
    start = Start(float(times[0]), float(time_dots[0]), np.asarray(y04[0], dtype=float).reshape(-1),
                  O._dense(duals[1], y04[0]).reshape(-1))
    tangent = _odeint_tangent(dual, solver.augmented(times), start, times, values, time_dots)
    out4 = S.output4(values, tangent)

    def pullback(dy: Any, dy_dot: Any) -> tuple:
        cot, cot_dot = _output_cotangents(out4, dy, dy_dot)
        count, n = times.size, start.y0.size
        outputs = Outputs(times, np.asarray(values, dtype=float).reshape(count, n), tangent.reshape(count, n), time_dots,
                          _rows(cot, count, n), _rows(cot_dot, count, n))
        # the first output is at t0 itself: its moving jump and the moving t0 cancel, as they should
        state = trajectory(dual, start.y0, start.s0(dual), _odeint_dense(solver, times))
        found = backward(dual, outputs, start, state, solver.segment)
        time_bars = [bars.copy() for bars in found["times"]]
        for k in range(2):
            time_bars[k][0] += found["t0"][k]
        (r_func, rd_func), (r_args, rd_args) = deliver_parameters(dual, *found["theta"])
        r_y0, rd_y0 = deliver2(y04, *(c.reshape(np.shape(y04[0])) for c in found["y0"]))
        r_t, rd_t = deliver2(t4, *time_bars)
        return ((NoRData, r_func, r_y0, r_t, r_args, NoRData), (NoRData, rd_func, rd_y0, rd_t, rd_args, NoRData))

    return out4, pullback


for _rule in (_ivp_second_order, _odeint_second_order):
    _rule.second_order_kind = "special"  # type: ignore[attr-defined] - docs/rules.md: written out

if O._integrate is not None:
    _register((D.solve_ivp_call,), watched_second_order(O._IVP, _ivp_second_order, SecondOrderError))
    _register((D.odeint_call,), watched_second_order(O._ODEINT, _odeint_second_order, SecondOrderError))
