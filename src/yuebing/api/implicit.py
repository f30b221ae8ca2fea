"""Implicit differentiation: ``yb.custom_root`` and the rules of ``scipy.optimize``'s root finders
and minimisers (``docs/scipy.md``, "Implicit differentiation").

A solver returns ``x*`` with ``F(x*, θ) = 0``; its derivative is the implicit function theorem's
``dx*/dθ = -(∂F/∂x)^{-1} ∂F/∂θ``, never the derivative of the iterations. ``θ`` is everything the
user's callable depends on that carries a derivative: its extra arguments (``args=``) and the state
it captures (a closure's cells, a bound method's object): the callable is an argument of the
problem like any other, with its tangent (docs/tangents.md, "Closures"). ``F`` is the callable
itself for root finders, the gradient of the objective for ``minimize`` (its Hessian is ``∂F/∂x``),
and of ``0.5 * sum(r**2)`` for ``least_squares``. Every partial derivative comes from yuebing's own
transforms of the functions in ``rules/_implicit_residuals.py``; ``∂F/∂x`` is formed densely
(``yb.jacobian``, ``yb.hessian``) and solved with NumPy, or by the user's ``tangent_solve``.

Reverse mode solves ``(∂F/∂x)^T λ = x̄`` and pulls ``-λ`` back through ``F`` to ``θ``; forward mode
pushes ``θ̇`` through ``F`` and solves ``(∂F/∂x) ẋ = -Ḟ``. Result objects carry the derivative of
``x``, of the optimum value (``res.fun``, ``res.cost``: the envelope theorem, ``∂f/∂θ`` at ``x*``)
and of ``least_squares``'s residual vector; fields whose derivative is zero at a solution (the
residual of a root, the gradient at a minimum) have zero tangents; the others (``hess_inv``,
``fjac``...) get NaN tangents in forward mode and are refused in reverse mode. Second order
(``yb.hvp``, ``yb.hessian``) is the forward rule of the reverse rule (``api/implicit_second_order.py``);
for a minimum found without the user's gradient it takes third derivatives of the objective
(``api/implicit_stationary.py``).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..rules import _implicit_residuals as R
from ..rules import array_like
from ..rules.core import CoDual, Dual, register_frule, register_rrule
from ..rules.second_order import _register
from ..rules.util import out_cotangent, output, sum_rdata
from ..tangents import NoRData, NoTangent, dot, zero_rdata, zero_tangent
from ..transform.second_order import SecondOrderError
from .callable_tangents import consistent
from .callback_writes import watched_frule, watched_rrule, watched_second_order
from .custom import _deliver
from .forward import jvp
from .jacobians import jacobian
from .reverse import vjp
from .second_order import hessian, hvp
from . import implicit_second_order as S
from ..transform.lifting import _output_cotangents

# --------------------------------------------------------------------------------------------
# The problem F(x*, θ) = 0
# --------------------------------------------------------------------------------------------


class _Problem:
    """The solution ``x`` of ``F(x, *params) = 0``: kind ``"root"`` has ``F = function``, kind
    ``"min"`` has ``F = ∇_x function`` (a scalar objective)."""

    def __init__(self, name: str, kind: str, function: Callable, x: Any, params: tuple,
                 tangent_solve: Callable | None = None) -> None:
        self.name, self.kind, self.function, self.params = name, kind, function, params
        self.x = x
        self.tangent_solve = tangent_solve
        self._matrix: np.ndarray | None = None
        self._hvps: list | None = None

    def _zeros(self) -> tuple:
        return tuple(zero_tangent(p) for p in self.params)

    def _unit(self, i: int) -> Any:
        e = np.zeros(int(np.size(self.x)))
        e[i] = 1.0
        return S.like(e, self.x)

    def _columns(self) -> list:
        """Per coordinate ``i`` of ``x``: the Hessian-vector products along ``e_i``, with respect
        to ``x`` (column ``i`` of ``∂F/∂x``) and to each parameter (``∂F_i/∂θ``, by symmetry)."""
        if self._hvps is None:
            self._hvps = [hvp(self.function, (self.x, *self.params), (self._unit(i), *self._zeros()))[2]
                          for i in range(int(np.size(self.x)))]
        return self._hvps

    def matrix(self) -> np.ndarray:
        """``∂F/∂x`` at the solution, as a square matrix over the flattened ``x``."""
        if self._matrix is None:
            if self.kind == "root":
                a = jacobian(self.function, argnums=0)(self.x, *self.params)
            elif self._hvps is not None:
                a = np.stack([S.flat(h[0]) for h in self._hvps], axis=1)
            else:
                a = hessian(self.function, argnums=0)(self.x, *self.params)
            n = int(np.size(self.x))
            a = np.asarray(a, dtype=float)
            if a.size != n * n:
                raise ValueError(f"{self.name}: the residual has {a.size // max(n, 1)} components for {n} unknowns; "
                                 "implicit differentiation needs a square system (as many equations as unknowns)")
            self._matrix = a.reshape(n, n)
        return self._matrix

    def _apply(self, v: np.ndarray, transpose: bool) -> np.ndarray:
        """``∂F/∂x v`` (or its transpose), for a user's ``tangent_solve``."""
        if transpose:
            value, pullback = vjp(self.function, self.x, *self.params)
            return S.flat(pullback(S.like(v, value))[0])
        return S.flat(jvp(self.function, (self.x, *self.params), (S.like(v, self.x), *self._zeros()))[1])

    def solve(self, b: np.ndarray, transpose: bool) -> np.ndarray:
        """``(∂F/∂x)^{-1} b`` (or ``^{-T}``), flat."""
        if self.tangent_solve is not None:
            like = self.x

            def linear(v: Any) -> Any:
                return S.like(self._apply(S.flat(v), transpose), like)

            return S.flat(self.tangent_solve(linear, S.like(b, like)))
        a = self.matrix()
        try:
            solution = np.linalg.solve(a.T if transpose else a, b)
        except np.linalg.LinAlgError:
            solution = None
        if solution is None or not np.all(np.isfinite(solution)):
            raise ValueError(f"{self.name}: the Jacobian of the residual with respect to x is singular at the solution "
                             "(the solution is not locally unique), so it has no derivative with respect to the "
                             "parameters; check the problem, or fix the directions in which it is degenerate")
        return solution

    def pull(self, x_bar: np.ndarray) -> tuple:
        """The cotangent of each parameter (full tangents) for cotangent ``x_bar`` of ``x``."""
        lam = -self.solve(x_bar, transpose=True)
        if self.kind == "root":
            value, pullback = vjp(self.function, self.x, *self.params)
            return tuple(pullback(S.like(lam, value))[1:])
        return tuple(hvp(self.function, (self.x, *self.params), (S.like(lam, self.x), *self._zeros()))[2][1:])

    def push(self, tangents: tuple) -> Any:
        """The tangent of ``x`` for the parameters' tangents."""
        zero = S.like(np.zeros(int(np.size(self.x))), self.x)
        if self.kind == "root":
            f_dot = jvp(self.function, (self.x, *self.params), (zero, *tangents))[1]
        else:  # Ḟ_i = <∂F_i/∂θ, θ̇>: yb.hvp does not take directions in a closure's captured state
            f_dot = np.array([sum(float(dot(h, t)) for h, t in zip(hs[1:], tangents) if t is not NoTangent)
                              for hs in self._columns()])
        return S.like(-self.solve(S.flat(f_dot), transpose=False), self.x)


# --------------------------------------------------------------------------------------------
# What a solver call is: the problem, and where x and the other results are in its output
# --------------------------------------------------------------------------------------------


class _Plan:
    """One call's implicit problem and output layout. Paths index the output (tuple positions,
    dict keys): ``x`` paths hold the solution, ``zero`` paths have derivative 0 at a solution,
    ``value`` holds the optimum (envelope theorem), ``residual`` least_squares' residual vector;
    ``derived`` pairs ``(path, g)`` of other outputs that are functions ``g(x, *params)`` of the
    solution and the parameters (curve_fit's ``pcov``), the residual among them."""

    def __init__(self, kind: str, function: Callable, names: tuple, x_paths: tuple, *, zero: tuple = (),
                 value: tuple | None = None, objective: Callable | None = None, objective_names: tuple = (),
                 residual: tuple | None = None, residual_function: Callable | None = None,
                 tangent_solve: Callable | None = None, check: Callable | None = None,
                 advice: dict | None = None, derived: tuple = (), forward: dict | None = None) -> None:
        self.kind, self.function, self.names, self.x_paths, self.zero = kind, function, names, x_paths, zero
        self.advice = advice or {}  # path -> (its name, what to do instead), for an output with no derivative (pcov)
        self.check = check  # check(problem): refuses a solution the implicit function theorem does not cover
        self.value, self.objective, self.objective_names = value, objective, objective_names or names
        self.derived = (((residual, residual_function),) if residual is not None else ()) + tuple(derived)
        # path -> rule(problem, ẋ, θ̇) of a derived output whose tangent forward mode through its
        # function would make too slowly (a covariance: a nested derivative, a pass per data point)
        self.forward = forward or {}
        self.tangent_solve = tangent_solve

    def known(self) -> set:
        paths = set(self.x_paths) | set(self.zero)
        return paths | {path for path, _ in self.derived} | ({self.value} if self.value is not None else set())


def _get(t: Any, path: tuple) -> Any:
    for key in path:
        t = t[key]
    return t


def _set(t: Any, path: tuple, value: Any) -> Any:
    """``t`` with ``value`` at ``path`` (dicts in place, tuples rebuilt)."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(t, tuple):
        items = list(t)
        items[key] = _set(items[key], rest, value)
        return type(t)(*items) if hasattr(t, "_fields") else tuple(items)
    t[key] = _set(t[key], rest, value)
    return t


def _float_leaves(t: Any, path: tuple = ()) -> list:
    """``(path, value)`` of every float and float-array leaf of a tangent."""
    if isinstance(t, dict):
        return [leaf for k, v in t.items() for leaf in _float_leaves(v, path + (k,))]
    if isinstance(t, (tuple, list)):
        return [leaf for k, v in enumerate(t) for leaf in _float_leaves(v, path + (k,))]
    if isinstance(t, (float, np.floating)) or (isinstance(t, np.ndarray) and t.dtype.kind in "fc"):
        return [(path, t)]
    return []


def _field(name: str, path: tuple) -> str:
    return "the result" + "".join(f".{k}" if isinstance(k, str) else f"[{k}]" for k in path) if path else name


def _not_differentiated(name: str, p: _Plan, path: tuple) -> str:
    """The refusal of a cotangent reaching an output the rule does not differentiate."""
    label, advice = p.advice.get(path, ("", ""))
    return (f"{name}: yuebing differentiates the solution (and the optimum value and residuals) only, not "
            f"{_field(name, path)}{label}, which the differentiated code uses{advice}")


# --------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------


def _bind(signature: inspect.Signature, name: str, args: tuple, kwargs: dict) -> dict:
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from None
    return dict(bound.arguments)


def _value(v: Any) -> Any:
    return v.primal if isinstance(v, (CoDual, Dual)) else v


def _implicit_rules(name: str, function: Callable, plan: Callable, call: Callable | None = None) -> None:
    """Register the reverse, forward and (refusing) second-order rules of solver ``function``:
    ``plan(values, result) -> _Plan`` describes a call, ``call(values)`` runs it (default: the
    function on the bound values)."""
    signature = inspect.signature(function)
    # the extra arguments (args=(a, b)) are the user's, not an array: no array_like conversion
    array_like._APPLIES[function] = False
    run = call or (lambda values: function(**values))
    positional = list(signature.parameters)

    def solve(args: tuple, kwargs: dict) -> tuple[dict, dict, Any, _Plan, Any]:
        given = _bind(signature, name, args, kwargs)
        values = {k: _value(v) for k, v in given.items()}
        result = run(values)
        p = plan(values, result)
        for path in p.x_paths:  # x alone: Nelder-Mead's x is a view of its final simplex, which is not differentiated
            if isinstance(_get(result, path), np.ndarray):
                result = _set(result, path, _get(result, path).copy())
        x = _get(result, p.x_paths[0])
        x = float(x) if np.ndim(x) == 0 and not isinstance(x, np.ndarray) else np.array(x, dtype=float)
        if np.iscomplexobj(_get(result, p.x_paths[0])):
            raise TypeError(f"{name}: implicit differentiation takes real unknowns, not complex ones")
        params = tuple(values.get(k, ()) for k in p.names)
        problem = _Problem(name, p.kind, p.function, x, params, p.tangent_solve)
        if p.check is not None:
            p.check(problem)
        return given, values, result, p, problem

    def rrule(*args: Any, **kwargs: Any) -> tuple[CoDual, Callable]:
        given, values, result, p, problem = solve(args, kwargs)
        out = output(result)

        def pullback(dy: Any) -> tuple:
            cot = out_cotangent(out, dy)
            for path, c in _float_leaves(cot):
                if path not in p.known() and np.any(c):
                    raise ValueError(_not_differentiated(name, p, path))
            x_bar = sum(S.flat(_get(cot, path)) for path in p.x_paths)
            rdatas: dict = {}
            for path, function in p.derived:
                if np.any(_get(cot, path)):
                    rdatas = _gather(rdatas, given, p.names, _pull_direct(function, problem, _get(cot, path), x_bar))
            if np.any(x_bar):
                rdatas = _gather(rdatas, given, p.names, problem.pull(x_bar))
            if p.value is not None and np.any(_get(cot, p.value)):
                objective_params = tuple(values.get(k, ()) for k in p.objective_names)
                value, pb = vjp(p.objective, problem.x, *objective_params)
                seed = _fit(float(np.sum(_get(cot, p.value))), value)  # a 0-d array for an objective returning one
                rdatas = _gather(rdatas, given, p.objective_names, pb(seed)[1:])
            return (NoRData, *(_rdata(k, given, rdatas) for k in positional[:len(args)]),
                    *(_rdata(k, given, rdatas) for k in kwargs))

        return out, pullback

    def tangent_of(given: dict, values: dict, result: Any, p: _Plan, problem: _Problem) -> tuple[Any, Any]:
        """The result's tangent and the solution's, for the arguments' tangents (forward mode)."""
        tangents = _tangents(given, values, p.names)
        try:
            t = zero_tangent(result)
        except TypeError:
            t = NoTangent
        moving = any(d is not NoTangent for d in tangents)
        x_dot = problem.push(tangents) if moving else S.like(np.zeros(int(np.size(problem.x))), problem.x)
        for path, leaf in _float_leaves(t):
            if path not in p.known():  # no derivative computed: NaN, never a silent zero
                t = _set(t, path, leaf + np.nan)
        for path in p.x_paths:
            t = _set(t, path, _fit(x_dot, _get(result, path)))
        if p.value is not None and moving:
            objective = tuple(values.get(k, ()) for k in p.objective_names)
            o_tangents = _tangents(given, values, p.objective_names)
            zero = S.like(np.zeros(int(np.size(problem.x))), problem.x)
            t = _set(t, p.value, _fit(jvp(p.objective, (problem.x, *objective), (zero, *o_tangents))[1],
                                      _get(result, p.value)))
        for path, function in p.derived:
            if not moving:
                d_dot = np.zeros(np.shape(_get(result, path)))
            elif path in p.forward:
                d_dot = p.forward[path](problem, x_dot, tangents)
            else:
                d_dot = jvp(function, (problem.x, *problem.params), (x_dot, *tangents))[1]
            t = _set(t, path, _fit(d_dot, _get(result, path)))
        return t, x_dot

    def frule(*args: Any, **kwargs: Any) -> Dual:
        given, values, result, p, problem = solve(args, kwargs)
        return Dual(result, tangent_of(given, values, result, p, problem)[0])

    def second_order(f4: tuple, args4: tuple, kwargs4: dict) -> tuple:
        """Forward over the implicit reverse rule (``api/implicit_second_order.py``)."""
        given, values, result, p, problem = solve(tuple(map(S.tangent4, args4)),
                                                  {k: S.tangent4(v) for k, v in kwargs4.items()})
        given4 = dict(zip(given, _bind(signature, name, args4, kwargs4).values()))
        t, x_dot = tangent_of(given, values, result, p, problem)
        out4 = S.output4(result, t)

        def four(names: tuple) -> tuple:
            return tuple(given4.get(k, S.constant4(values.get(k, ()))) for k in names)

        dual = S.DualPull(name, p, problem, x_dot, four(p.names), four(p.objective_names))

        def pullback(dy: Any, dy_dot: Any) -> tuple:
            cot, cot_dot = _output_cotangents(out4, dy, dy_dot)
            for path, c in _float_leaves(cot) + _float_leaves(cot_dot):
                if path not in p.known() and np.any(c):
                    raise SecondOrderError(f"yb.hvp/yb.hessian: {_not_differentiated(name, p, path)}")
            rs, rsd = dual.run(cot, cot_dot, _get)
            order = positional[:len(args4)] + list(kwargs4)
            return ((NoRData, *(_rdata(k, given, rs) for k in order)),
                    (NoRData, *(_rdata(k, given, rsd) for k in order)))

        return out4, pullback

    second_order.second_order_kind = "special"  # type: ignore[attr-defined] - docs/rules.md
    register_rrule(function, watched_rrule(name, rrule))  # the callable's writes (api/callback_writes.py)
    register_frule(function, watched_frule(name, frule))
    _register((function,), watched_second_order(name, second_order, SecondOrderError))


def _tangents(given: dict, values: dict, names: tuple) -> tuple:
    """The named arguments' tangents; ``NoTangent`` for a value without a derivative (forward
    mode may hand a function capturing only modules a tangent of empty cells)."""
    found = []
    for k in names:
        value = values.get(k, ())
        zero = zero_tangent(value)
        d = given.get(k)
        found.append(consistent(d.primal, d.tangent) if isinstance(d, Dual) and zero is not NoTangent else zero)
    return tuple(found)


def _fit(dx: Any, like: Any) -> Any:
    if isinstance(like, np.ndarray):
        return np.reshape(np.asarray(dx, dtype=like.dtype), like.shape)
    return float(np.reshape(np.asarray(dx), -1)[0]) if np.size(dx) == 1 else np.asarray(dx)


def _pull_direct(function: Callable, problem: _Problem, r_bar: Any, x_bar: Any) -> tuple:
    """Pull a cotangent of ``function(x*, θ)`` back: to ``θ`` directly (returned), and to ``x*``
    (added into ``x_bar``, then through the implicit function)."""
    _, pullback = vjp(function, problem.x, *problem.params)
    cotangents = pullback(r_bar)
    x_bar += S.flat(cotangents[0])
    return tuple(cotangents[1:])


def _gather(rdatas: dict, given: dict, names: tuple, cotangents: tuple) -> dict:
    """Deliver full cotangents to the named arguments (in place in their fdata); sum their rdata."""
    for k, c in zip(names, cotangents):
        a = given.get(k)
        if isinstance(a, CoDual):
            rdatas[k] = sum_rdata(rdatas.get(k, NoRData), _deliver(a, c))
    return rdatas


def _rdata(k: str, given: dict, rdatas: dict) -> Any:
    """An argument's rdata: what the parameters received, explicit zeros for the others (the
    starting point, tolerances, brackets: the solution does not depend on them)."""
    if k in rdatas:
        return rdatas[k]
    return zero_rdata(_value(given.get(k)))


# --------------------------------------------------------------------------------------------
# yb.custom_root
# --------------------------------------------------------------------------------------------


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable | None = None) -> Any:
    """The root ``x*`` of ``f`` found by ``solve(f, initial_guess)``, differentiated implicitly
    (JAX's ``jax.lax.custom_root``): ``dx*/dθ = -(∂f/∂x)^{-1} ∂f/∂θ`` for everything ``f`` captures
    (a closure's variables, a bound method's object), never through ``solve``'s iterations.

    ``f`` maps ``x`` (a float or a float array) to a residual of the same size; ``solve`` is any
    solver, run as plain code (its own derivative is ignored). ``tangent_solve(g, y)`` solves the
    linear system ``g(z) = y`` for a linear ``g`` (``∂f/∂x`` or, in reverse mode, its transpose);
    without it the Jacobian ``∂f/∂x`` is formed densely (``yb.jacobian``) and solved with NumPy.
    Reverse mode, forward mode and second order (``yb.hessian``):

    ```python
    def newton_solver(f, x):
        for _ in range(50):
            x = x - f(x) / (2.0 * x)
        return x

    def sqrt_of(a):
        return yb.custom_root(lambda x: x * x - a, 1.0, newton_solver)

    yb.grad(sqrt_of)(2.0)   # 1 / (2 sqrt 2), not the derivative of 50 Newton steps
    ```
    """
    if not callable(f) or not callable(solve):
        raise TypeError("custom_root(f, initial_guess, solve, tangent_solve=None) needs callables f and solve")
    if tangent_solve is not None and not callable(tangent_solve):
        raise TypeError(f"custom_root: tangent_solve must be callable or None, got {type(tangent_solve).__name__}")
    return solve(f, initial_guess)


def _custom_root_plan(values: dict, result: Any) -> _Plan:
    return _Plan("root", R.call_residual, ("f",), ((),), tangent_solve=values.get("tangent_solve"))


_implicit_rules("yuebing.custom_root", custom_root, _custom_root_plan)
