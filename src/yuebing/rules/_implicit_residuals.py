"""The functions whose roots and minima ``api/implicit.py`` differentiates implicitly, written as
ordinary code so the transforms differentiate them like user code (files under ``api/`` are
machinery the transforms refuse to follow). Each takes the unknown ``x`` first, then the user's
callable (its captured state is differentiable) and its extra arguments."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _as_tuple(args: Any) -> tuple:
    return args if isinstance(args, tuple) else (args,)


def call_residual(x: Any, fun: Callable) -> Any:
    """``F(x)`` of ``yb.custom_root``: the user's function of ``x`` alone."""
    return np.asarray(fun(x))


def residual(x: Any, fun: Callable, args: Any) -> Any:
    """``F(x, θ) = fun(x, *args)`` (root, fsolve, brentq, newton, root_scalar; as an array: a
    residual given as a list is made one, as the solvers do)."""
    return np.asarray(fun(x, *_as_tuple(args)))


def residual_first(x: Any, fun: Callable, args: Any) -> Any:
    """``fun(x, *args)[0]``: the residual of a ``fun`` that also returns its Jacobian
    (``root(jac=True)``, ``root_scalar(fprime=True)``)."""
    return np.asarray(fun(x, *_as_tuple(args))[0])


def residual_second(x: Any, fun: Callable, args: Any) -> Any:
    """``fun(x, *args)[1]``: the gradient a ``minimize(jac=True)`` objective returns."""
    return np.asarray(fun(x, *_as_tuple(args))[1])


def objective(x: Any, fun: Callable, args: Any) -> Any:
    """The scalar ``fun(x, *args)`` that ``minimize`` and ``minimize_scalar`` minimise."""
    return fun(x, *_as_tuple(args))


def objective_first(x: Any, fun: Callable, args: Any) -> Any:
    """The value ``fun(x, *args)[0]`` of a ``minimize(jac=True)`` objective."""
    return fun(x, *_as_tuple(args))[0]


def least_squares_residual(x: Any, fun: Callable, args: Any, kwargs: Any) -> Any:
    """``least_squares``'s residual vector ``fun(x, *args, **kwargs)``."""
    return np.asarray(fun(x, *_as_tuple(args), **(kwargs or {})))


def least_squares_cost(x: Any, fun: Callable, args: Any, kwargs: Any) -> Any:
    """``least_squares``'s cost ``0.5 * sum(r**2)``, the objective whose stationary point it finds."""
    r = np.asarray(fun(x, *_as_tuple(args), **(kwargs or {})))
    return 0.5 * np.sum(r * r)


def residual_pairing(pair: Any) -> Any:
    """``(0.5 * sum(r**2), <r, ṙ>)`` for the pair ``(r, ṙ)`` of a residual vector and its tangent:
    ``least_squares``' cost and its tangent (the second order of its minimum differentiates this
    in ``api/implicit_stationary.py``)."""
    r, r_dot = pair
    r = np.asarray(r)
    return 0.5 * np.sum(r * r), np.sum(r * np.asarray(r_dot))
