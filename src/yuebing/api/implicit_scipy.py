"""The implicit rules of ``scipy.optimize`` (``api/implicit.py`` builds them): for each solver, the
problem its call solves (``F``, the parameters ``θ``) and where the solution sits in its output.

Root finders (``root``, ``fsolve``, ``root_scalar``, ``brentq``, ``brenth``, ``ridder``,
``bisect``, ``toms748``, ``newton``): ``F = fun(x, *args)``. ``minimize`` and
``minimize_scalar``: ``F = ∇_x fun`` (the user's gradient when ``jac=True`` or ``jac=callable``,
else yuebing's, with the Hessian as ``∂F/∂x``). ``least_squares``: ``F = ∇_x 0.5 sum(r**2)``.
Calls whose solution is not a smooth function of the parameters are refused with a
``ValueError``: a solver that reports no convergence, constraints, bounds active at the solution,
robust losses. ``curve_fit``: ``F = ∇_p 0.5 |(f(xdata, *p) - ydata) / sigma|^2``, its ``pcov`` a
function of ``popt`` and the data (``rules/_implicit_residuals.py``); ``leastsq``: as
``least_squares``, with ``cov_x``. ``linprog`` is refused by name, with what to call.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..rules import _implicit_residuals as R
from ..rules.core import RuleArgumentError, register_frule, register_rrule
from ..rules.second_order import zero
from ..tangents import NoTangent, dot, zero_tangent
from .implicit import _implicit_rules, _Plan, _value
from .forward import jvp
from .jacobians import jacobian
from .second_order import hvp
from .reverse import vjp

try:
    import scipy.optimize as _opt
except ImportError:  # the scipy extra is not installed: no rules to register
    _opt = None


def _refuse(name: str, why: str, advice: str) -> None:
    raise ValueError(f"{name}: {why}, so the solution has no derivative yuebing can give by implicit differentiation; "
                     f"{advice}")


def _check_converged(name: str, ok: bool, message: Any) -> None:
    if not ok:
        _refuse(name, f"the solver did not converge ({message})",
                "tighten the problem or raise the iteration limit until it converges")


def _root_plan(values: dict, result: Any) -> _Plan:
    _check_converged("scipy.optimize.root", bool(result.success), result.message)
    residual = R.residual_first if values.get("jac") is True else R.residual
    return _Plan("root", residual, ("fun", "args"), (("x",),), zero=(("fun",),))


def _root_scalar_plan(values: dict, result: Any) -> _Plan:
    _check_converged("scipy.optimize.root_scalar", bool(result.converged), result.flag)
    residual = R.residual_first if values.get("fprime") is True else R.residual
    return _Plan("root", residual, ("f", "args"), (("root",),))


def _bracket_plan(name: str) -> Callable:
    def plan(values: dict, result: Any) -> _Plan:
        if values.get("full_output"):
            _check_converged(name, bool(result[1].converged), result[1].flag)
            return _Plan("root", R.residual, ("f", "args"), ((0,), (1, "root")))
        return _Plan("root", R.residual, ("f", "args"), ((),))

    return plan


def _newton_plan(values: dict, result: Any) -> _Plan:
    residual = R.residual
    if not values.get("full_output"):
        return _Plan("root", residual, ("func", "args"), ((),))
    if np.ndim(values.get("x0")) == 0:
        _check_converged("scipy.optimize.newton", bool(result[1].converged), result[1].flag)
        return _Plan("root", residual, ("func", "args"), ((0,), (1, "root")))
    _check_converged("scipy.optimize.newton", bool(np.all(result[1])), "some elements did not converge")
    return _Plan("root", residual, ("func", "args"), ((0,),))


def _fsolve_call(values: dict) -> Any:
    """fsolve, run with its full output (to see whether it converged), returned as the caller asked."""
    full = dict(values, full_output=True)
    x, info, ier, message = _opt.fsolve(**full)
    _check_converged("scipy.optimize.fsolve", ier == 1, message)
    return (x, info, ier, message) if values.get("full_output") else x


def _fsolve_plan(values: dict, result: Any) -> _Plan:
    if values.get("full_output"):
        return _Plan("root", R.residual, ("func", "args"), ((0,),), zero=((1, "fvec"),))
    return _Plan("root", R.residual, ("func", "args"), ((),))


def _box(bounds: Any, x: Any, per_variable: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` shaped as ``x`` from ``bounds``: a ``scipy.optimize.Bounds``, a pair
    ``(lower, upper)`` (``per_variable`` False: least_squares), or one ``(lo, hi)`` per variable
    (``None`` for no bound: minimize)."""
    if hasattr(bounds, "lb"):
        lower, upper = bounds.lb, bounds.ub
    elif per_variable:
        pairs = [(-np.inf if lo is None else lo, np.inf if hi is None else hi) for lo, hi in bounds]
        lower, upper = np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)
    else:
        lower, upper = bounds
    x = np.asarray(x, dtype=float)
    return (np.broadcast_to(np.asarray(lower, float), x.shape), np.broadcast_to(np.asarray(upper, float), x.shape))


_ACTIVE = ("a bound is active at the solution (the minimum is on the boundary)",
           "remove the bound if it is not needed, or differentiate an unconstrained reformulation")


def _at_bounds(name: str, x: Any, bounds: Any, per_variable: bool = True) -> None:
    """Refuse a solution on a bound: there the stationarity condition is not ``∇f = 0``."""
    if bounds is None:
        return
    lower, upper = _box(bounds, x, per_variable)
    x = np.asarray(x, dtype=float)
    scale = 1e-8 * np.maximum(1.0, np.abs(x))
    if np.any(x - lower <= scale) or np.any(upper - x <= scale):
        _refuse(name, *_ACTIVE)


def _inside(name: str, bounds: Any, per_variable: bool = True) -> Callable | None:
    """A plan's check that the minimum is interior: one Newton step ``x - (∂F/∂x)^{-1} F(x)`` from
    the solution stays within the bounds. A solver stopped near an active bound (``bounded``'s
    ``xatol`` short of it, ``trust-constr``'s barrier) is not within 1e-8 of it, but its ``F``
    (the gradient) is not 0 and the step leaves the box: the bound is active, refused."""
    if bounds is None:
        return None

    def check(problem: Any) -> None:
        x = np.reshape(np.asarray(problem.x, dtype=float), -1)
        lower, upper = _box(bounds, x, per_variable)
        if not (np.any(np.isfinite(lower)) or np.any(np.isfinite(upper))):
            return
        if problem.kind == "min":  # F = ∇_x f
            residual = vjp(problem.function, problem.x, *problem.params)[1](1.0)[0]
        else:
            residual = problem.function(problem.x, *problem.params)
        try:
            target = x - problem.solve(np.reshape(np.asarray(residual, dtype=float), -1), transpose=False)
        except ValueError:  # singular: refused when the solution's derivative is needed, not for the value's
            return
        slack = 1e-8 * np.maximum(1.0, np.abs(x))
        if np.any(target < lower - slack) or np.any(target > upper + slack):
            _refuse(name, *_ACTIVE)

    return check


def _minimize_plan(values: dict, result: Any) -> _Plan:
    name = "scipy.optimize.minimize"
    if values.get("constraints"):
        _refuse(name, "it was given constraints", "differentiate an unconstrained (e.g. penalised) problem")
    if not result.success and "precision" not in str(result.message):
        _check_converged(name, False, result.message)
    _at_bounds(name, result.x, values.get("bounds"))
    plan = _optimum_plan(values, "fun")
    plan.check = _inside(name, values.get("bounds"))
    return plan


def _optimum_plan(values: dict, fun_name: str) -> _Plan:
    """A minimum of ``fun``: through the user's gradient when ``jac`` gives one."""
    jac = values.get("jac")
    if jac is True:
        return _Plan("root", R.residual_second, (fun_name, "args"), (("x",),), zero=(("jac",),), value=("fun",),
                     objective=R.objective_first)
    if callable(jac):
        return _Plan("root", R.residual, ("jac", "args"), (("x",),), zero=(("jac",),), value=("fun",),
                     objective=R.objective, objective_names=(fun_name, "args"))
    return _Plan("min", R.objective, (fun_name, "args"), (("x",),), zero=(("jac",),), value=("fun",),
                 objective=R.objective)


def _minimize_scalar_plan(values: dict, result: Any) -> _Plan:
    name = "scipy.optimize.minimize_scalar"
    _check_converged(name, bool(result.success), result.message)
    bounds = values.get("bounds")
    if bounds is not None:
        bounds = [tuple(bounds)]
        _at_bounds(name, [result.x], bounds)
    return _Plan("min", R.objective, ("fun", "args"), (("x",),), value=("fun",), objective=R.objective,
                 check=_inside(name, bounds))


def _least_squares_plan(values: dict, result: Any) -> _Plan:
    name = "scipy.optimize.least_squares"
    if values.get("loss", "linear") != "linear":
        _refuse(name, f"loss={values['loss']!r} is not differentiated (only loss='linear')",
                "use loss='linear', or minimize the robust cost with scipy.optimize.minimize")
    _check_converged(name, result.status > 0, result.message)
    if np.any(result.active_mask):
        _refuse(name, "a bound is active at the solution", "remove the bound, or differentiate an unconstrained problem")
    names = ("fun", "args", "kwargs")
    return _Plan("min", R.least_squares_cost, names, (("x",),), zero=(("grad",), ("optimality",)), value=("cost",),
                 objective=R.least_squares_cost, residual=("fun",), residual_function=R.least_squares_residual,
                 check=_inside(name, values.get("bounds"), per_variable=False))


def _covariance(covariance: Any, function: Callable) -> tuple:
    """``derived`` of a fit's covariance output (``function(x, *params)``): none when it is infinite
    (too few data points, a singular Jacobian): it has no derivative, and reading one is refused."""
    return (((1,), function),) if np.all(np.isfinite(covariance)) else ()


def _covariance_tangent(residual: Callable, scaled: bool) -> Callable:
    """Forward mode's tangent of a fit's covariance ``P = s² C``, ``C = (J^T J)^{-1}``, ``J`` the
    Jacobian of ``residual(x, *params)`` in ``x``: ``dC = -C (B + B^T) C`` with ``B = J^T dJ``,
    ``B[l, i] = <H e_i, (ẋ, θ̇)>`` for ``H`` the Hessian of ``<J[:, l], residual>`` (``n²``
    Hessian-vector products, their cost independent of the number of data points); ``s² =
    |w|² / (m - n)`` when ``scaled``."""
    def tangent(problem: Any, x_dot: Any, tangents: tuple) -> np.ndarray:
        x, params = problem.x, problem.params
        n = int(np.size(x))
        J = np.reshape(jacobian(residual, argnums=0, mode="fwd")(x, *params), (-1, n))
        C = np.linalg.inv(J.T @ J)
        zeros = tuple(zero_tangent(q) for q in params)
        B = np.zeros((n, n))
        for l, i in np.ndindex(n, n):
            h = hvp(R.residual_projection, (x, residual, J[:, l], *params),
                    (np.eye(n)[i], zero_tangent(residual), np.zeros(len(J)), *zeros))[2]
            B[l, i] = np.dot(np.reshape(h[0], -1), np.reshape(x_dot, -1)) + sum(
                float(dot(hk, dk)) for hk, dk in zip(h[3:], tangents) if dk is not NoTangent)
        dC = -C @ (B + B.T) @ C
        if not scaled:
            return dC
        w, w_dot = jvp(residual, (x, *params), (x_dot, *tangents))
        dof = np.size(w) - n
        return (2.0 * np.sum(w * w_dot) / dof) * C + (np.sum(w * w) / dof) * dC

    return tangent


_INFINITE = (" (pcov)", "; it is infinite (no more data points than parameters, or a singular Jacobian), so it has "
                        "no derivative. What to do: fit more data points than parameters, or do not differentiate pcov")


def _curve_fit_call(values: dict) -> Any:
    """curve_fit on the bound values, its ``**kwargs`` (tolerances, ``maxfev``...) passed on."""
    named = dict(values)
    extra = {k: _value(v) for k, v in named.pop("kwargs", {}).items()}
    return _opt.curve_fit(**named, **extra)


def _curve_fit_plan(values: dict, result: Any) -> _Plan:
    """``popt`` minimises ``0.5 |(f(xdata, *p) - ydata) / sigma|^2`` (curve_fit raises when it does
    not converge); ``pcov`` is ``(J^T J)^{-1}`` (scaled) at ``popt`` and the data; with ``full_output``
    the weighted residual ``infodict['fvec']`` is differentiated too."""
    name = "scipy.optimize.curve_fit"
    if values.get("nan_policy") == "omit":
        _refuse(name, "nan_policy='omit' drops data points by their values",
                "remove the NaN points before the call (e.g. keep = ~np.isnan(ydata)) and fit without nan_policy")
    bounds = values.get("bounds")
    _at_bounds(name, result[0], bounds, per_variable=False)
    full = values.get("full_output")
    pcov = functools.partial(R.curve_fit_covariance, jvp=jvp, absolute_sigma=bool(values.get("absolute_sigma")))
    return _Plan("min", R.curve_fit_cost, ("f", "xdata", "ydata", "sigma"), ((0,),),
                 residual=(2, "fvec") if full else None, residual_function=R.curve_fit_residual,
                 check=_inside(name, bounds, per_variable=False), advice={(1,): _INFINITE},
                 derived=_covariance(result[1], pcov),
                 forward={(1,): _covariance_tangent(R.curve_fit_residual, not values.get("absolute_sigma"))})


def _leastsq_plan(values: dict, result: Any) -> _Plan:
    """``leastsq``'s solution minimises ``0.5 |func(x, *args)|^2`` (MINPACK); its status ``ier``
    must be 1 to 4 (converged). With ``full_output``, ``infodict['fvec']`` is its residual and
    ``cov_x`` is ``(J^T J)^{-1}`` at ``x``."""
    name = "scipy.optimize.leastsq"
    _check_converged(name, result[-1] in (1, 2, 3, 4), result[3] if values.get("full_output") else result[-1])
    full = values.get("full_output")
    cov_x = functools.partial(R.leastsq_covariance, jvp=jvp)
    return _Plan("min", R.least_squares_cost, ("func", "args", "kwargs"), ((0,),),
                 residual=(2, "fvec") if full else None, residual_function=R.least_squares_residual,
                 derived=_covariance(result[1], cov_x) if full and result[1] is not None else (),
                 forward={(1,): _covariance_tangent(R.least_squares_residual, False)})


#: Solvers whose solution yuebing does not differentiate, with what to call instead
_REFUSED = {
    "linprog": "a linear program's solution is a vertex of its feasible set, piecewise constant in c, A and b, and "
               "its optimal value only piecewise linear. What to do: solve it outside the differentiated function, "
               "or differentiate a smooth (e.g. penalised) problem with scipy.optimize.minimize",
}


def _refusal(name: str, why: str) -> Callable:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuleArgumentError(f"scipy.optimize.{name}: {why}")

    refused.__qualname__ = f"scipy.optimize.{name} (refused)"
    return refused


def _register_refusals() -> None:
    for name, why in _REFUSED.items():
        rule = _refusal(name, why)
        register_rrule(getattr(_opt, name), rule)
        register_frule(getattr(_opt, name), rule)
        zero(getattr(_opt, name))


if _opt is not None:
    _register_refusals()
    _implicit_rules("scipy.optimize.root", _opt.root, _root_plan)
    _implicit_rules("scipy.optimize.root_scalar", _opt.root_scalar, _root_scalar_plan)
    for _name in ("brentq", "brenth", "ridder", "bisect", "toms748"):
        _implicit_rules(f"scipy.optimize.{_name}", getattr(_opt, _name), _bracket_plan(f"scipy.optimize.{_name}"))
    _implicit_rules("scipy.optimize.newton", _opt.newton, _newton_plan)
    _implicit_rules("scipy.optimize.fsolve", _opt.fsolve, _fsolve_plan, call=_fsolve_call)
    _implicit_rules("scipy.optimize.minimize", _opt.minimize, _minimize_plan)
    _implicit_rules("scipy.optimize.minimize_scalar", _opt.minimize_scalar, _minimize_scalar_plan)
    _implicit_rules("scipy.optimize.least_squares", _opt.least_squares, _least_squares_plan)
    _implicit_rules("scipy.optimize.curve_fit", _opt.curve_fit, _curve_fit_plan, call=_curve_fit_call)
    _implicit_rules("scipy.optimize.leastsq", _opt.leastsq, _leastsq_plan)
