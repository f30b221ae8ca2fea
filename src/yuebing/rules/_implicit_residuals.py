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


def _no_sigma(sigma: Any) -> bool:
    """Whether ``curve_fit`` was called without ``sigma`` (``None``, or ``()``: not passed)."""
    return sigma is None or (isinstance(sigma, tuple) and len(sigma) == 0)


def curve_fit_xdata(xdata: Any) -> Any:
    """``xdata`` as ``curve_fit`` hands it to the model: a float array if it is a list, tuple or
    array, else as given."""
    if isinstance(xdata, (list, tuple, np.ndarray)):
        return np.asarray(xdata, dtype=float)
    return xdata


def curve_fit_weight(r: Any, sigma: Any) -> Any:
    """``curve_fit``'s weighting of a flat residual: divided by ``sigma`` (errors, 1-d or a scalar),
    or ``L^{-1} r`` for a covariance matrix ``sigma = L L^T``."""
    if _no_sigma(sigma):
        return r
    s = np.asarray(sigma, dtype=float)
    if s.ndim == 2 and s.size > 1:
        return np.linalg.solve(np.linalg.cholesky(s), r)
    return r / s


def curve_fit_residual(p: Any, f: Callable, xdata: Any, ydata: Any, sigma: Any) -> Any:
    """``curve_fit``'s weighted residual ``(f(xdata, *p) - ydata) / sigma`` (its ``fvec``)."""
    r = np.asarray(f(curve_fit_xdata(xdata), *p)) - np.asarray(ydata, dtype=float)
    return curve_fit_weight(np.reshape(r, -1), sigma)


def curve_fit_cost(p: Any, f: Callable, xdata: Any, ydata: Any, sigma: Any) -> Any:
    """Half the weighted sum of squares that ``curve_fit`` minimises over ``p``."""
    w = curve_fit_residual(p, f, xdata, ydata, sigma)
    return 0.5 * np.sum(w * w)


def curve_fit_pairing(pair: Any, ydata: Any, sigma: Any) -> Any:
    """``(cost, <w, ẇ>)`` for the pair ``(m, ṁ)`` of the model's value and its tangent, ``w`` the
    weighted residual: ``curve_fit``'s cost and its tangent (third derivatives of its minimum,
    ``api/implicit_stationary.py``)."""
    m, m_dot = pair
    w = curve_fit_weight(np.reshape(np.asarray(m) - np.asarray(ydata, dtype=float), -1), sigma)
    w_dot = curve_fit_weight(np.reshape(np.asarray(m_dot), -1), sigma)
    return 0.5 * np.sum(w * w), np.sum(w * w_dot)


def _jacobian_columns(jvp: Callable, function: Callable, p: Any) -> Any:
    """The Jacobian of ``function`` at ``p``, one ``jvp`` per parameter: a fit has fewer parameters
    than data points (nested, ``yb.jacobian``'s reverse rows cost 10 to 40 times more here)."""
    return np.stack([jvp(function, (p,), (unit,))[1] for unit in np.eye(np.size(p))], axis=1)


def curve_fit_covariance(p: Any, f: Callable, xdata: Any, ydata: Any, sigma: Any, *, jvp: Callable,
                         absolute_sigma: bool) -> Any:
    """``curve_fit``'s ``pcov``: ``(J^T J)^{-1}``, ``J`` the weighted residual's Jacobian in ``p``,
    times the residual variance ``|w|^2 / (m - n)`` unless ``absolute_sigma``. ``jvp`` is
    ``yb.jvp``, passed in (rules do not import the API); differentiating this takes second
    derivatives of the model."""
    def weighted(q: Any) -> Any:
        return curve_fit_residual(q, f, xdata, ydata, sigma)

    J = _jacobian_columns(jvp, weighted, p)
    covariance = np.linalg.inv(J.T @ J)
    if absolute_sigma:
        return covariance
    w = weighted(p)
    return covariance * (np.sum(w * w) / (np.size(w) - np.size(p)))


def leastsq_covariance(x: Any, fun: Callable, args: Any, kwargs: Any, *, jvp: Callable) -> Any:
    """``leastsq``'s ``cov_x``: ``(J^T J)^{-1}``, ``J`` the residual's Jacobian in ``x``
    (``jvp``: ``yb.jvp``, passed in)."""
    J = _jacobian_columns(jvp, lambda q: least_squares_residual(q, fun, args, kwargs), x)
    return np.linalg.inv(J.T @ J)


def residual_projection(x: Any, residual: Callable, c: Any, *params: Any) -> Any:
    """``<c, residual(x, *params)>`` for a fixed ``c``: its Hessian gives a covariance's tangent
    (``api/implicit_scipy.py``)."""
    return np.sum(np.asarray(c) * np.reshape(residual(x, *params), -1))
