"""Second order (``yb.hvp``, ``yb.hessian``) of implicit differentiation (``api/implicit.py``): the
forward rule of the implicit reverse rule, so a solver called inside a function under
forward-over-reverse has its Hessian-vector products, never the derivative of its iterations.

With ``F(x*(θ), θ) = 0`` and ``A = ∂F/∂x`` at the solution, first order gives the tangent
``ẋ = -A^{-1} ∂F/∂θ θ̇`` and the cotangents ``λ = -A^{-T} x̄``, ``θ̄ = (∂F/∂θ)^T λ``. Their tangents
along ``(θ̇, x̄̇)`` (the cotangent's own tangent) are, with ``L(x, θ) = <λ, F(x, θ)>``,

* ``λ̇ = -A^{-T} (x̄̇ + h_x)`` and ``θ̄̇ = h_θ + (∂F/∂θ)^T λ̇``, where ``(h_x, h_θ)`` is the Hessian of ``L``
  along ``(ẋ, θ̇)``: how ``A^T λ`` and ``(∂F/∂θ)^T λ`` move along the solution path.

Two passes compute them, both through yuebing's own transforms of the residual
(``rules/_implicit_residuals.py``), so the callable's captured state (a closure's cells) has its
tangent and its fdata like any argument: the second-order rule of ``F`` with cotangent ``(λ, 0)``
(giving ``θ̄`` into the parameters' fdata, ``h_θ`` into their fdata tangents, and ``h_x``), then the
first-order rule of ``F`` with cotangent ``λ̇`` into the fdata tangents. The optimum value
(``res.fun``: the envelope theorem), ``least_squares``' residual vector and ``curve_fit``'s ``pcov``
are pulled back by their own second-order rules, the latter two adding to ``x̄`` and ``x̄̇`` first.

A minimum found without the user's gradient (``minimize`` without ``jac``, ``minimize_scalar``,
``least_squares``) has ``F = ∇_x f``: the first pass is then forward-over-reverse of
``psi = <∇_x f, λ>`` (third derivatives of the objective, ``api/implicit_stationary.py``), the
second the same at ``λ = 0`` with tangent ``λ̇`` (its gradient's tangent is ``(∂F/∂θ)^T λ̇``).
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..rules import _implicit_residuals as R
from ..rules import outside_state
from ..rules.core import CoDual, Dual, rrule
from ..rules.util import out_cotangent, sum_rdata, zero_fdata
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from ..transform.forward_runtime import NestedDifferentiationError, zero_tangent_of
from ..transform.second_order import SecondOrderError
from ..transform.second_order import CellTangent, call_rrule2
from .callable_tangents import consistent
from .implicit_stationary import pull_curve_fit, pull_stationary

def flat(v: Any) -> np.ndarray:
    return np.reshape(np.asarray(v, dtype=float), -1)


def like(v: np.ndarray, x: Any) -> Any:
    """Flat ``v`` shaped as ``x`` (a float for a float)."""
    if isinstance(x, np.ndarray):
        return np.reshape(v, x.shape).astype(x.dtype, copy=False)
    return float(v[0])


def constant4(value: Any) -> tuple:
    """An argument the call did not pass (a default ``args=()``, a quadrature node), held fixed: a
    number's tangent is a zero number (second order's calls that build containers linearly -- the
    tuple ``(t, *rest)`` -- hand a float without a tangent over as itself, its value a tangent)."""
    return value, NoFData, type(value)(0) if isinstance(value, (float, np.floating)) else NoTangent, NoFData


def fresh4(x: Any, x_dot: Any) -> tuple:
    """The solution as an argument: its tangent ``x_dot``, fresh fdata where its cotangents gather."""
    return x, zero_fdata(x), x_dot, zero_fdata(x)


def _seed(out4: tuple, c: Any, c_dot: Any) -> tuple:
    """``(dy, dy_tangent)`` for an output 4-tuple given its full cotangent and that cotangent's
    tangent: into its fdata for an array, as rdata for a number."""
    if isinstance(out4[1], np.ndarray):
        out4[1][...] += np.reshape(c, out4[1].shape)
        if isinstance(out4[3], np.ndarray):
            out4[3][...] += np.reshape(c_dot, out4[3].shape)
        return NoRData, NoRData
    return float(np.reshape(c, -1)[0]), float(np.reshape(c_dot, -1)[0])


def _full(a4: tuple, rdata: Any, tangent: bool) -> Any:
    """An argument's full cotangent (or its tangent): its fdata (or fdata tangent) and rdata."""
    return out_cotangent(CoDual(a4[0], a4[3] if tangent else a4[1]), rdata)


def pull_second(function: Callable, x4: tuple, params4: tuple, c: Any, c_dot: Any) -> tuple:
    """Pull cotangent ``c`` (with tangent ``c_dot``) of ``function(x, *params)`` back by its
    second-order rule. The parameters' fdata and fdata tangents are incremented in place; returns
    ``(x̄, x̄̇, params' rdata, params' rdata tangents)`` (``x̄``, ``x̄̇`` as full cotangents)."""
    out4, pullback = call_rrule2(constant4(function), x4, *params4)
    rs, rsd = pullback(*_seed(out4, c, c_dot))
    return _full(x4, rs[1], False), _full(x4, rsd[1], True), tuple(rs[2:]), tuple(rsd[2:])


def pull_fdata_tangent(function: Callable, x: Any, params4: tuple, c: Any) -> tuple:
    """Pull cotangent ``c`` of ``function(x, *params)`` back by its first-order rule into the
    parameters' fdata tangents; returns their rdata (tangents of the parameters' rdata)."""
    with outside_state.fdata_tangent_pass():
        out, pullback = rrule(CoDual(function, NoFData), CoDual(x, zero_fdata(x)),
                              *(CoDual(a4[0], a4[3]) for a4 in params4))
    dy, _ = _seed((out.primal, out.fdata, NoTangent, NoFData), c, 0.0)
    return tuple(pullback(dy)[2:])


def _add(total: dict, names: tuple, rdatas: tuple) -> None:
    for k, r in zip(names, rdatas):
        total[k] = sum_rdata(total.get(k, NoRData), r)


class DualPull:
    """The dual pullback of one solver call (module docstring): ``run(cot, cot_dot)`` with the
    output's full cotangent and its tangent returns the parameters' rdata and rdata tangents by
    name. ``residual4``/``params4``: the 4-tuples of the residual's parameters (by ``plan.names``),
    ``objective4`` those of the objective (``plan.objective_names``)."""

    def __init__(self, name: str, plan: Any, problem: Any, x_dot: Any, params4: tuple, objective4: tuple) -> None:
        self.name, self.plan, self.problem = name, plan, problem
        self.x4 = fresh4(problem.x, x_dot)
        self.params4, self.objective4 = params4, objective4

    def run(self, cot: Any, cot_dot: Any, get: Callable) -> tuple[dict, dict]:
        p = self.plan
        rs: dict = {}
        rsd: dict = {}
        x_bar = sum(flat(get(cot, path)) for path in p.x_paths)
        x_bar_dot = sum(flat(get(cot_dot, path)) for path in p.x_paths)
        for path, function in p.derived:
            r_bar, r_bar_dot = get(cot, path), get(cot_dot, path)
            if np.any(r_bar) or np.any(r_bar_dot):
                xb, xbd, r, rd = self._pull_derived(path, function, r_bar, r_bar_dot)
                x_bar, x_bar_dot = x_bar + flat(xb), x_bar_dot + flat(xbd)
                _add(rs, p.names, r)
                _add(rsd, p.names, rd)
        if np.any(x_bar) or np.any(x_bar_dot):
            self._implicit(x_bar, x_bar_dot, rs, rsd)
        if p.value is not None:
            v_bar, v_bar_dot = get(cot, p.value), get(cot_dot, p.value)
            if np.any(v_bar) or np.any(v_bar_dot):  # at a minimum ∇_x f = 0: nothing reaches x
                _, _, r, rd = pull_second(p.objective, self.x4, self.objective4, v_bar, v_bar_dot)
                _add(rs, p.objective_names, r)
                _add(rsd, p.objective_names, rd)
        return rs, rsd

    def _pull_derived(self, path: tuple, function: Callable, c: Any, c_dot: Any) -> tuple:
        """``pull_second`` of an output computed from the solution (a residual, a covariance)."""
        try:
            return pull_second(function, self.x4, self.params4, c, c_dot)
        except NestedDifferentiationError as error:  # a covariance's yb.jacobian of a model capturing derivatives
            raise SecondOrderError(
                f"yb.hvp/yb.hessian: {self.name}: the second derivative of the result{list(path)} (the covariance) "
                f"takes third derivatives of the model through yb.jacobian, which stop here: {error}. What to do: "
                "pass what the model captures in xdata (curve_fit hands a dict xdata to the model as it is: "
                "xdata={'t': t, 'w': w}, read as X['t'], X['w']), or in args= (leastsq)") from None

    def _implicit(self, x_bar: np.ndarray, x_bar_dot: np.ndarray, rs: dict, rsd: dict) -> None:
        problem, names = self.problem, self.plan.names
        lam = like(-problem.solve(x_bar, transpose=True), problem.x)
        _, h_x, r, rd = self._pull(lam, 0.0 * lam)
        _add(rs, names, r)
        _add(rsd, names, rd)
        lam_dot = like(-problem.solve(x_bar_dot + flat(h_x), transpose=True), problem.x)
        if not np.any(lam_dot):
            return
        if self.plan.kind == "root":
            _add(rsd, names, pull_fdata_tangent(self.plan.function, problem.x, self.params4, lam_dot))
        else:  # (∂F/∂θ)^T λ̇: the tangent of psi's gradient at u = 0 with u̇ = λ̇ (its value is 0)
            _add(rsd, names, self._pull(0.0 * lam, lam_dot)[3])

    def _pull(self, lam: Any, lam_dot: Any) -> tuple:
        """``(∂F/∂x)^T λ``'s tangent ``h_x`` and ``(∂F/∂θ)^T λ`` (into the parameters' fdata, and
        its tangent into their fdata tangents), for ``F``'s cotangent ``λ`` with tangent ``λ̇``:
        ``F``'s second-order rule, or for ``F = ∇_x f`` third derivatives of ``f``. Each call
        has its own fresh fdata for ``x``."""
        x4 = fresh4(self.problem.x, self.x4[2])
        if self.plan.kind == "root":
            return pull_second(self.plan.function, x4, self.params4, lam, lam_dot)
        cost = self.plan.function is R.least_squares_cost
        try:
            if self.plan.function is R.curve_fit_cost:
                h_x, r, rd = pull_curve_fit(x4, self.params4, lam, lam_dot)
            else:
                h_x, r, rd = pull_stationary(cost, x4, self.params4, lam, lam_dot)
        except NestedDifferentiationError as error:  # worded for yb.grad inside yb.hessian: say what it is here
            jac = "jac=" if "least_squares" not in self.name else "jac= to scipy.optimize.minimize of the cost"
            raise SecondOrderError(
                f"yb.hvp/yb.hessian: the second derivative of {self.name}'s solution takes third derivatives of the "
                f"objective (the derivative of its gradient's root), which stop here: {error}. Alternatively pass the "
                f"objective's gradient as {jac}: then second derivatives suffice") from None
        return None, h_x, r, rd


def tangent4(a4: tuple) -> Dual:
    """The forward-mode view of an argument 4-tuple."""
    return Dual(a4[0], consistent(a4[0], forward_tangent(a4[2], {}, a4[0])))


def forward_tangent(t: Any, memo: dict, primal: Any = None) -> Any:
    """A second-order tangent in forward mode's format: a closure's captured values are
    ``CellTangent`` holders in second order, ``MutableTangent`` cell boxes in forward mode; a
    captured constant (a global array the generated code captures) has a zero tangent there."""
    if id(t) in memo:
        return memo[id(t)]
    if isinstance(t, Tangent) and t.primal_type is types.FunctionType:
        fields: dict = {}
        memo[id(t)] = converted = Tangent(types.FunctionType, fields)
        cells = dict(zip(primal.__code__.co_freevars, primal.__closure__ or ())) \
            if isinstance(primal, types.FunctionType) else {}
        for k, v in t.fields.items():
            cell = cells.get(k)
            contents = cell.cell_contents if cell is not None and _filled(cell) else None
            if isinstance(v, CellTangent) and cell is not None and ("cell", id(cell)) in memo:
                fields[k] = memo["cell", id(cell)]  # a cell a helper the closure calls captures too: one box
            elif isinstance(v, CellTangent):
                inner = forward_tangent(v.value, memo, contents)
                if inner is NoTangent and cell is not None and _filled(cell):
                    inner = zero_tangent_of(contents)
                fields[k] = MutableTangent(types.CellType, {"cell_contents": inner})
                if cell is not None:
                    memo["cell", id(cell)] = fields[k]
            else:
                fields[k] = forward_tangent(v, memo, contents)
        if not any(_box_carries(v) for v in fields.values()):  # forward mode's tangent of such a function
            memo[id(t)] = NoTangent
            return NoTangent
        return converted
    if type(t) in (tuple, list):
        parts = primal if type(primal) is type(t) and len(primal) == len(t) else [None] * len(t)
        return type(t)(forward_tangent(v, memo, p) for v, p in zip(t, parts))
    if type(t) is dict:
        return {k: forward_tangent(v, memo, primal.get(k) if isinstance(primal, dict) else None) for k, v in t.items()}
    if isinstance(t, Tangent) and t.fields:  # a partial, a bound method: what they capture
        return Tangent(t.primal_type, {k: forward_tangent(v, memo, getattr(primal, k, None)) for k, v in t.fields.items()})
    if isinstance(primal, types.MethodType) and hasattr(t, "__self__"):  # second order's bound-method tangent
        owner = forward_tangent(t.__self__, memo, primal.__self__)
        return Tangent(types.MethodType, {"__self__": owner}) if owner is not NoTangent else NoTangent
    if t is primal and primal is not None and not isinstance(t, (float, complex, np.ndarray)):
        return zero_tangent_of(primal)  # a label second order's tangent tuple holds as it is (args=(helper, p))
    return t


def _box_carries(v: Any) -> bool:
    """Whether a converted closure field holds a tangent (a cell box with contents, or any other)."""
    if isinstance(v, MutableTangent) and v.primal_type is types.CellType:
        return v.fields.get("cell_contents", NoTangent) is not NoTangent
    return v is not NoTangent


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell (a variable not assigned yet)
        return False
    return True


def output4(result: Any, tangent: Any) -> tuple:
    """The solver's result as an output 4-tuple: fresh fdata and fdata tangent."""
    fdata = zero_fdata(result)
    if tangent is NoTangent:
        tangent = zero_tangent_of(result)
    return result, fdata, tangent, zero_fdata(result)
